"""NASA7 and NASA9 polynomials of a mechanism, stacked, and their evaluation.

``nasa_table`` stacks every species' coefficients once per mechanism;
``cp_R``, ``h_RT``, ``s_R`` and ``g_RT`` evaluate them vectorized over points:
temperatures ``T`` [K] of shape (n,) (a scalar counts as one point) give
arrays (n_species, n).  The polynomials are evaluated term by term as
Cantera's ``NasaPoly1`` does, so the results agree with Cantera's to the last
bits (docs/formulas.md §3).  The transport fits (``singe.derived.transport``)
and the reference (``singe.reference.thermo``) read them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np

from singe.mechanism import Mechanism, Nasa7
from singe.memo import per_mechanism


@dataclass(frozen=True)
class Nasa9Table:
    """NASA9 coefficients of the species with NASA9 thermo: ``species`` their
    indices, ``bounds`` (n, R-1) the breakpoints between ranges (padded with
    inf), ``coeffs`` (9, n, R) the coefficient sets (padded with the last)."""

    species: np.ndarray
    bounds: np.ndarray
    coeffs: np.ndarray


@dataclass(frozen=True)
class NasaTable:
    """NASA7 coefficients of the NASA7 species (indices ``species``), stacked:
    ``low`` and ``high`` are (7, n), ``T_mid`` is (n,) [K]; ``nasa9`` holds
    the NASA9 species (None when there are none)."""

    T_mid: np.ndarray
    low: np.ndarray
    high: np.ndarray
    species: np.ndarray
    nasa9: Nasa9Table | None = None


def _nasa9_table(mech: Mechanism, indices: list[int]) -> Nasa9Table | None:
    if not indices:
        return None
    pieces = [mech.species[i].thermo.pieces for i in indices]
    n_ranges = max(len(sets) for _, sets in pieces)
    bounds = np.full((len(indices), max(n_ranges - 1, 1)), np.inf)
    coeffs = np.empty((9, len(indices), n_ranges))
    for k, (breaks, sets) in enumerate(pieces):
        bounds[k, :len(breaks)] = breaks
        padded = list(sets) + [sets[-1]] * (n_ranges - len(sets))
        coeffs[:, k, :] = np.array(padded, dtype=float).T
    return Nasa9Table(np.array(indices, dtype=int), bounds, coeffs)


@per_mechanism
def nasa_table(mech: Mechanism) -> NasaTable:
    """The stacked NASA7 and NASA9 coefficients of ``mech`` (built once per mechanism)."""
    nasa7 = [i for i, s in enumerate(mech.species) if isinstance(s.thermo, Nasa7)]
    thermos = [mech.species[i].thermo for i in nasa7]
    T_mid = np.array([t.T_mid for t in thermos], dtype=float)
    low = np.array([t.low for t in thermos], dtype=float).reshape(len(nasa7), 7).T.copy()
    high = np.array([t.high for t in thermos], dtype=float).reshape(len(nasa7), 7).T.copy()
    nasa9 = _nasa9_table(mech, [i for i in range(mech.n_species) if i not in set(nasa7)])
    return NasaTable(T_mid, low, high, np.array(nasa7, dtype=int), nasa9)


def temperatures(T) -> np.ndarray:
    """``T`` [K] as a 1-D array of positive temperatures (a scalar is one point)."""
    T = np.atleast_1d(np.asarray(T, dtype=float))
    if T.ndim != 1:
        raise ValueError(f"temperatures must be a scalar or a 1-D array of points, got shape {T.shape}")
    if not np.all(T > 0.0):
        raise ValueError("temperatures must be positive [K]")
    return T


def _terms(table: NasaTable, T: np.ndarray) -> tuple[np.ndarray, ...]:
    """The NASA7 coefficient set for each (species, point) and Cantera's partial
    terms ct0..ct4 = a1, a2 T, a3 T^2, a4 T^3, a5 T^4, each (n_species, n)."""
    a = np.where((T[None, :] <= table.T_mid[:, None])[None, :, :],
                 table.low[:, :, None], table.high[:, :, None])
    T2 = T * T
    T3 = T2 * T
    T4 = T3 * T
    return a, a[0], a[1] * T, a[2] * T2, a[3] * T3, a[4] * T4


def _terms9(table: Nasa9Table, T: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The NASA9 coefficient set (9, n_species, n) for each (species, point) —
    range r applies from bound r-1 up to below bound r, as Cantera's
    Nasa9PolyMultiTempRegion — and Cantera's powers [T, T^2, T^3, T^4, 1/T, 1/T^2, ln T]."""
    region = (T[None, None, :] >= table.bounds[:, :, None]).sum(axis=1)
    a = np.take_along_axis(table.coeffs[:, :, :, None], region[None, :, None, :], axis=2)[:, :, 0, :]
    return a, np.array([T, T * T, T ** 3, T ** 4, 1.0 / T, 1.0 / (T * T), np.log(T)])


def _by_model(mech: Mechanism, T, nasa7: Callable, nasa9: Callable) -> np.ndarray:
    """``nasa7(table, T)`` for the NASA7 species and ``nasa9(a, tt)`` for the NASA9 ones, (n_species, n)."""
    T = temperatures(T)
    table = nasa_table(mech)
    if table.nasa9 is None:
        return nasa7(table, T)
    out = np.empty((mech.n_species, T.size))
    out[table.species] = nasa7(table, T)
    out[table.nasa9.species] = nasa9(*_terms9(table.nasa9, T))
    return out


def _cp7(table, T):
    _, ct0, ct1, ct2, ct3, ct4 = _terms(table, T)
    return ct0 + ct1 + ct2 + ct3 + ct4


def _h7(table, T):
    a, ct0, ct1, ct2, ct3, ct4 = _terms(table, T)
    return ct0 + 0.5 * ct1 + 1.0 / 3.0 * ct2 + 0.25 * ct3 + 0.2 * ct4 + a[5] * (1.0 / T)


def _s7(table, T):
    a, ct0, ct1, ct2, ct3, ct4 = _terms(table, T)
    return ct0 * np.log(T) + ct1 + 0.5 * ct2 + 1.0 / 3.0 * ct3 + 0.25 * ct4 + a[6]


def _cp9(a, tt):
    return a[0] * tt[5] + a[1] * tt[4] + a[2] + a[3] * tt[0] + a[4] * tt[1] + a[5] * tt[2] + a[6] * tt[3]


def _h9(a, tt):
    return (-a[0] * tt[5] + a[1] * tt[6] * tt[4] + a[2] + 0.5 * a[3] * tt[0] + 1.0 / 3.0 * a[4] * tt[1]
            + 0.25 * a[5] * tt[2] + 0.2 * a[6] * tt[3] + a[7] * tt[4])


def _s9(a, tt):
    return (-0.5 * a[0] * tt[5] - a[1] * tt[4] + a[2] * tt[6] + a[3] * tt[0] + 0.5 * a[4] * tt[1]
            + 1.0 / 3.0 * a[5] * tt[2] + 0.25 * a[6] * tt[3] + a[8])


def cp_R(mech: Mechanism, T) -> np.ndarray:
    """Standard-state heat capacities cp/R [-], (n_species, n)."""
    return _by_model(mech, T, _cp7, _cp9)


def h_RT(mech: Mechanism, T) -> np.ndarray:
    """Standard-state enthalpies h/(R T) [-], (n_species, n)."""
    return _by_model(mech, T, _h7, _h9)


def s_R(mech: Mechanism, T) -> np.ndarray:
    """Standard-state entropies s/R [-] at P_atm, (n_species, n)."""
    return _by_model(mech, T, _s7, _s9)


def g_RT(mech: Mechanism, T) -> np.ndarray:
    """Standard-state Gibbs energies g/(R T) = h/(R T) - s/R [-], (n_species, n)."""
    return h_RT(mech, T) - s_R(mech, T)
