"""Overlay: one body for every warp, per-warp constant tables, shared code where warps agree."""

from __future__ import annotations

from singe.codegen.overlay import overlay, warp_affine
from singe.compiler import compile_kernel
from conftest import load


def test_constant_tables_hold_every_warps_constants():
    programs = compile_kernel(load("h2o2"), "viscosity", warps=4).programs
    overlaid = overlay(programs)
    assert len(overlaid.constants) == programs.warps
    assert len({len(table) for table in overlaid.constants}) == 1  # one table width
    for warp, table in enumerate(overlaid.constants):
        assert set(programs.constants(warp)) <= set(table)


def test_one_warp_is_one_block_and_blocks_name_real_warps():
    """One warp: a single 'all' block; several: every block's warps are warps of the kernel."""
    mech = load("h2o2")
    single = overlay(compile_kernel(mech, "diffusion", warps=1).programs)
    assert [b.kind for b in single.blocks] == ["all"] and single.shared_units == 0
    overlaid = overlay(compile_kernel(mech, "diffusion", warps=4).programs)
    assert all(set(b.warps) <= set(range(4)) and b.kind in ("all", "mask", "switch") for b in overlaid.blocks)
    assert 0 < overlaid.shared_units <= overlaid.total_units


def test_offsets_affine_in_the_warp_are_a_multiply_of_the_warp_id():
    """Per-warp offsets of the warps sharing a unit that grow in one step are a + b * warp_id (one
    multiply, every slot then an immediate offset from it); others stay index-table rows."""
    assert warp_affine({1: 53, 2: 45, 3: 37, 6: 13}) == (61, -8)
    assert warp_affine({0: 4, 1: 6}) == (4, 2)
    assert warp_affine({0: 4, 1: 6, 2: 9}) is None  # companion: not one step
    assert warp_affine({0: 4, 2: 5}) is None  # half a slot per warp


def test_viscosity_offsets_are_affine_where_warps_share_code():
    """DME viscosity at 8 warps: the warps sharing the species operations store to slots affine in
    their id (no singe_index row left for them)."""
    text = "\n".join(line for block in overlay(compile_kernel(load("dme"), "viscosity", warps=8).programs).blocks
                     for line in block.lines)
    assert "* warp_id)" in text


def test_offsets_that_shift_alike_share_one_index_row():
    """Integers that differ between warps by the same shifts (slots of a block of species at
    each warp's place) need one index-table row; another pattern, or a loop table, its own."""
    from singe.codegen.overlay import _index_rows

    assert len(_index_rows([(4, 8, 12), (5, 9, 13), (60, 64, 68), (7, 7, 7)])) == 1
    assert len(_index_rows([(4, 8, 12), (5, 9, 14)])) == 2
    assert len(_index_rows([(4, 8, 12), ((1, 2), (3, 4), (1, 2))])) == 2


def test_diffusion_turns_are_shared_by_every_warp():
    """DME diffusion at the paper's 10 warps x 3 CTAs: each full barrier is emitted once,
    when every warp has reached it, so the warps' turns line up after it; the turns' code
    is then one copy for all warps, or for the half whose columns have a row more in the last
    turn (index rows of shifts, no switch)."""
    compiled = compile_kernel(load("dme"), "diffusion", warps=10, ctas_per_sm=3)
    overlaid = overlay(compiled.programs)
    full = sum(line.count("SINGE_BAR_SYNC(0,") for b in overlaid.blocks for line in b.lines)
    assert full == sum(line.count("SINGE_BAR_SYNC(0,") for b in overlaid.blocks if b.kind == "all" for line in b.lines)
    assert full == len(set(compiled.mapping.phases.values())) + 1  # and the slab's end
    first = next(i for i, b in enumerate(overlaid.blocks) if any("phase 0:" in line for line in b.lines))
    assert all(b.kind == "all" or b.kind == "mask" and len(b.warps) == 5 for b in overlaid.blocks[first:])


def test_outputs_take_the_names_of_inputs_read_for_the_last_time():
    """A unit's outputs replace the register inputs it has read for the last time before
    writing them (masked groups one after another then keep one group's names live); an
    input read after an output is written keeps its name."""
    from singe.codegen.overlay import _Variables
    from singe.programs.lowering import ComputeUnit

    names = _Variables([[ComputeUnit(_op("a", ("p",), ("q",)))], [ComputeUnit(_op("b", ("q",), ()))]])
    names.holders = [{0: "p"}]
    assert names.assign([0], {0: ("q",)}, {0: 0}, {0: {"p"}}) == ["r0"]
    names.holders = [{0: "p"}]
    assert names.assign([0], {0: ("q",)}, {0: 0}, {}) == ["r1"]


def _op(name, inputs, outputs):
    from singe.kernels.ir import Instr, Operation, Reg

    instrs = tuple(Instr("mov", v, (Reg(inputs[0]),)) for v in outputs)
    return Operation(name, "species", instrs, inputs, outputs)


def _body_lines(overlaid) -> list[str]:
    return [line for b in overlaid.blocks for line in b.lines + [x for c in b.cases.values() for x in c]]


def test_without_waiting_at_full_barriers_the_turns_fall_out_of_step(monkeypatch):
    """The companion: emitted as soon as some warps reach it, a full barrier is written once
    per group of warps, the warps behind fall out of step and their turns go into blocks of
    their own (masks for groups of warps, no block for all of them): 710 lines of body
    against 417."""
    import sys

    compiled = compile_kernel(load("dme"), "diffusion", warps=10, ctas_per_sm=3)
    lined_up = overlay(compiled.programs)
    module = sys.modules["singe.codegen.overlay"]
    monkeypatch.setattr(module.Overlay, "_at_full_sync", lambda self, warp: False)
    overlaid = overlay(compiled.programs)
    lines = _body_lines(overlaid)
    assert sum(line.count("SINGE_BAR_SYNC(0,") for line in lines) > len(set(compiled.mapping.phases.values())) + 1
    assert len(lines) > 1.5 * len(_body_lines(lined_up))
    assert all(b.kind != "all" for b in overlaid.blocks[1:])
