"""Overlay: one body for every warp, per-warp constant tables, shared code where warps agree."""

from __future__ import annotations

from singe.codegen.overlay import overlay
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
