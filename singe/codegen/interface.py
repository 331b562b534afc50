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
    prefix = SpeciesTable(mechanism).macro_prefix
    taken = {prefix + suffix for suffix in RESERVED_SUFFIXES}
    result = []
    for index, name in enumerate(species):
        macro = prefix + re.sub(r"[^A-Za-z0-9_]", "_", name).upper()
        while macro in taken:
            macro += "_"
        taken.add(macro)
        result.append(SpeciesName(name, macro, index))
    return result


@dataclass(frozen=True)
class SpeciesTable:
    """The names a mechanism's species block uses, in C and in Fortran."""

    mechanism: str

    @property
    def prefix(self) -> str:
        return c_identifier(self.mechanism)

    @property
    def count(self) -> str:
        return f"{self.prefix.upper()}_SPECIES_COUNT"

    @property
    def names_array(self) -> str:
        return f"{self.prefix.lower()}_species_names"

    @property
    def guard(self) -> str:
        return f"SINGE_{self.prefix.upper()}_SPECIES_H"

    @property
    def macro_prefix(self) -> str:
        return f"{self.prefix.upper()}_SPECIES_"

    @property
    def fortran_module(self) -> str:
        return f"singe_{self.prefix.lower()}_species"

    @property
    def fortran_file(self) -> str:
        return f"{self.prefix.lower()}_species.f90"


def kernel_name(mechanism: str, kernel: str, baseline: bool = False) -> str:
    """The launcher's name (and file stem): ``dme_chemistry``, ``dme_chemistry_baseline``."""
    return f"{mechanism}_{kernel}{'_baseline' if baseline else ''}".replace("-", "_")


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
