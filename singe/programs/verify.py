"""The static proof of warp programs (``check_programs``): barriers order every hazard.

The *item graph* has a node per item of every warp, a *release* node right
after each ``Sync`` / ``FullSync`` (the moment the warp may go on), and a
*generation* node per synchronization point (and per round of ``FullSync``):
every participant's item -> the generation -> each waiting warp's release.
With program order this is exactly the happens-before relation that PTX
named barriers guarantee, provided generations do not mix, so

1. every point's participants each carry exactly one matching ``Arrive`` /
   ``Sync`` (barrier id, thread count 32 x participants);
2. the graph is acyclic, so some interleaving runs every item: no deadlock
   (Theorem 1 of the Singe paper);
3. two consecutive points on one barrier id are fully ordered (every item of
   the later point after every item of the earlier), so a fast warp cannot
   count itself into the earlier generation;
4. every shared-memory load reads the store of its value, and every store
   comes after the previous store and the loads of the value it overwrites;

and, before any of that, every value a warp computes with or stores is one it
computed or loaded earlier in its own program.

The program runs once per slab with no barrier in between other than the
ones it contains, so the graph is unrolled over two slabs: hazards between a
slab's last accesses and the next slab's first ones are found the same way.
Happens-before is computed with vector clocks (a node's clock holds, for each
warp, the last position of that warp ordered before it) in topological order:
O(nodes x warps).
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass

import numpy as np

from singe.errors import SingeInternalError
from singe.graphs import topological_order as kahn_order
from singe.programs import (FULL_BARRIER_ID, Arrive, Compute, FullSync, SharedLoad,
                            SharedStore, Sync, WarpPrograms)
from singe.programs.tables import expand_table_loops

#: Slabs the graph is unrolled over: edges never go from a slab to an earlier one, so
#: every hazard between consecutive slabs shows in two.
SLABS = 2
MAX_SHOWN = 12


def _fail(problems: list[str], what: str) -> None:
    """Raise one SingeInternalError listing ``problems`` (if any)."""
    if problems:
        shown = "\n  ".join(problems[:MAX_SHOWN])
        more = f"\n  ... and {len(problems) - MAX_SHOWN} more" if len(problems) > MAX_SHOWN else ""
        raise SingeInternalError(f"warp programs fail the {what} check:\n  {shown}{more}")


# --------------------------------------------------------------------------- 1. structure

def _barrier_items(programs: WarpPrograms, problems: list[str]) -> dict[tuple[int, int], int]:
    """(warp, point number) -> item index of its Arrive/Sync; duplicates are problems."""
    found: dict[tuple[int, int], int] = {}
    for program in programs.programs:
        for index, item in enumerate(program.items):
            if isinstance(item, (Arrive, Sync)):
                key = (program.warp, item.point)
                if key in found:
                    problems.append(f"warp {program.warp} items {found[key]} and {index} both belong to "
                                    f"point {item.point}")
                found.setdefault(key, index)
    return found


def _check_point_items(programs: WarpPrograms, point, found: dict, problems: list[str]) -> None:
    """Each participant of ``point`` has one item of the right kind, id and thread count."""
    for warp in point.participants:
        index = found.get((warp, point.number))
        role, kind = ("syncer", Sync) if warp in point.syncers else ("arriver", Arrive)
        if index is None:
            problems.append(f"point {point.number} (barrier {point.barrier_id}): {role} warp {warp} has no "
                            f"{'bar.sync' if kind is Sync else 'bar.arrive'} for it")
            continue
        item = programs.programs[warp].items[index]
        where = f"point {point.number}: warp {warp} item {index} ({item})"
        if not isinstance(item, kind):
            problems.append(f"{where}: the warp is an {role}, so it must use "
                            f"{'bar.sync' if kind is Sync else 'bar.arrive'}")
        if item.barrier_id != point.barrier_id:
            problems.append(f"{where}: barrier {item.barrier_id}, but the point is on {point.barrier_id}")
        if item.threads != point.threads:
            problems.append(f"{where}: {item.threads} threads, but the point has "
                            f"{len(point.participants)} participants ({point.threads} threads)")


def check_structure(programs: WarpPrograms) -> None:
    """One program per warp; points on barrier ids within the limit, each with a
    waiting warp; points and barrier items agree one to one; FullSyncs are
    matched; slots exist."""
    problems: list[str] = []
    order = [p.warp for p in programs.programs]
    if order != list(range(programs.warps)):
        _fail([f"programs are for warps {order}, expected 0..{programs.warps - 1} in order"], "structure")
    for point in programs.sync_points:
        if not 0 < point.barrier_id < programs.barrier_limit:
            problems.append(f"point {point.number} on barrier {point.barrier_id}, "
                            f"outside 1..{programs.barrier_limit - 1}")
        if not point.syncers:
            problems.append(f"point {point.number} has no warp waiting on it")
    numbers = [p.number for p in programs.sync_points]
    if len(set(numbers)) != len(numbers):
        problems.append(f"sync point numbers repeat: {sorted(n for n in set(numbers) if numbers.count(n) > 1)}")
    points = {p.number: p for p in programs.sync_points}
    found = _barrier_items(programs, problems)
    for (warp, number), index in sorted(found.items()):
        point = points.get(number)
        if point is None or warp not in point.participants:
            problems.append(f"warp {warp} item {index} ({programs.programs[warp].items[index]}) "
                            f"belongs to no sync point that has warp {warp} as a participant")
    for point in programs.sync_points:
        if point.barrier_id == FULL_BARRIER_ID:
            problems.append(f"point {point.number} uses barrier {FULL_BARRIER_ID}, reserved for FullSync")
        _check_point_items(programs, point, found, problems)
    full = [sum(isinstance(i, FullSync) for i in p.items) for p in programs.programs]
    if len(set(full)) > 1:
        problems.append(f"warps execute different numbers of FullSync: {full}")
    for program in programs.programs:
        for index, item in enumerate(program.items):
            if isinstance(item, (SharedLoad, SharedStore)) and not 0 <= item.slot < programs.shared_slots:
                problems.append(f"warp {program.warp} item {index} ({item}): slot outside "
                                f"0..{programs.shared_slots - 1}")
    _fail(problems, "structure")


def check_registers(programs: WarpPrograms) -> None:
    """Every value a warp computes with or stores was computed or loaded earlier in the warp."""
    problems: list[str] = []
    for program in programs.programs:
        defined: set[str] = set()
        for index, item in enumerate(program.items):
            if isinstance(item, Compute):
                missing = [v for v in item.op.inputs if v not in defined]
                defined.update(item.op.outputs)
            elif isinstance(item, SharedStore):
                missing = [item.value] if item.value not in defined else []
            else:
                missing = []
                if isinstance(item, SharedLoad):
                    defined.add(item.value)
            if missing:
                problems.append(f"warp {program.warp} item {index} ({item}) uses {', '.join(missing)} "
                                f"before the warp computes or loads it")
    _fail(problems, "register")


# --------------------------------------------------------------------------- the item graph

@dataclass(frozen=True)
class Generation:
    """A generation node: a sync point (or FullSync round) in one slab."""

    barrier_id: int
    slab: int
    label: str            # 'point 7' or 'FullSync 2'
    members: tuple[int, ...]  # item nodes counted in it
    node: int


class ItemGraph:
    """Items of every warp over ``SLABS`` slabs, release and generation nodes, and edges.

    ``warp[n]``: the warp of node n (-1 for a generation); ``pos[n]``: its position
    in that warp's node sequence (continuing across slabs); ``item[n]``, ``slab[n]``:
    the item index and slab it stands for.  ``node[(slab, warp, item)]`` is an item's
    node, ``release[...]`` the node right after a Sync / FullSync.
    """

    def __init__(self, programs: WarpPrograms):
        self.programs = programs
        self.warp: list[int] = []
        self.pos: list[int] = []
        self.item: list[int] = []
        self.slab: list[int] = []
        self.preds: list[list[int]] = []
        self.node: dict[tuple[int, int, int], int] = {}
        self.release: dict[tuple[int, int, int], int] = {}
        self.generations: list[Generation] = []
        last: dict[int, int] = {}
        for slab in range(SLABS):
            for program in programs.programs:
                self._add_program(slab, program, last)
        for slab in range(SLABS):
            self._add_points(slab)
            self._add_full_syncs(slab)

    def _new(self, warp: int, pos: int, item: int, slab: int) -> int:
        self.warp.append(warp)
        self.pos.append(pos)
        self.item.append(item)
        self.slab.append(slab)
        self.preds.append([])
        return len(self.warp) - 1

    def _add_program(self, slab: int, program, last: dict[int, int]) -> None:
        """Item nodes of one warp in program order (after ``last[warp]``, its previous
        slab's final node); a release node after every Sync / FullSync."""
        w = program.warp
        previous = last.get(w)
        pos = self.pos[previous] + 1 if previous is not None else 0
        for index, item in enumerate(program.items):
            n = self._new(w, pos, index, slab)
            self.node[(slab, w, index)] = n
            if previous is not None:
                self.preds[n].append(previous)
            previous, pos = n, pos + 1
            if isinstance(item, (Sync, FullSync)):
                r = self._new(w, pos, index, slab)
                self.release[(slab, w, index)] = r
                self.preds[r].append(n)
                previous, pos = r, pos + 1
        if previous is not None:
            last[w] = previous

    def _generation(self, slab: int, barrier_id: int, label: str, members: list[int],
                    waiters: list[int]) -> None:
        """A generation node: member items -> it -> the waiting warps' releases."""
        g = self._new(-1, -1, -1, slab)
        self.preds[g].extend(members)
        for r in waiters:
            self.preds[r].append(g)
        self.generations.append(Generation(barrier_id, slab, label, tuple(members), g))

    def _add_points(self, slab: int) -> None:
        """One generation per sync point, in point-number order."""
        items = {}
        for program in self.programs.programs:
            for index, item in enumerate(program.items):
                if isinstance(item, (Arrive, Sync)):
                    items[(program.warp, item.point)] = index
        for point in sorted(self.programs.sync_points, key=lambda p: p.number):
            keys = [(slab, w, items[(w, point.number)]) for w in point.participants]
            waiters = [self.release[(slab, w, items[(w, point.number)])] for w in point.syncers]
            self._generation(slab, point.barrier_id, f"point {point.number}",
                             [self.node[k] for k in keys], waiters)

    def _add_full_syncs(self, slab: int) -> None:
        """Round k of FullSync: the k-th FullSync of every warp, all waiting."""
        per_warp = [[i for i, item in enumerate(p.items) if isinstance(item, FullSync)]
                    for p in self.programs.programs]
        for k, round_items in enumerate(zip(*per_warp)):
            keys = [(slab, w, i) for w, i in enumerate(round_items)]
            self._generation(slab, FULL_BARRIER_ID, f"FullSync {k}", [self.node[key] for key in keys],
                             [self.release[key] for key in keys])

    def describe(self, n: int) -> str:
        """'warp 1 item 4 (bar.sync 2, 64 ...)', '(after ...)' for a release node,
        ', next slab' for the second copy of the program."""
        if self.warp[n] < 0:
            return "a barrier generation"
        key = (self.slab[n], self.warp[n], self.item[n])
        item = self.programs.programs[self.warp[n]].items[self.item[n]]
        after = "after " if self.release.get(key) == n else ""
        tail = ", next slab" if self.slab[n] else ""
        return f"warp {self.warp[n]} item {self.item[n]} ({after}{item}{tail})"


# --------------------------------------------------------------------------- 2. deadlock freedom

def _cycle(graph: ItemGraph, remaining: set[int]) -> list[int]:
    """A cycle among ``remaining`` nodes (each has a remaining predecessor), in edge order."""
    n = next(iter(sorted(remaining)))
    seen: dict[int, int] = {}
    path: list[int] = []
    while n not in seen:
        seen[n] = len(path)
        path.append(n)
        n = next(p for p in graph.preds[n] if p in remaining)
    return list(reversed(path[seen[n]:]))


def _describe_cycle(graph: ItemGraph, cycle: list[int]) -> str:
    """'warp 0 item 1 (bar.sync ...) waits for point 1 on barrier 1, which needs warp 1 item 2 (...)'."""
    generations = {g.node: g for g in graph.generations}
    waits = []
    for k, n in enumerate(cycle):
        if n in generations:
            member, release = cycle[k - 1], cycle[(k + 1) % len(cycle)]
            sync = graph.node[(graph.slab[release], graph.warp[release], graph.item[release])]
            gen = generations[n]
            waits.append(f"{graph.describe(sync)} waits for {gen.label} on barrier {gen.barrier_id}, "
                         f"which needs {graph.describe(member)}")
    return "; ".join(waits)


def topological_order(graph: ItemGraph) -> list[int]:
    """Nodes in an order where every edge goes forward; a cycle (deadlock) raises."""
    succs: list[list[int]] = [[] for _ in graph.preds]
    for b, preds in enumerate(graph.preds):
        for a in preds:
            succs[a].append(b)
    order = kahn_order(range(len(succs)), succs.__getitem__)
    if len(order) < len(succs):
        remaining = set(range(len(succs))) - set(order)
        raise SingeInternalError("warp programs can deadlock: the barriers wait in a cycle: "
                                 + _describe_cycle(graph, _cycle(graph, remaining)))
    return order


def vector_clocks(graph: ItemGraph, order: list[int]) -> np.ndarray:
    """(nodes, warps) array: for node b and warp u, the last position of u ordered
    before or at b (-1 if none); node a happens before b iff clocks[b, warp[a]] >= pos[a]."""
    clocks = np.full((len(graph.warp), graph.programs.warps), -1, dtype=np.int64)
    for n in order:
        row = clocks[n]
        for p in graph.preds[n]:
            np.maximum(row, clocks[p], out=row)
        if graph.warp[n] >= 0:
            row[graph.warp[n]] = graph.pos[n]
    return clocks


# --------------------------------------------------------------------------- 3. barrier reuse

def barrier_reuse_problems(graph: ItemGraph, clocks: np.ndarray) -> list[str]:
    """Consecutive generations on one barrier id must be fully ordered (no mixing)."""
    by_id: dict[int, list[Generation]] = defaultdict(list)
    for gen in graph.generations:
        by_id[gen.barrier_id].append(gen)
    problems = []
    for barrier_id, gens in sorted(by_id.items()):
        for p, q in zip(gens, gens[1:]):
            if p.slab > 0:  # the second copy repeats the first slab's pairs
                break
            bad = next(((a, b) for b in q.members for a in p.members
                        if clocks[b, graph.warp[a]] < graph.pos[a]), None)
            if bad:
                a, b = bad
                nxt = " of the next slab" if q.slab > p.slab else ""
                problems.append(f"barrier {barrier_id} is reused unsafely: {q.label}{nxt} can join the "
                                f"generation of {p.label}, since {graph.describe(b)} is not ordered after "
                                f"{graph.describe(a)}")
    return problems


# --------------------------------------------------------------------------- 4. shared memory

def _accesses(graph: ItemGraph, rank: list[int]):
    """Per slot: stores over both slabs in (slab, topological) order; loads of the first slab."""
    stores: dict[int, list[int]] = defaultdict(list)
    loads: dict[int, list[int]] = defaultdict(list)
    for (slab, w, index), n in graph.node.items():
        item = graph.programs.programs[w].items[index]
        if isinstance(item, SharedStore):
            stores[item.slot].append(n)
        elif isinstance(item, SharedLoad) and slab == 0:
            loads[item.slot].append(n)
    for chain in stores.values():
        chain.sort(key=lambda n: (graph.slab[n], rank[n]))
    return stores, loads


def _last_store_before(graph: ItemGraph, clocks: np.ndarray, chain: list[int], load: int) -> int:
    """Index in ``chain`` (totally ordered stores) of the last store ordered before ``load``, or -1."""
    lo, hi = 0, len(chain)  # invariant: chain[:lo] before load, chain[hi:] not
    while lo < hi:
        mid = (lo + hi) // 2
        s = chain[mid]
        if clocks[load, graph.warp[s]] >= graph.pos[s]:
            lo = mid + 1
        else:
            hi = mid
    return lo - 1


def _slot_problems(graph: ItemGraph, clocks: np.ndarray, slot: int, chain: list[int],
                   loads: list[int]) -> list[str]:
    """WAW along the store chain, then what each load reads, then WAR against the next store."""
    def before(a: int, b: int) -> bool:
        return clocks[b, graph.warp[a]] >= graph.pos[a]

    def value(n: int) -> str:
        return graph.programs.programs[graph.warp[n]].items[graph.item[n]].value

    waw = [f"slot {slot}: {graph.describe(b)} is not ordered after {graph.describe(a)} (write after write)"
           for a, b in zip(chain, chain[1:]) if not before(a, b)]
    if waw:
        return waw
    problems = []
    for load in loads:
        k = _last_store_before(graph, clocks, chain, load)
        if k < 0:
            wanted = [graph.describe(s) for s in chain if value(s) == value(load)][:1]
            problems.append(f"slot {slot}: {graph.describe(load)} is not ordered after any store to the slot"
                            + (f" (it should read {wanted[0]})" if wanted else " (no warp stores it)"))
            continue
        if value(chain[k]) != value(load):
            problems.append(f"slot {slot}: {graph.describe(load)} reads {value(chain[k])}: the last store "
                            f"ordered before it is {graph.describe(chain[k])}")
        if k + 1 < len(chain) and not before(load, chain[k + 1]):
            problems.append(f"slot {slot}: {graph.describe(chain[k + 1])} is not ordered after "
                            f"{graph.describe(load)}, which reads the value it overwrites (write after read)")
    return problems


def shared_memory_problems(graph: ItemGraph, clocks: np.ndarray, order: list[int]) -> list[str]:
    """Every load reads its value's store; every store follows the previous store and its loads."""
    rank = [0] * len(order)
    for r, n in enumerate(order):
        rank[n] = r
    stores, loads = _accesses(graph, rank)
    problems = []
    for slot in sorted(set(stores) | set(loads)):
        problems.extend(_slot_problems(graph, clocks, slot, stores.get(slot, []), loads.get(slot, [])))
    return problems


# --------------------------------------------------------------------------- the proof

def check_programs(programs: WarpPrograms) -> None:
    """Raise ``SingeInternalError`` unless the barriers provably order every hazard
    of ``programs`` and cannot deadlock (see the module docstring).  A table loop
    counts as its slot loads, a computation and its slot stores
    (``singe.programs.tables.expand_table_loops``)."""
    programs = expand_table_loops(programs)
    check_structure(programs)
    check_registers(programs)
    graph = ItemGraph(programs)
    order = topological_order(graph)
    clocks = vector_clocks(graph, order)
    problems = barrier_reuse_problems(graph, clocks) + shared_memory_problems(graph, clocks, order)
    _fail(problems, "synchronization")
