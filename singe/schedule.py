"""Named-barrier placement and scheduling (paper §4.2).

Operations are taken in one global order consistent with the data
dependences: most critical first (longest remaining FLOP path), or, for
the kernels balanced by issued instructions (chemistry, mapped by
``mapping.timed_assignment``), a list schedule in time that orders them by
their modeled start on their warp (``_timed_order``), so that producers and
consumers reach each sync point at about the same time and warps wait less.  Each warp's
program is that order restricted to the warp, with the items communication
needs appended *at the same point of the global order* for every warp
involved: the producer's store and ``bar.arrive``, the consumer's
``bar.sync`` and load.  Synchronization points are therefore numbered in one
total order that every warp follows, so any warp count is deadlock-free
(Theorem 1); arrivals happen as late as that order allows, so one barrier
covers every value a warp has produced so far (grouping), and with
``group_barriers`` every warp that will need those values joins the same
barrier (in the list-scheduled kernels, only a warp that reads them within
``GROUP_WINDOW`` of the list schedule, bringing along only producers it
waits for that are due by then, ``ARRIVAL_SLACK``).

Happens-before knowledge is tracked with vector clocks.  It decides when a
consumer already knows a value is written (no new barrier), when a reused
shared slot's readers are done (write-after-read barriers), and when a named
barrier id can be reused: every participant of the new point must know that
every participant of the id's previous point has reached it, so barrier
generations never mix.  When no id is free, every warp meets at
``bar.sync 0`` and all ids become free.
"""

from __future__ import annotations

import bisect
import dataclasses
from collections import Counter, defaultdict
from dataclasses import dataclass, field

from singe.errors import OptionError, SingeInternalError
from singe.graphs import topological_order
from singe.kernels.ir import DataflowGraph, Operation
from singe.kernels.registry import kernel_spec
from singe.mapping import CROSS_WARP_DELAY, Mapping, issue_cost
from singe.programs import (Arrive, Compute, FullSync, SharedLoad, SharedStore, Sync, SyncPoint, WarpProgram,
                            WarpPrograms)
from singe.programs.plan import max_live_doubles, operation_peak, plan_registers

EXCHANGE_BATCH = 64  # buffered values one pass through shared memory may carry
GROUP_WINDOW = 300
"""In the list-scheduled kernels, a warp joins another's barrier (``group_barriers``) only if it reads one of
the values that barrier orders within this many issue slots of the list schedule: joining earlier would hold
it at the barrier while it still has work of its own."""
ARRIVAL_SLACK = 100
"""... and a warp joining brings the other producers it waits for into the barrier only if they end what
they run before it within this many issue slots: a late one would hold every participant.  Measured on the
timing model (H100, one CTA, cycles per slab of DME 8x4 / GRI-Mech 8x1 / n-heptane 16x2 / H2/O2 8x1
chemistry) since the species' shared 1/Kc factors (``singe.kernels.equilibrium``): 300/100 gives 17,111 /
15,590 / 29,681 / 3,770; no bound 16,864 / 15,786 / 29,199 / 3,770; 200/50 16,437 / 15,314 / 28,432 /
3,788 (DME's modeled speedup at the paper's setting 1.12/1.25 on the A100/H100 against 1.07/1.23); 150/50
15,434 / 15,461 / 29,431 / 3,788.  Every setting tried below 300/100 (150/50, 150/100, 200/50, 200/100,
250/50, 250/80, 250/100) makes ptxas spill 8 B in DME chemistry at the paper's setting on sm_80 or 4 B in
GRI-Mech's at the defaults on sm_90, so 300/100 stays."""


def _edges(graph: DataflowGraph, warp_of: dict[str, int]) -> tuple[list[Operation], dict, dict]:
    """The mapped operations, and each one's mapped successors and predecessors."""
    producers = graph.producers()
    ops = [op for op in graph.operations if op.name in warp_of]
    successors: dict[str, set[str]] = defaultdict(set)
    predecessors: dict[str, set[str]] = defaultdict(set)
    for op in ops:
        for value in op.inputs:
            source = producers[value]
            if source in warp_of:
                successors[source].add(op.name)
                predecessors[op.name].add(source)
    return ops, successors, predecessors


def _levels(graph: DataflowGraph, warp_of: dict[str, int], successors: dict, cost) -> dict[str, float]:
    """Each mapped operation's longest remaining path (its own ``cost`` included)."""
    level: dict[str, float] = {}
    for op in reversed(graph.topological_order()):
        if op.name in warp_of:
            level[op.name] = cost(op) + max((level[s] for s in successors[op.name]), default=0)
    return level


def global_order(graph: DataflowGraph, warp_of: dict[str, int], cost=None, phases=None) -> list[Operation]:
    """Mapped operations in a topological order.  Without ``cost``: longest
    remaining FLOP path first, and with ``phases`` (operation -> phase) the
    operations of one phase after those of the phases before it (the
    operations of none first).  With ``cost`` (an operation's issue time on
    its warp): a list schedule in time (``_timed_order``)."""
    return timed_order(graph, warp_of, cost, phases)[0]


def timed_order(graph: DataflowGraph, warp_of: dict[str, int], cost=None,
                phases=None) -> tuple[list[Operation], dict]:
    """(``global_order``, each operation's modeled start [issue slots]: empty without ``cost``)."""
    ops, successors, predecessors = _edges(graph, warp_of)
    if cost is not None:
        return _timed_order(graph, warp_of, cost, ops, successors, predecessors)
    by_name = graph.by_name
    level = _levels(graph, warp_of, successors, lambda op: op.flops)
    index = {op.name: i for i, op in enumerate(ops)}
    phase = (phases or {}).get
    names = topological_order([op.name for op in ops], lambda n: successors[n],
                              lambda n: (phase(n, -1), -level[n], index[n]))
    order = [by_name[name] for name in names]
    if len(order) != len(ops):
        raise SingeInternalError("mapped graph has a cycle")
    return order, {}


def _timed_order(graph, warp_of, cost, ops, successors, predecessors) -> tuple[list[Operation], dict]:
    """A list schedule: each warp has a clock (the issue cost of what it has
    run); the next operation is the one that can start earliest on its warp
    (its inputs done, plus ``CROSS_WARP_DELAY`` for another warp's), longest
    remaining path first among those that can start by their warp's clock.
    Operations are ordered by start, so the warps' programs meet at the sync
    points about when each side gets there.  Returns the order and each
    operation's start."""
    by_name = graph.by_name
    level = _levels(graph, warp_of, successors, cost)
    index = {op.name: i for i, op in enumerate(ops)}
    waiting = {op.name: len(predecessors[op.name]) for op in ops}
    available = {op.name: 0.0 for op in ops}
    ready: dict[int, list[str]] = defaultdict(list)
    for op in ops:
        if not waiting[op.name]:
            ready[warp_of[op.name]].append(op.name)
    clock: dict[int, float] = defaultdict(float)
    order, starts = [], {}
    while any(ready.values()):
        start, warp, name = min(c for c in (_next_on(w, names, clock[w], available, level, index)
                                            for w, names in ready.items()) if c)
        ready[warp].remove(name)
        starts[name] = start
        clock[warp] = start + cost(by_name[name])
        order.append(by_name[name])
        for successor in successors[name]:
            delay = 0 if warp_of[successor] == warp else CROSS_WARP_DELAY
            available[successor] = max(available[successor], clock[warp] + delay)
            waiting[successor] -= 1
            if not waiting[successor]:
                ready[warp_of[successor]].append(successor)
    if len(order) != len(ops):
        raise SingeInternalError("mapped graph has a cycle")
    return order, starts


def _next_on(warp: int, names: list[str], clock: float, available: dict, level: dict, index: dict):
    """(start, warp, operation): what ``warp`` runs next of ``names``, its
    ready operations (None if there are none)."""
    if not names:
        return None
    now = [n for n in names if available[n] <= clock]
    if now:
        name = min(now, key=lambda n: (-level[n], index[n]))
        return clock, warp, name
    name = min(names, key=lambda n: (available[n], -level[n], index[n]))
    return available[name], warp, name


@dataclass
class _Slot:
    """What a shared slot holds and who touched it (item positions)."""

    value: str | None = None
    writer: tuple[int, int] | None = None
    readers: list[tuple[int, int]] = field(default_factory=list)


@dataclass
class _Point:
    """A placed synchronization point with each participant's item position."""

    point: SyncPoint
    positions: dict[int, int]


class _Scheduler:
    """Builds the warp programs by walking the global order once."""

    def __init__(self, mapping: Mapping):
        self.mapping = mapping
        self.graph = mapping.graph
        self.warps = mapping.warps
        self.warp_of = mapping.warp_of
        self.placement = mapping.placement
        self.producers = self.graph.producers()
        self.ops = self.graph.by_name
        self.programs: list[list] = [[] for _ in range(self.warps)]
        self.clock = [[0] * self.warps for _ in range(self.warps)]
        self.in_registers: list[set[str]] = [set() for _ in range(self.warps)]
        self.slots: list[_Slot] = []
        self.slot_of: dict[str, int] = {}
        self.points: list[_Point] = []
        self.last_on_id: dict[int, _Point] = {}
        self.limit = mapping.options.barrier_limit
        self.budget = mapping.shared_budget_slots
        self.pending: list[Counter] = [Counter() for _ in range(self.warps)]
        self.full_syncs = 0
        self.chain_slot: dict[str, int] = {}
        self.needed_at: dict[str, list[int]] = defaultdict(list)  # buffered value -> global positions of its readers
        self.computed: set[str] = set()
        self.position = 0
        self.protected: set[str] = set()
        self.timed = kernel_spec(self.graph.kernel).balance == "issue"  # the list-scheduled kernels (chemistry)
        self.reserved: dict[str, int] = {}  # value or chain -> its slot (``Mapping.layout``)
        for name in mapping.layout:
            self.reserved[name] = len(self.slots)
            self.slots.append(_Slot())
        self.reserved_slots = frozenset(self.reserved.values())
        self.order: list[Operation] = []
        self.starts: dict[str, float] = {}  # the list schedule's start of each operation (timed kernels)
        self.reads_at: list[dict[str, list[int]]] = [defaultdict(list) for _ in range(self.warps)]
        self.finish = [0.0] * self.warps  # the list schedule's end of each warp's last operation so far
        options = mapping.options
        self.live_limit = max_live_doubles(options.target.register_budget(self.warps * 32, options.ctas_per_sm)) \
            if self.timed else None  # doubles a warp may hold in registers (``_relieve``)
        self.own_reads: list[dict[str, list[int]]] = [defaultdict(list) for _ in range(self.warps)]
        self.held: list[set[str]] = [set() for _ in range(self.warps)]  # values a warp holds in registers
        self.spilled: set[str] = set()  # values moved out of their producer's registers (``_spill``)
        self.reloaded: list[set[str]] = [set() for _ in range(self.warps)]  # ... that the producer reads from a slot

    # -- knowledge ---------------------------------------------------------

    def _append(self, warp: int, item) -> int:
        position = len(self.programs[warp])
        self.programs[warp].append(item)
        self.clock[warp][warp] = position + 1
        return position

    def knows(self, warp: int, other: int, position: int) -> bool:
        """Has ``warp`` seen item ``position`` of ``other`` happen?"""
        return warp == other or self.clock[warp][other] > position

    # -- synchronization -----------------------------------------------------

    def synchronize(self, arrivers: set[int], syncers: set[int], values: list[str]) -> None:
        """Append one synchronization point: arrivers arrive, syncers wait."""
        arrivers = arrivers - syncers
        participants = sorted(arrivers | syncers)
        barrier_id = self._barrier_id(participants)
        point = SyncPoint(len(self.points), barrier_id, tuple(sorted(arrivers)), tuple(sorted(syncers)),
                          tuple(dict.fromkeys(values)))
        positions = {}
        for warp in sorted(arrivers):
            positions[warp] = self._append(warp, Arrive(barrier_id, point.threads, point.number, point.values))
        for warp in sorted(syncers):
            positions[warp] = self._append(warp, Sync(barrier_id, point.threads, point.number, point.values))
        joined = [max(self.clock[w][x] for w in participants) for x in range(self.warps)]
        for warp in syncers:
            self.clock[warp] = [max(a, b) for a, b in zip(self.clock[warp], joined)]
        placed = _Point(point, positions)
        self.points.append(placed)
        self.last_on_id[barrier_id] = placed

    def _barrier_id(self, participants: list[int]) -> int:
        """A named barrier id whose previous point every participant knows complete."""
        free = [i for i in range(1, self.limit) if i not in self.last_on_id]
        if free:
            return free[0]
        reusable = [i for i, placed in self.last_on_id.items()
                    if all(self.knows(w, x, pos) for w in participants for x, pos in placed.positions.items())]
        if reusable:
            return min(reusable, key=lambda i: self.last_on_id[i].point.number)
        self.full_sync("every named barrier id is in use")
        return 1

    def full_sync(self, reason: str) -> None:
        """Every warp meets at bar.sync 0; afterwards all know everything."""
        for warp in range(self.warps):
            self._append(warp, FullSync(reason))
        joined = [max(self.clock[w][x] for w in range(self.warps)) for x in range(self.warps)]
        self.clock = [list(joined) for _ in range(self.warps)]
        self.last_on_id.clear()
        self.full_syncs += 1

    # -- shared memory ---------------------------------------------------------

    def _allocate(self, warp: int, name: str) -> int:
        """A slot ``warp`` may write ``name`` (a value or chain) to now (a write-after-read
        barrier if needed): its own where the layout reserves one, else a free slot."""
        if name in self.reserved:
            slot = self.reserved[name]
            self._order_before_write(warp, slot)
            return slot
        free = [s for s, slot in enumerate(self.slots) if slot.value is None and s not in self.reserved_slots]
        safe = [s for s in free if self._slot_known(warp, s)]
        if safe:
            return safe[0]
        if len(self.slots) < self.budget:
            self.slots.append(_Slot())
            return len(self.slots) - 1
        if not free:
            free = [self._evict()]
        slot = free[0]
        self._order_before_write(warp, slot)
        return slot

    def _writable_now(self, warp: int) -> bool:
        """Can ``warp`` store one more value now without a barrier or an eviction: a
        new slot within the budget, or a free one whose readers it knows are done?
        (Optional stores take only such a slot: each write-after-read barrier is a
        sync point, and where named barrier ids run out every warp meets.)"""
        if len(self.slots) < self.budget:
            return True
        return any(slot.value is None and s not in self.reserved_slots and self._slot_known(warp, s)
                   for s, slot in enumerate(self.slots))

    def _slot_known(self, warp: int, slot: int) -> bool:
        state = self.slots[slot]
        touches = state.readers + ([state.writer] if state.writer else [])
        return all(self.knows(warp, w, pos) for w, pos in touches)

    def _order_before_write(self, warp: int, slot: int) -> None:
        state = self.slots[slot]
        touches = state.readers + ([state.writer] if state.writer else [])
        unknown = {w for w, pos in touches if not self.knows(warp, w, pos)}
        if unknown:
            self.synchronize(unknown, {warp}, [f"reads of slot {slot}"])

    def _evict(self) -> int:
        """Free the buffered value whose remaining readers are fewest (it can be stored again)."""
        candidates = [s for s, slot in enumerate(self.slots)
                      if slot.value is not None and self.placement.get(slot.value) == "buffer"
                      and slot.value not in self.protected and s not in self.reserved_slots]
        if not candidates:
            raise OptionError(f"{self.budget} shared slots cannot hold the stored values of "
                              f"{self.graph.kernel}: use placement 'buffer' or fewer CTAs per SM")
        slot = min(candidates, key=lambda s: (self.slots[s].value in self.spilled,
                                              sum(p[self.slots[s].value] for p in self.pending)))
        del self.slot_of[self.slots[slot].value]
        self.slots[slot].value = None
        return slot

    def store(self, warp: int, value: str) -> None:
        chain = self.mapping.chains.get(value) if self.placement[value] == "accumulate" else None
        if chain is not None and chain in self.chain_slot:
            slot = self.chain_slot[chain]  # the running sum is updated in place
            self._order_before_write(warp, slot)
        else:
            slot = self._allocate(warp, chain or value)
            if chain is not None:
                self.chain_slot[chain] = slot
        position = self._append(warp, SharedStore(value, slot))
        self.slots[slot] = _Slot(value, (warp, position), [])
        self.slot_of[value] = slot

    def load(self, warp: int, value: str) -> None:
        slot = self.slot_of[value]
        position = self._append(warp, SharedLoad(value, slot))
        self.slots[slot].readers.append((warp, position))
        self.pending[warp][value] -= 1
        if (self.placement[value] == "buffer" or value in self.spilled) and not any(p[value] for p in self.pending):
            self.slots[slot].value = None
            del self.slot_of[value]

    # -- the walk ----------------------------------------------------------

    def run(self, order: list[Operation], starts: dict[str, float] | None = None) -> None:
        self.order, self.starts = order, starts or {}
        for position, op in enumerate(order):
            warp = self.warp_of[op.name]
            shared = self._shared_inputs(op, warp)
            for value in shared:
                self.reads_at[warp][value].append(position)
                self.pending[warp][value] += 1
                if self.placement[value] == "buffer":
                    self.needed_at[value].append(position)
            for value in set(op.inputs) - set(shared):
                self.own_reads[warp][value].append(position)
        phase = -1
        for position, op in enumerate(order):
            self.position = position
            next_phase = self.mapping.phases.get(op.name, phase)
            if next_phase > phase and position:
                self.full_sync(f"phase {next_phase}: every warp has done what came before")
            phase = max(phase, next_phase)
            self.schedule(op)
            self.computed.update(op.outputs)
        self.full_sync("end of slab: the next slab reuses shared memory and barriers")

    def _shared_inputs(self, op: Operation, warp: int) -> list[str]:
        """Inputs of ``op`` that reach ``warp`` through shared memory."""
        result = []
        for value in op.inputs:
            producer = self.producers[value]
            if producer not in self.warp_of:
                continue  # replicated: recomputed locally
            if self.placement[value] in ("store", "accumulate") or self.warp_of[producer] != warp \
                    or value in self.reloaded[warp]:
                result.append(value)
        return result

    def schedule(self, op: Operation) -> None:
        warp = self.warp_of[op.name]
        self._replicated_inputs(op, warp)
        shared = self._shared_inputs(op, warp)
        self._relieve(warp, op, shared)  # moves out only values ``op`` does not read: ``shared`` stays
        self.protected = set(shared)  # must stay in shared memory until this operation has loaded them
        missing = [value for value in shared if value not in self.slot_of]
        if missing:
            self._exchange(missing)
        self._wait_for(warp, shared)
        for value in shared:
            self.load(warp, value)
        self._append(warp, Compute(op))
        if self.starts:
            self.finish[warp] = self.starts[op.name] + issue_cost(op)
        self.in_registers[warp].update(op.outputs)
        self.held[warp].update(op.outputs)
        for value in op.outputs:
            if self.placement.get(value) in ("store", "accumulate") or self._store_early(value):
                self.store(warp, value)

    def _store_early(self, value: str) -> bool:
        """In the list-scheduled kernels, store a buffered value as soon as it
        is made, while the shared budget keeps ``EXCHANGE_BATCH`` slots free:
        it then leaves the producer's registers at once instead of at the next
        exchange."""
        if not self.timed or self.placement.get(value) != "buffer" or not any(p[value] for p in self.pending):
            return False
        occupied = sum(1 for slot in self.slots if slot.value is not None)
        return occupied + EXCHANGE_BATCH < self.budget and self._writable_now(self.warp_of[self.producers[value]])

    def _exchange(self, missing: list[str]) -> None:
        """A pass through the buffer: store the values ``missing`` now, and with
        them the computed buffered values other warps will need soonest (as
        many as free slots allow, up to ``EXCHANGE_BATCH``, each only where its
        producer can write a slot without a barrier: ``_writable_now``), so
        that one barrier serves many consumers."""
        occupied = sum(1 for slot in self.slots if slot.value is not None)
        room = min(EXCHANGE_BATCH, self.budget - occupied - len(missing))
        waiting = [v for v, positions in self.needed_at.items()
                   if v in self.computed and v not in self.slot_of and v not in missing
                   and any(p > self.position for p in positions)]
        waiting.sort(key=lambda v: min(p for p in self.needed_at[v] if p > self.position))
        for value in missing:
            self.store(self.warp_of[self.producers[value]], value)
        for value in waiting[:max(room, 0)]:
            producer = self.warp_of[self.producers[value]]
            if self._writable_now(producer):
                self.store(producer, value)

    # -- register pressure (the list-scheduled kernels) ---------------------------------

    def _relieve(self, warp: int, op: Operation, shared: list[str]) -> None:
        """Keep the values ``warp`` holds in registers while ``op`` runs within
        ``live_limit``: before it, move out the held values it does not read
        (``_spill``), cheapest first (``_spill_rank``), as many as exceed the
        limit.  A value leaves the registers only where shared memory has room
        for it (or holds it already)."""
        if self.live_limit is None:
            return
        self.held[warp] = {v for v in self.held[warp] if self._needed(warp, v)}
        reads = set(op.inputs) - set(shared)
        streamed = min(len(shared), 1)  # a shared input read in place (``plan.unit_peaks``)
        excess = operation_peak(self.held[warp], reads, set(op.outputs), op.temporaries) + streamed - self.live_limit
        if excess <= 0:
            return
        movable = [v for v in self.held[warp] - reads if self.placement.get(v) == "buffer"
                   and not self.ops[self.producers[v]].replicated]
        for value in sorted(movable, key=lambda v: self._spill_order(warp, v)):
            if excess <= 0:
                break
            excess -= self._spill(warp, value)

    def _next(self, positions: list[int]) -> int | None:
        """The first of the sorted ``positions`` at or after the walk's (None: none)."""
        i = bisect.bisect_left(positions, self.position)
        return positions[i] if i < len(positions) else None

    def _next_own_read(self, warp: int, value: str) -> int | None:
        """The position of ``warp``'s next read of ``value`` from its register (None: no more)."""
        return self._next(self.own_reads[warp][value])

    def _needed(self, warp: int, value: str) -> bool:
        """Must ``warp`` still hold ``value`` in a register: it reads it there later, or
        must store it for other warps (buffered, not in a slot, readers pending)?"""
        if self._next_own_read(warp, value) is not None:
            return True
        return self.placement.get(value) == "buffer" and value not in self.slot_of \
            and any(p[value] for p in self.pending)

    def _spill_rank(self, warp: int, value: str) -> tuple:
        """Which held value leaves the registers first: one only waiting to be
        stored for other warps (stored now rather than at an exchange: no
        extra work), then one already in a slot (one shared read per later
        use), then one to store and read back; within each, the one read
        again last first (Belady)."""
        following = self._next_own_read(warp, value)
        if following is None:
            return 0, 0
        return (1 if value in self.slot_of else 2), -following

    def _spill_order(self, warp: int, value: str) -> tuple:
        """``_spill_rank``, then the name: ties broken the same way in every run (a set's
        order changes with Python's hash seed, and with it the emitted code)."""
        return self._spill_rank(warp, value), value

    def _spill(self, warp: int, value: str) -> int:
        """Move ``value`` out of ``warp``'s registers: stored now if no slot
        holds it (only where a free slot takes it without an eviction), its
        later reads on ``warp`` from the slot.  Returns 1 if it moved, 0 if
        shared memory had no room."""
        if value not in self.slot_of:
            if not self._writable_now(warp):
                return 0
            self.store(warp, value)
        reads = self.own_reads[warp][value]
        split = bisect.bisect_left(reads, self.position)
        later = reads[split:]
        if later:
            self.own_reads[warp][value] = reads[:split]
            self.reloaded[warp].add(value)
            self.pending[warp][value] += len(later)
            for p in later:
                bisect.insort(self.reads_at[warp][value], p)
        self.spilled.add(value)
        self.held[warp].discard(value)
        return 1


    def _replicated_inputs(self, op: Operation, warp: int) -> None:
        for value in op.inputs:
            producer = self.ops[self.producers[value]]
            if producer.replicated and value not in self.in_registers[warp]:
                self._replicated_inputs(producer, warp)
                self._relieve(warp, producer, [])  # its peak counts as any operation's (``plan.unit_peaks``)
                self._append(warp, Compute(producer))
                self.in_registers[warp].update(producer.outputs)
                self.held[warp].update(producer.outputs)

    def _unknown_writers(self, warp: int, values) -> dict[int, list[str]]:
        """Writers of ``values`` whose stores ``warp`` has not seen -> those values."""
        result: dict[int, list[str]] = defaultdict(list)
        for value in values:
            slot = self.slot_of.get(value)
            if slot is None:
                continue
            writer, position = self.slots[slot].writer
            if not self.knows(warp, writer, position):
                result[writer].append(value)
        return result

    def _reads_soon(self, warp: int, writers: dict[int, list[str]]) -> bool:
        """Does ``warp`` read one of ``writers``' values within ``GROUP_WINDOW`` of now (always, unless timed)?"""
        if not self.starts:
            return True
        now = self.starts[self.order[self.position].name]
        for values in writers.values():
            for value in values:
                read = self._next(self.reads_at[warp][value])
                if read is not None and self.starts[self.order[read].name] - now <= GROUP_WINDOW:
                    return True
        return False

    def _on_time(self, warp: int) -> bool:
        """Does ``warp``, in the list schedule, end what it runs before this point within ``ARRIVAL_SLACK``
        of now (always, unless timed)?"""
        if not self.starts:
            return True
        return self.finish[warp] - self.starts[self.order[self.position].name] <= ARRIVAL_SLACK

    def _wait_for(self, warp: int, values: list[str]) -> None:
        writers = self._unknown_writers(warp, values)
        if not writers:
            return
        arrivers, syncers = set(writers), {warp}
        ordered = [v for vs in writers.values() for v in vs]
        if self.mapping.options.group_barriers:
            for other in range(self.warps):
                needed = [v for v in self.pending[other] if self.pending[other][v] > 0]
                theirs = self._unknown_writers(other, needed)
                if other != warp and set(theirs) & arrivers and self._reads_soon(other, theirs):
                    syncers.add(other)
                    for writer, vs in theirs.items():
                        if writer in arrivers or self._on_time(writer):
                            arrivers.add(writer)
                            ordered.extend(vs)
        self.synchronize(arrivers, syncers, ordered)


def schedule(mapping: Mapping) -> WarpPrograms:
    """Warp programs for a mapped graph (see the module docstring)."""
    scheduler = _Scheduler(mapping)
    scheduler.run(*timed_order(mapping.graph, mapping.warp_of, issue_cost if scheduler.timed else None,
                               mapping.phases))
    options = mapping.options
    dispatch = options.dispatch_of(mapping.graph.kernel)
    programs = WarpPrograms(
        kernel=mapping.graph.kernel, mechanism=mapping.graph.mechanism, warps=mapping.warps,
        programs=tuple(WarpProgram(w, tuple(p)) for w, p in enumerate(scheduler.programs)),
        sync_points=tuple(placed.point for placed in scheduler.points),
        shared_slots=len(scheduler.slots), barrier_limit=scheduler.limit,
        dispatch=dispatch, constant_table=options.constant_table if dispatch == "overlay" else "cache",
        prefetch=options.prefetch,
    )
    budget = options.target.shared_budget(options.planned().ctas_per_sm) - programs.shared_bytes
    return dataclasses.replace(programs, plan=plan_registers(programs, options.target, options.ctas_per_sm),
                               table_budget=budget)
