"""Forwarding fences: shared values held in registers between barriers, and
the fences the register plan places where they exceed the budget
(singe.programs.forwarding)."""

from __future__ import annotations

import dataclasses

import pytest

from singe.codegen import generate
from singe.codegen.dispatch import FENCE
from singe.codegen.nvcc import compile_cuda, find_nvcc
from singe.compiler import compile_kernel
from singe.kernels.ir import Imm, Instr, Operation, Reg
from singe.programs import Sync
from singe.programs.forwarding import fence_positions, held_values
from singe.programs.lowering import BarrierUnit, ComputeUnit, LoadUnit, StoreUnit, program_units
from singe.programs.plan import HELD_RESERVE, RegisterPlan, held_allowances, unit_peaks
from singe.timing import issued_shared
from conftest import load

PLAIN = Operation("p", "test", (Instr("add", "y", (Reg("x"), Imm(1.0))),), ("x",), ("y",))


def units():
    """Slot 0 stored, then read at units 2 and 5; slot 1 read at 1 and 3; a barrier at 4; slot 2 read at 5 and 6."""
    return (StoreUnit("a", 0), LoadUnit("b", 1), ComputeUnit(PLAIN, {"x": 0}, {}), LoadUnit("b", 1),
            BarrierUnit(Sync(1, 64, 0)), ComputeUnit(PLAIN, {"x": 2}, {"y": 0}), LoadUnit("c", 2))


def test_held_values_count_each_slot_from_its_access_to_its_last_read_before_a_barrier():
    # slot 0: held across boundaries 1, 2; slot 1: across 2, 3; nothing across the barrier;
    # slot 2: read at 5, again at 6: held across boundary 6
    assert held_values(units()) == [0, 1, 2, 1, 0, 0, 1, 0]
    assert held_values(units(), frozenset({2})) == [0, 0, 0, 0, 0, 0, 1, 0]  # a fence before unit 2 ends both


def test_fences_go_as_late_as_the_allowance_lets_them():
    assert fence_positions(units(), 2) == frozenset()
    assert fence_positions(units(), 1) == frozenset({2})
    assert fence_positions(units(), 0) == frozenset({1, 2, 6})
    for allowed in range(3):
        assert max(held_values(units(), fence_positions(units(), allowed))) <= allowed


def test_a_fence_reissues_the_loads_after_it_in_the_timing_model():
    """A fence clobbers memory as a barrier does: the read of slot 1 at unit 3
    is issued again after a fence before it."""
    plain = issued_shared(units(), frozenset())
    fenced = issued_shared(units(), frozenset(), frozenset({3}))
    assert plain[3] == ((), ()) and fenced[3] == (("b",), ())


def test_held_allowance_is_what_the_budget_leaves_beside_the_warps_registers():
    plan = RegisterPlan(budget=80, live_doubles=(10, 26), constant_stripes=(1, 1))
    assert plan.stripes_in_registers() == 0
    assert plan.held_allowed(0) == (80 - 24 - 20) // 2 - HELD_RESERVE
    assert plan.held_allowed(1) == max(0, (80 - 24 - 52) // 2 - HELD_RESERVE)  # 4 registers left
    assert dataclasses.replace(plan, budget=64).held_allowed(1) == 0  # 24 + 52 over the budget: none


def test_chemistry_kernels_get_fences_only_where_held_values_exceed_the_budget():
    """H2/O2 chemistry at 4 warps: roomy at 1 CTA per SM (no fence: the code is
    unchanged), tight at 8 CTAs per SM; the emitted code has a fence per plan fence."""
    mech = load("h2o2")
    for ctas, fenced in ((1, False), (8, True)):
        compiled = compile_kernel(mech, "chemistry", warps=4, ctas_per_sm=ctas)
        plan = compiled.programs.plan
        fences = plan.fences
        assert bool(any(fences)) == fenced
        for w, program in enumerate(compiled.programs.programs):
            held = held_values(program_units(program), fences[w])
            assert all(n <= limit for n, limit in zip(held, held_allowances(plan, w, unit_peaks(program))))
        source = generate(compiled).cu
        assert source.count(FENCE) == sum(len(f) for f in fences)


def test_allowances_follow_the_live_values_around_each_boundary():
    """A boundary between two units with fewer live values than the warp's peak allows more held values."""
    plan = RegisterPlan(budget=128, live_doubles=(20,), constant_stripes=(0,))
    assert held_allowances(plan, 0, [20, 5, 5]) == [plan.held_allowed(0)] * 2 + [plan.held_allowed(0) + 15] * 2
    assert held_values(units()[:3]) == [0, 1, 1, 0]  # slot 0, stored by unit 0, read by unit 2
    assert fence_positions(units()[:3], [0, 1, 1, 0]) == frozenset()
    assert fence_positions(units()[:3], [0, 1, 0, 0]) == frozenset({2})


def test_transport_kernels_get_no_fences():
    plan = compile_kernel(load("h2o2"), "diffusion", warps=4, ctas_per_sm=8).programs.plan
    assert plan.fences == ()


@pytest.mark.exhaustive
@pytest.mark.skipif(find_nvcc() is None, reason="nvcc not installed")
def test_fences_cut_the_spills_of_a_tight_chemistry_kernel(tmp_path):
    """ptxas companion (two GRI-Mech compiles, ~1 min): the chemistry kernel at
    8 warps x 3 CTAs per SM (sm_90), whose held values exceed the budget,
    spills less with its fences than the same code with them removed."""
    compiled = compile_kernel(load("gri30"), "chemistry", warps=8, ctas_per_sm=3, arch="sm_90")
    assert any(compiled.programs.plan.fences)
    generated = generate(compiled)
    path = generated.write(tmp_path / "fenced")[0]
    fenced = compile_cuda(path, "sm_90").entry(generated.name)
    bare = tmp_path / "bare" / path.name
    bare.parent.mkdir()
    for other in path.parent.iterdir():
        (bare.parent / other.name).write_text(other.read_text().replace("SINGE_FENCE();", ";"))
    unfenced = compile_cuda(bare, "sm_90").entry(generated.name)
    assert fenced.spill_stores < unfenced.spill_stores
