"""Compile and simulation times of the transport kernels (issue targets:
DME viscosity and diffusion compile, graph to warp programs, in <= 1 s at 8
warps; simulating 4096 points of each in <= 5 s).

    python -m autotune.bench_compiler [--mechanisms dme,heptane] [--warps 8] [--points 4096]
"""

from __future__ import annotations

import argparse
import pathlib
import time

import numpy as np

ROOT = pathlib.Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared" / "mechanisms"

import singe  # noqa: E402
from singe import SingeInputError, build_graph, compile_kernel  # noqa: E402


def mechanism_path(name: str) -> pathlib.Path:
    """A CHEMKIN file given by path, or a shared or bundled mechanism's by name."""
    folder = {"dodecane": "dodecane_qss"}.get(name, name)
    candidates = [pathlib.Path(name), SHARED / folder / f"{name}.inp", ROOT / "mechanisms" / name / f"{name}.inp"]
    found = next((p for p in candidates if p.is_file()), None)
    if found is None and pathlib.Path(name).is_dir():
        raise SingeInputError(f"{name}: is a directory; give the CHEMKIN reaction file")
    if found is None:
        raise SingeInputError(f"{name}: no such mechanism file, and no shared or bundled mechanism of that name")
    return found


def states(mech, n: int, seed: int = 0):
    rng = np.random.default_rng(seed)
    Y = rng.random((len(mech.transported_species), n))
    Y /= Y.sum(axis=0)
    return rng.uniform(300, 3000, n), np.full(n, 101325.0) * rng.uniform(0.1, 100, n), Y


def bench(name: str, kernel: str, warps: int, points: int) -> dict:
    mech = singe.load_mechanism(mechanism_path(name))
    name = mech.name
    start = time.perf_counter()
    build_graph(mech, kernel)
    graph_time = time.perf_counter() - start
    start = time.perf_counter()
    compiled = compile_kernel(mech, kernel, warps=warps)
    compile_time = time.perf_counter() - start
    T, P, Y = states(mech, points)
    start = time.perf_counter()
    compiled.simulate(T, P, Y)
    simulate_time = time.perf_counter() - start
    return {"mechanism": name, "kernel": kernel, "warps": warps, "graph_s": graph_time,
            "mapping_schedule_s": compile_time, "simulate_s": simulate_time, "points": points,
            "sync_points": len(compiled.programs.sync_points), "barrier_ids": len(compiled.programs.barrier_ids)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mechanisms", default="dme,heptane")
    parser.add_argument("--kernels", default="viscosity,diffusion")
    parser.add_argument("--warps", type=int, default=8)
    parser.add_argument("--points", type=int, default=4096)
    args = parser.parse_args()
    print(f"{'mechanism':10} {'kernel':10} {'warps':>5} {'graph s':>8} {'map+sched s':>11} "
          f"{'simulate s':>10} {'points':>6} {'syncs':>6} {'ids':>4}")
    for name in args.mechanisms.split(","):
        for kernel in args.kernels.split(","):
            try:
                r = bench(name, kernel, args.warps, args.points)
            except SingeInputError as error:
                parser.exit(2, f"{error}\n")
            print(f"{r['mechanism']:10} {r['kernel']:10} {r['warps']:5d} {r['graph_s']:8.3f} "
                  f"{r['mapping_schedule_s']:11.3f} {r['simulate_s']:10.3f} {r['points']:6d} "
                  f"{r['sync_points']:6d} {r['barrier_ids']:4d}")


if __name__ == "__main__":
    main()
