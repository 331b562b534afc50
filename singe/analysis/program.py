"""A small generic SIMT program form, so the scalarization papers' examples run as tests.

A ``Program`` is a control-flow graph of basic blocks in SSA form: each block
has phi nodes, then instructions ``dst = opcode srcs``, the last of which may
be a terminator (``bra``, ``exit``); a block without one falls through to the
next block.  Operands are SSA values (``%x``), special registers (``%tid``,
``%laneid`` -- varying; ``%warpid``, ``%ctaid``, ``%nctaid``, ``%ntid`` --
uniform), immediates and addresses (``[%a]``, ``[%a+8]``, ``[param]``).
Kernel parameters are read with ``ld.param [name]``.

The compact text syntax (``parse_program``), one statement per line::

    kernel fir(samples, coeffs, flen, results)
    BB_1:
        %r9 = mov %tid                 # comments with # or //
        %r1 = ld.param.u64 [samples]
        %r5 = set.gt %r3, 0
        bra %r5, BB_3                  # taken: BB_3, else fall through
    BB_4:
        %r1b = phi [BB_3: %r1a], [BB_4: %r1c]
        %r8 = ld.global.f32 [%r1b]
        @%p st.global.f32 [%r4], %r6   # guarded (predicated) instruction
        bra BB_4                       # unconditional
        exit

``run`` is the living definition of the opcodes: a SIMT interpreter that
executes one warp at a time with an immediate-post-dominator reconvergence
stack (the divergence stack of CGO'13 §2.4), reports every executed
instruction to an observer (active lanes, live lanes, the values written) and
profiles block executions.  ``dominators`` / ``post_dominators`` live here
because both the interpreter and the analyses (``singe.analysis.scalarize``) need
them.
"""

from __future__ import annotations

import functools
import math
import re
from dataclasses import dataclass, field
from typing import Callable, Iterator, Mapping, Union

from singe.errors import Location, Problem, SingeInputError, SingeInternalError

WARP_SIZE = 32
VARYING_SPECIALS = ("tid", "laneid")
UNIFORM_SPECIALS = ("warpid", "ctaid", "nctaid", "ntid")
SPECIALS = VARYING_SPECIALS + UNIFORM_SPECIALS
EXIT = "<exit>"  # the virtual exit node of post-dominance


# --------------------------------------------------------------------------- operands

@dataclass(frozen=True)
class Var:
    """An SSA value."""

    name: str

    def __str__(self) -> str:
        return f"%{self.name}"


@dataclass(frozen=True)
class Special:
    """A special register: %tid (threadIdx.x), %laneid, %warpid, %ctaid, %nctaid, %ntid."""

    name: str

    def __str__(self) -> str:
        return f"%{self.name}"


@dataclass(frozen=True)
class Imm:
    """An immediate number."""

    value: Union[int, float]

    def __str__(self) -> str:
        return repr(self.value)


@dataclass(frozen=True)
class Symbol:
    """A kernel parameter's name, inside ``[...]`` of ``ld.param``."""

    name: str

    def __str__(self) -> str:
        return self.name


@dataclass(frozen=True)
class Address:
    """A memory operand ``[base+offset]`` (bytes)."""

    base: Union[Var, Special, Imm, Symbol]
    offset: int = 0

    def __str__(self) -> str:
        return f"[{self.base}{f'+{self.offset}' if self.offset else ''}]"


Operand = Union[Var, Special, Imm, Address]


def operand_vars(operand) -> list[str]:
    """SSA names an operand reads (an address reads its base)."""
    if isinstance(operand, Var):
        return [operand.name]
    if isinstance(operand, Address):
        return operand_vars(operand.base)
    return []


# --------------------------------------------------------------------------- opcodes

#: base opcode -> number of source operands (None: any)
ARITIES = {
    "mov": 1, "cvt": 1, "neg": 1, "not": 1, "abs": 1, "rcp": 1, "exp": 1, "log": 1, "sqrt": 1,
    "add": 2, "sub": 2, "mul": 2, "div": 2, "rem": 2, "min": 2, "max": 2, "and": 2, "or": 2,
    "xor": 2, "shl": 2, "shr": 2, "set": 2, "mad": 3, "fma": 3, "selp": 3, "sel": 4,
    "ld": 1, "st": 2, "atom": 2, "vote": 1, "shfl": 2, "bar": None, "bra": None, "exit": 0,
}
COMPARISONS = {"lt": "<", "le": "<=", "gt": ">", "ge": ">=", "eq": "==", "ne": "!="}
SPACES = ("global", "shared", "param", "const")
TYPE_WIDTHS = {"8": 1, "16": 2, "32": 4, "64": 8}
ATOMIC_OPS = ("add", "min", "max", "exch")
VOTES = ("any", "all", "uni")


@dataclass(frozen=True)
class Opcode:
    """What an opcode string says: ``ld.volatile.global.f32`` -> base 'ld',
    space 'global', width 4, volatile; ``set.lt.s32`` -> base 'set', compare 'lt'."""

    text: str
    base: str
    space: str | None = None
    width: int = 0
    compare: str | None = None
    modifier: str | None = None  # vote mode, atomic operation, barrier kind
    volatile: bool = False

    @property
    def is_memory(self) -> bool:
        return self.base in ("ld", "st", "atom")


@functools.lru_cache(maxsize=None)
def opcode_info(text: str) -> Opcode:
    """Parse an opcode string; raises ``ValueError`` for an unknown one."""
    base, *parts = text.split(".")
    if base not in ARITIES:
        raise ValueError(f"unknown opcode {text!r}")
    info = dict(base=base)
    for part in parts:
        if part in SPACES:
            info["space"] = part
        elif part == "volatile":
            info["volatile"] = True
        elif part in COMPARISONS and base == "set":
            info["compare"] = part
        elif part in VOTES + ATOMIC_OPS + ("sync", "arrive") and base in ("vote", "atom", "bar"):
            info["modifier"] = part
        elif part[:1] in "fusb" and part[1:] in TYPE_WIDTHS:
            info["width"] = TYPE_WIDTHS[part[1:]]
        else:
            raise ValueError(f"unknown part {part!r} of opcode {text!r}")
    if base == "set" and "compare" not in info:
        raise ValueError(f"{text!r}: set needs a comparison ({', '.join(COMPARISONS)})")
    if base in ("ld", "st", "atom") and "space" not in info:
        raise ValueError(f"{text!r}: memory access needs a space ({', '.join(SPACES)})")
    if base in ("vote", "atom", "bar") and "modifier" not in info:
        raise ValueError(f"{text!r}: {base} needs a mode")
    return Opcode(text, **info)


# --------------------------------------------------------------------------- instructions

@dataclass(frozen=True)
class Instr:
    """``[@%guard] dst = opcode srcs``; ``bra`` has ``targets`` (and a condition
    in ``srcs`` when conditional); memory operations take an ``Address`` first."""

    opcode: str
    dst: str | None = None
    srcs: tuple = ()
    targets: tuple[str, ...] = ()
    guard: str | None = None
    negate: bool = False

    @property
    def info(self) -> Opcode:
        return opcode_info(self.opcode)

    @property
    def is_terminator(self) -> bool:
        return self.info.base in ("bra", "exit")

    @property
    def is_conditional_branch(self) -> bool:
        return self.info.base == "bra" and bool(self.srcs)

    def reads(self) -> list[str]:
        """SSA names read (operands, addresses, guard)."""
        names = [n for s in self.srcs for n in operand_vars(s)]
        return names + ([self.guard] if self.guard else [])

    def __str__(self) -> str:
        guard = f"@{'!' if self.negate else ''}%{self.guard} " if self.guard else ""
        args = [str(s) for s in self.srcs] + list(self.targets)
        head = f"%{self.dst} = {self.opcode}" if self.dst else self.opcode
        return f"{guard}{head} {', '.join(args)}".rstrip()


@dataclass(frozen=True)
class Phi:
    """``dst = phi [pred: value], ...``: the value of the edge a lane came in by."""

    dst: str
    incoming: tuple[tuple[str, object], ...]

    def reads(self) -> list[str]:
        return [n for _, v in self.incoming for n in operand_vars(v)]

    def value_from(self, pred: str):
        for label, value in self.incoming:
            if label == pred:
                return value
        raise SingeInternalError(f"phi %{self.dst} has no value for predecessor {pred}")

    def __str__(self) -> str:
        return f"%{self.dst} = phi " + ", ".join(f"[{label}: {value}]" for label, value in self.incoming)


Item = Union[Phi, Instr]
Site = tuple[str, int]  # (block label, index into Block.code)


@dataclass(frozen=True)
class Block:
    """A basic block: phis first, then instructions, at most one terminator (last)."""

    label: str
    phis: tuple[Phi, ...] = ()
    instrs: tuple[Instr, ...] = ()

    @property
    def code(self) -> tuple[Item, ...]:
        return self.phis + self.instrs

    @property
    def terminator(self) -> Instr | None:
        return self.instrs[-1] if self.instrs and self.instrs[-1].is_terminator else None

    @property
    def is_exit_only(self) -> bool:
        """A block that does nothing but ``exit`` (an early return)."""
        return not self.phis and len(self.instrs) == 1 and self.instrs[0].opcode == "exit"

    def has_barrier(self) -> bool:
        return any(i.info.base == "bar" for i in self.instrs)

    def __str__(self) -> str:
        return "\n".join([f"{self.label}:"] + [f"    {item}" for item in self.code])


@dataclass(frozen=True)
class Program:
    """A kernel: parameters and blocks (the first is the entry)."""

    name: str
    params: tuple[str, ...]
    blocks: tuple[Block, ...]

    @functools.cached_property
    def by_label(self) -> dict[str, Block]:
        return {b.label: b for b in self.blocks}

    @property
    def entry(self) -> str:
        return self.blocks[0].label

    @functools.cached_property
    def successors(self) -> dict[str, tuple[str, ...]]:
        """Block -> successor blocks (branch targets; fall-through to the next block)."""
        result = {}
        for k, block in enumerate(self.blocks):
            after = self.blocks[k + 1].label if k + 1 < len(self.blocks) else None
            term = block.terminator
            if term is None:
                result[block.label] = (after,) if after else ()
            elif term.opcode == "exit":
                result[block.label] = ()
            elif term.is_conditional_branch and len(term.targets) == 1:
                result[block.label] = tuple(dict.fromkeys((term.targets[0], after)))
            else:
                result[block.label] = tuple(dict.fromkeys(term.targets))
        return result

    @functools.cached_property
    def predecessors(self) -> dict[str, tuple[str, ...]]:
        result: dict[str, list[str]] = {b.label: [] for b in self.blocks}
        for label, succs in self.successors.items():
            for s in succs:
                result[s].append(label)
        return {k: tuple(v) for k, v in result.items()}

    def sites(self) -> Iterator[tuple[Site, Item]]:
        """Every (site, phi-or-instruction) in block order."""
        for block in self.blocks:
            for k, item in enumerate(block.code):
                yield (block.label, k), item

    def item(self, site: Site) -> Item:
        return self.by_label[site[0]].code[site[1]]

    @functools.cached_property
    def definitions(self) -> dict[str, Site]:
        """SSA value -> the site defining it."""
        return {item.dst: site for site, item in self.sites() if item.dst is not None}

    @functools.cached_property
    def uses(self) -> dict[str, list[Site]]:
        """SSA value -> the sites reading it."""
        result: dict[str, list[Site]] = {}
        for site, item in self.sites():
            for name in item.reads():
                result.setdefault(name, []).append(site)
        return result

    def verify(self) -> None:
        """Labels, targets, terminators, single definitions, phis matching
        predecessors, every use defined, every block reaching an exit."""
        _verify_structure(self)
        _verify_ssa(self)
        if self.predecessors[self.entry]:
            raise SingeInternalError(f"{self.name}: the entry block {self.entry} has predecessors")
        reach = _reaching_exit(self)
        stuck = [b.label for b in self.blocks if b.label not in reach]
        if stuck:
            raise SingeInternalError(f"{self.name}: blocks {stuck} never reach an exit")

    def __str__(self) -> str:
        head = f"kernel {self.name}({', '.join(self.params)})"
        return "\n".join([head] + [str(b) for b in self.blocks])


def _verify_structure(program: Program) -> None:
    """Unique labels, operand counts, terminators last and unguarded, known targets, addresses."""
    labels = [b.label for b in program.blocks]
    if not labels or len(set(labels)) != len(labels):
        raise SingeInternalError(f"{program.name}: block labels empty or not unique: {labels}")
    for block in program.blocks:
        for k, instr in enumerate(block.instrs):
            info = instr.info
            arity = ARITIES[info.base]
            if arity is not None and len(instr.srcs) != arity:
                raise SingeInternalError(f"{block.label}: {instr}: {info.base} takes {arity} operands")
            if instr.is_terminator and k != len(block.instrs) - 1:
                raise SingeInternalError(f"{block.label}: {instr} is not the last instruction")
            if instr.is_terminator and instr.guard:
                raise SingeInternalError(f"{block.label}: {instr}: use 'bra %p, L' rather than a guard")
            if info.base == "bra" and not 1 <= len(instr.targets) <= 2:
                raise SingeInternalError(f"{block.label}: {instr}: one or two targets")
            for target in instr.targets:
                if target not in program.by_label:
                    raise SingeInternalError(f"{block.label}: {instr}: unknown block {target}")
            if info.is_memory and not isinstance(instr.srcs[0], Address):
                raise SingeInternalError(f"{block.label}: {instr}: the first operand must be an address")
        if block.terminator is None and block is program.blocks[-1]:
            raise SingeInternalError(f"{block.label}: the last block must end in bra or exit")


def _verify_ssa(program: Program) -> None:
    """One definition per value, every read defined, phis matching their block's predecessors."""
    seen: set[str] = set()
    for site, item in program.sites():
        if item.dst is not None:
            if item.dst in seen:
                raise SingeInternalError(f"{site[0]}: %{item.dst} is defined twice")
            seen.add(item.dst)
    for site, item in program.sites():
        missing = [n for n in item.reads() if n not in seen]
        if missing:
            raise SingeInternalError(f"{site[0]}: {item} reads undefined {missing}")
        if isinstance(item, Phi):
            preds = set(program.predecessors[site[0]])
            if {label for label, _ in item.incoming} != preds or len(item.incoming) != len(preds):
                raise SingeInternalError(f"{site[0]}: {item} does not match predecessors {sorted(preds)}")


def _reaching_exit(program: Program) -> set[str]:
    """Blocks from which an exit block is reachable."""
    reach = {b.label for b in program.blocks if not program.successors[b.label]}
    changed = True
    while changed:
        changed = False
        for block in program.blocks:
            if block.label not in reach and any(s in reach for s in program.successors[block.label]):
                reach.add(block.label)
                changed = True
    return reach


# --------------------------------------------------------------------------- dominators

def dominators(nodes, entry, successors: Callable) -> dict:
    """Immediate dominators (Cooper, Harvey & Kennedy's iterative algorithm):
    node -> idom (the entry maps to itself); nodes unreachable from ``entry`` are left out."""
    order: list = []
    seen = {entry}
    stack = [(entry, iter(successors(entry)))]
    while stack:  # iterative depth-first search for the postorder
        node, it = stack[-1]
        nxt = next((s for s in it if s not in seen), None)
        if nxt is None:
            order.append(node)
            stack.pop()
        else:
            seen.add(nxt)
            stack.append((nxt, iter(successors(nxt))))
    number = {n: k for k, n in enumerate(order)}
    preds: dict = {n: [] for n in order}
    for n in order:
        for s in successors(n):
            preds[s].append(n)
    idom = {entry: entry}
    changed = True
    while changed:
        changed = False
        for n in reversed(order):
            if n == entry:
                continue
            done = [p for p in preds[n] if p in idom]
            new = functools.reduce(lambda a, b: _intersect(a, b, idom, number), done)
            if idom.get(n) != new:
                idom[n] = new
                changed = True
    return idom


def _intersect(a, b, idom, number):
    while a != b:
        while number[a] < number[b]:
            a = idom[a]
        while number[b] < number[a]:
            b = idom[b]
    return a


def post_dominators(program: Program) -> dict[str, str]:
    """Immediate post-dominators: block -> ipdom, where ``EXIT`` is a virtual
    node after every exit block (so an early ``exit`` is a path of its own)."""
    preds = program.predecessors

    def reverse(node):
        if node == EXIT:
            return [b.label for b in program.blocks if not program.successors[b.label]]
        return preds[node]

    idom = dominators([EXIT] + [b.label for b in program.blocks], EXIT, reverse)
    return {k: v for k, v in idom.items() if k != EXIT}


# --------------------------------------------------------------------------- parser

_LABEL = re.compile(r"^([A-Za-z_$][\w$.']*)\s*:$")
_KERNEL = re.compile(r"^kernel\s+([\w$]+)\s*\(([^)]*)\)$")
_NAME = r"[A-Za-z_$][\w$.']*"
_GUARD = re.compile(rf"^@(!?)%({_NAME})\s+")


def parse_program(text: str, file: str = "<program>") -> Program:
    """A ``Program`` from the text syntax of the module docstring (verified)."""
    name, params, blocks = "kernel", [], []
    for number, raw in enumerate(text.splitlines(), start=1):
        line = re.split(r"#|//", raw, maxsplit=1)[0].strip()
        if not line:
            continue
        where = Location(file, number, raw.find(line[0]) + 1, raw)
        try:
            header = _KERNEL.match(line)
            if header and not blocks:
                name = header.group(1)
                params = [p.strip() for p in header.group(2).split(",") if p.strip()]
            elif _LABEL.match(line):
                blocks.append((_LABEL.match(line).group(1), [], []))
            elif not blocks:
                raise ValueError("a statement outside a block: start with a label 'NAME:'")
            else:
                item = parse_statement(line)
                blocks[-1][1 if isinstance(item, Phi) else 2].append(item)
        except ValueError as error:
            raise SingeInputError(Problem(where, str(error))) from None
    program = Program(name, tuple(params), tuple(Block(l, tuple(p), tuple(i)) for l, p, i in blocks))
    program.verify()
    return program


def parse_statement(line: str) -> Item:
    """One statement: ``[@%g] [%d =] opcode operands`` or ``%d = phi [L: v], ...``."""
    guard, negate = None, False
    m = _GUARD.match(line)
    if m:
        guard, negate, line = m.group(2), m.group(1) == "!", line[m.end():]
    dst = None
    m = re.match(rf"^%({_NAME})\s*=\s*(.*)$", line)
    if m:
        dst, line = m.group(1), m.group(2)
    opcode, _, rest = line.partition(" ")
    rest = rest.strip()
    if opcode == "phi":
        if dst is None or guard:
            raise ValueError("a phi needs a destination and no guard")
        pairs = re.findall(rf"\[\s*({_NAME})\s*:\s*([^\]]+?)\s*\]", rest)
        return Phi(dst, tuple((label, parse_operand(v)) for label, v in pairs))
    opcode_info(opcode)
    args = [a.strip() for a in rest.split(",")] if rest else []
    if opcode == "bra":
        cond = (parse_operand(args.pop(0)),) if args and args[0].startswith("%") else ()
        return Instr(opcode, dst, cond, tuple(args), guard, negate)
    return Instr(opcode, dst, tuple(parse_operand(a) for a in args), (), guard, negate)


def parse_operand(text: str):
    """``%x`` (value or special register), a number, or ``[base+offset]``."""
    text = text.strip()
    if text.startswith("[") and text.endswith("]"):
        inner = text[1:-1].replace(" ", "")
        base, _, offset = inner.partition("+")
        operand = parse_operand(base) if base.startswith("%") or base[:1].isdigit() else Symbol(base)
        return Address(operand, int(offset) if offset else 0)
    if text.startswith("%"):
        name = text[1:]
        if not re.fullmatch(_NAME, name):
            raise ValueError(f"bad register name {text!r}")
        return Special(name) if name in SPECIALS else Var(name)
    try:
        return Imm(int(text, 0))
    except ValueError:
        try:
            return Imm(float(text))
        except ValueError:
            raise ValueError(f"cannot read operand {text!r}") from None


class ProgramBuilder:
    """Builds a ``Program`` block by block (for generated programs, e.g. the
    lowering of singe's warp programs): ``block``, ``emit``, ``phi``, ``build``."""

    def __init__(self, name: str, params=()):
        self.name = name
        self.params = list(params)
        self.blocks: list[tuple[str, list, list]] = []
        self._count = 0

    def fresh(self, stem: str = "t") -> str:
        self._count += 1
        return f"{stem}{self._count}"

    def block(self, label: str) -> None:
        self.blocks.append((label, [], []))

    def emit(self, opcode: str, *srcs, dst: str | None = None, targets=(), guard=None, negate=False):
        """Append an instruction to the current block; returns ``Var(dst)`` (or None)."""
        self.blocks[-1][2].append(Instr(opcode, dst, tuple(srcs), tuple(targets), guard, negate))
        return Var(dst) if dst else None

    def value(self, opcode: str, *srcs, stem: str = "t", guard=None) -> Var:
        """Emit ``%fresh = opcode srcs`` and return the new value."""
        return self.emit(opcode, *srcs, dst=self.fresh(stem), guard=guard)

    def phi(self, dst: str, *incoming) -> Var:
        self.blocks[-1][1].append(Phi(dst, tuple(incoming)))
        return Var(dst)

    def build(self, verify: bool = True) -> Program:
        program = Program(self.name, tuple(self.params),
                          tuple(Block(l, tuple(p), tuple(i)) for l, p, i in self.blocks))
        if verify:
            program.verify()
        return program


# --------------------------------------------------------------------------- semantics

def _ieee(function, *args):
    """A float function with IEEE results instead of Python's exceptions."""
    try:
        return function(*args)
    except ZeroDivisionError:
        a = args[0]
        return math.nan if a == 0 or a != a else math.copysign(math.inf, a)
    except OverflowError:
        return math.inf
    except ValueError:
        return -math.inf if args and args[0] == 0 else math.nan


def _div(a, b):
    if isinstance(a, int) and isinstance(b, int):
        if b == 0:
            raise SingeInternalError("integer division by zero")
        return a // b if (a >= 0) == (b > 0) else -(-a // b)  # C truncation
    return _ieee(lambda x, y: x / y, a, b)


def _rem(a, b):
    return a - _div(a, b) * b if isinstance(a, int) and isinstance(b, int) else math.fmod(a, b)


#: base opcode -> function of the operand values (per lane)
ARITHMETIC: dict[str, Callable] = {
    "mov": lambda a: a, "cvt": lambda a: a, "neg": lambda a: -a, "not": lambda a: ~a, "abs": abs,
    "add": lambda a, b: a + b, "sub": lambda a, b: a - b, "mul": lambda a, b: a * b,
    "div": _div, "rem": _rem, "min": min, "max": max,
    "and": lambda a, b: a & b, "or": lambda a, b: a | b, "xor": lambda a, b: a ^ b,
    "shl": lambda a, b: a << b, "shr": lambda a, b: a >> b,
    "mad": lambda a, b, c: a * b + c, "fma": lambda a, b, c: a * b + c,
    "selp": lambda a, b, p: a if p else b, "sel": lambda a, b, c, d: c if a <= b else d,
    "rcp": lambda a: _ieee(lambda x: 1.0 / x, a), "exp": lambda a: _ieee(math.exp, a),
    "log": lambda a: _ieee(math.log, a), "sqrt": lambda a: _ieee(math.sqrt, a),
}


def compare(kind: str, a, b) -> int:
    """``set.<kind>``: 1 if the comparison holds, else 0."""
    return int({"lt": a < b, "le": a <= b, "gt": a > b, "ge": a >= b, "eq": a == b, "ne": a != b}[kind])


def evaluate(opcode: str, values: list):
    """The result of a pure opcode on operand values (constant folding uses it too)."""
    info = opcode_info(opcode)
    if info.base == "set":
        return compare(info.compare, *values)
    return ARITHMETIC[info.base](*values)


@dataclass
class Memory:
    """Global (and constant) memory and shared memory as address -> value, and the
    kernel parameters.  ``fill(space, address)`` gives the value of a location
    never stored (None: reading one is an error)."""

    global_: dict = field(default_factory=dict)
    shared: dict = field(default_factory=dict)
    params: dict = field(default_factory=dict)
    fill: Callable | None = None

    def array(self, base: int, values, width: int = 4) -> None:
        """Store ``values`` at ``base``, ``base + width``, ... in global memory."""
        for k, v in enumerate(values):
            self.global_[base + k * width] = v

    def _table(self, space: str) -> dict:
        return self.shared if space == "shared" else self.global_

    def load(self, space: str, address):
        """The value at ``address`` of ``space`` (a parameter by name for 'param')."""
        if space == "param":
            return self.params[address]
        table = self._table(space)
        if address not in table:
            if self.fill is None:
                raise SingeInternalError(f"ld.{space} of address {address}, never stored")
            table[address] = self.fill(space, address)
        return table[address]

    def store(self, space: str, address, value) -> None:
        self._table(space)[address] = value


@dataclass(frozen=True)
class Event:
    """One executed phi or instruction of one warp: the lanes that executed it
    (``active``, guard not applied), the lanes not exited (``live``) and the
    values written, lane -> value (empty without a destination)."""

    warp: int
    site: Site
    item: Item
    active: tuple[int, ...]
    live: tuple[int, ...]
    values: dict
    tids: dict


@dataclass(frozen=True)
class Profile:
    """Block -> warp-level executions (``issues``) and lane executions (``lanes``)."""

    issues: Mapping[str, int]
    lanes: Mapping[str, int]

    @classmethod
    def of(cls, counts: Mapping[str, int], warp_size: int = WARP_SIZE) -> "Profile":
        """Block -> executions by full warps (a static count: ``{b: 1 for b in blocks}``)."""
        return cls(dict(counts), {b: n * warp_size for b, n in counts.items()})

    @classmethod
    def static(cls, program: Program, warp_size: int = WARP_SIZE) -> "Profile":
        return cls.of({b.label: 1 for b in program.blocks}, warp_size)


@dataclass
class Execution:
    """The result of ``run``: the memory after it and the profile of every warp run."""

    memory: Memory
    profile: Profile
    exited: dict


# --------------------------------------------------------------------------- the interpreter

@dataclass
class _Entry:
    """A divergence-stack entry: lanes at block ``pc`` that reconverge at ``rpc``."""

    pc: str | None
    mask: set
    rpc: str | None


class _Warp:
    """One warp executing ``program`` (see ``run``)."""

    def __init__(self, program, memory, warp, specials, observe, ipdom):
        self.program, self.memory, self.warp, self.observe, self.ipdom = program, memory, warp, observe, ipdom
        first = warp * WARP_SIZE
        lanes = [lane for lane in range(WARP_SIZE) if first + lane < specials["ntid"]]
        self.regs = {lane: {} for lane in lanes}
        self.specials = {lane: dict(specials, tid=first + lane, laneid=lane, warpid=warp) for lane in lanes}
        self.prev: dict[int, str | None] = {lane: None for lane in lanes}
        self.live = set(lanes)
        self.issues: dict[str, int] = {}
        self.lanes: dict[str, int] = {}

    def value(self, lane: int, operand):
        """An operand's value on one lane (an address: its byte address, or a parameter's name)."""
        if isinstance(operand, Var):
            return self.regs[lane][operand.name]
        if isinstance(operand, Special):
            return self.specials[lane][operand.name]
        if isinstance(operand, Imm):
            return operand.value
        if isinstance(operand, Address):
            if isinstance(operand.base, Symbol):
                return operand.base.name
            return self.value(lane, operand.base) + operand.offset
        raise SingeInternalError(f"operand {operand!r}")

    def report(self, site, item, mask, values) -> None:
        if self.observe is not None:
            tids = {lane: self.specials[lane]["tid"] for lane in mask}
            self.observe(Event(self.warp, site, item, tuple(sorted(mask)), tuple(sorted(self.live)),
                               values, tids))

    def run(self, max_steps: int) -> None:
        """Execute blocks under the reconvergence stack until every lane exits."""
        stack = [_Entry(self.program.entry, set(self.live), None)]
        steps = 0
        while stack:
            top = stack[-1]
            top.mask &= self.live
            if not top.mask or top.pc is None or top.pc == top.rpc:
                stack.pop()
                continue
            steps += 1
            if steps > max_steps:
                raise SingeInternalError(f"warp {self.warp}: more than {max_steps} block executions")
            groups = self.block(top.pc, top.mask)
            self.branch(stack, top, groups)

    def branch(self, stack, top: _Entry, groups: dict) -> None:
        """After a block: one target, or divergence (push each side, reconverge at
        the ipdom).  Lanes going to an exit-only block exit at once: threads that
        return early wait at the kernel exit (CGO §3.4), they are not part of
        the warp any more."""
        groups = {t: m for t, m in groups.items() if m}
        if len(groups) > 1:
            for target in [t for t in groups if self.program.by_label[t].is_exit_only]:
                self.block(target, groups.pop(target))
        if len(groups) <= 1:
            top.pc = next(iter(groups), None)
            return
        join = self.ipdom.get(top.pc)
        join = None if join == EXIT else join
        if top.rpc == join:
            stack.pop()
        else:
            top.pc = join
        for target in groups:
            if target != join:
                stack.append(_Entry(target, set(groups[target]), join))

    def block(self, label: str, mask: set) -> dict:
        """Execute block ``label`` for the lanes of ``mask``; returns target -> lanes."""
        block = self.program.by_label[label]
        self.issues[label] = self.issues.get(label, 0) + 1
        self.lanes[label] = self.lanes.get(label, 0) + len(mask)
        self.phis(block, mask)
        for k, instr in enumerate(block.instrs):
            site = (label, len(block.phis) + k)
            if instr.is_terminator:
                return self.terminate(block, instr, site, mask)
            self.instruction(instr, site, mask)
        for lane in mask:
            self.prev[lane] = label
        after = self.program.successors[label]
        return {after[0]: set(mask)} if after else {}

    def phis(self, block: Block, mask: set) -> None:
        """All phis of a block at once (parallel copies), per lane by its incoming edge."""
        chosen = {lane: [self.value(lane, phi.value_from(self.prev[lane])) for phi in block.phis]
                  for lane in mask}
        for k, phi in enumerate(block.phis):
            values = {}
            for lane in mask:
                values[lane] = self.regs[lane][phi.dst] = chosen[lane][k]
            self.report((block.label, k), phi, mask, values)

    def terminate(self, block: Block, instr: Instr, site, mask: set) -> dict:
        """``exit`` (the lanes leave the warp) or ``bra``: target -> lanes."""
        self.report(site, instr, mask, {})
        for lane in mask:
            self.prev[lane] = block.label
        if instr.opcode == "exit":
            self.live -= mask
            return {}
        succs = self.program.successors[block.label]
        if not instr.srcs:
            return {succs[0]: set(mask)}
        taken = {lane for lane in mask if self.value(lane, instr.srcs[0])}
        other = succs[1] if len(succs) > 1 else succs[0]
        return {succs[0]: taken, other: (mask - taken) | (taken if other == succs[0] else set())}

    def instruction(self, instr: Instr, site, mask: set) -> None:
        """A non-terminator: per lane (guard applied), or across the warp (vote, shfl, bar)."""
        info = instr.info
        lanes = sorted(lane for lane in mask if not instr.guard or
                       bool(self.regs[lane][instr.guard]) != instr.negate)
        if info.base in ("vote", "shfl", "bar"):
            values = self.collective(instr, info, lanes, mask)
        elif info.is_memory:
            values = {lane: self.access(instr, info, lane) for lane in lanes}
        else:
            values = {lane: evaluate(instr.opcode, [self.value(lane, s) for s in instr.srcs]) for lane in lanes}
        if instr.dst is None:
            values = {}
        for lane, v in values.items():
            self.regs[lane][instr.dst] = v
        self.report(site, instr, mask, values)

    def access(self, instr: Instr, info: Opcode, lane: int):
        """ld / st / atom on one lane (an atomic returns the old value)."""
        address = self.value(lane, instr.srcs[0])
        if info.base == "ld":
            return self.memory.load(info.space, address)
        value = self.value(lane, instr.srcs[1])
        if info.base == "st":
            self.memory.store(info.space, address, value)
            return None
        old = self.memory.load(info.space, address)
        new = {"add": lambda: old + value, "min": lambda: min(old, value),
               "max": lambda: max(old, value), "exch": lambda: value}[info.modifier]()
        self.memory.store(info.space, address, new)
        return old

    def collective(self, instr: Instr, info: Opcode, lanes: list, mask: set) -> dict:
        """vote.any/all/uni over the active lanes, shfl (read another lane's
        register), bar.sync / bar.arrive (every live lane must be here)."""
        if info.base == "bar":
            if set(lanes) != self.live:
                raise SingeInternalError(f"warp {self.warp}: {instr} reached by lanes {sorted(lanes)} of "
                                         f"{sorted(self.live)}: a barrier in divergent code")
            return {}
        if info.base == "shfl":
            return {lane: self.value(int(self.value(lane, instr.srcs[1])) % WARP_SIZE, instr.srcs[0])
                    for lane in lanes}
        votes = [bool(self.value(lane, instr.srcs[0])) for lane in lanes]
        result = {"any": any(votes), "all": all(votes), "uni": all(votes) or not any(votes)}[info.modifier]
        return {lane: int(result) for lane in lanes}


def run(program: Program, params: Mapping | None = None, memory: Memory | None = None, *,
        warps=(0,), ntid: int | None = None, ctaid: int = 0, nctaid: int = 1,
        observe: Callable[[Event], None] | None = None, max_steps: int = 1_000_000) -> Execution:
    """Execute ``program`` for the warps ``warps`` of CTA ``ctaid``, one warp after
    the other (warps do not communicate: barriers only check convergence).

    ``params``: kernel parameter -> value (also ``memory.params``); ``ntid``:
    threads per CTA (default 32 per warp run); ``observe``: called with an
    ``Event`` for every executed phi and instruction.  Returns the memory and
    the summed profile."""
    memory = memory if memory is not None else Memory()
    memory.params.update(params or {})
    warps = tuple(warps)
    ntid = ntid if ntid is not None else WARP_SIZE * (max(warps) + 1)
    specials = dict(ntid=ntid, ctaid=ctaid, nctaid=nctaid)
    ipdom = post_dominators(program)
    issues: dict[str, int] = {}
    lanes: dict[str, int] = {}
    exited = {}
    for w in warps:
        warp = _Warp(program, memory, w, specials, observe, ipdom)
        warp.run(max_steps)
        exited[w] = not warp.live
        for label, n in warp.issues.items():
            issues[label] = issues.get(label, 0) + n
            lanes[label] = lanes.get(label, 0) + warp.lanes[label]
    return Execution(memory, Profile(issues, lanes), exited)
