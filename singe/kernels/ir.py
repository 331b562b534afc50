"""The dataflow graph IR: operations made of straight-line instructions.

An *operation* is the unit the mapper places on a warp (a species' viscosity,
one outer species of the Wilke sum, a column of the diffusion matrix).  Its
body is a list of ``Instr`` over per-point double values: every lane of a
warp runs it for its own point.  Values that cross operations are *graph
values* (named ``Reg``s listed in ``inputs`` / ``outputs``); others are
temporaries local to the operation.

The meaning of every opcode is defined once, by the simulator
(``singe.sim.machine``); ``OPCODES`` here gives only arity, class and cost.
"""

from __future__ import annotations

import functools
import math
from collections import Counter
from dataclasses import dataclass
from typing import Union

from singe.errors import SingeInternalError
from singe.graphs import topological_order


@dataclass(frozen=True)
class Reg:
    """A per-point double held in a register (graph value or temporary)."""

    name: str

    def __str__(self) -> str:
        return f"%{self.name}"


@dataclass(frozen=True)
class Imm:
    """A literal number written into the code (1.0, 0.5, the clamp 1e-20)."""

    value: float

    def __str__(self) -> str:
        return repr(self.value)


@dataclass(frozen=True)
class Const:
    """A mechanism constant of the operation (fit coefficients, weight ratios).

    Codegen stripes each warp's constants across its lanes and broadcasts
    them with shuffles; the simulator counts one shuffle per use.
    """

    value: float

    def __str__(self) -> str:
        return f"#{self.value!r}"


Operand = Union[Reg, Imm, Const]


@dataclass(frozen=True)
class OpcodeInfo:
    """Arity, class (for counts and the timing model) and FLOPs of an opcode."""

    arity: int
    cls: str
    flops: int


OPCODES: dict[str, OpcodeInfo] = {
    "mov": OpcodeInfo(1, "move", 0),
    "add": OpcodeInfo(2, "dadd", 1),
    "sub": OpcodeInfo(2, "dadd", 1),
    "mul": OpcodeInfo(2, "dmul", 1),
    "fma": OpcodeInfo(3, "dfma", 2),
    "div": OpcodeInfo(2, "ddiv", 8),   # Newton iterations on DFMA units
    "rcp": OpcodeInfo(1, "ddiv", 6),
    "max": OpcodeInfo(2, "dmax", 1),  # max(x, c), c a positive constant (a floor): Instr.verify
    "min": OpcodeInfo(2, "dmax", 1),  # min(x, c), c a positive constant (a cap)
    "exp": OpcodeInfo(1, "special", 20),  # ~10 DFMA in CUDA's exp
    "log": OpcodeInfo(1, "special", 20),
    "sqrt": OpcodeInfo(1, "special", 8),
    "sel": OpcodeInfo(4, "select", 1),  # a <= b ? c : d
    "ldg": OpcodeInfo(0, "global_load", 0),
    "stg": OpcodeInfo(1, "global_store", 0),
}

# Inputs a caller may pass as NULL (None from Python): the kernel reads 0.0 in
# their place, which means what the value says.
NULLABLE_INPUTS = {"dt": "no stiffness removal, as dt = 0", "diffusion_source": "zero diffusion source terms"}


@dataclass(frozen=True)
class Instr:
    """``dst = opcode(srcs)``; ``ldg``/``stg`` read/write ``field[index]`` of global memory."""

    opcode: str
    dst: str | None
    srcs: tuple[Operand, ...] = ()
    field: str | None = None
    index: int = 0

    def __str__(self) -> str:
        args = ", ".join(str(s) for s in self.srcs)
        if self.opcode == "ldg":
            return f"%{self.dst} = ldg {self.field}[{self.index}]"
        if self.opcode == "stg":
            return f"stg {self.field}[{self.index}], {args}"
        return f"%{self.dst} = {self.opcode} {args}"

    def registers_read(self) -> list[str]:
        return [s.name for s in self.srcs if isinstance(s, Reg)]

    def verify(self) -> None:
        info = OPCODES.get(self.opcode)
        if info is None:
            raise SingeInternalError(f"unknown opcode {self.opcode!r}")
        if len(self.srcs) != info.arity:
            raise SingeInternalError(f"{self}: {self.opcode} takes {info.arity} operands")
        if (self.dst is None) != (self.opcode == "stg"):
            raise SingeInternalError(f"{self}: only stg has no destination")
        if self.opcode in ("ldg", "stg") and self.field is None:
            raise SingeInternalError(f"{self}: global access without a field")
        if self.opcode in ("max", "min") and not (isinstance(self.srcs[1], (Const, Imm))
                                                  and 0.0 < float(self.srcs[1].value) < math.inf):
            raise SingeInternalError(f"{self}: {self.opcode} takes a positive finite constant second operand "
                                     f"(codegen compares bit patterns: singe_{self.opcode})")


@dataclass(frozen=True)
class Operation:
    """A unit of work: instructions, the graph values it reads and writes.

    ``replicated`` operations (ln T, 1/T ...) are computed by every warp that
    needs their outputs instead of being communicated.  ``reduction`` marks an
    associative sum of its inputs, which mapping may split into per-warp
    partial sums.
    """

    name: str
    kind: str
    instrs: tuple[Instr, ...]
    inputs: tuple[str, ...]
    outputs: tuple[str, ...]
    replicated: bool = False
    reduction: bool = False

    @functools.cached_property
    def flops(self) -> int:
        return sum(OPCODES[i.opcode].flops for i in self.instrs)

    @functools.cached_property
    def constants(self) -> tuple[float, ...]:
        return tuple(s.value for i in self.instrs for s in i.srcs if isinstance(s, Const))

    @functools.cached_property
    def temporaries(self) -> int:
        """Peak number of simultaneously live temporaries (register estimate)."""
        last = {}
        for i, instr in enumerate(self.instrs):
            for name in instr.registers_read():
                last[name] = i
        live: set[str] = set()
        peak = 0
        for i, instr in enumerate(self.instrs):
            if instr.dst is not None:
                live.add(instr.dst)
            peak = max(peak, len(live))
            live = {v for v in live if last.get(v, -1) > i}
        return peak

    def counts(self) -> Counter:
        """Instructions by class."""
        return Counter(OPCODES[i.opcode].cls for i in self.instrs)

    def verify(self) -> None:
        defined = set(self.inputs)
        for instr in self.instrs:
            instr.verify()
            for name in instr.registers_read():
                if name not in defined:
                    raise SingeInternalError(f"{self.name}: {instr} reads %{name} before it is defined")
            if instr.dst is not None:
                if instr.dst in defined:
                    raise SingeInternalError(f"{self.name}: %{instr.dst} assigned twice")
                defined.add(instr.dst)
        missing = set(self.outputs) - defined
        if missing:
            raise SingeInternalError(f"{self.name}: outputs {sorted(missing)} never written")

    def __str__(self) -> str:
        flags = "".join(f" [{f}]" for f, on in (("replicated", self.replicated),
                                                 ("reduction", self.reduction)) if on)
        head = (f"op {self.name} ({self.kind}, {self.flops} flops, {len(self.constants)} constants){flags}: "
                f"{', '.join(self.inputs) or '-'} -> {', '.join(self.outputs) or '-'}")
        return "\n".join([head] + [f"    {i}" for i in self.instrs])


@dataclass(frozen=True)
class DataflowGraph:
    """Operations and the data edges implied by their inputs and outputs.

    ``outputs`` names the kernel's global outputs in order (field, index);
    ``point_count`` is 1 (one value per point) for every graph value.
    """

    kernel: str
    mechanism: str
    operations: tuple[Operation, ...]
    n_species: int

    @property
    def by_name(self) -> dict[str, Operation]:
        return {op.name: op for op in self.operations}

    def producers(self) -> dict[str, str]:
        """Graph value -> name of the operation that writes it."""
        return {value: op.name for op in self.operations for value in op.outputs}

    def consumers(self) -> dict[str, list[str]]:
        """Graph value -> names of the operations that read it."""
        result: dict[str, list[str]] = {}
        for op in self.operations:
            for value in op.inputs:
                result.setdefault(value, []).append(op.name)
        return result

    def predecessors(self, op: Operation) -> list[str]:
        producers = self.producers()
        return sorted({producers[v] for v in op.inputs})

    def topological_order(self) -> list[Operation]:
        """Operations in an order where every producer precedes its consumers."""
        producers = self.producers()
        users: dict[str, set[str]] = {}
        for op in self.operations:
            for v in op.inputs:
                users.setdefault(producers[v], set()).add(op.name)
        by_name = self.by_name
        names = topological_order([op.name for op in self.operations], lambda n: sorted(users.get(n, ())))
        order = [by_name[name] for name in names]
        if len(order) != len(self.operations):
            raise SingeInternalError(f"{self.kernel} graph has a cycle")
        return order

    @property
    def flops(self) -> int:
        """FLOPs per point (replicated operations counted once)."""
        return sum(op.flops for op in self.operations)

    def verify(self) -> None:
        """Each value has one producer, every input is produced, no cycle, every op sound."""
        seen: dict[str, str] = {}
        for op in self.operations:
            op.verify()
            for value in op.outputs:
                if value in seen:
                    raise SingeInternalError(f"value {value} written by {seen[value]} and {op.name}")
                seen[value] = op.name
        for op in self.operations:
            for value in op.inputs:
                if value not in seen:
                    raise SingeInternalError(f"{op.name} reads {value}, which no operation writes")
        names = [op.name for op in self.operations]
        if len(set(names)) != len(names):
            raise SingeInternalError("operation names are not unique")
        self.topological_order()

    def __str__(self) -> str:
        head = (f"graph {self.kernel} of {self.mechanism}: {len(self.operations)} operations, "
                f"{self.flops} flops per point")
        return "\n".join([head] + [str(op) for op in self.operations])


class InstrBuilder:
    """Writes an operation's instruction list with fresh temporary names."""

    def __init__(self, prefix: str):
        self.prefix = prefix
        self.instrs: list[Instr] = []
        self._count = 0

    def temp(self) -> str:
        self._count += 1
        return f"{self.prefix}.t{self._count}"

    def emit(self, opcode: str, *srcs: Operand, dst: str | None = None) -> Reg:
        name = dst or self.temp()
        self.instrs.append(Instr(opcode, name, tuple(srcs)))
        return Reg(name)

    def load(self, field_name: str, index: int = 0, dst: str | None = None) -> Reg:
        name = dst or self.temp()
        self.instrs.append(Instr("ldg", name, (), field_name, index))
        return Reg(name)

    def store(self, field_name: str, index: int, src: Reg) -> None:
        self.instrs.append(Instr("stg", None, (src,), field_name, index))

    def polynomial(self, coefficients, x: Reg, dst: str | None = None) -> Reg:
        """c0 + c1 x + c2 x^2 + ... by Horner's rule with FMAs (constants per operation)."""
        *lower, top = coefficients
        acc: Operand = Const(float(top))
        for k, c in enumerate(reversed(lower)):
            last = k == len(lower) - 1
            acc = self.emit("fma", acc, x, Const(float(c)), dst=dst if last else None)
        return acc  # type: ignore[return-value]


@dataclass(frozen=True)
class Regrouping:
    """A kernel's graph regrouped once its operations have warps (``KernelSpec.regroup``).

    ``graph`` and ``warp_of``: the new operations and their warps;
    ``phases``: operation -> phase, for operations that run in phases (every
    warp meets at a full barrier before the first operation of each phase
    after the first, so that a phase may update in place what the last one
    wrote); ``chains``: value -> the running sum it is a step of, each kept in
    one shared slot updated in place (placement 'accumulate'); ``layout``:
    values and chains whose shared slots come first, in this order (so that
    a loop over species reads slots in arithmetic progression, the same for
    every warp up to a shift)."""

    graph: DataflowGraph
    warp_of: dict[str, int]
    phases: dict[str, int]
    chains: dict[str, str]
    layout: tuple[str, ...] = ()
