"""Units -> C statement templates with placeholders (paper §5).

A rendered unit is a ``Shape``: lines of CUDA with placeholders for what may
differ between warps running the same code — mechanism constants (``$K0$``),
integer offsets (``$I0$``: shared slots, species indices) and the variables
receiving outputs (``$O0$``) — plus each placeholder's value for this warp.
Two warps whose next units have the same text can share one copy of it.
"""

from __future__ import annotations

from dataclasses import dataclass

from singe.kernels.registry import POINT_INPUTS
from singe.programs.lowering import BarrierUnit, ComputeUnit, LoadUnit, StoreUnit, Unit, live_instructions
from singe.errors import SingeInternalError
from singe.kernels.ir import NULLABLE_INPUTS, Const, Imm, Instr, Reg
from singe.programs import Arrive, FullSync, Sync

EXPRESSIONS = {
    "mov": "{0}", "add": "{0} + {1}", "sub": "{0} - {1}", "mul": "{0} * {1}", "fma": "fma({0}, {1}, {2})",
    "div": "{0} / {1}", "rcp": "1.0 / {0}", "max": "fmax({0}, {1})", "min": "fmin({0}, {1})",
    "exp": "singe_exp({0})", "log": "log({0})", "sqrt": "sqrt({0})", "sel": "singe_select({0}, {1}, {2}, {3})",
}
# The data-parallel baseline keeps the CUDA library's exp: there ptxas spills
# less with it than with the branch-free singe_exp (DME diffusion at sm_90:
# 3144 against 3644 B, n-heptane diffusion 10792 against 25292 B).
BASELINE_EXPRESSIONS = {**EXPRESSIONS, "exp": "exp({0})"}
MAX_COMMENT_VALUES = 6


@dataclass(frozen=True)
class Shape:
    """Lines with placeholders and this warp's values for them."""

    lines: tuple[str, ...]
    ints: tuple[int, ...]
    consts: tuple[float, ...]
    outputs: tuple[str, ...]

    @property
    def key(self) -> tuple[str, ...]:
        return self.lines


def literal(value: float) -> str:
    """A C double literal that reads back exactly."""
    text = repr(float(value))
    if text in ("inf", "-inf", "nan"):
        raise SingeInternalError(f"cannot write {text} as a constant")
    return text if any(c in text for c in ".e") else text + ".0"


def global_address(field: str, index: str) -> str:
    if field in POINT_INPUTS:
        return f"{field}[point]"
    return f"{field}[{index} * species_stride + point]"


def load_expression(field: str, index: str) -> str:
    """A read of global memory; 0.0 where the field may be NULL and is."""
    address = f"__ldg(&{global_address(field, index)})"
    return f"({field} != nullptr ? {address} : 0.0)" if field in NULLABLE_INPUTS else address


class _ShapeBuilder:
    """Accumulates one shape's lines and placeholder values."""

    def __init__(self):
        self.lines: list[str] = []
        self.ints: list[int] = []
        self.consts: list[float] = []
        self.outputs: list[str] = []

    def int_slot(self, value: int) -> str:
        self.ints.append(int(value))
        return f"$I{len(self.ints) - 1}$"

    def const(self, value: float) -> str:
        self.consts.append(float(value))
        return f"$K{len(self.consts) - 1}$"

    def output(self, value: str) -> str:
        self.outputs.append(value)
        return f"$O{len(self.outputs) - 1}$"

    def shape(self) -> Shape:
        return Shape(tuple(self.lines), tuple(self.ints), tuple(self.consts), tuple(self.outputs))


def comment_values(values) -> str:
    values = list(values)
    shown = ", ".join(values[:MAX_COMMENT_VALUES])
    return shown + (f" (+{len(values) - MAX_COMMENT_VALUES} more)" if len(values) > MAX_COMMENT_VALUES else "")


def render_unit(unit: Unit, names: dict[str, str], threads: int) -> Shape:
    """The shape of ``unit`` for a warp whose register values are named by ``names``."""
    b = _ShapeBuilder()
    if isinstance(unit, ComputeUnit):
        _render_compute(unit, names, b)
    elif isinstance(unit, LoadUnit):
        b.lines.append(f"{b.output(unit.value)} = shared[{b.int_slot(unit.slot)}][lane];")
    elif isinstance(unit, StoreUnit):
        b.lines.append(f"shared[{b.int_slot(unit.slot)}][lane] = {names[unit.value]};")
    elif isinstance(unit, BarrierUnit):
        b.lines.append(_render_barrier(unit.item, threads))
    return b.shape()


def _render_barrier(item, threads: int) -> str:
    if isinstance(item, FullSync):
        return f"SINGE_BAR_SYNC(0, {threads});  // all warps: {item.reason}"
    macro = "SINGE_BAR_ARRIVE" if isinstance(item, Arrive) else "SINGE_BAR_SYNC"
    if not isinstance(item, (Arrive, Sync)):
        raise SingeInternalError(f"not a barrier: {item}")
    return f"{macro}({item.barrier_id}, {item.threads});  // point {item.point}: {comment_values(item.orders)}"


def _render_compute(unit: ComputeUnit, names: dict[str, str], b: _ShapeBuilder) -> None:
    op = unit.op
    temps: dict[str, str] = {}
    inline: dict[str, str] = {}
    b.lines.append(f"{{  // {op.kind} operation")
    instrs = live_instructions(op.instrs, set(unit.keep) | set(unit.stores))
    _preload_overwritten(unit, instrs, inline, b)
    for instr in instrs:
        if instr.opcode == "stg":
            index = b.int_slot(instr.index)
            value = _operand(instr.srcs[0], unit, names, temps, inline, b)
            b.lines.append(f"  if (valid) {global_address(instr.field, index)} = {value};")
            continue
        expression = _expression(instr, unit, names, temps, inline, b)
        temp = f"t{len(temps)}"
        temps[instr.dst] = temp
        b.lines.append(f"  const double {temp} = {expression};")
        if instr.dst in unit.keep:
            b.lines.append(f"  {b.output(instr.dst)} = {temp};")
        if instr.dst in unit.stores:
            b.lines.append(f"  shared[{b.int_slot(unit.stores[instr.dst])}][lane] = {temp};")
    b.lines.append("}")


def _preload_overwritten(unit: ComputeUnit, instrs: list[Instr], inline: dict[str, str], b: _ShapeBuilder) -> None:
    """Loads whose slot this unit stores to before one of the load's uses are
    read first, into temporaries: stores are written where their value is
    computed, so a later read in place would see the new value.  (A running
    sum read and rewritten by the same instruction needs no temporary.)"""
    last_use: dict[str, int] = {}
    for i, instr in enumerate(instrs):
        for name in instr.registers_read():
            last_use[name] = i
    first_store: dict[int, int] = {}
    for k, instr in enumerate(instrs):
        if instr.dst in unit.stores:
            first_store.setdefault(unit.stores[instr.dst], k)
    for value, slot in unit.loads.items():
        if slot in first_store and first_store[slot] < last_use.get(value, -1):
            name = f"l{len(inline)}"
            b.lines.append(f"  const double {name} = shared[{b.int_slot(slot)}][lane];")
            inline[value] = name


def _expression(instr: Instr, unit, names, temps, inline, b: _ShapeBuilder) -> str:
    if instr.opcode == "ldg":
        return load_expression(instr.field, b.int_slot(instr.index))
    operands = [_operand(s, unit, names, temps, inline, b) for s in instr.srcs]
    return EXPRESSIONS[instr.opcode].format(*operands)


def _operand(src, unit: ComputeUnit, names, temps, inline, b: _ShapeBuilder) -> str:
    if isinstance(src, Imm):
        return literal(src.value)
    if isinstance(src, Const):
        return b.const(src.value)
    if not isinstance(src, Reg):
        raise SingeInternalError(f"unknown operand {src!r}")
    if src.name in temps:
        return temps[src.name]
    if src.name in unit.loads:
        if src.name not in inline:
            inline[src.name] = f"shared[{b.int_slot(unit.loads[src.name])}][lane]"
        return inline[src.name]
    if src.name in names:
        return names[src.name]
    raise SingeInternalError(f"{unit.op.name}: no register holds {src.name}")
