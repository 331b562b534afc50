"""Warp programs: the IR that the simulator executes and codegen renders.

One ``WarpProgram`` per warp: an ordered list of items.  A ``Compute`` runs an
operation's instructions on the warp's registers; ``SharedStore`` /
``SharedLoad`` move a value between a register and a shared-memory slot
(``[slot][lane]``, one double per lane); ``Arrive`` / ``Sync`` are PTX
``bar.arrive`` / ``bar.sync`` on a named barrier with a thread count, each
naming the values it orders (barriers say why).  ``FullSync`` is
``bar.sync 0`` for every thread of the CTA.

All warps of a CTA work on the same 32 points (lane l of every warp handles
point l); a CTA loops over slabs of 32 points, running its program once per
slab.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Union

from singe.kernels.ir import Operation

if TYPE_CHECKING:  # the plan is computed from the lowering, which reads these classes
    from singe.programs.plan import RegisterPlan

WARP_SIZE = 32
FULL_BARRIER_ID = 0


@dataclass(frozen=True)
class Compute:
    op: Operation

    def __str__(self) -> str:
        return f"compute {self.op.name}"


@dataclass(frozen=True)
class SharedStore:
    value: str
    slot: int

    def __str__(self) -> str:
        return f"st.shared [{self.slot}] <- {self.value}"


@dataclass(frozen=True)
class SharedLoad:
    value: str
    slot: int

    def __str__(self) -> str:
        return f"ld.shared {self.value} <- [{self.slot}]"


@dataclass(frozen=True)
class Arrive:
    """``bar.arrive barrier_id, threads``: count this warp, do not wait."""

    barrier_id: int
    threads: int
    point: int
    orders: tuple[str, ...] = ()

    def __str__(self) -> str:
        return f"bar.arrive {self.barrier_id}, {self.threads}  // point {self.point}: {', '.join(self.orders)}"


@dataclass(frozen=True)
class Sync:
    """``bar.sync barrier_id, threads``: count this warp, wait for the others."""

    barrier_id: int
    threads: int
    point: int
    orders: tuple[str, ...] = ()

    def __str__(self) -> str:
        return f"bar.sync {self.barrier_id}, {self.threads}  // point {self.point}: {', '.join(self.orders)}"


@dataclass(frozen=True)
class FullSync:
    """``bar.sync 0, <all threads>``: every warp of the CTA meets here (end of a
    slab, or to free every named barrier id when they run out)."""

    reason: str = ""

    def __str__(self) -> str:
        return f"bar.sync 0 (all warps)  // {self.reason}"


Item = Union[Compute, SharedStore, SharedLoad, Arrive, Sync, FullSync]


@dataclass(frozen=True)
class SyncPoint:
    """A synchronization point of the total order, on a named barrier.

    ``arrivers`` only arrive; ``syncers`` wait.  ``values`` are what it orders:
    producer -> consumer data, or reads -> the overwrite of a reused slot.
    """

    number: int
    barrier_id: int
    arrivers: tuple[int, ...]
    syncers: tuple[int, ...]
    values: tuple[str, ...] = ()

    @property
    def participants(self) -> tuple[int, ...]:
        return tuple(sorted(set(self.arrivers) | set(self.syncers)))

    @property
    def threads(self) -> int:
        return WARP_SIZE * len(self.participants)


@dataclass(frozen=True)
class WarpProgram:
    warp: int
    items: tuple[Item, ...]

    def computes(self) -> list[Operation]:
        return [item.op for item in self.items if isinstance(item, Compute)]


@dataclass(frozen=True)
class WarpPrograms:
    """Every warp's program and what they share.

    ``shared_slots``: number of [32]-double slots of shared memory;
    ``barrier_limit``: named barrier ids available (ids 1 .. limit-1 for
    points, 0 for ``FullSync``); ``plan``: the register plan
    (``singe.programs.plan``; None for hand-built programs);
    ``constants``: the mechanism constants each warp uses; ``workspace``:
    the slots live in a per-CTA workspace in global memory rather than in
    shared memory (the table form, ``singe.programs.tables``); ``dispatch``:
    how codegen makes one body of the programs ('overlay' or 'switch',
    ``CompileOptions.dispatch_of``); ``constant_table``: where the overlay reads its per-warp
    constant tables ('auto', 'cache', 'shared' or 'bank', ``CompileOptions.constant_table``; 'cache' for the
    switch, whose constants sit at indices ptxas knows); ``table_budget``: the bytes of shared memory a
    CTA has beside its exchange slots at the CTAs per SM it is compiled for, which the table's copy
    must fit under 'auto' (``codegen.lay_out``); ``prefetch``: each slab prefetches the next one's
    inputs (``CompileOptions.prefetch``).
    """

    kernel: str
    mechanism: str
    warps: int
    programs: tuple[WarpProgram, ...]
    sync_points: tuple[SyncPoint, ...]
    shared_slots: int
    barrier_limit: int
    plan: RegisterPlan | None = None
    workspace: bool = False
    dispatch: str = "overlay"
    constant_table: str = "cache"
    table_budget: int = 0
    prefetch: bool = False

    @property
    def registers(self) -> tuple[int, ...]:
        """Registers per thread each warp needs with its constants in registers (the plan's)."""
        return self.plan.per_warp if self.plan else ()

    @property
    def warnings(self) -> tuple[str, ...]:
        """What the compiler warns of (registers that will or may spill)."""
        return self.plan.warnings(self.warps) if self.plan else ()

    @property
    def threads(self) -> int:
        return WARP_SIZE * self.warps

    @property
    def loops_per_warp(self) -> bool:
        """The overlay emits each unit with loops once per warp (``constant_table`` 'bank',
        ``codegen.overlay.OverlaidKernel.loops_per_warp``)."""
        return self.constant_table == "bank"

    @property
    def barrier_ids(self) -> list[int]:
        """Named barrier ids the programs use (FullSync's id 0 included)."""
        return sorted({p.barrier_id for p in self.sync_points} | {FULL_BARRIER_ID})

    @property
    def shared_bytes(self) -> int:
        return 0 if self.workspace else self.slot_bytes

    @property
    def slot_bytes(self) -> int:
        """Bytes of the slots per CTA (in shared memory, or the workspace)."""
        return self.shared_slots * WARP_SIZE * 8

    def constants(self, warp: int) -> list[float]:
        """Mechanism constants used by warp ``warp``, in program order."""
        return [c for op in self.programs[warp].computes() for c in op.constants]

    def __str__(self) -> str:
        lines = [f"warp programs {self.kernel} of {self.mechanism}: {self.warps} warps, "
                 f"{len(self.sync_points)} sync points on {len(self.barrier_ids)} barrier ids "
                 f"(limit {self.barrier_limit}), {self.shared_slots} shared slots ({self.shared_bytes} B)"]
        for program in self.programs:
            regs = f", ~{self.registers[program.warp]} registers" if self.registers else ""
            if self.plan is not None and self.plan.warp_budgets:
                regs += f", setmaxnreg {self.plan.warp_budgets[program.warp]}"
            lines.append(f"warp {program.warp} ({len(program.items)} items{regs}):")
            lines.extend(f"    {item}" for item in program.items)
        return "\n".join(lines)
