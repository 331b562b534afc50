"""Exhaustive autotuning sweep of one kernel of one mechanism (paper §4).

    python -m autotune.sweep dme.inp --kernel viscosity [--arch sm_90] [--jobs 2]
        [--warps 1-32] [--ctas 1-8] [--qssa-warps 1,2,4] [--weights "1,0.5,1;1,0,0;0.2,1,3"]
        [--placements auto,store,buffer,mixed] [--constant-tables cache,shared] [--wilke-groups 2,4]
        [--ln-t shared,replicated] [--wilke-forms rows,symmetric]
        [--products chemkin|cantera]
        [--results FILE] [--ptxas] [--plots DIR] [--heatmap warps,ctas_per_sm]

Every configuration (warps x CTAs per SM x QSSA warps (chemistry only) x
mapping weights x placement x constant table (kernels the overlay lays out) x
Wilke group x ln T shared or replicated x row or symmetric form (viscosity, ``--ln-t``, ``--wilke-forms``; the
symmetric form has no Wilke groups); chemistry's products of negative
concentrations as ``--products`` says, one setting, since it decides what the kernel computes) is compiled,
simulated on a few random states and compared with ``singe.reference`` (a wrong or crashing configuration is a
failure, recorded with the ``singe`` command line that reproduces it), then
scored by the timing model (``singe.timing``) on the preset of ``--arch``,
with ptxas's registers and spills when ``--ptxas`` is given (nvcc takes
10-100 s per kernel), and then, with nvdisasm and cuobjdump, each warp's pace
by its SASS stall counts (``autotune.bench.kernel_inputs``).  Results are appended to a JSON-lines file, one record
per configuration keyed by ``CompileOptions.key()``; a rerun skips the keys
already there.  The best configuration is printed (and written beside the
results) as a ``singe`` command line.
"""

from __future__ import annotations

import argparse
import concurrent.futures
import itertools
import json
import pathlib
import re
import shlex
import sys
import time

import numpy as np

import singe
from singe import KERNELS, PLACEMENTS, TARGETS, CompileOptions, OptionError, SingeError, SingeInputError, kernel_spec
from singe.kernels.transport import MAX_WILKE_GROUP
from singe.derived.rates import DEFAULT_PRODUCTS, PRODUCTS
from singe.options import CONSTANT_TABLES

from autotune.bench import kernel_inputs

DEFAULT_WEIGHTS = "1,0.5,1;1,0,0;0.2,1,3"
AXES = ("warps", "ctas_per_sm", "qssa_warps", "weights", "placement", "constant_table", "wilke_group", "replicate_ln_t",
        "wilke_symmetric", "products")
LN_T = {"shared": False, "replicated": True}
"""``--ln-t``'s words -> ``CompileOptions.replicate_ln_t``."""
WILKE_FORMS = {"rows": False, "symmetric": True}
"""``--wilke-forms``' words -> ``CompileOptions.wilke_symmetric``."""


# --------------------------------------------------------------------------- the grid

def int_list(text: str) -> list[int]:
    """'1-4,8,16' -> [1, 2, 3, 4, 8, 16]: counts (warps, CTAs, groups), each at least 1; a range low-high with
    low <= high (an argparse type: a usage error otherwise)."""
    values: list[int] = []
    for part in text.split(","):
        part = part.strip()
        if not re.fullmatch(r"(\d+(-\d+)?)?", part):
            raise argparse.ArgumentTypeError(f"{part!r}: write counts as 1-32 or 4,8,15")
        if "-" in part:
            low, high = (int(x) for x in part.split("-"))
            if low > high:
                raise argparse.ArgumentTypeError(f"{part!r} is an empty range (write low-high)")
            values.extend(range(low, high + 1))
        elif part:
            values.append(int(part))
    if not values or min(values) < 1:
        raise argparse.ArgumentTypeError(f"{text!r}: counts of at least 1, e.g. 1-32 or 4,8,15")
    return sorted(set(values))


def positive_int(text: str) -> int:
    """An argparse type: an integer of at least 1."""
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"{text!r}: at least 1")
    return value


def weight_list(text: str) -> list[tuple[float, float, float]]:
    """'1,0.5,1;1,0,0' -> [(1.0, 0.5, 1.0), (1.0, 0.0, 0.0)]."""
    result = []
    for group in text.split(";"):
        values = tuple(float(x) for x in group.split(","))
        if len(values) != 3:
            raise argparse.ArgumentTypeError(f"weights are three numbers flops,registers,locality: {group!r}")
        result.append(values)
    return result


def default_ctas(arch: str) -> list[int]:
    """The CTAs per SM swept by default: 1-4 on the K20c, as the paper swept; 1-8 on later GPUs, where the
    fastest DME viscosity kernel measured ran at 4 warps x 8 CTAs (H100 and H200: 1,835 and 1,748 Mpoints/s,
    against 1,047-1,095 at the paper's 15 x 3; docs/measurements)."""
    return int_list("1-4" if arch == "k20c" else "1-8")


def grid(kernel: str, arch: str, warps, ctas, qssa, weights, placements, tables=("auto",),
         groups=(None,), products=(DEFAULT_PRODUCTS,), ln_t=(False,), forms=(False,)) -> list[CompileOptions]:
    """Every valid ``CompileOptions`` of the sweep (combinations the options reject are not configurations).
    The constant tables (``tables``) are swept where the overlay lays the kernel out, the Wilke groups
    (``groups``, None: the kernel's), ln T shared or replicated (``ln_t``, ``replicate_ln_t``) and the row or pair
    form (``forms``, ``wilke_symmetric``: the symmetric form without groups) for viscosity,
    the ``products`` of negative concentrations where the kernel's graph takes them (chemistry): elsewhere each
    takes its default only."""
    spec = kernel_spec(kernel)
    tables = tables if spec.dispatch == "overlay" else ("auto",)
    groups = groups if "wilke_group" in spec.graph_options else (None,)
    ln_t = ln_t if "replicate_ln_t" in spec.graph_options else (False,)
    forms = forms if "wilke_symmetric" in spec.graph_options else (False,)
    products = products if "products" in spec.graph_options else (DEFAULT_PRODUCTS,)
    configurations = []
    for w, c, q, mw, p, t, g, r, f, n in itertools.product(warps, ctas, qssa if spec.qssa else [1], weights,
                                                           placements, tables, groups, ln_t, forms, products):
        try:
            configurations.append(CompileOptions(warps=w, ctas_per_sm=c, arch=arch, weights=mw, placement=p,
                                                 qssa_warps=q, constant_table=t, wilke_group=None if f else g,
                                                 replicate_ln_t=r, wilke_symmetric=f, products=n))
        except OptionError:
            continue
    return list(dict.fromkeys(configurations))  # the symmetric form once for every group


def command_line(mechanism: str, kernel: str, options: CompileOptions, validate: bool = False) -> str:
    """The ``singe`` command that compiles ``kernel`` with ``options``."""
    words = ["singe", mechanism, "--kernels", kernel, "--warps", str(options.warps),
             "--ctas-per-sm", str(options.ctas_per_sm), "--arch", options.arch,
             "--weights", ",".join(f"{w:g}" for w in options.weights), "--placement", options.placement]
    if kernel_spec(kernel).qssa:
        words += ["--qssa-warps", str(options.qssa_warps)]
    if options.constant_table != "auto":
        words += ["--constant-table", options.constant_table]
    if options.wilke_group is not None:
        words += ["--wilke-group", str(options.wilke_group)]
    if options.replicate_ln_t:
        words.append("--replicate-ln-t")
    if options.wilke_symmetric:
        words.append("--wilke-symmetric")
    if options.products != DEFAULT_PRODUCTS:
        words += ["--products", options.products]
    if validate:
        words.append("--validate")
    return shlex.join(words)


# --------------------------------------------------------------------------- one configuration (worker)

_WORKER: dict = {}


def random_states(mech, n: int, seed: int):
    """T [K], P [Pa], Y (n_transported, n): inside the transport fit range when the
    mechanism has transport data, else 600-2500 K; 0.1-100 atm; some zero fractions."""
    if mech.has_transport:
        return singe.validate.random_states(mech, n, seed)
    rng = np.random.default_rng(seed)
    T = rng.uniform(600.0, 2500.0, n)
    P = 101325.0 * np.exp(rng.uniform(np.log(0.1), np.log(100.0), n))
    Y = rng.random((len(mech.transported_species), n)) ** 3
    Y[rng.random(Y.shape) < 0.2] = 0.0
    Y[rng.integers(Y.shape[0], size=n), np.arange(n)] += 0.5
    return T, P, Y / Y.sum(axis=0)


def stiffness_inputs(mech, n: int, seed: int) -> dict:
    """Chemistry inputs beyond the state: time steps dt [s] (1e-9 to 1e-5) and
    diffusion sources [kg/m^3/s], so that stiffness removal is exercised."""
    rng = np.random.default_rng(seed + 1)
    return {"dt": 10.0 ** rng.uniform(-9, -5, n),
            "diffusion_source": rng.normal(0.0, 1.0, (len(mech.transported_species), n))}


def relative_error(kernel: str, ours: np.ndarray, theirs: np.ndarray) -> float:
    """Largest error under the kernel's own measure (``KernelSpec.errors``); a
    non-finite output counts as an infinite error."""
    errors = kernel_spec(kernel).errors(np.where(np.isfinite(ours), ours, np.inf), theirs)
    return float(np.nanmax(np.where(np.isnan(errors), np.inf, errors)))


def _init_worker(mechanism: str, kernel: str, states: int, seed: int, ptxas: bool) -> None:
    """Load the mechanism and draw the states once per process (their reference outputs: ``expected``)."""
    mech = singe.load_mechanism(singe.resolve_mechanism(mechanism))
    T, P, Y = random_states(mech, states, seed)
    spec = kernel_spec(kernel)
    extra = stiffness_inputs(mech, states, seed) if "dt" in spec.inputs else {}
    _WORKER.update(mech=mech, mechanism=mechanism, kernel=kernel, states=(T, P, Y), extra=extra, ptxas=ptxas,
                   expected={})


def expected(options: CompileOptions) -> np.ndarray:
    """``singe.reference``'s outputs at the worker's states for the reference settings of ``options``
    (``KernelSpec.reference_settings``: chemistry's products), computed once per process and settings."""
    spec = kernel_spec(_WORKER["kernel"])
    settings = spec.reference_settings(options)
    key = tuple(sorted(settings.items()))
    if key not in _WORKER["expected"]:
        _WORKER["expected"][key] = spec.reference(_WORKER["mech"], *_WORKER["states"], **_WORKER["extra"],
                                                  **settings)
    return _WORKER["expected"][key]


def evaluate(fields: dict) -> dict:
    """Compile, validate and model one configuration; never raises (a failure is a record)."""
    options = CompileOptions(**{**fields, "weights": tuple(fields["weights"])})
    mech, kernel = _WORKER["mech"], _WORKER["kernel"]
    record = {"mechanism": mech.name, "kernel": kernel, "key": options.key(), "style": "warp-specialized",
              "options": {k: getattr(options, k) for k in AXES} | {"arch": options.arch},
              "command": command_line(_WORKER["mechanism"], kernel, options)}
    record["options"]["weights"] = list(options.weights)
    start = time.perf_counter()
    try:
        compiled = singe.compile_kernel(mech, kernel, options=options)
        compiled.verify()
    except SingeInputError as error:
        return record | {"status": "infeasible", "message": str(error)}
    except Exception as error:  # noqa: BLE001 - a crash is a result of the sweep
        return record | {"status": "error", "message": f"{type(error).__name__}: {error}",
                         "repro": command_line(_WORKER["mechanism"], kernel, options, validate=True)}
    record["compile_s"] = time.perf_counter() - start
    record.update(programs_summary(compiled))
    T, P, Y = _WORKER["states"]
    start = time.perf_counter()
    try:
        ours = compiled.simulate(T, P, Y, **_WORKER["extra"])
    except (SingeError, FloatingPointError) as error:
        return record | {"status": "wrong", "message": f"{type(error).__name__}: {error}"[:2000],
                         "repro": command_line(_WORKER["mechanism"], kernel, options, validate=True)}
    record["simulate_s"] = time.perf_counter() - start
    error = relative_error(kernel, ours, expected(options))
    record["max_relative_error"] = error
    tolerance = kernel_spec(kernel).tolerance
    if not error <= tolerance:
        return record | {"status": "wrong", "message": f"relative error {error:.3e} > {tolerance:g} "
                         f"against singe.reference on {T.size} random states",
                         "repro": command_line(_WORKER["mechanism"], kernel, options, validate=True)}
    entry, pace = None, None
    if _WORKER["ptxas"]:
        try:
            entry, pace = kernel_inputs(singe.generate(compiled), options.arch, compiled.programs.warps)
            record["ptxas"] = entry
        except Exception as error:  # noqa: BLE001 - nvcc may not know the arch; the estimate stands
            record["ptxas_error"] = str(error).splitlines()[0][:300]
    timing = singe.timing.model(compiled, ptxas=entry, pace=pace)
    return record | {"status": "ok", "model": timing.as_dict(), "points_per_second": timing.points_per_second}


def programs_summary(compiled) -> dict:
    programs = compiled.programs
    return {"registers_estimate": programs.plan.predicted, "shared_bytes": programs.shared_bytes,
            "sync_points": len(programs.sync_points), "barrier_ids": len(programs.barrier_ids),
            "placement_mode": compiled.mapping.mode}


def baseline_key(arch: str, products: str = DEFAULT_PRODUCTS) -> str:
    """The key of the baseline's record: 'baseline-ARCH', '-PRODUCTS' after it where those are not the default."""
    return f"baseline-{arch}" + ("" if products == DEFAULT_PRODUCTS else f"-{products}")


def baseline_record(mechanism: str, kernel: str, arch: str, ptxas: bool, products: str = DEFAULT_PRODUCTS) -> dict:
    """The data-parallel kernel modeled on the preset of ``arch`` (``baseline_key``), with chemistry's
    ``products``: the fastest of the kernel's forms (``singe.fastest_baseline``; viscosity's row and symmetric forms),
    its form and every form's throughput in the record."""
    mech = _WORKER["mech"]
    compiled = singe.compile_kernel(mech, kernel, warps=1, arch=arch, ctas_per_sm=1, products=products)
    record = {"mechanism": mech.name, "kernel": kernel, "key": baseline_key(arch, products), "style": "baseline",
              "options": {"arch": arch, "products": products}}
    entries = {}

    def modeled(baseline):
        entry, pace = None, None
        if ptxas:
            try:
                entry, pace = kernel_inputs(singe.generate_baseline(baseline), arch, None)
                entries[id(baseline)] = entry
            except Exception as error:  # noqa: BLE001
                record["ptxas_error"] = str(error).splitlines()[0][:300]
        return singe.timing.model_baseline(baseline, arch, ptxas=entry, pace=pace)

    form, baselines = singe.fastest_baseline(compiled, modeled)
    chosen, timing = baselines[form]
    if id(chosen) in entries:
        record["ptxas"] = entries[id(chosen)]
    if len(baselines) > 1:
        record |= {"form": form, "forms": {f: result.points_per_second for f, (_, result) in baselines.items()}}
    return record | {"status": "ok", "model": timing.as_dict(), "points_per_second": timing.points_per_second}


# --------------------------------------------------------------------------- the results file

def read_results(path: pathlib.Path, mechanism: str, kernel: str) -> dict[str, dict]:
    """Records of ``mechanism``'s ``kernel`` already in ``path``, by key (the last one wins)."""
    records: dict[str, dict] = {}
    if not path.is_file():
        return records
    for line in path.read_text().splitlines():
        try:
            record = json.loads(line)
        except json.JSONDecodeError:
            continue  # a line cut by an interrupted run
        if record.get("mechanism") == mechanism and record.get("kernel") == kernel:
            records[record["key"]] = record
    return records


class Progress:
    """A one-line progress bar on stderr (a line per tenth when stderr is not a terminal)."""

    def __init__(self, total: int, quiet: bool = False):
        self.total, self.done, self.failed = total, 0, 0
        self.start = time.perf_counter()
        self.quiet = quiet
        self.tty = sys.stderr.isatty()
        self.shown = -1

    def update(self, failed: bool) -> None:
        self.done += 1
        self.failed += failed
        if self.quiet or not self.total:
            return
        tenth = 10 * self.done // self.total
        if not self.tty and tenth == self.shown and self.done != self.total:
            return
        self.shown = tenth
        width = 30
        filled = width * self.done // self.total
        elapsed = time.perf_counter() - self.start
        remaining = elapsed / self.done * (self.total - self.done)
        line = (f"[{'#' * filled}{'.' * (width - filled)}] {self.done}/{self.total} {elapsed:.0f} s "
                f"(~{remaining:.0f} s left), {self.failed} failed")
        print(("\r" if self.tty else "") + line, end="" if self.tty else "\n", file=sys.stderr, flush=True)

    def close(self) -> None:
        if self.tty and not self.quiet and self.total:
            print(file=sys.stderr)


def run_sweep(configurations: list[CompileOptions], args, out: pathlib.Path,
              mech_name: str) -> tuple[list[dict], int]:
    """Evaluate every configuration not already in ``out``, appending records as
    they come; returns the sweep's records (with the baseline) and how many
    configurations were evaluated now."""
    done = read_results(out, mech_name, args.kernel)
    todo = [c for c in configurations if c.key() not in done
            or (args.retry_failed and done[c.key()]["status"] in ("wrong", "error"))]
    progress = Progress(len(todo), args.quiet)
    fields = [{k: getattr(c, k) for k in AXES} | {"arch": c.arch} for c in todo]
    with out.open("a") as sink:
        def keep(record: dict) -> None:
            sink.write(json.dumps(record) + "\n")
            sink.flush()
            done[record["key"]] = record
            progress.update(record["status"] in ("wrong", "error"))

        for products in dict.fromkeys(c.products for c in configurations):
            if baseline_key(args.arch, products) not in done:
                record = baseline_record(args.mechanism, args.kernel, args.arch, args.ptxas, products)
                sink.write(json.dumps(record) + "\n")
                done[record["key"]] = record
        if args.jobs > 1 and len(todo) > 1:
            with concurrent.futures.ProcessPoolExecutor(
                    args.jobs, initializer=_init_worker,
                    initargs=(args.mechanism, args.kernel, args.states, args.seed, args.ptxas)) as pool:
                for record in pool.map(evaluate, fields, chunksize=max(1, min(8, len(todo) // (4 * args.jobs)))):
                    keep(record)
        else:
            for f in fields:
                keep(evaluate(f))
    progress.close()
    keys = {c.key() for c in configurations} | {baseline_key(args.arch, c.products) for c in configurations}
    return [r for k, r in done.items() if k in keys], len(todo)


# --------------------------------------------------------------------------- reporting

def best_record(records: list[dict]) -> dict | None:
    ok = [r for r in records if r["status"] == "ok" and r["style"] == "warp-specialized"]
    return max(ok, key=lambda r: r["points_per_second"]) if ok else None


def summary(records: list[dict], arch: str, seconds: float, evaluated: int) -> list[str]:
    """Lines the sweep prints: counts, failures with their repro, the best configuration."""
    ws = [r for r in records if r["style"] == "warp-specialized"]
    by_status: dict[str, list] = {}
    for r in ws:
        by_status.setdefault(r["status"], []).append(r)
    counts = ", ".join(f"{len(v)} {k}" for k, v in sorted(by_status.items()))
    lines = [f"{len(ws)} configurations ({counts}); {evaluated} evaluated in {seconds:.1f} s"]
    for r in by_status.get("wrong", []) + by_status.get("error", []):
        lines.append(f"  FAILED {r['key']}: {r['message'].splitlines()[0][:300]}\n    repro: {r['repro']}")
    best = best_record(records)
    products = best["options"].get("products", DEFAULT_PRODUCTS) if best else DEFAULT_PRODUCTS
    baseline = next((r for r in records if r["key"] == baseline_key(arch, products)), None)
    if best:
        model = best["model"]
        lines.append(f"best: {best['points_per_second'] / 1e6:.2f} Mpoints/s modeled on {model['preset']} "
                     f"({model['ctas_per_sm']} CTAs/SM, {model['registers']} registers, bottleneck "
                     f"{model['bottleneck']})")
        if baseline and baseline["points_per_second"]:
            forms = ", ".join(f"{f} {v / 1e6:.2f}" for f, v in baseline.get("forms", {}).items())
            form = f" (the {baseline['form']} form, the fastest of {forms})" if forms else ""
            lines.append(f"baseline: {baseline['points_per_second'] / 1e6:.2f} Mpoints/s modeled{form}; speedup "
                         f"{best['points_per_second'] / baseline['points_per_second']:.2f}x")
        lines.append(best["command"])
    return lines


def _axis_value(record: dict, axis: str):
    value = record["options"].get(axis)
    if axis == "weights":
        return ",".join(f"{w:g}" for w in value)
    return "default" if value is None else value


_TEXT_AXES = ("weights", "placement", "constant_table", "wilke_group", "replicate_ln_t",
              "wilke_symmetric")  # sorted as text on a heat map


def plot_warps(records: list[dict], path: pathlib.Path, title: str) -> None:
    """Modeled throughput against warps per CTA, best over the other parameters,
    warp-specialized against the baseline (paper Figure 9 style)."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import matplotlib.ticker

    best: dict[int, float] = {}
    by_ctas: dict[int, dict[int, float]] = {}
    failed = sorted({r["options"]["warps"] for r in records if r["status"] in ("wrong", "error")})
    for r in records:
        if r["status"] == "ok" and r["style"] == "warp-specialized":
            w, c, rate = r["options"]["warps"], r["options"]["ctas_per_sm"], r["points_per_second"] / 1e6
            best[w] = max(best.get(w, 0.0), rate)
            by_ctas.setdefault(c, {})[w] = max(by_ctas.get(c, {}).get(w, 0.0), rate)
    baseline = next((r for r in records if r["style"] == "baseline"), None)
    figure, axes = plt.subplots(figsize=(7, 4.2))
    for c, rates in sorted(by_ctas.items()):
        xs = sorted(rates)
        axes.plot(xs, [rates[x] for x in xs], lw=0.8, alpha=0.6, label=f"{c} CTAs/SM target")
    xs = sorted(best)
    axes.plot(xs, [best[x] for x in xs], "o-", color="black", lw=2, label="warp-specialized (best)")
    if baseline:
        axes.axhline(baseline["points_per_second"] / 1e6, color="tab:red", ls="--", label="data-parallel baseline")
    if failed:
        axes.plot(failed, [0] * len(failed), "x", color="red", ms=8, label="failed configuration")
    axes.xaxis.set_major_locator(matplotlib.ticker.MaxNLocator(integer=True))
    axes.set_xlabel("warps per CTA")
    axes.set_ylabel("modeled throughput [Mpoints/s]")
    axes.set_title(title)
    axes.set_ylim(bottom=0)
    axes.grid(alpha=0.3)
    axes.legend(fontsize=8)
    figure.tight_layout()
    figure.savefig(path, dpi=120)
    plt.close(figure)


def plot_heatmap(records: list[dict], x_axis: str, y_axis: str, path: pathlib.Path, title: str) -> None:
    """Best modeled throughput over the other parameters on an ``x_axis`` x ``y_axis`` grid."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    cells: dict[tuple, float] = {}
    for r in records:
        if r["style"] != "warp-specialized":
            continue
        key = (_axis_value(r, x_axis), _axis_value(r, y_axis))
        rate = r["points_per_second"] / 1e6 if r["status"] == "ok" else 0.0
        cells[key] = max(cells.get(key, 0.0), rate)
    xs = sorted({k[0] for k in cells}, key=str if x_axis in _TEXT_AXES else None)
    ys = sorted({k[1] for k in cells}, key=str if y_axis in _TEXT_AXES else None)
    data = np.full((len(ys), len(xs)), np.nan)
    for (x, y), rate in cells.items():
        data[ys.index(y), xs.index(x)] = rate
    figure, axes = plt.subplots(figsize=(max(5, 0.35 * len(xs) + 2), max(3, 0.5 * len(ys) + 1.5)))
    image = axes.imshow(data, aspect="auto", origin="lower", cmap="viridis")
    axes.set_xticks(range(len(xs)), [str(x) for x in xs], rotation=90 if len(xs) > 12 else 0, fontsize=7)
    axes.set_yticks(range(len(ys)), [str(y) for y in ys], fontsize=7)
    axes.set_xlabel(x_axis)
    axes.set_ylabel(y_axis)
    axes.set_title(title)
    figure.colorbar(image, ax=axes, label="best modeled Mpoints/s")
    figure.tight_layout()
    figure.savefig(path, dpi=120)
    plt.close(figure)


def write_plots(records: list[dict], args, mech_name: str) -> list[pathlib.Path]:
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        raise SystemExit("sweep: --plots needs matplotlib (pip install 'singe[plots]')") from None
    directory = pathlib.Path(args.plots)
    directory.mkdir(parents=True, exist_ok=True)

    stem = f"{mech_name}_{args.kernel}_{args.arch}"
    title = f"{mech_name} {args.kernel}, modeled on {singe.timing.PRESET_OF_ARCH[args.arch]}"
    x_axis, y_axis = args.heatmap
    paths = [directory / f"{stem}_warps.png", directory / f"{stem}_{x_axis}_{y_axis}.png"]
    plot_warps(records, paths[0], title)
    plot_heatmap(records, x_axis, y_axis, paths[1], title)
    return paths


# --------------------------------------------------------------------------- command line

def _heatmap(text: str) -> tuple[str, str]:
    axes = tuple(a.strip() for a in text.split(","))
    if len(axes) != 2 or not set(axes) <= set(AXES):
        raise argparse.ArgumentTypeError(f"--heatmap takes two of {', '.join(AXES)}: {text!r}")
    return axes  # type: ignore[return-value]


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("mechanism", help="CHEMKIN file, or a bundled mechanism name")
    parser.add_argument("--kernel", choices=KERNELS, required=True)
    parser.add_argument("--arch", choices=sorted(TARGETS), default="sm_90",
                        help="compile target; the timing model uses its preset (k20c: K20c, sm_80: A100, sm_90: H100)")
    parser.add_argument("--warps", type=int_list, default=int_list("1-32"), help="e.g. 1-32 or 4,8,15 (default 1-32)")
    parser.add_argument("--ctas", type=int_list, default=None,
                        help="CTAs per SM (default 1-4 on k20c, as the paper swept; 1-8 on sm_80 and sm_90, where "
                             "the fastest DME viscosity measured ran at 4 warps x 8 CTAs)")
    parser.add_argument("--qssa-warps", type=int_list, default=[1, 2, 4], help="chemistry only (default 1,2,4)")
    parser.add_argument("--weights", type=weight_list, default=weight_list(DEFAULT_WEIGHTS),
                        help=f"mapping weights, ';'-separated triples (default {DEFAULT_WEIGHTS!r})")
    parser.add_argument("--placements", type=lambda t: [p for p in t.split(",") if p], default=list(PLACEMENTS),
                        help="default auto,store,buffer,mixed")
    parser.add_argument("--constant-tables", type=lambda t: [v for v in t.split(",") if v], default=["auto"],
                        help="where the overlay's kernels read their constants, e.g. cache,shared "
                             "(singe --constant-table; default auto)")
    parser.add_argument("--wilke-groups", type=int_list, default=[None],
                        help="viscosity only: outer species per Wilke sum, e.g. 2,4 (singe --wilke-group; "
                             "default the kernel's)")
    parser.add_argument("--ln-t", type=lambda t: [v for v in t.split(",") if v], default=["shared"],
                        help="viscosity only: ln T shared by one warp, replicated in every warp, or both, e.g. "
                             "shared,replicated (singe --replicate-ln-t; default shared)")
    parser.add_argument("--wilke-forms", type=lambda t: [v for v in t.split(",") if v], default=["rows"],
                        help="viscosity only: its row form, its symmetric form, or both, e.g. rows,symmetric "
                             "(singe --wilke-symmetric; default rows)")
    parser.add_argument("--products", choices=PRODUCTS, default=DEFAULT_PRODUCTS,
                        help="chemistry only: its products of negative concentrations (singe --products; one "
                             "setting, not swept: it decides what the kernel computes; default chemkin)")
    parser.add_argument("--jobs", type=positive_int, default=1, help="worker processes (default 1)")
    parser.add_argument("--results", help="JSON-lines results file (default <mechanism>_<kernel>_<arch>.jsonl)")
    parser.add_argument("--states", type=positive_int, default=32, help="random states validated per configuration")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--ptxas", action="store_true", help="compile each kernel with nvcc for registers/spills "
                        "(and the warps' paces from the SASS where nvdisasm and cuobjdump are installed)")
    parser.add_argument("--retry-failed", action="store_true", help="evaluate failed configurations again")
    parser.add_argument("--plots", metavar="DIR", help="write the throughput-vs-warps plot and the heat map here")
    parser.add_argument("--heatmap", type=_heatmap, default=("warps", "ctas_per_sm"),
                        help="two axes of the heat map (default warps,ctas_per_sm)")
    parser.add_argument("--quiet", action="store_true", help="no progress bar")
    return parser


def refuse_unknown(what: str, given: list[str], allowed) -> None:
    """Exit with 'sweep: WHAT X, Y (choose from ...)' where ``given`` has words not in ``allowed``."""
    unknown = [v for v in given if v not in allowed]
    if unknown:
        raise SystemExit(f"sweep: {what} {', '.join(unknown)} (choose from {', '.join(allowed)})")


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    refuse_unknown("unknown placement", args.placements, PLACEMENTS)
    refuse_unknown("unknown constant table", args.constant_tables, CONSTANT_TABLES)
    if any(not 1 <= g <= MAX_WILKE_GROUP for g in args.wilke_groups if g is not None):
        raise SystemExit(f"sweep: --wilke-groups must be from 1 to {MAX_WILKE_GROUP}")
    refuse_unknown("--ln-t: unknown", args.ln_t, LN_T)
    refuse_unknown("--wilke-forms: unknown", args.wilke_forms, WILKE_FORMS)
    start = time.perf_counter()
    try:
        _init_worker(args.mechanism, args.kernel, args.states, args.seed, args.ptxas)
    except SingeInputError as error:
        raise SystemExit(f"sweep: {error}") from None
    mech_name = _WORKER["mech"].name
    out = pathlib.Path(args.results or f"{mech_name}_{args.kernel}_{args.arch}.jsonl")
    configurations = grid(args.kernel, args.arch, args.warps, args.ctas or default_ctas(args.arch),
                          args.qssa_warps, args.weights, args.placements, args.constant_tables, args.wilke_groups,
                          (args.products,), [LN_T[v] for v in args.ln_t], [WILKE_FORMS[v] for v in args.wilke_forms])
    records, evaluated = run_sweep(configurations, args, out, mech_name)
    seconds = time.perf_counter() - start
    for line in summary(records, args.arch, seconds, evaluated):
        print(line)
    best = best_record(records)
    if best:
        best_path = out.with_suffix(".best.txt")
        best_path.write_text(best["command"] + "\n")
        print(f"best command written to {best_path}")
    if args.plots:
        for path in write_plots(records, args, mech_name):
            print(f"plot: {path}")
    return 1 if any(r["status"] in ("wrong", "error") for r in records) else 0


if __name__ == "__main__":
    sys.exit(main())
