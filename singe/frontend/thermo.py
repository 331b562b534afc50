"""Lexer and parser of THERMO data (NASA 7-coefficient, fixed-column cards).

The format is defined by columns, so each card is lexed whole (its type is
the card number in column 80) and split by column in ``nasa7_from_entry``.
"""

from __future__ import annotations


from singe.errors import MechanismSyntaxError, Problem
from singe.frontend.source import (appended, finite_number, ParserBase, LexerBase, SourceText, Token,
                                   is_number)
from singe.frontend.syntax import ThermoEntry, ThermoFile
from singe.mechanism import Nasa7

FIELD = 15  # width of a coefficient field on cards 2-4


class ThermoLexer(LexerBase):
    """One token per line: THERMO header, default temperatures, CARD1..CARD4, END."""

    tokens = ("THERMO", "TEMPERATURES", "CARD1", "CARD2", "CARD3", "CARD4", "END")

    t_ignore = ""

    def t_blank(self, t):
        r"^[^\S\n]*(?:!.*)?\n"  # any whitespace, form feeds and no-break spaces too
        t.lexer.lineno += 1

    def t_line(self, t):
        r"^.*\n"
        t.lexer.lineno += 1
        t.lineno = t.lexer.lineno - 1
        t.value = t.value.rstrip("\n")
        t.type = self._classify(t)
        return t

    def _classify(self, t) -> str:
        words = t.value.split("!")[0].split()
        head = words[0].upper()
        if head.startswith("THER") and head.isalpha():
            return "THERMO"
        if head in ("END", "ENDOFDATA"):
            return "END"
        if len(words) == 3 and all(is_number(w) for w in words):
            for word in words:
                finite_number(word, self.source.location(t.lineno, t.value.index(word) + 1))
            return "TEMPERATURES"
        marker = t.value[79:80] if len(t.value) >= 80 else t.value.rstrip()[-1:]
        if marker in ("1", "2", "3", "4"):
            return f"CARD{marker}"
        column = min(len(t.value), 80)
        raise self.source.error(t.lineno, column, "malformed NASA7 card: no card number 1-4 in column 80",
                                "each species takes four 80-column cards numbered 1 to 4")


class ThermoParser(ParserBase):
    """PLY grammar of a THERMO file or embedded THERMO section."""

    tokens = ThermoLexer.tokens

    lexer_class = ThermoLexer

    def parse(self, source: SourceText) -> ThermoFile:
        temperatures, entries = self._run(source)
        return ThermoFile(source, temperatures, tuple(entries))

    def _token(self, p, i) -> Token:
        return Token(p[i], self.source.location(p.lineno(i), 1))

    def p_thermo_file(self, p):
        """thermo_file : header entries end"""
        p[0] = (p[1], p[2])

    def p_header(self, p):
        """header : THERMO TEMPERATURES
                  | THERMO
                  | TEMPERATURES
                  | empty"""
        temps = [i for i in range(1, len(p)) if p.slice[i].type == "TEMPERATURES"]
        p[0] = self._temperatures(p, temps[0]) if temps else None

    def _temperatures(self, p, i) -> tuple[Token, Token, Token]:
        line = p[i]
        location = self.source.location(p.lineno(i), 1)
        return tuple(Token(w, location) for w in line.split("!")[0].split())  # type: ignore[return-value]

    def p_end(self, p):
        """end : END
               | empty"""

    def p_empty(self, p):
        """empty :"""

    def p_entries(self, p):
        """entries : entries entry
                   | empty"""
        p[0] = appended(p[1], p[2]) if len(p) == 3 else []

    def p_entry(self, p):
        """entry : CARD1 CARD2 CARD3 CARD4"""
        cards = tuple(self._token(p, i) for i in range(1, 5))
        name = p[1][:18].split()[0] if p[1][:18].split() else ""
        if not name:
            raise self.source.error(p.lineno(1), 1, "malformed NASA7 card: no species name in columns 1-18")
        p[0] = ThermoEntry(name, cards)  # type: ignore[arg-type]

    def p_error(self, tok):
        if tok is None:
            raise self.source.error(self.lexer.lexer.lineno - 1, 1,
                                    "malformed NASA7 entry: the file ends inside an entry",
                                    "each species takes four cards numbered 1 to 4")
        location = self.lexer.location(tok)
        if tok.type.startswith("CARD"):
            message = f"malformed NASA7 entry: card {tok.type[-1]} out of order"
            hint = "each species takes four consecutive cards numbered 1, 2, 3, 4 in column 80"
        else:
            message, hint = f"unexpected {tok.type} line", "THERMO data: header, cards, END"
        raise MechanismSyntaxError(Problem(location, message, hint))


def _field(card: Token, start: int, width: int) -> tuple[str, int]:
    """Text of columns start+1 .. start+width of a card and its 1-based column."""
    return card.text[start:start + width], start + 1


def _number(card: Token, start: int, width: int, what: str, source: SourceText) -> float:
    text, column = _field(card, start, width)
    if not is_number(text.strip()):
        raise source.error(card.location.line, column, f"malformed NASA7 card: {what} {text.strip()!r} is not a number",
                           f"columns {column}-{column + width - 1} must hold a number")
    return finite_number(text.strip(), source.location(card.location.line, column))


def composition_from_card(card: Token, source: SourceText) -> tuple[tuple[str, float], ...]:
    """Elements and counts of card 1: 4 fields of (2 letters, 3 digits) at columns
    25-44 and an optional fifth at column 74."""
    result: dict[str, float] = {}
    starts = [24, 29, 34, 39] + ([73] if len(card.text) >= 78 else [])
    for start in starts:
        symbol = card.text[start:start + 2].strip().upper()
        count_text = card.text[start + 2:start + 5].strip()
        if not symbol or symbol == "0" or not count_text:
            continue
        if not is_number(count_text):
            raise source.error(card.location.line, start + 3, f"malformed NASA7 card: element count {count_text!r}",
                               "columns 25-44 hold up to four element symbols with their counts")
        count = finite_number(count_text, source.location(card.location.line, start + 3))
        if count != 0:
            result[symbol] = result.get(symbol, 0.0) + count
    return tuple(result.items())


def nasa7_from_entry(entry: ThermoEntry, defaults: tuple[float, float, float], source: SourceText) -> Nasa7:
    """The NASA7 polynomials of an entry; blank temperatures take the file defaults."""
    card1, card2, card3, card4 = entry.cards
    temps = []
    for (start, width), default, what in zip(((45, 10), (55, 10), (65, 8)), (defaults[0], defaults[2], defaults[1]),
                                             ("T_low", "T_high", "T_mid")):
        text = card1.text[start:start + width].strip()
        temps.append(default if not text else _number(card1, start, width, what, source))
    T_low, T_high, T_mid = temps
    coeffs = [_number(card, i * FIELD, FIELD, "coefficient", source)
              for card, count in ((card2, 5), (card3, 5), (card4, 4)) for i in range(count)]
    return Nasa7(T_low, T_mid, T_high, low=tuple(coeffs[7:14]), high=tuple(coeffs[0:7]))


def parse_thermo(source: SourceText) -> ThermoFile:
    """Parse THERMO text into its entries (raises MechanismSyntaxError)."""
    return ThermoParser.instance().parse(source)
