"""Regenerate the bundled CHEMKIN mechanisms from the YAML files shipped with Cantera.

    python mechanisms/generate.py

writes ``<name>/<name>.inp``, ``<name>/therm.dat`` and ``<name>/tran.dat`` for
GRI-Mech 3.0 and the H2/O2 mechanism with Cantera's own ``yaml2ck``, so singe
has mechanisms of its own to compile without ../shared.  The output is
committed; rerun this only to follow a new Cantera release.
"""

from __future__ import annotations

import pathlib
import subprocess
import sys

import cantera

HERE = pathlib.Path(__file__).resolve().parent
CANTERA_DATA = pathlib.Path(cantera.__file__).resolve().parent / "data"

# bundled name -> Cantera YAML file
BUNDLED = {"gri30": "gri30.yaml", "h2o2": "h2o2.yaml"}


def generate(name: str, yaml_file: str) -> None:
    out = HERE / name
    out.mkdir(exist_ok=True)
    subprocess.run(
        [sys.executable, "-m", "cantera.yaml2ck", str(CANTERA_DATA / yaml_file),
         "--mechanism", str(out / f"{name}.inp"),
         "--thermo", str(out / "therm.dat"),
         "--transport", str(out / "tran.dat"),
         "--overwrite"],
        check=True,
    )
    print(f"wrote {out.relative_to(HERE.parent)} from Cantera {cantera.__version__} {yaml_file}")


def main() -> None:
    for name, yaml_file in BUNDLED.items():
        generate(name, yaml_file)


if __name__ == "__main__":
    main()
