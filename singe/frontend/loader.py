"""Reading the files of a mechanism and assembling the ``Mechanism``."""

from __future__ import annotations

import dataclasses
import pathlib
from dataclasses import dataclass

from singe.constants import ATOMIC_WEIGHTS, ELEMENT_SYMBOLS
from singe.errors import (Location, MechanismSemanticError, MechanismSyntaxError, Problem, ProblemCollector,
                          SingeInputError)
from singe.frontend.chemkin import parse_chemkin
from singe.frontend.cantera_yaml import load_yaml
from singe.frontend.physics import check_mechanism, check_thermo, check_transport
from singe.frontend.qss import parse_qss, qss_lists
from singe.frontend.resolve import ReactionBuilder, check_duplicates, element_balance_problem, parse_units
from singe.frontend.source import SourceText
from singe.frontend.syntax import ChemkinFile, Nasa9Entry, QssFile, TransportFile
from singe.frontend.thermo import composition_from_card, nasa7_from_entry, nasa9_from_entry, parse_thermo
from singe.frontend.transport import parse_transport
from singe.mechanism import Mechanism, Species, TransportData

THERMO_NAMES = ("therm.dat", "thermo.dat", "{stem}.therm", "{stem}.thermo", "{stem}.thermo.dat")
TRANSPORT_NAMES = ("tran.dat", "{stem}.tran", "transport.dat", "{stem}.transport")
QSS_NAMES = ("{stem}.qss",)
YAML_SUFFIXES = (".yaml", ".yml")
DEFAULT_TEMPERATURES = (300.0, 1000.0, 5000.0)

PathLike = str | pathlib.Path


def find_companion(chem: PathLike, patterns) -> pathlib.Path | None:
    """The first file beside ``chem`` named by one of ``patterns``."""
    chem = pathlib.Path(chem)
    for pattern in patterns:
        candidate = chem.parent / pattern.format(stem=chem.stem)
        if candidate.is_file():
            return candidate
    return None


def _read(path: PathLike, what: str) -> SourceText:
    path = pathlib.Path(path)
    if path.is_dir():
        raise SingeInputError(f"{path}: is a directory, not a {what} file")
    if not path.is_file():
        raise SingeInputError(f"{path}: no such {what} file")
    source = SourceText.read(path)
    if not source.text.strip():
        raise MechanismSyntaxError(Problem(Location(str(path), 1), f"the {what} file is empty"))
    return source


def load_mechanism(chem: PathLike, thermo: PathLike | None = None, transport: PathLike | None = None,
                   qss: PathLike | bool | None = None, permissive: bool = False,
                   phase: str | None = None) -> Mechanism:
    """Read a CHEMKIN mechanism and its companion files, or a Cantera YAML file.

    Parameters
    ----------
    chem : path of the CHEMKIN reaction file (``.inp``), or of a Cantera
        YAML file (``.yaml``/``.yml``; ``phase`` names its gas phase, default
        the first ideal-gas phase).
    thermo, transport : THERMO and TRANSPORT files; None looks beside ``chem``
        and in its embedded sections.
    qss : QSSA/STIFF list; None looks for ``<stem>.qss`` beside ``chem``,
        False means none.
    permissive : turn the problems ``ck2yaml --permissive`` tolerates
        (duplicate thermo entries: the first is kept; duplicate species
        declarations) into warnings, returned in ``Mechanism.warnings``.

    Raises ``SingeInputError`` (with file:line:col and a hint) for bad input.
    """
    chem_path = pathlib.Path(chem)
    qss_path = None if qss is False else (qss or find_companion(chem_path, QSS_NAMES))
    problems = ProblemCollector(permissive)
    if chem_path.suffix.lower() in YAML_SUFFIXES:
        mechanism = load_yaml(chem_path, phase, parse_qss(_read(qss_path, "QSS list")) if qss_path else None)
        problems.warnings.extend(mechanism.warnings)
    else:
        mechanism = _load_chemkin(chem_path, thermo, transport, qss_path, problems)
    check_mechanism(mechanism, problems)
    problems.raise_if_any(MechanismSemanticError)
    return dataclasses.replace(mechanism, warnings=tuple(problems.warnings))


def _load_chemkin(chem_path: pathlib.Path, thermo: PathLike | None, transport: PathLike | None,
                  qss_path: PathLike | None, problems: ProblemCollector) -> Mechanism:
    """The Mechanism of CHEMKIN files (warnings left in ``problems``)."""
    syntax = parse_chemkin(_read(chem_path, "mechanism"))
    thermo_path = thermo or find_companion(chem_path, THERMO_NAMES)
    transport_path = transport or find_companion(chem_path, TRANSPORT_NAMES)
    thermo_entries = _thermo_entries(syntax, thermo_path, problems)
    transport_files = [parse_transport(s.body) for s in syntax.transport]
    if transport_path is not None:
        transport_files.append(parse_transport(_read(transport_path, "transport")))
    qss_file = parse_qss(_read(qss_path, "QSS list")) if qss_path else None

    elements = _elements(syntax, problems)
    species = _species(syntax, thermo_entries, transport_files, elements, problems, thermo_path)
    reactions = _reactions(syntax, species, problems)
    qss_names, stiff_names = qss_lists(qss_file, [s.name for s in species], problems)
    if not syntax.species:
        problems.add(Location(str(chem_path), 1), "the mechanism declares no species",
                     "list its species between SPECIES and END")
    problems.raise_if_any(MechanismSemanticError)
    sources = tuple(str(p) for p in (chem_path, thermo_path, transport_path, qss_path) if p)
    return Mechanism(chem_path.stem, tuple(elements), tuple(species), tuple(reactions),
                     qss_names, stiff_names, sources)


@dataclass(frozen=True)
class _ThermoSource:
    """Where an entry was read and how to read it: its file and that file's defaults."""

    source: SourceText
    defaults: tuple[float, float, float]
    single_mid: float | None


def _thermo_entries(syntax: ChemkinFile, thermo_path, problems: ProblemCollector) -> dict:
    """Declared species name (upper-case) -> (entry, _ThermoSource).  The
    chemistry file's THERMO sections are read first, then the thermo file.
    As in ``ck2yaml``, a species' second entry — in the same file, or in the
    thermo file after an embedded section — is an error (``permissive``: a
    warning, and the first entry is kept)."""
    wanted = {token.text.upper() for token in syntax.species}
    files = [parse_thermo(section.body, section.header) for section in syntax.thermo]
    takes_all = any(section.header.upper().startswith("ALL") for section in syntax.thermo)
    if thermo_path is not None and not takes_all:
        files.append(parse_thermo(_read(thermo_path, "thermo")))
    entries: dict[str, tuple] = {}
    for thermo_file in files:
        defaults = DEFAULT_TEMPERATURES
        if thermo_file.default_temperatures:
            defaults = tuple(t.value for t in thermo_file.default_temperatures)
        single_mid = thermo_file.single_mid.value if thermo_file.single_mid else None
        where = _ThermoSource(thermo_file.source, defaults, single_mid)
        for entry in thermo_file.entries:
            key = entry.name.upper()
            if key not in wanted:
                continue
            if key in entries:
                _second_thermo_entry(entry, entries[key][0].location, problems)
                continue
            entries[key] = (entry, where)
    return entries


def _second_thermo_entry(entry, first: Location, problems: ProblemCollector) -> None:
    here = entry.location
    place = f"line {first.line}" if first.file == here.file else f"{first.file}:{first.line}"
    problems.tolerable(here, f"second thermo entry for species {entry.name!r} (the first is at {place})",
                       "the first entry is kept")


def _elements(syntax: ChemkinFile, problems: ProblemCollector) -> dict[str, float]:
    """Declared elements -> atomic weight [kg/kmol] (Cantera's table unless given)."""
    weights: dict[str, float] = {}
    for decl in syntax.elements:
        symbol = decl.name.text.upper()
        if decl.weight is not None:
            weights[symbol] = decl.weight.value
        elif symbol in ATOMIC_WEIGHTS:
            weights[symbol] = ATOMIC_WEIGHTS[symbol]
        elif symbol in ELEMENT_SYMBOLS:
            problems.add(decl.name.location, f"element {decl.name.text!r} has no standard atomic weight",
                         f"give its weight: {decl.name.text}/weight/")
        else:
            problems.add(decl.name.location, f"unknown element {decl.name.text!r}",
                         "give its atomic weight: NAME/weight/")
    return weights


def _declared_species(syntax: ChemkinFile, problems: ProblemCollector) -> list:
    """The SPECIES tokens, each name once (a repeat is an error, or permissive a warning)."""
    first: dict[str, object] = {}
    for token in syntax.species:
        if token.text in first:
            problems.tolerable(token.location, f"species {token.text!r} declared twice "
                               f"(first at line {first[token.text].location.line})", "the first declaration is kept")
        else:
            first[token.text] = token
    return list(first.values())


def _thermo_of(entry, where: _ThermoSource):
    """(thermo, composition) of an entry, NASA7 or NASA9."""
    if isinstance(entry, Nasa9Entry):
        return nasa9_from_entry(entry, where.source)
    return (nasa7_from_entry(entry, where.defaults, where.source, where.single_mid),
            composition_from_card(entry, where.source))


def _species(syntax: ChemkinFile, thermo_entries, transport_files, elements,
             problems: ProblemCollector, thermo_path) -> list[Species]:
    declared = _declared_species(syntax, problems)
    transport = _transport_records(transport_files, declared, problems)
    if not thermo_entries and thermo_path is None and declared:
        problems.add(Location(syntax.source.path, 1), "no thermo data: put therm.dat beside the file "
                     "or pass thermo=...")
        return []
    result = []
    for token in declared:
        name = token.text
        if name.upper() not in thermo_entries:
            where = f"in {thermo_path}" if thermo_path else "(no thermo file found beside the mechanism)"
            problems.add(token.location, f"no thermo data for species {name!r} {where}",
                         "add its NASA7 entry to the THERMO data")
            continue
        entry, where = thermo_entries[name.upper()]
        try:
            thermo, composition = _thermo_of(entry, where)
        except SingeInputError as error:
            problems.problems.extend(error.problems)
            continue
        if not check_thermo(name, thermo, entry.location, problems):
            continue
        data = transport.get(name.upper())
        atoms = sum(count for _, count in composition)
        if data is not None and not check_transport(name, data, atoms, data.location, problems):
            continue
        weight = _molecular_weight(composition, elements, entry, problems)
        result.append(Species(name, composition, weight, thermo, data, token.location))
    return result


def _molecular_weight(composition, elements, entry, problems: ProblemCollector) -> float:
    total = 0.0
    for element, count in composition:
        if element not in elements:
            problems.add(entry.location, f"species {entry.name!r} contains element {element!r} "
                         "not declared in ELEMENTS", "add it to the ELEMENTS section")
            continue
        total += count * elements[element]
    return total


def _transport_records(files: list[TransportFile], declared: list,
                       problems: ProblemCollector) -> dict[str, TransportData]:
    """Transport data of the mechanism's species (records of other species are
    skipped; the first file holding a species wins).  A species' record twice
    in one file is an error (permissive: the first is kept), and so is a
    species missing from every file given."""
    records: dict[str, TransportData] = {}
    wanted = {token.text.upper() for token in declared}
    for transport_file in files:
        in_file: dict[str, object] = {}
        for record in transport_file.records:
            key = record.name.text.upper()
            if key not in wanted:
                continue
            if key in in_file:
                same = [t.value for t in in_file[key].values] == [t.value for t in record.values]
                problems.tolerable(record.name.location, f"{'duplicate' if same else 'conflicting'} transport "
                                   f"record for species {record.name.text!r} (the first is at line "
                                   f"{in_file[key].name.location.line})", "the first record is kept")
                continue
            in_file[key] = record
            if key in records:
                continue
            data = _transport_data(record, problems)
            if data is not None:
                records[key] = data
    if files:
        _missing_transport(files, declared, records, problems)
    return records


def _missing_transport(files, declared, records, problems: ProblemCollector) -> None:
    """Name every species no transport file given has a record for."""
    named = ", ".join(f.source.path for f in files)
    for token in declared:
        if token.text.upper() not in records:
            problems.add(token.location, f"no transport data for species {token.text!r} in {named}",
                         "add its record to the TRANSPORT data (or give no transport file: "
                         "then only the chemistry kernel is compiled)")


def _transport_data(record, problems: ProblemCollector) -> TransportData | None:
    values = [t.value for t in record.values]
    geometry = values[0]
    if geometry not in (0.0, 1.0, 2.0):
        problems.add(record.values[0].location, f"geometry {record.values[0].text!r} of {record.name.text!r} "
                     "must be 0, 1 or 2", "0 atom, 1 linear molecule, 2 nonlinear molecule")
        return None
    return TransportData(int(geometry), *values[1:], location=record.name.location)


def _reactions(syntax: ChemkinFile, species: list[Species], problems: ProblemCollector):
    names = [token.text for token in syntax.species]
    builder = ReactionBuilder(names, problems)
    compositions = {s.name: dict(s.composition) for s in species}
    reactions = []
    for section in syntax.reactions:
        units = parse_units(section.units, problems)
        for item in section.reactions:
            reaction = builder.build(item, len(reactions), units)
            if reaction is None:
                continue
            imbalance = element_balance_problem(reaction, compositions)
            if imbalance and len(compositions) == len(names):
                problems.add(reaction.location, imbalance, "check the stoichiometry and the species' formulas")
            reactions.append(reaction)
    check_duplicates(reactions, problems)
    return reactions


__all__ = ["load_mechanism", "find_companion"]
