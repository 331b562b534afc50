"""The greedy mapper: every operation on a warp, values placed, budgets honored."""

from __future__ import annotations

import pytest

from singe.errors import OptionError
from singe.kernels import build_graph
from singe.mapping import SLOT_BYTES, map_graph
from singe.options import CompileOptions
from conftest import load


@pytest.mark.parametrize("kernel", ["viscosity", "diffusion", "chemistry", "conductivity"])
@pytest.mark.parametrize("warps", [1, 3, 8])
def test_mapping_covers_every_operation_and_verifies(kernel, warps):
    mapping = map_graph(build_graph(load("h2o2"), kernel), CompileOptions(warps=warps))
    mapping.verify()
    assert all(0 <= mapping.warp_of[op.name] < warps for op in mapping.graph.operations if not op.replicated)
    assert sum(mapping.flops_per_warp()) == sum(op.flops for op in mapping.graph.operations if not op.replicated)
    if warps > 1:
        assert sum(1 for f in mapping.flops_per_warp() if f) > 1  # the work is spread


def test_auto_placement_is_what_fits():
    """'auto' stores crossing values where shared memory holds them all, stores
    the widely read ones where that fits, and buffers them otherwise (the
    paper's passes), for chemistry as for transport: buffered values stay in
    their producer's registers until exchanged, which made warps spill."""
    mech = load("h2o2")
    assert map_graph(build_graph(mech, "chemistry"), CompileOptions(warps=4)).mode == "store"
    assert map_graph(build_graph(mech, "viscosity"), CompileOptions(warps=4)).mode == "store"
    assert map_graph(build_graph(load("dme"), "chemistry"), CompileOptions(warps=8)).mode == "mixed"
    # n-heptane at 16 warps (at 8 its widely read values fit beside the buffer: 'mixed')
    assert map_graph(build_graph(load("heptane"), "chemistry"), CompileOptions(warps=16)).mode == "buffer"


def test_shared_budget_is_the_targets():
    options = CompileOptions(warps=4, ctas_per_sm=3)
    mapping = map_graph(build_graph(load("h2o2"), "diffusion"), options)
    assert mapping.shared_budget_slots == options.target.shared_budget(3) // SLOT_BYTES


def test_too_little_shared_memory_is_an_option_error():
    with pytest.raises(OptionError, match="shared-memory slots"):
        map_graph(build_graph(load("heptane"), "diffusion"), CompileOptions(warps=2, ctas_per_sm=8, arch="k20c",
                                                                             placement="store"))
