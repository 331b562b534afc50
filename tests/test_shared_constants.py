"""The constant table's copy in shared memory (``--constant-table shared``, ``CompileOptions.constant_table``).

Each warp copies its row of the per-warp constant table into shared memory before its first slab; code
shared between warps reads it there (a loop two adjacent constants per ``LDS.128``), code one warp runs
alone reads the table itself.  The emitted kernels run on the host against singe.reference (1e-9
relative, as tests/test_loops.py), with companions in which a wrong pair or a wrong row fails; the
layout, the SASS and the timing model's counts of the loads are checked against what is emitted.
"""

from __future__ import annotations

import dataclasses
import functools
import re
import tempfile
from collections import Counter

import numpy as np
import pytest

from singe.codegen import check_shared_bytes, generate, kernel_shared_bytes, lay_out, table_copy_bytes
from singe.compiler import compile_kernel
from singe.errors import OptionError
from singe.options import CompileOptions
from singe.timing import SHARED_TABLE_LOAD, SHARED_TABLE_PAIR, WARP_BYTES, issue_classes, queue_demand
from conftest import load
from test_loops import TOLERANCE, run, worst


@functools.lru_cache(maxsize=None)
def compiled(kernel: str, warps: int, name: str = "dme", table: str = "shared", ctas: int | None = None):
    return compile_kernel(load(name), kernel, warps=warps, ctas_per_sm=ctas, constant_table=table)


@pytest.mark.parametrize("name, kernel, warps", [("dme", "viscosity", 4), ("dme", "diffusion", 4),
                                                ("heptane", "viscosity", 2)])
def test_kernels_reading_the_shared_copy_match_the_reference(name, kernel, warps):
    """DME viscosity and diffusion (loops whose iterations read two constants, in pairs) and n-heptane
    viscosity (rolled loops of one constant per iteration, no pairs)."""
    generated = generate(compiled(kernel, warps, name))
    assert generated.info.table_copy_bytes > 0 and "singe_table[" in generated.cu
    assert (" = SINGE_CONST_PAIR(k" in generated.cu) == (name == "dme")
    assert worst(run(generated, name), kernel, name) <= TOLERANCE


def test_a_wrong_pair_or_row_of_the_copy_is_caught():
    """The two constants of each pair swapped, or every warp copying the next warp's row: the comparison fails."""
    generated = generate(compiled("viscosity", 4))
    swapped = re.sub(r"\b(k\d+p\d+)\.([xy])\b", lambda m: f"{m.group(1)}.{'yx'['xy'.index(m.group(2))]}",
                     generated.cu)
    assert swapped != generated.cu
    row = re.search(r"singe_table\[\(warp_id \* (\d+) \+ s\) \* 32 \+ lane\] = SINGE_TABLE\(\(warp_id", generated.cu)
    assert row
    shifted = generated.cu.replace(row.group(0), row.group(0).replace("SINGE_TABLE((warp_id", "SINGE_TABLE(((warp_id + 1) % 4"), 1)
    for cu in (swapped, shifted):
        ours = run(dataclasses.replace(generated, cu=cu))
        assert not np.all(np.isfinite(ours)) or worst(ours, "viscosity") > 1e-6


def test_pairs_start_at_even_entries_and_one_warps_code_reads_the_table():
    """Every loop reading pairs starts its block at an even slot of a row of an even width (16 B aligned in
    the copy); the units one warp runs alone read the table itself (``SINGE_KNOWN_*``)."""
    generated = generate(compiled("viscosity", 15, ctas=3))
    starts = [int(s) for s in re.findall(r"int (k\d+) = SINGE_CONST_INDEX\((\d+)\);", generated.cu) for s in s[1:]]
    assert starts and all(s % 2 == 0 for s in starts)
    assert generated.info.stripes * 32 % 2 == 0
    assert "SINGE_KNOWN_CONST_PAIR(" in generated.cu and "SINGE_CONST_PAIR(" in generated.cu
    cache = generate(compiled("viscosity", 15, table="cache", ctas=3))
    assert "singe_table" not in cache.cu and "SINGE_KNOWN" not in cache.cu and cache.info.table_copy_bytes == 0


def test_the_copy_adds_to_the_shared_memory_the_launch_asks_for():
    programs = compiled("viscosity", 15, ctas=3).programs
    overlaid = lay_out(programs)
    table = 8 * 15 * 32 * -(-len(overlaid.constants[0]) // 32)
    generated = generate(compiled("viscosity", 15, ctas=3))
    assert generated.info.table_copy_bytes == table
    assert f"SINGE_SET_SHARED(dme_viscosity_kernel, {programs.shared_bytes + table});" in generated.cu


def test_too_much_shared_memory_is_refused_with_the_setting_that_avoids_it():
    programs = compiled("viscosity", 15, ctas=3).programs
    options = CompileOptions(warps=15, ctas_per_sm=3)
    with pytest.raises(OptionError, match=r"exceed the 232448 B a CTA may have on sm_90: use --constant-table cache"):
        check_shared_bytes(300_000, programs, options)
    check_shared_bytes(200_000, programs, options)


def test_the_option_is_validated_and_named_in_the_key():
    with pytest.raises(OptionError, match="--constant-table must be one of auto, cache, shared, bank, got .texture."):
        CompileOptions(constant_table="texture")
    assert CompileOptions(constant_table="shared").key().endswith("-shared")
    assert CompileOptions(constant_table="cache").key().endswith("-cache")
    assert CompileOptions().constant_table == "auto" and not CompileOptions().key().endswith(("-auto", "-cache"))


@pytest.mark.parametrize("name, kernel, warps, ctas, copied", [
    ("dme", "viscosity", 15, 3, True), ("dme", "diffusion", 10, 3, True), ("heptane", "viscosity", 13, 3, True),
    ("heptane", "diffusion", 13, 2, True), ("heptane", "diffusion", 4, 8, False)])
def test_auto_copies_the_table_where_it_keeps_the_occupancy(name, kernel, warps, ctas, copied):
    """'auto' (the default) lays the kernel out as 'shared' where the copy fits the shared memory a CTA has
    beside its exchange slots at its CTAs per SM (H100: 75 KB a CTA at 3 CTAs), else as 'cache' where not
    even the stripes its loops read fit (n-heptane diffusion at 4 x 8).  Either way the layout is the
    explicit option's.  Where those stripes fit and the whole copy does not (n-heptane diffusion at 13 x 3:
    33.5 KB of slots and a 46.6 KB copy; at 2 CTAs, 113 KB, it takes the whole): tests/test_partial_copy.py."""
    auto = compile_kernel(load(name), kernel, warps=warps, ctas_per_sm=ctas)
    explicit = compiled(kernel, warps, name, "shared" if copied else "cache", ctas)
    overlaid = lay_out(auto.programs)
    assert overlaid.table_copy == copied
    shared = lay_out(compiled(kernel, warps, name, "shared", ctas).programs)
    assert (table_copy_bytes(shared) <= auto.programs.table_budget) == copied
    target = auto.options.target
    assert kernel_shared_bytes(auto.programs, overlaid) <= target.shared_budget(ctas)
    ours, theirs = generate(auto), generate(explicit)
    assert ours.info.table_copy_bytes == theirs.info.table_copy_bytes
    assert ours.cu.replace(auto.options.key(), "KEY") == theirs.cu.replace(explicit.options.key(), "KEY")


def test_auto_copies_the_table_where_the_cache_would_miss_at_the_ctas_it_chose(monkeypatch):
    """CTAs per SM chosen by the compiler: GRI-Mech diffusion at 8 warps plans 4, where its copy (48 KB) does not
    fit beside its slots, but its warps would read 38 KB of the constant bank in place, more than the constant
    cache holds: it is compiled again with the copy ('shared') at the same 4 planned, 2 resident (measured on the
    H200 at 8 warps: 192.0-194.6 Mpoints/s against 35.0 read in place, and 143.0 planned at 2,
    docs/measurements/2026-11-27-h200-copy and -stripes).  Compiling its options again gives the same kernel.
    DME viscosity at 4 warps in Wilke pairs (8 CTAs planned) reads 7.9 KB, within the cache: it reads the cache
    (measured: 1733.7 against 1517.6 with the copy, 7 resident).  Companions: the same GRI-Mech kernel with the misses not
    counted, or with more warps per SM required than the copy leaves (``COPY_WARPS_PER_SM``), reads the cache."""
    import singe.compiler

    gri = compile_kernel(load("gri30"), "diffusion", warps=8)
    target, shared = gri.options.target, generate(gri).info.table_copy_bytes + gri.programs.shared_bytes
    assert (gri.options.ctas_per_sm, gri.options.constant_table) == (4, "shared")
    assert lay_out(gri.programs).table_copy and target.resident_ctas(4, shared) == 2
    assert gri.programs.plan.budget == target.register_budget(gri.programs.threads, 4)  # the budget planned
    again = compile_kernel(load("gri30"), "diffusion", options=gri.options)
    assert generate(again).cu == generate(gri).cu
    dme = compile_kernel(load("dme"), "viscosity", warps=4, wilke_group=2)
    assert dme.options.ctas_per_sm == 8 and not lay_out(dme.programs).table_copy
    monkeypatch.setattr(singe.compiler, "COPY_WARPS_PER_SM", 17)  # the copy's 2 CTAs x 8 warps: too few
    fewer = compile_kernel(load("gri30"), "diffusion", warps=8)
    assert (fewer.options.ctas_per_sm, fewer.options.constant_table) == (4, "auto")
    assert not lay_out(fewer.programs).table_copy
    monkeypatch.setattr(singe.compiler, "COPY_WARPS_PER_SM", 16)
    monkeypatch.setattr(singe.compiler, "misses_the_constant_cache", lambda *args: False)
    cache = compile_kernel(load("gri30"), "diffusion", warps=8)
    assert cache.options.constant_table == "auto" and not lay_out(cache.programs).table_copy


def test_switch_dispatched_kernels_keep_their_constants_at_known_indices():
    """Chemistry is one switch case per warp: its constants sit at indices ptxas knows, so the option leaves it."""
    assert compiled("chemistry", 8).programs.constant_table == "cache"


def test_the_model_charges_the_load_queue_what_the_probe_measured_of_uniform_loads():
    """A warp-uniform LDS.64 of the table's copy takes 0.646 / 0.870 of a lane-varying LDS.64's slot, an LDS.128
    0.646 / 0.466 (the load probe's 'bcast' and 'bcast128' modes on the H200); the SASS walk counts both as
    'lds'."""
    assert queue_demand({SHARED_TABLE_LOAD: 3}) == pytest.approx(3 * 0.646 / 0.870 * WARP_BYTES)
    assert queue_demand({SHARED_TABLE_PAIR: 2}) == pytest.approx(2 * 0.646 / 0.466 * WARP_BYTES)
    assert queue_demand({SHARED_TABLE_LOAD: 3}) != 3 * WARP_BYTES  # companion: the former unmeasured slot
    assert issue_classes({SHARED_TABLE_LOAD: 3, SHARED_TABLE_PAIR: 1, "lds": 2}) == {"lds": 6}


def test_a_loop_reading_its_constants_in_pairs_counts_them_as_pairs():
    """DME viscosity at the paper's 15 x 3 (the copy, two constants a Wilke iteration): one LDS.128 an
    iteration in the model's classes, as the SASS has them."""
    from singe.timing import loop_classes, warp_code
    from singe.programs.lowering import loop_summary

    kernel = compile_kernel(load("dme"), "viscosity", warps=15, ctas_per_sm=3)
    code = warp_code(kernel.programs)[5]
    (k, unit), = [(k, u) for k, u in enumerate(code.units) if getattr(u, "loops", ())]
    (loop,) = unit.loops
    classes = loop_classes(unit, loop, code, k)
    assert classes[SHARED_TABLE_PAIR] == loop_summary(unit, loop).iterations
    assert classes.get(SHARED_TABLE_LOAD, 0) <= 0  # the two constants' loads replaced, none left single


def _sass_tools_missing() -> list[str]:
    from autotune import sass

    return sass.missing_tools()


@pytest.mark.skipif(bool(_sass_tools_missing()), reason="needs nvcc, nvdisasm and cuobjdump (pip install "
                                                        "nvidia-cuda-nvdisasm nvidia-cuda-cuobjdump)")
def test_loops_read_two_constants_per_lds128_in_the_sass():
    """DME viscosity at the paper's 15 x 3 (sm_90): the loops' constant reads are LDS.128 (one per two
    constants of an iteration) in place of LDC.64, with no spills."""
    from autotune import sass

    counts = {}
    for table in ("cache", "shared"):
        with tempfile.TemporaryDirectory() as scratch:
            path = generate(compiled("viscosity", 15, table=table, ctas=3)).write(scratch)[0]
            view = sass.analyse(path, "sm_90", 15)
        assert view.spill_stores == 0
        counts[table] = sum((walk.opcodes for walk in view.warps), Counter())
    print({table: {k: v for k, v in c.items() if k.startswith(("LDS", "LDC"))} for table, c in counts.items()})
    assert counts["shared"]["LDS.128"] >= 13 * 29 and counts["cache"]["LDS.128"] == 0
    assert counts["shared"]["LDC.64"] < counts["cache"]["LDC.64"] / 4


@pytest.mark.skipif(bool(_sass_tools_missing()), reason="needs nvcc, nvdisasm and cuobjdump (pip install "
                                                        "nvidia-cuda-nvdisasm nvidia-cuda-cuobjdump)")
@pytest.mark.parametrize("name, kernel, warps, ctas", [("dme", "viscosity", 15, 3), ("dme", "diffusion", 10, 3),
                                                      ("heptane", "diffusion", 13, 3), ("h2o2", "viscosity", 4, 2)])
def test_model_issues_what_the_kernel_reading_the_copy_issues_per_warp(name, kernel, warps, ctas):
    """The timing model's per-warp counts against nvdisasm's (sm_90), as tests/test_timing.py checks the
    kernels reading the table in place: the loops' pairs (``lowering.constant_pairs``) and nvcc's pairs of
    adjacent slots in shared code (``OverlaidKernel.paired_reads``) each one LDS.  H2/O2 viscosity's switch
    on the warp id is a jump table there (``BRXU`` on a ``ULDC`` at a uniform index, ``sass.INDIRECT``):
    before the walk followed it, warp 0 fell into warp 1's case (model 483 against 389, 24 %)."""
    from autotune import sass
    from test_timing import SASS_TOLERANCE

    rows = sass.model_check(compiled(kernel, warps, name, ctas=ctas), "sm_90")
    print("\n" + sass.format_model_check(f"{name} {kernel} shared", rows))
    for warp, modeled, issued in rows:
        assert abs(modeled - issued) <= SASS_TOLERANCE * issued, (warp, modeled, issued)
