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

import functools
from dataclasses import dataclass

import numpy as np

from singe.errors import MechanismSemanticError, Problem
from singe.mechanism import Mechanism, Reaction
from singe.memo import per_mechanism

FORWARD = 0
REVERSE = 1
DIRECTION_NAMES = ("forward", "reverse")

#: lower bound of the consumption rate D_i [kmol/m^3/s] (docs/formulas.md §7)
D_FLOOR = 1e-50

# A term of a sum over directions: (reaction, direction, multiplicity).
Term = tuple[int, int, float]


@dataclass(frozen=True)
class QssaSystem:
    """Structure of the linear QSSA system of one mechanism (stoichiometry only).

    QSSA species are numbered 0..nq-1 in the order of ``Mechanism.qss_species``.

    Attributes
    ----------
    species : QSSA species names.
    species_indices : their positions in ``Mechanism.species_names``.
    n_reactions : number of reactions of the mechanism.
    dropped : directions (reaction, direction) with more than one QSSA
        molecule on their consuming side; their rate is set to 0.
    consumers : per QSSA species i, the terms of D_i: directions whose single
        QSSA molecule on the consuming side is i.
    sources : per i, the terms of P_i0 (directions with no QSSA molecule on
        the consuming side producing i, multiplicity = its product coefficient).
    couplings : per i, (j, reaction, direction, multiplicity): the terms of P_ij.
    scaled : (reaction, direction, k) for every direction kept whose consuming
        side holds QSSA species k; its rate is multiplied by x_k.
    components : strongly connected components of i -> j (a_ij structurally
        non-zero), each sorted, listed dependencies first (solve order).
    equations : every reaction's equation, for printing.
    """

    species: tuple[str, ...]
    species_indices: tuple[int, ...]
    n_reactions: int
    dropped: tuple[tuple[int, int], ...]
    consumers: tuple[tuple[Term, ...], ...]
    sources: tuple[tuple[Term, ...], ...]
    couplings: tuple[tuple[tuple[int, int, int, float], ...], ...]
    scaled: tuple[tuple[int, int, int], ...]
    components: tuple[tuple[int, ...], ...]
    equations: tuple[str, ...]

    @property
    def n_qss(self) -> int:
        return len(self.species)

    def dependencies(self, i: int) -> tuple[int, ...]:
        """QSSA species j with a_ij structurally non-zero, ascending."""
        return tuple(sorted({j for j, _, _, _ in self.couplings[i]}))

    def direction_label(self, reaction: int, direction: int) -> str:
        return f"reaction {reaction + 1} {DIRECTION_NAMES[direction]}: {self.equations[reaction]}"

    def __str__(self) -> str:
        lines = [f"QSSA system: {self.n_qss} species, {len(self.components)} components, "
                 f"{len(self.dropped)} dropped directions"]
        for number, component in enumerate(self.components):
            names = ", ".join(self.species[i] for i in component)
            outside = sorted({j for i in component for j in self.dependencies(i)} - set(component))
            after = f"  (uses {', '.join(self.species[j] for j in outside)})" if outside else ""
            lines.append(f"  component {number}: {{{names}}}{after}")
        for reaction, direction in self.dropped:
            lines.append(f"  dropped {self.direction_label(reaction, direction)}")
        return "\n".join(lines)

    def verify(self) -> None:
        """Check the invariants a later stage relies on (raises AssertionError)."""
        nq = self.n_qss
        order = [i for c in self.components for i in c]
        assert sorted(order) == list(range(nq)), "components do not partition the QSSA species"
        position = {i: p for p, c in enumerate(self.components) for i in c}
        for i in range(nq):
            for j in self.dependencies(i):
                assert position[j] <= position[i], f"{self.species[i]} solved before {self.species[j]}"
        dropped = set(self.dropped)
        for terms in (*self.consumers, *self.sources):
            assert not dropped & {(r, d) for r, d, _ in terms}, "a dropped direction is used"
        for terms in self.couplings:
            assert not dropped & {(r, d) for _, r, d, _ in terms}, "a dropped direction is used"

    # -- dense operators over the stacked rates R = [qf; qr] (2 n_reactions, n) --

    @functools.cached_property
    def _operators(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Matrices mapping R to D (nq), P_0 (nq) and P (nq*nq, row i*nq + j)."""
        nq, nr = self.n_qss, self.n_reactions
        D = np.zeros((nq, 2 * nr))
        P0 = np.zeros((nq, 2 * nr))
        P = np.zeros((nq * nq, 2 * nr))
        for i in range(nq):
            for r, d, nu in self.consumers[i]:
                D[i, d * nr + r] += nu
            for r, d, nu in self.sources[i]:
                P0[i, d * nr + r] += nu
            for j, r, d, nu in self.couplings[i]:
                P[i * nq + j, d * nr + r] += nu
        return D, P0, P


def _consuming_side(reaction: Reaction, direction: int):
    return reaction.reactants if direction == FORWARD else reaction.products


def _producing_side(reaction: Reaction, direction: int):
    return reaction.products if direction == FORWARD else reaction.reactants


def _qss_counts(side, position: dict[str, int]) -> dict[int, float]:
    """QSSA species on one side of a reaction -> total coefficient."""
    counts: dict[int, float] = {}
    for name, nu in side:
        if name in position:
            counts[position[name]] = counts.get(position[name], 0.0) + nu
    return counts


def _check_orders(reaction: Reaction, position: dict[str, int], problems: list[Problem]) -> None:
    """A FORD/RORD exponent on a QSSA species would break the linear scaling."""
    for orders, side in ((reaction.orders, reaction.reactants), (reaction.reverse_orders, reaction.products)):
        stoich = dict(side)
        for name, order in orders:
            if name in position and order != stoich.get(name, 0.0):
                problems.append(Problem(
                    reaction.location,
                    f"reaction order {order:g} of QSSA species '{name}' differs from its "
                    "stoichiometric coefficient",
                    "the linearized QSSA scales rates by x^nu; "
                    "remove the FORD/RORD or the species from QSSA"))


def _directions(reaction: Reaction):
    yield FORWARD
    if reaction.reversible:
        yield REVERSE


@per_mechanism
def build_qssa_system(mech: Mechanism) -> QssaSystem:
    """The QSSA structure of ``mech`` (cached per mechanism).

    Raises MechanismSemanticError when a QSSA species enters a rate with an
    exponent the linearization cannot represent (a fractional coefficient
    below one, or a FORD/RORD order on it).
    """
    species = tuple(mech.qss_species)
    position = {name: i for i, name in enumerate(species)}
    nq = len(species)
    consumers: list[list[Term]] = [[] for _ in range(nq)]
    sources: list[list[Term]] = [[] for _ in range(nq)]
    couplings: list[list[tuple[int, int, int, float]]] = [[] for _ in range(nq)]
    dropped: list[tuple[int, int]] = []
    scaled: list[tuple[int, int, int]] = []
    problems: list[Problem] = []
    for r, reaction in enumerate(mech.reactions):
        _check_orders(reaction, position, problems)
        for d in _directions(reaction):
            consumed = _qss_counts(_consuming_side(reaction, d), position)
            total = sum(consumed.values())
            if total > 1.0:
                dropped.append((r, d))
                continue
            if 0.0 < total < 1.0 or (total == 1.0 and len(consumed) > 1):
                names = "', '".join(species[i] for i in consumed)
                problems.append(Problem(
                    reaction.location,
                    f"fractional coefficients of QSSA species '{names}' "
                    f"on the {'reactant' if d == FORWARD else 'product'} side",
                    "the linearized QSSA needs whole molecules; remove them from the QSSA list"))
                continue
            produced = _qss_counts(_producing_side(reaction, d), position)
            if total == 0.0:
                for i, nu in produced.items():
                    sources[i].append((r, d, nu))
                continue
            (j, _), = consumed.items()
            consumers[j].append((r, d, 1.0))
            scaled.append((r, d, j))
            for i, nu in produced.items():
                couplings[i].append((j, r, d, nu))
    if problems:
        raise MechanismSemanticError(problems)
    edges = [sorted({j for j, _, _, _ in terms}) for terms in couplings]
    system = QssaSystem(
        species=species,
        species_indices=tuple(mech.species_index(name) for name in species),
        n_reactions=len(mech.reactions),
        dropped=tuple(dropped),
        consumers=tuple(tuple(t) for t in consumers),
        sources=tuple(tuple(t) for t in sources),
        couplings=tuple(tuple(t) for t in couplings),
        scaled=tuple(scaled),
        components=strongly_connected_components(edges),
        equations=tuple(reaction.equation for reaction in mech.reactions),
    )
    system.verify()
    return system


def strongly_connected_components(edges: list[list[int]]) -> tuple[tuple[int, ...], ...]:
    """Tarjan's algorithm (iterative) on the graph i -> edges[i].

    Returns the components, each sorted, in the order Tarjan completes them:
    a component comes after every component it reaches (dependencies first).
    Deterministic: nodes and edges are visited in ascending order.
    """
    n = len(edges)
    index = [-1] * n
    low = [0] * n
    on_stack = [False] * n
    stack: list[int] = []
    result: list[tuple[int, ...]] = []
    counter = 0
    for root in range(n):
        if index[root] >= 0:
            continue
        work = [(root, 0)]
        while work:
            node, next_edge = work.pop()
            if next_edge == 0:
                index[node] = low[node] = counter
                counter += 1
                stack.append(node)
                on_stack[node] = True
            descended = False
            for e in range(next_edge, len(edges[node])):
                child = edges[node][e]
                if index[child] < 0:
                    work.append((node, e + 1))
                    work.append((child, 0))
                    descended = True
                    break
                if on_stack[child]:
                    low[node] = min(low[node], index[child])
            if descended:
                continue
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack[member] = False
                    component.append(member)
                    if member == node:
                        break
                result.append(tuple(sorted(component)))
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
    return tuple(result)


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
