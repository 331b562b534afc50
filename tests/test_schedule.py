"""The named-barrier scheduler: a topological global order, barrier ids within the limit, the plan attached."""

from __future__ import annotations

import pytest

from singe.kernels import build_graph
from singe.mapping import map_graph
from singe.options import CompileOptions
from singe.programs import Compute
from singe.programs.verify import check_programs
from singe.schedule import global_order, schedule
from conftest import load


@pytest.mark.parametrize("kernel", ["viscosity", "diffusion", "chemistry"])
def test_global_order_respects_every_dependence(kernel):
    mapping = map_graph(build_graph(load("h2o2"), kernel), CompileOptions(warps=4))
    order = global_order(mapping.graph, mapping.warp_of)
    position = {op.name: i for i, op in enumerate(order)}
    producers = mapping.graph.producers()
    for op in order:
        assert all(position[producers[v]] < position[op.name] for v in op.inputs if producers[v] in position)


@pytest.mark.parametrize("ctas", [1, 2, 4])
def test_programs_verify_and_stay_within_the_barrier_limit(ctas):
    mapping = map_graph(build_graph(load("h2o2"), "diffusion"), CompileOptions(warps=6, ctas_per_sm=ctas))
    programs = schedule(mapping)
    check_programs(programs)
    assert programs.barrier_limit == 16 // ctas
    assert all(0 < p.barrier_id < programs.barrier_limit for p in programs.sync_points)
    computed = [item.op.name for program in programs.programs for item in program.items if isinstance(item, Compute)]
    assert {op.name for op in mapping.graph.operations if not op.replicated} <= set(computed)
    assert programs.plan is not None and len(programs.plan.live_doubles) == 6
