"""The timing model on hand-built warp programs, occupancy, the baseline model,
and a smoke test of the autotuning sweep."""

from __future__ import annotations

import dataclasses
import json
import pathlib
import re
import shlex
import tempfile

import pytest

from singe.cli import build_parser
from singe.baseline import baseline_kernel
from singe.compiler import compile_kernel
from singe.options import CompileOptions
from singe.errors import SingeInternalError
from singe.kernels.registry import KERNELS
from singe.kernels.ir import Const, Imm, Instr, Operation, Reg
from singe.programs import Arrive, Compute, FullSync, SharedLoad, SharedStore, Sync, WarpProgram, WarpPrograms
from singe.timing import (A100, H100, K20C, cta_timing, issued_per_warp, model, model_baseline, occupancy, preset_for,
                          loop_static_savings, speedup, static_instructions, warp_code, warp_steps)
from singe.codegen import lay_out
from autotune.dispatch_fit import DEFAULT_MECHANISMS, FIT_KERNELS
from singe.programs.lowering import loop_summary
from conftest import load

ROOT = pathlib.Path(__file__).resolve().parents[1]


def chain(name: str, n: int, source: str = "x") -> Operation:
    """n dependent FMAs: source -> name (latency-bound on one warp)."""
    instrs, previous = [], source
    for i in range(n):
        dst = name if i == n - 1 else f"{name}.t{i}"
        instrs.append(Instr("fma", dst, (Reg(previous), Imm(1.0), Imm(0.5))))
        previous = dst
    return Operation(name, "test", tuple(instrs), (source,), (name,))


def independent(name: str, n: int) -> Operation:
    """n independent FMAs on the input x (throughput-bound when warps are many)."""
    instrs = tuple(Instr("fma", f"{name}.{i}", (Reg("x"), Imm(1.0), Imm(float(i)))) for i in range(n))
    return Operation(name, "test", instrs, ("x",), tuple(i.dst for i in instrs))


def programs(*items_per_warp, shared_slots: int = 1) -> WarpPrograms:
    warps = len(items_per_warp)
    return WarpPrograms("test", "test", warps, tuple(WarpProgram(w, tuple(items)) for w, items in
                                                     enumerate(items_per_warp)), (), shared_slots, 16)


def cycles(progs: WarpPrograms, preset=K20C, ctas: int = 1, slabs: int = 1) -> float:
    return cta_timing(warp_steps(progs, preset), preset, ctas, slabs).cycles


def test_a_barrier_wait_adds_the_producers_time():
    """The consumer's sync completes when the producer arrives: its work starts after
    the producer's chain (and store) plus the barrier's latency."""
    lat = K20C.latency
    long, short = chain("a", 40), chain("b", 5, source="a")
    producer = [Compute(long), SharedStore("a", 0), Arrive(1, 64, 1, ("a",))]
    consumer = [Sync(1, 64, 1, ("a",)), SharedLoad("a", 0), Compute(short)]
    waited = cycles(programs(producer, consumer))
    expected = (40 * lat.fp64 + lat.shared) + lat.barrier + (lat.shared + 5 * lat.fp64)
    assert waited == pytest.approx(expected, rel=0.01)
    unordered = cycles(programs([Compute(long)], [Compute(chain("b", 5))]))
    assert unordered == pytest.approx(40 * lat.fp64, rel=0.01)
    result = cta_timing(warp_steps(programs(producer, consumer), K20C), K20C)
    assert 0.3 < result.barrier_wait < 0.6  # the consumer waits about the producer's time


def test_barrier_generations_count_threads_as_the_simulator_does():
    """A sync on 96 threads waits for three warps; a full sync for all of them."""
    lat = K20C.latency
    arrive = lambda n: [Compute(chain(f"c{n}", n)), Arrive(2, 96, 1), FullSync()]  # noqa: E731
    progs = programs(arrive(10), arrive(30), [Sync(2, 96, 1), FullSync()], [FullSync()])
    assert cycles(progs) == pytest.approx(30 * lat.fp64 + 2 * lat.barrier + 2, abs=3)


def test_a_deadlock_raises():
    progs = programs([Sync(1, 64, 1)], [Sync(2, 64, 2)])
    with pytest.raises(SingeInternalError, match="deadlock"):
        cycles(progs)


def test_fp64_work_takes_proportionally_longer_when_throughput_bound():
    """8 warps of independent FMAs saturate K20c's FP64 units (2 warp-DFMA per cycle
    per SM): twice the work per warp, or twice the warps, takes twice as long."""
    def run(warps: int, n: int) -> float:
        return cycles(programs(*[[Compute(independent(f"w{w}", n))] for w in range(warps)]))

    base = run(8, 2000)
    assert base == pytest.approx(8 * 2000 / 2, rel=0.02)
    assert run(8, 4000) / base == pytest.approx(2.0, rel=0.02)
    assert run(16, 2000) / base == pytest.approx(2.0, rel=0.02)
    # A100 has half K20c's FP64 lanes per SM: the same slab takes twice the cycles
    assert cycles(programs(*[[Compute(independent(f"w{w}", 2000))] for w in range(8)]), A100) / base == \
        pytest.approx(2.0, rel=0.02)


def test_resident_ctas_share_the_sm():
    """Two identical resident CTAs of throughput-bound warps each take twice the cycles per slab."""
    progs = programs(*[[Compute(independent(f"w{w}", 2000))] for w in range(8)])
    assert cycles(progs, ctas=2) / cycles(progs, ctas=1) == pytest.approx(2.0, rel=0.02)


def test_occupancy_limits():
    by_registers = occupancy(K20C, warps_per_cta=8, registers=128)
    assert (by_registers.ctas, by_registers.limiter) == (2, "registers")  # 128 x 32 x 16 warps = 64K
    assert occupancy(K20C, 8, 127).ctas == 2  # allocated per warp in 256-register units
    assert occupancy(K20C, 8, 64).ctas == 4
    by_shared = occupancy(K20C, 4, 32, shared_bytes=20 * 1024)
    assert (by_shared.ctas, by_shared.limiter) == (2, "shared")  # 48 KB per SM
    assert occupancy(A100, 4, 32, shared_bytes=82 * 1024).ctas == 1  # 1 KB reserved per CTA on sm_80
    assert occupancy(H100, 4, 32, shared_bytes=82 * 1024).ctas == 2
    assert occupancy(K20C, 4, 32, shared_bytes=49 * 1024).ctas == 0  # more than a CTA may have
    assert occupancy(H100, 2, 32, barrier_ids=5).limiter == "barriers"
    assert occupancy(H100, 2, 32, barrier_ids=5).ctas == 3
    assert occupancy(K20C, 32, 32).ctas == 2  # 2048 threads per SM
    assert occupancy(K20C, 1, 16).ctas == 16  # at most 16 CTAs per SM on Kepler


def test_presets_map_to_targets():
    assert preset_for("k20c") is K20C and preset_for("sm_80") is A100 and preset_for("sm_90") is H100
    assert preset_for("h100") is H100
    assert K20C.sms == 13 and A100.sms == 108 and H100.sms == 132
    assert K20C.peak_flops == pytest.approx(1.175e12, rel=0.01)  # the paper's 1173 GFLOPS


@pytest.fixture(scope="module")
def h2o2_viscosity():
    """H2/O2 viscosity at 3 warps in Wilke pairs, every constant in the warps' register stripes (in the default
    groups of 4 some are constant-bank loads, which the model also charges to the load queue)."""
    return compile_kernel(load("h2o2"), "viscosity", warps=3, arch="k20c", wilke_group=2)


def test_baseline_occupancy_follows_its_registers(h2o2_viscosity):
    """128-thread CTAs: 255 registers leave 8 warps per SM, 32 registers 16 CTAs."""
    fat = model_baseline(h2o2_viscosity, "K20c", ptxas={"registers": 255, "spill_stores": 0, "spill_loads": 0})
    assert (fat.occupancy.ctas, fat.occupancy.warps) == (2, 8)
    lean = model_baseline(h2o2_viscosity, "K20c", ptxas={"registers": 32, "spill_stores": 0, "spill_loads": 0})
    assert lean.occupancy.ctas == 16
    assert lean.points_per_second >= fat.points_per_second
    spilling = model_baseline(h2o2_viscosity, "K20c", ptxas={"registers": 32, "spill_stores": 4000,
                                                              "spill_loads": 4000})
    assert spilling.points_per_second < lean.points_per_second
    assert spilling.registers_from == "ptxas" and spilling.spill_bytes == 8000


def test_model_walks_the_programs_the_simulator_counts(h2o2_viscosity):
    """Per warp: one barrier step per arrive/sync, 256 B of shared traffic per
    shared load or store, per constant use two shuffles (in the register
    stripes) or one load of the constant table, or in a loop one load of its
    block of the table per iteration, as the simulator counts (it walks the
    iterations written out)."""
    steps = warp_steps(h2o2_viscosity.programs, K20C)
    issued = issued_per_warp(h2o2_viscosity.programs)
    codes = warp_code(h2o2_viscosity.programs)
    for warp, counts in enumerate(h2o2_viscosity.counts):
        looped = [loop_summary(unit, loop) for unit in codes[warp].units for loop in getattr(unit, "loops", ())]
        assert codes[warp].rolled
        in_loops = sum(s.iterations * s.constant_loads for s in looped)
        barriers = [s for s in steps[warp] if not hasattr(s, "demand")]
        assert len(barriers) == counts["arrive"] + counts["sync"] + counts["full_sync"]
        demand: dict = {}
        for step in steps[warp]:
            for resource, amount in getattr(step, "demand", ()):
                demand[resource] = demand.get(resource, 0) + amount
        assert demand.get("shared", 0) == 256 * (counts["shared_load"] + counts["shared_store"])
        table_loads = sum(s.iterations * (s.constant_loads + s.table_loads) for s in looped)
        constant_loads = issued[warp]["ldg"] - counts["global_load"] - \
            (table_loads if codes[warp].table_class == "ldg" else 0)
        assert demand.get("shuffle", 0) + 2 * constant_loads + 2 * in_loops == 2 * counts["shuffle"]
    assert any(loop_summary(unit, loop).constant_loads for code in codes for unit in code.units
               for loop in getattr(unit, "loops", ()))


def test_model_reports_throughput_and_speedup(h2o2_viscosity):
    result = model(h2o2_viscosity)
    assert result.preset == "K20c" and result.points_per_slab == 32
    assert 0 < result.points_per_second <= result.roofline
    assert result.points_per_second == pytest.approx(
        32 * result.occupancy.ctas * K20C.sms * K20C.clock_hz / result.cycles_per_slab)
    ratio = speedup(h2o2_viscosity, "K20c")
    baseline = model_baseline(baseline_kernel(h2o2_viscosity))
    assert ratio == pytest.approx(result.points_per_second / baseline.points_per_second)


# --------------------------------------------------------------------------- the sweep

def _sweep_module():
    from autotune import sweep

    return sweep


SWEEP_ARGS = ["h2o2", "--kernel", "viscosity", "--warps", "1-3", "--ctas", "1,2", "--placements", "auto,buffer",
              "--weights", "1,0.5,1", "--quiet"]


def test_sweep_writes_resumes_and_names_the_best(tmp_path, capsys):
    sweep = _sweep_module()
    results = tmp_path / "h2o2.jsonl"
    assert sweep.main(SWEEP_ARGS + ["--results", str(results)]) == 0
    records = [json.loads(line) for line in results.read_text().splitlines()]
    configurations = [r for r in records if r["style"] == "warp-specialized"]
    assert len(configurations) == 12 and all(r["status"] == "ok" for r in configurations)
    assert len({r["key"] for r in configurations}) == 12
    assert all(r["max_relative_error"] <= 1e-10 and r["points_per_second"] > 0 for r in configurations)
    assert any(r["style"] == "baseline" for r in records)
    first = capsys.readouterr().out
    assert "12 evaluated" in first
    assert sweep.main(SWEEP_ARGS + ["--results", str(results)]) == 0
    assert results.read_text().count("\n") == len(records)  # nothing new
    assert "0 evaluated" in capsys.readouterr().out
    best = (tmp_path / "h2o2.best.txt").read_text().strip()
    args = build_parser().parse_args(shlex.split(best)[1:])
    assert args.kernels == ["viscosity"] and 1 <= args.warps <= 3


def test_sweep_covers_the_constant_tables_and_wilke_groups(tmp_path, capsys):
    """``--constant-tables`` and ``--wilke-groups`` are axes of the sweep where they apply (viscosity: both;
    chemistry, one switch case per warp: neither), each configuration's command line carries them, and the
    device kit reads them back from the best command (``gpu_bench.settings_from_sweep``)."""
    from autotune.gpu_bench import settings_from_sweep

    sweep = _sweep_module()
    results = tmp_path / "axes.jsonl"
    assert sweep.main(SWEEP_ARGS[:4] + ["2", "--ctas", "2", "--placements", "auto", "--weights", "1,0.5,1",
                                        "--constant-tables", "cache,shared", "--wilke-groups", "1,3", "--quiet",
                                        "--results", str(results)]) == 0
    records = [json.loads(line) for line in results.read_text().splitlines()]
    configurations = [r for r in records if r["style"] == "warp-specialized"]
    assert sorted((r["options"]["constant_table"], r["options"]["wilke_group"]) for r in configurations) == \
        [("cache", 1), ("cache", 3), ("shared", 1), ("shared", 3)]
    assert all(r["status"] == "ok" and r["max_relative_error"] <= 1e-10 for r in configurations)
    for record in configurations:
        options = build_parser().parse_args(shlex.split(record["command"])[1:])
        assert (options.constant_table, options.wilke_group) == (record["options"]["constant_table"],
                                                                  record["options"]["wilke_group"])
    _, kernel, best = settings_from_sweep(str(tmp_path / "axes.best.txt"))
    assert kernel == "viscosity" and best["constant_table"] in ("cache", "shared") and best["wilke_group"] in (1, 3)
    chemistry = sweep.grid("chemistry", "sm_90", [4], [2], [1], [(1.0, 0.5, 1.0)], ["auto"], ["cache", "shared"],
                           [1, 3])
    assert [(c.constant_table, c.wilke_group) for c in chemistry] == [("auto", None)]
    with pytest.raises(SystemExit, match="unknown constant table texture"):
        sweep.main(SWEEP_ARGS + ["--constant-tables", "texture", "--results", str(results)])
    with pytest.raises(SystemExit, match="--wilke-groups must be from 1 to 8"):
        sweep.main(SWEEP_ARGS + ["--wilke-groups", "9", "--results", str(results)])


def test_sweep_tunes_the_guarded_products(tmp_path, monkeypatch):
    """``--products cantera``: each configuration is the guarded chemistry kernel, validated against the
    reference with the guard at states with three negative mass fractions a point (where the two products
    differ), and its command line, its options and the baseline's key carry it.  The companion: at those
    states the two references differ by more than the tolerance, so a configuration checked against the other
    one would not pass."""
    import numpy as np

    sweep = _sweep_module()
    positive = sweep.random_states

    def with_negative_fractions(mech, n, seed):
        T, P, Y = positive(mech, n, seed)
        rng = np.random.default_rng(22)
        for i in range(n):
            Y[rng.choice(Y.shape[0], 3, replace=False), i] = -10.0 ** rng.uniform(-12, -3, 3)
        return T, P, Y

    monkeypatch.setattr(sweep, "random_states", with_negative_fractions)
    results = tmp_path / "guarded.jsonl"
    assert sweep.main(["h2o2", "--kernel", "chemistry", "--warps", "2,4", "--ctas", "2", "--qssa-warps", "1",
                       "--placements", "auto", "--weights", "1,0.5,1", "--products", "cantera", "--quiet",
                       "--results", str(results)]) == 0
    records = [json.loads(line) for line in results.read_text().splitlines()]
    configurations = [r for r in records if r["style"] == "warp-specialized"]
    assert len(configurations) == 2 and all(r["status"] == "ok" for r in configurations)
    for record in configurations:
        assert record["options"]["products"] == "cantera" and record["key"].endswith("-cantera")
        assert build_parser().parse_args(shlex.split(record["command"])[1:]).products == "cantera"
    assert [r["key"] for r in records if r["style"] == "baseline"] == ["baseline-sm_90-cantera"]
    guarded, plain = (sweep.expected(CompileOptions(products=p)) for p in ("cantera", "chemkin"))
    assert sweep.relative_error("chemistry", plain, guarded) > KERNELS["chemistry"].tolerance


@pytest.mark.parametrize("arguments,message", [
    (["--warps", "0"], "argument --warps: '0': counts of at least 1"),
    (["--warps", "5-2"], "argument --warps: '5-2' is an empty range"),
    (["--ctas", "x"], "argument --ctas: 'x': write counts as 1-32 or 4,8,15"),
    (["--states", "0"], "argument --states: '0': at least 1"),
    (["--jobs", "0"], "argument --jobs: '0': at least 1")])
def test_sweep_refuses_an_empty_grid(arguments, message, capsys):
    """A grid with no configuration (warps or CTAs of 0, an empty range) or no states to validate is a usage
    error; before, the sweep ran nothing and said '0 configurations', or stopped with numpy's ValueError."""
    from autotune import sweep

    with pytest.raises(SystemExit) as stop:
        sweep.main(["h2o2", "--kernel", "viscosity", *arguments])
    assert stop.value.code == 2 and message in capsys.readouterr().err


def test_sweep_records_a_wrong_configuration_with_its_repro(tmp_path, monkeypatch, capsys):
    sweep = _sweep_module()
    wrong = dataclasses.replace(KERNELS["viscosity"], tolerance=-1.0)  # every configuration now counts as wrong
    monkeypatch.setitem(KERNELS, "viscosity", wrong)
    results = tmp_path / "wrong.jsonl"
    assert sweep.main(SWEEP_ARGS[:4] + ["2", "--ctas", "1", "--placements", "auto", "--weights", "1,0.5,1",
                                        "--quiet", "--results", str(results)]) == 1
    (record,) = [json.loads(line) for line in results.read_text().splitlines()
                 if json.loads(line)["style"] != "baseline"]
    assert record["status"] == "wrong" and "relative error" in record["message"]
    assert build_parser().parse_args(shlex.split(record["repro"])[1:]).validate
    assert "FAILED" in capsys.readouterr().out


def test_chemistry_is_modeled_like_the_transport_kernels():
    from singe.errors import OptionError

    try:
        compiled = compile_kernel(load("h2o2"), "chemistry", warps=2, arch="sm_80")
    except OptionError:
        pytest.skip("no chemistry kernel in this tree")
    ws, base = model(compiled), model_baseline(compiled)
    assert ws.preset == base.preset == "A100"
    assert 0 < ws.points_per_second <= ws.roofline and 0 < base.points_per_second <= base.roofline


SASS_TOLERANCE = 0.10  # relative, per warp: the model's issued instructions per slab against the compiled kernel's


def _sass_tools_missing() -> list[str]:
    from autotune import sass

    return sass.missing_tools()


@pytest.mark.skipif(bool(_sass_tools_missing()), reason="needs nvcc, nvdisasm and cuobjdump (pip install "
                                                        "nvidia-cuda-nvdisasm nvidia-cuda-cuobjdump)")
@pytest.mark.parametrize("mechanism,kernel,warps,ctas", [
    ("h2o2", "viscosity", 4, 2), ("h2o2", "diffusion", 3, 2), ("h2o2", "chemistry", 4, 2),
    ("dme", "viscosity", 15, 3), ("dme", "diffusion", 10, 3), ("gri30", "viscosity", 8, None),
    ("heptane", "viscosity", 8, None), ("h2o2", "conductivity", 8, None), ("dme", "conductivity", 8, None),
    ("h2o2", "chemistry", 8, None)])
def test_model_issues_what_the_compiled_kernel_issues_per_warp(mechanism, kernel, warps, ctas):
    """The timing model's per-warp instruction counts (from the units codegen
    emits) against nvdisasm's count of the compiled kernel (sm_90), warp by
    warp.  The H2/O2 kernels at 3-4 warps are those the loops' ``LOOP_TRIP``
    and column costs and the select and division expansions were read from;
    the per-slab overheads (``SLAB_OVERHEAD``, ``MASK_DISPATCH``,
    ``WARP_SWITCH_SLAB``) are fitted over every kernel of five mechanisms at
    the defaults and the paper's settings (``autotune.dispatch_fit``: the fit
    of each kernel left out is within 11 % but for the QSSA n-dodecane
    viscosity's eighth warp, below).  The kernels of few masked blocks, which
    the overheads fitted on the H2/O2 kernels alone put up to 30 % over their
    SASS (H2/O2 and DME conductivity and H2/O2 chemistry at the defaults),
    are checked here, the companion below.  DME diffusion at the paper's
    settings (turns: loops over exponentials carrying column sums in,
    invariant reads in place) is the turns' check.  GRI-Mech viscosity at the
    default 8 warps (Wilke groups of 7, CTAs chosen, the table's copy in shared
    memory: an odd count of constants an iteration, which nvcc reads in pairs
    itself, ``lowering.issued_constant_pairs``) is what that rule was read
    from; n-heptane viscosity at the defaults (groups of 7 too) is held out.
    (QSSA n-dodecane's at the defaults is not: its eighth warp, without a
    Wilke sum, issues 18 % more than the model counts, 513 against 422 a
    slab, 68 of them ``ULDC.64`` of constants ptxas reloads per call of
    singe_exp there and keeps in uniform registers in the other warps.)"""
    from autotune import sass

    compiled = compile_kernel(load(mechanism), kernel, warps=warps, ctas_per_sm=ctas)
    rows = sass.model_check(compiled, "sm_90")
    print("\n" + sass.format_model_check(f"{mechanism} {kernel}", rows))
    for warp, modeled, issued in rows:
        assert abs(modeled - issued) <= SASS_TOLERANCE * issued, (warp, modeled, issued)


@pytest.mark.skipif(bool(_sass_tools_missing()), reason="needs nvcc, nvdisasm and cuobjdump (pip install "
                                                        "nvidia-cuda-nvdisasm nvidia-cuda-cuobjdump)")
@pytest.mark.parametrize("mechanism,kernel,warps,arch", [
    ("dme", "viscosity", 15, "sm_90"), ("dme", "diffusion", 10, "sm_90"), ("dme", "viscosity", 15, "sm_80")])
def test_the_baseline_model_issues_what_the_compiled_baseline_issues(mechanism, kernel, warps, arch):
    """The data-parallel baseline, per point: the model's count (``baseline_steps``) against nvdisasm's walk
    of the compiled baseline.  On sm_90 each literal that is no immediate is two ``UMOV`` where it is used
    (``timing.LITERAL_MOVES``: DME viscosity 6,895 issued, 1,938 of them ``UMOV``), on sm_80 a constant-bank
    operand (4,977 issued)."""
    from autotune import sass

    compiled = compile_kernel(load(mechanism), kernel, warps=warps, arch=arch)
    modeled, issued = sass.baseline_check(compiled, arch)
    print(f"\n{mechanism} {kernel} baseline {arch}: model {modeled:.0f}, SASS {issued}")
    assert abs(modeled - issued) <= SASS_TOLERANCE * issued


def test_the_baseline_stalls_on_the_constant_cache_only_where_its_literals_are_in_the_bank():
    """n-heptane viscosity's baseline uses 2,704 distinct literals (21.6 KB, beyond the 8 KB constant cache).
    On sm_80 they are constant-bank operands, and each use stalls on the cache's miss rate; on sm_90 they are
    moved into uniform registers from the instruction (``LITERAL_MOVES``) and never read the bank: the H100
    preset's warp runs without those stalls, the A100's with them (the same latencies otherwise)."""
    from singe.timing import A100, H100, baseline_steps, constant_stall

    graph = compile_kernel(load("heptane"), "viscosity", warps=13).graph
    uses = sum(isinstance(s, Const) for op in graph.operations for i in op.instrs for s in i.srcs)
    footprint = 8 * len({c for op in graph.operations for c in op.constants})
    assert footprint > A100.constant_cache and A100.latency == H100.latency
    sm80, sm90 = (baseline_steps(graph, preset)[0].cycles for preset in (A100, H100))
    assert sm80 - sm90 >= 0.9 * uses * constant_stall(A100, footprint) > 0


@pytest.mark.skipif(bool(_sass_tools_missing()), reason="needs nvcc, nvdisasm and cuobjdump (pip install "
                                                        "nvidia-cuda-nvdisasm nvidia-cuda-cuobjdump)")
def test_the_sm90_baseline_reads_no_constant_bank():
    """The evidence for the rule above (the companion of its sm_80 half): DME viscosity's baseline reads its
    literals as operands of bank 2 on sm_80, and from no bank on sm_90, where ``UMOV`` build them.  (Bank 3
    holds singe_log's constants on both: ``singe_log_constants``, operands of its instructions.)"""
    from autotune import sass
    from singe.codegen import generate_baseline

    compiled = compile_kernel(load("dme"), "viscosity", warps=15)
    operands = {}
    for arch in ("sm_80", "sm_90"):
        with tempfile.TemporaryDirectory() as scratch:
            sass.analyse(generate_baseline(compiled).write(scratch)[0], arch, None, True, keep=scratch)
            text = next(pathlib.Path(scratch).glob("*.sass")).read_text()
        operands[arch] = (len(re.findall(r"c\[0x2\]", text)), text.count("UMOV"))
    assert operands["sm_80"][0] > 1000 and operands["sm_80"][1] == 0
    assert operands["sm_90"][0] == 0 and operands["sm_90"][1] > 1000


@pytest.mark.skipif(bool(_sass_tools_missing()), reason="needs nvcc, nvdisasm and cuobjdump (pip install "
                                                        "nvidia-cuda-nvdisasm nvidia-cuda-cuobjdump)")
def test_the_baseline_check_fails_without_the_literal_moves(monkeypatch):
    """The companion: without sm_90's moves of the literals the model counts DME viscosity's baseline 28 %
    under its SASS (4,939 against 6,895)."""
    from autotune import sass
    from singe import timing

    monkeypatch.setitem(timing.ARCH_CODE, "sm_90", dataclasses.replace(timing.ARCH_CODE["sm_90"], literal_moves=0))
    timing._DECODED.clear()
    modeled, issued = sass.baseline_check(compile_kernel(load("dme"), "viscosity", warps=15), "sm_90")
    timing._DECODED.clear()
    assert modeled < (1 - SASS_TOLERANCE) * issued


@pytest.mark.skipif(bool(_sass_tools_missing()), reason="needs nvcc, nvdisasm and cuobjdump (pip install "
                                                        "nvidia-cuda-nvdisasm nvidia-cuda-cuobjdump)")
def test_the_sass_check_fails_where_the_odd_constants_are_counted_unpaired(monkeypatch):
    """The companion of the GRI-Mech case above: counting an odd number of constants an iteration as single
    loads (codegen's own pairs, ``lowering.constant_pairs``, only) puts the overlaid warps over the tolerance
    (2,656 against 2,396)."""
    from autotune import sass
    from singe import timing
    from singe.programs.lowering import constant_pairs

    compiled = compile_kernel(load("gri30"), "viscosity", warps=8)
    wilke = [op.name.split("_")[1:] for op in compiled.graph.operations if op.name.startswith("wilke_")]
    assert compiled.options.wilke_group is None and max(map(len, wilke)) == 7  # the default group, odd
    monkeypatch.setattr(timing, "issued_constant_pairs", constant_pairs)
    rows = sass.model_check(compiled, "sm_90")
    assert any(abs(modeled - issued) > SASS_TOLERANCE * issued for _, modeled, issued in rows)


@pytest.mark.skipif(bool(_sass_tools_missing()), reason="needs nvcc, nvdisasm and cuobjdump (pip install "
                                                        "nvidia-cuda-nvdisasm nvidia-cuda-cuobjdump)")
@pytest.mark.parametrize("mechanism,kernel,warps,ctas", [
    ("h2o2", "viscosity", 4, 2), ("dme", "viscosity", 15, 3), ("dme", "viscosity", 4, None),
    ("dme", "chemistry", 8, 2)])
def test_model_issues_what_the_sm80_kernel_issues_per_warp(mechanism, kernel, warps, ctas):
    """The same check on sm_80, whose SASS differs (``timing.ARCH_CODE``): constants at indices ptxas knows
    are constant-bank operands, and there are no uniform moves of constants.  The per-slab overheads were
    fitted on these kernels among 27 others (``autotune.dispatch_fit --arch sm_80``).  The companion: sm_90's
    costs on the same sm_80 SASS are off by more than the tolerance where code one warp runs alone reads many
    constants (DME viscosity at 4 warps, warp 0: 1,562 against 1,384, where sm_90 loads 198 of them a slab by
    ``ULDC.64``)."""
    from autotune import sass

    options = {"qssa_warps": 4} if kernel == "chemistry" else {}
    compiled = compile_kernel(load(mechanism), kernel, warps=warps, ctas_per_sm=ctas, arch="sm_80", **options)
    rows = sass.model_check(compiled, "sm_80")
    print("\n" + sass.format_model_check(f"{mechanism} {kernel} sm_80", rows))
    for warp, modeled, issued in rows:
        assert abs(modeled - issued) <= SASS_TOLERANCE * issued, (warp, modeled, issued)
    if (mechanism, kernel, warps) == ("dme", "viscosity", 4):
        as_sm90 = [sum(c.values()) for c in issued_per_warp(compiled.programs, "sm_90")]
        assert any(abs(m - issued) > SASS_TOLERANCE * issued for m, (_, _, issued) in zip(as_sm90, rows))


@pytest.mark.skipif(bool(_sass_tools_missing()), reason="needs nvcc, nvdisasm and cuobjdump (pip install "
                                                        "nvidia-cuda-nvdisasm nvidia-cuda-cuobjdump)")
def test_the_sass_check_fails_with_the_overheads_fitted_on_few_kernels(monkeypatch):
    """The companion of the conductivity cases above: the per-slab overheads fitted on the H2/O2 viscosity and
    diffusion kernels at 3-4 warps alone (74 other and a branch a slab, a bit test and a branch a masked
    block) count DME conductivity at the defaults, two masked blocks, 18 % over its SASS (349 against 305)."""
    from autotune import sass
    from singe import timing

    monkeypatch.setitem(timing.ARCH_CODE, "sm_90", dataclasses.replace(
        timing.ARCH_CODE["sm_90"], slab_overhead={"other": 74, "branch": 1}, mask_dispatch={"other": 1, "branch": 1}))
    rows = sass.model_check(compile_kernel(load("dme"), "conductivity", warps=8), "sm_90")
    assert all(modeled > (1 + SASS_TOLERANCE) * issued for _, modeled, issued in rows)


def test_the_dispatch_fit_recovers_the_overheads_of_its_warps():
    """``autotune.dispatch_fit``'s weighted least squares on warps made from known overheads (36 a slab, 5 a
    masked block, 4 a switch block; 3, 1 and 2 of them branches) gives them back, in all and for the branches
    apart, and its errors with them are 0; a constant alone (the switch's) is their mean weighted by the
    squared inverse counts."""
    import numpy as np

    from autotune.dispatch_fit import errors, fit

    rows = []
    for mask, switch, rest in ((2, 0, 300), (9, 1, 250), (4, 2, 1200), (11, 0, 700), (0, 3, 90), (5, 5, 400)):
        rows.append({"rest": {"fp64": rest, "other": rest // 3, "branch": 4}, "mask": mask, "switch": switch,
                     "sass": {"fp64": rest, "other": rest // 3 + 33 + 4 * mask + 2 * switch,
                              "branch": 4 + 3 + mask + 2 * switch}})
    overheads = np.array([36 + 5 * r["mask"] + 4 * r["switch"] for r in rows])
    assert np.allclose(fit(rows, "overlay"), [36, 5, 4]) and np.allclose(fit(rows, "overlay", ("branch",)), [3, 1, 2])
    assert np.allclose(errors(rows, overheads), 0)
    weights = [sum(r["sass"].values()) ** -2.0 for r in rows]
    assert np.allclose(fit(rows, "switch"), [np.average(overheads, weights=weights)])


@pytest.mark.exhaustive
@pytest.mark.skipif(bool(_sass_tools_missing()), reason="needs nvcc, nvdisasm and cuobjdump (pip install "
                                                        "nvidia-cuda-nvdisasm nvidia-cuda-cuobjdump)")
@pytest.mark.parametrize("arch", ["sm_90", "sm_80"])
@pytest.mark.parametrize("kernel", FIT_KERNELS)
@pytest.mark.parametrize("mechanism", DEFAULT_MECHANISMS)
def test_model_issues_what_every_kernel_issues_per_warp_at_the_defaults(mechanism, kernel, arch):
    """The per-warp check at the command's defaults (8 warps, CTAs chosen) for every kernel of the five
    mechanisms of issue 12's goal 3, sm_90 and sm_80, within ``SASS_TOLERANCE``; on sm_80 the tolerance is
    11 % for H2/O2's viscosity and conductivity (10.7 % at the fit's constants: warps of 150-250
    instructions, 40 of them the slab's overheads).  The one kernel outside: the QSSA n-dodecane viscosity's
    eighth warp on sm_90, which issues 18 % more than the model counts (its ``ULDC.64`` of singe_exp's
    constants, reloaded at every call there and kept in uniform registers in the other warps): checked to be
    under, by less than a quarter."""
    from autotune import sass

    compiled = compile_kernel(load(mechanism), kernel, warps=8, arch=arch)
    rows = sass.model_check(compiled, arch)
    print("\n" + sass.format_model_check(f"{mechanism} {kernel} {arch}", rows))
    tolerance = 0.11 if (arch, mechanism) == ("sm_80", "h2o2") else SASS_TOLERANCE
    for warp, modeled, issued in rows:
        if (mechanism, kernel, arch, warp) == ("dodecane", "viscosity", "sm_90", 7):
            assert 0.75 * issued < modeled < issued
        else:
            assert abs(modeled - issued) <= tolerance * issued, (warp, modeled, issued)


def test_the_sass_check_fails_on_a_wrong_count():
    """The check above would catch a model that costs the loops codegen unrolls
    completely as loops of ``LOOP_UNROLL`` iterations per trip (a counter and
    an address step per affine column per iteration: 14-30 % over the SASS
    count of the DME viscosity warps at 15 warps)."""
    compiled = compile_kernel(load("dme"), "viscosity", warps=15, ctas_per_sm=3)
    counts = issued_per_warp(compiled.programs)
    rolled = []
    for code, c in zip(warp_code(compiled.programs), counts):
        summaries = [loop_summary(unit, loop) for unit in code.units for loop in getattr(unit, "loops", ())]
        assert summaries and all(s.unrolled for s in summaries)
        extra = sum(s.iterations * s.affine_indices + 4 * -(-s.iterations // 2) for s in summaries)
        rolled.append(sum(c.values()) + extra)
    assert any(abs(r - sum(c.values())) > SASS_TOLERANCE * sum(c.values()) for r, c in zip(rolled, counts))


def test_shared_accesses_are_forwarded_between_barriers_as_ptxas_does():
    """``issued_shared``: a slot loaded or stored since the last barrier is
    read from the register; of two stores to a slot with no barrier between,
    the first is dead; a barrier, or an operation that shuffles a constant
    kept in registers, ends the forwarding."""
    from singe.programs.lowering import BarrierUnit, ComputeUnit, LoadUnit, StoreUnit
    from singe.timing import issued_shared

    plain = Operation("p", "test", (Instr("add", "y", (Reg("x"), Imm(1.0))),), ("x",), ("y",))
    shuffles = Operation("s", "test", (Instr("add", "y", (Reg("x"), Const(2.5))),), ("x",), ("y",))
    units = (StoreUnit("a", 0), LoadUnit("a", 0), ComputeUnit(plain, {"x": 1}, {"y": 0}), LoadUnit("x", 1),
             BarrierUnit(Sync(1, 64, 0)), LoadUnit("a", 0), ComputeUnit(shuffles, {}, {}), LoadUnit("a", 0),
             StoreUnit("b", 2), ComputeUnit(shuffles, {}, {}), StoreUnit("c", 2))
    issued = issued_shared(units, frozenset({2.5}))
    # the store of a is dead (y overwrites slot 0 before any barrier); b's store is kept (a shuffle between)
    assert issued == (((), ()), ((), ()), (("x",), ("y",)), ((), ()), ((), ()), (("a",), ()), ((), ()),
                      (("a",), ()), ((), ("b",)), ((), ()), ((), ("c",)))
    assert issued_shared(units, frozenset())[7] == ((), ())  # no shuffle: the second load reads the register


def test_unswitched_chemistry_issues_no_per_slab_dispatch():
    """The chemistry kernels' warp switch sits outside the slab loop: the model
    charges no ``SWITCH_DISPATCH`` per slab (the transport overlay still does)."""
    from singe.timing import SWITCH_DISPATCH, WARP_SWITCH_SLAB, warp_code

    chemistry = compile_kernel(load("h2o2"), "chemistry", warps=4, ctas_per_sm=2)
    assert all(dict(code.dispatch) == WARP_SWITCH_SLAB for code in warp_code(chemistry.programs))
    assert dict(warp_code(chemistry.programs)[0].dispatch) != {k: WARP_SWITCH_SLAB[k] + SWITCH_DISPATCH.get(k, 0)
                                                               for k in WARP_SWITCH_SLAB}


STATIC_TOLERANCE = 0.15  # relative: the model's static instructions against the compiled kernel's


@pytest.fixture(scope="module")
def heptane_viscosity_rolled():
    """n-heptane viscosity at the paper's 13 warps x 3 CTAs in Wilke groups of 2 (the default there is 4,
    ``balanced_wilke_group``): Wilke loops of 158 iterations, emitted 2 per trip, in code the overlay shares
    between warps, reading the constant table in place."""
    compiled = compile_kernel(load("heptane"), "viscosity", warps=13, ctas_per_sm=3, arch="sm_90",
                              constant_table="cache", wilke_group=2)
    units = [u for code in warp_code(compiled.programs) for u in code.units]
    assert any(not loop_summary(u, loop).unrolled for u in units for loop in getattr(u, "loops", ()))
    return compiled


def _static_case(case: str, heptane_viscosity_rolled):
    """The kernel of a case of the static check below."""
    if case == "heptane rolled loops":
        return heptane_viscosity_rolled
    if case == "heptane default":
        return compile_kernel(load("heptane"), "viscosity", warps=13, ctas_per_sm=3, arch="sm_90")
    table = "shared" if case.endswith("copy") else "cache"
    return compile_kernel(load("dme"), "viscosity", warps=15, ctas_per_sm=3, arch="sm_90", constant_table=table)


def _static_sass(compiled) -> int:
    from autotune import sass
    from singe.codegen import generate

    with tempfile.TemporaryDirectory() as scratch:
        path = generate(compiled).write(scratch)[0]
        return sass.analyse(path, "sm_90", compiled.programs.warps).static


@pytest.mark.skipif(bool(_sass_tools_missing()), reason="needs nvcc, nvdisasm and cuobjdump (pip install "
                                                        "nvidia-cuda-nvdisasm nvidia-cuda-cuobjdump)")
@pytest.mark.parametrize("case", ["heptane rolled loops", "heptane default", "dme unrolled shared code",
                                  "dme with the copy"])
def test_static_instructions_match_the_static_sass(case, heptane_viscosity_rolled):
    """static_instructions against the static SASS (sm_90), within STATIC_TOLERANCE:
    n-heptane viscosity at 13 warps x 3 CTAs in Wilke groups of 2, rolled loops, reading the table in place
    (1,170 modeled against 1,307), and as compiled by default there, in groups of 4 with the table's copy
    (1,053 against 1,211); DME viscosity at 15 warps x 3 CTAs, loops unrolled completely in code shared by
    the warps (1,372 against 1,497; with the constant table's copy in shared memory, its code before the slab
    loop counted, 1,347 against 1,460); the straight-line count (every iteration of every warp) is far off all
    of them.  Each counts the library's slow-path call sites (``timing.SLOW_PATH_SITE``)."""
    compiled = _static_case(case, heptane_viscosity_rolled)
    modeled, static = static_instructions(compiled.programs), _static_sass(compiled)
    assert abs(modeled - static) <= STATIC_TOLERANCE * static, (modeled, static)
    straight = sum(sum(c.values()) for c in issued_per_warp(compiled.programs))
    assert abs(straight - static) > 3 * STATIC_TOLERANCE * static


@pytest.mark.skipif(bool(_sass_tools_missing()), reason="needs nvcc, nvdisasm and cuobjdump (pip install "
                                                        "nvidia-cuda-nvdisasm nvidia-cuda-cuobjdump)")
def test_the_static_check_fails_without_the_slow_path_call_sites(monkeypatch, heptane_viscosity_rolled):
    """The companion: n-heptane viscosity as compiled by default, its 11 call sites of the library's slow
    paths not counted (``SLOW_PATH_SITE`` 0), comes out 19.7 % under the SASS (972 against 1,211), where
    with them it is 13.4 % under."""
    from singe import timing

    compiled = _static_case("heptane default", heptane_viscosity_rolled)
    monkeypatch.setattr(timing, "SLOW_PATH_SITE", 0)
    modeled, static = static_instructions(compiled.programs), _static_sass(compiled)
    assert abs(modeled - static) > STATIC_TOLERANCE * static, (modeled, static)


def test_static_instructions_are_the_issued_count_less_the_rolled_iterations(heptane_viscosity_rolled):
    """Without nvcc: every rolled loop saves its iterations past the emitted copies,
    every unit shared by k warps k - 1 copies, the slab loop all warps' but one."""
    programs = heptane_viscosity_rolled.programs
    codes = warp_code(programs)
    savings = sum(loop_static_savings(u, loop, code, k) for code in codes for k, u in enumerate(code.units)
                  for loop in getattr(u, "loops", ()))
    assert savings > 0
    dispatch = [sum(n for _, n in code.dispatch) for code in codes]
    issued = sum(sum(c.values()) for c in issued_per_warp(programs))
    shared = issued - savings - (sum(dispatch) - max(dispatch)) - static_instructions(programs)
    assert shared > 0 and lay_out(programs).sharing


def queue_bytes(compiled, preset=H100) -> float:
    """The 'shared' resource (the SM's load queue) the warps' steps ask for per slab."""
    from singe.timing import Segment

    return sum(dict(step.demand).get("shared", 0.0) for steps in warp_steps(compiled.programs, preset)
               for step in steps if isinstance(step, Segment))


def test_constant_table_loads_take_the_load_queue(heptane_viscosity_rolled, monkeypatch):
    """An LDC.64 at an index ptxas does not know takes LDC_QUEUE_SHARE slots of the load queue (measured: one
    queue with LDS.64): in the overlay's shared code and in its rolled loops; it issues what it issued, and the
    baseline reads its constants as operands, so it takes none."""
    from singe import timing

    issued = issued_per_warp(heptane_viscosity_rolled.programs)
    baseline = model_baseline(heptane_viscosity_rolled, "H100").points_per_second
    charged = queue_bytes(heptane_viscosity_rolled)
    monkeypatch.setattr(timing, "LDC_QUEUE_SHARE", 0.0)
    timing._DECODED.clear()
    free = queue_bytes(heptane_viscosity_rolled)
    loads = (charged - free) / (0.646 / 0.509 * timing.WARP_BYTES)
    assert loads > 1000 and loads == pytest.approx(round(loads), abs=1e-6)  # whole LDC.64s, per slab and CTA
    monkeypatch.setattr(timing, "LDC_QUEUE_SHARE", 2 * 0.646 / 0.509)
    timing._DECODED.clear()
    assert queue_bytes(heptane_viscosity_rolled) - free == pytest.approx(2 * (charged - free))
    assert issued_per_warp(heptane_viscosity_rolled.programs) == issued
    assert model_baseline(heptane_viscosity_rolled, "H100").points_per_second == baseline
    timing._DECODED.clear()


def test_the_sweep_reaches_the_fastest_measured_ctas_on_later_gpus():
    """The paper's 1-4 CTAs per SM on the K20c; 1-8 on sm_80 and sm_90 (DME viscosity ran fastest at 4 warps x 8
    CTAs on the H100 and the H200), unless --ctas is given."""
    from autotune import sweep

    assert sweep.default_ctas("k20c") == [1, 2, 3, 4]
    assert sweep.default_ctas("sm_90") == sweep.default_ctas("sm_90a") == sweep.default_ctas("sm_80") == list(range(1, 9))
    assert sweep.build_parser().parse_args(["h2o2", "--kernel", "viscosity"]).ctas is None
    assert sweep.build_parser().parse_args(["h2o2", "--kernel", "viscosity", "--ctas", "2,3"]).ctas == [2, 3]


def _segment_cycles(compiled, preset) -> float:
    return sum(step.cycles for steps in warp_steps(compiled.programs, preset) for step in steps
               if hasattr(step, "cycles"))


def test_reads_of_the_constant_bank_stall_on_misses_as_the_baselines_operands():
    """A warp-specialized warp's reads of the constant bank stall ``constant_miss`` times the miss rate of
    what the warps read there, the baseline's rule (``timing.constant_stall``).  DME diffusion at the paper's
    10 warps x 3 CTAs reads 13.4 KB of its table with LDC.64 (beyond the 8 KB cache): its segments are longer
    than with a cache that holds it (the companion); with the table's copy in shared memory only the
    constants of code one warp runs alone are read from the bank, 264 B, and nothing stalls.  H2/O2
    viscosity's footprint is counted by hand: 8 B per distinct constant each warp reads, and the loop table."""
    from singe import timing

    cached = compile_kernel(load("dme"), "diffusion", warps=10, ctas_per_sm=3, constant_table="cache")
    copied = compile_kernel(load("dme"), "diffusion", warps=10, ctas_per_sm=3, constant_table="shared")
    footprints = []
    for compiled in (cached, copied):
        overlaid = lay_out(compiled.programs)
        footprints.append(timing.bank_footprint(warp_code(compiled.programs, "sm_90", overlaid), overlaid))
    assert footprints[0] > H100.constant_cache > footprints[1] > 0, footprints
    stall = timing.constant_stall(H100, footprints[0])
    assert stall == pytest.approx((1 - H100.constant_cache / footprints[0]) * H100.latency.constant_miss)
    assert timing.constant_stall(H100, footprints[1]) == 0.0
    holding = dataclasses.replace(H100, constant_cache=1 << 20)
    assert _segment_cycles(cached, H100) > 1.05 * _segment_cycles(cached, holding)
    assert _segment_cycles(copied, H100) == pytest.approx(_segment_cycles(copied, holding))

    h2o2 = compile_kernel(load("h2o2"), "viscosity", warps=4)
    overlaid = lay_out(h2o2.programs)
    codes = warp_code(h2o2.programs, "sm_90", overlaid)
    by_hand = 0
    for code in codes:
        read = set()
        for k, unit in enumerate(code.units):
            if getattr(unit, "op", None) is not None and code.constant_class(k) in ("other", None):
                read |= {s.value for i in unit.op.instrs for s in i.srcs if type(s).__name__ == "Const"
                         and s.value not in code.in_registers and i in timing.live_instructions(
                             unit.op.instrs, code.needed(unit))}
        by_hand += 8 * len(read)
    by_hand += 4 * (len(overlaid.index_rows) * h2o2.programs.warps + len(overlaid.loop_ints))
    assert timing.bank_footprint(codes, overlaid) == by_hand


def test_fetch_cycles_are_the_probes_by_code_size_and_sharing():
    """The fetch probe on the H200 (H100 preset): a warp running its own 16 KB of code issues one instruction per
    8 / 0.453 cycles, its own 32 KB one per 8 / 0.388; warps sharing 256 KB one per 8 / 1.325.  Below the
    sizes measured, and on the A100 preset (unmeasured), no floor."""
    from singe.timing import fetch_cycles

    assert fetch_cycles(H100, 16 * 1024, False) == pytest.approx(8 / 0.453)
    assert fetch_cycles(H100, 40 * 1024, False) == pytest.approx(8 / 0.388)
    assert fetch_cycles(H100, 8 * 1024, False) == 1.0
    assert fetch_cycles(H100, 256 * 1024, True) == pytest.approx(8 / 1.325)
    assert fetch_cycles(H100, 100 * 1024, True) == 1.0
    assert fetch_cycles(A100, 64 * 1024, False) == fetch_cycles(A100, 256 * 1024, True) == 1.0


def test_warps_running_their_own_code_wait_for_its_fetch():
    """DME chemistry at the paper's 8 x 2 (one switch case per warp, ~47 KB each): on the H100 preset each warp
    issues at most one instruction per 20.6 cycles, which bounds it (measured on the H200: 216.1 Mpoints/s;
    modeled without the floor 3.0x that, with it 0.81x).  Companion: the preset without the measurement models
    it faster.  DME viscosity (the overlay: code the warps share, within the instruction cache) is unchanged."""
    unmeasured = dataclasses.replace(H100, unshared_fetch=(), shared_fetch=1.0)
    chemistry = compile_kernel(load("dme"), "chemistry", warps=8, qssa_warps=4, ctas_per_sm=2, arch="sm_90")
    fetched, free = model(chemistry, H100), model(chemistry, unmeasured)
    assert fetched.points_per_second < 0.5 * free.points_per_second
    assert 150e6 < fetched.points_per_second < 300e6
    viscosity = compile_kernel(load("dme"), "viscosity", warps=15, ctas_per_sm=3, arch="sm_90")
    assert model(viscosity, H100).points_per_second == model(viscosity, unmeasured).points_per_second


def test_speedup_script_models_conductivity_without_a_paper_range(capsys):
    """Conductivity, which the paper did not measure, is modeled at the defaults with '-' for its range (it
    stopped the script with a KeyError before)."""
    from autotune import speedup

    assert speedup.main(["--mechanisms", "h2o2", "--kernels", "conductivity", "--presets", "A100",
                         "--settings", "defaults"]) == 0
    (row,) = [line.split() for line in capsys.readouterr().out.splitlines() if line.startswith("A100   h2o2")]
    assert row[2] == "conductivity" and row[7] == "-" and float(row[6]) > 0


@pytest.mark.parametrize("arguments,message", [
    (["--kernels", "visc"], "argument --kernels: no kernel 'visc' (singe's kernels: viscosity, diffusion, chemistry"),
    (["--presets", "H200"], "--presets: no preset 'H200' (the model's: K20c, A100, H100)"),
    (["--mechanisms", "h2o2"], "the paper set no warps or CTAs for h2o2 viscosity, h2o2 diffusion, h2o2 chemistry"),
    (["--kernels", "conductivity"], "the paper set no warps or CTAs for dme conductivity, heptane conductivity")])
def test_speedup_script_refuses_what_it_cannot_model(arguments, message, capsys):
    """A kernel or preset that does not exist, or the paper's settings of a kernel the paper did not set: a usage
    error naming it, before anything compiles (a KeyError's traceback before)."""
    from autotune import speedup

    with pytest.raises(SystemExit) as stop:
        speedup.main(arguments)
    assert stop.value.code == 2 and message in capsys.readouterr().err


@pytest.mark.parametrize("script", ["gpu_bench", "spills"])
def test_the_benchmark_scripts_name_a_kernel_that_does_not_exist(script):
    """``--kernels`` of gpu_bench and spills is checked as bench's and speedup's are (``bench.kernel_names``): a
    usage error, where they stopped with a KeyError or an OptionError's traceback."""
    import subprocess
    import sys

    done = subprocess.run([sys.executable, "-m", f"autotune.{script}", "--mechanisms", "h2o2", "--kernels",
                           "viscosity,visc"], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert "argument --kernels: no kernel 'visc' (singe's kernels: viscosity, diffusion" in done.stderr


def test_bench_rows_conductivity_and_refuses_an_unknown_kernel(capsys):
    """``autotune.bench`` benches conductivity at the command's 8 warps (its --config had no entry: a KeyError
    before), with '-' for the paper's range; an unknown kernel in --kernels or --config is a usage error."""
    from autotune import bench

    assert bench.main(["--mechanisms", "h2o2", "--kernels", "conductivity", "--points", "32", "--gpu-bench", ""]) == 0
    rows = [line.split() for line in capsys.readouterr().out.splitlines() if line.startswith("h2o2      conductivity")]
    assert rows[0][2] == "8x2" and rows[1][7] == "-"  # the paper's speedups: none
    for arguments, message in ((["--kernels", "visc"], "argument --kernels: no kernel 'visc'"),
                               (["--config", "visc=8"], "argument --config: no kernel 'visc'")):
        with pytest.raises(SystemExit) as stop:
            bench.main(["--mechanisms", "h2o2", *arguments])
        assert stop.value.code == 2 and message in capsys.readouterr().err


def test_speedup_script_says_which_kernel_a_mechanism_lacks(capsys):
    """A transport kernel of a mechanism without transport data (Cantera's Reitz n-dodecane): a line naming it,
    and no rows (exit 1)."""
    from autotune import speedup
    from cantera_reference import CANTERA_DATA

    reitz = str(CANTERA_DATA / "nDodecane_Reitz.yaml")
    assert speedup.main(["--mechanisms", reitz, "--kernels", "viscosity", "--presets", "A100",
                         "--settings", "defaults"]) == 1
    assert f"{reitz} viscosity (A100): " in capsys.readouterr().err


def test_speedup_script_models_the_defaults_and_a_given_wilke_group(capsys, tmp_path):
    """``autotune.speedup --settings defaults``: 8 warps, the CTAs chosen, the kernel's Wilke group or the one
    given; the measured pairs are the paper's settings', so ``--measured`` with the defaults is refused."""
    from autotune import speedup

    rows_path = tmp_path / "rows.json"
    speedup.main(["--mechanisms", "h2o2", "--kernels", "viscosity", "--presets", "H100", "--settings", "defaults",
                  "--wilke-group", "3", "--json", str(rows_path)])
    out = capsys.readouterr().out
    assert "at the command's defaults" in out
    (row,) = json.loads(rows_path.read_text())
    assert (row["setting"], row["warps"], row["wilke_group"]) == ("defaults", 8, 3) and row["ctas_per_sm"] >= 1
    assert f"8x{row['ctas_per_sm']}g3" in out and row["speedup"] > 0
    # the speedup is against the tuned baseline (H2/O2's 9 species in groups of 8 and 1), the baseline of the
    # kernel's own groups of 3 modeled beside it for the runs that measured that one
    tuned, own = row["baseline"]["points_per_second"], row["own_graph_baseline"]["points_per_second"]
    assert tuned > own and row["speedup"] == pytest.approx(row["ws"]["points_per_second"] / tuned)
    with pytest.raises(SystemExit):
        speedup.main(["--mechanisms", "h2o2", "--settings", "defaults", "--measured", str(rows_path)])
    assert "--measured pairs the model with measurements at the paper's settings" in capsys.readouterr().err


def test_speedup_script_models_the_guarded_products(tmp_path):
    """``autotune.speedup --products cantera`` models the chemistry kernel with Cantera's sign guard: H2/O2's at
    the defaults takes longer a slab than with the default products (the rows model different kernels)."""
    from autotune import speedup
    from singe.derived.rates import PRODUCTS

    cycles = {}
    for products in PRODUCTS:
        path = tmp_path / f"{products}.json"
        assert speedup.main(["--mechanisms", "h2o2", "--kernels", "chemistry", "--presets", "H100",
                             "--settings", "defaults", "--products", products, "--json", str(path)]) == 0
        (row,) = json.loads(path.read_text())
        cycles[products] = row["ws"]["cycles_per_slab"]
    assert cycles["cantera"] > cycles["chemkin"]
