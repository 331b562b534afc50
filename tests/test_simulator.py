"""The warp simulator on small hand-built warp programs.

Every hazard test comes with its correct twin (same programs with the barrier
in place), so a check that always fires, or never does, fails here.
Reference outputs are numpy expressions; tolerance rtol=1e-14 (the simulator's
fma rounds twice, numpy's reference too).
"""

from __future__ import annotations

import time
import warnings
from collections import Counter

import numpy as np
import pytest

from singe.errors import SingeInternalError
from singe.kernels.ir import OPCODES, Const, Imm, Instr, Operation, Reg
from singe.programs import (Arrive, Compute, FullSync, SharedLoad, SharedStore, Sync, SyncPoint,
                            WarpProgram, WarpPrograms)
from singe.sim import ARITHMETIC, SimulationError, simulate
from singe.sim.machine import GlobalMemory, decode_operation, run_code

RTOL = 1e-14
SEEDS = range(12)


# --------------------------------------------------------------------------- builders (shared with
# test_schedule_check)

def op(name: str, instrs, inputs=(), outputs=()) -> Operation:
    """An operation of the test kind."""
    return Operation(name, "test", tuple(instrs), tuple(inputs), tuple(outputs))


def make_programs(warps: list[list], points=(), slots: int = 2, limit: int = 16) -> WarpPrograms:
    """WarpPrograms from per-warp item lists."""
    programs = tuple(WarpProgram(w, tuple(items)) for w, items in enumerate(warps))
    return WarpPrograms("test", "toy", len(warps), programs, tuple(points), slots, limit)


def temperatures(n: int) -> np.ndarray:
    """(1, n) temperatures in K, distinct per point."""
    return np.linspace(300.0, 2500.0, n).reshape(1, n)


#: x = 2 T
PRODUCE_X = op("produce_x", [Instr("ldg", "t", (), "temperature", 0),
                             Instr("mul", "x", (Reg("t"), Imm(2.0)))], outputs=("x",))
#: viscosity[0] = 3 x + 1 (two constants: two shuffles)
CONSUME_X = op("consume_x", [Instr("fma", "y", (Reg("x"), Const(3.0), Const(1.0))),
                             Instr("stg", None, (Reg("y"),), "viscosity", 0)], inputs=("x",))


def pipeline(barrier: bool = True, full_sync: bool = False) -> WarpPrograms:
    """Warp 0: x = 2T, store x, arrive; warp 1: sync, load x, stg 3x + 1."""
    arrive = [Arrive(1, 64, 1, ("x",))] if barrier else []
    sync = [Sync(1, 64, 1, ("x",))] if barrier else []
    tail = [FullSync("end of slab")] if full_sync else []
    warps = [[Compute(PRODUCE_X), SharedStore("x", 0), *arrive, *tail],
             [*sync, SharedLoad("x", 0), Compute(CONSUME_X), *tail]]
    points = [SyncPoint(1, 1, (0,), (1,), ("x",))] if barrier else []
    return make_programs(warps, points, slots=1)


def stg(name: str, value: str, index: int) -> Operation:
    """viscosity[index] = value."""
    return op(name, [Instr("stg", None, (Reg(value),), "viscosity", index)], inputs=(value,))


def ping_pong(full_sync: bool = False) -> WarpPrograms:
    """Barrier 1 reused safely: x 0->1 (point 1, id 1), y = x^2 1->0 (point 2, id 2),
    z = y + x 0->1 (point 3, id 1, reusing slot 0 after warp 1 read x)."""
    tail = [FullSync("end of slab")] if full_sync else []
    square = op("square", [Instr("mul", "y", (Reg("x"), Reg("x")))], ("x",), ("y",))
    add = op("add", [Instr("add", "z", (Reg("y"), Reg("x")))], ("x", "y"), ("z",))
    warps = [[Compute(PRODUCE_X), SharedStore("x", 0), Arrive(1, 64, 1, ("x",)), Sync(2, 64, 2, ("y",)),
              SharedLoad("y", 1), Compute(add), SharedStore("z", 0), Arrive(1, 64, 3, ("z",)), *tail],
             [Sync(1, 64, 1, ("x",)), SharedLoad("x", 0), Compute(square), SharedStore("y", 1),
              Arrive(2, 64, 2, ("y", "x")), Sync(1, 64, 3, ("z",)), SharedLoad("z", 0), Compute(stg("out", "z", 0)),
              *tail]]
    points = [SyncPoint(1, 1, (0,), (1,), ("x",)), SyncPoint(2, 2, (1,), (0,), ("y", "x")),
              SyncPoint(3, 1, (0,), (1,), ("z",))]
    return make_programs(warps, points)


def fast_producer() -> WarpPrograms:
    """Barrier 1 reused unsafely: warp 0 sends x to warp 1 (point 1) and y = x + 1 to
    warp 2 (point 2) on the same id; nothing stops its second arrive from joining
    the first generation."""
    plus = op("plus", [Instr("add", "y", (Reg("x"), Imm(1.0)))], ("x",), ("y",))
    warps = [[Compute(PRODUCE_X), SharedStore("x", 0), Arrive(1, 64, 1, ("x",)), Compute(plus),
              SharedStore("y", 1), Arrive(1, 64, 2, ("y",))],
             [Sync(1, 64, 1, ("x",)), SharedLoad("x", 0), Compute(stg("out_x", "x", 0))],
             [Sync(1, 64, 2, ("y",)), SharedLoad("y", 1), Compute(stg("out_y", "y", 1))]]
    points = [SyncPoint(1, 1, (0,), (1,), ("x",)), SyncPoint(2, 1, (0,), (2,), ("y",))]
    return make_programs(warps, points)


def crossed() -> WarpPrograms:
    """Each warp first waits for what the other sends after its own wait: a deadlock."""
    warps = [[Sync(2, 64, 2, ("b",)), Arrive(1, 64, 1, ("a",))],
             [Sync(1, 64, 1, ("a",)), Arrive(2, 64, 2, ("b",))]]
    points = [SyncPoint(1, 1, (0,), (1,), ("a",)), SyncPoint(2, 2, (1,), (0,), ("b",))]
    return make_programs(warps, points)


def kinds(hazards) -> set[str]:
    return {h.kind for h in hazards}


# --------------------------------------------------------------------------- opcodes

def all_opcodes_op() -> Operation:
    """One operation using every opcode of OPCODES, writing viscosity[0..11]."""
    a, b, c = Reg("a"), Reg("b"), Reg("c")
    body = [Instr("ldg", "a", (), "mass_fractions", 0), Instr("ldg", "b", (), "mass_fractions", 1),
            Instr("ldg", "c", (), "temperature", 0),
            Instr("mov", "r0", (a,)), Instr("add", "r1", (a, b)), Instr("sub", "r2", (a, Const(0.5))),
            Instr("mul", "r3", (a, b)), Instr("fma", "r4", (a, b, c)), Instr("div", "r5", (a, b)),
            Instr("rcp", "r6", (b,)), Instr("max", "r7", (a, Imm(0.1))), Instr("min", "r8", (a, Imm(0.25))),
            Instr("exp", "r9", (a,)), Instr("log", "r10", (b,)), Instr("sqrt", "r11", (b,))]
    body += [Instr("stg", None, (Reg(f"r{k}"),), "viscosity", k) for k in range(12)]
    return op("all", body)


def test_every_opcode_matches_numpy_without_warnings():
    rng = np.random.default_rng(1)
    n = 70
    y = rng.uniform(-2.0, 2.0, (2, n))
    y[1, :5] = [0.0, -1.0, 0.0, 2.0, -0.5]  # 1/0, log(-1), sqrt(-1): no warnings, IEEE results
    t = rng.uniform(300.0, 3000.0, (1, n))
    programs = make_programs([[Compute(all_opcodes_op())]])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        out = simulate(programs, {"mass_fractions": y, "temperature": t}, n).outputs["viscosity"]
    a, b, c = y[0], y[1], t[0]
    with np.errstate(all="ignore"):
        expected = [a, a + b, a - 0.5, a * b, a * b + c, a / b, 1 / b, np.maximum(a, 0.1),
                    np.minimum(a, 0.25), np.exp(a), np.log(b), np.sqrt(b)]
    assert set(ARITHMETIC) | {"ldg", "stg"} == set(OPCODES)
    for k, e in enumerate(expected):
        np.testing.assert_allclose(out[k], e, rtol=RTOL, equal_nan=True, err_msg=f"viscosity[{k}]")
    with pytest.raises(AssertionError):  # the comparison does see a wrong row
        np.testing.assert_allclose(out[1], expected[2], rtol=RTOL)


def test_operation_keeps_only_its_outputs_in_registers():
    """Temporaries are dropped at their last read (memory O(live values x points))."""
    x = Reg("x")
    body = [Instr("mul", "t1", (x, x)), Instr("add", "t2", (Reg("t1"), Reg("t1"))),
            Instr("mul", "dead", (x, Imm(3.0))), Instr("fma", "y", (Reg("t2"), x, Reg("t1")))]
    regs = {"x": np.arange(4.0)}
    run_code(decode_operation(op("o", body, ("x",), ("y",))), regs, GlobalMemory({}, {}))
    assert set(regs) == {"x", "y"}
    np.testing.assert_allclose(regs["y"], 2 * regs["x"] ** 3 + regs["x"] ** 2, rtol=RTOL)


# --------------------------------------------------------------------------- outputs

@pytest.mark.parametrize("n, slabs", [(1, 1), (50, 1), (50, 2), (200, 3)])
def test_pipeline_outputs_match_numpy(n, slabs):
    t = temperatures(n)
    result = simulate(pipeline(full_sync=slabs > 1), {"temperature": t}, n, slabs=slabs)
    assert result.outputs["viscosity"].shape == (1, n)
    np.testing.assert_allclose(result.outputs["viscosity"], 6.0 * t + 1.0, rtol=RTOL)
    assert not np.isnan(result.outputs["viscosity"]).any()  # padding did not leak into outputs
    assert result.hazards == []


def test_wrong_kernel_fails_the_comparison():
    wrong = op("consume_x", [Instr("fma", "y", (Reg("x"), Const(3.0), Const(1.5))),
                             Instr("stg", None, (Reg("y"),), "viscosity", 0)], inputs=("x",))
    programs = pipeline()
    warps = [list(programs.programs[0].items), [*programs.programs[1].items[:2], Compute(wrong)]]
    t = temperatures(40)
    out = simulate(make_programs(warps, programs.sync_points, slots=1), {"temperature": t}, 40).outputs
    assert not np.allclose(out["viscosity"], 6.0 * t + 1.0, rtol=RTOL)


def test_output_rows_come_from_stg_and_unwritten_rows_stay_nan():
    result = simulate(make_programs([[Compute(PRODUCE_X), Compute(stg("s", "x", 2))]]),
                      {"temperature": temperatures(33)}, 33)
    out = result.outputs["viscosity"]
    assert out.shape == (3, 33)
    assert np.isnan(out[:2]).all()
    np.testing.assert_allclose(out[2], 2.0 * temperatures(33)[0], rtol=RTOL)


def test_missing_or_misshapen_input_is_an_internal_error():
    with pytest.raises(SingeInternalError, match="temperature"):
        simulate(pipeline(), {}, 10)
    with pytest.raises(SingeInternalError, match="shape"):
        simulate(pipeline(), {"temperature": np.ones((1, 9))}, 10)


def test_ping_pong_reuses_a_barrier_and_a_slot_safely():
    t = temperatures(100)
    x = 2.0 * t[0]
    for seed in SEEDS:
        result = simulate(ping_pong(full_sync=True), {"temperature": t}, 100, schedule="random", seed=seed,
                          slabs=2)
        np.testing.assert_allclose(result.outputs["viscosity"][0], x * x + x, rtol=RTOL)


# --------------------------------------------------------------------------- races

def test_removed_barrier_is_reported_under_every_random_schedule():
    seen = set()
    for seed in SEEDS:
        result = simulate(pipeline(barrier=False), {"temperature": temperatures(64)}, 64,
                          schedule="random", seed=seed, strict=False)
        assert kinds(result.hazards) & {"race", "uninitialized"}, seed
        seen |= kinds(result.hazards)
        clean = simulate(pipeline(), {"temperature": temperatures(64)}, 64, schedule="random", seed=seed)
        assert clean.hazards == []
    assert seen == {"race", "uninitialized"}  # loads before and after the unordered store both occur
    race = next(h for seed in SEEDS for h in simulate(pipeline(barrier=False), {"temperature": temperatures(64)},
                                                       64, schedule="random", seed=seed, strict=False).hazards
                if h.kind == "race" and h.message.startswith("ld.shared"))
    assert race.slot == 0 and race.values == ("x", "x") and race.warps == (1, 0) and race.items == (0, 1)
    assert "ld.shared x <- [0] by warp 1 item 0 (slab 0) is not ordered after st.shared [0] <- x " \
           "by warp 0 item 1 (slab 0)" in race.message


def test_strict_raises_simulation_error_with_hazards():
    with pytest.raises(SimulationError) as caught:
        simulate(pipeline(barrier=False), {"temperature": temperatures(8)}, 8)
    assert isinstance(caught.value, SingeInternalError)
    assert kinds(caught.value.hazards) & {"race", "uninitialized"}
    assert "hazard" in str(caught.value)


def test_cross_slab_write_after_read_needs_the_trailing_full_sync():
    t = {"temperature": temperatures(64)}
    result = simulate(pipeline(), t, 64, slabs=2, strict=False)
    war = [h for h in result.hazards if h.kind == "race" and "write after read" in h.message]
    assert war and war[0].slot == 0 and war[0].slab == 1 and war[0].warps == (0, 1)
    assert simulate(pipeline(), t, 64, slabs=1).hazards == []  # one slab: nothing to overwrite
    for seed in SEEDS:
        assert simulate(pipeline(full_sync=True), t, 64, slabs=2, schedule="random", seed=seed).hazards == []


def test_unordered_stores_to_one_slot_are_write_after_write():
    other = op("other", [Instr("mov", "w", (Imm(5.0),))], (), ("w",))
    racy = make_programs([[Compute(PRODUCE_X), SharedStore("x", 0)], [Compute(other), SharedStore("w", 0)]])
    result = simulate(racy, {"temperature": temperatures(32)}, 32, strict=False)
    (hazard,) = result.hazards
    assert hazard.kind == "race" and "(write after write)" in hazard.message and hazard.values == ("w", "x")
    ordered = make_programs([[Compute(PRODUCE_X), SharedStore("x", 0), Arrive(1, 64, 1)],
                             [Compute(other), Sync(1, 64, 1), SharedStore("w", 0)]])
    for seed in SEEDS:
        assert simulate(ordered, {"temperature": temperatures(32)}, 32, schedule="random", seed=seed).hazards == []


def test_load_of_the_previous_slabs_value_is_a_race():
    """Warp 1 loads x before its sync: in slab 1 it gets slab 0's x, ordered by the FullSync."""
    warps = [[Compute(PRODUCE_X), SharedStore("x", 0), Arrive(1, 64, 1, ("x",)), FullSync()],
             [SharedLoad("x", 0), Sync(1, 64, 1, ("x",)), Compute(CONSUME_X), FullSync()]]
    result = simulate(make_programs(warps, slots=1), {"temperature": temperatures(64)}, 64, slabs=2, strict=False)
    stale = [h for h in result.hazards if "of another slab" in h.message]
    assert stale and stale[0].slab == 1 and stale[0].warps == (1, 0)
    assert "ld.shared x <- [0] by warp 1 item 0 (slab 1) reads the x of another slab, from st.shared [0] <- x " \
           "by warp 0 item 1 (slab 0)" in stale[0].message


def test_register_read_before_written_stops_with_misuse():
    programs = make_programs([[Compute(CONSUME_X)]])
    result = simulate(programs, {}, 4, strict=False)
    assert kinds(result.hazards) == {"misuse"}
    assert "reads register %x" in result.hazards[0].message


# --------------------------------------------------------------------------- barriers

def test_crossed_barriers_deadlock_is_reported_not_hung():
    result = simulate(crossed(), {}, 32, strict=False)
    (hazard,) = result.hazards
    assert hazard.kind == "deadlock" and hazard.barriers == (1, 2) and hazard.warps == (0, 1)
    assert "warp 0 waits at item 0 (slab 0) on barrier 2: 32 of 64 threads arrived (warp 0 item 0)" \
        in hazard.message
    assert "warp 1 waits at item 0 (slab 0) on barrier 1" in hazard.message
    with pytest.raises(SimulationError, match="deadlock"):
        simulate(crossed(), {}, 32, schedule="random", seed=3)


def test_arrive_twice_in_one_generation_is_misuse():
    slow = op("slow", [Instr("mov", "w", (Imm(1.0),))], (), ("w",))
    warps = [[Arrive(1, 64, 1), Arrive(1, 64, 2)],
             [Compute(slow), Sync(1, 64, 1), Sync(1, 64, 2)]]
    points = [SyncPoint(1, 1, (0,), (1,)), SyncPoint(2, 1, (0,), (1,))]
    result = simulate(make_programs(warps, points), {}, 32, strict=False)  # round-robin: 0, 1, 0, ...
    twice = [h for h in result.hazards if h.kind == "misuse" and "counted twice" in h.message]
    assert twice and twice[0].warps == (0, 0) and twice[0].items == (1, 0) and twice[0].barriers == (1,)
    prompt = [[Arrive(1, 64, 1), Arrive(1, 64, 2)], [Sync(1, 64, 1), Sync(1, 64, 2)]]
    assert simulate(make_programs(prompt, points), {}, 32).hazards == []  # alternation keeps them apart


@pytest.mark.parametrize("threads, message", [(96, "counts 96 threads on barrier 1, but its current "
                                                    "generation expects 64"),
                                               (48, "not a positive multiple of 32"),
                                               (128, "within the CTA's 64")])
def test_bad_thread_counts_are_misuse(threads, message):
    warps = [[Arrive(1, 64, 1)], [Sync(1, threads, 1)]]
    result = simulate(make_programs(warps), {}, 32, strict=False)
    assert any(h.kind == "misuse" and message in h.message for h in result.hazards), result.hazards
    assert simulate(make_programs([[Arrive(1, 64, 1)], [Sync(1, 64, 1)]]), {}, 32).hazards == []


def test_unsafe_barrier_reuse_shows_under_some_random_schedule():
    found = [kinds(simulate(fast_producer(), {"temperature": temperatures(32)}, 32, schedule="random",
                            seed=seed, strict=False).hazards) for seed in range(40)]
    assert any(found)
    assert set().union(*found) <= {"misuse", "race", "uninitialized", "deadlock"}


def test_generation_left_incomplete_is_misuse():
    result = simulate(make_programs([[Arrive(1, 64, 1)], []]), {}, 32, strict=False)
    assert [h.kind for h in result.hazards] == ["misuse"]
    assert "incomplete generation" in result.hazards[0].message


# --------------------------------------------------------------------------- counts

def test_counts_are_exact_per_warp_and_per_slab():
    for slabs in (1, 3):
        result = simulate(pipeline(full_sync=True), {"temperature": temperatures(200)}, 200, slabs=slabs)
        assert result.counts[0] == Counter(global_load=1, dmul=1, shared_store=1, arrive=1, full_sync=1)
        assert result.counts[1] == Counter(sync=1, shared_load=1, dfma=1, shuffle=2, global_store=1,
                                           full_sync=1)
        assert result.steps == 8 * slabs


# --------------------------------------------------------------------------- speed

def big_programs(warps: int = 8, items: int = 250, instrs: int = 75) -> WarpPrograms:
    """A chain: every warp computes, then passes a value to the next warp through shared
    memory each round (stores, arrives, syncs, loads); ~warps*items items."""
    rounds = items // 5
    programs: list[list] = [[] for _ in range(warps)]
    points = []
    for w in range(warps):
        programs[w].append(Compute(op(f"seed{w}", [Instr("ldg", f"v{w}.0", (), "temperature", 0)],
                                      (), (f"v{w}.0",))))
    for r in range(rounds):
        for w in range(warps):
            src = f"v{w}.{r}"
            body, prev = [], src
            for k in range(instrs - 1):
                body.append(Instr("fma", f"v{w}.{r}.{k}", (Reg(prev), Const(0.999), Const(1e-3))))
                prev = f"v{w}.{r}.{k}"
            body.append(Instr("mul", f"v{w}.{r + 1}", (Reg(prev), Imm(1.0))))
            programs[w].append(Compute(op(f"c{w}.{r}", body, (src,), (f"v{w}.{r + 1}",))))
        number = len(points) + 1
        points.append(SyncPoint(number, 1 + r % 15, tuple(range(warps)), tuple(range(warps))))
        for w in range(warps):
            programs[w] += [SharedStore(f"v{w}.{r + 1}", w), Sync(1 + r % 15, 32 * warps, number),
                            SharedLoad(f"v{(w + 1) % warps}.{r + 1}", (w + 1) % warps),
                            FullSync("slot reuse")]
    for w in range(warps):
        programs[w].append(Compute(stg(f"out{w}", f"v{(w + 1) % warps}.{rounds}", w)))
    return make_programs(programs, points, slots=warps)


def test_large_program_runs_every_item():
    """Every item of a 2000-item program runs once (speed: autotune/bench_compiler.py)."""
    programs = big_programs()
    n_items = sum(len(p.items) for p in programs.programs)
    n_instrs = sum(len(op.instrs) for p in programs.programs for op in p.computes())
    assert n_items >= 2000 and n_instrs >= 30000
    result = simulate(programs, {"temperature": temperatures(4096)}, 4096, schedule="random")
    assert result.steps == n_items
