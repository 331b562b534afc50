"""Split a reaction equation into stoichiometry, against the declared species.

Species names may contain ``+ ( ) * - ,`` (``CH2(S)``, ``c2h3o1-2``), so a
side is split by trying the declared names that fit at each position, longest
first, and keeping the first split that accounts for the whole side.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

from singe.errors import Location, MechanismSemanticError, Problem
from singe.frontend.source import Token, did_you_mean

_NON_SPACE = re.compile(r"\S")
_COEFFICIENT = re.compile(r"(\d+\.?\d*|\.\d+)\s*")
_EXPONENT_COEFFICIENT = re.compile(r"((?:\d+\.?\d*|\.\d+)[eE][-+]?\d+)\s*")  # 1.53846154E-2BIN6


@dataclass(frozen=True)
class Equation:
    """What an equation says: sides, direction and its third body.

    ``third_body`` is 'M' for ``+M``; ``falloff_collider`` is 'M' for
    ``(+M)`` or the species name of ``(+SPECIES)``.
    """

    reactants: tuple[tuple[str, float], ...]
    products: tuple[tuple[str, float], ...]
    reversible: bool
    third_body: str | None = None
    falloff_collider: str | None = None


class SpeciesMatcher:
    """Finds the declared species names that start at a position of a text."""

    def __init__(self, names):
        self.names = list(dict.fromkeys(names))
        self.name_set = set(self.names)
        self._lengths = sorted({len(name) for name in self.names}, reverse=True)

    def candidates(self, text: str, position: int) -> list[str]:
        """Declared names (longest first) that ``text`` holds at ``position``
        (one set lookup per distinct name length)."""
        return [text[position:position + n] for n in self._lengths
                if position + n <= len(text) and text[position:position + n] in self.name_set]


def _arrows(text: str) -> list[tuple[int, int, bool]]:
    """(start, end, reversible) of every place an arrow may stand (a species
    name may hold '=': the split that reads as declared species wins)."""
    arrows = []
    for i, char in enumerate(text):
        if char != "=":
            continue
        if text[i - 1:i] == "<" and text[i + 1:i + 2] == ">":
            arrows.append((i - 1, i + 2, True))
        elif text[i + 1:i + 2] == ">":
            arrows.append((i, i + 2, False))
        else:
            arrows.append((i, i + 1, True))
    return arrows


def _falloff_suffix(side: str, names=()) -> tuple[str, str | None]:
    """Split a trailing ``(+M)`` / ``(+SPECIES)`` off a side: (rest, collider).
    The collider may itself hold parentheses (``(+SP)X)``): a declared name
    (or M) that closes the side is taken first."""
    stripped = side.rstrip()
    if not stripped.endswith(")"):
        return side, None
    start = stripped.rfind("(+")
    while start >= 0:
        inner = stripped[start + 2:-1].strip()
        if inner.upper() == "M" or inner in names:
            return stripped[:start], inner
        start = stripped.rfind("(+", 0, start)
    depth = 0
    for i in range(len(stripped) - 1, -1, -1):
        depth += {")": 1, "(": -1}.get(stripped[i], 0)
        if depth == 0:
            inner = stripped[i + 1:-1].strip()
            if inner.startswith("+"):
                return stripped[:i], inner[1:].strip()
            return side, None
    return side, None


class _SideParser:
    """Splits one side of an equation into (name, coefficient) terms."""

    def __init__(self, matcher: SpeciesMatcher, token: Token, offset: int):
        self.matcher = matcher
        self.token = token
        self.offset = offset  # column of the side's first character within the equation

    def parse(self, side: str) -> tuple[list[tuple[str, float]], bool]:
        """Terms and whether a ``+M`` third body appeared."""
        result = self._terms(side, 0)
        if result is None:
            raise self._undeclared(side)
        terms = [t for t in result if t[0] != "M*"]
        return terms, len(terms) != len(result)

    def _terms(self, side: str, position: int):
        """The first split of ``side[position:]`` into terms, or None.

        A depth-first search over term boundaries with an explicit stack (a
        side may hold thousands of terms); a boundary that led nowhere once is
        not tried again, so the search is linear in the boundaries tried."""
        stack = [iter(self._readings(side, position))]
        path: list[tuple[str, float]] = []
        dead: set[int] = set()
        positions = [position]
        while stack:
            for term, rest in stack[-1]:
                if rest == len(side):
                    return path + [term]
                if rest not in dead:
                    path.append(term)
                    positions.append(rest)
                    stack.append(iter(self._readings(side, rest)))
                    break
            else:
                stack.pop()
                dead.add(positions.pop())
                if path:
                    path.pop()
        return None

    def _readings(self, side: str, position: int):
        """Ways to read one term at ``position``: ((name, coefficient), position after its '+')."""
        while position < len(side) and side[position].isspace():
            position += 1
        if position >= len(side):
            return
        for coefficient, start in self._coefficients(side, position):
            if start >= len(side):
                continue
            for name in self.matcher.candidates(side, start):
                rest = self._after_term(side, start + len(name))
                if rest is not None:
                    yield (name, coefficient), rest
            if side[start] in ("M", "m") and coefficient == 1.0 and "M" not in self.matcher.name_set:
                rest = self._after_term(side, start + 1)
                if rest is not None:
                    yield ("M*", 1.0), rest

    @staticmethod
    def _coefficients(side: str, position: int):
        """Ways to read a coefficient at ``position``: none, then a leading
        number, then one with an exponent (``1.5E-2``)."""
        yield 1.0, position
        for pattern in (_COEFFICIENT, _EXPONENT_COEFFICIENT):
            match = pattern.match(side, position)
            if match and math.isfinite(float(match.group(1))):
                yield float(match.group(1)), match.end()

    @staticmethod
    def _after_term(side: str, position: int) -> int | None:
        """Position after the '+' that follows a term, len(side) at the end, None otherwise."""
        while position < len(side) and side[position].isspace():
            position += 1
        if position == len(side):
            return position
        if side[position] == "+" and _NON_SPACE.search(side, position + 1):  # a '+' must join two terms
            return position + 1
        return None

    def _undeclared(self, side: str) -> MechanismSemanticError:
        """Name the first term that is not a declared species (or the stray '+')."""
        stripped = side.strip()
        if not stripped:
            which = "reactants" if self.offset == 0 else "products"
            return MechanismSemanticError(Problem(self.token.location, f"reaction has no {which}",
                                                  "write species on both sides of the arrow"))
        if stripped.startswith("+") or stripped.endswith("+"):
            at = side.index(stripped) + (0 if stripped.startswith("+") else len(stripped) - 1)
            which = "reactant" if self.offset == 0 else "product"
            return MechanismSemanticError(Problem(self._location(at), f"stray '+' on the {which} side",
                                                  "a '+' joins two species"))
        position = 0
        for piece in side.split("+"):
            word = piece.strip()
            if word and not self._terms(piece, 0):
                bare = _COEFFICIENT.sub("", word, count=1) if _COEFFICIENT.match(word) else word
                location = self._location(position + piece.index(word[0]))
                if not bare:
                    return MechanismSemanticError(Problem(location, f"term {word!r} is a number without a species",
                                                          "terms are [coefficient]SPECIES joined by '+'"))
                return MechanismSemanticError(Problem(location, f"undeclared species {bare!r}",
                                                      did_you_mean(bare, self.matcher.names)
                                                      or "declare it in the SPECIES section"))
            position += len(piece) + 1
        return MechanismSemanticError(Problem(self.token.location, f"cannot read {side.strip()!r} as species",
                                              "terms are [coefficient]SPECIES joined by '+'"))

    def _location(self, at: int) -> Location:
        """Where character ``at`` of the side stands in the file."""
        where = self.token.location
        return Location(where.file, where.line, where.column + self.offset + at, where.text)


def _merge(terms: list[tuple[str, float]]) -> tuple[tuple[str, float], ...]:
    merged: dict[str, float] = {}
    for name, coefficient in terms:
        merged[name] = merged.get(name, 0.0) + coefficient
    return tuple(merged.items())


def parse_equation(token: Token, matcher: SpeciesMatcher) -> Equation:
    """Read an equation token against the declared species (raises MechanismSemanticError)."""
    text = token.text
    arrows = _arrows(text)
    if not arrows:
        raise MechanismSemanticError(Problem(token.location, f"equation {text!r} needs one of =, <=>, =>"))
    first_error = None
    for arrow in arrows:
        try:
            return _read_sides(token, matcher, arrow)
        except MechanismSemanticError as error:
            first_error = first_error or error
    if len(arrows) > 1 and not any("=" in name for name in matcher.names):
        raise MechanismSemanticError(Problem(token.location, f"equation {text!r} needs exactly one of =, <=>, =>"))
    raise first_error


def _read_sides(token: Token, matcher: SpeciesMatcher, arrow: tuple[int, int, bool]) -> Equation:
    """The equation read with its arrow at ``arrow`` (start, end, reversible)."""
    text = token.text
    start, end, reversible = arrow
    sides = []
    colliders = []
    for side, offset in ((text[:start], 0), (text[end:], end)):
        rest, collider = _falloff_suffix(side, matcher.names)
        colliders.append(None if collider is None else ("M" if collider.upper() == "M" else collider))
        sides.append(_SideParser(matcher, token, offset).parse(rest))
    (reactants, m_left), (products, m_right) = sides
    if colliders[0] != colliders[1]:
        raise MechanismSemanticError(Problem(token.location, "the (+M) or (+SPECIES) of a falloff reaction "
                                             "must appear on both sides"))
    if m_left != m_right:
        raise MechanismSemanticError(Problem(token.location, "a '+M' third body must appear on both sides"))
    collider = colliders[0]
    if collider is not None and collider != "M" and collider not in matcher.name_set:
        raise MechanismSemanticError(Problem(token.location, f"undeclared species {collider!r} in (+{collider})",
                                             did_you_mean(collider, matcher.names)))
    for name, coefficient in reactants + products:
        if not coefficient > 0.0:
            raise MechanismSemanticError(Problem(token.location, f"stoichiometric coefficient {coefficient:g} of "
                                                 f"{name!r} must be positive", "leave the species out instead"))
    return Equation(_merge(reactants), _merge(products), reversible,
                    "M" if m_left else None, collider)
