"""Dataflow graphs of the viscosity and diffusion kernels (paper §3.2, §3.3).

Both kernels see the transported species only (QSSA species are not in the
state).  Inputs: temperature [K], pressure [Pa], mass fractions (species
major); outputs: viscosity [Pa s], or the mixture-averaged diffusion
coefficient of every transported species [m^2/s].
"""

from __future__ import annotations

import math

import numpy as np

from singe.derived.transport import fit_transport
from singe.kernels.ir import Const, DataflowGraph, Imm, InstrBuilder, Operation, Reg
from singe.mechanism import Mechanism

TINY = 1e-20  # mole fraction clamp, as Cantera


def _op(builder: InstrBuilder, name: str, kind: str, inputs, outputs, **flags) -> Operation:
    return Operation(name, kind, tuple(builder.instrs), tuple(inputs), tuple(outputs), **flags)


def temperature_op(replicated: bool = True) -> Operation:
    """T and ln T: computed by every warp that needs them (``replicated``), or by one warp and
    shared through shared memory."""
    b = InstrBuilder("temp")
    T = b.load("temperature", 0, dst="T")
    b.emit("log", T, dst="lnT")
    return _op(b, "temperature", "point", [], ["lnT"] if not replicated else ["T", "lnT"], replicated=replicated)


def pressure_op() -> Operation:
    b = InstrBuilder("pres")
    b.load("pressure", 0, dst="P")
    return _op(b, "pressure", "point", [], ["P"], replicated=True)


def mixture_ops(weights: np.ndarray, mean_weight: bool) -> list[Operation]:
    """1 / sum_j Y_j/M_j and (if ``mean_weight``) the mean molecular weight
    sum_j Y_j / sum_j Y_j/M_j [kg/kmol] of the unclamped mixture, as
    reductions over per-species terms (spread over the warps like any
    reduction) and one operation finishing them."""
    ops = []
    for k, w in enumerate(weights):
        b = InstrBuilder(f"mol{k}")
        Y = b.load("mass_fractions", k, dst=f"y{k}")
        b.emit("mul", Y, Const(1.0 / w), dst=f"moles{k}")
        ops.append(_op(b, f"moles_{k}", "species", [], [f"y{k}", f"moles{k}"] if mean_weight else [f"moles{k}"]))
    ops.append(reduction_op("moles_sum", [f"moles{k}" for k in range(len(weights))], "total_moles"))
    b = InstrBuilder("mix")
    b.emit("rcp", Reg("total_moles"), dst="inverse_moles")
    inputs, outputs = ["total_moles"], ["inverse_moles"]
    if mean_weight:
        ops.append(reduction_op("mass_sum", [f"y{k}" for k in range(len(weights))], "total_mass"))
        b.emit("mul", Reg("total_mass"), Reg("inverse_moles"), dst="mean_weight")
        inputs.append("total_mass")
        outputs.append("mean_weight")
    ops.append(_op(b, "mixture", "mixture", inputs, outputs))
    return ops


def mole_fraction_op(k: int, weight: float) -> Operation:
    """x_k = max((Y_k/M_k) / sum_j Y_j/M_j, 1e-20) (Y_k is loaded again: a cache hit)."""
    b = InstrBuilder(f"mf{k}")
    moles = b.emit("mul", b.load("mass_fractions", k), Const(1.0 / weight))
    x = b.emit("mul", moles, Reg("inverse_moles"))
    b.emit("max", x, Imm(TINY), dst=f"x{k}")
    return _op(b, f"mole_fraction_{k}", "species", ["inverse_moles"], [f"x{k}"])


def mixture_prologue(weights: np.ndarray, mean_weight: bool, point_ops=()) -> list[Operation]:
    """What every transport kernel starts with: T and ln T, ``point_ops``, the
    mixture sums and the clamped mole fraction x_k of every species."""
    return [temperature_op(), *point_ops] + mixture_ops(weights, mean_weight) + \
        [mole_fraction_op(k, w) for k, w in enumerate(weights)]


def reduction_op(name: str, terms: list[str], output: str) -> Operation:
    """output = sum of terms (associative: mapping may split it per warp)."""
    b = InstrBuilder(name)
    total = Reg(terms[0])
    for term in terms[1:-1]:
        total = b.emit("add", total, Reg(term))
    if len(terms) > 1:
        b.emit("add", total, Reg(terms[-1]), dst=output)
    else:
        b.emit("mov", total, dst=output)
    return _op(b, name, "reduction", terms, [output], reduction=True)


# -- viscosity ---------------------------------------------------------------
#
# Wilke's rule (docs/formulas.md §6) with s_k = sqrt(eta_k) M_k^(-1/4) and r_k = 1/s_k:
#     Phi_kj = d_kj (1 + s_k/s_j)^2 = d_kj (r_k + r_j)^2 / r_k^2,   d_kj = 1/sqrt(8 (1 + M_k/M_j)),
#     eta_k = sqrt(M_k) / r_k^2,
# so  eta = sum_k x_k eta_k / sum_j x_j Phi_kj = sum_k x_k sqrt(M_k) / D_k,
#     D_k = sum_j d_kj x_j (r_k + r_j)^2 = sum_j d_kj (r_k p_j + q_j)^2,   p_j = sqrt(x_j), q_j = p_j r_j:
# one exp per species (r_k), per pair an FMA, a square and an FMA with the pair's constant, and the
# inner species read as two values (p_j, q_j); every term is positive, nothing cancels.

MOLES_FLOOR = 1e-100
"""Lower bound of the mole numbers Y_k/M_k [kmol/kg] the viscosity kernel uses for mole fractions
(``viscosity_species_op``); a fraction's numerator and denominator (``wilke_op``) stay normal
(products of two D_k above 1e-200) even when every species is at the floor."""


def viscosity_species_op(k: int, coefficients, weight: float) -> Operation:
    """What the Wilke sums read of species k: p_k = sqrt(x_k) of its mole number
    x_k = max(Y_k/M_k, MOLES_FLOOR), r_k = 1/s_k = eta_k^(-1/2) M_k^(1/4) and q_k = p_k r_k.

    Wilke's rule is homogeneous of degree 0 in the mole fractions, so mole
    numbers serve in their place without their sum (x_k / sum_j x_j is the
    mole fraction): no reduction, no reciprocal, no barrier before the
    sums.  The clamp differs from Cantera's (mole fractions >= 1e-20) only
    for species whose mole fraction is below 1e-20, whose share of the
    viscosity is below 1e-20 relative either way.

    r_k is one exp of the viscosity fit's cubic in ln T with its coefficients
    halved and negated and the weight folded into the constant term: the
    species' only exp, as Cantera computes the Wilke ratios from per-species
    square roots (MixTransport::updateViscosity_T)."""
    b = InstrBuilder(f"vs{k}")
    moles = b.emit("mul", b.load("mass_fractions", k), Const(1.0 / weight))
    p = b.emit("sqrt", b.emit("max", moles, Imm(MOLES_FLOOR)), dst=f"p{k}")
    scaled = [-0.5 * float(c) for c in coefficients]
    scaled[0] += 0.25 * math.log(weight)
    r = b.emit("exp", b.polynomial(scaled, Reg("lnT")), dst=f"r{k}")
    b.emit("mul", p, r, dst=f"q{k}")
    return _op(b, f"viscosity_species_{k}", "species", ["lnT"], [f"p{k}", f"q{k}", f"r{k}"])


WILKE_GROUP = 2
"""Outer species per Wilke operation: their sums run over the inner species j together, so that a
warp reads p_j and q_j once for the group (DME viscosity at the paper's 15 warps: one group per
warp; with the former sums of x_j and 1/s_j, 15,566 -> 11,649 lane-instructions issued per point,
sm_90 SASS walk)."""
WILKE_GROUP_MAX_SPECIES = 33
"""Mechanisms up to this many transported species (Wilke loops of up to 32 iterations, unrolled
completely: ``lowering.FULL_UNROLL_ITERATIONS``) group their Wilke sums; larger ones keep one outer
species per operation: rolled, the group's second running sum pushed n-heptane viscosity at the
paper's 13 warps x 3 CTAs (48 registers) into 8-20 B of spill stores on sm_90 or sm_80 (ptxas, one or
two iterations per trip)."""


def wilke_groups(n: int) -> list[tuple[int, ...]]:
    """The outer species of each Wilke operation: consecutive runs of ``WILKE_GROUP`` (of one beyond
    ``WILKE_GROUP_MAX_SPECIES`` species)."""
    size = WILKE_GROUP if n <= WILKE_GROUP_MAX_SPECIES else 1
    return [tuple(range(k, min(k + size, n))) for k in range(0, n, size)]


def wilke_factor(weight_k: float, weight_j: float) -> float:
    """d_kj = 1 / sqrt(8 (1 + M_k/M_j)), the constant of the pair (k, j)."""
    return 1.0 / math.sqrt(8.0 * (1.0 + weight_k / weight_j))


def wilke_term_name(ks) -> str:
    """The graph value of the Wilke operation of the outer species ``ks``: their terms' sum."""
    return "term" + "_".join(map(str, ks))


def wilke_op(ks, weights: np.ndarray) -> Operation:
    """sum_k x_k sqrt(M_k) / D_k over the outer species k of ``ks`` (one index
    or a group), D_k = sum_j d_kj (r_k p_j + q_j)^2 (the section's comment):
    the group's sums interleaved per inner species j, then the terms as one
    fraction, N/D + n/d = (N d + n D) / (D d): one division per group."""
    ks = (ks,) if isinstance(ks, (int, np.integer)) else tuple(ks)
    n = len(weights)
    b = InstrBuilder("wk" + "_".join(map(str, ks)))
    sums: dict[int, Reg] = {}
    for j in range(n):  # j == k included (Phi_kk = 1 to rounding): every outer species has the same code
        for k in ks:
            w = b.emit("fma", Reg(f"r{k}"), Reg(f"p{j}"), Reg(f"q{j}"))
            square = b.emit("mul", w, w)
            factor = Const(wilke_factor(weights[k], weights[j]))
            sums[k] = b.emit("mul", square, factor) if j == 0 else b.emit("fma", square, factor, sums[k])
    numerator = denominator = None
    for k in ks:
        term = b.emit("mul", b.emit("mul", Reg(f"p{k}"), Reg(f"p{k}")), Const(math.sqrt(weights[k])))
        if numerator is None:
            numerator, denominator = term, sums[k]
        else:
            numerator = b.emit("fma", term, denominator, b.emit("mul", numerator, sums[k]))
            denominator = b.emit("mul", denominator, sums[k])
    b.emit("div", numerator, denominator, dst=wilke_term_name(ks))
    inputs = [f"{v}{j}" for j in range(n) for v in "pq"] + [f"r{k}" for k in ks]
    return _op(b, f"wilke_{'_'.join(map(str, ks))}", "species", inputs, [wilke_term_name(ks)])


def viscosity_graph(mech: Mechanism) -> DataflowGraph:
    """ln T (one warp, shared), per species p_k, q_k, r_k (``viscosity_species_op``), one Wilke
    operation per group of outer species, a reduction of their terms, the write."""
    fits = fit_transport(mech)
    index = mech.transported_indices
    weights = mech.molecular_weights[index]
    species = [viscosity_species_op(k, fits.viscosity[i], w) for k, (i, w) in enumerate(zip(index, weights))]
    # the last species first: the scheduler's ties follow graph order, so the warp computing ln T (the
    # first, mapping's tie) shares it before computing its own species, which come last
    ops = [temperature_op(replicated=False)] + species[::-1]
    groups = wilke_groups(len(index))
    ops += [wilke_op(ks, weights) for ks in groups]
    ops.append(reduction_op("viscosity_sum", [wilke_term_name(ks) for ks in groups], "mixture_viscosity"))
    write = InstrBuilder("wv")
    write.store("viscosity", 0, Reg("mixture_viscosity"))
    ops.append(_op(write, "write_viscosity", "output", ["mixture_viscosity"], []))
    return DataflowGraph("viscosity", mech.name, tuple(ops), len(index))


# -- diffusion ---------------------------------------------------------------

def diffusion_columns(n: int) -> list[list[int]]:
    """Rows computed by each column of the symmetric D matrix (paper Figure 5):
    floor(n/2) per column for odd n; n/2 for the first n/2 columns and n/2 - 1
    for the others when n is even.  Every unordered pair appears once."""
    if n % 2:
        counts = [n // 2] * n
    else:
        counts = [n // 2] * (n // 2) + [n // 2 - 1] * (n // 2)
    return [[(c + d) % n for d in range(1, counts[c] + 1)] for c in range(n)]


def diffusion_column_op(c: int, rows: list[int], coefficients: np.ndarray) -> Operation:
    """1/(P D_rc) = exp(-fit_rc(ln T)) for each row r of column c (the
    pressure is applied once per species, in the output); the column sum
    sum_r x_r / (P D_rc) and one row term x_c / (P D_rc) per row."""
    b = InstrBuilder(f"dc{c}")
    column_sum: Reg | None = None
    outputs = []
    for r in rows:
        inverse = b.emit("exp", b.polynomial([-float(a) for a in coefficients[r]], Reg("lnT")))
        column_sum = b.emit("mul", inverse, Reg(f"x{r}")) if column_sum is None else \
            b.emit("fma", inverse, Reg(f"x{r}"), column_sum)
        b.emit("mul", inverse, Reg(f"x{c}"), dst=f"rowterm{r}_{c}")
        outputs.append(f"rowterm{r}_{c}")
    if column_sum is not None:
        b.emit("mov", column_sum, dst=f"colsum{c}")
        outputs.append(f"colsum{c}")
    inputs = ["lnT", f"x{c}"] + [f"x{r}" for r in rows]
    return _op(b, f"diffusion_column_{c}", "column", inputs, outputs)


def diffusion_output_op(k: int, weight: float) -> Operation:
    """D_km = (M - x_k M_k) / (M sum_{j != k} x_j / D_jk), the sum being P
    times the reduction of the column and row terms (each x_j / (P D_jk))."""
    b = InstrBuilder(f"do{k}")
    numerator = b.emit("fma", Reg(f"x{k}"), Const(-weight), Reg("mean_weight"))
    denominator = b.emit("mul", b.emit("mul", Reg("mean_weight"), Reg(f"resistance{k}")), Reg("P"))
    b.store("diffusion", k, b.emit("div", numerator, denominator))
    return _op(b, f"diffusion_{k}", "output", [f"x{k}", "mean_weight", f"resistance{k}", "P"], [])


def diffusion_graph(mech: Mechanism) -> DataflowGraph:
    """Column operations of the D matrix, per-species reductions of the row
    and column terms, and the per-species output."""
    fits = fit_transport(mech)
    index = mech.transported_indices
    weights = mech.molecular_weights[index]
    n = len(index)
    coefficients = fits.diffusion[np.ix_(index, index)]
    columns = diffusion_columns(n)
    ops = mixture_prologue(weights, mean_weight=True, point_ops=[pressure_op()])
    ops += [diffusion_column_op(c, rows, coefficients[:, c]) for c, rows in enumerate(columns)]
    terms: dict[int, list[str]] = {k: ([f"colsum{k}"] if columns[k] else []) for k in range(n)}
    for c, rows in enumerate(columns):
        for r in rows:
            terms[r].append(f"rowterm{r}_{c}")
    ops += [reduction_op(f"resistance_sum_{k}", terms[k], f"resistance{k}") for k in range(n)]
    ops += [diffusion_output_op(k, float(weights[k])) for k in range(n)]
    return DataflowGraph("diffusion", mech.name, tuple(ops), n)
