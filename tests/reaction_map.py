"""Cantera-side helpers shared by the tests, independent of singe's kinetics.

* ``reaction_map``: which Cantera reaction carries each direction of a singe
  (CHEMKIN) reaction.  ck2yaml stores a reaction with an explicit REV as two
  irreversible reactions, the reverse one right after the forward one
  (heptane: 283 CHEMKIN reactions, 526 Cantera ones); the map is built by
  walking both lists in order and matching stoichiometry as written.
* ``cantera_rates``: rates of progress from Cantera's rate constants, in
  Cantera's or singe's reaction order, with chosen species' concentrations
  set to 1 (the QSSA convention) and [M] without them.
* ``ignition_states``: states sampled along a constant-pressure ignition of
  the full mechanism (cached).
"""

from __future__ import annotations

import functools

import cantera as ct
import numpy as np

import cantera_reference as cr


def _stoich(pairs) -> dict[str, float]:
    result: dict[str, float] = {}
    for name, nu in pairs:
        if name.upper() != "M":
            result[name] = result.get(name, 0.0) + nu
    return result


def reaction_map(mech, gas: ct.Solution) -> tuple[tuple[int, int | None], ...]:
    """Per singe reaction r: (f, b).

    Cantera reaction f carries r's forward direction, and its reverse too when
    Cantera's reaction f is reversible; otherwise r's reverse is the forward
    direction of Cantera reaction b (the split of an explicit REV), or None.
    Raises AssertionError when the two reaction lists do not line up.
    """
    result = []
    j = 0
    for reaction in mech.reactions:
        assert j < gas.n_reactions, f"Cantera has no reaction for {reaction.equation}"
        ct_reaction = gas.reaction(j)
        reactants, products = _stoich(reaction.reactants), _stoich(reaction.products)
        assert (ct_reaction.reactants, ct_reaction.products) == (reactants, products), (
            f"reaction {reaction.index + 1} {reaction.equation!r} vs Cantera {j} {ct_reaction.equation!r}")
        partner = None
        if reaction.reversible and not ct_reaction.reversible and j + 1 < gas.n_reactions:
            following = gas.reaction(j + 1)
            swapped = (following.reactants, following.products) == (products, reactants)
            if not following.reversible and swapped:
                partner = j + 1
        result.append((j, partner))
        j += 1 if partner is None else 2
    assert j == gas.n_reactions, f"{gas.n_reactions - j} Cantera reactions left unmatched"
    return tuple(result)


@functools.lru_cache(maxsize=None)
def _cantera_stoichiometry(name: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    gas = cr.cantera_solution(name)
    nu_r = np.zeros((gas.n_species, gas.n_reactions))
    nu_p = np.zeros_like(nu_r)
    for j, reaction in enumerate(gas.reactions()):
        assert not reaction.orders, "FORD/RORD not handled by this helper"
        for species, nu in reaction.reactants.items():
            nu_r[gas.species_index(species), j] = nu
        for species, nu in reaction.products.items():
            nu_p[gas.species_index(species), j] = nu
    three_body = np.array([r.reaction_type.startswith("three-body") for r in gas.reactions()])
    return nu_r, nu_p, three_body


def cantera_rates(name: str, T, P, Y, unit_species=()) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Cantera's forward and reverse rates of progress (n_ct_reactions, n)
    [kmol/m^3/s] and concentrations (n_species, n) [kmol/m^3].

    ``Y`` (n_species, n) in Cantera's species order; the mass fractions of
    ``unit_species`` are set to 0 (so [M] and the density exclude them) and
    their concentrations to 1 in the mass-action products.  The returned
    concentrations have those rows 0.  Three-body rate constants are
    multiplied by Cantera's [M] (Cantera's k_f excludes it).
    """
    gas = cr.cantera_solution(name)
    nu_r, nu_p, three_body = _cantera_stoichiometry(name)
    unit = [gas.species_index(s) for s in unit_species]
    Y = np.array(Y, dtype=float)
    Y[unit] = 0.0
    n = Y.shape[1]
    qf = np.empty((gas.n_reactions, n))
    qr = np.empty_like(qf)
    C = np.empty((gas.n_species, n))
    for p in range(n):
        gas.TPY = T[p], P[p], Y[:, p]
        C[:, p] = gas.concentrations
        c = C[:, p].copy()
        c[unit] = 1.0
        M = np.where(three_body, gas.third_body_concentrations, 1.0)
        qf[:, p] = gas.forward_rate_constants * M * np.prod(c[:, None] ** nu_r, axis=0)
        qr[:, p] = gas.reverse_rate_constants * M * np.prod(c[:, None] ** nu_p, axis=0)
    return qf, qr, C


def to_singe_order(mech, name: str, qf_ct: np.ndarray, qr_ct: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Cantera rates of progress rearranged into singe's reactions and directions."""
    gas = cr.cantera_solution(name)
    rmap = reaction_map(mech, gas)
    n = qf_ct.shape[1]
    qf = np.zeros((len(rmap), n))
    qr = np.zeros_like(qf)
    for r, (f, b) in enumerate(rmap):
        qf[r] = qf_ct[f]
        if gas.reaction(f).reversible:
            qr[r] = qr_ct[f]
        elif b is not None:
            qr[r] = qf_ct[b]
    return qf, qr


@functools.lru_cache(maxsize=None)
def ignition_states(name: str, fuel: str, T0: float, P_atm: float, samples: int = 8,
                    phi: float = 1.0) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(T [K], P [Pa], Y (n_species, samples)) along a constant-pressure
    ignition of fuel/air: the initial state, states where the temperature has
    risen by fractions of its total rise (geometrically spaced from 1e-3 to
    0.05 through the induction, evenly from 0.1 to 0.98 after).  Equilibrium
    itself is left out: its net rates are cancellation noise, no yardstick
    for relative errors.  Returned arrays are read-only: copy before changing them.
    """
    gas = ct.Solution(str(cr.cantera_yaml(name)), transport_model=None)
    gas.TP = T0, P_atm * ct.one_atm
    gas.set_equivalence_ratio(phi, fuel, {"O2": 1.0, "N2": 3.76} if "O2" in gas.species_names
                              else {"o2": 1.0, "n2": 3.76})
    reactor = ct.IdealGasConstPressureReactor(gas, clone=True)
    net = ct.ReactorNet([reactor])
    net.rtol, net.atol = 1e-9, 1e-20
    start = reactor.T
    equilibrium = ct.Solution(str(cr.cantera_yaml(name)), transport_model=None)
    equilibrium.TPY = start, gas.P, reactor.phase.Y
    equilibrium.equilibrate("HP")
    half = (samples - 1) // 2
    fractions = np.concatenate([np.geomspace(1e-3, 0.05, half), np.linspace(0.1, 0.98, samples - 1 - half)])
    targets = list(start + (equilibrium.T - start) * fractions)
    T, P, Y = [start], [reactor.phase.P], [reactor.phase.Y.copy()]
    while targets and net.time < 10.0:
        net.step()
        if reactor.T >= targets[0]:
            while targets and reactor.T >= targets[0]:
                targets.pop(0)
            T.append(reactor.T)
            P.append(reactor.phase.P)
            Y.append(reactor.phase.Y.copy())
    arrays = np.array(T), np.array(P), np.array(Y).T.copy()
    for array in arrays:
        array.setflags(write=False)
    return arrays

