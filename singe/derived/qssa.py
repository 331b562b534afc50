"""The structure of a mechanism's linearized QSSA system (Lu & Law),
docs/formulas.md §7, built once per mechanism from the stoichiometry only.

A *direction* is (reaction index, FORWARD or REVERSE); its consuming side is
the reactants for FORWARD and the products for REVERSE.  Directions whose
consuming side holds more than one QSSA molecule are dropped; the others
contribute to the consumption D_i, the sources P_i0 or the couplings P_ij of
the QSSA species, and the strongly connected components of i -> j give the
solve order.  The chemistry kernel and ``singe.reference.qssa`` (which
evaluates and solves the system) read it.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

import numpy as np

from singe.errors import SingeInternalError
from singe.mechanism import Mechanism, Reaction
from singe.memo import per_mechanism

FORWARD = 0
REVERSE = 1
DIRECTION_NAMES = ("forward", "reverse")

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


def directions(reaction: Reaction):
    """FORWARD, and REVERSE when the reaction is reversible."""
    yield FORWARD
    if reaction.reversible:
        yield REVERSE


def consumed_qss(reaction: Reaction, direction: int, position: dict[str, int]) -> dict[int, float]:
    """QSSA species (by ``position``: name -> number) on the consuming side of
    one direction -> their total coefficient."""
    return _qss_counts(_consuming_side(reaction, direction), position)


def representable(consumed: dict[int, float]) -> bool:
    """Whether the linearization can represent a direction consuming these
    QSSA species: none, one whole molecule, or more than one (dropped) —
    not a fraction of a molecule nor parts of two."""
    total = sum(consumed.values())
    return not (0.0 < total < 1.0 or (total == 1.0 and len(consumed) > 1))


def unrepresentable_orders(reaction: Reaction, position: dict[str, int]) -> list[tuple[str, float]]:
    """(QSSA species, order) of the FORD/RORD orders on QSSA species that differ
    from their stoichiometric coefficient (the linear scaling cannot take them)."""
    found = []
    for orders, side in ((reaction.orders, reaction.reactants), (reaction.reverse_orders, reaction.products)):
        stoich = dict(side)
        found += [(name, order) for name, order in orders
                  if name in position and order != stoich.get(name, 0.0)]
    return found


@per_mechanism
def build_qssa_system(mech: Mechanism) -> QssaSystem:
    """The QSSA structure of ``mech`` (cached per mechanism).

    The frontend refuses, with their locations, QSSA species entering a rate
    with an exponent the linearization cannot represent (``representable``,
    ``unrepresentable_orders``); meeting one here is an internal error.
    """
    species = tuple(mech.qss_species)
    position = {name: i for i, name in enumerate(species)}
    nq = len(species)
    consumers: list[list[Term]] = [[] for _ in range(nq)]
    sources: list[list[Term]] = [[] for _ in range(nq)]
    couplings: list[list[tuple[int, int, int, float]]] = [[] for _ in range(nq)]
    dropped: list[tuple[int, int]] = []
    scaled: list[tuple[int, int, int]] = []
    for r, reaction in enumerate(mech.reactions):
        if unrepresentable_orders(reaction, position):
            raise SingeInternalError(f"reaction {r + 1} ({reaction.equation}): a FORD/RORD order on a QSSA "
                                     "species (the frontend refuses it)")
        for d in directions(reaction):
            consumed = consumed_qss(reaction, d, position)
            total = sum(consumed.values())
            if not representable(consumed):
                raise SingeInternalError(f"reaction {r + 1} ({reaction.equation}): fractional QSSA coefficients "
                                         "(the frontend refuses them)")
            if total > 1.0:
                dropped.append((r, d))
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
