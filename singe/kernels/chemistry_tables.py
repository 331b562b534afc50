"""The table form of the chemistry kernel: detailed mechanisms without unrolling.

The unrolled chemistry kernel (``singe.kernels.chemistry``) writes one
operation per reaction, so its code grows with the mechanism: n-hexane
(NUIG, 1,268 species, 5,336 reactions) gives a 9 MB ``.cu``.  This form
keeps the mechanism in tables that the kernel reads from global memory
(warp-uniform loads: every lane of a warp reads the same row) and loops
over, so its code is the same few loops whatever the mechanism:

* species tables: molecular weights and the NASA7/NASA9 coefficient sets
  (a range per row, with the bound where it starts);
* reaction rows, grouped by rate form (``GROUPS``): elementary (Arrhenius,
  with or without a third body), falloff (Lindemann, Troe, SRI, chemically
  activated), PLOG and Chebyshev, each group a contiguous run of rows with
  its own loop; per row the forward Arrhenius set, flags (third body,
  reverse kind, power-law orders, falloff function), and compressed sparse
  rows (CSR) of its forward factors, reverse factors, third-body
  efficiencies and — for rows with FORD/RORD or fractional orders — net
  stoichiometry;
* a CSR by species of (row, net coefficient): the species sums, a sparse
  stoichiometric product without atomics (deterministic).

Per 32-point slab the CTA's warps run four phases separated by CTA-wide
barriers (``bar.sync 0``), each warp over its share of the rows:

1. ``thermo``: g_k/RT of its species, and its partial sum of Y_k/W_k;
2. ``concentrations``: the molar density from the partial sums, C_k;
3. ``rates``: q_j = q_f - q_r of its reaction rows (contiguous, balanced
   by a cost per row, so each warp is specialised to one or two groups);
4. ``species``: ω̇_k = Σ_j ν_kj q_j of its species, stored to global memory.

C_k, g_k/RT, q_j and the partial sums live in a per-CTA scratch workspace
in global memory, ``[slot][32]`` doubles (1,268 species x 32 points x 8 B
alone is 324 KB, more than a CTA's shared memory; the workspace stays in L2
for the 100-species mechanisms).  In the warp programs the workspace slots
are the programs' slots, so the simulator and the barrier proof check every
access exactly as they check shared memory.

QSSA species and stiffness removal (``QssaTables``, ``StiffTables``,
``ScaleTables``): the table species are the transported species (the
kernel's order) followed by the QSSA species (C = 1 in the rates, as
``singe.reference.kinetics``); the rates phase keeps q_f and q_r apart, then
more phases follow, separated by barriers: ``qssa_coefficients`` (per QSSA
species, D_i, a_i0 and the a_ij of the linearized system as sums over the
directions of its table), ``qssa_solve`` (one warp runs the elimination of
``singe.reference.qssa.solve`` as a table of operations, component by
component in the same order), ``stiffness`` (per stiff species, its factor
r_s from the QSSA-scaled rates, dt and the diffusion source) and ``scale``
(every direction times x_k, 0 where dropped, times r_s^nu).
"""

from __future__ import annotations

import dataclasses
from collections import Counter
from dataclasses import dataclass

import numpy as np

from singe.derived.qssa import build_qssa_system
from singe.derived.stoichiometry import stiff_stoichiometry
from singe.mechanism import Arrhenius, ChebyshevRate, Mechanism, Nasa7, PlogRate, Reaction
from singe.memo import per_mechanism
from singe.derived.rates import (DEFAULT_PRODUCTS, THIRD_BODY_KINDS, _sri_parameters, _troe_parameters,
                                 guards_products, product_factors)
from singe.derived.stoichiometry import reaction_stoichiometry

GROUPS = ("elementary", "falloff", "plog", "chebyshev")
"""Reaction groups in row order (one loop each in the kernel)."""

# row flags
FORWARD_POWER = 1       # forward product: C_k^order with the C > 0 guard (FORD, fractional orders)
REVERSE_POWER = 2       # reverse product likewise (RORD)
EQUILIBRIUM = 4         # k_r = k_f min(1/Kc, 1e300)
EXPLICIT_REVERSE = 8    # k_r from the row's REV Arrhenius set
THIRD_BODY = 16         # elementary group: [M] multiplies both directions
BASE_ONE = 32           # [M] = C_total + sum (eff - 1) C_k (else sum eff C_k)
TROE = 64
SRI = 128
ACTIVATED = 256         # chemically activated: blend with k_0
PARTNER = 512           # the last entry of each product without the power form: the collision partner's C,
                        # outside the sign guard (Reaction.collision_partner)

FLAG_NAMES = {"FORWARD_POWER": FORWARD_POWER, "REVERSE_POWER": REVERSE_POWER, "EQUILIBRIUM": EQUILIBRIUM,
              "EXPLICIT_REVERSE": EXPLICIT_REVERSE, "THIRD_BODY": THIRD_BODY, "BASE_ONE": BASE_ONE,
              "TROE": TROE, "SRI": SRI, "ACTIVATED": ACTIVATED, "PARTNER": PARTNER}
"""The flags by name (the template defines the same macros)."""

EFFICIENCY_BASE_MIN = 0.1  # below this, an efficiency vector is summed in full (no cancellation against C_total)
NO_TERM = 1e308  # stands for 1/T = inf of a Troe temperature |T| < 1e-300: exp(-T x 1e308) = 0 as exp(-inf)


@dataclass(frozen=True)
class ArrheniusSets:
    """Stacked Arrhenius sets: k = A exp(b ln T - Ea_R/T [+ B T^-1/3 + C T^-2/3])."""

    A: np.ndarray
    b: np.ndarray
    Ea_R: np.ndarray
    lt_B: np.ndarray
    lt_C: np.ndarray

    @staticmethod
    def of(rates: list[Arrhenius]) -> "ArrheniusSets":
        def column(name: str) -> np.ndarray:
            return np.array([getattr(r, name) for r in rates], dtype=float)
        return ArrheniusSets(column("A"), column("b"), column("Ea_R"), column("lt_B"), column("lt_C"))

    def __len__(self) -> int:
        return self.A.size

    @property
    def landau_teller(self) -> bool:
        return bool(np.any(self.lt_B) or np.any(self.lt_C))


@dataclass(frozen=True)
class Csr:
    """Compressed sparse rows: entries ``index[ptr[r]:ptr[r+1]]``, ``value[...]`` of row r."""

    ptr: np.ndarray
    index: np.ndarray
    value: np.ndarray

    @staticmethod
    def of(rows: list[list[tuple[int, float]]]) -> "Csr":
        ptr = np.zeros(len(rows) + 1, dtype=np.int64)
        ptr[1:] = np.cumsum([len(r) for r in rows])
        flat = [entry for r in rows for entry in r]
        return Csr(ptr, np.array([i for i, _ in flat], dtype=np.int64), np.array([v for _, v in flat], dtype=float))

    def row(self, r: int) -> tuple[np.ndarray, np.ndarray]:
        a, b = self.ptr[r], self.ptr[r + 1]
        return self.index[a:b], self.value[a:b]


@dataclass(frozen=True)
class ChemistryTables:
    """Everything the table-form kernel reads, as arrays (see the module docstring).

    Table species k is mechanism species ``species_order[k]``: the transported
    species, then the QSSA ones.  A *direction* d of the QSSA and stiffness
    tables is row d forward (d < n_rows) or row d - n_rows reverse.
    Thermo: species k has ranges ``thermo_ptr[k]:thermo_ptr[k+1]`` of
    ``thermo_bound`` (where the range starts; the first range's is unused)
    and ``thermo_coeffs`` (rows of NASA9 a1..a7, b1, b2; NASA7 sets have
    a1 = a2 = 0); ``thermo_nasa9[k]``: a range starts at T >= bound (NASA9)
    rather than T > bound (NASA7's T_mid).
    Rows: ``reaction[r]`` is the mechanism reaction of row r; ``group_ptr``
    the rows of each group of ``GROUPS``; ``flags``; ``forward`` (the row's
    rate-line Arrhenius set: k_inf of falloff rows, k_0 of chemically
    activated ones; unused by PLOG/Chebyshev rows); ``extra[r]``: the row's
    entry in the falloff, PLOG or Chebyshev table; ``reverse_index[r]``: its
    REV set in ``reverse`` (or -1).
    """

    mechanism: str
    n_species: int
    weights: np.ndarray
    thermo_ptr: np.ndarray
    thermo_bound: np.ndarray
    thermo_coeffs: np.ndarray
    thermo_nasa9: np.ndarray
    reaction: np.ndarray
    group_ptr: np.ndarray
    flags: np.ndarray
    forward: ArrheniusSets
    extra: np.ndarray
    reverse_index: np.ndarray
    reverse: ArrheniusSets
    forward_factors: Csr
    reverse_factors: Csr
    efficiencies: Csr
    net: Csr
    falloff_second: ArrheniusSets   # the other limit: k_0 of falloff rows, k_inf of chemically activated ones
    falloff_params: np.ndarray      # (n_falloff, 5): Troe a, 1/T3, 1/T1, T2, 0; SRI a, b, c, d, e
    plog_ptr: np.ndarray            # PLOG entry e: pressures plog_ptr[e]:plog_ptr[e+1]
    plog_log_p: np.ndarray          # ln p of each pressure
    plog_set_ptr: np.ndarray        # pressure i: Arrhenius sets plog_set_ptr[i]:plog_set_ptr[i+1]
    plog_sets: ArrheniusSets
    cheb_shape: np.ndarray          # (n_cheb, 3): n_T, n_P, offset of the coefficients (T-major)
    cheb_scale: np.ndarray          # (n_cheb, 4): T_num, T_den, P_num, P_den
    cheb_coeffs: np.ndarray
    species_sums: Csr               # transported species k: (row, nu_net)
    n_transported: int = 0          # table species 0..n_transported-1: the kernel's species; then the QSSA ones
    qssa: "QssaTables | None" = None
    stiff: "StiffTables | None" = None
    scale: "ScaleTables | None" = None
    guarded: bool = False           # Cantera's sign guard on every product without the power form (--products)

    @property
    def split(self) -> bool:
        """Whether q_f and q_r are kept apart (QSSA or stiffness removal follows the rates)."""
        return self.scale is not None

    @property
    def n_rows(self) -> int:
        return self.reaction.size

    def group_rows(self, group: str) -> range:
        g = GROUPS.index(group)
        return range(int(self.group_ptr[g]), int(self.group_ptr[g + 1]))

    def group_of(self, row: int) -> str:
        return GROUPS[int(np.searchsorted(self.group_ptr, row, side="right")) - 1]

    @property
    def landau_teller(self) -> bool:
        return any(s.landau_teller for s in (self.forward, self.reverse, self.falloff_second, self.plog_sets))


# --------------------------------------------------------------------------- building

def _group(r: Reaction) -> str:
    if isinstance(r.rate, PlogRate):
        return "plog"
    if isinstance(r.rate, ChebyshevRate):
        return "chebyshev"
    return "falloff" if r.is_pressure_dependent else "elementary"


def species_order(mech: Mechanism) -> np.ndarray:
    """Mechanism species of the table species: the transported ones (the kernel's order), then the QSSA ones."""
    return np.array(list(mech.transported_indices) + [mech.species_index(n) for n in mech.qss_species],
                    dtype=np.int64)


@per_mechanism
def _positions(mech: Mechanism) -> dict[str, int]:
    """Table species of every species name (read-only: built once per mechanism, as every row reads it)."""
    names = mech.species_names
    return {names[int(m)]: k for k, m in enumerate(species_order(mech))}


def _factors(position: dict[str, int], orders: dict[str, float], stoich: dict[str, float],
             partner: str | None) -> tuple[list, bool, bool]:
    """(species, exponent) entries of one direction's concentration product, whether it takes the power form
    and whether its last entry is the collision partner's, outside the sign guard (as
    ``singe.reference.kinetics``, ``singe.derived.rates.product_factors``): integer stoichiometric exponents
    are written as repeated entries of exponent 1."""
    split = product_factors(orders, stoich, partner)
    if split is None:
        return [(position[name], float(order)) for name, order in orders.items() if order != 0.0], True, False
    names, outside = split
    return [(position[name], 1.0) for name in names + ([outside] if outside else [])], False, outside is not None


def _efficiency_entries(mech: Mechanism, r: Reaction) -> tuple[list, bool]:
    """[M] as (species, weight) entries and whether C_total is added (weights eff - 1): over the
    transported species (the table's first ones; QSSA species are no colliders, as in the reference)."""
    names = mech.species_names
    effs = [r.third_body.efficiency(names[int(m)]) for m in mech.transported_indices]
    base_one = r.third_body.collider is None and min(effs) >= EFFICIENCY_BASE_MIN
    if base_one:
        return [(k, e - 1.0) for k, e in enumerate(effs) if e != 1.0], True
    return [(k, e) for k, e in enumerate(effs) if e != 0.0], False


def _net_entries(mech: Mechanism, r: Reaction) -> list[tuple[int, float]]:
    """(species, products minus reactants) of ``r``'s nonzero net coefficients, by species."""
    net = reaction_stoichiometry(mech).net[r.index]
    position = _positions(mech)
    names = mech.species_names
    return sorted((position[names[int(k)]], float(net[k])) for k in np.flatnonzero(net))


def _falloff_params(r: Reaction) -> tuple[int, list[float]]:
    """The row's falloff flag and 5 parameters (Troe: a, 1/T3, 1/T1, T2, 0; SRI: a, b, c, d, e), from
    ``singe.derived.rates``' conventions (a reciprocal of inf written as ``NO_TERM``)."""
    function = r.falloff
    kind = function.kind if function is not None else "lindemann"
    if kind == "troe":
        a, rT3, rT1, T2 = _troe_parameters(function.params)
        return TROE, [a, min(rT3, NO_TERM), min(rT1, NO_TERM), T2, 0.0]
    if kind == "sri":
        return SRI, list(_sri_parameters(function.params))
    return 0, [0.0] * 5


def _thermo_rows(mech: Mechanism):
    ptr, bounds, coeffs, nasa9 = [0], [], [], []
    for m in species_order(mech):
        species = mech.species[int(m)]
        breaks, sets = species.thermo.pieces
        bounds.extend([0.0, *breaks])
        coeffs.extend(sets)
        ptr.append(ptr[-1] + len(sets))
        nasa9.append(not isinstance(species.thermo, Nasa7))
    return (np.array(ptr, dtype=np.int64), np.array(bounds, dtype=float), np.array(coeffs, dtype=float),
            np.array(nasa9, dtype=bool))


class _RowTables:
    """Accumulates the per-row, falloff, PLOG and Chebyshev tables."""

    def __init__(self, mech: Mechanism):
        self.mech = mech
        self.position = _positions(mech)
        self.flags, self.forward, self.extra, self.reverse_index, self.reverse = [], [], [], [], []
        self.fwd, self.rev, self.eff, self.net = [], [], [], []
        self.falloff_second, self.falloff_params = [], []
        self.plog_ptr, self.plog_log_p, self.plog_set_ptr, self.plog_sets = [0], [], [0], []
        self.cheb_shape, self.cheb_scale, self.cheb_coeffs = [], [], []

    def add(self, r: Reaction) -> None:
        mech, flags = self.mech, 0
        fwd, fwd_power, partner = _factors(self.position, r.reactant_orders(), dict(r.reactants),
                                           r.collision_partner)
        rev, rev_power, _ = _factors(self.position, r.product_orders(), dict(r.products), r.collision_partner)
        flags |= FORWARD_POWER * fwd_power | REVERSE_POWER * rev_power | PARTNER * partner
        self.fwd.append(fwd)
        self.rev.append(rev if r.reversible else [])
        self.net.append(_net_entries(mech, r) if r.reversible and (fwd_power or rev_power) else [])
        if r.reversible and r.reverse_rate is not None:
            flags |= EXPLICIT_REVERSE
            self.reverse_index.append(len(self.reverse))
            self.reverse.append(r.reverse_rate)
        else:
            flags |= EQUILIBRIUM * r.reversible
            self.reverse_index.append(-1)
        if r.kind in THIRD_BODY_KINDS:
            entries, base_one = _efficiency_entries(mech, r)
            flags |= BASE_ONE * base_one | THIRD_BODY * (r.kind == "three-body")
            self.eff.append(entries)
        else:
            self.eff.append([])
        flags |= self._rate(r)
        self.flags.append(flags)

    def _rate(self, r: Reaction) -> int:
        group = _group(r)
        zero = Arrhenius(0.0, 0.0, 0.0)
        if group == "elementary":
            self.forward.append(r.rate)
            self.extra.append(-1)
            return 0
        if group == "falloff":
            activated = r.kind == "chemically-activated"
            self.forward.append(r.k_low if activated else r.k_high)
            self.extra.append(len(self.falloff_second))
            self.falloff_second.append(r.k_high if activated else r.k_low)
            kind, params = _falloff_params(r)
            self.falloff_params.append(params)
            return kind | ACTIVATED * activated
        self.forward.append(zero)
        if group == "plog":
            self.extra.append(len(self.plog_ptr) - 1)
            for pressure in r.rate.pressures:
                self.plog_log_p.append(np.log(pressure))
                self.plog_sets.extend(a for p, a in r.rate.entries if p == pressure)
                self.plog_set_ptr.append(len(self.plog_sets))
            self.plog_ptr.append(len(self.plog_log_p))
            return 0
        rate = r.rate
        self.extra.append(len(self.cheb_shape))
        n_T, n_P = rate.shape
        self.cheb_shape.append((n_T, n_P, len(self.cheb_coeffs)))
        self.cheb_coeffs.extend(c for row in rate.coeffs for c in row)
        self.cheb_scale.append((-1.0 / rate.T_min - 1.0 / rate.T_max, 1.0 / (1.0 / rate.T_max - 1.0 / rate.T_min),
                                -np.log10(rate.P_min) - np.log10(rate.P_max),
                                1.0 / (np.log10(rate.P_max) - np.log10(rate.P_min))))
        return 0


def _species_sums(mech: Mechanism, rows: list[Reaction]) -> Csr:
    n_transported = len(mech.transported_species)
    per_species: list[list[tuple[int, float]]] = [[] for _ in range(n_transported)]
    for row, r in enumerate(rows):
        for k, nu in _net_entries(mech, r):
            if k < n_transported:  # no output of the QSSA species
                per_species[k].append((row, nu))
    return Csr.of(per_species)


@per_mechanism
def chemistry_tables(mech: Mechanism, products: str = DEFAULT_PRODUCTS) -> ChemistryTables:
    """The tables of ``mech`` with their sign guard (``ChemistryTables.guarded``: ``CompileOptions.products``
    'cantera'), built once per mechanism."""
    tables = _chemistry_tables(mech)
    return dataclasses.replace(tables, guarded=True) if guards_products(products) else tables


@per_mechanism
def _chemistry_tables(mech: Mechanism) -> ChemistryTables:
    """The tables of ``mech``, with its QSSA and stiffness tables."""
    rows = sorted(mech.reactions, key=lambda r: (GROUPS.index(_group(r)), r.index))
    counts = Counter(_group(r) for r in rows)
    group_ptr = np.cumsum([0] + [counts[g] for g in GROUPS]).astype(np.int64)
    acc = _RowTables(mech)
    for r in rows:
        acc.add(r)
    thermo_ptr, thermo_bound, thermo_coeffs, thermo_nasa9 = _thermo_rows(mech)
    return ChemistryTables(
        mechanism=mech.name, n_species=mech.n_species,
        weights=np.array(mech.molecular_weights, dtype=float)[species_order(mech)],
        thermo_ptr=thermo_ptr, thermo_bound=thermo_bound, thermo_coeffs=thermo_coeffs, thermo_nasa9=thermo_nasa9,
        reaction=np.array([r.index for r in rows], dtype=np.int64), group_ptr=group_ptr,
        flags=np.array(acc.flags, dtype=np.int64), forward=ArrheniusSets.of(acc.forward),
        extra=np.array(acc.extra, dtype=np.int64), reverse_index=np.array(acc.reverse_index, dtype=np.int64),
        reverse=ArrheniusSets.of(acc.reverse), forward_factors=Csr.of(acc.fwd), reverse_factors=Csr.of(acc.rev),
        efficiencies=Csr.of(acc.eff), net=Csr.of(acc.net), falloff_second=ArrheniusSets.of(acc.falloff_second),
        falloff_params=np.array(acc.falloff_params, dtype=float).reshape(-1, 5),
        plog_ptr=np.array(acc.plog_ptr, dtype=np.int64), plog_log_p=np.array(acc.plog_log_p, dtype=float),
        plog_set_ptr=np.array(acc.plog_set_ptr, dtype=np.int64), plog_sets=ArrheniusSets.of(acc.plog_sets),
        cheb_shape=np.array(acc.cheb_shape, dtype=np.int64).reshape(-1, 3),
        cheb_scale=np.array(acc.cheb_scale, dtype=float).reshape(-1, 4),
        cheb_coeffs=np.array(acc.cheb_coeffs, dtype=float), species_sums=_species_sums(mech, rows),
        n_transported=len(mech.transported_species), **extension_tables(mech, rows))


# --------------------------------------------------------------------------- QSSA and stiffness removal

# cells of the QSSA system: what a cell holds after the coefficients phase (P_ij / D_i = a_ij)
EXTERNAL, OFF_DIAGONAL, DIAGONAL = 0, 1, 2   # a_ij (j solved earlier), 0 - a_ij, 1 - a_ii
# operations of the solve, over solve slots u (x_i: u = i; cell c: u = n_qss + c)
ADD_PRODUCT, SUBTRACT_PRODUCT, DIVIDE = 0, 1, 2   # s[d] += s[a] s[b]; s[d] -= s[a] s[b]; s[d] = s[a] / s[b]
NO_QSSA, DROPPED = -1, -2   # a direction's QSSA scale: none, dropped (rate 0), else x_i of QSSA species i


@dataclass(frozen=True)
class QssaTables:
    """The linearized QSSA system (``singe.derived.qssa``) as tables over directions.

    ``sums``: rows 2i (D_i: consumers of QSSA species i), 2i + 1 (P_i0: its sources) and
    2 n_qss + c (P_ij of cell c): (direction, multiplicity).  Species i owns cells
    ``cell_ptr[i]:cell_ptr[i+1]``, of mode ``cell_mode`` (EXTERNAL, OFF_DIAGONAL, DIAGONAL) and
    column ``cell_j``: the structurally non-zero a_ij and the fill-in of the elimination (no terms).
    ``ops`` (n_ops, 4): op, destination, a, b over solve slots, the elimination and back-substitution
    of ``singe.reference.qssa.solve`` without its structural zeros, component by component.
    """

    n_qss: int
    sums: Csr
    cell_ptr: np.ndarray
    cell_mode: np.ndarray
    cell_j: np.ndarray
    ops: np.ndarray

    @property
    def n_cells(self) -> int:
        return self.cell_mode.size


@dataclass(frozen=True)
class StiffTables:
    """Stiff species s (``Mechanism.stiff_species`` order): table species ``species[s]`` (a transported
    one), weight, and (direction, nu) of the rates destroying (nu' forward, nu'' reverse) and creating it."""

    species: np.ndarray
    weights: np.ndarray
    destruction: Csr
    creation: Csr


@dataclass(frozen=True)
class ScaleTables:
    """``direction_qss`` (2 n_rows): each direction's QSSA scale (NO_QSSA, DROPPED, i); entries
    (directions with a QSSA scale or a stiffness factor, ascending) ``direction`` and ``factors``:
    (stiff species, nu) applied in order after x_i."""

    direction_qss: np.ndarray
    direction: np.ndarray
    factors: Csr

    @property
    def n_entries(self) -> int:
        return self.direction.size


def _qssa_pattern(system) -> tuple[list[dict[int, int]], list[tuple]]:
    """Per QSSA species, its cells (column -> mode) with the fill-in, and the solve as operations on
    symbolic slots (('x', i) or (i, j)), component by component as ``singe.reference.qssa.solve``."""
    cells: list[dict[int, int]] = [{} for _ in range(system.n_qss)]
    ops: list[tuple] = []
    for component in system.components:
        inside = set(component)
        pattern = set()
        for i in component:
            for j in system.dependencies(i):
                if j in inside:
                    pattern.add((i, j))
                else:
                    cells[i][j] = EXTERNAL
                    ops.append((ADD_PRODUCT, ("x", i), (i, j), ("x", j)))
            pattern.add((i, i))
        ops += _eliminate(component, pattern)
        for i, j in pattern:
            cells[i][j] = DIAGONAL if i == j else OFF_DIAGONAL
    return cells, ops


def _eliminate(component: tuple[int, ...], pattern: set) -> list[tuple]:
    """Gaussian elimination without pivoting, then back-substitution, skipping structural zeros
    (``pattern`` gains the fill-in)."""
    ops, m = [], len(component)
    for kk, k in enumerate(component):
        for i in component[kk + 1:]:
            if (i, k) not in pattern:
                continue  # factor 0: nothing changes
            ops.append((DIVIDE, (i, k), (i, k), (k, k)))  # the factor, in M_ik's cell
            for j in component[kk + 1:]:
                if (k, j) in pattern:
                    pattern.add((i, j))
                    ops.append((SUBTRACT_PRODUCT, (i, j), (i, k), (k, j)))
            ops.append((SUBTRACT_PRODUCT, ("x", i), (i, k), ("x", k)))
    for ii in reversed(range(m)):
        i = component[ii]
        for j in component[ii + 1:]:
            if (i, j) in pattern:
                ops.append((SUBTRACT_PRODUCT, ("x", i), (i, j), ("x", j)))
        ops.append((DIVIDE, ("x", i), ("x", i), (i, i)))
    return ops


def _directions(row_of: np.ndarray, n_rows: int, terms) -> list[tuple[int, float]]:
    return [(int(d * n_rows + row_of[r]), float(nu)) for r, d, nu in terms]


def qssa_tables(mech: Mechanism, row_of: np.ndarray) -> QssaTables:
    system = build_qssa_system(mech)
    nq, n_rows = system.n_qss, row_of.size
    cells, symbolic = _qssa_pattern(system)
    cell_id, modes, columns, ptr = {}, [], [], [0]
    for i in range(nq):
        for j in sorted(cells[i]):
            cell_id[(i, j)] = len(modes)
            modes.append(cells[i][j])
            columns.append(j)
        ptr.append(len(modes))
    sums = [[] for _ in range(2 * nq + len(modes))]
    for i in range(nq):
        sums[2 * i] = _directions(row_of, n_rows, system.consumers[i])
        sums[2 * i + 1] = _directions(row_of, n_rows, system.sources[i])
        for j, r, d, nu in system.couplings[i]:
            sums[2 * nq + cell_id[(i, j)]].append((int(d * n_rows + row_of[r]), float(nu)))

    def slot(symbol) -> int:
        return symbol[1] if symbol[0] == "x" else nq + cell_id[symbol]
    ops = np.array([(op, slot(d), slot(a), slot(b)) for op, d, a, b in symbolic], dtype=np.int64).reshape(-1, 4)
    return QssaTables(nq, Csr.of(sums), np.array(ptr, dtype=np.int64), np.array(modes, dtype=np.int64),
                      np.array(columns, dtype=np.int64), ops)


def _direction_qss(mech: Mechanism, row_of: np.ndarray) -> np.ndarray:
    n_rows = row_of.size
    scale = np.full(2 * n_rows, NO_QSSA, dtype=np.int64)
    if mech.qss_species:
        system = build_qssa_system(mech)
        for r, d in system.dropped:
            scale[d * n_rows + row_of[r]] = DROPPED
        for r, d, k in system.scaled:
            scale[d * n_rows + row_of[r]] = k
    return scale


def stiff_tables(mech: Mechanism, row_of: np.ndarray, direction_qss: np.ndarray) -> StiffTables:
    nu_r, nu_p = stiff_stoichiometry(mech)
    n_rows = row_of.size
    position = _positions(mech)
    destruction, creation = [], []
    for s in range(len(mech.stiff_species)):
        lost, made = [], []
        for r, reaction in enumerate(mech.reactions):
            for d, consumed, produced in ((0, nu_r, nu_p), (1, nu_p, nu_r)):
                direction = d * n_rows + int(row_of[r])
                if (d == 1 and not reaction.reversible) or direction_qss[direction] == DROPPED:
                    continue  # rate 0
                if consumed[s, r] > 0.0:
                    lost.append((direction, float(consumed[s, r])))
                if produced[s, r] > 0.0:
                    made.append((direction, float(produced[s, r])))
        destruction.append(sorted(lost))
        creation.append(sorted(made))
    species = np.array([position[name] for name in mech.stiff_species], dtype=np.int64)
    weights = np.array([mech.molecular_weights[mech.species_index(name)] for name in mech.stiff_species])
    return StiffTables(species, weights, Csr.of(destruction), Csr.of(creation))


def scale_tables(direction_qss: np.ndarray, stiff: StiffTables | None) -> ScaleTables:
    factors: dict[int, list[tuple[int, float]]] = {}
    if stiff is not None:
        for s in range(stiff.species.size):
            for direction, nu in zip(*stiff.destruction.row(s)):
                factors.setdefault(int(direction), []).append((s, float(nu)))
    directions = sorted(set(np.flatnonzero(direction_qss != NO_QSSA).tolist()) | set(factors))
    return ScaleTables(direction_qss, np.array(directions, dtype=np.int64),
                       Csr.of([factors.get(d, []) for d in directions]))


def extension_tables(mech: Mechanism, rows: list[Reaction]) -> dict:
    """The ``qssa``, ``stiff`` and ``scale`` tables of ``mech`` (None without QSSA and stiff species)."""
    if not (mech.qss_species or mech.stiff_species):
        return {}
    row_of = np.empty(len(rows), dtype=np.int64)
    row_of[[r.index for r in rows]] = np.arange(len(rows))
    direction_qss = _direction_qss(mech, row_of)
    qssa = qssa_tables(mech, row_of) if mech.qss_species else None
    stiff = stiff_tables(mech, row_of, direction_qss) if mech.stiff_species else None
    return {"qssa": qssa, "stiff": stiff, "scale": scale_tables(direction_qss, stiff)}
