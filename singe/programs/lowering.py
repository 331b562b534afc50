"""Code units: what overlay aligns across warps, and what codegen emits for them.

A warp program becomes a list of units.  A ``ComputeUnit`` is an operation
together with the shared-memory loads right before it that only it reads
(emitted as reads where the operation uses them) and the stores right after
it of outputs not read again from the register (emitted as writes where
they are computed).  Other items stay units of their own: ``LoadUnit``
(one shared read into a register), ``StoreUnit`` (one shared write),
``BarrierUnit`` (one ``bar.sync`` / ``bar.arrive``).

What a ``ComputeUnit`` emits, in order (``codegen/render.py`` follows this
module; the timing model counts from it):

- one read into a temporary per ``pinned_loads`` entry (a shared value its
  own stores would overwrite before its last use);
- its ``instructions`` (the live ones) one by one, except the runs in
  ``loops``: each ``Loop`` is emitted as a ``for`` over ``count``
  iterations of ``period`` instructions, ``LOOP_UNROLL`` iterations per
  trip (``#pragma unroll``; arithmetic bodies unrolled completely up to ``FULL_UNROLL_ITERATIONS``), with
  * a variable declared before the loop for each ``carried`` position;
  * one shared read before the loop per ``invariant_loads`` entry (the same
    slot every iteration, not stored by the loop; none in a loop that
    evaluates exponentials, which reads them in place, ``evaluates_exp``);
  * per iteration, one warp-uniform load of the per-warp constant table (an
    LDC from the constant bank when the kernel's tables fit in
    ``codegen.CONSTANT_BANK_BYTES``, else an LDG) per entry of ``varying_constants`` (the loop's block of constants, laid out
    iteration-major and read through an index stepped by their number);
    constants equal in every iteration stay ordinary constants;
  * per iteration, each integer that differs between iterations (a shared
    slot, a species index) is a ``column_kind``: 'fixed', 'affine' (base +
    step * i: address arithmetic, an immediate offset when unrolled
    completely) or 'table' (one load of the ``singe_loop_ints`` table per iteration);
  * per trip, the loop counter's increment, compare and branch (none when unrolled completely).
- every other operand as in straight-line code: a constant is one
  ``SINGE_CONST`` (a shuffle from a register stripe or a warp-uniform load,
  see ``RegisterPlan.stripes_in_registers``), a shared input one read.

``loop_summary`` gives these counts per loop.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, field

from singe.kernels.ir import Const, Imm, Instr, Operation, Reg
from singe.memo import per_object
from singe.programs import Arrive, Compute, FullSync, SharedLoad, SharedStore, Sync, WarpProgram


@dataclass(frozen=True)
class ComputeUnit:
    op: Operation
    loads: dict = field(default_factory=dict)  # value -> slot, read in place
    stores: dict = field(default_factory=dict)  # value -> slot, written in place
    keep: frozenset = frozenset()  # outputs that also stay in a register

    def reads(self) -> set[str]:
        return {v for v in self.op.inputs if v not in self.loads}

    def writes(self) -> set[str]:
        return set(self.keep)

    @functools.cached_property
    def instructions(self) -> list[Instr]:
        """The instructions emitted: those whose results are kept or stored."""
        return live_instructions(self.op.instrs, set(self.keep) | set(self.stores))

    @functools.cached_property
    def pinned_loads(self) -> list[str]:
        """Inline loads read into temporaries first (``overwritten_loads``)."""
        return overwritten_loads(self, self.instructions)

    @functools.cached_property
    def loops(self) -> list["Loop"]:
        """The runs of ``instructions`` emitted as loops (``find_loops``)."""
        return find_loops(self, self.instructions, self.pinned_loads)


@dataclass(frozen=True)
class LoadUnit:
    value: str
    slot: int

    def reads(self) -> set[str]:
        return set()

    def writes(self) -> set[str]:
        return {self.value}


@dataclass(frozen=True)
class StoreUnit:
    value: str
    slot: int

    def reads(self) -> set[str]:
        return {self.value}

    def writes(self) -> set[str]:
        return set()


@dataclass(frozen=True)
class BarrierUnit:
    item: Arrive | Sync | FullSync

    def reads(self) -> set[str]:
        return set()

    def writes(self) -> set[str]:
        return set()


Unit = ComputeUnit | LoadUnit | StoreUnit | BarrierUnit


def _register_reads_after(items: list, start: int, value: str) -> bool:
    """Is ``value``'s register read by a Compute or store after ``start``
    before the warp loads it anew?"""
    for item in items[start:]:
        if isinstance(item, SharedLoad) and item.value == value:
            return False
        if isinstance(item, Compute) and value in item.op.inputs:
            return True
        if isinstance(item, SharedStore) and item.value == value:
            return True
    return False


def program_units(program: WarpProgram) -> list[Unit]:
    """The units of one warp's program, in its order.  Made once per program object (``memo.per_object``), so
    that the layouts of the same programs (with the constant table's copy and without, for codegen and the
    timing model) share the loops each unit finds once (``ComputeUnit.loops``, seconds for n-heptane)."""
    return list(_units(program))


@per_object
def _units(program: WarpProgram) -> tuple:
    return tuple(_lower_units(program))


def _lower_units(program: WarpProgram) -> list[Unit]:
    items = list(program.items)
    units: list[Unit] = []
    i = 0
    while i < len(items):
        item = items[i]
        if isinstance(item, SharedLoad):
            j = i
            while j < len(items) and isinstance(items[j], SharedLoad):
                j += 1
            compute = items[j] if j < len(items) and isinstance(items[j], Compute) else None
            inline = {}
            for load in items[i:j]:
                if compute is not None and load.value in compute.op.inputs and \
                        not _register_reads_after(items, j + 1, load.value):
                    inline[load.value] = load.slot
                else:
                    units.append(LoadUnit(load.value, load.slot))
            i = j
            if compute is not None:
                units.append(_compute_unit(compute, inline, items, i))
                i = _skip_stores(items, i + 1, units[-1])
        elif isinstance(item, Compute):
            units.append(_compute_unit(item, {}, items, i))
            i = _skip_stores(items, i + 1, units[-1])
        elif isinstance(item, SharedStore):
            units.append(StoreUnit(item.value, item.slot))
            i += 1
        else:
            units.append(BarrierUnit(item))
            i += 1
    return units


def _compute_unit(compute: Compute, loads: dict, items: list, position: int) -> ComputeUnit:
    """The operation at ``position`` with its inlined loads and the stores following it."""
    stores = {}
    j = position + 1
    while j < len(items) and isinstance(items[j], SharedStore) and items[j].value in compute.op.outputs:
        stores[items[j].value] = items[j].slot
        j += 1
    keep = frozenset(v for v in compute.op.outputs if _register_reads_after(items, j, v))
    loads = {v: s for v, s in loads.items() if v in compute.op.inputs}
    return ComputeUnit(compute.op, loads, stores, keep)


def _skip_stores(items: list, j: int, unit: ComputeUnit) -> int:
    while j < len(items) and isinstance(items[j], SharedStore) and items[j].value in unit.stores:
        j += 1
    return j


def live_instructions(instrs, needed) -> list[Instr]:
    """The instructions that contribute to the ``needed`` values or to a global
    store (what is left out computes something nobody reads)."""
    needed = set(needed)
    live = []
    for instr in reversed(instrs):
        if instr.opcode == "stg" or instr.dst in needed:
            live.append(instr)
            needed.update(instr.registers_read())
    return live[::-1]


# -- loops over isomorphic runs ---------------------------------------------------------

#: kernels whose isomorphic runs codegen emits as loops (``find_loops``) unless ``generate()`` is told otherwise
ROLLED_KERNELS = ("viscosity", "diffusion", "conductivity")
LOOP_UNROLL = 2  # iterations per trip of an emitted loop: halves the counter, compare and branch per iteration
FULL_UNROLL_ITERATIONS = 32
"""A loop of at most this many iterations whose body is plain arithmetic (``FULL_UNROLL_OPCODES``) is
unrolled completely (``#pragma unroll``): ptxas folds its affine shared slots and the constant-table
index into immediate offsets and drops the counter, compare and branch (DME viscosity at 15 warps,
sm_90 SASS walk: 15,566 -> 12,403 lane-instructions issued per point, static code 1,628 -> 3,332
instructions); longer loops keep ``LOOP_UNROLL`` iterations per trip, so that the code of large
mechanisms stays compact."""
FULL_UNROLL_OPCODES = frozenset({"add", "sub", "mul", "fma", "max", "min", "mov"})
"""Loops with an exp (the diffusion columns) stay rolled: unrolled, ptxas overlaps the exps of many
iterations and spills (DME diffusion at 10 warps x 2-3 CTAs, sm_90: 1,796-3,764 B of spill stores)."""
PER_WARP_LOOP_UNROLL = 4
"""Iterations per trip of an arithmetic loop emitted once for each warp that runs it, its constants read from the
constant bank at indices ptxas knows (``CompileOptions.constant_table`` 'bank'): unrolled completely, every
warp's copy of the body would be code of its own, fetched at the rate of straight-line code
(``timing.fetch_cycles``).  Rolled, the index is a uniform register (``ULDC.64 c[0x3][UR+imm]``), and more
iterations a trip issue fewer counter and address updates a pair.  sm_90 SASS walk of DME viscosity at 10 warps
x 4 CTAs, its Wilke unit once per warp, at 1, 2, 4 and 8 iterations a trip: 9,676, 8,495, 7,925 and 7,614
instructions issued a point, 1,458, 1,757, 2,008 and 3,146 static (36-44 registers, no spills)."""
MIN_LOOP_ITERATIONS = 3  # a run of fewer iterations stays unrolled
MIN_LOOP_INSTRUCTIONS = 12  # nor one that replaces fewer instructions
MAX_LOOP_PERIOD = 64  # instructions per iteration considered


@dataclass(frozen=True)
class Loop:
    """``count`` iterations of ``period`` instructions, starting at ``start``
    in a unit's live instruction list (``ComputeUnit.instructions``), that
    differ only in their constants, the shared slots and global indices
    they read and write, and the temporaries of their own or the previous
    iteration they read (paper §5: loops over per-warp constant tables).

    ``carried``: (position, index) for each position of an iteration whose
    value outlives it — read by the next iteration or after the loop; it
    lives in a variable declared before the loop, set from the instruction
    at ``index``, or from the unit's register input named ``index``
    (``carry_in``: a running sum the first iteration continues), or not set
    (``None``: only the last iteration's value is read, after the loop).
    """

    start: int
    period: int
    count: int
    carried: tuple[tuple[int, int | str | None], ...] = ()

    @property
    def stop(self) -> int:
        return self.start + self.period * self.count

    def iteration(self, instrs, t: int) -> list[Instr]:
        return list(instrs[self.start + t * self.period:self.start + (t + 1) * self.period])


def invariant_loads(unit: "ComputeUnit", loop: Loop) -> list[tuple[int, int]]:
    """(position, operand) of the loop's shared-memory reads that read the
    same slot in every iteration, a slot the loop does not store to: they
    are read once, before the loop (``invariant_reads``: except where the
    loop evaluates exponentials)."""
    return [] if evaluates_exp(unit, loop) else invariant_reads(unit, loop)


def evaluates_exp(unit: "ComputeUnit", loop: Loop) -> bool:
    """Do the loop's iterations evaluate an exponential?  Such a loop (the
    diffusion turns) is register-bound: it reads its invariant shared values
    in place every iteration, so that their registers go to the exponentials
    (n-heptane diffusion at 13 warps x 3 CTAs, 48 registers, sm_90 ptxas:
    4 B of spill stores with the x_c of the warp's columns read before the
    loop, none read in place; 55,257 -> 54,917 lane-instructions issued per
    point, SASS walk)."""
    return any(instr.opcode == "exp" for instr in loop.iteration(unit.instructions, 0))


def invariant_reads(unit: "ComputeUnit", loop: Loop) -> list[tuple[int, int]]:
    """(position, operand) of the loop's shared-memory reads of the same slot
    in every iteration, a slot the loop does not store to."""
    iterations = [loop.iteration(unit.instructions, t) for t in range(loop.count)]
    stored = {unit.stores[instr.dst] for it in iterations for instr in it if instr.dst in unit.stores}
    found = []
    for q, instr in enumerate(iterations[0]):
        for k, src in enumerate(instr.srcs):
            if not isinstance(src, Reg) or src.name not in unit.loads or src.name in unit.pinned_loads:
                continue
            slots = {unit.loads.get(it[q].srcs[k].name) for it in iterations}
            if len(slots) == 1 and not slots & stored:
                found.append((q, k))
    return found


def overwritten_loads(unit: "ComputeUnit", instrs: list[Instr]) -> list[str]:
    """Inline loads whose slot the unit stores to before one of the load's
    uses: they are read first, into temporaries (stores are written where
    their value is computed, so a later read in place would see the new
    value; a running sum read and rewritten by the same instruction needs
    no temporary)."""
    last_use: dict[str, int] = {}
    for i, instr in enumerate(instrs):
        for name in instr.registers_read():
            last_use[name] = i
    first_store: dict[int, int] = {}
    for k, instr in enumerate(instrs):
        if instr.dst in unit.stores:
            first_store.setdefault(unit.stores[instr.dst], k)
    return [value for value, slot in unit.loads.items()
            if slot in first_store and first_store[slot] < last_use.get(value, -1)]


def _signatures(unit: "ComputeUnit", instrs: list[Instr], pinned: set[str]) -> list[tuple]:
    """Per instruction what two iterations of a loop must share: opcode,
    field, immediates, the kind of each operand (a constant, a shared-memory
    value, a named register, a temporary at a given distance back) and
    where the result goes."""
    defined = {instr.dst: i for i, instr in enumerate(instrs) if instr.dst is not None}
    result = []
    for i, instr in enumerate(instrs):
        operands = []
        for src in instr.srcs:
            if isinstance(src, Imm):
                operands.append(("imm", src.value))
            elif isinstance(src, Const):
                operands.append(("const",))
            elif src.name in defined:
                operands.append(("temp", i - defined[src.name]))
            elif src.name in unit.loads and src.name not in pinned:
                operands.append(("shared",))
            else:
                operands.append(("reg", src.name))
        where = "keep" if instr.dst in unit.keep else "store" if instr.dst in unit.stores else ""
        result.append((instr.opcode, instr.field, tuple(operands), where))
    return result


def _definitions(instrs: list[Instr]) -> dict[str, int]:
    """Each register ``instrs`` write -> the position of its last definition (found once per unit: ``_carried``
    runs for every candidate loop)."""
    return {instr.dst: i for i, instr in enumerate(instrs) if instr.dst is not None}


def _carried(instrs: list[Instr], loop: Loop, defined: dict[str, int]) -> tuple[tuple[int, int | None], ...] | None:
    """The loop's carried positions, or None where it cannot be a loop: an
    iteration reads a temporary more than one period back, or code after
    the loop reads one of an iteration before the last (``defined``: ``_definitions(instrs)``)."""
    carried: dict[int, int | None] = {}
    for q, instr in enumerate(loop.iteration(instrs, 0)):
        for name in instr.registers_read():
            d = loop.start + q - defined.get(name, loop.start + q)
            if d > q:  # the previous iteration's position q - d + period
                if d > loop.period:
                    return None
                carried[q - d + loop.period] = loop.start + q - d
    last = loop.stop - loop.period
    for instr in instrs[loop.stop:]:
        for name in instr.registers_read():
            k = defined.get(name, -1)
            if loop.start <= k < last:
                return None
            if last <= k < loop.stop:
                carried.setdefault(k - last, None)
    return tuple(sorted(carried.items()))


def _runs(signatures: list[tuple], lo: int, hi: int):
    """Candidate (start, period, count) runs of repeating signatures in [lo, hi)."""
    for period in range(1, min(MAX_LOOP_PERIOD, (hi - lo) // MIN_LOOP_ITERATIONS) + 1):
        i = lo
        while i + period < hi:
            if signatures[i] != signatures[i + period]:
                i += 1
                continue
            j = i
            while j + period < hi and signatures[j] == signatures[j + period]:
                j += 1
            for start in range(i, min(i + period, j)):  # every phase of the stretch
                yield start, period, (j - start) // period + 1
            i = j


def _merit(loop: Loop) -> tuple:
    """Instructions covered, then fewer values carried, then the shorter period."""
    return loop.count * loop.period, -len(loop.carried), -loop.period


def _best_loop(instrs: list[Instr], signatures: list[tuple], lo: int, hi: int,
               defined: dict[str, int]) -> Loop | None:
    """The best run (``_merit``) that can be a loop, with the iteration before
    it where that one starts its running sums (``carry_in``)."""
    best = None
    for start, period, count in _runs(signatures, lo, hi):
        if best is not None and (count + 1) * period < best.count * best.period:
            continue
        if any(where == "keep" for *_, where in signatures[start:start + period]):
            continue  # a register output per iteration
        while count >= MIN_LOOP_ITERATIONS - 1 and (count + 1) * period >= MIN_LOOP_INSTRUCTIONS:
            carried = _carried(instrs, Loop(start, period, count), defined)
            if carried is not None:
                loop = carry_in(instrs, signatures, Loop(start, period, count, carried), lo, defined)
                if loop.count >= MIN_LOOP_ITERATIONS and loop.count * period >= MIN_LOOP_INSTRUCTIONS:
                    best = loop if best is None or _merit(loop) > _merit(best) else best
                break
            count -= 1
    return best


def carry_in(instrs: list[Instr], signatures: list[tuple], loop: Loop, lo: int,
             defined: dict[str, int]) -> Loop:
    """``loop`` with the iteration before it, where that one differs from the
    loop's first only in reading a register input where the loop's first
    iteration reads the running value of that iteration (a running sum that
    continues one from before the unit: its variable starts as the input)."""
    start = loop.start - loop.period
    if start < lo:
        return loop
    inputs = {}
    for q in range(loop.period):
        before, first = signatures[start + q], signatures[loop.start + q]
        if before[0:2] != first[0:2] or before[3] != first[3] or len(before[2]) != len(first[2]):
            return loop
        for a, b in zip(before[2], first[2]):
            if a == b:
                continue
            if a[0] != "reg" or b != ("temp", loop.period):
                return loop
            inputs[q] = a[1]
    extended = Loop(start, loop.period, loop.count + 1)
    carried = _carried(instrs, extended, defined) if inputs else None
    if carried is None:
        return loop
    return Loop(start, loop.period, loop.count + 1, tuple(sorted({**dict(carried), **inputs}.items())))


def find_loops(unit: "ComputeUnit", instrs: list[Instr], pinned=()) -> list[Loop]:
    """Disjoint loops over the isomorphic runs of ``instrs`` (the unit's live
    instructions), in order: the largest run first (``_best_loop``), then the
    largest in the code before and after it.  ``pinned``: loads read
    into temporaries (``overwritten_loads``), which a loop cannot index."""
    signatures = _signatures(unit, instrs, set(pinned))
    defined = _definitions(instrs)
    loops: list[Loop] = []
    pending = [(0, len(instrs))]
    while pending:
        lo, hi = pending.pop()
        loop = _best_loop(instrs, signatures, lo, hi, defined)
        if loop is None:
            continue
        loops.append(loop)
        pending += [(lo, loop.start), (loop.stop, hi)]
    return sorted(loops, key=lambda loop: loop.start)


def column_kind(values) -> str:
    """How an integer that takes ``values`` in a loop's iterations is emitted:
    'fixed' (one number), 'affine' (base + step * i) or 'table' (an entry of
    the loop table per iteration)."""
    values = list(values)
    if len(set(values)) == 1:
        return "fixed"
    return "affine" if len({b - a for a, b in zip(values, values[1:])}) == 1 else "table"


def varying_constants(unit: ComputeUnit, loop: Loop) -> list[tuple[int, int]]:
    """(position, operand) of the constants that differ between the loop's
    iterations, in the order of the loop's block of the constant table."""
    iterations = [loop.iteration(unit.instructions, t) for t in range(loop.count)]
    return [(q, k) for q, instr in enumerate(iterations[0]) for k, src in enumerate(instr.srcs)
            if isinstance(src, Const) and len({it[q].srcs[k].value for it in iterations}) > 1]


def constant_pairs(varying: int) -> int:
    """Two-constant loads (``LDS.128``) of one iteration of a loop that reads its ``varying`` constants from
    a copy of the constant table in shared memory (``CompileOptions.constant_table`` 'shared'): one per
    adjacent pair when the iteration reads an even number of them (its block then starts every iteration
    at an even slot, 16 B aligned, as the overlay aligns the block: ``_Constants.block``), else none."""
    return varying // 2 if varying % 2 == 0 else 0


def issued_constant_pairs(varying: int) -> int:
    """The ``LDS.128`` of one iteration of such a loop in the compiled kernel: codegen's pairs
    (``constant_pairs``) for an even count; for an odd one, nvcc pairs the loads itself where it can prove
    the alignment, (varying - 1) / 2 an iteration (the block starts at an even slot and consecutive
    iterations alternate which end is read alone; unrolled completely or two iterations a trip).  The sm_90
    SASS of GRI-Mech viscosity at 8 warps in Wilke groups of 7: 197 LDS.128 a warp (the model's count of
    the overlaid warps within 4.3 % with this, 10.9 % over without)."""
    return varying // 2


def integer_columns(unit: ComputeUnit, loop: Loop) -> list[list[int]]:
    """Per iteration-varying integer of the body, its values: shared slots read
    in place (not hoisted), shared slots stored, global indices."""
    iterations = [loop.iteration(unit.instructions, t) for t in range(loop.count)]
    hoisted = set(invariant_loads(unit, loop))
    columns = []
    for q, instr in enumerate(iterations[0]):
        for k, src in enumerate(instr.srcs):
            if isinstance(src, Reg) and src.name in unit.loads and src.name not in unit.pinned_loads \
                    and (q, k) not in hoisted:
                columns.append([unit.loads[it[q].srcs[k].name] for it in iterations])
        if instr.opcode in ("ldg", "stg"):
            columns.append([it[q].index for it in iterations])
        if instr.dst in unit.stores:
            columns.append([unit.stores[it[q].dst] for it in iterations])
    return columns


@dataclass(frozen=True)
class LoopSummary:
    """What one emitted loop costs beyond its body (see the module docstring)."""

    iterations: int
    body: int  # instructions per iteration (the IR's, each a lowered expression)
    constant_loads: int  # per iteration, from the per-warp constant table
    table_loads: int  # per iteration, from singe_loop_ints
    affine_indices: int  # per iteration, base + step * i
    hoisted_loads: int  # once, before the loop
    invariant_reads: int  # slots read in place every iteration though the same in each (``evaluates_exp``)
    carried: int  # values living across iterations
    trips: int  # counter increment, compare and branch each (0: unrolled completely)
    unroll: int  # iterations per trip as emitted (``unroll_factor``)

    @property
    def unrolled(self) -> bool:
        """Unrolled completely: no counter, affine indices folded into immediate offsets."""
        return self.unroll >= self.iterations


def unroll_factor(loop: Loop, instrs, per_warp: bool = False) -> int:
    """Iterations per trip of the emitted loop over ``instrs`` (the unit's live instructions): all of them
    up to ``FULL_UNROLL_ITERATIONS`` when the body is plain arithmetic, else ``LOOP_UNROLL``; ``per_warp``: the
    loop is emitted once for each warp that runs it (``CompileOptions.constant_table`` 'bank'), where an
    arithmetic body takes ``PER_WARP_LOOP_UNROLL`` iterations a trip."""
    arithmetic = all(instr.opcode in FULL_UNROLL_OPCODES for instr in loop.iteration(instrs, 0))
    if not arithmetic:
        return LOOP_UNROLL
    if per_warp:
        return min(loop.count, PER_WARP_LOOP_UNROLL)
    return loop.count if loop.count <= FULL_UNROLL_ITERATIONS else LOOP_UNROLL


def _reads_in_place(unit: ComputeUnit, loop: Loop) -> int:
    """Distinct slots of the invariant reads a loop does not hoist (``invariant_loads``)."""
    hoisted = set(invariant_loads(unit, loop))
    first = loop.iteration(unit.instructions, 0)
    return len({unit.loads[first[q].srcs[k].name] for q, k in invariant_reads(unit, loop) if (q, k) not in hoisted})


def loop_summary(unit: ComputeUnit, loop: Loop, per_warp: bool = False) -> LoopSummary:
    """``loop`` of ``unit`` as emitted (``per_warp`` as ``unroll_factor``)."""
    distinct = {tuple(values) for values in integer_columns(unit, loop)}  # one read where operands share one
    kinds = [column_kind(values) for values in distinct]
    unroll = unroll_factor(loop, unit.instructions, per_warp)
    return LoopSummary(loop.count, loop.period, len(varying_constants(unit, loop)), kinds.count("table"),
                       kinds.count("affine"), len(invariant_loads(unit, loop)), _reads_in_place(unit, loop),
                       len(loop.carried),
                       0 if unroll >= loop.count else -(-loop.count // unroll), unroll)
