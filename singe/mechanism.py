"""The resolved mechanism: species, thermodynamics, transport data, reactions.

Everything here is in SI units (kmol, m^3, s, K, Pa, J) except where a field's
docstring says otherwise.  The frontend (``singe.frontend``) builds these
objects from CHEMKIN text; every later stage reads them and nothing changes
them (frozen dataclasses).
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, field
from typing import Union

import numpy as np

from singe.errors import Location

Stoichiometry = tuple[tuple[str, float], ...]


@dataclass(frozen=True)
class Arrhenius:
    """k = A T^b exp(-Ea_R/T + lt_B T^(-1/3) + lt_C T^(-2/3)).

    ``A`` in SI (kmol, m^3, s for the order of the rate it belongs to),
    ``Ea_R`` = E/R [K]; ``lt_B`` [K^(1/3)] and ``lt_C`` [K^(2/3)] are the
    Landau–Teller terms (zero unless LT/RLT was given).
    """

    A: float
    b: float
    Ea_R: float
    lt_B: float = 0.0
    lt_C: float = 0.0

    @property
    def is_landau_teller(self) -> bool:
        return self.lt_B != 0.0 or self.lt_C != 0.0

    def __call__(self, T: np.ndarray) -> np.ndarray:
        """Rate constant at temperatures T [K]."""
        T = np.asarray(T, dtype=float)
        exponent = self.b * np.log(T) - self.Ea_R / T
        if self.is_landau_teller:
            exponent = exponent + self.lt_B * T ** (-1.0 / 3.0) + self.lt_C * T ** (-2.0 / 3.0)
        return self.A * np.exp(exponent)


@dataclass(frozen=True)
class PlogRate:
    """Pressure-dependent Arrhenius table (PLOG): (pressure [Pa], rate) entries
    sorted by pressure; several entries at one pressure are summed."""

    entries: tuple[tuple[float, Arrhenius], ...]

    @property
    def pressures(self) -> tuple[float, ...]:
        """The distinct pressures of the table [Pa], ascending."""
        return tuple(sorted({p for p, _ in self.entries}))


@dataclass(frozen=True)
class ChebyshevRate:
    """log10 k = sum_t sum_p coeffs[t][p] phi_t(T~) phi_p(P~), k in SI units.

    ``T_min``, ``T_max`` [K]; ``P_min``, ``P_max`` [Pa]; ``coeffs`` has nT rows
    of nP values.
    """

    T_min: float
    T_max: float
    P_min: float
    P_max: float
    coeffs: tuple[tuple[float, ...], ...]

    @property
    def shape(self) -> tuple[int, int]:
        return len(self.coeffs), len(self.coeffs[0])


RateLaw = Union[Arrhenius, PlogRate, ChebyshevRate]


@dataclass(frozen=True)
class ThirdBody:
    """Collision partner of a three-body or falloff reaction.

    ``collider`` is None for ``M`` (every species, weighted by
    ``efficiencies``, default 1) or a species name for ``(+SPECIES)``
    (only that species, efficiency 1).
    """

    collider: str | None = None
    efficiencies: tuple[tuple[str, float], ...] = ()

    def efficiency(self, species: str) -> float:
        if self.collider is not None:
            return 1.0 if species == self.collider else 0.0
        return dict(self.efficiencies).get(species, 1.0)


@dataclass(frozen=True)
class FalloffFunction:
    """Broadening function of a falloff reaction.

    ``kind`` is 'lindemann' (no parameters), 'troe' (a, T3, T1[, T2]) or
    'sri' (a, b, c[, d, e]); temperatures in K.
    """

    kind: str = "lindemann"
    params: tuple[float, ...] = ()


PARTNER_KINDS = ("elementary", "plog", "chebyshev")
"""Reaction kinds without a written third body, which Cantera may read with a species one ('+ X' on both sides)."""


def collision_partner(kind: str, reactants: Stoichiometry, products: Stoichiometry) -> str | None:
    """The species Cantera takes for the third body of a reaction written without one, as its
    ``Reaction::setEquation`` detects it when it reads the equation (from YAML, or from CHEMKIN through
    ``ck2yaml``, which writes the equation as it stands): the one species on both sides, all coefficients
    whole, three molecules on a side ('H + O2 + O2 <=> HO2 + O2', '2 H + H2 <=> 2 H2'); None otherwise
    ('CH3O + H <=> CH2OH + H' has two molecules a side)."""
    if kind not in PARTNER_KINDS:
        return None
    shared = {name for name, _ in reactants} & {name for name, _ in products}
    sides = (reactants, products)
    if len(shared) != 1 or any(not float(nu).is_integer() for side in sides for _, nu in side):
        return None
    return shared.pop() if 3 in (sum(nu for _, nu in side) for side in sides) else None


@dataclass(frozen=True)
class Reaction:
    """One CHEMKIN reaction as written (an explicit REV stays one reaction).

    ``kind`` is one of 'elementary', 'three-body', 'falloff',
    'chemically-activated', 'plog', 'chebyshev'.

    ``rate`` is the rate on the reaction line, converted to SI: for 'falloff'
    it is k_inf and ``low`` is k_0; for 'chemically-activated' it is k_0 and
    ``high`` is k_inf; for 'plog' and 'chebyshev' it is the table.
    ``reverse_rate`` is the explicit REV rate (None: from equilibrium when
    ``reversible``).  ``orders`` / ``reverse_orders`` are FORD / RORD
    exponents replacing the stoichiometric ones.  ``collision_partner``: a
    species written on both sides that Cantera's YAML reading takes for the
    third body (an untyped reaction with three molecules on a side, as
    Cantera's ``Reaction::setEquation`` detects it), kept on both sides here;
    one molecule of it on each side is the third body's concentration, outside
    the sign guard of the concentration product
    (``singe.derived.rates.negative_factors_allowed``).
    """

    index: int
    equation: str
    reactants: Stoichiometry
    products: Stoichiometry
    reversible: bool
    kind: str
    rate: RateLaw
    location: Location
    third_body: ThirdBody | None = None
    low: Arrhenius | None = None
    high: Arrhenius | None = None
    falloff: FalloffFunction | None = None
    reverse_rate: Arrhenius | None = None
    orders: tuple[tuple[str, float], ...] = ()
    reverse_orders: tuple[tuple[str, float], ...] = ()
    duplicate: bool = False
    collision_partner: str | None = None

    @property
    def k_high(self) -> Arrhenius | None:
        """High-pressure limit k_inf of a falloff or chemically activated reaction."""
        if self.kind == "falloff":
            return self.rate  # type: ignore[return-value]
        return self.high

    @property
    def k_low(self) -> Arrhenius | None:
        """Low-pressure limit k_0 of a falloff or chemically activated reaction."""
        if self.kind == "chemically-activated":
            return self.rate  # type: ignore[return-value]
        return self.low

    @property
    def is_pressure_dependent(self) -> bool:
        return self.kind in ("falloff", "chemically-activated")

    def reactant_orders(self) -> dict[str, float]:
        """Exponents of the forward rate of progress (stoichiometry, then FORD)."""
        result = {name: nu for name, nu in self.reactants}
        result.update(self.orders)
        return result

    def product_orders(self) -> dict[str, float]:
        """Exponents of the reverse rate of progress (stoichiometry, then RORD)."""
        result = {name: nu for name, nu in self.products}
        result.update(self.reverse_orders)
        return result


def nasa9_from_nasa7(a: tuple[float, ...]) -> tuple[float, ...]:
    """NASA7 a1..a7 written as NASA9 coefficients (no T^-2, T^-1 terms)."""
    return (0.0, 0.0) + tuple(a)


@dataclass(frozen=True)
class Nasa7:
    """NASA 7-coefficient polynomials: ``low`` for T <= T_mid, ``high`` above.

    Coefficients a1..a7 of cp/R = a1 + a2 T + ... + a5 T^4 (T in K).
    """

    T_low: float
    T_mid: float
    T_high: float
    low: tuple[float, ...]
    high: tuple[float, ...]

    def coefficients(self, T: np.ndarray) -> np.ndarray:
        """The (7, n) coefficient set that applies at each temperature."""
        T = np.atleast_1d(np.asarray(T, dtype=float))
        return np.where(T <= self.T_mid, np.array(self.low)[:, None], np.array(self.high)[:, None])

    @property
    def pieces(self) -> tuple[tuple[float, ...], tuple[tuple[float, ...], ...]]:
        """(breakpoints, NASA9 coefficient sets): the form every thermo model shares."""
        return (self.T_mid,), (nasa9_from_nasa7(self.low), nasa9_from_nasa7(self.high))


@dataclass(frozen=True)
class Nasa9:
    """NASA 9-coefficient polynomials (McBride and Gordon, NASA RP-1311) over
    one or more contiguous temperature ranges, ascending.

    Each range is (T_min, T_max, (a1..a7, b1, b2)) with
    cp/R = a1 T^-2 + a2 T^-1 + a3 + a4 T + a5 T^2 + a6 T^3 + a7 T^4,
    b1 the enthalpy and b2 the entropy integration constant.
    """

    ranges: tuple[tuple[float, float, tuple[float, ...]], ...]

    @property
    def T_low(self) -> float:
        return self.ranges[0][0]

    @property
    def T_high(self) -> float:
        return self.ranges[-1][1]

    @property
    def pieces(self) -> tuple[tuple[float, ...], tuple[tuple[float, ...], ...]]:
        """(breakpoints between ranges, coefficient sets): a range applies below its upper bound."""
        return tuple(r[1] for r in self.ranges[:-1]), tuple(tuple(r[2]) for r in self.ranges)


Thermo = Union[Nasa7, Nasa9]


@dataclass(frozen=True)
class TransportData:
    """A TRANSPORT record in the file's own units.

    ``geometry`` 0 atom, 1 linear, 2 nonlinear; ``well_depth`` eps/k [K];
    ``diameter`` sigma [Angstrom]; ``dipole`` [Debye]; ``polarizability``
    [Angstrom^3]; ``rotational_relaxation`` Zrot at 298 K [-].
    """

    geometry: int
    well_depth: float
    diameter: float
    dipole: float
    polarizability: float
    rotational_relaxation: float
    location: Location | None = None


@dataclass(frozen=True)
class Species:
    """A species: elemental composition, molecular weight [kg/kmol], NASA7 or
    NASA9 thermodynamics and (when a TRANSPORT file or section was given) transport data."""

    name: str
    composition: tuple[tuple[str, float], ...]
    molecular_weight: float
    thermo: Thermo
    transport: TransportData | None = None
    location: Location | None = None


@dataclass(frozen=True, eq=False)
class Mechanism:
    """A complete mechanism, the input of every kernel.

    Compared and hashed by identity (caches keyed on a mechanism stay cheap).

    ``qss_species`` are treated by the quasi-steady-state approximation and
    are not part of the kernels' state; ``stiff_species`` get dynamic
    stiffness removal, in the order given (the order matters for the
    sequential form).
    """

    name: str
    elements: tuple[str, ...]
    species: tuple[Species, ...]
    reactions: tuple[Reaction, ...]
    qss_species: tuple[str, ...] = ()
    stiff_species: tuple[str, ...] = ()
    sources: tuple[str, ...] = field(default=(), compare=False)
    warnings: tuple = field(default=(), compare=False)  # Problems the frontend accepted with a warning

    @property
    def species_names(self) -> list[str]:
        """Every species, in declaration order."""
        return [s.name for s in self.species]

    @functools.cached_property
    def _index(self) -> dict[str, int]:
        return {s.name: i for i, s in enumerate(self.species)}

    def species_index(self, name: str) -> int:
        """Position of ``name`` in ``species_names``."""
        return self._index[name]

    @property
    def n_species(self) -> int:
        return len(self.species)

    @property
    def transported_species(self) -> list[str]:
        """All species but the QSSA ones, in declaration order (the kernels' order)."""
        qss = set(self.qss_species)
        return [s.name for s in self.species if s.name not in qss]

    @property
    def transported_indices(self) -> np.ndarray:
        """Indices into ``species_names`` of ``transported_species``."""
        return np.array([self._index[n] for n in self.transported_species], dtype=int)

    @property
    def molecular_weights(self) -> np.ndarray:
        """Molecular weights of every species [kg/kmol]."""
        return np.array([s.molecular_weight for s in self.species])

    @property
    def has_transport(self) -> bool:
        return all(s.transport is not None for s in self.species)

    def __repr__(self) -> str:
        return (f"Mechanism({self.name!r}: {self.n_species} species "
                f"({len(self.qss_species)} QSSA, {len(self.stiff_species)} stiff), "
                f"{len(self.reactions)} reactions)")
