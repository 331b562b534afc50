"""Regenerate the golden CUDA files of the bundled H2/O2 mechanism:

    python tests/golden/regenerate.py

The golden files guard the output format against unintended changes; they are
not the correctness oracle (the simulator and nvcc tests are).  Review the diff
before committing regenerated files.
"""

from __future__ import annotations

import pathlib
import sys

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[1]))

import singe  # noqa: E402
from singe.codegen import generate  # noqa: E402
from singe.compiler import compile_kernel  # noqa: E402

MECHANISM = HERE.parents[1] / "mechanisms" / "h2o2" / "h2o2.inp"
CASES = (("viscosity", 4), ("diffusion", 3))
CTAS_PER_SM = 2  # pinned: the golden files guard the format, not the CTAs per SM the compiler would choose


def golden_kernels():
    """The generated kernels the golden files hold (name -> GeneratedKernel)."""
    mech = singe.load_mechanism(MECHANISM)
    return [generate(compile_kernel(mech, kernel, warps=warps, ctas_per_sm=CTAS_PER_SM)) for kernel, warps in CASES]


def main() -> None:
    for generated in golden_kernels():
        for path in generated.write(HERE):
            print(f"wrote {path.relative_to(HERE.parents[1])}")


if __name__ == "__main__":
    main()
