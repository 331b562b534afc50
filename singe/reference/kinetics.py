"""Reference chemical kinetics: rate constants, rates of progress and
production rates in plain numpy, vectorized over points.

Conventions (docs/formulas.md §1, §3, §4, §7, §8):

* SI units: T [K], P [Pa], concentrations C [kmol/m^3], rates of progress
  and production rates [kmol/m^3/s].  Arrays are species-major or
  reaction-major: (n_species, n) or (n_reactions, n) with one column per point.
* Reactions are CHEMKIN's, as written: an explicit REV reaction is one
  reaction whose reverse rate constant is the REV rate (Cantera splits it
  in two irreversible ones).
* Rate constants follow Cantera's convention: ``forward_rate_constants``
  excludes [M] for three-body reactions but includes the falloff /
  chemically-activated blending; ``rates_of_progress`` multiplies [M] in.
* Every expression is evaluated in the order Cantera 3.2 evaluates it
  (Arrhenius as A exp(b ln T - (E/R)/T), PLOG and Chebyshev as in
  ``PlogRate`` / ``ChebyshevRate``, 1/Kc clamped at 1e300, falloff
  Pr = k0 [M] / (k_inf + 1e-300)), so the results agree with Cantera to
  ~1e-14 relative.

The per-mechanism index and stoichiometry arrays are built once
(``kinetics_tables``) and cached per Mechanism object; a call loops in
Python only over the PLOG and Chebyshev reactions.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from singe.constants import GAS_CONSTANT
from singe.mechanism import Arrhenius, ChebyshevRate, Mechanism, PlogRate
from singe.memo import per_mechanism
from singe.reference.thermo import log_equilibrium_constants

SMALL_NUMBER = 1e-300  # Cantera's SmallNumber: falloff guards, PLOG sums
BIG_NUMBER = 1e300  # Cantera's BigNumber: clamp of 1/Kc

THIRD_BODY_KINDS = ("three-body", "falloff", "chemically-activated")
STIFFNESS_FORMS = ("simultaneous", "sequential")


# --------------------------------------------------------------------------
# Per-mechanism tables
# --------------------------------------------------------------------------

@dataclass(frozen=True)
class ArrheniusTable:
    """Stacked Arrhenius parameters of several rates, (m,) arrays each;
    rows without a rate have A = 0."""

    A: np.ndarray
    b: np.ndarray
    Ea_R: np.ndarray
    lt_B: np.ndarray
    lt_C: np.ndarray
    landau_teller: bool

    @staticmethod
    def of(rates: list[Arrhenius | None]) -> "ArrheniusTable":
        def column(field: str) -> np.ndarray:
            return np.array([getattr(r, field) if r is not None else 0.0 for r in rates], dtype=float)

        lt_B, lt_C = column("lt_B"), column("lt_C")
        return ArrheniusTable(column("A"), column("b"), column("Ea_R"), lt_B, lt_C,
                              bool(np.any(lt_B) or np.any(lt_C)))

    def __call__(self, T: np.ndarray) -> np.ndarray:
        """k = A exp(b ln T - Ea_R/T [+ B T^-1/3 + C T^-2/3]), (m, n)."""
        exponent = self.b[:, None] * np.log(T)[None, :] - self.Ea_R[:, None] * (1.0 / T)[None, :]
        if self.landau_teller:
            cube_root = np.cbrt(T)
            exponent = (exponent + self.lt_B[:, None] * (1.0 / cube_root)[None, :]
                        + self.lt_C[:, None] * (1.0 / (cube_root * cube_root))[None, :])
        return self.A[:, None] * np.exp(exponent)


@dataclass(frozen=True)
class ConcentrationProduct:
    """How to form Π_k C_k^order_k for every reaction, one direction.

    Reactions whose exponents are the small integer stoichiometric
    coefficients use ``slots``: (depth, n_reactions) species indices, each
    species repeated by its coefficient and padded with n_species (a row of
    ones), so the product is a few gathers and multiplies.  The others (FORD /
    RORD orders, fractional coefficients) list their factors in
    ``power_reaction``, ``power_species``, ``power_order``; as Cantera's
    ``C_AnyN``, a factor with C <= 0 and a non-zero order makes the product 0.
    """

    slots: np.ndarray
    power_reaction: np.ndarray
    power_species: np.ndarray
    power_order: np.ndarray

    @staticmethod
    def of(exponents: list[dict[str, float]], stoichiometry: list[dict[str, float]],
           mech: Mechanism) -> "ConcentrationProduct":
        n_species = mech.n_species
        slot_lists: list[list[int]] = []
        power: list[tuple[int, int, float]] = []
        for j, (orders, stoich) in enumerate(zip(exponents, stoichiometry)):
            simple = orders == stoich and all(float(v).is_integer() and v > 0 for v in orders.values())
            if simple:
                slot_lists.append([mech.species_index(name) for name, nu in orders.items()
                                   for _ in range(int(nu))])
            else:
                slot_lists.append([])
                power.extend((j, mech.species_index(name), float(order))
                             for name, order in orders.items() if order != 0.0)
        depth = max((len(s) for s in slot_lists), default=0)
        slots = np.full((depth, len(slot_lists)), n_species, dtype=np.intp)
        for j, s in enumerate(slot_lists):
            slots[:len(s), j] = s
        reaction, species, order = (zip(*power) if power else ((), (), ()))
        return ConcentrationProduct(slots, np.array(reaction, dtype=np.intp),
                                    np.array(species, dtype=np.intp), np.array(order, dtype=float))

    def __call__(self, C: np.ndarray) -> np.ndarray:
        """Π_k C_k^order_k, (n_reactions, n), from C (n_species, n)."""
        extended = np.concatenate([C, np.ones((1, C.shape[1]))], axis=0)
        product = np.ones((self.slots.shape[1], C.shape[1]))
        for row in self.slots:
            product *= extended[row]
        if self.power_reaction.size:
            c = C[self.power_species]
            with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
                factor = np.where(c > 0.0, np.power(np.where(c > 0.0, c, 1.0), self.power_order[:, None]), 0.0)
            np.multiply.at(product, self.power_reaction, factor)
        return product


@dataclass(frozen=True)
class FalloffTable:
    """Falloff and chemically-activated reactions: indices, both limits, and
    the broadening-function parameters (Troe: a, 1/T3, 1/T1, T2 with 1/T = inf
    for |T| < 1e-300 and T2 = 0 meaning no term; SRI: a, b, c, d, e)."""

    index: np.ndarray
    activated: np.ndarray
    k_low: ArrheniusTable
    k_high: ArrheniusTable
    troe: np.ndarray  # positions (into index) of Troe reactions
    troe_params: np.ndarray  # (4, n_troe): a, 1/T3, 1/T1, T2
    sri: np.ndarray
    sri_params: np.ndarray  # (5, n_sri): a, b, c, d, e

    @staticmethod
    def of(mech: Mechanism) -> "FalloffTable":
        rows = [r for r in mech.reactions if r.is_pressure_dependent]
        troe, troe_params, sri, sri_params = [], [], [], []
        for position, r in enumerate(rows):
            function = r.falloff
            kind = function.kind if function is not None else "lindemann"
            if kind == "troe":
                troe.append(position)
                troe_params.append(_troe_parameters(function.params))
            elif kind == "sri":
                sri.append(position)
                sri_params.append(_sri_parameters(function.params))
            elif kind != "lindemann":
                raise ValueError(f"reaction {r.index} ({r.equation}): unknown falloff function {kind!r}")
        return FalloffTable(
            np.array([r.index for r in rows], dtype=np.intp),
            np.array([r.kind == "chemically-activated" for r in rows], dtype=bool),
            ArrheniusTable.of([r.k_low for r in rows]),
            ArrheniusTable.of([r.k_high for r in rows]),
            np.array(troe, dtype=np.intp), np.array(troe_params, dtype=float).reshape(-1, 4).T,
            np.array(sri, dtype=np.intp), np.array(sri_params, dtype=float).reshape(-1, 5).T,
        )


def _troe_parameters(params: tuple[float, ...]) -> tuple[float, float, float, float]:
    if len(params) not in (3, 4):
        raise ValueError(f"Troe falloff takes 3 or 4 parameters, got {len(params)}")

    def reciprocal(t: float) -> float:
        return np.inf if abs(t) < SMALL_NUMBER else 1.0 / t

    return params[0], reciprocal(params[1]), reciprocal(params[2]), params[3] if len(params) == 4 else 0.0


def _sri_parameters(params: tuple[float, ...]) -> tuple[float, float, float, float, float]:
    if len(params) == 3:
        return params[0], params[1], params[2], 1.0, 0.0
    if len(params) == 5:
        return tuple(params)  # type: ignore[return-value]
    raise ValueError(f"SRI falloff takes 3 or 5 parameters, got {len(params)}")


@dataclass(frozen=True)
class KineticsTables:
    """Everything a rate evaluation needs from a mechanism, as arrays.

    ``efficiencies`` (n_reactions, n_species): third-body weights, rows of
    zeros for reactions without a third body (``has_third_body`` False).
    ``nu_reactants`` / ``nu_products`` (n_species, n_reactions):
    stoichiometric coefficients as written; ``nu_net`` their difference.
    """

    n_species: int
    n_reactions: int
    arrhenius: ArrheniusTable  # the reaction-line rate of every Arrhenius-type reaction
    arrhenius_rows: np.ndarray
    falloff: FalloffTable
    plog: tuple[tuple[int, PlogRate], ...]
    chebyshev: tuple[tuple[int, ChebyshevRate], ...]
    three_body_rows: np.ndarray  # 'three-body' reactions: [M] multiplies their rates of progress
    has_third_body: np.ndarray
    efficiencies: np.ndarray
    reversible: np.ndarray
    explicit_reverse_rows: np.ndarray
    explicit_reverse: ArrheniusTable
    equilibrium_rows: np.ndarray  # reversible without REV: k_r = k_f / Kc
    forward_product: ConcentrationProduct
    reverse_product: ConcentrationProduct
    nu_reactants: np.ndarray
    nu_products: np.ndarray
    nu_net: np.ndarray
    transported: np.ndarray
    qss: np.ndarray
    molecular_weights: np.ndarray


@per_mechanism
def kinetics_tables(mech: Mechanism) -> KineticsTables:
    """The arrays of ``mech`` used by every function of this module (built
    once per Mechanism object)."""
    reactions = mech.reactions
    for j, r in enumerate(reactions):
        if r.index != j:
            raise ValueError(f"reaction {j} ({r.equation}) carries index {r.index}")
    arrhenius_rows = [r.index for r in reactions if isinstance(r.rate, Arrhenius)]
    unknown = [r for r in reactions if not isinstance(r.rate, (Arrhenius, PlogRate, ChebyshevRate))]
    if unknown:
        raise ValueError(f"reaction {unknown[0].index} ({unknown[0].equation}): unknown rate law "
                         f"{type(unknown[0].rate).__name__}")
    nu_reactants = np.zeros((mech.n_species, len(reactions)))
    nu_products = np.zeros((mech.n_species, len(reactions)))
    for r in reactions:
        for name, nu in r.reactants:
            nu_reactants[mech.species_index(name), r.index] += nu
        for name, nu in r.products:
            nu_products[mech.species_index(name), r.index] += nu
    qss = set(mech.qss_species)
    reversible = np.array([r.reversible for r in reactions], dtype=bool)
    explicit = [r.index for r in reactions if r.reversible and r.reverse_rate is not None]
    return KineticsTables(
        n_species=mech.n_species,
        n_reactions=len(reactions),
        arrhenius=ArrheniusTable.of([reactions[j].rate for j in arrhenius_rows]),
        arrhenius_rows=np.array(arrhenius_rows, dtype=np.intp),
        falloff=FalloffTable.of(mech),
        plog=tuple((r.index, r.rate) for r in reactions if isinstance(r.rate, PlogRate)),
        chebyshev=tuple((r.index, r.rate) for r in reactions if isinstance(r.rate, ChebyshevRate)),
        three_body_rows=np.array([r.index for r in reactions if r.kind == "three-body"], dtype=np.intp),
        has_third_body=np.array([r.kind in THIRD_BODY_KINDS for r in reactions], dtype=bool),
        efficiencies=_efficiency_matrix(mech),
        reversible=reversible,
        explicit_reverse_rows=np.array(explicit, dtype=np.intp),
        explicit_reverse=ArrheniusTable.of([reactions[j].reverse_rate for j in explicit]),
        equilibrium_rows=np.array([r.index for r in reactions if r.reversible and r.reverse_rate is None],
                                  dtype=np.intp),
        forward_product=ConcentrationProduct.of(
            [r.reactant_orders() for r in reactions], [dict(r.reactants) for r in reactions], mech),
        reverse_product=ConcentrationProduct.of(
            [r.product_orders() for r in reactions], [dict(r.products) for r in reactions], mech),
        nu_reactants=nu_reactants,
        nu_products=nu_products,
        nu_net=nu_products - nu_reactants,
        transported=mech.transported_indices,
        qss=np.array([mech.species_index(name) for name in mech.qss_species], dtype=np.intp),
        molecular_weights=mech.molecular_weights,
    )


def _efficiency_matrix(mech: Mechanism) -> np.ndarray:
    """(n_reactions, n_species) third-body efficiencies: 1 unless given for
    ``M``, only the collider's 1 for ``(+SPECIES)``, 0 rows without a third body.
    Efficiencies of species the mechanism does not declare are ignored."""
    matrix = np.zeros((len(mech.reactions), mech.n_species))
    names = mech.species_names
    for r in mech.reactions:
        if r.kind not in THIRD_BODY_KINDS:
            continue
        if r.third_body is None:
            raise ValueError(f"reaction {r.index} ({r.equation}) is {r.kind} but has no third body")
        matrix[r.index] = [r.third_body.efficiency(name) for name in names]
    return matrix


# --------------------------------------------------------------------------
# Argument checks
# --------------------------------------------------------------------------

def _points(T, P) -> tuple[np.ndarray, np.ndarray]:
    """T [K] and P [Pa] as (n,) arrays (a scalar P is broadcast to T)."""
    T = np.atleast_1d(np.asarray(T, dtype=float))
    if T.ndim != 1:
        raise ValueError(f"T must be a scalar or a 1-D array of points, got shape {T.shape}")
    P = np.asarray(P, dtype=float)
    if P.ndim == 0:
        P = np.full(T.shape, float(P))
    if P.shape != T.shape:
        raise ValueError(f"P has shape {P.shape}, T has shape {T.shape}: give one pressure per point")
    if not (np.all(T > 0.0) and np.all(P > 0.0)):
        raise ValueError("temperatures [K] and pressures [Pa] must be positive")
    return T, P


def _species_array(name: str, value, rows: int, n: int, what: str) -> np.ndarray:
    array = np.asarray(value, dtype=float)
    if array.shape != (rows, n):
        raise ValueError(f"{name} must have shape ({rows}, {n}) ({what}, points), got {array.shape}")
    return array


def _reaction_array(name: str, value, tables: KineticsTables) -> np.ndarray:
    array = np.asarray(value, dtype=float)
    if array.ndim != 2 or array.shape[0] != tables.n_reactions:
        raise ValueError(f"{name} must have shape ({tables.n_reactions}, n) (reactions, points), "
                         f"got {array.shape}")
    return array


# --------------------------------------------------------------------------
# Concentrations
# --------------------------------------------------------------------------

def molar_concentrations(mech: Mechanism, T, P, Y) -> np.ndarray:
    """Molar concentrations C [kmol/m^3], (n_species, n).

    ``Y`` (n_transported, n) holds the mass fractions of
    ``mech.transported_species``; ρ = P W̄ / (R T) with W̄ = 1/Σ_k Y_k/W_k over
    those species, C_k = ρ Y_k / W_k.  QSSA rows of C are 0.
    """
    tables = kinetics_tables(mech)
    T, P = _points(T, P)
    Y = _species_array("Y", Y, tables.transported.size, T.size, "transported species")
    moles_per_mass = Y / tables.molecular_weights[tables.transported][:, None]
    mean_weight = 1.0 / moles_per_mass.sum(axis=0)
    density = P * mean_weight / (GAS_CONSTANT * T)
    C = np.zeros((tables.n_species, T.size))
    C[tables.transported] = moles_per_mass * density[None, :]
    return C


def third_body_concentrations(mech: Mechanism, C) -> np.ndarray:
    """[M] = Σ_k eff_k C_k [kmol/m^3] for three-body, falloff and chemically
    activated reactions (only the collider's C for ``(+SPECIES)``), 1.0 for
    the others; (n_reactions, n) from C (n_species, n)."""
    tables = kinetics_tables(mech)
    C = np.asarray(C, dtype=float)
    if C.ndim != 2 or C.shape[0] != tables.n_species:
        raise ValueError(f"C must have shape ({tables.n_species}, n) (species, points), got {C.shape}")
    return _third_body(tables, C)


def _third_body(tables: KineticsTables, C: np.ndarray) -> np.ndarray:
    M = tables.efficiencies @ C
    M[~tables.has_third_body] = 1.0
    return M


# --------------------------------------------------------------------------
# Rate constants
# --------------------------------------------------------------------------

def forward_rate_constants(mech: Mechanism, T, P, C) -> np.ndarray:
    """Forward rate constants k_f (SI, Cantera's convention), (n_reactions, n).

    [M] is not included for three-body reactions; falloff and chemically
    activated reactions include their blending with [M] from C.
    """
    tables = kinetics_tables(mech)
    T, P = _points(T, P)
    C = _species_array("C", C, tables.n_species, T.size, "species")
    return _forward(tables, T, P, _third_body(tables, C))


def reverse_rate_constants(mech: Mechanism, T, P, C) -> np.ndarray:
    """Reverse rate constants k_r (SI, same [M] convention as k_f), (n_reactions, n).

    k_f · min(1/Kc, 1e300) for reversible reactions without REV (Cantera's
    clamp), the REV rate for explicit ones (a plain Arrhenius rate, with its
    RLT terms: no falloff blending, as ck2yaml's split reverse reaction),
    0 for irreversible reactions.
    """
    tables = kinetics_tables(mech)
    T, P = _points(T, P)
    C = _species_array("C", C, tables.n_species, T.size, "species")
    return _reverse(mech, tables, T, _forward(tables, T, P, _third_body(tables, C)))


def _forward(tables: KineticsTables, T: np.ndarray, P: np.ndarray, M: np.ndarray) -> np.ndarray:
    k = np.zeros((tables.n_reactions, T.size))
    k[tables.arrhenius_rows] = tables.arrhenius(T)
    if tables.falloff.index.size:
        k[tables.falloff.index] = _falloff(tables.falloff, T, M[tables.falloff.index])
    if tables.plog:
        log_P = np.log(P)
        for j, rate in tables.plog:
            k[j] = _plog(rate, T, log_P)
    if tables.chebyshev:
        log10_P = np.log10(P)
        for j, rate in tables.chebyshev:
            k[j] = _chebyshev(rate, T, log10_P)
    return k


def _reverse(mech: Mechanism, tables: KineticsTables, T: np.ndarray, k_forward: np.ndarray) -> np.ndarray:
    k = np.zeros_like(k_forward)
    rows = tables.equilibrium_rows
    if rows.size:
        with np.errstate(over="ignore"):
            reciprocal_Kc = np.minimum(np.exp(-log_equilibrium_constants(mech, T)[rows]), BIG_NUMBER)
        k[rows] = k_forward[rows] * reciprocal_Kc
    if tables.explicit_reverse_rows.size:
        k[tables.explicit_reverse_rows] = tables.explicit_reverse(T)
    return k


def _falloff(table: FalloffTable, T: np.ndarray, M: np.ndarray) -> np.ndarray:
    """Blended rate constants of the falloff / chemically activated reactions,
    (n_falloff, n), evaluated as Cantera's ``FalloffRate::evalFromStruct``."""
    k_low = table.k_low(T)
    k_high = table.k_high(T)
    Pr = M * k_low / (k_high + SMALL_NUMBER)
    F = np.ones_like(Pr)
    if table.troe.size:
        F[table.troe] = _troe(table.troe_params, T, Pr[table.troe])
    if table.sri.size:
        F[table.sri] = _sri(table.sri_params, T, Pr[table.sri])
    activated = table.activated[:, None]
    blend = np.where(activated, F / (1.0 + Pr), Pr * (F / (1.0 + Pr)))
    return blend * np.where(activated, k_low, k_high)


def _troe(params: np.ndarray, T: np.ndarray, Pr: np.ndarray) -> np.ndarray:
    a, rT3, rT1, T2 = (p[:, None] for p in params)
    Fcent = (1.0 - a) * np.exp(-T[None, :] * rT3) + a * np.exp(-T[None, :] * rT1)
    with np.errstate(divide="ignore", over="ignore"):
        Fcent = Fcent + np.where(T2 != 0.0, np.exp(-T2 / T[None, :]), 0.0)
    log_Fcent = np.log10(np.maximum(Fcent, SMALL_NUMBER))
    log_Pr = np.log10(np.maximum(Pr, SMALL_NUMBER))
    c = -0.4 - 0.67 * log_Fcent
    n = 0.75 - 1.27 * log_Fcent
    f1 = (log_Pr + c) / (n - 0.14 * (log_Pr + c))
    return np.power(10.0, log_Fcent / (1.0 + f1 * f1))


def _sri(params: np.ndarray, T: np.ndarray, Pr: np.ndarray) -> np.ndarray:
    a, b, c, d, e = (p[:, None] for p in params)
    with np.errstate(divide="ignore", invalid="ignore"):
        base = a * np.exp(-b / T[None, :]) + np.where(c != 0.0, np.exp(-T[None, :] / np.where(c != 0.0, c, 1.0)), 0.0)
    scale = d * np.power(T[None, :], e)
    log_Pr = np.log10(np.maximum(Pr, SMALL_NUMBER))
    X = 1.0 / (1.0 + log_Pr * log_Pr)
    return np.power(base, X) * scale


def _plog(rate: PlogRate, T: np.ndarray, log_P: np.ndarray) -> np.ndarray:
    """PLOG rate constant, (n,), as Cantera's ``PlogRate``: at each tabulated
    pressure ln(1e-300 + Σ k_i), linear in ln P between the bracketing
    pressures, the end values outside the table."""
    pressures = rate.pressures
    log_k = np.empty((len(pressures), T.size))
    for g, pressure in enumerate(pressures):
        total = np.full(T.size, SMALL_NUMBER)
        for p, arrhenius in rate.entries:
            if p == pressure:
                total = total + arrhenius.A * np.exp(arrhenius.b * np.log(T) - arrhenius.Ea_R * (1.0 / T)
                                                     + _landau_teller(arrhenius, T))
        log_k[g] = np.log(total)
    log_p = np.concatenate([[-1000.0], np.log(np.array(pressures)), [1000.0]])
    log_k = np.concatenate([log_k[:1], log_k, log_k[-1:]])
    upper = np.searchsorted(log_p, log_P, side="right")  # std::map::upper_bound
    lower = upper - 1
    points = np.arange(T.size)
    log_k1, log_k2 = log_k[lower, points], log_k[upper, points]
    return np.exp(log_k1 + (log_k2 - log_k1) * (log_P - log_p[lower]) * (1.0 / (log_p[upper] - log_p[lower])))


def _landau_teller(arrhenius: Arrhenius, T: np.ndarray) -> np.ndarray | float:
    if not arrhenius.is_landau_teller:
        return 0.0
    return arrhenius.lt_B * T ** (-1.0 / 3.0) + arrhenius.lt_C * T ** (-2.0 / 3.0)


def _chebyshev(rate: ChebyshevRate, T: np.ndarray, log10_P: np.ndarray) -> np.ndarray:
    """Chebyshev rate constant, (n,), with Cantera's recurrences (no clamping
    of T or P to the fitted range)."""
    coeffs = np.array(rate.coeffs, dtype=float)
    n_T, n_P = coeffs.shape
    P_num = -np.log10(rate.P_min) - np.log10(rate.P_max)
    P_den = 1.0 / (np.log10(rate.P_max) - np.log10(rate.P_min))
    P_red = (2.0 * log10_P + P_num) * P_den
    dot = np.repeat(coeffs[:, :1], T.size, axis=1)  # (n_T, n): Σ_p a_tp φ_p(P~)
    previous, current = P_red, np.ones_like(P_red)
    for p in range(1, n_P):
        following = 2.0 * P_red * current - previous
        dot = dot + following[None, :] * coeffs[:, p:p + 1]
        previous, current = current, following
    T_num = -1.0 / rate.T_min - 1.0 / rate.T_max
    T_den = 1.0 / (1.0 / rate.T_max - 1.0 / rate.T_min)
    T_red = (2.0 * (1.0 / T) + T_num) * T_den
    log10_k = dot[0].copy()
    previous, current = T_red, np.ones_like(T_red)
    for t in range(1, n_T):
        following = 2.0 * T_red * current - previous
        log10_k = log10_k + following * dot[t]
        previous, current = current, following
    return np.power(10.0, log10_k)


# --------------------------------------------------------------------------
# Rates of progress and production rates
# --------------------------------------------------------------------------

def rates_of_progress(mech: Mechanism, T, P, C, C_third_body=None) -> tuple[np.ndarray, np.ndarray]:
    """Forward and reverse rates of progress (qf, qr) [kmol/m^3/s], each
    (n_reactions, n).

    q_f = k_f [M] Π_k C_k^ν'_k (FORD orders replace stoichiometric ones),
    q_r = k_r [M] Π_k C_k^ν''_k (RORD), [M] only for three-body reactions.
    [M] (and the falloff blending) come from ``C_third_body`` when given,
    else from C: the QSSA evaluation passes C with 1.0 for QSSA species and
    C_third_body with 0 for them.
    """
    tables = kinetics_tables(mech)
    T, P = _points(T, P)
    C = _species_array("C", C, tables.n_species, T.size, "species")
    C_third_body = C if C_third_body is None else _species_array(
        "C_third_body", C_third_body, tables.n_species, T.size, "species")
    M = _third_body(tables, C_third_body)
    k_forward = _forward(tables, T, P, M)
    k_reverse = _reverse(mech, tables, T, k_forward)
    rows = tables.three_body_rows
    k_forward[rows] *= M[rows]
    k_reverse[rows] *= M[rows]
    return k_forward * tables.forward_product(C), k_reverse * tables.reverse_product(C)


def production_rates(mech: Mechanism, qf, qr) -> np.ndarray:
    """ω̇_k = Σ_r (ν''_kr - ν'_kr)(q_f,r - q_r,r) [kmol/m^3/s] for every
    species (QSSA ones included), (n_species, n)."""
    tables = kinetics_tables(mech)
    qf = _reaction_array("qf", qf, tables)
    qr = _reaction_array("qr", qr, tables)
    if qf.shape != qr.shape:
        raise ValueError(f"qf {qf.shape} and qr {qr.shape} differ in shape")
    return tables.nu_net @ (qf - qr)


@per_mechanism
def _qssa_system(mech: Mechanism):
    """``singe.reference.qssa.build_qssa_system(mech)``, cached per object
    (its own cache hashes the whole mechanism on every call)."""
    from singe.reference import qssa

    return qssa.build_qssa_system(mech)


def net_production_rates(mech: Mechanism, T, P, Y, dt=None, diffusion_source=None,
                         stiffness: str = "simultaneous") -> np.ndarray:
    """Net production rates of the transported species [kmol/m^3/s],
    (n_transported, n): what the chemistry kernel computes.

    Parameters
    ----------
    T, P : (n,) temperatures [K] and pressures [Pa] (a scalar P is broadcast).
    Y : (n_transported, n) mass fractions of ``mech.transported_species``.
    dt : time step [s], scalar or (n,); when given, dynamic stiffness removal (docs/formulas.md §8)
        is applied to the stiff species after the QSSA scaling.
    diffusion_source : (n_transported, n) diffusion source [kg/m^3/s] of the
        stiff-species test, zeros when omitted (only used with ``dt``).
    stiffness : 'simultaneous' (Singe's kernels) or 'sequential' (the
        Fortran original).

    Without QSSA species this is rates of progress -> production rates.  With
    QSSA species the rates are evaluated with QSSA concentrations 1 (and
    [M] over the transported species) and scaled by
    ``singe.reference.qssa.apply`` (docs/formulas.md §7).
    """
    tables = kinetics_tables(mech)
    T, P = _points(T, P)
    n_transported = tables.transported.size
    Y = _species_array("Y", Y, n_transported, T.size, "transported species")
    if stiffness not in STIFFNESS_FORMS:
        raise ValueError(f"stiffness must be one of {STIFFNESS_FORMS}, got {stiffness!r}")
    if diffusion_source is not None:
        diffusion_source = _species_array("diffusion_source", diffusion_source, n_transported, T.size,
                                          "transported species")
    if dt is not None:
        dt = np.asarray(dt, dtype=float)
        if dt.shape not in ((), T.shape):
            raise ValueError(f"dt must be a scalar or have shape {T.shape} (one per point), got {dt.shape}")
        if not np.all(dt > 0.0):
            raise ValueError("dt must be a positive time step [s]")
        if diffusion_source is None:
            diffusion_source = np.zeros((n_transported, T.size))
    C = molar_concentrations(mech, T, P, Y)
    if tables.qss.size == 0:
        qf, qr = rates_of_progress(mech, T, P, C)
    else:
        from singe.reference import qssa

        C_rates = C.copy()
        C_rates[tables.qss] = 1.0
        qf, qr = rates_of_progress(mech, T, P, C_rates, C_third_body=C)
        qf, qr = qssa.apply(_qssa_system(mech), qf, qr)
    if dt is not None:
        from singe.reference import stiffness as stiffness_removal

        qf, qr = stiffness_removal.remove_stiffness(mech, qf, qr, C, dt, diffusion_source, form=stiffness)
    return production_rates(mech, qf, qr)[tables.transported]
