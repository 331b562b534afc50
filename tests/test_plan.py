"""The register plan: one estimate read by codegen, the command, the spill
warning and the timing model, and checked against ptxas."""

from __future__ import annotations

import dataclasses

import pytest

from singe.cli import kernel_line
from singe.codegen import generate
from singe.codegen.nvcc import compile_cuda, find_nvcc
from singe.compiler import compile_kernel
from singe.programs.plan import RegisterPlan
from singe.timing import model
from conftest import load

PTXAS_TOLERANCE = 0.15  # relative, printed estimate against ptxas's register count
# The paper's kernels (DME): viscosity at 15 warps and diffusion at 10 warps with 3 CTAs per SM,
# chemistry at 8 warps with 4 QSSA warps and 2 CTAs per SM.
PAPER = [("viscosity", 15, 1, 3), ("diffusion", 10, 1, 3), ("chemistry", 8, 4, 2)]


def test_predicted_registers_are_the_need_capped_by_the_budget():
    plan = RegisterPlan(budget=64, live_doubles=(10, 30), constant_stripes=(1, 2))
    assert plan.per_warp == (24 + 20 + 2, 24 + 60 + 4)
    assert plan.stripes_in_registers() == 0  # 64 - (88 - 4) - 32 < 0: every stripe is loaded where used
    assert plan.need == 88 - 4 + 32 and plan.predicted == 64 and plan.spilled == 116 - 64
    assert "2 of 2 warps need up to ~116 registers" in plan.warnings(2)[0]
    roomy = dataclasses.replace(plan, budget=255)
    assert roomy.stripes_in_registers() == 2 and roomy.predicted == roomy.need == 88 + 32
    assert roomy.warnings(2) == ()


def test_codegen_command_and_timing_read_the_same_plan():
    compiled = compile_kernel(load("dme"), "diffusion", warps=10, ctas_per_sm=3)
    plan = compiled.programs.plan
    generated = generate(compiled)
    assert generated.info.register_stripes == plan.stripes_in_registers(generated.info.stripes)
    assert f"~{plan.predicted} registers" in kernel_line(compiled, generated, 0.0)
    assert model(compiled).occupancy.registers == plan.predicted
    assert plan.budget == compiled.options.target.register_budget(320, 3)


@pytest.mark.skipif(find_nvcc() is None, reason="nvcc (CUDA toolkit) not installed")
def test_printed_estimate_predicts_ptxas_for_the_paper_kernels(tmp_path):
    """sm_90, one nvcc run per kernel: within 15 % of ptxas's registers."""
    mech = load("dme")
    report = []
    for kernel, warps, qssa, ctas in PAPER:
        compiled = compile_kernel(mech, kernel, warps=warps, qssa_warps=qssa, ctas_per_sm=ctas)
        generated = generate(compiled)
        entry = compile_cuda(generated.write(tmp_path / kernel)[0], "sm_90").entry(generated.name)
        predicted = compiled.programs.plan.predicted
        report.append(f"{kernel} {warps} warps {ctas} CTAs/SM: printed ~{predicted}, ptxas {entry.registers} "
                      f"({entry.spill_stores} B spill stores)")
        print("\n" + report[-1])
        assert abs(predicted - entry.registers) <= PTXAS_TOLERANCE * entry.registers, report[-1]
