"""The thermal-conductivity kernel, added through the kernel registry: simulated
at several warp counts, the emitted CUDA (warp-specialized and baseline) run on
the host, both against Cantera's ``mixture-averaged-CK`` thermal conductivity;
a wrong kernel fails the comparison; the command compiles it; nvcc builds it."""

from __future__ import annotations

import dataclasses
import functools

import numpy as np
import pytest

from singe.cli import main
from singe.codegen import generate, generate_baseline
from singe.codegen.nvcc import compile_cuda, find_nvcc
from singe.compiler import compile_kernel
from singe.kernels.ir import Const, Instr
from singe.kernels.registry import KERNELS
from singe.derived.transport import fit_transport
from singe.validate import cantera_property
from conftest import load
from cantera_reference import cantera_solution, random_states

TOLERANCE = 1e-9  # relative, against Cantera's mixture-averaged-CK thermal conductivity
MECHANISMS = ("gri30", "dme", "heptane")
WARPS = (1, 3, 8, 16)
STATES = 256


@functools.lru_cache(maxsize=None)
def cantera_states(name: str):
    """Random states inside the fit range and Cantera's conductivity there [W/m/K]."""
    mech = load(name)
    fits = fit_transport(mech)
    T, P, Y = random_states(STATES, len(mech.transported_species), 11,
                            T_range=(fits.T_min, min(fits.T_max, 3000.0)))
    expected = cantera_property(cantera_solution(name), KERNELS["conductivity"], mech, T, P, Y)
    return mech, (T, P, Y), expected


def worst_error(ours: np.ndarray, theirs: np.ndarray) -> float:
    return float(np.max(np.abs(ours - theirs) / np.abs(theirs)))


@functools.lru_cache(maxsize=None)
def compiled(name: str, warps: int):
    return compile_kernel(load(name), "conductivity", warps=warps)


@pytest.mark.parametrize("name", MECHANISMS)
def test_simulated_kernel_matches_cantera_at_every_warp_count(name):
    """Warp programs verified and simulated (strict: races and deadlocks raise)."""
    mech, (T, P, Y), expected = cantera_states(name)
    for warps in WARPS:
        kernel = compiled(name, warps)
        kernel.verify()
        error = worst_error(kernel.simulate(T, P, Y), expected)
        print(f"\n{name} conductivity warps={warps}: {error:.2e} against Cantera")
        assert error <= TOLERANCE, f"{name} warps={warps}: {error:.2e}"


@pytest.mark.parametrize("name", MECHANISMS)
def test_emitted_kernels_run_on_the_host_match_cantera(name):
    """The warp-specialized CUDA (8 warps) and the data-parallel baseline, run on the CPU."""
    mech, (T, P, Y), expected = cantera_states(name)
    kernel = compiled(name, 8)
    for baseline in (False, True):
        error = worst_error(kernel.run_host(T, P, Y, baseline=baseline), expected)
        print(f"\n{name} conductivity {'baseline' if baseline else 'warp-specialized'} host: {error:.2e}")
        assert error <= TOLERANCE, f"{name} baseline={baseline}: {error:.2e}"


def test_comparison_catches_a_wrong_fit_coefficient():
    """One species' constant term moved by 1e-6: the comparison fails."""
    mech, (T, P, Y), expected = cantera_states("gri30")
    kernel = compiled("gri30", 4)
    op = next(o for o in kernel.graph.operations if o.name == "conductivity_5")
    position, instr = next((i, x) for i, x in enumerate(op.instrs) if any(isinstance(s, Const) for s in x.srcs))
    srcs = tuple(Const(s.value * (1 + 1e-6)) if isinstance(s, Const) else s for s in instr.srcs)
    wrong_op = dataclasses.replace(op, instrs=op.instrs[:position] + (Instr(instr.opcode, instr.dst, srcs),)
                                   + op.instrs[position + 1:])
    graph = dataclasses.replace(kernel.graph, operations=tuple(wrong_op if o.name == op.name else o
                                                               for o in kernel.graph.operations))
    from singe.mapping import map_graph
    from singe.schedule import schedule

    mapping = map_graph(graph, kernel.options)
    wrong = dataclasses.replace(kernel, graph=graph, mapping=mapping, programs=schedule(mapping))
    assert worst_error(wrong.simulate(T, P, Y), expected) > TOLERANCE


def test_command_compiles_and_validates_the_kernel(tmp_path, capsys):
    assert main(["gri30", "--kernels", "conductivity", "--warps", "4", "--baseline", "--validate",
                 "-o", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "gri30_conductivity.cu: 4 warps" in out
    assert "conductivity: largest relative error against Cantera" in out
    assert {p.name for p in tmp_path.iterdir()} == {"gri30_conductivity.cu", "gri30_conductivity.h",
                                                     "gri30_conductivity_baseline.cu",
                                                     "gri30_conductivity_baseline.h"}
    header = (tmp_path / "gri30_conductivity.h").read_text()
    assert "conductivity: out, mixture thermal conductivity [W/m/K], n_points values" in header


def test_not_compiled_unless_asked_for(tmp_path, capsys):
    """Singe's three kernels stay the default; conductivity is compiled on request."""
    assert main(["h2o2", "-o", str(tmp_path)]) == 0
    assert not (tmp_path / "h2o2_conductivity.cu").exists()


@pytest.mark.skipif(find_nvcc() is None, reason="nvcc (CUDA toolkit) not installed")
def test_dme_kernel_compiles_cleanly_for_sm80_and_sm90(tmp_path):
    """DME at 8 warps, warp-specialized on sm_80 and sm_90, baseline on sm_90: no warning."""
    sm80 = compile_kernel(load("dme"), "conductivity", warps=8, arch="sm_80")  # the .cu guards its arch
    kernel = compiled("dme", 8)
    jobs = [(generate(sm80), "sm_80"), (generate(kernel), "sm_90"), (generate_baseline(kernel), "sm_90")]
    for i, (generated, arch) in enumerate(jobs):
        path = generated.write(tmp_path / f"{i}-{arch}")[0]
        result = compile_cuda(path, arch)
        entry = result.entries[0]
        print(f"\n{generated.name} {arch}: {entry.registers} registers, {entry.spill_stores} B spill stores")
        assert not result.warnings, (generated.name, arch, result.warnings)
