"""Fit of the table form's per-iteration instruction counts to the SASS walk.

    python -m autotune.table_fit [--json FILE]

Compiles the fit kernels (``FIT_KERNELS``: GRI-Mech 3.0 at several warp
counts, Alzueta's ammonia mechanism for the PLOG rows, n-heptane (QSSA and
stiff species, the one with Arrhenius reverse rates) and the QSSA n-dodecane
(QSSA species only) of the shared mechanisms for the QSSA, stiffness and scale
phases; DME is held out) in the table form for
sm_90, walks their SASS per warp (``autotune.sass``: issued instructions per
slab) and fits, class by class, the non-negative per-feature counts
(``singe.timing_tables.FEATURES``) that best reproduce the per-warp counts
(``scipy.optimize.nnls``; a feature whose counts equal an earlier one's in every
sample is left out, ``duplicates``).  ``--counts FILE`` keeps the SASS counts there and
reuses them (a refit after a change of the features only).  It prints ``PER_FEATURE`` as
``singe/timing_tables.py`` holds it, and each kernel's largest per-warp error.
"""

from __future__ import annotations

import argparse
import json
import os
import pathlib
import sys
import tempfile

import numpy as np

CANTERA_DATA = pathlib.Path(__import__("cantera").__file__).resolve().parent / "data"
FIT_KERNELS = tuple(("gri30.yaml", w) for w in (2, 3, 4, 5, 6, 8, 10, 12, 16)) + \
    tuple((str(CANTERA_DATA / "example_data" / "ammonia-CO-H2-Alzueta-2023.yaml"), w) for w in (3, 4, 6, 8))
SHARED_MECHANISMS = pathlib.Path(os.environ.get("SINGE_SHARED", pathlib.Path(__file__).resolve().parents[2] / "shared")) \
    / "mechanisms"
QSSA_FIT_KERNELS = tuple((str(SHARED_MECHANISMS / "heptane" / "heptane.inp"), w) for w in (2, 4, 6, 8)) + \
    tuple((str(SHARED_MECHANISMS / "dodecane_qss" / "dodecane.inp"), w) for w in (3, 5, 8))
"""The fit kernels with QSSA species (``SINGE_SHARED``'s mechanisms; left out where they are missing)."""


def measure(mechanism: str, warps: int, arch: str = "sm_90"):
    """(compiled TableKernel, per-warp SASS counts per slab) of ``mechanism`` in the table form."""
    import singe
    from autotune import sass
    from singe.codegen import generate

    compiled = singe.compile_kernel(singe.load_mechanism(mechanism), "chemistry", warps=warps, form="tables")
    with tempfile.TemporaryDirectory() as scratch:
        view = sass.analyse(generate(compiled).write(scratch)[0], arch, warps)
    return compiled, [dict(w.counts) for w in view.warps]


def duplicates(A: np.ndarray) -> list[int]:
    """Columns of ``A`` equal to an earlier column in every sample: the fit cannot tell them apart, so the
    earlier feature takes their counts (every fit species has two thermo ranges: ``species`` takes them,
    not ``ranges``) rather than an arbitrary share."""
    return [j for j in range(A.shape[1]) if A[:, j].any() and any(np.array_equal(A[:, i], A[:, j]) for i in range(j))]


def fit(samples: list[tuple[dict, dict]]) -> dict:
    """Per class, the non-negative per-feature counts of the least-squares fit of
    ``samples`` ((features, SASS counts) per warp)."""
    from scipy.optimize import nnls

    from singe.timing import ISSUE_CLASSES
    from singe.timing_tables import FEATURES

    A = np.array([[f.get(name, 0) for name in FEATURES] for f, _ in samples], dtype=float)
    A[:, duplicates(A)] = 0.0
    scale = np.maximum(A.max(axis=0), 1.0)
    result = {}
    for name in ISSUE_CLASSES:
        b = np.array([c.get(name, 0) for _, c in samples], dtype=float)
        x, _ = nnls(A / scale, b)
        result[name] = {f: round(float(v), 2) for f, v in zip(FEATURES, x / scale) if v > 1e-9}
    return result


def literal(coefficients: dict) -> str:
    """``coefficients`` as the ``PER_FEATURE`` literal of ``singe/timing_tables.py`` (counts below 0.01 left out)."""
    lines = ["PER_FEATURE: dict[str, dict[str, float]] = {"]
    for name, per in coefficients.items():
        body = ", ".join(f'"{k}": {v}' for k, v in per.items() if v >= 0.01)
        line = f'    "{name}": {{{body}}},'
        while len(line) > 118:
            cut = line.rfind(", ", 0, 116)
            lines.append(line[:cut + 1])
            line = "        " + line[cut + 2:]
        lines.append(line)
    return "\n".join(lines + ["}"])


def worst_errors(samples: list, kernels: list, coefficients: dict) -> list[str]:
    """Per fit kernel, its largest per-warp relative error under ``coefficients``."""
    result = []
    for name, warps, first, count in kernels:
        worst = 0.0
        for features, counts in samples[first:first + count]:
            modeled = sum(per.get(f, 0.0) * n for per in coefficients.values() for f, n in features.items())
            issued = sum(counts.values())
            worst = max(worst, abs(modeled - issued) / issued)
        result.append(f"{name} {warps} warps: largest per-warp error {worst:.1%}")
    return result


def fit_kernels() -> tuple:
    """``FIT_KERNELS`` and, where the shared mechanisms are there, ``QSSA_FIT_KERNELS``."""
    return FIT_KERNELS + (QSSA_FIT_KERNELS if SHARED_MECHANISMS.is_dir() else ())


def measured(mechanism: str, warps: int, cache: dict):
    """(compiled, per-warp SASS counts) of a fit kernel, the counts from ``cache`` when there (and kept there)."""
    import singe

    key = f"{mechanism}@{warps}"
    if key not in cache:
        cache[key] = measure(mechanism, warps)[1]
    compiled = singe.compile_kernel(singe.load_mechanism(mechanism), "chemistry", warps=warps, form="tables")
    return compiled, cache[key]


def main(argv=None) -> int:
    from singe.timing_tables import warp_features

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", type=pathlib.Path, help="write the samples there")
    parser.add_argument("--counts", type=pathlib.Path, help="keep (and reuse) the SASS counts there")
    args = parser.parse_args(argv)
    cache = json.loads(args.counts.read_text()) if args.counts and args.counts.exists() else {}
    samples, kernels = [], []
    for mechanism, warps in fit_kernels():
        compiled, counts = measured(mechanism, warps, cache)
        features = warp_features(compiled.programs)
        kernels.append((pathlib.Path(mechanism).stem, warps, len(samples), len(counts)))
        samples += [(dict(f), c) for f, c in zip(features, counts)]
        print(f"{pathlib.Path(mechanism).stem} {warps} warps: SASS per warp {[sum(c.values()) for c in counts]}",
              flush=True)
    if args.counts:
        args.counts.write_text(json.dumps(cache))
    if args.json:
        args.json.write_text(json.dumps(samples))
    coefficients = fit(samples)
    print("\n".join(worst_errors(samples, kernels, coefficients)))
    print(literal(coefficients))
    return 0


if __name__ == "__main__":
    sys.exit(main())
