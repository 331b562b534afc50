"""Where a kernel's warps stall, by SASS opcode: ncu's per-instruction stall samples summed.

    python -m autotune.ncu_source docs/measurements/2026-11-27-h200/ncu_source.csv.gz [--top 8]

Reads the CSV of ``ncu --import REPORT --page source --csv --print-source sass`` (the device kit's last step
writes it; ``.gz`` is read as is).  A stall sample is charged to the instruction the warp waits to issue: a
DFMA stalled on the short scoreboard waits for a load's result, an LDC stalled on MIO throttle waits for a
slot in the load queue.  Per kernel, it prints the share of all samples per stall reason, then per opcode
(the mnemonic without its modifiers) its share of the samples, its top reasons and how many warp
instructions it executed.
"""

from __future__ import annotations

import argparse
import collections
import csv
import gzip
import io
import pathlib
import sys

KERNEL_MARK = "Kernel Name"
STALL_PREFIX = "stall_"
NOT_ISSUED = "(Not Issued)"


def read_rows(path: str) -> list[list[str]]:
    raw = pathlib.Path(path).read_bytes()
    text = gzip.decompress(raw).decode() if path.endswith(".gz") else raw.decode()
    return list(csv.reader(io.StringIO(text)))


def opcode(source: str) -> str:
    """'DFMA' of '      @P0 DFMA.RM R4, R2, R6, R4': the mnemonic, without predicate and modifiers."""
    words = [w for w in source.split() if not w.startswith("@")]
    return words[0].split(".")[0] if words else "?"


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
