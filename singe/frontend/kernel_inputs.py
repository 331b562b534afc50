"""What the kernels need of a mechanism, checked with the locations of the input.

The kernels raise only internal errors: every mistake of the input they could
meet is found here first and reported with its file:line.

* ``check_qssa`` (run by ``load_mechanism`` for every mechanism with QSSA
  species): the linearized QSSA needs whole QSSA molecules on a consuming
  side and no FORD/RORD order on a QSSA species (docs/formulas.md §7).
* ``check_transport_kernel`` (run by ``singe.compile_kernel`` before a
  transport kernel's graph is built): usable TRANSPORT data for every species
  and at least two transported species.  A mechanism that cannot serve the
  transport kernels may still be compiled for chemistry.
"""

from __future__ import annotations

from singe.derived.qssa import FORWARD, consumed_qss, directions, representable, unrepresentable_orders
from singe.derived.transport import check_transport_data
from singe.errors import MechanismSemanticError, ProblemCollector
from singe.mechanism import Mechanism

_QSSA_ORDER_HINT = "the linearized QSSA scales rates by x^nu; remove the FORD/RORD or the species from QSSA"
_QSSA_FRACTION_HINT = "the linearized QSSA needs whole molecules; remove them from the QSSA list"


def check_qssa(mech: Mechanism, problems: ProblemCollector) -> None:
    """Record, at each reaction's line, a QSSA species entering a rate with an
    exponent the linearization cannot represent."""
    species = mech.qss_species
    position = {name: i for i, name in enumerate(species)}
    if not position:
        return
    for reaction in mech.reactions:
        for name, order in unrepresentable_orders(reaction, position):
            problems.add(reaction.location, f"reaction order {order:g} of QSSA species '{name}' differs from "
                         "its stoichiometric coefficient", _QSSA_ORDER_HINT)
        for d in directions(reaction):
            consumed = consumed_qss(reaction, d, position)
            if not representable(consumed):
                names = "', '".join(species[i] for i in consumed)
                problems.add(reaction.location, f"fractional coefficients of QSSA species '{names}' on the "
                             f"{'reactant' if d == FORWARD else 'product'} side", _QSSA_FRACTION_HINT)


def check_transport_kernel(mech: Mechanism, kernel: str) -> None:
    """Raise ``MechanismSemanticError`` when ``mech`` cannot serve the
    transport kernel ``kernel``: a species without usable TRANSPORT data
    (each one at its declaration), or fewer than two transported species (at
    the lone transported species' transport data, else its declaration)."""
    check_transport_data(mech)
    transported = mech.transported_species
    if len(transported) >= 2:
        return
    problems = ProblemCollector()
    if transported:
        species = mech.species[mech.species_index(transported[0])]
        where = species.transport.location or species.location
        what = f"it has one, '{species.name}'"
    else:
        where = mech.species[0].location if mech.species else None
        what = "every species is QSSA"
    problems.add(where, f"the {kernel} kernel needs at least two transported species: {what}",
                 "a mixture needs two species; declare more species or take some off the QSSA list")
    problems.raise_if_any(MechanismSemanticError)
