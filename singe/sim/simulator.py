"""The warp simulator: executes ``WarpPrograms`` with real named-barrier semantics.

Every CTA handles 32 points (lane l of every warp is point l of its slab); all
CTAs run in lock step, so a register is a numpy array over (CTAs x 32) points
of the current slab.  Warps interleave item by item under a scheduler
('round-robin' or 'random'); a warp that finishes its program starts the next
slab at once (no implicit barrier between slabs), so cross-slab hazards show.

Named barriers follow PTX ``bar.arrive`` / ``bar.sync``: per barrier id a
generation counts arrived threads against the expected count; it completes
when the count is reached, releasing the warps that wait on it.  Happens-
before is tracked with vector clocks (one component per warp, ticking once per
item): a generation joins the clocks of every warp counted in it, and the
warps that waited on it join that clock when it completes.  Shared-memory
accesses are checked against those clocks (the shadow of each slot keeps its
last store and the loads since), so a missing barrier is reported whatever
order the scheduler happened to pick.
"""

from __future__ import annotations

import gc
from collections import Counter
from contextlib import contextmanager
from dataclasses import dataclass, field

import numpy as np

from singe.errors import SingeInternalError
from singe.programs import (FULL_BARRIER_ID, WARP_SIZE, Arrive, Compute, FullSync, SharedLoad,
                            SharedStore, Sync, WarpPrograms)
from singe.programs.tables import TableLoop, program_ops
from singe.sim.barriers import Generation, NamedBarriers
from singe.sim.machine import GlobalMemory, decode_operation, global_fields, instruction_counts, run_code
from singe.sim.registers import setmaxnreg_hazards
from singe.sim.tables import run_table_loop

HAZARD_KINDS = ("race", "uninitialized", "deadlock", "misuse")
SCHEDULES = ("round-robin", "random")


@dataclass(frozen=True)
class Hazard:
    """One problem found while simulating.

    ``kind``: 'race' (unordered or stale shared-memory access), 'uninitialized'
    (load of a slot never stored), 'deadlock' (no warp can run), 'misuse'
    (barrier used against PTX rules, or a register read before it is written).
    ``warps`` and ``items`` are parallel: item ``items[k]`` of warp ``warps[k]``.
    """

    kind: str
    message: str
    slot: int | None = None
    values: tuple[str, ...] = ()
    warps: tuple[int, ...] = ()
    items: tuple[int, ...] = ()
    barriers: tuple[int, ...] = ()
    slab: int | None = None

    def __str__(self) -> str:
        return f"{self.kind}: {self.message}"


class SimulationError(SingeInternalError):
    """A simulated kernel raced, deadlocked or misused a barrier; ``hazards`` lists why."""

    def __init__(self, hazards: list[Hazard]):
        self.hazards = list(hazards)
        shown = "\n".join(f"  {h}" for h in self.hazards[:10])
        more = f"\n  ... and {len(self.hazards) - 10} more" if len(self.hazards) > 10 else ""
        super().__init__(f"{len(self.hazards)} hazard(s) in simulation:\n{shown}{more}")


@dataclass
class SimulationResult:
    """Outputs (field -> (n_index, n_points) array), per-warp counts for one slab of
    one CTA, the hazards found (empty when strict) and the number of items executed."""

    outputs: dict[str, np.ndarray]
    counts: list[Counter]
    hazards: list[Hazard]
    steps: int


class _Stop(Exception):
    """Execution cannot go on (a register read before it is written)."""


# --------------------------------------------------------------------------- decoding

_COMPUTE, _STORE, _LOAD, _BARRIER, _TABLE = range(5)


def _decode_item(item, programs: WarpPrograms, cache: dict, wrap=None, warp: int = 0) -> tuple:
    """(kind, arguments, counts) for one item; a Compute's code is decoded once per op
    (once per warp and op when ``wrap(warp, op, code)`` instruments it)."""
    if isinstance(item, Compute):
        key = id(item.op) if wrap is None else (warp, id(item.op))
        if key not in cache:
            code = decode_operation(item.op)
            cache[key] = (code if wrap is None else wrap(warp, item.op, code), instruction_counts(item.op))
        code, counts = cache[key]
        return (_COMPUTE, (code,), counts)
    if isinstance(item, (SharedStore, SharedLoad)):
        if not 0 <= item.slot < programs.shared_slots:
            raise SingeInternalError(f"{item}: slot outside 0..{programs.shared_slots - 1}")
        if isinstance(item, SharedStore):
            return (_STORE, (item.value, item.slot), Counter(shared_store=1))
        return (_LOAD, (item.value, item.slot), Counter(shared_load=1))
    if isinstance(item, TableLoop):
        return (_TABLE, (item,), item.counts)
    if isinstance(item, FullSync):
        return (_BARRIER, (FULL_BARRIER_ID, programs.threads, True), Counter(full_sync=1))
    if isinstance(item, Arrive):
        return (_BARRIER, (item.barrier_id, item.threads, False), Counter(arrive=1))
    if isinstance(item, Sync):
        return (_BARRIER, (item.barrier_id, item.threads, True), Counter(sync=1))
    raise SingeInternalError(f"unknown warp-program item {item!r}")


def _dead_after(items) -> list[tuple[str, ...]]:
    """Per item, the registers the warp never touches again after it (dropped then,
    so a slab holds only live values: memory stays O(live values x points))."""
    last: dict[str, int] = {}
    for index, item in enumerate(items):
        if isinstance(item, Compute):
            names = item.op.inputs + item.op.outputs
        elif isinstance(item, (SharedStore, SharedLoad)):
            names = (item.value,)
        else:
            names = ()
        for name in names:
            last[name] = index
    dead: list[list[str]] = [[] for _ in items]
    for name, index in last.items():
        dead[index].append(name)
    return [tuple(d) for d in dead]


def _decode_programs(programs: WarpPrograms, wrap=None) -> list[tuple]:
    """Every warp's items as (kind, arguments, counts, registers dead after it);
    Computes sharing an Operation share its decoded code."""
    cache: dict = {}
    decoded = []
    for program in programs.programs:
        dead = _dead_after(program.items)
        decoded.append(tuple((*_decode_item(item, programs, cache, wrap, program.warp), d)
                             for item, d in zip(program.items, dead)))
    return decoded


# --------------------------------------------------------------------------- global memory

@dataclass(frozen=True)
class _Layout:
    """Points -> CTAs x slabs x lanes: CTA c, slab s, lane l is point (c*slabs + s)*32 + l."""

    n_points: int
    ctas: int
    slabs: int

    @property
    def padded(self) -> int:
        return self.ctas * self.slabs * WARP_SIZE

    @property
    def width(self) -> int:
        """Points per slab over all CTAs (the length of every register array)."""
        return self.ctas * WARP_SIZE

    def split(self, array: np.ndarray) -> list[np.ndarray]:
        """(rows, n_points) -> per slab (rows, width), padded by repeating the last point."""
        pad = np.repeat(array[:, -1:], self.padded - self.n_points, axis=1)
        blocks = np.concatenate([array, pad], axis=1).reshape(array.shape[0], self.ctas, self.slabs, WARP_SIZE)
        return [np.ascontiguousarray(blocks[:, :, s, :]).reshape(array.shape[0], self.width)
                for s in range(self.slabs)]

    def join(self, per_slab: list[np.ndarray]) -> np.ndarray:
        """Inverse of ``split``: per slab (rows, width) -> (rows, n_points)."""
        rows = per_slab[0].shape[0]
        stacked = np.stack([a.reshape(rows, self.ctas, WARP_SIZE) for a in per_slab], axis=2)
        return stacked.reshape(rows, self.padded)[:, :self.n_points].copy()


def _input_rows(programs: WarpPrograms, inputs: dict, n_points: int) -> dict[str, np.ndarray]:
    """The input fields the programs load, as (rows, n_points) float arrays (shape-checked)."""
    ops = program_ops(programs)
    arrays = {}
    for name, rows in global_fields(ops, "ldg").items():
        if name not in inputs:
            raise SingeInternalError(f"programs load field {name!r}, which is not among the inputs")
        array = np.asarray(inputs[name], dtype=np.float64)
        array = array.reshape(1, -1) if array.ndim == 1 else array
        if array.ndim != 2 or array.shape[1] != n_points or array.shape[0] < rows:
            raise SingeInternalError(f"input {name!r} has shape {array.shape}, "
                                     f"expected ({rows} or more, {n_points})")
        arrays[name] = array
    return arrays


def _global_memories(programs: WarpPrograms, inputs: dict, layout: _Layout):
    """Per slab a ``GlobalMemory``, and the per-slab output arrays (field -> list over slabs)."""
    ops = program_ops(programs)
    sliced = {name: layout.split(a) for name, a in _input_rows(programs, inputs, layout.n_points).items()}
    outputs = {name: [np.full((rows, layout.width), np.nan) for _ in range(layout.slabs)]
               for name, rows in global_fields(ops, "stg").items()}
    memories = []
    for s in range(layout.slabs):
        loads = {(name, i): rows[s][i] for name, rows in sliced.items() for i in range(rows[s].shape[0])}
        stores = {(name, i): per_slab[s][i] for name, per_slab in outputs.items()
                  for i in range(per_slab[s].shape[0])}
        memories.append(GlobalMemory(loads, stores))
    return memories, outputs


# --------------------------------------------------------------------------- machine state

class _Warp:
    """Execution state of one warp (of every CTA at once)."""

    __slots__ = ("index", "items", "pc", "slab", "regs", "clock", "waiting", "done")

    def __init__(self, index: int, items: tuple, warps: int):
        self.index = index
        self.items = items
        self.pc = 0          # next item
        self.slab = 0        # slab being executed
        self.regs: dict = {}
        self.clock = np.zeros(warps, dtype=np.int64)  # vector clock, ticks once per item
        self.waiting = None  # (barrier id, item index) while blocked in a sync
        self.done = False


@dataclass
class _Shadow:
    """Happens-before shadow of one shared slot: the last store and the loads since,
    each as (warp, clock time of the access, value name, item index, slab)."""

    write: tuple | None = None
    reads: list = field(default_factory=list)


# --------------------------------------------------------------------------- the run

class _Run:
    """One simulation: warps, barriers, shared memory and its shadow, hazards."""

    def __init__(self, programs: WarpPrograms, memories: list, layout: _Layout, schedule: str, seed: int,
                 check_uniform=None):
        decoded = _decode_programs(programs, check_uniform)
        self.warps = [_Warp(w, items, programs.warps) for w, items in enumerate(decoded)]
        self.cta_threads = programs.threads
        self.memories = memories
        self.slabs = layout.slabs
        self.shared = [np.full(layout.width, np.nan) for _ in range(programs.shared_slots)]
        self.shadows = [_Shadow() for _ in range(programs.shared_slots)]
        self.barriers = NamedBarriers()
        self.hazards: dict[tuple, Hazard] = {}
        self.counts = [Counter() for _ in self.warps]
        self.steps = 0
        self.live = len(self.warps)
        self.cursor = len(self.warps) - 1
        self.rng = np.random.default_rng(seed) if schedule == "random" else None
        self.uniform: list[float] = []
        self.handlers = {_COMPUTE: self._compute, _STORE: self._store, _LOAD: self._load,
                         _BARRIER: self._barrier, _TABLE: self._table}
        for warp in self.warps:
            self._settle(warp)

    # ---- hazards

    def _report(self, hazard: Hazard) -> None:
        """Record a hazard once (the same accesses in a later slab are not repeated)."""
        key = (hazard.kind, hazard.slot, hazard.warps, hazard.items, hazard.barriers)
        self.hazards.setdefault(key, hazard)

    # ---- scheduling

    def _runnable(self, warp: _Warp) -> bool:
        return not warp.done and warp.waiting is None

    def _settle(self, warp: _Warp) -> None:
        """After an item: move to the next slab at the end of the program; mark finished."""
        while warp.pc == len(warp.items) and warp.slab < self.slabs:
            warp.slab += 1
            warp.pc = 0
            warp.regs = {}
        if warp.slab == self.slabs and warp.waiting is None and not warp.done:
            warp.done = True
            self.live -= 1

    def _pick(self) -> _Warp | None:
        """The next warp to step: rotating from the last one, or uniformly at random."""
        n = len(self.warps)
        if self.rng is None:
            for k in range(1, n + 1):
                warp = self.warps[(self.cursor + k) % n]
                if self._runnable(warp):
                    self.cursor = warp.index
                    return warp
            return None
        ready = [warp for warp in self.warps if self._runnable(warp)]
        if not ready:
            return None
        if not self.uniform:
            self.uniform = self.rng.random(4096).tolist()
        return ready[int(self.uniform.pop() * len(ready))]

    def run(self) -> None:
        """Step warps until all finish, a deadlock, or a fatal misuse."""
        with np.errstate(all="ignore"):
            try:
                while self.live:
                    warp = self._pick()
                    if warp is None:
                        self._deadlock()
                        return
                    self._step(warp)
            except _Stop:
                return
        self._leftover_generations()

    def _step(self, warp: _Warp) -> None:
        """Execute the next item of ``warp`` (its clock ticks first)."""
        index = warp.pc
        kind, arguments, counts, dead = warp.items[index]
        warp.pc += 1
        warp.clock[warp.index] += 1
        self.steps += 1
        if warp.slab == 0:
            self.counts[warp.index].update(counts)
        self.handlers[kind](warp, index, *arguments)
        regs = warp.regs
        for name in dead:
            regs.pop(name, None)
        self._settle(warp)

    # ---- items

    def _compute(self, warp: _Warp, index: int, code) -> None:
        try:
            run_code(code, warp.regs, self.memories[warp.slab])
        except KeyError as missing:
            self._unset_register(warp, index, missing.args[0])

    def _unset_register(self, warp: _Warp, index: int, name: str) -> None:
        self._report(Hazard("misuse", f"warp {warp.index} item {index} (slab {warp.slab}) reads register "
                            f"%{name}, which this warp never computed or loaded",
                            values=(name,), warps=(warp.index,), items=(index,), slab=warp.slab))
        raise _Stop

    def _store(self, warp: _Warp, index: int, value: str, slot: int) -> None:
        if value not in warp.regs:
            self._unset_register(warp, index, value)
        self._check_store(warp, index, value, slot)
        self.shared[slot] = warp.regs[value]

    def _load(self, warp: _Warp, index: int, value: str, slot: int) -> None:
        self._check_load(warp, index, value, slot)
        warp.regs[value] = self.shared[slot]

    def _table(self, warp: _Warp, index: int, item: TableLoop) -> None:
        """A table loop: its slot loads (checked), its rows (``singe.sim.tables``), its slot stores (checked)."""
        values = {}
        for value, slot in item.reads:
            self._check_load(warp, index, value, slot)
            values[value] = self.shared[slot]
        memory = self.memories[warp.slab]
        writes, stores = run_table_loop(item, values, lambda name, row: memory.loads[(name, row)])
        for value, slot in item.writes:
            self._check_store(warp, index, value, slot)
            self.shared[slot] = writes[value]
        for key, array in stores.items():
            memory.stores[key][...] = array

    # ---- shared-memory hazards

    def _check_load(self, warp: _Warp, index: int, value: str, slot: int) -> None:
        """A load must read the store of its value, made this slab and ordered before it."""
        shadow = self.shadows[slot]
        w, slab = warp.index, warp.slab
        where = f"ld.shared {value} <- [{slot}] by warp {w} item {index} (slab {slab})"
        if shadow.write is None:
            self._report(Hazard("uninitialized", f"{where} reads a slot no warp has stored to (NaN)",
                                slot=slot, values=(value,), warps=(w,), items=(index,), slab=slab))
        else:
            ww, wt, wvalue, witem, wslab = shadow.write
            store = f"st.shared [{slot}] <- {wvalue} by warp {ww} item {witem} (slab {wslab})"
            problem = None
            if warp.clock[ww] < wt:
                problem = f"{where} is not ordered after {store}: no barrier between them"
            elif wvalue != value:
                problem = f"{where} finds {wvalue} instead, from {store}"
            elif wslab != slab:
                problem = f"{where} reads the {value} of another slab, from {store}"
            if problem:
                self._report(Hazard("race", problem, slot=slot, values=(value, wvalue), warps=(w, ww),
                                    items=(index, witem), slab=slab))
        shadow.reads.append((w, warp.clock[w], value, index, slab))

    def _check_store(self, warp: _Warp, index: int, value: str, slot: int) -> None:
        """A store must be ordered after the previous store (WAW) and its loads (WAR)."""
        shadow = self.shadows[slot]
        w, slab = warp.index, warp.slab
        where = f"st.shared [{slot}] <- {value} by warp {w} item {index} (slab {slab})"
        if shadow.write is not None:
            ww, wt, wvalue, witem, wslab = shadow.write
            if warp.clock[ww] < wt:
                self._report(Hazard(
                    "race", f"{where} is not ordered after the previous st.shared [{slot}] <- {wvalue} "
                    f"by warp {ww} item {witem} (slab {wslab}) (write after write)", slot=slot,
                    values=(value, wvalue), warps=(w, ww), items=(index, witem), slab=slab))
        for rw, rt, rvalue, ritem, rslab in shadow.reads:
            if warp.clock[rw] < rt:
                self._report(Hazard(
                    "race", f"{where} is not ordered after ld.shared {rvalue} <- [{slot}] by warp {rw} "
                    f"item {ritem} (slab {rslab}), which read the value it overwrites (write after read)",
                    slot=slot, values=(value, rvalue), warps=(w, rw), items=(index, ritem), slab=slab))
        shadow.write = (w, warp.clock[w], value, index, slab)
        shadow.reads = []

    # ---- named barriers

    def _barrier(self, warp: _Warp, index: int, barrier_id: int, threads: int, blocking: bool) -> None:
        """``bar.arrive`` (blocking False) or ``bar.sync``: count 32 threads, maybe wait."""
        if barrier_id not in self.barriers.current:
            self.barriers.generation(barrier_id, threads, np.zeros(len(self.warps), dtype=np.int64))
        gen = self.barriers[barrier_id]
        self._check_barrier(warp, index, barrier_id, threads, gen)
        np.maximum(gen.clock, warp.clock, out=gen.clock)
        if blocking:
            warp.waiting = (barrier_id, index, warp.slab)
        released = self.barriers.count(barrier_id, (warp.index, index, warp.slab), warp if blocking else None)
        if released is not None:
            for waiter in released:
                np.maximum(waiter.clock, gen.clock, out=waiter.clock)
                waiter.waiting = None
                self._settle(waiter)

    def _check_barrier(self, warp: _Warp, index: int, barrier_id: int, threads: int, gen: Generation) -> None:
        """PTX rules: a whole number of warps within the CTA, one count per generation,
        each warp counted at most once per generation."""
        w = warp.index
        where = f"warp {w} item {index} (slab {warp.slab})"
        ids = (barrier_id,)
        if threads <= 0 or threads % WARP_SIZE or threads > self.cta_threads:
            self._report(Hazard("misuse", f"{where} uses barrier {barrier_id} with {threads} threads: not a "
                                f"positive multiple of {WARP_SIZE} within the CTA's {self.cta_threads}",
                                warps=(w,), items=(index,), barriers=ids, slab=warp.slab))
        first_w, first_i, _ = gen.members[0] if gen.members else (w, index, 0)
        if threads != gen.expected:
            self._report(Hazard("misuse", f"{where} counts {threads} threads on barrier {barrier_id}, but "
                                f"its current generation expects {gen.expected} (from warp {first_w} "
                                f"item {first_i})", warps=(w, first_w), items=(index, first_i),
                                barriers=ids, slab=warp.slab))
        for mw, mi, ms in gen.members:
            if mw == w:
                self._report(Hazard("misuse", f"{where} is counted twice in one generation of barrier "
                                    f"{barrier_id} (first at item {mi}, slab {ms}): two synchronization "
                                    f"points on the barrier mixed", warps=(w, w), items=(index, mi),
                                    barriers=ids, slab=warp.slab))

    def _deadlock(self) -> None:
        """No warp can run but some have not finished: say who waits on what."""
        parts, warps, items, ids = [], [], [], set()
        for warp in self.warps:
            if warp.waiting is None:
                continue
            barrier_id, index, slab = warp.waiting
            gen = self.barriers[barrier_id]
            parts.append(f"warp {warp.index} waits at item {index} (slab {slab}) on barrier {barrier_id}: "
                         f"{gen.describe()}")
            warps.append(warp.index)
            items.append(index)
            ids.add(barrier_id)
        finished = [warp.index for warp in self.warps if warp.done]
        tail = f"; finished: warps {finished}" if finished else ""
        self._report(Hazard("deadlock", "no warp can run: " + "; ".join(parts) + tail,
                            warps=tuple(warps), items=tuple(items), barriers=tuple(sorted(ids))))

    def _leftover_generations(self) -> None:
        """Arrivals nobody completed by the end of the kernel."""
        for barrier_id, gen in sorted(self.barriers.items()):
            self._report(Hazard("misuse", f"barrier {barrier_id} is left with an incomplete generation when "
                                f"every warp has finished: {gen.describe()}",
                                warps=tuple(m[0] for m in gen.members), items=tuple(m[1] for m in gen.members),
                                barriers=(barrier_id,)))


# --------------------------------------------------------------------------- entry point

@contextmanager
def _collector_paused():
    """Pause the cyclic garbage collector: decoding allocates a few closures per
    instruction, and the collections that triggers over a big program's objects
    cost several times the simulation itself.  Nothing here makes cycles."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def simulate(programs: WarpPrograms, inputs: dict[str, np.ndarray], n_points: int, *,
             schedule: str = "round-robin", seed: int = 0, slabs: int = 1,
             strict: bool = True, check_uniform=None) -> SimulationResult:
    """Run ``programs`` on ``n_points`` points and return outputs, counts and hazards.

    ``inputs[field]``: (rows, n_points) array (a 1-D array is one row);
    outputs: field -> (rows, n_points), rows and fields taken from the ``stg``
    instructions (rows never stored stay NaN).  Each CTA runs its program
    ``slabs`` times on successive slabs of 32 points; points are padded to a
    whole number of CTAs x slabs by repeating the last one.  ``schedule``
    'round-robin' rotates over runnable warps, 'random' draws one with
    ``np.random.default_rng(seed)``.  With ``strict`` any hazard raises
    ``SimulationError``; otherwise hazards come back in the result.  A deadlock
    or a read of an unset register stops execution.  ``check_uniform``: None
    (default), or a ``wrap(warp, op, code) -> code`` instrumenting each warp's
    decoded instructions, such as ``singe.analysis.scalarize.uniform_check(programs)``,
    which raises ``SingeInternalError`` when a register classified uniform
    differs across the lanes of a warp.  The plan's setmaxnreg counts (sm_90a) are
    checked first (``singe.sim.registers``).
    """
    if schedule not in SCHEDULES:
        raise SingeInternalError(f"schedule {schedule!r} is not one of {SCHEDULES}")
    if slabs < 1 or n_points < 1:
        raise SingeInternalError(f"need slabs >= 1 and n_points >= 1, got {slabs} and {n_points}")
    ctas = -(-n_points // (WARP_SIZE * slabs))
    layout = _Layout(n_points, ctas, slabs)
    memories, per_slab = _global_memories(programs, inputs, layout)
    with _collector_paused():
        run = _Run(programs, memories, layout, schedule, seed, check_uniform)
        for hazard in setmaxnreg_hazards(programs, Hazard):
            run._report(hazard)
        run.run()
    hazards = list(run.hazards.values())
    if strict and hazards:
        raise SimulationError(hazards)
    outputs = {name: layout.join(arrays) for name, arrays in per_slab.items()}
    return SimulationResult(outputs, run.counts, hazards, run.steps)
