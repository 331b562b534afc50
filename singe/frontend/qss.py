"""Lexer and parser of QSSA/STIFF species lists (``*.qss``)."""

from __future__ import annotations


from singe.errors import MechanismSyntaxError, Problem, ProblemCollector
from singe.frontend.source import appended, ParserBase, SourceText, Token, did_you_mean
from singe.frontend.syntax import QssFile
from singe.frontend.transport import WordLexer


class QssLexer(WordLexer):
    """Words of a .qss file: END closes a section wherever it stands on its line."""

    end_anywhere = True


class QssParser(ParserBase):
    """PLY grammar of a QSSA/stiff species list: ``QSSA names END``, ``STIFF names END``."""

    tokens = WordLexer.tokens

    lexer_class = QssLexer

    def parse(self, source: SourceText) -> QssFile:
        sections = self._run(source)
        qssa = [t for kind, names in sections if kind == "QSSA" for t in names]
        stiff = [t for kind, names in sections if kind == "STIFF" for t in names]
        return QssFile(source, tuple(qssa), tuple(stiff), tuple(kind for kind, _ in sections))

    def p_qss_file(self, p):
        """qss_file : qss_file section
                    | empty"""
        p[0] = appended(p[1], p[2]) if len(p) == 3 else []

    def p_empty(self, p):
        """empty :"""

    def p_section(self, p):
        """section : WORD names END NEWLINE"""
        keyword = self._token(p, 1)
        kind = keyword.text.upper()
        if kind not in ("QSSA", "QSS", "STIFF"):
            raise MechanismSyntaxError(Problem(keyword.location, f"unknown keyword {keyword.text!r}",
                                               "a .qss file holds QSSA ... END and STIFF ... END sections"))
        p[0] = ("STIFF" if kind == "STIFF" else "QSSA", p[2])

    def p_names(self, p):
        """names : names WORD
                 | names NUMBER
                 | names NEWLINE
                 | empty"""
        if len(p) == 2:
            p[0] = []
        elif p.slice[2].type != "NEWLINE":
            p[0] = appended(p[1], self._token(p, 2))
        else:
            p[0] = p[1]

    def p_error(self, tok):
        if tok is None:
            raise self.source.error(self.lexer.lexer.lineno - 1, 1, "the QSSA/STIFF section has no END")
        location = self.lexer.location(tok)
        raise MechanismSyntaxError(Problem(location, f"unexpected {tok.value!r}",
                                           "a .qss file holds QSSA ... END and STIFF ... END sections, "
                                           "each keyword on its own line"))


def qss_lists(qss_file: QssFile | None, names: list[str], problems: ProblemCollector):
    if qss_file is None:
        return (), ()
    known = set(names)
    lists = []
    for kind, tokens in (("QSSA", qss_file.qssa), ("STIFF", qss_file.stiff)):
        chosen: list[str] = []
        for token in tokens:
            if token.text not in known:
                problems.add(token.location, f"{kind} species {token.text!r} is not in the mechanism",
                             lambda: did_you_mean(token.text, names) or "list only species of the SPECIES section")
            elif token.text in chosen:
                problems.add(token.location, f"{kind} species {token.text!r} listed twice")
            else:
                chosen.append(token.text)
        lists.append(chosen)
    qssa, stiff = lists
    for token in qss_file.stiff:
        if token.text in qssa:
            problems.add(token.location, f"species {token.text!r} is both QSSA and STIFF",
                         "a QSSA species is not in the state; it cannot be stiff")
    order = {name: i for i, name in enumerate(names)}
    return tuple(sorted(qssa, key=order.__getitem__)), tuple(stiff)


def parse_qss(source: SourceText) -> QssFile:
    """Parse a QSSA/STIFF species list (raises MechanismSyntaxError)."""
    return QssParser.instance().parse(source)
