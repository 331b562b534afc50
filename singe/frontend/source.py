"""Input text as users have it: CRLF or LF, tabs, stray non-UTF-8 bytes.

A ``SourceText`` keeps the decoded text with normalised line ends and answers
"where is this" for errors; the lexers take their ``text`` and report
positions through ``location``.
"""

from __future__ import annotations

import difflib
import functools
import pathlib
import re
from dataclasses import dataclass

import ply.lex
import ply.yacc

from singe.errors import Location, MechanismSyntaxError, Problem

NUMBER_PATTERN = r"[-+]?(?:\d+\.?\d*|\.\d+)(?:[eEdD][-+]?\d+)?"
_NUMBER_RE = re.compile(NUMBER_PATTERN + r"\Z")


def is_number(text: str) -> bool:
    """True for a Fortran-style real: 1, -2.5, .5, 1.E+30, 1.0D-3."""
    return _NUMBER_RE.match(text) is not None


def to_float(text: str) -> float:
    """Convert a number accepted by ``is_number`` (Fortran D exponents included)."""
    return float(text.replace("D", "E").replace("d", "e"))


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
        return cls(path, text, first_line)

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

    def location_at(self, lexpos: int, line: int) -> Location:
        """Location of character offset ``lexpos`` of ``text`` on file line ``line``."""
        start = self.text.rfind("\n", 0, lexpos) + 1
        return self.location(line, lexpos - start + 1)

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
        start = self.source.text.rfind("\n", 0, tok.lexpos) + 1
        return self.source.text[start:tok.lexpos].strip() == ""

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
