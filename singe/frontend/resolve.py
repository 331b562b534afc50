"""From syntax trees to a ``Mechanism``: units, rate laws, species data and
every semantic check, collected and reported together."""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from singe.constants import AVOGADRO, FARADAY, GAS_CONSTANT, ONE_ATM
from singe.errors import Location, MechanismSemanticError, ProblemCollector
from singe.frontend.equation import Equation, SpeciesMatcher, parse_equation
from singe.frontend.source import Token, did_you_mean, is_number, to_float
from singe.frontend.syntax import AuxItem, ReactionsSection, ReactionSyntax
from singe.mechanism import (Arrhenius, ChebyshevRate, FalloffFunction, PlogRate, Reaction, collision_partner,
                             ThirdBody)

# Energy unit -> J/kmol per unit (None: already E/R in K)
ENERGY_UNITS = {
    "CAL": 4184.0, "KCAL": 4184.0e3, "JOUL": 1e3, "KJOU": 1e6, "KELV": None, "EVOL": FARADAY,
}
AUX_KEYWORDS = ("DUPLICATE", "LOW", "HIGH", "TROE", "SRI", "REV", "PLOG", "TCHEB", "PCHEB", "CHEB",
                "LT", "RLT", "FORD", "RORD", "UNITS")
PARAMETER_COUNTS = {"LOW": (3,), "HIGH": (3,), "REV": (3,), "TROE": (3, 4), "SRI": (3, 5), "PLOG": (4,),
                    "TCHEB": (2,), "PCHEB": (2,), "LT": (2,), "RLT": (2,)}
CM3_PER_MOL = 1e-3  # cm^3/mol in m^3/kmol


@dataclass(frozen=True)
class Units:
    """Units of a REACTIONS section: J/kmol per energy unit (None for
    KELVINS), and whether quantities are molecules rather than moles."""

    energy: float | None = ENERGY_UNITS["CAL"]
    molecules: bool = False

    def activation(self, E: float) -> float:
        """E in the section's unit -> E/R [K] (as Cantera: E in J/kmol, then / R)."""
        if self.energy is None:
            return E
        return E * self.energy / GAS_CONSTANT

    def pre_exponential(self, A: float, order: float) -> float:
        """A in cm, mol (or molecules), s for a rate of ``order`` -> SI."""
        factor = CM3_PER_MOL ** (order - 1)
        if self.molecules:
            factor *= (AVOGADRO * 1e-3) ** (order - 1)
        return A * factor

    def log10_factor(self, order: float) -> float:
        return math.log10(self.pre_exponential(1.0, order))


def parse_units(tokens: tuple[Token, ...], problems: ProblemCollector, base: Units = Units()) -> Units:
    """Units from the words after REACTIONS (CAL/MOLE, KCAL, KELVINS, MOLECULES ...)
    or of a reaction's UNITS option: a dimension not named keeps ``base``'s unit."""
    energy = base.energy
    molecules = base.molecules
    for token in tokens:
        word = token.text.upper()
        if word == "/":
            continue
        if word.startswith("MOLEC"):
            molecules = True
        elif word.startswith("MOL"):
            molecules = False
        elif word[:4] in ENERGY_UNITS or word[:3] == "CAL":
            energy = ENERGY_UNITS["CAL" if word[:3] == "CAL" else word[:4]]
        else:
            problems.add(token.location, f"unknown unit {token.text!r} on the REACTIONS line",
                         "energy: CAL/MOLE, KCAL/MOLE, JOULES/MOLE, KJOULES/MOLE, KELVINS, EVOLTS; "
                         "quantity: MOLES, MOLECULES")
    return Units(energy, molecules)


@dataclass
class _AuxData:
    """Auxiliary data of one reaction, gathered before building it."""

    duplicate: bool = False
    invalid: set[str] = field(default_factory=set)  # keywords given with unreadable values
    params: dict[str, tuple[Token, list[float]]] = field(default_factory=dict)
    plog: list[tuple[Token, list[float]]] = field(default_factory=list)
    cheb: list[tuple[Token, list[float]]] = field(default_factory=list)
    efficiencies: list[tuple[Token, float]] = field(default_factory=list)
    orders: list[tuple[Token, str, float]] = field(default_factory=list)
    reverse_orders: list[tuple[Token, str, float]] = field(default_factory=list)
    units: tuple[Token, ...] = ()


class ReactionBuilder:
    """Builds the ``Reaction`` objects of a REACTIONS section."""

    def __init__(self, species: list[str], problems: ProblemCollector):
        self.species = species
        self.species_set = set(species)
        self.matcher = SpeciesMatcher(species)
        self.problems = problems

    def build(self, syntax: ReactionSyntax, index: int, units: Units) -> Reaction | None:
        try:
            equation = parse_equation(syntax.equation, self.matcher)
        except MechanismSemanticError as error:
            self.problems.problems.extend(error.problems)
            return None
        aux = self._gather(syntax.aux)
        if aux.units:
            units = parse_units(aux.units, self.problems, units)
        return self._reaction(syntax, index, equation, aux, units)

    # -- auxiliary data ---------------------------------------------------

    def _gather(self, items: tuple[AuxItem, ...]) -> _AuxData:
        aux = _AuxData()
        for item in items:
            keyword = self._keyword(item.keyword.text)
            if keyword == "DUPLICATE":
                aux.duplicate = True
            elif keyword in ("FORD", "RORD"):
                self._order(item, aux.orders if keyword == "FORD" else aux.reverse_orders)
            elif keyword == "UNITS":
                aux.units = item.values or ()
            elif keyword is not None:
                self._parameters(item, keyword, aux)
            elif item.keyword.text in self.species_set:
                self._efficiency(item, aux)
            else:
                self._unknown(item)
        return aux

    @staticmethod
    def _keyword(word: str) -> str | None:
        upper = word.upper()
        if upper.startswith("DUP") and "DUPLICATE".startswith(upper):
            return "DUPLICATE"
        return upper if upper in AUX_KEYWORDS else None

    def _numbers(self, item: AuxItem, keyword: str) -> list[float] | None:
        values = item.values or ()
        for token in values:
            if not is_number(token.text):
                self.problems.add(token.location, f"malformed number {token.text!r} in {keyword}",
                                  "values between the slashes must be numbers")
                return None
        counts = PARAMETER_COUNTS.get(keyword)
        if item.values is None or (counts and len(values) not in counts):
            expected = " or ".join(str(c) for c in counts) if counts else "some"
            self.problems.add(item.keyword.location, f"{keyword} takes {expected} values, found {len(values)}",
                              f"write {keyword} / ... /")
            return None
        return [to_float(t.text) for t in values]

    def _parameters(self, item: AuxItem, keyword: str, aux: _AuxData) -> None:
        numbers = self._numbers(item, keyword)
        if numbers is None:
            aux.invalid.add(keyword)
            return
        if keyword == "PLOG":
            aux.plog.append((item.keyword, numbers))
        elif keyword == "CHEB":
            aux.cheb.append((item.keyword, numbers))
        elif keyword in aux.params:
            self.problems.add(item.keyword.location, f"{keyword} given twice for one reaction")
        else:
            aux.params[keyword] = (item.keyword, numbers)

    def _order(self, item: AuxItem, into: list) -> None:
        values = item.values or ()
        if len(values) != 2 or not is_number(values[1].text):
            self.problems.add(item.keyword.location, f"{item.keyword.text.upper()} takes a species and an order",
                              f"write {item.keyword.text.upper()} / SPECIES order /")
            return
        name = values[0].text
        if name not in self.species_set:
            self.problems.add(values[0].location, f"undeclared species {name!r}",
                              lambda: did_you_mean(name, self.species) or "declare it in the SPECIES section")
            return
        into.append((item.keyword, name, to_float(values[1].text)))

    def _efficiency(self, item: AuxItem, aux: _AuxData) -> None:
        values = item.values or ()
        if len(values) != 1 or not is_number(values[0].text):
            self.problems.add(item.keyword.location, f"efficiency of {item.keyword.text!r} must be one number",
                              f"write {item.keyword.text}/2.5/")
            return
        if any(token.text == item.keyword.text for token, _ in aux.efficiencies):
            self.problems.add(item.keyword.location, f"efficiency of {item.keyword.text!r} given twice",
                              "give each species' efficiency once")
            return
        aux.efficiencies.append((item.keyword, to_float(values[0].text)))

    def _unknown(self, item: AuxItem) -> None:
        word = item.keyword.text
        if item.values is not None and len(item.values) == 1:
            self.problems.add(item.keyword.location, f"undeclared species {word!r} in efficiencies",
                              lambda: did_you_mean(word, self.species) or "declare it in the SPECIES section")
        else:
            self.problems.add(item.keyword.location, f"unknown keyword {word!r}",
                              did_you_mean(word, AUX_KEYWORDS) or
                              "auxiliary keywords: " + ", ".join(AUX_KEYWORDS))

    # -- the reaction ------------------------------------------------------

    @staticmethod
    def _rate_orders(eq: Equation, aux: _AuxData, kind: str) -> tuple[float, float]:
        """Overall orders of the forward and reverse rates, for the units of A.

        As CHEMKIN and Cantera: FORD/RORD exponents replace stoichiometric
        ones, and ``+M`` counts once — except for PLOG, where Cantera strips
        the ``+M`` (the rate already holds the pressure dependence)."""
        forward = dict(eq.reactants)
        forward.update({name: order for _, name, order in aux.orders})
        reverse = dict(eq.products)
        reverse.update({name: order for _, name, order in aux.reverse_orders})
        extra = 1.0 if eq.third_body and kind != "plog" else 0.0
        return sum(forward.values()) + extra, sum(reverse.values()) + extra

    def _reaction(self, syntax: ReactionSyntax, index: int, eq: Equation, aux: _AuxData,
                  units: Units) -> Reaction | None:
        kind = self._kind(syntax, eq, aux)
        if kind is None:
            return None
        order, reverse_order = self._rate_orders(eq, aux, kind)

        def arrhenius(values, rate_order, lt=None) -> Arrhenius:
            A, b, E = values
            lt_B, lt_C = lt if lt else (0.0, 0.0)
            return Arrhenius(units.pre_exponential(A, rate_order), b, units.activation(E), lt_B, lt_C)

        if kind == "plog":
            rate = self._plog(aux, units, order)
        elif kind == "chebyshev":
            rate = self._chebyshev(aux, units, order)
        else:  # the main line; for chemical activation it is k0, in the reaction's own units
            rate = arrhenius((syntax.A.value, syntax.b.value, syntax.E.value), order, aux.params.get("LT", (0, None))[1])
        if rate is None:
            return None
        reverse = self._reverse(eq, aux, lambda values, lt: arrhenius(values, reverse_order, lt))
        return Reaction(
            index=index, equation=syntax.equation.text, reactants=eq.reactants, products=eq.products,
            reversible=eq.reversible and not ("REV" in aux.params and reverse is None),
            kind=kind, rate=rate, location=syntax.equation.location,
            third_body=self._third_body(syntax, eq, aux),
            low=arrhenius(aux.params["LOW"][1], order + 1) if kind == "falloff" else None,
            high=arrhenius(aux.params["HIGH"][1], order - 1) if kind == "chemically-activated" else None,
            falloff=self._falloff(aux) if kind in ("falloff", "chemically-activated") else None,
            reverse_rate=reverse,
            orders=tuple((n, o) for _, n, o in aux.orders),
            reverse_orders=tuple((n, o) for _, n, o in aux.reverse_orders),
            duplicate=aux.duplicate, collision_partner=collision_partner(kind, eq.reactants, eq.products),
        )

    def _reverse(self, eq: Equation, aux: _AuxData, arrhenius) -> Arrhenius | None:
        """The explicit REV rate (None when absent or REV/0 0 0/)."""
        if "REV" not in aux.params:
            return None
        if not eq.reversible:
            self.problems.add(aux.params["REV"][0].location, "REV given for an irreversible (=>) reaction",
                              "write the equation with = or <=>")
        values = aux.params["REV"][1]
        rlt = aux.params.get("RLT", (None, None))[1]
        return arrhenius(values, rlt) if any(values) or rlt else None

    def _kind(self, syntax: ReactionSyntax, eq: Equation, aux: _AuxData) -> str | None:
        """Which rate form the equation and its auxiliary data describe."""
        where = syntax.equation.location
        params = aux.params
        if aux.invalid & {"LOW", "HIGH", "PLOG", "CHEB"}:
            return None  # already reported
        given = [name for name, present in (("PLOG", aux.plog), ("CHEB", aux.cheb), ("LOW", "LOW" in params),
                                            ("HIGH", "HIGH" in params), ("+M", eq.third_body and not aux.plog))
                 if present]
        if len(given) > 1 and given[:2] != ["LOW", "HIGH"]:
            self.problems.add(where, f"parameters of more than one rate type: {' and '.join(given)}",
                              "a reaction takes one of PLOG, CHEB, LOW (falloff), HIGH (chemical activation), +M")
            return None
        if aux.plog:
            return "plog"
        if aux.cheb:
            return "chebyshev"
        if eq.falloff_collider is not None:
            if "LOW" in params and "HIGH" in params:
                self.problems.add(params["HIGH"][0].location, "both LOW and HIGH given",
                                  "LOW makes a falloff reaction, HIGH a chemically activated one")
                return None
            if "LOW" in params:
                return "falloff"
            if "HIGH" in params:
                return "chemically-activated"
            self.problems.add(where, f"(+{eq.falloff_collider}) reaction without LOW or HIGH",
                              "a falloff reaction needs LOW / A b E / (or HIGH for chemical activation)")
            return None
        for keyword in ("LOW", "HIGH", "TROE", "SRI"):
            if keyword in params:
                self.problems.add(params[keyword][0].location, f"{keyword} given for a reaction without (+M)",
                                  "write the equation with (+M) on both sides")
                return None
        return "three-body" if eq.third_body else "elementary"

    def _third_body(self, syntax: ReactionSyntax, eq: Equation, aux: _AuxData) -> ThirdBody | None:
        collider = eq.third_body or eq.falloff_collider
        takes_m = collider == "M" and not (aux.plog or aux.cheb)
        if aux.efficiencies and not takes_m:
            self.problems.add(aux.efficiencies[0][0].location, "efficiencies given for a reaction without +M or (+M)",
                              "efficiencies apply to the M of +M or (+M)")
        if collider is None or aux.plog or aux.cheb:
            return None
        if collider != "M":
            return ThirdBody(collider=collider)
        return ThirdBody(efficiencies=tuple((t.text, value) for t, value in aux.efficiencies))

    def _falloff(self, aux: _AuxData) -> FalloffFunction:
        if "TROE" in aux.params:
            return FalloffFunction("troe", tuple(aux.params["TROE"][1]))
        if "SRI" in aux.params:
            return FalloffFunction("sri", tuple(aux.params["SRI"][1]))
        return FalloffFunction("lindemann")

    def _plog(self, aux: _AuxData, units: Units, order: float) -> PlogRate:
        entries = sorted(((P * ONE_ATM, Arrhenius(units.pre_exponential(A, order), b, units.activation(E)))
                          for _, (P, A, b, E) in aux.plog), key=lambda entry: entry[0])
        return PlogRate(tuple(entries))

    def _chebyshev(self, aux: _AuxData, units: Units, order: float) -> ChebyshevRate | None:
        numbers = [x for _, values in aux.cheb for x in values]
        first = aux.cheb[0][0]
        if len(numbers) < 2 or numbers[0] != int(numbers[0]) or numbers[1] != int(numbers[1]):
            self.problems.add(first.location, "CHEB must start with the numbers of T and P terms",
                              "write CHEB / nT nP a11 a12 ... /")
            return None
        nT, nP = int(numbers[0]), int(numbers[1])
        coeffs = numbers[2:]
        if len(coeffs) != nT * nP:
            self.problems.add(first.location, f"CHEB expects {nT}x{nP} = {nT * nP} coefficients, found {len(coeffs)}",
                              "coefficients may continue on further CHEB lines")
            return None
        missing = [keyword for keyword in ("TCHEB", "PCHEB") if keyword not in aux.params]
        if missing:
            self.problems.add(first.location, f"CHEB without {' and '.join(missing)}",
                              "give the ranges of the fit: TCHEB / T_min T_max / PCHEB / P_min P_max / [atm]")
            return None
        T_min, T_max = aux.params["TCHEB"][1]
        P_min, P_max = aux.params["PCHEB"][1]
        rows = [list(coeffs[t * nP:(t + 1) * nP]) for t in range(nT)]
        rows[0][0] += units.log10_factor(order)
        return ChebyshevRate(T_min, T_max, P_min * ONE_ATM, P_max * ONE_ATM, tuple(tuple(r) for r in rows))


def check_duplicates(reactions: list[Reaction], problems: ProblemCollector) -> None:
    """Two reactions of one type with the same reactants and products, up to a
    common factor and possibly written in reverse, must both be marked
    DUPLICATE, as Cantera checks them; two irreversible ones written in
    opposite directions are different reactions."""
    seen: dict[tuple, list[tuple[Reaction, bool]]] = {}
    for reaction in reactions:
        key, forward = _duplicate_key(reaction)
        for other, other_forward in seen.get(key, ()):
            opposite = forward != other_forward
            if opposite and not (reaction.reversible or other.reversible):
                continue
            if not (reaction.duplicate and other.duplicate):
                how = ", written in reverse" if opposite else ""
                problems.add(reaction.location if not reaction.duplicate else other.location,
                             f"duplicate reaction not marked DUPLICATE (same as reaction {other.index + 1} "
                             f"at line {other.location.line}{how})",
                             "mark both reactions DUPLICATE if both are meant")
                break
        seen.setdefault(key, []).append((reaction, forward))


def _scaled(first, second) -> tuple:
    """Both sides divided by the coefficient of the first side's first species (by name)."""
    first, second = sorted(first), sorted(second)
    scale = first[0][1] if first else 1.0
    return (tuple((n, round(nu / scale, 9)) for n, nu in first),
            tuple((n, round(nu / scale, 9)) for n, nu in second))


def _duplicate_key(reaction: Reaction) -> tuple[tuple, bool]:
    """(what two duplicates share: rate type, collider, the sides in a canonical
    direction and scale; whether the reaction is written in that direction)."""
    forward = _scaled(reaction.reactants, reaction.products)
    backward = _scaled(reaction.products, reaction.reactants)
    body = reaction.third_body
    collider = None if body is None else (body.collider or "M")
    return (reaction.kind, collider, min(forward, backward)), forward <= backward


def element_balance_problem(reaction: Reaction, compositions: dict[str, dict[str, float]]) -> str | None:
    """A message if the reaction does not conserve elements."""
    totals: dict[str, float] = {}
    for side, sign in ((reaction.reactants, 1.0), (reaction.products, -1.0)):
        for name, nu in side:
            for element, count in compositions.get(name, {}).items():
                totals[element] = totals.get(element, 0.0) + sign * nu * count
    off = {e: v for e, v in totals.items() if abs(v) > 1e-3}
    if off:
        detail = ", ".join(f"{e} {v:+g}" for e, v in off.items())
        return f"reaction is not balanced in elements (reactants - products: {detail})"
    return None


def reaction_sections_units(section: ReactionsSection, problems: ProblemCollector) -> Units:
    return parse_units(section.units, problems)


__all__ = ["ReactionBuilder", "Units", "parse_units", "check_duplicates", "element_balance_problem",
           "Location"]
