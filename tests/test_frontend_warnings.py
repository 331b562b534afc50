"""Legal but suspicious values: located warnings (issue 14, section 3).

A value Cantera accepts and that gives finite outputs, but lies far beyond
those of every published mechanism we have, is accepted with a located
warning in ``Mechanism.warnings`` (printed once by the command); values that
give non-finite outputs, or that Cantera rejects, stay errors
(test_robustness.py).  Each warning is matched with its message and place,
the outputs of the warned mechanism are checked finite, and a companion shows
a value inside the bounds gives no warning.  The NASA7 continuity check is
Cantera's own (``NasaPoly2::validate``): it is compared species by species
with the warnings Cantera gives for the same files.
"""

from __future__ import annotations

import re
import warnings

import cantera as ct
import numpy as np
import pytest
from cantera.ck2yaml import convert

import singe
from singe.cli import main
from singe.reference import kinetics, transport
from cantera_reference import BUNDLED_MECHANISMS
from mechanism_text import write_mechanism

H2O2_SPECIES = {n: n for n in ("H2", "H", "O", "O2", "OH", "H2O", "HO2", "H2O2", "N2", "AR")}
GOOD = "H2+O2=2OH   1.7E13 0.0 47780.0\n"
FIRST = 8  # the first reaction line of write_mechanism's mech.inp
H2O_CARD = 23  # the first line of H2O's entry in write_mechanism's therm.dat
AR_CARD = 39


def assert_warning(mech: singe.Mechanism, message: str, line: int, column: int, file_name: str = "mech.inp"):
    """``mech`` holds one warning matching ``message`` at file:line:col, printed as a warning."""
    matches = [w for w in mech.warnings if re.search(message, w.message)]
    assert len(matches) == 1, [str(w) for w in mech.warnings]
    warning = matches[0]
    assert warning.severity == "warning" and warning.location.file.endswith(file_name)
    assert (warning.location.line, warning.location.column) == (line, column), str(warning)
    assert f"{file_name}:{line}:{column}: warning:" in str(warning)


def assert_outputs_finite(mech: singe.Mechanism):
    """Production rates and (with transport data) every transport coefficient finite."""
    T = np.linspace(300.0, 3000.0, 8)
    P = np.full(8, 101325.0)
    Y = np.full((mech.n_species, 8), 1.0 / mech.n_species)
    outputs = [kinetics.net_production_rates]
    if mech.has_transport:
        outputs += [transport.viscosity, transport.mixture_diffusion, transport.thermal_conductivity]
    with np.errstate(all="raise", under="ignore"):
        for output in outputs:
            assert np.isfinite(output(mech, T, P, Y)).all(), output.__name__


def _edit_thermo(folder, species: str, card: int, field: int, change) -> None:
    """therm.dat with field ``field`` (0-4) of card ``card`` (2-4) of ``species``' entry changed."""
    path = folder / "therm.dat"
    lines = path.read_text().splitlines()
    first = next(i for i, line in enumerate(lines) if line[:18].split() == [species])
    line = lines[first + card - 1]
    value = change(float(line[15 * field:15 * field + 15]))
    lines[first + card - 1] = line[:15 * field] + f"{value:15.8E}" + line[15 * field + 15:]
    path.write_text("\n".join(lines) + "\n")


def _mechanism_with_h2o_high_a1(tmp_path, factor: float):
    chem = write_mechanism(tmp_path, GOOD, species=H2O2_SPECIES)
    _edit_thermo(tmp_path, "H2O", card=2, field=0, change=lambda a1: a1 * factor)
    return chem


def _cantera_continuity_warnings(chem) -> set[tuple[str, str]]:
    """(species, quantity) of the NasaPoly2::validate warnings Cantera gives for the files."""
    out = chem.with_suffix(".yaml")
    convert(str(chem), thermo_file=str(chem.parent / "therm.dat"), out_name=str(out), quiet=True)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        ct.Solution(str(out))
    found = [re.search(r"For species (\S+), discontinuity in (\S+) ", str(w.message)) for w in caught]
    return {(m.group(1), m.group(2)) for m in found if m}


def _singe_continuity_warnings(mech) -> set[tuple[str, str]]:
    found = set()
    for warning in mech.warnings:
        match = re.match(r"thermo of '(\S+)': the polynomials are discontinuous at T_mid = \S+ K \((.*)\)",
                         warning.message)
        if match:
            found |= {(match.group(1), part.split()[0]) for part in match.group(2).split("; ")}
    return found


def test_nasa7_discontinuity_at_t_mid_is_a_located_warning_as_in_cantera(tmp_path):
    chem = _mechanism_with_h2o_high_a1(tmp_path, 1.02)
    mech = singe.load_mechanism(chem)
    assert_warning(mech, r"thermo of 'H2O': the polynomials are discontinuous at T_mid = 1000 K \(cp/R "
                   r"4\.96662 below, 5\.0273 above; h/RT -25\.9574 below, -25\.8968 above; s/R", H2O_CARD, 1,
                   file_name="therm.dat")
    assert _singe_continuity_warnings(mech) == _cantera_continuity_warnings(chem) == \
        {("H2O", "cp/R"), ("H2O", "h/RT"), ("H2O", "s/R")}
    assert_outputs_finite(mech)


def test_nasa7_within_cantera_tolerance_gives_no_warning(tmp_path):
    """Companion: a 0.05 % change of a1 stays within Cantera's tolerances, for both."""
    chem = _mechanism_with_h2o_high_a1(tmp_path, 1.0005)
    assert singe.load_mechanism(chem).warnings == ()
    assert _cantera_continuity_warnings(chem) == set()


def test_nasa7_discontinuity_on_the_yaml_route_is_singe_s_own_warning(tmp_path):
    """The YAML route gives the same warning (singe's check, not Cantera's
    text), located at the species entry of the YAML file."""
    chem = _mechanism_with_h2o_high_a1(tmp_path, 1.02)
    out = tmp_path / "converted.yaml"
    convert(str(chem), thermo_file=str(tmp_path / "therm.dat"), out_name=str(out), quiet=True)
    mech = singe.load_mechanism(out)
    line = out.read_text().splitlines().index("- name: H2O") + 1
    assert_warning(mech, "thermo of 'H2O': the polynomials are discontinuous", line, 3, file_name="converted.yaml")
    assert not any("NasaPoly2" in w.message for w in mech.warnings)


def test_heat_capacity_below_that_of_any_gas_is_a_located_warning(tmp_path):
    chem = write_mechanism(tmp_path, GOOD, species=H2O2_SPECIES)
    _edit_thermo(tmp_path, "AR", card=3, field=2, change=lambda a1: 2.0)  # low-temperature a1: cp/R = 2
    mech = singe.load_mechanism(chem)
    assert_warning(mech, r"thermo of 'AR': heat capacity cp/R = 2 at \d+ K \(low-temperature polynomial\), "
                   "below the 2.5 of any gas", AR_CARD, 1, file_name="therm.dat")
    assert_outputs_finite(mech)


def test_heat_capacity_of_a_monatomic_gas_gives_no_warning(tmp_path):
    """Companion: argon's cp/R = 2.5 gives none."""
    assert singe.load_mechanism(write_mechanism(tmp_path, GOOD, species=H2O2_SPECIES)).warnings == ()


@pytest.mark.parametrize("name", ["gri30", "h2o2"])
def test_bundled_mechanisms_give_no_warning(name):
    folder = BUNDLED_MECHANISMS / name
    assert singe.load_mechanism(folder / f"{name}.inp").warnings == ()


@pytest.mark.parametrize("reaction, message", [
    ("H2+O2=2OH   1.0E40 0.0 0.0", r"the rate constant of reaction 1 reaches 1\.12e\+49 between 300 and 3500 K "
                                   r"\(the mechanism's thermo range\), beyond the 1e\+30 of published mechanisms"),
    ("H2+O2=2OH   1.0E13 -120.0 0.0", r"reaction 1: temperature exponent b = -120, beyond the \+-100 of "
                                      "published mechanisms"),
    ("H2+O2=2OH   1.0E-120 0.0 -120000.0", r"reaction 1: activation energy E/R = -6\.039e\+04 K, more negative "
                                           "than the -50000 K of published mechanisms"),
])
def test_suspicious_but_finite_rate_is_a_located_warning(tmp_path, reaction, message):
    mech = singe.load_mechanism(write_mechanism(tmp_path, reaction + "\n"))
    assert_warning(mech, message, FIRST, 1)
    assert_outputs_finite(mech)


@pytest.mark.parametrize("reaction", ["H2+O2=2OH   1.0E20 0.0 0.0", "H2+O2=2OH   1.0E13 -50.0 0.0",
                                      "H2+O2=2OH   1.0E-20 0.0 -30000.0"])
def test_rates_within_the_published_bounds_give_no_warning(tmp_path, reaction):
    """Companion: rates and parameters like those of published mechanisms."""
    assert singe.load_mechanism(write_mechanism(tmp_path, reaction + "\n")).warnings == ()


def test_plog_entries_are_checked_too(tmp_path):
    reactions = "H2+O2=2OH 1.0 0.0 0.0\n  PLOG / 0.1 1.0E13 0.0 0.0 /\n  PLOG / 10.0 1.0E13 -150.0 0.0 /\n"
    mech = singe.load_mechanism(write_mechanism(tmp_path, reactions))
    assert_warning(mech, r"reaction 1: PLOG at 10 atm: temperature exponent b = -150", FIRST, 1)


def test_the_command_prints_each_warning_once(tmp_path, capsys):
    chem = _mechanism_with_h2o_high_a1(tmp_path, 1.02)
    assert main([str(chem), "--kernels", "chemistry", "--dump", "graph"]) == 0
    err = capsys.readouterr().err
    assert err.count("warning: thermo of 'H2O': the polynomials are discontinuous") == 1
    assert f"therm.dat:{H2O_CARD}:1: warning:" in err


THIRD_BODY_DUPLICATES = """
phases:
- name: gas
  thermo: ideal-gas
  elements: [H, O, Ar]
  species: [{h2o2.yaml/species: [H2, H, O2, AR]}]
  kinetics: gas
reactions:
- equation: 2 H + M <=> H2 + M
  type: three-body
  rate-constant: {A: 1.0e+18, b: -1.0, Ea: 0.0}
- equation: 2 H + H2 <=> 2 H2
  rate-constant: {A: 9.0e+16, b: -0.6, Ea: 0.0}
"""


def test_cantera_warnings_of_a_yaml_file_are_located_warnings(tmp_path):
    """Cantera warns about a three-body reaction duplicating an explicit one
    (H2 as M); singe keeps the warning, at the line Cantera names."""
    path = tmp_path / "tb.yaml"
    path.write_text(THIRD_BODY_DUPLICATES)
    mech = singe.load_mechanism(path)
    assert_warning(mech, "Cantera: Kinetics::checkDuplicates: Undeclared duplicate third body reactions", 9, 3,
                   file_name="tb.yaml")
    assert_outputs_finite(mech)


def test_a_negative_heat_capacity_stays_an_error_because_outputs_are_not_finite(tmp_path):
    """Why cp/R <= 0 is an error and 0 < cp/R < 2.4 a warning: the mixture's
    thermal conductivity (Eucken's internal-energy term) is NaN with the first,
    finite with the second."""
    import dataclasses

    chem = write_mechanism(tmp_path, GOOD, species=H2O2_SPECIES)
    good = singe.load_mechanism(chem)
    k = good.species_index("H2O")
    T, P, Y = np.linspace(300.0, 900.0, 4), np.full(4, 101325.0), np.full((good.n_species, 4), 0.1)
    for cp, finite in ((-1.0, False), (1.0, True)):
        thermo = good.species[k].thermo
        nasa = dataclasses.replace(thermo, low=(cp, 0.0, 0.0, 0.0, 0.0) + thermo.low[5:])
        species = list(good.species)
        species[k] = dataclasses.replace(species[k], thermo=nasa)
        mech = dataclasses.replace(good, species=tuple(species))
        with np.errstate(all="ignore"):
            assert np.isfinite(transport.thermal_conductivity(mech, T, P, Y)).all() == finite, cp
    _edit_thermo(tmp_path, "H2O", card=3, field=2, change=lambda a1: -1.0)
    with pytest.raises(singe.SingeInputError, match="thermo of 'H2O': negative heat capacity"):
        singe.load_mechanism(chem)
