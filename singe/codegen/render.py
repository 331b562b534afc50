"""Units -> C statement templates with placeholders (paper §5).

A rendered unit is a ``Shape``: lines of CUDA with placeholders for what may
differ between warps running the same code — mechanism constants (``$K0$``),
integer offsets (``$I0$``: shared slots, species indices) and the variables
receiving outputs (``$O0$``) — plus each placeholder's value for this warp, and
``READ``, the family of the constant-table reads, which the overlay fills by who runs the code.
Two warps whose next units have the same text can share one copy of it.
"""

from __future__ import annotations

from dataclasses import dataclass

from singe.kernels.registry import POINT_INPUTS
from singe.programs.lowering import (BarrierUnit, ComputeUnit, LoadUnit, Loop, StoreUnit, Unit,
                                     column_kind, constant_pairs, invariant_loads, unroll_factor,
                                     varying_constants)
from singe.errors import SingeInternalError
from singe.kernels.ir import NULLABLE_INPUTS, Const, Imm, Instr, Reg
from singe.programs import Arrive, FullSync, Sync

EXPRESSIONS = {
    "mov": "{0}", "add": "{0} + {1}", "sub": "{0} - {1}", "mul": "{0} * {1}", "fma": "fma({0}, {1}, {2})",
    "div": "{0} / {1}", "rcp": "1.0 / {0}", "max": "singe_max({0}, {1})", "min": "singe_min({0}, {1})",
    "exp": "singe_exp({0})", "log": "singe_log({0})", "sqrt": "sqrt({0})", "sel": "singe_select({0}, {1}, {2}, {3})",
}
# The data-parallel baseline keeps the CUDA library's exp: there ptxas spills
# less with it than with the branch-free singe_exp (DME diffusion at sm_90:
# 3144 against 3644 B, n-heptane diffusion 10792 against 25292 B).
BASELINE_EXPRESSIONS = {**EXPRESSIONS, "exp": "exp({0})"}
READ = "$R$"
"""The prefix of a constant-table read (``READ + "CONST(slot)"``, ``"CONST_AT(index)"``,
``"CONST_PAIR(index)"``): ``SINGE_`` where several warps share the code, ``SINGE_KNOWN_`` where one warp
runs it alone and the kernel reads the table's copy in shared memory (``codegen.overlay.read_prefix``)."""
MAX_COMMENT_VALUES = 6


@dataclass(frozen=True)
class Shape:
    """Lines with placeholders and this warp's values for them."""

    lines: tuple[str, ...]
    ints: tuple[int, ...]
    consts: tuple[float, ...]
    outputs: tuple[str, ...]
    blocks: tuple[tuple[float, ...], ...] = ()  # $C$: runs of constants a loop reads, iteration-major
    tables: tuple[tuple[int, ...], ...] = ()  # $T$: integers a loop reads, one per iteration
    loops: int = 0  # loops in the lines

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


@dataclass(frozen=True)
class PrefetchPlan:
    """What ``--prefetch`` emits at the start of each slab: the next slab's inputs, ``lines`` 128-byte lines (two
    per row of each input field), line l prefetched by lane l / warps of warp l % warps (``per_lane`` lines a
    lane where there are more lines than threads); ``address``: the C expression of line ``line``'s first
    double at the next slab's point ``at`` (a point field's one row, or row (line >> 1) - first of a
    species-major field)."""

    lines: int
    per_lane: int
    address: str


def prefetch_plan(inputs: list[str], n_species: int, threads: int) -> PrefetchPlan:
    """The ``PrefetchPlan`` of a kernel reading ``inputs`` (fields that may be NULL are not prefetched: ``dt``)."""
    fields = [f for f in inputs if f not in NULLABLE_INPUTS]
    rows = [1 if f in POINT_INPUTS else n_species for f in fields]
    addresses, first = [], 0
    for f, n in zip(fields, rows):
        row = "(line >> 1)" if first == 0 else f"((line >> 1) - {first})"
        addresses.append((2 * (first + n), f"&{f}[at]" if f in POINT_INPUTS else f"&{f}[{row} * species_stride + at]"))
        first += n
    expression = addresses[-1][1]
    for limit, address in reversed(addresses[:-1]):
        expression = f"line < {limit} ? {address} : {expression}"
    lines = 2 * first
    return PrefetchPlan(lines, -(-lines // threads), expression)


def load_expression(field: str, index: str) -> str:
    """A read of global memory; 0.0 where the field may be NULL and is."""
    address = f"__ldg(&{global_address(field, index)})"
    return f"({field} != nullptr ? {address} : 0.0)" if field in NULLABLE_INPUTS else address


class _ShapeBuilder:
    """Accumulates one shape's lines and placeholder values (``pairs``: a loop reads adjacent
    constants of its block two at a time, ``lowering.constant_pairs``; ``per_warp``: its loops are emitted
    once for each warp, ``lowering.unroll_factor``)."""

    def __init__(self, pairs: bool = False, per_warp: bool = False):
        self.pairs = pairs
        self.per_warp = per_warp
        self.lines: list[str] = []
        self.ints: list[int] = []
        self.consts: list[float] = []
        self.outputs: list[str] = []
        self.blocks: list[tuple[float, ...]] = []
        self.tables: list[tuple[int, ...]] = []
        self.loops = 0

    def int_slot(self, value: int) -> str:
        self.ints.append(int(value))
        return f"$I{len(self.ints) - 1}$"

    def const(self, value: float) -> str:
        self.consts.append(float(value))
        return f"$K{len(self.consts) - 1}$"

    def output(self, value: str) -> str:
        self.outputs.append(value)
        return f"$O{len(self.outputs) - 1}$"

    def block(self, values) -> str:
        self.blocks.append(tuple(float(v) for v in values))
        return f"$C{len(self.blocks) - 1}$"

    def int_column(self, values) -> str:
        """An integer that takes ``values`` in a loop's iterations (loop counter ``i``):
        one number, ``base + step * i``, or an entry of the loop table."""
        values = [int(v) for v in values]
        kind = column_kind(values)
        if kind == "fixed":
            return self.int_slot(values[0])
        if kind == "affine":
            return f"({self.int_slot(values[0])} + {self.int_slot(values[1] - values[0])} * i)"
        self.tables.append(tuple(values))
        return f"singe_loop_ints[$T{len(self.tables) - 1}$ + i]"

    def shape(self) -> Shape:
        return Shape(tuple(self.lines), tuple(self.ints), tuple(self.consts), tuple(self.outputs),
                     tuple(self.blocks), tuple(self.tables), self.loops)


def comment_values(values) -> str:
    values = list(values)
    shown = ", ".join(values[:MAX_COMMENT_VALUES])
    return shown + (f" (+{len(values) - MAX_COMMENT_VALUES} more)" if len(values) > MAX_COMMENT_VALUES else "")


def render_unit(unit: Unit, names: dict[str, str], threads: int, roll: bool = True, pairs: bool = False,
                per_warp: bool = False) -> Shape:
    """The shape of ``unit`` for a warp whose register values are named by
    ``names`` (``roll``: its loops, ``ComputeUnit.loops``, as loops; ``pairs``: their
    constants two at a time where ``lowering.constant_pairs`` says, from a shared-memory table; ``per_warp``:
    they are emitted once for each warp, ``lowering.unroll_factor``)."""
    b = _ShapeBuilder(pairs, per_warp)
    if isinstance(unit, ComputeUnit):
        _render_compute(unit, names, b, roll)
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


def _render_compute(unit: ComputeUnit, names: dict[str, str], b: _ShapeBuilder, roll: bool = True) -> None:
    op = unit.op
    temps: dict[str, str] = {}
    inline: dict[str, str] = {}
    b.lines.append(f"{{  // {op.kind} operation")
    instrs = unit.instructions
    for value in unit.pinned_loads:
        name = f"l{len(inline)}"
        b.lines.append(f"  const double {name} = shared[{b.int_slot(unit.loads[value])}][lane];")
        inline[value] = name
    loops = {loop.start: loop for loop in unit.loops} if roll else {}
    i = 0
    while i < len(instrs):
        if i in loops:
            _render_loop(loops[i], unit, names, temps, inline, b)
            i = loops[i].stop
            continue
        _render_instr(instrs[i], unit, names, temps, inline, b)
        i += 1
    b.lines.append("}")


def _render_instr(instr: Instr, unit: ComputeUnit, names, temps, inline, b: _ShapeBuilder) -> None:
    if instr.opcode == "stg":
        index = b.int_slot(instr.index)
        value = _operand(instr.srcs[0], unit, names, temps, inline, b)
        b.lines.append(f"  if (valid) {global_address(instr.field, index)} = {value};")
        return
    expression = _expression(instr, unit, names, temps, inline, b)
    temp = f"t{len(temps)}"
    temps[instr.dst] = temp
    b.lines.append(f"  const double {temp} = {expression};")
    if instr.dst in unit.keep:
        b.lines.append(f"  {b.output(instr.dst)} = {temp};")
    if instr.dst in unit.stores:
        b.lines.append(f"  shared[{b.int_slot(unit.stores[instr.dst])}][lane] = {temp};")


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


# -- loops -------------------------------------------------------------------------------

class _LoopColumns:
    """What varies between a loop's iterations, operand by operand: constants
    (one block of the per-warp table, iteration-major) and integers."""

    def __init__(self, loop: Loop, unit: ComputeUnit, b: _ShapeBuilder):
        instrs = unit.instructions
        self.iterations = [loop.iteration(instrs, t) for t in range(loop.count)]
        self.defined = {instr.dst: j for j, instr in enumerate(instrs) if instr.dst is not None}
        self.b = b
        self.varying = varying_constants(unit, loop)  # (position, operand), in block order
        self.base = b.block(v for t in range(loop.count) for q, k in self.varying
                            for v in [self.iterations[t][q].srcs[k].value]) if self.varying else ""
        self.index = f"k{loop.start}"
        self.hoisted: dict[tuple[int, int], str] = {}  # (position, operand) -> variable read before the loop
        self.unrolled = unroll_factor(loop, instrs, b.per_warp) >= loop.count
        self.arrays: list[str] = []  # declarations of the integer columns of a loop unrolled completely
        self.pairs = constant_pairs(len(self.varying)) if b.pairs else 0

    def const(self, q: int, k: int) -> str:
        if (q, k) not in self.varying:
            return self.b.const(self.iterations[0][q].srcs[k].value)
        v = self.varying.index((q, k))
        if self.pairs:
            return f"{self.pair_name(v // 2)}.{'xy'[v % 2]}"
        return f"{READ}CONST_AT({self.index} + {v})"

    def pair_name(self, p: int) -> str:
        return f"{self.index}p{p}"

    def pair_lines(self) -> list[str]:
        """The iteration's reads of its constants two at a time (``SINGE_CONST_PAIR``), first in its body."""
        return [f"    const double2 {self.pair_name(p)} = {READ}CONST_PAIR({self.index} + {2 * p});"
                for p in range(self.pairs)]

    def header(self) -> str:
        """The loop's ``for``, stepping the index of its constants."""
        step = f", {self.index} += {len(self.varying)}" if self.varying else ""
        return f"for (int i = 0; i < {len(self.iterations)}; i++{step}) {{"

    def ints(self, q: int, value_of) -> str:
        """The integer ``value_of(instr)`` of position ``q`` across the iterations: in a loop unrolled
        completely, a column that is no progression is a local array of literals (``UNROLLED_COLUMN``)."""
        values = [int(value_of(it[q])) for it in self.iterations]
        if not self.unrolled or column_kind(values) != "table":
            return self.b.int_column(values)
        name = f"u{len(self.arrays)}"
        self.arrays.append(f"  constexpr int {name}[{len(values)}] = {{{', '.join(map(str, values))}}};")
        return f"{name}[i]"


UNROLLED_COLUMN = "constexpr int"
"""An integer column of a loop unrolled completely that is no progression (the shared slots of values
stored in schedule order) is a local array of literals, folded into the accesses' immediate offsets:
read from the loop table instead, its entries are the same every slab and ptxas holds each one's
address in a register across the slab loop (DME viscosity at 8 warps x 4 CTAs, sm_90: 752 B of spill
stores with the table, ptxas)."""
UNROLLED_LOOP_FENCE = "__syncwarp();"
"""Before a loop unrolled completely: without it, the compilers keep the shared values an earlier loop
of the warp read (p_j, q_j of every inner species) in registers for the next one, and a warp with
several Wilke operations needs them all at once.  An empty asm with a memory clobber (``SINGE_FENCE``)
stops NVVM but not ptxas, which sees no instruction and reuses the loads itself; ``__syncwarp`` (one
WARPSYNC per loop and slab) orders shared memory for both (DME viscosity at 8 warps x 4 CTAs, sm_90:
with no fence 1,520 B of spill stores (the former sums of x_j and 1/s_j), with SINGE_FENCE 892 B, with
__syncwarp none; ptxas)."""


def _render_loop(loop: Loop, unit: ComputeUnit, names, temps, inline, b: _ShapeBuilder) -> None:
    """``for (i ...)`` over the loop's iterations: positions whose value
    outlives an iteration are variables declared before it."""
    instrs = unit.instructions
    b.loops += 1
    columns = _LoopColumns(loop, unit, b)
    body = columns.iterations[0]
    carried = dict(loop.carried)
    for q, k in invariant_loads(unit, loop):
        name = f"t{len(temps)}"
        temps[f"#loop{loop.start}.read{q}.{k}"] = name
        b.lines.append(f"  const double {name} = shared[{columns.ints(q, lambda it: unit.loads[it.srcs[k].name])}][lane];")
        columns.hoisted[q, k] = name
    variables = {}
    for q, index in loop.carried:
        variables[q] = f"t{len(temps)}"
        temps[f"#loop{loop.start}.{q}"] = variables[q]
        if isinstance(index, str):  # a register input the first iteration continues (``lowering.carry_in``)
            initial = f" = {_operand(Reg(index), unit, names, temps, inline, b)}"
        else:
            initial = f" = {temps[instrs[index].dst]}" if index is not None else ""
        b.lines.append(f"  double {variables[q]}{initial};")
    b.lines.append("  {")
    if columns.varying:
        b.lines.append(f"  int {columns.index} = SINGE_CONST_INDEX({columns.base});")
    unroll = unroll_factor(loop, instrs, b.per_warp)
    if unroll >= loop.count:  # unrolled completely: its shared reads are not values held from an earlier loop
        b.lines.append(f"  {UNROLLED_LOOP_FENCE}")
    header = len(b.lines)  # the pragma, then the for: the arrays of literals go before them
    b.lines.append("#pragma unroll" if unroll >= loop.count else f"#pragma unroll {unroll}")
    b.lines.append(f"  {columns.header()}")
    b.lines.extend(columns.pair_lines())
    position = {instr.dst: q for q, instr in enumerate(body) if instr.dst is not None}
    local: dict[str, str] = {}
    for q, instr in enumerate(body):
        line = _loop_line(q, instr, loop, unit, names, temps, inline, columns, variables, local, position)
        b.lines.append(line)
        if instr.dst is not None and instr.dst in unit.stores:
            slot = columns.ints(q, lambda it: unit.stores[it.dst])
            b.lines.append(f"    shared[{slot}][lane] = {variables.get(q, local.get(instr.dst))};")
    b.lines[header:header] = columns.arrays
    b.lines.append("  }")
    b.lines.append("  }")
    last = columns.iterations[-1]
    for q in carried:
        if last[q].dst is not None:
            temps[last[q].dst] = variables[q]


def _loop_line(q, instr, loop, unit, names, temps, inline, columns, variables, local, position) -> str:
    """One instruction of the loop body (position ``q``)."""
    def operand(k: int, src) -> str:
        if isinstance(src, Imm):
            return literal(src.value)
        if isinstance(src, Const):
            return columns.const(q, k)
        if dict(loop.carried).get(q) == src.name:  # the running value, set from this input before the loop
            return variables[q]
        if src.name in position:  # this iteration's
            p = position[src.name]
            return variables.get(p, local.get(src.name))
        defined = columns.defined.get(src.name)
        if defined is not None and defined < loop.start:  # the previous iteration's (or the value before)
            return variables[defined - loop.start + loop.period]
        if (q, k) in columns.hoisted:
            return columns.hoisted[q, k]
        if src.name in unit.loads and src.name not in inline:
            return f"shared[{columns.ints(q, lambda it: unit.loads[it.srcs[k].name])}][lane]"
        return _operand(src, unit, names, temps, inline, columns.b)

    if instr.opcode == "stg":
        index = columns.ints(q, lambda it: it.index)
        return f"    if (valid) {global_address(instr.field, index)} = {operand(0, instr.srcs[0])};"
    if instr.opcode == "ldg":
        expression = load_expression(instr.field, columns.ints(q, lambda it: it.index))
    else:
        expression = EXPRESSIONS[instr.opcode].format(*(operand(k, s) for k, s in enumerate(instr.srcs)))
    if q in variables:
        return f"    {variables[q]} = {expression};"
    local[instr.dst] = f"t{len(temps)}"
    temps[f"#loop{loop.start}.local{q}"] = local[instr.dst]
    return f"    const double {local[instr.dst]} = {expression};"
