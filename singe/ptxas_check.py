"""ptxas settles the CTAs per SM where the register plan's floor was not checked against it.

The compiler chooses the CTAs per SM from the register plan (``singe.compiler.choose_ctas_per_sm``),
whose floor was checked against ptxas for the code the defaults and the paper's settings produce.
Beyond that (``RegisterPlan.unchecked``: diffusion turns wider than ``TURN_COLUMNS_CHECKED`` columns
per warp, at 2-7 warps for 50 species; switch-dispatched chemistry below ``SWITCH_WARPS_CHECKED`` warps)
ptxas's schedule holds more than the floor counts and spilled at the chosen count (GRI-Mech diffusion at
2-7 warps, sm_90: 8-288 B of spill stores; its chemistry at 3-5 warps 24-276 B).  There, when
nvcc is installed, ``settle_ctas`` compiles the kernel with ptxas at the chosen count and, while
ptxas spills, at one CTA per SM fewer (the same code with more registers, then the kernel compiled
anew at that count: ``CODES``), and takes the first that does not spill; the plan
records the arch (``RegisterPlan.confirmed``) and the command's warning gives way to the trials.
No spills is not always faster: the report names the plan's count, which ran faster on an H200 in two of
the three kernels timed (``SPILLS_AGAINST_OCCUPANCY``).

The same where the loops run once per warp (``--constant-table bank``, ``WarpPrograms.loops_per_warp``).
Where the plan's estimate says registers *may* spill (``RegisterPlan.uncertain``: within the estimate's error of
the budget), or the CTAs per SM were given (``--ctas-per-sm``) to a plan that would be settled, ptxas checks the
kernel at its count: without spills the plan is confirmed and the warning gives way; with spills, a count the
compiler chose is settled as above, and a given one is kept with its warning, which names the setting that
avoids them.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from singe.codegen.nvcc import PtxasEntry, compile_cuda, find_nvcc, ptxas_entry
from singe.derived.rates import guards_products


SPILLS_AGAINST_OCCUPANCY = "faster than the count taken in 2 of 3 kernels timed on an H200"
"""What the spill-free count costs, measured (docs/measurements/2026-11-27-h200, warp-specialized, sm_90):
GRI-Mech diffusion at 4 warps ran at 110.8 Mpoints/s at the plan's 7 CTAs per SM (164 B of spill stores) and
87.9 at the 4 settled; GRI-Mech chemistry at 3 warps 216.1 at 4 CTAs (276 B) and 131.5 at 2; n-heptane
diffusion at 3 warps 120.3 at 8 CTAs (196 B) and 128.7 at 5.  The report names the plan's count."""


@dataclass(frozen=True)
class Trial:
    """ptxas's report of the kernel at ``ctas`` CTAs per SM."""

    ctas: int
    code: str  # which code (``CODES``)
    entry: PtxasEntry

    @property
    def spills(self) -> bool:
        return bool(self.entry.spill_stores or self.entry.spill_loads)

    def __str__(self) -> str:
        spills = f"{self.entry.spill_stores} B of spill stores" if self.spills else "no spills"
        return (f"{self.ctas} CTA{'s' if self.ctas != 1 else ''} per SM ({self.code}): {self.entry.registers} "
                f"registers, {spills}")


@dataclass(frozen=True)
class Settled:
    """The kernel at the CTAs per SM ptxas settled (the chosen one when it spills at every count), and the
    trials in the order they ran."""

    compiled: object  # singe.compiler.CompiledKernel
    trials: tuple[Trial, ...]

    @property
    def given(self) -> bool:
        """The CTAs per SM were given: checked at that count only."""
        return bool(self.trials) and self.trials[0].code == "given"

    @property
    def spill_free(self) -> bool:
        return bool(self.trials) and not self.trials[-1].spills

    def report(self) -> str:
        """What ptxas settled, in a line."""
        arch, first, last = self.compiled.options.arch, self.trials[0].ctas, self.trials[-1].ctas
        if self.given:
            entry = self.trials[0].entry
            return (f"ptxas ({arch}): no spills at the {first} CTAs per SM given ({entry.registers} registers)"
                    if self.spill_free else f"warning: ptxas ({arch}) spills {entry.spill_stores} B of spill stores "
                    f"at the {first} CTAs per SM given ({entry.registers} registers); without --ctas-per-sm, ptxas "
                    f"takes the most CTAs per SM that do not spill")
        if not self.spill_free:
            counts = "at its only count, 1 CTA per SM" if first == 1 else \
                f"at every count from {first} CTAs per SM to 1; kept {first}"
            return f"warning: ptxas ({arch}) spills {counts}"
        registers = self.trials[-1].entry.registers
        if len(self.trials) == 1:
            return f"ptxas ({arch}): no spills at the {first} CTAs per SM chosen ({registers} registers)"
        spilled = f"{first}" if first == last + 1 else f"{first}-{last + 1}"
        return (f"ptxas ({arch}) spills at {spilled} CTAs per SM and not at {last} ({self.trials[-1].code}, "
                f"{registers} registers): {last} taken; --ctas-per-sm {first} keeps the plan's count and its "
                f"{self.trials[0].entry.spill_stores} B of spill stores ({SPILLS_AGAINST_OCCUPANCY})")


def needs_settling(compiled) -> bool:
    """The kernel's CTAs per SM came from a plan whose floor is ``unchecked`` or ``uncertain``, that copies the
    constant table beyond residency (``copies_beyond_residency``) or whose loops run once per warp
    (``WarpPrograms.loops_per_warp``: the floor was checked against ptxas for the code the warps share, and
    ptxas holds more for the warps' own partly unrolled loops; DME diffusion at 8 warps x 4 CTAs on sm_90: 12 B
    of spill stores, none with the overlay's code) or that guards its products (``CompileOptions.products``
    'cantera': the floor was checked without the guards' values; GRI-Mech chemistry at 8 warps x 2 CTAs on
    sm_90: 8 B of spill stores, the plan 112 registers) or that is viscosity's symmetric form
    (``CompileOptions.wilke_symmetric``: the floor was checked for the row form; the QSSA n-dodecane at 8 warps x 3
    CTAs: 12-16 B of spill stores, sm_80 and sm_90), and are not yet ``confirmed``."""
    plan = compiled.programs.plan
    if compiled.form == "tables" or plan is None or plan.confirmed:
        return False
    return (plan.unchecked or plan.uncertain or copies_beyond_residency(compiled) or compiled.programs.loops_per_warp
            or guards_products(compiled.options.products) or compiled.options.wilke_symmetric)


def copies_beyond_residency(compiled) -> bool:
    """The constant table's copy in shared memory with more CTAs per SM planned than that memory leaves resident
    (``compiler.copy_where_the_cache_misses``): the register plan counts no registers for the copy before the
    slab loop, and there ptxas may need more than the planned count's budget (gri30_ion diffusion on sm_90 at
    8 warps x 4 CTAs, 2 resident: 4 B of spills, none at 3)."""
    from singe.codegen import kernel_shared_bytes, lay_out

    programs, options = compiled.programs, compiled.options
    overlaid = lay_out(programs)
    if not overlaid.table_copy or options.ctas_per_sm is None:
        return False
    return options.target.resident_ctas(options.ctas_per_sm, kernel_shared_bytes(programs, overlaid)) \
        < options.ctas_per_sm


CODES = ("chosen", "given", "same code", "rescheduled")
"""The candidates of a count: the compiler's choice, or the count given (``--ctas-per-sm``: that count only);
at fewer CTAs per SM the chosen count's code under the smaller count's launch bounds (``at_fewer_ctas``),
then the kernel compiled anew at
that count (``compile_kernel``), whose scheduler may hold more values and whose plan may keep more
constant stripes.  ptxas is not monotone in either: n-heptane diffusion at 4 warps on sm_80 spills 8-24 B
as the same code at every count from 5 CTAs per SM to 1, and none rescheduled at 4; GRI-Mech chemistry at
3 warps (sm_90) 56 B as the same code at 2, none rescheduled there."""


def candidates(compiled, fewer: bool = True):
    """(ctas, code, kernel) to try, the most CTAs per SM first (``CODES``), each kernel built when reached;
    ``fewer`` False: the kernel at its own count only."""
    from singe.compiler import compile_kernel

    yield compiled.options.ctas_per_sm, "chosen" if fewer else "given", compiled
    for ctas in range(compiled.options.ctas_per_sm - 1, 0, -1) if fewer else ():
        yield ctas, "same code", at_fewer_ctas(compiled, ctas)
        yield ctas, "rescheduled", compile_kernel(compiled.mechanism, compiled.kernel,
                                                  options=compiled.options.replace(ctas_per_sm=ctas))


def settle_ctas(compiled, compile=compile_cuda, progress=None, given: bool = False) -> Settled:
    """``compiled`` (CTAs per SM chosen by the compiler) at the most CTAs per SM, no more than its own, at
    which ptxas compiles it without spills, in the first of its ``candidates`` that does (one that generates
    the file of an earlier one is skipped); ``given``: the CTAs per SM were given, and only they are checked.
    ``progress(trial)`` after each ptxas run.  ``compile``: ``compile_cuda`` or a stand-in with its
    signature.  Raises ``SingeInputError`` when nvcc fails (an arch it does not know)."""
    from singe.codegen import generate

    trials, sources = [], set()
    for ctas, code, candidate in candidates(compiled, fewer=not given):
        generated = generate(candidate)
        if generated.cu in sources:  # rescheduled as it was: the same file
            continue
        sources.add(generated.cu)
        trials.append(Trial(ctas, code, ptxas_entry(generated, compiled.options.arch, compile)))
        if progress:
            progress(trials[-1])
        if not trials[-1].spills:
            return Settled(_with_plan(candidate, confirmed=compiled.options.arch), tuple(trials))
    return Settled(compiled, tuple(trials))


def at_fewer_ctas(compiled, ctas: int):
    """``compiled``'s code at ``ctas`` CTAs per SM, fewer than its own: the same mapping and warp programs
    (their shared memory and barriers fit fewer CTAs too), the launch bounds and the register plan of
    ``ctas``, with no more constant stripes in registers than ``compiled`` keeps
    (``RegisterPlan.stripe_limit``): the registers fewer CTAs leave go to ptxas's schedule of the same code
    rather than to constants or to a schedule holding more values."""
    from singe.codegen import lay_out, register_stripes
    from singe.programs.plan import plan_registers

    assert ctas < compiled.options.ctas_per_sm, (ctas, compiled.options.ctas_per_sm)
    options = compiled.options.replace(ctas_per_sm=ctas)
    kept = register_stripes(compiled.programs, lay_out(compiled.programs))
    plan = dataclasses.replace(plan_registers(compiled.programs, options.target, ctas), stripe_limit=kept)
    return dataclasses.replace(compiled, options=options, programs=dataclasses.replace(compiled.programs, plan=plan))


def _with_plan(compiled, **changes):
    """``compiled`` with its register plan's fields ``changes`` replaced."""
    programs = compiled.programs
    plan = dataclasses.replace(programs.plan, **changes)
    return dataclasses.replace(compiled, programs=dataclasses.replace(programs, plan=plan))


def settle_if_needed(compiled, progress=None, given: bool = False) -> Settled | None:
    """``settle_ctas`` where the kernel ``needs_settling`` and nvcc is installed; None otherwise.  ``given``: the
    CTAs per SM were given (``--ctas-per-sm``): ptxas checks that count and nothing is settled."""
    if not needs_settling(compiled) or find_nvcc() is None:
        return None
    return settle_ctas(compiled, progress=progress, given=given)
