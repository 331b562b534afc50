"""Loops over per-warp constant tables (programs/lowering.find_loops, codegen/render).

The lowering finds the isomorphic runs of an operation's instructions; the
emitted loops run on the host against singe.reference (1e-9 relative, as
tests/test_host_runtime.py) and give the unrolled kernel's results; a wrong
entry of a loop's constant block or integer table, or a wrong trip count,
is caught by the same comparison.
"""

from __future__ import annotations

import dataclasses
import functools
import re

import numpy as np
import pytest

from singe import host
from singe.codegen import generate
from singe.codegen.nvcc import compile_cuda, find_nvcc
from singe.codegen.overlay import _Constants
from singe.compiler import compile_kernel
from singe.kernels.transport import MAX_WILKE_GROUP, WILKE_GROUP, balanced_wilke_group, wilke_groups, wilke_op
from singe.codegen.render import READ, render_unit
from singe.kernels.ir import Const, Imm, InstrBuilder, Operation, Reg
from singe.programs.lowering import (FULL_UNROLL_ITERATIONS, LOOP_UNROLL, ComputeUnit, Loop, LoopSummary,
                                     evaluates_exp, find_loops, invariant_loads, invariant_reads, loop_summary,
                                     program_units)
from singe.reference import transport as reference
from singe.derived.transport import fit_transport
from conftest import load
from cantera_reference import random_states

TOLERANCE = 1e-9  # relative, worst output and point (tests/test_host_runtime.py)
WEIGHTS = np.array([2.016, 1.008, 15.999, 31.998, 17.007, 18.015, 33.006, 34.014, 39.95, 28.014])


def wilke_unit(k: int, in_registers=()) -> ComputeUnit:
    """Wilke operation k of 10 species, every input read from shared memory except ``in_registers``."""
    op = wilke_op(k, WEIGHTS)
    loads = {v: slot for slot, v in enumerate(op.inputs) if v not in in_registers and v != f"r{k}"}
    return ComputeUnit(op, loads, {}, frozenset({f"term{k}"}))


def test_wilke_sum_is_one_loop():
    """The first pair starts the sum (a multiply), the other nine are one loop of
    three instructions whose running sum (position 2) is carried, set from the first pair's."""
    unit = wilke_unit(2)
    assert unit.loops == [Loop(start=3, period=3, count=9, carried=((2, 2),))]
    body = unit.loops[0].iteration(unit.instructions, 0)
    assert [i.opcode for i in body] == ["fma", "mul", "fma"]


def test_a_register_input_splits_the_run():
    """p5 in a register cannot be indexed by the loop counter: the pairs before
    and after it become two loops (the pair itself stays unrolled)."""
    unit = wilke_unit(2, in_registers=("p5",))
    assert [(loop.start, loop.count) for loop in unit.loops] == [(3, 4), (18, 4)]
    assert all(loop.period == 3 for loop in unit.loops)


def test_short_runs_stay_unrolled():
    op = wilke_op(0, WEIGHTS[:3])
    unit = ComputeUnit(op, {v: s for s, v in enumerate(op.inputs) if v != "r0"}, {}, frozenset({"term0"}))
    assert find_loops(unit, unit.instructions) == []


# -- the emitted loops on the host -------------------------------------------------------------

@functools.lru_cache(maxsize=None)
def states(name: str = "dme"):
    mech = load(name)
    fits = fit_transport(mech)
    return random_states(32, len(mech.transported_species), 3, T_range=(fits.T_min, min(fits.T_max, 3000.0)))


@functools.lru_cache(maxsize=None)
def compiled(kernel: str, warps: int = 4, name: str = "dme"):
    return compile_kernel(load(name), kernel, warps=warps)


def run(generated, name: str = "dme") -> np.ndarray:
    T, P, Y = states(name)
    source = host.kernel_source(generated)
    fields, n = host.compiled_fields(source, T, P, Y)
    return next(iter(host.run_host(generated, fields, n).values()))


def truth(kernel: str, name: str = "dme") -> np.ndarray:
    rule = reference.viscosity if kernel == "viscosity" else reference.mixture_diffusion
    T, P, Y = states(name)
    return np.atleast_2d(rule(load(name), T, P, Y))


def worst(ours: np.ndarray, kernel: str, name: str = "dme") -> float:
    return float(np.max(np.abs(ours - truth(kernel, name)) / np.abs(truth(kernel, name))))


@pytest.mark.parametrize("name, kernel, warps", [("dme", "viscosity", 4), ("heptane", "viscosity", 2),
                                                ("dme", "diffusion", 4)])
def test_rolled_kernels_match_reference_and_unrolled(name, kernel, warps):
    """Loops agree with singe.reference and with the unrolled kernel; n-heptane viscosity at 2 warps
    (its Wilke loops too long to unroll completely) reads the integer table of slots that are no
    progression, the others none (DME viscosity's loops are unrolled completely, their columns
    literals; diffusion's regrouping lays the mole fractions and row sums out in species order:
    every loop's slots are a progression)."""
    rolled = generate(compiled(kernel, warps, name))
    assert rolled.info.loops > 0
    assert (rolled.info.loop_ints > 0) == (name == "heptane")
    ours = run(rolled, name)
    assert worst(ours, kernel, name) <= TOLERANCE
    unrolled = run(generate(compiled(kernel, warps, name), roll=False), name)
    assert float(np.max(np.abs(ours - unrolled) / np.abs(unrolled))) <= 1e-13


def test_wrong_constant_in_a_loop_block_is_caught(monkeypatch):
    """One constant of each loop's block off by 1 %: the comparison fails."""
    original = _Constants.block

    def perturbed(self, values, *align):
        wrong = {w: v[:-1] + (v[-1] * 1.01,) for w, v in values.items()}
        return original(self, wrong, *align)

    monkeypatch.setattr(_Constants, "block", perturbed)
    assert worst(run(generate(compiled("viscosity"))), "viscosity") > 1e-4


@pytest.mark.parametrize("name, kernel, warps", [("heptane", "viscosity", 2), ("dme", "diffusion", 4)])
def test_wrong_loop_table_entry_or_trip_count_is_caught(name, kernel, warps):
    """A shared slot of the loop table moved by one (n-heptane viscosity at 2 warps), or one iteration
    fewer: the comparison fails."""
    generated = generate(compiled(kernel, warps, name))
    short = re.sub(r"i < (\d+); i\+\+", lambda m: f"i < {int(m.group(1)) - 1}; i++", generated.cu, count=1)
    broken = [short]
    table = re.search(r"singe_loop_ints\[\d+\] = \{\n  (\d+),", generated.cu)
    if table:
        broken.append(generated.cu.replace(table.group(0), table.group(0)[:-len(table.group(1)) - 1]
                                           + f"{int(table.group(1)) + 1},", 1))
    assert len(broken) == 1 + (name == "heptane")
    for cu in broken:
        ours = run(dataclasses.replace(generated, cu=cu), name)
        assert not np.all(np.isfinite(ours)) or worst(ours, kernel, name) > 1e-6


def test_loop_summary_counts_what_is_emitted():
    """The Wilke loop: 9 iterations of 3 instructions, one constant load and two
    affine shared slots (p_j, q_j) per iteration, the running sum carried;
    unrolled completely (no trips)."""
    unit = wilke_unit(2)
    summary = loop_summary(unit, unit.loops[0])
    assert summary == LoopSummary(iterations=9, body=3, constant_loads=1, table_loads=0, affine_indices=2,
                                  hoisted_loads=0, invariant_reads=0, carried=1, trips=0, unroll=9)
    assert summary.unrolled
    text = generate_unit_text(unit)
    assert text.count(READ + "CONST_AT(") == summary.constant_loads
    assert text.count("* i)]") == summary.affine_indices and "for (int i = 0; i < 9;" in text
    assert "#pragma unroll\n" in text + "\n" and "#pragma unroll 2" not in text


def test_long_loops_keep_two_iterations_per_trip():
    """Past FULL_UNROLL_ITERATIONS iterations a loop is emitted LOOP_UNROLL iterations per trip."""
    weights = np.resize(WEIGHTS, FULL_UNROLL_ITERATIONS + 8)
    op = wilke_op(2, weights)
    unit = ComputeUnit(op, {v: s for s, v in enumerate(op.inputs) if v != "r2"}, {}, frozenset({"term2"}))
    summary = loop_summary(unit, unit.loops[0])
    assert summary.iterations == len(weights) - 1 and summary.unroll == LOOP_UNROLL and not summary.unrolled
    assert summary.trips == -(-summary.iterations // LOOP_UNROLL)
    assert f"#pragma unroll {LOOP_UNROLL}" in generate_unit_text(unit)


def test_grouped_wilke_operation_reads_each_inner_species_once_per_iteration():
    """Two outer species in one operation: one loop of 6 instructions per inner
    species, two running sums carried, reading p_j and q_j (each once per unit)."""
    op = wilke_op((2, 3), WEIGHTS)
    loads = {v: slot for slot, v in enumerate(op.inputs) if v not in ("r2", "r3")}
    unit = ComputeUnit(op, loads, {}, frozenset({"term2_3"}))
    assert [(loop.period, loop.count, len(loop.carried)) for loop in unit.loops] == [(6, 9, 2)]
    loop = unit.loops[0]
    for t in range(loop.count):
        read = {name for instr in loop.iteration(unit.instructions, t) for name in instr.registers_read()
                if name in unit.loads}
        assert read == {f"p{t + 1}", f"q{t + 1}"}


def generate_unit_text(unit: ComputeUnit) -> str:
    """The unit's CUDA as rendered, its placeholders (``READ``, ``$K0$``...) unfilled."""
    names = {f"r{k}": f"r{i}" for i, k in enumerate(unit.op.name.split("_")[1:])}
    return "\n".join(render_unit(unit, names, 128).lines)



def test_wilke_sums_are_grouped_in_pairs():
    """Pairs of outer species, in every mechanism (n-heptane's 52 too)."""
    assert wilke_groups(10)[:2] == [(0, 1), (2, 3)] and wilke_groups(7)[-1] == (6,)
    assert wilke_groups(52)[-1] == (50, 51) and len(wilke_groups(53)) == 27


def test_the_default_wilke_group_gives_each_warp_one_sum():
    """``balanced_wilke_group``: n-heptane's 52 species at the paper's 13 warps in groups of 4 (13 sums, one a
    warp), DME's 30 at 10 in groups of 3; where the warps do not divide the species, the groups of the slowest
    warp's least share (52 or 53 at the default 8 warps: 7, seven groups of 7 and one of the rest; DME's 30: 4);
    two sums a warp where one would be larger than ``MAX_WILKE_GROUP`` (52 at 4 warps: groups of 7, two a
    warp); pairs where a group would be smaller (30 at 15 or 30 warps, or no warps given).  The compiled
    kernel follows it, and a group given on the command line wins."""
    assert balanced_wilke_group(52, 13) == 4 and balanced_wilke_group(30, 10) == 3
    assert [balanced_wilke_group(n, w) for n, w in ((52, 8), (53, 8), (30, 8), (52, 4), (100, 8))] == [7, 7, 4, 7, 7]
    assert [balanced_wilke_group(n, w) for n, w in ((30, 15), (30, 30), (9, 8), (30, None))] == [WILKE_GROUP] * 4
    assert wilke_groups(52, warps=13) == [tuple(range(k, k + 4)) for k in range(0, 52, 4)]
    assert [len(g) for g in wilke_groups(53, warps=8)] == [7] * 7 + [4]
    assert len(wilke_groups(52, warps=4)) == 8 and len(wilke_groups(100, warps=8)) == 15
    for n in range(3, 120):  # no warp takes more than its least share of outer species, nor a group above the limit
        for warps in range(1, 33):
            groups = wilke_groups(n, warps=warps)
            sums_a_warp = -(-len(groups) // warps)
            assert max(map(len, groups)) <= MAX_WILKE_GROUP
            if max(map(len, groups)) > WILKE_GROUP:
                assert sums_a_warp * max(map(len, groups)) < -(-n // warps) + sums_a_warp, (n, warps)
    heptane = compile_kernel(load("heptane"), "viscosity", warps=13, ctas_per_sm=3)
    wilke = [op for op in heptane.graph.operations if op.name.startswith("wilke_")]
    assert len(wilke) == 13
    given = compile_kernel(load("heptane"), "viscosity", warps=13, ctas_per_sm=3, wilke_group=2)
    assert len([op for op in given.graph.operations if op.name.startswith("wilke_")]) == 26  # companion
    defaults = compile_kernel(load("dme"), "viscosity", warps=8)
    assert [op.name for op in defaults.graph.operations if op.name.startswith("wilke_")][-1] == "wilke_28_29"


def test_the_baseline_sums_in_groups_of_eight_whatever_the_warps():
    """``singe.baseline_kernel``: the data-parallel baseline of a viscosity kernel is built from its graph in Wilke
    groups of ``MAX_WILKE_GROUP`` (DME's 30 species: 8, 8, 8, 6), whatever groups balance the warp-specialized
    kernel's warps (pairs at the paper's 15 warps, 4 at the defaults) or the command gave; its options are the
    kernel's.  A kernel without baseline settings (chemistry), or the table form, is its own baseline."""
    from singe import baseline_kernel, generate_baseline

    mech = load("dme")
    for options in ({"warps": 15, "ctas_per_sm": 3}, {"warps": 8}, {"warps": 8, "wilke_group": 3}):
        compiled = compile_kernel(mech, "viscosity", **options)
        tuned = baseline_kernel(compiled)
        groups = [op.name for op in tuned.graph.operations if op.name.startswith("wilke_")]
        assert groups == ["wilke_" + "_".join(map(str, range(k, min(k + 8, 30)))) for k in (0, 8, 16, 24)]
        assert tuned.options is compiled.options and tuned.mechanism is mech
        assert len([op for op in compiled.graph.operations if op.name.startswith("wilke_")]) != 4  # companion
    assert "wilke_24_25_26_27_28_29" in generate_baseline(tuned).cu
    chemistry = compile_kernel(load("h2o2"), "chemistry", warps=4, ctas_per_sm=2)
    assert baseline_kernel(chemistry) is chemistry


def test_the_wilke_group_is_an_option():
    """--wilke-group N: runs of N outer species per Wilke operation, for any mechanism size."""
    from singe.kernels import build_graph
    from singe.errors import OptionError
    from singe.options import CompileOptions

    assert wilke_groups(10, 4) == [(0, 1, 2, 3), (4, 5, 6, 7), (8, 9)]
    assert wilke_groups(52, 1) == [(k,) for k in range(52)]
    wilke = [op for op in build_graph(load("dme"), "viscosity", CompileOptions(wilke_group=4)).operations
             if op.name.startswith("wilke_")]
    assert len(wilke) == 8 and wilke[0].name == "wilke_0_1_2_3"
    assert CompileOptions(wilke_group=4).key().endswith("-g4")
    with pytest.raises(OptionError, match="--wilke-group must be an integer from 1 to 8, got 9"):
        CompileOptions(wilke_group=9)


@pytest.mark.parametrize("group, table", [(4, "cache"), (3, "cache"), (4, "shared"), (3, "shared")])
def test_wider_wilke_groups_match_the_reference(group, table):
    """Four (two pairs of constants an iteration) and three outer species a group (no pairs), both
    constant tables: the emitted kernel against singe.reference at 8 warps, and a wrong constant of a
    loop block caught (``test_wrong_constant_in_a_loop_block_is_caught``)."""
    compiled = compile_kernel(load("dme"), "viscosity", warps=8, wilke_group=group, constant_table=table)
    generated = generate(compiled)
    assert (" = SINGE_CONST_PAIR(k" in generated.cu) == (table == "shared" and group % 2 == 0)
    assert worst(run(generated), "viscosity") <= TOLERANCE


def test_a_loop_unrolled_completely_is_fenced():
    """The fence goes right before a loop unrolled completely (the 9-iteration Wilke loop), and a loop
    kept at LOOP_UNROLL iterations per trip has none."""
    from singe.codegen.render import UNROLLED_LOOP_FENCE

    lines = [line.strip() for line in generate_unit_text(wilke_unit(2)).splitlines()]
    assert lines.count(UNROLLED_LOOP_FENCE) == 1
    assert lines[lines.index(UNROLLED_LOOP_FENCE) + 1] == "#pragma unroll"
    weights = np.resize(WEIGHTS, FULL_UNROLL_ITERATIONS + 8)
    op = wilke_op(2, weights)
    rolled = ComputeUnit(op, {v: s for s, v in enumerate(op.inputs) if v != "r2"}, {}, frozenset({"term2"}))
    assert UNROLLED_LOOP_FENCE not in generate_unit_text(rolled)


@pytest.mark.skipif(find_nvcc() is None, reason="nvcc (CUDA toolkit) not installed")
def test_the_fences_keep_ptxas_from_holding_every_inner_species(tmp_path):
    """DME viscosity at 8 warps x 4 CTAs (64 registers), sm_90: with the fences no spills; without
    them (the companion) the compilers carry p_j and q_j of every inner species from one Wilke loop to
    the next and ptxas spills."""
    from singe.codegen.render import UNROLLED_LOOP_FENCE

    generated = generate(compile_kernel(load("dme"), "viscosity", warps=8, ctas_per_sm=4, arch="sm_90"))
    fenced = compile_cuda(generated.write(tmp_path / "fenced")[0], "sm_90").entry(generated.name)
    bare = tmp_path / "bare" / generated.cu_name
    generated.write(bare.parent)
    bare.write_text(generated.cu.replace(UNROLLED_LOOP_FENCE, ""))
    stripped = compile_cuda(bare, "sm_90").entry(generated.name)
    assert fenced.spill_stores == 0, fenced
    assert stripped.spill_stores > 0, stripped


def test_columns_of_a_loop_unrolled_completely_are_literals():
    """A Wilke loop whose inner species sit in slots that are no progression: unrolled completely,
    its slots are local arrays of literals (immediate offsets in SASS), not loop-table reads."""
    from singe.codegen.render import UNROLLED_COLUMN

    op = wilke_op(2, WEIGHTS)
    slots = {v: s * s for s, v in enumerate(v for v in op.inputs if v != "r2")}  # 0, 1, 4, 9, ...
    unit = ComputeUnit(op, slots, {}, frozenset({"term2"}))
    assert loop_summary(unit, unit.loops[0]).unrolled
    text = generate_unit_text(unit)
    assert "singe_loop_ints" not in text
    p_slots = [slots[f"p{j}"] for j in range(1, 10)]
    assert f"{UNROLLED_COLUMN} u0[9] = {{{', '.join(map(str, p_slots))}}};" in text


def test_wrong_literal_of_an_unrolled_column_is_caught():
    """Companion (on the host, DME viscosity at 4 warps in Wilke pairs, whose slots are no progression; in
    the default groups of 8 they are): one slot of such an array moved by one, the viscosity departs from
    singe.reference."""
    generated = generate(compile_kernel(load("dme"), "viscosity", warps=4, wilke_group=2))
    array = re.search(r"constexpr int u0\[\d+\] = \{(\d+),", generated.cu)
    assert array, "no unrolled column of literals in the 4-warp DME viscosity kernel in pairs"
    moved = generated.cu.replace(array.group(0), array.group(0)[:-len(array.group(1)) - 1]
                                 + f"{int(array.group(1)) + 1},", 1)
    ours = run(dataclasses.replace(generated, cu=moved))
    assert not np.all(np.isfinite(ours)) or worst(ours, "viscosity") > 1e-6


# -- a loop that continues a running sum from a register input (lowering.carry_in) ----------

def running_sum_unit(first_reads_input: str = "acc") -> ComputeUnit:
    """sum_t (c_t x_t + 1) x_t continued from the register input c_in over 6 shared x_t:
    ``first_reads_input`` 'acc', the first iteration adds into c_in where the others add
    into the previous iteration's sum; 'scale', it reads c_in elsewhere (a factor)."""
    b = InstrBuilder("rs")
    total = Reg("c_in")
    for t in range(6):
        factor = Reg("c_in") if t == 0 and first_reads_input == "scale" else Const(0.5 + t)
        scaled = b.emit("mul", factor, Reg(f"x{t}"))
        term = b.emit("fma", scaled, Const(1.0 + t), Imm(1.0))
        total = b.emit("fma", term, Reg(f"x{t}"), Reg("c_in") if t == 0 and first_reads_input == "scale" else total)
    b.emit("mov", total, dst="out")
    op = Operation("running_sum", "turn", tuple(b.instrs), ("c_in",) + tuple(f"x{t}" for t in range(6)), ("out",))
    return ComputeUnit(op, {f"x{t}": t for t in range(6)}, {}, frozenset({"out"}))


def test_a_running_sum_from_a_register_input_is_one_loop():
    """All six iterations are one loop: the running sum (position 2) is carried, its
    variable set from the input c_in before the loop (iterations 2-6 alone were the
    loop before ``carry_in``); the emitted loop reads that variable, not c_in."""
    unit = running_sum_unit()
    assert unit.loops == [Loop(start=0, period=3, count=6, carried=((2, "c_in"),))]
    text = "\n".join(render_unit(unit, {"c_in": "r7"}, 128).lines)
    assert "double t0 = r7;" in text and text.count("r7") == 1


def test_a_register_input_read_otherwise_does_not_start_the_loop():
    """The companion: where the first iteration reads c_in as a factor (not as the sum it
    continues), it stays unrolled and the loop covers the five others."""
    unit = running_sum_unit("scale")
    assert [(loop.start, loop.count) for loop in unit.loops] == [(3, 5)]
    assert not any(isinstance(index, str) for loop in unit.loops for _, index in loop.carried)


def test_diffusion_turns_carry_their_column_sums_in():
    """DME diffusion at 10 warps: the turns' loops start at their first row, their column
    sums carried in from the last turn's registers; with them the kernel on the host
    matches the reference (``test_rolled_kernels_match_reference_and_unrolled``)."""
    programs = compiled("diffusion", 10).programs
    loops = [loop for p in programs.programs for unit in program_units(p) if isinstance(unit, ComputeUnit)
             for loop in unit.loops]
    assert loops and sum(any(isinstance(index, str) for _, index in loop.carried) for loop in loops) >= 10
    assert worst(run(generate(compiled("diffusion", 10))), "diffusion") <= TOLERANCE


def test_loops_over_exponentials_read_invariant_values_in_place():
    """A diffusion turn's loop (it evaluates exponentials) hoists none of its invariant
    shared reads (the mole fractions of the warp's columns), and the model counts them
    in every iteration; the Wilke loop evaluates no exponential."""
    programs = compiled("diffusion", 10).programs
    unit, loop = next((unit, loop) for p in programs.programs for unit in program_units(p)
                      if isinstance(unit, ComputeUnit) for loop in unit.loops)
    summary = loop_summary(unit, loop)
    assert evaluates_exp(unit, loop) and summary.hoisted_loads == 0 and summary.invariant_reads >= 2
    text = "\n".join(render_unit(unit, {v: f"r{i}" for i, v in enumerate(sorted(unit.reads()))}, 320).lines)
    assert not re.search(r"const double t\d+ = shared\[[^\]]*\]\[lane\];\n", text.split("for (")[0])
    assert invariant_reads(unit, loop) and not invariant_loads(unit, loop)
    wilke = wilke_unit(2, in_registers=())
    assert not evaluates_exp(wilke, wilke.loops[0])
