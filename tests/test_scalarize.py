"""Convergence, variance and affine analyses and scalarization (singe.analysis.scalarize).

References: CGO'13 "Convergence and Scalarization for Data-Parallel
Architectures" (papers/convergence-and-scalarization-cgo13.txt) -- the FIR
example of §2.3 / Figure 1 with its exact counts, the control dependences of
Figure 2, the early exit of §3.4; Pereira's divergence-analysis lecture
(papers/divergence-analysis-lecture.txt) -- its kernels and the uniform /
divergent answers its slides give; the control-flow lecture's warp-granularity
branch.  Expectations are exact (counts, sets).  Every classification is also
checked at run time: the program runs in ``singe.analysis.program.run`` (a SIMT
interpreter with a reconvergence stack) under an observer that raises when a
value classified uniform differs across lanes or a block classified convergent
runs with part of the warp; companion tests show those checks (and the counts)
fail on a deliberately wrong classification.
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from conftest import load
from singe.programs import Arrive, FullSync, Sync
from singe.errors import SingeInputError, SingeInternalError
from singe.sim import simulate
from singe.analysis.program import EXIT, Memory, Profile, dominators, parse_program, post_dominators, run
from singe.analysis.scalarize import (VARYING, DivergenceCheck, Tally, UniformCheck, UniformityCheck, analyze,
                                 analyze_programs, analyze_warps, control_dependence, divergence,
                                 iterated_control_dependence, lower_warp_program, report, run_lowered,
                                 scalarize, structural_convergence, syncwarp_blocks, uniform, uniform_check)

WARP = 32


def kinds(analysis, names) -> dict[str, str]:
    return {n: analysis.values[n].kind for n in names}


def checked_run(program, analysis, *args, **kwargs):
    """Run ``program`` under the dynamic check of ``analysis``; returns (execution, check)."""
    check = UniformityCheck(analysis)
    return run(program, *args, observe=check, **kwargs), check


# --------------------------------------------------------------------------- the program form

def test_parse_print_round_trip():
    program = parse_program(FIR)
    assert parse_program(str(program)) == program
    assert program.successors["BB_1"] == ("BB_3", "BB_2")  # taken, then fall-through
    assert program.successors["BB_4"] == ("BB_4", "BB_5")
    assert program.predecessors["BB_5"] == ("BB_2", "BB_4")


def test_parse_error_names_the_line():
    with pytest.raises(SingeInputError) as error:
        parse_program("kernel k()\nB:\n    %x = frob %tid\n    exit\n", file="k.txt")
    assert "k.txt:3:5" in str(error.value) and "frob" in str(error.value)


def test_verify_rejects_a_phi_that_does_not_match_predecessors():
    with pytest.raises(SingeInternalError, match="does not match predecessors"):
        parse_program("kernel k()\nA:\n    bra B\nB:\n    %x = phi [C: 1]\n    exit\nC:\n    exit\n")


def test_interpreter_runs_fir():
    """results[t] = sum_i coeffs[i] * samples[t + i]."""
    samples, coeffs = [float(v * v % 7) for v in range(40)], [1.0, -2.0, 0.5]
    memory = Memory()
    memory.array(4096, samples)
    memory.array(8192, coeffs)
    run(parse_program(FIR), dict(samples=4096, coeffs=8192, flen=3, results=16384), memory)
    expected = [sum(c * samples[t + i] for i, c in enumerate(coeffs)) for t in range(WARP)]
    assert [memory.global_[16384 + 4 * t] for t in range(WARP)] == expected


# --------------------------------------------------------------------------- CGO §2.3, Figure 1: FIR

#: Figure 1(b) in SSA form: register numbers kept, a letter per redefinition.
FIR = """
kernel fir(samples, coeffs, flen, results)
BB_1:
    %r9 = mov %tid                    # b02 threadIdx.x
    %r1 = ld.param.u64 [samples]      # b03
    %r2 = ld.param.u64 [coeffs]       # b04
    %r3 = ld.param.u32 [flen]         # b05
    %r4 = ld.param.u64 [results]      # b06
    %r5 = set.gt.s32 %r3, 0           # b07
    %r6 = mov 0.0                     # b08 init result
    bra %r5, BB_3                     # b09
BB_2:
    bra BB_5                          # b11
BB_3:
    %r5a = shl %r9, 2                 # b13 tidx * 4
    %r1a = add %r1, %r5a              # b14 sample addr gen
    %r7 = mov 0                       # b15
BB_4:
    %r1b = phi [BB_3: %r1a], [BB_4: %r1c]
    %r2b = phi [BB_3: %r2], [BB_4: %r2c]
    %r6b = phi [BB_3: %r6], [BB_4: %r6c]
    %r7b = phi [BB_3: %r7], [BB_4: %r7c]
    %r5b = ld.global.f32 [%r2b]       # b17 load coeff
    %r8 = ld.global.f32 [%r1b]        # b18 load sample
    %r6c = fma %r5b, %r8, %r6b        # b19 fp mul add
    %r7c = add %r7b, 1                # b20 loop bookkeeping
    %r1c = add %r1b, 4                # b21 samples bookkeeping
    %r2c = add %r2b, 4                # b22 coeffs bookkeeping
    %r5c = set.lt.s32 %r7c, %r3       # b23 test loop break
    bra %r5c, BB_4                    # b24
BB_5:
    %r6d = phi [BB_2: %r6], [BB_4: %r6c]
    %r5d = shl %r9, 2                 # b26 tidx * 4
    %r4a = add %r4, %r5d              # b27 result addr gen
    st.global.f32 [%r4a], %r6d        # b28 store result
    exit                              # b29
"""

#: Figure 1(c): the role of every instruction of (b) (phis aside), in order.
FIGURE_1C = {
    "BB_1": ["eliminated", "scalar", "scalar", "scalar", "scalar", "scalar", "thread", "scalar"],  # c02-c09
    "BB_2": ["scalar"],                                                                          # c11
    "BB_3": ["eliminated", "eliminated", "scalar"],                                              # c13-c14
    "BB_4": ["scalar", "warp-seq", "thread", "scalar", "scalar", "scalar", "scalar", "scalar"],  # c17-c24
    "BB_5": ["eliminated", "eliminated", "warp-seq", "thread"],                                  # c26-c29
}


@pytest.fixture(scope="module")
def fir():
    program = parse_program(FIR)
    return scalarize(analyze(program))


def test_fir_scalarized_code_is_figure_1c(fir):
    for block in fir.program.blocks:
        roles = [fir.roles[(block.label, len(block.phis) + k)] for k in range(len(block.instrs))]
        assert roles == FIGURE_1C[block.label], block.label
    assert fir.analysis.convergent == {b.label for b in fir.program.blocks}
    assert not fir.materialized


def test_fir_loop_iteration_counts_are_the_papers(fir):
    """§2.3: per iteration 8 operations per thread -> 7 scalar + 1 thread, 256 -> 39
    for a warp of 32 (85% fewer); reads 11 per thread -> 9 scalar + 2 private,
    352 -> 73 (79% fewer); writes 7 -> 5 scalar + 2 private, 224 -> 69 (69%
    fewer); 64 addresses per warp -> 2."""
    r = report(fir, Profile.of({"BB_4": 1}, WARP))
    ops, reads, writes = r.operations, r.reads, r.writes
    assert (ops.conventional, ops.scalar, ops.private) == (8, 7, 1)
    assert (ops.warp_conventional, ops.warp_scalarized) == (256, 39)
    assert round(100 * ops.saved) == 85
    assert (reads.conventional, reads.scalar, reads.private) == (11, 9, 2)
    assert (reads.warp_conventional, reads.warp_scalarized) == (352, 73)
    assert round(100 * reads.saved) == 79
    assert (writes.conventional, writes.scalar, writes.private) == (7, 5, 2)
    assert (writes.warp_conventional, writes.warp_scalarized) == (224, 69)
    assert round(100 * writes.saved) == 69
    assert (r.addresses.warp_conventional, r.addresses.warp_scalarized) == (64, 2)


def test_fir_registers_are_the_papers(fir):
    """§2.3: 9 registers per thread -> 2 private per thread + 6 scalar per warp:
    288 -> 70 per warp, 76% fewer."""
    registers = report(fir).registers
    assert (registers.conventional, registers.private, registers.scalar) == (9, 2, 6)
    assert (registers.warp_conventional(WARP), registers.warp_scalarized(WARP)) == (288, 70)
    assert round(100 * registers.saved(WARP)) == 76


def test_fir_counts_fail_without_affine_analysis():
    """Companion: plain variance analysis (no affine tracking) cannot make the
    sample load warp-sequential, and the paper's numbers are not reached."""
    s = scalarize(analyze(parse_program(FIR), affine=False))
    r = report(s, Profile.of({"BB_4": 1}, WARP))
    assert s.roles[("BB_4", 5)] == "thread"
    assert (r.operations.warp_scalarized, r.addresses.warp_scalarized) != (39, 2)
    assert report(s).registers != report(scalarize(analyze(parse_program(FIR)))).registers


def test_fir_dynamic_profile_and_uniformity(fir):
    """flen = 3: BB_4 runs three times; the whole run counts 1248 thread
    operations conventionally, 189 scalarized (BB_1 38 + BB_3 1 + 3 x 39 + BB_5 33)."""
    memory = Memory()
    memory.array(4096, [float(v) for v in range(40)])
    memory.array(8192, [1.0, 2.0, 3.0])
    execution, check = checked_run(fir.program, fir.analysis, dict(samples=4096, coeffs=8192, flen=3,
                                                                    results=16384), memory)
    assert execution.profile.issues == {"BB_1": 1, "BB_3": 1, "BB_4": 3, "BB_5": 1}
    r = report(fir, execution.profile)
    assert (r.operations.warp_conventional, r.operations.warp_scalarized) == (1248, 189)
    assert check.checked["uniform"] > 0 and check.checked["affine"] > 0


def test_dynamic_check_catches_a_varying_value_marked_uniform(fir):
    """Companion: %r8 (a loaded sample) classified uniform is caught, by name."""
    wrong = dataclasses.replace(fir.analysis, values={**fir.analysis.values, "r8": uniform()})
    memory = Memory()
    memory.array(4096, [float(v) for v in range(40)])
    memory.array(8192, [1.0])
    with pytest.raises(SingeInternalError, match="%r8 is classified uniform"):
        checked_run(fir.program, wrong, dict(samples=4096, coeffs=8192, flen=1, results=16384), memory)


def test_tally_verify_catches_counts_that_do_not_add_up():
    Tally(5, 3, 1, 1, 0, 160, 32).verify()
    with pytest.raises(SingeInternalError, match="conventional"):
        Tally(5, 3, 1, 0, 0, 160, 32).verify()


def test_dominators_and_post_dominators_of_fir():
    program = parse_program(FIR)
    idom = dominators([b.label for b in program.blocks], program.entry, lambda b: program.successors[b])
    assert idom == {"BB_1": "BB_1", "BB_2": "BB_1", "BB_3": "BB_1", "BB_4": "BB_3", "BB_5": "BB_1"}
    assert post_dominators(program) == {"BB_1": "BB_5", "BB_2": "BB_5", "BB_3": "BB_4", "BB_4": "BB_5",
                                        "BB_5": EXIT}
    assert control_dependence(program) == {"BB_1": {"BB_2", "BB_3", "BB_4"}, "BB_2": set(), "BB_3": set(),
                                           "BB_4": {"BB_4"}, "BB_5": set()}


# --------------------------------------------------------------------------- CGO Figure 2

#: The CFG of Figure 2(a): N2 .. N2' a region under a uniform branch, N4' .. N4
#: a loop whose exit test in N4' is thread-variant (trip count = tid).
FIGURE_2 = """
kernel figure2(n)
N1:
    %n = ld.param.u32 [n]
    %c = set.gt %n, 0
    bra N2
N2:
    bra %c, N3, N2'
N3:
    %i0 = mov 0
    bra N4'
N4':
    %i = phi [N3: %i0], [N4: %i1]
    %q = set.lt %i, %tid
    bra %q, N4, N5
N4:
    %i1 = add %i, 1
    bra N4'
N5:
    %z = add %n, 1
    bra N2'
N2':
    bra N6
N6:
    bra N7
N7:
    exit
"""


def test_figure_2_control_dependence():
    """Figure 2(b): N2 controls N3, N4', N5; N4' controls N4 and itself; the
    iterated control-dependence successors of N4' are {N4', N4}."""
    program = parse_program(FIGURE_2)
    cd = control_dependence(program)
    assert cd["N2"] == {"N3", "N4'", "N5"}
    assert cd["N4'"] == {"N4'", "N4"}
    assert all(not cd[b] for b in ("N1", "N3", "N4", "N5", "N2'", "N6", "N7"))
    assert iterated_control_dependence(program)["N4'"] == {"N4'", "N4"}


def test_figure_2_convergence():
    """§3.1: structurally N1, N2, N2', N6, N7 are convergent; §3.3: with the
    thread-variant branch in N4', only N4' and N4 are divergent; N5 is
    convergent (and is where a syncwarp goes, §5.2)."""
    program = parse_program(FIGURE_2)
    assert structural_convergence(program) == {"N1", "N2", "N2'", "N6", "N7"}
    analysis = analyze(program)
    assert analysis.divergent == {"N4'", "N4"}
    assert analysis.variant_branches == {"N4'"}
    assert syncwarp_blocks(analysis) == {"N5"}
    assert kinds(analysis, ["c", "z", "i", "i1", "q"]) == dict(c="uniform", z="uniform", i="varying",
                                                               i1="varying", q="varying")
    _, check = checked_run(program, analysis, {"n": 5})
    assert check.checked["convergence"] > 0


def test_figure_2_dynamic_check_catches_a_divergent_block_marked_convergent():
    """Companion: claiming N4 convergent is refuted at run time."""
    program = parse_program(FIGURE_2)
    analysis = analyze(program)
    wrong = dataclasses.replace(analysis, convergent=analysis.convergent | {"N4"})
    with pytest.raises(SingeInternalError, match="block N4 is classified convergent"):
        checked_run(program, wrong, {"n": 5})


# --------------------------------------------------------------------------- CGO §3.4: early exit

EARLY_EXIT = """
kernel early(k, out)
entry:
    %k = ld.param.u32 [k]
    %p = set.gt %tid, 3
    bra %p, leave, S1
leave:
    exit
S1:
    %u = add %k, 1
    %o = shl %tid, 2
    %out = ld.param.u64 [out]
    %a = add %out, %o
    st.global.u32 [%a], %u
    exit
"""


def test_early_exit_keeps_the_rest_convergent():
    """if (threadIdx.x <= 3) { S1 }: the other threads are at the exit, so S1 is
    convergent and its uniform value scalar; without the exit rule it is not."""
    program = parse_program(EARLY_EXIT)
    with_rule, without = analyze(program), analyze(program, exits=False)
    assert "S1" in with_rule.convergent and with_rule.values["u"].is_uniform
    assert scalarize(with_rule).roles[("S1", 0)] == "scalar"
    assert "S1" not in without.convergent and without.values["u"].is_varying
    memory = Memory()
    checked_run(program, with_rule, dict(k=7, out=0), memory)
    assert [memory.global_[4 * t] for t in range(4)] == [8] * 4 and 16 not in memory.global_


# --------------------------------------------------------------------------- loops

VARYING_TRIP_COUNT = """
kernel count(out)
entry:
    %out = ld.param.u64 [out]
    bra head
head:
    %i = phi [entry: 0], [body: %i1]
    %d = phi [entry: 0], [body: %d1]
    %p = set.lt %i, %tid
    bra %p, body, after
body:
    %d1 = add %d, 2
    %i1 = add %i, 1
    bra head
after:
    %o = shl %tid, 2
    %a = add %out, %o
    st.global.u32 [%a], %d
    exit
"""


def test_loop_with_varying_trip_count():
    """for (i = 0; i < tid; i++) d += 2: CGO marks the loop divergent and d
    varying, the block after it convergent (the loop exit reconverges there);
    Pereira keeps d uniform among the threads still looping, its use after the
    loop reads the divergent split copy."""
    program = parse_program(VARYING_TRIP_COUNT)
    analysis = analyze(program)
    assert analysis.divergent == {"head", "body"} and "after" in analysis.convergent
    assert kinds(analysis, ["i", "d", "d1"]) == dict(i="varying", d="varying", d1="varying")
    pereira = divergence(program)
    assert {"i", "d", "d1", "i1"} <= pereira.uniform and "p" in pereira.divergent
    assert (("after", 2), "d") in pereira.divergent_uses
    memory = Memory()
    execution, _ = checked_run(program, analysis, {"out": 0}, memory)
    assert [memory.global_[4 * t] for t in range(WARP)] == [2 * t for t in range(WARP)]
    assert execution.profile.issues["head"] == WARP  # the warp loops while any thread does
    run(program, {"out": 0}, Memory(), observe=DivergenceCheck(pereira))


def test_pereira_check_catches_a_divergent_value_marked_uniform():
    program = parse_program(VARYING_TRIP_COUNT)
    wrong = dataclasses.replace(divergence(program), divergent=frozenset({"p"}))
    with pytest.raises(SingeInternalError, match="classified uniform"):
        run(program, {"out": 0}, Memory(), observe=DivergenceCheck(wrong))


def test_loop_with_uniform_trip_count_is_convergent(fir):
    assert "BB_4" in fir.analysis.convergent and not fir.analysis.variant_branches
    assert fir.analysis.values["r7b"].is_uniform


# --------------------------------------------------------------------------- the divergence lecture

SAXPY = """
kernel saxpy(n, a, x, y)
entry:
    %rh1 = mov %ctaid
    %rh2 = mov %ntid
    %r1 = mul %rh1, %rh2
    %r2 = cvt %tid
    %r3 = add %r2, %r1
    %r4 = ld.param.s32 [n]
    %p1 = set.le.s32 %r4, %r3
    bra %p1, done
body:
    %rd1 = cvt %r3
    %rd2 = mul %rd1, 4
    %rd3 = ld.param.u64 [y]
    %rd4 = add %rd3, %rd2
    %f1 = ld.global.f32 [%rd4]
    %rd5 = ld.param.u64 [x]
    %rd6 = add %rd5, %rd2
    %f2 = ld.global.f32 [%rd6]
    %f3 = ld.param.f32 [a]
    %f4 = mad %f2, %f3, %f1
    st.global.f32 [%rd4], %f4
done:
    exit
"""


def test_saxpy():
    """The lecture's PTX: i = blockIdx.x * blockDim.x + threadIdx.x is divergent
    ("the thread ID is always divergent"), and so is the branch on i < n; with
    the affine analysis i is tid + uniform, x[i] and y[i] unit stride, and the
    early return keeps the body convergent."""
    program = parse_program(SAXPY)
    pereira = divergence(program)
    assert {"r2", "r3", "p1", "rd2", "rd4", "f1", "f2", "f4"} <= pereira.divergent
    assert {"rh1", "rh2", "r1", "r4", "rd3", "rd5", "f3"} <= pereira.uniform
    assert pereira.divergent_branches == {"entry"}
    analysis = analyze(program)
    assert analysis.values["r3"].stride == 1 and analysis.values["rd4"].stride == 4
    s = scalarize(analysis)
    assert [a.role for a in report(s).accesses if a.space == "global"] == ["warp-seq"] * 3
    memory = Memory()
    memory.array(4096, [float(v) for v in range(64)])
    memory.array(8192, [1.0] * 64)
    checked_run(program, analysis, dict(n=40, a=2.0, x=4096, y=8192), memory, warps=(0, 1))
    assert [memory.global_[8192 + 4 * i] for i in (0, 39, 40)] == [1.0, 79.0, 1.0]


EX = """
kernel ex(v)
B0:
    %v = ld.param.u64 [v]
    %o = shl %tid, 2
    %r1 = add %v, %o
    %f1 = ld.global.f32 [%r1]
    %p1 = set.lt %f1, 0.0
    bra %p1, BZR, B1
BZR:
    %f2a = div %f1, 2.0
    bra BST
B1:
    %f2b = mov 0.0
BST:
    %f2 = phi [BZR: %f2a], [B1: %f2b]
    st.global.f32 [%r1], %f2
    exit
"""


def test_ex_kernel():
    """if (v[tid] < 0.0) v[tid] /= 2; else v[tid] = 0.0: the branch diverges;
    f2 joins per thread (divergent) though f2b = 0.0 alone is uniform."""
    program = parse_program(EX)
    pereira = divergence(program)
    assert pereira.divergent == {"o", "r1", "f1", "p1", "f2a", "f2"}
    analysis = analyze(program)
    assert analysis.divergent == {"BZR", "B1"} and analysis.values["f2"].is_varying
    memory = Memory()
    memory.array(0, [(-1.0) ** t * t for t in range(WARP)])
    checked_run(program, analysis, {"v": 0}, memory)
    assert [memory.global_[4 * t] for t in (0, 1, 2, 3)] == [0.0, -0.5, 0.0, -1.5]


CONTROL_DEPENDENT = """
kernel x_depends(k)
entry:
    %k = ld.param.u32 [k]
    %t1 = and {who}, %k
    %p2 = set.eq %t1, 0
    bra %p2, then, else
then:
    bra join
else:
    bra join
join:
    %x = phi [then: 1], [else: 2]
    %o = shl %tid, 2
    st.global.u32 [%o], %x
    exit
"""


def test_data_dependences_are_not_enough():
    """x = p2 ? 1 : 2 depends on no divergent value, but on the divergent %p2
    through control: divergent (sync dependence, gated phi)."""
    program = parse_program(CONTROL_DEPENDENT.format(who="%tid"))
    assert divergence(program).divergent == {"t1", "p2", "x", "o"}
    analysis = analyze(program)
    assert analysis.values["x"].is_varying
    memory = Memory()
    checked_run(program, analysis, {"k": 1}, memory)
    assert [memory.global_[4 * t] for t in range(4)] == [1, 2, 1, 2]


def test_control_dependence_on_a_uniform_predicate_is_uniform():
    """Companion: the same join under a warp-uniform predicate is uniform."""
    program = parse_program(CONTROL_DEPENDENT.format(who="%warpid"))
    assert "x" in divergence(program).uniform
    analysis = analyze(program)
    assert analysis.values["x"].is_uniform and analysis.divergent == set()
    checked_run(program, analysis, {"k": 1}, Memory(), warps=(0, 1, 2))


FIND_WRITER = """
kernel profile_branch(k, counters)
up:
    %k = ld.param.u32 [k]
    %t1 = and %tid, %k
    %p2 = set.eq %t1, 0
    %writer0 = mov 0
find_writer:
    %writer = phi [up: %writer0], [find_writer: %writer1]
    %iAmWriter = set.eq %laneid, %writer
    %gotWriter = vote.any %iAmWriter
    %continue = set.eq %gotWriter, 0
    %writer1 = add %writer, 1
    bra %continue, find_writer
bottom:
    %visits = ld.param.u64 [counters]
    @%iAmWriter %tL2 = atom.global.add [%visits], 1
    %consensus = vote.uni %p2
    %dvrg = set.eq %consensus, 0
    %wrDv = and %iAmWriter, %dvrg
    @%wrDv %dL2 = atom.global.add [%visits+8], 1
    exit
"""


def test_find_writer():
    """The lecture's divergence profiler (block L2): the writer search loop is
    uniform (a vote decides it); iAmWriter, t1, p2, wrDv and the atomics are
    divergent; consensus and dvrg uniform.  One visit and one divergence are counted."""
    program = parse_program(FIND_WRITER)
    pereira = divergence(program)
    assert pereira.divergent == {"t1", "p2", "iAmWriter", "wrDv", "tL2", "dL2"}
    analysis = analyze(program)
    assert analysis.divergent == set()
    assert {"writer", "gotWriter", "continue", "writer1", "consensus", "dvrg"} <= analysis.uniform_values()
    memory = Memory()
    memory.array(64, [0, 0], width=8)
    checked_run(program, analysis, dict(k=1, counters=64), memory)
    assert (memory.global_[64], memory.global_[72]) == (1, 1)


REGISTER_ALLOCATION = """
kernel spill(c, m, v)
L0:
    %d0 = mov 0
    %s0 = mov 0.0
    %c = ld.param.s32 [c]
    %m = ld.param.u64 [m]
    %v = ld.param.u64 [v]
    %t0 = mul %c, %c
    %N = add %tid, %t0
    %i0 = mov %tid
L5:
    %i = phi [L0: %i0], [L6: %i1]
    %s = phi [L0: %s0], [L6: %s1]
    %d = phi [L0: %d0], [L6: %d1]
    %p = set.lt %i, %N
    bra %p, L6, L12
L6:
    %t1 = mul %i, 4
    %a1 = add %m, %t1
    %t2 = ld.global.f32 [%a1]
    %s1 = add %t2, %s
    %d1 = add %d, 1
    %i1 = add %i, %c
    bra L5
L12:
    %t3 = div %s, %d
    %t4 = mul %tid, 4
    %a2 = add %v, %t4
    st.global.f32 [%a2], %t3
    exit
"""


def test_register_allocation_example():
    """The lecture's spill example: d and t0 are uniform (spilled to shared
    memory), s, N, i divergent (local memory).  CGO without affine tracking
    loses d (the loop test is variant); with it, i and N share the stride 1,
    the test is uniform, the loop convergent and both accesses unit stride."""
    program = parse_program(REGISTER_ALLOCATION)
    pereira = divergence(program)
    assert pereira.uniform == {"d0", "s0", "c", "m", "v", "t0", "d", "d1"}
    plain = analyze(program, affine=False)
    assert plain.divergent == {"L5", "L6"} and plain.values["d"].is_varying
    analysis = analyze(program)
    assert analysis.divergent == set() and analysis.values["d"].is_uniform
    assert analysis.values["p"].is_uniform and analysis.values["t1"].stride == 4
    assert [a.role for a in report(scalarize(analysis)).accesses if a.space == "global"] == ["warp-seq"] * 2
    memory = Memory()
    memory.array(1000, [float(v) for v in range(40)])
    checked_run(program, analysis, dict(c=3, m=1000, v=2000), memory)
    run(program, dict(c=3, m=1000, v=2000), memory, observe=DivergenceCheck(pereira))
    assert memory.global_[2000 + 4 * 5] == (5 + 8 + 11) / 3


BITONIC = """
kernel bitonic(j, k)
L1:
    %j = ld.param.u32 [j]
    %k = ld.param.u32 [k]
    %ixj = xor %tid, %j
    %atid = shl %tid, 2
    %aixj = shl %ixj, 2
    %p1 = set.gt %ixj, %tid
    bra %p1, L2, L7
L2:
    %t1 = and %tid, %k
    %p2 = set.eq %t1, 0
    bra %p2, L3, L4
L3:
    %t2 = ld.shared.u32 [%atid]
    %t3 = ld.shared.u32 [%aixj]
    %p3 = set.gt %t2, %t3
    bra %p3, L5, L7
L4:
    %t4 = ld.shared.u32 [%atid]
    %t5 = ld.shared.u32 [%aixj]
    %p4 = set.lt %t4, %t5
    bra %p4, L6, L7
L5:
    st.shared.u32 [%atid], %t3
    st.shared.u32 [%aixj], %t2
    bra L7
L6:
    st.shared.u32 [%atid], %t5
    st.shared.u32 [%aixj], %t4
L7:
    bar.sync 0
    exit
"""


def test_bitonic_sort_step():
    """The lecture's bitonic-sort trace (L1..L7): every comparison is
    divergent, j and k uniform; L7 (the barrier) is convergent.  The step
    (j = 1, k = 2) sorts pairs alternately up and down."""
    program = parse_program(BITONIC)
    pereira = divergence(program)
    assert pereira.uniform == {"j", "k"}
    assert pereira.divergent_branches == {"L1", "L2", "L3", "L4"}
    analysis = analyze(program)
    assert analysis.convergent == {"L1", "L7"}
    values = [(7 * t + 3) % 32 for t in range(WARP)]
    memory = Memory(shared={4 * t: v for t, v in enumerate(values)})
    checked_run(program, analysis, dict(j=1, k=2), memory)
    result = [memory.shared[4 * t] for t in range(WARP)]
    for t in range(0, WARP, 2):
        pair, ascending = values[t:t + 2], (t & 2) == 0
        assert result[t:t + 2] == sorted(pair, reverse=not ascending)


DEC2ZERO = """
kernel dec2zero(v, N)
entry:
    %b = mul %ctaid, %ntid
    %x = add %b, %tid
    %N = ld.param.s32 [N]
    %v = ld.param.u64 [v]
    %p = set.lt %x, %N
    bra %p, test, leave
test:
    %o = shl %x, 2
    %a = add %v, %o
    %e = ld.global.s32 [%a]
    %q = set.gt %e, 0
    bra %q, dec, leave
dec:
    %e1 = sub %e, 1
    st.global.s32 [%a], %e1
    bra test
leave:
    exit
"""


def test_dec2zero():
    """Samuel's kernel: both branches are divergent (Pereira).  Threads that
    finish leave the kernel, so with the exit rule the loop stays convergent
    for the others (only the exit block runs with part of the warp); without
    it, the loop is divergent."""
    program = parse_program(DEC2ZERO)
    pereira = divergence(program)
    assert pereira.divergent_branches == {"entry", "test"} and pereira.uniform == {"b", "N", "v"}
    assert analyze(program).divergent == {"leave"}
    assert analyze(program, exits=False).divergent == {"test", "dec"}
    memory = Memory()
    memory.array(0, [t % 5 for t in range(WARP)])
    checked_run(program, analyze(program), dict(v=0, N=20), memory)
    assert [memory.global_[4 * t] for t in range(WARP)] == [0] * 20 + [t % 5 for t in range(20, WARP)]


def test_atomic_result_is_divergent():
    """i = ATOMINC(v[index]): every thread gets a different old value."""
    program = parse_program("""
kernel ex_atomic(index, v)
entry:
    %index = ld.param.s32 [index]
    %v = ld.param.u64 [v]
    %o = shl %index, 2
    %a = add %v, %o
    %i = atom.global.add.s32 [%a], 1
    exit
""")
    assert divergence(program).divergent == {"i"}
    analysis = analyze(program)
    assert analysis.values["i"].is_varying and analysis.values["a"].is_uniform
    memory = Memory()
    memory.array(0, [0] * 4)
    checked_run(program, analysis, dict(index=2, v=0), memory)
    assert memory.global_[8] == WARP


# --------------------------------------------------------------------------- the control-flow lecture

GRANULARITY = """
kernel granularity(out)
entry:
    %w = div %tid, 32
    %p = set.gt {test}, 2
    bra %p, big, small
big:
    %x1 = mov 100
    bra join
small:
    %x2 = mov 10
join:
    %x = phi [big: %x1], [small: %x2]
    %o = shl %tid, 2
    %out = ld.param.u64 [out]
    %a = add %out, %o
    st.global.u32 [%a], %x
    exit
"""


def test_branch_at_warp_granularity_does_not_diverge():
    """if (threadIdx.x / WARP_SIZE > 2): every warp goes one way (uniform);
    if (threadIdx.x > 2) diverges in warp 0."""
    coarse = parse_program(GRANULARITY.format(test="%w"))
    analysis = analyze(coarse)
    assert analysis.values["w"].is_uniform and analysis.divergent == set()
    assert analysis.values["x"].is_uniform
    memory = Memory()
    checked_run(coarse, analysis, {"out": 0}, memory, warps=range(5))
    assert [memory.global_[4 * t] for t in (0, 95, 96, 159)] == [10, 10, 100, 100]
    fine = analyze(parse_program(GRANULARITY.format(test="%tid")))
    assert fine.divergent == {"big", "small"} and fine.values["x"].is_varying


# --------------------------------------------------------------------------- singe's kernels

N_POINTS = 40  # two slabs, the second partial


@pytest.fixture(scope="module", params=[("dme", "viscosity"), ("dme", "diffusion"), ("dme", "chemistry"),
                                        ("heptane", "viscosity"), ("heptane", "diffusion"),
                                        ("heptane", "chemistry")],
                ids=lambda p: "-".join(p))
def transport(request):
    from singe.compiler import compile_kernel

    name, kernel = request.param
    mechanism = load(name)
    compiled = compile_kernel(mechanism, kernel, warps=8)
    analyses = analyze_warps(compiled.programs)
    n = len(mechanism.transported_species)
    rng = np.random.default_rng(7)
    Y = rng.random((n, N_POINTS))
    inputs, _ = compiled.simulation_inputs(np.linspace(600.0, 2400.0, N_POINTS), np.full(N_POINTS, 101325.0),
                                           Y / Y.sum(axis=0))
    return compiled, analyses, analyze_programs(compiled.programs, analyses=analyses), inputs


def test_kernel_report_adds_up(transport):
    """Every tally adds up (conventional + added == scalar + private + removed),
    operations match instructions, warps sum to the kernel; one full warp per
    instruction: 32 thread operations each conventionally."""
    compiled, analyses, r, _ = transport
    r.verify()
    assert len(r.parts) == compiled.programs.warps
    lowered = sum(sum(1 for b in lw.program.blocks if b.label in ("loop", "body") for _ in b.instrs)
                  for lw, _ in analyses)
    assert r.issued.conventional == lowered
    assert r.operations.warp_conventional == WARP * r.issued.conventional
    assert r.operations.warp_scalarized == r.issued.scalar + WARP * r.issued.private
    for metric, t in r.tallies().items():
        assert t.conventional + t.added == t.scalar + t.private + t.removed, metric
        assert t == sum((getattr(part, metric) for part in r.parts), Tally()), metric


def test_kernel_scalars_and_coalescing(transport):
    """Per slab, the uniform work of the emitted code -- constant broadcasts,
    address arithmetic, barriers, loop bookkeeping -- is scalar; the point data
    is not.  Every global and shared access is unit stride (coalesced)."""
    compiled, analyses, r, _ = transport
    shuffles = sum(1 for lw, _ in analyses for _, item in lw.program.sites()
                   if getattr(item, "opcode", "") == "shfl")
    barriers = sum(1 for p in compiled.programs.programs for i in p.items if isinstance(i, (Arrive, Sync, FullSync)))
    assert r.issued.scalar >= shuffles + barriers + 2 * compiled.programs.warps  # + loop test and branch
    assert 0.2 < r.scalar_fraction < 0.9
    summary = r.access_summary()
    assert {role for (space, _, role) in summary if space in ("global", "shared")} == {"warp-seq"}
    assert summary[("global", "store", "warp-seq")] >= 1
    registers = r.registers
    assert registers.private < registers.conventional and registers.scalar >= 5
    assert registers.warp_scalarized() < registers.warp_conventional()


def test_kernel_dynamic_uniformity_in_the_simulator(transport):
    """The simulator with the uniformity hook runs clean and gives the same
    outputs as without it."""
    compiled, analyses, _, inputs = transport
    check = uniform_check(compiled.programs, analyses)
    checked = simulate(compiled.programs, inputs, N_POINTS, check_uniform=check)
    plain = simulate(compiled.programs, inputs, N_POINTS)
    for name, values in plain.outputs.items():
        np.testing.assert_array_equal(checked.outputs[name], values)


def test_kernel_dynamic_uniformity_of_the_lowered_programs(transport):
    """The lowered programs of the first and last warp, run lane by lane on
    the same inputs: every convergent block runs with the whole warp, every
    uniform value (constant broadcasts, loop counters, addresses' bases) is
    the same on every lane, every affine one is stride * tid + one base."""
    compiled, analyses, _, inputs = transport
    for lowered, analysis in (analyses[0], analyses[-1]):
        check = UniformityCheck(analysis)
        execution = run_lowered(lowered, compiled.programs, inputs, N_POINTS, observe=check)
        assert execution.profile.issues["body"] == 2
        assert check.checked["uniform"] > 0 and check.checked["affine"] > 0


def test_kernel_dynamic_checks_catch_a_varying_value_marked_uniform(transport):
    """Companions: a register loaded from global memory marked uniform is
    caught by the simulator hook, and the lowered program's point index
    (affine) marked uniform by the interpreter.  The register is the first
    warp 0 loads of a field that varies between the points (the fixture's
    pressure is the same everywhere: marked uniform, it is)."""
    compiled, analyses, _, inputs = transport
    loaded = next(i.dst for op in compiled.programs.programs[0].computes() for i in op.instrs
                  if i.opcode == "ldg" and i.field != "pressure")
    with pytest.raises(SingeInternalError, match=f"register {loaded} of warp 0"):
        simulate(compiled.programs, inputs, N_POINTS, check_uniform=UniformCheck({0: frozenset({loaded})}))
    lowered, analysis = analyses[0]
    point = next(v for v in analysis.values if v.startswith("$point") and not v.startswith("$point8"))
    wrong = dataclasses.replace(analysis, values={**analysis.values, point: uniform()})
    with pytest.raises(SingeInternalError, match=f"%\\{point} is classified uniform"):
        run_lowered(lowered, compiled.programs, inputs, N_POINTS, observe=UniformityCheck(wrong))
    assert analysis.values[point].stride == 1 and analysis.values[point] != VARYING


def test_lowered_program_shape():
    """A small kernel's lowering: one body block per slab inside the slab loop,
    constants broadcast by shuffles from the striped table."""
    from singe.compiler import compile_kernel

    compiled = compile_kernel(load("h2o2"), "viscosity", warps=2)
    lowered = lower_warp_program(compiled.programs, 0)
    program = lowered.program
    assert [b.label for b in program.blocks] == ["entry", "loop", "body", "done"]
    assert program.successors["loop"] == ("body", "done")
    assert lowered.stripes == -(-len(lowered.constants) // WARP)
    analysis = analyze(program)
    cs = [v for v in analysis.values if v.startswith("$cs")]
    assert cs and all(analysis.values[v].is_varying for v in cs)  # one constant per lane
    shuffled = [i.dst for _, i in program.sites() if getattr(i, "opcode", "") == "shfl"]
    assert shuffled and all(analysis.values[v].is_uniform for v in shuffled)
