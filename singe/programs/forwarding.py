"""Shared values the compiler keeps in registers between barriers, and the
fences that bound them.

The shared accesses codegen emits are plain loads and stores and the
barriers clobber memory, so between two barriers NVVM forwards a shared
value: a slot loaded or stored once is read from the register by every later
load of it (``singe.timing.issued_shared`` counts the accesses issued).  Each
such value holds a register (two: doubles) from its first access to its last
read, beyond what the register plan's liveness counts (it reads every shared
input in place).  In the chemistry kernels' long straight-line stretches
between barriers those registers add up: Alzueta's chemistry at 8 warps
(sm_90) needed 152 registers without spills on its warp 7, 56 with every
shared read fresh, its plan floor being 60.

A fence (``SINGE_FENCE()``: an empty ``asm volatile`` with a memory clobber,
no instruction) ends the forwarding as a barrier does.  ``fence_positions``
places the fewest fences, greedily, so that no more than ``allowed`` values
are held across any unit boundary; the loads after a fence are issued again
(the timing model counts them), so a kernel whose held values fit gets none.
"""

from __future__ import annotations

from singe.programs.lowering import BarrierUnit, ComputeUnit, LoadUnit, StoreUnit


def accesses(unit) -> tuple[list[int], list[int]]:
    """The shared slots ``unit`` reads and writes."""
    if isinstance(unit, ComputeUnit):
        return list(unit.loads.values()), list(unit.stores.values())
    if isinstance(unit, LoadUnit):
        return [unit.slot], []
    if isinstance(unit, StoreUnit):
        return [], [unit.slot]
    return [], []


def held_values(units, fences=frozenset()) -> list[int]:
    """Per unit boundary ``k`` (before unit ``k``), the shared values held in
    registers across it: slots accessed before it, since the last barrier or
    fence, and read again after it before the next one."""
    steps = [0] * (len(units) + 2)  # held[b] = sum(steps[:b + 1])
    last: dict[int, int] = {}  # slot -> its last access since the interval began
    for k, unit in enumerate(units):
        if isinstance(unit, BarrierUnit) or k in fences:
            last.clear()
        reads, writes = accesses(unit)
        for slot in reads:
            if slot in last:  # held across the boundaries last + 1 .. k
                steps[last[slot] + 1] += 1
                steps[k + 1] -= 1
        for slot in reads + writes:
            last[slot] = k
    held, total = [], 0
    for step in steps[:-1]:
        total += step
        held.append(total)
    return held


def fence_positions(units, allowed) -> frozenset[int]:
    """The unit indices before which a fence goes so that at most ``allowed``
    values (a number, or one per boundary) are held across any boundary:
    scanning forward, a fence before the first unit whose boundary would hold
    more (greedy: each fence as late as possible)."""
    fences: set[int] = set()
    limits = [allowed] * (len(units) + 1) if isinstance(allowed, int) else list(allowed)
    while True:
        held = held_values(units, frozenset(fences))
        over = next((k for k, n in enumerate(held) if n > max(limits[k], 0)), None)
        if over is None:
            return frozenset(fences)
        fences.add(over)
