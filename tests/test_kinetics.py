"""singe.reference.kinetics and singe.reference.thermo against Cantera 3.2.

Mechanisms come from singe's own frontend; Cantera's models from
``cantera_reference`` (built without singe's parser).  The QSSA mechanisms
are compared in full (``qss_species=()``): Cantera has no QSSA.

Tolerances and comparison rules:

* rate constants k_f, k_r, equilibrium constants, concentrations:
  relative error <= 1e-12 (RTOL_K).  Only where Cantera's value is a
  normal double well clear of the ends of the range, 1e-280 <= |x| <= 1e280:
  below, exp() has underflowed into subnormals (or to 0) and kept too few
  bits for a relative comparison; above, k_f·min(1/Kc, 1e300) may overflow.
  Outside that window both answers must sit outside it too (no real value
  where Cantera has none).
* net production rates: |ω̇ - ω̇_Cantera| <= 1e-10 · max_k |ω̇_Cantera| per state.
* each comparison is a helper returning the worst error; the companion
  tests feed it a deliberately wrong answer and check that it fails.
"""

from __future__ import annotations

import dataclasses
import functools
import subprocess
import sys

import cantera as ct
import numpy as np
import pytest

import cantera_reference as cr
import singe
from singe.constants import CAL, GAS_CONSTANT, ONE_ATM
from singe.reference import kinetics, thermo

N_STATES = 50
RTOL_K = 1e-12
RTOL_WDOT = 1e-10
WINDOW = (1e-280, 1e280)

# name -> (CHEMKIN reactions, Cantera reactions): ck2yaml splits every
# reaction with an explicit REV into two irreversible ones.
REACTION_COUNTS = {
    "gri30": (325, 325),
    "h2o2": (29, 29),
    "dme": (175, 175),
    "heptane": (283, 526),
    "dodecane": (268, 268),
}

MECHANISMS = [
    pytest.param(name, marks=pytest.mark.skipif(
        name in cr.SHARED_NAMES and not cr.have_shared(),
        reason=f"{name}: ../shared/mechanisms is not present"))
    for name in cr.ALL_NAMES
]


# --------------------------------------------------------------------------
# Shared fixtures: mechanisms, states, the reaction map, Cantera's answers
# --------------------------------------------------------------------------

@functools.lru_cache(maxsize=None)
def full_mechanism(name: str) -> singe.Mechanism:
    """singe's mechanism with every species kept (no QSSA), as Cantera has it."""
    mech = singe.load_mechanism(str(cr.chemistry_file(name)))
    return dataclasses.replace(mech, qss_species=())


def _stoichiometry(pairs) -> dict[str, float]:
    result: dict[str, float] = {}
    for name, nu in pairs:
        result[name] = result.get(name, 0.0) + nu
    return result


def _has_explicit_reverse(reaction) -> bool:
    return reaction.reversible and reaction.reverse_rate is not None and reaction.reverse_rate.A != 0.0


def _cantera_stoichiometry(reaction: ct.Reaction) -> tuple[dict[str, float], dict[str, float]]:
    """Reactants and products of a Cantera reaction as CHEMKIN writes them:
    Cantera 3 reads ``H + O2 + O2 <=> HO2 + O2`` (GRI-Mech) as a three-body
    reaction with O2 as the only collider; CHEMKIN (and singe) as elementary
    with O2 on both sides.  The rates are the same."""
    reactants, products = dict(reaction.reactants), dict(reaction.products)
    third_body = reaction.third_body
    if (third_body is not None and third_body.name != "M"
            and reaction.reaction_type.startswith("three-body")):
        reactants[third_body.name] = reactants.get(third_body.name, 0.0) + 1.0
        products[third_body.name] = products.get(third_body.name, 0.0) + 1.0
    return reactants, products


def cantera_reaction_map(mech, gas: ct.Solution) -> list[tuple[int, int | None]]:
    """CHEMKIN reaction r -> (Cantera index of its forward direction, Cantera
    index of its split reverse direction or None).

    ck2yaml writes a reaction with REV (non-zero A) as the forward reaction
    made irreversible, immediately followed by the reverse one (reactants and
    products swapped, same third body, its own "# Reaction N" number); REV/0 0 0/
    only makes the reaction irreversible.  Every pairing is checked against
    Cantera's stoichiometry and reversibility.
    """
    result = []
    j = 0
    for reaction in mech.reactions:
        reactants, products = _stoichiometry(reaction.reactants), _stoichiometry(reaction.products)
        forward = gas.reaction(j)
        assert _cantera_stoichiometry(forward) == (reactants, products), (
            f"CHEMKIN reaction {reaction.index + 1} {reaction.equation!r} is not Cantera's "
            f"reaction {j} {forward.equation!r}")
        if _has_explicit_reverse(reaction):
            reverse = gas.reaction(j + 1)
            assert not forward.reversible and not reverse.reversible
            assert _cantera_stoichiometry(reverse) == (products, reactants), (
                f"reaction {reaction.equation!r}: Cantera's reaction {j + 1} {reverse.equation!r} "
                "is not its reverse")
            result.append((j, j + 1))
            j += 2
        else:
            assert forward.reversible == (reaction.reversible and reaction.reverse_rate is None)
            result.append((j, None))
            j += 1
    assert j == gas.n_reactions, f"{gas.n_reactions - j} Cantera reactions left unmatched"
    return result


@dataclasses.dataclass(frozen=True)
class Comparison:
    """singe's and Cantera's answers on the same states, in CHEMKIN order."""

    name: str
    T: np.ndarray
    P: np.ndarray
    Y: np.ndarray
    ours: dict[str, np.ndarray]
    theirs: dict[str, np.ndarray]


def _cantera_answers(gas: ct.Solution, rmap, T, P, Y) -> dict[str, np.ndarray]:
    n = T.size
    n_r = len(rmap)
    out = {key: np.zeros((n_r, n)) for key in ("kf", "kr", "Kc", "M")}
    out["C"] = np.zeros((gas.n_species, n))
    out["wdot"] = np.zeros((gas.n_species, n))
    forward = np.array([f for f, _ in rmap])
    reverse = [(r, b) for r, (_, b) in enumerate(rmap) if b is not None]
    for p in range(n):
        gas.TPY = T[p], P[p], Y[:, p]
        kf, kr = gas.forward_rate_constants, gas.reverse_rate_constants
        out["kf"][:, p] = kf[forward]
        out["kr"][:, p] = kr[forward]
        for r, b in reverse:
            out["kr"][r, p] = kf[b]
        out["Kc"][:, p] = gas.equilibrium_constants[forward]
        out["M"][:, p] = gas.third_body_concentrations[forward]
        out["C"][:, p] = gas.concentrations
        out["wdot"][:, p] = gas.net_production_rates
    return out


def _singe_answers(mech, T, P, Y) -> dict[str, np.ndarray]:
    C = kinetics.molar_concentrations(mech, T, P, Y)
    return {
        "C": C,
        "M": kinetics.third_body_concentrations(mech, C),
        "kf": kinetics.forward_rate_constants(mech, T, P, C),
        "kr": kinetics.reverse_rate_constants(mech, T, P, C),
        "Kc": thermo.equilibrium_constants(mech, T),
        "wdot": kinetics.net_production_rates(mech, T, P, Y),
    }


@functools.lru_cache(maxsize=None)
def comparison(name: str) -> Comparison:
    mech = full_mechanism(name)
    gas = cr.cantera_solution(name)
    assert mech.species_names == gas.species_names
    T, P, Y = cr.random_states(N_STATES, gas.n_species, seed=sum(map(ord, name)))
    rmap = cantera_reaction_map(mech, gas)
    return Comparison(name, T, P, Y, _singe_answers(mech, T, P, Y), _cantera_answers(gas, rmap, T, P, Y))


# --------------------------------------------------------------------------
# Comparison helpers (each returns the worst error; tested on wrong answers)
# --------------------------------------------------------------------------

def worst_relative_error(ours: np.ndarray, theirs: np.ndarray, window=WINDOW) -> float:
    """Largest |ours - theirs| / |theirs| over the entries where |theirs| lies
    in ``window`` (a sign or zero mismatch there counts as an error >= 1);
    inf where theirs lies outside the window and ours well inside it."""
    ours, theirs = np.asarray(ours, float), np.asarray(theirs, float)
    low, high = window
    inside = (np.abs(theirs) >= low) & (np.abs(theirs) <= high)
    # outside the window ours must be outside it too (a factor 10 of slack
    # for values that straddle an edge)
    if np.any(~inside & (np.abs(ours) >= 10.0 * low) & (np.abs(ours) <= high / 10.0)):
        return float("inf")
    if not np.any(inside):
        return 0.0
    if np.any(~np.isfinite(ours[inside])):
        return float("inf")
    return float(np.max(np.abs(ours[inside] - theirs[inside]) / np.abs(theirs[inside])))


def worst_production_rate_error(ours: np.ndarray, theirs: np.ndarray) -> float:
    """Largest per-state max_k |ω̇_k - ω̇_k,ref| / max_k |ω̇_k,ref|."""
    scale = np.max(np.abs(theirs), axis=0)
    if not np.all(np.isfinite(ours)):
        return float("inf")
    return float(np.max(np.max(np.abs(ours - theirs), axis=0) / scale))


# --------------------------------------------------------------------------
# Whole mechanisms
# --------------------------------------------------------------------------

@pytest.mark.parametrize("name", MECHANISMS)
def test_reaction_counts_and_map(name):
    mech = full_mechanism(name)
    gas = cr.cantera_solution(name)
    chemkin, cantera = REACTION_COUNTS[name]
    assert (len(mech.reactions), gas.n_reactions) == (chemkin, cantera)
    rmap = cantera_reaction_map(mech, gas)
    assert sum(b is not None for _, b in rmap) == cantera - chemkin
    assert mech.species_names == gas.species_names


def test_heptane_rev_reactions_split_as_ck2yaml_writes_them():
    """ck2yaml writes REV reaction r as "# Reaction f" (made irreversible) and
    "# Reaction f+1" (reverse, same third body) right after it; the map
    pairs them and our k_r is Cantera's k_f of the second."""
    if not cr.have_shared():
        pytest.skip("heptane: ../shared/mechanisms is not present")
    mech = full_mechanism("heptane")
    gas = cr.cantera_solution("heptane")
    rmap = cantera_reaction_map(mech, gas)
    text = cr.cantera_yaml("heptane").read_text()
    for r, (f, b) in enumerate(rmap):
        if b is None:
            continue
        assert b == f + 1
        assert f"# Reaction {f + 1}\n" in text and f"# Reaction {b + 1}\n" in text
        assert gas.reaction(b).reaction_type == gas.reaction(f).reaction_type
    # h2o+m = h+oh+m with REV: a three-body reaction whose reverse is three-body too
    r = next(r for r in mech.reactions if r.kind == "three-body" and _has_explicit_reverse(r))
    result = comparison("heptane")
    assert worst_relative_error(result.ours["kr"][r.index], result.theirs["kr"][r.index]) <= RTOL_K
    assert np.all(result.ours["kr"][r.index] != result.ours["kf"][r.index] / result.ours["Kc"][r.index])


@pytest.mark.parametrize("name", MECHANISMS)
def test_concentrations(name):
    result = comparison(name)
    assert worst_relative_error(result.ours["C"], result.theirs["C"]) <= 1e-14
    mech = full_mechanism(name)
    pdep = np.array([r.kind in kinetics.THIRD_BODY_KINDS for r in mech.reactions])
    assert worst_relative_error(result.ours["M"][pdep], result.theirs["M"][pdep]) <= 1e-13
    assert np.all(result.ours["M"][~pdep] == 1.0)


@pytest.mark.parametrize("name", MECHANISMS)
def test_forward_rate_constants(name):
    result = comparison(name)
    assert worst_relative_error(result.ours["kf"], result.theirs["kf"]) <= RTOL_K


@pytest.mark.parametrize("name", MECHANISMS)
def test_reverse_rate_constants(name):
    result = comparison(name)
    mech = full_mechanism(name)
    assert worst_relative_error(result.ours["kr"], result.theirs["kr"]) <= RTOL_K
    irreversible = [r.index for r in mech.reactions if not r.reversible]
    assert np.all(result.ours["kr"][irreversible] == 0.0)


@pytest.mark.parametrize("name", MECHANISMS)
def test_equilibrium_constants(name):
    """Kc agrees with Cantera's (every reaction, Δν as written), and k_f / k_r
    = Kc for reversible reactions without REV where 1/Kc is not clamped."""
    result = comparison(name)
    mech = full_mechanism(name)
    assert worst_relative_error(result.ours["Kc"], result.theirs["Kc"]) <= RTOL_K
    rows = [r.index for r in mech.reactions if r.reversible and r.reverse_rate is None]
    kf, kr, Kc = (result.ours[key][rows] for key in ("kf", "kr", "Kc"))
    with np.errstate(divide="ignore", over="ignore"):
        usable = (kr > WINDOW[0]) & (kf > WINDOW[0]) & (1.0 / Kc < 1e300)
    assert np.count_nonzero(usable) > 0.5 * usable.size
    assert np.max(np.abs(kf[usable] / kr[usable] / Kc[usable] - 1.0)) <= 1e-13


@pytest.mark.parametrize("name", MECHANISMS)
def test_net_production_rates(name):
    result = comparison(name)
    assert worst_production_rate_error(result.ours["wdot"], result.theirs["wdot"]) <= RTOL_WDOT


# --------------------------------------------------------------------------
# Thermodynamics
# --------------------------------------------------------------------------

@pytest.mark.parametrize("name", ["gri30", "h2o2"])
def test_nasa7_properties(name):
    """cp/R, h/RT, s/R, g/RT at P_atm (Cantera's standard state at the
    current pressure) on both temperature ranges and at T_mid itself."""
    mech = full_mechanism(name)
    gas = cr.cantera_solution(name)
    T = np.concatenate([np.linspace(300.0, 3000.0, 23), [1000.0]])
    ours = {"cp": thermo.cp_R(mech, T), "h": thermo.h_RT(mech, T), "s": thermo.s_R(mech, T),
            "g": thermo.g_RT(mech, T)}
    for p, temperature in enumerate(T):
        gas.TP = temperature, ONE_ATM
        theirs = {"cp": gas.standard_cp_R, "h": gas.standard_enthalpies_RT,
                  "s": gas.standard_entropies_R, "g": gas.standard_gibbs_RT}
        for key, value in theirs.items():
            error = np.abs(ours[key][:, p] - value) / np.maximum(np.abs(value), 1.0)
            assert np.max(error) <= 1e-14, (key, temperature)


def test_equilibrium_constant_of_a_known_reaction():
    """Kc of H2 + O <=> H + OH straight from the NASA polynomials."""
    mech = full_mechanism("h2o2")
    reaction = next(r for r in mech.reactions if r.equation.replace(" ", "") == "H2+O<=>H+OH")
    T = np.array([500.0, 1500.0])
    g = thermo.g_RT(mech, T)
    index = mech.species_index
    expected = np.exp(-(g[index("H")] + g[index("OH")] - g[index("H2")] - g[index("O")]))
    assert np.allclose(thermo.equilibrium_constants(mech, T)[reaction.index], expected, rtol=1e-14)


# --------------------------------------------------------------------------
# Companion tests: the comparisons fail on wrong answers
# --------------------------------------------------------------------------

def test_comparison_fails_on_perturbed_rate_constants():
    result = comparison("gri30")
    for key in ("kf", "kr", "Kc"):
        wrong = result.ours[key].copy()
        magnitude = np.abs(result.theirs[key][:, 0])
        row = np.flatnonzero((magnitude > 1e-200) & (magnitude < 1e200))[0]
        wrong[row, 0] *= 1.0 + 1e-11
        assert worst_relative_error(wrong, result.theirs[key]) > RTOL_K, key


def test_comparison_fails_on_perturbed_production_rates():
    result = comparison("gri30")
    wrong = result.ours["wdot"].copy()
    wrong[3, 7] += 1e-9 * np.max(np.abs(result.theirs["wdot"][:, 7]))
    assert worst_production_rate_error(wrong, result.theirs["wdot"]) > RTOL_WDOT


def test_comparison_fails_on_invented_values_outside_the_window():
    theirs = np.array([[1.0, 1e-300, 0.0]])
    assert worst_relative_error(np.array([[1.0, 1e-301, 0.0]]), theirs) == 0.0
    assert worst_relative_error(np.array([[1.0, 1e-20, 0.0]]), theirs) == float("inf")
    assert worst_relative_error(np.array([[1.0, 0.0, 3.0]]), theirs) == float("inf")


def test_comparison_fails_on_the_wrong_third_body_convention():
    """k_f with [M] multiplied in for three-body reactions (Cantera 2.x's
    convention) is caught."""
    result = comparison("gri30")
    mech = full_mechanism("gri30")
    rows = [r.index for r in mech.reactions if r.kind == "three-body"]
    wrong = result.ours["kf"].copy()
    wrong[rows] *= result.ours["M"][rows]
    assert worst_relative_error(wrong, result.theirs["kf"]) > 0.5


# --------------------------------------------------------------------------
# Every rate form, on a small hand-written mechanism
# --------------------------------------------------------------------------

FORMS_COMMON = """\
ELEMENTS
O H AR N
END
SPECIES
H2 H O O2 OH H2O HO2 H2O2 AR N2
END
REACTIONS
! 0: PLOG with several entries at one pressure
H2O2 + H <=> H2O + OH        1.0E13 0.0 3600.0
  PLOG / 0.01   1.0E12  0.0   3000.0 /
  PLOG / 0.01   2.0E11  0.5   1000.0 /
  PLOG / 1.0    3.0E13  0.0   3600.0 /
  PLOG / 10.0   5.0E13 -0.2   4000.0 /
  PLOG / 10.0   1.0E12  0.3   2000.0 /
  PLOG / 100.0  8.0E13  0.0   4500.0 /
! 1: Chebyshev, coefficients continued over several CHEB lines
H2O2 + O <=> HO2 + OH        1.0 0.0 0.0
  TCHEB / 300.0 2500.0 /
  PCHEB / 0.01 100.0 /
  CHEB / 4 3  1.2E+01 4.0E-01 -5.0E-02 /
  CHEB / 8.0E-01 2.0E-01 -1.0E-02 -5.0E-02 3.0E-02 4.0E-03 /
  CHEB / 1.0E-02 -5.0E-03 1.0E-03 /
! 2: Troe, 4 parameters
2OH (+M) <=> H2O2 (+M)       7.4E13 -0.37 0.0
  LOW / 2.3E18 -0.9 -1700.0 /
  TROE / 0.7346 94.0 1756.0 5182.0 /
  H2/2.0/ H2O/6.0/ AR/0.7/
! 3: Troe, 3 parameters
H + OH (+M) <=> H2O (+M)     2.5E13 0.23 0.0
  LOW / 4.5E21 -2.0 0.0 /
  TROE / 0.6 100.0 2000.0 /
  H2O/12.0/
! 4: Troe with T1 = 0 and a huge T2, as real files have them
O + OH (+M) <=> HO2 (+M)     1.0E13 0.0 0.0
  LOW / 1.0E18 -1.0 0.0 /
  TROE / 0.0 570.0 0.0 1.E+30 /
! 5: SRI, 3 parameters
H + O2 (+M) <=> HO2 (+M)     4.65E12 0.44 0.0
  LOW / 5.75E19 -1.4 0.0 /
  SRI / 0.45 797.0 979.0 /
  H2O/10.6/ H2/1.5/ O2/0.0/
! 6: SRI, 5 parameters
2H (+M) <=> H2 (+M)          1.0E14 0.0 0.0
  LOW / 1.0E18 -1.0 0.0 /
  SRI / 0.6 500.0 1200.0 1.3 0.05 /
! 7: chemically activated, Lindemann (the reaction line is k0)
H + HO2 (+M) <=> 2OH (+M)    1.0E20 -1.5 500.0
  HIGH / 2.0E13 0.0 300.0 /
! 8: chemically activated, Troe
H2 + O2 (+M) <=> H + HO2 (+M)  3.0E21 -2.0 55000.0
  HIGH / 7.0E13 0.0 52000.0 /
  TROE / 0.5 200.0 1500.0 /
  H2O/5.0/
! 9: falloff with one collider species
2O (+N2) <=> O2 (+N2)        1.0E13 0.0 0.0
  LOW / 1.0E18 -1.0 0.0 /
! 10: FORD keeping the overall order
H2 + O2 => 2OH               1.0E13 0.0 40000.0
  FORD / H2 1.5 /
  FORD / O2 0.5 /
! 11: FORD changing the overall order (2 -> 2.5)
H2 + O => H + OH             5.0E4 2.67 6290.0
  FORD / H2 1.5 /
! 12: REV/0 0 0/ makes the reaction irreversible
HO2 + O <=> O2 + OH          2.0E13 0.0 0.0
  REV / 0 0 0 /
! 13: three-body reaction with an explicit REV
H + O + M <=> OH + M         5.0E17 -1.0 0.0
  REV / 3.0E18 -1.0 1.0E5 /
  H2/2.0/ H2O/6.0/ AR/0.7/
! 14: strongly endothermic without a barrier: below ~100 K, 1/Kc > 1e300
H2O + M <=> H2 + O + M       1.0E-10 0.0 0.0
"""

# singe reads RORD and LT/RLT, ck2yaml does neither: Cantera gets reaction 15
# as two irreversible reactions (the reverse with FORD), and no reaction 16.
FORMS_SINGE_ONLY = """\
! 15: explicit REV with RORD (reverse order 2 -> 2.5)
H2O2 + OH <=> H2O + HO2      1.0E12 0.0 427.0
  REV / 1.0E11 0.5 30000.0 /
  RORD / H2O 1.5 /
! 16: Landau-Teller, forward (LT) and reverse (RLT)
H2 + O2 <=> HO2 + H          1.0E13 0.0 50000.0
  LT / 10.0 -20.0 /
  REV / 2.0E12 0.2 1000.0 /
  RLT / 5.0 3.0 /
END
"""

FORMS_CANTERA_ONLY = """\
H2O2 + OH => H2O + HO2       1.0E12 0.0 427.0
H2O + HO2 => H2O2 + OH       1.0E11 0.5 30000.0
  FORD / H2O 1.5 /
END
"""

# CHEMKIN reaction -> (Cantera forward index, Cantera reverse index or None)
FORMS_MAP = [(j, None) for j in range(13)] + [(13, 14), (15, None), (16, 17)]
LANDAU_TELLER = 16


@pytest.fixture(scope="module")
def forms(tmp_path_factory):
    """(singe mechanism, Cantera Solution) of the hand-written mechanism."""
    folder = tmp_path_factory.mktemp("forms")
    thermo_file = folder / "therm.dat"
    thermo_file.write_text((cr.BUNDLED_MECHANISMS / "h2o2" / "therm.dat").read_text())
    (folder / "forms.inp").write_text(FORMS_COMMON + FORMS_SINGE_ONLY)
    (folder / "cantera.inp").write_text(FORMS_COMMON + FORMS_CANTERA_ONLY)
    subprocess.run([sys.executable, "-m", "cantera.ck2yaml", f"--input={folder / 'cantera.inp'}",
                    f"--thermo={thermo_file}", f"--output={folder / 'forms.yaml'}", "--quiet"],
                   check=True, capture_output=True)
    mech = singe.load_mechanism(str(folder / "forms.inp"), thermo=str(thermo_file))
    gas = ct.Solution(str(folder / "forms.yaml"))
    return mech, gas


def _forms_states():
    """Random states over a wider pressure range than the PLOG / Chebyshev
    tables (1e-3 .. 1e3 atm), plus the PLOG table pressures themselves and
    temperatures beyond the Chebyshev range."""
    T, P, Y = cr.random_states(40, 10, seed=11, P_range_atm=(1e-3, 1e3))
    T[:4] = [300.0, 1000.0, 2600.0, 3000.0]
    P[:4] = np.array([0.01, 1.0, 10.0, 100.0]) * ONE_ATM
    return T, P, Y


def _forms_answers(mech, gas):
    T, P, Y = _forms_states()
    ours = _singe_answers(mech, T, P, Y)
    ours["qf"], ours["qr"] = kinetics.rates_of_progress(mech, T, P, ours["C"])
    n_r, n = len(mech.reactions), T.size
    theirs = {key: np.zeros((n_r, n)) for key in ("kf", "kr", "qf", "qr", "Kc")}
    for p in range(n):
        gas.TPY = T[p], P[p], Y[:, p]
        kf, kr = gas.forward_rate_constants, gas.reverse_rate_constants
        qf, qr = gas.forward_rates_of_progress, gas.reverse_rates_of_progress
        Kc = gas.equilibrium_constants
        for r, (f, b) in enumerate(FORMS_MAP[:n_r]):
            theirs["kf"][r, p], theirs["qf"][r, p] = kf[f], qf[f]
            theirs["kr"][r, p], theirs["qr"][r, p] = (kf[b], qf[b]) if b is not None else (kr[f], qr[f])
            theirs["Kc"][r, p] = Kc[f]
    return T, P, Y, ours, theirs


@pytest.fixture(scope="module")
def forms_answers(forms):
    return _forms_answers(*forms)


def test_forms_mechanism_reads_as_intended(forms):
    mech, gas = forms
    kinds = [r.kind for r in mech.reactions]
    assert kinds[:10] == ["plog", "chebyshev"] + ["falloff"] * 5 + ["chemically-activated"] * 2 + ["falloff"]
    functions = ["troe", "troe", "troe", "sri", "sri", "lindemann", "troe", "lindemann"]
    assert [r.falloff.kind for r in mech.reactions[2:10]] == functions
    assert [len(r.falloff.params) for r in mech.reactions[2:7]] == [4, 3, 4, 3, 5]
    assert mech.reactions[9].third_body.collider == "N2"
    assert mech.reactions[LANDAU_TELLER].rate.is_landau_teller
    assert mech.reactions[LANDAU_TELLER].reverse_rate.is_landau_teller
    assert gas.n_reactions == 18
    for reaction, (f, b) in zip(mech.reactions, FORMS_MAP):
        reactants, products = _stoichiometry(reaction.reactants), _stoichiometry(reaction.products)
        assert (gas.reaction(f).reactants, gas.reaction(f).products) == (reactants, products)
        if b is not None:
            assert (gas.reaction(b).reactants, gas.reaction(b).products) == (products, reactants)


@pytest.mark.parametrize("reaction, what", [
    (0, "PLOG, several entries at one pressure"),
    (1, "Chebyshev"),
    (2, "Troe, 4 parameters"),
    (3, "Troe, 3 parameters"),
    (4, "Troe, T1 = 0, T2 = 1e30"),
    (5, "SRI, 3 parameters"),
    (6, "SRI, 5 parameters"),
    (7, "chemically activated, Lindemann"),
    (8, "chemically activated, Troe"),
    (9, "(+N2) falloff"),
    (10, "FORD keeping the order"),
    (12, "REV/0 0 0/"),
    (13, "three-body with REV"),
    (14, "endothermic three-body, 1/Kc not clamped above 300 K"),
])
def test_rate_form_matches_cantera(forms_answers, reaction, what):
    T, P, Y, ours, theirs = forms_answers
    for key in ("kf", "kr", "qf", "qr"):
        error = worst_relative_error(ours[key][reaction], theirs[key][reaction])
        assert error <= RTOL_K, f"{what}: {key} off by {error:.2e}"
    if reaction == 12:
        assert np.all(ours["kr"][12] == 0.0)


@pytest.mark.parametrize("reaction, direction", [(10, "qf"), (11, "qf"), (15, "qr")])
def test_ford_rord_exponents_match_cantera(forms_answers, reaction, direction):
    """The concentration products q/k with FORD / RORD exponents (the units
    of A are the next test's business)."""
    T, P, Y, ours, theirs = forms_answers
    k = "kf" if direction == "qf" else "kr"
    with np.errstate(invalid="ignore", divide="ignore"):
        ours_product = ours[direction][reaction] / ours[k][reaction]
        theirs_product = theirs[direction][reaction] / theirs[k][reaction]
    assert worst_relative_error(ours_product, theirs_product) <= RTOL_K


@pytest.mark.parametrize("reaction, key", [(11, "kf"), (15, "kr")])
def test_order_changing_ford_rord_units_match_cantera(forms_answers, reaction, key):
    T, P, Y, ours, theirs = forms_answers
    assert worst_relative_error(ours[key][reaction], theirs[key][reaction]) <= RTOL_K


def test_chemically_activated_blending_matches_cantera(forms, forms_answers):
    """k = k0 F / (1 + Pr) with the A factors converted as Cantera does
    (k0: the reaction's order, 2 here; k_inf: one less), whatever the
    frontend did: isolates the blending from the units question above."""
    mech, _ = forms
    T, P, Y, ours, theirs = forms_answers
    reactions = list(mech.reactions)
    text_A = {7: (1.0e20, 2.0e13), 8: (3.0e21, 7.0e13)}
    for index, (k0_A, k_inf_A) in text_A.items():
        r = reactions[index]
        reactions[index] = dataclasses.replace(
            r, rate=dataclasses.replace(r.rate, A=k0_A * 1e-3), high=dataclasses.replace(r.high, A=k_inf_A))
    fixed = dataclasses.replace(mech, reactions=tuple(reactions))
    C = kinetics.molar_concentrations(fixed, T, P, Y)
    kf = kinetics.forward_rate_constants(fixed, T, P, C)
    kr = kinetics.reverse_rate_constants(fixed, T, P, C)
    for index in text_A:
        assert worst_relative_error(kf[index], theirs["kf"][index]) <= RTOL_K
        assert worst_relative_error(kr[index], theirs["kr"][index]) <= RTOL_K
    wrong = kf[8] * (1.0 + 1e-6 * (T > 1000.0))
    assert worst_relative_error(wrong, theirs["kf"][8]) > RTOL_K


def test_reverse_rate_constant_clamp_matches_cantera(forms):
    """1/Kc is clamped at 1e300 (Cantera's BigNumber): below ~100 K reaction 14
    has ln(1/Kc) > 690 and k_r = k_f · 1e300; the unclamped k_f / Kc is caught."""
    mech, gas = forms
    T = np.array([40.0, 60.0, 80.0, 300.0, 1000.0])
    P = np.full(T.size, ONE_ATM)
    Y = np.full((mech.n_species, T.size), 0.1)
    C = kinetics.molar_concentrations(mech, T, P, Y)
    kf = kinetics.forward_rate_constants(mech, T, P, C)[14]
    kr = kinetics.reverse_rate_constants(mech, T, P, C)[14]
    theirs = np.empty(T.size)
    for p in range(T.size):
        gas.TPY = T[p], P[p], Y[:, p]
        theirs[p] = gas.reverse_rate_constants[FORMS_MAP[14][0]]
    with np.errstate(over="ignore", divide="ignore"):
        unclamped = kf / thermo.equilibrium_constants(mech, T)[14]
    clamped = unclamped > kf * 1e300
    assert clamped[:3].all() and not clamped[3:].any()
    assert np.all(kr[:3] == kf[:3] * 1e300)
    assert worst_relative_error(kr, theirs, window=(1e-280, 1e300)) <= RTOL_K
    assert worst_relative_error(unclamped, theirs, window=(1e-280, 1e300)) > RTOL_K


def test_plog_outside_and_at_table_pressures(forms):
    """At a table pressure the summed entries are used as they are; beyond the
    table the end values, independent of pressure."""
    mech, _ = forms
    rate = mech.reactions[0].rate
    T = np.array([900.0, 900.0, 900.0, 900.0, 1700.0, 1700.0])
    P = np.array([0.01, 1e-4, 10.0, 1e4, 100.0, 1e3]) * ONE_ATM
    k = kinetics.forward_rate_constants(mech, T, P, np.ones((mech.n_species, T.size)))[0]

    def table(pressure_atm, temperature):
        return sum(a(np.array([temperature]))[0] for p, a in rate.entries
                   if np.isclose(p, pressure_atm * ONE_ATM))

    expected = [table(0.01, 900.0), table(0.01, 900.0), table(10.0, 900.0), table(100.0, 900.0),
                table(100.0, 1700.0), table(100.0, 1700.0)]
    assert np.allclose(k, expected, rtol=1e-14, atol=0.0)


def test_landau_teller_against_the_formula(forms):
    """k = A T^b exp(-E/RT + B T^(-1/3) + C T^(-2/3)) for LT (forward) and
    RLT (REV) from the text's numbers: bimolecular, A_SI = A_cgs·1e-3."""
    mech, _ = forms
    T = np.linspace(300.0, 3000.0, 12)
    P = np.full(T.size, ONE_ATM)
    C = np.ones((mech.n_species, T.size))

    def formula(A, b, E, B, C_):
        return A * 1e-3 * T**b * np.exp(-E * CAL * 1e3 / (GAS_CONSTANT * T) + B * T ** (-1 / 3) + C_ * T ** (-2 / 3))

    kf = kinetics.forward_rate_constants(mech, T, P, C)[LANDAU_TELLER]
    kr = kinetics.reverse_rate_constants(mech, T, P, C)[LANDAU_TELLER]
    assert np.allclose(kf, formula(1.0e13, 0.0, 50000.0, 10.0, -20.0), rtol=1e-13, atol=0.0)
    assert np.allclose(kr, formula(2.0e12, 0.2, 1000.0, 5.0, 3.0), rtol=1e-13, atol=0.0)
    wrong = formula(1.0e13, 0.0, 50000.0, 0.0, 0.0)  # Arrhenius without the LT terms
    assert not np.allclose(kf, wrong, rtol=1e-3, atol=0.0)


def test_rate_form_comparison_fails_on_wrong_falloff(forms, forms_answers):
    """Dropping the Troe T2 term or taking SRI's d, e as absent is caught."""
    mech, _ = forms
    T, P, Y, ours, theirs = forms_answers
    for reaction, params in ((2, (0.7346, 94.0, 1756.0)), (6, (0.6, 500.0, 1200.0))):
        original = mech.reactions[reaction]
        changed = dataclasses.replace(original, falloff=dataclasses.replace(original.falloff, params=params))
        wrong_mech = dataclasses.replace(
            mech, reactions=mech.reactions[:reaction] + (changed,) + mech.reactions[reaction + 1:])
        C = kinetics.molar_concentrations(wrong_mech, T, P, Y)
        wrong = kinetics.forward_rate_constants(wrong_mech, T, P, C)[reaction]
        assert worst_relative_error(wrong, theirs["kf"][reaction]) > RTOL_K


# --------------------------------------------------------------------------
# Interfaces
# --------------------------------------------------------------------------

def test_rates_of_progress_use_the_given_third_body_concentrations():
    """[M] and the falloff blending come from C_third_body; the mass-action
    products from C (the QSSA convention)."""
    mech = full_mechanism("gri30")
    T, P, Y = cr.random_states(5, mech.n_species, seed=3)
    C = kinetics.molar_concentrations(mech, T, P, Y)
    C_third = 0.5 * C
    qf, qr = kinetics.rates_of_progress(mech, T, P, C, C_third_body=C_third)
    M = kinetics.third_body_concentrations(mech, C_third)
    kf = kinetics.forward_rate_constants(mech, T, P, C_third)
    kr = kinetics.reverse_rate_constants(mech, T, P, C_third)
    three_body = np.array([[r.kind == "three-body"] for r in mech.reactions])
    tables = kinetics.kinetics_tables(mech)
    expected_qf = kf * np.where(three_body, M, 1.0) * tables.forward_product(C)
    expected_qr = kr * np.where(three_body, M, 1.0) * tables.reverse_product(C)
    assert np.allclose(qf, expected_qf, rtol=1e-15, atol=0.0)
    assert np.allclose(qr, expected_qr, rtol=1e-15, atol=0.0)
    wdot = kinetics.production_rates(mech, qf, qr)
    assert wdot.shape == (mech.n_species, T.size)
    assert np.allclose(wdot, tables.nu_net @ (qf - qr), rtol=1e-15, atol=0.0)


def test_qssa_mechanism_state_excludes_qssa_species():
    if not cr.have_shared():
        pytest.skip("dme: ../shared/mechanisms is not present")
    mech = singe.load_mechanism(str(cr.chemistry_file("dme")))
    n_t = len(mech.transported_species)
    T, P, Y = cr.random_states(3, n_t, seed=5)
    C = kinetics.molar_concentrations(mech, T, P, Y)
    qss = [mech.species_index(s) for s in mech.qss_species]
    assert np.all(C[qss] == 0.0)
    assert np.allclose(C.sum(axis=0), P / (GAS_CONSTANT * T), rtol=1e-14)
    wdot = kinetics.net_production_rates(mech, T, P, Y)
    assert wdot.shape == (n_t, T.size) and np.all(np.isfinite(wdot))


@pytest.mark.parametrize("call, message", [
    (lambda m, T, P, Y: kinetics.net_production_rates(m, T, P, Y[:-1]), r"Y must have shape \(10, 3\)"),
    (lambda m, T, P, Y: kinetics.net_production_rates(m, T, P[:2], Y), "one pressure per point"),
    (lambda m, T, P, Y: kinetics.net_production_rates(m, T, P, Y, dt=-1.0), "positive time step"),
    (lambda m, T, P, Y: kinetics.net_production_rates(m, T, P, Y, dt=1e-6, diffusion_source=Y[:, :2]),
     "diffusion_source must have shape"),
    (lambda m, T, P, Y: kinetics.net_production_rates(m, T, P, Y, stiffness="fast"), "stiffness must be one of"),
    (lambda m, T, P, Y: kinetics.forward_rate_constants(m, T, P, Y.T), r"C must have shape"),
    (lambda m, T, P, Y: kinetics.production_rates(m, np.zeros((3, 3)), np.zeros((3, 3))), "qf must have shape"),
    (lambda m, T, P, Y: kinetics.third_body_concentrations(m, Y[:4]), "C must have shape"),
    (lambda m, T, P, Y: thermo.cp_R(m, -T), "positive"),
])
def test_shape_errors(call, message):
    mech = full_mechanism("h2o2")
    T, P, Y = cr.random_states(3, mech.n_species, seed=1)
    with pytest.raises(ValueError, match=message):
        call(mech, T, P, Y)
