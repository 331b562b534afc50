"""Cantera models of the test mechanisms, built independently of singe's parser.

GRI-Mech 3.0 and H2/O2 come from Cantera's own YAML.  The mechanisms of
../shared are converted by Cantera's ``ck2yaml`` from the original files; two
things are mended on the way, both Cantera quirks documented in
REFERENCE.md rather than properties of the mechanisms:

* the dodecane files use ``TRANS ALL`` and commented-out thermo entries, which
  ck2yaml rejects: a cleaned copy is converted (the originals stay as they are);
* Cantera 3.2 reads a reaction with a species on both sides (``HCOOH+OH =
  H2O+CO+OH``) as a three-body reaction with that species as the only
  collider; every reaction ck2yaml leaves untyped is marked
  ``type: elementary`` so the equation is taken as written.
"""

from __future__ import annotations

import functools
import hashlib
import os
import pathlib
import re
import subprocess
import sys
import tempfile

import cantera as ct
import numpy as np

ROOT = pathlib.Path(__file__).resolve().parents[1]
SHARED = pathlib.Path(os.environ.get("SINGE_SHARED", ROOT.parent / "shared"))
SHARED_MECHANISMS = SHARED / "mechanisms"
BUNDLED_MECHANISMS = ROOT / "mechanisms"
CANTERA_DATA = pathlib.Path(ct.__file__).resolve().parent / "data"

# name -> (folder, chemistry file stem, Cantera YAML shipped with Cantera or None)
MECHANISMS = {
    "gri30": (BUNDLED_MECHANISMS / "gri30", "gri30", "gri30.yaml"),
    "h2o2": (BUNDLED_MECHANISMS / "h2o2", "h2o2", "h2o2.yaml"),
    "dme": (SHARED_MECHANISMS / "dme", "dme", None),
    "heptane": (SHARED_MECHANISMS / "heptane", "heptane", None),
    "dodecane": (SHARED_MECHANISMS / "dodecane_qss", "dodecane", None),
}
SHARED_NAMES = ("dme", "heptane", "dodecane")
ALL_NAMES = tuple(MECHANISMS)
CACHE = pathlib.Path(tempfile.gettempdir()) / "singe-test-cantera"


def chemistry_file(name: str) -> pathlib.Path:
    folder, stem, _ = MECHANISMS[name]
    return folder / f"{stem}.inp"


def have_shared() -> bool:
    return SHARED_MECHANISMS.is_dir()


def _clean_dodecane(folder: pathlib.Path, out: pathlib.Path) -> tuple[pathlib.Path, pathlib.Path, pathlib.Path]:
    """Copy the dodecane files in a form ck2yaml takes: transport section split
    out, commented thermo entries and ENDOFDATA dropped."""
    chem = (folder / "dodecane.inp").read_text(errors="replace").splitlines()
    start = next(i for i, line in enumerate(chem) if line.strip().upper().startswith("TRAN"))
    end = next(i for i in range(start + 1, len(chem)) if chem[i].strip().upper().startswith("END"))
    (out / "tran.dat").write_text("\n".join(chem[start + 1:end]) + "\n")
    (out / "chem.inp").write_text("\n".join(chem[:start] + chem[end + 1:]) + "\n")
    thermo = (folder / "therm.dat").read_text(errors="replace").splitlines()
    kept = [line for line in thermo if not line.startswith("!") and line.strip().upper() != "ENDOFDATA"]
    (out / "therm.dat").write_text("\n".join(kept) + "\nEND\n")
    return out / "chem.inp", out / "therm.dat", out / "tran.dat"


def _mark_untyped_elementary(yaml_text: str) -> str:
    lines = yaml_text.splitlines()
    result = []
    for i, line in enumerate(lines):
        result.append(line)
        if line.startswith("- equation:"):
            following = lines[i + 1] if i + 1 < len(lines) else ""
            if not following.startswith("  type:"):
                result.append("  type: elementary")
    return "\n".join(result) + "\n"


def _convert_shared(name: str) -> pathlib.Path:
    folder, stem, _ = MECHANISMS[name]
    digest = hashlib.sha1()
    for path in sorted(folder.iterdir()):
        digest.update(path.read_bytes())
    digest.update(ct.__version__.encode())
    out = CACHE / f"{name}-{digest.hexdigest()[:12]}"
    yaml = out / f"{name}.yaml"
    if yaml.exists():
        return yaml
    out.mkdir(parents=True, exist_ok=True)
    if name == "dodecane":
        chem, thermo, tran = _clean_dodecane(folder, out)
    else:
        chem, thermo, tran = folder / f"{stem}.inp", folder / "therm.dat", folder / "tran.dat"
    raw = out / "raw.yaml"
    subprocess.run(
        [sys.executable, "-m", "cantera.ck2yaml", f"--input={chem}", f"--thermo={thermo}",
         f"--transport={tran}", f"--output={raw}", "--quiet"],
        check=True, capture_output=True,
    )
    tmp = out / "tmp.yaml"
    tmp.write_text(_mark_untyped_elementary(raw.read_text()))
    tmp.replace(yaml)
    return yaml


def cantera_yaml(name: str) -> pathlib.Path:
    """Path of a YAML file Cantera loads for mechanism ``name``."""
    folder, stem, shipped = MECHANISMS[name]
    if shipped is not None:
        return CANTERA_DATA / shipped
    return _convert_shared(name)


@functools.lru_cache(maxsize=None)
def cantera_solution(name: str, transport_model: str = "mixture-averaged-CK") -> ct.Solution:
    """A Cantera Solution for mechanism ``name`` (cached: treat it as shared state)."""
    return ct.Solution(str(cantera_yaml(name)), transport_model=transport_model)


def random_states(n: int, species: int, seed: int, T_range=(300.0, 3000.0),
                  P_range_atm=(0.1, 100.0), zero_fraction: float = 0.2):
    """Random (T [K], P [Pa], Y (species, n)) with some exact zeros in Y."""
    rng = np.random.default_rng(seed)
    T = rng.uniform(*T_range, size=n)
    P = 101325.0 * np.exp(rng.uniform(np.log(P_range_atm[0]), np.log(P_range_atm[1]), size=n))
    Y = rng.random((species, n)) ** 3
    Y[rng.random((species, n)) < zero_fraction] = 0.0
    Y[rng.integers(species, size=n), np.arange(n)] += 0.5  # never all zero
    Y /= Y.sum(axis=0)
    return T, P, Y
