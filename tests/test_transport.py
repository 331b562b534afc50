"""Transport fits (singe.derived.transport) and mixture transport
(singe.reference.transport) against Cantera 3.2, ``mixture-averaged-CK``.

Norms and tolerances:

* fit coefficients: for every species (viscosity, conductivity) and every
  pair j <= k (binary diffusion), the relative 2-norm error of the 4-vector,
  ||c - c_Cantera||_2 / ||c_Cantera||_2; the worst must be <= 1e-8;
* mixture properties: max over points (and transported species, for the
  mixture-averaged D_km) of |value / value_Cantera - 1|; must be <= 1e-10.

Each comparison has a companion test showing it fails when one species'
collision diameter sigma is perturbed by 1e-6 relative.

QSSA mechanisms: the state holds transported species only; Cantera gets the
QSSA species' mass fractions as exact zeros (clamped to x = 1e-20 inside
Cantera, a ~1e-20 relative effect, which the 1e-10 agreement and
``test_qssa_species_at_zero_change_nothing`` confirm).
"""

from __future__ import annotations

import dataclasses
import functools

import numpy as np
import pytest

import singe
from cantera_reference import (ALL_NAMES, SHARED_NAMES, cantera_solution, chemistry_file,
                               have_shared, random_states)
from singe.errors import MechanismSemanticError
from singe.reference import transport as reference
from singe.derived.transport import fit_transport
from singe.kernels.registry import KERNELS
from singe.validate import cantera_property

FIT_TOLERANCE = 1e-8
PROPERTY_TOLERANCE = 1e-10
N_STATES = 60
QUANTITIES = ("viscosity", "diffusion", "conductivity")
SKIP_SHARED = pytest.mark.skipif(not have_shared(), reason="../shared/mechanisms not found "
                                 "(set SINGE_SHARED to the folder holding mechanisms/)")
NAMES = [pytest.param(name, marks=SKIP_SHARED) if name in SHARED_NAMES else name
         for name in ALL_NAMES]


@functools.lru_cache(maxsize=None)
def mechanism(name: str) -> singe.Mechanism:
    return singe.load_mechanism(str(chemistry_file(name)))


def perturb_diameter(mech: singe.Mechanism, name: str, factor: float) -> singe.Mechanism:
    """A copy of ``mech`` with species ``name``'s sigma multiplied by ``factor``."""
    species = []
    for s in mech.species:
        if s.name == name:
            s = dataclasses.replace(s, transport=dataclasses.replace(
                s.transport, diameter=s.transport.diameter * factor))
        species.append(s)
    return dataclasses.replace(mech, species=tuple(species))


def without_transport(mech: singe.Mechanism, names: set[str]) -> singe.Mechanism:
    """A copy of ``mech`` where the species in ``names`` have no transport data."""
    species = tuple(dataclasses.replace(s, transport=None) if s.name in names else s
                    for s in mech.species)
    return dataclasses.replace(mech, species=species)


# ---------------------------------------------------------------------------
# Comparison helpers (shared by the tests and their companions)
# ---------------------------------------------------------------------------

def _relative_norm_error(ours: np.ndarray, theirs: np.ndarray) -> float:
    return float(np.linalg.norm(ours - theirs) / np.linalg.norm(theirs))


def worst_fit_errors(mech: singe.Mechanism, gas) -> dict[str, float]:
    """Worst relative 2-norm error of the fit coefficient vectors vs Cantera's."""
    fits = fit_transport(mech)
    ct_index = [gas.species_index(name) for name in mech.species_names]
    worst = dict.fromkeys(QUANTITIES, 0.0)
    for k, ck in enumerate(ct_index):
        worst["viscosity"] = max(worst["viscosity"], _relative_norm_error(
            fits.viscosity[k], gas.get_viscosity_polynomial(ck)))
        worst["conductivity"] = max(worst["conductivity"], _relative_norm_error(
            fits.conductivity[k], gas.get_thermal_conductivity_polynomial(ck)))
        for j in range(k + 1):
            worst["diffusion"] = max(worst["diffusion"], _relative_norm_error(
                fits.diffusion[j, k], gas.get_binary_diff_coeffs_polynomial(ct_index[j], ck)))
    return worst


def worst_property_errors(mech: singe.Mechanism, gas, T, P, Y) -> dict[str, float]:
    """Worst |singe / Cantera - 1| of the mixture properties over the states.

    ``Y`` holds the transported species only; Cantera's QSSA species get 0.
    """
    ours = {"viscosity": reference.viscosity(mech, T, P, Y),
            "diffusion": reference.mixture_diffusion(mech, T, P, Y),
            "conductivity": reference.thermal_conductivity(mech, T, P, Y)}
    transported = [gas.species_index(name) for name in mech.transported_species]
    worst = dict.fromkeys(QUANTITIES, 0.0)
    Y_full = np.zeros(gas.n_species)
    for i in range(len(T)):
        Y_full[transported] = Y[:, i]
        gas.TPY = T[i], P[i], Y_full
        theirs = {"viscosity": gas.viscosity,
                  "diffusion": gas.mix_diff_coeffs[transported],
                  "conductivity": gas.thermal_conductivity}
        for q in QUANTITIES:
            error = np.max(np.abs(ours[q][..., i] / theirs[q] - 1.0))
            worst[q] = max(worst[q], float(error))
    return worst


def states(mech: singe.Mechanism, seed: int):
    """Random states inside both 300–3000 K and the fit range."""
    fits = fit_transport(mech)
    T_range = (max(300.0, fits.T_min), min(3000.0, fits.T_max))
    return random_states(N_STATES, len(mech.transported_species), seed, T_range=T_range)


# ---------------------------------------------------------------------------
# Fits
# ---------------------------------------------------------------------------

@pytest.mark.parametrize("name", NAMES)
def test_fit_range_matches_cantera(name):
    fits = fit_transport(mechanism(name))
    gas = cantera_solution(name)
    assert (fits.T_min, fits.T_max) == (gas.min_temp, gas.max_temp)


@pytest.mark.parametrize("name", NAMES)
def test_fit_coefficients_match_cantera(name):
    worst = worst_fit_errors(mechanism(name), cantera_solution(name))
    assert max(worst.values()) <= FIT_TOLERANCE, worst


@functools.lru_cache(maxsize=None)
def _perturbed_fit_errors() -> dict[str, float]:
    mech = mechanism("h2o2")
    return worst_fit_errors(perturb_diameter(mech, mech.species_names[0], 1.0 + 1e-6),
                            cantera_solution("h2o2"))


@pytest.mark.parametrize("quantity", QUANTITIES)
def test_fit_comparison_detects_perturbed_sigma(quantity):
    assert _perturbed_fit_errors()[quantity] > FIT_TOLERANCE


def test_fits_are_cached_read_only_and_verified():
    mech = mechanism("h2o2")
    fits = fit_transport(mech)
    assert fit_transport(mech) is fits
    fits.verify()
    with pytest.raises(ValueError):
        fits.viscosity[0, 0] = 0.0


# ---------------------------------------------------------------------------
# Mixture properties
# ---------------------------------------------------------------------------

@pytest.mark.parametrize("name", NAMES)
def test_mixture_properties_match_cantera(name):
    mech = mechanism(name)
    T, P, Y = states(mech, seed=ALL_NAMES.index(name))
    worst = worst_property_errors(mech, cantera_solution(name), T, P, Y)
    assert max(worst.values()) <= PROPERTY_TOLERANCE, worst


@functools.lru_cache(maxsize=None)
def _perturbed_property_errors() -> dict[str, float]:
    mech = mechanism("h2o2")
    T, P, Y = states(mech, seed=99)
    wrong = perturb_diameter(mech, mech.transported_species[0], 1.0 + 1e-6)
    return worst_property_errors(wrong, cantera_solution("h2o2"), T, P, Y)


@pytest.mark.parametrize("quantity", QUANTITIES)
def test_property_comparison_detects_perturbed_sigma(quantity):
    assert _perturbed_property_errors()[quantity] > PROPERTY_TOLERANCE


def negative_states(mech: singe.Mechanism):
    """``states`` with some mass fractions below zero, as a solver's step can leave them: -1e-12 for one species
    everywhere, -1e-6 and -1e-3 for others at some points."""
    T, P, Y = states(mech, seed=5)
    Y = Y.copy()
    Y[3, :] = -1e-12
    Y[5, :10] = -1e-6
    Y[7, 20:30] = -1e-3
    return T, P, Y


@SKIP_SHARED
def test_negative_mass_fractions_count_as_zero_as_in_cantera():
    """Cantera's ``TPY`` sets a negative mass fraction to 0 (and normalises); the reference does the same, and so
    do the kernels, whose formulas are homogeneous of degree 0 in the mass fractions (their mole numbers clamped
    at ``MOLES_FLOOR``): the reference, the simulator and the emitted CUDA on the host (both styles) agree with
    Cantera.  Before, diffusion and conductivity summed the negative mole numbers: 2.2e-6 and 5.4e-7 off at
    Y = -1e-6.  The tuned baseline (``baseline_kernel``: viscosity's Wilke groups of 8) too."""
    from singe.baseline import baseline_kernel
    from singe.compiler import compile_kernel

    mech = mechanism("dme")
    T, P, Y = negative_states(mech)
    assert max(worst_property_errors(mech, cantera_solution("dme"), T, P, Y).values()) <= PROPERTY_TOLERANCE
    gas = cantera_solution("dme")
    for quantity in QUANTITIES:
        kernel = compile_kernel(mech, quantity, warps=8)
        theirs = cantera_property(gas, KERNELS[quantity], mech, T, P, Y)
        for ours in (kernel.simulate(T, P, Y), kernel.run_host(T, P, Y), kernel.run_host(T, P, Y, baseline=True),
                     baseline_kernel(kernel).run_host(T, P, Y)):
            assert np.max(np.abs(ours / theirs - 1.0)) <= PROPERTY_TOLERANCE, quantity


@SKIP_SHARED
def test_the_negative_mass_fractions_are_large_enough_to_be_seen():
    """The companion: the same states with the negative mass fractions summed as they are (Cantera's
    ``set_unnormalized_mass_fractions``) give diffusion coefficients and conductivities the comparison rejects."""
    mech = mechanism("dme")
    T, P, Y = negative_states(mech)
    gas = cantera_solution("dme")
    for quantity in ("diffusion", "conductivity"):
        clipped = cantera_property(gas, KERNELS[quantity], mech, T, P, Y)
        summed = cantera_property(_SummedAsGiven(gas), KERNELS[quantity], mech, T, P, Y)
        assert np.max(np.abs(summed / clipped - 1.0)) > PROPERTY_TOLERANCE, quantity


class _SummedAsGiven:
    """A Cantera solution whose ``TPY`` keeps negative mass fractions (``set_unnormalized_mass_fractions``), for
    ``singe.validate.cantera_property``."""

    def __init__(self, gas):
        self._gas = gas

    def __getattr__(self, name):
        return getattr(self._gas, name)

    def __setattr__(self, name, value):
        if name != "TPY":
            return object.__setattr__(self, name, value)
        T, P, Y = value
        self._gas.TP = T, P
        self._gas.set_unnormalized_mass_fractions(Y)


def test_qssa_species_at_zero_change_nothing():
    """Leaving QSSA species out of the mixture equals including them at Y = 0."""
    full = mechanism("gri30")
    qss = ("CH2", "CH2(S)", "HCO", "CH2OH")
    reduced = dataclasses.replace(full, qss_species=qss)
    T, P, Y = states(reduced, seed=7)
    Y_full = np.zeros((full.n_species, len(T)))
    Y_full[reduced.transported_indices] = Y
    for function in (reference.viscosity, reference.thermal_conductivity):
        np.testing.assert_allclose(function(reduced, T, P, Y), function(full, T, P, Y_full),
                                   rtol=1e-13, atol=0.0)
    np.testing.assert_allclose(reference.mixture_diffusion(reduced, T, P, Y),
                               reference.mixture_diffusion(full, T, P, Y_full)[reduced.transported_indices],
                               rtol=1e-13, atol=0.0)


def test_species_helpers_shapes_and_symmetry():
    mech = mechanism("gri30")
    K = len(mech.transported_species)
    T = np.array([500.0, 1500.0])
    D = reference.binary_diffusion(mech, T, 101325.0)
    assert D.shape == (K, K, 2)
    np.testing.assert_array_equal(D, D.transpose(1, 0, 2))
    assert reference.species_viscosities(mech, T).shape == (K, 2)
    assert reference.species_conductivities(mech, 1000.0).shape == (K, 1)


def test_state_shape_errors():
    mech = mechanism("h2o2")
    K = len(mech.transported_species)
    with pytest.raises(ValueError, match="Y must have shape"):
        reference.viscosity(mech, 1000.0, 101325.0, np.ones((K + 1, 3)) / (K + 1))
    with pytest.raises(ValueError, match="T has 2 points but the state has 3"):
        reference.viscosity(mech, [1000.0, 1200.0], 101325.0, np.ones((K, 3)) / K)
    with pytest.raises(ValueError, match="P must be a scalar or a 1-D array"):
        reference.mixture_diffusion(mech, 1000.0, np.ones((3, 1)), np.ones((K, 3)) / K)
    one_point = reference.thermal_conductivity(mech, 1000.0, 101325.0, np.ones(K) / K)
    assert one_point.shape == (1,)


# ---------------------------------------------------------------------------
# Missing data
# ---------------------------------------------------------------------------

def test_missing_transport_data_names_every_species():
    mech = mechanism("h2o2")
    missing = {mech.species_names[1], mech.species_names[-1]}
    broken = without_transport(mech, missing)
    with pytest.raises(MechanismSemanticError) as raised:
        fit_transport(broken)
    problems = raised.value.problems
    assert len(problems) == len(missing)
    by_species = {name: p for name in missing for p in problems if f"'{name}'" in p.message}
    assert set(by_species) == missing
    for name, problem in by_species.items():
        assert problem.message == f"no transport data for species '{name}'"
        assert problem.location == broken.species[broken.species_index(name)].location
        assert "tran.dat" in problem.hint


def test_missing_transport_record_in_file_points_at_the_species(tmp_path):
    """A tran.dat without H2O2: the error quotes H2O2's declaration."""
    folder = chemistry_file("h2o2").parent
    for path in folder.iterdir():
        text = path.read_text(errors="replace")
        if path.name == "tran.dat":
            text = "".join(line for line in text.splitlines(keepends=True)
                           if not line.split() or line.split()[0] != "H2O2")
        (tmp_path / path.name).write_text(text)
    with pytest.raises(MechanismSemanticError, match="no transport data for species 'H2O2'") as raised:
        singe.load_mechanism(str(tmp_path / "h2o2.inp"))  # a transport file given must cover every species
    (problem,) = raised.value.problems
    location = problem.location
    assert location is not None and location.file.endswith("h2o2.inp")
    assert location.text[location.column - 1:].startswith("H2O2")
