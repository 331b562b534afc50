"""What a solver sees of a generated kernel: C identifiers for the species,
the documented argument list of the launcher, and its Fortran interface.

One name per species, shared by the C header (``DME_SPECIES_CH2_S_``, the
species' row in species-major arrays, 0-based) and the Fortran module (the
same name, 1-based: the column of ``Y(n_points, n_species)``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from singe.kernels.ir import NULLABLE_INPUTS

RESERVED_SUFFIXES = ("NAMES", "COUNT")  # kept free for the arrays and counts beside the species names
FORTRAN_LINE = 100  # characters per line of the emitted Fortran (the standard allows 132)


def c_identifier(text: str) -> str:
    """``text`` with every character outside [A-Za-z0-9_] replaced by '_', and
    an 'M' in front when it would start with a digit (also a valid Fortran name
    when it starts with a letter)."""
    identifier = re.sub(r"[^A-Za-z0-9_]", "_", text)
    return identifier if identifier[:1].isalpha() else "M" + identifier


@dataclass(frozen=True)
class SpeciesName:
    """A species as a solver names it: ``macro`` is ``<MECH>_SPECIES_<NAME>``,
    ``index`` its 0-based row in species-major arrays."""

    species: str
    macro: str
    index: int


def species_names(mechanism: str, species: list[str]) -> list[SpeciesName]:
    """Collision-free upper-case identifiers of ``species`` (in order): a name
    that another one already took (``CH2(S)`` and ``CH2-S-`` both give
    ``CH2_S_``; C is case-sensitive, Fortran is not) gets '_' appended until free."""
    prefix = f"{c_identifier(mechanism).upper()}_SPECIES_"
    taken = {prefix + suffix for suffix in RESERVED_SUFFIXES}
    result = []
    for index, name in enumerate(species):
        macro = prefix + re.sub(r"[^A-Za-z0-9_]", "_", name).upper()
        while macro in taken:
            macro += "_"
        taken.add(macro)
        result.append(SpeciesName(name, macro, index))
    return result


def c_string(text: str) -> str:
    """A C (and Fortran) string literal of an ASCII species name."""
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def fortran_string(text: str) -> str:
    """A Fortran string literal (a doubled quote stands for one)."""
    return '"' + text.replace('"', '""') + '"'


def nullable_note(field: str) -> str:
    """The header's words for an input that may be NULL; '' for the others."""
    meaning = NULLABLE_INPUTS.get(field)
    return f"; may be NULL: {meaning}" if meaning else ""
