"""Overlaying the warps' programs into one kernel body (paper §5.1–5.3).

All warps' unit lists are walked together.  At each step the warps whose
next units render to the same text (up to constants, offsets and output
variables) form groups; the largest group's unit is emitted once — as code
for every warp when the group is all of them, behind a bit-mask test
otherwise — and those warps advance.  A full barrier (``bar.sync 0``) waits
until every warp is at it, so the warps' code is aligned after it.  When no two warps agree, every warp's
next unit goes into a ``switch`` on the warp id (consecutive ones into the
same switch, up to a length).

Constants that differ between the warps of a group get one slot of the
per-warp constant table (the same slot for every warp of the group, padded
for the others); each warp's slots are striped across its 32 lanes and
broadcast with ``__shfl_sync``.  Integer offsets that differ come from a
per-warp index table (warp indexing): the first warp's offset plus the
warp's shift, one table row for all offsets that shift alike.  Output variables are named so that a
variable never holds two live values of one warp, which lets warps share
variable names and code.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field

from singe.codegen.render import READ, Shape, render_unit
from singe.programs.lowering import BarrierUnit, ComputeUnit, Unit, program_units
from singe.errors import SingeInternalError
from singe.programs import FullSync, WarpPrograms

SWITCH_UNITS = 12  # units per warp before a long divergent stretch gets a new switch
PER_WARP_SCOPE = "this case's warp, a constant: its constants' indices are known (uniform loads)"
MAX_INDEXED = 4  # index-table rows a unit may read (``_index_rows``) and still be shared


@dataclass
class Block:
    """A piece of the kernel body: ``lines`` for ``warps`` (all, or a mask),
    or a switch with ``cases`` (warp -> lines)."""

    kind: str  # 'all', 'mask' or 'switch'
    warps: tuple[int, ...]
    lines: list[str] = field(default_factory=list)
    cases: dict[int, list[str]] = field(default_factory=dict)
    units: int = 0

    @property
    def mask(self) -> str:
        return f"0x{sum(1 << w for w in self.warps):08x}u"


@dataclass
class OverlaidKernel:
    """The overlaid body and the tables it reads."""

    blocks: list[Block]
    constants: list[list[float]]  # per warp, per slot
    index_rows: list[list[int]]  # per row, per warp
    variables: int
    shared_units: int = 0
    total_units: int = 0
    loop_ints: list[int] = field(default_factory=list)  # the loop table (singe_loop_ints)
    loops: int = 0  # loops in the body
    sharing: list[tuple[int, int, int]] = field(default_factory=list)
    """Per unit emitted once for several warps: (first warp, its unit's position, number of warps)."""
    shared_positions: frozenset[tuple[int, int]] = frozenset()
    """(warp, its unit's position) of every unit emitted once for several warps: the units whose
    warp-dependent numbers (constant slots, offsets) ptxas does not know."""
    table_copy: bool = False
    """Each warp copies its row of the constant table into shared memory, where code several warps share
    reads it (``CompileOptions.constant_table``, resolved by ``codegen.lay_out``)."""
    paired_reads: dict = field(default_factory=dict)
    """(warp, its unit's position) -> the first slots 2m of the pairs 2m, 2m + 1 of its constant slots that a
    unit emitted once for several warps reads, where the table's copy is in shared memory: nvcc loads each
    pair with one ``LDS.128`` (the slots' addresses differ by 8 B from an even entry of the 16 B aligned copy;
    DME diffusion at 10 warps x 3 CTAs, sm_90: 92 ``LDS.128`` and 24 ``LDS.64`` in place of 195 ``LDC.64``);
    ``copied_pairs`` counts those in the copy."""
    loop_slots: int = 0
    """The slots the loops read (``_Constants.block``) end before this one: a copy holds them all or none."""
    partial_stripes: int | None = None
    """The stripes of each warp's row in the copy where it holds only the first ones (``partial_copy``), None
    where it holds the whole row."""
    loops_per_warp: bool = False
    """A unit with loops that several warps run is emitted once for each of them, a case of a switch that
    declares its warp a constant, and its loops keep ``lowering.PER_WARP_LOOP_UNROLL`` iterations a trip
    (``CompileOptions.constant_table`` 'bank')."""

    @property
    def copied_stripes(self) -> int:
        """Stripes of each warp's row in the copy in shared memory: all, the first ``partial_stripes``, or none."""
        if not self.table_copy:
            return 0
        return self.stripes if self.partial_stripes is None else self.partial_stripes

    @property
    def copied_slots(self) -> int:
        """Each warp's slots below this one are read from the copy (where code several warps share reads them),
        the others from the table itself."""
        return 32 * self.copied_stripes

    def copied_pairs(self, warp: int, position: int) -> int:
        """The pairs of ``paired_reads`` of the unit at ``position`` of ``warp`` in the copy (``LDS.128``)."""
        return sum(1 for slot in self.paired_reads.get((warp, position), ()) if slot + 1 < self.copied_slots)

    @property
    def slots(self) -> int:
        """Constant slots per warp (every warp's row padded to the widest)."""
        return len(self.constants[0]) if self.constants else 0

    @property
    def stripes(self) -> int:
        """A warp's row of the constant table in stripes of 32 slots (one per lane)."""
        return -(-self.slots // 32)


class _Constants:
    """Per-warp constant slots.

    A constant of code shared by a group of warps needs one slot index that
    is the same for all of them; warps outside the group keep that index for
    constants of their own.  A group takes the first index past every
    member's last used slot (members that are behind get padding), or reuses
    a slot where every member already holds exactly its value.
    """

    def __init__(self, warps: int):
        self.warps = warps
        self.values: list[dict[int, float]] = [dict() for _ in range(warps)]  # warp -> slot -> value
        self.where: list[dict[float, list[int]]] = [dict() for _ in range(warps)]  # warp -> value -> slots
        self.high = [0] * warps
        self.block_end = 0  # past the last slot of any block (``OverlaidKernel.loop_slots``)

    def slot(self, values: dict[int, float]) -> int:
        warps = sorted(values)
        first = warps[0]
        for candidate in self.where[first].get(values[first], ()):
            if all(self.values[w].get(candidate) == values[w] for w in warps):
                return candidate
        slot = max(self.high[w] for w in warps)
        for w in warps:
            self.values[w][slot] = values[w]
            self.where[w].setdefault(values[w], []).append(slot)
            self.high[w] = slot + 1
        return slot

    def block(self, values: dict[int, tuple[float, ...]], align: int = 1) -> int:
        """The first of ``len(values[w])`` consecutive slots holding each
        warp's run of constants (a loop reads slot first + i), a multiple of ``align``."""
        warps = sorted(values)
        first = max(self.high[w] for w in warps)
        first += -first % align
        for w in warps:
            for i, value in enumerate(values[w]):
                self.values[w][first + i] = value
                self.where[w].setdefault(value, []).append(first + i)
            self.high[w] = first + len(values[w])
            self.block_end = max(self.block_end, self.high[w])
        return first

    def table(self) -> list[list[float]]:
        size = max(self.high, default=0)
        return [[self.values[w].get(s, 0.0) for s in range(size)] for w in range(self.warps)]


class _Indices:
    """Rows of per-warp integers for offsets that differ between warps of a group."""

    def __init__(self, warps: int):
        self.warps = warps
        self.rows: list[list[int]] = []
        self._index: dict[tuple, int] = {}

    def row(self, values: dict[int, int]) -> int:
        full = tuple(values.get(w, 0) for w in range(self.warps))
        if full not in self._index:
            self._index[full] = len(self.rows)
            self.rows.append(list(full))
        return self._index[full]


class _LoopTables:
    """One table of the integers loops read (shared slots, species indices
    that are no arithmetic progression): each run once, at an offset."""

    def __init__(self):
        self.values: list[int] = []
        self._offsets: dict[tuple[int, ...], int] = {}

    def offset(self, run: tuple[int, ...]) -> int:
        if run not in self._offsets:
            self._offsets[run] = len(self.values)
            self.values.extend(run)
        return self._offsets[run]


class _Variables:
    """Output variable names: a name is free for a warp when its value there is dead."""

    def __init__(self, units: list[list[Unit]]):
        self.last_use = [self._last_uses(u) for u in units]
        self.holders: list[dict[int, str]] = []  # per variable: warp -> value it holds
        self.names: list[dict[str, str]] = [dict() for _ in units]

    @staticmethod
    def _last_uses(units: list[Unit]) -> dict[str, int]:
        last = {}
        for i, unit in enumerate(units):
            for value in unit.reads():
                last[value] = i
        return last

    def assign(self, warps, outputs_by_warp: dict[int, tuple[str, ...]], positions: dict[int, int],
               ending: dict[int, set[str]] | None = None) -> list[str]:
        """Names for the outputs (same names for every warp of the group).  ``ending``:
        per warp, the inputs the unit reads for the last time before it writes
        an output; their names are taken first (the outputs replace them), so
        that warps running masked code one group after another keep no more
        names live than one group needs (ptxas does not know the groups are
        disjoint)."""
        ending = ending or {}
        count = len(next(iter(outputs_by_warp.values())))

        def reusable(holders) -> bool:
            return all(w not in holders or holders[w] in ending.get(w, ()) for w in warps)

        chosen: list[int] = []
        for k in range(count):
            candidates = [v for v, holders in enumerate(self.holders) if v not in chosen and reusable(holders)]
            free = min(candidates, key=lambda v: (not any(w in self.holders[v] for w in warps), v), default=None)
            if free is None:
                self.holders.append({})
                free = len(self.holders) - 1
            chosen.append(free)
        for w in warps:
            for k, value in enumerate(outputs_by_warp[w]):
                if self.last_use[w].get(value, -1) > positions[w]:
                    self.holders[chosen[k]][w] = value
                elif self.holders[chosen[k]].get(w) in ending.get(w, ()):
                    del self.holders[chosen[k]][w]
                self.names[w][value] = f"r{chosen[k]}"
        return [f"r{v}" for v in chosen]

    def release(self, warp: int, position: int) -> None:
        """Forget values of ``warp`` whose last use is at or before ``position``."""
        for holders in self.holders:
            value = holders.get(warp)
            if value is not None and self.last_use[warp].get(value, -1) <= position:
                del holders[warp]


def _index_rows(columns) -> set[tuple]:
    """The index-table rows that integers differing between warps need (each
    column holds one integer's value per warp): one per pattern of shifts
    from the first warp's value; a loop's table of integers (a tuple per
    warp) one of its own."""
    rows = set()
    for column in columns:
        if len(set(column)) > 1:
            shifted = all(isinstance(v, int) for v in column)
            rows.add(tuple(v - column[0] for v in column) if shifted else column)
    return rows


class Overlay:
    """Walks the warps' unit lists together (see the module docstring)."""

    def __init__(self, programs: WarpPrograms, index_tables: bool = True, roll: bool = False,
                 table_copy: bool = False, loops_per_warp: bool = False):
        self.programs = programs
        self.index_tables = index_tables
        self.roll = roll
        self.table_copy = table_copy  # the table's copy in shared memory: loops read their constants in pairs
        self.loops_per_warp = loops_per_warp  # ``OverlaidKernel.loops_per_warp``
        self.loop_tables = _LoopTables()
        self.loops = 0
        self.warps = programs.warps
        self.units = [program_units(p) for p in programs.programs]
        self.position = [0] * self.warps
        self.variables = _Variables(self.units)
        self.constants = _Constants(self.warps)
        self.indices = _Indices(self.warps)
        self.blocks: list[Block] = []
        self._shapes: dict[int, Shape] = {}
        self.shared_units = 0
        self.sharing: list[tuple[int, int, int]] = []
        self.shared_positions: set[tuple[int, int]] = set()
        self.paired_reads: dict[tuple[int, int], tuple[int, ...]] = {}

    def shape(self, warp: int) -> Shape:
        if warp not in self._shapes:
            unit = self.units[warp][self.position[warp]]
            self._shapes[warp] = render_unit(unit, self.variables.names[warp], self.programs.threads, self.roll,
                                             self.table_copy, self.loops_per_warp)
        return self._shapes[warp]

    def run(self) -> OverlaidKernel:
        while True:
            active = [w for w in range(self.warps) if self.position[w] < len(self.units[w])]
            if not active:
                break
            groups = self._groups(active)
            if len(active) > 1 and any(not self._at_full_sync(g[0]) for g in groups):
                groups = [g for g in groups if not self._at_full_sync(g[0])]  # wait there for every warp
            if all(len(g) == 1 for g in groups) and len(groups) > 1:
                self._emit_switch(sorted(g[0] for g in groups))
            else:
                best = max(groups, key=lambda g: (len(g), self._remaining(g), -g[0]))
                self._emit_group(best)
        total = sum(len(u) for u in self.units)
        return OverlaidKernel(self.blocks, self.constants.table(), self.indices.rows,
                              len(self.variables.holders), self.shared_units, total,
                              loop_ints=self.loop_tables.values, loops=self.loops, sharing=self.sharing,
                              shared_positions=frozenset(self.shared_positions), table_copy=self.table_copy,
                              paired_reads=self.paired_reads, loop_slots=self.constants.block_end,
                              loops_per_warp=self.loops_per_warp)

    def _groups(self, active: list[int]) -> list[list[int]]:
        """Warps whose next units have the same text; a group whose offsets
        differ in more than ``MAX_INDEXED`` places is split by offsets (each
        table lookup holds an address register across the shared code)."""
        by_text: dict[tuple, list[int]] = defaultdict(list)
        for w in active:
            by_text[self.shape(w).key].append(w)
        groups = []
        for warps in by_text.values():
            ints = [self.shape(w).ints + self.shape(w).tables for w in warps]
            differing = len(_index_rows(zip(*ints)))
            if differing == 0 or (self.index_tables and differing <= MAX_INDEXED):
                groups.append(warps)
                continue
            by_ints: dict[tuple, list[int]] = defaultdict(list)
            for w, key in zip(warps, ints):
                by_ints[key].append(w)
            groups.extend(by_ints.values())
        return groups

    def _ending(self, warps) -> dict[int, set[str]]:
        """Per warp, the register inputs its next unit reads for the last time,
        all before it writes its first output (``_Variables.assign``)."""
        result = {}
        for w in warps:
            unit = self.units[w][self.position[w]]
            if not isinstance(unit, ComputeUnit) or not unit.keep:
                continue
            instrs = unit.instructions
            first_output = min((i for i, instr in enumerate(instrs) if instr.dst in unit.keep), default=len(instrs))
            last_read = {}
            for i, instr in enumerate(instrs):
                for name in instr.registers_read():
                    last_read[name] = i
            result[w] = {v for v in unit.reads() if self.variables.last_use[w].get(v) == self.position[w]
                         and last_read.get(v, len(instrs)) < first_output}
        return result

    def _at_full_sync(self, warp: int) -> bool:
        """Is ``warp``'s next unit a full barrier (``bar.sync 0``)?  Every warp
        reaches it at the same point of its program, so the overlay emits it
        once all warps are there: their code is aligned again after it."""
        unit = self.units[warp][self.position[warp]]
        return isinstance(unit, BarrierUnit) and isinstance(unit.item, FullSync)

    def _remaining(self, warps) -> int:
        return sum(len(self.units[w]) - self.position[w] for w in warps)

    def _fill(self, warps: list[int]) -> list[str]:
        """The group's common text with placeholders filled."""
        shapes = {w: self.shape(w) for w in warps}
        first = shapes[warps[0]]
        self.loops += first.loops
        outputs = self.variables.assign(warps, {w: s.outputs for w, s in shapes.items()},
                                        {w: self.position[w] for w in warps}, self._ending(warps))
        text = "\n".join(first.lines)
        slots = set()
        for k in range(len(first.consts)):
            slot = self.constants.slot({w: shapes[w].consts[k] for w in warps})
            slots.add(slot)
            text = text.replace(f"$K{k}$", f"{READ}CONST({slot})")
        text = text.replace(READ, read_prefix(self.table_copy, len(warps)))
        if self.table_copy and len(warps) > 1:
            pairs = tuple(sorted(s for s in slots if s % 2 == 0 and s + 1 in slots))
            self.paired_reads.update({(w, self.position[w]): pairs for w in warps if pairs})
        for k in range(len(first.blocks)):
            slot = self.constants.block({w: shapes[w].blocks[k] for w in warps}, 2 if self.table_copy else 1)
            text = text.replace(f"$C{k}$", str(slot))
        for k in range(len(first.ints)):
            text = text.replace(f"$I{k}$", self._integer({w: shapes[w].ints[k] for w in warps}))
        for k in range(len(first.tables)):
            offsets = {w: self.loop_tables.offset(shapes[w].tables[k]) for w in warps}
            text = text.replace(f"$T{k}$", self._integer(offsets))
        for k, name in enumerate(outputs):
            text = text.replace(f"$O{k}$", name)
        if "$" in text:
            raise SingeInternalError(f"unfilled placeholder in {text!r}")
        return text.split("\n")

    def _integer(self, values: dict[int, int]) -> str:
        """A number; where the warps differ, ``a + b * warp_id`` when the values are affine in the warp
        (``warp_affine``), else the group's first warp's number plus the warp's entry of an index-table
        row of shifts (one row for every integer that differs between the warps by the same shifts: a
        slot in a block of species at each warp's place)."""
        distinct = set(values.values())
        if len(distinct) == 1:
            return str(distinct.pop())
        affine = warp_affine(values)
        if affine is not None:
            return f"({affine[0]} + {affine[1]} * warp_id)"
        first = values[min(values)]
        row = f"singe_index[{self.indices.row({w: v - first for w, v in values.items()})}][warp_id]"
        return f"({row} + {first})" if first else row

    def _advance(self, warps) -> None:
        for w in warps:
            self.variables.release(w, self.position[w])
            self.position[w] += 1
            self._shapes.pop(w, None)

    def _emit_group(self, warps: list[int]) -> None:
        if self.loops_per_warp and len(warps) > 1 and self.shape(warps[0]).loops:
            self._emit_cases(warps)
            return
        lines = self._fill(warps)
        kind = "all" if len(warps) == self.warps else "mask"
        previous = self.blocks[-1] if self.blocks else None
        if previous is not None and previous.kind == kind and previous.warps == tuple(warps):
            previous.lines.extend(lines)
        else:
            self.blocks.append(Block(kind, tuple(warps), lines))
        if len(warps) > 1:
            self.shared_units += len(warps)
            self.sharing.append((warps[0], self.position[warps[0]], len(warps)))
            self.shared_positions.update((w, self.position[w]) for w in warps)
        self._advance(warps)

    def _emit_switch(self, warps: list[int], lines: dict[int, list[str]] | None = None) -> None:
        """Each warp's next unit (``lines``: its text, else filled for it alone) as its case of a switch: the
        previous block's, up to ``SWITCH_UNITS`` units, else a new one."""
        previous = self.blocks[-1] if self.blocks else None
        if previous is None or previous.kind != "switch" or previous.units >= SWITCH_UNITS:
            previous = Block("switch", tuple(range(self.warps)))
            self.blocks.append(previous)
        for w in warps:
            previous.cases.setdefault(w, []).extend(self._fill([w]) if lines is None else lines[w])
        previous.units += 1
        self._advance(warps)

    def _emit_cases(self, warps: list[int]) -> None:
        """The group's unit, filled as code the warps share (the same slots, offsets and names), once for each
        warp as its case of a switch, in a scope that declares the warp a constant (``loops_per_warp``): ptxas
        then knows its constants' indices, and reads them from the constant bank by ``ULDC.64`` at a uniform
        index, which takes no slot of the SM's load queue (``timing.UNIFORM_TABLE_LOAD``)."""
        self.loops += (len(warps) - 1) * self.shape(warps[0]).loops  # the copies past the one ``_fill`` counts
        text = self._fill(warps)
        lines = {w: ["{", f"  const int warp_id = {w};  // {PER_WARP_SCOPE}", *(f"  {line}" for line in text), "}"]
                 for w in warps}
        self._emit_switch(warps, lines)


def read_prefix(table_in_shared: bool, warps: int) -> str:
    """The family of a unit's constant reads (``render.READ``): where the constant table's copy is in shared
    memory (``CompileOptions.constant_table`` 'shared'), code emitted for one warp alone reads the table
    itself (``SINGE_KNOWN_CONST``, ``_AT``, ``_PAIR``): ptxas knows the warp there, so its constants sit at
    indices it knows (uniform ``ULDC.64`` loads it keeps, or constant-bank operands) that cost the load queue
    nothing (``timing.WarpCode.constant_class``).  Elsewhere ``SINGE_CONST``: the copy, or the table."""
    return "SINGE_KNOWN_" if table_in_shared and warps == 1 else "SINGE_"


def warp_affine(values: dict[int, int]) -> tuple[int, int] | None:
    """(a, b) with value = a + b * warp for every warp of ``values``, if there are such integers.

    Offsets that grow with the warp in one step (the shared slots a group of warps stores its
    species to, in schedule order) are then one multiply of the warp id, from which ptxas
    addresses every slot by an immediate offset, instead of a table entry per slot, whose
    address ptxas holds in a register across the slab loop (DME viscosity at 8 warps x 4 CTAs,
    sm_90: 912 B of spill stores with the tables, ptxas)."""
    warps = sorted(values)
    step, rest = divmod(values[warps[1]] - values[warps[0]], warps[1] - warps[0])
    if rest:
        return None
    base = values[warps[0]] - step * warps[0]
    return (base, step) if all(values[w] == base + step * w for w in warps) else None


def overlay(programs: WarpPrograms, index_tables: bool = True, roll: bool = True,
            table_copy: bool | None = None) -> OverlaidKernel:
    """Overlay every warp's program into one kernel body (``index_tables``:
    share code between warps whose offsets differ, reading them from tables;
    ``roll``: emit the isomorphic runs of an operation as loops,
    ``lowering.find_loops``; ``table_copy``: the constant table's copy in shared memory, None: where
    ``programs.constant_table`` is 'shared', ``codegen.lay_out`` resolving 'auto').  Where
    ``programs.constant_table`` is 'bank', the units with loops run per warp (``OverlaidKernel.loops_per_warp``)."""
    copy = programs.constant_table == "shared" if table_copy is None else table_copy
    return Overlay(programs, index_tables, roll, copy, programs.loops_per_warp).run()
