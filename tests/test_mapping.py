"""The greedy mapper: every operation on a warp, values placed, budgets honored."""

from __future__ import annotations

import pytest

from singe.errors import OptionError
from singe.kernels import build_graph
from singe.kernels.transport import column_blocks
from singe.mapping import CHAINS_IN_REGISTERS, SLOT_BYTES, map_graph
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


def _chain_places(mapping) -> dict[str, set[str]]:
    where: dict[str, set[str]] = {}
    for value, chain in mapping.chains.items():
        where.setdefault(chain, set()).add(mapping.placement[value])
    return where


def test_running_sums_that_do_not_all_fit_are_accumulated_chain_by_chain():
    """DME chemistry at 6 warps x 2 CTAs: its (species, warp) running sums and the other
    crossing values exceed the shared slots, so part of the sums are accumulated in shared
    memory and the rest stay in registers, a chain whole or not at all."""
    options = CompileOptions(warps=6, ctas_per_sm=2, form="unrolled")
    mapping = map_graph(build_graph(load("dme"), "chemistry"), options)
    where = _chain_places(mapping)
    assert all(places == {"accumulate"} or "accumulate" not in places for places in where.values())
    assert 0 < sum(places == {"accumulate"} for places in where.values()) < len(where)


@pytest.mark.parametrize("placement, accumulated", [("auto", True), ("store", True), ("buffer", False)])
def test_diffusion_row_sums_are_one_shared_running_sum_each(placement, accumulated):
    """n-heptane diffusion at the paper's 13 warps x 3 CTAs: one running sum per species
    (52 chains, as many as the warps keep in registers before sums move to shared memory,
    ``CHAINS_IN_REGISTERS`` x 13) accumulated in shared memory wherever values live in
    slots; with placement 'buffer' they are exchanged like any crossing value."""
    options = CompileOptions(warps=13, ctas_per_sm=3, placement=placement)
    mapping = map_graph(build_graph(load("heptane"), "diffusion"), options)
    where = {chain: places for chain, places in _chain_places(mapping).items() if chain.startswith("rowsum")}
    assert len(where) == 52 <= CHAINS_IN_REGISTERS * 13
    assert all((places == {"accumulate"}) if accumulated else ("accumulate" not in places) for places in where.values())


@pytest.mark.parametrize("weights", [(1.0, 0.5, 1.0), (1.0, 0.0, 0.0), (0.2, 1.0, 3.0)])
def test_diffusion_columns_are_blocks_of_adjacent_columns(weights):
    """The diffusion kernel fixes its columns in blocks of adjacent columns, the larger
    first (paper §3.3), and each species' mole number and output on its column's warp,
    whatever the mapper's weights."""
    options = CompileOptions(warps=10, weights=weights)
    graph = build_graph(load("dme"), "diffusion")
    from singe.mapping import assign_warps

    warp_of = assign_warps(graph, options.planned())
    blocks = [[k for k in range(graph.n_species) if warp_of[f"diffusion_column_{k}"] == w] for w in range(10)]
    assert blocks == column_blocks(graph.n_species, 10) and [len(b) for b in blocks] == [3] * 10
    assert all(warp_of[f"{op}_{k}"] == warp_of[f"diffusion_column_{k}"] for k in range(graph.n_species)
               for op in ("diffusion", "moles"))


# -- the time-aware assignment of the chemistry kernel -------------------------

def _timed(name: str, warps: int, qssa: int = 1):
    from singe.mapping import shared_point_values, timed_assignment

    options = CompileOptions(warps=warps, qssa_warps=qssa, ctas_per_sm=2)
    graph = shared_point_values(build_graph(load(name), "chemistry"), warps)
    return graph, timed_assignment(graph, options)


@pytest.mark.parametrize("name, warps, qssa", [("h2o2", 4, 1), ("dme", 8, 4), ("heptane", 16, 2)])
def test_timed_assignment_is_a_schedule_that_keeps_the_qssa_warps(name, warps, qssa):
    """Every mapped operation on a warp; the QSSA operations on the first
    ``qssa`` warps; no operation planned before its inputs are done (plus the
    crossing delay from another warp) nor while its warp runs another; every
    stiffness scaling on its reaction's warp (owner computes)."""
    from singe.mapping import CROSS_WARP_DELAY, FOLLOW_THE_REACTION, _reaction_of, issue_cost

    graph, (warp_of, start) = _timed(name, warps, qssa)
    ops = [op for op in graph.operations if not op.replicated]
    assert set(warp_of) == set(start) == {op.name for op in ops}
    producers = graph.producers()
    for op in ops:
        if op.kind.startswith("qssa"):
            assert warp_of[op.name] < qssa, op.name
        for value in op.inputs:
            source = producers[value]
            if source in warp_of:
                delay = CROSS_WARP_DELAY if warp_of[source] != warp_of[op.name] else 0
                assert start[op.name] >= start[source] + issue_cost(graph.by_name[source]) + delay, (op.name, source)
        if op.kind in FOLLOW_THE_REACTION:
            assert warp_of[op.name] == warp_of[_reaction_of(op, graph.by_name, producers)], op.name
    for w in range(warps):
        spans = sorted((start[n], start[n] + issue_cost(graph.by_name[n])) for n in warp_of if warp_of[n] == w)
        assert all(a[1] <= b[0] for a, b in zip(spans, spans[1:])), w


def test_timed_assignment_balances_and_finishes_before_the_greedy_mapper():
    """DME at the paper's setting: within BALANCE_CAP of the mean issue cost
    per warp (a shared read per crossing input counted), and the planned slab
    ends sooner than a list schedule of the FLOP-and-locality greedy mapping
    (the companion: the same measure on that mapping)."""
    from singe.mapping import BALANCE_CAP, assign_warps, issue_cost
    from singe.schedule import timed_order

    graph, (warp_of, start) = _timed("dme", 8, 4)
    cost = {op.name: issue_cost(op) for op in graph.operations if not op.replicated}
    loads = [sum(c for n, c in cost.items() if warp_of[n] == w) for w in range(8)]
    assert max(loads) <= BALANCE_CAP * sum(loads) / 8, loads
    planned = max(start[n] + cost[n] for n in cost)
    greedy = assign_warps(graph, CompileOptions(warps=8, qssa_warps=4, ctas_per_sm=2))
    _, greedy_start = timed_order(graph, greedy, issue_cost)
    assert planned < 0.9 * max(greedy_start[n] + cost[n] for n in cost), planned


def test_point_values_are_copied_only_where_copies_cost_less_than_a_warp():
    """DME at 8 warps keeps its point values and molar density replicated;
    n-heptane at 16 warps computes them once and shares them (15 copies would
    cost more than a warp's share); H2/O2 at 2 warps copies, at 8 shares."""
    from singe.mapping import shared_point_values

    for name, warps, copied in (("dme", 8, True), ("heptane", 16, False), ("h2o2", 2, True), ("h2o2", 8, False)):
        graph = build_graph(load(name), "chemistry")
        shared = shared_point_values(graph, warps)
        assert any(op.replicated for op in shared.operations) == copied, (name, warps)
        assert [op.name for op in shared.operations] == [op.name for op in graph.operations]


def test_partial_sums_follow_the_planned_order():
    """Each warp's running partial sum of a reduction takes its terms in the
    order the assignment planned their producers (graph order would hold a
    producer planned early until one planned later is done)."""
    graph, (warp_of, start) = _timed("dme", 8, 4)
    mapping = map_graph(graph, CompileOptions(warps=8, qssa_warps=4, ctas_per_sm=2))
    producer = {v: op.name for op in mapping.graph.operations for v in op.outputs}
    producer |= {i.dst: op.name for op in mapping.graph.operations for i in op.instrs if i.dst}
    chains: dict[str, list[str]] = {}
    for value, chain in sorted(mapping.chains.items(), key=lambda item: int(item[0].rsplit(".", 1)[1])):
        chains.setdefault(chain, []).append(producer[value])
    assert len(chains) > 8
    for chain, names in chains.items():
        starts = [mapping.planned[n] for n in names]
        assert starts == sorted(starts), chain
