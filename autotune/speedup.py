"""Modeled speedup of the warp-specialized kernels over the data-parallel baseline.

    python -m autotune.speedup [--mechanisms dme,heptane] [--presets H100,A100] [--json FILE]

The six kernels of the paper (DME and n-heptane viscosity, diffusion,
chemistry) at the paper's settings (``autotune.bench.PAPER_SETTINGS``), each
compiled for the preset's arch: the timing model's throughput of the
warp-specialized kernel and of the data-parallel baseline built from the same
graph (the same math, the same algebraic savings: ``singe.codegen.generate_baseline``),
their ratio, the FP64 roofline of the graph's FLOPs and what bounds each
kernel, beside the paper's measured speedup ranges.  Registers are the
register plan's (``--ptxas``: ptxas's for sm_90 / sm_80, one nvcc run per
kernel and style; the n-heptane baselines take minutes).  Reported as the
model gives it, not fitted.
"""

from __future__ import annotations

import argparse
import sys
import tempfile

import singe
from singe import compile_kernel
from singe.timing import PRESETS, model, model_baseline

from autotune.bench import PAPER_SETTINGS, PAPER_SPEEDUP, mechanism_path, report


def _ptxas(compiled, arch: str) -> tuple:
    """ptxas entries (warp-specialized, baseline) of ``compiled`` for ``arch``."""
    from singe.codegen import generate, generate_baseline
    from singe.codegen.nvcc import compile_cuda

    entries = []
    for generated in (generate(compiled), generate_baseline(compiled)):
        with tempfile.TemporaryDirectory() as scratch:
            entries.append(compile_cuda(generated.write(scratch)[0], arch).entry(generated.name))
    return tuple(entries)


def speedup_row(name: str, mech, kernel: str, preset: str, ptxas: bool) -> dict:
    """The modeled pair of one kernel on one preset at the paper's settings."""
    warps, qssa, ctas = PAPER_SETTINGS[name][kernel]
    arch = PRESETS[preset].arch
    compiled = compile_kernel(mech, kernel, warps=warps, qssa_warps=qssa, ctas_per_sm=ctas, arch=arch)
    entries = _ptxas(compiled, arch) if ptxas else (None, None)
    ws = model(compiled, preset, ptxas=entries[0])
    base = model_baseline(compiled, preset, ptxas=entries[1])
    return {"mechanism": name, "kernel": kernel, "preset": preset, "warps": warps, "qssa_warps": qssa,
            "ctas_per_sm": ctas, "ws": ws.as_dict(), "baseline": base.as_dict(),
            "speedup": ws.points_per_second / base.points_per_second if base.points_per_second else None,
            "roofline": ws.roofline, "registers_from": ws.registers_from}


def format_rows(rows: list[dict]) -> list[str]:
    head = (f"{'preset':6} {'mechanism':9} {'kernel':9} {'setting':>9} {'WS Mpt/s':>9} {'base Mpt/s':>10} "
            f"{'speedup':>7} {'paper':>10} {'FP64 roof':>9} {'WS/roof':>7} {'base/roof':>9}  "
            f"{'WS bound':26} {'baseline bound':22}")
    lines = ["Modeled throughput, warp-specialized (WS) over the data-parallel baseline, at the paper's settings; "
             "FP64 roofline by the graph's FLOPs [Mpoints/s]", head, "-" * len(head)]
    for r in rows:
        low, high = PAPER_SPEEDUP[r["kernel"]]
        setting = f"{r['warps']}x{r['ctas_per_sm']}" + (f"q{r['qssa_warps']}" if r["kernel"] == "chemistry" else "")
        ws, base, roof = r["ws"]["points_per_second"], r["baseline"]["points_per_second"], r["roofline"]
        lines.append(f"{r['preset']:6} {r['mechanism']:9} {r['kernel']:9} {setting:>9} {ws / 1e6:9.1f} "
                     f"{base / 1e6:10.1f} {r['speedup'] or float('nan'):7.2f} {f'{low}-{high}':>10} "
                     f"{roof / 1e6:9.1f} {ws / roof:7.0%} {base / roof:9.0%}  {r['ws']['bottleneck']:26.26} "
                     f"{r['baseline']['bottleneck']:22.22}")
    return lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mechanisms", default="dme,heptane")
    parser.add_argument("--kernels", default="viscosity,diffusion,chemistry")
    parser.add_argument("--presets", default="H100,A100")
    parser.add_argument("--ptxas", action="store_true", help="registers and spills from ptxas (nvcc)")
    parser.add_argument("--json", help="also write the rows as JSON here")
    args = parser.parse_args(argv)
    rows = []
    for name in args.mechanisms.split(","):
        mech = singe.load_mechanism(mechanism_path(name))
        for preset in args.presets.split(","):
            for kernel in args.kernels.split(","):
                rows.append(speedup_row(name, mech, kernel, preset, args.ptxas))
    rows.sort(key=lambda r: (r["preset"], r["mechanism"]))
    return report(format_rows(rows), rows, args.json)


if __name__ == "__main__":
    sys.exit(main())
