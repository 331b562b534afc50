"""Per-warpgroup register budgets with setmaxnreg on sm_90a: the plan's choice,
its rules (verify), codegen, the host runtime against the reference, the simulator's
check, the timing model's occupancy and an nvcc compile."""

from __future__ import annotations

import dataclasses
import functools
import shutil
import subprocess

import numpy as np
import pytest

from singe.codegen import generate
from singe.codegen.nvcc import compile_cuda, find_nvcc
from singe.compiler import compile_kernel
from singe.errors import SingeInternalError
from singe.programs.plan import RegisterPlan, budget_problems, could_fit, launch_pool, warpgroup_budgets
from singe.reference.kinetics import net_production_rates
from singe.sim import SimulationError
from singe.targets import TARGETS
from singe.timing import model
from conftest import load
from cantera_reference import random_states

HOPPER, H100 = TARGETS["sm_90a"], TARGETS["sm_90"]
TOLERANCE = 1e-9  # x max|wdot| per point, as the chemistry tests


@functools.lru_cache(maxsize=None)
def dme(arch: str = "sm_90a"):
    """DME chemistry at the defaults (8 warps, 2 CTAs per SM chosen: budget 128, the first warpgroup
    holding the most values, 41 doubles in warp 0 against at most 27 in the second: 144/112)."""
    return compile_kernel(load("dme"), "chemistry", warps=8, arch=arch)


def with_budgets(compiled, per_group):
    """``compiled`` with its plan's setmaxnreg counts replaced (per warpgroup, or per warp)."""
    warps = compiled.programs.warps
    budgets = tuple(per_group) if len(per_group) == warps else tuple(per_group[w // 4] for w in range(warps))
    plan = dataclasses.replace(compiled.programs.plan, warp_budgets=budgets)
    return dataclasses.replace(compiled, programs=dataclasses.replace(compiled.programs, plan=plan))


def plan(budget=80, live=(18, 18, 18, 18, 11, 11, 11, 11)):
    return RegisterPlan(budget=budget, live_doubles=live, constant_stripes=(0,) * len(live))


def test_budgets_go_to_the_heavy_warpgroup_within_the_launch_pool():
    tight = plan()  # floors 60 and 46: uniformly within 80 with headroom, but the need (92) is over it
    budgets = warpgroup_budgets(tight, 8, HOPPER)
    assert budgets[::4] == (88, 72) and len(set(budgets[:4])) == len(set(budgets[4:])) == 1
    assert sum(budgets[::4]) <= launch_pool(80, 8) == 160
    chosen = dataclasses.replace(tight, warp_budgets=budgets)
    assert chosen.fits() and chosen.predicted == 80 and chosen.spilled == 0 and budget_problems(chosen, 8, HOPPER) == []
    assert "setmaxnreg per warpgroup 88/72" in str(chosen)
    assert warpgroup_budgets(tight, 8, H100) == ()  # no setmaxnreg on sm_90
    assert warpgroup_budgets(plan(live=(18,) * 6), 6, HOPPER) == ()  # no whole warpgroups
    assert warpgroup_budgets(plan(live=(18,) * 4), 4, HOPPER) == ()  # one warpgroup: nothing to move
    assert warpgroup_budgets(plan(budget=128), 8, HOPPER) == ()  # the launch budget suffices
    assert warpgroup_budgets(plan(live=(18,) * 8), 8, HOPPER) == ()  # equal warpgroups: nothing gained
    spilling = plan(budget=64, live=(30, 30, 30, 30, 8, 8, 8, 8))  # floors 84 and 40 over 64
    assert spilling.spilled == 20
    rescued = dataclasses.replace(spilling, warp_budgets=warpgroup_budgets(spilling, 8, HOPPER))
    assert rescued.warp_budgets[::4] == (88, 40) and rescued.spilled == 0
    assert warpgroup_budgets(plan(budget=64, live=(40,) * 4 + (30,) * 4), 8, HOPPER) == ()  # 104 + 84 > 128


def test_a_cta_count_fits_by_warpgroups_where_the_launch_budget_alone_does_not():
    """The CTA choice (``could_fit``): floors 60 and 46 at 4 CTAs of 8 warps (budget 64)
    fit only as 72/56 (the whole pool of 128), not uniformly nor on sm_90."""
    assert could_fit(plan(), 64, 8, HOPPER)
    assert not could_fit(plan(), 64, 8, None) and not could_fit(plan(), 64, 8, H100)
    assert not could_fit(plan(), 56, 8, HOPPER)  # 72 + 56 > 112
    assert could_fit(plan(), 80, 8, None)  # uniformly: 60 + 8 <= 80


@pytest.mark.parametrize("budgets, target, problem", [
    ((88, 72), H100, "which has no setmaxnreg"),
    ((84, 76), HOPPER, "not a multiple of 8"),
    ((136, 16), HOPPER, "from 24 to 256"),
    ((88, 88, 88, 80, 72, 72, 72, 72), HOPPER, "differ"),
    ((96, 72), HOPPER, "sum to 168 registers per thread, more than the 160"),
])
def test_verify_rejects_each_rule(budgets, target, problem):
    warps = 8
    per_warp = tuple(budgets) if len(budgets) == warps else tuple(budgets[w // 4] for w in range(warps))
    bad = dataclasses.replace(plan(), warp_budgets=per_warp)
    assert any(problem in p for p in budget_problems(bad, warps, target)), budget_problems(bad, warps, target)
    good = dataclasses.replace(plan(), warp_budgets=(88,) * 4 + (72,) * 4)
    assert budget_problems(good, warps, HOPPER) == []  # the companion: the rules pass a valid plan


def test_verify_rejects_partial_warpgroups_and_runs_on_compiled_kernels():
    odd = dataclasses.replace(plan(live=(18,) * 6), warp_budgets=(80,) * 6)
    assert any("no whole number of warpgroups" in p for p in budget_problems(odd, 6, HOPPER))
    compiled = dme()
    assert compiled.programs.plan.warp_budgets[::4] == (144, 112)
    assert "setmaxnreg per warpgroup 144/112" in compiled.summary()  # the IR prints them
    assert "warp 0 (" in str(compiled.programs) and ", setmaxnreg 144" in str(compiled.programs)
    assert ", setmaxnreg 112" in str(compiled.programs).split("warp 4 (")[1].splitlines()[0]
    compiled.verify()
    with pytest.raises(SingeInternalError, match="setmaxnreg check"):
        with_budgets(compiled, (152, 112)).verify()


def test_codegen_emits_setmaxnreg_on_sm_90a_only():
    cu = generate(dme()).cu
    assert "switch (warp_id >> 2)" in cu
    assert cu.count("SINGE_SETMAXNREG_INC(144);") == 1 and cu.count("SINGE_SETMAXNREG_DEC(112);") == 1
    warp = [cu.index(f"const int warp_id = {w};") for w in range(8)]  # each warp's case
    assert cu.index("SINGE_SETMAXNREG_INC(144);") < warp[0] < warp[3] < cu.index("SINGE_SETMAXNREG_DEC(112);") < warp[4]
    assert cu.index("const int n_slabs") > cu.index("SINGE_SETMAXNREG_INC(144);")  # the body after, in its branch
    plain = generate(dme("sm_90")).cu
    assert "SINGE_SETMAXNREG_INC(" not in plain.replace("#define SINGE_SETMAXNREG_INC(n)", "")
    assert "warp_id >> 2" not in plain and dme("sm_90").programs.plan.warp_budgets == ()


def test_host_runtime_matches_the_reference_for_a_setmaxnreg_kernel():
    """DME (QSSA species: singe.reference, which agrees with Cantera, tests/test_kinetics.py)."""
    compiled = dme()
    mech = load("dme")
    T, P, Y = random_states(64, len(mech.transported_species), seed=21)
    expected = net_production_rates(mech, T, P, Y)
    ours = compiled.run_host(T, P, Y)
    error = float(np.max(np.abs(ours - expected) / np.abs(expected).max(axis=0)))
    assert error <= TOLERANCE, error
    wrong = expected.copy()
    wrong[0] *= 1.0 + 1e-6  # the companion: a wrong answer fails the same comparison
    assert float(np.max(np.abs(ours - wrong) / np.abs(wrong).max(axis=0))) > TOLERANCE


@pytest.mark.parametrize("budgets, kind, message", [
    ((144, 144, 144, 136, 112, 112, 112, 112), "misuse", "must issue the same one"),
    ((152, 112), "deadlock", "waits forever"),
    ((40, 216), "misuse", r"warp [0-3] needs at least ~\d+ registers per thread; its warpgroup's setmaxnreg gives 40"),
])
def test_simulator_catches_a_wrong_budget(budgets, kind, message):
    compiled = dme()
    T, P, Y = random_states(32, len(load("dme").transported_species), seed=3)
    assert np.all(np.isfinite(compiled.simulate(T, P, Y)))  # the companion: the chosen budgets run
    with pytest.raises(SimulationError, match=message) as caught:
        with_budgets(compiled, budgets).simulate(T, P, Y)
    assert any(h.kind == kind for h in caught.value.hazards)


def test_occupancy_counts_the_launch_budget():
    compiled = dme()
    result = model(compiled, "H100")
    assert result.occupancy.registers == compiled.programs.plan.budget == 128
    assert result.occupancy.ctas == compiled.options.ctas_per_sm == 2
    a100 = model(compiled, "A100")  # another GPU: no setmaxnreg, the plan at its own budget
    assert a100.occupancy.registers <= TARGETS["sm_80"].register_budget(256, 2)


@pytest.mark.skipif(find_nvcc() is None, reason="nvcc (CUDA toolkit) not installed")
def test_nvcc_compiles_setmaxnreg_for_sm_90a(tmp_path):
    generated = generate(dme())
    path = generated.write(tmp_path)[0]
    entry = compile_cuda(path, "sm_90a").entry(generated.name)
    assert entry.registers == 128 and entry.spill_stores == 0  # ptxas reports the launch budget
    ptx = tmp_path / "kernel.ptx"
    subprocess.run([find_nvcc(), "-arch=sm_90a", "-ptx", str(path), "-o", str(ptx), f"-I{path.parent}"],
                   check=True, capture_output=True)
    text = ptx.read_text()
    assert "setmaxnreg.inc.sync.aligned.u32 144;" in text and "setmaxnreg.dec.sync.aligned.u32 112;" in text


def test_codegen_needs_one_branch_per_warpgroup():
    """Budgets on a kernel whose body is no single switch (the overlay) are refused:
    ptxas could not allocate each warpgroup's code within its own count."""
    viscosity = compile_kernel(load("h2o2"), "viscosity", warps=8, arch="sm_90a")
    assert viscosity.programs.plan.warp_budgets == ()  # the plan never chooses them there
    with pytest.raises(SingeInternalError, match="one switch on the warp id"):
        generate(with_budgets(viscosity, (72, 56)))


def _sass_missing() -> list[str]:
    from autotune import sass

    return sass.missing_tools()


@pytest.mark.skipif(bool(_sass_missing()), reason="SASS view needs nvcc, nvdisasm and cuobjdump")
def test_sass_walk_steps_over_the_setmaxnreg_retry_loop(tmp_path, monkeypatch):
    """setmaxnreg.inc is a USETMAXREG.TRY_ALLOC retry loop in SASS: the walk must not take it for
    the slab loop (then the inc warpgroup's issued counts per point collapse to nearly nothing)."""
    from autotune import sass

    path = generate(dme()).write(tmp_path)[0]
    view = sass.analyse(path, "sm_90a", warps=8, keep=str(tmp_path))
    listing = sass.parse_listing((tmp_path / f"{path.stem}.sass").read_text())
    assert any(listing.instructions[a].opcode.startswith("USETMAXREG") for a in listing.order)
    fp64 = [walk.counts["fp64"] for walk in view.warps]
    assert all(n > 20 for n in fp64), fp64  # every warp computes per slab
    assert len(sass.slab_back_edges(listing, view.function)) == 8  # one per warp's case, no retry loop
    monkeypatch.setattr(sass, "_retry", lambda *args: False)  # the companion: the retry taken for the slab loop
    wrong = sass.count_kernel(listing, (tmp_path / f"{path.stem}.elf").read_text(), view.function, "sm_90a", 8)
    assert min(walk.counts["fp64"] for walk in wrong[:4]) < min(fp64[:4]) // 2
