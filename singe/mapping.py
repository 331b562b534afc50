"""Computation and data mapping (paper §4.1).

``map_graph`` assigns every operation to a warp with a greedy algorithm
(most expensive operation first, each where a weighted cost of FLOP balance,
register balance and cross-warp traffic is lowest), splits associative sums
into per-warp partial sums, and decides where each value crossing warps
lives: its own shared-memory slot ('store') or the producer's registers,
exchanged through reused slots when needed ('buffer').
"""

from __future__ import annotations

import dataclasses
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from itertools import zip_longest

from singe.errors import OptionError, SingeInternalError
from singe.kernels.ir import Const, DataflowGraph, Instr, Operation, Reg, Regrouping
from singe.kernels.registry import kernel_spec
from singe.options import CompileOptions
from singe.programs import WARP_SIZE
from singe.timing import EXPANSIONS

SLOT_BYTES = WARP_SIZE * 8
CHAINS_IN_REGISTERS = 4  # running partial sums per warp kept in registers before they move to shared memory
BUFFER_RESERVE = 64  # shared slots kept for buffered exchanges when running sums move to shared memory


@dataclass(frozen=True)
class Mapping:
    """Operations on warps and values in memories.

    ``graph`` is the input graph, regrouped where its kernel does so once
    operations have warps (``KernelSpec.regroup``), with reductions split
    into per-warp partial sums; ``warp_of`` covers every non-replicated
    operation of it; ``placement`` maps each graph value to 'register' (used
    only on the warp that makes it, or made by a replicated operation),
    'store', 'buffer' or 'accumulate' (a step of a running sum in a shared
    slot of its ``chains`` entry); ``phases`` and ``layout``: the
    regrouping's phases (full barriers between them) and the values and
    chains whose slots come first (``Regrouping``).
    """

    graph: DataflowGraph
    options: CompileOptions
    warp_of: dict[str, int]
    placement: dict[str, str]
    mode: str
    shared_budget_slots: int
    chains: dict[str, str] = field(default_factory=dict)
    phases: dict[str, int] = field(default_factory=dict)
    layout: tuple[str, ...] = ()
    info: dict = field(default_factory=dict, compare=False, hash=False)
    planned: dict[str, float] = field(default_factory=dict, compare=False, hash=False)
    """The time-aware assignment's planned start of each operation [issue slots] (chemistry; else empty)."""

    @property
    def warps(self) -> int:
        return self.options.warps

    def flops_per_warp(self) -> list[int]:
        flops = [0] * self.warps
        for op in self.graph.operations:
            if not op.replicated:
                flops[self.warp_of[op.name]] += op.flops
        return flops

    def verify(self) -> None:
        self.graph.verify()
        for op in self.graph.operations:
            if op.replicated != (op.name not in self.warp_of):
                raise SingeInternalError(f"{op.name}: replicated operations are unmapped, others mapped")
        for name, warp in self.warp_of.items():
            if not 0 <= warp < self.warps:
                raise SingeInternalError(f"{name} mapped to warp {warp} of {self.warps}")
        producers = self.graph.producers()
        consumers = self.graph.consumers()
        for value, producer in producers.items():
            where = self.placement.get(value)
            if where not in ("register", "store", "buffer", "accumulate"):
                raise SingeInternalError(f"value {value} has no placement")
            readers = {self.warp_of[c] for c in consumers.get(value, []) if c in self.warp_of}
            crosses = producer in self.warp_of and readers - {self.warp_of[producer]}
            if where == "register" and crosses:
                raise SingeInternalError(f"value {value} is read on other warps but placed in a register")

    def __str__(self) -> str:
        flops = self.flops_per_warp()
        shared = sum(1 for p in self.placement.values() if p == "store")
        lines = [f"mapping {self.graph.kernel} of {self.graph.mechanism} onto {self.warps} warps "
                 f"(weights {self.options.weights}, placement {self.mode}: {shared} stored values, "
                 f"shared budget {self.shared_budget_slots} slots)"]
        for warp in range(self.warps):
            names = [op.name for op in self.graph.operations if self.warp_of.get(op.name) == warp]
            lines.append(f"warp {warp}: {flops[warp]} flops, {len(names)} ops: {' '.join(names)}")
        return "\n".join(lines)


# -- warp assignment ----------------------------------------------------------

def issue_cost(op: Operation) -> int:
    """Machine instructions one warp issues for ``op``: each IR instruction's
    expansion (``singe.timing.EXPANSIONS``: exp, log and division are long
    sequences) and one load per mechanism constant it reads."""
    return sum(EXPANSIONS[i.opcode].issue + sum(isinstance(s, Const) for s in i.srcs) for i in op.instrs)


def _load(graph: DataflowGraph):
    """What the mapper balances between warps for this kernel (its ``KernelSpec.balance``)."""
    balance = kernel_spec(graph.kernel).balance
    if balance == "issue":
        return issue_cost
    if balance == "flops":
        return lambda op: op.flops
    raise SingeInternalError(f"{graph.kernel}: unknown balance {balance!r}")


def _affinities(graph: DataflowGraph) -> dict[str, dict[str, float]]:
    """How much each pair of operations gains from sharing a warp: 1 per data
    edge, 1/(terms-1) per pair of terms of one reduction."""
    producers = graph.producers()
    weights: dict[str, dict[str, float]] = defaultdict(lambda: defaultdict(float))
    by_name = graph.by_name
    for op in graph.operations:
        if op.replicated:
            continue
        sources = [producers[v] for v in op.inputs if not by_name[producers[v]].replicated]
        for source in sources:
            weights[op.name][source] += 1.0
            weights[source][op.name] += 1.0
        if op.reduction and len(sources) > 1:
            share = 1.0 / (len(sources) - 1)
            for a in sources:
                for b in sources:
                    if a != b:
                        weights[a][b] += share
    return weights


def assign_warps(graph: DataflowGraph, options: CompileOptions) -> dict[str, int]:
    """Greedy assignment: most FLOPs first, each to the warp of lowest cost.

    cost = w_f * excess(flops) + w_r * excess(values) + w_l * remote affinity,
    where excess(x) = max(x_after / mean - 1, 0) penalizes a warp only past its
    fair share, and the remote affinity is the fraction of the operation's
    affinity (data edges, shared reductions) with operations already on
    other warps.  Ties go to the least loaded warp, so with no locality to
    gain the operations spread evenly, and with locality they fill warps in
    contiguous blocks (adjacent diffusion columns share rows).  The kernels
    balanced by issued instructions (chemistry) are mapped by
    ``timed_assignment`` instead.

    A kernel may fix the warps of some operations first
    (``KernelSpec.fixed_warps``: the diffusion columns in blocks of adjacent
    columns, paper §3.3); the others are placed around them.
    """
    warps = options.warps
    w_flops, w_regs, w_local = options.weights
    ops = [op for op in graph.operations if not op.replicated]
    position = {op.name: i for i, op in enumerate(ops)}
    load = _load(graph)
    cost_of = {op.name: load(op) for op in ops}
    mean_flops = max(sum(cost_of.values()) / warps, 1.0)
    mean_values = max(sum(len(op.outputs) for op in ops) / warps, 1.0)
    affinity = _affinities(graph)
    flops = [0] * warps
    values = [0] * warps
    warp_of: dict[str, int] = {}
    fixed = kernel_spec(graph.kernel).fixed_warps
    for name, warp in (fixed(graph, warps) if fixed else {}).items():
        warp_of[name] = warp
        flops[warp] += cost_of[name]
        values[warp] += len(graph.by_name[name].outputs)
    for op in sorted((op for op in ops if op.name not in warp_of), key=lambda o: (-cost_of[o.name], position[o.name])):
        near = affinity.get(op.name, {})
        total = sum(near.values()) or 1.0

        def cost(warp: int) -> tuple[float, int, int]:
            remote = sum(a for other, a in near.items() if other in warp_of and warp_of[other] != warp)
            value = (w_flops * max((flops[warp] + cost_of[op.name]) / mean_flops - 1.0, 0.0)
                     + w_regs * max((values[warp] + len(op.outputs)) / mean_values - 1.0, 0.0)
                     + w_local * remote / total)
            return round(value, 12), flops[warp], warp

        best = min(range(warps), key=cost)
        warp_of[op.name] = best
        flops[best] += cost_of[op.name]
        values[best] += len(op.outputs)
    return warp_of


CROSS_WARP_DELAY = 128
"""Issue slots from a producer's result to a consumer on another warp (store, barrier, load): what the
time-aware assignment and the scheduler's list schedule (``schedule._timed_order``) charge a crossing edge."""
BALANCE_CAP = 1.08
"""The time-aware assignment keeps each warp's load within this factor of the mean issue cost where a warp
allows it (the slowest warp sets the time; the imbalance goal is 1.15 of issued instructions, and the
compiled kernel's warps differ more than the issue costs say: n-heptane chemistry at the paper's setting,
sm_90, SASS walk: 1.107 at 1.08, counting a shared read per input value from another warp and taking the
warp whose load stays lowest once every warp is past the cap; 1.13 taking the earliest finish there; 1.18
when one read per producing operation was counted, which left the QSSA warps' reads of many rates unseen)."""
FOLLOW_THE_REACTION = ("stiffness_scale",)
"""Kinds of operations the time-aware assignment puts on the warp of the reaction whose rates they read
(owner computes): the work after the stiff species' factors then spreads over the warps as the reactions
do, where the earliest finish would gather these small operations on the warps holding their other inputs."""


@dataclass
class _Plan:
    """The time-aware assignment so far: per warp its clock and load [issue slots], per operation its warp and
    planned finish."""

    clock: list[float]
    load: list[float]
    warp_of: dict[str, int] = field(default_factory=dict)
    finish: dict[str, float] = field(default_factory=dict)


def timed_assignment(graph: DataflowGraph, options: CompileOptions) -> tuple[dict[str, int], dict[str, float]]:
    """(warp of each operation, its planned start [issue slots]): a list
    schedule that maps as it goes (HEFT, Topcuoglu et al. 2002), for the
    kernels balanced by issued instructions (chemistry).

    Operations are taken by decreasing upward rank (their issue cost plus the
    longest path below them, half a ``CROSS_WARP_DELAY`` per edge), each onto
    the warp where it would finish first: not before the warp is free, nor
    before its inputs are, ``CROSS_WARP_DELAY`` later from another warp.  A
    warp whose load (issue cost plus one shared read per input value made on
    another warp) would pass ``BALANCE_CAP`` times the mean is taken only when every
    warp would, and then the warp whose load stays lowest (the earliest finish
    there gathered the last phases' operations on a few warps: DME chemistry
    at the paper's setting planned 1.09 of the mean, 1.035 this way); ties go
    to the warp holding more of the inputs, then the lighter one.  The QSSA
    operations (kind 'qssa...') go to the first ``qssa_warps`` warps (paper
    §3.4): the rank puts the reactions they read first, so those warps start
    the QSSA computation as soon as its inputs are made while the others
    finish the remaining reactions.  Unlike the greedy mapper, which
    balances load and locality without time, this keeps
    warps from idling at barriers while a late producer finishes (the model's
    waits at the end of a slab: stiffness and output sums held up by
    reactions computed after the QSSA).  The kinds of ``FOLLOW_THE_REACTION``
    go where their reaction went."""
    ops = [op for op in graph.operations if not op.replicated]
    producers = graph.producers()
    mapped = {op.name for op in ops}
    reads = {op.name: Counter(producers[v] for v in set(op.inputs) if producers[v] in mapped) for op in ops}
    cost = {op.name: issue_cost(op) for op in ops}
    cap = BALANCE_CAP * sum(cost.values()) / options.warps
    plan = _Plan([0.0] * options.warps, [0.0] * options.warps)
    by_name = graph.by_name
    for op in _by_rank(graph, ops, reads, cost):
        allowed = range(options.qssa_warps) if op.kind.startswith("qssa") else range(options.warps)
        reaction = _reaction_of(op, by_name, producers) if op.kind in FOLLOW_THE_REACTION else None
        if reaction in plan.warp_of:
            allowed = (plan.warp_of[reaction],)
        _, warp, start, remote = min(_placement(plan, op.name, reads[op.name], cost[op.name], cap, w)
                                     for w in allowed)
        plan.warp_of[op.name] = warp
        plan.finish[op.name] = plan.clock[warp] = start + cost[op.name]
        plan.load[warp] += cost[op.name] + remote
    return plan.warp_of, {name: plan.finish[name] - cost[name] for name in plan.finish}


def shared_point_values(graph: DataflowGraph, warps: int) -> DataflowGraph:
    """``graph``, or, when its replicated operations (point values, the molar
    density) copied on every other warp would cost more issue slots than one
    warp's share of the rest, ``graph`` with them mapped like any operation:
    computed once and read through shared memory.  A copy saves a barrier at
    the start of a slab; many copies cost issue slots and code (n-heptane at
    16 warps: 15 copies of 285 slots against a share of 1,493)."""
    replicated = sum(issue_cost(op) for op in graph.operations if op.replicated)
    share = sum(issue_cost(op) for op in graph.operations if not op.replicated) / warps
    if (warps - 1) * replicated <= share:
        return graph
    operations = tuple(dataclasses.replace(op, replicated=False) for op in graph.operations)
    return DataflowGraph(graph.kernel, graph.mechanism, operations, graph.n_species)


def _reaction_of(op: Operation, by_name: dict, producers: dict) -> str | None:
    """The reaction operation whose rates ``op`` reads, directly or through their QSSA scaling."""
    for value in op.inputs:
        source = by_name[producers[value]]
        if source.kind == "reaction":
            return source.name
        if source.kind == "qssa_scale":
            return _reaction_of(source, by_name, producers)
    return None


def _by_rank(graph: DataflowGraph, ops: list[Operation], sources_of: dict, cost: dict) -> list[Operation]:
    """``ops`` by decreasing upward rank (a topological order: every edge adds to the rank;
    ``sources_of``: per operation, the mapped operations whose values it reads)."""
    below: dict[str, list[str]] = defaultdict(list)
    for name, sources in sources_of.items():
        for source in sources:
            below[source].append(name)
    rank: dict[str, float] = {}
    for op in reversed(graph.topological_order()):
        if op.name in cost:
            rank[op.name] = cost[op.name] + max((rank[s] + CROSS_WARP_DELAY / 2 for s in below[op.name]), default=0.0)
    position = {op.name: i for i, op in enumerate(ops)}
    return sorted(ops, key=lambda op: (-rank[op.name], position[op.name]))


def _placement(plan: _Plan, name: str, sources: Counter, cost: float, cap: float, warp: int) -> tuple:
    """(sort key, warp, start, input values read from other warps) of operation ``name`` on ``warp``
    (``sources``: the producing operations, each with the number of its values ``name`` reads)."""
    start = plan.clock[warp]
    remote = 0
    for source, values in sources.items():
        crossing = plan.warp_of[source] != warp
        remote += values * crossing
        start = max(start, plan.finish[source] + CROSS_WARP_DELAY * crossing)
    load = plan.load[warp] + cost + remote
    over = load > cap
    return (over, load if over else start + cost, remote, plan.load[warp], warp), warp, start, remote


# -- per-warp partial sums ----------------------------------------------------

def split_reductions(graph: DataflowGraph, warp_of: dict[str, int],
                     planned: dict[str, float] | None = None) -> tuple[DataflowGraph, dict[str, str]]:
    """Rewrite each reduction so that every warp adds the terms it makes into
    one running partial sum (inside the producing operations, in the order of
    their ``planned`` start, else in graph order: the chain then follows the
    warp's program rather than holding an operation back until one placed
    later in the graph is done), and the reduction adds the per-warp partials.
    Returns the new graph and the chain (reduction@warp) of every running partial."""
    producers = graph.producers()
    consumers = graph.consumers()
    ops = {op.name: op for op in graph.operations}
    position = {op.name: i for i, op in enumerate(graph.operations)}
    planned = planned or {}
    appended: dict[str, list[Instr]] = defaultdict(list)
    extra_inputs: dict[str, list[str]] = defaultdict(list)
    extra_outputs: dict[str, list[str]] = defaultdict(list)
    dropped: dict[str, set[str]] = defaultdict(set)
    new_reductions: dict[str, Operation] = {}
    chains: dict[str, str] = {}
    internal: set[str] = set()  # partials read only by the operation making them
    for reduction in (op for op in graph.operations if op.reduction):
        partials = []
        by_warp: dict[int, list[str]] = defaultdict(list)
        for term in sorted(reduction.inputs, key=lambda v: (planned.get(producers[v], 0.0), position[producers[v]])):
            by_warp[warp_of[producers[term]]].append(term)
        for warp, terms in sorted(by_warp.items()):
            previous = previous_producer = None
            for step, term in enumerate(terms):
                producer = producers[term]
                name = f"{reduction.outputs[0]}@w{warp}.{step}"
                if previous is None:
                    appended[producer].append(Instr("mov", name, (Reg(term),)))
                else:
                    appended[producer].append(Instr("add", name, (Reg(previous), Reg(term))))
                    if previous_producer == producer:  # an operation making several terms chains them inside
                        internal.add(previous)
                    else:
                        extra_inputs[producer].append(previous)
                extra_outputs[producer].append(name)
                previous_producer = producer
                chains[name] = f"{reduction.outputs[0]}@w{warp}"
                if consumers[term] == [reduction.name]:
                    dropped[producer].add(term)
                previous = name
            partials.append(previous)
        new_reductions[reduction.name] = _sum_operation(reduction, partials)
    rewritten = []
    for op in graph.operations:
        if op.name in new_reductions:
            rewritten.append(new_reductions[op.name])
            continue
        if op.name not in appended:
            rewritten.append(op)
            continue
        inputs = op.inputs + tuple(extra_inputs[op.name])
        outputs = tuple(v for v in op.outputs if v not in dropped[op.name]) + \
            tuple(v for v in extra_outputs[op.name] if v not in internal)
        rewritten.append(Operation(op.name, op.kind, _insert_after_definitions(op.instrs, appended[op.name]),
                                   inputs, outputs, op.replicated, False))
    lowered = DataflowGraph(graph.kernel, graph.mechanism, tuple(rewritten), graph.n_species)
    return lowered, chains


def _insert_after_definitions(instrs: tuple[Instr, ...], additions: list[Instr]) -> tuple[Instr, ...]:
    """Place each accumulation right after the instruction that computes its term
    (so terms do not stay live to the end of the operation)."""
    after: dict[str, list[Instr]] = defaultdict(list)
    for addition in additions:
        after[addition.srcs[-1].name].append(addition)
    result = []
    for instr in instrs:
        result.append(instr)
        result.extend(after.pop(instr.dst, []))
    for remaining in after.values():  # terms that are inputs of the operation
        result.extend(remaining)
    return tuple(result)


def _sum_operation(reduction: Operation, partials: list[str]) -> Operation:
    """The reduction over per-warp partials (a plain sum, no longer splittable)."""
    output = reduction.outputs[0]
    instrs = []
    total = partials[0]
    for i, partial in enumerate(partials[1:], 1):
        name = output if i == len(partials) - 1 else f"{output}.s{i}"
        instrs.append(Instr("add", name, (Reg(total), Reg(partial))))
        total = name
    if len(partials) == 1:
        instrs.append(Instr("mov", output, (Reg(total),)))
    return Operation(reduction.name, reduction.kind, tuple(instrs), tuple(partials), (output,))


# -- data placement -----------------------------------------------------------

def _cross_values(graph: DataflowGraph, warp_of: dict[str, int]) -> dict[str, set[int]]:
    """Values read on a warp other than their producer's -> the warps reading them."""
    producers = graph.producers()
    result = {}
    for value, readers in graph.consumers().items():
        producer = producers[value]
        if producer not in warp_of:
            continue
        warps = {warp_of[r] for r in readers if r in warp_of}
        if warps - {warp_of[producer]}:
            result[value] = warps
    return result


def place_values(graph: DataflowGraph, warp_of: dict[str, int], options: CompileOptions, budget_slots: int,
                 chains: dict[str, str], shared_chains: frozenset = frozenset()) -> tuple[dict[str, str], str]:
    """Placement of every value and the mode chosen.

    Values crossing warps: 'store' gives each a slot; 'buffer' keeps them in
    the producer's registers and exchanges them through reused slots
    (chemistry defaults to it, as the paper); 'mixed' stores the widely read
    ones; 'auto' stores if that fits, else mixed, else buffer.

    When warps keep running partial sums of many reductions at once (rows of
    the diffusion matrix, species sums of the chemistry output), each
    (reduction, warp) sum is accumulated in a shared slot of its own
    ('accumulate') instead of a register, as the paper does, as far as shared
    memory allows.  The chains in ``shared_chains`` (a regrouping's running
    sums, which warps add into in turn) are accumulated whenever the
    placement keeps values in slots ('auto', 'store', 'mixed')."""
    cross = _cross_values(graph, warp_of)
    placement = {v: "register" for v in graph.producers()}
    others = {v: r for v, r in cross.items() if v not in chains}
    accumulated = _chains_to_accumulate(graph, {v: c for v, c in chains.items() if c not in shared_chains},
                                        others, options, budget_slots)
    if options.placement in ("auto", "store", "mixed"):
        accumulated |= shared_chains
    placement.update({v: "accumulate" for v, chain in chains.items() if chain in accumulated})
    cross = {v: r for v, r in cross.items() if placement[v] != "accumulate"}
    widely_read = _widely_read(cross, options)
    mode = _mode(graph, options, cross, widely_read, budget_slots - len(accumulated))
    for value in cross:
        if mode == "store" or (mode == "mixed" and value in widely_read):
            placement[value] = "store"
        else:
            placement[value] = "buffer"
    return placement, mode


def _chains_to_accumulate(graph: DataflowGraph, chains: dict[str, str], others: dict, options: CompileOptions,
                          budget_slots: int) -> set[str]:
    """The running-sum chains that move to shared memory: all of them when
    they fit beside the other crossing values, else as many as fit beside the
    widely read values and the buffer reserve; each warp then keeps the chains
    with the shortest spans (first to last term, in graph order) in registers."""
    by_chain: dict[str, list[str]] = defaultdict(list)
    for value, chain in chains.items():
        by_chain[chain].append(value)
    if len(by_chain) <= CHAINS_IN_REGISTERS * options.warps or options.placement not in ("auto", "store", "mixed"):
        return set()
    if len(by_chain) + len(others) <= budget_slots:
        return set(by_chain)
    room = budget_slots - len(_widely_read(others, options)) - BUFFER_RESERVE
    if room <= 0:
        return set()
    position = {v: i for i, op in enumerate(graph.operations) for v in op.outputs}
    span = {chain: max(position[v] for v in vs) - min(position[v] for v in vs) for chain, vs in by_chain.items()}
    per_warp: dict[str, list[str]] = defaultdict(list)
    for chain in sorted(by_chain, key=lambda c: -span[c]):
        per_warp[chain.rsplit("@", 1)[1]].append(chain)
    longest_first = [c for rank in zip_longest(*per_warp.values()) for c in rank if c is not None]
    return set(longest_first[:room])


def _widely_read(cross: dict, options: CompileOptions) -> set[str]:
    """Values read by many warps (stored in 'mixed' placement)."""
    return {v for v, readers in cross.items() if len(readers) >= max(3, options.warps // 4)}


def _mode(graph: DataflowGraph, options: CompileOptions, cross: dict, widely_read: set, budget_slots: int) -> str:
    """The placement mode for the values in ``cross`` (see place_values)."""
    if options.placement != "auto":
        return options.placement
    fixed = kernel_spec(graph.kernel).auto_placement
    if fixed:
        return fixed
    if len(cross) <= budget_slots:
        return "store"
    if len(widely_read) + options.warps <= budget_slots:
        return "mixed"
    return "buffer"


def map_graph(graph: DataflowGraph, options: CompileOptions) -> Mapping:
    """Assign operations to warps, split reductions, place values (at
    ``options.planned()``'s CTAs per SM)."""
    options = options.planned()
    if kernel_spec(graph.kernel).balance == "issue":
        graph = shared_point_values(graph, options.warps)
        warp_of, planned = timed_assignment(graph, options)
    else:
        warp_of, planned = assign_warps(graph, options), {}
    regroup = kernel_spec(graph.kernel).regroup
    regrouped = regroup(graph, warp_of, options.warps) if regroup else Regrouping(graph, warp_of, {}, {})
    warp_of = regrouped.warp_of
    lowered, chains = split_reductions(regrouped.graph, warp_of, planned)
    chains.update(regrouped.chains)
    shared_chains = frozenset(regrouped.chains.values())
    budget = options.target.shared_budget(options.ctas_per_sm) // SLOT_BYTES
    placement, mode = place_values(lowered, warp_of, options, budget, chains, shared_chains)
    if _slots_needed(lowered, placement, chains) > budget and options.placement == "auto":
        placement, mode = place_values(lowered, warp_of, options.replace(placement="buffer"), budget, {})
    needed = _slots_needed(lowered, placement, chains)
    if needed > budget:
        raise OptionError(
            f"{graph.kernel} of {graph.mechanism} needs at least {needed} shared-memory slots "
            f"({needed * SLOT_BYTES} B) per CTA with placement {mode!r}, but {options.arch} gives "
            f"{budget * SLOT_BYTES} B at {options.ctas_per_sm} CTAs per SM: use fewer CTAs per SM"
            + (" or --placement buffer" if mode != "buffer" else ""))
    in_slots = {chains.get(v, v) for v, where in placement.items() if where != "register"}
    layout = tuple(name for name in regrouped.layout if name in in_slots)
    return Mapping(lowered, options, warp_of, placement, mode, budget, chains, regrouped.phases, layout,
                   planned=planned)


def _slots_needed(graph: DataflowGraph, placement: dict[str, str], chains: dict[str, str]) -> int:
    """Shared slots a placement needs at least: one per stored value and per
    running-sum chain, plus room for the buffered inputs of the hungriest
    operation (they must all sit in shared memory when it loads them)."""
    stored = sum(1 for v in placement.values() if v == "store")
    accumulated = len({chains[v] for v, where in placement.items() if where == "accumulate"})
    buffered = max((sum(1 for v in op.inputs if placement.get(v) == "buffer") for op in graph.operations),
                   default=0)
    return stored + accumulated + buffered
