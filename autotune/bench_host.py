"""Host build and run times of the emitted kernels (singe.host, no GPU).

For each kernel: the time to render the CUDA text, to build it with g++ for
the host runtime (a fresh build, in a temporary cache), and to run it on
--points points under each schedule, with the context switches per run.
Kernels the compiler cannot build yet (chemistry while it is being written)
are reported and skipped.

    python -m autotune.bench_host [--mechanism dme] [--kernels viscosity,diffusion,chemistry]
                                  [--warps 8] [--points 4096] [--baseline]
"""

from __future__ import annotations

import argparse
import os
import pathlib
import tempfile
import time

import singe
from singe import SingeError, compile_kernel, generate, generate_baseline, host

from autotune.bench_compiler import mechanism_path, states

SCHEDULES = ("deterministic", "random", "priority")


def fields(kernel: host.HostKernel, T, P, Y) -> dict:
    """The kernel's inputs: T [K], P [Pa], Y [-]; dt = 0 s and zero diffusion sources for chemistry."""
    values, _ = host.compiled_fields(kernel.source, T, P, Y)
    return values


def bench(mech, kernel: str, warps: int, points: int, baseline: bool, cache: pathlib.Path) -> dict:
    """Render, build (fresh) and run one kernel; times in seconds."""
    start = time.perf_counter()
    compiled = compile_kernel(mech, kernel, warps=warps)
    compile_s = time.perf_counter() - start
    start = time.perf_counter()
    generated = generate_baseline(compiled) if baseline else generate(compiled)
    render_s = time.perf_counter() - start
    built = host.build(generated, directory=cache)
    loaded = host.load(generated, directory=cache)
    T, P, Y = states(mech, points)
    inputs = fields(loaded, T, P, Y)
    runs = {}
    for schedule in SCHEDULES:
        start = time.perf_counter()
        loaded.run(inputs, points, schedule=schedule, seed=1)
        runs[schedule] = (time.perf_counter() - start, loaded.statistics["switches"])
    return {"kernel": generated.name, "warps": warps, "compile_s": compile_s, "render_s": render_s,
            "build_s": built.seconds, "kb": len(generated.cu) // 1024, "runs": runs}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mechanism", default="dme")
    parser.add_argument("--kernels", default="viscosity,diffusion,chemistry")
    parser.add_argument("--warps", type=int, nargs="+", default=[8])
    parser.add_argument("--points", type=int, default=4096)
    parser.add_argument("--baseline", action="store_true", help="also the data-parallel kernels")
    args = parser.parse_args()
    mech = singe.load_mechanism(mechanism_path(args.mechanism))
    print(f"{'kernel':28} {'warps':>5} {'.cu kB':>6} {'compile s':>9} {'render s':>8} {'build s':>7} "
          + " ".join(f"{s + ' s':>15} {'switches':>9}" for s in SCHEDULES))
    total_build = 0.0
    with tempfile.TemporaryDirectory(prefix="singe-bench-host-") as cache:
        for kernel in args.kernels.split(","):
            for warps in args.warps:
                for baseline in (False, True) if args.baseline else (False,):
                    if baseline and warps != args.warps[0]:
                        continue
                    try:
                        r = bench(mech, kernel, warps, args.points, baseline, pathlib.Path(cache))
                    except SingeError as error:
                        print(f"{args.mechanism}_{kernel:22} {warps:5d} skipped: {str(error).splitlines()[0][:80]}")
                        break
                    total_build += r["build_s"]
                    print(f"{r['kernel']:28} {r['warps']:5d} {r['kb']:6d} {r['compile_s']:9.2f} {r['render_s']:8.2f} "
                          f"{r['build_s']:7.2f} " + " ".join(f"{r['runs'][s][0]:15.3f} {r['runs'][s][1]:9d}"
                                                             for s in SCHEDULES))
    print(f"total host build time: {total_build:.1f} s ({os.cpu_count()} CPUs, g++ {' '.join(host.FLAGS)})")


if __name__ == "__main__":
    main()
