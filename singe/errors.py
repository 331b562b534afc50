"""The one exception family of singe.

``SingeInputError`` and its subclasses are the user's mistakes (a bad file, a
bad option): the CLI prints them as they are and exits with status 2.
``SingeInternalError`` is our bug: it keeps its traceback.
"""

from __future__ import annotations

from dataclasses import dataclass

EXCERPT_WIDTH = 60  # characters of a long line shown either side of an error's column
SHOWN_PER_LINE = 3  # problems of one line shown in a message
SHOWN_PER_ERROR = 20  # problems of one error shown in a message

class SingeError(Exception):
    """Base of every error singe raises on purpose."""


@dataclass(frozen=True)
class Location:
    """A place in an input file: 1-based line and column, with the line's text."""

    file: str
    line: int
    column: int = 1
    text: str = ""

    def __str__(self) -> str:
        return f"{self.file}:{self.line}:{self.column}"

    def excerpt(self, width: int = EXCERPT_WIDTH) -> str:
        """The offending line with a caret under the column; a long line is
        clipped to ``width`` characters either side of the column, with '...'."""
        if not self.text:
            return ""
        line = self.text.rstrip("\r\n")
        column = min(max(self.column - 1, 0), len(line))
        start, end = max(column - width, 0), min(column + width, len(line))
        before = "..." if start > 0 else ""
        after = "..." if end < len(line) else ""
        shown = line[start:end].expandtabs(1)
        caret = " " * (len(before) + column - start) + "^"
        return f"    {before}{shown}{after}\n    {caret}"


@dataclass(frozen=True)
class Problem:
    """One diagnosed mistake: where, what, and the likely cause."""

    location: Location | None
    message: str
    hint: str = ""
    severity: str = "error"  # or "warning": accepted, but the user should know

    def __str__(self) -> str:
        head = f"{self.severity}: {self.message}"
        if self.location:
            head = f"{self.location}: {head}"
        parts = [head]
        if self.location is not None and self.location.text:
            parts.append(self.location.excerpt())
        if self.hint:
            parts.append(f"    hint: {self.hint}")
        return "\n".join(parts)


def summarize(problems: list[Problem]) -> str:
    """The text of a list of problems: at most ``SHOWN_PER_LINE`` of one line
    and ``SHOWN_PER_ERROR`` in all, then how many more there are."""
    shown: list[str] = []
    per_line: dict[tuple[str, int] | None, int] = {}
    for problem in problems:
        if len(shown) == SHOWN_PER_ERROR:
            break
        where = (problem.location.file, problem.location.line) if problem.location else None
        per_line[where] = per_line.get(where, 0) + 1
        if where is None or per_line[where] <= SHOWN_PER_LINE:
            shown.append(str(problem))
    hidden = len(problems) - len(shown)
    if hidden:
        shown.append(f"... and {hidden} more problem{'s' if hidden > 1 else ''} "
                     f"(fix those above and run again)")
    return "\n".join(shown)


class SingeInputError(SingeError):
    """The user's input is wrong; carries every problem found in one file."""

    def __init__(self, problems: list[Problem] | Problem | str):
        if isinstance(problems, str):
            problems = [Problem(None, problems)]
        elif isinstance(problems, Problem):
            problems = [problems]
        self.problems = list(problems)
        super().__init__(summarize(self.problems))

    @property
    def location(self) -> Location | None:
        """Location of the first problem (the one a user reads first)."""
        return self.problems[0].location if self.problems else None


class MechanismSyntaxError(SingeInputError):
    """A CHEMKIN, THERMO, TRANSPORT or QSS file does not follow its grammar."""


class MechanismSemanticError(SingeInputError):
    """The files parse but do not describe a consistent mechanism."""


class OptionError(SingeInputError):
    """A compiler or command-line option is invalid."""


class SingeInternalError(SingeError):
    """A broken invariant inside singe: a bug, not the user's fault."""


class ProblemCollector:
    """Collects the semantic problems of a file so they are reported together.

    With ``permissive``, the problems Cantera's ``ck2yaml --permissive``
    tolerates (``tolerable``) become warnings, each kept once."""

    def __init__(self, permissive: bool = False) -> None:
        self.problems: list[Problem] = []
        self.warnings: list[Problem] = []
        self.permissive = permissive

    def add(self, location: Location | None, message: str, hint="") -> None:
        """Record a problem; ``hint`` may be a function giving it, called only
        for problems a message will show (a did-you-mean search costs time)."""
        if callable(hint):
            hint = hint() if len(self.problems) < SHOWN_PER_ERROR else ""
        self.problems.append(Problem(location, message, hint))

    def warn(self, location: Location | None, message: str, hint: str = "") -> None:
        """A located warning: the value is accepted (it gives finite outputs) but suspicious."""
        warning = Problem(location, message, hint, severity="warning")
        if warning not in self.warnings:
            self.warnings.append(warning)

    def tolerable(self, location: Location | None, message: str, kept: str) -> None:
        """An error, or with ``permissive`` a warning saying what was ``kept``."""
        if not self.permissive:
            self.add(location, message, f"{kept} with --permissive (permissive=True)")
            return
        self.warn(location, message, kept)

    def raise_if_any(self, kind: type[SingeInputError] = MechanismSemanticError) -> None:
        if self.problems:
            raise kind(self.problems)
