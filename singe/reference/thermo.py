"""Reference thermodynamics: standard-state properties and equilibrium constants.

Plain numpy, vectorized over points: every function takes temperatures
``T`` [K] of shape (n,) (a scalar counts as one point) and returns arrays
with one row per species or per reaction and one column per point.  The
NASA polynomials and their evaluation (``cp_R``, ``h_RT``, ``s_R``,
``g_RT``) are the mechanism's derived tables (``singe.derived.thermo``),
which agree with Cantera's ``NasaPoly1`` to the last bits (docs/formulas.md §3).
"""

from __future__ import annotations

import numpy as np

from singe.constants import GAS_CONSTANT, ONE_ATM
from singe.derived.stoichiometry import reaction_stoichiometry
from singe.derived.thermo import cp_R, g_RT, h_RT, s_R, temperatures
from singe.mechanism import Mechanism

__all__ = ["cp_R", "h_RT", "s_R", "g_RT", "log_equilibrium_constants", "equilibrium_constants"]


def log_equilibrium_constants(mech: Mechanism, T) -> np.ndarray:
    """ln Kc [ln of (kmol/m^3)^Δν], (n_reactions, n), for every reaction
    (irreversible ones included): ln Kc = -Σ_k ν_k g_k/RT + Δν ln(P_atm/(R T))."""
    T = temperatures(T)
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
