"""The frontend reads real mechanisms as Cantera does, and every CHEMKIN form."""

from __future__ import annotations

import math

import numpy as np
import pytest

import singe
from singe.constants import GAS_CONSTANT, ONE_ATM
from conftest import load
from cantera_reference import cantera_solution
from mechanism_text import thermo_text, transport_text, write_mechanism

EXPECTED = {  # name: (species, CHEMKIN reactions, Cantera reactions, QSSA, stiff)
    "gri30": (53, 325, 325, 0, 0),
    "h2o2": (10, 29, 29, 0, 0),
    "dme": (39, 175, 175, 9, 22),
    "heptane": (68, 283, 526, 16, 27),
    "dodecane": (53, 268, 268, 18, 0),
}


def test_counts_match_cantera(mechanism_name, mechanism):
    gas = cantera_solution(mechanism_name)
    n_species, n_chemkin, n_cantera, n_qss, n_stiff = EXPECTED[mechanism_name]
    assert mechanism.n_species == gas.n_species == n_species
    assert len(mechanism.reactions) == n_chemkin
    # Cantera splits every reaction with an explicit REV into two irreversible ones.
    split = sum(r.reverse_rate is not None for r in mechanism.reactions)
    assert len(mechanism.reactions) + split == gas.n_reactions == n_cantera
    assert (len(mechanism.qss_species), len(mechanism.stiff_species)) == (n_qss, n_stiff)
    assert len(mechanism.transported_species) == n_species - n_qss


def test_species_and_weights_match_cantera(mechanism_name, mechanism):
    gas = cantera_solution(mechanism_name)
    assert mechanism.species_names == gas.species_names
    np.testing.assert_allclose(mechanism.molecular_weights, gas.molecular_weights, rtol=1e-14)


def test_species_weights_would_catch_chemkin_atomic_weights(mechanism_name, mechanism):
    """Companion: CHEMKIN's H weight (1.00797) moves the weights past the tolerance."""
    gas = cantera_solution(mechanism_name)
    hydrogen = np.array([dict(s.composition).get("H", 0.0) for s in mechanism.species])
    chemkin = mechanism.molecular_weights + hydrogen * (1.00797 - 1.008)
    assert not np.allclose(chemkin, gas.molecular_weights, rtol=1e-14, atol=0)


def test_reaction_stoichiometry_matches_cantera():
    """Every DME reaction has Cantera's reactants and products (CHEMKIN as written)."""
    mech, gas = load("dme"), cantera_solution("dme")
    for reaction, theirs in zip(mech.reactions, gas.reactions()):
        assert dict(reaction.reactants) == theirs.reactants, reaction.equation
        assert dict(reaction.products) == theirs.products, reaction.equation
        assert reaction.reversible == theirs.reversible


def test_qss_lists_and_transported_order():
    mech = load("dme")
    assert mech.qss_species == ("CH2", "CH2(S)", "C2H3", "HCO", "CH2OH", "CH3OCH2", "HOCH2O", "CH3OCH2O",
                                "CH2OCH2O2H")
    assert mech.stiff_species[:3] == ("H", "H2", "CH3")  # list order kept: it matters for sequential removal
    assert mech.transported_species == [n for n in mech.species_names if n not in mech.qss_species]
    assert mech.transported_species[-1] == "N2"


def test_heptane_lower_case_and_rev():
    mech = load("heptane")
    assert "ch2(s)" in mech.species_names and "c2h3o1-2" in mech.species_names
    rev = [r for r in mech.reactions if r.reverse_rate is not None]
    assert len(rev) == 243 and all(r.reversible for r in rev)


def test_dodecane_embedded_transport_and_commented_thermo():
    mech = load("dodecane")
    assert mech.has_transport
    assert mech.species[mech.species_index("NC12H26")].transport.well_depth == pytest.approx(789.98)
    assert mech.species[mech.species_index("NC12H26")].thermo.T_low == 300.0


FEATURES = """
H2+O2 = 2OH                              1.70E+13   0.0   47.780
H+O2 <=> O+OH                            2.65E+16  -0.6707 17.041
H2 + .5O2 => H2O                         1.0E+10    0.0   10.0
  FORD / O2 0.25 /  DUP
1.5H2+0.75O2=>1.5H2O                     1.0E+09    0.0   10.0
  DUP
H+O+M = OH+M                             5.00E+17  -1.0   0.0
  H2/2.0/ H2O/6.0/  AR/0.7/
H+O2(+M) <=> HO2(+M)                     4.65E+12   0.44  0.0
  LOW / 1.737E+19 -1.23 0.0 /
  TROE / 0.67 1.0E-30 1.0E+30 1.0E+30 /
  H2O/10.0/ AR/0.0/
H2O2 (+ M) = 2OH (+ M)                   2.00E+12   0.9   48.749
  LOW / 2.49E+24 -2.3 48.749 /
  TROE / 0.0 570.0 0.0 1.E+30 /
H2O2(+H2O)=2OH(+H2O)                     2.00E+12   0.9   48.749
  LOW / 1.0E+24 -2.3 48.749 /
  SRI / 0.5 100.0 1000.0 /
O+OH(+M)=HO2(+M)                         1.0E+13   0.0    0.0
  LOW / 2.0E+18 -1.0 0.0 /
  SRI / 0.5 100.0 1000.0 1.1 0.2 /
H+OH(+M)=H2O(+M)                         1.0E+15  -1.0    0.0
  HIGH / 1.0E+12 0.5 1.0 /
HO2+H=H2+O2                              1.66E+13   0.0   0.820
  REV / 3.0E+13 0.0 55.0 /
HO2+H=2OH                                7.08E+13   0.0   0.300
  REV / 0 0 0 /
H2O2+H=>HO2+H2                           1.0E+12   0.0    3.6
  DUP
H2O2+H=>HO2+H2                           2.0E+12   0.0    4.6
  DUPLICATE
H+HO2 = O+H2O                            1.0E+12   0.0    0.0
  PLOG / 0.1    1.0E+12  0.0  1.0 /
  PLOG / 1.0    2.0E+12  0.0  1.0 /
  PLOG / 1.0    3.0E+11  0.5  2.0 /
  PLOG / 10.0   4.0E+12  0.0  1.0 /
O+HO2(+M)=OH+O2(+M)                      1.0E+00   0.0    0.0
  TCHEB / 500.0 2000.0 /   PCHEB / 0.01 50.0 /
  CHEB / 4 2 /
  CHEB / 8.0 0.1 /
  CHEB / -0.2 0.03 0.01 -0.02 /
  CHEB / 0.001 0.002 /
O+H2O=>2OH                               1.0E+13   0.0   10.0
  LT / 10.0 -5.0 /
H2+O <=> H+OH                            1.0E+13   0.0   10.0
  RORD / OH 1.5 /
O2*+H = O2+H                             1.0E+10   0.0    0.0
O2+X + H = O2+H                          1.0E+10   0.0    0.0
OH(X)+H2O,2 = OH + H2O                   1.0E+10   0.0    0.0
"""
FEATURE_SPECIES = {n: n for n in ("H2", "H", "O", "O2", "OH", "H2O", "HO2", "H2O2", "N2", "AR")}
FEATURE_SPECIES.update({"O2*": "O2", "O2+X": "O2", "OH(X)": "OH", "H2O,2": "H2O"})


@pytest.fixture(scope="module")
def features(tmp_path_factory):
    folder = tmp_path_factory.mktemp("features")
    return singe.load_mechanism(write_mechanism(folder, FEATURES, FEATURE_SPECIES,
                                                header="REACTIONS KCAL/MOLE"))


def _reaction(mech, equation):
    return next(r for r in mech.reactions if r.equation.replace(" ", "") == equation.replace(" ", ""))


def test_units_and_arrows(features):
    first = features.reactions[0]
    assert first.reactants == (("H2", 1.0), ("O2", 1.0)) and first.products == (("OH", 2.0),)
    assert first.rate.A == pytest.approx(1.70e13 * 1e-3)
    assert first.rate.Ea_R == pytest.approx(47.780 * 4184e3 / GAS_CONSTANT, rel=1e-15)
    assert features.reactions[1].reversible and not features.reactions[2].reversible


def test_fractional_prefixed_stoichiometry_and_ford(features):
    half = features.reactions[2]
    assert half.reactants == (("H2", 1.0), ("O2", 0.5)) and half.orders == (("O2", 0.25),)
    assert features.reactions[3].reactants == (("H2", 1.5), ("O2", 0.75))
    assert _reaction(features, "H2+O <=> H+OH").reverse_orders == (("OH", 1.5),)


def test_three_body_and_falloff_forms(features):
    three = features.reactions[4]
    assert three.kind == "three-body" and dict(three.third_body.efficiencies) == {"H2": 2.0, "H2O": 6.0, "AR": 0.7}
    assert three.rate.A == pytest.approx(5.0e17 * 1e-6)  # order 3 with M
    troe4 = features.reactions[5]
    assert troe4.kind == "falloff" and troe4.falloff.kind == "troe" and len(troe4.falloff.params) == 4
    assert troe4.low.A == pytest.approx(1.737e19 * 1e-6) and troe4.rate.A == pytest.approx(4.65e12 * 1e-3)
    assert features.reactions[6].falloff.params == (0.0, 570.0, 0.0, 1e30)
    species_collider = features.reactions[7]
    assert species_collider.third_body.collider == "H2O" and species_collider.falloff.kind == "sri"
    assert features.reactions[8].falloff.params == (0.5, 100.0, 1000.0, 1.1, 0.2)
    activated = features.reactions[9]
    assert activated.kind == "chemically-activated"
    assert activated.k_low.A == pytest.approx(1e15 * 1e-3) and activated.k_high.A == pytest.approx(1e12)


def test_rev_dup_plog_cheb_lt(features):
    rev = features.reactions[10]
    assert rev.reverse_rate.A == pytest.approx(3e13 * 1e-3) and rev.reversible
    assert not features.reactions[11].reversible and features.reactions[11].reverse_rate is None
    assert features.reactions[12].duplicate and features.reactions[13].duplicate
    plog = features.reactions[14].rate
    assert plog.pressures == (0.1 * ONE_ATM, ONE_ATM, 10 * ONE_ATM) and len(plog.entries) == 4
    cheb = features.reactions[15]
    assert cheb.kind == "chebyshev" and cheb.rate.shape == (4, 2)
    assert (cheb.rate.T_min, cheb.rate.P_max) == (500.0, 50.0 * ONE_ATM)
    assert cheb.rate.coeffs[0][0] == pytest.approx(8.0 - 3.0)  # cm^3/mol/s -> m^3/kmol/s
    assert cheb.rate.coeffs[3] == (0.001, 0.002)
    lt = features.reactions[16].rate
    assert (lt.lt_B, lt.lt_C) == (10.0, -5.0)


def test_species_names_with_special_characters(features):
    assert features.reactions[18].reactants == (("O2*", 1.0), ("H", 1.0))
    assert features.reactions[19].reactants == (("O2+X", 1.0), ("H", 1.0))
    assert features.reactions[20].reactants == (("OH(X)", 1.0), ("H2O,2", 1.0))


def test_abbreviated_keywords_embedded_sections_crlf_tabs_latin1(tmp_path):
    species = {"H2": "H2", "O2": "O2", "OH": "OH", "N2": "N2"}
    text = ("! comment with a byte \xe9 from an old editor\n"
            "ELEM H O N END\n"
            "SPEC\tH2\tO2\tOH\tN2\nEND\n"
            + thermo_text(species, header="THER ALL\n   300.000  1000.000  5000.000\n")
            + "TRANS ALL\n" + transport_text(species) + "END\n"
            + "REAC  KELVINS  MOLECULES\n"
            + "H2+O2=2OH\t1.0E-11\t0.0\t2000.0 ! trailing comment\n"
            + "END\n")
    path = tmp_path / "abbrev.inp"
    path.write_bytes(text.replace("\n", "\r\n").encode("latin-1"))
    mech = singe.load_mechanism(path)
    assert mech.has_transport and mech.species_names == ["H2", "O2", "OH", "N2"]
    reaction = mech.reactions[0]
    assert reaction.rate.Ea_R == 2000.0
    assert reaction.rate.A == pytest.approx(1.0e-11 * 6.02214076e23 * 1e-3)


@pytest.mark.parametrize("unit, factor", [("CAL/MOLE", 4184.0), ("KCAL/MOLE", 4184e3), ("JOULES/MOLE", 1e3),
                                          ("KJOULES/MOLE", 1e6), ("EVOLTS", 96485332.12331001)])
def test_energy_units(tmp_path, unit, factor):
    mech = singe.load_mechanism(write_mechanism(tmp_path, "H2+O2=2OH 1.0E13 0.0 2.5", header=f"REACTIONS {unit}"))
    assert mech.reactions[0].rate.Ea_R == pytest.approx(2.5 * factor / GAS_CONSTANT, rel=1e-15)


def test_companion_files_found_and_overridable(tmp_path):
    chem = write_mechanism(tmp_path, "H2+O2=2OH 1.0E13 0.0 2.5", qss="QSSA\nOH\nEND\nSTIFF\nH2\nEND\n")
    mech = singe.load_mechanism(chem)
    assert mech.qss_species == ("OH",) and mech.stiff_species == ("H2",) and mech.has_transport
    assert singe.load_mechanism(chem, qss=False).qss_species == ()


def test_parse_time_is_small():
    """Parsing is not a bottleneck (the closing note reports the times)."""
    import time
    start = time.perf_counter()
    singe.load_mechanism(load("gri30").sources[0])
    assert time.perf_counter() - start < 5.0
    assert math.isfinite(start)
