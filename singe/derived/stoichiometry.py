"""Stoichiometry of a mechanism's reactions as arrays, built once per mechanism.

``reaction_stoichiometry``: the net matrix (reaction-major) and the mole
change of every reaction; ``stiff_stoichiometry``: nu' and nu'' of the stiff
species (docs/formulas.md §8).  Both count a species on both sides of a
reaction on both, as CHEMKIN writes it.  The chemistry kernel and
``singe.reference`` read them.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from singe.errors import SingeInternalError
from singe.mechanism import Mechanism
from singe.memo import per_mechanism


STIFFNESS_FORMS = ("simultaneous", "sequential")
"""How stiffness removal applies its factors: all from the same rates
(Singe's kernels) or species by species (the Fortran original)."""


@dataclass(frozen=True)
class ReactionStoichiometry:
    """Stoichiometric coefficients as written: ``reactants`` and ``products``
    (n_species, n_reactions); ``net`` (n_reactions, n_species), products
    minus reactants; the mole change Δν per reaction."""

    reactants: np.ndarray
    products: np.ndarray
    net: np.ndarray
    delta_nu: np.ndarray


@per_mechanism
def reaction_stoichiometry(mech: Mechanism) -> ReactionStoichiometry:
    """Stoichiometry of every reaction of ``mech`` as written in CHEMKIN
    (a species on both sides counts on both; built once per mechanism)."""
    reactants = np.zeros((mech.n_species, len(mech.reactions)))
    products = np.zeros((mech.n_species, len(mech.reactions)))
    for j, reaction in enumerate(mech.reactions):
        for name, nu in reaction.reactants:
            reactants[mech.species_index(name), j] += nu
        for name, nu in reaction.products:
            products[mech.species_index(name), j] += nu
    delta_nu = np.array([sum(nu for _, nu in r.products) - sum(nu for _, nu in r.reactants)
                         for r in mech.reactions], dtype=float)
    return ReactionStoichiometry(reactants, products, (products - reactants).T.copy(), delta_nu)


@per_mechanism
def stiff_stoichiometry(mech: Mechanism) -> tuple[np.ndarray, np.ndarray]:
    """nu' and nu'' (n_stiff, n_reactions) of the stiff species, as written
    (a species on both sides counts on both): the one table the reference and
    the chemistry kernel read.  A species both QSSA and stiff is reported by
    the frontend, with its location; here it is an internal error."""
    position = {name: s for s, name in enumerate(mech.stiff_species)}
    qss = set(mech.qss_species)
    bad = [name for name in mech.stiff_species if name in qss]
    if bad:
        raise SingeInternalError(f"species {', '.join(bad)} listed both as QSSA and as stiff "
                                 "(the frontend refuses such a list)")
    nu_r = np.zeros((len(position), len(mech.reactions)))
    nu_p = np.zeros_like(nu_r)
    for r, reaction in enumerate(mech.reactions):
        for side, nu in ((reaction.reactants, nu_r), (reaction.products, nu_p)):
            for name, coefficient in side:
                if name in position:
                    nu[position[name], r] += coefficient
    return nu_r, nu_p
