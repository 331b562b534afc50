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

The per-mechanism rate tables are the mechanism's derived tables
(``singe.derived.rates.kinetics_tables``, built once per Mechanism object);
a call loops in Python only over the PLOG and Chebyshev reactions.
"""

from __future__ import annotations

import numpy as np

from singe.constants import BIG_NUMBER, GAS_CONSTANT, SMALL_NUMBER
from singe.derived.qssa import build_qssa_system
from singe.derived.rates import (DEFAULT_PRODUCTS, PRODUCTS, THIRD_BODY_KINDS, FalloffTable, KineticsTables,
                                 guards_products, kinetics_tables)
from singe.derived.stoichiometry import STIFFNESS_FORMS
from singe.mechanism import Arrhenius, ChebyshevRate, Mechanism, PlogRate
from singe.reference import qssa
from singe.reference import stiffness as stiffness_removal
from singe.reference.thermo import log_equilibrium_constants

__all__ = ["THIRD_BODY_KINDS", "kinetics_tables", "molar_concentrations", "third_body_concentrations",
           "forward_rate_constants", "reverse_rate_constants", "rates_of_progress", "production_rates",
           "net_production_rates"]


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
        F[table.troe] = troe_falloff(table.troe_params, T, Pr[table.troe])
    if table.sri.size:
        F[table.sri] = sri_falloff(table.sri_params, T, Pr[table.sri])
    activated = table.activated[:, None]
    blend = np.where(activated, F / (1.0 + Pr), Pr * (F / (1.0 + Pr)))
    return blend * np.where(activated, k_low, k_high)


def troe_falloff(params: np.ndarray, T: np.ndarray, Pr: np.ndarray) -> np.ndarray:
    """Troe's broadening factor F, (n_rows, n_points), for rows of (a, 1/T3, 1/T1, T2)
    (the one definition: the reference and the table form's simulator read it)."""
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


def sri_falloff(params: np.ndarray, T: np.ndarray, Pr: np.ndarray) -> np.ndarray:
    """The SRI broadening factor F, (n_rows, n_points), for rows of (a, b, c, d, e)."""
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

def rates_of_progress(mech: Mechanism, T, P, C, C_third_body=None,
                      products: str = DEFAULT_PRODUCTS) -> tuple[np.ndarray, np.ndarray]:
    """Forward and reverse rates of progress (qf, qr) [kmol/m^3/s], each
    (n_reactions, n).

    q_f = k_f [M] Π_k C_k^ν'_k (FORD orders replace stoichiometric ones),
    q_r = k_r [M] Π_k C_k^ν''_k (RORD), [M] only for three-body reactions.
    [M] (and the falloff blending) come from ``C_third_body`` when given,
    else from C: the QSSA evaluation passes C with 1.0 for QSSA species and
    C_third_body with 0 for them.  ``products``: negative concentrations
    multiplied as they are ('chemkin') or under Cantera's sign guard
    ('cantera', ``singe.derived.rates.negative_factors_allowed``).
    """
    if products not in PRODUCTS:
        raise ValueError(f"products must be one of {PRODUCTS}, got {products!r}")
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
    guarded = guards_products(products)
    return k_forward * tables.forward_product(C, guarded), k_reverse * tables.reverse_product(C, guarded)


def production_rates(mech: Mechanism, qf, qr) -> np.ndarray:
    """ω̇_k = Σ_r (ν''_kr - ν'_kr)(q_f,r - q_r,r) [kmol/m^3/s] for every
    species (QSSA ones included), (n_species, n)."""
    tables = kinetics_tables(mech)
    qf = _reaction_array("qf", qf, tables)
    qr = _reaction_array("qr", qr, tables)
    if qf.shape != qr.shape:
        raise ValueError(f"qf {qf.shape} and qr {qr.shape} differ in shape")
    return tables.nu_net @ (qf - qr)


def net_production_rates(mech: Mechanism, T, P, Y, dt=None, diffusion_source=None,
                         stiffness: str = "simultaneous", products: str = DEFAULT_PRODUCTS) -> np.ndarray:
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
    products : negative concentrations multiplied as they are ('chemkin') or
        under Cantera's sign guard ('cantera'; ``rates_of_progress``).

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
        qf, qr = rates_of_progress(mech, T, P, C, products=products)
    else:
        C_rates = C.copy()
        C_rates[tables.qss] = 1.0
        qf, qr = rates_of_progress(mech, T, P, C_rates, C_third_body=C, products=products)
        qf, qr = qssa.apply(build_qssa_system(mech), qf, qr)
    if dt is not None:
        qf, qr = stiffness_removal.remove_stiffness(mech, qf, qr, C, dt, diffusion_source, form=stiffness)
    return production_rates(mech, qf, qr)[tables.transported]
