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


def temperature_op() -> Operation:
    """T and ln T, computed by every warp that needs them."""
    b = InstrBuilder("temp")
    T = b.load("temperature", 0, dst="T")
    b.emit("log", T, dst="lnT")
    return _op(b, "temperature", "point", [], ["T", "lnT"], replicated=True)


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

def viscosity_root_op(k: int, coefficients, weight: float) -> Operation:
    """s_k = sqrt(eta_k) (M_k)^(-1/4) and its inverse, each one exp of the
    fit's cubic in ln T with its coefficients halved (and negated) and the
    weight folded into the constant term: the species' only two exps.

    With them the Wilke ratio of every pair is a product,
    sqrt(eta_k/eta_j) (M_j/M_k)^(1/4) = s_k / s_j, as Cantera computes it
    from per-species square roots (MixTransport::updateViscosity_T)."""
    b = InstrBuilder(f"rv{k}")
    scaled = [0.5 * float(c) for c in coefficients]
    scaled[0] -= 0.25 * math.log(weight)
    g = b.polynomial(scaled, Reg("lnT"))
    b.emit("exp", g, dst=f"s{k}")
    b.emit("exp", b.emit("mul", g, Imm(-1.0)), dst=f"inv_s{k}")
    return _op(b, f"viscosity_root_{k}", "species", ["lnT"], [f"s{k}", f"inv_s{k}"])


WILKE_GROUP = 2
"""Outer species per Wilke operation: their sums run over the inner species j together, so that a
warp reads x_j and 1/s_j once for the group (one shared load per pair and operand instead of two;
DME viscosity at the paper's 15 warps: one group per warp, 15,566 -> 11,649 lane-instructions issued
per point with the loops unrolled completely, sm_90 SASS walk)."""
WILKE_GROUP_MAX_SPECIES = 33
"""Mechanisms up to this many transported species (Wilke loops of up to 32 iterations, unrolled
completely: ``lowering.FULL_UNROLL_ITERATIONS``) group their Wilke sums; larger ones keep one outer
species per operation: rolled, the group's second running sum and s_k push n-heptane viscosity at the
paper's 13 warps x 3 CTAs (48 registers) into 8-20 B of spill stores on sm_90 or sm_80 (ptxas, one or
two iterations per trip)."""


def wilke_groups(n: int) -> list[tuple[int, ...]]:
    """The outer species of each Wilke operation: consecutive runs of ``WILKE_GROUP`` (of one beyond
    ``WILKE_GROUP_MAX_SPECIES`` species)."""
    size = WILKE_GROUP if n <= WILKE_GROUP_MAX_SPECIES else 1
    return [tuple(range(k, min(k + size, n))) for k in range(0, n, size)]


def wilke_op(ks, weights: np.ndarray) -> Operation:
    """term_k = x_k eta_k / sum_j x_j Phi_kj for each outer species k of
    ``ks`` (one index or a group), with Phi_kj = (1 + s_k / s_j)^2 /
    sqrt(8 (1 + M_k/M_j)) (one constant per pair, multiplies only) and
    eta_k = s_k^2 sqrt(M_k); the group's sums interleaved per inner species j."""
    ks = (ks,) if isinstance(ks, (int, np.integer)) else tuple(ks)
    n = len(weights)
    b = InstrBuilder("wk" + "_".join(map(str, ks)))
    denominator: dict[int, Reg] = {}
    for j in range(n):  # j == k included (Phi_kk = 1 to rounding): every outer species has the same code
        for k in ks:
            one_plus = b.emit("fma", Reg(f"s{k}"), Reg(f"inv_s{j}"), Imm(1.0))
            scaled = b.emit("mul", b.emit("mul", one_plus, one_plus),
                            Const(1.0 / math.sqrt(8.0 * (1.0 + weights[k] / weights[j]))))
            denominator[k] = b.emit("mul", scaled, Reg(f"x{j}")) if j == 0 else \
                b.emit("fma", scaled, Reg(f"x{j}"), denominator[k])
    for k in ks:
        eta = b.emit("mul", b.emit("mul", Reg(f"s{k}"), Reg(f"s{k}")), Const(math.sqrt(weights[k])))
        b.emit("div", b.emit("mul", Reg(f"x{k}"), eta), denominator[k], dst=f"term{k}")
    inputs = [f"x{j}" for j in range(n)] + [f"s{k}" for k in ks] + [f"inv_s{j}" for j in range(n)]
    name = "_".join(map(str, ks))
    return _op(b, f"wilke_{name}", "species", inputs, [f"term{k}" for k in ks])


def viscosity_graph(mech: Mechanism) -> DataflowGraph:
    """Per-species roots s_k, one Wilke operation per group of outer species, a reduction, the write."""
    fits = fit_transport(mech)
    index = mech.transported_indices
    weights = mech.molecular_weights[index]
    n = len(index)
    ops = mixture_prologue(weights, mean_weight=False)
    ops += [viscosity_root_op(k, fits.viscosity[i], w) for k, (i, w) in enumerate(zip(index, weights))]
    ops += [wilke_op(ks, weights) for ks in wilke_groups(n)]
    ops.append(reduction_op("viscosity_sum", [f"term{k}" for k in range(n)], "mixture_viscosity"))
    write = InstrBuilder("wv")
    write.store("viscosity", 0, Reg("mixture_viscosity"))
    ops.append(_op(write, "write_viscosity", "output", ["mixture_viscosity"], []))
    return DataflowGraph("viscosity", mech.name, tuple(ops), n)


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
