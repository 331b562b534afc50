"""Dispatch by warp: each warp's whole program as one case of a single switch.

The overlay (``singe.codegen.overlay``) shares code between warps whose next
units agree, at the cost of a warp test (a bit-mask test, or a ``switch``
lowered to a compare tree or a jump table) at every change of group.  The
chemistry kernels' warps run different reactions, so little is shared and
those tests dominate: n-heptane's 16-warp kernel passed 132 of them per warp
and point.  Here every warp's program is one case of one ``switch``, and the
switch sits outside the slab loop, each case looping over the slabs
on its own (``unswitched``): a warp dispatches once per kernel, not once per
slab.  (Inside the loop, NVVM lowers a switch of 8 or 16 cases to a
compare tree ending in two-entry jump tables: 3-4 compares and branches per
warp and slab on sm_90.)  Constants, integer offsets and output variables are filled as the
overlay fills them (per-warp constant slots; variable names reused between
warps, which never run each other's cases).  A ``SINGE_FENCE()`` goes before
each unit of the register plan's ``fences`` (``singe.programs.forwarding``).
"""

from __future__ import annotations

from singe.codegen.overlay import Block, OverlaidKernel, Overlay
from singe.programs import WarpPrograms


FENCE = "SINGE_FENCE();  // the shared values read so far are read anew (singe.programs.forwarding)"


class WarpSwitch(Overlay):
    """An overlay that never shares a unit between warps (see the module docstring)."""

    def run(self) -> OverlaidKernel:
        switch = Block("switch", tuple(range(self.warps)))
        plan = self.programs.plan
        for w in range(self.warps):
            lines = switch.cases.setdefault(w, [])
            fences = plan.fences[w] if plan is not None and plan.fences else frozenset()
            while self.position[w] < len(self.units[w]):
                if self.position[w] in fences:
                    lines.append(FENCE)
                lines.extend(self._fill([w]))
                self._advance([w])
            switch.units += len(self.units[w])
        total = sum(len(u) for u in self.units)
        return OverlaidKernel([switch] if self.warps > 1 else self._single(switch), self.constants.table(),
                              self.indices.rows, len(self.variables.holders), 0, total)

    def _ending(self, warps) -> dict:
        """No renaming of outputs after ending inputs: a warp's case is its own straight-line code."""
        return {}

    @staticmethod
    def _single(switch: Block) -> list[Block]:
        """One warp: its program, with no dispatch at all."""
        return [Block("all", (0,), switch.cases.get(0, []))]


def unswitched(overlaid: OverlaidKernel) -> bool:
    """The kernel body is one switch on the warp id and nothing else: codegen
    puts it outside the slab loop (a loop per case)."""
    return len(overlaid.blocks) == 1 and overlaid.blocks[0].kind == "switch"


def warp_switch(programs: WarpPrograms) -> OverlaidKernel:
    """Every warp's program as one case of a single switch on the warp id."""
    return WarpSwitch(programs, index_tables=False).run()
