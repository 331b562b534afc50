"""The warps' pace by their SASS stall counts, beside the 'wait' stalls ncu measured.

    python -m autotune.pace [--kernels dme:viscosity,...] [--styles baseline,ws] [--arch sm_90]
        [--ncu CSV] [--json FILE]

ptxas writes into every instruction the cycles its warp's scheduler waits
before it issues the warp's next one (``sass.stall_count``): the fixed
latencies it could not hide behind independent instructions.  Summed over what
a warp issues (``sass.Walk.stall_cycles``) and divided by the instructions, that
is the warp's pace, the least cycles per instruction it issues at
(``sass.Walk.pace``).  ncu counts the cycles a warp waits on such a latency as
'wait' stalls (``smsp__average_warps_issue_stalled_wait_per_issue_active``), per
issued instruction: pace less its one issue cycle.  Per kernel at the paper's
settings (``bench.PAPER_SETTINGS``), compiled for ``--arch``: the pace of the
baseline (one warp) and of the warp-specialized kernel (over its warps), and
with ``--ncu`` (default: the H200's profile of the copy session, run 1) the
measured wait and the relative difference.  The timing model takes the paces
as a floor on each warp's issue (``singe.timing.model``'s ``pace``).  The
warp-specialized kernels profiled there have changed since, more than the
baselines have.  nvcc takes seconds per kernel, a minute or two for the
n-heptane baselines.
"""

from __future__ import annotations

import argparse
import csv
import pathlib
import sys

from autotune.bench import PAPER_SETTINGS, ROOT, mechanism_path, report, sass_views

NCU_RUN = ROOT / "docs" / "measurements" / "2026-11-27-h200-copy" / "run1_ncu_stalls.csv"
"""ncu's stall reasons per issued instruction of the paper's twelve kernels (H200, gpu_bench's profile)."""
WAIT = "wait"
STYLES = ("baseline", "ws")


def read_ncu_stalls(path: str | pathlib.Path) -> dict[str, dict[str, float]]:
    """Kernel function name -> stall reason -> cycles per issued instruction, from an ncu CSV of
    ``smsp__average_warps_issue_stalled_<reason>_per_issue_active.ratio`` metrics."""
    prefix, suffix = "smsp__average_warps_issue_stalled_", "_per_issue_active.ratio"
    stalls: dict[str, dict[str, float]] = {}
    with open(path, newline="") as handle:
        lines = [line for line in handle if line.startswith('"')]  # not ncu's '==PROF==' lines
    for record in csv.DictReader(lines):
        metric = record["Metric Name"]
        if metric.startswith(prefix) and metric.endswith(suffix):
            kernel = record["Kernel Name"].split("(")[0]
            stalls.setdefault(kernel, {})[metric[len(prefix):-len(suffix)]] = float(record["Metric Value"])
    return stalls


def kernel_name(mechanism: str, kernel: str, style: str) -> str:
    """The CUDA function of a generated kernel: ``dme_viscosity_kernel``, ``dme_viscosity_baseline_kernel``."""
    return f"{mechanism}_{kernel}{'_baseline' if style == 'baseline' else ''}_kernel"


def paces(mechanism: str, kernel: str, arch: str = "sm_90", mech=None) -> dict[str, float | None]:
    """Style -> pace (cycles per issued instruction by the stall counts) of the kernel at the paper's setting
    (``mech``: the mechanism ``mechanism`` names, loaded; default read by ``bench.mechanism_path``)."""
    from singe import compile_kernel, load_mechanism

    warps, qssa, ctas = PAPER_SETTINGS[mechanism][kernel]
    mech = mech or load_mechanism(str(mechanism_path(mechanism)))
    compiled = compile_kernel(mech, kernel, warps=warps, qssa_warps=qssa, ctas_per_sm=ctas, arch=arch)
    views = sass_views(compiled, arch, tuned=False)  # the baseline ncu profiled: of the kernel's own graph
    return {style: view.pace for style, view in zip(("ws", "baseline"), views)}


def wait_error(pace: float, measured_wait: float) -> float:
    """How far the wait a pace predicts (pace - 1 cycles per instruction) is from a measured one, relative."""
    return abs((pace - 1.0) - measured_wait) / measured_wait


def rows(kernels: list[tuple[str, str]], styles: tuple[str, ...], arch: str, ncu: dict | None) -> list[dict]:
    result = []
    for mechanism, kernel in kernels:
        measured = paces(mechanism, kernel, arch)
        for style in styles:
            row = {"mechanism": mechanism, "kernel": kernel, "style": style, "arch": arch, "pace": measured[style]}
            wait = (ncu or {}).get(kernel_name(mechanism, kernel, style), {}).get(WAIT)
            if wait is not None and row["pace"] is not None:
                row.update(ncu_wait=wait, error=wait_error(row["pace"], wait))
            result.append(row)
            print(f"  {mechanism} {kernel} {style}: pace {row['pace']}", file=sys.stderr, flush=True)
    return result


def format_rows(result: list[dict], ncu_path) -> list[str]:
    head = f"{'mechanism':9} {'kernel':9} {'style':8} {'pace':>5} {'pace-1':>6} {'ncu wait':>8} {'diff':>6}"
    lines = [f"Cycles per issued instruction by the SASS stall counts ({result[0]['arch'] if result else ''}), "
             f"beside ncu's 'wait' stalls per issued instruction ({ncu_path or 'no profile'})", head, "-" * len(head)]
    for r in result:
        pace = r["pace"]
        measured = f"{r['ncu_wait']:8.2f} {r['error']:6.1%}" if "ncu_wait" in r else f"{'-':>8} {'-':>6}"
        lines.append(f"{r['mechanism']:9} {r['kernel']:9} {r['style']:8} "
                     + (f"{pace:5.2f} {pace - 1:6.2f} " if pace else f"{'-':>5} {'-':>6} ") + measured)
    return lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    everything = ",".join(f"{m}:{k}" for m, kernels in PAPER_SETTINGS.items() for k in kernels)
    parser.add_argument("--kernels", default=everything, help=f"mechanism:kernel,... (default {everything})")
    parser.add_argument("--styles", default=",".join(STYLES), help="baseline, ws or both (default both)")
    parser.add_argument("--arch", default="sm_90", choices=("sm_80", "sm_90"))
    parser.add_argument("--ncu", default=str(NCU_RUN), help="ncu stall CSV (gpu_bench's profile); '' for none")
    parser.add_argument("--json", help="also write the rows as JSON here")
    args = parser.parse_args(argv)
    kernels = []
    for item in args.kernels.split(","):
        mechanism, _, kernel = item.partition(":")
        if kernel not in PAPER_SETTINGS.get(mechanism, {}):
            parser.error(f"--kernels: {item!r} is not one of {everything}")
        kernels.append((mechanism, kernel))
    styles = tuple(s for s in args.styles.split(",") if s)
    if not styles or set(styles) - set(STYLES):
        parser.error(f"--styles: {args.styles!r}: name baseline, ws or both")
    from autotune import sass

    if sass.missing_reason():
        print(sass.missing_reason())
        return 0
    ncu = read_ncu_stalls(args.ncu) if args.ncu else None
    result = rows(kernels, styles, args.arch, ncu)
    return report(format_rows(result, args.ncu), result, args.json)


if __name__ == "__main__":
    sys.exit(main())
