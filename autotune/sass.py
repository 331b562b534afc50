"""SASS view of compiled kernels: registers, spills, static instructions and
instructions issued per point, by class, with control flow evaluated per warp.

    python -m autotune.sass KERNEL.cu [--arch sm_90] [--warps N] [--baseline]

``nvcc -cubin`` compiles the file; ``nvdisasm`` (pip package
``nvidia-cuda-nvdisasm``) disassembles it and ``cuobjdump -elf`` (package
``nvidia-cuda-cuobjdump``) gives the jump tables and the parameter layout.

Issued counts come from a walk of the SASS per warp: the integer and
predicate instructions that control flow depends on (thread and block ids,
kernel parameters, jump tables, loop counters) are evaluated concretely for
lane 0 of each warp, everything else only counted.  The tables a kernel
reads from global memory (the table form's ``static __device__`` arrays)
are read too (``global_tables``: ``.nv.global.init`` and the bank-4 pointers
to it, with 64-bit address arithmetic and double comparisons of known
values), so the table form's loops run their real trip counts.  A branch whose predicate
is not known (it depends on floating-point data, e.g. the slow paths of the
CUDA library's division) is taken as not taken, the fast path; ``BRA.DIV``
(the divergent-warp path of a shuffle) is never taken.  Predicated
instructions count as issued whatever their predicate.  The warp-specialized
kernels loop over slabs of 32 points, one per lane: the walk runs one and two
slabs, and the difference, summed over the warps, is the lane-instructions
issued per point.  The slab loop's back-edge (the outermost conditional
backward branch; one per case when the chemistry kernels' warp switch is
outside the slab loop) is taken by trip count, not by the registers: ptxas may
reuse the uniform register holding the slab count on one warp's path and
restore it from where the walk cannot follow (``Walk.slab_tests_overruled``
counts the exit tests the registers left unknown or decided otherwise).  A data-parallel kernel (one thread per point) issues, per
point, what one warp issues.  The listing carries the encodings (``nvdisasm
-hex``), and with them each instruction's stall count (``stall_count``): their
sum over what a warp issues, per instruction, is its pace (``Walk.pace``).
"""

from __future__ import annotations

import argparse
import os
import pathlib
import re
import shutil
import subprocess
import sys
import tempfile
import time
from collections import Counter
from dataclasses import dataclass, field

import numpy as np

CLASSES = ("fp64", "mufu", "lds", "sts", "ldg", "stg", "ldl", "stl", "bar", "shfl", "branch", "other")
PARAMETER_BASE = {"sm_90": 0x210, "sm_90a": 0x210, "sm_80": 0x160, "sm_86": 0x160, "sm_89": 0x160}
STEP_LIMIT = 50_000_000
LOCAL_BASE = 0x10000  # the stack pointer's value (c[0x0][0x28]): spill slots get concrete addresses
_MASK = 0xFFFFFFFF
_LINE = re.compile(r"^\s*/\*([0-9a-f]+)\*/\s+(@!?U?P[0-6T]\s+)?([A-Z0-9_.]+)\s*(.*?)\s*;")
_LABEL = re.compile(r"^([.$\w]+):\s*$")
_FUNCTION = re.compile(r"^\s*\.type\s+([.$\w]+),@function")
_TARGET = re.compile(r"`\(([.$\w]+)\)")
_TARGETS = re.compile(r"BRANCH_TARGETS ([^\"]+)\"")
_CONSTANT = re.compile(r"^c\[0x([0-9a-f]+)\]\[(.*)\]$")
_ENCODING = re.compile(r"^\s*/\* (0x[0-9a-f]{16}) \*/\s*$")  # ``nvdisasm -hex``: an encoding's second word alone


def tool(name: str) -> str | None:
    """Path of a CUDA binary tool: on PATH, in the CUDA toolkit, or in the pip ``nvidia`` packages."""
    found = shutil.which(name) or shutil.which(f"/usr/local/cuda/bin/{name}")
    if found:
        return found
    try:
        import nvidia
    except ImportError:
        return None
    for root in nvidia.__path__:
        for candidate in sorted(pathlib.Path(root).glob(f"*/bin/{name}")):
            if os.access(candidate, os.X_OK):
                return str(candidate)
    return None


def missing_tools() -> list[str]:
    """The tools this view needs that are not installed."""
    return [name for name in ("nvcc", "nvdisasm", "cuobjdump") if tool(name) is None]


def missing_reason() -> str | None:
    """Why the SASS view cannot run here, and how to install what it lacks (None: it can)."""
    missing = missing_tools()
    if not missing:
        return None
    return (f"the SASS view needs {', '.join(missing)} (pip install -e '.[sass]' for nvdisasm and cuobjdump; "
            f"nvcc from the CUDA toolkit)")


# -- the listing ---------------------------------------------------------------

@dataclass(frozen=True)
class Instruction:
    address: int
    guard: str  # '', 'P0', '!P0', 'UP1', ...
    opcode: str  # with modifiers: 'ISETP.GE.AND'
    operands: tuple[str, ...]
    text: str

    @property
    def base(self) -> str:
        return self.opcode.split(".")[0]

    def instruction_class(self) -> str:
        return classify(self.opcode)


INDIRECT = ("BRX", "BRXU", "JMX", "JMXU")
"""Branches to an address in a register (``BRXU``/``JMXU``: a uniform register, ptxas's jump table of a switch on
the warp id, read with ``ULDC`` at a uniform index: H2/O2 viscosity at 4 warps with the constant
table's copy in shared memory, sm_90)."""
CONTROL = ("BRA", "CALL", "EXIT", "RET", "JMP") + INDIRECT


def classify(opcode: str) -> str:
    base = opcode.split(".")[0]
    if base in ("DADD", "DMUL", "DFMA", "DSETP", "DMNMX", "DSEL") or ".F64" in opcode or "64H" in opcode:
        return "mufu" if base == "MUFU" else "fp64"
    if base == "MUFU":
        return "mufu"
    simple = {"LDS": "lds", "STS": "sts", "LDG": "ldg", "STG": "stg", "LDL": "ldl", "STL": "stl",
              "BAR": "bar", "SHFL": "shfl"}
    if base in simple:
        return simple[base]
    if base in CONTROL:
        return "branch"
    return "other"


@dataclass
class Listing:
    """One cubin's code: instructions by address, labels, function entries."""

    instructions: dict[int, Instruction] = field(default_factory=dict)
    order: list[int] = field(default_factory=list)
    labels: dict[str, int] = field(default_factory=dict)
    functions: dict[str, tuple[int, int]] = field(default_factory=dict)  # name -> (first, end) address
    stalls: dict[int, int] = field(default_factory=dict)  # address -> stall count (``nvdisasm -hex`` listings)

    def next_address(self, address: int) -> int:
        return address + 16


def split_operands(text: str) -> tuple[str, ...]:
    text = text.split("(*")[0].strip()
    parts, depth, current = [], 0, ""
    for ch in text:
        if ch in "[(":
            depth += 1
        elif ch in "])":
            depth -= 1
        if ch == "," and depth == 0:
            parts.append(current.strip())
            current = ""
        else:
            current += ch
    if current.strip():
        parts.append(current.strip())
    return tuple(parts)


def parse_listing(text: str) -> Listing:
    """An ``nvdisasm -c`` listing (several functions: addresses are per
    section; functions are laid out one after another, so each is kept by
    its label and its own addresses are offset to be unique)."""
    listing = Listing()
    offset = 0
    current = None
    pending_labels: list[str] = []
    highest = -16
    last = None  # the address of the instruction whose encoding's second word comes next (``-hex``)
    for line in text.splitlines():
        if last is not None and (m := _ENCODING.match(line)):
            listing.stalls[last] = stall_count(int(m.group(1), 16))
            last = None
            continue
        if m := _FUNCTION.match(line):
            current = m.group(1)
            continue
        if m := _LABEL.match(line.strip()):
            pending_labels.append(m.group(1))
            continue
        m = _LINE.match(line)
        if not m:
            continue
        raw = int(m.group(1), 16)
        if raw == 0 and highest >= 0:  # a new section starts at 0
            offset = highest + 16
        address = raw + offset
        highest = max(highest, address)
        guard = (m.group(2) or "").strip().lstrip("@")
        instruction = Instruction(address, guard, m.group(3), split_operands(m.group(4)), line.strip())
        listing.instructions[address] = instruction
        listing.order.append(address)
        last = address
        for label in pending_labels:
            listing.labels[label] = address
        pending_labels = []
        if current is not None:
            first = listing.functions.get(current, (address, address))[0]
            listing.functions[current] = (first, address + 16)
    return listing


def stall_count(control: int) -> int:
    """The stall count of an instruction from the second 64-bit word of its encoding (Volta and later): bits
    41-44 of that word, the cycles the warp's scheduler waits before it issues the warp's next instruction,
    which ptxas sets from the fixed latencies of the instructions that depend on this one (the control
    fields after the 4-bit reuse mask, 6-bit wait mask, 3-bit read and write barriers and the yield bit;
    Jia et al. 2018, "Dissecting the NVIDIA Volta GPU Architecture via Microbenchmarking", section 2.1)."""
    return (control >> 41) & 0xF


def static_count(listing: Listing, function: str) -> int:
    """Instructions of ``function`` without the NOP padding and the final self-branch."""
    first, end = listing.functions[function]
    body = [listing.instructions[a] for a in listing.order if first <= a < end]
    while body and (body[-1].base == "NOP" or (body[-1].base == "BRA" and _TARGET.search(body[-1].text)
                                                and listing.labels.get(_TARGET.search(body[-1].text).group(1))
                                                == body[-1].address)):
        body.pop()
    return len(body)


# -- the walk ----------------------------------------------------------------

@dataclass
class Machine:
    """What a warp's lane 0 sees: special registers, constant banks (bank 0: parameters and launch sizes)."""

    tid: int
    ctaid: int = 0
    block_dim: int = 32
    grid_dim: int = 1
    banks: dict[int, dict[int, int]] = field(default_factory=dict)  # bank -> byte offset -> 32-bit word
    slabs: int | None = None  # slabs this CTA runs: the slab loop's back-edge is taken slabs - 1 times
    memory: dict[int, int] = field(default_factory=dict)  # global byte address -> 32-bit word (``global_tables``)


@dataclass
class Walk:
    counts: Counter = field(default_factory=Counter)  # class -> issued
    opcodes: Counter = field(default_factory=Counter)
    unknown_branches: int = 0
    slab_tests_overruled: int = 0  # slab loop exit tests the registers did not decide (or decided otherwise)
    stall_cycles: int = 0  # the issued instructions' stall counts summed (``Listing.stalls``; 0 without them)

    @property
    def total(self) -> int:
        return sum(self.counts.values())

    @property
    def pace(self) -> float | None:
        """Cycles per issued instruction the warp takes at least, by its stall counts (``stall_count``); None
        where the listing had no encodings."""
        return self.stall_cycles / self.total if self.stall_cycles and self.total else None


class _Lane:
    """Concrete evaluation of the integer / predicate instructions of one lane."""

    def __init__(self, listing: Listing, machine: Machine):
        self.listing = listing
        self.machine = machine
        self.regs: dict[str, int | None] = {"RZ": 0, "URZ": 0}
        self.preds: dict[str, bool | None] = {"PT": True, "UPT": True}
        self.local: dict[int, int | None] = {}  # spilled words by local address

    # operand values
    def value(self, operand: str) -> int | None:
        negate = operand.startswith("-")
        invert = operand.startswith("~")
        operand = operand.lstrip("-~").replace(".reuse", "")
        if operand.startswith("|"):
            return None
        if m := _CONSTANT.match(operand):
            result = self.constant(int(m.group(1), 16), m.group(2))
        elif re.fullmatch(r"U?R(Z|\d+)", operand.split(".")[0]):
            result = self.regs.get(operand.split(".")[0])
        elif re.fullmatch(r"-?0x[0-9a-f]+", operand):
            result = int(operand, 16) & _MASK
        elif re.fullmatch(r"-?\d+", operand):
            result = int(operand) & _MASK
        else:
            return None
        if result is None:
            return None
        if negate:
            result = -result & _MASK
        if invert:
            result = ~result & _MASK
        return result

    def constant(self, bank: int, inside: str, word: int = 0) -> int | None:
        offset = 0
        for term in inside.replace("-", "+-").split("+"):
            term = term.strip()
            if not term:
                continue
            if term.lstrip("-").startswith("0x"):
                offset += int(term, 16)
            else:
                v = self.value(term)
                if v is None:
                    return None
                offset += v
        return self.machine.banks.get(bank, {}).get(offset + 4 * word)

    def predicate(self, name: str) -> bool | None:
        negate = name.startswith("!")
        value = self.preds.get(name.lstrip("!"))
        return None if value is None else (value != negate)

    def set(self, name: str, value: int | None, wide: bool = False) -> None:
        name = name.split(".")[0]
        if name in ("RZ", "URZ") or not re.fullmatch(r"U?R\d+", name):
            if re.fullmatch(r"U?P[0-6]", name):
                self.preds[name] = None
            return
        self.regs[name] = None if value is None else value & _MASK
        if wide:
            prefix, number = re.fullmatch(r"(U?R)(\d+)", name).groups()
            high = None if value is None else (value >> 32) & _MASK
            self.regs[f"{prefix}{int(number) + 1}"] = high

    def guard(self, instruction: Instruction) -> bool | None:
        return True if not instruction.guard else self.predicate(instruction.guard)

    # execution
    def execute(self, ins: Instruction) -> None:
        taken = self.guard(ins)
        if taken is False:
            return
        before = (dict(self.regs), dict(self.preds)) if taken is None else None
        handler = _HANDLERS.get(ins.base.lstrip("U") if ins.base not in ("UMOV",) else "MOV")
        if handler is None:
            self.clobber(ins)
        else:
            handler(self, ins)
        if before is not None:  # unknown guard: whatever it wrote is unknown
            for name in set(self.regs) | set(before[0]):
                if self.regs.get(name) != before[0].get(name):
                    self.regs[name] = None
            for name in set(self.preds) | set(before[1]):
                if self.preds.get(name) != before[1].get(name):
                    self.preds[name] = None

    def clobber(self, ins: Instruction) -> None:
        """Destinations of an instruction not evaluated become unknown."""
        if ins.base in NO_DESTINATION or not ins.operands:
            return
        wide = _writes_64_bits(ins.opcode)
        for operand in ins.operands[:2]:
            name = operand.split(".")[0]
            if re.fullmatch(r"U?P[0-6]", name):
                self.preds[name] = None
            elif re.fullmatch(r"U?R\d+", name):
                self.set(name, None, wide)
                if ".128" in ins.opcode:
                    prefix, number = re.fullmatch(r"(U?R)(\d+)", name).groups()
                    self.set(f"{prefix}{int(number) + 2}", None, True)
                break
            else:
                break


def _writes_64_bits(opcode: str) -> bool:
    """Does the instruction write a register pair (a double, a 64-bit load)?"""
    base = opcode.split(".")[0]
    if base in ("DADD", "DMUL", "DFMA", "DMNMX", "DSEL") or ".64" in opcode or ".128" in opcode:
        return True
    return base in ("I2F", "F2F", "FRND") and opcode.split(".")[1:2] == ["F64"]


def register_width(opcode: str) -> int:
    """32-bit registers the destination of ``opcode`` spans (a 128-bit load: four)."""
    return 4 if ".128" in opcode else 2 if _writes_64_bits(opcode) else 1


NO_DESTINATION = {"STG", "STS", "ST", "BAR", "WARPSYNC", "BSSY", "BSYNC", "RED", "NOP", "DEPBAR", "MEMBAR",
                   "ENDCOLLECTIVE", "CCTL", "ERRBAR", "FENCE", *CONTROL}


def _mov(lane: _Lane, ins: Instruction) -> None:
    lane.set(ins.operands[0], lane.value(ins.operands[1]))


def _shfl(lane: _Lane, ins: Instruction) -> None:
    """SHFL.IDX from lane 0 (``SHFL.IDX PT, Rd, Ra, RZ, 0x1f``: the emitted warp id) gives lane 0's value,
    which is what the walk follows; any other shuffle's value is unknown."""
    if ins.opcode.startswith("SHFL.IDX") and len(ins.operands) >= 4 and lane.value(ins.operands[3]) == 0:
        lane.set(ins.operands[1], lane.value(ins.operands[2]))
    else:
        lane.set(ins.operands[1], None)


def _special(lane: _Lane, ins: Instruction) -> None:
    m = lane.machine
    values = {"SR_TID.X": m.tid, "SR_CTAID.X": m.ctaid, "SR_LANEID": m.tid & 31, "SR_TID.Y": 0, "SR_TID.Z": 0,
              "SR_CTAID.Y": 0, "SR_CTAID.Z": 0}
    lane.set(ins.operands[0], values.get(ins.operands[1]))


def _imad(lane: _Lane, ins: Instruction) -> None:
    a, b, c = (lane.value(x) for x in ins.operands[1:4])
    if ".HI" in ins.opcode or ".X" in ins.opcode.split(".") or None in (a, b, c):
        lane.set(ins.operands[0], None, ".WIDE" in ins.opcode)
        return
    if ".WIDE" in ins.opcode:
        signed = ".U32" not in ins.opcode
        sa = a - (1 << 32) if signed and a >> 31 else a
        sb = b - (1 << 32) if signed and b >> 31 else b
        c_high = lane.value(_next_register(ins.operands[3]))
        full_c = c if c_high is None else c | (c_high << 32)
        lane.set(ins.operands[0], (sa * sb + full_c) & 0xFFFFFFFFFFFFFFFF, True)
    else:
        lane.set(ins.operands[0], a * b + c)


def _next_register(operand: str) -> str:
    m = re.fullmatch(r"(U?R)(\d+)(.*)", operand.lstrip("-"))
    return f"{m.group(1)}{int(m.group(2)) + 1}" if m else "RZ"


def _iadd3(lane: _Lane, ins: Instruction) -> None:
    """``IADD3 Rd, [Pc0, [Pc1,]] a, b, c``: the sum, its carries out into the predicates (bit 32, bit 33);
    ``IADD3.X Rd, a, b, c, Pc0, Pc1``: with the carries in (the high word of a 64-bit sum)."""
    extended = ".X" in ins.opcode.split(".")
    carries_out = [] if extended else [x for x in ins.operands[1:3] if re.fullmatch(r"U?P[0-6T]", x)]
    operands = [x for x in ins.operands[1 + len(carries_out):] if not re.fullmatch(r"!?U?P[0-6T]", x)]
    carries_in = [x for x in ins.operands[1:] if re.fullmatch(r"!?U?P[0-6T]", x)] if extended else []
    values = [lane.value(x) for x in operands] + [lane.predicate(x) for x in carries_in]
    total = None if None in values else sum(int(v) for v in values)
    lane.set(ins.operands[0], total)
    for bit, name in enumerate(carries_out):
        if name not in ("PT", "UPT"):
            lane.preds[name] = None if total is None else bool((total >> (32 + bit)) & 1)


def _viadd(lane: _Lane, ins: Instruction) -> None:
    a, b = lane.value(ins.operands[1]), lane.value(ins.operands[2])
    lane.set(ins.operands[0], None if None in (a, b) else a + b)


def _lut(function: int, a: int, b: int, c: int) -> int:
    result = 0
    for bit in range(32):
        index = (((a >> bit) & 1) << 2) | (((b >> bit) & 1) << 1) | ((c >> bit) & 1)
        result |= ((function >> index) & 1) << bit
    return result


def _lop3(lane: _Lane, ins: Instruction) -> None:
    operands = list(ins.operands)
    output_predicate = None
    if re.fullmatch(r"U?P[0-6T]", operands[0]):
        output_predicate = operands.pop(0)
    a, b, c, function = (lane.value(x) for x in operands[1:5])
    result = None if None in (a, b, c, function) else _lut(function, a, b, c)
    lane.set(operands[0], result)
    if output_predicate and output_predicate != "PT":
        lane.preds[output_predicate] = None if result is None else result != 0


def _shf(lane: _Lane, ins: Instruction) -> None:
    low, shift, high = (lane.value(x) for x in ins.operands[1:4])
    if None in (low, shift, high) or ".64" in ins.opcode:
        lane.set(ins.operands[0], None)
        return
    shift &= 31
    if ".L" in ins.opcode:
        result = ((high << 32 | low) << shift) >> 32 if ".HI" in ins.opcode else low << shift
    elif ".S32" in ins.opcode:
        signed = high - (1 << 32) if high >> 31 else high
        result = signed >> shift if ".HI" in ins.opcode else (((high << 32) | low) >> shift)
    else:
        result = high >> shift if ".HI" in ins.opcode else ((high << 32) | low) >> shift
    lane.set(ins.operands[0], result)


def _lea(lane: _Lane, ins: Instruction) -> None:
    """``LEA Rd, [Pc,] a, b, shift``: (a << shift) + b, its carry out into Pc; ``LEA.HI.X Rd, a, b, c, shift, Pc``:
    the high word of ((c:a) << shift) + (b:...) with the carry in (the high word of a 64-bit address)."""
    predicates = [x for x in ins.operands[1:] if re.fullmatch(r"!?U?P[0-6T]", x)]
    operands = [x for x in ins.operands if not re.fullmatch(r"!?U?P[0-6T]", x)]
    parts = ins.opcode.split(".")
    if "HI" in parts and "X" in parts and "SX32" not in parts and len(operands) == 5 and len(predicates) == 1:
        a, b, c, shift = (lane.value(x) for x in operands[1:5])
        carry = lane.predicate(predicates[0])
        known = None not in (a, b, c, shift, carry)
        lane.set(operands[0], ((((c << 32) | a) << shift) >> 32) + b + int(carry) if known else None)
        return
    a, b, shift = (lane.value(x) for x in operands[1:4])
    unknown = "HI" in parts or "X" in parts or None in (a, b, shift)
    total = None if unknown else ((a << shift) & _MASK) + b
    lane.set(operands[0], total)
    for operand in predicates:
        if re.fullmatch(r"U?P[0-6]", operand):
            lane.preds[operand] = None if total is None else bool((total >> 32) & 1)


def _signed(x: int) -> int:
    return x - (1 << 32) if x >> 31 else x


def _compare(kind: str, a: int, b: int, unsigned: bool) -> bool:
    if not unsigned:
        a, b = _signed(a), _signed(b)
    return {"EQ": a == b, "NE": a != b, "LT": a < b, "LE": a <= b, "GT": a > b, "GE": a >= b}[kind]


def _isetp(lane: _Lane, ins: Instruction) -> None:
    parts = ins.opcode.split(".")
    first, second, a, b = ins.operands[:4]
    chain = lane.predicate(ins.operands[4]) if len(ins.operands) > 4 else True
    a, b = lane.value(a), lane.value(b)
    _set_predicates(lane, parts, first, second, None if "EX" in parts or None in (a, b) or chain is None else
                    _compare(parts[1], a, b, "U32" in parts), chain)


def _set_predicates(lane: _Lane, parts: list[str], first: str, second: str, result: bool | None,
                    chain: bool | None) -> None:
    """What a ``xSETP.<cmp>.<AND|OR|XOR> Pa, Pb, ..., Pc`` writes: Pa = result op Pc, Pb = (not result) op Pc;
    both unknown with ``result`` (None: unknown)."""
    if result is None:
        lane.preds[first] = lane.preds[second] = None
    else:
        combine = (lambda x, y: x and y) if "AND" in parts else (lambda x, y: x or y) if "OR" in parts else \
            (lambda x, y: x != y)
        lane.preds[first] = combine(result, chain)
        lane.preds[second] = combine(not result, chain)
    lane.preds["PT"] = lane.preds["UPT"] = True


def _double(lane: _Lane, operand: str) -> float | None:
    """A double operand: a register pair (``|R|`` its magnitude, ``-R`` negated) or an immediate."""
    magnitude, negate = operand.startswith("|") or operand.startswith("-|"), operand.startswith("-")
    name = operand.strip("-|").replace(".reuse", "")
    if re.fullmatch(r"R\d+", name):
        low, high = lane.value(name), lane.value(_next_register(name))
        if None in (low, high):
            return None
        value = float(np.array([(high << 32) | low], dtype=np.uint64).view(np.float64)[0])
    else:
        try:
            value = float(name.replace("QNAN", "nan"))
        except ValueError:
            return None
    value = abs(value) if magnitude else value
    return -value if negate else value


_UNORDERED = {"EQU": "EQ", "NEU": "NE", "LTU": "LT", "LEU": "LE", "GTU": "GT", "GEU": "GE"}


def _dsetp(lane: _Lane, ins: Instruction) -> None:
    """``DSETP.<cmp>.<AND|OR|XOR> Pa, Pb, a, b, Pc`` on known doubles (a table's value against a constant: the
    table form's exponents of 1); the unordered comparisons are true on a NaN."""
    parts = ins.opcode.split(".")
    first, second, a, b = ins.operands[:4]
    chain = lane.predicate(ins.operands[4]) if len(ins.operands) > 4 else True
    x, y = _double(lane, a), _double(lane, b)
    kind = parts[1]
    ordered = _UNORDERED.get(kind, kind)
    if None in (x, y, chain) or ordered not in ("EQ", "NE", "LT", "LE", "GT", "GE"):
        result = None
    elif x != x or y != y:  # NaN: only the unordered comparisons hold
        result = kind in _UNORDERED
    else:
        result = {"EQ": x == y, "NE": x != y, "LT": x < y, "LE": x <= y, "GT": x > y, "GE": x >= y}[ordered]
    _set_predicates(lane, parts, first, second, result, chain)


def _sel(lane: _Lane, ins: Instruction) -> None:
    p = lane.predicate(ins.operands[3])
    a, b = lane.value(ins.operands[1]), lane.value(ins.operands[2])
    lane.set(ins.operands[0], None if p is None else (a if p else b))


def _minmax(lane: _Lane, ins: Instruction) -> None:
    a, b = lane.value(ins.operands[1]), lane.value(ins.operands[2])
    use_min = lane.predicate(ins.operands[3]) if len(ins.operands) > 3 else None
    if None in (a, b, use_min):
        lane.set(ins.operands[0], None)
        return
    if ".U32" not in ins.opcode:
        a, b = _signed(a), _signed(b)
    lane.set(ins.operands[0], min(a, b) if use_min else max(a, b))


def _viaddmnmx(lane: _Lane, ins: Instruction) -> None:
    """min (PT) or max (!PT) of a + b and c."""
    a, b, c = (lane.value(x) for x in ins.operands[1:4])
    use_min = lane.predicate(ins.operands[4]) if len(ins.operands) > 4 else None
    if None in (a, b, c, use_min):
        lane.set(ins.operands[0], None)
        return
    total = (a + b) & _MASK
    if ".U32" not in ins.opcode:
        total, c = _signed(total), _signed(c)
    lane.set(ins.operands[0], min(total, c) if use_min else max(total, c))


def _local_address(lane: _Lane, operand: str) -> int | None:
    """Address of a local-memory operand such as ``[R1+0x68]``."""
    inside = operand.strip("[]")
    total = 0
    for term in inside.replace("-", "+-").split("+"):
        term = term.strip()
        if not term:
            continue
        value = int(term, 16) if term.lstrip("-").startswith("0x") else lane.value(term)
        if value is None:
            return None
        total += value
    return total & _MASK


def _words(opcode: str) -> int:
    return 4 if ".128" in opcode else 2 if ".64" in opcode else 1


def _stl(lane: _Lane, ins: Instruction) -> None:
    """A spill store: the words it writes are remembered for the refill."""
    address = _local_address(lane, ins.operands[0])
    m = re.fullmatch(r"(R)(\d+|Z)", ins.operands[1].split(".")[0])
    if address is None:
        lane.local.clear()  # somewhere unknown: forget everything
        return
    for i in range(_words(ins.opcode)):
        register = "RZ" if m is None or m.group(2) == "Z" else f"R{int(m.group(2)) + i}"
        lane.local[address + 4 * i] = lane.regs.get(register)


def _ldl(lane: _Lane, ins: Instruction) -> None:
    """A refill: the words stored there, where known."""
    address = _local_address(lane, ins.operands[1])
    m = re.fullmatch(r"R(\d+)", ins.operands[0].split(".")[0])
    if m is None:
        return
    for i in range(_words(ins.opcode)):
        value = None if address is None else lane.local.get(address + 4 * i)
        lane.set(f"R{int(m.group(1)) + i}", value)


def _ldc(lane: _Lane, ins: Instruction) -> None:
    m = _CONSTANT.match(ins.operands[1])
    wide = ".64" in ins.opcode
    if not m:
        lane.set(ins.operands[0], None, wide)
        return
    bank, inside = int(m.group(1), 16), m.group(2)
    low = lane.constant(bank, inside)
    high = lane.constant(bank, inside, 1) if wide else 0
    value = None if low is None or high is None else low | (high << 32)
    lane.set(ins.operands[0], value, wide)


_GLOBAL_ADDRESS = re.compile(r"\[(U?R\d+)\.64(?:\+(0x[0-9a-f]+|U?R\d+))?\]$")


def _ldg(lane: _Lane, ins: Instruction) -> None:
    """A global load: the words of the tables singe emits (``global_tables``) where the address is known and
    in them, else unknown."""
    words = _words(ins.opcode)
    address = None
    m = _GLOBAL_ADDRESS.search(ins.operands[1])  # desc[UR6][R22.64+0x8]: the address is the last bracket
    if m:
        low, high = lane.value(m.group(1)), lane.value(_next_register(m.group(1)))
        offset = lane.value(m.group(2)) if m.group(2) else 0
        if None not in (low, high, offset):
            address = ((high << 32) | low) + offset
    memory = lane.machine.memory
    values = [None if address is None else memory.get(address + 4 * i) for i in range(words)]
    if ".U8" in ins.opcode or ".S8" in ins.opcode or ".U16" in ins.opcode or ".S16" in ins.opcode:
        values = [None]
    first = re.fullmatch(r"(R)(\d+)", ins.operands[0].split(".")[0])
    if first is None:
        return
    for i, value in enumerate(values):
        lane.set(f"R{int(first.group(2)) + i}", value)


def _plop3(lane: _Lane, ins: Instruction) -> None:
    outputs = [x for x in ins.operands[:2]]
    inputs = [lane.predicate(x) for x in ins.operands[2:5]]
    function = lane.value(ins.operands[5]) if len(ins.operands) > 5 else None
    if None in inputs or function is None:
        for name in outputs:
            if name not in ("PT", "UPT"):
                lane.preds[name] = None
        return
    a, b, c = (int(x) for x in inputs)
    index = (a << 2) | (b << 1) | c
    result = bool((function >> index) & 1)
    if outputs[0] not in ("PT", "UPT"):
        lane.preds[outputs[0]] = result
    if outputs[1] not in ("PT", "UPT"):
        lane.preds[outputs[1]] = None


def _hfma2_constant(lane: _Lane, ins: Instruction) -> None:
    """``HFMA2.MMA R7, -RZ, RZ, 0, 5.96e-08``: ptxas's way of writing a 32-bit
    constant (0 * 0 + the half2 immediate: high half first, low half second)."""
    operands = ins.operands
    if len(operands) == 5 and operands[1] in ("RZ", "-RZ") and operands[2] == "RZ":
        try:
            halves = [int(np.float16(float(h)).view(np.uint16)) for h in operands[3:5]]
        except ValueError:
            halves = None
        if halves is not None:
            lane.set(operands[0], (halves[0] << 16) | halves[1])
            return
    lane.clobber(ins)


_HANDLERS = {"MOV": _mov, "R2UR": _mov, "HFMA2": _hfma2_constant, "S2R": _special, "S2UR": _special, "CS2R": None, "IMAD": _imad, "IADD3": _iadd3,
             "VIADD": _viadd, "IADD": _viadd, "LOP3": _lop3, "SHF": _shf, "LEA": _lea, "ISETP": _isetp,
             "SEL": _sel, "VIMNMX": _minmax, "IMNMX": _minmax, "VIADDMNMX": _viaddmnmx, "STL": _stl, "LDL": _ldl, "LDC": _ldc, "ULDC": _ldc, "LDG": _ldg, "DSETP": _dsetp, "PLOP3": _plop3,
             "SHFL": _shfl}
_HANDLERS = {k: v for k, v in _HANDLERS.items() if v is not None}


def walk(listing: Listing, entry: str, machine: Machine) -> Walk:
    """Issued instructions of one warp (lane 0 decides the control flow) from ``entry`` to EXIT."""
    lane = _Lane(listing, machine)
    result = Walk()
    address = listing.functions[entry][0]
    back_edges = slab_back_edges(listing, entry) if machine.slabs is not None else frozenset()
    trips = 0
    calls: list[int] = []
    for _ in range(STEP_LIMIT):
        ins = listing.instructions[address]
        result.counts[ins.instruction_class()] += 1
        result.opcodes[ins.opcode] += 1
        result.stall_cycles += listing.stalls.get(address, 0)
        following = listing.next_address(address)
        base = ins.base
        if base in CONTROL:
            taken = _branch_condition(lane, ins)
            if ".DIV" in ins.opcode:
                taken = False
            elif address in back_edges:
                trips += 1
                result.slab_tests_overruled += taken is not (trips < machine.slabs)
                taken = trips < machine.slabs
            elif taken is None:
                result.unknown_branches += 1
                taken = _falls_into_call(listing, following)
            if not taken:
                address = following
                continue
            if base == "EXIT":
                if calls:
                    raise ValueError(f"EXIT inside a call at {address:#x}")
                return result
            if base == "RET":
                address = calls.pop()
                continue
            target = _branch_target(listing, lane, ins, following)
            if base == "CALL" and not _jumps(listing, entry, target):
                calls.append(following)
            address = target
            continue
        lane.execute(ins)
        address = following
    raise ValueError(f"{entry}: no EXIT within {STEP_LIMIT} instructions (a loop whose count is not known?)")


def slab_back_edges(listing: Listing, entry: str) -> frozenset[int]:
    """Addresses of the slab loops' back-edges in ``entry``: the conditional
    backward branches no other conditional backward branch encloses (one, or
    one per case when the warp switch is outside the slab loop and every case
    loops over the slabs on its own), when the backward branch that goes
    furthest back is conditional (nvcc rotates the grid-stride loop over
    slabs, its exit test at the bottom; a loop tested at the top, whose
    back-edge is unconditional, gives none).  The walk takes them by trip
    count, whatever the registers say: ptxas may reuse the uniform register
    holding the slab count on one warp's path and restore it from where the
    walk cannot follow."""
    first, end = listing.functions[entry]
    setmaxnreg = [a for a in listing.order if listing.instructions[a].opcode.startswith("USETMAXREG")]
    backward = []  # (address, target, conditional)
    for address in listing.order:
        ins = listing.instructions[address]
        if not first <= address < end or ins.base != "BRA" or ".DIV" in ins.opcode:
            continue
        m = _TARGET.search(ins.text)
        target = listing.labels.get(m.group(1)) if m else None
        if target is not None and target < address and not _retry(setmaxnreg, target, address):
            backward.append((address, target, bool(ins.guard)))
    if not backward or not min(backward, key=lambda b: b[1])[2]:
        return frozenset()
    conditional = [(a, t) for a, t, guarded in backward if guarded]
    return frozenset(a for a, t in conditional
                     if not any((t2, a2) != (t, a) and t2 <= t and a <= a2 for a2, t2 in conditional))


def _retry(setmaxnreg: list[int], target: int, address: int) -> bool:
    """The backward branch at ``address`` to ``target`` retries a setmaxnreg.inc (one of the
    ``USETMAXREG`` at ``setmaxnreg`` in its loop: ``TRY_ALLOC`` until the CTA's pool has the
    registers, sm_90a): no slab loop.  Its predicate is unknown to the walk, which takes it
    as not taken (the registers come at once)."""
    return any(target <= a <= address for a in setmaxnreg)


def slab_back_edge(listing: Listing, entry: str) -> int | None:
    """The first of ``slab_back_edges`` (None: none)."""
    return min(slab_back_edges(listing, entry), default=None)


def _branch_condition(lane: _Lane, ins: Instruction) -> bool | None:
    """Guard and, for ``@P0 BRA P1, target``, the second predicate."""
    conditions = [lane.guard(ins)]
    if ins.operands and re.fullmatch(r"!?U?P[0-6T]", ins.operands[0]):
        conditions.append(lane.predicate(ins.operands[0]))
    if False in conditions:
        return False
    return None if None in conditions else True




def _first_control(listing: Listing, address: int) -> str | None:
    """The opcode of the first control-flow instruction from ``address`` on (None: none)."""
    while address in listing.instructions:
        base = listing.instructions[address].base
        if base in CONTROL:
            return base
        address = listing.next_address(address)
    return None


def _jumps(listing: Listing, entry: str, target: int) -> bool:
    """Is a ``CALL`` to ``target`` a jump, never returned from?  ptxas (sm_80) calls labels of the kernel
    itself (``CALL.REL.NOINC `(.L_x_11)``, then ``BRA`` past them): it ends a slab loop whose back-edge is
    unconditional with a predicated call of its exit (``BSYNC; EXIT``), and enters the code after a warp's
    last barrier by one (n-heptane diffusion at 13 warps).  Only the library's slow paths, functions of
    their own, are called and return (``RET``)."""
    first, end = listing.functions[entry]
    return first <= target < end


def _falls_into_call(listing: Listing, address: int) -> bool:
    """Does the code from ``address`` reach a CALL (a library slow path) before any other branch?
    An unknown branch is resolved toward the path without the call."""
    return _first_control(listing, address) == "CALL"


def _branch_target(listing: Listing, lane: _Lane, ins: Instruction, following: int) -> int:
    if ins.base in INDIRECT:
        words = " ".join(ins.operands).split()  # 'R2 -0x290'
        register = lane.value(words[0])
        if register is None:
            raise ValueError(f"indirect branch on an unknown value at {ins.address:#x}: {ins.text}")
        offset = int(words[1], 16) if len(words) > 1 else 0
        return following + offset + _signed(register)
    m = _TARGET.search(ins.text)
    if not m:
        raise ValueError(f"branch without a target at {ins.address:#x}: {ins.text}")
    return listing.labels[m.group(1)]


# -- the cubin ---------------------------------------------------------------

def constant_sections(elf_dump: str) -> dict[str, list[int]]:
    """Words of every ``.nv.constantN...`` section printed by ``cuobjdump -elf``."""
    sections: dict[str, list[int]] = {}
    current = None
    for line in elf_dump.splitlines():
        stripped = line.strip()
        if re.fullmatch(r"\.nv\.constant\d[.\w$]*", stripped):
            current = stripped
            sections[current] = []
        elif current and re.fullmatch(r"(0x[0-9a-f]{8}\s*)+", stripped):
            sections[current] += [int(w, 16) for w in stripped.split()]
        elif current and stripped:
            current = None
    return sections


def parameter_offsets(elf_dump: str, function: str) -> list[tuple[int, int]]:
    """(offset, size) of each parameter of ``function``, in order (EIATTR_KPARAM_INFO of its .nv.info)."""
    block = elf_dump.split(f".nv.info.{function}")[-1] if f".nv.info.{function}" in elf_dump else elf_dump
    params = re.findall(r"Ordinal\s*:\s*0x([0-9a-f]+)\s+Offset\s*:\s*0x([0-9a-f]+)\s+Size\s*:\s*0x([0-9a-f]+)",
                        block)
    seen = {}
    for ordinal, offset, size in params:
        seen.setdefault(int(ordinal, 16), (int(offset, 16), int(size, 16)))
    return [seen[k] for k in sorted(seen)]


@dataclass
class KernelSass:
    """One kernel's SASS view."""

    function: str
    arch: str
    static: int
    registers: int
    spill_stores: int
    spill_loads: int
    warps: list[Walk]  # per warp, one slab (warp-specialized) or one point (data-parallel, one warp)
    per_point: Counter
    nvcc_s: float = 0.0

    @property
    def total(self) -> int:
        return sum(self.per_point.values())

    @property
    def pace(self) -> float | None:
        """Cycles per issued instruction by the stall counts, over the warps (``Walk.pace``); None without."""
        stalls = sum(w.stall_cycles for w in self.warps)
        return stalls / self.total if stalls and self.total else None

    @property
    def imbalance(self) -> float:
        totals = [w.total for w in self.warps]
        return max(totals) / (sum(totals) / len(totals)) if totals and sum(totals) else 1.0


GLOBAL_BASE = 1 << 40  # where the walk places .nv.global.init (any address the kernel does not compute otherwise)


def _section_words(elf_dump: str, name: str) -> list[int]:
    """The words of one section printed by ``cuobjdump -elf`` (its name alone on a line, then hex words)."""
    words, inside = [], False
    for line in elf_dump.splitlines():
        stripped = line.strip()
        if stripped == name:
            inside = True
        elif inside and re.fullmatch(r"(0x[0-9a-f]{8}\s*)+", stripped):
            words += [int(w, 16) for w in stripped.split()]
        elif inside and stripped:
            break
    return words


def global_tables(elf_dump: str) -> tuple[dict[int, int], dict[int, int]]:
    """The tables a kernel reads from global memory (singe's ``static __device__`` arrays: the table form's):
    (bank-4 words, memory).  ``.nv.global.init`` is placed at ``GLOBAL_BASE`` (memory: byte address -> word),
    and each pointer ``.rela.nv.constant4`` relocates into bank 4 (R_CUDA_64) is its symbol's address there."""
    words = _section_words(elf_dump, ".nv.global.init")
    memory = {GLOBAL_BASE + 4 * i: w for i, w in enumerate(words)}
    index = re.search(r"^\s*0x[0-9a-f]+\s+0\s+0\s+SECTION\s+LOCAL\s+DEFAULT\s+-\s+(0x[0-9a-f]+)\s+\.nv\.global\.init$",
                      elf_dump, re.M)
    symbols = {}
    if index:
        pattern = rf"^\s*0x[0-9a-f]+\s+(0x[0-9a-f]+|0)\s+(0x[0-9a-f]+|0)\s+OBJECT\s+\w+\s+\w+\s+-\s+{index.group(1)}\s+(\S+)$"
        symbols = {name: int(value, 16) for value, _, name in re.findall(pattern, elf_dump, re.M)}
    bank4: dict[int, int] = {}
    relocations = elf_dump.split(".section .rela.nv.constant4", 1)[1].split(".section", 1)[0] \
        if ".section .rela.nv.constant4" in elf_dump else ""
    for offset, name, addend in re.findall(r"^(0x[0-9a-f]+|0)\s+(\S+)\s+R_CUDA_64\s+(0x[0-9a-f]+|0)$", relocations,
                                           re.M):
        if name in symbols:
            address = GLOBAL_BASE + symbols[name] + int(addend, 16)
            bank4[int(offset, 16)] = address & _MASK
            bank4[int(offset, 16) + 4] = address >> 32
    return bank4, memory


def _banks(elf_dump: str, function: str, arch: str, last_ints: dict[int, int], block_dim: int,
           bank4: dict[int, int] | None = None) -> dict:
    """The constant banks a warp of ``function`` reads; ``bank4``: the pointers of ``global_tables`` (read from
    ``elf_dump`` when not given)."""
    sections = constant_sections(elf_dump)
    banks: dict[int, dict[int, int]] = {}
    for name, words in sections.items():
        bank = int(name[len(".nv.constant")])
        if bank == 0 or (name.count(".") > 2 and function not in name):
            continue
        banks.setdefault(bank, {}).update({4 * i: w for i, w in enumerate(words)})
    banks.setdefault(4, {}).update(global_tables(elf_dump)[0] if bank4 is None else bank4)
    params = parameter_offsets(elf_dump, function)
    base = PARAMETER_BASE.get(arch, 0x210)
    bank0 = {0x0: block_dim, 0x4: 1, 0x8: 1, 0xC: 1, 0x10: 1, 0x14: 1, 0x28: LOCAL_BASE}
    for index, value in last_ints.items():
        offset, _ = params[index]
        bank0[base + offset] = value & _MASK
    banks[0] = bank0
    return banks


def count_kernel(listing: Listing, elf_dump: str, function: str, arch: str, warps: int,
                 data_parallel: bool = False) -> list[Walk]:
    """Per warp issued counts for one slab of 32 points (the difference of two
    slabs and one), or for one warp of a data-parallel kernel."""
    params = parameter_offsets(elf_dump, function)
    n_index, stride_index = len(params) - 2, len(params) - 1  # ..., n_points, species_stride
    bank4, memory = global_tables(elf_dump)
    if data_parallel:
        banks = _banks(elf_dump, function, arch, {n_index: 1 << 20, stride_index: 1 << 20}, 32 * warps, bank4)
        return [walk(listing, function, Machine(tid=0, block_dim=32 * warps, grid_dim=1 << 15, banks=banks,
                                                memory=memory))]
    banks = {slabs: _banks(elf_dump, function, arch, {n_index: 32 * slabs, stride_index: 32 * slabs}, 32 * warps,
                           bank4) for slabs in (1, 2)}  # the same for every warp (the walk only reads them)
    result = []
    for w in range(warps):
        walks = []
        for slabs in (1, 2):
            walks.append(walk(listing, function, Machine(tid=32 * w, block_dim=32 * warps, banks=banks[slabs],
                                                         slabs=slabs, memory=memory)))
        difference = Walk(walks[1].counts - walks[0].counts, walks[1].opcodes - walks[0].opcodes,
                          walks[1].unknown_branches - walks[0].unknown_branches,
                          walks[1].slab_tests_overruled, walks[1].stall_cycles - walks[0].stall_cycles)
        result.append(difference)
    return result


def analyse(source: str | os.PathLike, arch: str = "sm_90", warps: int | None = None,
            data_parallel: bool = False, extra: list[str] | None = None, keep: str | None = None) -> KernelSass:
    """Compile ``source`` to a cubin and return the SASS view of its kernel
    (``warps``: warps per CTA, read from the generated file when not given)."""
    reason = missing_reason()
    if reason:
        raise RuntimeError(reason)
    source = pathlib.Path(source)
    if warps is None:
        m = re.search(r"__launch_bounds__\((\d+)", source.read_text())
        warps = int(m.group(1)) // 32 if m else 1
    with tempfile.TemporaryDirectory() as scratch:
        cubin = pathlib.Path(scratch) / "kernel.cubin"
        command = [tool("nvcc"), f"-arch={arch}", "-O3", "-cubin", "-Xptxas", "-v", str(source), "-o", str(cubin),
                   f"-I{source.parent}"] + list(extra or [])
        start = time.perf_counter()
        built = subprocess.run(command, capture_output=True, text=True)
        seconds = time.perf_counter() - start
        if built.returncode:
            raise RuntimeError(f"nvcc failed on {source}:\n{built.stdout}{built.stderr}")
        text = subprocess.run([tool("nvdisasm"), "-c", "-hex", str(cubin)], capture_output=True, text=True,
                              check=True).stdout
        elf_dump = subprocess.run([tool("cuobjdump"), "-elf", str(cubin)], capture_output=True, text=True,
                                  check=True).stdout
    if keep:  # the disassembly, the ELF dump and ptxas's log, to read or to analyse again with view()
        stem = pathlib.Path(keep) / source.stem
        stem.parent.mkdir(parents=True, exist_ok=True)
        for suffix, content in ((".sass", text), (".elf", elf_dump), (".ptxas", built.stdout + built.stderr)):
            stem.with_suffix(suffix).write_text(content)
    result = view(text, elf_dump, built.stdout + built.stderr, arch, warps, data_parallel)
    result.nvcc_s = seconds
    return result


def view(listing_text: str, elf_dump: str, ptxas_log: str, arch: str, warps: int,
         data_parallel: bool = False) -> KernelSass:
    """The SASS view from the disassembly, the ELF dump and ptxas's log."""
    from singe.codegen.nvcc import parse_ptxas

    listing = parse_listing(listing_text)
    kernel = next(name for name in listing.functions if not name.startswith("$"))  # not a library subroutine
    entries, _ = parse_ptxas(ptxas_log)
    entry = next((e for e in entries if e.function == kernel), None)
    walks = count_kernel(listing, elf_dump, kernel, arch, warps, data_parallel)
    per_point = Counter()
    for w in walks:
        per_point.update(w.counts)
    return KernelSass(kernel, arch, static_count(listing, kernel), entry.registers if entry else 0,
                      entry.spill_stores if entry else 0, entry.spill_loads if entry else 0, walks, per_point)


def format_view(name: str, sass: KernelSass) -> str:
    """One line per kernel: resources and issued lane-instructions per point by class."""
    classes = " ".join(f"{c}={sass.per_point[c]}" for c in CLASSES if sass.per_point[c])
    return (f"{name}: {sass.arch} {sass.registers} registers, spills {sass.spill_stores}/{sass.spill_loads} B, "
            f"{sass.static} static SASS, issued/point {sass.total} ({classes}), "
            f"warp imbalance {sass.imbalance:.2f}, "
            + (f"{sass.pace:.2f} cycles an instruction by the stall counts, " if sass.pace else "")
            + f"nvcc {sass.nvcc_s:.1f} s")


def model_check(compiled, arch: str = "sm_90") -> list[tuple[int, int, int]]:
    """(warp, the timing model's issued instructions per slab, the compiled
    kernel's per-warp issued count) for every warp of ``compiled`` (a
    ``singe.CompiledKernel``): ``singe.timing.issued_per_warp`` (of a table-form
    kernel: ``singe.timing_tables.issued_per_warp``) against this view's walk of
    the SASS nvcc makes of the generated kernel."""
    from singe.codegen import generate
    from singe.timing import issued_per_warp
    from singe.timing_tables import issued_per_warp as table_issued_per_warp

    modeled = table_issued_per_warp(compiled) if compiled.form == "tables" else issued_per_warp(compiled.programs,
                                                                                                 arch)
    generated = generate(compiled)
    with tempfile.TemporaryDirectory() as scratch:
        sass = analyse(generated.write(scratch)[0], arch, compiled.programs.warps)
    return [(w, sum(m.values()), walk.total) for w, (m, walk) in enumerate(zip(modeled, sass.warps))]


def baseline_check(compiled, arch: str = "sm_90") -> tuple[float, int]:
    """(the timing model's issued instructions per point of the data-parallel baseline of ``compiled``,
    ``singe.timing.baseline_steps`` on ``arch``'s preset, the walk's count of the SASS nvcc makes of it)."""
    from singe.codegen import generate_baseline
    from singe.timing import baseline_steps, preset_for

    modeled = dict(baseline_steps(compiled.graph, preset_for(arch))[0].demand)["issue"]
    with tempfile.TemporaryDirectory() as scratch:
        view = analyse(generate_baseline(compiled).write(scratch)[0], arch, None, True)
    return modeled, view.total


def format_model_check(name: str, rows: list[tuple[int, int, int]]) -> str:
    """One line: per warp 'model/SASS' and the largest relative difference."""
    worst = max((abs(m - s) / s for _, m, s in rows if s), default=0.0)
    return f"{name}: per warp model/SASS " + " ".join(f"{m}/{s}" for _, m, s in rows) + f"; largest {worst:.1%}"


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("sources", nargs="+")
    parser.add_argument("--arch", default="sm_90")
    parser.add_argument("--warps", type=int)
    parser.add_argument("--baseline", action="store_true", help="data-parallel kernels (one thread per point)")
    parser.add_argument("--keep", metavar="DIR", help="write each kernel's .sass, .elf and .ptxas there")
    args = parser.parse_args(argv)
    missing = missing_tools()
    if missing:
        print(f"skipped: SASS view needs {', '.join(missing)}")
        return 0
    for source in args.sources:
        sass = analyse(source, args.arch, args.warps, args.baseline or "baseline" in pathlib.Path(source).name,
                       keep=args.keep)
        print(format_view(pathlib.Path(source).name, sass))
    return 0


if __name__ == "__main__":
    sys.exit(main())
