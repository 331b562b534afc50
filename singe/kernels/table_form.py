"""Warp programs of the table-form chemistry kernel, and the choice of form.

``table_programs`` lays out the workspace slots and splits each phase of
``singe.kernels.chemistry_tables`` among the warps: species evenly (thermo,
concentrations), species by their number of species-sum terms (species
sums), reaction rows contiguously by an estimated cost per row (rates: a
warp takes one or two rate forms).  Every warp runs the four phases in
order with ``bar.sync 0`` between them; ``choose_form`` decides between this
form and the unrolled one (``singe.kernels.chemistry``).
"""

from __future__ import annotations

from collections import Counter

import numpy as np

from singe.errors import SingeInputError
from singe.kernels import chemistry_tables as ct
from singe.mechanism import Mechanism
from singe.programs import FullSync, WarpProgram, WarpPrograms
from singe.programs.plan import RegisterPlan
from singe.programs.tables import TableLoop

TABLES_MIN_SPECIES = 100     # 'auto' takes the table form from this many species ...
TABLES_MIN_REACTIONS = 1000  # ... or this many reactions (QSSA / stiff mechanisms stay unrolled)
TABLE_LIVE_DOUBLES = 32      # doubles live at once in the rate loop (point values, falloff terms, products): ptxas 114-120
PHASES = ("thermo", "concentrations", "rates", "species")
INPUTS = ("temperature", "pressure", "mass_fractions")  # the table form's kernel fields (no dt: no stiff species)
OUTPUTS = ("production_rates",)


def choose_form(mech: Mechanism, kernel: str, form: str) -> str:
    """'tables' or 'unrolled' for ``kernel`` of ``mech`` under the option ``form``.

    'auto' takes the table form for the chemistry of a mechanism with at least
    ``TABLES_MIN_SPECIES`` species or ``TABLES_MIN_REACTIONS`` reactions and no
    QSSA or stiff species: the unrolled kernel's code, compile time and
    registers grow with the mechanism (9 MB and ~1,900 registers per thread for
    n-hexane); smaller ones (DME, GRI-Mech, n-heptane with its QSSA) stay unrolled."""
    if kernel != "chemistry":
        if form == "tables":
            raise SingeInputError(f"--form tables applies to the chemistry kernel only, not {kernel}")
        return "unrolled"
    if form != "auto":
        if form == "tables":
            ct.refuse_unsupported(mech)
        return form
    large = mech.n_species >= TABLES_MIN_SPECIES or len(mech.reactions) >= TABLES_MIN_REACTIONS
    return "tables" if large and not (mech.qss_species or mech.stiff_species) else "unrolled"


# --------------------------------------------------------------------------- splitting

def split_by_cost(costs: np.ndarray, parts: int) -> list[tuple[int, int]]:
    """``parts`` contiguous ranges of ``costs``'s indices with near-equal cost sums."""
    total = np.concatenate([[0.0], np.cumsum(costs)])
    bounds = [0]
    for p in range(1, parts):
        bounds.append(max(bounds[-1], int(np.searchsorted(total, total[-1] * p / parts))))
    bounds.append(len(costs))
    return [(bounds[p], bounds[p + 1]) for p in range(parts)]


def row_costs(tables: ct.ChemistryTables) -> np.ndarray:
    """Estimated work of each reaction row (exponentials and table entries)."""
    costs = np.empty(tables.n_rows)
    for row in range(tables.n_rows):
        flags = int(tables.flags[row])
        group = tables.group_of(row)
        entries = sum(int(c.ptr[row + 1] - c.ptr[row]) for c in
                      (tables.forward_factors, tables.reverse_factors, tables.efficiencies))
        cost = 2.0 + 0.25 * entries + (1.0 if flags & (ct.EQUILIBRIUM | ct.EXPLICIT_REVERSE) else 0.0)
        e = int(tables.extra[row])
        if group == "falloff":
            cost += 6.0 if flags & (ct.TROE | ct.SRI) else 2.0
        elif group == "plog":
            cost += 2.0 * int(tables.plog_set_ptr[tables.plog_ptr[e + 1]] - tables.plog_set_ptr[tables.plog_ptr[e]])
        elif group == "chebyshev":
            cost += 0.5 * int(tables.cheb_shape[e][0] * tables.cheb_shape[e][1])
        costs[row] = cost
    return costs


# --------------------------------------------------------------------------- slots

class SlotLayout:
    """Workspace slots: C_k, g_k/RT, q of each row, one partial sum per warp."""

    def __init__(self, tables: ct.ChemistryTables, warps: int):
        self.n = tables.n_species
        self.rows = tables.n_rows
        self.warps = warps

    def C(self, k: int) -> tuple[str, int]:
        return f"C{k}", k

    def g(self, k: int) -> tuple[str, int]:
        return f"g{k}", self.n + k

    def q(self, row: int) -> tuple[str, int]:
        return f"q{row}", 2 * self.n + row

    def partial(self, w: int) -> tuple[str, int]:
        return f"part{w}", 2 * self.n + self.rows + w

    @property
    def count(self) -> int:
        return 2 * self.n + self.rows + self.warps

    @property
    def offsets(self) -> dict[str, int]:
        """First slot of each array (the template's SLOT_* macros)."""
        return {"C": 0, "G": self.n, "Q": 2 * self.n, "PARTIAL": 2 * self.n + self.rows}


def _row_species(tables: ct.ChemistryTables, row: int) -> tuple[set[int], set[int]]:
    """Species whose C and whose g/RT the rate of ``row`` reads."""
    flags = int(tables.flags[row])
    concentrations = {int(k) for c in (tables.forward_factors, tables.efficiencies) for k in c.row(row)[0]}
    if flags & (ct.EQUILIBRIUM | ct.EXPLICIT_REVERSE):
        concentrations |= {int(k) for k in tables.reverse_factors.row(row)[0]}
    gibbs: set[int] = set()
    if flags & ct.EQUILIBRIUM:
        if flags & (ct.FORWARD_POWER | ct.REVERSE_POWER):
            gibbs = {int(k) for k in tables.net.row(row)[0]}
        else:
            gibbs = {int(k) for c in (tables.forward_factors, tables.reverse_factors) for k in c.row(row)[0]}
    return concentrations, gibbs


def _rates_loop(tables, layout: SlotLayout, begin: int, end: int) -> TableLoop:
    concentrations, gibbs = set(), set()
    for row in range(begin, end):
        c, g = _row_species(tables, row)
        concentrations |= c
        gibbs |= g
    reads = tuple(layout.C(k) for k in sorted(concentrations)) + tuple(layout.g(k) for k in sorted(gibbs))
    groups = Counter(tables.group_of(row) for row in range(begin, end))
    counts = Counter({f"rows_{g}": n for g, n in groups.items()})
    return TableLoop("rates", begin, end, tables, reads, tuple(layout.q(r) for r in range(begin, end)),
                     (("temperature", 0), ("pressure", 0)), (), counts)


def _phase_loops(tables: ct.ChemistryTables, layout: SlotLayout, warps: int) -> list[list[TableLoop]]:
    """Per warp, its table loops of the four phases (empty shares left out)."""
    n = tables.n_species
    species = split_by_cost(np.ones(n), warps)
    sums = split_by_cost(np.diff(tables.species_sums.ptr).astype(float) + 1.0, warps)
    rates = split_by_cost(row_costs(tables), warps)
    per_warp = []
    for w in range(warps):
        a, b = species[w]
        thermo = TableLoop("thermo", a, b, tables, (), tuple(layout.g(k) for k in range(a, b)) + (layout.partial(w),),
                           (("temperature", 0),) + tuple(("mass_fractions", k) for k in range(a, b)), (),
                           Counter(rows_thermo=b - a))
        concentrations = TableLoop("concentrations", a, b, tables, tuple(layout.partial(v) for v in range(warps)),
                                   tuple(layout.C(k) for k in range(a, b)),
                                   (("temperature", 0), ("pressure", 0)) +
                                   tuple(("mass_fractions", k) for k in range(a, b)), (),
                                   Counter(rows_concentrations=b - a))
        s0, s1 = sums[w]
        reads = tuple(layout.q(int(r)) for k in range(s0, s1) for r in sorted(set(tables.species_sums.row(k)[0])))
        totals = TableLoop("species", s0, s1, tables, tuple(dict.fromkeys(reads)), (), (("temperature", 0),),
                           tuple(("production_rates", k) for k in range(s0, s1)), Counter(rows_species=s1 - s0))
        per_warp.append([thermo, concentrations, _rates_loop(tables, layout, *rates[w]), totals])
    return per_warp


def table_programs(mech: Mechanism, options) -> WarpPrograms:
    """The warp programs of the table-form chemistry kernel of ``mech``."""
    tables = ct.chemistry_tables(mech)
    warps = options.warps
    layout = SlotLayout(tables, warps)
    programs = []
    for w, loops in enumerate(_phase_loops(tables, layout, warps)):
        items: list = []
        for phase, loop in zip(PHASES, loops):
            if phase != "thermo":
                items.append(FullSync(f"{phase} after {PHASES[PHASES.index(phase) - 1]}"))
            if loop.end > loop.begin or phase == "thermo":  # every warp writes its partial sum
                items.append(loop)
        programs.append(WarpProgram(w, tuple(items)))
    budget = options.target.register_budget(32 * warps, options.ctas_per_sm)
    plan = RegisterPlan(budget, (TABLE_LIVE_DOUBLES,) * warps, (0,) * warps, ctas_per_sm=options.ctas_per_sm)
    return WarpPrograms("chemistry", mech.name, warps, tuple(programs), (), layout.count,
                        options.barrier_limit, plan, workspace=True)
