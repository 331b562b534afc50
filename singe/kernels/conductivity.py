"""Dataflow graph of the mixture thermal-conductivity kernel (not one of Singe's kernels).

lambda = 1/2 (sum_k x_k lambda_k + 1 / sum_k x_k / lambda_k), the CHEMKIN
mixture rule (Cantera's ``mixture-averaged-CK`` ``thermal_conductivity``),
with lambda_k [W/m/K] = exp(fit_k(ln T)) from the species' fitted cubic in
ln T and x_k the mole fractions of the transported species.  Inputs:
temperature [K], mass fractions (species-major); output: conductivity [W/m/K].

With the mole numbers m_k = Y_k/M_k and S = sum_k m_k (x_k = m_k / S), the
rule is lambda = 1/2 (A / S + S / B), A = sum_k m_k lambda_k and
B = sum_k m_k / lambda_k: the three sums are independent, so no warp waits
for S before its species' terms (one barrier phase fewer than with the mole
fractions first), and each species loads Y_k once.  m_k is clamped at
``MOLES_FLOOR`` in the three sums alike (a negative mass fraction counts as
0, as Cantera's ``TPY`` sets it: the rule is homogeneous of degree 0).
"""

from __future__ import annotations

from singe.derived.transport import fit_transport
from singe.kernels.ir import DataflowGraph, Imm, InstrBuilder, Operation, Reg
from singe.kernels.transport import mole_number, reduction_op, temperature_op
from singe.mechanism import Mechanism


def species_conductivity_op(k: int, coefficients, weight: float) -> Operation:
    """Species k's mole number m_k = max(Y_k/M_k, ``MOLES_FLOOR``) (a term of S) and its terms m_k lambda_k and
    m_k / lambda_k of A and B, lambda_k = exp(fit_k(ln T))."""
    b = InstrBuilder(f"cd{k}")
    clamped = mole_number(b, k, weight, dst=f"moles{k}")
    conductivity = b.emit("exp", b.polynomial([float(c) for c in coefficients], Reg("lnT")))
    b.emit("mul", clamped, conductivity, dst=f"arithmetic{k}")
    b.emit("div", clamped, conductivity, dst=f"harmonic{k}")
    return Operation(f"conductivity_{k}", "species", tuple(b.instrs), ("lnT",),
                     (f"moles{k}", f"arithmetic{k}", f"harmonic{k}"))


def conductivity_output_op() -> Operation:
    """lambda = 1/2 (A / S + S / B) = 1/2 (A B + S^2) / (S B), one division; written out."""
    b = InstrBuilder("wc")
    S, A, B = Reg("total_moles"), Reg("arithmetic_sum"), Reg("harmonic_sum")
    numerator = b.emit("fma", A, B, b.emit("mul", S, S))
    total = b.emit("div", numerator, b.emit("mul", S, B))
    b.store("conductivity", 0, b.emit("mul", total, Imm(0.5)))
    return Operation("write_conductivity", "output", tuple(b.instrs), ("total_moles", "arithmetic_sum", "harmonic_sum"),
                     ())


def conductivity_graph(mech: Mechanism) -> DataflowGraph:
    """ln T, the per-species terms, three reductions (S, A, B), the output."""
    fits = fit_transport(mech)
    index = mech.transported_indices
    weights = mech.molecular_weights[index]
    ops = [temperature_op()]
    ops += [species_conductivity_op(k, fits.conductivity[i], w) for k, (i, w) in enumerate(zip(index, weights))]
    ops.append(reduction_op("moles_sum", [f"moles{k}" for k in range(len(index))], "total_moles"))
    for mean in ("arithmetic", "harmonic"):
        ops.append(reduction_op(f"{mean}_mean", [f"{mean}{k}" for k in range(len(index))], f"{mean}_sum"))
    ops.append(conductivity_output_op())
    return DataflowGraph("conductivity", mech.name, tuple(ops), len(index))
