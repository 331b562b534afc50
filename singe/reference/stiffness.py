"""Dynamic stiffness removal (Lu et al. 2009), docs/formulas.md §8.

For each stiff species s whose destruction time scale C_s / DDOT is shorter
than dt/2, the rates that destroy s are scaled by r_s^nu, where r_s = C0/C_s
is the ratio of a two-step quasi-steady estimate C0 of its concentration to
the present one.  Rates of progress are arrays (n_reactions, n)
[kmol/m^3/s], taken after the QSSA scaling.
"""

from __future__ import annotations

import numpy as np

from singe.constants import C_FLOOR
from singe.derived.stoichiometry import STIFFNESS_FORMS, stiff_stoichiometry
from singe.mechanism import Mechanism


def remove_stiffness(mech: Mechanism, qf: np.ndarray, qr: np.ndarray, C: np.ndarray,
                     dt, diffusion_source=None, form: str = "simultaneous"
                     ) -> tuple[np.ndarray, np.ndarray]:
    """Rates of progress after dynamic stiffness removal; new arrays.

    Parameters
    ----------
    mech : the mechanism; ``mech.stiff_species`` in processing order.
    qf, qr : forward and reverse rates of progress (n_reactions, n)
        [kmol/m^3/s], after the QSSA.
    C : concentrations of every species (n_species, n) [kmol/m^3] (rows of
        QSSA species are not read).
    dt : time step [s], a scalar or (n,).
    diffusion_source : (n_transported, n) [kg/m^3/s] in the order of
        ``mech.transported_species``, or None for zero.
    form : 'simultaneous' (every factor from the same rates, then all
        applied; Singe's kernels) or 'sequential' (species in list order, each
        on the rates already scaled by the earlier ones; the Fortran original).
    """
    if form not in STIFFNESS_FORMS:
        raise ValueError(f"unknown stiffness removal form {form!r}; expected one of {', '.join(STIFFNESS_FORMS)}")
    qf = np.array(qf, dtype=float)
    qr = np.array(qr, dtype=float)
    if not mech.stiff_species:
        return qf, qr
    nu_r, nu_p = stiff_stoichiometry(mech)
    C = np.asarray(C, dtype=float)
    n = qf.shape[1]
    dt = np.broadcast_to(np.asarray(dt, dtype=float), (n,))
    stiff_rows = np.array([mech.species_index(name) for name in mech.stiff_species])
    C_s = np.maximum(C[stiff_rows], C_FLOOR)
    W_s = mech.molecular_weights[stiff_rows]
    if diffusion_source is None:
        diffusion = np.zeros((len(stiff_rows), n))
    else:
        transported = {name: t for t, name in enumerate(mech.transported_species)}
        rows = [transported[name] for name in mech.stiff_species]
        diffusion = np.asarray(diffusion_source, dtype=float)[rows] / W_s[:, None]
    if form == "simultaneous":
        factors = [_factor(nu_r[s], nu_p[s], qf, qr, C_s[s], diffusion[s], dt)
                   for s in range(len(stiff_rows))]
        for s, factor in enumerate(factors):
            _scale(nu_r[s], nu_p[s], qf, qr, factor)
    else:
        for s in range(len(stiff_rows)):
            factor = _factor(nu_r[s], nu_p[s], qf, qr, C_s[s], diffusion[s], dt)
            _scale(nu_r[s], nu_p[s], qf, qr, factor)
    return qf, qr


def _factor(nu_r: np.ndarray, nu_p: np.ndarray, qf: np.ndarray, qr: np.ndarray,
            C_s: np.ndarray, diffusion: np.ndarray, dt: np.ndarray) -> np.ndarray:
    """r_s (n,) for one stiff species: 1 where it is not stiff.

    ``diffusion`` is DIFF_s / W_s [kmol/m^3/s], ``C_s`` floored [kmol/m^3].
    """
    destruction = nu_r @ qf + nu_p @ qr
    creation = nu_p @ qf + nu_r @ qr
    stiff = destruction / C_s > 2.0 / dt
    with np.errstate(divide="ignore", invalid="ignore"):
        c0 = C_s * (creation + diffusion) / destruction
        c0 = C_s * (creation + diffusion + (C_s - c0) / dt) / destruction
        return np.where(stiff, c0 / C_s, 1.0)


def _scale(nu_r: np.ndarray, nu_p: np.ndarray, qf: np.ndarray, qr: np.ndarray,
           factor: np.ndarray) -> None:
    """qf_r *= factor^nu'_r, qr_r *= factor^nu''_r, in place (the destroying directions)."""
    for nu, rates in ((nu_r, qf), (nu_p, qr)):
        for r in np.flatnonzero(nu):
            rates[r] *= factor if nu[r] == 1.0 else factor ** nu[r]
