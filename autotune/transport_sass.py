"""SASS of the transport kernels at the paper's settings, loops against full unrolling.

    python -m autotune.transport_sass [--kernels dme:viscosity:15x3,heptane:viscosity:8g2,...] [--archs sm_90,sm_80]
        [--unrolled]

One row per kernel and arch: lane-instructions issued per point (total and
FP64), static SASS instructions, spill stores/loads and the nvcc time
(autotune/sass.py; issued and static counts on sm_90, ptxas's resources
on the other archs), for the emitted kernel (isomorphic runs as loops over
per-warp tables, ``lowering.find_loops``) and, with ``--unrolled``, for the
same kernel fully unrolled.  The default rows are the paper's settings
(DME viscosity 15 warps, diffusion 10, n-heptane both 13, 3 CTAs per SM)
and the command's default of 8 warps for DME, n-heptane and GRI-Mech 3.0.
A row's setting may end in ``gN``, viscosity's ``--wilke-group N`` (without
it, the kernel's default at those warps).  nvcc takes 3-90 s per kernel.
"""

from __future__ import annotations

import argparse
import re
import sys
import tempfile
import time

from autotune import sass
from autotune.bench import PAPER_SETTINGS, mechanism_path
from singe import compile_kernel, load_mechanism
from singe.codegen import generate
from singe.codegen.nvcc import compile_cuda

TRANSPORT = ("viscosity", "diffusion")
PAPER = ",".join(f"{m}:{k}:{w}x{c}" for m, kernels in PAPER_SETTINGS.items()
                 for k, (w, _, c) in kernels.items() if k in TRANSPORT)
WALKED_ARCH = "sm_90"  # the arch whose SASS is walked for issued counts (autotune/sass.py); others: ptxas only
DEFAULTS = ",".join(f"{m}:{k}:8" for m in ("dme", "heptane", "gri30") for k in TRANSPORT)  # CTAs per SM chosen


ROW = re.compile(r"(\d+)(?:x(\d+))?(?:g(\d+))?")


def parse_rows(text: str) -> list[tuple[str, str, int, int | None, int | None]]:
    """'dme:viscosity:15x3,dme:diffusion:8,heptane:viscosity:8g2' -> [(mechanism, kernel, warps, CTAs per SM,
    Wilke group)]; without 'xN' the CTAs per SM are None: chosen by the compiler, as the command does; without
    'gN' the group is None: the kernel's default."""
    rows = []
    for part in text.split(","):
        fields = part.strip().split(":")
        setting = ROW.fullmatch(fields[2]) if len(fields) == 3 else None
        if setting is None:
            raise argparse.ArgumentTypeError(f"rows look like dme:viscosity:15x3, dme:viscosity:8 or "
                                             f"heptane:viscosity:8g2, not {part!r}")
        warps, ctas, group = (int(v) if v else None for v in setting.groups())
        rows.append((fields[0], fields[1], warps, ctas, group))
    return rows


def measure(mechanism: str, kernel: str, warps: int, ctas: int | None, group: int | None, arch: str,
            roll: bool) -> str:
    """The row's numbers: the SASS walk on ``WALKED_ARCH``, ptxas's report elsewhere."""
    mech = load_mechanism(str(mechanism_path(mechanism)))
    compiled = compile_kernel(mech, kernel, warps=warps, ctas_per_sm=ctas, arch=arch, wilke_group=group)
    generated = generate(compiled, roll=roll)
    with tempfile.TemporaryDirectory() as scratch:
        path = generated.write(scratch)[0]
        if arch == WALKED_ARCH:
            view = sass.analyse(path, arch, warps)
            return (f"{view.total:9} {view.per_point['fp64']:7} {view.per_point['lds']:6} {view.static:7} "
                    f"{view.spill_stores:5}/{view.spill_loads:<5} {view.registers:4} {view.nvcc_s:6.1f}")
        start = time.perf_counter()
        entry = compile_cuda(path, arch).entry(generated.name)
        seconds = time.perf_counter() - start
    return f"{'-':>9} {'-':>7} {'-':>6} {'-':>7} {entry.spill_stores:5}/{entry.spill_loads:<5} {entry.registers:4} {seconds:6.1f}"


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kernels", type=parse_rows, default=parse_rows(PAPER + "," + DEFAULTS))
    parser.add_argument("--archs", default="sm_90,sm_80")
    parser.add_argument("--unrolled", action="store_true", help="also the fully unrolled kernels")
    args = parser.parse_args(argv)
    if sass.missing_reason():
        print(f"skipped: {sass.missing_reason()}")
        return 0
    print(f"{'mech':8} {'kernel':10} {'setting':9} {'arch':6} {'style':8} {'issued/pt':>9} {'fp64/pt':>7} {'lds/pt':>6} "
          f"{'static':>7} {'spill st/ld':>11} {'regs':>4} {'nvcc s':>6}")
    for mechanism, kernel, warps, ctas, group in args.kernels:
        for arch in args.archs.split(","):
            for roll in (True, False) if args.unrolled else (True,):
                numbers = measure(mechanism, kernel, warps, ctas, group, arch, roll)
                setting = (f"{warps}x{ctas}" if ctas else f"{warps}xauto") + (f"g{group}" if group else "")
                print(f"{mechanism:8} {kernel:10} {setting:9} {arch:6} {'loops' if roll else 'unrolled':8} "
                      f"{numbers}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
