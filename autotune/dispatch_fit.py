"""Fit of the timing model's per-slab overheads to the SASS walk.

    python -m autotune.dispatch_fit [--arch sm_90] [--counts FILE]

Compiles the fit kernels (``fit_settings``: every kernel of GRI-Mech 3.0, H2/O2, DME, n-heptane and the QSSA
n-dodecane at the command's defaults, 8 warps with the CTAs chosen; the paper's six at its settings; H2/O2's
at 3-4 warps), walks their SASS per warp (``autotune.sass``: issued instructions per slab) and fits what the
model charges a warp per slab besides its units (``timing.ArchCode.slab_overhead`` and ``MASK_DISPATCH``,
``ArchCode.warp_switch_slab`` of the chemistry kernels dispatched by one switch): the weighted least squares of
the SASS count less the rest of the model, each warp weighted by the inverse of its count (the fit of a
relative error), on a constant and the masked blocks of the layout.  It prints the fit in all and of the
branches apart, each kernel's largest per-warp error with the model's constants and with the fit's, and each
kernel's with the fit of the other kernels alone (leave one kernel out).  ``--counts FILE`` keeps the SASS
counts there and reuses them.  The table-form chemistry kernels have their own fit (``autotune.table_fit``).
"""

from __future__ import annotations

import argparse
import json
import pathlib
import sys
import tempfile

import numpy as np

from autotune.bench import PAPER_SETTINGS, mechanism_path
from singe import KERNELS

DEFAULT_MECHANISMS = ("gri30", "h2o2", "dme", "heptane", "dodecane")
"""The mechanisms of issue 12's goal 3 (spills at the defaults), whose kernels at the defaults the fit takes."""
FIT_KERNELS = tuple(KERNELS)
SMALL_SETTINGS = {"viscosity": (4, 1, 2), "diffusion": (3, 1, 2), "conductivity": (3, 1, 2), "chemistry": (4, 1, 2)}
"""H2/O2's kernels at 3-4 warps (warps, QSSA warps, CTAs), on which the overheads were fitted until 2026-11-28."""


def fit_settings() -> list[tuple[str, str, int, int, int | None]]:
    """(mechanism, kernel, warps, QSSA warps, CTAs per SM or None: chosen) of the fit kernels, each once."""
    settings = [(m, k, 8, 1, None) for m in DEFAULT_MECHANISMS for k in FIT_KERNELS]
    settings += [(m, k, *s) for m, kernels in PAPER_SETTINGS.items() for k, s in kernels.items()]
    settings += [("h2o2", k, *s) for k, s in SMALL_SETTINGS.items()]
    return settings


def measure(mechanism: str, kernel: str, warps: int, qssa: int, ctas: int | None, arch: str) -> list[dict]:
    """Per warp of the kernel: the model's issued count per slab without its per-slab overheads ('rest'), the
    masked and switch blocks of the layout ('mask', 'switch'), the dispatch mode and the walk's count per slab
    ('sass'); [] for a table-form kernel."""
    from autotune import sass
    from singe import compile_kernel, load_mechanism
    from singe.codegen import generate, lay_out
    from singe.timing import dispatch_blocks, issued_per_warp, warp_code

    compiled = compile_kernel(load_mechanism(str(mechanism_path(mechanism))), kernel, warps=warps,
                              qssa_warps=qssa, ctas_per_sm=ctas, arch=arch)
    if compiled.form == "tables":
        return []
    kinds = dispatch_blocks(lay_out(compiled.programs))
    blocks = {kind: kinds.count(kind) for kind in ("mask", "switch")}
    with tempfile.TemporaryDirectory() as scratch:
        view = sass.analyse(generate(compiled).write(scratch)[0], arch, compiled.programs.warps)
    rows = []
    for counts, code, walked in zip(issued_per_warp(compiled.programs, arch), warp_code(compiled.programs, arch),
                                    view.warps):
        charged = dict(code.dispatch)
        rows.append({"rest": {c: n - charged.get(c, 0) for c, n in counts.items()}, **blocks,
                     "dispatch": compiled.programs.dispatch, "sass": dict(walked.counts)})
    return rows


def design(rows: list[dict], dispatch: str) -> np.ndarray:
    """The fit's columns: a constant, and for the overlaid kernels the masked blocks and the switch blocks."""
    return np.array([[1.0] + ([row["mask"], row["switch"]] if dispatch == "overlay" else []) for row in rows])


def fit(rows: list[dict], dispatch: str, classes: tuple[str, ...] | None = None) -> np.ndarray:
    """Coefficients (a slab; of the overlay also a masked block and a switch block: ``design``) of the weighted
    least squares of the SASS count of ``classes`` (None: all) less the model's rest, each warp weighted by
    the inverse of its whole count."""
    weights = np.array([1.0 / sum(row["sass"].values()) for row in rows])
    target = np.array([sum(n for c, n in row["sass"].items() if classes is None or c in classes)
                       - sum(n for c, n in row["rest"].items() if classes is None or c in classes)
                       for row in rows], dtype=float)
    coefficients, *_ = np.linalg.lstsq(design(rows, dispatch) * weights[:, None], target * weights, rcond=None)
    return coefficients


def charged_now(rows: list[dict], arch: str) -> list[int]:
    """Per warp, the overheads the model charges it with its constants (``timing.ArchCode.per_slab``)."""
    from singe.timing import arch_code

    code = arch_code(arch)
    return [sum(code.per_slab(row["dispatch"], ("mask",) * row["mask"] + ("switch",) * row["switch"]).values())
            for row in rows]


def errors(rows: list[dict], charged: np.ndarray) -> np.ndarray:
    """Per warp, the relative error of the model's count with ``charged`` per slab in place of its overheads."""
    return np.array([(sum(row["rest"].values()) + extra - sum(row["sass"].values())) / sum(row["sass"].values())
                     for row, extra in zip(rows, charged)])


def worst_by_kernel(kernels: list[str], errs: np.ndarray) -> dict[str, float]:
    """Per kernel (``kernels``: each warp's), its largest absolute relative error."""
    worst: dict[str, float] = {}
    for name, err in zip(kernels, errs):
        worst[name] = max(worst.get(name, 0.0), abs(float(err)))
    return worst


def left_out(rows: list[dict], kernels: list[str], dispatch: str) -> np.ndarray:
    """Per warp, the overhead the fit of the other kernels' warps charges it."""
    charged = np.zeros(len(rows))
    for name in sorted(set(kernels)):
        held = np.array([k == name for k in kernels])
        coefficients = fit([r for r, h in zip(rows, held) if not h], dispatch)
        charged[held] = design([r for r, h in zip(rows, held) if h], dispatch) @ coefficients
    return charged


def report(arch: str, dispatch: str, rows: list[dict], kernels: list[str]) -> list[str]:
    """The fit of the kernels dispatched by ``dispatch``, and per kernel its largest error with the model's
    overheads ('now'), the fit's rounded ('fit') and the fit of the others ('left out')."""
    total, branches = fit(rows, dispatch), fit(rows, dispatch, ("branch",))
    names = ["a slab", "a masked block", "a switch block"][:len(total)]
    lines = [f"{arch}, kernels dispatched by {dispatch} ({len(rows)} warps of {len(set(kernels))} kernels): "
             + ", ".join(f"{t:.2f} {n} ({b:.2f} branches)" for t, b, n in zip(total, branches, names))]
    columns = {"now": charged_now(rows, arch),
               "fit": design(rows, dispatch) @ np.round(total),
               "left out": left_out(rows, kernels, dispatch)}
    worst = {label: worst_by_kernel(kernels, errors(rows, np.asarray(charged, dtype=float)))
             for label, charged in columns.items()}
    lines.append(f"  {'kernel':<32}" + "".join(f"{label:>10}" for label in columns))
    for name in dict.fromkeys(kernels):
        lines.append(f"  {name:<32}" + "".join(f"{worst[label][name]:>10.1%}" for label in columns))
    lines.append(f"  {'largest':<32}" + "".join(f"{max(worst[label].values()):>10.1%}" for label in columns))
    return lines


def main(argv=None) -> int:
    from autotune import sass

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--arch", default="sm_90", choices=("sm_90", "sm_80"))
    parser.add_argument("--counts", type=pathlib.Path, help="keep (and reuse) the per-warp counts there")
    args = parser.parse_args(argv)
    if sass.missing_tools():
        print(f"skipped: the fit needs {', '.join(sass.missing_tools())}")
        return 0
    cache = json.loads(args.counts.read_text()) if args.counts and args.counts.exists() else {}
    by_dispatch: dict[str, tuple[list, list]] = {}
    for setting in fit_settings():
        key = "{} {} {}x{} q{}".format(*setting[:3], setting[4] or "auto", setting[3])
        if key not in cache:
            cache[key] = measure(*setting, args.arch)
            print(f"{key}: SASS per warp {[sum(r['sass'].values()) for r in cache[key]]}", flush=True)
        for row in cache[key]:
            rows, kernels = by_dispatch.setdefault(row["dispatch"], ([], []))
            rows.append(row)
            kernels.append(key)
    if args.counts:
        args.counts.write_text(json.dumps(cache))
    for dispatch, (rows, kernels) in sorted(by_dispatch.items()):
        print("\n".join(report(args.arch, dispatch, rows, kernels)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
