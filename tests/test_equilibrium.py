"""1/Kc in the chemistry kernel (singe.kernels.equilibrium): the reduced
potentials, the product and exponent forms, the overflow guard and the
choice between the forms, against ``singe.reference.thermo`` (Cantera's
ln Kc) and, through the kernel, ``net_production_rates``.

Tolerances: 1e-10 relative for 1/Kc (measured 1.7e-13 down to 100 K: the
reference sums g/RT of up to ~300, the product multiplies a few factors);
1e-10 of max|ω̇| for the kernel, as tests/test_chemistry_graph.py.
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

import singe
import singe.kernels.chemistry as chemistry
from singe.compiler import compile_kernel
from singe.constants import BIG_NUMBER
from singe.derived.stoichiometry import reaction_stoichiometry
from singe.kernels import equilibrium
from singe.kernels.equilibrium import (GUARD_TEMPERATURES, PARTIAL_LIMIT, ExponentForm, ProductForm,
                                       equilibrium_forms)
from singe.reference.kinetics import net_production_rates
from singe.reference.thermo import log_equilibrium_constants
import cantera_reference as cr
from conftest import load
from mechanism_text import write_mechanism
from test_chemistry_graph import worst_error

RELATIVE = 1e-10
SMALLEST = 1e-290  # below this both sides are (sub)normal noise of an underflowed exp
GUARD_GRID = np.geomspace(*GUARD_TEMPERATURES, 97)


def reciprocal_Kc(mech, forms, T) -> dict[int, np.ndarray]:
    """min(1/Kc, 1e300) of every equilibrium reaction as the kernel computes
    it: the factors multiplied in the form's order, or the exponent's exp."""
    T = np.asarray(T, dtype=float)
    gamma = forms.gamma(mech, T)
    E = np.exp(gamma)
    values = {}
    with np.errstate(over="ignore", under="ignore", invalid="ignore"):
        for j, form in forms.forms.items():
            if isinstance(form, ProductForm):
                value = np.ones(T.size)
                for k, sign in form.factors:
                    value = value * (E[k] if sign > 0 else 1.0 / E[k])
            else:
                exponent = sum(nu * gamma[k] for k, nu in form.terms)
                value = np.exp(exponent + form.residual_inv_T / T + form.residual_one)
            values[j] = np.minimum(value, BIG_NUMBER)
    return values


def mismatches(mech, forms, T) -> list[int]:
    """Reactions whose kernel-form 1/Kc is off the reference's beyond RELATIVE."""
    with np.errstate(over="ignore"):
        theirs = np.minimum(np.exp(-log_equilibrium_constants(mech, T)), BIG_NUMBER)
    ours = reciprocal_Kc(mech, forms, T)
    return [j for j, value in ours.items()
            if not np.allclose(value, theirs[j], rtol=RELATIVE, atol=SMALLEST)]


@pytest.mark.parametrize("name", cr.ALL_NAMES)
def test_every_form_is_the_references_reciprocal_Kc_over_the_guard_range(name):
    """The shift cancels and ln(R T/P_atm) sums to the Δν term: both forms
    give Cantera's 1/Kc for every T from 100 K to 6000 K."""
    mech = load(name)
    assert mismatches(mech, equilibrium_forms(mech), GUARD_GRID) == []


def test_the_factor_order_is_what_keeps_the_product_in_range():
    """GRI-Mech 3.0 at 100-200 K: the guarded order keeps every partial
    product of every reaction within exp(±690); multiplying the E factors
    first overflows a partial product of some reaction and gives a wrong 1/Kc."""
    mech = load("gri30")
    forms = equilibrium_forms(mech)
    cold = np.geomspace(100.0, 200.0, 41)
    gamma = forms.gamma(mech, cold)
    for form in forms.forms.values():
        if isinstance(form, ProductForm):
            partial = np.cumsum([sign * gamma[k] for k, sign in form.factors], axis=0)[:-1]
            assert partial.size == 0 or np.abs(partial).max() <= PARTIAL_LIMIT
    assert mismatches(mech, forms, cold) == []
    positive_first = {j: ProductForm(tuple(sorted(f.factors, key=lambda factor: -factor[1])))
                      if isinstance(f, ProductForm) else f for j, f in forms.forms.items()}
    assert mismatches(mech, dataclasses.replace(forms, forms=positive_first), cold) != []


def test_the_shift_makes_the_potentials_small():
    """The elements' shift takes max |gamma| of DME at 300 K from ~230
    (g/RT alone) to ~150, which is what leaves room for the products."""
    mech = load("dme")
    forms = equilibrium_forms(mech)
    T = np.array([300.0])
    unshifted = forms.gamma(mech, T) + forms.shift_inv_T[:, None] / T + forms.shift_one[:, None]
    assert np.abs(forms.gamma(mech, T)).max() < 0.7 * np.abs(unshifted).max()


@pytest.mark.parametrize("name, products", [("dme", 175), ("gri30", 309), ("heptane", 0)])
def test_the_cheaper_form_is_chosen(name, products):
    """DME's and GRI-Mech's species are shared by many reactions: every
    reaction takes the product form (one exp per species, not per reaction).
    n-heptane's 12 equilibrium reactions share few: the exponent form costs
    less there, and the choice is never dearer than either uniform choice."""
    mech = load(name)
    forms = equilibrium_forms(mech)
    assert sum(isinstance(f, ProductForm) for f in forms.forms.values()) == products
    gamma = forms.gamma(mech, np.geomspace(*GUARD_TEMPERATURES, 2000))
    net = reaction_stoichiometry(mech).net
    elements = equilibrium.element_matrix(mech)
    allowed = {j: p for j in forms.forms
               if (p := equilibrium._product_form(net[j], net[j] @ elements, gamma)) is not None}
    exponents = {j: ExponentForm(tuple((int(k), float(net[j, k])) for k in np.flatnonzero(net[j])))
                 for j in forms.forms}
    chosen = {j for j, f in forms.forms.items() if isinstance(f, ProductForm)}
    total = equilibrium._search(allowed, exponents, chosen)[0]
    assert total <= equilibrium._search(allowed, exponents, set(allowed))[0]
    assert total <= sum(equilibrium._exponent_cost(f) for f in exponents.values())


def test_the_kernel_matches_the_reference_in_the_cold():
    """GRI-Mech 3.0's kernel (all product forms) at 100-300 K, far below
    its fits' 300 K: no overflow, no NaN, ω̇ as the reference's."""
    mech = load("gri30")
    kernel = compile_kernel(mech, "chemistry", warps=4)
    T, P, Y = cr.random_states(64, len(mech.transported_species), 7, T_range=(100.0, 300.0))
    ours = kernel.simulate(T, P, Y)
    assert np.all(np.isfinite(ours))
    assert worst_error(ours, net_production_rates(mech, T, P, Y)) <= RELATIVE


UNBALANCED = """
H2 + 0.5O2 <=> 0.9995H2O + 0.001H   1.0E13  0.0  20000.0
H + O2 <=> O + OH                    3.5E15 -0.4  16600.0
"""


@pytest.fixture(scope="module")
def unbalanced(tmp_path_factory):
    """A mechanism with a reversible reaction short of 5e-4 O (within the
    parser's 1e-3): its exponent form carries the shift's residual."""
    return write_mechanism(tmp_path_factory.mktemp("unbalanced"), UNBALANCED)


def test_an_unbalanced_reaction_keeps_the_residual(unbalanced, monkeypatch):
    """The kernel matches the reference; without the residual (R1/T + R0)
    the same kernel is off by e^(5e-4 (H_O/T + S_O)), past the tolerance
    (a mechanism object of its own: graphs are kept per mechanism)."""
    path = unbalanced
    unbalanced = singe.load_mechanism(path)
    forms = equilibrium_forms(unbalanced)
    form = forms.forms[0]
    assert isinstance(form, ExponentForm) and form.residual_inv_T != 0.0
    T, P, _ = cr.random_states(64, len(unbalanced.transported_species), 5)
    Y = np.random.default_rng(5).uniform(0.01, 1.0, (len(unbalanced.transported_species), T.size))
    Y /= Y.sum(axis=0)  # every species present: no point where all rates vanish
    theirs = net_production_rates(unbalanced, T, P, Y)
    right = compile_kernel(unbalanced, "chemistry", warps=2).simulate(T, P, Y)
    assert worst_error(right, theirs) <= RELATIVE
    without = dataclasses.replace(forms, forms={**forms.forms, 0: dataclasses.replace(form, residual_inv_T=0.0,
                                                                                        residual_one=0.0)})
    monkeypatch.setattr(chemistry, "equilibrium_forms", lambda mech: without)
    wrong = compile_kernel(singe.load_mechanism(path), "chemistry", warps=2).simulate(T, P, Y)
    assert worst_error(wrong, theirs) > RELATIVE
