"""Input text as users have it: CRLF or LF, tabs, stray non-UTF-8 bytes.

A ``SourceText`` keeps the decoded text with normalised line ends and answers
"where is this" for errors; the lexers take their ``text`` and report
positions through ``location``.
"""

from __future__ import annotations

import bisect
import difflib
import functools
import math
import pathlib
import re
from dataclasses import dataclass

import ply.lex
import ply.yacc

from singe.errors import Location, MechanismSyntaxError, Problem

NUMBER_PATTERN = r"[-+]?(?:\d+\.?\d*|\.\d+)(?:[eEdD][-+]?\d+)?"
_NUMBER_RE = re.compile(NUMBER_PATTERN + r"\Z")
_NON_SPACE = re.compile(r"\S")
MAX_LINE_LENGTH = 20_000  # characters; real mechanisms' lines are under 300
_LONG_LINE = re.compile(r"^[^\n]{%d}" % (MAX_LINE_LENGTH + 1), re.MULTILINE)


def is_number(text: str) -> bool:
    """True for a Fortran-style real: 1, -2.5, .5, 1.E+30, 1.0D-3."""
    return _NUMBER_RE.match(text) is not None


def to_float(text: str) -> float:
    """Convert a number accepted by ``is_number`` (Fortran D exponents included)."""
    return float(text.replace("D", "E").replace("d", "e"))


def finite_number(text: str, location: Location) -> float:
    """The value of a number accepted by ``is_number``; a located error when
    it overflows double precision (1E400, 1.0D+999)."""
    value = to_float(text)
    if math.isinf(value):
        raise MechanismSyntaxError(Problem(location, f"number {text!r} is too large (beyond 1.8E+308)",
                                           "check the exponent"))
    return value


def appended(items: list, item) -> list:
    """``items`` with ``item`` added in place (grammar rules build lists this
    way: ``items + [item]`` copies, and is quadratic in a line's tokens)."""
    items.append(item)
    return items


def closest(name: str, candidates) -> str | None:
    """The declared name most like ``name`` (case-insensitive), or None."""
    table = {c.upper(): c for c in candidates}
    match = difflib.get_close_matches(name.upper(), list(table), n=1, cutoff=0.6)
    return table[match[0]] if match else None


def did_you_mean(name: str, candidates) -> str:
    guess = closest(name, candidates)
    return f"did you mean '{guess}'?" if guess else ""


@dataclass(frozen=True)
class SourceText:
    """Decoded text of one input file (or an embedded section of one).

    ``first_line`` is the file line of the first line of ``text`` so an
    embedded THERMO or TRANSPORT section reports positions in its file.
    """

    path: str
    text: str
    first_line: int = 1

    @classmethod
    def read(cls, path: str | pathlib.Path) -> "SourceText":
        raw = pathlib.Path(path).read_bytes()
        if b"\0" in raw:
            line = raw.count(b"\n", 0, raw.index(b"\0")) + 1
            raise MechanismSyntaxError(Problem(Location(str(path), line), "binary file: a NUL byte is not text",
                                               "give the mechanism's text files (CHEMKIN, THERMO, TRANSPORT)"))
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError:
            text = raw.decode("latin-1")  # comment bytes from old editors
        return cls.from_string(text, str(path))

    @classmethod
    def from_string(cls, text: str, path: str = "<string>", first_line: int = 1) -> "SourceText":
        text = text.replace("\r\n", "\n").replace("\r", "\n")
        if not text.endswith("\n"):
            text += "\n"
        source = cls(path, text, first_line)
        source.check_line_lengths()
        return source

    def check_line_lengths(self) -> None:
        """Reject a line longer than ``MAX_LINE_LENGTH`` (one regular-expression
        pass), so no input line costs more than a fraction of a second."""
        long_line = _LONG_LINE.search(self.text)
        if long_line is not None:
            line = self.first_line + self.text.count("\n", 0, long_line.start())
            length = self.text.find("\n", long_line.start()) - long_line.start()
            raise self.error(line, MAX_LINE_LENGTH + 1,
                             f"line is {length:,} characters long; singe reads lines of up to "
                             f"{MAX_LINE_LENGTH:,} characters",
                             "mechanism lines are short: continue a list of species, efficiencies or "
                             "names on the next line")

    @functools.cached_property
    def lines(self) -> list[str]:
        return self.text.split("\n")

    def line_text(self, line: int) -> str:
        """Text of file line ``line`` (1-based, in file numbering)."""
        index = line - self.first_line
        lines = self.lines
        return lines[index] if 0 <= index < len(lines) else ""

    def location(self, line: int, column: int = 1) -> Location:
        return Location(self.path, line, column, self.line_text(line))

    @functools.cached_property
    def _line_starts(self) -> list[int]:
        """Offset in ``text`` of the first character of each line."""
        return [0] + [match.end() for match in re.finditer("\n", self.text)]

    def line_start(self, lexpos: int) -> int:
        """Offset of the first character of the line holding offset ``lexpos``
        (a binary search: columns cost O(log lines), not O(column))."""
        return self._line_starts[bisect.bisect_right(self._line_starts, lexpos) - 1]

    def first_on_line(self, lexpos: int) -> bool:
        """True when only whitespace precedes offset ``lexpos`` on its line."""
        start = self.line_start(lexpos)
        if start not in self._first_non_space:
            first = _NON_SPACE.search(self.text, start)
            self._first_non_space[start] = first.start() if first else len(self.text)
        return self._first_non_space[start] == lexpos

    @functools.cached_property
    def _first_non_space(self) -> dict[int, int]:
        """Line start -> offset of the line's first non-space character (filled as asked)."""
        return {}

    def location_at(self, lexpos: int, line: int) -> Location:
        """Location of character offset ``lexpos`` of ``text`` on file line ``line``."""
        return self.location(line, lexpos - self.line_start(lexpos) + 1)

    def error(self, line: int, column: int, message: str, hint: str = "") -> MechanismSyntaxError:
        return MechanismSyntaxError(Problem(self.location(line, column), message, hint))


@dataclass(frozen=True)
class Token:
    """A token's text and where it stands (what the syntax trees keep)."""

    text: str
    location: Location

    @property
    def value(self) -> float:
        return to_float(self.text)


class LexerBase:
    """What every singe lexer shares: line counting, columns, errors.

    Subclasses define PLY token rules; ``build`` makes the PLY lexer with the
    subclass as its rule module.
    """

    tokens: tuple[str, ...] = ()

    def __init__(self, source: SourceText):
        self._line_has_tokens = False
        self.source = source
        self.lexer = ply.lex.lex(module=self, reflags=re.VERBOSE | re.MULTILINE)
        self.lexer.lineno = source.first_line
        self.lexer.input(source.text)

    def token(self):
        return self.lexer.token()

    def location(self, tok) -> Location:
        return self.source.location_at(tok.lexpos, tok.lineno)

    def make_token(self, tok) -> Token:
        return Token(tok.value if isinstance(tok.value, str) else str(tok.value), self.location(tok))

    def first_on_line(self, tok) -> bool:
        return self.source.first_on_line(tok.lexpos)

    def end_of_line(self, t):
        """A NEWLINE token for a line that held tokens (blank lines are skipped)."""
        t.lexer.lineno += 1
        had_tokens, self._line_has_tokens = self._line_has_tokens, False
        return t if had_tokens else None

    def t_error(self, tok):
        location = self.source.location_at(tok.lexpos, tok.lineno)
        raise MechanismSyntaxError(Problem(location, f"unexpected character {tok.value[0]!r}"))


class ParserBase:
    """What every singe parser shares: the PLY tables (built once per class,
    never written to disk), the lexer per input, tokens with locations.

    Subclasses define ``tokens``, ``lexer_class``, their ``p_`` rules and
    ``parse(source)`` calling ``_run``.
    """

    lexer_class: type = LexerBase
    _instances: dict = {}

    def __init__(self):
        self.parser = ply.yacc.yacc(module=self, write_tables=False, debug=False)

    @classmethod
    def instance(cls) -> "ParserBase":
        """The one parser of this class (building LALR tables costs ~50 ms)."""
        if cls not in ParserBase._instances:
            ParserBase._instances[cls] = cls()
        return ParserBase._instances[cls]

    def _run(self, source: SourceText):
        self.source = source
        self.lexer = self.lexer_class(source)
        return self.parser.parse(lexer=self.lexer)

    def _token(self, p, i) -> Token:
        return Token(p[i], self.source.location_at(p.lexpos(i), p.lineno(i)))
