"""The warp simulator: executes ``WarpPrograms`` with named-barrier semantics.

``singe.sim.machine`` defines every opcode (the living definition of the
instruction set); ``singe.sim.simulator`` interleaves warps, enforces PTX
``bar.arrive`` / ``bar.sync`` semantics and reports races, deadlocks and
barrier misuse.
"""

from singe.sim.machine import ARITHMETIC, decode_instr, decode_operation, instruction_counts
from singe.sim.simulator import Hazard, SimulationError, SimulationResult, simulate

__all__ = ["ARITHMETIC", "Hazard", "SimulationError", "SimulationResult", "decode_instr",
           "decode_operation", "instruction_counts", "simulate"]
