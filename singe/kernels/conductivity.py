"""Dataflow graph of the mixture thermal-conductivity kernel (not one of Singe's kernels).

lambda = 1/2 (sum_k x_k lambda_k + 1 / sum_k x_k / lambda_k), the CHEMKIN
mixture rule (Cantera's ``mixture-averaged-CK`` ``thermal_conductivity``),
with lambda_k [W/m/K] = exp(fit_k(ln T)) from the species' fitted cubic in
ln T and x_k the clamped mole fractions of the transported species.  Inputs:
temperature [K], mass fractions (species-major); output: conductivity [W/m/K].
"""

from __future__ import annotations

from singe.derived.transport import fit_transport
from singe.kernels.ir import DataflowGraph, Imm, InstrBuilder, Operation, Reg
from singe.kernels.transport import mixture_prologue, reduction_op
from singe.mechanism import Mechanism


def species_conductivity_op(k: int, coefficients) -> Operation:
    """lambda_k = exp(fit_k(ln T)); the terms x_k lambda_k and x_k / lambda_k of the two means."""
    b = InstrBuilder(f"cd{k}")
    conductivity = b.emit("exp", b.polynomial([float(c) for c in coefficients], Reg("lnT")))
    b.emit("mul", Reg(f"x{k}"), conductivity, dst=f"arithmetic{k}")
    b.emit("div", Reg(f"x{k}"), conductivity, dst=f"harmonic{k}")
    return Operation(f"conductivity_{k}", "species", tuple(b.instrs), ("lnT", f"x{k}"),
                     (f"arithmetic{k}", f"harmonic{k}"))


def conductivity_output_op() -> Operation:
    """lambda = 0.5 (sum x_k lambda_k + 1 / sum x_k / lambda_k), written out."""
    b = InstrBuilder("wc")
    inverse = b.emit("rcp", Reg("harmonic_sum"))
    total = b.emit("add", Reg("arithmetic_sum"), inverse)
    b.store("conductivity", 0, b.emit("mul", total, Imm(0.5)))
    return Operation("write_conductivity", "output", tuple(b.instrs), ("arithmetic_sum", "harmonic_sum"), ())


def conductivity_graph(mech: Mechanism) -> DataflowGraph:
    """Per-species conductivities and mean terms, two reductions, the output."""
    fits = fit_transport(mech)
    index = mech.transported_indices
    ops = mixture_prologue(mech.molecular_weights[index], mean_weight=False)
    ops += [species_conductivity_op(k, fits.conductivity[i]) for k, i in enumerate(index)]
    for mean in ("arithmetic", "harmonic"):
        ops.append(reduction_op(f"{mean}_mean", [f"{mean}{k}" for k in range(len(index))], f"{mean}_sum"))
    ops.append(conductivity_output_op())
    return DataflowGraph("conductivity", mech.name, tuple(ops), len(index))
