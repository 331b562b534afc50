"""Reading the files of a mechanism and assembling the ``Mechanism``."""

from __future__ import annotations

import pathlib

from singe.constants import ATOMIC_WEIGHTS
from singe.errors import (Location, MechanismSemanticError, MechanismSyntaxError, Problem, ProblemCollector,
                          SingeInputError)
from singe.frontend.chemkin import parse_chemkin
from singe.frontend.physics import check_mechanism, check_thermo, check_transport
from singe.frontend.qss import parse_qss
from singe.frontend.resolve import ReactionBuilder, check_duplicates, element_balance_problem, parse_units
from singe.frontend.source import SourceText, did_you_mean
from singe.frontend.syntax import ChemkinFile, QssFile, ThermoEntry, TransportFile
from singe.frontend.thermo import composition_from_card, nasa7_from_entry, parse_thermo
from singe.frontend.transport import parse_transport
from singe.mechanism import Mechanism, Species, TransportData

THERMO_NAMES = ("therm.dat", "thermo.dat", "{stem}.therm", "{stem}.thermo", "{stem}.thermo.dat")
TRANSPORT_NAMES = ("tran.dat", "{stem}.tran", "transport.dat", "{stem}.transport")
QSS_NAMES = ("{stem}.qss",)
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
                   qss: PathLike | bool | None = None) -> Mechanism:
    """Read a CHEMKIN mechanism and its companion files.

    Parameters
    ----------
    chem : path of the CHEMKIN reaction file (``.inp``).
    thermo, transport : THERMO and TRANSPORT files; None looks beside ``chem``
        and in its embedded sections.
    qss : QSSA/STIFF list; None looks for ``<stem>.qss`` beside ``chem``,
        False means none.

    Raises ``SingeInputError`` (with file:line:col and a hint) for bad input.
    """
    chem_path = pathlib.Path(chem)
    syntax = parse_chemkin(_read(chem_path, "mechanism"))
    thermo_path = thermo or find_companion(chem_path, THERMO_NAMES)
    transport_path = transport or find_companion(chem_path, TRANSPORT_NAMES)
    qss_path = None if qss is False else (qss or find_companion(chem_path, QSS_NAMES))

    thermo_entries, thermo_defaults = _thermo_entries(syntax, thermo_path)
    transport_files = [parse_transport(s.body) for s in syntax.transport]
    if transport_path is not None:
        transport_files.append(parse_transport(_read(transport_path, "transport")))
    qss_file = parse_qss(_read(qss_path, "QSS list")) if qss_path else None

    problems = ProblemCollector()
    elements = _elements(syntax, problems)
    species = _species(syntax, thermo_entries, thermo_defaults, transport_files, elements, problems,
                       thermo_path)
    reactions = _reactions(syntax, species, problems)
    qss_names, stiff_names = _qss_lists(qss_file, [s.name for s in species], problems)
    if not syntax.species:
        problems.add(Location(str(chem_path), 1), "the mechanism declares no species",
                     "list its species between SPECIES and END")
    problems.raise_if_any(MechanismSemanticError)
    sources = tuple(str(p) for p in (chem_path, thermo_path, transport_path, qss_path) if p)
    mechanism = Mechanism(chem_path.stem, tuple(elements), tuple(species), tuple(reactions),
                          qss_names, stiff_names, sources)
    check_mechanism(mechanism, problems)
    problems.raise_if_any(MechanismSemanticError)
    return mechanism


def _thermo_entries(syntax: ChemkinFile, thermo_path):
    """Embedded entries first (they override the database), then the file's."""
    entries: dict[str, ThermoEntry] = {}
    files = [parse_thermo(section.body) for section in syntax.thermo]
    takes_all = any(section.header.upper().startswith("ALL") for section in syntax.thermo)
    if thermo_path is not None and not takes_all:
        files.append(parse_thermo(_read(thermo_path, "thermo")))
    sources = {}
    for thermo_file in files:
        if thermo_file.default_temperatures:
            file_defaults = tuple(t.value for t in thermo_file.default_temperatures)
        else:
            file_defaults = DEFAULT_TEMPERATURES
        for entry in thermo_file.entries:
            key = entry.name.upper()
            if key not in entries:
                entries[key] = entry
                sources[key] = (thermo_file.source, file_defaults)
    return entries, sources


def _elements(syntax: ChemkinFile, problems: ProblemCollector) -> dict[str, float]:
    """Declared elements -> atomic weight [kg/kmol] (Cantera's table unless given)."""
    weights: dict[str, float] = {}
    for decl in syntax.elements:
        symbol = decl.name.text.upper()
        if decl.weight is not None:
            weights[symbol] = decl.weight.value
        elif symbol in ATOMIC_WEIGHTS:
            weights[symbol] = ATOMIC_WEIGHTS[symbol]
        else:
            problems.add(decl.name.location, f"unknown element {decl.name.text!r}",
                         "give its atomic weight: NAME/weight/")
    return weights


def _species(syntax: ChemkinFile, thermo_entries, thermo_sources, transport_files, elements,
             problems: ProblemCollector, thermo_path) -> list[Species]:
    transport = _transport_records(transport_files, {t.text.upper() for t in syntax.species}, problems)
    if not thermo_entries and thermo_path is None and syntax.species:
        problems.add(Location(syntax.source.path, 1), "no thermo data: put therm.dat beside the file "
                     "or pass thermo=...")
        return []
    result = []
    seen: set[str] = set()
    for token in syntax.species:
        name = token.text
        if name in seen:
            problems.add(token.location, f"species {name!r} declared twice")
            continue
        seen.add(name)
        entry = thermo_entries.get(name.upper())
        if entry is None:
            where = f"in {thermo_path}" if thermo_path else "(no thermo file found beside the mechanism)"
            problems.add(token.location, f"no thermo data for species {name!r} {where}",
                         "add its NASA7 entry to the THERMO data")
            continue
        source, defaults = thermo_sources[name.upper()]
        try:
            nasa = nasa7_from_entry(entry, defaults, source)
            composition = composition_from_card(entry.cards[0], source)
        except SingeInputError as error:
            problems.problems.extend(error.problems)
            continue
        if not check_thermo(name, nasa, entry.location, problems):
            continue
        data = transport.get(name.upper())
        atoms = sum(count for _, count in composition)
        if data is not None and not check_transport(name, data, atoms, data.location, problems):
            continue
        weight = _molecular_weight(composition, elements, entry, problems)
        result.append(Species(name, composition, weight, nasa, data, token.location))
    return result


def _molecular_weight(composition, elements, entry: ThermoEntry, problems: ProblemCollector) -> float:
    total = 0.0
    for element, count in composition:
        if element not in elements:
            problems.add(entry.location, f"species {entry.name!r} contains element {element!r} "
                         "not declared in ELEMENTS", "add it to the ELEMENTS section")
            continue
        total += count * elements[element]
    return total


def _transport_records(files: list[TransportFile], wanted: set[str],
                       problems: ProblemCollector) -> dict[str, TransportData]:
    """Transport data of the mechanism's species (records of other species are skipped)."""
    records: dict[str, TransportData] = {}
    for transport_file in files:
        for record in transport_file.records:
            key = record.name.text.upper()
            if key in records or key not in wanted:
                continue
            data = _transport_data(record, problems)
            if data is not None:
                records[key] = data
    return records


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


def _qss_lists(qss_file: QssFile | None, names: list[str], problems: ProblemCollector):
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


__all__ = ["load_mechanism", "find_companion"]
