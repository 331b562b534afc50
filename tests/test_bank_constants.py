"""Loops once per warp, their constants read from the constant bank (``--constant-table bank``).

A unit with loops that several warps would share is emitted once for each of them, a case of a switch that
declares its warp a constant, so that ptxas knows the indices of its constants and loads them by ``ULDC.64``
at a uniform index, off the SM's load queue (``OverlaidKernel.loops_per_warp``,
``timing.UNIFORM_TABLE_LOAD``).  The emitted kernels run on the host against singe.reference (1e-9 relative,
as tests/test_loops.py), with a companion in which a case reads another warp's constants; the layout, the
SASS and the timing model's counts are checked against what is emitted.
"""

from __future__ import annotations

import dataclasses
import functools
import pathlib
import re
import tempfile

import numpy as np
import pytest

import singe.codegen
from singe.codegen import generate, lay_out
from singe.codegen.nvcc import find_nvcc
from singe.compiler import compile_kernel
from singe.errors import OptionError
from singe.programs.lowering import PER_WARP_LOOP_UNROLL
from singe.timing import (TABLE_LOAD, UNIFORM_TABLE_LOAD, issue_classes, loop_classes, model, queue_demand,
                          warp_code)
from conftest import load
from test_loops import TOLERANCE, run, worst


@functools.lru_cache(maxsize=None)
def compiled(kernel: str, warps: int, name: str = "dme", table: str = "bank", ctas: int | None = None,
             arch: str = "sm_90"):
    return compile_kernel(load(name), kernel, warps=warps, ctas_per_sm=ctas, constant_table=table, arch=arch)


def _sass_tools_missing() -> list[str]:
    from autotune import sass

    return sass.missing_tools()


NEEDS_SASS = pytest.mark.skipif(bool(_sass_tools_missing()), reason="needs nvcc, nvdisasm and cuobjdump (pip "
                                                                    "install nvidia-cuda-nvdisasm nvidia-cuda-cuobjdump)")


@pytest.mark.parametrize("name, kernel, warps, ctas", [("dme", "viscosity", 10, 4), ("dme", "diffusion", 4, None),
                                                      ("heptane", "viscosity", 2, None)])
def test_kernels_reading_the_bank_per_warp_match_the_reference(name, kernel, warps, ctas):
    """DME viscosity at 10 warps (the Wilke unit of warps 2-9 once per warp), DME diffusion (loops over
    exponentials) and n-heptane viscosity at 2 warps (loops reading the integer table of slots)."""
    generated = generate(compiled(kernel, warps, name, ctas=ctas))
    assert "singe_table" not in generated.cu and "SINGE_CONST_PAIR(" not in generated.cu
    assert worst(run(generated, name), kernel, name) <= TOLERANCE


def test_a_case_reading_another_warps_constants_is_caught():
    """Warp 3's case declaring itself warp 4 reads warp 4's constants and slots: the comparison fails."""
    generated = generate(compiled("viscosity", 10, ctas=4))
    declaration = "const int warp_id = 3;"
    assert generated.cu.count(declaration) == 1
    wrong = generated.cu.replace(declaration, "const int warp_id = 4;")
    ours = run(dataclasses.replace(generated, cu=wrong))
    assert not np.all(np.isfinite(ours)) or worst(ours, "viscosity") > 1e-6


def test_the_units_with_loops_run_once_per_warp_partly_unrolled():
    """DME viscosity at 10 warps: warps 2-9 share every unit but the Wilke sum, which each runs as its own case
    (a constant warp, the loop ``PER_WARP_LOOP_UNROLL`` iterations a trip); none of those units counts as code
    several warps share, so the model knows their constants' indices.  The overlay reading the copy shares
    it instead."""
    programs = compiled("viscosity", 10, ctas=4).programs
    overlaid = lay_out(programs)
    assert overlaid.loops_per_warp and not overlaid.table_copy
    cu = generate(compiled("viscosity", 10, ctas=4)).cu
    assert all(f"const int warp_id = {w};" in cu for w in range(2, 10))
    assert f"#pragma unroll {PER_WARP_LOOP_UNROLL}\n" in cu and "#pragma unroll\n" not in cu
    assert overlaid.loops == cu.count("for (int i = 0;") == 10  # each warp's copy counts
    looped = {(w, k) for w in range(10) for k, unit in enumerate(warp_code(programs)[w].units)
              if getattr(unit, "loops", ())}
    assert len(looped) == 10 and not looped & overlaid.shared_positions
    shared = compiled("viscosity", 10, table="shared", ctas=4).programs
    copy = lay_out(shared)
    looped = {(w, k) for w in range(2, 10) for k, unit in enumerate(warp_code(shared)[w].units)
              if getattr(unit, "loops", ())}
    assert not copy.loops_per_warp and len(looped) == 8 and looped <= copy.shared_positions  # companion


def test_the_model_charges_uniform_loads_no_slot_of_the_load_queue():
    """A ``ULDC.64`` at a uniform index is an issue slot ('other' in the SASS walk's classes) and no load-queue
    slot (an ``LDC.64``, its companion, takes one); the Wilke loop of the bank kernel counts one per constant an
    iteration, partly unrolled, where the cache's kernel unrolls it completely."""
    assert queue_demand({UNIFORM_TABLE_LOAD: 5}) == 0 and queue_demand({TABLE_LOAD: 5}) > 0
    assert issue_classes({UNIFORM_TABLE_LOAD: 5, "other": 1}) == {"other": 6}
    for table in ("bank", "cache"):
        code = warp_code(compiled("viscosity", 10, table=table, ctas=4).programs)[5]
        (k, unit), = [(k, u) for k, u in enumerate(code.units) if getattr(u, "loops", ())]
        (loop,) = unit.loops
        summary = code.summary(unit, loop)
        assert summary.unroll == (PER_WARP_LOOP_UNROLL if table == "bank" else 29)
    classes = loop_classes(unit, loop, warp_code(compiled("viscosity", 10, ctas=4).programs)[5], k)
    assert classes[UNIFORM_TABLE_LOAD] == 29 * 3 and not classes.get(TABLE_LOAD), classes


def test_the_bank_frees_the_load_queue_on_the_h100_preset():
    """DME viscosity at 10 warps x 4 CTAs, modeled on the H100 preset: reading the copy in shared memory, the
    load queue bounds it; reading the bank per warp, it takes less of the queue and runs faster (model)."""
    bank = model(compiled("viscosity", 10, ctas=4), "H100")
    copy = model(compiled("viscosity", 10, table="shared", ctas=4), "H100")
    print(f"\nH100 preset, Mpoints/s: bank {bank.points_per_second / 1e6:.1f} (shared "
          f"{bank.utilization['shared']:.2f}), copy {copy.points_per_second / 1e6:.1f} "
          f"(shared {copy.utilization['shared']:.2f})")
    assert copy.utilization["shared"] == max(copy.utilization.values())
    assert bank.utilization["shared"] < copy.utilization["shared"]
    assert bank.points_per_second > copy.points_per_second


def test_tables_beyond_the_constant_bank_are_refused_with_the_settings_that_read_them(monkeypatch):
    """Read at indices ptxas knows, a global table would be an ``LDG`` a constant: the option is refused
    where the tables exceed what the bank holds for them, naming the sizes and the alternatives."""
    programs = compiled("viscosity", 10, ctas=4).programs
    lay_out(programs)  # fits
    monkeypatch.setattr(singe.codegen, "CONSTANT_BANK_BYTES", 1024)
    with pytest.raises(OptionError, match=r"--constant-table bank: the kernel's constant tables take \d+ B, more "
                                          r"than the 1024 B .* use --constant-table shared .* or cache"):
        lay_out(programs)


@NEEDS_SASS
def test_loops_read_their_constants_by_uniform_loads_in_the_sass():
    """DME viscosity at 10 warps x 4 CTAs (sm_90): each of warps 2-9 issues its Wilke sum's 87 constants a slab as
    ``ULDC.64`` (29 iterations of 3), no ``LDS.128`` and fewer ``LDC.64`` than iterations (those of the
    species operations it shares with the other warps); the copy's kernel issues ``LDS.128`` pairs instead.
    No spills."""
    from autotune import sass

    views, listing = {}, ""
    for table in ("bank", "shared"):
        with tempfile.TemporaryDirectory() as scratch:
            path = generate(compiled("viscosity", 10, table=table, ctas=4)).write(scratch)[0]
            views[table] = sass.analyse(path, "sm_90", 10, keep=scratch)
            if table == "bank":
                listing = next(pathlib.Path(scratch).glob("*.sass")).read_text()
        assert views[table].spill_stores == 0
    assert re.search(r"ULDC\.64 UR\d+, c\[0x3\]\[UR\d+", listing)  # at an index in a uniform register
    for w in range(2, 10):
        bank, copy = views["bank"].warps[w].opcodes, views["shared"].warps[w].opcodes
        assert bank["ULDC.64"] >= 29 * 3 and bank["LDS.128"] == 0 and bank["LDC.64"] < 29, (w, bank)
        assert copy["LDS.128"] >= 29 and copy["ULDC.64"] < 29, (w, copy)


@NEEDS_SASS
@pytest.mark.parametrize("name, kernel, warps, ctas, arch", [
    ("dme", "viscosity", 10, 4, "sm_90"), ("dme", "viscosity", 10, 4, "sm_80"), ("dme", "diffusion", 10, 3, "sm_90"),
    ("heptane", "viscosity", 8, None, "sm_90")])
def test_model_issues_what_the_kernel_reading_the_bank_issues_per_warp(name, kernel, warps, ctas, arch):
    """The timing model's per-warp counts against nvdisasm's, as tests/test_timing.py checks the overlay: the
    per-warp loops' trips and uniform loads, and the switch around them."""
    from autotune import sass
    from test_timing import SASS_TOLERANCE

    rows = sass.model_check(compiled(kernel, warps, name, ctas=ctas, arch=arch), arch)
    print("\n" + sass.format_model_check(f"{name} {kernel} bank {arch}", rows))
    for warp, modeled, issued in rows:
        assert abs(modeled - issued) <= SASS_TOLERANCE * issued, (warp, modeled, issued)


def test_the_loops_per_warp_are_checked_by_ptxas_as_an_unchecked_plan():
    """The register plan's floor was checked against ptxas for the code the warps share; with the loops once per
    warp the CTAs per SM are settled by ptxas (``ptxas_check.needs_settling``), the copy's are not."""
    from singe import ptxas_check

    assert ptxas_check.needs_settling(compiled("diffusion", 8))
    assert not ptxas_check.needs_settling(compiled("diffusion", 8, table="shared"))  # companion


@pytest.mark.skipif(find_nvcc() is None, reason="nvcc (CUDA toolkit) not installed")
def test_a_kernel_whose_own_loops_spill_is_settled_to_a_count_that_does_not():
    """GRI-Mech diffusion at 8 warps with the loops once per warp (sm_90): ptxas spills 12 B at the 4 CTAs per SM
    the plan chooses, and none at 3, which the compiler takes.  (DME's, the kernel before, spills at no count since
    its pairs read the mole numbers.)"""
    from singe.ptxas_check import settle_if_needed

    settled = settle_if_needed(compiled("diffusion", 8, "gri30"))
    assert [(t.ctas, bool(t.spills)) for t in settled.trials] == [(4, True), (3, False)]
    assert settled.compiled.options.ctas_per_sm == 3 and settled.compiled.options.constant_table == "bank"


def test_measurements_label_the_bank_kernels_and_compile_them_again():
    """gpu_bench labels a bank kernel 'bank' (not 'cache', which a kernel without the copy reads), and the label
    gives back the option, so that a measurement's kernel can be compiled again (``options_of_shape``)."""
    from autotune.gpu_bench import options_of_shape, table_label

    assert table_label(generate(compiled("viscosity", 10, ctas=4)).info) == "bank"
    assert table_label(generate(compiled("viscosity", 10, table="cache", ctas=4)).info) == "cache"  # companion
    assert options_of_shape("10x4 bank", "sm_90")["constant_table"] == "bank"


@pytest.mark.parametrize("name", ["dme", "heptane", "gri30"])
@pytest.mark.parametrize("kernel", ["viscosity", "diffusion"])
def test_bank_kernels_at_many_warp_counts_match_the_reference(name, kernel):
    """The loops once per warp at 1-16 warps (one warp: no group, no case; 2: warp-alone loops reading a table
    of slots; odd counts: groups of several shapes), on the host against singe.reference (2.5e-15 at most when
    this test was written; 30 s for the six)."""
    for warps in (1, 2, 3, 5, 7, 9, 12, 16):
        generated = generate(compile_kernel(load(name), kernel, warps=warps, constant_table="bank"))
        assert worst(run(generated, name), kernel, name) <= TOLERANCE, warps
