"""One malformed input per error message, matched with its location."""

from __future__ import annotations

import re

import pytest

import singe
from singe.cli import main
from singe.errors import MechanismSemanticError, MechanismSyntaxError, SingeInputError
from mechanism_text import thermo_text, write_mechanism

GOOD = "H2+O2=2OH   1.7E13 0.0 47780.0\n"


def load_error(tmp_path, reactions, **kwargs) -> SingeInputError:
    chem = write_mechanism(tmp_path, reactions, **kwargs)
    with pytest.raises(SingeInputError) as info:
        singe.load_mechanism(chem)
    return info.value


def assert_problem(error: SingeInputError, message: str, line: int, column: int, file_name: str = "mech.inp",
                   hint: str = ""):
    """The error holds a problem matching ``message`` at file:line:col, and prints it with a caret."""
    matches = [p for p in error.problems if re.search(message, p.message)]
    assert matches, f"no problem matching {message!r} in:\n{error}"
    problem = matches[0]
    assert problem.location.file.endswith(file_name)
    assert (problem.location.line, problem.location.column) == (line, column), str(error)
    text = str(problem)
    assert f"{file_name}:{line}:{column}: error:" in text and "^" in text
    assert hint in problem.hint


# The reactions written by write_mechanism start on line 8 of mech.inp.
FIRST = 8


def test_undeclared_species_suggests_closest(tmp_path):
    error = load_error(tmp_path, GOOD + "H2O2+H = HO2+H22   1.0E12 0.0 0.0\n")
    assert isinstance(error, MechanismSemanticError)
    assert_problem(error, "undeclared species 'H22'", FIRST + 1, 14, hint="did you mean")


def test_undeclared_species_in_efficiencies(tmp_path):
    error = load_error(tmp_path, "H+O+M = OH+M 5.0E17 -1.0 0.0\n   H2O/6.0/ C02/2.0/\n")
    assert_problem(error, "undeclared species 'C02' in efficiencies", FIRST + 1, 13)


def test_missing_thermo_for_a_species(tmp_path):
    chem = write_mechanism(tmp_path, GOOD)
    (tmp_path / "therm.dat").write_text(thermo_text({"H2": "H2", "O2": "O2", "N2": "N2"}))
    with pytest.raises(MechanismSemanticError) as info:
        singe.load_mechanism(chem)
    assert_problem(info.value, "no thermo data for species 'H'", 5, 4, hint="NASA7")
    names = [p.message for p in info.value.problems if "no thermo data" in p.message]
    assert len(names) == 7  # every missing species, reported together


def test_malformed_nasa7_card_number(tmp_path):
    chem = write_mechanism(tmp_path, GOOD)
    lines = (tmp_path / "therm.dat").read_text().splitlines()
    lines[4] = lines[4][:79]  # card 2 of the first entry loses its card number
    (tmp_path / "therm.dat").write_text("\n".join(lines) + "\n")
    with pytest.raises(MechanismSyntaxError) as info:
        singe.load_mechanism(chem)
    assert_problem(info.value, "malformed NASA7", 5, 79, file_name="therm.dat")


def test_malformed_nasa7_coefficient(tmp_path):
    chem = write_mechanism(tmp_path, GOOD)
    lines = (tmp_path / "therm.dat").read_text().splitlines()
    lines[4] = lines[4][:15] + " 2.2398x013E-03" + lines[4][30:]
    (tmp_path / "therm.dat").write_text("\n".join(lines) + "\n")
    with pytest.raises(MechanismSemanticError) as info:
        singe.load_mechanism(chem)
    assert_problem(info.value, "malformed NASA7 card: coefficient", 5, 16, file_name="therm.dat")


def test_malformed_number_on_reaction_line(tmp_path):
    error = load_error(tmp_path, "H2+O2=2OH   1.7E13 0.0x 47780.0\n")
    assert isinstance(error, MechanismSyntaxError)
    assert_problem(error, "malformed number '0.0x'", FIRST, 20)


def test_malformed_number_in_auxiliary_data(tmp_path):
    error = load_error(tmp_path, "H+O2(+M)=HO2(+M) 4.65E12 0.44 0.0\n  LOW / 1.7E19 -1.2.3 0.0 /\n")
    assert_problem(error, "malformed number '-1.2.3' in LOW", FIRST + 1, 16)
    assert len(error.problems) == 1  # no second complaint about the LOW it could not read


def test_falloff_without_low(tmp_path):
    error = load_error(tmp_path, "H+O2(+M)=HO2(+M) 4.65E12 0.44 0.0\n  TROE / 0.5 100 1000 /\n")
    assert_problem(error, r"\(\+M\) reaction without LOW", FIRST, 1, hint="LOW")


def test_duplicate_not_marked(tmp_path):
    error = load_error(tmp_path, GOOD + "H+HO2=2OH 7.0E13 0.0 300.0\n2OH = HO2+H 1.0E12 0.0 0.0\n")
    assert_problem(error, "duplicate reaction not marked DUPLICATE .same as reaction 2 at line 9", FIRST + 2, 1)


def test_unknown_auxiliary_keyword(tmp_path):
    error = load_error(tmp_path, "H+O2(+M)=HO2(+M) 4.65E12 0.44 0.0\n  LOW / 1.7E19 -1.2 0.0 /\n  TORE / 0.5 1 2 /\n")
    assert_problem(error, "unknown keyword 'TORE'", FIRST + 2, 3, hint="TROE")


def test_unknown_section_keyword(tmp_path):
    chem = write_mechanism(tmp_path, GOOD)
    chem.write_text("FOOBAR\n" + chem.read_text())
    with pytest.raises(MechanismSyntaxError) as info:
        singe.load_mechanism(chem)
    assert_problem(info.value, "unknown keyword 'FOOBAR'", 1, 1, hint="REACTIONS")


def test_chebyshev_coefficient_count(tmp_path):
    error = load_error(tmp_path, "H+HO2=2OH 1.0 0.0 0.0\n  TCHEB / 300 2000 /\n  CHEB / 2 2 /\n  CHEB / 1.0 0.1 0.2 /\n")
    assert_problem(error, r"CHEB expects 2x2 = 4 coefficients, found 3", FIRST + 2, 3)


def test_qss_species_not_in_mechanism(tmp_path):
    error = load_error(tmp_path, GOOD, qss="QSSA\nHO2 OHH\nEND\nSTIFF\nH2O3\nEND\n")
    assert_problem(error, "QSSA species 'OHH' is not in the mechanism", 2, 5, file_name="mech.qss", hint="'OH'")
    assert_problem(error, "STIFF species 'H2O3' is not in the mechanism", 5, 1, file_name="mech.qss")


def test_qss_end_on_the_names_line(tmp_path):
    """``QSSA HO2 END`` on one line reads as the three-line form does."""
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    one_line = singe.load_mechanism(write_mechanism(tmp_path / "a", GOOD, qss="QSSA HO2 END\nSTIFF H2O2 END"))
    three_lines = singe.load_mechanism(write_mechanism(tmp_path / "b", GOOD, qss="QSSA\nHO2\nEND\nSTIFF\nH2O2\nEND\n"))
    assert one_line.qss_species == three_lines.qss_species == ("HO2",)
    assert one_line.stiff_species == three_lines.stiff_species == ("H2O2",)


def test_qss_section_without_end(tmp_path):
    error = load_error(tmp_path, GOOD, qss="QSSA HO2 END\nSTIFF\nH2O2\n")
    assert_problem(error, "the QSSA/STIFF section has no END", 3, 1, file_name="mech.qss")


def test_reaction_line_without_numbers(tmp_path):
    error = load_error(tmp_path, "H2+O2=2OH 1.7E13\n")
    assert_problem(error, "reaction line needs A, b and E", FIRST, 17)


def test_unbalanced_reaction(tmp_path):
    error = load_error(tmp_path, "H2+O2=OH 1.7E13 0 0\n")
    assert_problem(error, "not balanced in elements .reactants - products: H \\+1, O \\+1", FIRST, 1)


def test_semantic_errors_are_collected(tmp_path):
    error = load_error(tmp_path, "H2+O2=2XX 1 0 0\nH+O2(+M)=HO2(+M) 1 0 0\n  LOW/1 0 0/ TORE/1 2 3/\n")
    assert len(error.problems) >= 2
    assert {p.location.line for p in error.problems} >= {FIRST, FIRST + 2}


def test_cli_prints_error_without_traceback(tmp_path, capsys):
    chem = write_mechanism(tmp_path, GOOD + "H2O2+H = HO2+H22   1.0E12 0.0 0.0\n")
    assert main([str(chem)]) == 2
    err = capsys.readouterr().err
    assert "mech.inp:9:14: error: undeclared species 'H22'" in err
    assert "Traceback" not in err


def test_cli_bad_option_exits_2(capsys):
    with pytest.raises(SystemExit) as info:
        main(["gri30", "--no-such-option"])
    assert info.value.code == 2
    assert "unrecognized arguments" in capsys.readouterr().err
