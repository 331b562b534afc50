"""Parsing time of one very long line in each kind of input file (issue 14:
a 1 MB line parses or is rejected in under a second; parsing is linear in
the tokens of a line).

    python -m autotune.bench_parse [--megabytes 1] [--sizes 0.25,0.5,1]

Each case copies the bundled H2/O2 mechanism into a temporary folder, puts
one line of about the given size into one of its files, loads it with
``singe.load_mechanism`` and formats the error if it is rejected (the time
includes building the message). Prints seconds per case and size, whether
the mechanism was accepted or rejected, and the length of the message.
Lines over ``singe.frontend.source.MAX_LINE_LENGTH`` characters are
rejected before lexing; sizes below it show the time per line is linear.
"""

from __future__ import annotations

import argparse
import pathlib
import shutil
import tempfile
import time

ROOT = pathlib.Path(__file__).resolve().parents[1]

from singe import SingeInputError, load_mechanism  # noqa: E402

SOURCE = ROOT / "mechanisms" / "h2o2"


def _repeat(unit: str, size: int) -> str:
    return (unit * (size // len(unit) + 1))[:size].rsplit(" ", 1)[0]


def _insert_after(text: str, marker: str, line: str) -> str:
    head, tail = text.split(marker, 1)
    return head + marker + "\n" + line + tail


# name -> (file, edit(text, size) -> text)
CASES = {
    "species line (repeated names)": ("h2o2.inp", lambda t, n: _insert_after(t, "SPECIES", _repeat("H2 O2 ", n))),
    "species line (unknown names)": ("h2o2.inp", lambda t, n: _insert_after(t, "SPECIES", _repeat("XY1 ", n))),
    "reaction equation": ("h2o2.inp", lambda t, n: _insert_after(t, "REACTIONS CAL/MOLE MOLE",
                                                                  _repeat("H + ", n) + "H => H2 1e13 0 0")),
    "efficiency line": ("h2o2.inp", lambda t, n: _after_first_reaction(t, _repeat("H2/2.0/ ", n))),
    "comment line": ("h2o2.inp", lambda t, n: "!" + "x" * n + "\n" + t),
    "thermo card": ("therm.dat", lambda t, n: t.replace("\n", "\n" + "1" * n + "\n", 2)),
    "transport record": ("tran.dat", lambda t, n: _repeat("1.0 ", n).join(("H2 1 ", "\n")) + t),
    "qss line (unknown names)": ("h2o2.qss", lambda t, n: "QSSA\n" + _repeat("XY1 ", n) + "\nEND\n"),
}


def _after_first_reaction(text: str, line: str) -> str:
    lines = text.split("\n")
    index = next(i for i, l in enumerate(lines) if "=" in l and not l.lstrip().startswith("!"))
    return "\n".join(lines[:index + 1] + [line] + lines[index + 1:])


def run_case(name: str, size: int) -> tuple[float, str, int]:
    file_name, edit = CASES[name]
    with tempfile.TemporaryDirectory() as folder:
        work = pathlib.Path(folder)
        for path in SOURCE.iterdir():
            shutil.copy(path, work / path.name)
        target = work / file_name
        original = target.read_text() if target.is_file() else ""
        target.write_text(edit(original, size))
        start = time.perf_counter()
        try:
            load_mechanism(work / "h2o2.inp")
            outcome, message = "accepted", ""
        except SingeInputError as error:
            outcome, message = "rejected", str(error)
        return time.perf_counter() - start, outcome, len(message)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="0.25,0.5,1", help="line sizes in MB (default 0.25,0.5,1)")
    args = parser.parse_args()
    sizes = [float(s) for s in args.sizes.split(",")]
    print(f"{'case':32} " + " ".join(f"{f'{s:g} MB':>28}" for s in sizes))
    worst = 0.0
    for name in CASES:
        cells = []
        for size in sizes:
            seconds, outcome, chars = run_case(name, int(size * 1_000_000))
            worst = max(worst, seconds)
            cells.append(f"{seconds:7.3f} s {outcome:8} {chars:6d} chars")
        print(f"{name:32} " + " ".join(cells))
    print(f"slowest: {worst:.3f} s (target: under 1 s for a 1 MB line)")


if __name__ == "__main__":
    main()
