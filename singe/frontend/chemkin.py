"""Lexer and parser of CHEMKIN mechanism files (ELEMENTS, SPECIES, REACTIONS,
embedded THERMO and TRANSPORT sections).

CHEMKIN is line oriented: a reaction line is an equation followed by A, b and
E; auxiliary lines carry ``KEYWORD / values /`` items.  Species names may hold
``+ ( ) * - ,``, so the equation is lexed as one token and split against the
declared species later (``singe.frontend.equation``), the way fixed-column
thermo cards are split in their action.
"""

from __future__ import annotations

import re


from singe.errors import MechanismSyntaxError, Problem
from singe.frontend.source import (appended, finite_number, ParserBase, NUMBER_PATTERN, LexerBase, SourceText,
                                   Token, is_number)
from singe.frontend.syntax import (AuxItem, ChemkinFile, ElementDecl, EmbeddedSection,
                                   ReactionsSection, ReactionSyntax)

SECTION_KEYWORDS = {"ELEM": "ELEMENTS", "SPEC": "SPECIES", "REAC": "REACTIONS",
                    "THER": "THERMO", "TRAN": "TRANSPORT"}
_END_LINE = re.compile(r"^[ \t]*END[A-Za-z]*[ \t]*(?:!.*)?$", re.MULTILINE | re.IGNORECASE)


_SECTION_LINE = re.compile(r"^[ \t]*(ELEM|SPEC|REAC|TRAN|THER)[A-Za-z]*\b.*$", re.MULTILINE | re.IGNORECASE)


def _next_section(text: str, start: int, end: int) -> int | None:
    """Offset of the first line in text[start:end] that opens another section
    (a section keyword first on a line that is not an 80-column thermo card)."""
    for match in _SECTION_LINE.finditer(text, start, end):
        line = match.group(0)
        word = line.split()[0]
        if section_keyword(word) and not (len(line) >= 80 and line[79] in "1234"):
            return match.start()
    return None


def section_keyword(word: str) -> str | None:
    """CHEMKIN reads keywords by their first four letters: 'TRANS' -> TRANSPORT."""
    upper = word.upper()
    if upper in ("END", "ENDOFDATA"):
        return "END"
    if len(upper) >= 4 and upper[:4] in SECTION_KEYWORDS and upper.isalpha():
        return SECTION_KEYWORDS[upper[:4]]
    return None


class ChemkinLexer(LexerBase):
    """Tokens of a CHEMKIN file.  Newlines matter only in the REACTIONS
    section (state ``reactions``), where they end reaction and auxiliary lines."""

    states = (("reactions", "exclusive"),)
    tokens = ("ELEMENTS", "SPECIES", "REACTIONS", "END", "THERMO_SECTION", "TRANSPORT_SECTION",
              "REACTION_LINE", "UNITS_ITEM", "WORD", "NUMBER", "SLASH", "NEWLINE")

    t_ANY_ignore = " \t\f\v\xa0"  # form feed, vertical tab, no-break space: whitespace
    t_ANY_ignore_COMMENT = r"!.*"

    def t_newline(self, t):
        r"\n+"
        t.lexer.lineno += len(t.value)

    def t_reactions_NEWLINE(self, t):
        r"\n"
        return self.end_of_line(t)

    def t_reactions_REACTION_LINE(self, t):
        r"[^\s!/][^!\n/]*=[^!\n/]*|=[^!\n/]*"
        if not self.first_on_line(t):
            raise self.source.error(t.lineno, self.location(t).column,
                                    "a reaction equation must start its own line")
        self._line_has_tokens = True
        t.value = self._split_reaction_line(t)
        return t

    def t_reactions_UNITS_ITEM(self, t):
        r"(?i:UNITS)[ \t]*/[ \t]*[A-Za-z]+(?:/(?i:MOL)[A-Za-z]*)?[ \t]*/"
        # UNITS / CAL/MOL /: the unit may hold a slash (as Cantera's ck2yaml reads it)
        self._line_has_tokens = True
        keyword = Token(t.value[:5], self.location(t))
        unit = t.value[5:].strip().strip("/").strip()
        t.value = (keyword, Token(unit, self.source.location_at(t.lexpos + t.value.index(unit[0], 5), t.lineno)))
        return t

    def t_ANY_SLASH(self, t):
        r"/"
        self._line_has_tokens = True
        return t

    def t_ANY_WORD(self, t):
        r"[^\s!/]+"
        keyword = section_keyword(t.value)
        if keyword is not None and (keyword == "END" or self.first_on_line(t)):
            return self._section(t, keyword)
        self._line_has_tokens = True
        if is_number(t.value):
            t.type = "NUMBER"
            finite_number(t.value, self.location(t))
        elif "->" in t.value and t.lexer.current_state() == "reactions":
            arrow = "<->" if "<->" in t.value else "->"
            raise self.source.error(t.lineno, self.location(t).column + t.value.index(arrow),
                                    f"'{arrow}' is not a CHEMKIN arrow",
                                    "write <=> (or =) for a reversible reaction, => for an irreversible one")
        return t

    def t_reactions_error(self, t):
        self.t_error(t)

    def _section(self, t, keyword: str):
        """A section keyword: switch state, or swallow a raw THERMO/TRANSPORT section."""
        if keyword in ("THERMO", "TRANSPORT"):
            return self._raw_section(t, keyword)
        t.type = keyword
        t.lexer.begin("reactions" if keyword == "REACTIONS" else "INITIAL")
        self._line_has_tokens = keyword == "REACTIONS"
        return t

    def _raw_section(self, t, keyword: str):
        """Take everything up to the END line as the section's text."""
        text = self.source.text
        header_end = text.find("\n", t.lexpos)
        header = text[t.lexpos + len(t.value):header_end].split("!")[0].strip()
        end = _END_LINE.search(text, header_end + 1)
        body_end = end.start() if end else len(text)
        resume = text.find("\n", end.end()) if end else len(text)
        following = _next_section(text, header_end + 1, body_end)
        if following is not None:  # the section ends without END where the next one starts
            body_end, resume = following, following - 1
        body = SourceText(self.source.path, text[header_end + 1:body_end], t.lineno + 1)
        t.value = (Token(t.value, self.location(t)), header, body)
        t.type = f"{keyword}_SECTION"
        t.lexer.lineno += text.count("\n", t.lexpos, resume)
        t.lexer.lexpos = resume
        t.lexer.begin("INITIAL")
        self._line_has_tokens = False
        return t

    def _split_reaction_line(self, t) -> tuple[Token, Token, Token, Token]:
        """Equation text and the three trailing numbers A, b, E."""
        text = t.value.rstrip()
        column = self.location(t).column
        words = [(m.start(), m.group()) for m in re.finditer(r"\S+", text)]
        trailing = words[-3:] if len(words) >= 4 else []
        if not trailing or "=" in "".join(w for _, w in trailing):
            raise self.source.error(t.lineno, column + len(text),
                                    "reaction line needs A, b and E after the equation",
                                    "write the three Arrhenius numbers after the equation")
        for pos, word in trailing:
            if not is_number(word):
                raise self.source.error(t.lineno, column + pos, f"malformed number {word!r}",
                                        "A, b and E must be numbers such as 1.5E+13")
            finite_number(word, self.source.location(t.lineno, column + pos))
        equation = Token(text[:trailing[0][0]].rstrip(), self.location(t))
        numbers = tuple(Token(w, self.source.location(t.lineno, column + pos)) for pos, w in trailing)
        return (equation,) + numbers  # type: ignore[return-value]


class ChemkinParser(ParserBase):
    """PLY grammar of a CHEMKIN mechanism file; ``parse`` returns a ``ChemkinFile``."""

    tokens = ChemkinLexer.tokens

    lexer_class = ChemkinLexer

    def parse(self, source: SourceText) -> ChemkinFile:
        sections = self._run(source) or []
        return self._assemble(source, sections)

    @staticmethod
    def _assemble(source: SourceText, sections) -> ChemkinFile:
        fields = {"elements": [], "species": [], "reactions": [], "thermo": [], "transport": []}
        for kind, value in sections:
            if kind in ("elements", "species"):
                fields[kind].extend(value)
            else:
                fields[kind].append(value)
        return ChemkinFile(source, **{k: tuple(v) for k, v in fields.items()})

    def p_mechanism(self, p):
        """mechanism : section_list"""
        p[0] = p[1]

    def p_section_list(self, p):
        """section_list : section_list section
                        | empty"""
        p[0] = appended(p[1], p[2]) if len(p) == 3 else []

    def p_empty(self, p):
        """empty :"""
        p[0] = None

    def p_section_elements(self, p):
        """section : ELEMENTS element_list section_end"""
        p[0] = ("elements", p[2])

    def p_element_list(self, p):
        """element_list : element_list element
                        | empty"""
        p[0] = appended(p[1], p[2]) if len(p) == 3 else []

    def p_element(self, p):
        """element : WORD
                   | WORD SLASH NUMBER SLASH"""
        weight = self._token(p, 3) if len(p) == 5 else None
        p[0] = ElementDecl(self._token(p, 1), weight)

    def p_section_species(self, p):
        """section : SPECIES name_list section_end"""
        p[0] = ("species", p[2])

    def p_name_list(self, p):
        """name_list : name_list WORD
                     | empty"""
        p[0] = appended(p[1], self._token(p, 2)) if len(p) == 3 else []

    def p_section_end(self, p):
        """section_end : END
                       | empty"""

    def p_section_thermo(self, p):
        """section : THERMO_SECTION"""
        p[0] = ("thermo", EmbeddedSection(*p[1]))

    def p_section_transport(self, p):
        """section : TRANSPORT_SECTION"""
        p[0] = ("transport", EmbeddedSection(*p[1]))

    def p_section_reactions(self, p):
        """section : REACTIONS header_items NEWLINE reaction_list section_end"""
        p[0] = ("reactions", ReactionsSection(self._token(p, 1), tuple(p[2]), tuple(p[4])))

    def p_header_items(self, p):
        """header_items : header_items WORD
                        | header_items NUMBER
                        | header_items SLASH
                        | empty"""
        p[0] = appended(p[1], self._token(p, 2)) if len(p) == 3 else []

    def p_reaction_list(self, p):
        """reaction_list : reaction_list reaction
                         | empty"""
        p[0] = appended(p[1], p[2]) if len(p) == 3 else []

    def p_reaction(self, p):
        """reaction : REACTION_LINE NEWLINE aux_lines"""
        equation, A, b, E = p[1]
        p[0] = ReactionSyntax(equation, A, b, E, tuple(p[3]))

    def p_aux_lines(self, p):
        """aux_lines : aux_lines aux_items NEWLINE
                     | empty"""
        p[0] = p[1] + p[2] if len(p) == 4 else []

    def p_aux_items(self, p):
        """aux_items : aux_items aux_item
                     | aux_item"""
        p[0] = appended(p[1], p[2]) if len(p) == 3 else [p[1]]

    def p_aux_item(self, p):
        """aux_item : WORD
                    | WORD SLASH aux_values SLASH"""
        values = tuple(p[3]) if len(p) == 5 else None
        p[0] = AuxItem(self._token(p, 1), values)

    def p_aux_item_units(self, p):
        """aux_item : UNITS_ITEM"""
        keyword, unit = p[1]
        p[0] = AuxItem(keyword, (unit,))

    def p_aux_values(self, p):
        """aux_values : aux_values NUMBER
                      | aux_values WORD
                      | empty"""
        p[0] = appended(p[1], self._token(p, 2)) if len(p) == 3 else []

    def p_error(self, tok):
        if tok is None:
            raise self.source.error(self.lexer.lexer.lineno - 1, 1, "unexpected end of file",
                                    "a '/' group or a section may be unfinished")
        location = self.lexer.location(tok)
        raise MechanismSyntaxError(Problem(location, *self._explain(tok)))

    @staticmethod
    def _explain(tok) -> tuple[str, str]:
        """Message and likely cause for a token the grammar did not expect."""
        if tok.type in ("WORD", "NUMBER") and tok.lexer.current_state() == "INITIAL":
            return (f"unknown keyword {tok.value!r}",
                    "expected ELEMENTS, SPECIES, THERMO, REACTIONS or TRANSPORT (or a name inside them)")
        if tok.type in ("WORD", "NUMBER", "SLASH"):
            return (f"unexpected {tok.value!r}",
                    "auxiliary data must follow a reaction line; check the '/' pairs")
        if tok.type == "NEWLINE":
            return ("unexpected end of line", "an auxiliary keyword's '/' group is not closed")
        if tok.type == "REACTION_LINE":
            return ("unexpected reaction line", "")
        name = tok.type.replace("_SECTION", "")
        return (f"unexpected {name} keyword", "the previous section may be missing its END")


def parse_chemkin(source: SourceText) -> ChemkinFile:
    """Parse CHEMKIN text into its syntax tree (raises MechanismSyntaxError)."""
    return ChemkinParser.instance().parse(source)


__all__ = ["parse_chemkin", "ChemkinLexer", "ChemkinParser", "section_keyword", "NUMBER_PATTERN"]
