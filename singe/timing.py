"""A timing model of the warp-specialized kernels and their data-parallel baseline.

There is no GPU in the loop: the model walks the same ``WarpPrograms`` the
simulator executes and codegen renders, charges every item cycles on a GPU
preset (K20c, A100, H100), and reports modeled cycles per CTA slab and points
per second per GPU.  It is a model, reported as it comes out, not fitted to
the paper's measurements (``autotune/bench.py`` prints the two side by side).

Measured against GPUs (docs/measurements; ``python -m autotune.speedup --measured FILE``).  On the H100,
this model's own preset (2026-11-27-h100, run 2, paper settings, persistent grid), it gives 1.61-3.41x the
measured throughput of the warp-specialized kernels and 0.58-4.86x that of the baselines; its speedups
(0.41-4.13) against the device's (0.44-1.56).  ncu puts the warp-specialized transport kernels' time in
waits for shared and constant loads (short scoreboard, MIO throttle) and barriers, the chemistry
kernels' in barriers and instruction fetch.  Since the H200 session of 2026-11-27 the model charges a
constant-table ``LDC.64`` on the SM's load queue with the ``LDS.64`` (``LDC_QUEUE_SHARE``, measured by
the load probe); before, it charged an issue slot only, and gave 2.36-4.92x (DME viscosity 2.80, now
1.61).  Since 2026-11-27 (evening) the warp-specialized kernels' reads of the constant bank stall on the
constant cache's misses by the baseline's rule (``bank_footprint``); before, 1.61-4.58x (n-heptane
diffusion 4.58, now 3.08; chemistry 3.54 and 4.36, now 3.00 and 3.41).  Since 2026-11-27 (night) a
warp-uniform load of the constant table's copy takes the load-queue share the load probe measured
(``SHARED_TABLE_QUEUE_SHARE``, ``SHARED_TABLE_PAIR_QUEUE_SHARE``; one ``LDS.64`` slot before): against the
H200's latest measurement of the paper's kernels, the viscosity kernels went from 1.22 and 1.29 to 1.12
and 1.15 (DME, n-heptane).  Since 2026-11-28 the baseline's literals on sm_90 are two ``UMOV`` each from
the instruction (``LITERAL_MOVES``), as its SASS has them, instead of constant-bank operands that stall on the
constant cache's misses (which they are on sm_80): the baselines' model over the H200's measurement went from
0.82 to 1.07 (DME diffusion), 0.35 to 1.25 (n-heptane viscosity) and 0.78 to 1.91 (n-heptane diffusion, whose
megabyte of straight-line code the fetch probe's 256 KB does not reach); DME viscosity stays 1.83 (its
literals fit the cache), the chemistry baselines 1.29 and 1.19 (their spills).  Since 2026-11-28 (later) a
rolled loop's constants in code one warp runs alone are ``ULDC.64`` at a uniform index (``UNIFORM_TABLE_LOAD``), as
the SASS has them, not ``LDC.64`` on the load queue: n-heptane viscosity's warp-specialized model over the H200's
measurement went from 1.15 to 1.30 (its warps 0 and 1 run their 51-iteration Wilke loops alone, 4 constants an
iteration).  The reorder window is not the cause of the rest: at 8 or 2 instructions instead of 32 the
warp-specialized transport kernels' modeled throughput moves by at most 5 % (chemistry's by up to
35 %).  Since 2026-11-27 (afternoon) a warp running code of its own (a switch case) issues no faster
than the fetch probe measured on the H200 (``fetch_cycles``, ``Target.unshared_fetch``); chemistry's model
over the H200's measurement went from 3.00 and 3.42 to 0.81 and 1.32 (DME, n-heptane).  The viscosity
switch (DME: 9 KB of code a warp, below the probe's smallest part) is not charged, so the model still
ranks it above the overlay, which the H100 measured 3.4x slower.  Since 2026-11-28 (night), given the
SASS (``pace``), a warp issues no faster than its stall counts allow (the Per warp assumptions below):
DME viscosity's baseline, at two warps a scheduler, goes from 1.83 to 1.69 times the H200's measurement; the
other paper kernels move by at most 1 %.

Assumptions
-----------
Machine
    * Per SM: ``schedulers`` warp schedulers (partitions), each issuing one
      warp instruction per cycle; warp ``w`` of a CTA sits on partition
      ``w % schedulers``.  FP64 units and the MUFU (special function) units
      are split evenly between the partitions; shared memory, the shuffle
      crossbar and the SM's share of DRAM bandwidth are SM-wide.
    * ``ctas`` resident CTAs per SM (the occupancy below) are identical and run
      in phase: each gets ``1/ctas`` of every SM-wide resource and, on each
      partition, a share proportional to its warps there.
    * DRAM bandwidth is spread evenly over the SMs.  A warp-wide global load
      or store of one double per lane moves 256 B; a row of a global field is
      read from DRAM once per CTA slab (other warps loading it hit the caches
      but still pay the load latency).
Instructions (``EXPANSIONS``)
    * Every IR opcode expands into machine instructions on the FP64 pipe
      (DFMA, DADD, DMUL, DSETP, DMNMX), the integer/FP32 pipe ('alu': issue
      slots only) and the MUFU; log, sqrt, div and rcp are the
      approximate SASS sequences of CUDA's libdevice fast paths, with the
      part of them that is a dependence chain; exp is singe_exp's sequence
      in the warp-specialized kernels and the library's fast path in the
      baseline (``BASELINE_EXPANSIONS``), as each is emitted.
    * What a warp issues comes from the units codegen emits
      (``singe.programs.lowering.program_units``; ``warp_code``,
      ``issued_per_warp``): the instructions of an operation that feed a
      value read later or a global store, a ``LDS`` per shared value read in
      place and a ``STS`` per value written in place, in the layout codegen
      emits (``codegen.lay_out``): the overlay's dispatch (``MASK_DISPATCH``,
      ``SWITCH_DISPATCH``) and ``SLAB_OVERHEAD`` per slab, or one switch
      outside the slab loop (``WARP_SWITCH_SLAB`` per slab; there, as ptxas
      does, a shared value loaded or stored since the last barrier or
      shuffle is read from its register and a store overwritten before the
      next one is dropped: ``issued_shared``).  The runs emitted as loops
      (``lowering.find_loops``) are their iterations' instructions, with a
      table load per varying constant and 'table' column per iteration in
      place of the constant's shuffles or load, and the loop's index
      arithmetic and control (``loop_classes``).
      Checked against nvdisasm's per-warp counts of the compiled kernels
      (tests/test_timing.py, ``autotune.sass.model_check``), on sm_90 and on
      sm_80: what ptxas emits differently for the two from the same CUDA
      (a constant at a table index it knows: ULDC.64 on sm_90, a
      constant-bank operand on sm_80; the uniform moves of constants that
      sm_90 sets per slab) is ``ARCH_CODE``, by the preset's arch.
    * A warp-specialized ``Const`` operand in the warp's register stripes
      (the first ``codegen.register_stripes`` stripes of its constant table)
      is two ``SHFL`` (hi and lo word) from the lane holding it, otherwise
      one warp-uniform load of the table (an L1 hit); constants have no data
      dependence, so they cost issue slots and shuffle throughput but never latency;
      a load from the constant bank at an index ptxas does not know (``LDC.64``)
      also takes ``LDC_QUEUE_SHARE`` slots of the SM's load queue (the 'shared'
      resource, which ``LDS.64`` and ``STS.64`` use).  Each read of the constant
      bank (that ``LDC.64``, a ``ULDC.64`` of a constant at a known index, or
      such a constant as an operand on sm_80) stalls the baseline's
      ``constant_miss`` times its miss rate, with the footprint of what the
      warps read there (``bank_footprint``).  A
      baseline ``Const`` is a constant-bank operand on sm_80: free on a hit, a stall of
      ``constant_miss`` cycles on a miss; the miss rate is the part of the
      kernel's constant footprint that does not fit the constant cache,
      ``max(0, 1 - cache / footprint)``.  On sm_90 it is moved into a uniform
      register pair from the instruction (``LITERAL_MOVES``) and never stalls
      (``baseline_steps``; since 2026-11-28, read off the SASS).
    * ``SharedStore`` / ``SharedLoad`` are ``STS.64`` / ``LDS.64``: 256 B of
      shared-memory bandwidth and ``shared`` cycles of latency.
Per warp
    * A warp's program is cut at its barrier items into *segments*.  Within a
      segment the compiler may reorder instructions within a window of
      ``reorder_window`` machine instructions: an IR instruction issues at
      ``max(ready(sources), issue(the one holding machine instruction m - window) + 1)``
      (``m``: its first machine instruction) and its result is ready its
      chain latency later.  A segment's solo time is
      ``max(critical path, instructions issued) + stalls`` [cycles]; it must
      drain before the barrier that ends it (stores complete before
      ``bar.arrive``).
    * Given the compiled kernel's SASS (``pace``, from ``autotune.bench.model_inputs``), a warp issues no
      faster than its instructions' stall counts allow: each segment lasts at least its issued instructions
      times the warp's cycles per instruction by the stall counts ptxas wrote (``autotune.sass.stall_count``:
      the fixed latencies ptxas did not hide).  The stall counts less one issue cycle agree with ncu's
      'wait' stalls per issued instruction of the six paper baselines to 7 % (H200; docs/measurements).
      Without the SASS, no such floor.
SM contention (event-driven, fluid)
    * Running warps progress through their current segment at rate
      ``theta_w / solo time``.  ``theta`` comes from equal-slowdown
      progressive filling: every warp gets the same fraction of its solo
      speed until a resource it uses saturates; those warps are frozen there
      and the rest go on filling.  Rates are recomputed at every event (a
      segment ends, a barrier generation completes).
    * Named barriers follow PTX ``bar.arrive`` / ``bar.sync`` exactly as the
      simulator does: per id a generation counts 32 threads per warp against
      the count of its first arrival and completes when reached; waiting
      warps resume ``barrier`` cycles later.  A deadlock raises.
    * A CTA runs ``slabs`` slabs back to back (a warp that finishes its
      program starts the next slab at once); the modeled time of a slab is
      the steady state ``(end of the last slab - end of the first) / (slabs - 1)``.
      The constants prologue and the tail of the grid are not modeled
      (a large persistent grid, as the launcher sizes it: each CTA pays its
      prologue once over many slabs).
Occupancy
    * CTAs per SM: the least of the thread, warp and CTA limits, registers
      (per-warp allocation in units of 256 registers, from the partition of the warp), shared memory (with
      the allocation granularity and, on sm_80+, 1 KB reserved per CTA) and
      named barriers (16 per SM shared by the CTAs, as ``CompileOptions.barrier_limit``).
    * Registers: ptxas's count when given; else the register plan's
      prediction (``programs.plan``: the same estimate the command prints and
      codegen follows, capped by the launch bounds' budget); its floor beyond
      the budget spills (``RegisterPlan.spilled``; the baseline's: its
      estimate less the scheduling margin beyond 255): one 4-byte store and
      load per spilled register per slab.  With ptxas, the spill
      bytes it reports (static, taken as once per slab).  Spill traffic costs
      issue slots and bandwidth, not latency: L2 bandwidth when the spilled
      bytes of every resident thread fit the L2, else DRAM bandwidth.
Baseline (``model_baseline``)
    * ``BASELINE_THREADS`` threads per CTA, one point per thread; every warp
      runs the whole graph (replicated operations once) as one segment, in
      the topological order codegen emits, loading every input row from
      DRAM; no shared memory, no barriers; registers from ptxas, or a
      liveness estimate over that order.  Its literals are constant-bank
      operands on sm_80 and, on sm_90, two ``UMOV`` each where used
      (``LITERAL_MOVES``, read off the SASS; issue slots, off the critical path).

Code size
    * The static code (``static_instructions``: the warps' issued total,
      rolled loops counted as emitted) beyond the SM's instruction cache
      (``Target.instruction_cache``, 128 KB) streams from L2 once per slab,
      shared by the resident CTAs (``instruction_fetch``): L2 bandwidth,
      spread over the warps' segments.
    * Fetch: each segment lasts at least its instructions times ``fetch_cycles``: for a warp running its
      own code (switch dispatch, straight-line: its issued instructions are its code) by that code's size,
      for code the warps share (the overlay, the baseline) when it exceeds the instruction cache.  The
      probe's rates (one CTA of 8 warps), taken per warp; unmeasured presets (A100) are not charged.

Not modeled: dual issue, L1 hits of spilled values, the latency of the baseline's spill loads, and the
grid's tail.
"""

from __future__ import annotations

import dataclasses
import functools
import math
import struct
from collections import Counter, deque
from dataclasses import dataclass, field
from typing import Iterable

from singe.codegen import (BASELINE_THREADS, constants_in_bank, emitted_plan, int_table_bytes, kernel_shared_bytes,
                            lay_out, register_stripes, table_copy_bytes)
from singe.baseline import baseline_kernel
from singe.codegen.dispatch import unswitched
from singe.errors import SingeInternalError
from singe.kernels.ir import OPCODES, Const, DataflowGraph, Reg
from singe.programs import FULL_BARRIER_ID, WARP_SIZE, Arrive, FullSync, Sync, WarpPrograms
from singe.programs.lowering import (BarrierUnit, ComputeUnit, LoadUnit, Loop, LoopSummary, StoreUnit,
                                     invariant_loads, issued_constant_pairs, live_instructions, loop_summary,
                                     program_units, varying_constants)
from singe.programs.tables import TableLoop
from singe.programs.plan import REGISTER_MARGIN, REGISTER_OVERHEAD, RegisterPlan
from singe.sim.barriers import NamedBarriers
from singe.targets import A100, H100, K20C, TARGETS, Latencies, Target

SHARED_RESOURCES = ("shared", "shuffle", "dram", "l2")  # SM-wide
PARTITION_RESOURCES = ("issue", "fp64", "mufu")  # split over the warp schedulers
RESOURCES = PARTITION_RESOURCES + SHARED_RESOURCES
WARP_BYTES = WARP_SIZE * 8  # one double per lane [B]
SATURATED = 0.7  # utilization from which a resource is reported as the bottleneck


# --------------------------------------------------------------------------- presets

Preset = Target  # the timing model reads a GPU target (singe.targets) as its preset

PRESETS = {p.name: p for p in (K20C, A100, H100)}
PRESET_OF_ARCH = {arch: p.name for arch, p in TARGETS.items()}


def preset_for(which: "str | Preset") -> Preset:
    """A preset by name ('K20c', 'A100', 'H100', any case) or by target arch ('k20c', 'sm_80', 'sm_90')."""
    if isinstance(which, Preset):
        return which
    if which in PRESET_OF_ARCH:
        return PRESETS[PRESET_OF_ARCH[which]]
    for name, preset in PRESETS.items():
        if name.lower() == str(which).lower():
            return preset
    raise SingeInternalError(f"no timing preset {which!r}: choose from {', '.join(PRESETS)} "
                             f"or an arch of {', '.join(PRESET_OF_ARCH)}")


# --------------------------------------------------------------------------- instructions

@dataclass(frozen=True)
class Expansion:
    """Machine instructions of one IR opcode and the dependence chain among them.

    ``chain`` = (fp64, alu, mufu) instructions on the chain from the sources
    to the result (None: all of them, in sequence).
    """

    fp64: int = 0
    alu: int = 0
    mufu: int = 0
    chain: tuple[int, int, int] | None = None
    memory: str | None = None  # 'load' or 'store' for ldg / stg
    branch: int = 0  # the library's test for its slow path (the walk of the SASS takes the fast path)

    @property
    def issue(self) -> int:
        return self.fp64 + self.alu + self.mufu + self.branch + (self.memory is not None)

    def span(self, lat: Latencies) -> float:
        """Cycles from the first to the last machine instruction's issue (the
        chain's latency less that of its last step) [cycles]."""
        if self.issue <= 1:
            return 0.0
        return max(self.issue - 1.0, self.latency(lat) - (lat.fp64 if self.fp64 else lat.alu))

    def latency(self, lat: Latencies) -> float:
        """Cycles from issue to the result [cycles]."""
        if self.memory == "load":
            return lat.global_
        if self.memory == "store":
            return 1.0
        fp64, alu, mufu = self.chain or (self.fp64, self.alu, self.mufu)
        return fp64 * lat.fp64 + alu * lat.alu + mufu * lat.mufu


EXPANSIONS: dict[str, Expansion] = {
    "mov": Expansion(alu=1),
    "add": Expansion(fp64=1), "sub": Expansion(fp64=1), "mul": Expansion(fp64=1), "fma": Expansion(fp64=1),
    # Measured (autotune/sass.py's walk, sm_90): kernels of 3 and 11 calls on loaded values, the difference
    # over 8 per call.  max, min against a positive constant (singe_max, singe_min: a signed comparison of
    # the bit patterns): two ISETP (the low words, then the high words with the carry) and two SEL, in
    # sequence ISETP, ISETP, SEL; no FP64 instruction (fmax was DSETP, 6.6 others: 1 FP64 + 6.6)
    "max": Expansion(alu=4, chain=(0, 3, 0)), "min": Expansion(alu=4, chain=(0, 3, 0)),
    # sel: DSETP, then FSEL of both words
    "sel": Expansion(fp64=1, alu=2, chain=(1, 1, 0)),
    # div: RCP64H, Newton steps, correction; the fast path's range test (FFMA, FSETP) and its branch
    "div": Expansion(fp64=8, alu=6, mufu=1, branch=1, chain=(8, 1, 1)),
    "rcp": Expansion(fp64=5, alu=4, mufu=1, branch=1, chain=(5, 1, 1)),
    # singe_exp (templates/common.cuh.j2), as ptxas emits it for sm_90 (tests/test_exp.py): DSETP, the
    # k and reduction DFMA/DADD, 11 DFMA of the polynomial, the final DMUL; clamp and exponent bits on the ALU
    "exp": Expansion(fp64=17, alu=8, chain=(17, 2, 0)),
    # singe_log (templates/common.cuh.j2), as ptxas emits it (autotune/math_cost.py: 36.62 per further call
    # of 3 and 11 on sm_90, 35.88 on sm_80; tests/test_log.py): the subnormal scaling DMUL, m - 1, m + 1,
    # MUFU.RCP64H and 3 DFMA (the reciprocal), s, z, 6 DFMA of the polynomial, 5 of the reconstruction (k's
    # magic-number DADD among them); the split, k and the special values' selects on the ALU.  Its constants
    # that are no immediate are read from the constant bank (singe_log_constants: operands on sm_80, ULDC.64
    # into uniform registers on sm_90); as literals, sm_90 set them again by UMOV pairs at 52 of the six paper
    # kernels' 70 calls a slab, 12 a call.  The chain: 17 of the FP64, the test and select of the scale and
    # the split before m + 1, the MUFU
    "log": Expansion(fp64=20, alu=15, mufu=1, chain=(17, 5, 1)),
    "sqrt": Expansion(fp64=8, alu=8, mufu=1, branch=1, chain=(6, 1, 1)),  # RSQ64H and Newton steps (measured)
    "ldg": Expansion(memory="load"),
    "stg": Expansion(memory="store"),
}
#: the data-parallel baseline calls the CUDA library's exp: its fast path (sm_90 SASS, 3 and 11 calls summed as
#: in tests/test_exp.py, the difference per call: 18 FP64, 14 other, 1 branch round the slow path)
BASELINE_EXPANSIONS: dict[str, Expansion] = {**EXPANSIONS, "exp": Expansion(fp64=18, alu=14, branch=1,
                                                                              chain=(17, 3, 0))}
if set(EXPANSIONS) != set(OPCODES):  # pragma: no cover - import-time guard
    raise SingeInternalError("singe.timing.EXPANSIONS does not cover exactly the opcodes of OPCODES")


SHUFFLES_PER_CONSTANT = 2  # a double is broadcast as two 32-bit shuffles
TABLE_LOAD = "ldc"
"""The key under which ``instruction_classes`` and ``loop_classes`` count a constant-table load at an index
ptxas does not know (``LDC.64``; class 'other' of ``ISSUE_CLASSES``, into which ``issue_classes`` folds it):
the model charges it on the SM's load queue (``LDC_QUEUE_SHARE``)."""
SHARED_TABLE_LOAD = "ldst"
"""The key under which a warp-uniform ``LDS.64`` of the constant table's copy in shared memory is counted
(``CompileOptions.constant_table`` 'shared'; class 'lds' of ``ISSUE_CLASSES``, into which ``issue_classes``
folds it); it takes ``SHARED_TABLE_QUEUE_SHARE`` slots of the SM's load queue."""
UNIFORM_TABLE_LOAD = "uldc"
"""The key of a rolled loop's constant-table load in code one warp runs alone, the table in the constant bank:
ptxas knows the index, holds it in a uniform register and loads by ``ULDC.64 c[0x3][UR+imm]`` (sm_90 and sm_80
SASS of DME viscosity with ``--constant-table bank``, and of the warp-alone Wilke loops of n-heptane and GRI-Mech
viscosity).  Class 'other'; it takes an issue slot and stalls on the constant cache's misses as a ``TABLE_LOAD``
does, but no slot of the SM's load queue: the load probe's 'bank' mode (the same table at indices ptxas knows)
sustains 2.84 a cycle an SM on the H200, 4.4x an ``LDS.64``'s rate (docs/measurements/2026-11-27-h200-copy);
not measured apart with the index in a uniform register."""
SHARED_TABLE_PAIR = "ldst2"
"""The key of a warp-uniform ``LDS.128`` of the copy: two adjacent constants (of a loop iteration,
``lowering.issued_constant_pairs``, or paired by nvcc in straight code, ``WarpCode.paired_reads``); class
'lds'; ``SHARED_TABLE_PAIR_QUEUE_SHARE`` slots."""
LDC_QUEUE_SHARE = 0.646 / 0.509
"""Slots of the SM's load queue an ``LDC.64`` at a warp-dependent index takes, in ``LDS.64`` (each
``WARP_BYTES`` of the 'shared' resource).  Measured by ``autotune/probes/mio_throughput.cu`` on the H100
and the H200 (docs/measurements/2026-11-27-h100, 2026-11-27-h200): an SM sustains 0.646 ``LDS.64`` or
0.509 ``LDC.64`` per cycle, and 0.585 of the two in turn, which is one queue at these costs (0.569;
two queues would give near their sum).  ncu puts DME viscosity's warps in that queue (MIO throttle on
``LDC``, 16 % of its stall samples, and DFMA waiting for the loads' results, 29 %).  The presets' shared
bandwidth (128 B per cycle: 0.5 ``LDS.64``) is below the probe's 0.646 and was not changed (``STS.64`` was
not measured; the probe's 'sts' mode measures it in the next GPU session)."""


# --------------------------------------------------------------------------- occupancy

@dataclass(frozen=True)
class Occupancy:
    """Resident CTAs per SM and why; ``limits``: CTAs each resource alone allows."""

    ctas: int
    warps_per_cta: int
    registers: int  # per thread
    shared_bytes: int  # per CTA
    limits: dict = field(compare=False, hash=False)

    @property
    def warps(self) -> int:
        return self.ctas * self.warps_per_cta

    @property
    def limiter(self) -> str:
        return min(self.limits, key=lambda k: (self.limits[k], k))

    def __str__(self) -> str:
        return (f"{self.ctas} CTAs x {self.warps_per_cta} warps per SM ({self.registers} registers, "
                f"{self.shared_bytes} B shared; limited by {self.limiter})")


def occupancy(preset: Preset, warps_per_cta: int, registers: int, shared_bytes: int = 0,
              barrier_ids: int = 0) -> Occupancy:
    """CTAs of ``warps_per_cta`` warps that fit on one SM of ``preset``.

    ``registers`` per thread; ``shared_bytes`` per CTA; ``barrier_ids``:
    named barrier ids a CTA uses (16 per SM shared by its CTAs)."""
    target = preset
    registers = max(1, min(registers, target.max_registers_per_thread))
    unit = preset.register_unit
    per_warp = -(-registers * WARP_SIZE // unit) * unit
    limits = {
        "threads": preset.max_threads_per_sm // (warps_per_cta * WARP_SIZE),
        "warps": preset.max_warps_per_sm // warps_per_cta,
        "ctas": preset.max_ctas_per_sm,
        # each warp's registers come from its partition's share of the file (``Target.register_budget``)
        "registers": (target.registers_per_sm // target.schedulers // per_warp) * target.schedulers // warps_per_cta,
    }
    if shared_bytes:
        granule = preset.shared_granularity
        allocated = -(-shared_bytes // granule) * granule + preset.shared_reserved_per_cta
        fits = shared_bytes <= target.max_shared_per_cta
        limits["shared"] = target.shared_per_sm // allocated if fits else 0
    if barrier_ids:
        limits["barriers"] = target.named_barriers // barrier_ids
    return Occupancy(max(0, min(limits.values())), warps_per_cta, registers, shared_bytes, limits)


# --------------------------------------------------------------------------- warp steps

@dataclass(frozen=True)
class Segment:
    """Work between two barrier items of one warp: solo time [cycles] and demand
    per resource of ``RESOURCES`` (warp instructions, or bytes for shared, dram and l2)."""

    cycles: float
    demand: tuple[tuple[str, float], ...]


@dataclass(frozen=True)
class Barrier:
    """A barrier item: ``bar.arrive`` (blocking False) or ``bar.sync``."""

    barrier_id: int
    threads: int
    blocking: bool


class _SegmentBuilder:
    """Accumulates the instructions of one segment (see the module docstring)."""

    def __init__(self, preset: Preset, constant_stall: float | None, bank_stall: float = 0.0):
        self.preset = preset
        code = arch_code(preset.arch)
        self.expansions = code.expansions if constant_stall is None else code.baseline_expansions
        self.latency = {op: e.latency(preset.latency) for op, e in self.expansions.items()}
        self.span = {op: e.span(preset.latency) for op, e in self.expansions.items()}
        self.constant_stall = constant_stall  # None: constants are shuffled or loaded (warp-specialized)
        self.bank_stall = bank_stall  # warp-specialized: cycles per read of the constant bank (``constant_stall``)
        self.operands = code.uniform_constants is None  # known constants are constant-bank operands
        self.literal_moves = code.literal_moves if constant_stall is not None else 0  # the baseline's literals
        self.reset()

    def reset(self) -> None:
        self.ready: dict[str, float] = {}
        self.window: deque = deque()  # (first machine instruction, count, issue time, span) of IR instructions
        self.machine = 0  # machine instructions so far in the segment
        self.end = 0.0
        self.stall = 0.0
        self.demand = dict.fromkeys(RESOURCES, 0.0)

    def _issue(self, sources: Iterable[str], latency: float, dst: str | None, machine: int,
               span: float = 0.0) -> None:
        """Issue an IR instruction of ``machine`` machine instructions whose issue
        spans ``span`` cycles: not before its sources are ready, nor before the
        machine instruction ``reorder_window`` places earlier has issued (its
        time interpolated within its IR instruction's span)."""
        ready = self.ready
        start = 0.0
        for source in sources:
            t = ready.get(source, 0.0)
            if t > start:
                start = t
        window = self.window
        oldest = self.machine - self.preset.reorder_window
        while window and window[0][0] + window[0][1] <= oldest:
            window.popleft()
        if window and window[0][0] <= oldest:
            first, count, issued, length = window[0]
            start = max(start, issued + length * (oldest - first) / max(count - 1, 1) + 1.0)
        window.append((self.machine, machine, start, span))
        self.machine += machine
        done = start + latency
        if dst is not None:
            ready[dst] = done
        if done > self.end:
            self.end = done

    def operation(self, op, loaded: set, in_registers=None, needed=None, constant_class: str | None = "ldg",
                  beyond_copy: frozenset = frozenset()) -> None:
        """Every instruction of ``op`` codegen emits (``needed``: the values read
        after it, None: all); ``loaded``: global rows already read from DRAM this
        slab (a load of one of them hits the caches), updated; ``in_registers``:
        the constants the warp keeps in registers (None: all); ``constant_class``:
        what a use of one of the others issues (``WarpCode.constant_class``), but of ``beyond_copy`` (a
        partial copy's, ``WarpCode.beyond_copy``)."""
        decoded = self._decoded(op, in_registers, needed, constant_class, beyond_copy)
        for row in decoded.rows:
            self._issue(*row)
        demand = self.demand
        for resource, amount in decoded.demand:
            demand[resource] += amount
        fresh = [row for row in decoded.loads if row not in loaded]
        loaded.update(fresh)
        demand["dram"] += WARP_BYTES * (len(fresh) + decoded.stores)
        self.stall += decoded.stall + self.bank_stall * decoded.bank_reads

    def _decoded(self, op, in_registers, needed, constant_class, beyond_copy) -> "_DecodedOperation":
        key = (id(op), self.preset.arch, self.constant_stall, id(in_registers),
               None if needed is None else frozenset(needed), constant_class, self.operands, beyond_copy,
               self.literal_moves)
        hit = _DECODED.get(key)
        if hit is not None and hit[0] is op and hit[1] is in_registers:
            return hit[2]
        if len(_DECODED) > 50_000:
            _DECODED.clear()
        decoded = _decode_operation(op, self.latency, self.span, self.constant_stall, self.expansions,
                                    in_registers, needed, constant_class, self.operands, beyond_copy,
                                    self.literal_moves)
        _DECODED[key] = (op, in_registers, decoded)
        return decoded

    def add(self, classes: dict) -> None:
        """Machine instructions by ``ISSUE_CLASSES`` off the critical path (a loop's control, ``loop_classes``),
        its ``TABLE_LOAD`` count on the load queue and stalled on the constant cache's misses."""
        self.demand["issue"] += sum(classes.values())
        self.demand["shuffle"] += classes.get("shfl", 0)
        self.demand["shared"] += queue_demand(classes)
        self.stall += self.bank_stall * (classes.get(TABLE_LOAD, 0) + classes.get(UNIFORM_TABLE_LOAD, 0))

    def shared(self, value: str, load: bool) -> None:
        self.demand["issue"] += 1
        self.demand["shared"] += WARP_BYTES
        self._issue(() if load else (value,), self.preset.latency.shared, value if load else None, 1)

    def flush(self, extra_issue: int = 0) -> Segment | None:
        """The segment so far (None if empty), and start a new one."""
        self.demand["issue"] += extra_issue
        issued = self.demand["issue"]
        if not issued:
            self.reset()
            return None
        cycles = max(self.end, issued) + self.stall
        segment = Segment(cycles, tuple((k, v) for k, v in self.demand.items() if v))
        self.reset()
        return segment


@dataclass(frozen=True)
class _DecodedOperation:
    """An operation as the segment builder needs it: per IR instruction the
    arguments of ``_SegmentBuilder._issue``; its demand (DRAM aside), constant
    stalls [cycles], the global rows it loads, how many it stores, and its
    machine instructions by ``ISSUE_CLASSES``; ``bank_reads``: its reads of the constant bank that
    a warp-specialized warp issues (``TABLE_LOAD``, and known constants where they are operands)."""

    rows: tuple
    demand: tuple
    stall: float
    loads: tuple
    stores: int
    classes: tuple = ()
    bank_reads: int = 0


_DECODED: dict = {}  # (id(op), arch, constant stall, id(in_registers), needed, constant class, operands, beyond copy,
# literal moves) -> (op, in_registers, _DecodedOperation)


def instruction_classes(instr, expansion: Expansion, in_registers, constant_stall: float | None,
                        constant_class: str | None = "ldg", beyond_copy: frozenset = frozenset(),
                        literal_moves: int = 0) -> dict:
    """Machine instructions of one IR instruction by ``ISSUE_CLASSES``, as
    codegen emits it: its expansion, and per ``Const`` operand two ``SHFL``
    when the warp keeps it in its register stripes (``in_registers``: the
    values it keeps, None: all), else one warp-uniform load of the constant
    table of ``constant_class`` (None: a constant-bank operand, nothing issued), an ``LDC.64`` where that
    is the table's copy and the value is ``beyond_copy`` (past a partial copy, ``WarpCode.beyond_copy``);
    in the baseline (``constant_stall`` set) a literal, ``literal_moves`` instructions where it is no
    immediate (``ArchCode.literal_moves``)."""
    classes = {"fp64": expansion.fp64, "mufu": expansion.mufu, "other": expansion.alu, "branch": expansion.branch}
    if expansion.memory:
        classes["ldg" if expansion.memory == "load" else "stg"] = 1
    if constant_stall is not None:
        moves = literal_moves * sum(isinstance(s, Const) and not is_immediate(s.value) for s in instr.srcs)
        if moves:
            classes["other"] += moves
    else:
        for source in instr.srcs:
            if isinstance(source, Const):
                if in_registers is None or source.value in in_registers:
                    classes["shfl"] = classes.get("shfl", 0) + SHUFFLES_PER_CONSTANT
                elif constant_class is not None:
                    key = _table_key("other" if constant_class == "lds" and source.value in beyond_copy
                                     else constant_class)
                    classes[key] = classes.get(key, 0) + 1
    return classes


_TABLE_KEYS = {"other": TABLE_LOAD, "lds": SHARED_TABLE_LOAD}  # constant class -> its key, where it has one
_FOLDED = {TABLE_LOAD: "other", UNIFORM_TABLE_LOAD: "other", SHARED_TABLE_LOAD: "lds",
           SHARED_TABLE_PAIR: "lds"}  # key -> the walk's class
SHARED_TABLE_QUEUE_SHARE = 0.646 / 0.870
"""Slots of the load queue (``LDS.64`` at lane-varying addresses, ``WARP_BYTES`` of the 'shared' resource each) a
warp-uniform ``LDS.64`` takes.  Measured by the load probe (``autotune/probes/mio_throughput.cu``, modes 'lds'
and 'bcast') on the H200 (docs/measurements/2026-11-27-h200-copy, run 1): an SM sustains 0.646 ``LDS.64`` or
0.870 warp-uniform ``LDS.64`` per cycle.  Until 2026-11-27 (night) the model charged it one slot, unmeasured."""
SHARED_TABLE_PAIR_QUEUE_SHARE = 0.646 / 0.466
"""The same of a warp-uniform ``LDS.128`` (mode 'bcast128'): 0.466 per cycle, 0.93 constants; until 2026-11-27
(night) one slot."""


def is_immediate(value: float) -> bool:
    """Can an FP64 instruction take ``value`` as an immediate: its low 32 bits zero (SASS keeps the high
    word, ``DFMA R6, RZ, R2, 1``)?  The others are literals the baseline builds (``ArchCode.literal_moves``)."""
    return struct.unpack("<Q", struct.pack("<d", value))[0] & 0xFFFFFFFF == 0


def _table_key(constant_class: str | None) -> str | None:
    """The key a constant-table load of ``constant_class`` is counted under: ``TABLE_LOAD`` for an LDC,
    ``SHARED_TABLE_LOAD`` for a load of the table's copy in shared memory ('lds')."""
    return _TABLE_KEYS.get(constant_class, constant_class)


def issue_classes(counts: dict) -> dict:
    """``counts`` by ``ISSUE_CLASSES``: the ``TABLE_LOAD`` count folded into 'other', as the SASS walk counts an
    LDC, the ``SHARED_TABLE_LOAD`` count into 'lds'."""
    result = {k: v for k, v in counts.items() if k not in _FOLDED}
    for key, folded in _FOLDED.items():
        if counts.get(key):
            result[folded] = result.get(folded, 0) + counts[key]
    return result


def queue_demand(counts: dict) -> float:
    """Bytes of the 'shared' resource the constant-table loads of ``counts`` take: ``LDC_QUEUE_SHARE``
    ``LDS.64`` slots per ``TABLE_LOAD``, ``SHARED_TABLE_QUEUE_SHARE`` per ``SHARED_TABLE_LOAD`` and
    ``SHARED_TABLE_PAIR_QUEUE_SHARE`` per ``SHARED_TABLE_PAIR``."""
    return (counts.get(TABLE_LOAD, 0) * LDC_QUEUE_SHARE
            + counts.get(SHARED_TABLE_LOAD, 0) * SHARED_TABLE_QUEUE_SHARE
            + counts.get(SHARED_TABLE_PAIR, 0) * SHARED_TABLE_PAIR_QUEUE_SHARE) * WARP_BYTES


def _decode_operation(op, latency: dict, span: dict, constant_stall: float | None,
                      expansions: dict = EXPANSIONS, in_registers=None, needed=None,
                      constant_class: str | None = "ldg", operands: bool = False,
                      beyond_copy: frozenset = frozenset(), literal_moves: int = 0) -> _DecodedOperation:
    """``op`` decoded once per preset: ``latency`` and ``span`` per opcode [cycles];
    ``constant_stall``: cycles per constant use (baseline), None to shuffle them
    or load them (``in_registers``: the constants the warp keeps in registers,
    None: all); ``expansions``: the machine instructions of each opcode in this
    style; ``needed``: the values read after it (codegen emits only the
    instructions that contribute to them or to a global store; None: all); ``constant_class``: what a
    constant load issues (``instruction_classes``); ``operands``: a constant at an index ptxas knows
    (``constant_class`` None) is a constant-bank operand, one read of the bank per use (sm_80), rather than
    a uniform register (``WarpCode.constant_loads``); ``beyond_copy``, ``literal_moves``: as
    ``instruction_classes``."""
    demand = dict.fromkeys(PARTITION_RESOURCES + ("shuffle", "shared"), 0.0)
    counts: dict[str, int] = {}
    rows, loads, stores, stall, operand_reads = [], [], 0, 0.0, 0
    instrs = op.instrs if needed is None else live_instructions(op.instrs, needed)
    for instr in instrs:
        expansion = expansions[instr.opcode]
        classes = instruction_classes(instr, expansion, in_registers, constant_stall, constant_class, beyond_copy,
                                      literal_moves)
        for name, n in classes.items():
            counts[name] = counts.get(name, 0) + n
        demand["issue"] += sum(classes.values())
        demand["fp64"] += expansion.fp64
        demand["mufu"] += expansion.mufu
        demand["shuffle"] += classes.get("shfl", 0)
        demand["shared"] += queue_demand(classes)
        if instr.opcode == "ldg":
            loads.append((instr.field, instr.index))
        elif instr.opcode == "stg":
            stores += 1
        if constant_stall is not None:
            stall += constant_stall * sum(isinstance(s, Const) for s in instr.srcs)
        elif operands and constant_class is None:
            operand_reads += sum(isinstance(s, Const) and in_registers is not None and s.value not in in_registers
                                 for s in instr.srcs)
        sources = tuple(s.name for s in instr.srcs if isinstance(s, Reg))
        rows.append((sources, latency[instr.opcode], instr.dst, expansion.issue, span[instr.opcode]))
    return _DecodedOperation(tuple(rows), tuple((k, v) for k, v in demand.items() if v), stall, tuple(loads),
                             stores, tuple(sorted(issue_classes(counts).items())),
                             counts.get(TABLE_LOAD, 0) + operand_reads)


ISSUE_CLASSES = ("fp64", "mufu", "lds", "sts", "ldg", "stg", "bar", "shfl", "branch", "other")
"""Classes of issued machine instructions, as ``autotune/sass.py`` counts them."""
INSTRUCTION_BYTES = 16  # one SASS instruction on sm_70 and later
PREFETCH_SLAB = {"other": 14, "branch": 3}
"""What ``--prefetch`` adds to each warp's slab (``CompileOptions.prefetch``): the test of the next slab, the
line's address and its clamps, one ``CCTL.E.PF1``.  Read off the sm_90 SASS of DME viscosity at 15 warps x 3
CTAs, whose code is otherwise the same with and without it (14 and 3 more a warp).  Where a kernel has fewer
threads than lines (1-3 warps of a large mechanism), a lane prefetches more than one and issues more."""
SLAB_OVERHEAD = {"other": 28, "branch": 1}
"""Per warp per slab, besides its units and the dispatch blocks it passes (``MASK_DISPATCH``,
``SWITCH_DISPATCH``): the slab loop, ``valid`` and ``point``, the addresses of global and shared accesses.
Measured (``python -m autotune.dispatch_fit``): the least-squares fit of the SASS count (sm_90) less the rest
of this model, each warp weighted by the inverse of its count (a relative error), on a constant, the masked
blocks and the switch blocks of the layout, over 181 warps of 22 kernels: every transport kernel of GRI-Mech
3.0, H2/O2, DME, n-heptane and the QSSA n-dodecane at the command's defaults (8 warps), the paper's four
and H2/O2's at 3-4 warps: 29.1 a slab, 4.3 a masked block and 7.2 a switch block, of them 0.7, 0.8 and 2.5
branches.  Until 2026-11-28 74 other and 1 branch a slab, 1 other and 1 branch a masked block, the slab's
fitted on the 7 warps of the H2/O2 viscosity and diffusion kernels at 3-4 warps alone (7-9 masked blocks): a
per-block cost charged to every slab, which put kernels of few masked blocks up to 30 % over their SASS
(H2/O2 conductivity at the defaults; DME conductivity 18 %).  105 while singe_exp's and singe_log's
constants were literals, which sm_90 set again every slab by UMOV pairs (now read from the constant bank,
templates/common.cuh.j2)."""
MASK_DISPATCH = {"other": 3, "branch": 1}
"""Per warp per masked block: the warp-bit test (LOP3/ISETP), the branch past it, and the register moves and
convergence barriers ptxas puts round some (BSSY/BSYNC).  Fitted with ``SLAB_OVERHEAD``."""
SWITCH_DISPATCH = {"other": 5, "branch": 2}
"""Per warp per ``switch (warp_id)`` block: ptxas's jump-table lookup and indirect branch, and the branch out.
Fitted with ``SLAB_OVERHEAD`` (2 other and 2 branches before, read off one kernel)."""

LOOP_TABLE_COLUMN = {"other": 3}
"""Per iteration of an emitted loop (``lowering.Loop``) and 'table' integer
column (``lowering.column_kind``), besides the load of the loop table
``loop_classes`` counts: the entry's address, and the shared slot's
address from the entry and the lane (IMAD, LEA, LEA)."""
LOOP_AFFINE_COLUMN = {"other": 1}
"""Per iteration and 'affine' integer column: its address step (one IMAD); none in a loop
unrolled completely (``lowering.FULL_UNROLL_ITERATIONS``: immediate offsets)."""
LOOP_TRIP = {"other": 3, "branch": 1}
"""Per trip of an emitted loop (``LOOP_UNROLL`` iterations): the counter's
increment and compare, the constant-table index step, the backward branch.
Read off the SASS (sm_90) of the H2/O2 viscosity kernel at 4 warps (the
loops of ``wilke_*``: 9 iterations, one varying constant, one 'table' and
one 'affine' column; per trip of two iterations 4 LDC, 13 integer
instructions and the branch); with them the 7 warps of the H2/O2 viscosity
and diffusion kernels are within 7.3 % of their SASS counts, and the
held-out DME viscosity at 15 warps within 8.4 % (tests/test_timing.py)."""
WARP_SWITCH_SLAB = {"other": 18, "branch": 2}
"""``SLAB_OVERHEAD`` of the kernels dispatched by one switch outside the slab
loop (``codegen.dispatch``: each warp dispatches once, so no per-slab
``SWITCH_DISPATCH``): no masked blocks, so none of their convergence
barriers and register moves, with shared accesses forwarded between barriers (``issued_shared``).  Measured
as ``SLAB_OVERHEAD`` (``autotune.dispatch_fit``, sm_90): 20.0 in all over 68 warps of the chemistry kernels
of the five mechanisms at the defaults and of H2/O2 (4 warps), DME (8) and n-heptane (16) at the paper's
settings, 1.8 of them branches.  34 other and 5 branches until 2026-11-28, the mean over the 4 warps of the
H2/O2 chemistry kernel alone (H2/O2's at 8 warps was 13.9 % over its SASS with it); 106 other while
singe_exp's and singe_log's constants were literals (UMOV pairs)."""


@dataclass(frozen=True)
class ArchCode:
    """What ptxas emits differently for one target from the same CUDA (``ARCH_CODE``), read off the SASS."""

    expansions: dict[str, Expansion]  # the warp-specialized kernels' (the baseline's: with the library's exp)
    slab_overhead: dict[str, int]  # ``SLAB_OVERHEAD``
    mask_dispatch: dict[str, int]  # ``MASK_DISPATCH``
    switch_dispatch: dict[str, int]  # ``SWITCH_DISPATCH``
    warp_switch_slab: dict[str, int]  # ``WARP_SWITCH_SLAB``
    uniform_constants: int | None
    """The warp-specialized constants whose table index ptxas knows (code that one warp runs: its switch
    case, or a block masked to it alone) cost no instruction where they are used; per slab, a warp loads
    each distinct one once (``ULDC.64``), except the first ``uniform_constants`` of them, which ptxas keeps in
    uniform registers across the slab loop (``WarpCode.constant_loads``).  None: none is loaded (the
    instructions read them from the constant bank)."""
    literal_moves: int = 0
    """Instructions the baseline issues per use of a literal double (a ``Const`` operand) that is no
    immediate (``is_immediate``): sm_90 builds it in a uniform register pair where it is used (two ``UMOV``:
    ``LITERAL_MOVES``), sm_80 reads it from the constant bank as an operand (none)."""

    def per_slab(self, dispatch: str, blocks: Iterable[str] = (), prefetch: bool = False) -> dict[str, int]:
        """What a warp issues per slab besides its units, by class: the slab's overhead for the kernel's
        ``dispatch`` ('switch': ``warp_switch_slab``, else ``slab_overhead``), ``PREFETCH_SLAB`` with
        ``prefetch``, and each dispatch block of the layout it passes (``blocks``: their kinds, 'mask' or
        'switch')."""
        counts = Counter(self.warp_switch_slab if dispatch == "switch" else self.slab_overhead)
        if prefetch:
            counts.update(PREFETCH_SLAB)
        for kind in blocks:
            counts.update({"mask": self.mask_dispatch, "switch": self.switch_dispatch}.get(kind, {}))
        return dict(counts)

    @property
    def baseline_literals_in_bank(self) -> bool:
        """The baseline reads its literals from the constant bank (and stalls on its misses): none are moved."""
        return not self.literal_moves

    @property
    def baseline_expansions(self) -> dict[str, Expansion]:
        return {**self.expansions, "exp": BASELINE_EXPANSIONS["exp"]}


UNIFORM_CONSTANTS = 26
"""Known constants ptxas keeps in uniform registers across the slab loop on sm_90 (of 63 uniform registers,
two per double): the distinct known constants a warp reads less its ULDC.64 per slab, in the SASS of DME
chemistry at the paper's setting (warps 0-3: 137 - 115, 108 - 84, 100 - 68, 103 - 76 with its LDC.64) and of
DME viscosity at 15 warps x 3 CTAs dispatched by a switch (63 - 37, 68 - 40, 69 - 42, 69 - 42): 22-32."""
SM80_SLAB_OVERHEAD = {"other": 31, "branch": 2}
SM80_MASK_DISPATCH = {"other": 3, "branch": 1}
SM80_SWITCH_DISPATCH = {"other": 4, "branch": 4}
SM80_WARP_SWITCH_SLAB = {"other": 36, "branch": 3}
"""``SLAB_OVERHEAD``, ``MASK_DISPATCH``, ``SWITCH_DISPATCH`` and ``WARP_SWITCH_SLAB`` on sm_80, fitted as on
sm_90 (``python -m autotune.dispatch_fit --arch sm_80``: the same kernels compiled for sm_80): 33.2 a slab,
3.5 a masked block and 7.7 a switch block (1.9, 0.6 and 3.7 of them branches), 38.9 a slab of the switch
(2.8).  sm_80 has no uniform moves (UMOV) of the constants the warps' code sets per slab: they are
constant-bank operands there.  Until 2026-11-28 61 and 54 other (and 1 and 5 branches) a slab, the mean over
the H2/O2 kernels at 3-4 warps alone, and sm_90's costs of the blocks."""
LITERAL_MOVES = 2
"""sm_90's ``ArchCode.literal_moves``, read off the SASS of the paper's four transport baselines (sm_90 SASS
walk, per point): DME viscosity issues 6,895 instructions, 1,938 of them ``UMOV``, where this model counted
4,939 without them and its 1,048 literals that are no immediate give 2,096 (7,035 with them); DME diffusion
20,561 (2,963 ``UMOV``) against 17,580 and 21,240; n-heptane viscosity 17,815 (5,530) against 11,775 and 17,695;
n-heptane diffusion 62,101 (8,566) against 52,164 and 63,084.  ptxas keeps a few in uniform registers where a
literal recurs, which this count does not.  sm_80's SASS of DME viscosity: 4,977 issued, no ``UMOV``."""
ARCH_CODE = {
    # sm_90: a constant at a known index is read from a uniform register (ULDC.64 once per slab), else LDC.64;
    # the baseline's literals are set in uniform registers where used
    "sm_90": ArchCode(EXPANSIONS, SLAB_OVERHEAD, MASK_DISPATCH, SWITCH_DISPATCH, WARP_SWITCH_SLAB,
                      UNIFORM_CONSTANTS, LITERAL_MOVES),
    # sm_80: a constant at a known index is a constant-bank operand of the instruction reading it (c[0x3][...]):
    # DME viscosity at 15 warps x 3 CTAs, warp 0 (its own masked block and switch case) issues no LDC or ULDC
    # where sm_90 issues 70 ULDC.64 per slab; the warps sharing code issue one LDC.64 per use on both
    "sm_80": ArchCode(EXPANSIONS, SM80_SLAB_OVERHEAD, SM80_MASK_DISPATCH, SM80_SWITCH_DISPATCH,
                      SM80_WARP_SWITCH_SLAB, None),
}


def arch_code(arch: str) -> ArchCode:
    """``ARCH_CODE`` of a target arch: sm_90a as sm_90; sm_35 (K20c), never measured, as sm_90."""
    return ARCH_CODE.get(arch[:5], ARCH_CODE["sm_90"])


@dataclass(frozen=True)
class WarpCode:
    """What codegen emits for one warp: its units (``singe.programs.lowering``),
    the constants it keeps in register stripes and its share of the overlay's
    dispatch and the slab loop per slab (machine instructions by
    ``ISSUE_CLASSES``).  ``rendered`` False for hand-built programs without a
    plan, which codegen never renders: every instruction of every operation
    counts, every constant is in registers, no dispatch."""

    units: tuple
    in_registers: frozenset | None
    dispatch: tuple
    rendered: bool = True
    rolled: bool = False  # the units' loops (``ComputeUnit.loops``) are emitted as loops
    table_class: str = "other"  # a constant-table load: LDC ('other'), LDG ('ldg') or LDS of its copy ('lds')

    forwarded: tuple = ()  # per unit, the (loads, stores) it issues (``issued_shared``); () when all do
    known: frozenset = frozenset()  # the units emitted for this warp alone: ptxas knows their constants' indices
    arch: ArchCode = ARCH_CODE["sm_90"]
    source_class: str = "other"  # the table itself, which code one warp runs alone reads: LDC ('other') or LDG
    paired_reads: tuple = ()  # (unit, pairs of its constants read with one LDS.128: OverlaidKernel.copied_pairs)
    beyond_copy: frozenset = frozenset()
    """The constants of this warp's row only past a partial copy (``codegen.partial_copy``): code several warps
    share reads them from the table itself (``LDC.64``), not from the copy."""
    loops_per_warp: bool = False
    """Its loops are emitted once for each warp that runs them, partly unrolled (``OverlaidKernel.loops_per_warp``)."""

    def paired_classes(self, k: int) -> dict:
        """What nvcc's pairing of unit ``k``'s constant reads saves (``OverlaidKernel.paired_reads``)."""
        pairs = dict(self.paired_reads).get(k, 0)
        return {SHARED_TABLE_LOAD: -2 * pairs, SHARED_TABLE_PAIR: pairs} if pairs else {}

    def constant_class(self, k: int) -> str | None:
        """What one use of a constant of unit ``k`` loaded where used issues: a table load, or at an index ptxas
        knows nothing (None: its loads are the warp's ``constant_loads``).  A unit one warp runs alone
        reads the table itself (``source_class``; ``codegen.overlay.read_prefix``)."""
        if k not in self.known:
            return self.table_class
        return None if self.source_class == "other" else self.source_class

    @functools.cached_property
    def constant_loads(self) -> int:
        """The ``ULDC.64`` this warp issues per slab for its constants at indices ptxas knows (``known``): one
        per distinct constant its units read there (ptxas loads it once and reuses the uniform register), less
        the ``ArchCode.uniform_constants`` it keeps across the slab loop.  The varying constants of a loop
        emitted as a loop are table loads of each iteration instead (``loop_classes``)."""
        if self.source_class != "other" or self.arch.uniform_constants is None:
            return 0
        distinct = set()
        for k in self.known:
            unit = self.units[k]
            if isinstance(unit, ComputeUnit):
                rolled = self._rolled_constants(unit)
                distinct |= {src.value for instr in live_instructions(unit.op.instrs, self.needed(unit))
                             for src in instr.srcs if isinstance(src, Const)
                             and src.value not in self.in_registers and src.value not in rolled}
        return max(0, len(distinct) - self.arch.uniform_constants)

    def _rolled_constants(self, unit: ComputeUnit) -> set:
        """The varying constants of ``unit``'s loops that are emitted as loops (read at a running index)."""
        loops = [loop for loop in unit.loops if not self.summary(unit, loop).unrolled] if self.rolled else []
        return {loop.iteration(unit.instructions, t)[q].srcs[o].value
                for loop in loops for q, o in varying_constants(unit, loop) for t in range(loop.count)}

    def summary(self, unit: ComputeUnit, loop) -> LoopSummary:
        """``loop`` of ``unit`` as this warp's code emits it (``lowering.loop_summary``)."""
        return loop_summary(unit, loop, self.loops_per_warp)

    def needed(self, unit) -> set | None:
        """The values of a compute unit read after it (codegen emits what they need), None: all."""
        return set(unit.keep) | set(unit.stores) if self.rendered else None

    def shared(self, k: int, unit) -> tuple:
        """(values loaded, values stored) through shared memory that unit ``k`` issues."""
        if self.forwarded:
            return self.forwarded[k]
        if isinstance(unit, ComputeUnit):
            return tuple(unit.loads), tuple(unit.stores)
        if isinstance(unit, LoadUnit):
            return (unit.value,), ()
        return ((), (unit.value,)) if isinstance(unit, StoreUnit) else ((), ())


def _shuffles(op, in_registers: frozenset) -> bool:
    """Does ``op`` read a constant the warp keeps in its register stripes (a shuffle)?"""
    return any(isinstance(s, Const) and s.value in in_registers for i in op.instrs for s in i.srcs)


def issued_shared(units, in_registers: frozenset, fences: frozenset = frozenset()) -> tuple:
    """Per unit, the (values loaded, values stored) it issues when ptxas keeps
    shared values in registers between barriers (the accesses are plain, the
    barriers clobber memory): a load of a slot loaded or stored since the
    last barrier or shuffle reads the register, and of two stores to a slot
    with no barrier or shuffle between, the first is dead.  A shuffle (an
    operation reading a constant of the warp's register stripes,
    ``in_registers``) orders memory as a barrier does.  Per warp of the switch
    layout (each warp's program straight-line code).  Measured (sm_90): DME
    chemistry at the paper's setting, its constants loaded from the constant
    bank, issued 460 LDS and 84 STS per slab on warp 7 where every access
    counted gave 939 and 325; the H2/O2 chemistry at 4 warps, its constants
    shuffled, issues nearly every access."""
    result = [[[], []] for _ in units]
    held: set = set()  # slots whose value is in a register since the last barrier
    stored: dict = {}  # slot -> (unit index, value) of its last store since the last barrier
    for k, unit in enumerate(units):
        if isinstance(unit, BarrierUnit) or k in fences:  # a fence (``programs.forwarding``) clobbers as a barrier
            held.clear()
            stored.clear()
        if isinstance(unit, BarrierUnit):
            continue
        loads = unit.loads.items() if isinstance(unit, ComputeUnit) else \
            [(unit.value, unit.slot)] if isinstance(unit, LoadUnit) else []
        stores = unit.stores.items() if isinstance(unit, ComputeUnit) else \
            [(unit.value, unit.slot)] if isinstance(unit, StoreUnit) else []
        for value, slot in loads:
            if slot not in held:
                result[k][0].append(value)
                held.add(slot)
        if isinstance(unit, ComputeUnit) and _shuffles(unit.op, in_registers):
            held.clear()
            stored.clear()
        for value, slot in stores:
            if slot in stored:
                earlier, old = stored[slot]
                result[earlier][1].remove(old)
            result[k][1].append(value)
            stored[slot] = (k, value)
            held.add(slot)
    return tuple((tuple(a), tuple(b)) for a, b in result)


def layout_of(programs: WarpPrograms, overlaid=None):
    """The layout codegen emits for ``programs`` (``overlaid`` where the caller has it, else ``lay_out``);
    None for hand-built programs without a plan, which codegen never renders."""
    if programs.plan is None:
        return None
    return overlaid or lay_out(programs)


def warp_code(programs: WarpPrograms, arch: str = "sm_90", overlaid=None) -> list[WarpCode]:
    """Each warp's code as codegen lowers it for ``arch``: the kernel body's layout
    (``overlaid``, default ``singe.codegen.lay_out``: the overlay, or one switch outside the slab loop) gives the
    per-warp constant tables (the first ``codegen.register_stripes`` stripes are
    in registers), the dispatch blocks, whether the units' loops are
    emitted as loops, where the constant tables live and which units one warp runs alone."""
    units = [tuple(program_units(p)) for p in programs.programs]
    overlaid = layout_of(programs, overlaid)
    if overlaid is None:
        return [WarpCode(u, None, (), rendered=False) for u in units]
    rolled = overlaid.loops > 0
    source_class = "other" if constants_in_bank(overlaid) else "ldg"
    table_class = "lds" if table_copy_bytes(overlaid) else source_class
    kept = min(overlaid.slots, WARP_SIZE * register_stripes(programs, overlaid))
    code = arch_code(arch)
    # every warp passes every dispatch block of the layout (an unswitched one: once, outside the slab loop)
    dispatch = code.per_slab(programs.dispatch, dispatch_blocks(overlaid), programs.prefetch)
    tables = overlaid.constants or [[] for _ in range(programs.warps)]
    forward = unswitched(overlaid)
    kept_values = [frozenset(tables[w][:kept]) for w in range(programs.warps)]
    copied = overlaid.copied_slots
    beyond = [frozenset(tables[w][copied:]) - frozenset(tables[w][:copied]) if 0 < copied < overlaid.slots
              else frozenset() for w in range(programs.warps)]
    fences = programs.plan.fences or (frozenset(),) * programs.warps
    return [WarpCode(units[w], kept_values[w], tuple(dispatch.items()), True, rolled, table_class,
                     issued_shared(units[w], kept_values[w], fences[w]) if forward else (),
                     frozenset(k for k in range(len(units[w])) if (w, k) not in overlaid.shared_positions), code,
                     source_class, tuple((k, n) for (warp, k) in overlaid.paired_reads
                                         if warp == w and (n := overlaid.copied_pairs(w, k))), beyond[w],
                     overlaid.loops_per_warp)
            for w in range(programs.warps)]


def dispatch_blocks(overlaid) -> tuple[str, ...]:
    """The kinds of the dispatch blocks a warp passes every slab in the layout ``overlaid``: none where one
    switch outside the slab loop dispatches (``unswitched``)."""
    return () if unswitched(overlaid) else tuple(block.kind for block in overlaid.blocks)


def static_instructions(programs: WarpPrograms, arch: str = "sm_90", overlaid=None) -> int:
    """Machine instructions of the kernel's code (what the instruction cache
    must hold): each warp's issued instructions per slab (``issued_per_warp``)
    with every rolled loop counted as codegen emits it, its body ``unroll``
    times and its trip overhead once (``loop_static_savings``), every unit
    the overlay emits once for several warps (``OverlaidKernel.sharing``)
    counted once, the slab loop and dispatch (``WarpCode.dispatch``, which
    every warp passes) and the code outside it (``STATIC_PROLOGUE``) once,
    each warp's loads of its known constants (``WarpCode.constant_loads``),
    and the library's slow-path call sites, which no slab issues
    (``SLOW_PATH_SITE`` per square root, division or reciprocal).  The divergent-path
    copies ptxas emits of the constants' shuffles (``BRA.DIV``) are not counted
    (tests/test_timing.py checks the kernels it names against nvdisasm).  ``overlaid``: the layout
    (default ``lay_out``)."""
    overlaid = layout_of(programs, overlaid)
    codes = warp_code(programs, arch, overlaid)
    latency = {op: 0.0 for op in EXPANSIONS}

    def static(k: int, code: WarpCode) -> int:
        unit = code.units[k]
        size = sum(_unit_classes(k, unit, code, latency).values()) + SLOW_PATH_SITE * slow_path_sites(unit, code)
        if code.rolled:
            size -= sum(loop_static_savings(unit, loop, code, k) for loop in getattr(unit, "loops", ()))
        return size

    total = max((sum(n for _, n in code.dispatch) for code in codes), default=0)  # one slab loop and dispatch
    total += STATIC_PROLOGUE if overlaid is not None else 0
    total += sum(code.constant_loads for code in codes)  # in each warp's own code
    if overlaid is not None and table_copy_bytes(overlaid):
        total += TABLE_COPY_SETUP + TABLE_COPY_STRIPE * overlaid.stripes
    total += sum(static(k, code) for code in codes for k in range(len(code.units)))
    if overlaid is not None:
        for warp, position, count in overlaid.sharing:
            total -= (count - 1) * static(position, codes[warp])
    return total


SLOW_PATH_SITE = 7
"""Static instructions of each call site of the CUDA library's slow path of a square root or a division, which no
slab issues (the fast path is taken): the ``CALL`` and the moves of its arguments and result around it.  sm_90
SASS, the instructions the walk never reaches: 56 at DME viscosity's 7 sites (15 warps x 3 CTAs), 66 at
n-heptane viscosity's 11 (13 x 3), 88 at H2/O2 viscosity's 11 (4 x 2), 26 at DME diffusion's 5 (10 x 3): 6.9
a site."""
SLOW_PATH_OPCODES = frozenset({"sqrt", "div", "rcp"})  # rcp is 1.0 / x: the division's


def slow_path_sites(unit, code: WarpCode) -> int:
    """The slow-path call sites of ``unit`` as emitted in ``code``: one per square root, division or reciprocal
    of its live instructions, those of a loop emitted as a loop once per copy of its body (``_copies``)."""
    if not isinstance(unit, ComputeUnit):
        return 0
    sites = sum(1 for instr in live_instructions(unit.op.instrs, code.needed(unit))
                if instr.opcode in SLOW_PATH_OPCODES)
    for loop in getattr(unit, "loops", ()) if code.rolled else ():
        summary = code.summary(unit, loop)
        if not summary.unrolled:
            body = loop.iteration(unit.instructions, 0)
            sites -= (summary.iterations - _copies(summary)) * sum(i.opcode in SLOW_PATH_OPCODES for i in body)
    return sites


STATIC_PROLOGUE = 41
"""Static instructions of a kernel's code outside the slab loop, besides the constant table's copy: before it
the parameters, the point count's slabs, the exit test, the warp's index and the constants ptxas keeps in
uniform registers across the loop (``ULDC.64``), the ``EXIT`` after it.  sm_90 SASS of the viscosity kernels
of the static check (tests/test_timing.py) and GRI-Mech's, H2/O2's and DME's at 8 warps: 23-56 before the slab
loop, 40 on average, and one after it."""
TABLE_COPY_STRIPE = 2
TABLE_COPY_SETUP = 4
"""The code of the constant table's copy into shared memory, before the slab loop: per stripe an ``LDC.64`` and an
``STS.64``, and the addresses and the ``WARPSYNC`` once (sm_90 SASS of n-heptane viscosity at 13 warps x 3 CTAs,
8 stripes)."""


def _copies(summary: LoopSummary) -> int:
    """Copies of a loop's body in the code: all its iterations unrolled completely, else ``unroll``
    and a remainder copy per iteration past the last whole trip (ptxas peels them; sm_90 SASS of the
    51-iteration Wilke loops of n-heptane viscosity at 13 warps)."""
    return summary.iterations if summary.unrolled else summary.unroll + summary.iterations % summary.unroll


def loop_static_savings(unit: ComputeUnit, loop: Loop, code: WarpCode, k: int) -> int:
    """Issued instructions of ``loop`` (of unit ``k`` of ``code``) beyond its emitted code: the iterations
    past the copies of its body (``_copies``: the body's instructions, a shared
    read per value read in place, a table load per varying constant, or per pair of them where the loop
    reads the table's copy in shared memory (``loop_classes``), the
    integer columns' address arithmetic) and the trips past the first."""
    summary = code.summary(unit, loop)
    if summary.unrolled:
        return 0
    body = loop.iteration(unit.instructions, 0)
    hoisted = set(invariant_loads(unit, loop))
    reads = {(q, o) for q, instr in enumerate(body) for o, src in enumerate(instr.srcs)
             if isinstance(src, Reg) and src.name in unit.loads and src.name not in unit.pinned_loads}
    shared = len({body[q].srcs[o].name for q, o in reads - hoisted})
    loads = iteration_table_reads(summary, _loop_table_key(code, k))
    per_iteration = (sum(code.arch.expansions[instr.opcode].issue for instr in body) + shared + loads
                     + summary.table_loads * (1 + sum(LOOP_TABLE_COLUMN.values()))
                     + summary.affine_indices * sum(LOOP_AFFINE_COLUMN.values()))
    return (summary.iterations - _copies(summary)) * per_iteration + (summary.trips - 1) * sum(LOOP_TRIP.values())


def instruction_fetch(static: int, preset: Preset, ctas: int) -> float:
    """Bytes of code one CTA fetches from L2 per slab: the code beyond the
    SM's instruction cache (``INSTRUCTION_BYTES`` per instruction) streams
    through it once per slab, shared by the SM's ``ctas`` resident CTAs
    (running the same code in phase)."""
    return max(0, static * INSTRUCTION_BYTES - preset.instruction_cache) / ctas


def fetch_cycles(preset: Preset, code_bytes: float, shared: bool) -> float:
    """Cycles per instruction a warp issues at most, running ``code_bytes`` of code that the warps share
    (``shared``: the overlay's and the baseline's) or that is its own (a switch case): ``Target.shared_fetch``
    beyond the instruction cache, ``Target.unshared_fetch`` by the size of its own code; 1.0 below the smallest
    size measured, or where the preset has no measurement (A100).  The probe ran 8 warps; taken per warp, so
    more warps fetch more (DME chemistry, 16 warps of their own code, issued 0.56 warp instructions per SM per
    cycle on the H200, above the probe's 0.453)."""
    if shared:
        return preset.shared_fetch if code_bytes > preset.instruction_cache else 1.0
    return max((cycles for size, cycles in preset.unshared_fetch if code_bytes >= size), default=1.0)


def issue_floor(steps: list, cycles_per_instruction: float) -> list:
    """``steps`` with every segment lasting at least its issued instructions times ``cycles_per_instruction``
    (the fetch's, ``fetch_cycles``, or the warp's pace by its stall counts, ``warp_paces``, whichever is more)."""
    if cycles_per_instruction <= 1.0:
        return steps
    return [dataclasses.replace(s, cycles=max(s.cycles, dict(s.demand).get("issue", 0.0) * cycles_per_instruction))
            if isinstance(s, Segment) else s for s in steps]


def issued(steps: list) -> float:
    """Warp instructions a warp's ``steps`` issue."""
    return sum(dict(s.demand).get("issue", 0.0) for s in steps if isinstance(s, Segment))


def issued_per_warp(programs: WarpPrograms, arch: str = "sm_90") -> list[dict]:
    """Machine instructions each warp issues per slab on ``arch``, by ``ISSUE_CLASSES``:
    what the timing model charges, from the units codegen emits (compare with
    ``autotune/sass.py``'s per-warp counts of the compiled kernel)."""
    if any(isinstance(item, TableLoop) for p in programs.programs for item in p.items):
        raise SingeInternalError("table-form programs: singe.timing_tables.issued_per_warp prices them")
    latency = {op: 0.0 for op in EXPANSIONS}
    result = []
    for code in warp_code(programs, arch):
        counts = dict.fromkeys(ISSUE_CLASSES, 0)
        counts["other"] += code.constant_loads
        for name, n in code.dispatch:
            counts[name] += n
        for k, unit in enumerate(code.units):
            for name, n in _unit_classes(k, unit, code, latency).items():
                counts[name] += n
        result.append(counts)
    return result


def _unit_classes(k: int, unit, code: WarpCode, latency: dict) -> dict:
    """Machine instructions of unit ``k`` of ``code`` by class (see ``issued_per_warp``)."""
    loads, stores = code.shared(k, unit)
    counts = {"lds": len(loads), "sts": len(stores)}
    if isinstance(unit, ComputeUnit):
        decoded = _decode_operation(unit.op, latency, latency, None, code.arch.expansions, code.in_registers,
                                    code.needed(unit), code.constant_class(k), beyond_copy=code.beyond_copy)
        for name, n in decoded.classes:  # its constant-table loads may be LDS beside the shared reads
            counts[name] = counts.get(name, 0) + n
        for name, n in issue_classes(code.paired_classes(k)).items():
            counts[name] = counts.get(name, 0) + n
        if code.rolled:
            for loop in unit.loops:
                for name, n in issue_classes(loop_classes(unit, loop, code, k)).items():
                    counts[name] = counts.get(name, 0) + n
    elif isinstance(unit, BarrierUnit):
        counts["bar"] = 1
    return counts


def _loop_table_key(code: WarpCode, k: int) -> str | None:
    """The key of the reads of unit ``k``'s constant table at a runtime index (a rolled loop's): the table
    itself in code one warp runs alone (``WarpCode.source_class``; in the constant bank, at a uniform index:
    ``UNIFORM_TABLE_LOAD``), else where the shared code reads it."""
    if k in code.known:
        return UNIFORM_TABLE_LOAD if code.source_class == "other" else _table_key(code.source_class)
    return _table_key(code.table_class)


def iteration_table_reads(summary: LoopSummary, key: str | None) -> int:
    """Loads of a loop iteration's varying constants counted under ``key``: one per constant, or one per pair
    of them from the table's copy in shared memory (``SHARED_TABLE_LOAD``, ``lowering.issued_constant_pairs``)."""
    return summary.constant_loads - (issued_constant_pairs(summary.constant_loads) if key == SHARED_TABLE_LOAD else 0)


def loop_classes(unit: ComputeUnit, loop: Loop, code: WarpCode, k: int) -> dict:
    """What emitting ``loop`` of ``unit`` changes in the unit's machine
    instructions by class, against its iterations written out: each varying
    constant (``lowering.varying_constants``) is a load of the constant table
    per iteration instead of a shuffle pair or a load, each 'table' integer
    column a load of the loop table per iteration; plus the loop's index
    arithmetic and control (``LOOP_TABLE_COLUMN``, ``LOOP_AFFINE_COLUMN``,
    ``LOOP_TRIP``; counts from ``loop_summary``).  Invariant shared reads are
    hoisted: the unit's one ``LDS`` per value read in place already counts
    them once; those a loop reads in place (``invariant_reads``) are read
    again in every iteration after the first.  ``k``: the unit's position in
    ``code`` (a loop unrolled completely in code one warp runs alone reads its
    constants at indices ptxas knows: ``WarpCode.constant_class``).  A load of a constant
    table in the constant bank (LDC) is counted under ``TABLE_LOAD`` (``issue_classes`` folds it into
    'other')."""
    summary = code.summary(unit, loop)
    loaded = _table_key(code.constant_class(k))
    table = _loop_table_key(code, k)
    ints = _table_key(code.source_class)  # singe_loop_ints
    # unrolled completely, a 'table' entry's slot address is the same every slab: ptxas hoists its load
    # and address out of the slab loop (sm_90 SASS of the H2/O2 viscosity at 4 warps)
    tables = 0 if summary.unrolled else summary.iterations * summary.table_loads
    counts = {ints: tables, "lds": (summary.iterations - 1) * summary.invariant_reads}
    per_iteration = table if not summary.unrolled else loaded
    if per_iteration is not None:
        pairs = summary.constant_loads - iteration_table_reads(summary, per_iteration)  # LDS.128, two constants each
        counts[per_iteration] = counts.get(per_iteration, 0) + summary.iterations * (summary.constant_loads - 2 * pairs)
        if pairs:
            counts[SHARED_TABLE_PAIR] = summary.iterations * pairs
    for position, operand in varying_constants(unit, loop):
        for t in range(loop.count):
            value = loop.iteration(unit.instructions, t)[position].srcs[operand].value
            kept = code.in_registers is None or value in code.in_registers
            name, n = ("shfl", SHUFFLES_PER_CONSTANT) if kept else (loaded, 1)
            if name is not None:
                counts[name] = counts.get(name, 0) - n
    affine = 0 if summary.unrolled else summary.iterations * summary.affine_indices  # immediate offsets
    for per, n in ((LOOP_TABLE_COLUMN, tables),
                   (LOOP_AFFINE_COLUMN, affine), (LOOP_TRIP, summary.trips)):
        for name, each in per.items():
            counts[name] = counts.get(name, 0) + each * n
    return counts


def warp_steps(programs: WarpPrograms, preset: Preset, overlaid=None) -> list[list]:
    """Each warp's program as Segments and Barriers (warp-specialized kernel),
    from the units codegen emits (``warp_code``; ``overlaid``: the layout, default ``lay_out``), each read
    of the constant bank stalled on the constant cache's misses (``bank_footprint``, ``constant_stall``)."""
    overlaid = layout_of(programs, overlaid)
    codes = warp_code(programs, preset.arch, overlaid)
    bank_stall = constant_stall(preset, bank_footprint(codes, overlaid))
    builder = _SegmentBuilder(preset, None, bank_stall)
    loaded: set = set()  # global rows already read from DRAM this slab (by an earlier warp)
    result = []
    for code in codes:
        steps: list = []
        for k, unit in enumerate(code.units):
            loads, stores = code.shared(k, unit)
            for value in loads:
                builder.shared(value, True)
            if isinstance(unit, ComputeUnit):
                builder.operation(unit.op, loaded, code.in_registers, code.needed(unit), code.constant_class(k),
                                  code.beyond_copy)
                builder.add(code.paired_classes(k))
                for loop in unit.loops if code.rolled else ():
                    builder.add(loop_classes(unit, loop, code, k))
            for value in stores:
                builder.shared(value, False)
            if isinstance(unit, BarrierUnit):
                segment = builder.flush(extra_issue=1)
                if segment:
                    steps.append(segment)
                steps.append(_barrier_step(unit.item, programs.threads))
        segment = builder.flush()
        if segment:
            steps.append(segment)
        result.append(spread_issue(steps, sum(n for _, n in code.dispatch) + code.constant_loads, {},
                                   bank_stall * code.constant_loads))
    return result


def constant_stall(preset: Preset, footprint: int) -> float:
    """Cycles a read of the constant bank stalls on average: ``constant_miss`` times the miss rate, the part
    of the ``footprint`` bytes read from the bank that does not fit the constant cache,
    ``max(0, 1 - cache / footprint)``.  The same for both styles: a baseline ``Const`` operand
    (``baseline_steps``), and a warp-specialized warp's reads (``bank_footprint``)."""
    miss = max(0.0, 1.0 - preset.constant_cache / footprint) if footprint else 0.0
    return miss * preset.latency.constant_miss


def bank_footprint(codes: list, overlaid) -> int:
    """Bytes of the constant bank the warp-specialized kernel reads per slab: per warp, 8 B per distinct
    constant of its row it reads from the bank (an ``LDC.64`` at a warp-dependent index, a ``ULDC.64`` or an
    operand at an index ptxas knows; not those of its register stripes, nor those it reads from the
    table's copy in shared memory, but those past a partial copy), and the overlay's integer tables; 0
    where the tables are global (``LDG``, ``constants_in_bank``) or there is no layout (hand-built
    programs).  Evidence that the warp-specialized kernels wait on these reads: of
    DME viscosity's short-scoreboard samples (15 warps x 3 CTAs, H200, docs/measurements/2026-11-27-h200,
    ``python -m autotune.ncu_source``), 94 % are of instructions waiting for an ``LDC.64`` result issued
    7 instructions earlier on average, 5 % for an ``LDS``, though the kernel issues as many of each; and
    ULDC waits on constant-cache misses are 12 % of DME chemistry's samples.  By this count DME viscosity
    reads 7.9 KB, within the cache: its waits are an ``LDC.64``'s latency on a hit, which the model does not
    charge (not measured: the load probe's latency chains measure it)."""
    if overlaid is None or not constants_in_bank(overlaid):  # hand-built programs, or global tables
        return 0
    constants = 0
    for code in codes:
        read: set = set()
        for k, unit in enumerate(code.units):
            if not isinstance(unit, ComputeUnit):
                continue
            in_bank = code.constant_class(k) in ("other", None)
            if in_bank or code.beyond_copy:
                read |= {src.value for instr in live_instructions(unit.op.instrs, code.needed(unit))
                         for src in instr.srcs if isinstance(src, Const) and src.value not in code.in_registers
                         and (in_bank or src.value in code.beyond_copy)}
        constants += len(read)
    return 8 * constants + int_table_bytes(overlaid)


def misses_the_constant_cache(programs: WarpPrograms, target: Target, overlaid=None) -> bool:
    """Would the warps' reads of the constant bank, laid out as ``overlaid`` (default ``lay_out``), miss the
    constant cache of ``target``: is their footprint (``bank_footprint``) more than ``Target.constant_cache``,
    where ``constant_stall`` charges them a miss rate?"""
    overlaid = layout_of(programs, overlaid)
    return bank_footprint(warp_code(programs, target.arch, overlaid), overlaid) > target.constant_cache


def _barrier_step(item, threads: int) -> Barrier:
    if isinstance(item, FullSync):
        return Barrier(FULL_BARRIER_ID, threads, True)
    if isinstance(item, (Arrive, Sync)):
        return Barrier(item.barrier_id, item.threads, isinstance(item, Sync))
    raise SingeInternalError(f"timing model: unknown warp-program item {item!r}")


def spread_issue(steps: list, instructions: float, demand: dict, stall: float = 0.0) -> list:
    """A warp's steps with ``instructions`` more issued, ``demand`` more of
    other resources and ``stall`` more cycles, spread over its segments in proportion to their issued
    instructions."""
    if not instructions and not demand and not stall:
        return steps
    total = issued(steps) or 1.0
    result = []
    for step in steps:
        if isinstance(step, Segment):
            share = dict(step.demand).get("issue", 0.0) / total
            more = dict(step.demand)
            more["issue"] = more.get("issue", 0.0) + instructions * share
            for resource, amount in demand.items():
                more[resource] = more.get(resource, 0.0) + amount * share
            step = Segment(max(step.cycles + stall * share, more["issue"]), tuple(more.items()))
        result.append(step)
    return result


@dataclass(frozen=True)
class Spills:
    """Local-memory traffic of spilled registers: ``traffic`` bytes per thread
    per slab (stores and loads), ``footprint`` bytes per thread."""

    traffic: float = 0.0
    footprint: float = 0.0

    def resource(self, preset: Preset, threads_per_sm: int) -> str:
        """'l2' when every resident thread's spilled values fit the L2 cache, else 'dram'."""
        return "l2" if self.footprint * threads_per_sm * preset.sms <= preset.l2_bytes else "dram"


def add_spills(steps: list, spills: Spills, resource: str) -> list:
    """A warp's steps with the spill traffic spread over its segments in
    proportion to their issued instructions (one 8-byte access per thread
    per spill instruction, 256 B per warp on ``resource``)."""
    if not spills.traffic:
        return steps
    return spread_issue(steps, spills.traffic / 8.0, {resource: spills.traffic * WARP_SIZE})


# --------------------------------------------------------------------------- the event-driven CTA

@dataclass(frozen=True)
class CtaTiming:
    """One CTA's modeled execution: ``cycles`` per slab [cycles] in steady state,
    ``utilization`` of each SM resource (fraction, all resident CTAs together),
    ``barrier_wait`` (fraction of warp-cycles spent waiting at bar.sync)."""

    cycles: float
    utilization: dict
    barrier_wait: float
    events: int


class _WarpState:
    __slots__ = ("index", "steps", "pc", "slab", "current", "remaining", "waiting", "done", "resources")

    def __init__(self, index: int, steps: list, resources: dict):
        self.index = index
        self.steps = steps
        self.pc = 0
        self.slab = 0
        self.current: Segment | None = None
        self.remaining = 0.0
        self.waiting = False
        self.done = False
        self.resources = resources  # logical resource -> capacity index of this warp


def _capacities(preset: Preset, warps: int, ctas: int) -> tuple[list[str], list[float], list[dict]]:
    """The logical resource of each capacity index (RESOURCES, one index per
    partition for the partition resources), this CTA's capacity of each
    [units/cycle], and each warp's resource -> index map (partition resources
    are those of its scheduler)."""
    schedulers = preset.schedulers
    names, capacity = [], []
    on_sm = [0] * schedulers  # warps of all resident CTAs per partition
    for slot in range(warps * ctas):
        on_sm[slot % schedulers] += 1
    mine = [0] * schedulers
    for w in range(warps):
        mine[w % schedulers] += 1
    for resource in PARTITION_RESOURCES:
        for p in range(schedulers):
            names.append(resource)
            share = mine[p] / on_sm[p] if on_sm[p] else 0.0
            capacity.append(preset.capacity(resource) / schedulers * share)
    for resource in SHARED_RESOURCES:
        names.append(resource)
        capacity.append(preset.capacity(resource) / ctas)
    first = {r: PARTITION_RESOURCES.index(r) * schedulers for r in PARTITION_RESOURCES}
    shared = {r: len(PARTITION_RESOURCES) * schedulers + k for k, r in enumerate(SHARED_RESOURCES)}
    maps = [{r: first[r] + w % schedulers for r in PARTITION_RESOURCES} | shared for w in range(warps)]
    return names, capacity, maps


def fair_rates(work: list[tuple[float, list[tuple[int, float]]]], capacity: list[float]) -> list[float]:
    """Equal-slowdown progressive filling.

    ``work``: per running warp (solo cycles of its step, [(resource index,
    demand)]); returns each warp's fraction theta of its solo speed [0, 1]:
    every warp is slowed by the same factor until a resource it uses
    saturates, then frozen there while the others go on.
    """
    theta = [1.0] * len(work)
    left = list(capacity)
    active = [(i, [(q, a / cycles) for q, a in demand]) for i, (cycles, demand) in enumerate(work)]
    while active:
        load: dict[int, float] = {}
        for _, rates in active:
            for q, r in rates:
                load[q] = load.get(q, 0.0) + r
        best, binding = 1.0, None
        for q, total in load.items():
            if total > 0.0:
                t = max(left[q], 0.0) / total
                if t < best:
                    best, binding = t, q
        if binding is None:
            break
        still = []
        for i, rates in active:
            if any(q == binding for q, _ in rates):
                theta[i] = best
                for q, r in rates:
                    left[q] -= best * r
            else:
                still.append((i, rates))
        active = still
    return theta


class _Cta:
    """The event-driven run of one CTA's warps over ``slabs`` slabs."""

    def __init__(self, steps: list[list], preset: Preset, ctas: int, slabs: int):
        names, capacity, maps = _capacities(preset, len(steps), ctas)
        self.names, self.capacity = names, capacity
        self.warps = [_WarpState(w, s, maps[w]) for w, s in enumerate(steps)]
        self.slabs = slabs
        self.barrier_latency = preset.latency.barrier
        self.barriers = NamedBarriers()
        self.time = 0.0
        self.busy = [0.0] * len(capacity)
        self.waited = 0.0
        self.slab_end = [0.0] * slabs
        self.events = 0
        for warp in self.warps:
            self._advance(warp)

    def _advance(self, warp: _WarpState) -> None:
        """Move ``warp`` to its next segment, processing barriers on the way."""
        while not warp.done and not warp.waiting:
            if warp.pc == len(warp.steps):
                self.slab_end[warp.slab] = max(self.slab_end[warp.slab], self.time)
                warp.slab += 1
                warp.pc = 0
                if warp.slab == self.slabs:
                    warp.done = True
                    return
                continue
            step = warp.steps[warp.pc]
            warp.pc += 1
            if isinstance(step, Segment):
                warp.current, warp.remaining = step, 1.0
                return
            self._barrier(warp, step)

    def _barrier(self, warp: _WarpState, step: Barrier) -> None:
        generation = self.barriers.generation(step.barrier_id, step.threads)
        if generation.expected != step.threads:
            raise SingeInternalError(f"timing model: barrier {step.barrier_id} used with {step.threads} threads "
                                     f"while its generation expects {generation.expected}")
        if step.blocking:
            warp.waiting = True
        released = self.barriers.count(step.barrier_id, (warp.index, warp.pc), warp if step.blocking else None)
        if released is not None:
            for waiter in released:
                waiter.waiting = False
                waiter.current, waiter.remaining = Segment(max(self.barrier_latency, 1e-6), ()), 1.0

    def run(self) -> None:
        while True:
            running = [w for w in self.warps if not w.done and not w.waiting]
            if not running:
                if all(w.done for w in self.warps):
                    return
                stuck = [f"warp {w.index} (slab {w.slab}, step {w.pc - 1})" for w in self.warps if w.waiting]
                raise SingeInternalError(f"timing model: deadlock, waiting forever: {', '.join(stuck)}")
            self._step(running)

    def _step(self, running: list[_WarpState]) -> None:
        work = [(w.current.cycles, [(w.resources[r], a) for r, a in w.current.demand]) for w in running]
        theta = fair_rates(work, self.capacity)
        rates = [max(t, 1e-9) / w.current.cycles for t, w in zip(theta, running)]  # rounding never stops a warp
        dt = min(w.remaining / r for w, r in zip(running, rates))
        waiting = sum(1 for w in self.warps if w.waiting)
        self.waited += waiting * dt
        self.time += dt
        self.events += 1
        finished = []
        for warp, rate, (_, demand) in zip(running, rates, work):
            for q, a in demand:
                self.busy[q] += a * rate * dt
            warp.remaining -= rate * dt
            if warp.remaining <= 1e-9:
                finished.append(warp)
        for warp in finished:
            warp.current = None
            self._advance(warp)


def cta_timing(steps: list[list], preset: Preset, ctas: int = 1, slabs: int = 3) -> CtaTiming:
    """Model one CTA of ``len(steps)`` warps sharing an SM of ``preset`` with
    ``ctas - 1`` identical CTAs, over ``slabs`` slabs."""
    if ctas < 1:
        raise SingeInternalError("cta_timing needs at least one resident CTA")
    run = _Cta(steps, preset, ctas, slabs)
    run.run()
    cycles = (run.slab_end[-1] - run.slab_end[0]) / (slabs - 1) if slabs > 1 else run.slab_end[0]
    total = run.time or 1.0
    utilization = {}
    for resource in RESOURCES:
        used = sum(b for b, n in zip(run.busy, run.names) if n == resource)
        utilization[resource] = used * ctas / (preset.capacity(resource) * total)
    return CtaTiming(cycles, utilization, run.waited / (len(steps) * total), run.events)


# --------------------------------------------------------------------------- results

@dataclass(frozen=True)
class TimingResult:
    """Modeled performance of one kernel on one preset.

    ``cycles_per_slab``: cycles for one CTA to do ``points_per_slab`` points
    while sharing its SM with the other resident CTAs; ``points_per_second``
    for the whole GPU; ``roofline``: the FP64 bound on points per second from
    ``flops_per_point``; ``spill_bytes`` per thread per slab.
    """

    kernel: str
    style: str
    preset: str
    occupancy: Occupancy
    cycles_per_slab: float
    points_per_slab: int
    points_per_second: float
    flops_per_point: int
    roofline: float
    utilization: dict = field(compare=False, hash=False)
    barrier_wait: float = 0.0
    spill_bytes: float = 0.0
    registers_from: str = "estimate"

    @property
    def gflops(self) -> float:
        """Achieved FP64 rate [GFLOP/s] by the graph's FLOP count."""
        return self.points_per_second * self.flops_per_point / 1e9

    @property
    def fraction_of_roofline(self) -> float:
        return self.points_per_second / self.roofline if self.roofline else 0.0

    @property
    def bottleneck(self) -> str:
        """What limits the kernel: the busiest SM resource when it is at least
        ``SATURATED`` busy, else barrier waits (when warps wait a quarter of
        their time or more) or latency, with the busiest resource beside."""
        if not self.occupancy.ctas:
            return f"does not fit ({self.occupancy.limiter})"
        name = max(self.utilization, key=self.utilization.get)
        busiest = f"{name} {self.utilization[name]:.0%}"
        if self.utilization[name] >= SATURATED:
            return busiest
        if self.barrier_wait >= 0.25:
            return f"barrier waits {self.barrier_wait:.0%} ({busiest})"
        return f"latency ({busiest})"

    def as_dict(self) -> dict:
        return {"kernel": self.kernel, "style": self.style, "preset": self.preset,
                "points_per_second": self.points_per_second, "cycles_per_slab": self.cycles_per_slab,
                "ctas_per_sm": self.occupancy.ctas, "warps_per_sm": self.occupancy.warps,
                "registers": self.occupancy.registers, "registers_from": self.registers_from,
                "spill_bytes": self.spill_bytes, "occupancy_limit": self.occupancy.limiter,
                "gflops": self.gflops, "roofline": self.roofline, "barrier_wait": self.barrier_wait,
                "utilization": dict(self.utilization), "bottleneck": self.bottleneck}

    def __str__(self) -> str:
        return (f"{self.kernel} {self.style} on {self.preset}: {self.points_per_second / 1e6:.2f} Mpoints/s "
                f"({self.gflops:.0f} GFLOP/s, {self.fraction_of_roofline:.0%} of the FP64 roofline "
                f"{self.roofline / 1e6:.2f} Mpoints/s); {self.cycles_per_slab:.0f} cycles per "
                f"{self.points_per_slab}-point slab; {self.occupancy}; bottleneck {self.bottleneck}; "
                f"barrier wait {self.barrier_wait:.0%}")


def fp64_roofline(preset: Preset, flops_per_point: float) -> float:
    """Points per second if the GPU ran FP64 FMAs at peak and nothing else [points/s]."""
    return preset.peak_flops / flops_per_point if flops_per_point else math.inf


def _registers(estimate: int, spilled: int, ptxas) -> tuple[int, Spills, str]:
    """(registers per thread, spills, source): ptxas's numbers, or the
    estimate with ``spilled`` registers per thread spilled (a 4-byte store and
    load per spilled register per slab)."""
    if ptxas is not None:
        get = ptxas.get if isinstance(ptxas, dict) else lambda key, default=0: getattr(ptxas, key, default)
        stores, loads = float(get("spill_stores", 0) or 0), float(get("spill_loads", 0) or 0)
        return int(get("registers", 0)), Spills(stores + loads, stores), "ptxas"
    return estimate, Spills(8.0 * spilled, 4.0 * spilled), "estimate"


def register_need(programs: WarpPrograms) -> int:
    """Registers per thread the warp-specialized kernel asks of ptxas (the register plan's)."""
    return programs.plan.need


def _plan_for(programs: WarpPrograms, budget: int) -> RegisterPlan:
    """The programs' register plan under ``budget`` (another preset's register file may differ).
    The plan's per-warpgroup setmaxnreg counts hold only under the launch budget they were chosen
    in (their sum is that budget's registers): under another, none.  With them the CTA holds the
    launch budget (``RegisterPlan.predicted``), which is what occupancy counts."""
    if programs.plan.budget == budget:
        return programs.plan
    return dataclasses.replace(programs.plan, budget=budget, warp_budgets=())


def _result(kernel, style, preset, occ, timing, points_per_slab, flops, spill, source) -> TimingResult:
    if occ.ctas and timing is not None:
        rate = points_per_slab * occ.ctas * preset.sms * preset.clock_hz / timing.cycles
        cycles, utilization, wait = timing.cycles, timing.utilization, timing.barrier_wait
    else:
        rate, cycles, utilization, wait = 0.0, math.inf, dict.fromkeys(RESOURCES, 0.0), 0.0
    return TimingResult(kernel, style, preset.name, occ, cycles, points_per_slab, rate, flops,
                        fp64_roofline(preset, flops), utilization, wait, spill, source)


def warp_paces(pace, warps: int) -> list[float]:
    """Each warp's least cycles per issued instruction by its SASS stall counts (``pace``: one per warp, one
    for all, or None: 1.0, no floor beyond one issue a cycle)."""
    if pace is None:
        return [1.0] * warps
    if isinstance(pace, (int, float)):
        return [float(pace)] * warps
    if len(pace) != warps:
        raise SingeInternalError(f"{len(pace)} paces for {warps} warps")
    return [float(p) for p in pace]


def model(compiled, preset: "str | Preset | None" = None, ptxas=None, slabs: int = 3, pace=None) -> TimingResult:
    """Modeled throughput of the warp-specialized kernel of ``compiled``.

    ``preset``: a preset or its name; default the one of ``compiled.options.arch``.
    ``ptxas``: the kernel's ``PtxasEntry`` (or a dict with registers,
    spill_stores, spill_loads) when nvcc was run.  ``pace``: each warp's
    least cycles per issued instruction by the stall counts of its SASS
    (``warp_paces``; ``autotune.bench.kernel_inputs``), None for no such
    floor.  A table-form kernel (``singe.compiler.TableKernel``) is modeled
    by ``singe.timing_tables.model``.
    """
    if compiled.form == "tables":
        return compiled.timing_model(preset, ptxas, slabs, pace)
    preset = preset_for(preset or compiled.options.arch)
    programs = compiled.programs
    options = compiled.options
    overlaid = lay_out(programs)
    plan = emitted_plan(_plan_for(programs, preset.register_budget(programs.threads, options.ctas_per_sm)), overlaid)
    registers, spills, source = _registers(plan.predicted, plan.spilled, ptxas)
    ids = len({p.barrier_id for p in programs.sync_points} | {FULL_BARRIER_ID})
    occ = occupancy(preset, programs.warps, registers, kernel_shared_bytes(programs, overlaid), ids)
    timing = None
    if occ.ctas:
        where = spills.resource(preset, occ.warps * WARP_SIZE)
        steps = [add_spills(s, spills, where) for s in warp_steps(programs, preset, overlaid)]
        static = static_instructions(programs, preset.arch, overlaid)
        fetch = instruction_fetch(static, preset, occ.ctas)
        steps = [spread_issue(s, 0.0, {"l2": fetch / len(steps)}) for s in steps]
        if programs.dispatch == "switch":  # each warp runs its own case: its own code, straight-line
            fetch_cpi = [fetch_cycles(preset, issued(s) * INSTRUCTION_BYTES, False) for s in steps]
        else:
            fetch_cpi = [fetch_cycles(preset, static * INSTRUCTION_BYTES, True)] * len(steps)
        steps = [issue_floor(s, max(f, p)) for s, f, p in zip(steps, fetch_cpi, warp_paces(pace, len(steps)))]
        timing = cta_timing(steps, preset, occ.ctas, slabs)
    return _result(compiled.kernel, "warp-specialized", preset, occ, timing, WARP_SIZE, compiled.graph.flops,
                   spills.traffic, source)


# --------------------------------------------------------------------------- the baseline

def baseline_register_estimate(graph: DataflowGraph) -> int:
    """Registers per thread of the data-parallel kernel: peak live doubles over
    the topological order codegen emits (2 registers each, temporaries of the
    running operation included), plus ``REGISTER_OVERHEAD`` and ``REGISTER_MARGIN``.  A reduction's
    terms are folded into its running sum as they are made (1 live value)."""
    order = graph.topological_order()
    position = {op.name: i for i, op in enumerate(order)}
    producers = graph.producers()
    reductions = {op.name for op in order if op.reduction}
    born = [0] * (len(order) + 1)
    for value, users in graph.consumers().items():
        start = position[producers[value]]
        folded = [u for u in users if u in reductions]
        last = max((position[u] for u in users if u not in reductions), default=start)
        if folded and len(folded) == len(users):
            continue  # lives only until it is added into the running sum
        born[start + 1] += 1
        born[last] -= 1
    for op in order:
        if op.reduction and op.inputs:
            first = min(position[producers[v]] for v in op.inputs)
            born[first + 1] += 1
            born[position[op.name]] -= 1
    peak, live = 0, 0
    for i, op in enumerate(order):
        live += born[i]
        peak = max(peak, live + len(op.outputs) + op.temporaries)
    return REGISTER_OVERHEAD + 2 * peak + REGISTER_MARGIN


def baseline_steps(graph: DataflowGraph, preset: Preset) -> list:
    """One warp of the baseline: the whole graph as one segment (see the module docstring).  Its literals
    stall on the constant cache's misses where they are constant-bank operands (sm_80); where they are moved
    into uniform registers from the instruction (sm_90, ``ArchCode.literal_moves``), they are fetched with
    the code and never read the bank (n-heptane viscosity's baseline, sm_90: no read of bank 2, where sm_80
    keeps them, and 5,514 ``UMOV`` in its SASS; bank 3 holds only singe_log's 9 constants, one ``ULDC.64``
    each)."""
    constants = {c for op in graph.operations for c in op.constants}
    in_bank = arch_code(preset.arch).baseline_literals_in_bank
    builder = _SegmentBuilder(preset, constant_stall(preset, 8 * len(constants)) if in_bank else 0.0)
    for op in graph.topological_order():
        builder.operation(op, set())  # every load of every point from DRAM
    return [builder.flush()]


def model_baseline(compiled, preset: "str | Preset | None" = None, ptxas=None, slabs: int = 3,
                   pace: float | None = None) -> TimingResult:
    """Modeled throughput of the data-parallel kernel of ``compiled.graph``
    (``BASELINE_THREADS`` threads per CTA, one point each); ``ptxas``: its
    ``PtxasEntry`` or dict, else registers are estimated; ``pace``: its warp's
    cycles per instruction by its stall counts, as for ``model``."""
    preset = preset_for(preset or compiled.options.arch)
    graph = compiled.graph
    warps = BASELINE_THREADS // WARP_SIZE
    budget = preset.max_registers_per_thread
    need = baseline_register_estimate(graph)
    registers, spills, source = _registers(min(need, budget), max(0, need - REGISTER_MARGIN - budget), ptxas)
    occ = occupancy(preset, warps, registers)
    timing = None
    if occ.ctas:
        steps = add_spills(baseline_steps(graph, preset), spills, spills.resource(preset, occ.warps * WARP_SIZE))
        fetch_cpi = fetch_cycles(preset, issued(steps) * INSTRUCTION_BYTES, True)  # straight-line
        steps = issue_floor(steps, max(fetch_cpi, pace or 1.0))
        timing = cta_timing([steps] * warps, preset, occ.ctas, slabs)
    return _result(compiled.kernel, "baseline", preset, occ, timing, BASELINE_THREADS, graph.flops,
                   spills.traffic, source)


def speedup(compiled, preset: "str | Preset | None" = None, ptxas=None, baseline_ptxas=None) -> float:
    """Modeled warp-specialized over baseline throughput on ``preset`` (the baseline: ``singe.baseline_kernel``)."""
    base = model_baseline(baseline_kernel(compiled), preset, baseline_ptxas).points_per_second
    return model(compiled, preset, ptxas).points_per_second / base if base else math.inf


__all__ = ["A100", "BASELINE_EXPANSIONS", "EXPANSIONS", "H100", "K20C", "PRESETS", "PRESET_OF_ARCH", "Barrier", "CtaTiming", "Occupancy",
           "Preset", "Segment", "Spills", "TimingResult", "add_spills", "baseline_register_estimate",
           "baseline_steps", "cta_timing", "fair_rates", "fp64_roofline", "model", "model_baseline", "occupancy",
           "preset_for", "register_need", "speedup", "warp_steps"]
