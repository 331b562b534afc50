"""The GPU target table: budgets derived from it, and every stage reading it."""

from __future__ import annotations

import dataclasses

import pytest

from singe.compiler import compile_kernel
from singe.options import CompileOptions
from singe.targets import TARGETS, nvcc_arch
from singe.timing import occupancy, preset_for
from conftest import load


@pytest.mark.parametrize("arch", sorted(TARGETS))
@pytest.mark.parametrize("ctas", [1, 2, 3, 4, 5])
def test_shared_budget_leaves_room_for_the_per_cta_reservation(arch, ctas):
    """ctas x (budget + reservation) fits the SM, and the timing model agrees that
    that many CTAs fit by shared memory."""
    target = TARGETS[arch]
    budget = target.shared_budget(ctas)
    assert ctas * (budget + target.shared_reserved_per_cta) <= target.shared_per_sm
    assert budget % target.shared_granularity == 0 and budget <= target.max_shared_per_cta
    assert occupancy(target, 1, 32, budget).limits["shared"] >= ctas


def test_heptane_diffusion_budgeted_for_three_ctas_fits_three_ctas():
    """The case that overran before the reservation was counted (77824 B > 76800 B)."""
    compiled = compile_kernel(load("heptane"), "diffusion", warps=13, ctas_per_sm=3, arch="sm_90")
    assert compiled.programs.shared_bytes <= TARGETS["sm_90"].shared_budget(3) == 76800
    assert occupancy(preset_for("sm_90"), 13, 32, compiled.programs.shared_bytes).limits["shared"] >= 3


def test_barrier_limit_comes_from_the_target(monkeypatch):
    """A target with 8 named barriers per SM gives 4 per CTA at 2 CTAs per SM."""
    monkeypatch.setitem(TARGETS, "sm_90", dataclasses.replace(TARGETS["sm_90"], named_barriers=8))
    assert CompileOptions(ctas_per_sm=2).barrier_limit == 4
    programs = compile_kernel(load("h2o2"), "diffusion", warps=8, ctas_per_sm=2).programs
    assert programs.barrier_limit == 4 and max(p.barrier_id for p in programs.sync_points) < 4


def test_nvcc_arch_of_each_target():
    assert [nvcc_arch(a) for a in ("sm_80", "sm_90", "sm_90a", "k20c", "sm_86")] == \
        ["sm_80", "sm_90", "sm_90a", "sm_35", "sm_86"]
    assert preset_for("sm_90a").name == preset_for("sm_90").name == "H100"
