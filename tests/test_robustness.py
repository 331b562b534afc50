"""Inputs that used to break singe (issue 14, section 3): each is now a
located error, a warning-free load, or a clear command-line message."""

from __future__ import annotations

import os
import re
import pathlib
import stat
import subprocess
import sys

import pytest

import singe
from singe.cli import main
from singe.errors import SHOWN_PER_LINE, Location, SingeInputError
from singe.frontend.chemkin import parse_chemkin
from singe.frontend.source import MAX_LINE_LENGTH, SourceText
from mechanism_text import thermo_text, write_mechanism
from test_frontend_errors import FIRST, assert_problem, load_error

ROOT = pathlib.Path(__file__).resolve().parents[1]
GOOD = "H2+O2=2OH   1.7E13 0.0 47780.0\n"


# -- equations ------------------------------------------------------------------

def test_a_side_of_a_thousand_terms_is_read_without_recursion(tmp_path):
    chem = write_mechanism(tmp_path, "+".join(["H"] * 1000) + " => 500H2   1.0 0.0 0.0\n")
    reaction = singe.load_mechanism(chem).reactions[0]
    assert reaction.reactants == (("H", 1000.0),) and reaction.products == (("H2", 500.0),)


@pytest.mark.parametrize("equation, column", [("2 <=> H2O + O", 1), ("H2O + 2 <=> H2O + O", 7)])
def test_a_term_that_is_only_a_number_is_a_located_error(tmp_path, equation, column):
    error = load_error(tmp_path, f"{equation}   1.0E12 0.0 0.0\n")
    assert_problem(error, "term '2' is a number without a species", FIRST, column)


# -- whitespace, empty and huge inputs -------------------------------------------

@pytest.mark.parametrize("space", ["\f", "\xa0", "\v \t"])
def test_a_thermo_line_of_other_whitespace_is_blank(tmp_path, space):
    chem = write_mechanism(tmp_path, GOOD)
    thermo = (tmp_path / "therm.dat").read_text().split("\n")
    (tmp_path / "therm.dat").write_text("\n".join(thermo[:6] + [space] + thermo[6:]), encoding="utf-8")
    assert singe.load_mechanism(chem).n_species == 10


def test_other_whitespace_separates_words_in_a_mechanism(tmp_path):
    chem = write_mechanism(tmp_path, "H2+O2=2OH\xa0 1.7E13\f0.0 47780.0\n")
    assert singe.load_mechanism(chem).reactions[0].rate.b == 0.0


def test_a_mechanism_without_species_is_a_located_error(tmp_path):
    (tmp_path / "none.inp").write_text("ELEMENTS\nH O\nEND\nSPECIES\nEND\nREACTIONS\nEND\n")
    (tmp_path / "therm.dat").write_text(thermo_text({"H2": "H2"}))
    with pytest.raises(SingeInputError) as info:
        singe.load_mechanism(tmp_path / "none.inp")
    assert "none.inp:1:1: error: the mechanism declares no species" in str(info.value)


def test_a_line_over_the_limit_is_rejected_at_its_place(tmp_path):
    long_line = " ".join(["H2"] * (MAX_LINE_LENGTH // 3 + 100))
    error = load_error(tmp_path, GOOD + long_line + "\n")
    assert_problem(error, f"line is {len(long_line):,} characters long", FIRST + 1, MAX_LINE_LENGTH + 1)
    assert len(str(error)) < 600


def test_a_long_line_is_clipped_around_the_column_in_messages():
    text = "x" * 5000 + "BAD" + "y" * 5000
    excerpt = Location("f.inp", 3, 5001, text).excerpt()
    shown, caret = excerpt.split("\n")
    assert len(shown) < 140 and shown.strip().startswith("...") and shown.endswith("...")
    assert shown[caret.index("^"):].startswith("BAD")


def test_many_problems_on_one_line_are_summarised(tmp_path):
    chem = write_mechanism(tmp_path, GOOD, qss="QSSA\n" + " ".join(f"XX{i}" for i in range(2000)) + "\nEND\n")
    with pytest.raises(SingeInputError) as info:
        singe.load_mechanism(chem)
    text = str(info.value)
    assert len(info.value.problems) == 2000
    assert text.count("is not in the mechanism") == SHOWN_PER_LINE
    assert f"... and {2000 - SHOWN_PER_LINE} more problems" in text and len(text) < 2000


def _calls_to_parse(names: int) -> int:
    """Python function calls made while parsing a SPECIES line of ``names`` names."""
    source = SourceText("f.inp", "SPECIES\n" + " ".join(f"S{i}" for i in range(names)) + "\nEND\n")
    calls = 0

    def count(frame, event, arg):
        nonlocal calls
        calls += event in ("call", "c_call")

    sys.setprofile(count)
    try:
        parse_chemkin(source)
    finally:
        sys.setprofile(None)
    return calls


def test_parsing_work_grows_linearly_with_the_tokens_of_a_line():
    _calls_to_parse(10)  # tables built
    small, large = _calls_to_parse(500), _calls_to_parse(4000)
    assert large < 8 * small * 1.1


def test_columns_do_not_scan_back_over_the_line():
    text = "SPECIES\n" + "A " * 50_000 + "\n"
    source = SourceText("f.inp", text)
    source.location_at(len(text) - 3, 2)
    assert source.location_at(len(text) - 3, 2).column == 100_000 - 1
    assert source.first_on_line(8) and not source.first_on_line(10)


# -- numbers ----------------------------------------------------------------------

@pytest.mark.parametrize("number", ["1E400", "1.0D+999", "-1e309"])
def test_an_overflowing_rate_parameter_is_a_located_error(tmp_path, number):
    error = load_error(tmp_path, f"H2+O2=2OH   {number} 0.0 47780.0\n")
    assert_problem(error, re.escape(f"number '{number}' is too large"), FIRST, 13)


def test_an_overflowing_thermo_coefficient_is_a_located_error(tmp_path):
    chem = write_mechanism(tmp_path, GOOD)
    lines = (tmp_path / "therm.dat").read_text().split("\n")
    lines[3] = "1.0D+999".rjust(15) + lines[3][15:]  # second card of the first species
    (tmp_path / "therm.dat").write_text("\n".join(lines))
    with pytest.raises(SingeInputError) as info:
        singe.load_mechanism(chem)
    assert_problem(info.value, "number '1.0D\\+999' is too large", 4, 1, file_name="therm.dat")


@pytest.mark.parametrize("reaction", ["H+O2=OH+O   1.7E13 200.0 47780.0", "H+O2=OH+O   1.7E13 0.0 -1e7"])
def test_a_rate_constant_that_overflows_in_the_thermo_range_is_a_located_error(tmp_path, reaction):
    error = load_error(tmp_path, GOOD + reaction + "\n")
    assert_problem(error, "the rate constant of reaction 2 overflows between 300 and 3500 K", FIRST + 1, 1)


def test_a_large_but_finite_temperature_exponent_is_accepted(tmp_path):
    chem = write_mechanism(tmp_path, "H2+O2=2OH   1.0 10.0 0.0\n")
    assert singe.load_mechanism(chem).reactions[0].rate.b == 10.0


def test_a_coefficient_that_makes_cp_negative_is_a_located_error(tmp_path):
    chem = write_mechanism(tmp_path, GOOD)
    lines = (tmp_path / "therm.dat").read_text().split("\n")
    lines[4] = lines[4][:30] + "-5.00000000E+01" + lines[4][45:]  # a1 of the low range (card 3, field 3)
    (tmp_path / "therm.dat").write_text("\n".join(lines))
    with pytest.raises(SingeInputError) as info:
        singe.load_mechanism(chem)
    assert_problem(info.value, r"thermo of 'H2': negative heat capacity cp/R = -4\d\.?\d* at \d+ K "
                   r"\(low-temperature polynomial\)", 3, 1,
                   file_name="therm.dat")


@pytest.mark.parametrize("field, value, message", [(3, "-3.5", "dipole moment -3.5 must be not negative"),
                                                   (2, "-2.9", "collision diameter sigma -2.9 must be positive"),
                                                   (1, "0.0", "well depth eps/k 0 must be positive")])
def test_unphysical_transport_data_is_a_located_error(tmp_path, field, value, message):
    chem = write_mechanism(tmp_path, GOOD)
    lines = (tmp_path / "tran.dat").read_text().split("\n")
    words = lines[0].split()
    words[1 + field] = value
    lines[0] = " ".join(words)
    (tmp_path / "tran.dat").write_text("\n".join(lines))
    with pytest.raises(SingeInputError) as info:
        singe.load_mechanism(chem)
    assert_problem(info.value, f"transport data of 'H2': {message}", 1, 1, file_name="tran.dat")


def test_a_geometry_that_does_not_fit_the_atoms_is_a_located_error(tmp_path):
    chem = write_mechanism(tmp_path, GOOD)
    lines = (tmp_path / "tran.dat").read_text().split("\n")
    words = lines[0].split()
    words[1] = "0"
    lines[0] = " ".join(words)
    (tmp_path / "tran.dat").write_text("\n".join(lines))
    with pytest.raises(SingeInputError) as info:
        singe.load_mechanism(chem)
    assert_problem(info.value, "geometry 0 \\(an atom\\) does not fit 2 atoms", 1, 1, file_name="tran.dat")


# -- the command line -----------------------------------------------------------------

def run(argv, capsys) -> tuple[int, str, str]:
    try:
        status = main([str(a) for a in argv])
    except SystemExit as exit_:
        status = exit_.code
    out, err = capsys.readouterr()
    return status, out, err


def test_generated_files_follow_the_umask(tmp_path, capsys):
    old = os.umask(0o022)
    try:
        assert run(["h2o2", "--kernels", "viscosity", "--warps", "2", "-o", tmp_path], capsys)[0] == 0
    finally:
        os.umask(old)
    modes = {stat.S_IMODE(p.stat().st_mode) for p in tmp_path.iterdir()}
    assert modes == {0o644}


def test_a_directory_is_reported_as_one(tmp_path, capsys):
    write_mechanism(tmp_path, GOOD)
    status, _, err = run([tmp_path], capsys)
    assert status == 2 and "is a directory; give the CHEMKIN reaction file (mech.inp is there)" in err


@pytest.mark.parametrize("content, message", [(b"", "mech.inp:1:1: error: the mechanism file is empty"),
                                              (b"  \n\n", "mech.inp:1:1: error: the mechanism file is empty"),
                                              (b"ELEM\n\x7fELF\x02\x00\x00", "mech.inp:2:1: error: binary file")])
def test_empty_and_binary_files_get_clear_messages(tmp_path, capsys, content, message):
    (tmp_path / "mech.inp").write_bytes(content)
    status, _, err = run([tmp_path / "mech.inp"], capsys)
    assert status == 2 and message in err and "Traceback" not in err


def test_no_thermo_data_is_one_line_naming_the_option(tmp_path, capsys):
    write_mechanism(tmp_path, GOOD)
    (tmp_path / "therm.dat").unlink()
    status, _, err = run([tmp_path / "mech.inp"], capsys)
    assert status == 2
    assert err.strip() == (f"{tmp_path / 'mech.inp'}:1:1: error: no thermo data: put therm.dat beside the file "
                           "or use --thermo FILE")


@pytest.mark.parametrize("argv, message", [
    (["--warps", "0"], "--warps must be an integer from 1 to 32, got 0"),
    (["--warps", "33"], "--warps must be an integer from 1 to 32, got 33"),
    (["--chemistry-warps", "0"], "--warps must be an integer from 1 to 32, got 0"),
    (["--qssa-warps", "9", "--warps", "8"], "--qssa-warps must be from 1 to the number of warps (8), got 9"),
    (["-o", "{tmp}/mech.inp/out"], "is not a directory"),
])
def test_option_problems_are_reported_before_the_mechanism_is_read(tmp_path, capsys, argv, message):
    (tmp_path / "mech.inp").write_text("not a mechanism\n")  # reading it would be an error of its own
    status, out, err = run([tmp_path / "mech.inp"] + [a.format(tmp=tmp_path) for a in argv], capsys)
    assert status == 2 and message in err and "mech.inp:" not in err and not out


def test_validating_on_the_host_without_a_compiler_is_a_clear_error(tmp_path, capsys, monkeypatch):
    import singe.host

    monkeypatch.setattr(singe.host, "COMPILER", "no-such-c++")
    status, _, err = run(["h2o2", "--validate", "host", "-o", tmp_path], capsys)
    assert status == 2 and "--validate host needs a C++ compiler: 'no-such-c++' is not on PATH" in err


def test_version(capsys):
    status, out, _ = run(["--version"], capsys)
    assert status == 0 and out.strip() == f"singe {singe.__version__}"


@pytest.mark.parametrize("argument, message", [("{tmp}", "is a directory"),
                                               ("{tmp}/none.inp", "no such mechanism file")])
def test_bench_compiler_reports_a_bad_path_without_a_traceback(tmp_path, argument, message):
    result = subprocess.run([sys.executable, "-m", "autotune.bench_compiler", "--mechanisms",
                             argument.format(tmp=tmp_path)], capture_output=True, text=True, cwd=ROOT)
    assert result.returncode == 2 and message in result.stderr and "Traceback" not in result.stderr


def test_bench_compiler_takes_a_path(tmp_path):
    chem = write_mechanism(tmp_path, GOOD)
    result = subprocess.run([sys.executable, "-m", "autotune.bench_compiler", "--mechanisms",
                             str(chem), "--kernels", "viscosity", "--points", "8", "--warps", "2"],
                            capture_output=True, text=True, cwd=ROOT)
    assert result.returncode == 0 and "mech" in result.stdout, result.stderr


def test_a_third_body_efficiency_that_overflows_the_rate_of_progress_is_a_located_error(tmp_path):
    error = load_error(tmp_path, GOOD + "H+O+M=OH+M   5.0E17 -1.0 0.0\nH2O/1e300/\n")
    assert_problem(error, "the rate of progress of reaction 2 overflows", FIRST + 1, 1, hint="efficiencies")


def test_a_single_species_mechanism_compiles_its_chemistry_only(tmp_path, capsys):
    chem = write_mechanism(tmp_path, "", species={"N2": "N2"})
    status, out, err = run([chem, "--warps", "2", "-o", tmp_path / "out"], capsys)
    assert status == 0, err
    assert "reactions: none" in out and "mech_chemistry.cu" in out and "viscosity" not in out


def test_hints_name_the_command_options(tmp_path, capsys):
    chem = write_mechanism(tmp_path, "", species={"N2": "N2", "O2": "O2"})
    (tmp_path / "tran.dat").unlink()
    status, _, err = run([chem, "--kernels", "viscosity", "-o", tmp_path], capsys)
    assert status == 2 and "no transport data for species 'N2'" in err
    assert "use --transport FILE" in err and "transport=" not in err


def test_the_thermo_check_evaluates_the_polynomials_as_the_reference_does():
    import numpy as np

    from singe.frontend.physics import _nasa9_properties
    from singe.reference import thermo

    mech = singe.load_mechanism(ROOT / "mechanisms" / "gri30" / "gri30.inp")
    T = np.array([400.0, 2500.0])
    for k, species in enumerate(mech.species[:10]):
        for j, t in enumerate(T):
            low = t <= species.thermo.T_mid
            a = (0.0, 0.0) + tuple(species.thermo.low if low else species.thermo.high)
            mine = np.concatenate(_nasa9_properties(a, T[j:j + 1]))
            reference = [f(mech, T)[k, j] for f in (thermo.cp_R, thermo.h_RT, thermo.s_R)]
            assert np.allclose(mine, reference, rtol=1e-12, atol=0)
            assert not np.allclose(mine, np.array(reference) * 1.001, rtol=1e-6)  # a wrong value fails


def test_nasa9_ranges_are_checked_too():
    from types import SimpleNamespace

    from singe.errors import ProblemCollector
    from singe.frontend.physics import check_thermo

    # N2 200-1000 K, from Cantera's airNASA9.yaml
    n2 = (22103.71497, -381.846182, 6.08273836, -0.00853091441, 1.384646189e-05, -9.62579362e-09,
          2.519705809e-12, 710.846086, -10.76003744)
    problems = ProblemCollector()
    assert check_thermo("N2", SimpleNamespace(ranges=((200.0, 1000.0, n2),)), Location("air.dat", 4), problems)
    assert not problems.problems
    negative = (0.0, 0.0, -50.0) + n2[3:]
    assert not check_thermo("N2", SimpleNamespace(ranges=((200.0, 1000.0, negative),)), Location("air.dat", 4),
                            problems)
    assert "negative heat capacity cp/R = -5" in problems.problems[0].message
    assert "(200-1000 K polynomial)" in problems.problems[0].message


def test_a_zero_stoichiometric_coefficient_is_a_located_error(tmp_path):
    error = load_error(tmp_path, GOOD + "0H2+O2=>2OH   1.0E10 0.0 0.0\n")
    assert_problem(error, "stoichiometric coefficient 0 of 'H2' must be positive", FIRST + 1, 1)
