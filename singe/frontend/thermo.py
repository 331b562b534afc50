"""Lexer and parser of THERMO data: NASA 7-coefficient fixed-column cards,
and NASA 9-coefficient entries (``THERMO NASA9``).

The format is defined by columns, so each card is lexed whole (its type is
the card number in column 80) and split by column in ``nasa7_from_entry``.
"""

from __future__ import annotations

import re

from singe.errors import MechanismSyntaxError, Problem
from singe.frontend.source import (appended, finite_number, ParserBase, LexerBase, SourceText, Token,
                                   is_number)
from singe.frontend.syntax import Nasa9Entry, ThermoEntry, ThermoFile
from singe.mechanism import Nasa7, Nasa9

FIELD = 15  # width of a coefficient field on cards 2-4


class ThermoLexer(LexerBase):
    """One token per line: THERMO header, default temperatures, CARD1..CARD4, END."""

    tokens = ("THERMO", "TEMPERATURES", "CARD1", "CARD2", "CARD3", "CARD4", "CONTINUATION", "END")

    t_ignore = ""
    _continues = False  # the previous card 1 (or continuation line) ended with '&'

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
        head = words[0].upper() if words else ""
        if self._continues:
            self._continues = t.value.rstrip().endswith("&")
            return "CONTINUATION"
        if head.startswith("THER") and head.isalpha():
            return "THERMO"
        if head in ("END", "ENDOFDATA"):
            return "END"
        if len(words) in (1, 3) and all(is_number(w) for w in words):
            for word in words:
                finite_number(word, self.source.location(t.lineno, t.value.index(word) + 1))
            return "TEMPERATURES"
        marker = t.value[79:80] if len(t.value) >= 80 else t.value.rstrip()[-1:]
        if marker in ("1", "2", "3", "4"):
            self._continues = marker == "1" and len(t.value) > 80 and t.value.rstrip().endswith("&")
            return f"CARD{marker}"
        column = min(len(t.value), 80)
        raise self.source.error(t.lineno, column, "malformed NASA7 card: no card number 1-4 in column 80",
                                "each species takes four 80-column cards numbered 1 to 4")


class ThermoParser(ParserBase):
    """PLY grammar of a THERMO file or embedded THERMO section."""

    tokens = ThermoLexer.tokens

    lexer_class = ThermoLexer

    def parse(self, source: SourceText, header: str = "") -> ThermoFile:
        """``header``: the rest of the THERMO line of an embedded section."""
        self.header_numbers = [Token(w, source.location(source.first_line - 1, 1))
                               for w in header.split("!")[0].split() if is_number(w)]
        temperatures, entries = self._run(source)
        return _with_defaults(source, temperatures, tuple(entries))

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
        numbers = list(self.header_numbers)
        for i in range(1, len(p)):
            if p.slice[i].type in ("TEMPERATURES", "THERMO") and p[i] is not None:
                location = self.source.location(p.lineno(i), 1)
                numbers += [Token(w, location) for w in p[i].split("!")[0].split() if is_number(w)]
        p[0] = tuple(numbers)

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
        """entry : CARD1 continuations CARD2 CARD3 CARD4"""
        cards = tuple(self._token(p, i) for i in (1, 3, 4, 5))
        name = p[1][:18].split()[0] if p[1][:18].split() else ""
        if not name:
            raise self.source.error(p.lineno(1), 1, "malformed NASA7 card: no species name in columns 1-18")
        p[0] = ThermoEntry(name, cards, tuple(p[2]))  # type: ignore[arg-type]

    def p_continuations(self, p):
        """continuations : continuations CONTINUATION
                         | empty"""
        p[0] = p[1] + [self._token(p, 2)] if len(p) == 3 else []

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


def _number(card: Token, start: int, width: int, what: str, source: SourceText, model: str = "NASA7") -> float:
    text, column = _field(card, start, width)
    if not is_number(text.strip()):
        kind = "card" if model == "NASA7" else "entry"
        raise source.error(card.location.line, column, f"malformed {model} {kind}: {what} {text.strip()!r} is not a number",
                           f"columns {column}-{column + width - 1} must hold a number")
    return finite_number(text.strip(), source.location(card.location.line, column))


def _with_defaults(source: SourceText, numbers: tuple[Token, ...], entries) -> ThermoFile:
    """The file's default temperatures: T_low T_mid T_high, or a lone T_mid every card uses."""
    if len(numbers) == 3:
        return ThermoFile(source, numbers, entries)  # type: ignore[arg-type]
    if len(numbers) == 1:
        return ThermoFile(source, None, entries, single_mid=numbers[0])
    if numbers:
        raise MechanismSyntaxError(Problem(numbers[0].location, f"THERMO header gives {len(numbers)} "
                                           "temperatures", "give T_low T_mid T_high, or one T_mid for every card"))
    return ThermoFile(source, None, entries)


def _element_count(card: Token, symbol: str, count_text: str, column: int, source: SourceText) -> float | None:
    """The count of one fixed-column element field (None: an empty field)."""
    if not symbol or symbol == "0":
        return None
    if any(c.isdigit() for c in symbol):
        raise source.error(card.location.line, column, f"malformed NASA7 card: element symbol {symbol!r} "
                           "(a 4-digit element count runs into the next field)",
                           "counts take 3 columns; write larger ones past column 80 or after '&'")
    if not count_text:
        raise source.error(card.location.line, column + 2, f"malformed NASA7 card: element {symbol!r} "
                           "has a blank count", "write the number of atoms after the symbol")
    if not is_number(count_text):
        raise source.error(card.location.line, column + 2, f"malformed NASA7 card: element count {count_text!r}",
                           "columns 25-44 hold up to four element symbols with their counts")
    return finite_number(count_text, source.location(card.location.line, column + 2))


def _fixed_fields(card: Token) -> list[tuple[int, int]]:
    """(start, width) of the element fields of card 1: four at columns 25-44,
    a fifth at column 74, and 10-column fields past column 80."""
    text = card.text.split("!")[0].rstrip()
    fields = [(24, 5), (29, 5), (34, 5), (39, 5)] + ([(73, 5)] if _fifth_element(text) else [])
    fields += [(start, 10) for start in range(80, len(text), 10)]
    return fields


def _fifth_element(text: str) -> bool:
    """Whether columns 74-78 hold a fifth element (not the end of a T_mid
    written 10 columns wide, as Cantera reads it)."""
    return len(text) >= 78 and text[73:75].strip().isalpha()


def _continued_composition(entry: ThermoEntry) -> dict[str, float]:
    """The free-format 'SYMBOL count' pairs of the lines after an '&'."""
    result: dict[str, float] = {}
    for line in entry.continuation:
        words = line.text.split("!")[0].replace("&", " ").split()
        if len(words) % 2 or not all(is_number(w) for w in words[1::2]):
            raise MechanismSyntaxError(Problem(line.location, "malformed element list after '&'",
                                               "write pairs of element symbol and count: C 8 H 18 O 2"))
        for symbol, count in zip(words[0::2], words[1::2]):
            result[symbol.upper()] = result.get(symbol.upper(), 0.0) + finite_number(count, line.location)
    return result


def composition_from_card(entry: ThermoEntry, source: SourceText) -> tuple[tuple[str, float], ...]:
    """Elements and counts of card 1 (fixed columns, or the lines after an '&')."""
    card = entry.cards[0]
    if entry.continuation:
        result = _continued_composition(entry)
    else:
        result = {}
        for start, width in _fixed_fields(card):
            symbol = card.text[start:start + 2].strip().upper()
            count = _element_count(card, symbol, card.text[start + 2:start + width].strip(), start + 1, source)
            if count:
                result[symbol] = result.get(symbol, 0.0) + count
    return tuple((symbol, count) for symbol, count in result.items() if count != 0)


def nasa7_from_entry(entry: ThermoEntry, defaults: tuple[float, float, float], source: SourceText,
                     single_mid: float | None = None) -> Nasa7:
    """The NASA7 polynomials of an entry; blank temperatures take the file
    defaults, and a file's single intermediate temperature replaces every
    card's (where it lies inside the card's range)."""
    card1, card2, card3, card4 = entry.cards
    temps = []
    mid_width = 8 if _fifth_element(card1.text) else 10
    for (start, width), default, what in zip(((45, 10), (55, 10), (65, mid_width)), (defaults[0], defaults[2], defaults[1]),
                                             ("T_low", "T_high", "T_mid")):
        text = card1.text[start:start + width].strip()
        temps.append(default if not text else _number(card1, start, width, what, source))
    T_low, T_high, T_mid = temps
    if single_mid is not None and T_low < single_mid < T_high:
        T_mid = single_mid  # as ck2yaml --single-intermediate-temperature
    coeffs = [_number(card, i * FIELD, FIELD, "coefficient", source)
              for card, count in ((card2, 5), (card3, 5), (card4, 4)) for i in range(count)]
    return Nasa7(T_low, T_mid, T_high, low=tuple(coeffs[7:14]), high=tuple(coeffs[0:7]))


# -- NASA9 (NASA RP-1311, Appendix A) ----------------------------------------

NASA9_FIELD = 16  # width of a coefficient field


def _nasa9_lines(source: SourceText) -> list[Token]:
    """The data lines of NASA9 text: no blank or comment lines, no THERMO line,
    no temperature line, up to an END that is not 'END PRODUCTS'."""
    lines = []
    for number in range(source.first_line, source.first_line + len(source.lines)):
        text = source.line_text(number)
        words = text.split()
        if not words or text.lstrip().startswith(("!", "#")):
            continue
        head = words[0].upper()
        if head in ("END", "ENDOFDATA") and "PRODUCTS" not in text.upper():
            break
        if head.startswith("THER") or head == "END" or (not lines and is_number(words[0])):
            continue
        lines.append(Token(text, source.location(number, 1)))
    return lines


def _range_count(line: str) -> int | None:
    """The number of temperature ranges in columns 1-2 of a NASA9 formula line."""
    match = re.match(r" ?([0-9]{1,2})(?:\s|$)", line)
    return int(match.group(1)) if match else None


def parse_nasa9(source: SourceText) -> ThermoFile:
    """Entries of NASA9 text: a name line, a formula line whose columns 1-2
    give the number N of temperature ranges, and 3 lines per range."""
    lines = _nasa9_lines(source)
    entries, i = [], 0
    while i < len(lines):
        name_line = lines[i]
        if i + 1 >= len(lines) or _range_count(lines[i + 1].text) is None:
            where = lines[i + 1].location if i + 1 < len(lines) else name_line.location
            raise MechanismSyntaxError(Problem(where, f"malformed NASA9 entry of {name_line.text.split()[0]!r}: "
                                               "columns 1-2 of its second line must give the number of "
                                               "temperature ranges"))
        count = 2 + 3 * _range_count(lines[i + 1].text)
        if i + count > len(lines):
            raise MechanismSyntaxError(Problem(name_line.location, "malformed NASA9 entry: the file ends inside "
                                               f"the entry of {name_line.text.split()[0]!r}",
                                               "each temperature range takes three lines"))
        entries.append(Nasa9Entry(name_line.text.split()[0], tuple(lines[i:i + count])))
        i += count
    return ThermoFile(source, None, tuple(entries))


def _nasa9_composition(line: Token, source: SourceText) -> tuple[tuple[str, float], ...]:
    """Columns 11-50 of the formula line: five fields of a 2-letter symbol and a 6-column count."""
    result: dict[str, float] = {}
    for start in range(10, 50, 8):
        symbol = line.text[start:start + 2].strip().upper()
        count = _element_count(line, symbol, line.text[start + 2:start + 8].strip(), start + 1, source)
        if count:
            result[symbol] = result.get(symbol, 0.0) + count
    return tuple(result.items())


def nasa9_from_entry(entry: Nasa9Entry, source: SourceText) -> tuple[Nasa9, tuple[tuple[str, float], ...]]:
    """The NASA9 polynomials and composition of an entry."""
    ranges = []
    for k in range(2, len(entry.lines), 3):
        head, first, second = entry.lines[k:k + 3]
        T_min = _number(head, 1, 10, "T_min", source, "NASA9")
        T_max = _number(head, 11, 10, "T_max", source, "NASA9")
        coeffs = [_number(first, i * NASA9_FIELD, NASA9_FIELD, "coefficient", source, "NASA9") for i in range(5)]
        coeffs += [_number(second, i * NASA9_FIELD, NASA9_FIELD, "coefficient", source, "NASA9")
                   for i in (0, 1, 3, 4)]
        if ranges and T_min != ranges[-1][1]:
            raise source.error(head.location.line, 2, f"NASA9 entry of {entry.name!r}: range starts at {T_min:g} K, "
                               f"the previous one ends at {ranges[-1][1]:g} K", "ranges must be contiguous")
        ranges.append((T_min, T_max, tuple(coeffs)))
    return Nasa9(tuple(ranges)), _nasa9_composition(entry.lines[1], source)


def is_nasa9(source: SourceText, header: str = "") -> bool:
    """Whether THERMO text is NASA9: its THERMO line (or ``header``, the rest of
    an embedded section's) says NASA9, or its first entry reads as one (a name
    line without a card number in column 80, then a line starting with the
    number of temperature ranges, as in CEA's thermo.inp)."""
    if "NASA9" in header.upper().split():
        return True
    data = []
    for number in range(source.first_line, source.first_line + len(source.lines)):
        text = source.line_text(number)
        words = text.split("!")[0].upper().split()
        if not words:
            continue
        if words[0].startswith("THER"):
            if "NASA9" in words:
                return True
            continue
        if not data and all(is_number(w) or "/" in w for w in words):
            continue  # the temperature line
        data.append(text)
        if len(data) == 2:
            break
    return (len(data) == 2 and not (len(data[0]) >= 80 and data[0][79] == "1")
            and _range_count(data[1]) is not None)


def parse_thermo(source: SourceText, header: str = "") -> ThermoFile:
    """Parse THERMO text (NASA7 cards or NASA9 entries) into its entries (raises
    MechanismSyntaxError); ``header`` is the rest of an embedded section's THERMO line."""
    if is_nasa9(source, header):
        return parse_nasa9(source)
    return ThermoParser.instance().parse(source, header)
