"""Reference thermodynamics: NASA7 polynomials and equilibrium constants.

Plain numpy, vectorized over points: every function takes temperatures
``T`` [K] of shape (n,) (a scalar counts as one point) and returns arrays
with one row per species or per reaction and one column per point.  The
polynomials are evaluated term by term as Cantera's ``NasaPoly1`` does, so
the results agree with Cantera's to the last bits (docs/formulas.md §3).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from singe.constants import GAS_CONSTANT, ONE_ATM
from singe.mechanism import Mechanism
from singe.memo import per_mechanism


@dataclass(frozen=True)
class NasaTable:
    """NASA7 coefficients of every species, stacked: ``low`` and ``high`` are
    (7, n_species), ``T_mid`` is (n_species,) [K]."""

    T_mid: np.ndarray
    low: np.ndarray
    high: np.ndarray


@per_mechanism
def nasa_table(mech: Mechanism) -> NasaTable:
    """The stacked NASA7 coefficients of ``mech`` (built once per mechanism)."""
    T_mid = np.array([s.thermo.T_mid for s in mech.species], dtype=float)
    low = np.array([s.thermo.low for s in mech.species], dtype=float).T.copy()
    high = np.array([s.thermo.high for s in mech.species], dtype=float).T.copy()
    return NasaTable(T_mid, low, high)


def _temperatures(T) -> np.ndarray:
    T = np.atleast_1d(np.asarray(T, dtype=float))
    if T.ndim != 1:
        raise ValueError(f"temperatures must be a scalar or a 1-D array of points, got shape {T.shape}")
    if not np.all(T > 0.0):
        raise ValueError("temperatures must be positive [K]")
    return T


def _terms(mech: Mechanism, T: np.ndarray) -> tuple[np.ndarray, ...]:
    """The coefficient set for each (species, point) and Cantera's partial
    terms ct0..ct4 = a1, a2 T, a3 T^2, a4 T^3, a5 T^4, each (n_species, n)."""
    table = nasa_table(mech)
    a = np.where((T[None, :] <= table.T_mid[:, None])[None, :, :],
                 table.low[:, :, None], table.high[:, :, None])
    T2 = T * T
    T3 = T2 * T
    T4 = T3 * T
    return a, a[0], a[1] * T, a[2] * T2, a[3] * T3, a[4] * T4


def cp_R(mech: Mechanism, T) -> np.ndarray:
    """Standard-state heat capacities cp/R [-], (n_species, n)."""
    T = _temperatures(T)
    _, ct0, ct1, ct2, ct3, ct4 = _terms(mech, T)
    return ct0 + ct1 + ct2 + ct3 + ct4


def h_RT(mech: Mechanism, T) -> np.ndarray:
    """Standard-state enthalpies h/(R T) [-], (n_species, n)."""
    T = _temperatures(T)
    a, ct0, ct1, ct2, ct3, ct4 = _terms(mech, T)
    return ct0 + 0.5 * ct1 + 1.0 / 3.0 * ct2 + 0.25 * ct3 + 0.2 * ct4 + a[5] * (1.0 / T)


def s_R(mech: Mechanism, T) -> np.ndarray:
    """Standard-state entropies s/R [-] at P_atm, (n_species, n)."""
    T = _temperatures(T)
    a, ct0, ct1, ct2, ct3, ct4 = _terms(mech, T)
    return ct0 * np.log(T) + ct1 + 0.5 * ct2 + 1.0 / 3.0 * ct3 + 0.25 * ct4 + a[6]


def g_RT(mech: Mechanism, T) -> np.ndarray:
    """Standard-state Gibbs energies g/(R T) = h/(R T) - s/R [-], (n_species, n)."""
    return h_RT(mech, T) - s_R(mech, T)


@dataclass(frozen=True)
class ReactionStoichiometry:
    """Net stoichiometric matrix (n_reactions, n_species), products minus
    reactants as written, and the mole change Δν per reaction."""

    net: np.ndarray
    delta_nu: np.ndarray


@per_mechanism
def reaction_stoichiometry(mech: Mechanism) -> ReactionStoichiometry:
    """Net stoichiometry of every reaction of ``mech`` as written in CHEMKIN
    (a species on both sides counts on both; built once per mechanism)."""
    net = np.zeros((len(mech.reactions), mech.n_species))
    for j, reaction in enumerate(mech.reactions):
        for name, nu in reaction.reactants:
            net[j, mech.species_index(name)] -= nu
        for name, nu in reaction.products:
            net[j, mech.species_index(name)] += nu
    delta_nu = np.array([sum(nu for _, nu in r.products) - sum(nu for _, nu in r.reactants)
                         for r in mech.reactions], dtype=float)
    return ReactionStoichiometry(net, delta_nu)


def log_equilibrium_constants(mech: Mechanism, T) -> np.ndarray:
    """ln Kc [ln of (kmol/m^3)^Δν], (n_reactions, n), for every reaction
    (irreversible ones included): ln Kc = -Σ_k ν_k g_k/RT + Δν ln(P_atm/(R T))."""
    T = _temperatures(T)
    stoich = reaction_stoichiometry(mech)
    log_standard_concentration = np.log(ONE_ATM / (GAS_CONSTANT * T))
    return -(stoich.net @ g_RT(mech, T)) + stoich.delta_nu[:, None] * log_standard_concentration[None, :]


def equilibrium_constants(mech: Mechanism, T) -> np.ndarray:
    """Equilibrium constants in concentration units Kc [(kmol/m^3)^Δν],
    (n_reactions, n), Δν from the stoichiometry as written.  Unclamped (may
    overflow to inf or underflow to 0); the reverse rate constants use the
    clamped reciprocal (see ``singe.reference.kinetics``)."""
    with np.errstate(over="ignore"):
        return np.exp(log_equilibrium_constants(mech, T))
