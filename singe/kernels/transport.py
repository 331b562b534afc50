"""Dataflow graphs of the viscosity and diffusion kernels (paper §3.2, §3.3).

Both kernels see the transported species only (QSSA species are not in the
state).  Inputs: temperature [K], pressure [Pa], mass fractions (species
major); outputs: viscosity [Pa s], or the mixture-averaged diffusion
coefficient of every transported species [m^2/s].
"""

from __future__ import annotations

import math

import numpy as np

from singe.kernels.ir import Const, DataflowGraph, Imm, InstrBuilder, Operation, Reg
from singe.mechanism import Mechanism
from singe.transport_fit import fit_transport

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


def mole_fractions_op(weights: np.ndarray, mean_weight: bool) -> Operation:
    """x_k = max((Y_k/M_k) / sum_j Y_j/M_j, 1e-20) for all species, and the
    mean molecular weight of the unclamped mixture when asked.

    Two passes over the mass fractions (the second load hits the cache), so
    no more than a few values are live at once."""
    b = InstrBuilder("mf")
    total = None
    for k, w in enumerate(weights):
        moles = b.emit("mul", b.load("mass_fractions", k), Const(1.0 / w))
        total = moles if total is None else b.emit("add", total, moles)
    inverse = b.emit("rcp", total)
    outputs = []
    mean = None
    for k, w in enumerate(weights):
        moles = b.emit("mul", b.load("mass_fractions", k), Const(1.0 / w))
        x = b.emit("mul", moles, inverse)
        if mean_weight:
            mean = b.emit("mul", x, Const(float(w))) if mean is None else b.emit("fma", x, Const(float(w)), mean)
        b.emit("max", x, Imm(TINY), dst=f"x{k}")
        outputs.append(f"x{k}")
    if mean_weight:
        b.emit("mov", mean, dst="mean_weight")
        outputs.append("mean_weight")
    return _op(b, "mole_fractions", "mixture", [], outputs)


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

def species_log_viscosity_op(k: int, coefficients) -> Operation:
    b = InstrBuilder(f"lnv{k}")
    b.polynomial(coefficients, Reg("lnT"), dst=f"lnvis{k}")
    return _op(b, f"log_viscosity_{k}", "species", ["lnT"], [f"lnvis{k}"])


def wilke_op(k: int, weights: np.ndarray) -> Operation:
    """term_k = x_k eta_k / sum_j x_j Phi_kj, in log space:
    Phi_kj = (1 + exp(ln eta_k/2 - ln eta_j/2 + ln(M_j/M_k)/4))^2 / sqrt(8 (1 + M_k/M_j))."""
    n = len(weights)
    b = InstrBuilder(f"wk{k}")
    half = b.emit("mul", Reg(f"lnvis{k}"), Imm(0.5))
    denominator: Reg = Reg(f"x{k}")  # Phi_kk = 1
    for j in range(n):
        if j == k:
            continue
        shift = b.emit("add", half, Const(0.25 * math.log(weights[j] / weights[k])))
        ratio = b.emit("exp", b.emit("fma", Reg(f"lnvis{j}"), Imm(-0.5), shift))
        one_plus = b.emit("add", ratio, Imm(1.0))
        scaled = b.emit("mul", b.emit("mul", one_plus, one_plus),
                        Const(1.0 / math.sqrt(8.0 * (1.0 + weights[k] / weights[j]))))
        denominator = b.emit("fma", scaled, Reg(f"x{j}"), denominator)
    eta = b.emit("exp", Reg(f"lnvis{k}"))
    b.emit("div", b.emit("mul", Reg(f"x{k}"), eta), denominator, dst=f"term{k}")
    inputs = [f"x{j}" for j in range(n)] + [f"lnvis{j}" for j in range(n)]
    return _op(b, f"wilke_{k}", "species", inputs, [f"term{k}"])


def viscosity_graph(mech: Mechanism) -> DataflowGraph:
    """Per-species ln eta_k, one Wilke operation per outer species, a reduction, the write."""
    fits = fit_transport(mech)
    index = mech.transported_indices
    weights = mech.molecular_weights[index]
    n = len(index)
    ops = [temperature_op(), mole_fractions_op(weights, mean_weight=False)]
    ops += [species_log_viscosity_op(k, fits.viscosity[i]) for k, i in enumerate(index)]
    ops += [wilke_op(k, weights) for k in range(n)]
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
    """1/D_rc = P exp(-fit_rc(ln T)) for each row r of column c; the column
    sum sum_r x_r / D_rc and one row term x_c / D_rc per row."""
    b = InstrBuilder(f"dc{c}")
    column_sum: Reg | None = None
    outputs = []
    for r in rows:
        exponent = b.polynomial([-float(a) for a in coefficients[r]], Reg("lnT"))
        inverse = b.emit("mul", b.emit("exp", exponent), Reg("P"))
        column_sum = b.emit("mul", inverse, Reg(f"x{r}")) if column_sum is None else \
            b.emit("fma", inverse, Reg(f"x{r}"), column_sum)
        b.emit("mul", inverse, Reg(f"x{c}"), dst=f"rowterm{r}_{c}")
        outputs.append(f"rowterm{r}_{c}")
    if column_sum is not None:
        b.emit("mov", column_sum, dst=f"colsum{c}")
        outputs.append(f"colsum{c}")
    inputs = ["lnT", "P", f"x{c}"] + [f"x{r}" for r in rows]
    return _op(b, f"diffusion_column_{c}", "column", inputs, outputs)


def diffusion_output_op(k: int, weight: float) -> Operation:
    """D_km = (M - x_k M_k) / (M sum_{j != k} x_j / D_jk)."""
    b = InstrBuilder(f"do{k}")
    numerator = b.emit("fma", Reg(f"x{k}"), Const(-weight), Reg("mean_weight"))
    denominator = b.emit("mul", Reg("mean_weight"), Reg(f"resistance{k}"))
    b.store("diffusion", k, b.emit("div", numerator, denominator))
    return _op(b, f"diffusion_{k}", "output", [f"x{k}", "mean_weight", f"resistance{k}"], [])


def diffusion_graph(mech: Mechanism) -> DataflowGraph:
    """Column operations of the D matrix, per-species reductions of the row
    and column terms, and the per-species output."""
    fits = fit_transport(mech)
    index = mech.transported_indices
    weights = mech.molecular_weights[index]
    n = len(index)
    coefficients = fits.diffusion[np.ix_(index, index)]
    columns = diffusion_columns(n)
    ops = [temperature_op(), pressure_op(), mole_fractions_op(weights, mean_weight=True)]
    ops += [diffusion_column_op(c, rows, coefficients[:, c]) for c, rows in enumerate(columns)]
    terms: dict[int, list[str]] = {k: ([f"colsum{k}"] if columns[k] else []) for k in range(n)}
    for c, rows in enumerate(columns):
        for r in rows:
            terms[r].append(f"rowterm{r}_{c}")
    ops += [reduction_op(f"resistance_sum_{k}", terms[k], f"resistance{k}") for k in range(n)]
    ops += [diffusion_output_op(k, float(weights[k])) for k in range(n)]
    return DataflowGraph("diffusion", mech.name, tuple(ops), n)
