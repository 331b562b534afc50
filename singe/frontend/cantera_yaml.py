"""Cantera YAML input: a gas phase read through Cantera's own Python API and
turned into the same ``Mechanism`` the CHEMKIN route builds.

What the kernels cannot represent — a phase that is not an ideal gas,
thermodynamics other than NASA7/NASA9, rate types other than Arrhenius,
three-body, falloff (Lindemann, Troe, SRI), chemically activated, PLOG and
Chebyshev — is reported with the phase, species or reaction it concerns.
"""

from __future__ import annotations

import dataclasses
import pathlib
import re
import warnings
from dataclasses import dataclass

import yaml

from singe.constants import BOLTZMANN, GAS_CONSTANT, LIGHT_SPEED
from singe.errors import (Location, MechanismSemanticError, MechanismSyntaxError, Problem, ProblemCollector,
                          SingeInputError)
from singe.frontend.physics import check_thermo, check_transport
from singe.frontend.qss import qss_lists
from singe.frontend.source import SourceText
from singe.frontend.syntax import QssFile
from singe.mechanism import (Arrhenius, ChebyshevRate, FalloffFunction, Mechanism, Nasa7, Nasa9, PlogRate,
                             Reaction, Species, ThirdBody, TransportData)

GEOMETRIES = {"atom": 0, "linear": 1, "nonlinear": 2}
DEBYE = 1e-21 / LIGHT_SPEED  # C m
FALLOFF_FUNCTIONS = {"LindemannRate": "lindemann", "TroeRate": "troe", "SriRate": "sri"}


def _cantera():
    """Cantera, imported when a YAML file is read: CHEMKIN input and the kernels
    built from it (the GPU benchmark's machines, say) do not need it."""
    import cantera

    return cantera


def resolve_yaml(path: pathlib.Path) -> pathlib.Path:
    """``path`` as given, or a file of Cantera's data directories (``gri30.yaml``)."""
    if path.is_file():
        return path
    if not path.is_absolute():
        for folder in _cantera().get_data_directories():
            candidate = pathlib.Path(folder) / path
            if candidate.is_file():
                return candidate
    raise SingeInputError(f"{path}: no such mechanism file (nor in Cantera's data directories)")


def _document(path: pathlib.Path) -> dict:
    """The top-level mapping of the YAML file, as nodes (they keep their lines).

    Cantera reads YAML files as UTF-8: a file that is not is rejected here,
    where the offending byte can be located."""
    source = SourceText.read(path)
    _check_utf8(path, source)
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    try:
        root = yaml.compose(source.text, Loader=loader)
    except yaml.YAMLError as error:
        raise MechanismSyntaxError(Problem(_yaml_error_location(error, source),
                                           f"not a YAML file: {_yaml_error_text(error)}")) from None
    if YAML_ANCHOR.search(source.text):
        _check_aliases(root, source)
    return _mapping(root)


YAML_ANCHOR = re.compile(r"(?:^|[\s\[{,:-])&\S")  # anchors (an alias needs one) are rare in mechanisms
MAX_YAML_NODES = 5_000_000  # with aliases expanded; n-hexane NUIG (1.8 MB) has about 400,000


def _check_aliases(root, source: SourceText) -> None:
    """Reject YAML aliases that refer to their own anchor, or that expand the
    document beyond ``MAX_YAML_NODES`` (Cantera expands every alias: a few
    nested ones make it run out of time and memory).  Iterative: nesting may
    be deeper than Python's recursion."""
    size: dict[int, int] = {}
    uses: dict[int, int] = {}
    open_nodes: set[int] = set()
    stack = [(root, False)] if root is not None else []
    while stack:
        node, done = stack.pop()
        children = _children(node)
        if done:
            open_nodes.discard(id(node))
            size[id(node)] = min(1 + sum(size[id(c)] for c in children), MAX_YAML_NODES + 1)
            continue
        uses[id(node)] = uses.get(id(node), 0) + 1
        if id(node) in open_nodes:
            raise MechanismSyntaxError(Problem(_mark_location(node, source), "a YAML alias refers to the "
                                               "entry that holds it (an endless structure)"))
        if id(node) in size:
            continue
        open_nodes.add(id(node))
        stack.append((node, True))
        stack.extend((child, False) for child in children)
    if root is not None and size[id(root)] > MAX_YAML_NODES:
        repeated = max((n for n in _all_nodes(root) if uses[id(n)] > 1), key=lambda n: size[id(n)])
        raise MechanismSyntaxError(Problem(_mark_location(repeated, source),
                                           f"YAML aliases expand the file to over {MAX_YAML_NODES:,} entries "
                                           f"(this one, {_count(size[id(repeated)])} entries, is used "
                                           f"{uses[id(repeated)]:,} times)", "write the entries out"))


def _count(entries: int) -> str:
    return f"{entries:,}" if entries <= MAX_YAML_NODES else f"over {MAX_YAML_NODES:,}"


def _children(node) -> list:
    if isinstance(node, yaml.SequenceNode):
        return list(node.value)
    if isinstance(node, yaml.MappingNode):
        return [item for pair in node.value for item in pair]
    return []


def _all_nodes(root) -> list:
    seen, stack, nodes = set(), [root], []
    while stack:
        node = stack.pop()
        if id(node) not in seen:
            seen.add(id(node))
            nodes.append(node)
            stack.extend(_children(node))
    return nodes


def _mark_location(node, source: SourceText) -> Location:
    return source.location(node.start_mark.line + 1, node.start_mark.column + 1)


def _check_utf8(path: pathlib.Path, source: SourceText) -> None:
    raw = path.read_bytes()
    try:
        raw.decode("utf-8")
    except UnicodeDecodeError as error:
        line = raw.count(b"\n", 0, error.start) + 1
        column = len(raw[raw.rfind(b"\n", 0, error.start) + 1:error.start].decode("utf-8", "replace")) + 1
        raise MechanismSyntaxError(Problem(source.location(line, column),
                                           f"byte 0x{raw[error.start]:02x} is not UTF-8 text",
                                           "Cantera YAML files are UTF-8; save the file as UTF-8")) from None


def _yaml_error_location(error: yaml.YAMLError, source: SourceText) -> Location:
    """Where PyYAML found the problem: its problem (or context) mark, or for a
    reader error (a character YAML does not allow) the character's offset."""
    mark = getattr(error, "problem_mark", None) or getattr(error, "context_mark", None)
    if mark is not None:
        return source.location(mark.line + 1, mark.column + 1)
    character = getattr(error, "character", None)
    if isinstance(character, int):  # the first such character: the reader stops there
        return _location_of_offset(source, source.text.find(chr(character)))
    return source.location(1, 1)


def _location_of_offset(source: SourceText, offset: int) -> Location:
    offset = max(offset, 0)
    start = source.line_start(offset)
    return source.location(source.text.count("\n", 0, start) + 1, offset - start + 1)


def _yaml_error_text(error: yaml.YAMLError) -> str:
    if isinstance(error, yaml.reader.ReaderError):
        return f"character {chr(error.character)!r} (#x{error.character:04x}) is not allowed in YAML" \
            if isinstance(error.character, int) else error.reason
    words = [getattr(error, "context", None), getattr(error, "problem", None)]
    return ", ".join(w for w in words if w) or str(error)


def _mapping(node) -> dict:
    """Keys of a mapping node -> value nodes ({} for anything else)."""
    if not isinstance(node, yaml.MappingNode):
        return {}
    return {key.value: value for key, value in node.value if isinstance(key, yaml.ScalarNode)}


def _scalar(node) -> str | None:
    return node.value if isinstance(node, yaml.ScalarNode) else None


@dataclass(frozen=True)
class _Phase:
    """A phase entry: its name, thermo model, line, the sections its reactions come from, and its transport
    model."""

    name: str | None
    thermo: str | None
    line: int
    sections: tuple[str, ...] | None  # None: every section
    transport: str | None = None


def _reaction_sections(node) -> tuple[str, ...] | None:
    """The sections of this file named by a phase's ``reactions`` field."""
    if node is None:
        return ("reactions",)
    if isinstance(node, yaml.SequenceNode):
        return tuple(_scalar(n) for n in node.value if _scalar(n))
    value = _scalar(node)
    return None if value == "all" else ("reactions",) if value == "declared-species" else (value,)


def _phases(document: dict) -> list[_Phase]:
    entries = document.get("phases")
    nodes = entries.value if isinstance(entries, yaml.SequenceNode) else []
    return [_Phase(_scalar(_mapping(n).get("name")), _scalar(_mapping(n).get("thermo")), n.start_mark.line + 1,
                   _reaction_sections(_mapping(n).get("reactions")), _scalar(_mapping(n).get("transport")))
            for n in nodes]


# The phase transport models whose viscosity, conductivity and diffusion coefficients are the ones singe's kernels
# compute (Cantera's mixture-averaged family: Chapman-Enskog with the Monchick-Mason dipole corrections)
MIXTURE_AVERAGED = frozenset({None, "mixture-averaged", "mixture-averaged-CK"})


def _check_phase_transport(phase: _Phase, source: SourceText, problems: ProblemCollector) -> None:
    """A warning where the phase declares a transport model other than the mixture-averaged one singe computes
    (Cantera's 'ionized-gas' treats ions and electrons with other collision integrals; 'multicomponent' has
    other diffusion coefficients)."""
    if phase.transport in MIXTURE_AVERAGED:
        return
    hint = "the kernels give what Cantera gives with transport_model='mixture-averaged-CK'"
    if phase.transport == "ionized-gas":
        hint += ("; the ions' and electrons' diffusion coefficients differ from the ionized-gas model's (by about 2x "
                 "for E and H3O+ at 1800 K in gri30_ion)")
    problems.warn(source.location(phase.line, 1),
                  f"phase {phase.name!r} declares transport {phase.transport!r}; singe's transport kernels compute "
                  f"the mixture-averaged model for every species", hint)


def choose_phase(path: pathlib.Path, document: dict, name: str | None) -> _Phase:
    """The phase named ``name`` (default: the first ideal-gas phase).  A
    missing phase is located at the file's ``phases`` entry (line 1 without one)."""
    phases = _phases(document)
    listing = ", ".join(f"{p.name} ({p.thermo})" for p in phases) or "none"
    source = SourceText.read(path)
    entries = document.get("phases")
    where = source.location(entries.start_mark.line + 1, entries.start_mark.column + 1) if entries else \
        source.location(1, 1)
    if name is not None:
        chosen = next((p for p in phases if p.name == name), None)
        if chosen is None:
            raise MechanismSemanticError([Problem(where, f"no phase named {name!r} (phases: {listing})")])
    else:
        chosen = next((p for p in phases if p.thermo == "ideal-gas"), None)
        if chosen is None:
            raise MechanismSemanticError([Problem(where, f"no ideal-gas phase (phases: {listing}); singe compiles "
                                                  "gas-phase kinetics and transport")])
    if chosen.thermo != "ideal-gas":
        raise MechanismSemanticError([Problem(source.location(chosen.line, 1),
                                              f"phase {chosen.name!r} is a {chosen.thermo} phase, not an ideal gas",
                                              "singe's kernels assume an ideal gas; choose a gas phase with --phase")])
    return chosen


def _equation_lines(document: dict, phase: _Phase) -> dict[tuple, list[tuple[int, int]]]:
    """Equation -> (line, column) of the phase's YAML reaction entries that hold it, in order."""
    lines: dict[tuple, list[tuple[int, int]]] = {}
    for key, entries in document.items():
        if key in ("phases", "species", "units") or not isinstance(entries, yaml.SequenceNode):
            continue
        if phase.sections is not None and key not in phase.sections:
            continue
        for entry in entries.value:
            equation = _scalar(_mapping(entry).get("equation"))
            if equation is not None:
                lines.setdefault(_equation_key(equation), []).append((entry.start_mark.line + 1,
                                                                      entry.start_mark.column + 1))
    return lines


def _entry_lines(document: dict, section: str, field: str) -> dict[tuple, list[tuple[int, int]]]:
    """(value of ``field``,) -> (line, column) of the entries of a section of this file."""
    entries = document.get(section)
    places: dict[tuple, list[tuple[int, int]]] = {}
    for entry in entries.value if isinstance(entries, yaml.SequenceNode) else []:
        value = _scalar(_mapping(entry).get(field))
        if value is not None:
            places.setdefault((value,), []).append((entry.start_mark.line + 1, entry.start_mark.column + 1))
    return places


def _equation_key(equation: str) -> tuple:
    """An equation up to the order and grouping of its terms (Cantera
    rewrites 'O2 + O2' as '2 O2' and reorders terms)."""
    text = equation.replace("(+", " (+")
    for arrow in ("<=>", "=>", "="):
        if arrow in text:
            left, right = text.split(arrow, 1)
            return _side_key(left), arrow, _side_key(right)
    return (text,)


def _side_key(side: str) -> tuple:
    counts: dict[str, float] = {}
    coefficient = 1.0
    for word in side.split():
        if word == "+":
            continue
        try:
            coefficient = float(word)
            continue
        except ValueError:
            counts[word] = counts.get(word, 0.0) + coefficient
            coefficient = 1.0
    return tuple(sorted(counts.items()))


def load_yaml(path: pathlib.Path, phase: str | None = None, qss_file: QssFile | None = None) -> Mechanism:
    """The ``Mechanism`` of a gas phase of a Cantera YAML file, with Cantera's
    warnings (a NASA polynomial discontinuous at T_mid, ...) as located
    warnings in ``Mechanism.warnings``.  Every Cantera error, whether raised
    loading the phase or reading an entry from it, is located in the file."""
    path = resolve_yaml(path)
    document = _document(path)
    chosen = choose_phase(path, document, phase)
    source = SourceText.read(path)
    problems = ProblemCollector()
    ct = _cantera()
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            gas = ct.Solution(str(path), chosen.name, transport_model=None)
        mechanism = _mechanism(gas, path, document, chosen, source, qss_file, problems)
    except ct.CanteraError as error:
        location, detail = cantera_error(str(error), source, source.location(chosen.line, 1))
        raise MechanismSemanticError([Problem(location, f"Cantera cannot load phase {chosen.name!r}: "
                                              f"{detail}")]) from None
    _check_phase_transport(chosen, source, problems)
    species_lines = _entry_lines(document, "species", "name")
    for warning in caught:
        _cantera_warning(str(warning.message), source, species_lines, source.location(chosen.line, 1), problems)
    return dataclasses.replace(mechanism, warnings=tuple(problems.warnings))


def _mechanism(gas, path: pathlib.Path, document: dict, chosen: _Phase, source: SourceText,
               qss_file: QssFile | None, problems: ProblemCollector) -> Mechanism:
    species_lines = _entry_lines(document, "species", "name")
    species = [_species(gas, k, source.location(*species_lines.get((gas.species_name(k),), [(chosen.line, 1)])[0]),
                        problems) for k in range(gas.n_species)]
    _check_transport(species, source.location(chosen.line, 1), problems)
    equation_lines = _equation_lines(document, chosen)
    reactions = [_reaction(gas, i, source, equation_lines, problems) for i in range(gas.n_reactions)]
    names = [s.name for s in species if s is not None]
    qss, stiff = qss_lists(qss_file, names, problems)
    problems.raise_if_any(MechanismSemanticError)
    sources = (str(path),) + ((qss_file.source.path,) if qss_file else ())
    elements = tuple(e.upper() for e in gas.element_names)
    return Mechanism(path.stem, elements, tuple(species), tuple(reactions), qss, stiff, sources)


CANTERA_LINE = re.compile(r"Error on lines? (\d+)")
CANTERA_EXCERPT = re.compile(r"^>\s*(\d+) > .*\n( *)\^", re.MULTILINE)
CANTERA_EXCERPT_MARGIN = len("|    88 | ")
CANTERA_SPECIES = re.compile(r"[Ff]or species '?([^\s,']+)'?")


def cantera_error(text: str, source: SourceText, fallback: Location) -> tuple[Location, str]:
    """(where, what) of a Cantera error message: 'Error on line N of FILE:',
    the caret under its excerpt for the column; ``fallback`` without them."""
    lines = [line.strip() for line in text.splitlines() if line.strip() and not line.startswith("*")]
    detail = " ".join(line for line in lines if "thrown by" not in line and not line.startswith(("|", ">", "^"))
                      and not CANTERA_LINE.match(line))
    line = CANTERA_LINE.search(text)
    if line is None or not source.path.endswith(_file_of_error(text)):
        return fallback, detail
    excerpt = CANTERA_EXCERPT.search(text)
    column = 1
    if excerpt is not None and int(excerpt.group(1)) == int(line.group(1)):
        column = max(len(excerpt.group(2)) - CANTERA_EXCERPT_MARGIN + 1, 1)
    return source.location(int(line.group(1)), column), detail


def _file_of_error(text: str) -> str:
    match = re.search(r"Error on lines? \d+(?: and \d+)? of (.*?):?$", text, re.MULTILINE)
    return match.group(1).strip() if match else ""


def _cantera_warning(text: str, source: SourceText, species_lines, fallback: Location,
                     problems: ProblemCollector) -> None:
    """A warning Cantera gave loading the phase, located at the line it names,
    else at the species it names, else at the phase.  NASA7 discontinuities
    are left to singe's own check (physics.py), the same on both routes."""
    if text.startswith("NasaPoly2::validate"):
        return
    species = CANTERA_SPECIES.search(text)
    if species and (species.group(1),) in species_lines:
        fallback = source.location(*species_lines[(species.group(1),)][0])
    location, detail = cantera_error(text, source, fallback)
    problems.warn(location, f"Cantera: {detail}")


# -- species -------------------------------------------------------------------

def _species(gas, k: int, where: Location, problems: ProblemCollector) -> Species | None:
    spec = gas.species(k)
    thermo = _thermo(spec, where, problems)
    composition = tuple((e.upper(), float(n)) for e, n in spec.composition.items() if n != 0)
    weights = dict(zip(gas.element_names, gas.atomic_weights))
    weight = 0.0
    for element, count in spec.composition.items():
        weight += count * weights[element]
    transport = _transport(spec, where, problems)
    if thermo is None or not check_thermo(spec.name, thermo, where, problems):
        return None
    if transport is not None and not check_transport(spec.name, transport, sum(n for _, n in composition), where,
                                                     problems):
        return None
    return Species(spec.name, composition, weight, thermo, transport, where)


def _thermo(spec, where: Location, problems: ProblemCollector):
    thermo = spec.thermo
    if thermo is None:
        problems.add(where, f"species {spec.name!r} has no thermo entry", "give it NASA7 or NASA9 polynomials")
        return None
    c = list(thermo.coeffs)
    ct = _cantera()
    if isinstance(thermo, ct.NasaPoly2):
        return Nasa7(thermo.min_temp, c[0], thermo.max_temp, low=tuple(c[8:15]), high=tuple(c[1:8]))
    if isinstance(thermo, ct.Nasa9PolyMultiTempRegion):
        ranges = []
        for r in range(int(c[0])):
            block = c[1 + 11 * r:12 + 11 * r]
            ranges.append((block[0], block[1], tuple(block[2:11])))
        return Nasa9(tuple(ranges))
    problems.add(where, f"species {spec.name!r} has {spec.input_data.get('thermo', {}).get('model')} "
                 "thermodynamics", "singe reads NASA7 and NASA9 polynomials")
    return None


def _transport(spec, where: Location, problems: ProblemCollector) -> TransportData | None:
    """The species' transport data.  Cantera keeps an entry whose model is
    not 'gas' as data its Python API cannot read (reading it crashes): such an
    entry is reported instead."""
    entry = spec.input_data.get("transport")
    if entry is None:
        return None
    model = entry.get("model") if isinstance(entry, dict) else None
    if model != "gas":
        problems.add(where, f"species {spec.name!r}: transport model {model!r}; singe reads 'model: gas' entries",
                     "a gas species' transport entry starts 'model: gas'")
        return None
    data = spec.transport
    return TransportData(GEOMETRIES[data.geometry], data.well_depth / BOLTZMANN, data.diameter * 1e10,
                         data.dipole / DEBYE, data.polarizability * 1e30, data.rotational_relaxation,
                         location=where)


def _check_transport(species: list, where: Location, problems: ProblemCollector) -> None:
    """Transport data for every species or for none."""
    missing = [s.name for s in species if s is not None and s.transport is None]
    if missing and len(missing) < len(species):
        problems.add(where, f"no transport data for species {', '.join(repr(n) for n in missing)}",
                     "give every species a transport entry (or none: then only the chemistry kernel is compiled)")


# -- reactions ------------------------------------------------------------------

def _arrhenius(rate) -> Arrhenius:
    return Arrhenius(rate.pre_exponential_factor, rate.temperature_exponent,
                     rate.activation_energy / GAS_CONSTANT)


def _location(source: SourceText, reaction, equation_lines) -> Location:
    """Where the reaction's entry stands in the YAML file (its first line if not found)."""
    written = str(reaction.input_data.get("equation", reaction.equation))
    places = equation_lines.get(_equation_key(written))
    line, column = places.pop(0) if places else (1, 1)
    return source.location(line, column)


def _reaction(gas, i: int, source: SourceText, equation_lines, problems: ProblemCollector) -> Reaction | None:
    reaction = gas.reaction(i)
    location = _location(source, reaction, equation_lines)
    rate = reaction.rate
    kind, fields = _rate_fields(rate)
    if kind is None:
        problems.add(location, f"reaction {i + 1} {reaction.equation!r}: {reaction.reaction_type} rates are not "
                     "supported", "singe's kernels take Arrhenius, three-body, falloff, chemically activated, "
                     "PLOG and Chebyshev rates")
        return None
    reactants = dict(reaction.reactants)
    products = dict(reaction.products)
    third_body = partner = None
    body = reaction.third_body
    if body is not None and body.name != "M" and kind in ("elementary", "plog", "chebyshev"):
        reactants[body.name] = reactants.get(body.name, 0.0) + 1.0  # X on both sides, as CHEMKIN writes it
        products[body.name] = products.get(body.name, 0.0) + 1.0
        partner = body.name
    elif body is not None:
        third_body = _third_body(gas, body)
        kind = "three-body" if kind == "elementary" else kind
    return Reaction(index=i, equation=reaction.equation, reactants=tuple(reactants.items()),
                    products=tuple(products.items()), reversible=reaction.reversible, kind=kind,
                    location=location, third_body=third_body, orders=tuple(reaction.orders.items()),
                    duplicate=reaction.duplicate, collision_partner=partner, **fields)


def _rate_fields(rate) -> tuple[str | None, dict]:
    """(kind, the Reaction fields of the rate) or (None, {}) for a rate singe cannot represent."""
    ct = _cantera()
    if type(rate) is ct.ArrheniusRate:  # not its Blowers-Masel or plasma relatives
        return "elementary", {"rate": _arrhenius(rate)}
    if type(rate) is ct.PlogRate:
        return "plog", {"rate": PlogRate(tuple(sorted(((p, _arrhenius(a)) for p, a in rate.rates),
                                                      key=lambda entry: entry[0])))}
    if type(rate) is ct.ChebyshevRate:
        (T_min, T_max), (P_min, P_max) = rate.temperature_range, rate.pressure_range
        return "chebyshev", {"rate": ChebyshevRate(T_min, T_max, P_min, P_max,
                                                   tuple(tuple(float(x) for x in row) for row in rate.data))}
    function = FALLOFF_FUNCTIONS.get(type(rate).__name__)
    if function is None:
        return None, {}
    falloff = FalloffFunction(function, tuple(float(x) for x in rate.falloff_coeffs))
    high, low = _arrhenius(rate.high_rate), _arrhenius(rate.low_rate)
    if rate.chemically_activated:
        return "chemically-activated", {"rate": low, "high": high, "falloff": falloff}
    return "falloff", {"rate": high, "low": low, "falloff": falloff}


def _third_body(gas, body) -> ThirdBody:
    """M with its efficiencies (a default other than 1 spelled out per species), or one collider."""
    if body.name != "M":
        return ThirdBody(collider=body.name)
    names = set(gas.species_names)  # Cantera may skip undeclared third bodies
    efficiencies = {name: value for name, value in body.efficiencies.items() if name in names}
    if body.default_efficiency != 1.0:
        efficiencies = {name: efficiencies.get(name, body.default_efficiency) for name in gas.species_names}
    return ThirdBody(efficiencies=tuple(efficiencies.items()))
