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
