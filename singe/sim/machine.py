"""The meaning of every opcode of ``singe.kernels.ir.OPCODES``, in numpy.

This module is the living definition of the instruction set: codegen renders
the same opcodes as CUDA, and a test that runs a kernel through the simulator
runs it through the functions below.  Every value is a per-point double, held
as a numpy array over the points of a slab (one element per lane of every
CTA); ``Imm`` and ``Const`` operands are Python floats, broadcast over points.

An instruction is decoded once into a closure ``run(regs, memory)`` that reads
its operands from the warp's register dictionary ``regs`` (name -> array) and
writes its destination there, so executing an operation is one Python call per
instruction plus the numpy kernel.  Registers are never modified in place:
every instruction binds a fresh array, so a register, a shared-memory slot and
a global row may alias the same array safely.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from operator import itemgetter, methodcaller
from typing import Callable

import numpy as np

from singe.errors import SingeInternalError
from singe.kernels.ir import OPCODES, Const, Imm, Instr, Operand, Operation, Reg


def _fma(a, b, c):
    """a*b + c (numpy rounds twice where the GPU's DFMA rounds once: <= 1 ulp apart)."""
    return np.add(np.multiply(a, b), c)


def _select(a, b, c, d):
    """c where a <= b, else d (both sides are computed, as on the GPU)."""
    return np.where(np.less_equal(a, b), c, d).astype(np.float64)


def _mov(a):
    """A copy of a (a fresh array, so the destination never aliases a mutable source)."""
    return np.array(a, dtype=np.float64, copy=True)


#: Arithmetic opcodes: ``dst = function(*sources)`` elementwise over points, IEEE
#: double semantics (NaN propagates through max/min; log of a negative is NaN,
#: of zero -inf; division by zero is +-inf).
ARITHMETIC: dict[str, Callable[..., np.ndarray]] = {
    "mov": _mov,
    "add": np.add,
    "sub": np.subtract,
    "mul": np.multiply,
    "fma": _fma,
    "div": np.divide,
    "rcp": np.reciprocal,
    "max": np.maximum,
    "min": np.minimum,
    "exp": np.exp,
    "log": np.log,
    "sqrt": np.sqrt,
    "sel": _select,
}

#: Opcodes that touch global memory (``ldg`` reads ``field[index]``, ``stg`` writes it).
GLOBAL = ("ldg", "stg")

if set(ARITHMETIC) | set(GLOBAL) != set(OPCODES):  # pragma: no cover - import-time guard
    raise SingeInternalError("singe.sim.machine does not define exactly the opcodes of OPCODES")


@dataclass
class GlobalMemory:
    """Global memory of one slab as the instructions see it.

    ``loads[(field, index)]``: the row ``inputs[field][index]`` over the slab's
    points (read-only); ``stores[(field, index)]``: a writable view of the row
    ``outputs[field][index]`` over the same points.
    """

    loads: dict[tuple[str, int], np.ndarray]
    stores: dict[tuple[str, int], np.ndarray]


Code = Callable[[dict, GlobalMemory], None]


def _getter(operand: Operand, last_use: bool = False) -> Callable[[dict], object]:
    """A function regs -> operand value (register array, or the scalar of Imm/Const).

    ``last_use``: the register is a temporary read for the last time; the getter
    removes it from ``regs`` so a long operation does not hold every intermediate.
    """
    if isinstance(operand, Reg):
        return methodcaller("pop", operand.name) if last_use else itemgetter(operand.name)
    if isinstance(operand, (Imm, Const)):
        value = float(operand.value)
        return lambda regs: value
    raise SingeInternalError(f"operand {operand!r} is neither Reg, Imm nor Const")


def _decode_global(instr: Instr, dying: frozenset[int]) -> Code:
    """ldg: ``regs[dst] = inputs[field][index]``; stg: ``outputs[field][index] = src``."""
    key = (instr.field, instr.index)
    dst = instr.dst
    if instr.opcode == "ldg":
        def run(regs, memory):
            regs[dst] = memory.loads[key]
        return run
    get = _getter(instr.srcs[0], 0 in dying)

    def run(regs, memory):
        memory.stores[key][...] = get(regs)
    return run


def decode_instr(instr: Instr, dying: frozenset[int] = frozenset()) -> Code:
    """The closure ``run(regs, memory)`` executing ``instr`` (decoded once, run many times).

    ``dying``: positions of source operands that are the last read of a temporary
    (the register is dropped as it is read).
    """
    instr.verify()
    if instr.opcode in GLOBAL:
        return _decode_global(instr, dying)
    function = ARITHMETIC[instr.opcode]
    dst = instr.dst
    getters = [_getter(s, k in dying) for k, s in enumerate(instr.srcs)]
    if len(getters) == 1:
        (g0,) = getters

        def run(regs, memory):
            regs[dst] = function(g0(regs))
    elif len(getters) == 2:
        g0, g1 = getters

        def run(regs, memory):
            regs[dst] = function(g0(regs), g1(regs))
    elif len(getters) == 3:
        g0, g1, g2 = getters

        def run(regs, memory):
            regs[dst] = function(g0(regs), g1(regs), g2(regs))
    else:
        def run(regs, memory):
            regs[dst] = function(*(g(regs) for g in getters))
    return run


def _last_reads(op: Operation) -> tuple[list[frozenset[int]], list[str]]:
    """Per instruction, the operand positions that read a temporary for the last time
    (the rightmost one if it is read twice there); and the temporaries never read."""
    last: dict[str, tuple[int, int]] = {}
    for i, instr in enumerate(op.instrs):
        for k, s in enumerate(instr.srcs):
            if isinstance(s, Reg):
                last[s.name] = (i, k)
    keep = set(op.inputs) | set(op.outputs)
    dying: list[set[int]] = [set() for _ in op.instrs]
    for name, (i, k) in last.items():
        if name not in keep:
            dying[i].add(k)
    unread = [i.dst for i in op.instrs if i.dst is not None and i.dst not in keep and i.dst not in last]
    return [frozenset(d) for d in dying], unread


def decode_operation(op: Operation) -> tuple[Code, ...]:
    """Every instruction of ``op`` decoded, in order; temporaries are dropped after
    their last read, so only the operation's outputs stay in the registers."""
    dying, unread = _last_reads(op)
    code = [decode_instr(instr, d) for instr, d in zip(op.instrs, dying)]
    if unread:
        def drop(regs, memory):
            for name in unread:
                regs.pop(name, None)
        code.append(drop)
    return tuple(code)


def run_code(code: tuple[Code, ...], regs: dict, memory: GlobalMemory) -> None:
    """Execute decoded instructions on a warp's registers (all points of the slab at once)."""
    for run in code:
        run(regs, memory)


def instruction_counts(op: Operation) -> Counter:
    """Instructions of ``op`` by ``OPCODES`` class, plus 'shuffle': one per ``Const`` use.

    'dfma' (the class of fma) is the number of fused multiply-adds.
    """
    counts = Counter(OPCODES[i.opcode].cls for i in op.instrs)
    shuffles = sum(isinstance(s, Const) for i in op.instrs for s in i.srcs)
    if shuffles:
        counts["shuffle"] += shuffles
    return counts


def global_fields(ops, opcode: str) -> dict[str, int]:
    """Field -> number of rows (highest index + 1) accessed by ``opcode`` ('ldg' or 'stg') in ``ops``."""
    rows: dict[str, int] = {}
    for op in ops:
        for instr in op.instrs:
            if instr.opcode == opcode:
                rows[instr.field] = max(rows.get(instr.field, 0), instr.index + 1)
    return rows
