"""A partial copy of the constant table in shared memory (``codegen.partial_copy``).

Where the whole copy does not fit beside the exchange slots at the CTAs per SM the kernel was compiled
for, ``--constant-table auto`` copies the first stripes of each warp's row that fit, as long as they hold
every slot the loops read; code several warps share reads the rest from the table itself.  n-heptane
diffusion at the paper's 13 warps x 3 CTAs: 13 of its 14 stripes.  The emitted kernel runs on the host
against singe.reference (1e-9 relative, as tests/test_loops.py), with companions in which a wrong row
stride fails; the layout, the SASS and the timing model's classes of the reads are checked against what
is emitted.
"""

from __future__ import annotations

import dataclasses
import functools
import tempfile

import numpy as np
import pytest

from autotune.gpu_bench import table_label
from singe.cli import kernel_line
from singe.codegen import generate, kernel_shared_bytes, lay_out, layout_with, partial_copy, table_copy_bytes
from singe.compiler import compile_kernel
from singe.kernels.ir import Const
from singe.programs.lowering import ComputeUnit, live_instructions
from singe.timing import (EXPANSIONS, SHARED_TABLE_LOAD, TABLE_LOAD, bank_footprint, instruction_classes,
                          misses_the_constant_cache, warp_code)
from conftest import load
from test_loops import TOLERANCE, run, worst


@functools.lru_cache(maxsize=None)
def heptane_diffusion(table: str = "auto"):
    """n-heptane diffusion at the paper's setting, 13 warps x 3 CTAs."""
    return compile_kernel(load("heptane"), "diffusion", warps=13, ctas_per_sm=3, constant_table=table)


def test_auto_copies_the_first_stripes_where_the_whole_copy_does_not_fit():
    """The whole copy (14 stripes a warp, 46,592 B) does not fit the 43,520 B beside the slots at 3 CTAs; its
    first 13 stripes (43,264 B) do, and hold every slot the loops read: the kernel keeps its 3 CTAs with 416 of
    each warp's 425 slots in shared memory."""
    programs = heptane_diffusion().programs
    overlaid = lay_out(programs)
    whole = layout_with(programs, table_copy=True)
    assert table_copy_bytes(whole) == 46_592 > programs.table_budget == 43_520
    assert overlaid.table_copy and (overlaid.copied_stripes, overlaid.stripes) == (13, 14)
    assert overlaid.loop_slots <= overlaid.copied_slots == 416 < overlaid.slots == 425
    assert table_copy_bytes(overlaid) == 13 * 13 * 32 * 8 <= programs.table_budget
    target = heptane_diffusion().options.target
    assert target.resident_ctas(3, kernel_shared_bytes(programs, overlaid)) == 3
    generated = generate(heptane_diffusion())
    assert generated.info.table_copy_bytes == 43_264
    assert "#define SINGE_CONST(slot) ((slot) < 416 ? singe_table[warp_id * 416 + (slot)]" in generated.cu
    assert "for (int s = 0; s < 13; s++)" in generated.cu
    assert "(43264 B of them the constant table's copy, its first 13 of 14 stripes a warp: the whole does not fit " \
           "beside the slots at 3 CTAs per SM)" in kernel_line(heptane_diffusion(), generated, 0.0)
    assert [table_label(generate(heptane_diffusion(t)).info) for t in ("auto", "shared", "cache")] == \
        ["partial", "copy", "cache"]


def test_no_partial_copy_where_the_loops_would_not_fit_or_the_whole_copy_does():
    """A copy that would not hold every slot the loops read (a loop reads its constants at a running index
    from one place), or a budget that holds the whole copy: no partial copy."""
    whole = layout_with(heptane_diffusion().programs, table_copy=True)
    stripe = 8 * 32 * len(whole.constants)  # one stripe of every warp's row
    loops = -(-whole.loop_slots // 32)
    assert loops > 1
    assert partial_copy(whole, loops * stripe).copied_stripes == loops
    assert partial_copy(whole, loops * stripe - 1) is None
    assert partial_copy(whole, whole.stripes * stripe) is None
    assert partial_copy(whole, 0) is None


def test_the_partial_copy_matches_the_reference_on_the_host():
    generated = generate(heptane_diffusion())
    assert worst(run(generated, "heptane"), "diffusion", "heptane") <= TOLERANCE


def test_a_wrong_row_of_the_partial_copy_is_caught():
    """The companion: the copy's slots read at the table's row width (448), or the slots past the copy read at
    the copy's (416): the comparison fails."""
    generated = generate(heptane_diffusion())
    macro = "singe_table[warp_id * 416 + (slot)]"
    beyond = "SINGE_TABLE(warp_id * 448 + (slot))"
    assert macro in generated.cu and beyond in generated.cu
    for cu in (generated.cu.replace(macro, "singe_table[warp_id * 448 + (slot)]"),
               generated.cu.replace(beyond, "SINGE_TABLE(warp_id * 416 + (slot))")):
        ours = run(dataclasses.replace(generated, cu=cu), "heptane")
        assert not np.all(np.isfinite(ours)) or worst(ours, "diffusion", "heptane") > 1e-6


def _beyond_reads(code) -> int:
    """The reads of constants past the copy that code several warps share issues per slab (``LDC.64``)."""
    return sum(1 for k, unit in enumerate(code.units)
               if isinstance(unit, ComputeUnit) and code.constant_class(k) == "lds"
               for instr in live_instructions(unit.op.instrs, code.needed(unit))
               for src in instr.srcs if isinstance(src, Const) and src.value in code.beyond_copy)


def test_the_model_reads_the_constants_past_the_copy_from_the_bank():
    """Each warp's constants only past the copy (``WarpCode.beyond_copy``) are ``LDC.64`` loads where code
    several warps share reads them, the others loads of the copy; their footprint is what the warps read of
    the bank, which fits the constant cache where the table read in place does not."""
    programs = heptane_diffusion().programs
    overlaid = lay_out(programs)
    codes = warp_code(programs, "sm_90", overlaid)
    row = overlaid.constants[0]
    assert codes[0].beyond_copy == frozenset(row[416:]) - frozenset(row[:416]) and codes[0].beyond_copy
    assert all(_beyond_reads(code) > 0 for code in codes)
    value = next(iter(codes[0].beyond_copy))
    instr = next(i for unit in codes[0].units if isinstance(unit, ComputeUnit) for i in unit.op.instrs
                 if any(isinstance(s, Const) and s.value == value for s in i.srcs))
    expansion = EXPANSIONS[instr.opcode]
    assert instruction_classes(instr, expansion, frozenset(), None, "lds", codes[0].beyond_copy).get(TABLE_LOAD)
    assert instruction_classes(instr, expansion, frozenset(), None, "lds").get(SHARED_TABLE_LOAD)
    target = heptane_diffusion().options.target
    assert 0 < bank_footprint(codes, overlaid) <= target.constant_cache
    assert not misses_the_constant_cache(programs, target, overlaid)
    assert misses_the_constant_cache(programs, target, layout_with(programs, table_copy=False))


def _sass_tools_missing() -> list[str]:
    from autotune import sass

    return sass.missing_tools()


@pytest.mark.skipif(bool(_sass_tools_missing()), reason="needs nvcc, nvdisasm and cuobjdump (pip install "
                                                        "nvidia-cuda-nvdisasm nvidia-cuda-cuobjdump)")
def test_the_partial_copy_in_the_sass():
    """sm_90: no spills; the loops read pairs of the copy (``LDS.128``: as many as the whole copy's kernel
    reads but the pairs past the copy); each warp issues at most the ``LDC.64`` of the whole copy's kernel
    (its index tables) and those the model counts past the copy (ptxas keeps them across the slab loop where
    it can: n-heptane's warps issue 8 against the whole copy's 10), under a tenth of those reading the table
    in place; the model's per-warp counts within the tolerance of tests/test_timing.py."""
    from autotune import sass
    from test_timing import SASS_TOLERANCE

    ldc, lds128 = {}, {}
    for table in ("auto", "shared", "cache"):
        with tempfile.TemporaryDirectory() as scratch:
            view = sass.analyse(generate(heptane_diffusion(table)).write(scratch)[0], "sm_90", 13)
        assert view.spill_stores == 0
        ldc[table] = [sum(n for opcode, n in walk.opcodes.items() if opcode.startswith("LDC")) for walk in view.warps]
        lds128[table] = [walk.opcodes["LDS.128"] for walk in view.warps]
    print(ldc, lds128)
    codes = warp_code(heptane_diffusion().programs, "sm_90")
    for w, code in enumerate(codes):
        assert 150 < lds128["auto"][w] <= lds128["shared"][w] and lds128["cache"][w] == 0
        assert ldc["auto"][w] <= ldc["shared"][w] + _beyond_reads(code)
        assert 10 * ldc["auto"][w] < ldc["cache"][w]
    rows = sass.model_check(heptane_diffusion(), "sm_90")
    print("\n" + sass.format_model_check("heptane diffusion 13x3 partial copy", rows))
    for warp, modeled, issued in rows:
        assert abs(modeled - issued) <= SASS_TOLERANCE * issued, (warp, modeled, issued)
