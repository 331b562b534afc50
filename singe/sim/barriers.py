"""Named barriers (PTX ``bar.arrive`` / ``bar.sync``), their semantics written once.

Each barrier id has a current *generation*: the thread count its first
arrival declared, the threads counted so far (32 per warp), who was counted
and who waits.  An arrival or sync counts its warp; the arrival that brings
the count to the expected number completes the generation, which releases
its waiters and leaves the id free for the next one.  The simulator (with
hazard checks and happens-before clocks) and the timing model (with
barrier latency) both count through ``NamedBarriers``.
"""

from __future__ import annotations

from dataclasses import dataclass, field

WARP_SIZE = 32


@dataclass
class Generation:
    """The current generation of one named barrier; ``clock`` is what the
    simulator joins over its members (None in the timing model)."""

    expected: int
    clock: object = None
    count: int = 0
    members: list = field(default_factory=list)
    waiters: list = field(default_factory=list)

    def describe(self) -> str:
        who = ", ".join(f"warp {m[0]} item {m[1]}" for m in self.members)
        return f"{self.count} of {self.expected} threads arrived ({who})"


class NamedBarriers:
    """The current generation of every barrier id in use."""

    def __init__(self):
        self.current: dict[int, Generation] = {}

    def generation(self, barrier_id: int, threads: int, clock=None) -> Generation:
        """The id's current generation; a new one expecting ``threads`` if none is open."""
        if barrier_id not in self.current:
            self.current[barrier_id] = Generation(threads, clock)
        return self.current[barrier_id]

    def count(self, barrier_id: int, member, waiter=None) -> list | None:
        """Count one warp (``member``; ``waiter`` when it blocks, as bar.sync) on
        the id's current generation.  Returns the waiters to release when this
        completes the generation, else None."""
        generation = self.current[barrier_id]
        generation.count += WARP_SIZE
        generation.members.append(member)
        if waiter is not None:
            generation.waiters.append(waiter)
        if generation.count < generation.expected:
            return None
        del self.current[barrier_id]
        return generation.waiters

    def __getitem__(self, barrier_id: int) -> Generation:
        return self.current[barrier_id]

    def items(self):
        return self.current.items()
