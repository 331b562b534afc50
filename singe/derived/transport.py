"""Transport fits: what the compiler derives from TRANSPORT data.

CHEMKIN's (and Cantera's ``mixture-averaged-CK``) functional forms: per
species ln(eta_k) and ln(lambda_k), per pair ln(D_jk P), each a cubic in ln T
fitted by least squares to kinetic-theory values on 50 temperatures between
the mechanism's common NASA7 limits (docs/formulas.md §5).  The kinetic theory
needs the reduced collision integrals Omega(2,2)* and A* of the Stockmayer
potential, interpolated in the Monchick–Mason tables
(``singe/data/collision_integrals.json``) exactly as Cantera's
``MMCollisionInt`` does, so that the fits agree with Cantera to ~1e-10.

Everything is SI: T [K], eta [Pa s], D P [m^2 Pa / s], lambda [W/m/K].
"""

from __future__ import annotations

import functools
import importlib.resources
import json
from dataclasses import dataclass

import numpy as np

from singe.constants import (AVOGADRO, BOLTZMANN, GAS_CONSTANT, LIGHT_SPEED,
                             PERMITTIVITY_0)
from singe.derived.thermo import cp_R
from singe.errors import MechanismSemanticError, ProblemCollector
from singe.mechanism import Mechanism, Species
from singe.memo import per_mechanism

FIT_POINTS = 50
"""Number of temperatures the fits are made on (both limits included)."""
FIT_DEGREE = 3
"""Degree of the fits in ln T."""
DELTA_DEGREE = 6
"""Degree of the collision-integral fits in the reduced dipole moment delta*."""

_ROTATIONAL_DOFS = {0: 0.0, 1: 1.0, 2: 1.5}  # c_rot by geometry (atom, linear, nonlinear)
_MISSING_HINT = "add it to the TRANSPORT file (tran.dat) or pass transport=..."


# ---------------------------------------------------------------------------
# Collision integrals (Monchick & Mason tables, Cantera's interpolation)
# ---------------------------------------------------------------------------

@dataclass(frozen=True, eq=False)
class CollisionTables:
    """The Monchick–Mason tables reduced to what the interpolation needs.

    Node i (0..36) sits at T* = ``tstar[i]`` (``log_tstar`` = ln T*).
    ``omega22_zero`` / ``astar_zero`` (37,) are the delta* = 0 columns;
    ``omega22_poly`` / ``astar_poly`` (37, 7) are the degree-6 least-squares
    fits in delta* through the 8 table columns, ascending powers.  Omega(2,2)*
    node i is table row i of ``omega22``; A* node i is row i + 1 of ``astar``
    (that table has an extra T* = 0 row).
    """

    tstar: np.ndarray
    log_tstar: np.ndarray
    omega22_zero: np.ndarray
    astar_zero: np.ndarray
    omega22_poly: np.ndarray
    astar_poly: np.ndarray
    source: str


def _fit_delta(delta: np.ndarray, rows: np.ndarray) -> np.ndarray:
    """Degree-6 unweighted least squares of each table row in delta*.

    Parameters
    ----------
    delta : (8,) reduced dipole moments delta* [-] of the table columns.
    rows : (m, 8) tabulated values [-].

    Returns
    -------
    (m, 7) coefficients, ascending powers of delta*.
    """
    vandermonde = np.vander(delta, DELTA_DEGREE + 1, increasing=True)
    return _least_squares_qr(vandermonde, rows.T).T


@functools.lru_cache(maxsize=1)
def collision_tables() -> CollisionTables:
    """Load ``singe/data/collision_integrals.json`` and fit it in delta* (once)."""
    resource = importlib.resources.files("singe") / "data" / "collision_integrals.json"
    raw = json.loads(resource.read_text(encoding="utf-8"))
    delta = np.array(raw["delta"], dtype=float)
    tstar = np.array(raw["tstar22"], dtype=float)
    omega22 = np.array(raw["omega22"], dtype=float)
    astar = np.array(raw["astar"], dtype=float)[1:len(tstar) + 1]
    tables = CollisionTables(
        tstar=tstar,
        log_tstar=np.log(tstar),
        omega22_zero=omega22[:, 0].copy(),
        astar_zero=astar[:, 0].copy(),
        omega22_poly=_fit_delta(delta, omega22),
        astar_poly=_fit_delta(delta, astar),
        source=raw.get("source", ""),
    )
    for value in vars(tables).values():
        if isinstance(value, np.ndarray):
            value.setflags(write=False)
    return tables


def _first_node(tstar: np.ndarray, nodes: np.ndarray) -> np.ndarray:
    """Index of the first of the three interpolation nodes for each T*.

    i = first node with T* < node T* (37 if none); the window starts at
    max(i - 1, 0) and is moved to nodes 33, 34, 35 when it would pass node 36
    (Cantera's rule, kept for agreement to the last digits).
    """
    i = np.searchsorted(nodes, tstar, side="right")
    first = np.maximum(i - 1, 0)
    last_start = len(nodes) - 4
    return np.where(first + 3 > len(nodes) - 1, last_start, first)


def _horner(coefficients: np.ndarray, x: np.ndarray) -> np.ndarray:
    """Evaluate polynomials with ascending ``coefficients`` (..., d+1) at x (...)."""
    result = coefficients[..., -1]
    for j in range(coefficients.shape[-1] - 2, -1, -1):
        result = result * x + coefficients[..., j]
    return result


def _quadratic_interpolation(x: np.ndarray, nodes: list, values: list) -> np.ndarray:
    """The parabola through three (node, value) pairs, evaluated at x (Cantera's form)."""
    x0, x1, x2 = nodes
    y0, y1, y2 = values
    dx21 = x1 - x0
    dx32 = x2 - x1
    dx31 = dx21 + dx32
    dy32 = y2 - y1
    dy21 = y1 - y0
    a = (dx21 * dy32 - dy21 * dx32) / (dx21 * dx31 * dx32)
    return a * (x - x0) * (x - x1) + (dy21 / dx21) * (x - x1) + y1


def _interpolate(tstar, delta, zero_column: np.ndarray, poly: np.ndarray) -> np.ndarray:
    """Interpolate one collision-integral table at (T*, delta*), broadcast together."""
    tables = collision_tables()
    tstar, delta = np.broadcast_arrays(np.asarray(tstar, dtype=float),
                                       np.asarray(delta, dtype=float))
    first = _first_node(tstar, tables.tstar)
    nodes, values = [], []
    for m in range(3):
        node = first + m
        from_poly = _horner(poly[node], delta)
        values.append(np.where(delta == 0.0, zero_column[node], from_poly))
        nodes.append(tables.log_tstar[node])
    return _quadratic_interpolation(np.log(tstar), nodes, values)


def omega22(tstar, delta) -> np.ndarray:
    """Reduced collision integral Omega(2,2)* [-] at reduced temperature T* [-]
    and reduced dipole moment delta* [-] (arrays broadcast together)."""
    tables = collision_tables()
    return _interpolate(tstar, delta, tables.omega22_zero, tables.omega22_poly)


def astar(tstar, delta) -> np.ndarray:
    """Ratio A* = Omega(2,2)* / Omega(1,1)* [-] at (T*, delta*)."""
    tables = collision_tables()
    return _interpolate(tstar, delta, tables.astar_zero, tables.astar_poly)


def omega11(tstar, delta) -> np.ndarray:
    """Reduced collision integral Omega(1,1)* = Omega(2,2)* / A* [-] at (T*, delta*)."""
    return omega22(tstar, delta) / astar(tstar, delta)


# ---------------------------------------------------------------------------
# Molecular and pair parameters in SI units
# ---------------------------------------------------------------------------

@dataclass(frozen=True, eq=False)
class MolecularParameters:
    """TRANSPORT data of every species in SI units, as (n_species,) arrays.

    ``well_depth`` epsilon [J]; ``diameter`` sigma [m]; ``dipole`` mu [C m];
    ``polarizability`` alpha [m^3]; ``rotational_dofs`` c_rot [-] (0, 1, 1.5);
    ``rotational_relaxation`` Z_rot at 298 K [-]; ``molecular_weight``
    [kg/kmol].
    """

    well_depth: np.ndarray
    diameter: np.ndarray
    dipole: np.ndarray
    polarizability: np.ndarray
    rotational_dofs: np.ndarray
    rotational_relaxation: np.ndarray
    molecular_weight: np.ndarray


def molecular_parameters(species: tuple[Species, ...]) -> MolecularParameters:
    """Convert the species' TRANSPORT records (file units) to SI.

    eps/k [K] -> epsilon = k_B eps/k [J]; sigma [Angstrom] -> 1e-10 sigma [m];
    dipole [Debye] -> 1e-21/c dipole [C m]; alpha [Angstrom^3] -> 1e-30 alpha
    [m^3].  Every species must have transport data (see ``fit_transport``).
    """
    records = [s.transport for s in species]

    def column(attribute: str) -> np.ndarray:
        return np.array([getattr(r, attribute) for r in records], dtype=float)

    return MolecularParameters(
        well_depth=BOLTZMANN * column("well_depth"),
        diameter=1e-10 * column("diameter"),
        dipole=1e-21 / LIGHT_SPEED * column("dipole"),
        polarizability=1e-30 * column("polarizability"),
        rotational_dofs=np.array([_ROTATIONAL_DOFS[int(r.geometry)] for r in records]),
        rotational_relaxation=column("rotational_relaxation"),
        molecular_weight=np.array([s.molecular_weight for s in species], dtype=float),
    )


@dataclass(frozen=True, eq=False)
class PairParameters:
    """Collision parameters of every species pair, symmetric (n, n) arrays.

    ``reduced_mass`` m_jk [kg]; ``diameter`` d_jk [m] and ``well_depth``
    epsilon_jk [J], both with the polar/non-polar correction;
    ``delta_star`` delta*_jk [-] (from the uncorrected d_jk, epsilon_jk).
    """

    reduced_mass: np.ndarray
    diameter: np.ndarray
    well_depth: np.ndarray
    delta_star: np.ndarray


def _polar_correction(p: MolecularParameters) -> np.ndarray:
    """The factor xi [-] of each pair: 1 unless exactly one of the two is polar.

    xi = 1 + 1/4 alpha*_n mu*_p^2 sqrt(eps_p/eps_n), with alpha*_n =
    alpha_n/sigma_n^3 and mu*_p = mu_p / sqrt(4 pi eps0 sigma_p^3 eps_p).
    """
    polar = p.dipole > 0.0
    alpha_star = p.polarizability / p.diameter**3
    mu_star = p.dipole / np.sqrt(4.0 * np.pi * PERMITTIVITY_0 * p.diameter**3 * p.well_depth)
    # xi_polar_first[j, k]: j polar, k non-polar.
    xi_polar_first = 1.0 + 0.25 * alpha_star[None, :] * (mu_star**2)[:, None] * np.sqrt(
        p.well_depth[:, None] / p.well_depth[None, :])
    first_polar = polar[:, None] & ~polar[None, :]
    second_polar = ~polar[:, None] & polar[None, :]
    return np.where(first_polar, xi_polar_first, np.where(second_polar, xi_polar_first.T, 1.0))


def pair_parameters(p: MolecularParameters) -> PairParameters:
    """Reduced masses, collision diameters, well depths and delta* of all pairs."""
    mw = p.molecular_weight
    reduced_mass = mw[:, None] * mw[None, :] / (AVOGADRO * (mw[:, None] + mw[None, :]))
    diameter = 0.5 * (p.diameter[:, None] + p.diameter[None, :])
    well_depth = np.sqrt(p.well_depth[:, None] * p.well_depth[None, :])
    dipole = np.sqrt(p.dipole[:, None] * p.dipole[None, :])
    delta_star = 0.5 * dipole * dipole / (4.0 * np.pi * PERMITTIVITY_0 * well_depth * diameter**3)
    xi = _polar_correction(p)
    return PairParameters(
        reduced_mass=reduced_mass,
        diameter=diameter * xi ** (-1.0 / 6.0),
        well_depth=well_depth * xi * xi,
        delta_star=delta_star,
    )


# ---------------------------------------------------------------------------
# Kinetic theory on the fit grid
# ---------------------------------------------------------------------------

def fit_temperature_range(species: tuple[Species, ...]) -> tuple[float, float]:
    """(T_min, T_max) [K]: the largest NASA7 low limit and the smallest high limit."""
    return (max(s.thermo.T_low for s in species), min(s.thermo.T_high for s in species))


def fit_temperatures(T_min: float, T_max: float) -> np.ndarray:
    """The 50 fit temperatures [K], equally spaced in T, computed as Cantera does
    (T_min + n dT, so the last point may differ from T_max in the last bit)."""
    dt = (T_max - T_min) / (FIT_POINTS - 1)
    return T_min + dt * np.arange(FIT_POINTS)


def species_viscosity(p: MolecularParameters, pairs: PairParameters, T: np.ndarray) -> np.ndarray:
    """Pure-species viscosities eta_k [Pa s], (n_species, n_T), at T [K].

    eta_k = 5/16 sqrt(pi M_k k_B T / N_A) / (pi sigma_k^2 Omega22(k_B T/eps_k, delta*_kk)).
    """
    tstar = BOLTZMANN * T[None, :] / p.well_depth[:, None]
    om22 = omega22(tstar, np.diag(pairs.delta_star)[:, None])
    return (5.0 / 16.0 * np.sqrt(np.pi * p.molecular_weight[:, None] * BOLTZMANN * T[None, :] / AVOGADRO)
            / (om22 * np.pi * p.diameter[:, None] ** 2))


def binary_diffusion_pressure(pairs: PairParameters, T: np.ndarray, j: np.ndarray,
                              k: np.ndarray) -> np.ndarray:
    """Binary diffusion coefficients times pressure D_jk P [m^2 Pa/s] of the
    pairs (j[i], k[i]) at T [K]: (n_pairs, n_T).

    D_jk P = 3/16 sqrt(2 pi / m_jk) (k_B T)^1.5 / (pi d_jk^2 Omega11(k_B T/eps_jk, delta*_jk)).
    """
    eps = pairs.well_depth[j, k][:, None]
    d = pairs.diameter[j, k][:, None]
    om11 = omega11(BOLTZMANN * T[None, :] / eps, pairs.delta_star[j, k][:, None])
    return (3.0 / 16.0 * np.sqrt(2.0 * np.pi / pairs.reduced_mass[j, k])[:, None]
            * (BOLTZMANN * T[None, :]) ** 1.5 / (np.pi * d * d * om11))


def _rotational_collision_factor(tstar: np.ndarray) -> np.ndarray:
    """Parker's F(T*) = 1 + pi^1.5/sqrt(T*) (1/2 + 1/T*) + (pi^2/4 + 2)/T* [-]."""
    return (1.0 + np.pi**1.5 / np.sqrt(tstar) * (0.5 + 1.0 / tstar)
            + (0.25 * np.pi * np.pi + 2.0) / tstar)


def species_conductivity(p: MolecularParameters, T: np.ndarray, cp_R: np.ndarray,
                         viscosity: np.ndarray, self_diffusion: np.ndarray) -> np.ndarray:
    """Pure-species thermal conductivities lambda_k [W/m/K] (Warnatz form), (n_species, n_T).

    Parameters
    ----------
    p : SI molecular parameters.
    T : (n_T,) temperatures [K].
    cp_R : (n_species, n_T) cp/R [-] at T.
    viscosity : (n_species, n_T) eta_k [Pa s] at T (kinetic theory, not fitted).
    self_diffusion : (n_species, n_T) D_kk P [m^2 Pa/s] at T (not fitted).
    """
    mw = p.molecular_weight[:, None]
    c_rot = p.rotational_dofs[:, None]
    f_int = mw / (GAS_CONSTANT * T[None, :]) * self_diffusion / viscosity
    f_298 = _rotational_collision_factor(BOLTZMANN * 298.0 / p.well_depth)[:, None]
    f_T = _rotational_collision_factor(BOLTZMANN * T[None, :] / p.well_depth[:, None])
    a_factor = 2.5 - f_int
    b_factor = (p.rotational_relaxation[:, None] * f_298 / f_T
                + 2.0 / np.pi * (5.0 / 3.0 * c_rot + f_int))
    c1 = 2.0 / np.pi * a_factor / b_factor
    cv_int = cp_R - 2.5 - c_rot
    f_rot = f_int * (1.0 + c1)
    f_trans = 2.5 * (1.0 - c1 * c_rot / 1.5)
    return (viscosity / mw) * GAS_CONSTANT * (f_trans * 1.5 + f_rot * c_rot + f_int * cv_int)


# ---------------------------------------------------------------------------
# Least-squares fits in ln T
# ---------------------------------------------------------------------------

def _least_squares_qr(matrix: np.ndarray, rhs: np.ndarray) -> np.ndarray:
    """Least-squares solution of matrix @ x = rhs by Householder QR.

    ``matrix`` (m, n) with m >= n and full rank; ``rhs`` (m,) or (m, r).
    The normal equations would square the (large) condition number of a
    Vandermonde matrix; QR does not.
    """
    q, r = np.linalg.qr(matrix, mode="reduced")
    return np.linalg.solve(r, q.T @ rhs)


def fit_ln_T(T: np.ndarray, values: np.ndarray) -> np.ndarray:
    """Cubic least-squares fits of ``values`` (m, n_T) in ln T [K].

    Returns (m, 4) coefficients, ascending powers: c0 + c1 ln T + c2 ln T^2 + c3 ln T^3.
    """
    vandermonde = np.vander(np.log(T), FIT_DEGREE + 1, increasing=True)
    return _least_squares_qr(vandermonde, values.T).T


def evaluate_fit(coefficients: np.ndarray, T) -> np.ndarray:
    """Evaluate ln T cubics: ``coefficients`` (..., 4) at T [K] (n,) -> (..., n).

    The result is the fitted quantity's logarithm (ln eta, ln lambda, ln D P).
    """
    log_T = np.log(np.asarray(T, dtype=float))
    return _horner(np.asarray(coefficients)[..., None, :], log_T)


# ---------------------------------------------------------------------------
# The fits of a mechanism
# ---------------------------------------------------------------------------

@dataclass(frozen=True, eq=False)
class TransportFits:
    """Fitted transport properties of every species of a mechanism (QSSA included),
    indexed in ``Mechanism.species`` order.

    Coefficients are ascending powers of ln T [K]:
    ``viscosity`` (n, 4) of ln(eta_k [Pa s]); ``diffusion`` (n, n, 4) of
    ln(D_jk P [m^2 Pa/s]), symmetric in j, k; ``conductivity`` (n, 4) of
    ln(lambda_k [W/m/K]).  The fits hold on [``T_min``, ``T_max``] [K].
    """

    species: tuple[str, ...]
    T_min: float
    T_max: float
    viscosity: np.ndarray
    diffusion: np.ndarray
    conductivity: np.ndarray

    def verify(self) -> None:
        """Check shapes, finiteness and symmetry; raise ``AssertionError`` if broken."""
        n = len(self.species)
        assert self.viscosity.shape == (n, FIT_DEGREE + 1), self.viscosity.shape
        assert self.conductivity.shape == (n, FIT_DEGREE + 1), self.conductivity.shape
        assert self.diffusion.shape == (n, n, FIT_DEGREE + 1), self.diffusion.shape
        for array in (self.viscosity, self.diffusion, self.conductivity):
            assert np.all(np.isfinite(array))
        assert np.array_equal(self.diffusion, self.diffusion.transpose(1, 0, 2))
        assert 0.0 < self.T_min < self.T_max

    def __repr__(self) -> str:
        return (f"TransportFits({len(self.species)} species, cubic in ln T on "
                f"[{self.T_min:g}, {self.T_max:g}] K)")


def check_transport_data(mech: Mechanism) -> None:
    """Raise ``MechanismSemanticError`` naming every species without usable
    TRANSPORT data (all species need it: the fits cover every pair)."""
    problems = ProblemCollector()
    for s in mech.species:
        if s.transport is None:
            problems.add(s.location, f"no transport data for species '{s.name}'", _MISSING_HINT)
            continue
        where = s.transport.location or s.location
        if s.transport.geometry not in _ROTATIONAL_DOFS:
            problems.add(where, f"species '{s.name}' has geometry {s.transport.geometry:g} "
                                "in its transport data", "use 0 (atom), 1 (linear) or 2 (nonlinear)")
        if not (s.transport.well_depth > 0.0 and s.transport.diameter > 0.0):
            problems.add(where, f"species '{s.name}' has a non-positive well depth or diameter "
                                "in its transport data", "eps/k [K] and sigma [Angstrom] must be > 0")
    problems.raise_if_any(MechanismSemanticError)


def _fit_arrays(species: tuple[Species, ...], T: np.ndarray, cp_R_values: np.ndarray):
    """Kinetic-theory values at the fit temperatures T [K], fitted in ln T.

    ``cp_R_values`` (n, n_T) are the species' cp/R [-] at T.  Returns
    (viscosity (n, 4), diffusion (n, n, 4), conductivity (n, 4)).
    """
    n = len(species)
    p = molecular_parameters(species)
    pairs = pair_parameters(p)
    eta = species_viscosity(p, pairs, T)
    j, k = np.triu_indices(n)
    diffusion_P = binary_diffusion_pressure(pairs, T, j, k)
    self_diffusion = diffusion_P[j == k]  # triu_indices lists (k, k) in order of k
    conductivity = species_conductivity(p, T, cp_R_values, eta, self_diffusion)
    pair_fits = fit_ln_T(T, np.log(diffusion_P))
    diffusion = np.empty((n, n, FIT_DEGREE + 1))
    diffusion[j, k] = pair_fits
    diffusion[k, j] = pair_fits
    return fit_ln_T(T, np.log(eta)), diffusion, fit_ln_T(T, np.log(conductivity))


@per_mechanism
def fit_transport(mech: Mechanism) -> TransportFits:
    """Fit viscosity, binary diffusion and conductivity of every species of ``mech``
    (QSSA species included), docs/formulas.md §5.

    Cached per Mechanism object (the kernels call this repeatedly); the
    returned arrays are read-only.

    Raises
    ------
    MechanismSemanticError
        If any species lacks TRANSPORT data (all of them are listed).
    """
    check_transport_data(mech)
    T_min, T_max = fit_temperature_range(mech.species)
    T = fit_temperatures(T_min, T_max)
    viscosity, diffusion, conductivity = _fit_arrays(mech.species, T, cp_R(mech, T))
    for array in (viscosity, diffusion, conductivity):
        array.setflags(write=False)
    return TransportFits(species=tuple(mech.species_names), T_min=T_min, T_max=T_max,
                         viscosity=viscosity, diffusion=diffusion, conductivity=conductivity)
