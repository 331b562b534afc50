"""The project's benchmark: one row per mechanism x kernel.

    python -m autotune.bench [--mechanisms dme,heptane] [--kernels viscosity,diffusion,chemistry]
        [--config viscosity=15x2,diffusion=10x2,chemistry=8x2q4] [--points 1024] [--ptxas] [--sass] [--json FILE]

Per kernel: compile time, simulator throughput, the timing model's throughput
of the warp-specialized kernel and of the data-parallel baseline on K20c,
A100 and H100 (each compiled for that preset's arch) and the modeled speedup
(the baseline of the kernel's form, ``singe.baseline_kernel``: its SASS beside
the kernel's; ``autotune.speedup`` compares with the fastest baseline of every
form, ``singe.fastest_baseline``);
with ``--ptxas`` the registers and spills nvcc reports for both styles
(sm_90; nvcc takes 10-100 s per kernel, and the H100 model then uses them,
with each warp's pace by its SASS stall counts where nvdisasm and cuobjdump
are installed: ``kernel_inputs``).
With ``--sass`` (needs nvdisasm and cuobjdump: pip install nvidia-cuda-nvdisasm
nvidia-cuda-cuobjdump) a SASS table per kernel and style: static instructions
and lane-instructions issued per point by class, control flow evaluated per
warp, and the cycles an instruction by the stall counts (autotune/sass.py).  A second table puts the K20c model beside the paper's measurements
(docs/formulas.md §9) and the FP64 roofline.

The default configurations are the paper's published command lines
(``--visc 15``, ``--diff 10``, ``--reac 8 --qssa 4 --ctas 2``) at 2 CTAs
per SM, and conductivity (not in the paper) at the command's 8 warps; when
one does not compile for an arch, 1 CTA per SM, then the 'buffer' placement,
are tried and the row says so.
"""

from __future__ import annotations

import argparse
import json
import pathlib
import re
import sys
import tempfile
import time

ROOT = pathlib.Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared" / "mechanisms"

import singe  # noqa: E402
from singe import KERNELS, SingeError, baseline_kernel, bundled_path, compile_kernel  # noqa: E402
from singe.timing import (PRESETS, baseline_register_estimate, fp64_roofline, model, model_baseline,  # noqa: E402
                          register_need)

ARCH_OF_PRESET = {name: preset.arch for name, preset in PRESETS.items()}
PTXAS_ARCH = "sm_90"
#: docs/formulas.md §9: Mpoints/s of the warp-specialized kernels on a K20c (128^3 points)
PAPER_K20C = {("dme", "viscosity"): 17.06, ("dme", "diffusion"): 24.94, ("dme", "chemistry"): 7.35,
              ("heptane", "viscosity"): 5.81, ("heptane", "diffusion"): 7.89, ("heptane", "chemistry"): 4.86}
#: the paper's speedups over its tuned data-parallel kernels (Fermi and Kepler, all problem sizes)
PAPER_SPEEDUP = {"viscosity": (1.2, 3.75), "diffusion": (1.33, 2.58), "chemistry": (1.01, 1.50)}
DEFAULT_CONFIG = "viscosity=15x2,diffusion=10x2,chemistry=8x2q4,conductivity=8x2"
#: the paper's settings: mechanism -> kernel -> (warps, QSSA warps, CTAs per SM)
PAPER_SETTINGS = {"dme": {"viscosity": (15, 1, 3), "diffusion": (10, 1, 3), "chemistry": (8, 4, 2)},
                  "heptane": {"viscosity": (13, 1, 3), "diffusion": (13, 1, 3), "chemistry": (16, 2, 1)}}


def paper_range(kernel: str) -> str:
    """``PAPER_SPEEDUP`` of ``kernel`` as text ('1.2-3.75'); '-' for a kernel the paper did not measure
    (conductivity)."""
    return "-" if kernel not in PAPER_SPEEDUP else "{}-{}".format(*PAPER_SPEEDUP[kernel])


NO_MATPLOTLIB = "no plot: matplotlib is not installed (pip install 'singe[plots]')"


def pyplot():
    """matplotlib.pyplot drawing to files (the Agg backend), or None without matplotlib (``NO_MATPLOTLIB``)."""
    try:
        import matplotlib
    except ImportError:
        return None
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def paper_options(mechanism: str, kernel: str) -> dict:
    """CompileOptions fields of the paper's setting of a kernel (PAPER_SETTINGS;
    DEFAULT_CONFIG for a mechanism the paper did not run)."""
    if kernel in PAPER_SETTINGS.get(mechanism, {}):
        warps, qssa, ctas = PAPER_SETTINGS[mechanism][kernel]
        return {"warps": warps, "ctas_per_sm": ctas} | ({"qssa_warps": qssa} if kernel == "chemistry" else {})
    return parse_config(DEFAULT_CONFIG)[kernel]


def kernel_names(text: str) -> list[str]:
    """--kernels: singe's kernels, comma-separated (an argparse type: a usage error names one that is not)."""
    names = text.split(",")
    unknown = [name for name in names if name not in KERNELS]
    if unknown:
        raise argparse.ArgumentTypeError(f"no kernel {', '.join(map(repr, unknown))} (singe's kernels: "
                                         f"{', '.join(KERNELS)})")
    return names


def parse_config(text: str) -> dict[str, dict]:
    """'viscosity=15x2,chemistry=8x2q4' -> {kernel: {warps, ctas_per_sm, qssa_warps}}."""
    result = {}
    for part in text.split(","):
        m = re.fullmatch(r"\s*(\w+)=(\d+)(?:x(\d+))?(?:q(\d+))?\s*", part)
        if not m:
            raise argparse.ArgumentTypeError(f"--config entries look like chemistry=8x2q4 (warps x CTAs q QSSA "
                                             f"warps): {part!r}")
        kernel, warps, ctas, qssa = m.groups()
        kernel_names(kernel)  # a usage error for a kernel singe does not have
        result[kernel] = {"warps": int(warps), "ctas_per_sm": int(ctas or 2), "qssa_warps": int(qssa or 1)}
    return result


def mechanism_path(name: str) -> pathlib.Path:
    """A mechanism of the shared mechanisms folder beside the repository, a bundled one, or a path."""
    folder = {"dodecane": "dodecane_qss"}.get(name, name)
    candidates = [SHARED / folder / f"{name}.inp", bundled_path(name), pathlib.Path(name)]
    found = [p for p in candidates if p is not None and p.is_file()]
    if not found:
        raise SystemExit(f"no mechanism {name!r}: not {SHARED / folder / (name + '.inp')} (the shared mechanisms "
                         f"beside the repository), not a bundled one, not a file")
    return found[0]


def report(lines: list[str], rows: list, json_path: str | None) -> int:
    """Print a script's table; with ``--json``, also write its rows there.  The exit status: 0."""
    print("\n".join(lines))
    if json_path:
        pathlib.Path(json_path).write_text(json.dumps(rows, indent=1))
    return 0


def compile_for(mech, kernel: str, config: dict, arch: str):
    """(compiled, note): the configuration, or the first fallback that compiles."""
    attempts = [dict(config), dict(config, ctas_per_sm=1), dict(config, placement="buffer")]
    problems = []
    for attempt in attempts:
        try:
            compiled = compile_kernel(mech, kernel, arch=arch, **attempt)
        except SingeError as error:
            problems.append(str(error).splitlines()[0])
            continue
        changed = {k: v for k, v in attempt.items() if config.get(k) != v}
        return compiled, (f"with {changed}" if changed else "")
    raise SingeError(f"{kernel} does not compile for {arch}: {problems[0]}")


def sass_view(generated, arch: str, warps: int | None):
    """The SASS view (autotune/sass.py) of one generated kernel for ``arch`` (``warps``: a warp-specialized
    kernel's; None for a baseline, data-parallel)."""
    from autotune import sass

    with tempfile.TemporaryDirectory() as scratch:
        return sass.analyse(generated.write(scratch)[0], arch, warps, data_parallel=warps is None)


def sass_views(compiled, arch: str = PTXAS_ARCH, tuned: bool = True) -> tuple:
    """The SASS views of the warp-specialized kernel and the baseline of ``compiled`` for ``arch``: its
    ``baseline_kernel``'s, or with ``tuned`` False the data-parallel kernel of its own graph (what the stored
    runs measured and profiled)."""
    from singe.codegen import generate, generate_baseline

    return sass_view(generate(compiled), arch, compiled.programs.warps), \
        sass_view(generate_baseline(baseline_kernel(compiled) if tuned else compiled), arch, None)


def sass_pair(views: tuple) -> dict:
    """Both styles' SASS views (``sass_views``) as numbers."""
    return {style: {"registers": view.registers, "spill_stores": view.spill_stores, "static": view.static,
                    "issued": view.total, "classes": dict(view.per_point), "imbalance": view.imbalance,
                    "pace": view.pace, "nvcc_s": view.nvcc_s}
            for style, view in zip(("ws", "baseline"), views)}


def model_inputs(compiled, arch: str = PTXAS_ARCH, views: tuple = (None, None)) -> tuple[tuple, tuple]:
    """What the timing model takes of the compiled kernels of ``compiled`` for ``arch``, warp-specialized and
    baseline (``baseline_kernel``): ((ptxas, ptxas), (paces, pace)) as ``kernel_inputs`` gives them (``views``:
    their SASS views where already made, ``sass_views``)."""
    from singe.codegen import generate, generate_baseline

    ws = kernel_inputs(generate(compiled), arch, compiled.programs.warps, views[0])
    baseline = kernel_inputs(generate_baseline(baseline_kernel(compiled)), arch, None, views[1])
    return (ws[0], baseline[0]), (ws[1], baseline[1])


def kernel_inputs(generated, arch: str, warps: int | None, view=None) -> tuple[dict, "list[float] | float | None"]:
    """(ptxas, pace) of one generated kernel for ``arch`` (``warps``: a warp-specialized kernel's, None for a
    baseline), as ``timing.model`` takes them: ptxas's registers and spills; with the SASS tools, each warp's
    least cycles per issued instruction by its stall counts (``sass.Walk.pace``; one for a baseline), without
    them None (no such floor).  ``view``: its SASS view where already made."""
    from singe.codegen.nvcc import ptxas_entry

    from autotune import sass

    if view is None:
        if sass.missing_reason():
            return ptxas_numbers(ptxas_entry(generated, arch)), None
        view = sass_view(generated, arch, warps)
    paces = [w.pace for w in view.warps]
    return ptxas_numbers(view), paces[0] if warps is None else paces


def ptxas_numbers(compiled_kernel) -> dict:
    """Registers and spills of a ``PtxasEntry`` or a SASS view, as ``timing.model`` takes them."""
    return {key: getattr(compiled_kernel, key) for key in ("registers", "spill_stores", "spill_loads")}


def sass_table(rows: list[dict]) -> list[str]:
    from autotune import sass

    head = f"{'mechanism':9} {'kernel':12} {'style':8} {'regs':>4} {'spill':>6} {'static':>7} {'issued/pt':>9} " + \
        " ".join(f"{c:>6}" for c in sass.CLASSES) + f" {'imbal':>5} {'pace':>5} {'nvcc':>6}"
    lines = [f"SASS ({PTXAS_ARCH}): lane-instructions issued per point by class, control flow per warp; pace: "
             "cycles an instruction by the stall counts", head,
             "-" * len(head)]
    for row in rows:
        for style, v in row.get("sass", {}).items():
            lines.append(f"{row['mechanism']:9} {row['kernel']:12} {style:8} {v['registers']:4} {v['spill_stores']:6} "
                         f"{v['static']:7} {v['issued']:9} " + " ".join(f"{v['classes'].get(c, 0):6}"
                                                                      for c in sass.CLASSES)
                         + f" {v['imbalance']:5.2f} {v.get('pace') or 0:5.2f} {v['nvcc_s']:5.1f}s")
    return lines


def simulator_rate(compiled, points: int) -> float:
    """Points per second of the warp simulator on ``points`` random states."""
    import numpy as np

    mech = compiled.mechanism
    rng = np.random.default_rng(0)
    Y = rng.random((len(mech.transported_species), points))
    T = rng.uniform(800.0, 2500.0, points)
    P = np.full(points, 101325.0)
    start = time.perf_counter()
    compiled.simulate(T, P, Y / Y.sum(axis=0))
    return points / (time.perf_counter() - start)


def bench_row(name: str, mech, kernel: str, config: dict, points: int, ptxas: bool, sass: bool = False) -> dict:
    """Every number of one mechanism x kernel."""
    row = {"mechanism": name, "kernel": kernel, "config": config, "notes": []}
    start = time.perf_counter()
    compiled = compile_kernel(mech, kernel, arch=PTXAS_ARCH, **config)
    row["compile_s"] = time.perf_counter() - start
    row["flops_per_point"] = compiled.graph.flops
    row["registers_estimate"] = {"ws": register_need(compiled.programs),
                                 "baseline": baseline_register_estimate(baseline_kernel(compiled).graph)}
    row["simulator_points_per_s"] = simulator_rate(compiled, points)
    entries, paces = (None, None), (None, None)
    views = sass_views(compiled) if sass else (None, None)  # compiled once for the SASS table and the model
    if ptxas:
        try:
            entries, paces = model_inputs(compiled, views=views)
            row["ptxas"] = dict(zip(("ws", "baseline"), entries))
        except SingeError as error:
            row["notes"].append(f"ptxas: {str(error).splitlines()[0]}")
    if sass:
        row["sass"] = sass_pair(views)
    row["model"] = {}
    for preset, arch in ARCH_OF_PRESET.items():
        try:
            compiled_here, note = compile_for(mech, kernel, config, arch)
        except SingeError as error:
            row["notes"].append(f"{preset}: {error}")
            continue
        if note:
            row["notes"].append(f"{preset}: compiled {note}")
        use, pace = (entries, paces) if arch == PTXAS_ARCH else ((None, None), (None, None))
        ws = model(compiled_here, preset, ptxas=use[0], pace=pace[0])
        base = model_baseline(baseline_kernel(compiled_here), preset, ptxas=use[1], pace=pace[1])
        row["model"][preset] = {"ws": ws.as_dict(), "baseline": base.as_dict(),
                                "speedup": ws.points_per_second / base.points_per_second
                                if base.points_per_second else None}
    return row


def _mpts(row: dict, preset: str, style: str) -> str:
    entry = row["model"].get(preset)
    return f"{entry[style]['points_per_second'] / 1e6:9.2f}" if entry else f"{'n/a':>9}"


def _speedup(row: dict, preset: str) -> str:
    entry = row["model"].get(preset)
    return f"{entry['speedup']:6.2f}x" if entry and entry["speedup"] else f"{'n/a':>7}"


def main_table(rows: list[dict]) -> list[str]:
    presets = list(PRESETS)
    head = (f"{'mechanism':9} {'kernel':12} {'config':>8} {'compile':>8} {'sim':>9} "
            + " ".join(f"{p + ' WS':>9} {p + ' base':>9} {'x':>7}" for p in presets)
            + f" {'regs est':>8} {'ptxas WS':>12} {'ptxas base':>12}")
    lines = ["Throughput: Mpoints/s (simulator: kpoints/s on the CPU); 'x': modeled speedup over the baseline; "
             "registers per thread (the model's estimate, warp-specialized/baseline, before the 255 cap) and "
             "ptxas's registers/spill bytes per thread (sm_90, used by the H100 model)", head, "-" * len(head)]
    for row in rows:
        c = row["config"]
        config = f"{c['warps']}x{c['ctas_per_sm']}" + (f"q{c['qssa_warps']}" if row["kernel"] == "chemistry" else "")
        estimate, base_estimate = row["registers_estimate"]["ws"], row["registers_estimate"]["baseline"]
        ptxas = row.get("ptxas")
        fmt = (lambda e: f"{e['registers']}r/{e['spill_stores'] + e['spill_loads']}B")  # noqa: E731
        line = (f"{row['mechanism']:9} {row['kernel']:12} {config:>8} {row['compile_s']:7.2f}s "
                f"{row['simulator_points_per_s'] / 1e3:9.1f} "
                + " ".join(f"{_mpts(row, p, 'ws')} {_mpts(row, p, 'baseline')} {_speedup(row, p)}" for p in presets)
                + f" {str(estimate) + '/' + str(base_estimate):>8}"
                + f" {fmt(ptxas['ws']) if ptxas else '-':>12} {fmt(ptxas['baseline']) if ptxas else '-':>12}")
        lines.append(line)
        lines.extend(f"    note: {note}" for note in row["notes"])
    return lines


def paper_table(rows: list[dict]) -> list[str]:
    head = (f"{'mechanism':9} {'kernel':12} {'K20c model':>10} {'paper':>7} {'model/paper':>11} "
            f"{'FP64 roof':>9} {'model x':>7} {'paper x':>11} {'bottleneck (model)':>20}")
    lines = ["K20c: the model against the paper's measured warp-specialized throughput (Mpoints/s), the FP64 "
             "roofline by the graph's FLOPs, modeled and published speedups", head, "-" * len(head)]
    from singe.timing import K20C

    for row in rows:
        k20c = row["model"].get("K20c")
        paper = PAPER_K20C.get((row["mechanism"], row["kernel"]))
        roof = fp64_roofline(K20C, row["flops_per_point"]) / 1e6
        modeled = k20c["ws"]["points_per_second"] / 1e6 if k20c else None
        lines.append(
            f"{row['mechanism']:9} {row['kernel']:12} {modeled if modeled is not None else float('nan'):10.2f} "
            f"{paper if paper else float('nan'):7.2f} "
            f"{(modeled / paper) if modeled and paper else float('nan'):11.2f} {roof:9.2f} "
            f"{(k20c['speedup'] or float('nan')) if k20c else float('nan'):7.2f} "
            f"{paper_range(row['kernel']):>11} {k20c['ws']['bottleneck'] if k20c else '-':>20}")
    return lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mechanisms", default="dme,heptane")
    parser.add_argument("--kernels", type=kernel_names, default="viscosity,diffusion,chemistry")
    parser.add_argument("--config", type=parse_config, default=parse_config(DEFAULT_CONFIG),
                        help=f"warps x CTAs per SM (q QSSA warps) per kernel (default {DEFAULT_CONFIG})")
    parser.add_argument("--points", type=int, default=1024, help="points simulated for the simulator throughput")
    parser.add_argument("--ptxas", action="store_true", help=f"compile both styles with nvcc ({PTXAS_ARCH})")
    parser.add_argument("--sass", action="store_true", help="the SASS view of both styles (nvcc, nvdisasm)")
    parser.add_argument("--json", help="also write the rows as JSON here")
    parser.add_argument("--gpu-bench", default="gpu_bench.json", metavar="FILE",
                        help="measurements of autotune/gpu_bench.py (its JSON, or a device session's log.txt): when "
                             "the file exists, the model is printed beside them (default gpu_bench.json)")
    args = parser.parse_args(argv)
    config = parse_config(DEFAULT_CONFIG) | args.config
    from autotune import sass

    if args.sass and sass.missing_reason():
        print(f"--sass skipped: {sass.missing_reason()}")
        args.sass = False
    rows = []
    for name in args.mechanisms.split(","):
        mech = singe.load_mechanism(mechanism_path(name))
        for kernel in args.kernels:
            if kernel != "chemistry" and not mech.has_transport:
                continue
            try:
                rows.append(bench_row(name, mech, kernel, config[kernel], args.points, args.ptxas, args.sass))
            except SingeError as error:
                print(f"{name} {kernel}: {error}", file=sys.stderr)
    for line in main_table(rows) + [""] + paper_table(rows) + ([""] + sass_table(rows) if args.sass else []):
        print(line)
    if args.json:
        pathlib.Path(args.json).write_text(json.dumps(rows, indent=1))
    if args.gpu_bench and pathlib.Path(args.gpu_bench).is_file():
        from autotune.gpu_bench import measured_records, model_comparison_lines

        print()
        print("\n".join(model_comparison_lines(measured_records(args.gpu_bench))))
    return 0


if __name__ == "__main__":
    sys.exit(main())
