"""The ``singe`` command: the only place that prints or exits."""

from __future__ import annotations

import argparse
import sys
import time
from collections import Counter

from singe.bundled import bundled_names, resolve_mechanism
from singe.errors import SingeInputError
from singe.frontend import load_mechanism
from singe.mechanism import Mechanism


class _Parser(argparse.ArgumentParser):
    """argparse that reports a bad option in one line with exit status 2."""

    def error(self, message):
        self.exit(2, f"singe: error: {message}\n")


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="singe", description="Compile a CHEMKIN mechanism into warp-specialized GPU kernels.")
    parser.add_argument("mechanism", help="CHEMKIN reaction file, or a bundled mechanism: "
                        + ", ".join(bundled_names()))
    parser.add_argument("--thermo", help="THERMO file (default: therm.dat beside the mechanism, or embedded)")
    parser.add_argument("--transport", help="TRANSPORT file (default: tran.dat beside the mechanism, or embedded)")
    parser.add_argument("--qss", help="QSSA/STIFF species list (default: <stem>.qss beside the mechanism)")
    return parser


def describe(mech: Mechanism, seconds: float) -> str:
    """The summary the command prints for a mechanism."""
    kinds = Counter(r.kind for r in mech.reactions)
    rev = sum(r.reverse_rate is not None for r in mech.reactions)
    lines = [
        f"{mech.name}: {mech.n_species} species ({len(mech.transported_species)} transported, "
        f"{len(mech.qss_species)} QSSA, {len(mech.stiff_species)} stiff), {len(mech.reactions)} reactions "
        f"(parsed in {seconds:.2f} s)",
        "  reactions: " + ", ".join(f"{n} {k}" for k, n in sorted(kinds.items())) + f"; {rev} with explicit REV",
        f"  transport data: {'complete' if mech.has_transport else 'missing (no viscosity/diffusion kernels)'}",
        "  files: " + ", ".join(mech.sources),
    ]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        start = time.perf_counter()
        mech = load_mechanism(resolve_mechanism(args.mechanism), args.thermo, args.transport, args.qss)
        print(describe(mech, time.perf_counter() - start))
    except SingeInputError as error:
        print(error, file=sys.stderr)
        return 2
    return 0
