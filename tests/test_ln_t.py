"""--replicate-ln-t: every warp of the viscosity kernel computes ln T itself, instead of one warp sharing it
through shared memory (``CompileOptions.replicate_ln_t``, ``transport.viscosity_graph``).  The kernel has a sync
point less and gives the reference's viscosity at any warp count, in the simulator and on the host; the option
is named, checked, reaches the command line, the sweep and gpu_bench's labels, and leaves the baseline alone."""

from __future__ import annotations

import numpy as np
import pytest

from singe.baseline import baseline_kernel
from singe.compiler import compile_kernel
from singe.errors import OptionError
from singe.options import CompileOptions
from singe.reference import transport as reference

from cantera_reference import random_states
from conftest import load

TOLERANCE = 1e-10  # the viscosity kernel's (KERNELS['viscosity'].tolerance)


def viscosity(warps: int, replicate: bool, **options):
    return compile_kernel(load("dme"), "viscosity", warps=warps, replicate_ln_t=replicate, **options)


@pytest.mark.parametrize("warps", [1, 5, 8, 15])
def test_every_warp_computes_ln_t_and_the_kernel_agrees_with_the_reference(warps):
    """DME viscosity at 1, 5, 8 and 15 warps with ln T replicated: the reference's viscosity to 1e-10 in the
    simulator.  The temperature operation is replicated, and the kernel has one sync point less than with ln T
    shared (the companion: at one warp there is nothing to share, and the counts agree)."""
    mech = load("dme")
    T, P, Y = random_states(64, len(mech.transported_species), 3)
    replicated, shared = viscosity(warps, True), viscosity(warps, False)
    ours = replicated.simulate(T, P, Y)
    assert np.max(np.abs(ours / reference.viscosity(mech, T, P, Y) - 1.0)) <= TOLERANCE
    temperature = next(op for op in replicated.graph.operations if op.name == "temperature")
    assert temperature.replicated and not next(op for op in shared.graph.operations
                                                if op.name == "temperature").replicated
    fewer = 1 if warps > 1 else 0
    assert len(replicated.programs.sync_points) == len(shared.programs.sync_points) - fewer


def test_the_replicated_kernel_runs_on_the_host_as_in_the_simulator():
    """DME viscosity at 5 warps x 8 CTAs, the bank, groups of 6 (the model's best setting with ln T replicated):
    the emitted CUDA on the CPU gives the simulator's viscosity."""
    mech = load("dme")
    T, P, Y = random_states(80, len(mech.transported_species), 5)
    compiled = viscosity(5, True, ctas_per_sm=8, constant_table="bank", wilke_group=6)
    host = compiled.run_host(T, P, Y)
    assert np.max(np.abs(host / compiled.simulate(T, P, Y) - 1.0)) <= 1e-14
    assert np.max(np.abs(host / reference.viscosity(mech, T, P, Y) - 1.0)) <= TOLERANCE


def test_the_option_is_named_checked_and_reaches_the_scripts():
    from autotune import sweep
    from autotune.gpu_bench import Config, options_of_shape
    from singe.cli import _options, build_parser

    assert CompileOptions(replicate_ln_t=True).key().endswith("-lnt") and "-lnt" not in CompileOptions().key()
    with pytest.raises(OptionError, match="--replicate-ln-t is on or off"):
        CompileOptions(replicate_ln_t="yes")
    args = build_parser().parse_args(["dme.inp", "--replicate-ln-t"])
    assert _options(args, "viscosity").replicate_ln_t and not _options(args, "diffusion").replicate_ln_t
    grid = sweep.grid("viscosity", "sm_90", [5], [8], [1], [(1.0, 0.5, 1.0)], ["auto"], ln_t=(False, True))
    assert [o.replicate_ln_t for o in grid] == [False, True]
    assert sweep.grid("diffusion", "sm_90", [5], [8], [1], [(1.0, 0.5, 1.0)], ["auto"], ln_t=(False, True)) == \
        sweep.grid("diffusion", "sm_90", [5], [8], [1], [(1.0, 0.5, 1.0)], ["auto"])  # viscosity's alone
    assert sweep.command_line("dme.inp", "viscosity", grid[1]).endswith("--replicate-ln-t")
    label = Config("dme", "viscosity", "paper", grid[1].replace(wilke_group=6)).label("bank")
    assert label == "dme viscosity paper (5x8 g6 lnT bank)"
    assert options_of_shape("5x8 g6 lnT bank", "sm_90")["replicate_ln_t"]
    assert not options_of_shape("5x8 g6 bank", "sm_90")["replicate_ln_t"]
    with pytest.raises(SystemExit, match="--ln-t: unknown both"):
        sweep.main(["dme.inp", "--kernel", "viscosity", "--ln-t", "shared,both"])


def test_the_baseline_computes_ln_t_once_either_way():
    """The data-parallel baseline has no warps to share ln T with: the same graph with the option and without."""
    assert baseline_kernel(viscosity(8, True)).graph is baseline_kernel(viscosity(8, False)).graph
