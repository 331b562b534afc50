"""The table-loop item of warp programs: a loop over rows of a mechanism table.

A ``TableLoop`` is one warp's share of one phase of a table-form kernel
(``singe.kernels.table_form``): its body runs once per row ``begin .. end-1``
of the phase's table, reading the constants of the row from global memory,
per-point values from workspace slots (``reads``: (value, slot)) and global
inputs (``loads``: (field, index)), and writing per-point values to slots
(``writes``) and global outputs (``stores``).  What the body computes is
defined once, by the simulator (``singe.sim.tables``), and rendered as a
loop by codegen (``singe.codegen.tables``).

To the barrier proof (``singe.programs.verify``) a table loop is what it
does to the slots: its loads, then a computation of its writes from them,
then its stores (``expand_table_loops``), so every access of every row is
checked exactly as a shared-memory access is.
"""

from __future__ import annotations

import dataclasses
from collections import Counter
from dataclasses import dataclass

from singe.kernels.ir import Instr, Operation, Reg
from singe.programs import Compute, SharedLoad, SharedStore, WarpProgram, WarpPrograms


@dataclass(frozen=True, eq=False)
class TableLoop:
    """Rows ``begin:end`` of phase ``phase`` of ``tables``, run by one warp."""

    phase: str
    begin: int
    end: int
    tables: object
    reads: tuple[tuple[str, int], ...]
    writes: tuple[tuple[str, int], ...]
    loads: tuple[tuple[str, int], ...]
    stores: tuple[tuple[str, int], ...] = ()
    counts: Counter = dataclasses.field(default_factory=Counter)

    def __str__(self) -> str:
        return (f"table {self.phase} rows {self.begin}:{self.end}  // reads {len(self.reads)} slots, "
                f"writes {len(self.writes)}, {len(self.loads)} global loads, {len(self.stores)} global stores")

    def access_op(self) -> Operation:
        """The loop's global-memory accesses as an operation of ``ldg`` / ``stg`` instructions
        (which fields and rows it touches; not what it computes)."""
        instrs = [Instr("ldg", f"{self.phase}.in{k}", (), name, index) for k, (name, index) in enumerate(self.loads)]
        source = Reg(instrs[0].dst) if instrs else Reg("_")
        instrs += [Instr("stg", None, (source,), name, index) for name, index in self.stores]
        return Operation(f"table {self.phase} {self.begin}:{self.end}", "table", tuple(instrs), (), ())

    def expanded(self) -> list:
        """The loop as the barrier proof sees it: slot loads, a computation, slot stores."""
        compute = Operation(f"table {self.phase} {self.begin}:{self.end}", "table", (),
                            tuple(v for v, _ in self.reads), tuple(v for v, _ in self.writes))
        return ([SharedLoad(v, s) for v, s in self.reads] + [Compute(compute)] +
                [SharedStore(v, s) for v, s in self.writes])


def expand_table_loops(programs: WarpPrograms) -> WarpPrograms:
    """``programs`` with every ``TableLoop`` replaced by its ``expanded`` items."""
    if not any(isinstance(item, TableLoop) for p in programs.programs for item in p.items):
        return programs
    expanded = []
    for program in programs.programs:
        items = []
        for item in program.items:
            items.extend(item.expanded() if isinstance(item, TableLoop) else [item])
        expanded.append(WarpProgram(program.warp, tuple(items)))
    return dataclasses.replace(programs, programs=tuple(expanded))


def program_ops(programs: WarpPrograms) -> list[Operation]:
    """The operations whose instructions touch global memory: every Compute's, every table loop's accesses."""
    ops = []
    for program in programs.programs:
        for item in program.items:
            if isinstance(item, Compute):
                ops.append(item.op)
            elif isinstance(item, TableLoop):
                ops.append(item.access_op())
    return ops
