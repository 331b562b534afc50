"""Linearized quasi-steady-state approximation (Lu & Law), docs/formulas.md §7.

The QSSA species Q are not part of the state.  Every rate of progress is
evaluated with their concentrations set to 1 (kmol/m^3), so a direction whose
consuming side holds one QSSA molecule k is proportional to the unknown x_k.
Directions with more than one QSSA molecule on their consuming side are
dropped (rate 0: the linearization).  Steady state of every i in Q then reads

    x_i = a_i0 + sum_j a_ij x_j,
    a_i0 = P_i0 / D_i,  a_ij = P_ij / D_i,

with D_i the (x = 1) consumption rate of i, P_i0 its production by directions
with no QSSA molecule on their consuming side and P_ij by those whose single
QSSA molecule is j.  The system is solved component by component over the
strongly connected components of the graph i -> j (a_ij structurally
non-zero), dependencies first, with Gaussian elimination inside a component.
Finally every surviving direction is multiplied by x_k of its consuming
side's QSSA species.

A *direction* is (reaction index, FORWARD or REVERSE); its consuming side is
the reactants for FORWARD and the products for REVERSE.  Rates of progress
are arrays (n_reactions, n) [kmol/m^3/s], one column per point.
"""

from __future__ import annotations

import numpy as np

from singe.constants import D_FLOOR
from singe.derived.qssa import FORWARD, REVERSE, QssaSystem, build_qssa_system

__all__ = ["FORWARD", "REVERSE", "QssaSystem", "build_qssa_system", "coefficients", "solve", "dense_solve",
           "apply", "concentrations"]


def coefficients(system: QssaSystem, qf: np.ndarray, qr: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """a0 (nq, n) and A (nq, nq, n) of x = a0 + A x.

    ``qf``, ``qr`` (n_reactions, n) [kmol/m^3/s] are the rates of progress with
    every QSSA concentration set to 1 kmol/m^3 (and [M] without QSSA species).
    a0 is in kmol/m^3, A is dimensionless; D_i is floored at ``D_FLOOR``.
    """
    R = _stack(system, qf, qr)
    D_op, P0_op, P_op = system._operators
    nq, n = system.n_qss, R.shape[1]
    D = np.maximum(D_op @ R, D_FLOOR)
    a0 = (P0_op @ R) / D
    A = (P_op @ R).reshape(nq, nq, n) / D[:, None, :]
    return a0, A


def _stack(system: QssaSystem, qf: np.ndarray, qr: np.ndarray) -> np.ndarray:
    qf = np.asarray(qf, dtype=float)
    qr = np.asarray(qr, dtype=float)
    if qf.ndim == 1:
        qf, qr = qf[:, None], qr[:, None]
    if qf.shape[0] != system.n_reactions or qr.shape != qf.shape:
        raise ValueError(f"rates of progress must be ({system.n_reactions}, n); "
                         f"got {qf.shape} and {qr.shape}")
    return np.concatenate([qf, qr], axis=0)


def solve(system: QssaSystem, a0: np.ndarray, A: np.ndarray) -> np.ndarray:
    """x (nq, n) [kmol/m^3] with x = a0 + A x, component by component.

    Components are taken in ``system.components`` order; each one's right-hand
    side uses the x of the components already solved, and inside a component
    (I - A_cc) x_c = b_c is solved by Gaussian elimination without pivoting
    (rows in ascending species order), then back-substitution.
    """
    a0 = np.asarray(a0, dtype=float)
    x = np.zeros_like(a0)
    for component in system.components:
        inside = set(component)
        b = [a0[i].copy() for i in component]
        for row, i in enumerate(component):
            for j in system.dependencies(i):
                if j not in inside:
                    b[row] += A[i, j] * x[j]
        M = [[(1.0 if i == j else 0.0) - A[i, j] for j in component] for i in component]
        for row, value in zip(component, _eliminate(M, b)):
            x[row] = value
    return x


def _eliminate(M: list[list[np.ndarray]], b: list[np.ndarray]) -> list[np.ndarray]:
    """Solve M y = b (m x m blocks of point vectors) by Gaussian elimination
    without pivoting and back-substitution; M and b are overwritten."""
    m = len(b)
    for k in range(m):
        for i in range(k + 1, m):
            factor = M[i][k] / M[k][k]
            for j in range(k + 1, m):
                M[i][j] = M[i][j] - factor * M[k][j]
            b[i] = b[i] - factor * b[k]
    y: list[np.ndarray] = [None] * m  # type: ignore[list-item]
    for i in reversed(range(m)):
        total = b[i]
        for j in range(i + 1, m):
            total = total - M[i][j] * y[j]
        y[i] = total / M[i][i]
    return y


def dense_solve(a0: np.ndarray, A: np.ndarray, refinements: int = 3) -> np.ndarray:
    """x with (I - A) x = a0 at every point, by LU with partial pivoting and
    iterative refinement (residuals in extended precision).  A test reference."""
    a0 = np.asarray(a0, dtype=float)
    nq, n = a0.shape
    M = np.eye(nq)[None, :, :] - np.moveaxis(A, 2, 0)  # (n, nq, nq)
    b = a0.T[:, :, None]
    x = np.linalg.solve(M, b)
    M_long = M.astype(np.longdouble)
    b_long = b.astype(np.longdouble)
    for _ in range(refinements):
        residual = b_long - M_long @ x.astype(np.longdouble)
        x = x + np.linalg.solve(M, residual.astype(float))
    return x[:, :, 0].T


def apply(system: QssaSystem, qf: np.ndarray, qr: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Rates of progress (n_reactions, n) [kmol/m^3/s] after the QSSA.

    Dropped directions become 0; every other direction whose consuming side
    holds QSSA species k is multiplied by x_k.  New arrays are returned.
    """
    x = concentrations(system, qf, qr)
    qf = np.array(qf, dtype=float)
    qr = np.array(qr, dtype=float)
    squeeze = qf.ndim == 1
    if squeeze:
        qf, qr = qf[:, None], qr[:, None]
    rates = (qf, qr)
    for reaction, direction in system.dropped:
        rates[direction][reaction] = 0.0
    for reaction, direction, k in system.scaled:
        rates[direction][reaction] *= x[k]
    if squeeze:
        return qf[:, 0], qr[:, 0]
    return qf, qr


def concentrations(system: QssaSystem, qf: np.ndarray, qr: np.ndarray) -> np.ndarray:
    """QSSA concentrations x (nq, n) [kmol/m^3] from the x = 1 rates of progress."""
    a0, A = coefficients(system, qf, qr)
    return solve(system, a0, A)
