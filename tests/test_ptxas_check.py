"""ptxas settles the CTAs per SM where the register plan's floor is unchecked (``singe.ptxas_check``)."""

from __future__ import annotations

import dataclasses
import re

import pytest

from singe.cli import main
from singe.codegen import generate
from singe.codegen.nvcc import NvccResult, PtxasEntry, find_nvcc
from singe.compiler import compile_kernel
from singe.frontend import load_mechanism as singe_load
from singe import ptxas_check
from singe.ptxas_check import needs_settling, settle_ctas, settle_if_needed
from cantera_reference import CANTERA_DATA
from conftest import load


def fake_ptxas(spills_above: int):
    """A stand-in for ``compile_cuda``: spill stores at more than ``spills_above`` CTAs per SM (read from the
    kernel's launch bounds), none at fewer."""
    def compile_cuda(source, arch):
        text = open(source).read()
        threads, ctas, name = re.search(r"__launch_bounds__\((\d+), (\d+)\)\s*(\w+)", text).groups()
        stores = 64 if int(ctas) > spills_above else 0
        registers = 65536 // (int(threads) * int(ctas))
        return NvccResult(arch, (PtxasEntry(name, arch, registers, stores, stores, stores),), ())
    return compile_cuda


@pytest.fixture(scope="module")
def wide():
    """GRI-Mech diffusion at 4 warps: 14 columns a warp in its turns, beyond the checked 7; 7 CTAs chosen by the
    register plan (the constant table read in place: 'auto' would copy it at 3, ``copy_where_the_cache_misses``)."""
    compiled = compile_kernel(load("gri30"), "diffusion", warps=4, constant_table="cache")
    assert compiled.options.ctas_per_sm == 7 and needs_settling(compiled)
    return compiled


def test_settling_takes_the_most_ctas_ptxas_compiles_without_spills(wide):
    settled = settle_ctas(wide, compile=fake_ptxas(spills_above=4))
    # at 6 and 5 CTAs the kernel rescheduled is the same file as the same code (no stripes, the same schedule): one
    # run each (a kernel rescheduled differently is tried too: the companion below, at 4 CTAs and fewer)
    assert [(t.ctas, t.code) for t in settled.trials] == [(7, "chosen"), (6, "same code"), (5, "same code"),
                                                           (4, "same code")]
    assert [t.spills for t in settled.trials] == [True] * 3 + [False]
    assert settled.spill_free and settled.compiled.options.ctas_per_sm == 4
    plan = settled.compiled.programs.plan
    assert plan.confirmed == "sm_90" and plan.ctas_per_sm == 4 and not needs_settling(settled.compiled)
    assert str(plan).endswith("0 of 37 constant stripes in registers; no spills in ptxas (sm_90))")
    settled.compiled.verify()  # the same programs: their barriers and shared memory fit fewer CTAs
    assert settled.compiled.programs.programs == wide.programs.programs
    unlimited = dataclasses.replace(plan, stripe_limit=None)  # what 4 CTAs' budget alone would keep
    assert plan.stripes_in_registers() == wide.programs.plan.stripes_in_registers() < unlimited.stripes_in_registers()
    assert settled.compiled.programs.warnings == () and "WARNING" not in generate(settled.compiled).cu
    assert "__launch_bounds__(128, 4)" in generate(settled.compiled).cu
    assert settled.report() == ("ptxas (sm_90) spills at 7-5 CTAs per SM and not at 4 (same code, 128 registers): 4 "
                                "taken; --ctas-per-sm 7 keeps the plan's count and its "
                                f"{settled.trials[0].entry.spill_stores} B of spill stores "
                                "(faster than the count taken in 2 of 3 kernels timed on an H200)")
    assert settled.trials[0].entry.spill_stores > 0


def test_settling_keeps_the_choice_and_its_warning_where_ptxas_spills_at_every_count(wide):
    """The companion: a ptxas that spills everywhere leaves the chosen kernel, and its warning, as they were."""
    settled = settle_ctas(wide, compile=fake_ptxas(spills_above=0))
    assert [t.ctas for t in settled.trials] == [7, 6, 5] + [c for c in range(4, 0, -1) for _ in range(2)]
    assert [t.code for t in settled.trials if t.ctas == 4] == ["same code", "rescheduled"]
    assert not settled.spill_free
    assert settled.compiled is wide and "diffusion turns over up to 14" in settled.compiled.programs.warnings[0]
    assert settled.report() == "warning: ptxas (sm_90) spills at every count from 7 CTAs per SM to 1; kept 7"
    only = settle_ctas(compile_kernel(load("gri30"), "diffusion", warps=4, ctas_per_sm=1), compile=fake_ptxas(0))
    assert only.report() == "warning: ptxas (sm_90) spills at its only count, 1 CTA per SM"


def test_only_unchecked_plans_are_settled(monkeypatch):
    """At 8 warps (7 columns a warp, checked) with the table read in place ptxas is not run; with the default
    copy at 4 CTAs per SM planned, 2 resident, it is (``copies_beyond_residency``); without nvcc nothing is."""
    narrow = compile_kernel(load("gri30"), "diffusion", warps=8, constant_table="cache")
    assert not needs_settling(narrow) and settle_if_needed(narrow) is None
    copied = compile_kernel(load("gri30"), "diffusion", warps=8)
    assert (copied.options.ctas_per_sm, copied.options.constant_table) == (4, "shared")
    assert ptxas_check.copies_beyond_residency(copied) and needs_settling(copied)
    given = compile_kernel(load("gri30"), "diffusion", warps=8, ctas_per_sm=2, constant_table="shared")
    assert not ptxas_check.copies_beyond_residency(given)  # companion: 2 planned, 2 resident
    monkeypatch.setattr(ptxas_check, "find_nvcc", lambda: None)
    assert settle_if_needed(compile_kernel(load("gri30"), "diffusion", warps=4)) is None


@pytest.mark.skipif(find_nvcc() is None, reason="nvcc (CUDA toolkit) not installed")
def test_a_copy_beyond_residency_that_spills_is_settled():
    """gri30_ion diffusion at 7 warps (sm_90): the copy at 4 CTAs per SM planned, 2 resident, where ptxas spills
    8 B (the copy before the slab loop, which the register plan does not count); settled, the same code at 3
    compiles without spills.  (At the defaults' 8 warps it spilled 4 B before the pairs read the mole numbers,
    and spills at no count now.)"""
    ion = compile_kernel(singe_load(CANTERA_DATA / "gri30_ion.yaml"), "diffusion", warps=7)
    assert ptxas_check.copies_beyond_residency(ion)
    settled = settle_if_needed(ion)
    assert [(t.ctas, bool(t.spills)) for t in settled.trials] == [(4, True), (3, False)]
    assert settled.compiled.options.ctas_per_sm == 3 and settled.compiled.options.constant_table == "shared"


@pytest.mark.skipif(find_nvcc() is None, reason="nvcc (CUDA toolkit) not installed")
def test_guarded_products_are_settled():
    """Chemistry with Cantera's sign guard (``--products cantera``), whose floor was checked without the guards'
    values: GRI-Mech at the defaults' 8 warps, 2 CTAs per SM planned (112 registers), spills 8 B on sm_90;
    settled, 1 compiles without spills.  The default products are not settled (0 B at 2, 128 registers)."""
    plain = compile_kernel(load("gri30"), "chemistry", warps=8)
    assert not needs_settling(plain)
    guarded = compile_kernel(load("gri30"), "chemistry", warps=8, products="cantera")
    assert guarded.options.ctas_per_sm == 2 and needs_settling(guarded)
    settled = settle_if_needed(guarded)
    assert [(t.ctas, bool(t.spills)) for t in settled.trials] == [(2, True), (1, False)]
    assert settled.compiled.options.products == "cantera"


@pytest.mark.skipif(find_nvcc() is None, reason="nvcc (CUDA toolkit) not installed")
def test_the_command_lets_ptxas_settle_the_ctas(tmp_path, capsys):
    """GRI-Mech diffusion at 7 warps, the table read in place: the plan chooses 4 CTAs per SM, where ptxas (sm_90)
    spills 8 B; the command takes 3, where it does not, and the written kernel compiles without spills and
    without the warning."""
    from singe.codegen.nvcc import compile_cuda

    assert main(["gri30", "--warps", "7", "--kernels", "diffusion", "--constant-table", "cache",
                 "-o", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "diffusion: ptxas at 4 CTAs per SM" in out and "B of spill stores" in out
    assert "ptxas (sm_90) spills at 4 CTAs per SM and not at 3 (same code, " in out and "warning" not in out
    source = tmp_path / "gri30_diffusion.cu"
    assert "__launch_bounds__(224, 3)" in source.read_text()
    entry = compile_cuda(source, "sm_90").entries[0]
    assert entry.spill_stores == entry.spill_loads == 0


@pytest.mark.skipif(find_nvcc() is None, reason="nvcc (CUDA toolkit) not installed")
def test_an_arch_nvcc_cannot_compile_for_leaves_the_warning(tmp_path, capsys):
    """k20c (sm_35), which CUDA 13's nvcc no longer targets: the command says why ptxas did not check, and the
    plan's warning stands."""
    assert main(["gri30", "--warps", "4", "--kernels", "diffusion", "--arch", "k20c", "-o", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "diffusion: ptxas did not check the CTAs per SM (nvcc fatal" in out and "'sm_35'" in out
    assert "warning: diffusion turns over up to 14 columns per warp" in out


def test_switch_dispatched_kernels_below_the_checked_warps_are_settled():
    """GRI-Mech chemistry at 3 warps (switch-dispatched, below ``SWITCH_WARPS_CHECKED``): its plan is unchecked
    and warns; ptxas settles it like a wide diffusion kernel, the same code first (its constant stripes all in
    registers or none, as the chosen count's); at 6 warps the plan is checked and nothing runs."""
    from singe.programs.plan import SWITCH_WARPS_CHECKED

    few = compile_kernel(load("gri30"), "chemistry", warps=3)
    assert SWITCH_WARPS_CHECKED == 6 and needs_settling(few)
    assert "checked against ptxas from 6 warps per CTA: at 3" in few.programs.warnings[0]
    settled = settle_ctas(few, compile=fake_ptxas(spills_above=few.options.ctas_per_sm - 1))
    assert [(t.ctas, t.code) for t in settled.trials][-1] == (few.options.ctas_per_sm - 1, "same code")
    plan = settled.compiled.programs.plan
    assert settled.spill_free and plan.confirmed and settled.compiled.programs.warnings == ()
    assert plan.stripes_in_registers() == few.programs.plan.stripes_in_registers()
    assert not needs_settling(compile_kernel(load("gri30"), "chemistry", warps=6))


@pytest.fixture(scope="module")
def paper_viscosity():
    """DME viscosity at the paper's 15 warps x 3 CTAs per SM: a floor of 42 registers, a budget of 40, within
    the estimate's error: registers *may* spill (ptxas: 39 registers, none on sm_90)."""
    compiled = compile_kernel(load("dme"), "viscosity", warps=15, ctas_per_sm=3)
    assert compiled.programs.plan.uncertain and needs_settling(compiled)
    assert "registers may spill" in compiled.programs.warnings[0]
    return compiled


def test_a_given_count_that_may_spill_is_checked_by_ptxas(paper_viscosity):
    """The CTAs per SM given: ptxas compiles that count alone; without spills the plan is confirmed and its
    'may spill' warning gives way."""
    checked = settle_ctas(paper_viscosity, compile=fake_ptxas(spills_above=3), given=True)
    assert [(t.ctas, t.code) for t in checked.trials] == [(3, "given")]
    assert checked.spill_free and checked.compiled.programs.warnings == ()
    assert checked.compiled.programs.plan.confirmed == "sm_90" and not needs_settling(checked.compiled)
    assert checked.report() == "ptxas (sm_90): no spills at the 3 CTAs per SM given (45 registers)"
    assert "WARNING" not in generate(checked.compiled).cu


def test_a_given_count_that_spills_keeps_its_warning(paper_viscosity):
    """The companion: ptxas spills at the given count; nothing else is tried, and the warning, which names the
    count that avoids the spills, stands beside ptxas's bytes."""
    checked = settle_ctas(paper_viscosity, compile=fake_ptxas(spills_above=2), given=True)
    assert len(checked.trials) == 1 and not checked.spill_free and checked.compiled is paper_viscosity
    assert checked.report() == "warning: ptxas (sm_90) spills 64 B of spill stores at the 3 CTAs per SM given " \
                               "(45 registers); without --ctas-per-sm, ptxas takes the most CTAs per SM that do not spill"
    assert "--ctas-per-sm 2 would avoid them" in checked.compiled.programs.warnings[0]


@pytest.mark.skipif(find_nvcc() is None, reason="nvcc (CUDA toolkit) not installed")
def test_the_command_checks_the_papers_viscosity_with_ptxas(tmp_path, capsys):
    """`singe dme.inp --kernels viscosity --warps 15 --ctas-per-sm 3` (the paper's setting): ptxas compiles it
    without spills, so the command says so in place of the plan's 'may spill'."""
    import cantera_reference as ref

    if not ref.have_shared():
        pytest.skip("../shared/mechanisms not found: set SINGE_SHARED")
    assert main([str(ref.chemistry_file("dme")), "--kernels", "viscosity", "--warps", "15", "--ctas-per-sm", "3",
                 "-o", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "viscosity: ptxas at 3 CTAs per SM (given): 40 registers, no spills" in out
    assert "ptxas (sm_90): no spills at the 3 CTAs per SM given (40 registers)" in out and "may spill" not in out
    assert "WARNING" not in (tmp_path / "dme_viscosity.cu").read_text()
