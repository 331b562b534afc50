"""Detailed mechanisms in the table form of the chemistry kernel (issue 15's targets).

    python -m autotune.bench_detailed [MECHANISM ...] [--states 64] [--no-nvcc] [--no-host] [--json FILE]

Default mechanisms: Cantera's bundled n-dodecane (Reitz, 100 species; its
ideal-gas phase) and NUIG n-hexane (1,268 species, 5,336 reactions).  Per
mechanism it prints: species and reactions; the command ``singe MECH
--kernels chemistry`` timed end to end (parse to ``.cu``) and its ``.cu`` size;
nvcc -arch=sm_90 wall time and peak memory (``/usr/bin/time -v``), ptxas
registers and spills; static SASS instructions (``autotune.sass``, when
nvdisasm is installed); the simulated and host-run ω̇ against Cantera on
random states (T 800-2400 K), as error / max|ω̇| per point; and the
model.  The SASS walk counts issued instructions through the loops whose
bounds it can read: the steering arrays the kernel keeps in constant memory
(all of them for Reitz; for n-hexane the third-body counts do not fit and
those few loops count as not entered).  The timing model prices the table
form (``singe.timing_tables``: per-warp issued counts from the loops' trip
counts, the phases as segments between the barriers, with ptxas's registers
and spills when nvcc ran): modeled Mpoints/s on the H100 and A100 presets, its
fraction of the FP64 roofline (the mechanism's FLOPs per point, of the
unrolled graph) and its issued instructions per point beside the SASS walk's;
the data-parallel baseline is modeled as usual (its graph is the unrolled
one), and with ``--unrolled`` the unrolled warp-specialized form (the form
choice costed).  Bounds beside: the issue-rate bound of the measured instructions per
point and the workspace traffic per point against L2 or DRAM bandwidth.
"""

from __future__ import annotations

import argparse
import json
import pathlib
import re
import subprocess
import sys
import tempfile
import time
import types

import numpy as np

import singe
from singe.codegen.nvcc import find_nvcc, parse_ptxas
from singe.options import CompileOptions
from singe.programs.tables import TableLoop

CANTERA_DATA = pathlib.Path(__import__("cantera").__file__).resolve().parent / "data"
DEFAULTS = (CANTERA_DATA / "nDodecane_Reitz.yaml", CANTERA_DATA / "example_data" / "n-hexane-NUIG-2015.yaml")
TOLERANCE = 1e-9
PRESET = "H100"
PRESETS = ("H100", "A100")  # the table form is modeled on each
ISSUE_PER_SM_CYCLE = 4  # warp instructions issued per SM and cycle at best (one per scheduler)


def ideal_gas_solution(path: pathlib.Path, mech):
    """Cantera's model of the phase singe reads: the first ideal-gas phase of a YAML file, or
    ``ck2yaml``'s conversion of a CHEMKIN file (with the thermo file singe found)."""
    import cantera as ct
    import yaml

    if path.suffix not in (".yaml", ".yml"):
        out = pathlib.Path(tempfile.mkdtemp()) / "mechanism.yaml"
        thermo = [f"--thermo={source}" for source in mech.sources[1:2]]
        subprocess.run([sys.executable, "-m", "cantera.ck2yaml", f"--input={path}", *thermo, f"--output={out}",
                        "--quiet", "--permissive"], check=True, capture_output=True)
        return ct.Solution(str(out))
    phases = yaml.safe_load(path.read_text()).get("phases", [])
    name = next((p["name"] for p in phases if p.get("thermo") == "ideal-gas"), None)
    return ct.Solution(str(path), name) if name else ct.Solution(str(path))


def cantera_rates(gas, mech, T, P, Y) -> np.ndarray:
    order = [gas.species_index(name) for name in mech.species_names]
    full = np.zeros(gas.n_species)
    out = np.empty_like(Y)
    for i in range(Y.shape[1]):
        full[:] = 0.0
        full[order] = Y[:, i]
        gas.TPY = T[i], P[i], full
        out[:, i] = gas.net_production_rates[order]
    return out


def random_states(n_species: int, n: int, seed: int = 0):
    rng = np.random.default_rng(seed)
    T = rng.uniform(800.0, 2400.0, n)
    P = 101325.0 * np.exp(rng.uniform(np.log(0.1), np.log(100.0), n))
    Y = rng.random((n_species, n)) ** 3
    Y[rng.random(Y.shape) < 0.2] = 0.0
    Y[rng.integers(n_species, size=n), np.arange(n)] += 0.5
    return T, P, Y / Y.sum(axis=0)


def error(ours, theirs) -> float:
    return float(np.max(np.abs(ours - theirs) / np.abs(theirs).max(axis=0)))


def command_to_cu(path: pathlib.Path, out: pathlib.Path) -> tuple[float, pathlib.Path, str]:
    """``python -m singe PATH --kernels chemistry -o OUT``: wall time, the .cu, what it printed."""
    start = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "singe", str(path), "--kernels", "chemistry", "-o", str(out)],
                          capture_output=True, text=True)
    seconds = time.perf_counter() - start
    if done.returncode:
        raise RuntimeError(f"singe failed on {path}:\n{done.stderr}")
    return seconds, next(out.glob("*_chemistry.cu")), done.stdout


def nvcc_report(cu: pathlib.Path) -> dict:
    """nvcc -arch=sm_90 under /usr/bin/time -v: wall time, peak memory, ptxas registers and spills."""
    nvcc = find_nvcc()
    if nvcc is None:
        return {}
    with tempfile.TemporaryDirectory() as scratch:
        command = ["/usr/bin/time", "-v", nvcc, "-arch=sm_90", "-O3", "-c", "-Xptxas", "-v", str(cu),
                   "-o", str(pathlib.Path(scratch) / "k.o"), f"-I{cu.parent}"]
        start = time.perf_counter()
        done = subprocess.run(command, capture_output=True, text=True)
        seconds = time.perf_counter() - start
    output = done.stdout + done.stderr
    peak = re.search(r"Maximum resident set size \(kbytes\): (\d+)", output)
    entries, _ = parse_ptxas(output)
    entry = entries[0] if entries else None
    return {"nvcc_s": seconds, "nvcc_peak_mb": int(peak.group(1)) / 1024 if peak else None,
            "registers": entry.registers if entry else None, "spill_stores": entry.spill_stores if entry else None,
            "spill_loads": entry.spill_loads if entry else None, "nvcc_ok": done.returncode == 0}


def sass_view(cu: pathlib.Path) -> dict:
    """Static SASS instructions and lane-instructions issued per point (``autotune.sass``; the walk
    follows the loops through the steering arrays in constant memory, ``singe.codegen.tables``)."""
    from autotune import sass

    if sass.missing_tools():
        return {}
    view = sass.analyse(cu)
    return {"static_sass": view.static, "issued_per_point": view.total, "fp64_per_point": view.per_point["fp64"],
            "warp_imbalance": view.imbalance}


def workspace_bytes_per_point(programs) -> int:
    """Workspace bytes read and written per point by every table loop of one slab."""
    accesses = sum(len(item.reads) + len(item.writes) for p in programs.programs for item in p.items
                   if isinstance(item, TableLoop))
    return 8 * accesses


def model(mech, compiled, ptxas: dict | None = None) -> dict:
    """The modeled table form on ``PRESETS`` (with ptxas's registers and spills when given), the
    modeled baseline and the bounds on the H100."""
    from singe import timing, timing_tables
    from singe.kernels import build_graph

    preset = timing.preset_for(PRESET)
    graph = build_graph(mech, "chemistry")
    unrolled = types.SimpleNamespace(graph=graph, options=CompileOptions(), kernel="chemistry")
    baseline = timing.model_baseline(unrolled, preset)
    ptxas = ptxas if ptxas and ptxas.get("registers") else None
    row = {"modeled_issued_per_point": round(sum(sum(c.values()) for c in timing_tables.issued_per_warp(compiled)))}
    for name in PRESETS:
        result = timing_tables.model(compiled, name, ptxas, flops=graph.flops)
        row.update({f"tables_mpts_{name}": result.points_per_second / 1e6,
                    f"tables_roofline_fraction_{name}": result.fraction_of_roofline,
                    f"tables_bottleneck_{name}": result.bottleneck, f"tables_ctas_{name}": result.occupancy.ctas})
    traffic = workspace_bytes_per_point(compiled.programs)
    footprint = compiled.programs.slot_bytes * compiled.options.ctas_per_sm * preset.sms
    bandwidth = preset.l2_gb_per_s if footprint <= preset.l2_bytes else preset.dram_gb_per_s
    return row | {"flops_per_point": graph.flops,
                  "fp64_roofline_mpts": timing.fp64_roofline(preset, graph.flops) / 1e6,
                  "workspace_bytes_per_point": traffic, "workspace_footprint_mb": footprint / 2 ** 20,
                  "workspace_bound_mpts": bandwidth * 1e9 / traffic / 1e6,
                  "workspace_in": "L2" if footprint <= preset.l2_bytes else "DRAM",
                  "baseline_mpts": baseline.points_per_second / 1e6, "baseline_spill_bytes": baseline.spill_bytes,
                  "issue_rate": preset.sms * preset.clock_hz * ISSUE_PER_SM_CYCLE * 32}


def unrolled_model(mech) -> dict:
    """The form choice costed: the unrolled warp-specialized chemistry kernel of the same mechanism
    (compiled with the command's defaults, its compile time) modeled on ``PRESETS``."""
    from singe import timing

    start = time.perf_counter()
    compiled = singe.compile_kernel(mech, "chemistry", form="unrolled")
    row = {"unrolled_compile_s": time.perf_counter() - start}
    for name in PRESETS:
        result = timing.model(compiled, name)
        row.update({f"unrolled_mpts_{name}": result.points_per_second / 1e6,
                    f"unrolled_bottleneck_{name}": result.bottleneck})
    return row


def issue_bound(row: dict) -> float | None:
    """Mpoints/s if every SM issued ISSUE_PER_SM_CYCLE warp instructions per cycle of the measured mix."""
    if not row.get("issued_per_point") or "issue_rate" not in row:
        return None
    return row["issue_rate"] / row["issued_per_point"] / 1e6


def bench(path: pathlib.Path, states: int, run_nvcc: bool, run_host: bool, run_model: bool,
          run_unrolled: bool = False) -> dict:
    row: dict = {"mechanism": path.name}
    with tempfile.TemporaryDirectory() as out:
        seconds, cu, printed = command_to_cu(path, pathlib.Path(out))
        row.update(command_s=seconds, cu_bytes=cu.stat().st_size, command_output=printed)
        if run_nvcc:
            row.update(nvcc_report(cu))
            row.update(sass_view(cu))
    mech = singe.load_mechanism(path)
    row.update(species=mech.n_species, reactions=len(mech.reactions))
    compiled = singe.compile_kernel(mech, "chemistry")
    row["form"] = compiled.form
    if compiled.form != "tables":
        raise SystemExit(f"{path}: the compiler takes the unrolled form for this mechanism; this benchmark "
                         f"measures the table form of detailed mechanisms")
    compiled.verify()
    T, P, Y = random_states(mech.n_species, states)
    expected = cantera_rates(ideal_gas_solution(path, mech), mech, T, P, Y)
    row["simulator_error"] = error(compiled.simulate(T, P, Y), expected)
    if run_host:
        row["host_error"] = error(compiled.run_host(T, P, Y), expected)
    if run_model:
        row.update(model(mech, compiled, {k: row.get(k) for k in ("registers", "spill_stores", "spill_loads")}))
        row["issue_bound_mpts"] = issue_bound(row)
    if run_unrolled:
        row.update(unrolled_model(mech))
    return row


def _format(value, digits: str = ".1f") -> str:
    if value is None:
        return "-"
    return format(value, digits) if isinstance(value, float) else str(value)


def table(rows: list[dict]) -> str:
    """Issue 15's table: one line per mechanism (model: ``singe.timing_tables``, H100 and A100 presets)."""
    lines = ["| mechanism | species | reactions | form | mech -> .cu | .cu | nvcc sm_90 | nvcc peak | registers | "
             "spill stores | static SASS | issued/point SASS (FP64) | issued/point model | sim error | host error | "
             "tables H100 (model) | of FP64 roofline | tables A100 (model) | baseline H100 (model) | "
             "unrolled H100 (model) | issue bound H100 | workspace bound H100 |",
             "|" + "---|" * 22]
    for r in rows:
        lines.append(
            f"| {r['mechanism']} | {r['species']} | {r['reactions']} | {r['form']} | {r['command_s']:.1f} s | "
            f"{r['cu_bytes'] / 1e6:.2f} MB | {_format(r.get('nvcc_s'))} s | "
            f"{_format(r.get('nvcc_peak_mb'), '.0f')} MB | "
            f"{_format(r.get('registers'))} | {_format(r.get('spill_stores'))} B | {_format(r.get('static_sass'))} | "
            f"{_format(r.get('issued_per_point'))} ({_format(r.get('fp64_per_point'))}) | "
            f"{_format(r.get('modeled_issued_per_point'))} | "
            f"{r['simulator_error']:.1e} | {_format(r.get('host_error'), '.1e')} | "
            f"{_format(r.get('tables_mpts_H100'), '.3f')} Mpts/s | "
            f"{_format(r.get('tables_roofline_fraction_H100'), '.2%')} | "
            f"{_format(r.get('tables_mpts_A100'), '.3f')} Mpts/s | "
            f"{_format(r.get('baseline_mpts'), '.3f')} Mpts/s | "
            f"{_format(r.get('unrolled_mpts_H100'), '.3f')} Mpts/s | "
            f"{_format(r.get('issue_bound_mpts'), '.3f')} Mpts/s | "
            f"{_format(r.get('workspace_bound_mpts'), '.3f')} Mpts/s ({r.get('workspace_in', '-')}) |")
    return "\n".join(lines)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("mechanisms", nargs="*", type=pathlib.Path, default=list(DEFAULTS))
    parser.add_argument("--states", type=int, default=64)
    parser.add_argument("--no-nvcc", action="store_true")
    parser.add_argument("--no-host", action="store_true")
    parser.add_argument("--no-model", action="store_true", help="skip the H100 model (builds the unrolled graph)")
    parser.add_argument("--unrolled", action="store_true", help="also compile and model the unrolled form "
                        "(NUIG n-hexane: minutes)")
    parser.add_argument("--json", type=pathlib.Path)
    args = parser.parse_args(argv)
    rows = []
    for path in args.mechanisms:
        row = bench(path, args.states, not args.no_nvcc, not args.no_host, not args.no_model, args.unrolled)
        print(row.pop("command_output"), flush=True)
        print(json.dumps(row, default=float), flush=True)
        rows.append(row)
        ok = row["simulator_error"] <= TOLERANCE and row.get("host_error", 0.0) <= TOLERANCE
        verdict = "within" if ok else "NOT within"
        print(f"{row['mechanism']}: {verdict} {TOLERANCE:g} x max|wdot| of Cantera", flush=True)
    print(table(rows))
    if args.json:
        args.json.write_text(json.dumps(rows, indent=1, default=float))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
