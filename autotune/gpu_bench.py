"""The generated kernels measured on the CUDA device present (the paper's 128^3 points).

    python -m autotune.gpu_bench [--mechanisms dme,heptane] [--kernels viscosity,diffusion,chemistry]
        [--settings paper,defaults] [--sweep-best FILE ...] [--styles warp-specialized,baseline,tuned-baseline]
        [--points 2097152] [--warmup 3] [--repeats 10] [--arch sm_90] [--compile-only] [--no-sanitizer]
        [--json gpu_bench.json] [--plot gpu_bench.png] [--define NAME=VALUE ...]

For every mechanism x kernel x setting x style (``STYLES``): generate, build with nvcc for
the device's architecture (singe.gpu; ptxas registers and spills are
reported), run at ``--points`` points (distinct random states tiled) with
CUDA events — ``--warmup`` launches, then the median of ``--repeats`` (>= 10)
— check the first points against ``singe.reference`` (1e-9 relative, per
point for species-major outputs), and print Mpoints/s, GFLOP/s by the graph's
FLOP count and the fraction of the device's FP64 peak.  Where
``compute-sanitizer`` is on PATH, racecheck and synccheck run once per kernel
(a small launch in a child process).  Settings: 'paper' (the paper's command
settings, ``bench.PAPER_SETTINGS``), 'defaults' (``singe``'s defaults), and the
command line of each ``--sweep-best`` file (``sweep.py`` writes
``*.best.txt``).  ``--define`` passes a macro to nvcc (``SINGE_GRID_LIMIT=N``: a
persistent grid of at most N CTAs).  Without a GPU (or with ``--compile-only``) everything is
compiled, nothing is timed, and the script says so and exits 0.
``autotune/bench.py --gpu-bench FILE`` puts the timing model beside these
measurements.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import pathlib
import re
import shlex
import shutil
import statistics
import subprocess
import sys
import time

ROOT = pathlib.Path(__file__).resolve().parents[1]

import numpy as np  # noqa: E402

import singe  # noqa: E402
from autotune.bench import NO_MATPLOTLIB, kernel_names, mechanism_path, paper_options, pyplot  # noqa: E402
from singe import (CompileOptions, SingeError, baseline_kernel, compile_kernel, generate,  # noqa: E402
                   generate_baseline, gpu)
from singe.derived.rates import DEFAULT_PRODUCTS, PRODUCTS  # noqa: E402
from singe.host import compiled_fields  # noqa: E402
from singe.statefile import draw_states, reference_values  # noqa: E402
from singe.timing import PRESET_OF_ARCH, PRESETS, model, model_baseline  # noqa: E402

PAPER_POINTS = 128 ** 3
DISTINCT_STATES = 4096  # tiled over the points; the first ones are checked
CHECKED = 1024
TOLERANCE = 1e-9
STYLES = ("warp-specialized", "baseline", "tuned-baseline")
"""The kernels timed of a configuration: the warp-specialized kernel; 'baseline', the data-parallel kernel of
its graph (what every stored run before 2026-11-28 measured); 'tuned-baseline', the data-parallel kernel of its
graph built the way a kernel of one thread a point runs fastest (``singe.baseline_kernel``: viscosity's Wilke
groups of 8, or the symmetric form's triangle), the one its speedup is measured against, timed only where it
differs from 'baseline'."""

SETTINGS = ("paper", "defaults")
SANITIZER_TOOLS = ("racecheck", "synccheck")
SANITIZER_REPORT_LINES = 12  # kept of a tool's report when it finds something


def style_kernel(compiled, style: str):
    """What ``style``'s kernel is generated from, for the compiled warp-specialized kernel ``compiled``: itself,
    its ``baseline_kernel`` for 'tuned-baseline', None where that is the same as 'baseline'."""
    if style != "tuned-baseline":
        return compiled
    tuned = baseline_kernel(compiled)
    return None if tuned is compiled else tuned


@dataclasses.dataclass
class Config:
    mechanism: str
    kernel: str
    setting: str
    options: CompileOptions

    def label(self, table: str | None = None) -> str:
        """'dme viscosity paper (15x3 copy)': the setting's shape (``SHAPE``: warps x CTAs per SM, QSSA warps for
        chemistry, a Wilke group other than the kernel's, 'lnT' for --replicate-ln-t, 'sym' for --wilke-symmetric,
        'pf' for --prefetch,
        chemistry's products where they are not the default, 'cantera') and, for a warp-specialized kernel,
        ``table``: where it reads its constant table ('copy' in shared memory, 'partial' (its first stripes copied,
        ``codegen.partial_copy``), 'cache', or 'bank' (its loops once per warp), ``TABLES``, ``table_label``)."""
        o = self.options
        shape = f"{o.warps}x{o.ctas_per_sm or 'auto'}" + (f"q{o.qssa_warps}" if self.kernel == "chemistry" else "")
        shape += f" g{o.wilke_group}" if o.wilke_group is not None else ""
        shape += " lnT" if o.replicate_ln_t else ""
        shape += " sym" if o.wilke_symmetric else ""
        shape += " pf" if o.prefetch else ""
        shape += f" {o.products}" if o.products != DEFAULT_PRODUCTS else ""
        return f"{self.mechanism} {self.kernel} {self.setting} ({shape}{f' {table}' if table else ''})"


# -- configurations --------------------------------------------------------------------------

def settings_from_sweep(path: str) -> tuple[str, str, dict]:
    """(mechanism, kernel, options) of the ``singe`` command line a sweep wrote."""
    from singe.cli import _options, build_parser

    words = shlex.split(pathlib.Path(path).read_text().strip().splitlines()[-1])
    args = build_parser().parse_args(words[1:] if words and words[0].endswith("singe") else words)
    kernel = (args.kernels or ["chemistry"])[0]
    return pathlib.Path(args.mechanism).stem, kernel, dataclasses.asdict(_options(args, kernel))


def configurations(args, arch: str) -> list[Config]:
    result = []
    for name in args.mechanisms.split(","):
        mech = singe.load_mechanism(mechanism_path(name))
        kernels = [k for k in args.kernels if k == "chemistry" or mech.has_transport]
        for kernel in kernels:
            for setting in filter(None, args.settings.split(",")):
                options = paper_options(name, kernel) if setting == "paper" else {}
                result.append(Config(name, kernel, setting, CompileOptions(arch=arch, **options)))
    for path in args.sweep_best or []:
        name, kernel, options = settings_from_sweep(path)
        options = {**options, "arch": arch, "weights": tuple(options["weights"])}
        result.append(Config(name, kernel, f"sweep:{path}", CompileOptions(**options)))
    return result


# -- compiling -------------------------------------------------------------------------------

def build_styles(config: Config, styles, arch: str, mechanisms: dict, defines=()) -> tuple[dict, dict]:
    """{style: (what it is generated from, its ``GeneratedKernel``, its GpuBuild)} and {style: a record of the
    build} (``defines``: nvcc's -D; a style with no kernel of its own, ``style_kernel``, is left out)."""
    mech = mechanisms.setdefault(config.mechanism, singe.load_mechanism(mechanism_path(config.mechanism)))
    compiled = compile_kernel(mech, config.kernel, options=config.options)
    builds, records = {}, {}
    for style in styles:
        kernel = style_kernel(compiled, style)
        if kernel is None:
            continue
        generated = generate(kernel) if style == "warp-specialized" else generate_baseline(kernel)
        start = time.perf_counter()
        built = gpu.build(generated, arch, defines=tuple(defines))
        entry = next(e for e in built.entries if generated.name in e.function)
        builds[style] = (kernel, generated, built)
        records[style] = {"registers": entry.registers, "spill_stores": entry.spill_stores,
                          "spill_loads": entry.spill_loads, "build_s": time.perf_counter() - start,
                          "table_copy_bytes": generated.info.table_copy_bytes if style == "warp-specialized" else 0,
                          "table": table_label(generated.info) if style == "warp-specialized" else None}
    return builds, records


# -- measuring -------------------------------------------------------------------------------

def time_launches(kernel: gpu.GpuKernel, inputs: dict, outputs: dict, n: int, warmup: int, repeats: int):
    """Milliseconds of each of ``repeats`` launches (CUDA events), after ``warmup``."""
    cupy = gpu.cupy_module()
    for _ in range(warmup):
        kernel.launch(inputs, outputs, n)
    cupy.cuda.get_current_stream().synchronize()
    times = []
    for _ in range(repeats):
        start, stop = cupy.cuda.Event(), cupy.cuda.Event()
        start.record()
        kernel.launch(inputs, outputs, n)
        stop.record()
        stop.synchronize()
        times.append(cupy.cuda.get_elapsed_time(start, stop))
    return times


def largest_error(ours: np.ndarray, truth: np.ndarray) -> float:
    """Relative to each point's largest |value| (species-major) or to the value."""
    scale = np.abs(truth).max(axis=0)
    return float(np.max(np.abs(ours - truth) / np.where(scale > 0, scale, 1.0)))


def measure(compiled, generated, built, args, device: gpu.Device) -> dict:
    cupy = gpu.cupy_module()
    mech = compiled.mechanism
    T, P, Y = draw_states(mech, DISTINCT_STATES)
    reps = -(-args.points // DISTINCT_STATES)
    tiled = [np.tile(a, reps)[..., :args.points] for a in (T, P, Y)]
    kernel = gpu.GpuKernel(gpu.kernel_source(generated), built)
    fields, n = compiled_fields(kernel.source, *tiled)
    inputs, outputs = kernel.device_inputs(fields, n), kernel.device_outputs(n)
    times = time_launches(kernel, inputs, outputs, n, args.warmup, args.repeats)
    result = cupy.asnumpy(outputs[compiled.spec.output.name][:, :CHECKED])
    error = largest_error(result, reference_values(mech, compiled.kernel, T[:CHECKED], P[:CHECKED], Y[:, :CHECKED],
                                                   compiled.options))
    median = statistics.median(times) / 1e3
    rate = n / median
    peak = fp64_peak(device)
    record = {"points": n, "times_ms": times, "median_ms": median * 1e3, "mpoints_per_s": rate / 1e6,
              "gflops": rate * compiled.graph.flops / 1e9, "flops_per_point": compiled.graph.flops,
              "checked_points": CHECKED, "max_error": error, "correct": error <= TOLERANCE}
    record["fp64_fraction"] = rate * compiled.graph.flops / peak if peak else None
    return record


def fp64_peak(device: gpu.Device) -> float | None:
    """The device's FP64 peak [FLOP/s]: the timing preset's FP64 FMA lanes per SM
    of its architecture, times its SMs and clock (None for an arch without preset)."""
    preset = PRESETS.get(PRESET_OF_ARCH.get(device.arch, ""))
    return 2.0 * preset.fp64_fma * device.sms * device.clock_hz if preset and device.clock_hz else None


def sanitize(config: Config, style: str, defines=()) -> dict:
    """racecheck and synccheck of one small launch (a child gpu_bench run)."""
    child = [sys.executable, str(pathlib.Path(__file__).resolve()), "--mechanisms", config.mechanism,
             "--kernels", config.kernel, "--styles", style, "--points", "4096", "--warmup", "0", "--repeats", "10",
             "--no-sanitizer", "--json", "", "--plot", ""] + [f"--define={d}" for d in defines]
    sweep = config.setting.startswith("sweep:")
    child += ["--settings", "", "--sweep-best", config.setting[len("sweep:"):]] if sweep else \
        ["--settings", config.setting]
    results = {}
    for tool in SANITIZER_TOOLS:
        done = subprocess.run(["compute-sanitizer", "--tool", tool, "--error-exitcode", "97", *child],
                              capture_output=True, text=True)
        text = done.stdout + done.stderr
        summary = re.findall(r"ERROR SUMMARY: .*|RACECHECK SUMMARY: .*", text)
        results[tool] = {"clean": done.returncode == 0, "summary": summary[-1] if summary else text.strip()[-300:],
                         "first_report": first_report(text)}
    return results


def first_report(text: str, lines: int = SANITIZER_REPORT_LINES) -> list[str]:
    """The first lines compute-sanitizer reported (its '========= ' lines, blank ones left out)."""
    reported = (line.removeprefix("========= ").strip() for line in text.splitlines() if line.startswith("========= "))
    return [line for line in reported if line][:lines]


# -- reporting -------------------------------------------------------------------------------

def row_line(record: dict) -> str:
    head = f"{record['label']:40} {record['style']:16} {record['registers']:4d}r {record['spill_stores']:5d}B"
    if "mpoints_per_s" not in record:
        return head
    fraction = f"{record['fp64_fraction']:6.1%}" if record["fp64_fraction"] is not None else "   n/a"
    return (f"{head} {record['median_ms']:9.3f} ms {record['mpoints_per_s']:9.2f} {record['gflops']:8.1f} {fraction} "
            f"{record['max_error']:8.1e} {'ok' if record['correct'] else 'WRONG'}"
            + "".join(f" {t}:{'clean' if r['clean'] else 'FAIL'}" for t, r in record.get("sanitizer", {}).items()))


ROW = re.compile(r"^(?P<mechanism>\S+) (?P<kernel>\S+) (?P<setting>\S+) \((?P<shape>[^)]*)\)\s+"
                 r"(?P<style>warp-specialized|tuned-baseline|baseline)\s+"
                 r"(?P<registers>\d+)r\s+(?P<spill_stores>\d+)B\s+"
                 r"(?P<median_ms>[\d.]+) ms\s+(?P<mpoints_per_s>[\d.]+)\s+(?P<gflops>[\d.]+)\s+"
                 r"(?:(?P<fp64>[\d.]+)%|n/a)\s+(?P<max_error>\S+) (?P<verdict>ok|WRONG)")
DEVICE = re.compile(r"^device: (?P<name>.+) \((?P<arch>sm_\w+), \d+ SMs\)$")
SHAPE = re.compile(r"(?P<warps>\d+)x(?P<ctas>\d+|auto)(?:q(?P<qssa>\d+))?(?: g(?P<group>\d+))?(?P<ln_t> lnT)?"
                   r"(?P<symmetric> sym)?(?P<prefetch> pf)?"
                   rf"(?: (?P<products>{'|'.join(p for p in PRODUCTS if p != DEFAULT_PRODUCTS)}))?"
                   r"(?: (?P<table>copy|partial|cache|bank))?$")
TABLES = {"copy": "shared", "partial": "auto", "cache": "cache", "bank": "bank"}
"""A label's constant table (``Config.label``) -> the ``CompileOptions.constant_table`` that emits that kernel."""
LEGACY_TABLE = "cache"
"""The constant table of a record that does not say (``record_options``): every run before the default became
'auto' (2026-11-27, evening) read the table through the constant cache."""


def table_label(info) -> str:
    """Where a warp-specialized kernel reads its constant table, as its label says it (``CodegenInfo``): 'copy',
    'partial', 'cache' or 'bank' (its loops once per warp)."""
    if info.loops_per_warp:
        return "bank"
    if not info.table_copy_bytes:
        return "cache"
    return "partial" if info.copies_part else "copy"


def options_of_shape(shape: str, arch: str | None) -> dict | None:
    """The ``CompileOptions`` fields of a label's shape ('15x3', '8xauto', '8x2q4', as ``Config.label`` writes it):
    warps, CTAs per SM (None: chosen) and QSSA warps, the rest the defaults (as the paper's settings, the
    defaults and the kit's variants set them); None for a shape it does not name."""
    found = SHAPE.match(shape)
    if found is None:
        return None
    fields = dataclasses.asdict(CompileOptions(arch=arch or "sm_90"))
    return fields | {"warps": int(found["warps"]), "ctas_per_sm": None if found["ctas"] == "auto" else int(found["ctas"]),
                     "qssa_warps": int(found["qssa"] or 1),
                     "wilke_group": int(found["group"]) if found["group"] else None,
                     "replicate_ln_t": bool(found["ln_t"]), "wilke_symmetric": bool(found["symmetric"]),
                     "prefetch": bool(found["prefetch"]),
                     "products": found["products"] or DEFAULT_PRODUCTS,
                     "constant_table": TABLES[found["table"]] if found["table"] else LEGACY_TABLE}


def record_options(record: dict) -> CompileOptions:
    """The options that compile a record's kernel again: its own, the constant table ``LEGACY_TABLE`` where it
    does not name one (a record written before the option existed)."""
    fields = {"constant_table": LEGACY_TABLE, **record["options"]}
    return CompileOptions(**{**fields, "weights": tuple(fields["weights"])})


def records_from_log(text: str) -> list[dict]:
    """The timed rows ``row_line`` printed, read back from a run's log: for a run whose JSON was never written
    (its step stopped at a time limit before ``--json`` was written after each configuration).  Each record has
    what the row shows: label, mechanism, kernel, setting, style, registers, spill_stores, median_ms,
    mpoints_per_s, gflops, fp64_fraction, max_error, correct, and the device of the log's last ``device:`` line
    before it, with the device's arch (a log does not say the build's); ``options`` from the label's shape
    (``options_of_shape``).  A row does not print ptxas's spill loads: ``spill_loads`` is None."""
    records, device = [], {"device": None, "arch": None}
    for line in text.splitlines():
        found = DEVICE.match(line)
        if found:
            device = {"device": found["name"], "arch": found["arch"]}
            continue
        row = ROW.match(line)
        if row is None:
            continue
        fp64 = row["fp64"]
        records.append({"label": f"{row['mechanism']} {row['kernel']} {row['setting']} ({row['shape']})",
                        **{k: row[k] for k in ("mechanism", "kernel", "setting", "style")}, **device,
                        "options": options_of_shape(row["shape"], device["arch"]),
                        "registers": int(row["registers"]), "spill_stores": int(row["spill_stores"]),
                        "spill_loads": None,
                        "median_ms": float(row["median_ms"]), "mpoints_per_s": float(row["mpoints_per_s"]),
                        "gflops": float(row["gflops"]), "fp64_fraction": float(fp64) / 100 if fp64 else None,
                        "max_error": float(row["max_error"]), "correct": row["verdict"] == "ok"})
    return records


def write_plot(records: list[dict], path: str, device: str) -> str:
    plt = pyplot()
    if plt is None:
        return NO_MATPLOTLIB
    timed = [r for r in records if "mpoints_per_s" in r]
    figure, axes = plt.subplots(figsize=(max(6, 0.5 * len(timed)), 4))
    colors = ["tab:blue" if r["style"] == "warp-specialized" else "tab:gray" for r in timed]
    axes.bar(range(len(timed)), [r["mpoints_per_s"] for r in timed], color=colors)
    axes.set_xticks(range(len(timed)), [f"{r['label']}\n{r['style']}" for r in timed], rotation=90, fontsize=6)
    axes.set_ylabel("Mpoints/s")
    axes.set_title(f"singe kernels on {device} (blue: warp-specialized, gray: baseline)")
    figure.tight_layout()
    figure.savefig(path, dpi=150)
    return f"wrote {path}"


def measured_records(path: str) -> list[dict]:
    """gpu_bench's records of ``path``: its JSON, or the log of a device session (``.txt``: the rows its timing
    step printed, ``records_from_log``; the other steps time under ncu or the sanitizer)."""
    from autotune.device_kit import step_output

    text = pathlib.Path(path).read_text()
    if not path.endswith(".txt"):
        return json.loads(text)
    return records_from_log(step_output(text, "timing") or text)


def model_comparison_lines(records: list[dict]) -> list[str]:
    """The timing model beside each measured configuration: model / measured."""
    lines = ["The timing model against gpu_bench.py's measurements (Mpoints/s; model/measured)"]
    mechanisms: dict = {}
    for record in records:
        if "mpoints_per_s" not in record or record.get("options") is None:
            continue
        preset = PRESET_OF_ARCH.get(record["arch"])
        if preset is None:
            lines.append(f"  {record['label']} {record['style']}: no model preset for {record['arch']}")
            continue
        mech = mechanisms.setdefault(record["mechanism"], singe.load_mechanism(mechanism_path(record["mechanism"])))
        compiled = compile_kernel(mech, record["kernel"], options=record_options(record))
        entry = {k: record[k] for k in ("registers", "spill_stores", "spill_loads")}
        if entry["spill_loads"] is None:  # read from a log, which prints the stores only: loads as many
            entry["spill_loads"] = entry["spill_stores"]
        kernel = style_kernel(compiled, record["style"])
        rule = model if record["style"] == "warp-specialized" else model_baseline
        modeled = rule(kernel, preset, ptxas=entry).points_per_second / 1e6
        measured = record["mpoints_per_s"]
        lines.append(f"  {record['label']:40} {record['style']:16} model {modeled:9.2f} measured "
                     f"{measured:9.2f} ({record['device']})  ratio {modeled / measured:.3g}")
    return lines


def parse_arguments(argv):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mechanisms", default="dme,heptane")
    parser.add_argument("--kernels", type=kernel_names, default="viscosity,diffusion,chemistry")
    parser.add_argument("--settings", default="paper,defaults", help="paper, defaults (comma-separated; '' for none)")
    parser.add_argument("--sweep-best", action="append", metavar="FILE", help="a sweep's best command line")
    parser.add_argument("--styles", default=",".join(STYLES))
    parser.add_argument("--points", type=int, default=PAPER_POINTS)
    parser.add_argument("--warmup", type=int, default=3)
    parser.add_argument("--repeats", type=int, default=10)
    parser.add_argument("--arch", help="compile for this arch (default: the device's, else sm_90)")
    parser.add_argument("--compile-only", action="store_true", help="compile, time nothing")
    parser.add_argument("--define", action="append", metavar="NAME=VALUE",
                        help="a macro for nvcc, e.g. SINGE_GRID_LIMIT=396 (at most 396 CTAs, each over several slabs)")
    parser.add_argument("--no-sanitizer", action="store_true")
    parser.add_argument("--json", default="gpu_bench.json", help="results ('' for none)")
    parser.add_argument("--plot", default="gpu_bench.png", help="bar chart ('' for none)")
    args = parser.parse_args(argv)
    args.define = tuple(args.define or ())
    if args.repeats < 10:
        parser.error("--repeats must be at least 10 (the median of >= 10 runs)")
    unknown = set(filter(None, args.settings.split(","))) - set(SETTINGS)
    if unknown:
        parser.error(f"unknown settings {', '.join(sorted(unknown))}: choose from {', '.join(SETTINGS)}")
    return args


def find_device(args) -> tuple[gpu.Device | None, str]:
    """The device to time on, or None and why not."""
    if args.compile_only:
        return None, "--compile-only"
    try:
        return gpu.current_device(), ""
    except gpu.GpuUnavailableError as error:
        return None, str(error)


def run_config(config: Config, args, arch: str, device, mechanisms: dict) -> list[dict]:
    builds, built_records = build_styles(config, args.styles.split(","), arch, mechanisms, args.define)
    records = []
    for style, (kernel, generated, built) in builds.items():
        record = {"label": config.label(built_records[style]["table"]), "mechanism": config.mechanism,
                  "kernel": config.kernel, "setting": config.setting, "style": style, "arch": arch,
                  "options": dataclasses.asdict(config.options), "defines": list(args.define),
                  "device": device.name if device else None, **built_records[style]}
        if device is not None:
            record.update(measure(kernel, generated, built, args, device))
            if not args.no_sanitizer and shutil.which("compute-sanitizer"):
                record["sanitizer"] = sanitize(config, style, args.define)
        records.append(record)
    return records


def main(argv=None) -> int:
    args = parse_arguments(argv)
    device, why = find_device(args)
    arch = args.arch or (device.arch if device else "sm_90")
    print(f"device: {device.name} ({device.arch}, {device.sms} SMs)" if device else
          f"no GPU ({why}): compiling for {arch}, nothing will be timed")
    head = f"{'configuration':40} {'style':16} {'regs':>5} {'spill':>6}"
    if device:
        head += f" {'median':>12} {'Mpoints/s':>9} {'GFLOP/s':>8} {'FP64':>6} {'error':>8}"
    print(head)
    records, mechanisms = [], {}
    if args.json:
        pathlib.Path(args.json).write_text("[]")
    for config in configurations(args, arch):
        try:
            new = run_config(config, args, arch, device, mechanisms)
        except SingeError as error:
            print(f"{config.label()}: {str(error).splitlines()[0]}")
            if isinstance(error, gpu.GpuUnavailableError) and "nvcc not found" in str(error):
                break
            continue
        for record in new:
            print(row_line(record))
            for tool, result in record.get("sanitizer", {}).items():
                if not result["clean"]:
                    print("\n".join(f"    {tool}: {line}" for line in result["first_report"]))
        records.extend(new)
        if args.json:  # after each configuration: a run stopped at a time limit keeps what it measured
            pathlib.Path(args.json).write_text(json.dumps(records, indent=1))
    if device is None:
        print(f"compiled {len(records)} kernels; nothing was timed (no GPU: {why})")
    if args.plot and device is not None:
        print(write_plot(records, args.plot, device.name))
    return 1 if any(r.get("correct") is False for r in records) else 0


if __name__ == "__main__":
    sys.exit(main())
