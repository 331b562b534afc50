"""Dataflow graph of the chemistry kernel (paper §3.4; docs/formulas.md §3, §4, §7, §8).

Inputs: temperature [K], pressure [Pa], the mass fractions of the transported
species and, when the mechanism has stiff species, the time step dt [s]
(0: no stiffness removal) and the diffusion source of every transported
species [kg/m^3/s].  Output: the net production rate of every transported
species [kmol/m^3/s], what ``singe.reference.kinetics.net_production_rates``
computes (simultaneous stiffness form).

The operations, in the order of the paper's phases:

* point values (replicated: each warp that needs them computes them): T,
  ln T, 1/T, T^-1/3 and T^-2/3 (Landau–Teller), ln P and log10 P (PLOG,
  Chebyshev), 1/dt and 2/dt, the total concentration P/(R T) (third
  bodies);
* mixture: the molar density P/(R T sum_k Y_k/W_k) (replicated too), and
  C_k per species;
* one third-body concentration per distinct efficiency vector (a
  ``(+SPECIES)`` collider's [M] is its C, no operation);
* per species entering an equilibrium constant, its reduced potential
  gamma_k = g_k/RT + ln(R T/P_atm) - shift (NASA7 or NASA9, range chosen by
  ``sel``) and the factors exp(gamma_k), exp(-gamma_k) the product forms
  of 1/Kc read (``singe.kernels.equilibrium``);
* one operation per CHEMKIN reaction: its forward and reverse rates of
  progress (QSSA concentrations 1, directions the linearized QSSA drops not
  computed);
* QSSA (``singe.reference.qssa``): per QSSA species D_i, a_i0 and a_ij; the
  elimination of every strongly connected component one row per operation,
  then back-substitution one species per operation; per reaction the
  scaling of its rates by the QSSA concentrations;
* stiffness (``singe.reference.stiffness``, simultaneous form): per stiff
  species DDOT, CDOT, the threshold test and the factor r_s; per reaction the
  scaling of the directions that destroy stiff species;
* output: the last operation of each reaction writes nu (q_f - q_r) for
  every stoichiometric coefficient nu it has among the transported species;
  per species a reduction adds them and an operation stores the sum.

Graph values: ``C{t}`` and ``wdot{t}`` are indexed by the position t in
``mech.transported_species``, ``g{i}`` (gamma), ``eg{i}`` and ``fg{i}``
(its exp and 1/exp) by the index i in ``mech.species_names``, the QSSA
values (``qx{q}`` ...) by the position q in ``mech.qss_species``, ``rs{s}`` by the position s in ``mech.stiff_species``;
``qf{j}``, ``qr{j}`` are the rates of progress of reaction j (0-based) as
computed, ``qfx{j}``, ``qrx{j}`` after the QSSA scaling.

Constants: mechanism numbers are ``Const`` (ln A, b, E/R, fit coefficients,
efficiencies, FORD orders, fractional coefficients); structural literals and
physical constants are ``Imm``.  Operation outputs are not listed by hand:
an operation outputs the values it defines that another operation reads, and
operations whose values nobody reads are dropped (see ``_finish``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from singe.constants import BIG_NUMBER, C_FLOOR, D_FLOOR, GAS_CONSTANT, SMALL_NUMBER
from singe.derived.qssa import FORWARD, REVERSE, QssaSystem, build_qssa_system
from singe.derived.rates import (DEFAULT_PRODUCTS, THIRD_BODY_KINDS, guards_products, kinetics_tables,
                                 negative_factors_allowed, product_factors)
from singe.derived.stoichiometry import reaction_stoichiometry, stiff_stoichiometry
from singe.errors import SingeInternalError
from singe.kernels.equilibrium import EquilibriumForms, ProductForm, equilibrium_forms
from singe.kernels.ir import Const, DataflowGraph, Imm, InstrBuilder, Instr, Operand, Operation, Reg
from singe.kernels.transport import reduction_op
from singe.mechanism import Arrhenius, ChebyshevRate, Mechanism, Nasa7, PlogRate, Reaction

LN10 = math.log(10.0)
THIRD_BODY_CORRECTIONS_MIN = 0.1  # smallest efficiency for [M] = total + sum (eff - 1) C (bounded cancellation)

# point values (replicated operations)
T, LNT, INVT = Reg("T"), Reg("lnT"), Reg("invT")
P, LNP, LOG10P = Reg("P"), Reg("lnP"), Reg("log10P")
TM13, TM23 = Reg("Tm13"), Reg("Tm23")
RDT, TWO_RDT = Reg("rdt"), Reg("two_rdt")


# --------------------------------------------------------------------------
# Drafts: operations whose outputs are derived from the whole graph
# --------------------------------------------------------------------------

@dataclass
class _Draft:
    """An operation under construction: ``outputs`` are filled in by ``_finish``."""

    name: str
    kind: str
    builder: InstrBuilder
    replicated: bool = False

    @property
    def defined(self) -> list[str]:
        return [i.dst for i in self.builder.instrs if i.dst is not None]

    @property
    def inputs(self) -> list[str]:
        defined, inputs = set(), []
        for instr in self.builder.instrs:
            for name in instr.registers_read():
                if name not in defined and name not in inputs:
                    inputs.append(name)
            if instr.dst is not None:
                defined.add(instr.dst)
        return inputs

    @property
    def stores(self) -> bool:
        return any(i.opcode == "stg" for i in self.builder.instrs)


def _finish(items: list) -> list[Operation]:
    """Operations from drafts (and ready ``Operation``s, kept as they are).

    A draft outputs the values it defines that some other operation reads;
    a draft that neither outputs nor stores anything is dropped, repeatedly
    (a Gibbs function read only by a dropped reaction goes too).
    """
    inputs = {id(item): (item.inputs if isinstance(item, _Draft) else list(item.inputs)) for item in items}
    while True:
        read = {name for item in items for name in inputs[id(item)]}
        dead = [item for item in items if isinstance(item, _Draft) and not item.stores
                and not read.intersection(item.defined)]
        if not dead:
            break
        dead_ids = {id(item) for item in dead}
        items = [item for item in items if id(item) not in dead_ids]
    read = {name for item in items for name in inputs[id(item)]}
    ops = []
    for item in items:
        if isinstance(item, Operation):
            ops.append(item)
            continue
        outputs = [name for name in item.defined if name in read]
        ops.append(Operation(item.name, item.kind, tuple(item.builder.instrs), tuple(inputs[id(item)]),
                             tuple(outputs), replicated=item.replicated))
    return ops


class _Builder(InstrBuilder):
    """An ``InstrBuilder`` whose temporaries can be renamed after the fact
    (``_named``): later reads of the old name are redirected."""

    def __init__(self, prefix: str):
        super().__init__(prefix)
        self.renamed: dict[str, str] = {}

    def emit(self, opcode: str, *srcs: Operand, dst: str | None = None) -> Reg:
        srcs = tuple(Reg(self.renamed.get(s.name, s.name)) if isinstance(s, Reg) else s for s in srcs)
        return super().emit(opcode, *srcs, dst=dst)

    def is_temp(self, name: str) -> bool:
        return name.startswith(f"{self.prefix}.t") and any(i.dst == name for i in self.instrs)


def _named(b: _Builder, value: Operand, name: str) -> str:
    """Give ``value`` the graph-value name ``name`` and return the name it has:
    a temporary of ``b`` is renamed, a value already named keeps its name, a
    literal is moved into a register."""
    if isinstance(value, Reg):
        current = b.renamed.get(value.name, value.name)
        if not b.is_temp(current):
            return current
        b.instrs[:] = [Instr(i.opcode, name if i.dst == current else i.dst,
                             tuple(Reg(name) if isinstance(s, Reg) and s.name == current else s for s in i.srcs),
                             i.field, i.index) for i in b.instrs]
        b.renamed[value.name] = name
        b.renamed[current] = name
        return name
    b.emit("mov", value, dst=name)
    return name


def _coefficient(nu: float) -> Operand:
    """A stoichiometric coefficient: a literal when whole, a mechanism constant otherwise."""
    return Imm(float(nu)) if float(nu).is_integer() else Const(float(nu))


def _weighted_sum(b: _Builder, terms: list[tuple[Operand, float]], coefficient=_coefficient,
                  unit_first: bool = True) -> Operand | None:
    """sum_k nu_k x_k in the order given (add / sub for nu = +-1, fma with
    ``coefficient(nu)`` otherwise); None when empty.  ``unit_first`` moves the
    first term of coefficient 1 to the front, which saves a multiplication."""
    if unit_first:
        first = next((n for n, (_, nu) in enumerate(terms) if nu == 1.0), 0)
        terms = terms[first:first + 1] + terms[:first] + terms[first + 1:]
    total: Operand | None = None
    for x, nu in terms:
        if total is None:
            total = x if nu == 1.0 else b.emit("mul", x, coefficient(nu))
        elif nu == 1.0:
            total = b.emit("add", total, x)
        elif nu == -1.0:
            total = b.emit("sub", total, x)
        else:
            total = b.emit("fma", x, coefficient(nu), total)
    return total


def _power(b: _Builder, x: Operand, order: float) -> Operand:
    """x^order: repeated products for whole orders, exp(order ln x) otherwise."""
    if float(order).is_integer() and order >= 1:
        result = x
        for _ in range(int(order) - 1):
            result = b.emit("mul", result, x)
        return result
    return b.emit("exp", b.emit("mul", b.emit("log", x), Const(float(order))))


# --------------------------------------------------------------------------
# The plan: what the mechanism needs, decided once
# --------------------------------------------------------------------------

@dataclass
class _Plan:
    """Structure of the chemistry graph of one mechanism.

    ``alive[j]``: whether the forward and reverse directions of reaction j
    are computed (irreversible reverses and QSSA-dropped directions are not);
    ``rates[j]``: the current value of each direction (None when not
    computed), updated as phases scale them; ``terms[j]``: nu -> value of
    nu (q_f - q_r), written by the last operation of reaction j.
    """

    mech: Mechanism
    transported: dict[int, int]
    qssa: QssaSystem | None
    alive: list[tuple[bool, bool]]
    qssa_scalings: dict[int, list[tuple[int, int]]]
    stiff_reactants: np.ndarray
    stiff_products: np.ndarray
    stiff_active: list[int]
    output_nus: list[set[float]]
    guarded: bool = False  # Cantera's sign guard on the products (CompileOptions.products 'cantera')
    third_body: dict[int, str] = field(default_factory=dict)
    rates: list[list[str | None]] = field(default_factory=list)
    terms: list[dict[float, str]] = field(default_factory=list)
    x: dict[int, str] = field(default_factory=dict)

    def concentration(self, species: str) -> Reg | None:
        """C of a transported species; None for QSSA species (C = 1 in rates)."""
        t = self.transported.get(self.mech.species_index(species))
        return None if t is None else Reg(f"C{t}")

    def stiff_destroys(self, j: int, direction: int) -> list[tuple[int, float]]:
        """(stiff position, coefficient) of the stiff species direction ``direction`` of j destroys."""
        nu = self.stiff_reactants if direction == FORWARD else self.stiff_products
        return [(s, float(nu[s, j])) for s in self.stiff_active if nu[s, j] > 0.0]

    def stages(self, j: int) -> list[str]:
        stages = ["reaction"]
        if self.qssa_scalings.get(j):
            stages.append("qssa")
        if any(self.alive[j][d] and self.stiff_destroys(j, d) for d in (FORWARD, REVERSE)):
            stages.append("stiffness")
        return stages


def _plan(mech: Mechanism, guarded: bool = False) -> _Plan:
    transported = {int(i): t for t, i in enumerate(mech.transported_indices)}
    qssa = build_qssa_system(mech) if mech.qss_species else None
    dropped = set(qssa.dropped) if qssa else set()
    alive = [((r.index, FORWARD) not in dropped, r.reversible and (r.index, REVERSE) not in dropped)
             for r in mech.reactions]
    scalings: dict[int, list[tuple[int, int]]] = {}
    for j, d, k in (qssa.scaled if qssa else ()):
        scalings.setdefault(j, []).append((d, k))
    nu_r, nu_p = stiff_stoichiometry(mech)
    active = [s for s in range(len(mech.stiff_species))
              if any(alive[j][0] and nu_r[s, j] > 0 or alive[j][1] and nu_p[s, j] > 0
                     for j in range(len(mech.reactions)))]
    nu_net = kinetics_tables(mech).nu_net
    output_nus = [{float(nu_net[i, j]) for i in transported if nu_net[i, j] != 0.0}
                  for j in range(len(mech.reactions))]
    plan = _Plan(mech, transported, qssa, alive, scalings, nu_r, nu_p, active, output_nus, guarded)
    plan.rates = [[None, None] for _ in mech.reactions]
    plan.terms = [{} for _ in mech.reactions]
    return plan


# --------------------------------------------------------------------------
# Point values and the mixture
# --------------------------------------------------------------------------

def point_drafts(mech: Mechanism) -> list[_Draft]:
    """Replicated operations: T, ln T, 1/T; P; ln P and log10 P; T^-1/3, T^-2/3;
    1/dt and 2/dt.  Unused ones are dropped by ``_finish``."""
    drafts = []
    b = _Builder("temp")
    b.load("temperature", 0, dst="T")
    b.emit("log", T, dst="lnT")
    b.emit("rcp", T, dst="invT")
    drafts.append(_Draft("temperature", "point", b, replicated=True))
    b = _Builder("pres")
    b.load("pressure", 0, dst="P")
    drafts.append(_Draft("pressure", "point", b, replicated=True))
    rates = [r.rate for r in mech.reactions]
    if any(isinstance(rate, (PlogRate, ChebyshevRate)) for rate in rates):
        b = _Builder("logp")
        b.emit("log", P, dst="lnP")
        if any(isinstance(rate, ChebyshevRate) for rate in rates):
            b.emit("mul", LNP, Imm(1.0 / LN10), dst="log10P")
        drafts.append(_Draft("log_pressure", "point", b, replicated=True))
    b = _Builder("lt")
    b.emit("exp", b.emit("mul", LNT, Imm(-1.0 / 3.0)), dst="Tm13")
    b.emit("mul", TM13, TM13, dst="Tm23")
    drafts.append(_Draft("landau_teller", "point", b, replicated=True))
    if mech.stiff_species:
        b = _Builder("dt")
        b.emit("rcp", b.load("dt", 0), dst="rdt")
        b.emit("mul", RDT, Imm(2.0), dst="two_rdt")
        drafts.append(_Draft("time_step", "point", b, replicated=True))
    return drafts


def mixture_items(mech: Mechanism) -> list:
    """The molar density P / (R T sum_k Y_k/W_k) [kmol/m^3], one replicated
    operation (every warp that needs it sums the mass fractions itself: no
    warp waits for another's partial sum at the start of a slab), and
    C_k = (Y_k/W_k) density per transported species."""
    weights = mech.molecular_weights[mech.transported_indices]
    b = _Builder("dens")
    total: Operand | None = None
    for t, w in enumerate(weights):
        y = b.load("mass_fractions", t)
        total = b.emit("mul", y, Const(1.0 / w)) if total is None else b.emit("fma", y, Const(1.0 / w), total)
    scaled = b.emit("mul", b.emit("mul", P, INVT), Imm(1.0 / GAS_CONSTANT))
    b.emit("div", scaled, total, dst="density")
    items: list = [_Draft("density", "mixture", b, replicated=True)]
    for t, w in enumerate(weights):
        b = _Builder(f"conc{t}")
        moles = b.emit("mul", b.load("mass_fractions", t), Const(1.0 / w))
        b.emit("mul", moles, Reg("density"), dst=f"C{t}")
        items.append(_Draft(f"concentration_{t}", "species", b))
    return items


def third_body_items(plan: _Plan) -> list:
    """One [M] per distinct efficiency vector over the transported species
    (QSSA species are not in the state: their C is 0 here).  When every
    efficiency is at least 0.1 and it is cheaper, [M] = sum_k C_k +
    sum_k (eff_k - 1) C_k, with the sum of concentrations a reduction."""
    mech = plan.mech
    efficiencies = kinetics_tables(mech).efficiencies[:, mech.transported_indices]
    vectors: dict[tuple[float, ...], str] = {}
    items: list = []
    use_total = False
    for r in mech.reactions:
        if r.kind not in THIRD_BODY_KINDS:
            continue
        vector = tuple(float(e) for e in efficiencies[r.index])
        if vector not in vectors:
            draft, vectors[vector], total = _third_body_draft(len(vectors), vector)
            items.append(draft)
            use_total |= total
        plan.third_body[r.index] = vectors[vector]
    if use_total:
        items.insert(0, total_concentration_draft())
    return items


def total_concentration_draft() -> _Draft:
    """sum_k C_k = density sum_k Y_k/W_k = P / (R T), exactly (the density's
    definition): a replicated point value, not a reduction over every warp's
    concentrations."""
    b = _Builder("ctot")
    b.emit("mul", b.emit("mul", P, INVT), Imm(1.0 / GAS_CONSTANT), dst="total_concentration")
    return _Draft("total_concentration", "point", b, replicated=True)


def _third_body_draft(n: int, vector: tuple[float, ...]) -> tuple[_Draft, str, bool]:
    """The operation, the name of [M] (a single collider's C is used as it is)
    and whether it reads the total concentration."""
    b = _Builder(f"tb{n}")
    special = [(t, e) for t, e in enumerate(vector) if e != 1.0]
    direct = [(t, e) for t, e in enumerate(vector) if e != 0.0]
    direct_cost = sum(1 if e == 1.0 else 2 for _, e in direct) - 1
    corrections = min(vector) >= THIRD_BODY_CORRECTIONS_MIN and 2 * len(special) < direct_cost
    if corrections:
        total: Operand = Reg("total_concentration")
        for t, e in special:
            total = b.emit("fma", Const(e - 1.0), Reg(f"C{t}"), total)
    else:
        terms = [(Reg(f"C{t}"), e) for t, e in direct]  # efficiencies are mechanism constants
        total = _weighted_sum(b, terms, coefficient=Const, unit_first=False) or Imm(0.0)
    return _Draft(f"third_body_{n}", "third_body", b), _named(b, total, f"M{n}"), corrections


def _gibbs_terms(a) -> list[float]:
    """g/RT coefficients of one NASA9 set a1..a7, b1, b2 (NASA7 sets are NASA9
    sets with a1 = a2 = 0): of 1, ln T, 1/T, T, T^2, T^3, T^4, ln T / T, 1/T^2."""
    return [a[2] - a[8], -a[2], a[1] + a[7], -a[3] / 2.0, -a[4] / 6.0, -a[5] / 12.0, -a[6] / 20.0,
            a[1], -0.5 * a[0]]


def _piecewise(b: _Builder, thermo, values: list[Operand]) -> Operand:
    """The value of the temperature range T falls in: a chain of selects
    (NASA7: T <= T_mid takes the low range's; NASA9: T >= a bound takes the range above it)."""
    if all(v == values[0] for v in values):
        return values[0]
    breaks = thermo.pieces[0]
    if isinstance(thermo, Nasa7):
        return b.emit("sel", T, Const(breaks[0]), values[0], values[1])
    value = values[-1]
    for bound, below in zip(reversed(breaks), reversed(values[:-1])):
        value = b.emit("sel", Const(bound), T, value, below)
    return value


def _gibbs_polynomial(b: _Builder, terms: list[float]) -> Reg:
    """g/RT of one temperature range from its ``_gibbs_terms``."""
    c0, c_ln, c_inv, c1, c2, c3, c4, c_ln_inv, c_inv2 = terms
    poly = b.emit("mul", b.emit("fma", b.emit("fma", b.emit("fma", Const(c4), T, Const(c3)), T, Const(c2)), T,
                                Const(c1)), T)
    if c_ln_inv != 0.0:
        poly = b.emit("fma", Const(c_ln_inv), b.emit("mul", LNT, INVT), poly)
    if c_inv2 != 0.0:
        poly = b.emit("fma", Const(c_inv2), b.emit("mul", INVT, INVT), poly)
    return b.emit("add", b.emit("fma", Const(c_inv), INVT, b.emit("fma", Const(c_ln), LNT, poly)), Const(c0))


def _reduced_terms(a, forms: EquilibriumForms, k: int, sign: float) -> list[float]:
    """``sign`` gamma_k's coefficients: g/RT's (``_gibbs_terms``) with those
    of 1, ln T and 1/T reduced (``EquilibriumForms.reduced``)."""
    c0, c_ln, c_inv, *rest = _gibbs_terms(a)
    return [sign * float(c) for c in (*forms.reduced(k, c0, c_ln, c_inv), *rest)]


def gibbs_draft(mech: Mechanism, i: int, factors: set[int], exponent: bool) -> _Draft:
    """The reduced potential gamma_i of species i (docs/formulas.md §3):
    g_i/RT = (a1 - a7) - a1 ln T + a6/T - a2 T/2 - a3 T^2/6 - a4 T^3/12 - a5 T^4/20
    (NASA7; NASA9 adds ln T / T and 1/T^2) plus ln(R T/P_atm) and the
    elements' shift, in the temperature range T falls in: every range's
    polynomial, then one select of the results (not a select per
    coefficient: each would read two constants).  ``exponent``: gamma is
    read by an exponent-form reaction (``g{i}``); ``factors``: the product
    forms read E = exp(gamma) (+1, ``eg{i}``) and F = 1/E (-1, ``fg{i}``);
    F alone is exp(-gamma), the polynomial's coefficients negated."""
    thermo = mech.species[i].thermo
    sign = -1.0 if factors == {-1} and not exponent else 1.0
    b = _Builder(f"gb{i}")
    forms = equilibrium_forms(mech)
    per_range = [_reduced_terms(a, forms, i, sign) for a in thermo.pieces[1]]
    if all(terms == per_range[0] for terms in per_range):
        per_range = per_range[:1]
    gamma = _piecewise(b, thermo, [_gibbs_polynomial(b, terms) for terms in per_range])
    if sign < 0.0:
        _named(b, b.emit("exp", gamma), f"fg{i}")
        return _Draft(f"gibbs_{i}", "gibbs", b)
    _named(b, gamma, f"g{i}")
    if 1 in factors:
        _named(b, b.emit("exp", Reg(f"g{i}")), f"eg{i}")
    if -1 in factors:
        inverse = b.emit("rcp", Reg(f"eg{i}")) if 1 in factors else b.emit("exp", b.emit("mul", Reg(f"g{i}"), Imm(-1.0)))
        _named(b, inverse, f"fg{i}")
    return _Draft(f"gibbs_{i}", "gibbs", b)


def gibbs_items(plan: _Plan) -> list[_Draft]:
    """One Gibbs operation per species, with the factors the equilibrium
    reactions whose reverse direction is computed read."""
    forms: EquilibriumForms = equilibrium_forms(plan.mech)
    factors, potentials = forms.reads(j for j in forms.forms if plan.alive[j][REVERSE])
    return [gibbs_draft(plan.mech, i, factors.get(i, set()), i in potentials) for i in range(plan.mech.n_species)]


# --------------------------------------------------------------------------
# Rate constants
# --------------------------------------------------------------------------

def _arrhenius(b: _Builder, rate: Arrhenius) -> Operand:
    """k = A exp(b ln T - (E/R)/T [+ B T^-1/3 + C T^-2/3]), as exp(ln A + ...)."""
    if rate.A == 0.0:
        return Imm(0.0)
    terms = [(c, x) for c, x in ((rate.b, LNT), (-rate.Ea_R, INVT), (rate.lt_B, TM13), (rate.lt_C, TM23))
             if c != 0.0]
    if not terms:
        return Const(rate.A)
    exponent: Operand = Const(math.log(abs(rate.A)))
    for c, x in terms:
        exponent = b.emit("fma", Const(c), x, exponent)
    k = b.emit("exp", exponent)
    return k if rate.A > 0.0 else b.emit("mul", k, Imm(-1.0))


def _log10_clamped(b: _Builder, x: Operand) -> Reg:
    """log10(max(x, 1e-300))."""
    return b.emit("mul", b.emit("log", b.emit("max", x, Imm(SMALL_NUMBER))), Imm(1.0 / LN10))


def _troe(b: _Builder, params: tuple[float, ...], Pr: Reg) -> Reg:
    """Troe F: Fcent = (1-a) exp(-T/T3) + a exp(-T/T1) [+ exp(-T2/T)], a term
    with |T3| or |T1| < 1e-300 (or a zero weight) left out; log10 F =
    log10 Fcent / (1 + f1^2)."""
    if len(params) not in (3, 4):
        raise SingeInternalError(f"Troe falloff takes 3 or 4 parameters, got {len(params)} (the frontend checks)")
    a, T3, T1 = params[:3]
    T2 = params[3] if len(params) == 4 else 0.0
    Fcent: Operand | None = None
    for weight, scale in ((1.0 - a, T3), (a, T1)):
        if weight != 0.0 and abs(scale) >= SMALL_NUMBER:
            e = b.emit("exp", b.emit("mul", T, Const(-1.0 / scale)))
            Fcent = b.emit("mul", Const(weight), e) if Fcent is None else b.emit("fma", Const(weight), e, Fcent)
    if T2 != 0.0:
        e = b.emit("exp", b.emit("mul", INVT, Const(-T2)))
        Fcent = e if Fcent is None else b.emit("add", Fcent, e)
    ln_Fcent: Operand = Imm(math.log(SMALL_NUMBER)) if Fcent is None else \
        b.emit("log", b.emit("max", Fcent, Imm(SMALL_NUMBER)))
    log_Fcent = b.emit("mul", ln_Fcent, Imm(1.0 / LN10))
    log_Pr = _log10_clamped(b, Pr)
    c = b.emit("fma", log_Fcent, Imm(-0.67), Imm(-0.4))
    n = b.emit("fma", log_Fcent, Imm(-1.27), Imm(0.75))
    shifted = b.emit("add", log_Pr, c)
    f1 = b.emit("div", shifted, b.emit("fma", shifted, Imm(-0.14), n))
    return b.emit("exp", b.emit("div", ln_Fcent, b.emit("fma", f1, f1, Imm(1.0))))


def _sri(b: _Builder, params: tuple[float, ...], Pr: Reg) -> Reg:
    """SRI F = d T^e (a exp(-b/T) + exp(-T/c))^X, X = 1/(1 + log10(Pr)^2)."""
    if len(params) == 3:
        params = (*params, 1.0, 0.0)
    if len(params) != 5:
        raise SingeInternalError(f"SRI falloff takes 3 or 5 parameters, got {len(params)} (the frontend checks)")
    a, b_, c, d, e = params
    base: Operand = b.emit("mul", Const(a), b.emit("exp", b.emit("mul", INVT, Const(-b_))))
    if c != 0.0:
        base = b.emit("add", base, b.emit("exp", b.emit("mul", T, Const(-1.0 / c))))
    log_Pr = _log10_clamped(b, Pr)
    X = b.emit("rcp", b.emit("fma", log_Pr, log_Pr, Imm(1.0)))
    exponent = b.emit("mul", X, b.emit("log", base))
    if e != 0.0:
        exponent = b.emit("fma", Const(e), LNT, exponent)
    F = b.emit("exp", exponent)
    return F if d == 1.0 else b.emit("mul", F, Const(d))


def _falloff(b: _Builder, r: Reaction, M: Reg) -> Reg:
    """Blended falloff / chemically activated rate constant (Cantera's
    FalloffRate): Pr = [M] k0 / (k_inf + 1e-300); k_inf Pr/(1+Pr) F or k0 F/(1+Pr)."""
    k_low = _arrhenius(b, r.k_low)
    k_high = _arrhenius(b, r.k_high)
    Pr = b.emit("div", b.emit("mul", M, k_low), b.emit("add", k_high, Imm(SMALL_NUMBER)))
    one_plus = b.emit("add", Pr, Imm(1.0))
    kind = r.falloff.kind if r.falloff is not None else "lindemann"
    if kind == "troe":
        ratio = b.emit("div", _troe(b, r.falloff.params, Pr), one_plus)
    elif kind == "sri":
        ratio = b.emit("div", _sri(b, r.falloff.params, Pr), one_plus)
    elif kind == "lindemann":
        ratio = b.emit("rcp", one_plus)
    else:
        raise SingeInternalError(f"reaction {r.index + 1} ({r.equation}): unknown falloff function {kind!r}")
    if r.kind == "chemically-activated":
        return b.emit("mul", ratio, k_low)
    return b.emit("mul", b.emit("mul", Pr, ratio), k_high)


def _plog(b: _Builder, rate: PlogRate) -> Reg:
    """PLOG: ln k_g = ln(1e-300 + sum of the entries at pressure g), linear in
    ln P between bracketing pressures, the end values outside; the interval
    is chosen by a cascade of ``sel`` on ln P."""
    pressures = rate.pressures
    log_k = []
    for pressure in pressures:
        total: Operand = Imm(SMALL_NUMBER)
        for p, arrhenius in rate.entries:
            if p == pressure:
                total = b.emit("add", total, _arrhenius(b, arrhenius))
        log_k.append(b.emit("log", total))
    if len(pressures) == 1:
        return b.emit("exp", log_k[0])
    log_p = [math.log(p) for p in pressures]
    low: Operand = log_k[0]
    slope: Operand = Imm(0.0)
    base: Operand = Const(log_p[0])
    for g, lp in enumerate(log_p):
        if g > 0:
            low = b.emit("sel", Const(lp), LNP, log_k[g], low)
            base = b.emit("sel", Const(lp), LNP, Const(lp), base)
        if g + 1 < len(log_p):
            step = b.emit("mul", b.emit("sub", log_k[g + 1], log_k[g]), Const(1.0 / (log_p[g + 1] - lp)))
        else:
            step = Imm(0.0)
        slope = b.emit("sel", Const(lp), LNP, step, slope)
    return b.emit("exp", b.emit("fma", slope, b.emit("sub", LNP, base), low))


def _chebyshev_series(b: _Builder, x: Reg, n: int) -> list[Operand]:
    """phi_0..phi_{n-1}(x): 1, x, 2x phi_p - phi_{p-1} (Cantera's recurrence)."""
    phi: list[Operand] = [Imm(1.0), x][:n]
    if n > 2:
        twice = b.emit("add", x, x)
        for _ in range(2, n):
            phi.append(b.emit("sub", b.emit("mul", twice, phi[-1]), phi[-2]))
    return phi


def _chebyshev(b: _Builder, rate: ChebyshevRate) -> Reg:
    """log10 k = sum_t phi_t(T~) sum_p a_tp phi_p(P~), reduced T~ from 1/T and
    P~ from log10 P (no clamping to the fitted range)."""
    coeffs = np.array(rate.coeffs, dtype=float)
    n_T, n_P = coeffs.shape
    phi_P: list[Operand] = [Imm(1.0)]
    if n_P > 1:
        P_num = -math.log10(rate.P_min) - math.log10(rate.P_max)
        P_den = 1.0 / (math.log10(rate.P_max) - math.log10(rate.P_min))
        P_red = b.emit("mul", b.emit("fma", LOG10P, Imm(2.0), Const(P_num)), Const(P_den))
        phi_P = _chebyshev_series(b, P_red, n_P)
    dots: list[Operand] = []
    for t in range(n_T):
        dot: Operand = Const(float(coeffs[t, 0]))
        for p in range(1, n_P):
            dot = b.emit("fma", phi_P[p], Const(float(coeffs[t, p])), dot)
        dots.append(dot)
    log10_k = dots[0]
    if n_T > 1:
        T_num = -1.0 / rate.T_min - 1.0 / rate.T_max
        T_den = 1.0 / (1.0 / rate.T_max - 1.0 / rate.T_min)
        T_red = b.emit("mul", b.emit("fma", INVT, Imm(2.0), Const(T_num)), Const(T_den))
        phi_T = _chebyshev_series(b, T_red, n_T)
        for t in range(1, n_T):
            log10_k = b.emit("fma", phi_T[t], dots[t], log10_k)
    return b.emit("exp", b.emit("mul", log10_k, Imm(LN10)))


def _forward_constant(b: _Builder, r: Reaction, M: Reg | None) -> Operand:
    """k_f in Cantera's convention ([M] not included for three-body reactions)."""
    if r.kind in ("falloff", "chemically-activated"):
        return _falloff(b, r, M)
    if isinstance(r.rate, PlogRate):
        return _plog(b, r.rate)
    if isinstance(r.rate, ChebyshevRate):
        return _chebyshev(b, r.rate)
    if isinstance(r.rate, Arrhenius):
        return _arrhenius(b, r.rate)
    raise SingeInternalError(f"reaction {r.index + 1} ({r.equation}): unknown rate law {type(r.rate).__name__}")


def _equilibrium_reverse(b: _Builder, mech: Mechanism, j: int, k_forward: Operand) -> Operand:
    """k_r = k_f min(1/Kc, 1e300) with 1/Kc in the reaction's form
    (``singe.kernels.equilibrium``): the product of its species' E and F
    factors in the proven order, or exp(sum_k nu_k gamma_k + R1/T + R0)."""
    form = equilibrium_forms(mech).forms[j]
    if isinstance(form, ProductForm):
        reciprocal: Operand | None = None
        for k, sign in form.factors:
            factor = Reg(f"eg{k}" if sign > 0 else f"fg{k}")
            reciprocal = factor if reciprocal is None else b.emit("mul", reciprocal, factor)
    else:
        exponent = _weighted_sum(b, [(Reg(f"g{k}"), nu) for k, nu in form.terms])  # None: no species, no residual
        if exponent is not None and form.residual_inv_T != 0.0:
            exponent = b.emit("fma", INVT, Const(form.residual_inv_T), exponent)
        if exponent is not None and form.residual_one != 0.0:
            exponent = b.emit("add", exponent, Const(form.residual_one))
        reciprocal = None if exponent is None else b.emit("exp", exponent)
    if reciprocal is None:
        return k_forward
    return b.emit("mul", k_forward, b.emit("min", reciprocal, Imm(BIG_NUMBER)))


def _concentration_product(b: _Builder, plan: _Plan, orders: dict[str, float], stoich: dict[str, float],
                           partner: str | None) -> tuple[Operand | None, Operand | None]:
    """(prod_k C_k^order_k, its sign guard) as ``singe.reference.kinetics``
    forms them (``singe.derived.rates.product_factors``); None: an empty
    product, no guard.  Integer stoichiometric orders are repeated products
    times the collision partner's C, and with ``plan.guarded`` the rate of
    progress is 0 where the guard (``_sign_guard``) is <= 0; other orders (FORD / RORD, fractional)
    give 0 for C <= 0, as Cantera's C_AnyN.  QSSA species (C = 1) are left
    out of the products but count as factors."""
    split = product_factors(orders, stoich, partner)
    guard: Operand | None = None
    if split is None:
        factors: list[Operand] = [b.emit("sel", C, Imm(0.0), Imm(0.0), C if order == 1.0 else _power(b, C, order))
                                  for name, order in orders.items()
                                  if order != 0.0 and (C := plan.concentration(name)) is not None]
    else:
        names, outside = split
        concentrations = [plan.concentration(name) for name in names]
        guard = _sign_guard(b, concentrations) if plan.guarded else None
        factors = [C for C in concentrations + [plan.concentration(outside) if outside else None] if C is not None]
    product: Operand | None = None
    for factor in factors:
        product = factor if product is None else b.emit("mul", product, factor)
    return product, guard


def _sign_guard(b: _Builder, factors: list[Reg | None]) -> Operand | None:
    """A value <= 0 exactly where a product of ``len(factors)`` concentrations (None: a QSSA species, C = 1, never
    negative) has more negative factors than ``negative_factors_allowed`` lets, or a factor 0 (the product is 0
    then anyway); None where that cannot happen.  With one negative factor allowed: the repeated species if
    there is one (two of its factors would be negative), else the larger of two factors or the middle one of
    three; with none: the smallest factor.  Apart from the product, so the rate's select waits on it only at
    the end of the rate's chain."""
    present = [C for C in factors if C is not None]
    distinct = list(dict.fromkeys(present))
    if negative_factors_allowed(len(factors)) == 0:
        return _extreme(b, distinct, smallest=True) if distinct else None
    if len(distinct) < len(present):
        return next(C for C in distinct if present.count(C) > 1)
    if len(present) < 2:
        return None
    if len(present) == 2:
        return _extreme(b, present, smallest=False)
    a, c, d = present
    low, high = _extreme(b, [a, c], smallest=True), _extreme(b, [a, c], smallest=False)
    return _extreme(b, [low, _extreme(b, [high, d], smallest=True)], smallest=False)


def _extreme(b: _Builder, values: list[Operand], smallest: bool) -> Operand:
    """min (``smallest``) or max of ``values`` by selects."""
    result = values[0]
    for value in values[1:]:
        result = b.emit("sel", result, value, result, value) if smallest else b.emit("sel", result, value, value,
                                                                                       result)
    return result


def _rate_of_progress(b: _Builder, k: Operand, M: Reg | None, product: Operand | None, guard: Operand | None,
                      name: str) -> str:
    """q = (k [M]) prod_k C_k^order_k, 0 where ``guard`` <= 0, named ``name``."""
    if M is not None:
        k = b.emit("mul", k, M)
    q = k if product is None else b.emit("mul", k, product)
    if guard is not None:
        q = b.emit("sel", guard, Imm(0.0), Imm(0.0), q)
    return _named(b, q, name)


# --------------------------------------------------------------------------
# Reactions and the output terms
# --------------------------------------------------------------------------

def _emit_terms(b: _Builder, plan: _Plan, j: int) -> None:
    """nu (q_f - q_r) for every coefficient nu of a transported species in
    reaction j, from the current rates, recorded in ``plan.terms[j]``."""
    forward, reverse = (Reg(v) if v is not None else None for v in plan.rates[j])
    net: Operand | None = None
    negative: Operand | None = None
    if forward is not None and reverse is not None:
        net = b.emit("sub", forward, reverse) if 1.0 in plan.output_nus[j] or \
            any(nu not in (1.0, -1.0) for nu in plan.output_nus[j]) else None
        negative = b.emit("sub", reverse, forward) if -1.0 in plan.output_nus[j] else None
    elif forward is not None:
        net = forward
        negative = b.emit("mul", forward, Imm(-1.0)) if -1.0 in plan.output_nus[j] else None
    elif reverse is not None:
        negative = reverse
        net = b.emit("mul", reverse, Imm(-1.0)) if plan.output_nus[j] - {-1.0} else None
    else:
        return
    for nu in sorted(plan.output_nus[j]):
        if nu == 1.0:
            value = net
        elif nu == -1.0:
            value = negative
        else:
            value = b.emit("mul", net, _coefficient(nu))
        tag = {1.0: "", -1.0: "_neg"}.get(nu, f"_nu{len(plan.terms[j])}")
        plan.terms[j][nu] = _named(b, value, f"rate{j}{tag}")


def reaction_draft(plan: _Plan, r: Reaction) -> _Draft | None:
    """Forward and reverse rates of progress of reaction r (QSSA species at
    C = 1, dropped directions left out); the output terms when no later
    phase scales them."""
    j = r.index
    forward_alive, reverse_alive = plan.alive[j]
    if not (forward_alive or reverse_alive):
        return None
    b = _Builder(f"rx{j}")
    M = Reg(plan.third_body[j]) if r.kind in THIRD_BODY_KINDS else None
    three_body = M if r.kind == "three-body" else None
    equilibrium = reverse_alive and r.reverse_rate is None
    k_forward = _forward_constant(b, r, M) if forward_alive or equilibrium else None
    if forward_alive:
        forward = _concentration_product(b, plan, r.reactant_orders(), dict(r.reactants), r.collision_partner)
        plan.rates[j][FORWARD] = _rate_of_progress(b, k_forward, three_body, *forward, f"qf{j}")
    if reverse_alive:
        k_reverse = _equilibrium_reverse(b, plan.mech, j, k_forward) if equilibrium else \
            _arrhenius(b, r.reverse_rate)
        reverse = _concentration_product(b, plan, r.product_orders(), dict(r.products), r.collision_partner)
        plan.rates[j][REVERSE] = _rate_of_progress(b, k_reverse, three_body, *reverse, f"qr{j}")
    if plan.stages(j) == ["reaction"]:
        _emit_terms(b, plan, j)
    return _Draft(f"reaction_{j}", "reaction", b)


def output_items(plan: _Plan) -> list:
    """Per transported species: the reduction of its terms, and the store."""
    mech = plan.mech
    nu_net = kinetics_tables(mech).nu_net
    items: list = []
    for i, t in sorted(plan.transported.items(), key=lambda item: item[1]):
        terms = [plan.terms[j][float(nu_net[i, j])] for j in range(len(mech.reactions))
                 if nu_net[i, j] != 0.0 and plan.terms[j]]
        b = _Builder(f"out{t}")
        if terms:
            items.append(reduction_op(f"production_sum_{t}", terms, f"wdot{t}"))
            b.store("production_rates", t, Reg(f"wdot{t}"))
        else:
            b.store("production_rates", t, b.emit("mov", Imm(0.0)))
        items.append(_Draft(f"production_{t}", "output", b))
    return items


# --------------------------------------------------------------------------
# QSSA (docs/formulas.md §7)
# --------------------------------------------------------------------------

def _direction_sum(b: _Builder, plan: _Plan, terms) -> Operand | None:
    """sum of multiplicity * rate over (reaction, direction, multiplicity) terms."""
    return _weighted_sum(b, [(Reg(plan.rates[j][d]), nu) for j, d, nu in terms])


def qssa_coefficient_draft(plan: _Plan, i: int, component: tuple[int, ...]) -> _Draft:
    """D_i = max(sum of consuming rates, 1e-50); a_i0 = P_i0 / D_i; a_ij =
    P_ij / D_i for j outside i's component, the matrix entries -a_ij
    (1 - a_ii on the diagonal) inside it."""
    system = plan.qssa
    b = _Builder(f"qc{i}")
    D = _direction_sum(b, plan, system.consumers[i])
    inverse: Operand = Imm(1.0 / D_FLOOR) if D is None else b.emit("rcp", b.emit("max", D, Imm(D_FLOOR)))
    production = _direction_sum(b, plan, system.sources[i])
    if production is not None:
        _named(b, b.emit("mul", production, inverse), f"qa{i}")
    negative_inverse = None
    for j in system.dependencies(i):
        P_ij = _direction_sum(b, plan, [(r, d, nu) for jj, r, d, nu in system.couplings[i] if jj == j])
        if j not in component:
            _named(b, b.emit("mul", P_ij, inverse), f"qa{i}_{j}")
        elif j == i:
            _named(b, b.emit("sub", Imm(1.0), b.emit("mul", P_ij, inverse)), f"qm{i}_{j}")
        else:
            if negative_inverse is None:
                negative_inverse = b.emit("mul", inverse, Imm(-1.0))
            _named(b, b.emit("mul", P_ij, negative_inverse), f"qm{i}_{j}")
    return _Draft(f"qssa_coefficients_{i}", "qssa_coefficients", b)


def _right_hand_side(b: _Builder, plan: _Plan, i: int, component: tuple[int, ...],
                     has_a0: set[int]) -> Operand | None:
    """b_i = a_i0 + sum_{j outside the component} a_ij x_j (ascending j)."""
    rhs: Operand | None = Reg(f"qa{i}") if i in has_a0 else None
    for j in plan.qssa.dependencies(i):
        if j in component:
            continue
        term_a, x = Reg(f"qa{i}_{j}"), Reg(plan.x[j])
        rhs = b.emit("mul", term_a, x) if rhs is None else b.emit("fma", term_a, x, rhs)
    return rhs


def qssa_solve_items(plan: _Plan) -> list:
    """Components in ``QssaSystem.components`` order: a singleton is solved
    at once; a larger component has one elimination operation per row
    (Gaussian elimination without pivoting, rows in ascending order, using
    the reciprocal pivots) and one back-substitution operation per species."""
    system = plan.qssa
    has_a0 = {i for i in range(system.n_qss) if system.sources[i]}
    items: list = []
    for component in system.components:
        if len(component) == 1:
            items.append(_singleton_draft(plan, component[0], has_a0))
            continue
        rows: dict[int, tuple[dict[int, Operand], Operand | None, Operand]] = {}
        for i in component:
            draft, rows[i] = _elimination_draft(plan, i, component, rows, has_a0)
            items.append(draft)
        for i in reversed(component):
            items.append(_back_substitution_draft(plan, i, rows[i]))
    return items


def _singleton_draft(plan: _Plan, i: int, has_a0: set[int]) -> _Draft:
    """x_i = b_i (divided by 1 - a_ii when i depends on itself)."""
    b = _Builder(f"qs{i}")
    rhs = _right_hand_side(b, plan, i, (i,), has_a0)
    x: Operand = Imm(0.0) if rhs is None else rhs
    if i in plan.qssa.dependencies(i):
        x = b.emit("div", x, Reg(f"qm{i}_{i}"))
    plan.x[i] = _named(b, x, f"qx{i}")
    return _Draft(f"qssa_solve_{i}", "qssa_solve", b)


def _elimination_draft(plan: _Plan, i: int, component: tuple[int, ...], rows: dict, has_a0: set[int]):
    """Row i of the component after elimination by every earlier row k with a
    (structurally) non-zero entry in column k: M_ic -= (M_ik / M_kk) M_kc,
    b_i -= (M_ik / M_kk) b_k.  Returns the draft and (U entries right of the
    diagonal, b, -1/M_ii)."""
    b = _Builder(f"qe{i}")
    deps = set(plan.qssa.dependencies(i))
    row: dict[int, Operand] = {j: Reg(f"qm{i}_{j}") for j in component if j in deps}
    row.setdefault(i, Imm(1.0))
    rhs = _right_hand_side(b, plan, i, component, has_a0)
    for k in component:
        if k >= i:
            break
        if k not in row:
            continue
        upper, rhs_k, negative_inverse_k = rows[k]
        factor = b.emit("mul", row.pop(k), negative_inverse_k)
        for c, value in upper.items():
            row[c] = b.emit("mul", factor, value) if c not in row else b.emit("fma", factor, value, row[c])
        if rhs_k is not None:
            rhs = b.emit("mul", factor, rhs_k) if rhs is None else b.emit("fma", factor, rhs_k, rhs)
    upper = {c: Reg(_named(b, value, f"qu{i}_{c}")) for c, value in sorted(row.items()) if c > i}
    if rhs is not None:
        rhs = Reg(_named(b, rhs, f"qub{i}"))
    diagonal = row[i]
    if isinstance(diagonal, Imm):
        negative_inverse: Operand = Imm(-1.0 / diagonal.value)
    else:
        negative_inverse = Reg(_named(b, b.emit("mul", b.emit("rcp", diagonal), Imm(-1.0)), f"qninv{i}"))
    return _Draft(f"qssa_eliminate_{i}", "qssa_eliminate", b), (upper, rhs, negative_inverse)


def _back_substitution_draft(plan: _Plan, i: int,
                             row: tuple[dict[int, Operand], Operand | None, Operand]) -> _Draft:
    """x_i = (sum_{c > i} U_ic x_c - b_i) * (-1/U_ii)."""
    upper, rhs, negative_inverse = row
    b = _Builder(f"qb{i}")
    total: Operand | None = None
    for c, value in upper.items():
        x = Reg(plan.x[c])
        total = b.emit("mul", value, x) if total is None else b.emit("fma", value, x, total)
    if rhs is not None:
        total = b.emit("sub", Imm(0.0) if total is None else total, rhs)
    x_i: Operand = Imm(0.0) if total is None else b.emit("mul", total, negative_inverse)
    plan.x[i] = _named(b, x_i, f"qx{i}")
    return _Draft(f"qssa_back_substitute_{i}", "qssa_back_substitute", b)


def qssa_scale_draft(plan: _Plan, j: int) -> _Draft:
    """Every kept direction of reaction j whose consuming side holds QSSA
    species k, times x_k; the output terms when no stiffness scaling follows."""
    b = _Builder(f"qsc{j}")
    for d, k in plan.qssa_scalings[j]:
        scaled = b.emit("mul", Reg(plan.rates[j][d]), Reg(plan.x[k]))
        plan.rates[j][d] = _named(b, scaled, f"q{'fr'[d]}x{j}")
    if plan.stages(j)[-1] == "qssa":
        _emit_terms(b, plan, j)
    return _Draft(f"qssa_scale_{j}", "qssa_scale", b)


# --------------------------------------------------------------------------
# Stiffness removal (docs/formulas.md §8, simultaneous form)
# --------------------------------------------------------------------------

def stiffness_draft(plan: _Plan, s: int) -> _Draft:
    """r_s for stiff species s: 1 unless DDOT / C_s > 2/dt, then
    (CDOT + DIFF_s/W_s + (C_s - C0)/dt) / DDOT with C0 = C_s (CDOT + DIFF_s/W_s) / DDOT."""
    mech = plan.mech
    species = mech.species_index(mech.stiff_species[s])
    t = plan.transported[species]
    b = _Builder(f"sf{s}")
    destruction, creation = [], []
    for j in range(len(mech.reactions)):
        for d, consumed, made in ((FORWARD, plan.stiff_reactants, plan.stiff_products),
                                  (REVERSE, plan.stiff_products, plan.stiff_reactants)):
            if plan.alive[j][d]:
                if consumed[s, j] > 0.0:
                    destruction.append((Reg(plan.rates[j][d]), float(consumed[s, j])))
                if made[s, j] > 0.0:
                    creation.append((Reg(plan.rates[j][d]), float(made[s, j])))
    ddot = _weighted_sum(b, destruction)
    cdot = _weighted_sum(b, creation)
    C = b.emit("max", Reg(f"C{t}"), Imm(C_FLOOR))
    diffusion = b.emit("mul", b.load("diffusion_source", t), Const(1.0 / mech.molecular_weights[species]))
    supply = diffusion if cdot is None else b.emit("add", cdot, diffusion)
    rate = b.emit("div", ddot, C)
    inverse = b.emit("rcp", ddot)
    c0 = b.emit("mul", b.emit("mul", C, supply), inverse)
    factor = b.emit("mul", b.emit("fma", b.emit("sub", C, c0), RDT, supply), inverse)
    b.emit("sel", rate, TWO_RDT, Imm(1.0), factor, dst=f"rs{s}")
    return _Draft(f"stiffness_{s}", "stiffness", b)


def stiffness_scale_draft(plan: _Plan, j: int) -> _Draft:
    """The directions of reaction j destroying stiff species times r_s^nu
    (stiff species in list order); then the output terms."""
    b = _Builder(f"sx{j}")
    for d in (FORWARD, REVERSE):
        if not plan.alive[j][d]:
            continue
        rate: Operand = Reg(plan.rates[j][d])
        destroyed = plan.stiff_destroys(j, d)
        for s, nu in destroyed:
            rate = b.emit("mul", rate, _power(b, Reg(f"rs{s}"), nu))
        if destroyed:
            plan.rates[j][d] = _named(b, rate, f"q{'fr'[d]}s{j}")
    _emit_terms(b, plan, j)
    return _Draft(f"stiffness_scale_{j}", "stiffness_scale", b)


# --------------------------------------------------------------------------
# The graph
# --------------------------------------------------------------------------

def chemistry_graph(mech: Mechanism, products: str = DEFAULT_PRODUCTS) -> DataflowGraph:
    """The chemistry kernel of ``mech``: rates of progress, QSSA, stiffness
    removal and the net production rates of the transported species
    (``products``: ``CompileOptions.products``, 'cantera' for Cantera's sign guard)."""
    plan = _plan(mech, guarded=guards_products(products))
    items: list = point_drafts(mech) + mixture_items(mech) + third_body_items(plan)
    items += gibbs_items(plan)
    items += [d for d in (reaction_draft(plan, r) for r in mech.reactions) if d is not None]
    system = plan.qssa
    if system is not None:
        position = {i: c for c in system.components for i in c}
        items += [qssa_coefficient_draft(plan, i, position[i]) for i in range(system.n_qss)]
        items += qssa_solve_items(plan)
        items += [qssa_scale_draft(plan, j) for j in sorted(plan.qssa_scalings)]
    if plan.stiff_active:
        items += [stiffness_draft(plan, s) for s in plan.stiff_active]
        items += [stiffness_scale_draft(plan, j) for j in range(len(mech.reactions))
                  if "stiffness" in plan.stages(j)]
    items += output_items(plan)
    operations = _finish(items)
    return DataflowGraph("chemistry", mech.name, tuple(operations), len(mech.transported_species))
