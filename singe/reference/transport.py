"""Mixture transport properties in numpy: the definition the viscosity,
diffusion and conductivity kernels are checked against (docs/formulas.md §6).

The state is that of the kernels: temperature T [K] (n,), pressure P [Pa]
(n,) and the mass fractions Y (n_transported, n) of ``mech.transported_species``.
QSSA species are not part of the state: the mixture is the transported
species only (their mass fractions are taken as 0 and they are left out).
Species properties come from the fitted cubics in ln T (``singe.derived.transport``),
as in the kernels and in Cantera's ``mixture-averaged-CK`` model.

Mole fractions are clamped, x_k <- max(x_k, 1e-20), without renormalising;
the mean molecular weight comes from the unclamped state.
"""

from __future__ import annotations

import numpy as np

from singe.derived.transport import evaluate_fit, fit_transport
from singe.mechanism import Mechanism

TINY = 1e-20
"""Lower clamp of the mole fractions [-] (Cantera's ``Tiny``)."""


# ---------------------------------------------------------------------------
# State handling
# ---------------------------------------------------------------------------

def _points(name: str, value, n: int | None) -> np.ndarray:
    """``value`` as a (n,) float array: a scalar is broadcast, a 1-D array must have n entries."""
    array = np.asarray(value, dtype=float)
    if array.ndim == 0:
        return np.full(1 if n is None else n, float(array))
    if array.ndim != 1:
        raise ValueError(f"{name} must be a scalar or a 1-D array of points, got shape {array.shape}")
    if n is not None and array.shape[0] not in (1, n):
        raise ValueError(f"{name} has {array.shape[0]} points but the state has {n}")
    return np.broadcast_to(array, (n if n is not None else array.shape[0],)).astype(float)


def _mass_fractions(mech: Mechanism, Y) -> np.ndarray:
    """Y as (n_transported, n): a 1-D array is one point."""
    n_species = len(mech.transported_species)
    Y = np.asarray(Y, dtype=float)
    if Y.ndim == 1:
        Y = Y[:, None]
    if Y.ndim != 2 or Y.shape[0] != n_species:
        raise ValueError(f"Y must have shape (n_transported={n_species}, n_points) "
                         f"(transported species of {mech.name!r}, QSSA excluded), got {Y.shape}")
    return Y


def _state(mech: Mechanism, T, P, Y):
    """Validated (T (n,), P (n,), Y (n_transported, n)) arrays."""
    Y = _mass_fractions(mech, Y)
    n = Y.shape[1]
    return _points("T", T, n), _points("P", P, n), Y


def _transported_weights(mech: Mechanism) -> np.ndarray:
    """Molecular weights of the transported species [kg/kmol], (n_transported,)."""
    return mech.molecular_weights[mech.transported_indices]


def mole_fractions(mech: Mechanism, Y: np.ndarray):
    """Clamped mole fractions and the mean molecular weight.

    Parameters
    ----------
    Y : (n_transported, n) mass fractions [-]; a negative one counts as 0, as Cantera's ``TPY`` sets it (the
        state normalised then: every formula here is homogeneous of degree 0 in the mass fractions).

    Returns
    -------
    x : (n_transported, n) mole fractions [-], clamped to >= 1e-20 (not renormalised).
    mean_weight : (n,) mean molecular weight [kg/kmol] of the mixture, negative mass fractions at 0.
    """
    W = _transported_weights(mech)[:, None]
    moles = np.maximum(Y, 0.0) / W
    total = moles.sum(axis=0)
    x = moles / total
    mean_weight = (x * W).sum(axis=0)
    return np.maximum(x, TINY), mean_weight


# ---------------------------------------------------------------------------
# Species properties from the fits
# ---------------------------------------------------------------------------

def _transported_fits(mech: Mechanism):
    """The mechanism's fits and the indices of its transported species in them."""
    fits = fit_transport(mech)
    idx = mech.transported_indices
    return fits, idx


def species_log_viscosities(mech: Mechanism, T) -> np.ndarray:
    """ln(eta_k [Pa s]) of the transported species at T [K]: (n_transported, n)."""
    fits, idx = _transported_fits(mech)
    return evaluate_fit(fits.viscosity[idx], _points("T", T, None))


def species_viscosities(mech: Mechanism, T) -> np.ndarray:
    """Viscosities eta_k [Pa s] of the transported species at T [K]: (n_transported, n)."""
    return np.exp(species_log_viscosities(mech, T))


def species_conductivities(mech: Mechanism, T) -> np.ndarray:
    """Thermal conductivities lambda_k [W/m/K] of the transported species at T [K]:
    (n_transported, n)."""
    fits, idx = _transported_fits(mech)
    return np.exp(evaluate_fit(fits.conductivity[idx], _points("T", T, None)))


def binary_diffusion(mech: Mechanism, T, P) -> np.ndarray:
    """Binary diffusion coefficients D_jk [m^2/s] of the transported species at
    T [K], P [Pa]: (n_transported, n_transported, n), symmetric in j, k."""
    T = _points("T", T, None)
    P = _points("P", P, T.shape[0])
    fits, idx = _transported_fits(mech)
    return np.exp(evaluate_fit(fits.diffusion[np.ix_(idx, idx)], T)) / P


# ---------------------------------------------------------------------------
# Mixture rules
# ---------------------------------------------------------------------------

CHUNK = 4096
"""Points per block in the mixture rules (bounds the (K, K, points) temporaries)."""


def _in_chunks(rule, mech: Mechanism, T: np.ndarray, P: np.ndarray, Y: np.ndarray) -> np.ndarray:
    """Apply ``rule(mech, T, P, Y)`` to blocks of at most ``CHUNK`` points and join
    the results along the last (points) axis."""
    blocks = [rule(mech, T[s:s + CHUNK], P[s:s + CHUNK], Y[:, s:s + CHUNK])
              for s in range(0, T.shape[0], CHUNK)]
    return np.concatenate(blocks, axis=-1)


def _wilke(mech: Mechanism, T, P, Y) -> np.ndarray:
    x, _ = mole_fractions(mech, Y)
    log_eta = species_log_viscosities(mech, T)  # (K, n)
    W = _transported_weights(mech)
    ratio = np.exp(0.5 * (log_eta[:, None, :] - log_eta[None, :, :]))  # [k, j, n]
    weight_factor = ((W[None, :] / W[:, None]) ** 0.25)[:, :, None]
    phi = (1.0 + ratio * weight_factor) ** 2 / np.sqrt(8.0 * (1.0 + W[:, None] / W[None, :]))[:, :, None]
    denominator = np.einsum("kjn,jn->kn", phi, x)
    return (x * np.exp(log_eta) / denominator).sum(axis=0)


def viscosity(mech: Mechanism, T, P, Y) -> np.ndarray:
    """Mixture viscosity [Pa s] by Wilke's rule, (n,).

    eta = sum_k x_k eta_k / sum_j x_j Phi_kj with
    Phi_kj = [1 + sqrt(eta_k/eta_j) (M_j/M_k)^(1/4)]^2 / sqrt(8 (1 + M_k/M_j)),
    sqrt(eta_k/eta_j) = exp((ln eta_k - ln eta_j)/2).  P [Pa] does not enter
    (it is validated for a uniform interface).
    """
    return _in_chunks(_wilke, mech, *_state(mech, T, P, Y))


def _mixture_averaged(mech: Mechanism, T, P, Y) -> np.ndarray:
    x, mean_weight = mole_fractions(mech, Y)
    D = binary_diffusion(mech, T, P)  # (K, K, n)
    K = D.shape[0]
    if K == 1:
        return D[0].copy()
    inverse = 1.0 / D
    inverse[np.arange(K), np.arange(K)] = 0.0
    resistance = np.einsum("jkn,jn->kn", inverse, x)
    W = _transported_weights(mech)[:, None]
    return (mean_weight - x * W) / (mean_weight * resistance)


def mixture_diffusion(mech: Mechanism, T, P, Y) -> np.ndarray:
    """Mixture-averaged diffusion coefficients D_km [m^2/s], (n_transported, n).

    D_km = (M - x_k M_k) / (M sum_{j != k} x_j / D_jk), Cantera's
    ``mix_diff_coeffs`` (clamped x; M the unclamped mean molecular weight;
    D_jk = exp(fit(ln T)) / P); D_kk for a single species.
    """
    return _in_chunks(_mixture_averaged, mech, *_state(mech, T, P, Y))


def thermal_conductivity(mech: Mechanism, T, P, Y) -> np.ndarray:
    """Mixture thermal conductivity [W/m/K], (n,): the mean of the mole-fraction
    weighted arithmetic and harmonic means, 1/2 (sum x_k l_k + 1/sum x_k/l_k)."""
    T, P, Y = _state(mech, T, P, Y)
    x, _ = mole_fractions(mech, Y)
    lam = species_conductivities(mech, T)
    return 0.5 * ((x * lam).sum(axis=0) + 1.0 / (x / lam).sum(axis=0))
