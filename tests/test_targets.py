"""The GPU target table: budgets derived from it, and every stage reading it."""

from __future__ import annotations

import dataclasses

import pytest

from singe.codegen.nvcc import compile_cuda, find_nvcc
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


@pytest.mark.parametrize("arch", sorted(TARGETS))
def test_resident_ctas_are_those_whose_shared_memory_fits(arch):
    """The most CTAs, at most those planned, within their shared budget, as the timing model's occupancy
    counts them; 0 when one CTA's shared memory exceeds what a CTA may have."""
    target = TARGETS[arch]
    for shared in (1024, target.shared_budget(3), target.shared_budget(3) + 1, target.shared_budget(2) + 1):
        resident = target.resident_ctas(4, shared)
        assert resident == min(4, occupancy(target, 1, 32, shared).limits["shared"])
    assert target.resident_ctas(4, target.shared_budget(3) + 1) == 2
    assert target.resident_ctas(1, target.max_shared_per_cta + 1) == 0


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


# (threads, CTAs per SM, ptxas's registers for __launch_bounds__(threads, CTAs) of a kernel wanting more, sm_80
# and sm_90 alike).  The SM's register file counted whole gives 96, 80, 96, 80 for the first four.
LAUNCH_BOUNDS_REGISTERS = [(96, 7, 80), (160, 5, 72), (224, 3, 80), (96, 8, 80), (160, 4, 96), (480, 3, 40),
                           (416, 3, 48), (32, 16, 128)]


@pytest.mark.parametrize("arch", ["sm_80", "sm_90"])
def test_register_budget_is_what_ptxas_gives_the_launch_bounds(arch):
    """Each warp takes its registers from its partition's quarter of the file: the partition with the most
    warps sets the budget (21 warps of 3 x 7: 6 on one partition, 16384 / 192 = 85 -> 80)."""
    target = TARGETS[arch]
    assert [target.register_budget(t, c) for t, c, _ in LAUNCH_BOUNDS_REGISTERS] == \
        [r for _, _, r in LAUNCH_BOUNDS_REGISTERS]
    # the model's occupancy agrees: at those registers those CTAs fit, and at 8 more (one granule) they do not
    for threads, ctas, registers in LAUNCH_BOUNDS_REGISTERS:
        assert occupancy(target, threads // 32, registers).limits["registers"] >= ctas
        assert occupancy(target, threads // 32, registers + 8).limits["registers"] < ctas
    assert occupancy(target, 5, 80).limits["registers"] == 4  # 25 warps need 7 on a partition: 7 x 2560 > 16384


@pytest.mark.skipif(find_nvcc() is None, reason="needs nvcc")
def test_ptxas_gives_the_launch_bounds_the_register_budget(tmp_path):
    """The budgets above, read off ptxas (sm_90) for a kernel of 120 doubles live at once."""
    loads = "\n".join(f"  const double a{i} = x[{i + 1} * t];" for i in range(120))
    total = " + ".join(f"a{i} * a{7 * i % 120}" for i in range(120))
    target = TARGETS["sm_90"]
    for threads, ctas in ((96, 7), (160, 5), (224, 3)):
        source = tmp_path / f"k{threads}_{ctas}.cu"
        source.write_text(f"__global__ void __launch_bounds__({threads}, {ctas}) k(const double *x, double *y)\n"
                          f"{{\n  const int t = threadIdx.x + blockIdx.x * blockDim.x;\n{loads}\n"
                          f"  y[t] = {total};\n}}\n")
        entry = compile_cuda(source, "sm_90").entries[0]
        assert entry.registers == target.register_budget(threads, ctas), (threads, ctas, entry)
