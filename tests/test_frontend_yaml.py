"""Broken Cantera YAML files: located errors, never a crash (issue 14, section 3).

Each case is one edit of Cantera's h2o2.yaml found by the fuzz test
(fuzz_mechanisms.py): the error names the file, line and column.  Input that
crashed Cantera's C++ (a transport entry without 'model: gas') is loaded in a
child process, so a regression fails the test instead of killing the run.
"""

from __future__ import annotations

import subprocess
import sys

import pytest

import singe
from singe.errors import SingeInputError
from cantera_reference import CANTERA_DATA

H2O2 = (CANTERA_DATA / "h2o2.yaml").read_text()
O_TRANSPORT_MODEL = "  transport:\n    model: gas\n    geometry: atom\n    well-depth: 80.0"  # species O, line 88


def _broken(tmp_path, old: str, new: str, count: int = 1):
    assert old in H2O2
    path = tmp_path / "h2o2.yaml"
    path.write_bytes(H2O2.replace(old, new, count).encode("utf-8") if isinstance(new, str) else
                     H2O2.encode("utf-8").replace(old.encode(), new, count))
    return path


def _problem(path):
    with pytest.raises(SingeInputError) as info:
        singe.load_mechanism(path)
    problem = info.value.problems[0]
    return problem, (problem.location.file, problem.location.line, problem.location.column)


def test_a_transport_entry_without_its_model_is_a_located_error_not_a_crash(tmp_path):
    path = _broken(tmp_path, O_TRANSPORT_MODEL, O_TRANSPORT_MODEL.replace("model: gas", "oodel: gas"))
    script = ("import singe, sys\n"
              "try:\n    singe.load_mechanism(sys.argv[1])\n"
              "except singe.SingeInputError as error:\n"
              "    print(error.problems[0].location, error.problems[0].message)\n")
    child = subprocess.run([sys.executable, "-c", script, str(path)], capture_output=True, text=True, timeout=120)
    assert child.returncode == 0, child.stderr[-2000:]
    assert child.stdout.startswith(f"{path}:77:3 species 'O': transport model None; singe reads 'model: gas'")


def test_the_same_file_with_its_transport_model_loads(tmp_path):
    """Companion: the unbroken entry."""
    path = _broken(tmp_path, O_TRANSPORT_MODEL, O_TRANSPORT_MODEL)
    assert singe.load_mechanism(path).species[2].transport.well_depth == 80.0


def test_a_byte_that_is_not_utf8_is_located(tmp_path):
    path = _broken(tmp_path, "    well-depth: 80.0", b"    well-depth: 8\x850.0")
    problem, where = _problem(path)
    assert where == (str(path), 91, 18) and problem.message == "byte 0x85 is not UTF-8 text"


def test_a_control_character_is_located(tmp_path):
    path = _broken(tmp_path, "    well-depth: 80.0", "    well-depth:\x1c80.0")
    problem, where = _problem(path)
    assert where == (str(path), 91, 16)
    assert problem.message == "not a YAML file: character '\\x1c' (#x001c) is not allowed in YAML"


def test_a_yaml_syntax_error_is_located(tmp_path):
    path = _broken(tmp_path, "  species: [H2, H, O, O2, OH, H2O, HO2, H2O2, AR, N2]\n  kinetics: gas\n  transport",
                   "  species: [H2, H, O, O2, OH, H2O, HO2, H2O2, AR, N2\n  kinetics: gas\n  transport")
    problem, where = _problem(path)
    assert where[:2] == (str(path), 22) and problem.message.startswith("not a YAML file: ")


def test_a_cantera_error_is_located_by_its_line_and_caret(tmp_path):
    path = _broken(tmp_path, "    well-depth: 80.0", "    well-depth: [80.0]")
    problem, where = _problem(path)
    assert where == (str(path), 91, 17)
    assert "Key 'well-depth' contains a 'vector<double>', not a 'double'" in problem.message
    assert "|" not in problem.message and "***" not in problem.message  # Cantera's excerpt is ours now


def test_a_species_without_thermo_is_located(tmp_path):
    """(Cantera takes a first species without thermo; a later one it rejects, located at the phase.)"""
    entry = "- name: H2\n  composition: {H: 2}\n  thermo:"
    path = _broken(tmp_path, entry, entry.replace("thermo:", "date:"))
    problem, where = _problem(path)
    line = H2O2.splitlines().index("- name: H2") + 1
    assert where == (str(path), line, 3) and problem.message == "species 'H2' has no thermo entry"


def test_a_missing_phase_is_located_at_the_phases_entry(tmp_path):
    path = _broken(tmp_path, "  thermo: ideal-gas\n", "  thermo: bdeal-gas\n")
    problem, where = _problem(path)
    assert where == (str(path), 18, 1) and problem.message.startswith("no ideal-gas phase (phases: ohmech (bdeal-gas)")


def test_unphysical_thermo_in_yaml_is_checked_as_in_chemkin(tmp_path):
    path = _broken(tmp_path, "    temperature-ranges: [200.0, 1000.0, 3500.0]\n    data:\n    - [3.1682671",
                   "    temperature-ranges: [200.0, 1000.0, -3500.0]\n    data:\n    - [3.1682671")
    problem, where = _problem(path)
    assert where == (str(path), 77, 3)
    assert problem.message == "thermo of 'O': temperature range 200--3500 K is empty or not positive"


NAMES = "  species: [H2, H, O, O2, OH, H2O, HO2, H2O2, AR, N2]\n"


def _aliased(tmp_path, prefix: str, first: str, second: str):
    text = prefix + H2O2.replace(NAMES, first, 1).replace(NAMES, second, 1)
    path = tmp_path / "aliases.yaml"
    path.write_text(text)
    return path


def test_aliases_that_expand_without_bound_are_located(tmp_path):
    """Nested aliases (a billion entries) would make Cantera run out of time and memory."""
    laughs = "x0: &a0 [1, 1, 1, 1, 1, 1, 1, 1, 1, 1]\n" + "".join(
        f"x{i}: &a{i} [{', '.join([f'*a{i - 1}'] * 10)}]\n" for i in range(1, 9))
    problem, where = _problem(_aliased(tmp_path, laughs, NAMES, NAMES))
    assert where == (str(tmp_path / "aliases.yaml"), 8, 5)
    assert problem.message.startswith("YAML aliases expand the file to over 5,000,000 entries")


def test_an_alias_inside_its_own_anchor_is_located(tmp_path):
    problem, where = _problem(_aliased(tmp_path, "x: &a [1, *a]\n", NAMES, NAMES))
    assert where == (str(tmp_path / "aliases.yaml"), 1, 4)
    assert problem.message == "a YAML alias refers to the entry that holds it (an endless structure)"


def test_an_ordinary_alias_loads(tmp_path):
    """Companion: one phase's species list reused by the other."""
    path = _aliased(tmp_path, "", NAMES.replace("[", "&names [", 1), "  species: *names\n")
    assert len(singe.load_mechanism(path).species) == 10


def test_a_phase_with_another_transport_model_is_warned_of_at_its_line():
    """gri30_ion declares 'ionized-gas': the kernels compute the mixture-averaged model (for its electron and
    ions the diffusion coefficients differ about 2x), so the load warns at the phase.  Companion: h2o2, which
    declares 'mixture-averaged', loads without the warning."""
    ion = singe.load_mechanism(CANTERA_DATA / "gri30_ion.yaml")
    [warning] = [w for w in ion.warnings if "declares transport" in w.message]
    assert "'ionized-gas'" in warning.message and "mixture-averaged" in warning.message
    assert (warning.location.line, warning.location.column) == (16, 1)  # '- name: gas'
    assert "ionized-gas model" in warning.hint
    assert not [w for w in singe.load_mechanism(CANTERA_DATA / "h2o2.yaml").warnings if "declares transport" in w.message]
