"""Split a reaction equation into stoichiometry, against the declared species.

Species names may contain ``+ ( ) * - ,`` (``CH2(S)``, ``c2h3o1-2``), so a
side is split by trying the declared names that fit at each position, longest
first, and keeping the first split that accounts for the whole side.
"""

from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass

from singe.errors import MechanismSemanticError, Problem
from singe.frontend.source import Token, did_you_mean

_COEFFICIENT = re.compile(r"(\d+\.?\d*|\.\d+)\s*")


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


def _arrow(text: str) -> tuple[int, int, bool] | None:
    """(start, end, reversible) of the single arrow of an equation."""
    for arrow, reversible in (("<=>", True), ("=>", False), ("=", True)):
        position = text.find(arrow)
        if position >= 0:
            return position, position + len(arrow), reversible
    return None


def _falloff_suffix(side: str) -> tuple[str, str | None]:
    """Split a trailing ``(+M)`` / ``(+SPECIES)`` off a side: (rest, collider)."""
    stripped = side.rstrip()
    if not stripped.endswith(")"):
        return side, None
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
        """Ways to read a coefficient at ``position``: none, then a leading number."""
        yield 1.0, position
        match = _COEFFICIENT.match(side, position)
        if match:
            yield float(match.group(1)), match.end()

    @staticmethod
    def _after_term(side: str, position: int) -> int | None:
        """Position after the '+' that follows a term, len(side) at the end, None otherwise."""
        while position < len(side) and side[position].isspace():
            position += 1
        if position == len(side):
            return position
        if side[position] == "+":
            return position + 1
        return None

    def _undeclared(self, side: str) -> MechanismSemanticError:
        """Name the first term that is not a declared species."""
        position = 0
        for piece in side.split("+"):
            word = piece.strip()
            if word and not self._terms(piece, 0):
                bare = _COEFFICIENT.sub("", word, count=1) if _COEFFICIENT.match(word) else word
                column = self.token.location.column + self.offset + position + piece.index(word[0])
                location = dataclasses.replace(self.token.location, column=column)
                if not bare:
                    return MechanismSemanticError(Problem(location, f"term {word!r} is a number without a species",
                                                          "terms are [coefficient]SPECIES joined by '+'"))
                return MechanismSemanticError(Problem(location, f"undeclared species {bare!r}",
                                                      did_you_mean(bare, self.matcher.names)
                                                      or "declare it in the SPECIES section"))
            position += len(piece) + 1
        return MechanismSemanticError(Problem(self.token.location, f"cannot read {side.strip()!r} as species",
                                              "terms are [coefficient]SPECIES joined by '+'"))


def _merge(terms: list[tuple[str, float]]) -> tuple[tuple[str, float], ...]:
    merged: dict[str, float] = {}
    for name, coefficient in terms:
        merged[name] = merged.get(name, 0.0) + coefficient
    return tuple(merged.items())


def parse_equation(token: Token, matcher: SpeciesMatcher) -> Equation:
    """Read an equation token against the declared species (raises MechanismSemanticError)."""
    text = token.text
    arrow = _arrow(text)
    if arrow is None or text.count("=") != 1:
        raise MechanismSemanticError(Problem(token.location, f"equation {text!r} needs exactly one of =, <=>, =>"))
    start, end, reversible = arrow
    sides = []
    colliders = []
    for side, offset in ((text[:start], 0), (text[end:], end)):
        rest, collider = _falloff_suffix(side)
        colliders.append(collider)
        sides.append(_SideParser(matcher, token, offset).parse(rest))
    (reactants, m_left), (products, m_right) = sides
    if colliders[0] != colliders[1]:
        raise MechanismSemanticError(Problem(token.location, "the (+M) or (+SPECIES) of a falloff reaction "
                                             "must appear on both sides"))
    if m_left != m_right:
        raise MechanismSemanticError(Problem(token.location, "a '+M' third body must appear on both sides"))
    collider = colliders[0]
    if collider is not None and collider.upper() == "M":
        collider = "M"
    elif collider is not None and collider not in matcher.name_set:
        raise MechanismSemanticError(Problem(token.location, f"undeclared species {collider!r} in (+{collider})",
                                             did_you_mean(collider, matcher.names)))
    return Equation(_merge(reactants), _merge(products), reversible,
                    "M" if m_left else None, collider)
