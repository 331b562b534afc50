"""The emitted CUDA kernels, unchanged, on the CPU (singe/runtime/singe_host_runtime.h).

Viscosity and diffusion of DME and n-heptane at 1, 4, 8 and 16 warps and the
data-parallel baselines run on the host and agree with ``singe.reference``
and with the warp simulator; every other schedule of the same kernel gives
the same bits; a deleted or weakened barrier is caught (deadlock, misuse,
NaN from the poisoned shared memory or a wrong result) and swapped barriers
are reported as a deadlock.  Hand-written kernels pin down ``__shfl*_sync``,
named-barrier generations and the misuse messages.
"""

from __future__ import annotations

import dataclasses
import functools
import itertools
import os
import pathlib
import re

import numpy as np
import pytest

import singe
from singe import host
from singe.codegen import generate, generate_baseline
from singe.compiler import compile_kernel
from singe.reference import transport as reference
from singe.derived.transport import fit_transport
from conftest import load
from cantera_reference import random_states

MECHANISMS = ("dme", "heptane")
KERNELS = ("viscosity", "diffusion")
WARPS = (1, 4, 8, 16)
STATES = 128
REFERENCE_TOLERANCE = 1e-9  # relative, worst output and point
SIMULATOR_TOLERANCE = 1e-11  # normwise
JOBS = max(1, min(2, os.cpu_count() or 1))
SEEDS = range(8)
BARRIER_LINE = re.compile(r"^\s*SINGE_BAR_(SYNC|ARRIVE)\((\d+), (\d+)\);")


@functools.lru_cache(maxsize=None)
def states(name: str):
    """128 random states inside the transport fits' temperature range."""
    mech = load(name)
    fits = fit_transport(mech)
    return random_states(STATES, len(mech.transported_species), 11, T_range=(fits.T_min, min(fits.T_max, 3000.0)))


@functools.lru_cache(maxsize=None)
def compiled(name: str, kernel: str, warps: int):
    return compile_kernel(load(name), kernel, warps=warps)


CHEMISTRY = ((1, 1), (4, 1), (8, 1), (16, 1), (8, 2))  # (warps, QSSA warps)


@functools.lru_cache(maxsize=None)
def chemistry(name: str, warps: int, qssa: int):
    return compile_kernel(load(name), "chemistry", warps=warps, qssa_warps=qssa)


@functools.lru_cache(maxsize=None)
def generated(name: str, kernel: str, warps: int, baseline: bool = False):
    c = compiled(name, kernel, warps)
    return generate_baseline(c) if baseline else generate(c)


def expected(name: str, kernel: str) -> np.ndarray:
    T, P, Y = states(name)
    rule = reference.viscosity if kernel == "viscosity" else reference.mixture_diffusion
    return rule(load(name), T, P, Y)


def relative(ours: np.ndarray, theirs: np.ndarray) -> float:
    """Largest relative error over every output and point."""
    return float(np.max(np.abs(ours - theirs) / np.abs(theirs)))


def normwise(ours: np.ndarray, theirs: np.ndarray) -> float:
    return float(np.linalg.norm(ours - theirs) / np.linalg.norm(theirs))


def mutated(kernel, cu: str):
    return dataclasses.replace(kernel, cu=cu)


def barrier_lines(cu: str) -> list[tuple[int, str, int, int]]:
    """(line index, 'SYNC' or 'ARRIVE', id, threads) of every barrier call."""
    found = []
    for i, line in enumerate(cu.split("\n")):
        match = BARRIER_LINE.match(line)
        if match:
            found.append((i, match.group(1), int(match.group(2)), int(match.group(3))))
    return found


def without_line(cu: str, index: int) -> str:
    lines = cu.split("\n")
    return "\n".join(lines[:index] + lines[index + 1:])


def sync_to_arrive(cu: str, index: int) -> str:
    lines = cu.split("\n")
    lines[index] = lines[index].replace("SINGE_BAR_SYNC", "SINGE_BAR_ARRIVE")
    return "\n".join(lines)


def swapped(cu: str, index: int) -> str:
    lines = cu.split("\n")
    lines[index], lines[index + 1] = lines[index + 1], lines[index]
    return "\n".join(lines)


# -- hand-written kernels -------------------------------------------------------------------

def preamble(entry: str) -> str:
    """The runtime include and the signature line of a hand-written test kernel
    ``entry(x, out, ...)``: both arrays have 9 rows (species-major)."""
    parameters = (host.Parameter("x", False, "species"), host.Parameter("out", True, "species"))
    signature = host.Signature(entry, "test", "hand-written", tuple(f"S{k}" for k in range(9)), parameters)
    return signature.line() + '#include "singe_host_runtime.h"\n'


SHUFFLES = preamble("shuffles") + r"""
__global__ void __launch_bounds__(64) shuffles_kernel(const double *__restrict__ x, double *__restrict__ out,
                                                      const int n_points, const int species_stride)
{
  const int t = threadIdx.x, lane = t & 31;
  const double v = x[t];
  const int iv = (int)v;
  (void)n_points;
#pragma unroll
  for (int pass = 0; pass < 1; pass++) {
    out[0 * species_stride + t] = __shfl_sync(0xffffffffu, v, (lane * 7 + 3) & 31);
    out[1 * species_stride + t] = __shfl_sync(0xffffffffu, v, lane + 37);
    out[2 * species_stride + t] = __shfl_sync(0xffffffffu, v, 5, 16);
    out[3 * species_stride + t] = __shfl_up_sync(0xffffffffu, v, 3);
    out[4 * species_stride + t] = __shfl_down_sync(0xffffffffu, v, 3, 8);
    out[5 * species_stride + t] = __shfl_xor_sync(0xffffffffu, v, 9);
    out[6 * species_stride + t] = (double)__shfl_sync(0xffffffffu, iv * 2, 31 - lane);
    if (lane < 16)
      out[7 * species_stride + t] = __shfl_sync(0x0000ffffu, v, lane ^ 1);
    else
      out[7 * species_stride + t] = __shfl_sync(0xffff0000u, v, 47 - lane);
    if (lane < 16)  // the source lane is outside the mask: undefined, poisoned
      out[8 * species_stride + t] = __shfl_sync(0x0000ffffu, v, 20);
    else
      out[8 * species_stride + t] = __shfl_sync(0xffff0000u, v, 3);
  }
}

extern "C" int shuffles(const double *x, double *out, int n_points, int species_stride, void *stream)
{
  SINGE_LAUNCH(shuffles_kernel, 1, 64, 0, stream, x, out, n_points, species_stride);
  return SINGE_LAUNCH_STATUS();
}
"""

# Warp 0 produces a row in shared memory three times; warps 1-3 consume it.
# Barrier 1 orders each write before the reads (RAW), barrier 2 each round's
# reads before the next write (WAR): six generations in all.
GENERATIONS = preamble("generations") + r"""
__global__ void __launch_bounds__(128) generations_kernel(const double *__restrict__ x, double *__restrict__ out,
                                                         const int n_points, const int species_stride)
{
  extern __shared__ double buffer[];
  const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
  (void)n_points;
  for (int round = 0; round < 3; round++) {
    if (warp == 0) {
      buffer[lane] = x[lane] + 100.0 * round;
      SINGE_BAR_ARRIVE(1, 128);
      SINGE_BAR_SYNC(2, 128);  // producer waits for the readers
    } else {
      SINGE_BAR_SYNC(1, 128);
      out[(3 * round + warp - 1) * species_stride + lane] = buffer[lane] * warp;
      SINGE_BAR_ARRIVE(2, 128);
    }
  }
}

extern "C" int generations(const double *x, double *out, int n_points, int species_stride, void *stream)
{
  SINGE_SET_SHARED(generations_kernel, 32 * sizeof(double));
  SINGE_LAUNCH(generations_kernel, 1, 128, 32 * sizeof(double), stream, x, out, n_points, species_stride);
  return SINGE_LAUNCH_STATUS();
}
"""

# One misuse per mode (x[0]); mode 7 asks for more shared memory than allowed.
MISUSE = preamble("misuse") + r"""
__global__ void __launch_bounds__(128) misuse_kernel(const double *__restrict__ x, double *__restrict__ out,
                                                     const int n_points, const int species_stride)
{
  const int mode = (int)x[0];
  const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
  (void)n_points; (void)species_stride;
  switch (mode) {
  case 0:  // thread counts differ within a generation
    if (warp == 0) SINGE_BAR_ARRIVE(1, 64); else if (warp == 1) SINGE_BAR_SYNC(1, 128);
    break;
  case 1:  // the lanes of warp 0 diverge at a barrier
    if (warp == 0) { if (lane < 16) SINGE_BAR_SYNC(1, 64); else SINGE_BAR_ARRIVE(2, 64); }
    break;
  case 2:  // not a multiple of the warp size
    SINGE_BAR_SYNC(1, 48);
    break;
  case 3:  // warps 0 and 1 wait for each other
    if (warp == 0) { SINGE_BAR_SYNC(1, 64); SINGE_BAR_ARRIVE(2, 64); }
    else if (warp == 1) { SINGE_BAR_SYNC(2, 64); SINGE_BAR_ARRIVE(1, 64); }
    break;
  case 4:  // a shuffle whose mask leaves the calling lane out
    out[lane] = __shfl_sync(0x0000ffffu, x[lane], 0);
    break;
  case 5:  // no barrier 16
    SINGE_BAR_SYNC(16, 128);
    break;
  case 6:  // a generation nobody completes
    if (warp == 0) SINGE_BAR_ARRIVE(3, 64);
    break;
  case 8:  // shuffles from both arms of a divergent branch
    out[lane] = lane < 16 ? __shfl_sync(0xffffffffu, x[lane], 1) : __shfl_sync(0xffffffffu, x[lane], 2);
    break;
  default:
    break;
  }
}

extern "C" int misuse(const double *x, double *out, int n_points, int species_stride, void *stream)
{
  const int shared = x[0] == 7.0 ? 65536 : 0;  // above 48 KB without SINGE_SET_SHARED
  SINGE_LAUNCH(misuse_kernel, 2, 128, shared, stream, x, out, n_points, species_stride);
  return SINGE_LAUNCH_STATUS();
}
"""


def hand_written(text: str) -> host.KernelSource:
    return host.parse_source(text)


# -- fixtures ---------------------------------------------------------------------------------

def swapped_pair(cu: str) -> int:
    """A bar.arrive followed by a bar.sync of another barrier in the same
    warp's code (the end-of-slab barrier 0 if possible): swapped, the warp
    waits before it lets the waiters of the first barrier go."""
    calls = barrier_lines(cu)
    pairs = [a for a, b in zip(calls, calls[1:]) if b[0] == a[0] + 1 and a[1] == "ARRIVE" and b[1] == "SYNC"
             and a[2] != b[2]]
    assert pairs, "no bar.arrive directly before a bar.sync in the emitted kernel"
    ends = [a for a in pairs if cu.split("\n")[a[0] + 1].lstrip().startswith("SINGE_BAR_SYNC(0,")]
    return (ends or pairs)[0][0]


MUTANT_KERNEL = "viscosity"
"""The kernel whose broken variants the host runtime must catch (``mutants``): DME viscosity at 4 warps has named
barriers that some warps sync on and others arrive at, one arrive directly before another barrier's sync.  (DME
diffusion, the kernel before, computes its pairs from the mole numbers since the conductivity and diffusion
kernels stopped waiting for their sum: one named barrier, synced by every warp.)"""


@functools.lru_cache(maxsize=None)
def mutants() -> dict[str, object]:
    """The broken variants of DME's 4-warp ``MUTANT_KERNEL``, at 2 CTAs per SM: with 8 named barrier ids each
    named barrier is the only order between its producers and consumers."""
    kernel = generate(compile_kernel(load("dme"), MUTANT_KERNEL, warps=4, ctas_per_sm=2))
    calls = barrier_lines(kernel.cu)
    first_sync = next(c for c in calls if c[1] == "SYNC" and c[2] != 0)
    first_arrive = next(c for c in calls if c[1] == "ARRIVE")
    return {
        "deleted-sync": mutated(kernel, without_line(kernel.cu, first_sync[0])),
        "deleted-arrive": mutated(kernel, without_line(kernel.cu, first_arrive[0])),
        "sync-as-arrive": mutated(kernel, sync_to_arrive(kernel.cu, first_sync[0])),
        "swapped": mutated(kernel, swapped(kernel.cu, swapped_pair(kernel.cu))),
    }


@pytest.fixture(scope="module")
def built():
    """Build every kernel of this module once, JOBS compilers at a time."""
    for name in MECHANISMS:
        load(name)  # skips when ../shared is missing
    kernels = [generated(name, kernel, warps) for name in MECHANISMS for kernel in KERNELS for warps in WARPS]
    kernels += [generated(name, kernel, 4, baseline=True) for name in MECHANISMS for kernel in KERNELS]
    kernels += [generate(chemistry(name, w, q)) for name in MECHANISMS for w, q in CHEMISTRY]
    kernels += list(mutants().values())
    kernels += [hand_written(t) for t in (SHUFFLES, GENERATIONS, MISUSE,
                                          GENERATIONS.replace("SINGE_BAR_SYNC(2, 128);  // producer",
                                                              "SINGE_BAR_ARRIVE(2, 128);  // producer"))]
    return {result.library.name: result for result in host.build_all(kernels, jobs=JOBS)}


# -- the emitted kernels ---------------------------------------------------------------------

@pytest.mark.parametrize("kernel", KERNELS)
@pytest.mark.parametrize("name", MECHANISMS)
def test_emitted_kernels_match_reference_and_simulator(built, name, kernel):
    """Host runs against singe.reference (1e-9 relative) and the warp simulator
    (1e-11 normwise); other schedules and one CTA looping over all slabs give
    the same bits."""
    T, P, Y = states(name)
    truth = expected(name, kernel)
    report = []
    for warps in WARPS:
        c = compiled(name, kernel, warps)
        ours = c.run_host(T, P, Y)
        assert ours.shape == truth.shape
        to_reference = relative(ours, truth)
        to_simulator = normwise(ours, c.simulate(T, P, Y))
        report.append(f"w{warps}: {to_reference:.1e} ref, {to_simulator:.1e} sim")
        assert to_reference <= REFERENCE_TOLERANCE, f"{name} {kernel} warps={warps}: {to_reference:.2e}"
        assert to_simulator <= SIMULATOR_TOLERANCE, f"{name} {kernel} warps={warps}: {to_simulator:.2e}"
        for schedule, seed, ctas in (("random", warps, 0), ("priority", warps, 0), ("priority", warps + 1, 1)):
            again = c.run_host(T, P, Y, schedule=schedule, seed=seed, max_ctas=ctas)
            assert np.array_equal(again, ours), f"{name} {kernel} warps={warps}: {schedule} {seed} ctas={ctas}"
    print(f"\n{name} {kernel}: " + "; ".join(report))


@pytest.mark.parametrize("name", MECHANISMS)
def test_emitted_chemistry_matches_reference_and_simulator(built, name):
    """Chemistry with and without stiffness removal: host against
    singe.reference (1e-9 x max|wdot| per point) and the simulator (1e-11 normwise)."""
    from singe.reference.kinetics import net_production_rates

    T, P, Y = states(name)
    rng = np.random.default_rng(5)
    dt, source = 10.0 ** rng.uniform(-9, -5, T.size), rng.normal(0.0, 1.0, Y.shape)
    mech = load(name)
    report = []
    for (warps, qssa), (step, diffusion) in itertools.product(CHEMISTRY, ((None, None), (dt, source))):
        c = chemistry(name, warps, qssa)
        ours = c.run_host(T, P, Y, dt=step, diffusion_source=diffusion)
        truth = net_production_rates(mech, T, P, Y, dt=step, diffusion_source=diffusion)
        to_reference = float(np.max(np.abs(ours - truth) / np.abs(truth).max(axis=0)))
        to_simulator = normwise(ours, c.simulate(T, P, Y, dt=step, diffusion_source=diffusion))
        report.append(f"w{warps}q{qssa}{'+dt' if step is not None else ''}: {to_reference:.1e}/{to_simulator:.1e}")
        assert to_reference <= REFERENCE_TOLERANCE, report[-1]
        assert to_simulator <= SIMULATOR_TOLERANCE, report[-1]
    again = chemistry(name, 8, 2).run_host(T, P, Y, schedule="priority", seed=3)
    assert np.array_equal(again, chemistry(name, 8, 2).run_host(T, P, Y))
    print(f"\n{name} chemistry (ref/sim): " + "; ".join(report))


@pytest.mark.parametrize("kernel", KERNELS)
@pytest.mark.parametrize("name", MECHANISMS)
def test_baseline_kernels(built, name, kernel):
    T, P, Y = states(name)
    c = compiled(name, kernel, 4)
    ours = c.run_host(T, P, Y, baseline=True)
    assert relative(ours, expected(name, kernel)) <= REFERENCE_TOLERANCE
    assert normwise(ours, c.simulate(T, P, Y)) <= SIMULATOR_TOLERANCE


@pytest.mark.parametrize("name", MECHANISMS)
def test_tuned_viscosity_baselines(name):
    """The baseline speedups are measured against (``singe.baseline_kernel``: Wilke groups of 8, where the kernel
    at 4 warps sums in groups of 7 for n-heptane and 4 for DME) agrees with the reference and the simulator."""
    T, P, Y = states(name)
    c = compiled(name, "viscosity", 4)
    tuned = singe.baseline_kernel(c)
    assert tuned.graph is not c.graph
    ours = tuned.run_host(T, P, Y)
    assert relative(ours, expected(name, "viscosity")) <= REFERENCE_TOLERANCE
    assert normwise(ours, c.simulate(T, P, Y)) <= SIMULATOR_TOLERANCE


def test_builds_are_warning_free(built):
    noisy = {name: result.warnings for name, result in built.items() if result.warnings.strip()}
    assert not noisy, noisy


def outcome(kernel, name: str, schedule: str, seed: int) -> str:
    """'ok', 'nan', 'wrong' or the runtime's error of one run of a mutant."""
    T, P, Y = states(name)
    c = compiled(name, MUTANT_KERNEL, 4)
    try:
        out = host.run_host(kernel, {"temperature": T, "pressure": P, "mass_fractions": Y}, STATES,
                            schedule=schedule, seed=seed)[MUTANT_KERNEL]
    except host.HostRuntimeError as error:
        return str(error)
    if np.isnan(out).any():
        return "nan"
    return "ok" if normwise(out, c.run_host(T, P, Y)) <= SIMULATOR_TOLERANCE else "wrong"


@pytest.mark.parametrize("mutant", ["deleted-sync", "deleted-arrive"])
def test_deleted_barrier_is_reported(built, mutant):
    """A missing bar.sync or bar.arrive leaves a generation short: a deadlock
    or an incomplete generation at CTA exit, named by barrier id."""
    for schedule, seed in (("deterministic", 0), ("random", 1), ("priority", 2)):
        message = outcome(mutants()[mutant], "dme", schedule, seed)
        assert message.startswith(f"dme_{MUTANT_KERNEL}: deadlock") or "incomplete when the CTA exits" in message, \
            message
        assert re.search(r"barrier \d+", message), message


def test_sync_weakened_to_arrive_is_caught(built):
    """The consumers of the first named barrier no longer wait: the counts
    still match, so only the data can tell: NaN read from the poisoned shared
    memory or a wrong result under some schedule."""
    results = [outcome(mutants()["sync-as-arrive"], "dme", schedule, seed)
               for schedule, seed in [("deterministic", 0)] + [("priority", s) for s in SEEDS]]
    assert any(r != "ok" for r in results), results


def test_swapped_barriers_deadlock(built):
    message = outcome(mutants()["swapped"], "dme", "deterministic", 0)
    assert message.startswith(f"dme_{MUTANT_KERNEL}: deadlock: no thread can proceed"), message
    assert re.search(r"barrier \d+ \(generation \d+\): \d+ of \d+ threads arrived", message), message
    assert re.search(r"warp \d+ waits at barrier \d+", message), message


# -- hand-written kernels ---------------------------------------------------------------------

def test_shuffle_semantics(built):
    """__shfl_sync / _up / _down / _xor over the 32 lanes (PTX shfl.sync: source
    lane modulo width within the segment, own value out of range), int and
    double, sub-warp masks, a source outside the mask poisoned."""
    kernel = host.load(hand_written(SHUFFLES))
    x = np.zeros((9, 64))
    x[0] = 1000.0 + np.arange(64)
    v = x[0]
    t = np.arange(64)
    lane = t % 32
    base = t - lane

    def take(source):
        return v[base + source]

    want = np.empty((9, 64))
    want[0] = take((lane * 7 + 3) & 31)
    want[1] = take((lane + 5) & 31)
    want[2] = take((lane & 16) | 5)
    want[3] = take(np.where(lane >= 3, lane - 3, lane))
    want[4] = take(np.where(lane + 3 <= ((lane & 24) | 7), lane + 3, lane))
    want[5] = take(lane ^ 9)
    want[6] = 2 * take(31 - lane)
    want[7] = take(np.where(lane < 16, lane ^ 1, 47 - lane))
    want[8] = np.nan
    for schedule, seed in (("deterministic", 0), ("random", 5), ("priority", 6)):
        got = kernel.run({"x": x}, 64, schedule=schedule, seed=seed)["out"]
        np.testing.assert_array_equal(got, want)


def test_barrier_generations(built):
    """Three rounds of producer/consumer on two named barriers: six generations,
    the right values under every schedule; without the producer's wait (its
    bar.sync made a bar.arrive: the counts still match) it overwrites the row
    before the readers are done, and some schedule shows it."""
    x = np.zeros((9, 32))
    x[0] = np.arange(32) + 1.0
    want = np.array([(x[0] + 100.0 * r) * w for r in range(3) for w in (1, 2, 3)])
    kernel = host.load(hand_written(GENERATIONS))
    for schedule, seed in [("deterministic", 0)] + [(s, k) for s in ("random", "priority") for k in SEEDS]:
        got = kernel.run({"x": x}, 32, schedule=schedule, seed=seed)["out"]
        np.testing.assert_array_equal(got, want)
        assert kernel.statistics["generations"] == 6
    broken = host.load(hand_written(GENERATIONS.replace("SINGE_BAR_SYNC(2, 128);  // producer",
                                                        "SINGE_BAR_ARRIVE(2, 128);  // producer")))
    caught = 0
    for schedule, seed in [("deterministic", 0)] + [("priority", k) for k in SEEDS]:
        try:
            got = broken.run({"x": x}, 32, schedule=schedule, seed=seed)["out"]
            caught += not np.array_equal(got, want)
        except host.HostRuntimeError:
            caught += 1
    assert caught


MISUSE_MESSAGES = {
    0: r"misuse: barrier 1, generation 0: warp 1 uses bar.sync with 128 threads, but warp 0 started "
       r"the generation expecting 64 \(32 arrived\)",
    1: r"misuse: warp 0 diverges: lane 16 reaches bar.arrive 2, 64 \(line \d+\) while lanes 0-15 wait at "
       r"bar.sync 1, 64 \(line \d+\)",
    2: r"misuse: bar.sync 1, 48: thread count 48 is not a multiple of 32",
    3: r"deadlock: no thread can proceed; barrier 1 \(generation 0\): 32 of 64 threads arrived \(bar.sync: warps 0; "
       r"bar.arrive: warps none\); barrier 2 \(generation 0\): 32 of 64 threads arrived \(bar.sync: warps 1; "
       r"bar.arrive: warps none\); warp 0 waits at barrier 1; warp 1 waits at barrier 2; warps 2, 3 exited",
    4: r"misuse: warp 0 lane 16 calls __shfl_sync\(0x0000ffff\) with a mask that leaves it out",
    5: r"misuse: bar.sync 16, 128: barrier id 16 outside 0..15",
    6: r"misuse: barrier 3, generation 0 is incomplete when the CTA exits: 32 of 64 threads arrived",
    7: r"invalid launch: 65536 B of dynamic shared memory, more than the 49152 B allowed",
    8: r"misuse: warp 0 diverges: lane 16 reaches __shfl_sync\(0xffffffff\) \(line \d+\) while lanes 0-15 "
       r"wait at __shfl_sync\(0xffffffff\) \(line \d+\)",
}


@pytest.mark.parametrize("mode", sorted(MISUSE_MESSAGES))
def test_misuse_is_reported(built, mode):
    """Each misuse stops the launch (never a hang) with a message naming the
    barrier, the warps and the counts, and the CTA; the library stays usable."""
    kernel = host.load(hand_written(MISUSE))
    x = np.zeros((9, 32))
    x[0] = mode
    with pytest.raises(host.HostRuntimeError) as error:
        kernel.run({"x": x}, 32)
    assert re.search(MISUSE_MESSAGES[mode], str(error.value)), str(error.value)
    if mode != 7:
        assert "[kernel misuse_kernel, CTA (0,0,0) of (2,1,1), 128 threads]" in str(error.value)
    x[0] = -1.0  # a clean launch afterwards
    kernel.run({"x": x}, 32)


def test_divergent_shuffle_sites_without_the_check(built):
    """With the same-site check off, shuffle instances with the same mask join
    whatever their site (PTX sm_70+): each lane reads its source lane's value."""
    kernel = host.load(hand_written(MISUSE))
    x = np.zeros((9, 32))
    x[0] = 8.0
    x[0, 1], x[0, 2] = 11.0, 22.0
    out = kernel.run({"x": x}, 32, same_site=False)["out"]
    np.testing.assert_array_equal(out[0, :32], np.where(np.arange(32) < 16, 11.0, 22.0))


def test_source_checks():
    """Static __shared__ arrays (per-thread on the host) are refused; the
    runtime header ships inside the package."""
    text = SHUFFLES.replace("const int t = threadIdx.x", "__shared__ double scratch[32];\n  const int t = threadIdx.x")
    with pytest.raises(host.HostRuntimeError, match="static __shared__"):
        hand_written(text)
    assert host.RUNTIME_HEADER.is_file()
    assert host.RUNTIME_HEADER.parent.parent == pathlib.Path(singe.__file__).resolve().parent


def test_command_validates_on_the_host(tmp_path, capsys):
    """singe ... --validate host builds the emitted file and compares its run with Cantera."""
    from singe.cli import main

    assert main(["h2o2", "--kernels", "viscosity", "--warps", "2", "-o", str(tmp_path), "--validate", "host"]) == 0
    out = capsys.readouterr().out
    error = float(re.search(r"against Cantera (\S+) over \d+ random states \(point \d+\) \[host\]", out).group(1))
    assert error <= REFERENCE_TOLERANCE


@pytest.mark.parametrize("limit", [None, 3, 1 << 30])
def test_the_persistent_grid_gives_the_bits_of_one_cta_per_slab(limit):
    """The launcher's grid: as many CTAs as the device holds (the host's device holds two, SINGE_RESIDENT_CTAS),
    or ``-DSINGE_GRID_LIMIT=N`` of them, each looping over its slabs.  Two, three or eight CTAs over the eight
    slabs of 256 points give the same bits.  Companion: the launch ran the CTAs the grid names, so the loop over
    slabs is taken (two or three CTAs) or not (one CTA per slab)."""
    T, P, Y = states("h2o2")
    T, P, Y = np.tile(T, 2), np.tile(P, 2), np.tile(Y, 2)
    c = compiled("h2o2", "viscosity", 4)
    flags = host.FLAGS + (() if limit is None else (f"-DSINGE_GRID_LIMIT={limit}",))
    generated = generate(c)
    kernel = host.load(generated, flags=flags)
    ours = kernel.run({"temperature": T, "pressure": P, "mass_fractions": Y}, len(T))
    assert kernel.statistics["ctas"] == {None: 2, 3: 3, 1 << 30: 8}[limit]
    reference_run = host.load(generated, flags=host.FLAGS + ("-DSINGE_GRID_LIMIT=1",)).run(
        {"temperature": T, "pressure": P, "mass_fractions": Y}, len(T))
    assert all(np.array_equal(ours[f], reference_run[f]) for f in ours)


@pytest.mark.parametrize("name, warps", [("dme", 15), ("heptane", 4)])
def test_viscosity_dispatched_by_one_switch(name, warps):
    """``--viscosity-dispatch switch``: every warp's program its own case outside the slab loop (each warp's
    constants at indices ptxas knows) runs as the overlay does, to the bit, and within the tolerance of
    singe.reference.  The code is the switch's (one ``switch (warp_id)``, no masked blocks), so the comparison
    is not of a kernel with itself."""
    kernel = "viscosity"
    T, P, Y = states(name)
    switched = compile_kernel(load(name), kernel, warps=warps, dispatch="switch")
    cu = generate(switched).cu
    assert switched.programs.dispatch == "switch" and cu.count("switch (warp_id)") == 1 and "(1u << warp_id)" not in cu
    ours = switched.run_host(T, P, Y)
    assert relative(ours, expected(name, kernel)) <= REFERENCE_TOLERANCE
    assert np.array_equal(ours, compiled(name, kernel, warps).run_host(T, P, Y))



OPTED_IN = 70  # kernels that opt into more dynamic shared memory, beyond the 64 the runtime's table once held
MANY_OPT_INS = preamble("many_opt_ins") + "".join(
    f"__global__ void opt_in_{k}(const double *x, double *out, int n, int stride)"
    f" {{ extern __shared__ double buffer[]; buffer[threadIdx.x] = x[threadIdx.x] + {k}.0;"
    f" out[threadIdx.x] = buffer[threadIdx.x]; (void)n; (void)stride; }}\n" for k in range(OPTED_IN)) + r"""
extern "C" int many_opt_ins(const double *x, double *out, int n_points, int species_stride, void *stream)
{
""" + "".join(f"  SINGE_SET_SHARED(opt_in_{k}, 64 * 1024);\n" for k in range(OPTED_IN)) + rf"""
  SINGE_LAUNCH(opt_in_{OPTED_IN - 1}, 1, 32, 64 * 1024, stream, x, out, n_points, species_stride);
  return SINGE_LAUNCH_STATUS();
}}
"""


def test_any_number_of_kernels_opt_into_more_shared_memory():
    """The runtime's state is one per process with the GNU toolchain (its fiber stacks shared by every kernel
    library), so its table of the kernels opted into more than 48 KB of dynamic shared memory has no size
    limit: with 64 entries, the 65th kernel of a test session was refused as if it had never opted in."""
    x = np.zeros((9, 32))
    x[0] = np.arange(32.0)
    got = host.load(hand_written(MANY_OPT_INS)).run({"x": x}, 32)["out"]
    np.testing.assert_array_equal(got[0], x[0] + OPTED_IN - 1)
