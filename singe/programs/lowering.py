"""Code units: what overlay aligns across warps.

A warp program becomes a list of units.  A ``ComputeUnit`` is an operation
together with the shared-memory loads right before it that only it reads
(emitted as reads where the operation uses them) and the stores right after
it of outputs not read again from the register (emitted as writes where
they are computed).  Other items stay units of their own.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from singe.kernels.ir import Instr, Operation
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
    """The units of one warp's program, in its order."""
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
