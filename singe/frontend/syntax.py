"""Syntax trees of the input files: what was written, where, not yet checked.

The parsers build these; ``singe.frontend.resolve`` turns them into a
``Mechanism`` and reports every semantic mistake with the location kept here.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from singe.errors import Location
from singe.frontend.source import SourceText, Token


@dataclass(frozen=True)
class ElementDecl:
    name: Token
    weight: Token | None = None


@dataclass(frozen=True)
class AuxItem:
    """``KEYWORD`` or ``KEYWORD / values /`` on an auxiliary line (a keyword
    may also be a species name: an efficiency)."""

    keyword: Token
    values: tuple[Token, ...] | None = None


@dataclass(frozen=True)
class ReactionSyntax:
    """A reaction line and its auxiliary lines."""

    equation: Token
    A: Token
    b: Token
    E: Token
    aux: tuple[AuxItem, ...] = ()


@dataclass(frozen=True)
class ReactionsSection:
    keyword: Token
    units: tuple[Token, ...]
    reactions: tuple[ReactionSyntax, ...]


@dataclass(frozen=True)
class EmbeddedSection:
    """A THERMO or TRANSPORT section inside a CHEMKIN file, kept as text."""

    keyword: Token
    header: str
    body: SourceText


@dataclass(frozen=True)
class ChemkinFile:
    source: SourceText
    elements: tuple[ElementDecl, ...] = ()
    species: tuple[Token, ...] = ()
    reactions: tuple[ReactionsSection, ...] = ()
    thermo: tuple[EmbeddedSection, ...] = ()
    transport: tuple[EmbeddedSection, ...] = ()


@dataclass(frozen=True)
class ThermoEntry:
    """Four NASA7 cards of one species, as text with their locations, and the
    lines that continue card 1's element list after an ``&``."""

    name: str
    cards: tuple[Token, Token, Token, Token]
    continuation: tuple[Token, ...] = ()

    @property
    def location(self) -> Location:
        return self.cards[0].location


@dataclass(frozen=True)
class Nasa9Entry:
    """The lines of one NASA9 entry (NASA RP-1311 format): name, formula,
    and three lines per temperature range."""

    name: str
    lines: tuple[Token, ...]

    @property
    def location(self) -> Location:
        return self.lines[0].location


@dataclass(frozen=True)
class ThermoFile:
    """``default_temperatures``: T_low, T_mid, T_high of the header (a lone
    T_mid there is ``single_mid``: it applies to every card)."""

    source: SourceText
    default_temperatures: tuple[Token, Token, Token] | None
    entries: tuple[ThermoEntry | Nasa9Entry, ...]
    single_mid: Token | None = None


@dataclass(frozen=True)
class TransportRecord:
    name: Token
    values: tuple[Token, ...]  # geometry, eps/k, sigma, dipole, polarizability, Zrot


@dataclass(frozen=True)
class TransportFile:
    source: SourceText
    records: tuple[TransportRecord, ...]


@dataclass(frozen=True)
class QssFile:
    source: SourceText
    qssa: tuple[Token, ...] = ()
    stiff: tuple[Token, ...] = ()
    sections: tuple[str, ...] = field(default=())
