"""singe.reference.stiffness against REFERENCE.md §8.

Both forms are compared with a plain numpy implementation written out here
(loops over reactions and points, nothing shared with the module), on rates
of progress from Cantera's rate constants after singe's QSSA, for random
states and states along ignitions, with and without a diffusion source.
The comparison is a helper returning the worst error; a companion test shows
it fails on a perturbed answer.
"""

from __future__ import annotations

import functools

import numpy as np
import pytest

import cantera_reference as cr
import reaction_map as rm
from conftest import load
from singe.reference import qssa
from singe.reference.stiffness import remove_stiffness

pytestmark = pytest.mark.skipif(
    not cr.have_shared(), reason=f"shared mechanisms not found at {cr.SHARED_MECHANISMS} (set SINGE_SHARED)")

# mechanisms with stiff species -> (fuel, ignition T0 [K], P [atm])
IGNITIONS = {"dme": ("CH3OCH3", 1100.0, 20.0), "heptane": ("nc7h16", 1000.0, 20.0)}
N_RANDOM = 50
N_IGNITION = 12
TOLERANCE = 1e-12  # relative, normwise per point, on the rates of progress
FORMS = ("simultaneous", "sequential")


def mechanism(name: str):
    """Mechanism ``name`` parsed by singe (conftest's session-wide cache)."""
    return load(name)


@functools.lru_cache(maxsize=None)
def inputs(name: str, kind: str):
    """(qf, qr, C, dt, diffusion_source): post-QSSA rates of progress
    (n_reactions, n) [kmol/m^3/s] from Cantera's rate constants, Cantera's
    concentrations (n_species, n) [kmol/m^3] (QSSA rows 0), time steps [s]
    and a random diffusion source (n_transported, n) [kg/m^3/s]."""
    mech = mechanism(name)
    rng = np.random.default_rng(11)
    if kind == "random":
        T, P, Y = cr.random_states(N_RANDOM, mech.n_species, seed=5)
        dt = 10.0 ** rng.uniform(-9.0, -5.0, size=T.size)
    else:
        T, P, Y = rm.ignition_states(name, *IGNITIONS[name], N_IGNITION)
        dt = 1e-7
    qf_ct, qr_ct, C = rm.cantera_rates(name, T, P, Y, mech.qss_species)
    qf, qr = qssa.apply(qssa.build_qssa_system(mech), *rm.to_singe_order(mech, name, qf_ct, qr_ct))
    wdot = plain_production_rates(mech, qf, qr)
    W = mech.molecular_weights[mech.transported_indices]
    diffusion = (0.3 * rng.standard_normal((W.size, T.size)) * W[:, None]
                 * np.max(np.abs(wdot), axis=0) * 10.0 ** rng.uniform(-6.0, 0.0, size=(W.size, 1)))
    return qf, qr, C, dt, diffusion


# -- the plain implementation ---------------------------------------------------

def plain_remove_stiffness(mech, qf, qr, C, dt, diffusion_source, form):
    """REFERENCE §8 written out: loops over stiff species, reactions and points."""
    qf, qr = np.array(qf, dtype=float), np.array(qr, dtype=float)
    n = qf.shape[1]
    dt = np.broadcast_to(np.asarray(dt, dtype=float), (n,))
    transported = mech.transported_species

    def factor(species):
        k = mech.species_index(species)
        C_s = np.maximum(C[k], 1e-200)
        destruction, creation = np.zeros(n), np.zeros(n)
        for r, reaction in enumerate(mech.reactions):
            for name, nu in reaction.reactants:
                if name == species:
                    destruction += nu * qf[r]
                    creation += nu * qr[r]
            for name, nu in reaction.products:
                if name == species:
                    destruction += nu * qr[r]
                    creation += nu * qf[r]
        diffusion = diffusion_source[transported.index(species)] / mech.molecular_weights[k]
        result = np.ones(n)
        for p in range(n):
            if destruction[p] / C_s[p] > 2.0 / dt[p]:
                c0 = C_s[p] * (creation[p] + diffusion[p]) / destruction[p]
                c0 = C_s[p] * (creation[p] + diffusion[p] + (C_s[p] - c0) / dt[p]) / destruction[p]
                result[p] = c0 / C_s[p]
        return result

    def scale(species, r_s):
        for r, reaction in enumerate(mech.reactions):
            for name, nu in reaction.reactants:
                if name == species:
                    qf[r] *= r_s ** nu
            for name, nu in reaction.products:
                if name == species:
                    qr[r] *= r_s ** nu

    if form == "simultaneous":
        factors = [factor(s) for s in mech.stiff_species]
        for species, r_s in zip(mech.stiff_species, factors):
            scale(species, r_s)
    else:
        for species in mech.stiff_species:
            scale(species, factor(species))
    return qf, qr


def plain_production_rates(mech, qf, qr):
    """omega_k = sum_r (nu''_kr - nu'_kr)(qf_r - qr_r) over every species (n_species, n)."""
    wdot = np.zeros((mech.n_species, qf.shape[1]))
    for r, reaction in enumerate(mech.reactions):
        for name, nu in reaction.reactants:
            wdot[mech.species_index(name)] -= nu * (qf[r] - qr[r])
        for name, nu in reaction.products:
            wdot[mech.species_index(name)] += nu * (qf[r] - qr[r])
    return wdot


# -- comparison helpers -------------------------------------------------------

def worst_rate_error(rates, reference) -> float:
    """max over points of ||[qf; qr] - ref|| / ||ref|| (0/0 counts as 0)."""
    got, want = np.concatenate(rates), np.concatenate(reference)
    difference = np.linalg.norm(got - want, axis=0)
    scale = np.linalg.norm(want, axis=0)
    with np.errstate(divide="ignore", invalid="ignore"):
        error = np.where(scale > 0, difference / scale, np.where(difference > 0, np.inf, 0.0))
    return float(np.max(error))


def worst_wdot_difference(mech, rates, reference) -> float:
    """max over points of max_k |wdot - wdot_ref| / max_k |wdot_ref|."""
    wdot, want = plain_production_rates(mech, *rates), plain_production_rates(mech, *reference)
    return float(np.max(np.max(np.abs(wdot - want), axis=0) / np.max(np.abs(want), axis=0)))


def stiffness_error(name: str, kind: str, form: str, with_diffusion: bool) -> float:
    mech = mechanism(name)
    qf, qr, C, dt, diffusion = inputs(name, kind)
    diffusion = diffusion if with_diffusion else np.zeros_like(diffusion)
    got = remove_stiffness(mech, qf, qr, C, dt, diffusion if with_diffusion else None, form=form)
    want = plain_remove_stiffness(mech, qf, qr, C, dt, diffusion, form)
    return worst_rate_error(got, want)


# -- tests ------------------------------------------------------------------------

@pytest.mark.parametrize("with_diffusion", [False, True], ids=["no-diffusion", "diffusion"])
@pytest.mark.parametrize("kind", ["random", "ignition"])
@pytest.mark.parametrize("form", FORMS)
@pytest.mark.parametrize("name", sorted(IGNITIONS))
def test_matches_plain_implementation(name, form, kind, with_diffusion):
    error = stiffness_error(name, kind, form, with_diffusion)
    print(f"\n{name} {form} {kind} {'with' if with_diffusion else 'without'} diffusion: {error:.2e}")
    assert error <= TOLERANCE


def test_removal_acts_on_these_states():
    """The states above exercise the stiff branch: rates change, some factors are not 1."""
    mech = mechanism("dme")
    qf, qr, C, dt, diffusion = inputs("dme", "random")
    new_qf, new_qr = remove_stiffness(mech, qf, qr, C, dt, diffusion)
    assert worst_rate_error((new_qf, new_qr), (qf, qr)) > 1e-2
    assert new_qf is not qf and np.array_equal(qf, inputs("dme", "random")[0])


@pytest.mark.parametrize("name", sorted(IGNITIONS))
def test_forms_differ(name):
    mech = mechanism(name)
    qf, qr, C, dt, diffusion = inputs(name, "random")
    simultaneous = remove_stiffness(mech, qf, qr, C, dt, diffusion, form="simultaneous")
    sequential = remove_stiffness(mech, qf, qr, C, dt, diffusion, form="sequential")
    difference = worst_wdot_difference(mech, sequential, simultaneous)
    qf, qr, C, dt, diffusion = inputs(name, "ignition")
    realistic = worst_wdot_difference(
        mech, remove_stiffness(mech, qf, qr, C, dt, diffusion, form="sequential"),
        remove_stiffness(mech, qf, qr, C, dt, diffusion))
    print(f"\n{name}: sequential vs simultaneous {difference:.2e} of max|wdot| on random states, "
          f"{realistic:.2e} along ignition")
    assert difference > 1e-2


def test_unknown_form_is_rejected():
    mech = mechanism("dme")
    qf, qr, C, dt, _ = inputs("dme", "ignition")
    with pytest.raises(ValueError, match="unknown stiffness removal form 'implicit'"):
        remove_stiffness(mech, qf, qr, C, dt, None, form="implicit")


def test_tiny_time_step_changes_nothing():
    mech = mechanism("heptane")
    qf, qr, C, _, diffusion = inputs("heptane", "ignition")
    for form in FORMS:
        new = remove_stiffness(mech, qf, qr, C, 1e-30, diffusion, form=form)
        assert np.array_equal(new[0], qf) and np.array_equal(new[1], qr)


def test_mechanism_without_stiff_species_is_unchanged():
    mech = mechanism("dodecane")
    assert not mech.stiff_species
    rng = np.random.default_rng(3)
    qf, qr = rng.random((2, len(mech.reactions), 4))
    new_qf, new_qr = remove_stiffness(mech, qf, qr, rng.random((mech.n_species, 4)), 1e-7, None)
    assert np.array_equal(new_qf, qf) and np.array_equal(new_qr, qr)


def test_comparison_catches_a_wrong_answer():
    mech = mechanism("dme")
    qf, qr, C, dt, diffusion = inputs("dme", "ignition")
    got_qf, got_qr = remove_stiffness(mech, qf, qr, C, dt, diffusion)
    k, p = np.unravel_index(np.argmax(np.abs(got_qf)), got_qf.shape)
    wrong_qf = got_qf.copy()
    wrong_qf[k, p] *= 1 + 1e-9
    assert worst_rate_error((wrong_qf, got_qr), (got_qf, got_qr)) > TOLERANCE
    # a wrong form is caught as well
    sequential = remove_stiffness(mech, *inputs("dme", "random"), form="sequential")
    simultaneous = plain_remove_stiffness(mech, *inputs("dme", "random"), "simultaneous")
    assert worst_rate_error(sequential, simultaneous) > TOLERANCE
