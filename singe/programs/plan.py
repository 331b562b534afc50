"""The register and resource plan of a kernel's warp programs, computed once.

Its inputs are explicit so that a change in what codegen emits is a change
of one input here:

* ``live_doubles``: per warp, the peak number of doubles live at once in the
  code codegen emits.  Liveness runs over codegen's units
  (``singe.programs.lowering``): a value loaded from shared memory right
  before the one operation that reads it is read in place, an output stored
  right after it is written where it is computed, so neither occupies a
  register across the operation; an operation's own temporaries count while
  it runs.
* ``constant_stripes``: per warp, the stripes (32 constants, one per lane) of
  its constant table.
* ``overhead``: registers of every kernel (indices, pointers, lane and warp
  id, loop counter); ``margin``: registers ptxas takes beyond the estimate
  (scheduling, addresses), measured on the paper's kernels.
* ``budget``: registers per thread the launch bounds leave (the target's
  register file shared by the CTAs per SM).

On a target with ``setmaxnreg`` (sm_90a), ``warp_budgets`` gives each warp
its warpgroup's register count after the kernel's ``setmaxnreg``
(``warpgroup_budgets``: chosen only where the launch budget alone leaves a
warpgroup short, and the warpgroups' counts fit the launch's registers).

From them: how many constant stripes stay in registers (codegen emits the
rest as warp-uniform loads; in the switch-dispatched kernels all or none), the registers the kernel asks of ptxas, the
registers ptxas is predicted to use (capped by the launch bounds), and the
spill warning.  Codegen, the command's printed estimate and the timing
model all read this plan.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

REGISTER_OVERHEAD = 24  # indices, pointers, lane and warp id, loop counter
REGISTER_MARGIN = 32  # registers ptxas takes beyond the estimate (scheduling, addresses); measured on the paper kernels
SWITCH_MARGIN = 24
"""Registers ptxas takes beyond ``REGISTER_MARGIN`` in the switch-dispatched kernels (chemistry): their long
straight-line code takes every register the launch bounds leave for its schedule, so constant stripes stay
in registers only where the budget leaves room beyond this margin too (a constant loaded where used is then
one uniform load instead of two shuffles, and holds no register).  Measured: DME chemistry at the paper's
setting (sm_90, mapped in time, ptxas and the SASS walk): with 7 stripes in registers (margin 32) 24 B of
spills and 29,122 instructions issued per point, 2,610 of them SHFL; with none (margin 56) no spills and
26,315; the printed estimate 108 -> 128 = ptxas; the chemistry column of autotune.spills (16 kernels at the
defaults, sm_80 and sm_90): the plan's mean error against ptxas 20 % with the margin at 32 and no stripes,
12 % at 56."""
HELD_RESERVE = 8
"""Doubles of the budget left to ptxas beside the held shared values.  Measured on
Alzueta's chemistry at 8 warps x 3 CTAs (sm_90, ptxas and the SASS walk), with the chemistry
kernel mapped in time and its constants loaded where used: 53 fences and 8 B of spills at 0,
85 and 4 B at 4, 125 and none at 8 (44,574 -> 44,909 instructions issued per point);
before (greedy mapping, stripes in registers): 28 B at 0 and 12 B at 4."""
WARP_SIZE = 32
SPILL_HEADROOM = 8
"""Registers per thread a budget leaves above the plan's floor to count as fitting:
one allocation granule (ptxas allocates 256 registers per warp at a time),
so that an estimate a little short of ptxas's count does not spill."""
SWITCH_HEADROOM = 16
"""``SPILL_HEADROOM`` of the switch-dispatched kernels (chemistry): two granules.  Their floor is shorter of
ptxas's no-spill count where a warp runs many global loads at once (the mass fractions of the molar density,
issued ahead with their addresses): Cantera's Alzueta chemistry at the defaults (sm_90, 8 warps) has a floor
of 68 and spills 8-16 B at 3 CTAs (budget 80; no spills from 88, ptxas .maxnreg); at two granules it takes
2 CTAs (budget 128).  The other chemistry kernels at the defaults keep their CTA counts (their floors are
within a few registers of ptxas's: H2/O2 44 against 48, Cantera's air 42/40, DME 112/112, n-heptane
182/176, n-dodecane 244/240)."""
SWITCH_WARPS_CHECKED = 6
"""Warps per CTA from which the floor of the switch-dispatched kernels (chemistry) was checked against ptxas.
Measured at the CTAs per SM chosen from the plan (sm_90, spill stores): GRI-Mech 276 B at 3 warps, 32 B at 4 and
24 B at 5; n-heptane 16 B at 3 and 8 B at 4; none at 6 and 7 (GRI-Mech, DME, n-heptane, H2/O2), at the
defaults' 8, nor at the paper's settings.  Below it the plan is ``unchecked``: ptxas settles the CTAs per SM
(``singe.ptxas_check``)."""
WARPGROUP = 4  # warps of a warpgroup: setmaxnreg changes the registers of 4 consecutive warps, from a multiple of 4
SETMAXNREG_RANGE = (24, 256)  # PTX ISA 8.0: the count of setmaxnreg, a multiple of 8
REGISTER_GRANULE = 8  # registers per thread of one allocation granule (256 per warp)


@dataclass(frozen=True)
class RegisterPlan:
    """Registers per thread of a warp-specialized kernel (see the module docstring)."""

    budget: int
    live_doubles: tuple[int, ...]
    constant_stripes: tuple[int, ...]
    overhead: int = REGISTER_OVERHEAD
    margin: int = REGISTER_MARGIN
    ctas_per_sm: int = 1
    fewer_ctas_budgets: tuple[int, ...] = ()  # the budget at 1, 2, ... ctas_per_sm - 1 CTAs per SM
    fences: tuple[frozenset[int], ...] = ()  # per warp, the units a forwarding fence precedes (``forwarding``)
    headroom: int = SPILL_HEADROOM  # registers over a warp's floor for it to count as fitting
    all_stripes_or_none: bool = False
    """The switch-dispatched kernels keep every constant stripe in registers, with ``SPILL_HEADROOM`` to
    spare, or none: a budget that holds only some leaves ptxas, which takes every free register for the
    schedule of their straight-line code, nothing to spare (GRI-Mech chemistry at the defaults, sm_90:
    8 of 10 stripes kept, 40 B of spills; none, no spills)."""
    warp_budgets: tuple[int, ...] = ()  # per warp, its warpgroup's setmaxnreg count (sm_90a; () for none)
    turn_columns: tuple[int, ...] = ()  # per warp, the columns its diffusion turns add into (() for other kernels)
    switch: bool = False  # the kernel is switch-dispatched (each warp's own straight-line code: chemistry)
    stripe_limit: int | None = None
    """At most this many constant stripes in registers (None: as many as the budget leaves): where ptxas settles
    the CTAs per SM (``confirmed``), the chosen count's, so that the registers of fewer CTAs go to ptxas's
    schedule rather than to constants."""
    confirmed: str = ""
    """Where the floor is ``unchecked``: the arch whose ptxas compiled the kernel at these CTAs per SM without
    spills (``singe.ptxas_check.settle_ctas``); '' when none did."""

    def budget_of(self, warp: int) -> int:
        """Registers per thread ``warp`` may use: its warpgroup's setmaxnreg count, else the launch budget."""
        return self.warp_budgets[warp] if self.warp_budgets else self.budget

    def warp_floor(self, warp: int) -> int:
        """Registers per thread below which ``warp``'s code spills (``floor`` for one warp)."""
        return self.per_warp[warp] - 2 * self.constant_stripes[warp]

    def fits(self, headroom: int | None = None) -> bool:
        """Every warp's floor plus ``headroom`` (default the plan's) within the registers it may use."""
        headroom = self.headroom if headroom is None else headroom
        if not self.warp_budgets:
            return self.floor + headroom <= self.budget
        return all(self.warp_floor(w) + headroom <= self.budget_of(w) for w in range(len(self.per_warp)))

    @property
    def per_warp(self) -> tuple[int, ...]:
        """Registers each warp needs with its whole constant table in registers."""
        return tuple(self.overhead + 2 * live + 2 * stripes
                     for live, stripes in zip(self.live_doubles, self.constant_stripes))

    def held_allowed(self, warp: int) -> int:
        """Shared values ``warp`` may keep in registers across a unit boundary
        (``singe.programs.forwarding``): the doubles the budget leaves beside
        the warp's own registers at the floor (live values, overhead, its
        constant stripes kept in registers)."""
        stripes = min(self.constant_stripes[warp], self.stripes_in_registers())
        own = self.overhead + 2 * self.live_doubles[warp] + 2 * stripes
        return max(0, (self.budget_of(warp) - own) // 2 - HELD_RESERVE)

    @property
    def stripes(self) -> int:
        """Constant stripes of the widest warp (the kernel's table width per lane)."""
        return max(self.constant_stripes, default=0)

    def stripes_in_registers(self, stripes: int | None = None) -> int:
        """How many of ``stripes`` (default: the plan's) constant stripes stay in
        registers: as many as the budget leaves after the other live values
        and the margin."""
        stripes = self.stripes if stripes is None else stripes
        if self.warp_budgets:  # every warp holds the kept stripes within its own warpgroup's count
            room = min((self.warp_budgets[w] - r + 2 * s - self.margin) // 2
                       for w, (r, s) in enumerate(zip(self.per_warp, self.constant_stripes)))
        else:
            room = (self.budget - max(self.per_warp, default=self.overhead) + 2 * self.stripes - self.margin) // 2
        if self.all_stripes_or_none:
            kept = stripes if room - self.headroom // 2 >= stripes else 0
        else:
            kept = max(0, min(stripes, room))
        if self.stripe_limit is not None and kept > self.stripe_limit:
            kept = 0 if self.all_stripes_or_none else self.stripe_limit
        return kept

    @property
    def need(self) -> int:
        """Registers per thread the kernel asks of ptxas: the widest warp's,
        less the constant stripes left out of registers, plus the margin."""
        moved = self.stripes - self.stripes_in_registers()
        return max(self.per_warp, default=self.overhead) - 2 * moved + self.margin

    @property
    def floor(self) -> int:
        """Registers per thread below which ptxas must spill: the widest warp's
        live values and overhead, every constant stripe loaded where used, no
        margin (ptxas gives up its scheduling registers before it spills, and
        on sm_90 the 20 registers in which it keeps singe_exp's constants
        across the slab loop where there is room).
        Measured (sm_90): DME chemistry at 8 warps (4 QSSA) x 2 CTAs has a
        floor of 78 and ptxas fits it in its budget of 128 (with a floor of
        148, before the scheduler kept held values within the budget, it
        spilled 264 B); DME viscosity at the paper's setting is above what
        ptxas needs (``_turn_peak``)."""
        return max((r - 2 * s for r, s in zip(self.per_warp, self.constant_stripes)), default=self.overhead)

    @property
    def full(self) -> int:
        """Registers per thread the kernel asks of ptxas with every constant
        stripe in registers: the widest warp's, plus the margin."""
        return max(self.per_warp, default=self.overhead) + self.margin

    def ctas_avoiding_spills(self) -> int | None:
        """The most CTAs per SM, fewer than the plan's, whose budget covers the floor (None: none does)."""
        fitting = [k + 1 for k, budget in enumerate(self.fewer_ctas_budgets) if budget >= self.floor]
        return max(fitting, default=None)

    @property
    def predicted(self) -> int:
        """Registers per thread ptxas is predicted to use: the need, capped by the launch bounds;
        with warpgroup budgets the launch budget (ptxas reports the launch bounds' count for a
        kernel with setmaxnreg, measured on sm_90a, and the CTA holds that many)."""
        return self.budget if self.warp_budgets else min(self.need, self.budget)

    @property
    def spilled(self) -> int:
        """Registers per thread predicted to spill (a warp's floor beyond the registers it may use)."""
        if self.warp_budgets:
            return max(0, max(self.warp_floor(w) - self.budget_of(w) for w in range(len(self.per_warp))))
        return max(0, self.floor - self.budget)

    def warnings(self, warps: int, more_warps: int | None = None) -> tuple[str, ...]:
        """The spill warning, when the floor exceeds the budget, with the setting
        that avoids it: fewer CTAs per SM when one fits, else ``more_warps``
        (``singe.compiler.warps_avoiding_spills``) when given.  A floor within one
        allocation granule of the budget is within the estimate's error (DME viscosity
        at 15 warps x 3 CTAs: a floor of 42, a budget of 40, and ptxas compiles it in
        39 without spills, sm_80 and sm_90): there, registers *may* spill."""
        if self.confirmed:  # ptxas compiled this kernel without spills
            return ()
        if not self.spilled:
            return self._unchecked_warnings()
        outcome = "registers will spill" if self.spilled > REGISTER_GRANULE else \
            f"registers may spill (the estimate is within {REGISTER_GRANULE} registers of the budget)"
        over = sum(1 for w in range(len(self.per_warp)) if self.warp_floor(w) > self.budget_of(w))
        ctas = self.ctas_avoiding_spills()
        if ctas:
            remedy = f"--ctas-per-sm {ctas} would avoid them"
        elif more_warps:
            remedy = f"--warps {more_warps} would avoid them"
        else:
            remedy = f"more warps per CTA than {warps} (--warps) may avoid them"
        return (f"{over} of {warps} warps need at least ~{self.floor} registers per thread, {self.budget} "
                f"available at {self.ctas_per_sm} CTAs per SM: {outcome}; {remedy}",)

    @property
    def uncertain(self) -> bool:
        """The floor exceeds the budget by no more than the estimate's error (``REGISTER_GRANULE``): registers
        *may* spill, and only ptxas can say (DME viscosity at the paper's 15 warps x 3 CTAs)."""
        return 0 < self.spilled <= REGISTER_GRANULE

    @property
    def _wide_turns(self) -> bool:
        """Diffusion turns wider than ``TURN_COLUMNS_CHECKED`` columns per warp, whose schedule ptxas grows beyond
        the floor."""
        from singe.kernels.transport import TURN_COLUMNS_CHECKED

        return max(self.turn_columns, default=0) > TURN_COLUMNS_CHECKED

    @property
    def unchecked(self) -> bool:
        """The floor is outside what was checked against ptxas: ``_wide_turns``, or a switch-dispatched kernel
        of fewer than ``SWITCH_WARPS_CHECKED`` warps."""
        return self._wide_turns or (self.switch and len(self.per_warp) < SWITCH_WARPS_CHECKED)

    def _unchecked_warnings(self) -> tuple[str, ...]:
        """The warning for a floor outside what was checked against ptxas (``unchecked``), with the warps
        that bring it back (``warnings`` gives none once ptxas ``confirmed`` the CTAs per SM)."""
        from singe.kernels.transport import TURN_COLUMNS_CHECKED

        if not self.unchecked:
            return ()
        if not self._wide_turns:
            return (f"the register estimate of the switch-dispatched kernel was checked against ptxas from "
                    f"{SWITCH_WARPS_CHECKED} warps per CTA: at {len(self.per_warp)} registers may spill at "
                    f"{self.ctas_per_sm} CTAs per SM (GRI-Mech chemistry at 3 warps: 276 B on sm_90); "
                    f"--warps {SWITCH_WARPS_CHECKED} keeps it within what was checked",)
        widest = max(self.turn_columns)
        species = sum(self.turn_columns)
        warps = -(-species // TURN_COLUMNS_CHECKED)
        remedy = f"--warps {warps} keeps them within it" if warps <= WARP_SIZE else "fewer CTAs per SM may avoid that"
        return (f"diffusion turns over up to {widest} columns per warp, more than the {TURN_COLUMNS_CHECKED} for which "
                f"the register estimate was checked against ptxas: registers may spill at {self.ctas_per_sm} CTAs "
                f"per SM (GRI-Mech at 4 warps, 14 columns: 164 B on sm_90); {remedy}",)

    def __str__(self) -> str:
        groups = self.warp_budgets[::WARPGROUP]
        setmaxnreg = f"; setmaxnreg per warpgroup {'/'.join(map(str, groups))}" if groups else ""
        confirmed = f"; no spills in ptxas ({self.confirmed})" if self.confirmed else ""
        return (f"~{self.predicted} registers (need {self.need}, budget {self.budget}{setmaxnreg}; "
                f"{self.stripes_in_registers()} of {self.stripes} constant stripes in registers{confirmed})")


def live_doubles(program) -> int:
    """Peak doubles live at once in the code codegen emits for one warp's
    program (the largest of ``unit_peaks``)."""
    return max(unit_peaks(program), default=0)


def unit_peaks(program) -> list[int]:
    """Per unit of one warp's program, the doubles live at once while it runs
    in the code codegen emits: backward liveness over its units
    (``lowering.program_units``); while an operation runs, its temporaries
    and one register each for its in-place loads and stores count too."""
    from singe.programs.lowering import program_units

    return _peaks(program_units(program))


def _peaks(units) -> list[int]:
    """``unit_peaks`` of a warp's units."""
    from singe.programs.lowering import ComputeUnit

    live: set[str] = set()
    peaks = []
    for unit in reversed(units):
        if isinstance(unit, ComputeUnit):
            reads = unit.reads()
            streamed = min(len(unit.loads), 1) + min(len(set(unit.stores) - unit.keep), 1)
            inside = _turn_peak(unit, live) if unit.op.kind == "turn" else \
                operation_peak(live, reads, unit.writes(), unit.op.temporaries)
            peaks.append(inside + streamed)
            live = (live - set(unit.op.outputs)) | reads
        else:
            live = (live - unit.writes()) | unit.reads()
            peaks.append(len(live))
    return peaks[::-1]


def operation_peak(live: set[str], reads: set[str], writes: set[str], temporaries: int) -> int:
    """Doubles live at once while an operation runs (the bound ``unit_peaks`` takes for all but the
    diffusion turns): what stays live across it, its register inputs and outputs, and its temporaries."""
    return len(live | reads | writes) + temporaries


def _turn_peak(unit, live: set[str]) -> int:
    """Doubles live at once while a turn of the diffusion kernel runs
    (``transport.skew_diffusion``), by liveness over the instructions codegen
    emits: its column sums continue from its inputs into its outputs through
    its temporaries, which the bound of the other operations (inputs, outputs
    and temporaries all live at once) counts three times.  Measured (sm_90,
    ptxas, ``autotune.spills --threshold``): GRI-Mech 3.0, DME and n-heptane at
    8 warps compile without spills from 72 registers, where that bound put
    the floor at 98, 80 and ~96.  The other operations keep the bound: by
    liveness over their instructions the defaults' floors were 0-10
    registers lower and the CTAs per SM chosen from them spilled (8 warps,
    sm_90: conductivity at 5 CTAs for GRI-Mech 3.0, n-dodecane and Alzueta,
    4-40 B; Alzueta chemistry at 3, 24 B), ptxas's schedule holding more than
    the instruction order; the bound's cost is DME viscosity at the paper's
    15 warps x 3 CTAs, a floor of 42 against the 40 in which ptxas compiles
    it, and a spill warning it does not bear out."""
    registers = unit.reads() | {instr.dst for instr in unit.instructions}
    current = set(live)
    peak = len(current)
    for instr in reversed(unit.instructions):
        current.discard(instr.dst)
        current |= {name for name in instr.registers_read() if name in registers}
        peak = max(peak, len(current) + 1)  # and the instruction's result
    return peak


def plan_registers(programs, target, ctas_per_sm: int) -> RegisterPlan:
    """The plan of ``programs`` (a ``WarpPrograms``) on ``target`` (``singe.targets.Target``)
    at ``ctas_per_sm`` CTAs per SM."""
    stripes = tuple(-(-len(set(programs.constants(w))) // WARP_SIZE) for w in range(programs.warps))
    budgets = tuple(target.register_budget(programs.threads, k) for k in range(1, ctas_per_sm + 1))
    from singe.programs.forwarding import fence_positions
    from singe.programs.lowering import program_units

    units = [program_units(p) for p in programs.programs]
    peaks = [_peaks(u) for u in units]
    plan = RegisterPlan(budgets[-1], tuple(max(p, default=0) for p in peaks), stripes,
                        ctas_per_sm=ctas_per_sm, fewer_ctas_budgets=budgets[:-1], turn_columns=_turn_columns(units))
    if programs.dispatch != "switch":
        return plan
    plan = replace(plan, margin=REGISTER_MARGIN + SWITCH_MARGIN, headroom=SWITCH_HEADROOM, all_stripes_or_none=True,
                   switch=True)
    plan = replace(plan, warp_budgets=warpgroup_budgets(plan, programs.warps, target))
    return replace(plan, fences=tuple(fence_positions(u, held_allowances(plan, w, p))
                                      for w, (u, p) in enumerate(zip(units, peaks))))


def _turn_columns(units) -> tuple[int, ...]:
    """Per warp (its units), the columns its diffusion turns add into (``transport.turn_columns``); () without
    turns."""
    from singe.kernels.transport import turn_columns
    from singe.programs.lowering import ComputeUnit

    widths = tuple(len(set().union(*(turn_columns(u.op) for u in warp if isinstance(u, ComputeUnit))))
                   for warp in units)
    return widths if any(widths) else ()


def held_allowances(plan: RegisterPlan, warp: int, peaks: list[int]) -> list[int]:
    """Per unit boundary of ``warp``, the shared values it may hold in registers
    there (``held_allowed``, with the live values of the units on either side
    in place of the warp's peak)."""
    rest = plan.held_allowed(warp) + plan.live_doubles[warp]
    return [max(0, rest - max(peaks[max(b - 1, 0):b + 1], default=0)) for b in range(len(peaks) + 1)]


# -- per-warpgroup register budgets (setmaxnreg, sm_90a) ---------------------------------


def _granules(registers: int) -> int:
    """``registers`` rounded up to a whole allocation granule."""
    return -(-registers // REGISTER_GRANULE) * REGISTER_GRANULE


def launch_pool(budget: int, warps: int) -> int:
    """Registers per thread, summed over the warpgroups, that the CTA holds at launch
    (each warpgroup's launch budget, whole granules): what setmaxnreg redistributes."""
    return (warps // WARPGROUP) * (budget - budget % REGISTER_GRANULE)


def warpgroup_budgets(plan: RegisterPlan, warps: int, target) -> tuple[int, ...]:
    """Per warp, its warpgroup's setmaxnreg count, or () where it does not help.

    Used only on a target with ``setmaxnreg``, for whole warpgroups (at least 2),
    when the launch budget holds the kernel back: some warp short of its floor
    plus ``SPILL_HEADROOM``, or the plan's need (with the margin ptxas takes
    for scheduling) over the budget.  Each warpgroup gets its widest warp's
    floor plus the headroom (a granule multiple, at least 24); if those fit the
    launch's registers (``launch_pool``), the rest goes a granule at a time, in
    turn, to the warpgroups below their need with the margin.  Kept only where
    a warpgroup gets more than the launch budget (else nothing changes), and,
    without the headroom, only where it removes predicted spills.  Measured on
    sm_90a (ptxas): Alzueta's chemistry at 8 warps x 3 CTAs (budget 80, floors
    60 and 46, need 84) spills 28 B uniformly, 8 B at 88/72."""
    if not target.setmaxnreg or warps % WARPGROUP or warps < 2 * WARPGROUP or (plan.fits()
                                                                               and plan.need <= plan.budget):
        return ()
    groups = [range(g, g + WARPGROUP) for g in range(0, warps, WARPGROUP)]
    floors = [max(plan.warp_floor(w) for w in group) for group in groups]
    cap = min(SETMAXNREG_RANGE[1], target.max_registers_per_thread - target.max_registers_per_thread % 8)
    pool = launch_pool(plan.budget, warps)
    for headroom in (plan.headroom, 0):
        counts = [max(SETMAXNREG_RANGE[0], _granules(f + headroom)) for f in floors]
        if max(counts) <= cap and sum(counts) <= pool:
            break
    else:
        return ()
    if headroom == 0 and not plan.spilled:
        return ()
    wants = [min(cap, _granules(max(plan.per_warp[w] for w in group) + plan.margin))
             for group in groups]
    spare = pool - sum(counts)
    while spare >= REGISTER_GRANULE and any(c < want for c, want in zip(counts, wants)):
        for g, want in enumerate(wants):
            if counts[g] < want and spare >= REGISTER_GRANULE:
                counts[g] += REGISTER_GRANULE
                spare -= REGISTER_GRANULE
    if max(counts) <= plan.budget:
        return ()
    return tuple(counts[w // WARPGROUP] for w in range(warps))


def could_fit(plan: RegisterPlan, budget: int, warps: int, target=None) -> bool:
    """Whether ``plan``'s warps (floors estimated at another CTA count) fit a launch
    budget of ``budget`` with the headroom: uniformly, or with warpgroup budgets on
    ``target`` (None: none)."""
    trial = replace(plan, budget=budget, warp_budgets=())
    if trial.fits() or target is None:
        return trial.fits()
    budgets = warpgroup_budgets(trial, warps, target)
    return bool(budgets) and replace(trial, warp_budgets=budgets).fits()


def budget_problems(plan: RegisterPlan, warps: int, target) -> list[str]:
    """What breaks PTX's rules for setmaxnreg in ``plan.warp_budgets`` (empty: none, or no budgets)."""
    budgets = plan.warp_budgets
    if not budgets:
        return []
    low, high = SETMAXNREG_RANGE
    problems = [] if target.setmaxnreg else [
        f"per-warpgroup register budgets on {target.arch}, which has no setmaxnreg (sm_90a has)"]
    if len(budgets) != warps:
        problems.append(f"{len(budgets)} warp budgets for {warps} warps")
    if warps % WARPGROUP:
        problems.append(f"{warps} warps are no whole number of warpgroups ({WARPGROUP} warps each): "
                        f"every warp of a warpgroup must execute its setmaxnreg")
    problems += [f"warp {w}: setmaxnreg count {n} is not a multiple of {REGISTER_GRANULE} from {low} to {high}"
                 for w, n in enumerate(budgets) if n % REGISTER_GRANULE or not low <= n <= high]
    for g in range(0, len(budgets), WARPGROUP):
        if len(set(budgets[g:g + WARPGROUP])) > 1:
            problems.append(f"warpgroup {g // WARPGROUP}: its warps' counts {list(budgets[g:g + WARPGROUP])} "
                            f"differ; every warp of a warpgroup must execute the same setmaxnreg")
    total, pool = sum(budgets[::WARPGROUP]), launch_pool(plan.budget, warps)
    if total > pool:
        problems.append(f"the warpgroups' counts sum to {total} registers per thread, more than the {pool} the "
                        f"launch budget ({plan.budget} per thread) gives: a setmaxnreg.inc would wait forever")
    return problems


def check_budgets(plan: RegisterPlan | None, warps: int, target) -> None:
    """Raise ``SingeInternalError`` listing ``budget_problems`` (if any)."""
    from singe.errors import SingeInternalError

    problems = budget_problems(plan, warps, target) if plan is not None else []
    if problems:
        raise SingeInternalError("register plan fails the setmaxnreg check:\n  " + "\n  ".join(problems))


def max_live_doubles(budget: int, headroom: int = SWITCH_HEADROOM) -> int:
    """The most doubles a warp may hold live in ``budget`` registers per thread with ``headroom``
    to spare (a floor ``REGISTER_OVERHEAD`` + 2 x live + ``headroom`` within the budget: ``RegisterPlan.fits``)."""
    return max(0, (budget - REGISTER_OVERHEAD - headroom) // 2)
