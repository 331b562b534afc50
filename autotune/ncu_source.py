"""Where a kernel's warps stall, by SASS opcode: ncu's per-instruction stall samples summed.

    python -m autotune.ncu_source docs/measurements/2026-11-27-h200/ncu_source.csv.gz [--top 8]

Reads the CSV of ``ncu --import REPORT --page source --csv --print-source sass`` (the device kit's last step
writes it; ``.gz`` is read as is).  A stall sample is charged to the instruction the warp waits to issue: a
DFMA stalled on the short scoreboard waits for a load's result, an LDC stalled on MIO throttle waits for a
slot in the load queue.  Per kernel, it prints the share of all samples per stall reason, then per opcode
(the mnemonic without its modifiers) its share of the samples, its top reasons and how many warp
instructions it executed.  Then the short-scoreboard samples by the load the waiting instruction waits
for (``waited_loads``): of its source registers, the one written last, in the listing's order, by a
variable-latency instruction (``VARIABLE_LATENCY``: LDC, LDS, SHFL, MUFU...), with how many instructions
earlier that load sits.  The listing's order is the code's within a basic block; across branches the
register a loop's back edge carries is attributed to the last writer before it in the listing.
"""

from __future__ import annotations

import argparse
import collections
import csv
import gzip
import io
import pathlib
import re
import sys

from autotune import sass

KERNEL_MARK = "Kernel Name"
STALL_PREFIX = "stall_"
NOT_ISSUED = "(Not Issued)"


def read_rows(path: str) -> list[list[str]]:
    raw = pathlib.Path(path).read_bytes()
    return read_rows_from_text(gzip.decompress(raw).decode() if path.endswith(".gz") else raw.decode())


def read_rows_from_text(text: str) -> list[list[str]]:
    return list(csv.reader(io.StringIO(text)))


def opcode(source: str) -> str:
    """'DFMA' of '      @P0 DFMA.RM R4, R2, R6, R4': the mnemonic, without predicate and modifiers."""
    return _mnemonic(source).split(".")[0]


def _mnemonic(source: str) -> str:
    """'DFMA.RM' of '      @P0 DFMA.RM R4, R2, R6, R4': the mnemonic with its modifiers."""
    words = [w for w in source.split() if not w.startswith("@")]
    return words[0] if words else "?"


VARIABLE_LATENCY = ("LDC", "LDS", "LDG", "LDL", "LDSM", "SHFL", "MUFU", "S2R", "ATOMS")
"""Opcodes whose result the short or long scoreboard tracks (the loads, shuffles, MUFU, S2R)."""
_REGISTER = re.compile(r"\bR(\d+)\b")


def waited_loads(instructions: list[dict]) -> dict[str, tuple[int, float]]:
    """Short-scoreboard samples by the opcode of the load each waiting instruction waits for (its source
    register written last by a ``VARIABLE_LATENCY`` instruction, in the listing's order; 'none' where no
    source is): {opcode: (samples, mean distance in instructions, weighted by samples)}."""
    writer: dict[int, tuple[str, int]] = {}  # register -> (opcode, position) of its last writer
    samples: collections.Counter = collections.Counter()
    distance: collections.Counter = collections.Counter()
    for position, instruction in enumerate(instructions):
        mnemonic = _mnemonic(instruction["Source"])
        op = mnemonic.split(".")[0]
        operands = sass.split_operands(instruction["Source"].partition(mnemonic)[2].strip().rstrip(";"))
        stalled = int(instruction.get(STALL_PREFIX + "short_sb") or 0)
        sources = operands if op in sass.NO_DESTINATION else operands[1:]
        if stalled:
            loads = [writer[int(r)] for o in sources for r in _REGISTER.findall(o)
                     if int(r) in writer and writer[int(r)][0] in VARIABLE_LATENCY]
            load = max(loads, key=lambda w: w[1]) if loads else ("none", position)
            samples[load[0]] += stalled
            distance[load[0]] += stalled * (position - load[1])
        if operands and op not in sass.NO_DESTINATION:
            destination = _REGISTER.findall(operands[0])
            if destination:
                for k in range(sass.register_width(mnemonic)):
                    writer[int(destination[0]) + k] = (op, position)
    return {op: (n, distance[op] / n) for op, n in samples.most_common()}


def kernels(rows: list[list[str]]) -> dict[str, list[dict]]:
    """Kernel name -> its instructions, each a dict of the CSV's columns."""
    result: dict[str, list[dict]] = {}
    starts = [i for i, row in enumerate(rows) if row and row[0] == KERNEL_MARK] + [len(rows)]
    for start, end in zip(starts, starts[1:]):
        name, header = rows[start][1].split("(")[0], rows[start + 1]
        result[name] = [dict(zip(header, row)) for row in rows[start + 2:end] if len(row) == len(header)]
    return result


def stall_summary(instructions: list[dict]) -> tuple[collections.Counter, dict, collections.Counter]:
    """(samples per reason, {opcode: samples per reason}, warp instructions executed per opcode)."""
    reasons = [k for k in instructions[0] if k.startswith(STALL_PREFIX) and NOT_ISSUED not in k] if instructions \
        else []
    total: collections.Counter = collections.Counter()
    by_opcode: dict = collections.defaultdict(collections.Counter)
    executed: collections.Counter = collections.Counter()
    for instruction in instructions:
        op = opcode(instruction["Source"])
        executed[op] += int(instruction.get("Instructions Executed") or 0)
        for reason in reasons:
            samples = int(instruction[reason] or 0)
            total[reason.removeprefix(STALL_PREFIX)] += samples
            by_opcode[op][reason.removeprefix(STALL_PREFIX)] += samples
    return total, by_opcode, executed


def report(name: str, instructions: list[dict], top: int) -> list[str]:
    total, by_opcode, executed = stall_summary(instructions)
    samples = sum(total.values()) or 1
    lines = [f"{name}: {len(instructions)} SASS instructions, {sum(total.values())} stall samples",
             "  by reason: " + ", ".join(f"{r} {v / samples:.1%}" for r, v in total.most_common(top))]
    for op in sorted(by_opcode, key=lambda o: -sum(by_opcode[o].values()))[:top]:
        share = sum(by_opcode[op].values()) / samples
        reasons = ", ".join(f"{r} {v / samples:.1%}" for r, v in by_opcode[op].most_common(3) if v)
        lines.append(f"  {op:8} {share:6.1%} of samples ({reasons}); {executed[op]:,} executed")
    waited = waited_loads(instructions)
    if waited:
        short = sum(n for n, _ in waited.values())
        lines.append("  short scoreboard by the load waited for: " + ", ".join(
            f"{op} {n / short:.1%} ({mean:.1f} instructions earlier)" for op, (n, mean) in waited.items()))
    return lines


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("csv", help="ncu's source page as CSV (.csv or .csv.gz)")
    parser.add_argument("--top", type=int, default=8, help="reasons and opcodes shown per kernel")
    args = parser.parse_args(argv)
    try:
        found = kernels(read_rows(args.csv))
    except (OSError, gzip.BadGzipFile, UnicodeDecodeError) as error:
        print(f"ncu_source: {args.csv}: {error}", file=sys.stderr)
        return 1
    if not found:
        print(f"ncu_source: {args.csv}: no '{KERNEL_MARK}' line: not ncu's source page as CSV", file=sys.stderr)
        return 1
    for name, instructions in found.items():
        print("\n".join(report(name, instructions, args.top)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
