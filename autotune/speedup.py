"""Modeled speedup of the warp-specialized kernels over the data-parallel baseline.

    python -m autotune.speedup [--mechanisms dme,heptane] [--presets H100,A100] [--json FILE]
        [--settings paper|defaults] [--wilke-group N | --wilke-symmetric] [--products chemkin|cantera]
        [--measured GPU_BENCH_JSON]
        [--plot FILE]

The six kernels of the paper (DME and n-heptane viscosity, diffusion,
chemistry) at the paper's settings (``autotune.bench.PAPER_SETTINGS``), each
compiled for the preset's arch: the timing model's throughput of the
warp-specialized kernel and of the data-parallel baseline (the same math, the same
algebraic savings, its graph built the way a data-parallel kernel runs fastest: ``singe.baseline_kernel``; viscosity's
Wilke sums in groups of 8 whatever the warp-specialized kernel's; where the kernel's math has forms, the fastest
baseline of any form, ``singe.fastest_baseline``: viscosity's row and symmetric forms),
their ratio, the FP64 roofline of the graph's FLOPs and what bounds each
kernel, beside the paper's measured speedup ranges.  ``--settings defaults``:
at the command's defaults instead (8 warps, the CTAs per SM chosen), for any
mechanism and kernel (conductivity too, which the paper did not measure: its
range is '-'); a kernel the paper set no warps for, a kernel or preset that does
not exist, is a usage error;
``--wilke-group N``: viscosity's Wilke group (default: the kernel's at those
warps, ``transport.balanced_wilke_group``); ``--products``: chemistry's products of negative
concentrations (``singe --products``; 'cantera' costs a guard a reaction direction).  Registers are the
register plan's (``--ptxas``: ptxas's for sm_90 / sm_80, one nvcc run per
kernel and style; the n-heptane baselines take minutes; with nvdisasm and
cuobjdump, also each warp's pace by its SASS stall counts,
``bench.model_inputs``).  Reported as the model gives it, not fitted.

``--measured`` puts a GPU's measurements beside the model: the records of
``autotune/gpu_bench.py`` at the paper's settings (its JSON; the ones kept in
``docs/measurements/``), each kernel's measured speedup next to the modeled one
for the preset of the device's architecture, and how far the model is from
the measured throughput of each style.  ``--plot`` draws modeled and measured
speedups against the paper's ranges.
"""

from __future__ import annotations

import argparse
import json
import pathlib
import sys

import singe
from singe import SingeError, baseline_kernel, compile_kernel, fastest_baseline, kernel_spec
from singe.codegen import lay_out, table_copy_bytes
from singe.options import CONSTANT_TABLES, DEFAULT_PRODUCTS, PRODUCTS
from singe.timing import PRESET_OF_ARCH, PRESETS, model, model_baseline

from autotune.bench import (NO_MATPLOTLIB, PAPER_SETTINGS, PAPER_SPEEDUP, kernel_inputs, kernel_names,
                            mechanism_path, model_inputs, paper_range, pyplot, report)


def setting_options(name: str, kernel: str, setting: str) -> dict:
    """The options of ``setting``: 'paper' (``PAPER_SETTINGS``), or 'defaults' (the command's: none given)."""
    if setting == "defaults":
        return {}
    warps, qssa, ctas = PAPER_SETTINGS[name][kernel]
    return {"warps": warps, "qssa_warps": qssa, "ctas_per_sm": ctas}


def speedup_row(name: str, mech, kernel: str, preset: str, ptxas: bool, constant_table: str = "auto",
                setting: str = "paper", wilke_group: int | None = None, products: str = DEFAULT_PRODUCTS,
                wilke_symmetric: bool = False) -> dict:
    """The modeled pair of one kernel on one preset at ``setting`` (``constant_table``: where the
    warp-specialized kernel reads its constant tables, ``CompileOptions.constant_table``; ``wilke_group``:
    viscosity's, None for the kernel's; ``products``: chemistry's, ``CompileOptions.products``; ``wilke_symmetric``:
    viscosity's symmetric form).  The baseline is the fastest of the kernel's forms (``singe.fastest_baseline``)."""
    arch = PRESETS[preset].arch
    own = kernel_spec(kernel).graph_settings(wilke_group=wilke_group, products=products,
                                             wilke_symmetric=wilke_symmetric)
    compiled = compile_kernel(mech, kernel, arch=arch, constant_table=constant_table,
                              **setting_options(name, kernel, setting), **own)
    entries, paces = model_inputs(compiled, arch) if ptxas else ((None, None), (None, None))
    ws = model(compiled, preset, ptxas=entries[0], pace=paces[0])
    copy = table_copy_bytes(lay_out(compiled.programs)) if compiled.form != "tables" else 0
    tuned = baseline_kernel(compiled)

    def baseline_model(baseline):
        if baseline.graph is tuned.graph:  # the kernel's own form: its inputs came with the kernel's (graphs memoized)
            return model_baseline(baseline, preset, ptxas=entries[1], pace=paces[1])
        entry, pace = kernel_inputs(singe.generate_baseline(baseline), arch, None) if ptxas else (None, None)
        return model_baseline(baseline, preset, ptxas=entry, pace=pace)

    form, baselines = fastest_baseline(compiled, baseline_model)
    base = baselines[form][1]
    options = compiled.options
    row = {"mechanism": name, "kernel": kernel, "preset": preset, "setting": setting, "warps": options.warps,
           "qssa_warps": options.qssa_warps, "ctas_per_sm": options.ctas_per_sm, "wilke_group": options.wilke_group,
           "form": kernel_spec(kernel).form_of(options), "baseline_form": form,
           "baseline_forms": {f: result.points_per_second for f, (_, result) in baselines.items()},
           "ws": ws.as_dict(), "baseline": base.as_dict(),
           "speedup": ws.points_per_second / base.points_per_second if base.points_per_second else None,
           "roofline": ws.roofline, "registers_from": ws.registers_from, "table_copy_bytes": copy}
    if tuned is not compiled:  # the kernel's own graph too: what the stored runs measured
        entry, pace = kernel_inputs(singe.generate_baseline(compiled), arch, None) if ptxas else (None, None)
        row["own_graph_baseline"] = model_baseline(compiled, preset, ptxas=entry, pace=pace).as_dict()
    return row


def setting_words(rows: list[dict]) -> str:
    """What the rows' setting is called in the table's heading and the plot's title."""
    return "the command's defaults" if rows and rows[0].get("setting") == "defaults" else "the paper's settings"


def format_rows(rows: list[dict]) -> list[str]:
    head = (f"{'preset':6} {'mechanism':9} {'kernel':12} {'setting':>9} {'WS Mpt/s':>9} {'base Mpt/s':>10} "
            f"{'speedup':>7} {'paper':>10} {'FP64 roof':>9} {'WS/roof':>7} {'base/roof':>9}  "
            f"{'WS bound':26} {'baseline (its form): bound':28}")
    lines = [f"Modeled throughput, warp-specialized (WS) over the data-parallel baseline, at {setting_words(rows)}; "
             "FP64 roofline by the WS graph's FLOPs [Mpoints/s]; the baseline is the fastest of the kernel's forms "
             "(viscosity: rows, symmetric; a setting ending in s: WS in the symmetric form)", head, "-" * len(head)]
    for r in rows:
        setting = f"{r['warps']}x{r['ctas_per_sm']}" + (f"q{r['qssa_warps']}" if r["kernel"] == "chemistry" else "") \
            + (f"g{r['wilke_group']}" if r.get("wilke_group") else "") + ("s" if r.get("form") == "symmetric" else "")
        bound = (f"{r['baseline_form']}: " if r.get("baseline_form") else "") + r["baseline"]["bottleneck"]
        ws, base, roof = r["ws"]["points_per_second"], r["baseline"]["points_per_second"], r["roofline"]
        lines.append(f"{r['preset']:6} {r['mechanism']:9} {r['kernel']:12} {setting:>9} {ws / 1e6:9.1f} "
                     f"{base / 1e6:10.1f} {r['speedup'] or float('nan'):7.2f} {paper_range(r['kernel']):>10} "
                     f"{roof / 1e6:9.1f} {ws / roof:7.0%} {base / roof:9.0%}  {r['ws']['bottleneck']:26.26} "
                     f"{bound:28.28}")
    return lines


def measured_pairs(path: str) -> dict[tuple[str, str], dict]:
    """(mechanism, kernel) -> the measured pair at the paper's setting of a gpu_bench JSON:
    {device, arch, 'warp-specialized': Mpoints/s, 'baseline': Mpoints/s, speedup}."""
    return paper_pairs(json.loads(pathlib.Path(path).read_text()))


def paper_pairs(records: list[dict]) -> dict[tuple[str, str], dict]:
    """``measured_pairs`` of gpu_bench's records (its JSON, or ``gpu_bench.records_from_log``), with the constant
    table of the warp-specialized kernel ('table', ``gpu_bench.record_options``)."""
    from autotune.gpu_bench import record_options

    pairs: dict[tuple[str, str], dict] = {}
    for record in records:
        if record.get("setting") != "paper" or "mpoints_per_s" not in record:
            continue
        pair = pairs.setdefault((record["mechanism"], record["kernel"]),
                                {"device": record["device"], "arch": record["arch"]})
        pair[record["style"]] = record["mpoints_per_s"]
        if record["style"] == "warp-specialized" and record.get("options"):
            pair["table"] = record_options(record).constant_table
        if record["style"] == "warp-specialized" and "table_copy_bytes" in record:
            pair["table_copy_bytes"] = record["table_copy_bytes"]
    for pair in pairs.values():
        against = measured_baseline(pair)
        if "warp-specialized" in pair and against:
            pair["speedup"] = pair["warp-specialized"] / pair[against]
    return pairs


def measured_baseline(pair: dict) -> str | None:
    """The style a measured pair's speedup is against: 'tuned-baseline' where it was timed (``gpu_bench.STYLES``),
    else 'baseline' (every stored run before 2026-11-28: the data-parallel kernel of the warp-specialized
    kernel's graph), None for neither."""
    return next((style for style in ("tuned-baseline", "baseline") if style in pair), None)


def measured_lines(rows: list[dict], pairs: dict, table: str = "auto") -> list[str]:
    """The model (preset of the device's arch; its constant table ``table``) beside the measured pairs, with a
    line where the measured kernels read theirs otherwise."""
    head = (f"{'mechanism':9} {'kernel':9} {'device':12} {'preset':6} {'WS meas':>8} {'base meas':>9} "
            f"{'speedup meas':>12} {'model':>6} {'paper':>10} {'WS model/meas':>13} {'base model/meas':>15}")
    lines = ["", "Measured (autotune/gpu_bench.py, Mpoints/s) beside the model, at the paper's settings", head,
             "-" * len(head)]
    for (mechanism, kernel), pair in sorted(pairs.items()):
        preset = PRESET_OF_ARCH.get(pair["arch"])
        row = next((r for r in rows if (r["mechanism"], r["kernel"], r["preset"]) == (mechanism, kernel, preset)),
                   None)
        if row is None or "speedup" not in pair:
            continue
        against = measured_baseline(pair)
        own = against == "baseline" and "own_graph_baseline" in row  # measured: the kernel's own graph's
        ws = row["ws"]["points_per_second"] / 1e6
        modeled_base = row["own_graph_baseline" if own else "baseline"]["points_per_second"] / 1e6
        speedup = ws / modeled_base if own else row["speedup"]
        lines.append(f"{mechanism:9} {kernel:9} {pair['device'].replace('NVIDIA ', ''):12.12} {preset:6} "
                     f"{pair['warp-specialized']:8.1f} {pair[against]:9.1f} {pair['speedup']:12.2f} "
                     f"{speedup:6.2f} {paper_range(kernel):>10} {ws / pair['warp-specialized']:13.2f} "
                     f"{modeled_base / pair[against]:15.2f}")
        if own:
            lines.append(f"  (the measured {mechanism} {kernel} baseline is the data-parallel kernel of the "
                         f"warp-specialized kernel's graph, and so is the modeled one beside it; against the tuned "
                         f"baseline, the fastest of its forms (singe.fastest_baseline: "
                         f"{row.get('baseline_form') or 'its one form'}), the model gives {row['speedup']:.2f})")
        copy = row.get("table_copy_bytes")
        if copy is not None and pair.get("table_copy_bytes", copy) != copy:
            lines.append(f"  (the measured {mechanism} {kernel} copied {pair['table_copy_bytes']} B of its constant "
                         f"table into shared memory, the modeled one {copy} B: not the same kernel)")
    measured_tables = sorted({pair["table"] for pair in pairs.values() if pair.get("table", table) != table})
    if measured_tables:
        lines.append(f"(the measured warp-specialized kernels read their constant tables with {', '.join(measured_tables)}, "
                     f"the model with {table}: --constant-table {measured_tables[0]} compares like with like)")
    return lines


def write_plot(rows: list[dict], pairs: dict, path: str) -> str:
    """Bars: the modeled speedup per preset and the measured one, the paper's range shaded."""
    plt = pyplot()
    if plt is None:
        return NO_MATPLOTLIB
    kernels = sorted({(r["mechanism"], r["kernel"]) for r in rows})
    presets = sorted({r["preset"] for r in rows})
    series = [(f"model {p}", {(r["mechanism"], r["kernel"]): r["speedup"] for r in rows if r["preset"] == p})
              for p in presets]
    devices = sorted({pair["device"] for pair in pairs.values()})
    series += [(f"measured {d}", {k: pair["speedup"] for k, pair in pairs.items()
                                  if pair["device"] == d and "speedup" in pair}) for d in devices]
    figure, axes = plt.subplots(figsize=(9, 4))
    width = 0.8 / len(series)
    for i, (mechanism, kernel) in enumerate(kernels):
        if kernel in PAPER_SPEEDUP:  # none for conductivity
            axes.fill_between([i - 0.45, i + 0.45], *PAPER_SPEEDUP[kernel], color="0.9", zorder=0)
    for j, (label, values) in enumerate(series):
        axes.bar([i - 0.4 + (j + 0.5) * width for i in range(len(kernels))],
                 [values.get(k, float("nan")) for k in kernels], width, label=label, zorder=2)
    axes.axhline(1.0, color="black", linewidth=0.8)
    axes.set_xticks(range(len(kernels)), [f"{m}\n{k}" for m, k in kernels])
    axes.set_ylabel("warp-specialized / data-parallel")
    axes.set_title(f"Speedup at {setting_words(rows)} (gray: the paper's measured range)")
    axes.legend(fontsize=8)
    figure.tight_layout()
    figure.savefig(path, dpi=150)
    return f"wrote {path}"


def argument_problem(mechanisms: list[str], kernels: list[str], presets: list[str], setting: str) -> str | None:
    """What is wrong with the presets or the setting of the kernels asked for (a message for the parser), or None."""
    unknown = [p for p in presets if p not in PRESETS]
    if unknown:
        return f"--presets: no preset {', '.join(map(repr, unknown))} (the model's: {', '.join(PRESETS)})"
    missing = [f"{m} {k}" for m in mechanisms for k in kernels if k not in PAPER_SETTINGS.get(m, {})]
    if setting == "paper" and missing:
        papers = "; ".join(f"{m}: {', '.join(ks)}" for m, ks in PAPER_SETTINGS.items())
        return (f"the paper set no warps or CTAs for {', '.join(missing)} (it has {papers}): "
                f"give --settings defaults")
    return None


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mechanisms", default="dme,heptane")
    parser.add_argument("--kernels", type=kernel_names, default="viscosity,diffusion,chemistry")
    parser.add_argument("--presets", default="H100,A100")
    parser.add_argument("--ptxas", action="store_true", help="registers and spills from ptxas (nvcc), and the warps' "
                        "paces from the SASS (nvdisasm, cuobjdump) where installed")
    parser.add_argument("--json", help="also write the rows as JSON here")
    parser.add_argument("--constant-table", choices=CONSTANT_TABLES, default="auto",
                        help="where the warp-specialized kernels read their constant tables (singe --constant-table)")
    parser.add_argument("--settings", choices=("paper", "defaults"), default="paper",
                        help="the paper's settings, or the command's defaults (8 warps, CTAs per SM chosen)")
    parser.add_argument("--wilke-group", type=int, metavar="N", help="viscosity's outer species per Wilke sum")
    parser.add_argument("--products", choices=PRODUCTS, default=DEFAULT_PRODUCTS,
                        help="chemistry's products of negative concentrations (singe --products)")
    parser.add_argument("--wilke-symmetric", action="store_true",
                        help="viscosity in its symmetric form (singe --wilke-symmetric)")
    parser.add_argument("--measured", metavar="GPU_BENCH_JSON", help="measurements to put beside the model")
    parser.add_argument("--plot", metavar="FILE", help="draw modeled (and measured) speedups")
    args = parser.parse_args(argv)
    if args.measured and args.settings != "paper":
        parser.error("--measured pairs the model with measurements at the paper's settings: give --settings paper")
    mechanisms, kernels, presets = args.mechanisms.split(","), args.kernels, args.presets.split(",")
    problem = argument_problem(mechanisms, kernels, presets, args.settings)
    if problem:
        parser.error(problem)
    rows = []
    for name in mechanisms:
        mech = singe.load_mechanism(mechanism_path(name))
        for preset in presets:
            for kernel in kernels:
                try:
                    rows.append(speedup_row(name, mech, kernel, preset, args.ptxas, args.constant_table,
                                            args.settings, args.wilke_group, args.products, args.wilke_symmetric))
                except SingeError as error:  # e.g. a transport kernel of a mechanism without transport data
                    print(f"{name} {kernel} ({preset}): {str(error).splitlines()[0]}", file=sys.stderr)
    if not rows:
        return 1
    rows.sort(key=lambda r: (r["preset"], r["mechanism"]))
    lines = format_rows(rows)
    pairs = measured_pairs(args.measured) if args.measured else {}
    if args.measured:
        lines += measured_lines(rows, pairs, args.constant_table)
    if args.plot:
        lines.append(write_plot(rows, pairs, args.plot))
    return report(lines, rows, args.json)


if __name__ == "__main__":
    sys.exit(main())
