"""CHEMKIN files as Cantera reads them (issue 14, section 1): what Cantera's
ck2yaml accepts singe reads to the same numbers; what it rejects singe
rejects with a located error; what ``--permissive`` tolerates becomes a
warning."""

from __future__ import annotations

import pathlib

import cantera as ct
import numpy as np
import pytest
from cantera.ck2yaml import convert

import singe
from singe.cli import main
from singe.errors import SingeInputError
from singe.reference import kinetics, thermo
from mechanism_text import thermo_text, transport_text, write_mechanism
from test_frontend_errors import FIRST, assert_problem, load_error

H2O2_SPECIES = ("H2", "H", "O", "O2", "OH", "H2O", "HO2", "H2O2", "N2", "AR")
RATE_TOLERANCE = 1e-12


def cantera_of(chem: pathlib.Path, **options) -> ct.Solution:
    """The Solution Cantera makes of a CHEMKIN file and the therm.dat beside it (ck2yaml)."""
    out = chem.with_suffix(".yaml")
    convert(str(chem), thermo_file=str(chem.parent / "therm.dat"), out_name=str(out), quiet=True, **options)
    return ct.Solution(str(out))


def rate_constants(mech, gas: ct.Solution, T: float, P: float) -> tuple[np.ndarray, np.ndarray]:
    """Forward rate constants of singe's reference and Cantera at one state."""
    gas.TPX = T, P, "H2:1, O2:1, H2O:0.5, N2:2, AR:0.3"
    C = np.array([gas.concentrations[gas.species_index(name)] for name in mech.species_names])
    return kinetics.forward_rate_constants(mech, T, P, C[:, None])[:, 0], gas.forward_rate_constants


def assert_rates_match(mech, gas: ct.Solution, scale: float = 1.0):
    for T in (400.0, 1200.0, 2500.0):
        for P_atm in (0.05, 1.0, 30.0):
            ours, theirs = rate_constants(mech, gas, T, P_atm * 101325.0)
            np.testing.assert_allclose(ours * scale, theirs, rtol=RATE_TOLERANCE)


# -- PLOG written with +M ------------------------------------------------------

PLOG_PLUS_M = """
H+O2+M=HO2+M   1.0E12 0.0 0.0
  PLOG / 0.1  2.0E18 -1.0 100.0 /
  PLOG / 10.0 3.0E19 -1.2 300.0 /
H2+O2=2OH 1.7E13 0.0 47780.0
"""


def test_plog_with_plus_m_is_evaluated_as_cantera_does(tmp_path):
    chem = write_mechanism(tmp_path, PLOG_PLUS_M)
    mech = singe.load_mechanism(chem)
    assert mech.reactions[0].kind == "plog" and mech.reactions[0].third_body is None
    assert_rates_match(mech, cantera_of(chem))


def test_plog_with_plus_m_comparison_catches_the_third_order_units(tmp_path):
    """Companion: the A factor converted as third order (the old reading) is 1000x off."""
    chem = write_mechanism(tmp_path, PLOG_PLUS_M)
    mech, gas = singe.load_mechanism(chem), cantera_of(chem)
    ours, theirs = rate_constants(mech, gas, 1200.0, 101325.0)
    assert ours[0] == pytest.approx(theirs[0], rel=RATE_TOLERANCE)
    assert not np.allclose(ours[0] * 1e-3, theirs[0], rtol=1e-3)


# -- UNITS on a reaction ------------------------------------------------------

UNITS_REACTIONS = """
H2+O2=2OH 1.7E13 0.0 24000.0
  UNITS / CAL/MOL /
H+O2=O+OH 2.65E16 -0.6707 8577.0
  UNITS / MOLES /
HO2+H=2OH 7.08E7 0.0 151.0
  UNITS / MOLECULES /
H2O2+H=HO2+H2 1.0E12 0.0 1812.0
"""


def test_reaction_units_option_as_cantera(tmp_path):
    chem = write_mechanism(tmp_path, UNITS_REACTIONS, header="REACTIONS KELVINS")
    mech = singe.load_mechanism(chem)
    assert mech.reactions[0].rate.Ea_R == pytest.approx(24000.0 * 4184.0 / 8314.46261815324)
    assert mech.reactions[1].rate.Ea_R == pytest.approx(8577.0)  # MOLES keeps KELVINS
    assert mech.reactions[2].rate.Ea_R == pytest.approx(151.0)
    assert mech.reactions[3].rate.Ea_R == pytest.approx(1812.0)
    assert_rates_match(mech, cantera_of(chem))


def test_reaction_units_option_changes_the_numbers(tmp_path):
    """Companion: without the option, the first reaction's E is read in kelvins."""
    plain = UNITS_REACTIONS.replace("  UNITS / CAL/MOL /\n", "")
    mech = singe.load_mechanism(write_mechanism(tmp_path, plain, header="REACTIONS KELVINS"))
    assert mech.reactions[0].rate.Ea_R == pytest.approx(24000.0)


def test_unknown_reaction_unit(tmp_path):
    error = load_error(tmp_path, "H2+O2=2OH 1.7E13 0.0 47780.0\n  UNITS / FURLONGS /\n")
    assert_problem(error, "unknown unit 'FURLONGS'", FIRST + 1, 11)


# -- names and colliders --------------------------------------------------------

ODD_NAMES = {"H2": "H2", "H": "H", "O": "O", "O2": "O2", "OH": "OH", "H2O": "H2O", "HO2": "HO2",
             "eq=uals": "H2O2", "SP)X": "N2", "AR": "AR"}


def test_species_names_holding_equals_and_parenthesis(tmp_path):
    reactions = """
H+O2(+SP)X)<=>HO2(+SP)X)      4.65E+12   0.44  0.0
  LOW / 1.737E+19 -1.23 0.0 /
eq=uals+H=HO2+H2              1.0E+12    0.0   3600.0
eq=uals(+m)<=>2OH(+M)         2.00E+12   0.9   48749.0
  LOW / 2.49E+24 -2.3 48749.0 /
  H2O/10.0/
"""
    chem = write_mechanism(tmp_path, reactions, species=ODD_NAMES)
    mech = singe.load_mechanism(chem)
    first, second, third = mech.reactions
    assert first.kind == "falloff" and first.third_body.collider == "SP)X"
    assert second.reactants == (("eq=uals", 1.0), ("H", 1.0))
    assert third.kind == "falloff" and third.third_body.collider is None
    gas = cantera_of(chem)
    gas.TPX = 1000.0, 101325.0, "H2:1, O2:1, SP)X:1, eq=uals:0.1"
    C = np.array([gas.concentrations[gas.species_index(n)] for n in mech.species_names])
    np.testing.assert_allclose(kinetics.forward_rate_constants(mech, 1000.0, 101325.0, C[:, None])[:, 0],
                               gas.forward_rate_constants, rtol=RATE_TOLERANCE)


def test_undeclared_collider_still_reported(tmp_path):
    error = load_error(tmp_path, "H+O2(+XX)<=>HO2(+XX) 4.65E+12 0.44 0.0\n  LOW / 1.7E+19 -1.23 0.0 /\n")
    assert_problem(error, "undeclared species 'XX'", FIRST, 1)


# -- sections -----------------------------------------------------------------

def test_thermo_section_without_end_before_reactions(tmp_path):
    species = {n: n for n in H2O2_SPECIES}
    embedded = thermo_text(species, end="")
    chem = tmp_path / "mech.inp"
    chem.write_text(f"ELEMENTS\nH O N AR\nEND\nSPECIES\n{' '.join(species)}\nEND\n{embedded}"
                    "REACTIONS\nH2+O2=2OH 1.7E13 0.0 47780.0\nEND\n")
    mech = singe.load_mechanism(chem, qss=False)
    assert len(mech.species) == 10 and len(mech.reactions) == 1


def test_three_body_beside_falloff_is_not_a_duplicate(tmp_path):
    reactions = """
H+O2+M<=>HO2+M              1.0E+18 -0.8 0.0
H+O2(+M)<=>HO2(+M)          4.65E+12 0.44 0.0
  LOW / 1.737E+19 -1.23 0.0 /
"""
    chem = write_mechanism(tmp_path, reactions)
    mech = singe.load_mechanism(chem)
    assert [r.kind for r in mech.reactions] == ["three-body", "falloff"]
    assert_rates_match(mech, cantera_of(chem))


def test_two_three_body_copies_are_duplicates(tmp_path):
    """Companion: the same type twice is a duplicate."""
    error = load_error(tmp_path, "H+O2+M<=>HO2+M 1.0E+18 -0.8 0.0\nH+O2+M<=>HO2+M 2.0E+18 -0.8 0.0\n")
    assert_problem(error, "duplicate reaction not marked DUPLICATE", FIRST + 1, 1)


@pytest.mark.parametrize("second, how", [("2OH<=>H2+O2 1.0E13 0.0 0.0", ", written in reverse"),
                                         ("2H2+2O2<=>4OH 1.0E13 0.0 0.0", "")])
def test_duplicates_reversed_or_scaled(tmp_path, second, how):
    error = load_error(tmp_path, f"H2+O2<=>2OH 1.7E13 0.0 47780.0\n{second}\n")
    assert_problem(error, f"duplicate reaction not marked DUPLICATE .same as reaction 1 at line 8{how}.$",
                   FIRST + 1, 1)


def test_irreversible_reactions_in_opposite_directions_are_not_duplicates(tmp_path):
    mech = singe.load_mechanism(write_mechanism(tmp_path, "H2+O2=>2OH 1.7E13 0.0 47780.0\n"
                                                           "2OH=>H2+O2 1.0E13 0.0 0.0\n"))
    assert len(mech.reactions) == 2


# -- elements -----------------------------------------------------------------

def _card1_with(text: str, composition: str) -> str:
    """Card 1 of a thermo entry with columns 25-44 replaced."""
    return text[:24] + f"{composition:<20}" + text[44:]


def _write_thermo(folder: pathlib.Path, species: dict[str, str], edit) -> None:
    """therm.dat of ``species`` with ``edit(name, lines) -> lines`` applied per entry."""
    text = thermo_text(species).splitlines()
    out, i = [], 0
    while i < len(text):
        line = text[i]
        if len(line) >= 80 and line[79] == "1":
            out.extend(edit(line[:18].split()[0], text[i:i + 4]))
            i += 4
        else:
            out.append(line)
            i += 1
    (folder / "therm.dat").write_text("\n".join(out) + "\n")


def test_every_element_and_user_weights(tmp_path):
    species = {"H2": "H2", "O2": "O2", "D2": "H2", "PTO": "OH", "BRH": "OH"}
    chem = write_mechanism(tmp_path, "D2+O2=>D2+O2 1.0E10 0.0 0.0\n", species=species,
                           elements="H O PT BR D/2.014/")

    def edit(name, lines):
        formula = {"D2": "D   2", "PTO": "PT  1O   1", "BRH": "BR  1H   1"}.get(name)
        return [_card1_with(lines[0], formula)] + lines[1:] if formula else lines
    _write_thermo(tmp_path, species, edit)
    mech = singe.load_mechanism(chem, transport=None)
    weights = dict(zip(mech.species_names, mech.molecular_weights))
    assert weights["D2"] == pytest.approx(2 * 2.014)
    gas = cantera_of(chem)
    for name in ("PTO", "BRH"):
        assert weights[name] == pytest.approx(gas.molecular_weights[gas.species_index(name)], rel=1e-14)


def test_element_without_a_standard_weight(tmp_path):
    error = load_error(tmp_path, "H2+O2=2OH 1.7E13 0.0 47780.0\n", elements="H O N AR TC")
    assert_problem(error, "element 'TC' has no standard atomic weight", 2, 10, hint="TC/weight/")


def test_exponent_stoichiometric_coefficient(tmp_path):
    chem = write_mechanism(tmp_path, "H2+5.0E-1O2=>H2O 1.0E10 0.0 10000.0\n  FORD / O2 0.25 /\n")
    mech = singe.load_mechanism(chem)
    assert mech.reactions[0].reactants == (("H2", 1.0), ("O2", 0.5))
    assert_rates_match(mech, cantera_of(chem))


def test_ampersand_continuation_and_counts_past_column_80(tmp_path):
    species = {n: n for n in H2O2_SPECIES}

    def edit(name, lines):
        if name == "H2O2":  # '&': the element list continues on the next line
            return [_card1_with(lines[0], "") + "&", "H 2 O 2"] + lines[1:]
        if name == "HO2":  # fields of 10 columns after column 80
            return [_card1_with(lines[0], "") + f"{'H':<2}{1:>8}{'O':<2}{2:>8}"] + lines[1:]
        return lines
    chem = write_mechanism(tmp_path, "H2O2+H=HO2+H2 1.0E12 0.0 3600.0\n", species=species)
    _write_thermo(tmp_path, species, edit)
    mech = singe.load_mechanism(chem)
    gas = cantera_of(chem)
    for name in ("H2O2", "HO2"):
        composition = dict(mech.species[mech.species_index(name)].composition)
        assert composition == {"H": float(gas.n_atoms(name, "H")), "O": float(gas.n_atoms(name, "O"))}
    np.testing.assert_allclose(mech.molecular_weights, gas.molecular_weights, rtol=1e-14)


@pytest.mark.filterwarnings("ignore:NasaPoly2::validate")
def test_single_intermediate_temperature_on_the_thermo_line(tmp_path):
    species = {n: n for n in H2O2_SPECIES}
    chem = write_mechanism(tmp_path, "H2+O2=2OH 1.7E13 0.0 47780.0\n", species=species)
    (tmp_path / "therm.dat").write_text(thermo_text(species, header="THERMO 1400.0\n"))
    mech = singe.load_mechanism(chem)
    assert {s.thermo.T_mid for s in mech.species} == {1400.0}
    (tmp_path / "standard.dat").write_text(thermo_text(species, header="THERMO\n 300.0 1400.0 5000.0\n"))
    out = tmp_path / "single.yaml"
    convert(str(chem), thermo_file=str(tmp_path / "standard.dat"), out_name=str(out), quiet=True,
            single_intermediate_temperature=True)
    gas = ct.Solution(str(out))
    T = np.array([1200.0])
    for name in species:
        gas.TP = 1200.0, 101325.0
        k = mech.species_index(name)
        assert thermo.cp_R(mech, T)[k, 0] == pytest.approx(gas.standard_cp_R[gas.species_index(name)], rel=1e-13)


def test_single_intermediate_temperature_changes_cp(tmp_path):
    """Companion: with each card's own T_mid (1000 K), cp at 1200 K differs."""
    species = {n: n for n in H2O2_SPECIES}
    chem = write_mechanism(tmp_path, "H2+O2=2OH 1.7E13 0.0 47780.0\n", species=species)
    standard = singe.load_mechanism(chem)
    (tmp_path / "therm.dat").write_text(thermo_text(species, header="THERMO 1400.0\n"))
    single = singe.load_mechanism(chem)
    T = np.array([1200.0])
    assert np.max(np.abs(thermo.cp_R(standard, T) / thermo.cp_R(single, T) - 1.0)) > 1e-6


# -- rejected as Cantera rejects them ---------------------------------------------

def _thermo_error(tmp_path, edit, **load) -> SingeInputError:
    species = {n: n for n in H2O2_SPECIES}
    chem = write_mechanism(tmp_path, "H2+O2=2OH 1.7E13 0.0 47780.0\n", species=species)
    _write_thermo(tmp_path, species, edit)
    with pytest.raises(SingeInputError) as info:
        singe.load_mechanism(chem, **load)
    return info.value


def test_blank_element_count(tmp_path):
    error = _thermo_error(tmp_path, lambda name, lines: [_card1_with(lines[0], "H   2O   ")] + lines[1:]
                          if name == "H2O" else lines)
    assert_problem(error, "element 'O' has a blank count", 23, 32, file_name="therm.dat")


def test_four_digit_element_count(tmp_path):
    error = _thermo_error(tmp_path, lambda name, lines: [_card1_with(lines[0], "H 1000O   1")] + lines[1:]
                          if name == "H2O" else lines)
    assert_problem(error, "4-digit element count", 23, 30, file_name="therm.dat")


def _duplicated_thermo(name, lines):
    if name == "OH":
        changed = lines[1][:14] + "9" + lines[1][15:]  # a second, different entry
        return lines + [lines[0], changed] + lines[2:]
    return lines


def test_duplicate_thermo_entry(tmp_path):
    error = _thermo_error(tmp_path, _duplicated_thermo)
    assert_problem(error, "second thermo entry for species 'OH' .the first is at line 19", 23, 1,
                   file_name="therm.dat", hint="--permissive")


def test_duplicate_thermo_entry_permissive_keeps_the_first(tmp_path):
    species = {n: n for n in H2O2_SPECIES}
    chem = write_mechanism(tmp_path, "H2+O2=2OH 1.7E13 0.0 47780.0\n", species=species)
    reference = singe.load_mechanism(chem)
    _write_thermo(tmp_path, species, _duplicated_thermo)
    mech = singe.load_mechanism(chem, permissive=True)
    k = mech.species_index("OH")
    assert mech.species[k].thermo == reference.species[k].thermo
    (warning,) = mech.warnings
    assert warning.severity == "warning" and (warning.location.line, warning.location.column) == (23, 1)
    assert "therm.dat:23:1: warning: second thermo entry for species 'OH'" in str(warning)


def _embedded_oh_thermo(tmp_path) -> pathlib.Path:
    """mech.inp with a THERMO section holding an OH entry whose low-temperature
    a1 (4) differs from the OH entry of therm.dat beside it (3.99...; the
    section's card 1 is line 9)."""
    chem = write_mechanism(tmp_path, "H2+O2=2OH 1.7E13 0.0 47780.0\n", species={n: n for n in H2O2_SPECIES})
    section = thermo_text({"OH": "OH"}, header="THERMO\n   300.000  1000.000  5000.000\n").splitlines()
    section[4] = section[4][:30] + " 4.00000000E+00" + section[4][45:]
    chem.write_text(chem.read_text().replace("REACTIONS", "\n".join(section) + "\nREACTIONS", 1))
    return chem


def test_thermo_entry_in_the_file_after_an_embedded_one_is_an_error_as_in_ck2yaml(tmp_path):
    chem = _embedded_oh_thermo(tmp_path)
    with pytest.raises(SingeInputError) as info:
        singe.load_mechanism(chem)
    assert_problem(info.value, r"second thermo entry for species 'OH' \(the first is at .*mech.inp:9\)", 19, 1,
                   file_name="therm.dat", hint="--permissive")
    with pytest.raises(Exception, match="additional thermo entry for species 'OH'"):  # Cantera's converter
        convert(str(chem), thermo_file=str(tmp_path / "therm.dat"), out_name=str(tmp_path / "out.yaml"),
                quiet=True)


def test_permissive_keeps_the_embedded_thermo_entry_as_ck2yaml(tmp_path):
    """With --permissive, singe and ck2yaml both keep the chemistry file's entry
    (low-temperature a1 = 4, not therm.dat's 3.99)."""
    chem = _embedded_oh_thermo(tmp_path)
    mech = singe.load_mechanism(chem, permissive=True)
    (warning,) = [w for w in mech.warnings if "thermo entry" in w.message]  # (and a1 = 4 is discontinuous at T_mid)
    assert str(warning).startswith(f"{tmp_path / 'therm.dat'}:19:1: warning: second thermo entry for species 'OH'")
    convert(str(chem), thermo_file=str(tmp_path / "therm.dat"), out_name=str(tmp_path / "out.yaml"),
            quiet=True, permissive=True)
    gas = ct.Solution(str(tmp_path / "out.yaml"))
    k = mech.species_index("OH")
    kept = thermo.cp_R(mech, np.array([300.0]))[k, 0]
    assert kept == pytest.approx(gas.species("OH").thermo.cp(300.0) / ct.gas_constant, rel=1e-12)
    assert mech.species[k].thermo.low[0] == 4.0
    (tmp_path / "plain").mkdir()
    plain = singe.load_mechanism(write_mechanism(tmp_path / "plain", "H2+O2=2OH 1.7E13 0.0 47780.0\n",
                                                 species={n: n for n in H2O2_SPECIES}))
    assert kept != pytest.approx(thermo.cp_R(plain, np.array([300.0]))[k, 0], rel=1e-6)  # therm.dat's differs


def test_duplicate_species_declaration(tmp_path):
    chem = write_mechanism(tmp_path, "H2+O2=2OH 1.7E13 0.0 47780.0\n")
    text = chem.read_text().replace("N2 AR\n", "N2 AR OH\n")
    chem.write_text(text)
    with pytest.raises(SingeInputError) as info:
        singe.load_mechanism(chem)
    assert_problem(info.value, "species 'OH' declared twice .first at line 5", 5, 33, hint="--permissive")
    mech = singe.load_mechanism(chem, permissive=True)
    assert mech.species_names.count("OH") == 1
    assert [w.message for w in mech.warnings] == ["species 'OH' declared twice (first at line 5)"]


def test_cli_permissive_prints_each_warning_once(tmp_path, capsys):
    species = {n: n for n in H2O2_SPECIES}
    chem = write_mechanism(tmp_path, "H2+O2=2OH 1.7E13 0.0 47780.0\n", species=species)
    _write_thermo(tmp_path, species, _duplicated_thermo)
    assert main([str(chem), "--kernels", "chemistry", "--dump", "graph"]) == 2
    assert "error: second thermo entry" in capsys.readouterr().err
    assert main([str(chem), "--permissive", "--kernels", "chemistry", "--dump", "graph"]) == 0
    err = capsys.readouterr().err
    assert err.count("warning: second thermo entry for species 'OH'") == 1 and "therm.dat:23:1" in err


@pytest.mark.parametrize("records, message, line", [
    ("OH 1 80.0 2.75 0.0 0.0 0.0\nOH 1 80.0 2.75 0.0 0.0 0.0\n", "duplicate transport record for species 'OH'", 2),
    ("OH 1 80.0 2.75 0.0 0.0 0.0\nOH 1 81.0 2.75 0.0 0.0 0.0\n", "conflicting transport record for species 'OH'", 2),
])
def test_duplicate_or_conflicting_transport(tmp_path, records, message, line):
    chem = write_mechanism(tmp_path, "H2+O2=2OH 1.7E13 0.0 47780.0\n")
    others = {n: n for n in H2O2_SPECIES if n != "OH"}
    (tmp_path / "tran.dat").write_text(records + transport_text(others))
    with pytest.raises(SingeInputError) as info:
        singe.load_mechanism(chem)
    assert_problem(info.value, message, line, 1, file_name="tran.dat")


def test_every_species_missing_from_the_transport_file_is_named(tmp_path):
    chem = write_mechanism(tmp_path, "H2+O2=2OH 1.7E13 0.0 47780.0\n")
    (tmp_path / "tran.dat").write_text(transport_text({n: n for n in H2O2_SPECIES if n not in ("OH", "AR")}))
    with pytest.raises(SingeInputError) as info:
        singe.load_mechanism(chem)
    assert_problem(info.value, "no transport data for species 'OH' in .*tran.dat", 5, 11)
    assert_problem(info.value, "no transport data for species 'AR'", 5, 30)
    assert len(info.value.problems) == 2


def test_cheb_and_plog_on_one_reaction(tmp_path):
    error = load_error(tmp_path, "H+HO2=2OH 1.0 0.0 0.0\n  PLOG / 1.0 1.0E13 0.0 0.0 /\n"
                                 "  TCHEB / 300 2000 /  PCHEB / 0.1 10 /\n  CHEB / 1 1 13.0 /\n")
    assert_problem(error, "parameters of more than one rate type: PLOG and CHEB", FIRST, 1)


@pytest.mark.parametrize("given, missing", [("  TCHEB / 300 2000 /\n", "PCHEB"), ("", "TCHEB and PCHEB")])
def test_cheb_without_its_ranges(tmp_path, given, missing):
    error = load_error(tmp_path, f"H+HO2=2OH 1.0 0.0 0.0\n{given}  CHEB / 1 1 13.0 /\n")
    line = FIRST + 1 + given.count("\n")
    assert_problem(error, f"CHEB without {missing}$", line, 3)


def test_duplicate_efficiency(tmp_path):
    error = load_error(tmp_path, "H+O+M = OH+M 5.0E17 -1.0 0.0\n   H2O/6.0/ AR/0.7/ H2O/5.0/\n")
    assert_problem(error, "efficiency of 'H2O' given twice", FIRST + 1, 21)


@pytest.mark.parametrize("equation, message, column", [
    ("H2+O2+ = 2OH", "stray '\\+' on the reactant side", 6),
    ("H2+O2 = 2OH+", "stray '\\+' on the product side", 12),
    ("=> 2OH", "reaction has no reactants", 1),
])
def test_equation_side_problems(tmp_path, equation, message, column):
    error = load_error(tmp_path, f"{equation} 1.7E13 0.0 47780.0\n")
    assert_problem(error, message, FIRST, column)


def test_arrow_that_is_not_chemkin(tmp_path):
    error = load_error(tmp_path, "H2+O2<->2OH 1.7E13 0.0 47780.0\n")
    assert_problem(error, "'<->' is not a CHEMKIN arrow", FIRST, 6, hint="<=>")
