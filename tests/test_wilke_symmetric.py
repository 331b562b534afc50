"""--wilke-symmetric: the viscosity kernel's symmetric form (``transport.viscosity_symmetric_graph``).  Wilke's sums
D_k = sum_j e_kj (r_k + r_j)^2 w_j with e_kj symmetric, each unordered pair's factor computed once and added into
both species' sums: in bands of adjacent columns for warps, the upper triangle for the data-parallel baseline.  The
kernel gives the reference's viscosity at any warp count, in the simulator and on the host, and a wrong factor is
caught; its baseline has its form, and the scripts compare with the fastest baseline of either form."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from singe.baseline import baseline_kernel, baseline_kernels, fastest_baseline
from singe.codegen.nvcc import find_nvcc
from singe.compiler import compile_kernel
from singe.errors import OptionError
from singe.kernels import transport
from singe.options import CompileOptions
from singe.reference import transport as reference

from cantera_reference import random_states
from conftest import load

TOLERANCE = 1e-10  # the viscosity kernel's (KERNELS['viscosity'].tolerance)


def largest_error(compiled, mech, seed: int, n: int = 64, host: bool = False) -> float:
    T, P, Y = random_states(n, len(mech.transported_species), seed)
    ours = compiled.run_host(T, P, Y) if host else compiled.simulate(T, P, Y)
    return float(np.max(np.abs(ours / reference.viscosity(mech, T, P, Y) - 1.0)))


def band_pairs(graph) -> list[tuple[str, str]]:
    """The (r_a, r_b) each band adds, one per pair it computes."""
    return [tuple(sorted(s.name for s in i.srcs)) for op in graph.operations if op.kind == "band"
            for i in op.instrs if i.opcode == "add"]


@pytest.mark.parametrize("warps", [1, 3, 8, 15, 31])
def test_the_symmetric_form_agrees_with_the_reference(warps):
    """DME viscosity in the symmetric form at 1-31 warps (31: more warps than species, the last warp idle): the
    reference's viscosity to 1e-10 in the simulator.  Its bands compute each of the 435 unordered pairs once, and it
    takes no square root (the row form takes one a species)."""
    mech = load("dme")
    compiled = compile_kernel(mech, "viscosity", warps=warps, wilke_symmetric=True)
    assert largest_error(compiled, mech, 3) <= TOLERANCE
    n = len(mech.transported_species)
    pairs = band_pairs(compiled.graph)
    assert len(pairs) == len(set(pairs)) == n * (n - 1) // 2
    assert not any(i.opcode == "sqrt" for op in compiled.graph.operations for i in op.instrs)
    assert any(i.opcode == "sqrt" for op in compile_kernel(mech, "viscosity", warps=warps).graph.operations
               for i in op.instrs)


def test_a_factor_that_is_not_symmetric_is_caught(monkeypatch):
    """The companion: with the row form's d_kj = sqrt(M_j) e_kj in place of e_kj (a factor that is not symmetric,
    the mistake the form's algebra must not make), the comparison fails."""
    mech = dataclasses.replace(load("dme"))  # a new object: its graphs are built again (singe.memo)
    monkeypatch.setattr(transport, "wilke_symmetric_factor", transport.wilke_factor)
    compiled = compile_kernel(mech, "viscosity", warps=8, wilke_symmetric=True)
    assert largest_error(compiled, mech, 3) > 1e-3


@pytest.mark.parametrize("n", [2, 3, 7, 30, 53])
@pytest.mark.parametrize("warps", [1, 2, 5, 8, 13, 40])
def test_the_bands_take_every_pair_once_and_each_sum_has_its_shares(n, warps):
    """For any species count and warps: the bands of ``column_blocks`` compute every unordered pair once, and the
    sums a species' term adds (``band_sums``) are exactly the bands' outputs for it."""
    weights = np.linspace(2.0, 100.0, n)
    blocks = transport.column_blocks(n, warps)
    bands = [transport.viscosity_band_op(w, block, n, weights) for w, block in enumerate(blocks) if block]
    pairs = [tuple(sorted(int(s.name[1:]) for s in i.srcs)) for op in bands for i in op.instrs if i.opcode == "add"]
    assert sorted(pairs) == [(a, b) for a in range(n) for b in range(a + 1, n)]
    produced = {name for op in bands for name in op.outputs}
    summed = [name for k in range(n) for name in transport.band_sums(k, blocks)]
    assert sorted(summed) == sorted(produced)


def test_the_symmetric_kernel_runs_on_the_host_as_in_the_simulator():
    """DME viscosity in the symmetric form at 8 warps x 4 CTAs with ln T replicated and the bank: the emitted CUDA
    on the CPU gives the simulator's viscosity, and so does its baseline (the triangle) the reference's."""
    mech = load("dme")
    T, P, Y = random_states(80, len(mech.transported_species), 5)
    compiled = compile_kernel(mech, "viscosity", warps=8, ctas_per_sm=4, wilke_symmetric=True, replicate_ln_t=True,
                              constant_table="bank")
    host = compiled.run_host(T, P, Y)
    assert np.max(np.abs(host / compiled.simulate(T, P, Y) - 1.0)) <= 1e-14
    assert np.max(np.abs(host / reference.viscosity(mech, T, P, Y) - 1.0)) <= TOLERANCE
    base = baseline_kernel(compiled).run_host(T, P, Y)
    assert np.max(np.abs(base / reference.viscosity(mech, T, P, Y) - 1.0)) <= TOLERANCE


def test_the_baseline_has_the_kernels_form_and_the_scripts_take_the_fastest():
    """``baseline_kernel``: the data-parallel kernel in the warp-specialized kernel's form (rows in groups of 8, or
    the symmetric triangle, each species' sum right after its column, the terms of 8 species one fraction after
    the last of them: DME's 30 in 4 divisions); ``baseline_kernels``: both forms, the
    kernel's first; ``fastest_baseline`` the faster by the throughput it is given.  Diffusion has one form."""
    mech = load("dme")
    rows = compile_kernel(mech, "viscosity", warps=8)
    symmetric = compile_kernel(mech, "viscosity", warps=8, wilke_symmetric=True)
    names = [op.name for op in baseline_kernel(symmetric).graph.operations]
    assert not any(name.startswith("wilke_") for name in names)
    assert names.index("viscosity_0") < names.index("viscosity_column_1") < names.index("viscosity_1")
    assert names.index("viscosity_7") < names.index("viscosity_fraction_0") < names.index("viscosity_column_8")
    assert sum(i.opcode == "div" for op in baseline_kernel(symmetric).graph.operations for i in op.instrs) == 4
    assert any(name.startswith("wilke_") for name in (op.name for op in baseline_kernel(rows).graph.operations))
    assert list(baseline_kernels(rows)) == ["rows", "symmetric"]
    assert list(baseline_kernels(symmetric)) == ["symmetric", "rows"]
    assert baseline_kernels(rows)["symmetric"].graph is baseline_kernel(symmetric).graph
    fewer_ops = lambda b: type("Result", (), {"points_per_second": 1.0 / len(b.graph.operations)})()  # noqa: E731
    form, results = fastest_baseline(rows, fewer_ops)
    assert form == "rows" and set(results) == {"rows", "symmetric"}
    diffusion = compile_kernel(mech, "diffusion", warps=8)
    assert baseline_kernels(diffusion) == {"": baseline_kernel(diffusion)}


def arithmetic(graph) -> int:
    """The graph's adds, multiplies and FMAs (the pairs' work; exps, divisions and square roots apart)."""
    return sum(i.opcode in ("add", "mul", "fma") for op in graph.operations for i in op.instrs)


def test_the_symmetric_form_saves_a_sixth_of_the_pairs_work():
    """The baselines' arithmetic: 5 instructions an unordered pair (an add, two multiplies, two FMAs) against the
    row form's 3 an ordered pair; DME: 2,494 against 2,991 (both with 4 divisions, their terms in fractions of 8;
    no square roots against 30)."""
    mech = load("dme")
    n = len(mech.transported_species)
    rows = arithmetic(baseline_kernel(compile_kernel(mech, "viscosity", warps=8)).graph)
    symmetric = arithmetic(baseline_kernel(compile_kernel(mech, "viscosity", warps=8, wilke_symmetric=True)).graph)
    assert 3 * n * n <= rows <= 3 * n * n + 10 * n
    assert 5 * n * (n - 1) // 2 <= symmetric <= 5 * n * (n - 1) // 2 + 12 * n
    assert symmetric < 0.85 * rows


def test_the_option_is_named_checked_and_reaches_the_scripts():
    from autotune import sweep
    from autotune.gpu_bench import Config, options_of_shape
    from singe.cli import _options, build_parser

    assert CompileOptions(wilke_symmetric=True).key().endswith("-sym") and "-sym" not in CompileOptions().key()
    with pytest.raises(OptionError, match="--wilke-symmetric is on or off"):
        CompileOptions(wilke_symmetric="yes")
    with pytest.raises(OptionError, match="exclude each other"):
        CompileOptions(wilke_symmetric=True, wilke_group=4)
    args = build_parser().parse_args(["dme.inp", "--wilke-symmetric"])
    assert _options(args, "viscosity").wilke_symmetric and not _options(args, "diffusion").wilke_symmetric
    grid = sweep.grid("viscosity", "sm_90", [8], [4], [1], [(1.0, 0.5, 1.0)], ["auto"], groups=(4, 6),
                      forms=(False, True))
    assert [(o.wilke_group, o.wilke_symmetric) for o in grid] == [(4, False), (None, True), (6, False)]
    assert sweep.grid("diffusion", "sm_90", [8], [4], [1], [(1.0, 0.5, 1.0)], ["auto"], forms=(False, True)) == \
        sweep.grid("diffusion", "sm_90", [8], [4], [1], [(1.0, 0.5, 1.0)], ["auto"])  # viscosity's alone
    assert sweep.command_line("dme.inp", "viscosity", grid[1]).endswith("--wilke-symmetric")
    label = Config("dme", "viscosity", "variant", grid[1].replace(replicate_ln_t=True)).label("bank")
    assert label == "dme viscosity variant (8x4 lnT sym bank)"
    assert options_of_shape("8x4 lnT sym bank", "sm_90")["wilke_symmetric"]
    assert not options_of_shape("8x4 lnT bank", "sm_90")["wilke_symmetric"]
    with pytest.raises(SystemExit, match="--wilke-forms: unknown pairs"):
        sweep.main(["dme.inp", "--kernel", "viscosity", "--wilke-forms", "rows,pairs"])


@pytest.mark.skipif(find_nvcc() is None, reason="nvcc (CUDA toolkit) not installed")
@pytest.mark.parametrize("warps,ctas,table,arch", [(8, 4, "bank", "sm_90"), (6, 4, "auto", "sm_80")])
def test_the_model_issues_what_the_symmetric_kernel_issues_per_warp(warps, ctas, table, arch):
    """The timing model's per-warp counts against nvdisasm's (goal 6's check, as tests/test_timing.py makes it), at
    the sweeps' best symmetric settings, ln T replicated: 8x4 with the bank (H100 preset; within 5.8 % when
    measured) and 6x4 (A100 preset; within 1.6 %)."""
    from autotune import sass
    from test_timing import SASS_TOLERANCE

    if sass.missing_tools():
        pytest.skip(sass.missing_reason())
    compiled = compile_kernel(load("dme"), "viscosity", warps=warps, ctas_per_sm=ctas, arch=arch, constant_table=table,
                              replicate_ln_t=True, wilke_symmetric=True)
    rows = sass.model_check(compiled, arch)
    print("\n" + sass.format_model_check(f"dme viscosity symmetric {warps}x{ctas} {table} {arch}", rows))
    for warp, modeled, issued in rows:
        assert abs(modeled - issued) <= SASS_TOLERANCE * issued, (warp, modeled, issued)


def test_where_singe_chose_the_ctas_ptxas_settles_the_symmetric_form():
    """The register plan's floor was checked against ptxas for the row form: a symmetric kernel whose CTAs per SM
    singe chose is settled by ptxas where nvcc is installed (the QSSA n-dodecane at 8 warps spilled 12-16 B at the
    3 CTAs planned).  The companion: the row form's plan is trusted."""
    from singe.ptxas_check import needs_settling

    mech = load("dme")
    assert needs_settling(compile_kernel(mech, "viscosity", warps=8, wilke_symmetric=True))
    assert not needs_settling(compile_kernel(mech, "viscosity", warps=8))


@pytest.mark.exhaustive
@pytest.mark.parametrize("name", ["dme", "heptane", "gri30"])
def test_the_symmetric_form_at_every_warp_count(name):
    """pytest -m exhaustive: the symmetric form at warps 1-32 (DME, n-heptane, GRI-Mech 3.0), verified programs and
    the reference's viscosity to 1e-10 in the simulator, as the row form's warp counts are checked by default
    (tests/test_compiler_transport.py)."""
    mech = load(name)
    T, P, Y = random_states(48, len(mech.transported_species), 11)
    expected = reference.viscosity(mech, T, P, Y)
    for warps in range(1, 33):
        compiled = compile_kernel(mech, "viscosity", warps=warps, wilke_symmetric=True)
        compiled.verify()
        error = float(np.max(np.abs(compiled.simulate(T, P, Y) / expected - 1.0)))
        assert error <= TOLERANCE, f"{name} warps={warps}: {error:.2e}"
