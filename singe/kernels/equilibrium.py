"""How the chemistry kernel computes 1/Kc of each equilibrium reaction
(docs/formulas.md §3), decided once per mechanism.

1/Kc_j = exp(sum_k nu_kj g_k/RT - dnu_j ln(P_atm/(R T))).  Written per
species, with the reduced potential

    gamma_k(T) = g_k/RT + ln(R T/P_atm) - (H_k/T + S_k),   H_k = sum_e a_ke H_e,  S_k = sum_e a_ke S_e,

the exponent is sum_k nu_kj gamma_k for every reaction that conserves the
elements (sum_k nu_kj a_ke = 0), whatever the element constants H_e, S_e
are: the shift cancels and the standard-concentration term is the sum of
the species' ln(R T/P_atm) (dnu_j = sum_k nu_kj).  The shift changes only
the 1/T and constant coefficients of each species' Gibbs polynomial, so it
costs nothing; H_e and S_e are fitted (least squares over 100-6000 K,
rounded) so that gamma is small, which keeps the products below in range.

Two forms:

* **product**: 1/Kc_j = prod_k E_k^nu_kj with E_k = exp(gamma_k) and
  F_k = 1/E_k for nu < 0.  One exp per species replaces one per reaction
  (the classic CHEMKIN-generated getrates form).  Allowed for a balanced
  reaction with whole coefficients (|nu| <= ``MAX_PRODUCT_NU``) when an
  order of its factors keeps every partial product within
  exp(+-``PARTIAL_LIMIT``) for every T in ``GUARD_TEMPERATURES``: no
  partial product overflows or underflows there, so the product is
  exp(sum) to a few ulp and only the last one may leave the range, as
  exp itself would (then the kernel's clamp min(., 1e300) acts the same).
  Chosen where it costs fewer FLOPs (the IR's counts): a species' factors
  are paid once (an exp, and a reciprocal for the second), so the product
  form pays where species are shared by many reactions (DME: all 175) and
  not where they are not (n-heptane's 12).
* **exponent**: 1/Kc_j = exp(sum_k nu_kj gamma_k + R1_j/T + R0_j), with
  the residual R1_j = sum_e b_je H_e, R0_j = sum_e b_je S_e of an
  unbalanced reaction (b_je = sum_k nu_kj a_ke; zero when balanced).
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass

import numpy as np

from singe.constants import GAS_CONSTANT, ONE_ATM
from singe.derived.stoichiometry import reaction_stoichiometry
from singe.derived.thermo import g_RT, temperatures
from singe.kernels.ir import OPCODES
from singe.mechanism import Mechanism
from singe.memo import per_mechanism

GUARD_TEMPERATURES = (100.0, 6000.0)
"""[K]: the range over which the product form is proven free of
intermediate overflow (wider than any NASA fit's lower bound of 200 K)."""
PARTIAL_LIMIT = 690.0
"""|ln| of every partial product but the last: below the double range's
709.78 (overflow) and 708.4 (smallest normal), with room for the grid."""
MAX_PRODUCT_NU = 3
"""The largest |nu| taken as repeated factors."""
_GRID = np.geomspace(*GUARD_TEMPERATURES, 2000)
_FIT_GRID = np.geomspace(*GUARD_TEMPERATURES, 200)
LN_R_OVER_P_ATM = math.log(GAS_CONSTANT / ONE_ATM)


@dataclass(frozen=True)
class ProductForm:
    """1/Kc as the product of ``factors`` in order: (species index, +1 for
    E = exp(gamma), -1 for F = 1/E), one entry per unit of |nu|."""

    factors: tuple[tuple[int, int], ...]


@dataclass(frozen=True)
class ExponentForm:
    """1/Kc = exp(sum nu gamma_k over ``terms`` + ``residual_inv_T``/T + ``residual_one``)."""

    terms: tuple[tuple[int, float], ...]
    residual_inv_T: float = 0.0
    residual_one: float = 0.0


@dataclass(frozen=True)
class EquilibriumForms:
    """The reduced potentials' shift (``shift_inv_T`` H_k [K] and
    ``shift_one`` S_k per species) and the form of every equilibrium reaction
    (reversible, no explicit reverse rate), by reaction index."""

    shift_inv_T: np.ndarray
    shift_one: np.ndarray
    forms: dict[int, ProductForm | ExponentForm]

    def reduced(self, k, one, ln_T, inv_T) -> tuple:
        """The coefficients of 1, ln T and 1/T of species ``k``'s gamma from
        those of its g/RT (numbers or arrays): ln(R/P_atm) - S_k, 1 and -H_k
        added.  The kernel's Gibbs polynomials and ``gamma`` both take them
        from here."""
        return one + LN_R_OVER_P_ATM - self.shift_one[k], ln_T + 1.0, inv_T - self.shift_inv_T[k]

    def gamma(self, mech: Mechanism, T) -> np.ndarray:
        """gamma_k(T), (n_species, n): what the kernel's Gibbs operations compute."""
        T = temperatures(T)
        zero = np.zeros(len(self.shift_one))
        one, ln_T, inv_T = (c[:, None] for c in self.reduced(slice(None), zero, zero, zero))
        return g_RT(mech, T) + one + ln_T * np.log(T) + inv_T / T

    def reads(self, reactions) -> tuple[dict[int, set[int]], set[int]]:
        """What the forms of ``reactions`` (indices) read: per species the
        factor signs of the product forms (+1 E, -1 F), and the species whose
        gamma an exponent form sums."""
        factors: dict[int, set[int]] = {}
        potentials: set[int] = set()
        for j in reactions:
            form = self.forms[j]
            if isinstance(form, ProductForm):
                for k, sign in form.factors:
                    factors.setdefault(k, set()).add(sign)
            else:
                potentials.update(k for k, _ in form.terms)
        return factors, potentials


def element_matrix(mech: Mechanism) -> np.ndarray:
    """a_ke: atoms of element e in species k, (n_species, n_elements)."""
    return np.array([[dict(s.composition).get(e, 0.0) for e in mech.elements] for s in mech.species],
                    dtype=float).reshape(mech.n_species, len(mech.elements))


def _element_constants(mech: Mechanism, elements: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """H_e [K] and S_e minimizing sum over T and species of gamma_k^2 (before
    the shift), weighted toward low T where the potentials are largest;
    rounded (H_e to 1 K, S_e to 1e-3) so that the emitted constants do not
    depend on the last bits of the least-squares solver."""
    n_elements = elements.shape[1]
    if n_elements == 0:
        return np.zeros(0), np.zeros(0)
    T = _FIT_GRID
    potentials = g_RT(mech, T) + np.log(GAS_CONSTANT * T / ONE_ATM)[None, :]
    design = np.concatenate([np.kron(elements, (1.0 / T)[:, None]), np.kron(elements, np.ones((T.size, 1)))], axis=1)
    weight = np.tile(1.0 / np.sqrt(T), mech.n_species)
    solution = np.linalg.lstsq(design * weight[:, None], potentials.reshape(-1) * weight, rcond=None)[0]
    return np.round(solution[:n_elements]), np.round(solution[n_elements:], 3)


def _ordered_factors(units: list[tuple[int, int]], logs: dict[int, np.ndarray]) -> tuple[list, float]:
    """Greedy order of the unit factors (species, sign) keeping the partial
    sums of their logarithms (sign * gamma over the grid) small; the order and
    the largest |partial sum| before the last factor."""
    remaining = sorted(units)
    partial = np.zeros(_GRID.size)
    order, worst = [], 0.0
    while remaining:
        best = min(range(len(remaining)),
                   key=lambda n: (np.abs(partial + remaining[n][1] * logs[remaining[n][0]]).max(), n))
        k, sign = remaining.pop(best)
        partial = partial + sign * logs[k]
        order.append((k, sign))
        if remaining:
            worst = max(worst, float(np.abs(partial).max()))
    return order, worst


def _product_form(nu: np.ndarray, balance: np.ndarray, gamma: np.ndarray) -> ProductForm | None:
    """The reaction's product form when it is allowed (None: not)."""
    species = np.flatnonzero(nu)
    if np.any(balance) or not all(float(nu[k]).is_integer() and abs(nu[k]) <= MAX_PRODUCT_NU for k in species):
        return None
    units = [(int(k), int(np.sign(nu[k]))) for k in species for _ in range(int(abs(nu[k])))]
    order, worst = _ordered_factors(units, {int(k): gamma[k] for k in species})
    return ProductForm(tuple(order)) if units and worst <= PARTIAL_LIMIT else None


def _factor_cost(signs: dict[int, int]) -> int:
    """FLOPs of a species' factors, given how many product forms read E (+1) and F (-1)."""
    wanted = sum(1 for count in signs.values() if count > 0)
    return 0 if wanted == 0 else OPCODES["exp"].flops + (wanted - 1) * OPCODES["rcp"].flops


def _product_cost(form: ProductForm) -> int:
    return (len(form.factors) - 1) * OPCODES["mul"].flops


def _exponent_cost(form: ExponentForm) -> int:
    terms = sum(OPCODES["add" if abs(nu) == 1.0 else "fma"].flops for _, nu in form.terms)
    residual = (form.residual_inv_T != 0.0) * OPCODES["fma"].flops + (form.residual_one != 0.0) * OPCODES["add"].flops
    return terms + residual + OPCODES["exp"].flops


def _search(products: dict[int, ProductForm], exponents: dict[int, ExponentForm], start: set[int]) -> tuple[int, set]:
    """Local search from the product forms ``start``: move one reaction to
    the other form while that lowers the total FLOPs, in index order, until
    no move does; the total and the reactions left in product form."""
    demand: dict[int, dict[int, int]] = {}

    def move(j: int, step: int) -> int:
        """Add (step 1) or remove (-1) reaction j's factors; the change in the factors' cost."""
        change = 0
        for k in sorted({k for k, _ in products[j].factors}):
            signs = demand.setdefault(k, {1: 0, -1: 0})
            before = _factor_cost(signs)
            for sign in {sign for kk, sign in products[j].factors if kk == k}:
                signs[sign] += step
            change += _factor_cost(signs) - before
        return change

    chosen = set(start)
    total = sum(_exponent_cost(exponents[j]) for j in exponents if j not in chosen)
    total += sum(move(j, 1) + _product_cost(products[j]) for j in sorted(chosen))
    for _ in range(len(products) + 1):
        moved = False
        for j in sorted(products):
            step = -1 if j in chosen else 1
            gain = step * (_product_cost(products[j]) - _exponent_cost(exponents[j])) + move(j, step)
            if gain < 0:
                chosen.symmetric_difference_update({j})
                total += gain
                moved = True
            else:
                move(j, -step)
        if not moved:
            break
    return total, chosen


def _choose(products: dict[int, ProductForm], exponents: dict[int, ExponentForm]) -> dict:
    """The form of each reaction: the cheaper of the local searches from
    every allowed product form and from none (species shared by a few
    reactions make the second necessary: n-heptane's CH2O + H pair)."""
    _, chosen = min(_search(products, exponents, set(products)), _search(products, exponents, set()),
                    key=lambda result: result[0])
    return {j: products[j] if j in chosen else exponents[j] for j in sorted(exponents)}


@per_mechanism
def equilibrium_forms(mech: Mechanism) -> EquilibriumForms:
    """The shift and the form of every equilibrium reaction of ``mech``."""
    elements = element_matrix(mech)
    H, S = _element_constants(mech, elements)
    shifted = EquilibriumForms(elements @ H, elements @ S, {})
    gamma = shifted.gamma(mech, _GRID)
    net = reaction_stoichiometry(mech).net
    products, exponents = {}, {}
    for j in (r.index for r in mech.reactions if r.reversible and r.reverse_rate is None):
        balance = net[j] @ elements
        terms = tuple((int(k), float(net[j, k])) for k in np.flatnonzero(net[j]))
        exponents[j] = ExponentForm(terms, float(balance @ H), float(balance @ S))
        product = _product_form(net[j], balance, gamma)
        if product is not None:
            products[j] = product
    return dataclasses.replace(shifted, forms=_choose(products, exponents))
