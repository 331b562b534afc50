"""GPU targets: one table of every fact about a GPU the compiler, the timing
model, nvcc and the host runtime use.

Per SM: registers, shared memory with its allocation granularity and the
1 KB reserved per CTA on sm_80 and later, named barriers, thread / warp /
CTA limits; the timing model's clock, throughputs and latencies; the nvcc
``-arch`` string.  ``sm_80`` (A100), ``sm_90`` (H100), ``sm_90a`` (H100 with
the Hopper-only instructions: the same machine, another nvcc arch) and
``k20c`` (Kepler, for comparison with the paper only).

Spec-sheet numbers: SMs, clocks, FP64 rates, DRAM bandwidth, L2 size,
shared-memory banks.  Latencies, L2 bandwidth, MUFU and shuffle rates are
round figures of the order published microbenchmarks report, not measured
here; nothing below was fitted to the paper's results.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

WARP_SIZE = 32
DEFAULT_SHARED_PER_CTA = 48 * 1024
"""Dynamic shared memory a launch may use without opting in (cudaFuncSetAttribute) [B]."""


@dataclass(frozen=True)
class Latencies:
    """Cycles from issue until a dependent instruction can use the result."""

    fp64: float  # DFMA / DADD / DMUL
    alu: float  # integer and FP32 pipe
    mufu: float  # MUFU.RCP64H, MUFU.RSQ64H
    shared: float  # LDS / STS
    global_: float  # LDG from DRAM
    constant_miss: float  # constant-bank operand missing the constant cache (served by L2)
    barrier: float  # from a generation's completion until its waiters issue again


@dataclass(frozen=True)
class Target:
    """A GPU: ``arch`` is the name options use (``--arch``), ``name`` the GPU's.

    Throughputs are per SM per cycle: ``fp64_fma`` lanes (FMAs), ``mufu`` and
    ``shuffle`` warp instructions, ``shared_bandwidth`` bytes.
    """

    arch: str
    name: str
    nvcc_arch: str
    cuda_arch: int  # the value of __CUDA_ARCH__ when nvcc compiles for it (900 for sm_90)
    sms: int
    registers_per_sm: int
    max_registers_per_thread: int
    shared_per_sm: int  # [B]
    max_shared_per_cta: int  # [B]
    shared_granularity: int  # [B]
    shared_reserved_per_cta: int  # [B], reserved by the system for every resident CTA
    named_barriers: int  # per SM, shared by its CTAs
    max_threads_per_sm: int
    max_warps_per_sm: int
    max_ctas_per_sm: int
    clock_mhz: float
    fp64_fma: int
    schedulers: int
    mufu: float
    shuffle: float
    shared_bandwidth: float  # [B/cycle/SM]
    dram_gb_per_s: float  # [GB/s], whole GPU
    latency: Latencies
    register_unit: int = 256  # registers allocated per warp at a time
    constant_cache: int = 8 * 1024  # constant cache working set per SM [B]
    reorder_window: int = 32  # machine instructions the compiler may reorder over
    l2_bytes: int = 1536 * 1024  # [B]
    l2_gb_per_s: float = 500.0  # [GB/s], whole GPU
    setmaxnreg: bool = False  # warpgroups may change their register count (PTX setmaxnreg, sm_90a)
    instruction_cache: int = 128 * 1024  # [B] per SM: the L1 instruction cache (Jia et al. 2018 measure 128 KB
    # on Volta, behind 12 KB L0 caches per partition; NVIDIA publishes none for Ampere or Hopper, taken the same)
    unshared_fetch: tuple[tuple[int, float], ...] = ()
    """Cycles per instruction a warp issues at most when it runs code of its own (no other warp runs it), by the
    bytes of that code: (at least so many bytes, cycles), measured by the fetch probe; () where unmeasured."""
    shared_fetch: float = 1.0
    """Cycles per instruction a warp issues at most when the warps share code larger than ``instruction_cache``
    (measured by the fetch probe; 1.0 where unmeasured)."""

    def register_budget(self, threads: int, ctas_per_sm: int) -> int:
        """Registers per thread available when ``ctas_per_sm`` CTAs of ``threads`` share an SM.  The register
        file is split between the SM's partitions (``schedulers``), and each warp takes its registers from
        its partition's, so the partition with the most warps (the SM's warps over the partitions, rounded up)
        sets the count, as ptxas counts it for ``__launch_bounds__``: 3 warps x 7 CTAs, 21 warps, 6 on one
        partition, 80 registers (not 65536 / 672 = 97, 96); 5 x 5, 72 (not 80); 7 x 3, 80 (not 96)
        (sm_80 and sm_90, ``tests/test_targets.py``)."""
        warps = -(-threads // WARP_SIZE) * ctas_per_sm
        per_partition = -(-warps // self.schedulers)
        per_thread = self.registers_per_sm // self.schedulers // (per_partition * WARP_SIZE)
        return min(self.max_registers_per_thread, per_thread - per_thread % 8)

    def shared_budget(self, ctas_per_sm: int) -> int:
        """Shared memory bytes a CTA may use with ``ctas_per_sm`` CTAs per SM:
        its share of the SM less the per-CTA reservation, in whole allocation
        granules, at most the per-CTA maximum."""
        share = self.shared_per_sm // ctas_per_sm - self.shared_reserved_per_cta
        return max(0, min(self.max_shared_per_cta, share - share % self.shared_granularity))

    def resident_ctas(self, ctas_per_sm: int, shared_bytes: int) -> int:
        """CTAs per SM of ``shared_bytes`` each that are resident when ``ctas_per_sm`` are planned: the most,
        at most ``ctas_per_sm``, whose shared memory fits (``shared_budget``); 0 when not even one's does."""
        return next((c for c in range(ctas_per_sm, 0, -1) if shared_bytes <= self.shared_budget(c)), 0)

    def barrier_limit(self, ctas_per_sm: int) -> int:
        """Named barrier ids per CTA: the SM's barriers shared by the CTAs on it."""
        return self.named_barriers // ctas_per_sm

    @property
    def clock_hz(self) -> float:
        return self.clock_mhz * 1e6

    @property
    def peak_flops(self) -> float:
        """FP64 peak of the GPU [FLOP/s] (an FMA is two)."""
        return 2.0 * self.fp64_fma * self.sms * self.clock_hz

    @property
    def dram_bytes_per_cycle(self) -> float:
        """One SM's share of DRAM bandwidth [B/cycle]."""
        return self.dram_gb_per_s * 1e9 / (self.sms * self.clock_hz)

    @property
    def l2_bytes_per_cycle(self) -> float:
        """One SM's share of L2 bandwidth [B/cycle]."""
        return self.l2_gb_per_s * 1e9 / (self.sms * self.clock_hz)

    def capacity(self, resource: str) -> float:
        """Throughput of ``resource`` on one SM [units/cycle]: issue and fp64, mufu,
        shuffle in warp instructions; shared, dram and l2 in bytes."""
        return {"issue": float(self.schedulers), "fp64": self.fp64_fma / WARP_SIZE, "mufu": self.mufu,
                "shared": self.shared_bandwidth, "shuffle": self.shuffle,
                "dram": self.dram_bytes_per_cycle, "l2": self.l2_bytes_per_cycle}[resource]


K20C = Target("k20c", "K20c", "sm_35", 350, sms=13, registers_per_sm=65536, max_registers_per_thread=255,
              shared_per_sm=48 * 1024, max_shared_per_cta=48 * 1024, shared_granularity=256,
              shared_reserved_per_cta=0, named_barriers=16, max_threads_per_sm=2048, max_warps_per_sm=64,
              max_ctas_per_sm=16, clock_mhz=706, fp64_fma=64, schedulers=4, mufu=1.0, shuffle=1.0,
              shared_bandwidth=256, dram_gb_per_s=208,
              latency=Latencies(fp64=10, alu=9, mufu=18, shared=30, global_=450, constant_miss=200, barrier=20))
A100 = Target("sm_80", "A100", "sm_80", 800, sms=108, registers_per_sm=65536, max_registers_per_thread=255,
              shared_per_sm=164 * 1024, max_shared_per_cta=163 * 1024, shared_granularity=128,
              shared_reserved_per_cta=1024, named_barriers=16, max_threads_per_sm=2048, max_warps_per_sm=64,
              max_ctas_per_sm=32, clock_mhz=1410, fp64_fma=32, schedulers=4, mufu=0.5, shuffle=1.0,
              shared_bandwidth=128, dram_gb_per_s=1555,
              latency=Latencies(fp64=8, alu=5, mufu=16, shared=30, global_=500, constant_miss=200, barrier=20),
              l2_bytes=40 * 1024 * 1024, l2_gb_per_s=4000)
H100 = dataclasses.replace(A100, arch="sm_90", name="H100", nvcc_arch="sm_90", cuda_arch=900, sms=132, shared_per_sm=228 * 1024,
                           max_shared_per_cta=227 * 1024, clock_mhz=1980, fp64_fma=64, dram_gb_per_s=3350,
                           l2_bytes=50 * 1024 * 1024, l2_gb_per_s=5500,  # the rest as the A100
                           # The fetch probe on an H200 (the H100's SM; docs/measurements/2026-11-27-h200-copy): one
                           # CTA of 8 warps issued 0.453 warp instructions per SM per cycle when each ran its own 16 KB
                           # of code, 0.388 at 32 KB (8 / rate cycles per instruction of a warp), and 1.325 when all
                           # ran the same 256 KB (3.96 within the instruction cache).
                           unshared_fetch=((16 * 1024, 8 / 0.453), (32 * 1024, 8 / 0.388)), shared_fetch=8 / 1.325)
H100_HOPPER = dataclasses.replace(H100, arch="sm_90a", nvcc_arch="sm_90a", setmaxnreg=True)

TARGETS: dict[str, Target] = {t.arch: t for t in (A100, H100, H100_HOPPER, K20C)}
"""Every target by ``--arch`` name."""

MAX_SHARED_PER_CTA = max(t.max_shared_per_cta for t in TARGETS.values())
"""The largest dynamic shared memory of a CTA on any target [B] (the host runtime's array)."""


def nvcc_arch(arch: str) -> str:
    """The nvcc ``-arch`` of a target name (an nvcc arch such as 'sm_86' is kept)."""
    return TARGETS[arch].nvcc_arch if arch in TARGETS else arch
