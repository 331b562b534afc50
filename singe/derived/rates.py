"""Rate tables of a mechanism's reactions, built once per mechanism.

``kinetics_tables`` holds, as arrays, everything a rate evaluation needs:
the stacked Arrhenius parameters (with their evaluation), the falloff
tables (Troe and SRI parameters), the PLOG and Chebyshev rates, third-body
efficiencies, which reactions are reversible and how (equilibrium or
explicit REV), the concentration products of both directions and the
stoichiometry (docs/formulas.md §4).  The chemistry kernel and
``singe.reference.kinetics`` read them.

The frontend guarantees the reactions' structure (parameter counts, known
rate laws and falloff functions, a third body where the kind needs one);
a table meeting anything else raises ``SingeInternalError``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from singe.constants import SMALL_NUMBER
from singe.derived.stoichiometry import reaction_stoichiometry
from singe.errors import SingeInternalError
from singe.mechanism import Arrhenius, ChebyshevRate, Mechanism, PlogRate
from singe.memo import per_mechanism

THIRD_BODY_KINDS = ("three-body", "falloff", "chemically-activated")
"""Reaction kinds whose rates depend on a third-body concentration [M]."""

DEFAULT_PRODUCTS = "chemkin"
GUARDED_PRODUCTS = "cantera"
PRODUCTS = (DEFAULT_PRODUCTS, GUARDED_PRODUCTS)
"""How the chemistry kernel multiplies negative concentrations (``CompileOptions.products``): as they are (the
default), or under Cantera's sign guard (``negative_factors_allowed``)."""


def guards_products(products: str) -> bool:
    """Whether ``products`` (one of ``PRODUCTS``) puts the concentration products under Cantera's sign guard."""
    return products == GUARDED_PRODUCTS

SIGNED_PRODUCT_FACTORS = 3
"""A concentration product of integer stoichiometric orders with at most this many factors (a species once per
unit of its coefficient) keeps the sign of one negative factor; see ``negative_factors_allowed``."""


def negative_factors_allowed(factors: int) -> int:
    """How many negative concentrations a product of ``factors`` factors (integer stoichiometric orders, a species
    once per unit of its coefficient) may have before it is 0, as Cantera's ``StoichManagerN`` forms it (C1, C2,
    C3 and C_AnyN): up to ``SIGNED_PRODUCT_FACTORS`` factors, one (the rate of progress takes its sign: a species
    driven below 0 is produced back), more factors, none (C_AnyN: C <= 0 gives 0).  So two negative factors
    never make a positive rate of progress."""
    return 1 if factors <= SIGNED_PRODUCT_FACTORS else 0


@dataclass(frozen=True)
class ArrheniusTable:
    """Stacked Arrhenius parameters of several rates, (m,) arrays each;
    rows without a rate have A = 0."""

    A: np.ndarray
    b: np.ndarray
    Ea_R: np.ndarray
    lt_B: np.ndarray
    lt_C: np.ndarray
    landau_teller: bool

    @staticmethod
    def of(rates: list[Arrhenius | None]) -> "ArrheniusTable":
        def column(field: str) -> np.ndarray:
            return np.array([getattr(r, field) if r is not None else 0.0 for r in rates], dtype=float)

        lt_B, lt_C = column("lt_B"), column("lt_C")
        return ArrheniusTable(column("A"), column("b"), column("Ea_R"), lt_B, lt_C,
                              bool(np.any(lt_B) or np.any(lt_C)))

    def __call__(self, T: np.ndarray) -> np.ndarray:
        """k = A exp(b ln T - Ea_R/T [+ B T^-1/3 + C T^-2/3]), (m, n)."""
        exponent = self.b[:, None] * np.log(T)[None, :] - self.Ea_R[:, None] * (1.0 / T)[None, :]
        if self.landau_teller:
            cube_root = np.cbrt(T)
            exponent = (exponent + self.lt_B[:, None] * (1.0 / cube_root)[None, :]
                        + self.lt_C[:, None] * (1.0 / (cube_root * cube_root))[None, :])
        return self.A[:, None] * np.exp(exponent)


def product_factors(orders: dict[str, float], stoich: dict[str, float],
                    partner: str | None) -> tuple[list[str], str | None] | None:
    """The factors of one direction's concentration product: (its species once per unit of their coefficients,
    the third body's molecule, ``Reaction.collision_partner``, taken out of them, or None), the product of the
    first taken to 0 by the sign guard (``negative_factors_allowed``) before the second multiplies it.  None
    for the power form (FORD / RORD orders, fractional coefficients), whose factors C^order are 0 for C <= 0
    (Cantera's C_AnyN)."""
    if orders != stoich or not all(float(v).is_integer() and v > 0 for v in orders.values()):
        return None
    factors = [name for name, nu in orders.items() for _ in range(int(nu))]
    if partner is None or partner not in factors:
        return factors, None
    factors.remove(partner)
    return factors, partner


@dataclass(frozen=True)
class ConcentrationProduct:
    """How to form Π_k C_k^order_k for every reaction, one direction.

    Reactions whose exponents are the small integer stoichiometric
    coefficients use ``slots``: (depth, n_reactions) species indices, each
    species repeated by its coefficient and padded with n_species (a row of
    ones), so the product is a few gathers and multiplies; with the sign
    guard (``CompileOptions.products`` 'cantera') it is 0 where more of them
    are negative than ``negative_factors_allowed`` lets (Cantera's C2, C3 and
    C_AnyN); then ``partner`` (a collision partner's index, else n_species)
    multiplies it.  The others (FORD / RORD orders, fractional
    coefficients) list their factors in ``power_reaction``,
    ``power_species``, ``power_order``; as Cantera's ``C_AnyN``, a factor
    with C <= 0 and a non-zero order makes the product 0.
    """

    slots: np.ndarray
    partner: np.ndarray
    allowed: np.ndarray  # negative slots each reaction's product may have (``negative_factors_allowed``)
    power_reaction: np.ndarray
    power_species: np.ndarray
    power_order: np.ndarray

    @staticmethod
    def of(exponents: list[dict[str, float]], stoichiometry: list[dict[str, float]], partners: list[str | None],
           mech: Mechanism) -> "ConcentrationProduct":
        n_species = mech.n_species
        slot_lists: list[list[int]] = []
        partner = np.full(len(exponents), n_species, dtype=np.intp)
        power: list[tuple[int, int, float]] = []
        for j, (orders, stoich, named) in enumerate(zip(exponents, stoichiometry, partners)):
            split = product_factors(orders, stoich, named)
            if split is None:
                slot_lists.append([])
                power.extend((j, mech.species_index(name), float(order))
                             for name, order in orders.items() if order != 0.0)
                continue
            factors, outside = split
            slot_lists.append([mech.species_index(name) for name in factors])
            if outside is not None:
                partner[j] = mech.species_index(outside)
        depth = max((len(s) for s in slot_lists), default=0)
        slots = np.full((depth, len(slot_lists)), n_species, dtype=np.intp)
        for j, s in enumerate(slot_lists):
            slots[:len(s), j] = s
        allowed = np.array([negative_factors_allowed(len(s)) for s in slot_lists], dtype=int)
        reaction, species, order = (zip(*power) if power else ((), (), ()))
        return ConcentrationProduct(slots, partner, allowed, np.array(reaction, dtype=np.intp),
                                    np.array(species, dtype=np.intp), np.array(order, dtype=float))

    def __call__(self, C: np.ndarray, guarded: bool = False) -> np.ndarray:
        """Π_k C_k^order_k, (n_reactions, n), from C (n_species, n); with Cantera's sign guard where
        ``guarded`` (``CompileOptions.products`` 'cantera')."""
        extended = np.concatenate([C, np.ones((1, C.shape[1]))], axis=0)
        product = np.ones((self.slots.shape[1], C.shape[1]))
        for row in self.slots:
            product *= extended[row]
        if guarded:
            negative = sum((extended[row] < 0.0).astype(int) for row in self.slots) + np.zeros(product.shape, dtype=int)
            product[negative > self.allowed[:, None]] = 0.0
        product *= extended[self.partner]
        if self.power_reaction.size:
            c = C[self.power_species]
            with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
                factor = np.where(c > 0.0, np.power(np.where(c > 0.0, c, 1.0), self.power_order[:, None]), 0.0)
            np.multiply.at(product, self.power_reaction, factor)
        return product


@dataclass(frozen=True)
class FalloffTable:
    """Falloff and chemically-activated reactions: indices, both limits, and
    the broadening-function parameters (Troe: a, 1/T3, 1/T1, T2 with 1/T = inf
    for |T| < 1e-300 and T2 = 0 meaning no term; SRI: a, b, c, d, e)."""

    index: np.ndarray
    activated: np.ndarray
    k_low: ArrheniusTable
    k_high: ArrheniusTable
    troe: np.ndarray  # positions (into index) of Troe reactions
    troe_params: np.ndarray  # (4, n_troe): a, 1/T3, 1/T1, T2
    sri: np.ndarray
    sri_params: np.ndarray  # (5, n_sri): a, b, c, d, e

    @staticmethod
    def of(mech: Mechanism) -> "FalloffTable":
        rows = [r for r in mech.reactions if r.is_pressure_dependent]
        troe, troe_params, sri, sri_params = [], [], [], []
        for position, r in enumerate(rows):
            function = r.falloff
            kind = function.kind if function is not None else "lindemann"
            if kind == "troe":
                troe.append(position)
                troe_params.append(_troe_parameters(function.params))
            elif kind == "sri":
                sri.append(position)
                sri_params.append(_sri_parameters(function.params))
            elif kind != "lindemann":
                raise SingeInternalError(f"reaction {r.index} ({r.equation}): unknown falloff function {kind!r}")
        return FalloffTable(
            np.array([r.index for r in rows], dtype=np.intp),
            np.array([r.kind == "chemically-activated" for r in rows], dtype=bool),
            ArrheniusTable.of([r.k_low for r in rows]),
            ArrheniusTable.of([r.k_high for r in rows]),
            np.array(troe, dtype=np.intp), np.array(troe_params, dtype=float).reshape(-1, 4).T,
            np.array(sri, dtype=np.intp), np.array(sri_params, dtype=float).reshape(-1, 5).T,
        )


def _troe_parameters(params: tuple[float, ...]) -> tuple[float, float, float, float]:
    if len(params) not in (3, 4):
        raise SingeInternalError(f"Troe falloff takes 3 or 4 parameters, got {len(params)}")

    def reciprocal(t: float) -> float:
        return np.inf if abs(t) < SMALL_NUMBER else 1.0 / t

    return params[0], reciprocal(params[1]), reciprocal(params[2]), params[3] if len(params) == 4 else 0.0


def _sri_parameters(params: tuple[float, ...]) -> tuple[float, float, float, float, float]:
    if len(params) == 3:
        return params[0], params[1], params[2], 1.0, 0.0
    if len(params) == 5:
        return tuple(params)  # type: ignore[return-value]
    raise SingeInternalError(f"SRI falloff takes 3 or 5 parameters, got {len(params)}")


@dataclass(frozen=True)
class KineticsTables:
    """Everything a rate evaluation needs from a mechanism, as arrays.

    ``efficiencies`` (n_reactions, n_species): third-body weights, rows of
    zeros for reactions without a third body (``has_third_body`` False).
    ``nu_reactants`` / ``nu_products`` (n_species, n_reactions):
    stoichiometric coefficients as written; ``nu_net`` their difference.
    """

    n_species: int
    n_reactions: int
    arrhenius: ArrheniusTable  # the reaction-line rate of every Arrhenius-type reaction
    arrhenius_rows: np.ndarray
    falloff: FalloffTable
    plog: tuple[tuple[int, PlogRate], ...]
    chebyshev: tuple[tuple[int, ChebyshevRate], ...]
    three_body_rows: np.ndarray  # 'three-body' reactions: [M] multiplies their rates of progress
    has_third_body: np.ndarray
    efficiencies: np.ndarray
    reversible: np.ndarray
    explicit_reverse_rows: np.ndarray
    explicit_reverse: ArrheniusTable
    equilibrium_rows: np.ndarray  # reversible without REV: k_r = k_f / Kc
    forward_product: ConcentrationProduct
    reverse_product: ConcentrationProduct
    nu_reactants: np.ndarray
    nu_products: np.ndarray
    nu_net: np.ndarray
    transported: np.ndarray
    qss: np.ndarray
    molecular_weights: np.ndarray


@per_mechanism
def kinetics_tables(mech: Mechanism) -> KineticsTables:
    """The arrays of ``mech`` used by every function of this module (built
    once per Mechanism object)."""
    reactions = mech.reactions
    partners = [r.collision_partner for r in reactions]
    for j, r in enumerate(reactions):
        if r.index != j:
            raise SingeInternalError(f"reaction {j} ({r.equation}) carries index {r.index}")
    arrhenius_rows = [r.index for r in reactions if isinstance(r.rate, Arrhenius)]
    unknown = [r for r in reactions if not isinstance(r.rate, (Arrhenius, PlogRate, ChebyshevRate))]
    if unknown:
        raise SingeInternalError(f"reaction {unknown[0].index} ({unknown[0].equation}): unknown rate law "
                         f"{type(unknown[0].rate).__name__}")
    stoichiometry = reaction_stoichiometry(mech)
    reversible = np.array([r.reversible for r in reactions], dtype=bool)
    explicit = [r.index for r in reactions if r.reversible and r.reverse_rate is not None]
    return KineticsTables(
        n_species=mech.n_species,
        n_reactions=len(reactions),
        arrhenius=ArrheniusTable.of([reactions[j].rate for j in arrhenius_rows]),
        arrhenius_rows=np.array(arrhenius_rows, dtype=np.intp),
        falloff=FalloffTable.of(mech),
        plog=tuple((r.index, r.rate) for r in reactions if isinstance(r.rate, PlogRate)),
        chebyshev=tuple((r.index, r.rate) for r in reactions if isinstance(r.rate, ChebyshevRate)),
        three_body_rows=np.array([r.index for r in reactions if r.kind == "three-body"], dtype=np.intp),
        has_third_body=np.array([r.kind in THIRD_BODY_KINDS for r in reactions], dtype=bool),
        efficiencies=_efficiency_matrix(mech),
        reversible=reversible,
        explicit_reverse_rows=np.array(explicit, dtype=np.intp),
        explicit_reverse=ArrheniusTable.of([reactions[j].reverse_rate for j in explicit]),
        equilibrium_rows=np.array([r.index for r in reactions if r.reversible and r.reverse_rate is None],
                                  dtype=np.intp),
        forward_product=ConcentrationProduct.of([r.reactant_orders() for r in reactions],
                                                [dict(r.reactants) for r in reactions], partners, mech),
        reverse_product=ConcentrationProduct.of([r.product_orders() for r in reactions],
                                                [dict(r.products) for r in reactions], partners, mech),
        nu_reactants=stoichiometry.reactants,
        nu_products=stoichiometry.products,
        nu_net=stoichiometry.net.T,
        transported=mech.transported_indices,
        qss=np.array([mech.species_index(name) for name in mech.qss_species], dtype=np.intp),
        molecular_weights=mech.molecular_weights,
    )


def _efficiency_matrix(mech: Mechanism) -> np.ndarray:
    """(n_reactions, n_species) third-body efficiencies: 1 unless given for
    ``M``, only the collider's 1 for ``(+SPECIES)``, 0 rows without a third body.
    Efficiencies of species the mechanism does not declare are ignored."""
    matrix = np.zeros((len(mech.reactions), mech.n_species))
    names = mech.species_names
    for r in mech.reactions:
        if r.kind not in THIRD_BODY_KINDS:
            continue
        if r.third_body is None:
            raise SingeInternalError(f"reaction {r.index} ({r.equation}) is {r.kind} but has no third body")
        matrix[r.index] = [r.third_body.efficiency(name) for name in names]
    return matrix
