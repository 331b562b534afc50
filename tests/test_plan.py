"""The register plan: one estimate read by codegen, the command, the spill
warning and the timing model, and checked against ptxas."""

from __future__ import annotations

import dataclasses

import pytest

from singe.cli import kernel_line
from singe.codegen import generate
from singe.codegen.nvcc import compile_cuda, find_nvcc
from singe.compiler import compile_kernel
from singe.programs.plan import SPILL_HEADROOM, RegisterPlan
from singe.timing import model
from conftest import load

PTXAS_TOLERANCE = 0.15  # relative, printed estimate against ptxas's register count
# The paper's kernels (DME): viscosity at 15 warps and diffusion at 10 warps with 3 CTAs per SM,
# chemistry at 8 warps with 4 QSSA warps and 2 CTAs per SM.
PAPER = [("viscosity", 15, 1, 3), ("diffusion", 10, 1, 3), ("chemistry", 8, 4, 2)]
# The command's defaults (--warps 8, CTAs per SM chosen from the plan).
DEFAULTS = [("viscosity", 8, 1, None), ("diffusion", 8, 1, None), ("chemistry", 8, 1, None)]


def test_predicted_registers_are_the_need_capped_by_the_budget():
    plan = RegisterPlan(budget=64, live_doubles=(10, 30), constant_stripes=(1, 2))
    assert plan.per_warp == (24 + 20 + 2, 24 + 60 + 4)
    assert plan.stripes_in_registers() == 0  # 64 - (88 - 4) - 32 < 0: every stripe is loaded where used
    assert plan.need == 88 - 4 + 32 and plan.predicted == 64
    assert plan.floor == 84 and plan.full == 88 + 32
    assert plan.spilled == 84 - 64  # the floor, not the need with its scheduling margin, spills
    assert "1 of 2 warps need at least ~84 registers" in plan.warnings(2)[0]  # warp 0: 24 + 20 = 44
    roomy = dataclasses.replace(plan, budget=255)
    assert roomy.stripes_in_registers() == 2 and roomy.predicted == roomy.need == 88 + 32
    assert roomy.warnings(2) == ()
    tight = dataclasses.replace(plan, budget=88)  # the margin goes first: no spill above the floor
    assert tight.predicted == 88 and tight.spilled == 0 and tight.warnings(2) == ()


def test_the_spill_warning_names_the_setting_that_avoids_it():
    plan = RegisterPlan(budget=64, live_doubles=(10, 30), constant_stripes=(1, 2), ctas_per_sm=3,
                        fewer_ctas_budgets=(168, 96))
    assert plan.ctas_avoiding_spills() == 2
    assert plan.warnings(2)[0].endswith("--ctas-per-sm 2 would avoid them")
    alone = dataclasses.replace(plan, ctas_per_sm=1, fewer_ctas_budgets=())
    assert alone.warnings(2, more_warps=12)[0].endswith("--warps 12 would avoid them")


def test_a_floor_within_a_granule_of_the_budget_may_spill():
    """The floor is an estimate: within one allocation granule over the budget the warning says registers may
    spill (DME viscosity at 15 warps x 3 CTAs: a floor of 42 against 40, and ptxas fits it in 39), beyond it
    that they will."""
    plan = RegisterPlan(budget=80, live_doubles=(10, 30), constant_stripes=(1, 2))  # floor 84
    assert "registers may spill" in plan.warnings(2)[0]
    assert "registers will spill" in dataclasses.replace(plan, budget=72).warnings(2)[0]  # 12 over
    paper = compile_kernel(load("dme"), "viscosity", warps=15, ctas_per_sm=3).programs
    assert paper.plan.spilled and "registers may spill" in paper.warnings[0]


def test_ctas_per_sm_are_chosen_so_that_nothing_spills():
    """Without --ctas-per-sm the compiler picks the most CTAs per SM whose budget
    covers the plan's floor with headroom; with an explicit count that spills,
    the warning names the fix."""
    from singe.compiler import SPILL_HEADROOM

    chosen = compile_kernel(load("h2o2"), "chemistry", warps=2)
    plan, options = chosen.programs.plan, chosen.options
    assert options.ctas_per_sm is not None and not plan.spilled
    assert plan.floor + SPILL_HEADROOM <= plan.budget
    more = options.ctas_per_sm + 1
    if more in options.replace(ctas_per_sm=None).cta_candidates():  # one CTA more would leave too few
        assert compile_kernel(load("h2o2"), "chemistry", warps=2, ctas_per_sm=more).programs.plan.floor \
            + SPILL_HEADROOM > options.target.register_budget(chosen.programs.threads, more)
    forced = compile_kernel(load("dme"), "chemistry", warps=8, ctas_per_sm=3)
    assert forced.programs.plan.spilled
    named = int(forced.programs.warnings[0].split("--ctas-per-sm ")[1].split()[0])
    assert named < 3 and not compile_kernel(load("dme"), "chemistry", warps=8, ctas_per_sm=named).programs.plan.spilled


def test_diffusion_turns_wider_than_checked_warn(tmp_path):
    """Beyond ``TURN_COLUMNS_CHECKED`` columns per warp ptxas's schedule of the diffusion turns outgrows the plan's
    floor: GRI-Mech at 4 warps (14 columns) warns, names the warps that keep the turns within the checked width,
    and (the warning's ground) spills at the CTAs chosen; at the defaults' 8 warps (7 columns) no warning."""
    from singe.kernels.transport import TURN_COLUMNS_CHECKED

    narrow = compile_kernel(load("gri30"), "diffusion", warps=8)
    assert max(narrow.programs.plan.turn_columns) == TURN_COLUMNS_CHECKED == 7 and narrow.programs.warnings == ()
    wide = compile_kernel(load("gri30"), "diffusion", warps=4, constant_table="cache")  # the plan's 7 CTAs
    (warning,) = wide.programs.warnings
    assert "diffusion turns over up to 14 columns per warp" in warning and warning.endswith("--warps 8 keeps them "
                                                                                              "within it")
    assert generate(wide).cu.count("WARNING: diffusion turns") == 1
    if find_nvcc() is not None:
        source = generate(wide).write(tmp_path)[0]
        assert compile_cuda(source, "sm_90").entries[0].spill_stores > 0


def test_codegen_command_and_timing_read_the_same_plan():
    compiled = compile_kernel(load("dme"), "diffusion", warps=10, ctas_per_sm=3)
    plan = compiled.programs.plan
    generated = generate(compiled)
    assert generated.info.register_stripes == plan.stripes_in_registers(generated.info.stripes)
    assert f"~{plan.predicted} registers" in kernel_line(compiled, generated, 0.0)
    assert model(compiled).occupancy.registers == plan.predicted
    assert plan.budget == compiled.options.target.register_budget(320, 3)


@pytest.mark.skipif(find_nvcc() is None, reason="nvcc (CUDA toolkit) not installed")
@pytest.mark.parametrize("settings", [PAPER, DEFAULTS], ids=["paper", "defaults"])
def test_printed_estimate_predicts_ptxas_for_the_paper_kernels(tmp_path, settings):
    """sm_90, one nvcc run per kernel: within 15 % of ptxas's registers, and
    where the compiler chose the CTAs per SM, no spills."""
    mech = load("dme")
    report = []
    for kernel, warps, qssa, ctas in settings:
        compiled = compile_kernel(mech, kernel, warps=warps, qssa_warps=qssa, ctas_per_sm=ctas)
        generated = generate(compiled)
        entry = compile_cuda(generated.write(tmp_path / kernel)[0], "sm_90").entry(generated.name)
        predicted = compiled.programs.plan.predicted
        report.append(f"{kernel} {warps} warps {compiled.options.ctas_per_sm} CTAs/SM: printed ~{predicted}, ptxas {entry.registers} "
                      f"({entry.spill_stores} B spill stores)")
        print("\n" + report[-1])
        assert abs(predicted - entry.registers) <= PTXAS_TOLERANCE * entry.registers, report[-1]
        if ctas is None:
            assert entry.spill_stores == entry.spill_loads == 0, report[-1]


def test_ctas_per_sm_are_chosen_where_the_shared_slots_hold_the_stored_values():
    """n-heptane diffusion at 2 warps on sm_80: at 8 CTAs per SM, the most the registers allow, the 78 shared
    slots of a CTA cannot hold its stored values.  The command chooses fewer CTAs; asked for 8, it says what is
    wrong and what to change (it was an internal error, with a traceback, either way)."""
    from singe.errors import OptionError

    chosen = compile_kernel(load("heptane"), "diffusion", warps=2, arch="sm_80")
    assert chosen.options.ctas_per_sm < 8
    with pytest.raises(OptionError, match="78 shared slots cannot hold the stored values of diffusion: use "
                                          "placement 'buffer' or fewer CTAs per SM"):
        compile_kernel(load("heptane"), "diffusion", warps=2, arch="sm_80", ctas_per_sm=8)


def test_the_command_names_the_warps_that_avoid_spills_when_ctas_cannot():
    """DME chemistry on one warp spills even at 1 CTA per SM: the command's
    warning names the warp count at which the plan fits (found by compiling)."""
    compiled = compile_kernel(load("dme"), "chemistry", warps=1, ctas_per_sm=1)
    assert compiled.programs.plan.spilled and compiled.programs.plan.ctas_avoiding_spills() is None
    line = kernel_line(compiled, generate(compiled), 0.0)
    warps = int(line.split("--warps ")[1].split()[0])
    assert warps > 1 and not compile_kernel(load("dme"), "chemistry", warps=warps).programs.plan.spilled
    if warps - 1 > 1:  # the fewest: one warp less still spills
        assert compile_kernel(load("dme"), "chemistry", warps=warps - 1).programs.plan.spilled


@pytest.mark.skipif(find_nvcc() is None, reason="nvcc (CUDA toolkit) not installed")
def test_chosen_ctas_do_not_spill_and_one_more_does(tmp_path):
    """GRI-Mech 3.0 diffusion on sm_90 at 8 warps (loops over exponentials, whose constants
    ptxas keeps in registers where there is room and gives up where there is none): the CTAs
    per SM the compiler chooses by the floor (4) compile without spills; one more, whose budget
    is under the floor, spills, and its warning names the chosen count.  The table read in place: 'auto' would
    copy it at 2 CTAs (``copy_where_the_cache_misses``), which the register plan does not choose."""
    mech = load("gri30")
    chosen = compile_kernel(mech, "diffusion", arch="sm_90", constant_table="cache")
    more = compile_kernel(mech, "diffusion", arch="sm_90", ctas_per_sm=chosen.options.ctas_per_sm + 1,
                          constant_table="cache")
    assert chosen.options.ctas_per_sm == 4 and more.programs.plan.spilled
    entries = []
    for compiled in (chosen, more):
        generated = generate(compiled)
        folder = tmp_path / str(compiled.options.ctas_per_sm)
        entries.append(compile_cuda(generated.write(folder)[0], "sm_90").entry(generated.name))
    assert entries[0].spill_stores == entries[0].spill_loads == 0, entries[0]
    assert entries[1].spill_stores > 0, entries[1]  # the companion: the rule's reason shows in ptxas
    assert f"--ctas-per-sm {chosen.options.ctas_per_sm} would avoid them" in more.programs.warnings[0]


def test_a_stripe_limit_caps_the_stripes_kept_in_registers():
    """``RegisterPlan.stripe_limit`` (the chosen count's stripes, where ptxas settles the CTAs per SM): at most
    that many stripes stay in registers; a switch-dispatched plan keeps all of them or none."""
    roomy = RegisterPlan(255, (30,), (3,), margin=56, headroom=16)
    assert roomy.stripes_in_registers() == 3
    assert dataclasses.replace(roomy, stripe_limit=2).stripes_in_registers() == 2
    switch = dataclasses.replace(roomy, all_stripes_or_none=True)
    assert switch.stripes_in_registers() == 3 == dataclasses.replace(switch, stripe_limit=3).stripes_in_registers()
    assert dataclasses.replace(switch, stripe_limit=2).stripes_in_registers() == 0
