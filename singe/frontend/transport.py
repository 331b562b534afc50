"""Lexer and parser of TRANSPORT data (free format)."""

from __future__ import annotations


from singe.errors import MechanismSyntaxError, Problem
from singe.frontend.source import appended, finite_number, ParserBase, LexerBase, SourceText, Token, is_number
from singe.frontend.syntax import TransportFile, TransportRecord

TRANSPORT_FIELDS = ("geometry", "well depth eps/k", "diameter sigma", "dipole moment",
                    "polarizability", "rotational relaxation number")


class WordLexer(LexerBase):
    """Words, numbers and line ends; ``!`` starts a comment anywhere."""

    tokens = ("WORD", "NUMBER", "NEWLINE", "END")

    # TRANSPORT data ends at an END that starts a line; a .qss section's END
    # may follow its names on the same line (``QSSA CH2 HCO END``).
    end_anywhere = False

    t_ignore = " \t\f\v\xa0"  # form feed, vertical tab, no-break space: whitespace
    t_ignore_COMMENT = r"!.*"

    def t_NEWLINE(self, t):
        r"\n"
        return self.end_of_line(t)

    def t_header(self, t):
        r"^\#.*"
        # '#SpecName ...': a column header some transport files carry

    def t_WORD(self, t):
        r"[^\s!]+"
        self._line_has_tokens = True
        if is_number(t.value):
            t.type = "NUMBER"
            finite_number(t.value, self.location(t))
        elif t.value.upper() in ("END", "ENDOFDATA") and (self.end_anywhere or self.first_on_line(t)):
            t.type = "END"
        return t


class TransportParser(ParserBase):
    """PLY grammar of TRANSPORT data: ``name geometry eps/k sigma dipole alpha Zrot``."""

    tokens = WordLexer.tokens

    lexer_class = WordLexer

    def parse(self, source: SourceText) -> TransportFile:
        records = self._run(source)
        return TransportFile(source, tuple(records))

    def p_transport_file(self, p):
        """transport_file : records
                          | records END NEWLINE
                          | records END"""
        p[0] = p[1]

    def p_records(self, p):
        """records : records record
                   | empty"""
        p[0] = appended(p[1], p[2]) if len(p) == 3 else []

    def p_empty(self, p):
        """empty :"""

    def p_record(self, p):
        """record : WORD numbers NEWLINE"""
        name = self._token(p, 1)
        values = p[2]
        if len(values) != len(TRANSPORT_FIELDS):
            raise self._count_error(name, values, p.lexpos(3), p.lineno(3))
        p[0] = TransportRecord(name, tuple(values))

    def _count_error(self, name: Token, values, end_pos: int, line: int) -> MechanismSyntaxError:
        if len(values) > len(TRANSPORT_FIELDS):
            location = values[len(TRANSPORT_FIELDS)].location
            message = f"transport record of {name.text!r} has {len(values)} numbers, expected 6"
        else:
            location = self.source.location_at(end_pos, line)
            missing = TRANSPORT_FIELDS[len(values)]
            message = f"transport record of {name.text!r} has {len(values)} numbers, expected 6 (no {missing})"
        return MechanismSyntaxError(Problem(location, message,
                                            "name, geometry, eps/k [K], sigma [A], dipole [Debye], "
                                            "polarizability [A^3], Zrot"))

    def p_numbers(self, p):
        """numbers : numbers NUMBER
                   | NUMBER"""
        token = self._token(p, len(p) - 1)
        p[0] = appended(p[1], token) if len(p) == 3 else [token]

    def p_error(self, tok):
        if tok is None:
            return
        location = self.lexer.location(tok)
        if tok.type == "WORD":
            message, hint = f"malformed number {tok.value!r} in transport data", "fields after the name are numbers"
        elif tok.type == "NEWLINE":
            message, hint = "transport record has no numbers", "name, geometry, eps/k, sigma, dipole, alpha, Zrot"
        else:
            message, hint = f"unexpected {tok.value!r}", "each line: a species name and six numbers"
        raise MechanismSyntaxError(Problem(location, message, hint))


def parse_transport(source: SourceText) -> TransportFile:
    """Parse TRANSPORT text into records (raises MechanismSyntaxError)."""
    return TransportParser.instance().parse(source)


