"""Issued SASS instructions per call of the emitted kernels' math functions
(``singe_exp``, ``singe_log``: templates/common.cuh.j2) and of the CUDA
library's exp and log, measured alike.

    python -m autotune.math_cost [--archs sm_90,sm_80]

A kernel sums the function of 11 multiples of its loaded value, another of 3;
the same two kernels without the calls are subtracted, and the difference,
over the 8 further calls, is one call's cost by opcode (autotune/sass.py's
walk: the library's fast paths).  ``UMOV`` moves constants into uniform
registers (set once per sequence of calls where ptxas keeps them): counted apart.
"""

from __future__ import annotations

import argparse
import pathlib
import sys
import tempfile
from collections import Counter
from dataclasses import dataclass

from autotune import sass
from singe.codegen import environment, helper_flags

FEW, MANY = 3, 11  # calls in the two kernels whose difference is the cost of MANY - FEW calls
KERNEL = """
{header}
__global__ void __launch_bounds__(128) math_kernel(const double *x, double *y, const int n_points, const int stride)
{{
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n_points) y[i] = {call};
}}
"""


def rendered_header(*opcodes: str) -> str:
    """templates/common.cuh.j2 with the helpers of ``opcodes`` ('exp', 'log', ...: ``singe.codegen.HELPERS``)."""
    return environment().get_template("common.cuh.j2").render(**helper_flags(opcodes))


def _issued(directory: pathlib.Path, header: str, wrap: str, calls: int, arch: str) -> Counter:
    terms = "0.0"
    for j in range(calls):  # rounded operations: nothing fuses with the function's last operation
        terms = f"__dadd_rn({terms}, {wrap.format(f'__dmul_rn(x[i], {1.0 + 0.1 * j})')})"
    source = directory / f"{'plain' if wrap == '({})' else wrap.split('(')[0]}{calls}_{arch}.cu"
    source.write_text(KERNEL.format(header=header, call=terms))
    return sass.analyse(source, arch, data_parallel=True).warps[0].opcodes


@dataclass(frozen=True)
class Cost:
    """What one call of a function issues (SASS)."""

    per_call: Counter  # opcode -> issued per further call: MANY calls less FEW, less the kernels without them
    umov: float  # UMOV (constants moved into uniform registers) per call in the kernel of MANY calls
    branches: int  # branches the MANY calls add to the kernel

    def issued(self, without=("UMOV",)) -> float:
        return sum(count for opcode, count in self.per_call.items() if opcode not in without)

    def of_class(self, name: str) -> float:
        return by_class(self.per_call)[name]


def by_class(opcodes: Counter, without=()) -> Counter:
    """Opcode counts summed by class (``sass.classify``), leaving out the opcodes ``without``."""
    classes = Counter()
    for opcode, count in opcodes.items():
        if opcode not in without:
            classes[sass.classify(opcode)] += count
    return classes


def issued_per_call(directory: pathlib.Path, header: str, call: str, arch: str = "sm_90") -> Cost:
    """The cost of ``call`` (a function's call with ``{}`` for its argument: 'singe_log({})') in kernels
    summing it over FEW and MANY multiples of x."""
    called, plain = call, "({})"
    counts = {(wrap, n): _issued(directory, header, wrap, n, arch) for wrap in (called, plain) for n in (FEW, MANY)}
    difference = Counter()
    for key, sign in (((called, MANY), 1), ((plain, MANY), -1), ((called, FEW), -1), ((plain, FEW), 1)):
        for opcode, count in counts[key].items():
            difference[opcode] += sign * count
    branches = by_class(counts[(called, MANY)])["branch"] - by_class(counts[(plain, MANY)])["branch"]
    return Cost(Counter({opcode: count / (MANY - FEW) for opcode, count in difference.items() if count}),
                (counts[(called, MANY)]["UMOV"] - counts[(plain, MANY)]["UMOV"]) / MANY, branches)


LIBRARY = """
static __device__ __forceinline__ double library_exp(double x) { return exp(x); }
static __device__ __forceinline__ double library_log(double x) { return log(x); }
"""
FUNCTIONS = ("singe_exp", "library_exp", "singe_log", "library_log")


def format_cost(name: str, arch: str, cost: Cost) -> str:
    classes = by_class(cost.per_call, without=("UMOV",))
    shown = " ".join(f"{c}={classes[c]:g}" for c in sass.CLASSES if classes[c])
    return (f"{name:12} {arch}: {cost.issued():6.2f} issued per call without UMOV ({shown}), "
            f"UMOV {cost.per_call['UMOV']:g} per further call, {cost.umov:.2f} per call of 11; "
            f"branches added {cost.branches}")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--archs", default="sm_90,sm_80")
    args = parser.parse_args(argv)
    if sass.missing_reason():
        print(f"skipped: {sass.missing_reason()}")
        return 0
    header = rendered_header("exp", "log") + LIBRARY
    with tempfile.TemporaryDirectory() as scratch:
        for arch in args.archs.split(","):
            for function in FUNCTIONS:
                print(format_cost(function, arch, issued_per_call(pathlib.Path(scratch), header, function + "({})",
                                                                  arch)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
