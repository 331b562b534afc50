"""Warp programs of the table-form chemistry kernel, and the choice of form.

``table_programs`` lays out the workspace slots and splits each phase of
``singe.kernels.chemistry_tables`` among the warps: species evenly (thermo,
concentrations), species by their number of species-sum terms (species
sums), reaction rows contiguously by an estimated cost per row (rates: a
warp takes one or two rate forms).  Every warp runs the four phases in
order with ``bar.sync 0`` between them (and, for a mechanism with QSSA or
stiff species, the QSSA, stiffness and scale phases between the rates and
the species sums); ``choose_form`` decides between this form and the
unrolled one (``singe.kernels.chemistry``).
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
TABLES_MIN_REACTIONS = 1000  # ... or this many reactions; smaller ones when the unrolled register plan spills
FORM_SPILL_MARGIN = 16       # registers per thread the unrolled plan's floor may exceed its budget in 'auto' (below)
TABLE_LIVE_DOUBLES = 32      # doubles live at once in the rate loop (point values, falloff terms, products): ptxas 114-120
PHASES = ("thermo", "concentrations", "rates", "qssa_coefficients", "qssa_solve", "stiffness", "scale", "species")
"""Every phase in order; a mechanism's are ``phases(tables)`` (the QSSA, stiffness and scale phases only
with QSSA or stiff species)."""
INPUTS = ("temperature", "pressure", "mass_fractions")  # the table form's kernel fields without stiff species
STIFF_INPUTS = ("dt", "diffusion_source")               # ... and with
OUTPUTS = ("production_rates",)


def phases(tables: ct.ChemistryTables) -> tuple[str, ...]:
    """The phases of the kernel of ``tables``, in order."""
    skip = set()
    if tables.qssa is None:
        skip |= {"qssa_coefficients", "qssa_solve"}
    if tables.stiff is None:
        skip.add("stiffness")
    if tables.scale is None:
        skip.add("scale")
    return tuple(p for p in PHASES if p not in skip)


def table_inputs(mech: Mechanism) -> tuple[str, ...]:
    """The input fields of the table-form kernel of ``mech``."""
    return INPUTS + (STIFF_INPUTS if mech.stiff_species else ())


def large(mech: Mechanism) -> bool:
    """Whether ``mech`` is too large for the unrolled chemistry kernel to compile fast (its size alone)."""
    return mech.n_species >= TABLES_MIN_SPECIES or len(mech.reactions) >= TABLES_MIN_REACTIONS


def choose_form(mech: Mechanism, kernel: str, form: str, unrolled_plan=None) -> str:
    """'tables' or 'unrolled' for ``kernel`` of ``mech`` under the option ``form``.

    'auto' takes the table form for the chemistry of a mechanism with at least
    ``TABLES_MIN_SPECIES`` species or ``TABLES_MIN_REACTIONS`` reactions, from its
    size alone (the unrolled kernel's code, compile time and registers grow with
    the mechanism: 9 MB and ~1,900 registers per thread for n-hexane; nothing of
    it is built), and for a smaller mechanism whose unrolled kernel's register
    plan (``unrolled_plan()``, a ``singe.programs.plan.RegisterPlan`` at the
    default configuration; None: not consulted) predicts more than
    ``FORM_SPILL_MARGIN`` registers per thread of spills; the unrolled form
    otherwise (H2/O2, GRI-Mech, DME, n-heptane, the QSSA n-dodecane).  The
    margin because the floor is an estimate: the QSSA n-dodecane at 8 warps has
    a floor of 266 over its budget of 255 and ptxas (sm_90) fits it in 254
    registers without spills (where the table form issues 3.4x the instructions
    per point, SASS walk); DME at 8 warps x 2 CTAs, 20 over, spills 264 B.
    Both forms take QSSA and stiff species."""
    if kernel != "chemistry":
        if form == "tables":
            raise SingeInputError(f"--form tables applies to the chemistry kernel only, not {kernel}")
        return "unrolled"
    if form != "auto":
        return form
    if large(mech):
        return "tables"
    return "tables" if unrolled_plan is not None and unrolled_plan().spilled > FORM_SPILL_MARGIN else "unrolled"


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
    """Workspace slots: C_k, g_k/RT, q of each row (q_f, then q_r of each row where they are kept apart),
    one partial sum per warp; then the QSSA system's x_i and cells, and the stiffness factors."""

    def __init__(self, tables: ct.ChemistryTables, warps: int):
        self.n = tables.n_species
        self.rows = tables.n_rows
        self.warps = warps
        self.split = tables.split
        self.directions = (2 if self.split else 1) * self.rows
        self.n_qss = tables.qssa.n_qss if tables.qssa is not None else 0
        self.n_cells = tables.qssa.n_cells if tables.qssa is not None else 0
        self.n_stiff = tables.stiff.species.size if tables.stiff is not None else 0
        self.scaled = set(tables.scale.direction.tolist()) if tables.scale is not None else set()

    def direction(self, d: int, scaled: bool = False) -> tuple[str, int]:
        """q_f (d < rows) or q_r of row d - rows; ``scaled``: after the scale phase."""
        kind = "qf" if d < self.rows else "qr"
        return f"{kind}{'s' if scaled else ''}{d % self.rows}", 2 * self.n + d

    def final(self, d: int) -> tuple[str, int]:
        """Direction d as the species sums read it."""
        return self.direction(d, d in self.scaled)

    def x(self, i: int, solved: bool = True) -> tuple[str, int]:
        """x_i of QSSA species i (before the solve: a_i0)."""
        return f"{'x' if solved else 'b'}{i}", self._x + i

    def cell(self, c: int, eliminated: bool = False) -> tuple[str, int]:
        return f"{'e' if eliminated else 'm'}{c}", self._x + self.n_qss + c

    def solve_slot(self, u: int, after: bool) -> tuple[str, int]:
        """Solve slot u (x_i, then the cells) before or after the solve."""
        return self.x(u, after) if u < self.n_qss else self.cell(u - self.n_qss, after)

    def factor(self, s: int) -> tuple[str, int]:
        return f"r{s}", self._x + self.n_qss + self.n_cells + s

    @property
    def _x(self) -> int:
        return 2 * self.n + self.directions + self.warps

    def C(self, k: int) -> tuple[str, int]:
        return f"C{k}", k

    def g(self, k: int) -> tuple[str, int]:
        return f"g{k}", self.n + k

    def q(self, row: int) -> tuple[str, int]:
        return f"q{row}", 2 * self.n + row

    def partial(self, w: int) -> tuple[str, int]:
        return f"part{w}", 2 * self.n + self.directions + w

    @property
    def count(self) -> int:
        return self._x + self.n_qss + self.n_cells + self.n_stiff

    @property
    def offsets(self) -> dict[str, int]:
        """First slot of each array (the template's SLOT_* macros)."""
        return {"C": 0, "G": self.n, "Q": 2 * self.n, "QR": 2 * self.n + self.rows,
                "PARTIAL": 2 * self.n + self.directions, "X": self._x, "F": self._x + self.n_qss + self.n_cells}


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
    if layout.split:
        writes = tuple(layout.direction(d) for d in range(begin, end)) + \
            tuple(layout.direction(layout.rows + d) for d in range(begin, end))
    else:
        writes = tuple(layout.q(r) for r in range(begin, end))
    return TableLoop("rates", begin, end, tables, reads, writes, (("temperature", 0), ("pressure", 0)), (), counts)


def _species_loops(tables: ct.ChemistryTables, layout: SlotLayout, w: int, a: int, b: int) -> list[TableLoop]:
    """Warp w's thermo and concentrations loops over table species a:b (mass fractions of the transported ones)."""
    fractions = tuple(("mass_fractions", k) for k in range(a, min(b, tables.n_transported)))
    thermo = TableLoop("thermo", a, b, tables, (), tuple(layout.g(k) for k in range(a, b)) + (layout.partial(w),),
                       (("temperature", 0),) + fractions, (), Counter(rows_thermo=b - a))
    concentrations = TableLoop("concentrations", a, b, tables, tuple(layout.partial(v) for v in range(layout.warps)),
                               tuple(layout.C(k) for k in range(a, b)),
                               (("temperature", 0), ("pressure", 0)) + fractions, (),
                               Counter(rows_concentrations=b - a))
    return [thermo, concentrations]


def _species_sums_loop(tables: ct.ChemistryTables, layout: SlotLayout, s0: int, s1: int) -> TableLoop:
    rows = dict.fromkeys(int(r) for k in range(s0, s1) for r in tables.species_sums.row(k)[0])
    if layout.split:
        reads = tuple(layout.final(d) for r in rows for d in (r, layout.rows + r))
    else:
        reads = tuple(layout.q(r) for r in rows)
    return TableLoop("species", s0, s1, tables, reads, (), (("temperature", 0),),
                     tuple(("production_rates", k) for k in range(s0, s1)), Counter(rows_species=s1 - s0))


def _qss_scale(tables: ct.ChemistryTables, layout: SlotLayout, d: int) -> tuple:
    i = int(tables.scale.direction_qss[d])
    return (layout.x(i),) if i >= 0 else ()


def _qssa_loops(tables: ct.ChemistryTables, layout: SlotLayout, w: int, share: tuple[int, int]) -> list[TableLoop]:
    """Warp w's QSSA coefficients loop (its QSSA species ``share``) and, for warp 0, the solve."""
    q = tables.qssa
    a, b = share
    cells = range(int(q.cell_ptr[a]), int(q.cell_ptr[b]))
    sums = [2 * i + part for i in range(a, b) for part in (0, 1)] + [2 * q.n_qss + c for c in cells]
    reads = tuple(dict.fromkeys(layout.direction(int(d)) for u in sums for d in q.sums.row(u)[0]))
    writes = tuple(layout.x(i, solved=False) for i in range(a, b)) + tuple(layout.cell(c) for c in cells)
    loops = [TableLoop("qssa_coefficients", a, b, tables, reads, writes, (), (), Counter(rows_qssa=b - a))]
    if w == 0:
        n = q.n_qss + q.n_cells
        written = sorted({int(u) for u in q.ops[:, 1]} | set(range(q.n_qss)))
        loops.append(TableLoop("qssa_solve", 0, len(q.ops), tables,
                               tuple(layout.solve_slot(u, False) for u in range(n)),
                               tuple(layout.solve_slot(u, True) for u in written), (), (),
                               Counter(rows_qssa_solve=len(q.ops))))
    return loops


def _stiffness_loop(tables: ct.ChemistryTables, layout: SlotLayout, a: int, b: int) -> TableLoop:
    st = tables.stiff
    directions = dict.fromkeys(int(d) for s in range(a, b) for csr in (st.destruction, st.creation)
                               for d in csr.row(s)[0])
    reads = tuple(layout.direction(d) for d in directions)
    reads += tuple(dict.fromkeys(x for d in directions for x in _qss_scale(tables, layout, d)))
    reads += tuple(layout.C(int(st.species[s])) for s in range(a, b))
    loads = (("dt", 0),) + tuple(("diffusion_source", int(st.species[s])) for s in range(a, b))
    return TableLoop("stiffness", a, b, tables, reads, tuple(layout.factor(s) for s in range(a, b)), loads, (),
                     Counter(rows_stiffness=b - a))


def _scale_loop(tables: ct.ChemistryTables, layout: SlotLayout, a: int, b: int) -> TableLoop:
    sc = tables.scale
    directions = [int(d) for d in sc.direction[a:b]]
    reads = tuple(layout.direction(d) for d in directions)
    reads += tuple(dict.fromkeys(x for d in directions for x in _qss_scale(tables, layout, d)))
    reads += tuple(dict.fromkeys(layout.factor(int(s)) for e in range(a, b) for s in sc.factors.row(e)[0]))
    return TableLoop("scale", a, b, tables, reads, tuple(layout.direction(d, True) for d in directions), (), (),
                     Counter(rows_scale=b - a))


def _qssa_costs(q: ct.QssaTables) -> np.ndarray:
    """Terms and cells of each QSSA species' coefficients."""
    first, last = q.sums.ptr[2 * q.n_qss + q.cell_ptr[:-1]], q.sums.ptr[2 * q.n_qss + q.cell_ptr[1:]]
    own = q.sums.ptr[2:2 * q.n_qss + 1:2] - q.sums.ptr[0:2 * q.n_qss:2]
    return (own + np.diff(q.cell_ptr) + (last - first) + 1).astype(float)


def _extension_loops(tables: ct.ChemistryTables, layout: SlotLayout, warps: int) -> list[list[TableLoop]]:
    """Per warp, its loops of the QSSA, stiffness and scale phases."""
    per_warp: list[list[TableLoop]] = [[] for _ in range(warps)]
    if tables.qssa is not None:
        for w, share in enumerate(split_by_cost(_qssa_costs(tables.qssa), warps)):
            per_warp[w] += _qssa_loops(tables, layout, w, share)
    if tables.stiff is not None:
        st = tables.stiff
        costs = (np.diff(st.destruction.ptr) + np.diff(st.creation.ptr) + 4).astype(float)
        for w, (a, b) in enumerate(split_by_cost(costs, warps)):
            per_warp[w].append(_stiffness_loop(tables, layout, a, b))
    costs = np.diff(tables.scale.factors.ptr).astype(float) + 1.0
    for w, (a, b) in enumerate(split_by_cost(costs, warps)):
        per_warp[w].append(_scale_loop(tables, layout, a, b))
    return per_warp


def _phase_loops(tables: ct.ChemistryTables, layout: SlotLayout, warps: int) -> list[list[TableLoop]]:
    """Per warp, its table loops of every phase, in phase order."""
    species = split_by_cost(np.ones(tables.n_species), warps)
    sums = split_by_cost(np.diff(tables.species_sums.ptr).astype(float) + 1.0, warps)
    rates = split_by_cost(row_costs(tables), warps)
    extension = _extension_loops(tables, layout, warps) if tables.split else [[] for _ in range(warps)]
    return [_species_loops(tables, layout, w, *species[w]) + [_rates_loop(tables, layout, *rates[w])] +
            extension[w] + [_species_sums_loop(tables, layout, *sums[w])] for w in range(warps)]


def table_programs(mech: Mechanism, options) -> WarpPrograms:
    """The warp programs of the table-form chemistry kernel of ``mech``."""
    tables = ct.chemistry_tables(mech, options.products)
    warps = options.warps
    layout = SlotLayout(tables, warps)
    programs = []
    order = phases(tables)
    for w, loops in enumerate(_phase_loops(tables, layout, warps)):
        by_phase = {loop.phase: loop for loop in loops}
        items: list = []
        for p, phase in enumerate(order):
            if p:
                items.append(FullSync(f"{phase} after {order[p - 1]}"))
            loop = by_phase.get(phase)
            if loop is not None and (loop.end > loop.begin or phase == "thermo"):  # every warp writes its partial
                items.append(loop)
        programs.append(WarpProgram(w, tuple(items)))
    budget = options.target.register_budget(32 * warps, options.ctas_per_sm)
    plan = RegisterPlan(budget, (TABLE_LIVE_DOUBLES,) * warps, (0,) * warps, ctas_per_sm=options.ctas_per_sm)
    return WarpPrograms("chemistry", mech.name, warps, tuple(programs), (), layout.count,
                        options.barrier_limit, plan, workspace=True)
