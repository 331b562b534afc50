"""The six kernels of the paper beside the original Singe's, in SASS (issue 12's table).

    python -m autotune.paper_sass [--kernels dme:viscosity,...] [--json FILE] [--products chemkin|cantera]

Per kernel at the paper's settings (``autotune.bench.PAPER_SETTINGS``): the
lane-instructions issued per point (total, FP64, barriers), the slowest warp
over the mean, the static SASS, ptxas's registers and spill stores on sm_90
and sm_80, the nvcc time (sm_90; autotune/sass.py's walk) and the timing
model's per-warp issued count against the walk's (the largest error), beside the
kernels the original Singe published (``ORIGINAL``) and the ratios singe /
original.  nvcc takes seconds per kernel.
"""

from __future__ import annotations

import argparse
import sys
import tempfile

from autotune import sass
from autotune.bench import PAPER_SETTINGS, mechanism_path, report
from singe import compile_kernel, kernel_spec, load_mechanism
from singe.derived.rates import DEFAULT_PRODUCTS, PRODUCTS
from singe.codegen import generate
from singe.codegen.nvcc import compile_cuda
from singe.timing import issued_per_warp

ORIGINAL = {
    # The original Singe's kernels (lightsighter/Weft, examples/DME and examples/Heptane, the Kepler versions
    # with __shfl/__shfl_down/__any as their _sync forms), nvcc 13.0 -arch=sm_90 -O3, walked by autotune/sass.py
    # per warp, lanes 0 and 16 (n-heptane's transport kernels step in half-warps of 16 points): issued per
    # point, FP64 per point, static SASS.  'issued' and 'fp64' take every branch the walk cannot decide as
    # issue 12's table did (its issued totals and static counts reproduce to the instruction); that skips the
    # body of each library log.  'fp64_fast' walks the library's fast paths (log's body run, exp's overflow
    # fix-up and division's slow path skipped), as the walk does for singe's kernels, with the chemistry
    # kernels' stiffness block skipped ('fp64_stiff': taken).  Measured on 2026-11-26.
    ("dme", "viscosity"): {"issued": 35_644, "fp64": 20_761, "fp64_fast": 21_181, "static": 3_371},
    ("dme", "diffusion"): {"issued": 24_900, "fp64": 10_395, "fp64_fast": 10_675, "static": 3_687},
    ("dme", "chemistry"): {"issued": 30_299, "fp64": 11_777, "fp64_fast": 12_561, "fp64_stiff": 13_017,
                           "static": 15_831},
    ("heptane", "viscosity"): {"issued": 98_794, "fp64": 61_128, "fp64_fast": 61_856, "static": 5_341},
    ("heptane", "diffusion"): {"issued": 120_738, "fp64": 33_280, "fp64_fast": 34_008, "static": 6_442},
    ("heptane", "chemistry"): {"issued": 42_741, "fp64": 16_955, "fp64_fast": 17_851, "fp64_stiff": 18_459,
                               "static": 15_983},
}
ARCHS = ("sm_90", "sm_80")


def measure(mechanism: str, kernel: str, products: str = DEFAULT_PRODUCTS) -> dict:
    """The kernel at the paper's setting: the SASS view on sm_90, ptxas's spills on sm_80 (``products``: the
    chemistry kernel's, ``CompileOptions.products``)."""
    warps, qssa, ctas = PAPER_SETTINGS[mechanism][kernel]
    mech = load_mechanism(str(mechanism_path(mechanism)))
    chemistry = kernel == "chemistry"
    row = {"mechanism": mechanism, "kernel": kernel,
           "setting": f"{warps}x{ctas}" + (f"q{qssa}" if chemistry else "")
           + ("" if not chemistry or products == DEFAULT_PRODUCTS else f" {products}")}
    for arch in ARCHS:
        compiled = compile_kernel(mech, kernel, warps=warps, qssa_warps=qssa, ctas_per_sm=ctas, arch=arch,
                                  **kernel_spec(kernel).graph_settings(products=products))
        generated = generate(compiled)
        with tempfile.TemporaryDirectory() as scratch:
            path = generated.write(scratch)[0]
            if arch == ARCHS[0]:
                view = sass.analyse(path, arch, warps)
                modeled = [sum(m.values()) for m in issued_per_warp(compiled.programs)]
                row.update(issued=view.total, fp64=view.per_point["fp64"], bar=view.per_point["bar"],
                           imbalance=round(view.imbalance, 3), static=view.static, registers=view.registers,
                           nvcc_s=round(view.nvcc_s, 1), spills={arch: view.spill_stores},
                           model_error=round(max(abs(m - w.total) / w.total for m, w in zip(modeled, view.warps)), 4))
            else:
                row["spills"][arch] = compile_cuda(path, arch).entry(generated.name).spill_stores
    return row


def format_rows(rows: list[dict]) -> list[str]:
    head = (f"{'kernel':18} {'setting':8} {'issued/pt':>9} {'orig':>7} {'ratio':>5} {'FP64/pt':>7} {'orig':>6} "
            f"{'fast':>6} {'ratio':>5} {'BAR/pt':>6} {'imbal':>5} {'static':>6} {'orig':>6} {'ratio':>5} "
            f"{'spills 90/80 B':>14} {'regs':>4} {'nvcc s':>6} {'model':>6}")
    lines = ["The paper's kernels against the original Singe's, sm_90 SASS walk per point (autotune/sass.py)",
             head, "-" * len(head)]
    for r in rows:
        o = ORIGINAL[r["mechanism"], r["kernel"]]
        spills = "/".join(str(r["spills"][a]) for a in ARCHS)
        lines.append(f"{r['mechanism'] + ' ' + r['kernel']:18} {r['setting']:8} {r['issued']:9,} {o['issued']:7,} "
                     f"{r['issued'] / o['issued']:5.2f} {r['fp64']:7,} {o['fp64']:6,} {o['fp64_fast']:6,} "
                     f"{r['fp64'] / o['fp64_fast']:5.2f} {r['bar']:6} {r['imbalance']:5.2f} {r['static']:6,} "
                     f"{o['static']:6,} {r['static'] / o['static']:5.2f} {spills:>14} {r['registers']:4} "
                     f"{r['nvcc_s']:6.1f} {r['model_error']:6.1%}")
    lines.append("orig: the original Singe's (ORIGINAL: FP64 'orig' as issue 12's walk took the branches, 'fast' "
                 "on the library's fast paths as singe's are walked; ratio against 'fast'); model: the timing "
                 "model's issued count per warp against the walk's, the largest difference over the warps")
    return lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    choices = [f"{m}:{k}" for m, ks in PAPER_SETTINGS.items() for k in ks]
    parser.add_argument("--kernels", default=",".join(choices), help="mechanism:kernel pairs, comma-separated")
    parser.add_argument("--json", help="also write the rows as JSON here")
    parser.add_argument("--products", choices=PRODUCTS, default=DEFAULT_PRODUCTS,
                        help="the chemistry kernels' products of negative concentrations (singe --products)")
    args = parser.parse_args(argv)
    unknown = [part for part in args.kernels.split(",") if part not in choices]
    if unknown:
        parser.error(f"--kernels: {', '.join(unknown)} not among the paper's kernels ({', '.join(choices)})")
    if sass.missing_reason():
        print(f"skipped: {sass.missing_reason()}")
        return 0
    rows = [measure(*part.split(":"), products=args.products) for part in args.kernels.split(",")]
    return report(format_rows(rows), rows, args.json)


if __name__ == "__main__":
    sys.exit(main())
