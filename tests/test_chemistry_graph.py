"""The chemistry kernel's dataflow graph (paper §3.4), compiled for one warp
and run in the warp simulator, against ``singe.reference.kinetics.net_production_rates``.

Tolerance: 1e-10 of max|ω̇| at each point (the reference itself agrees with
Cantera to ~1e-14; the graph evaluates ln A + b ln T - E/RT, the Gibbs
polynomial, PLOG and the QSSA solve with reciprocals in a different order).
"""

from __future__ import annotations

import dataclasses
import functools
from collections import Counter

import numpy as np
import pytest

import singe
from singe.compiler import CompiledKernel, compile_kernel
from singe.kernels.chemistry import chemistry_graph
from singe.kernels.ir import OPCODES, Const, DataflowGraph, Instr
from singe.mapping import map_graph
from singe.reference.kinetics import kinetics_tables, net_production_rates
from singe.reference.qssa import build_qssa_system
from singe.schedule import schedule
import cantera_reference as cr
from cantera_reference import random_states
from conftest import load
from test_kinetics import FORMS_COMMON, FORMS_SINGE_ONLY, _forms_states

TOLERANCE = 1e-10  # of max|ω̇| per point
POINTS = 256
MECHANISMS = ["h2o2", "gri30", "dme", "heptane", "dodecane"]
DT_RANGE = (1e-9, 1e-5)  # s
DIFFUSION_SCALE = 1e3  # kg/m^3/s: large enough that the source moves the stiff factors past the tolerance
POINT_KINDS = {"point", "mixture"}  # the replicated operations: point values and the molar density


@functools.lru_cache(maxsize=None)
def compiled(name: str) -> CompiledKernel:
    return compile_kernel(load(name), "chemistry", warps=1)


def states(mech, seed: int = 3):
    """Random T [K], P [Pa], Y and per point a dt [s] log-uniform in DT_RANGE
    and a diffusion source [kg/m^3/s] of either sign."""
    n_species = len(mech.transported_species)
    T, P, Y = random_states(POINTS, n_species, seed)
    rng = np.random.default_rng(seed + 100)
    dt = np.exp(rng.uniform(*np.log(DT_RANGE), size=POINTS))
    source = DIFFUSION_SCALE * rng.normal(size=(n_species, POINTS))
    return T, P, Y, dt, source


def worst_error(ours: np.ndarray, theirs: np.ndarray) -> float:
    """max over points of max_k |ours - theirs| / max_k |theirs|."""
    scale = np.max(np.abs(theirs), axis=0)
    return float(np.max(np.max(np.abs(ours - theirs), axis=0) / scale))


def simulate(kernel: CompiledKernel, mech, T, P, Y, dt, source) -> np.ndarray:
    if mech.stiff_species:
        return kernel.simulate(T, P, Y, dt=dt, diffusion_source=source)
    return kernel.simulate(T, P, Y)


def recompiled(kernel: CompiledKernel, graph: DataflowGraph) -> CompiledKernel:
    """``kernel`` with its graph replaced, mapped and scheduled again."""
    mapping = map_graph(graph, kernel.options)
    return dataclasses.replace(kernel, graph=graph, mapping=mapping, programs=schedule(mapping))


def scale_constants(factor: float):
    """A change: every constant of an instruction scaled by ``factor`` (None: no constant)."""
    def change(instr: Instr) -> Instr | None:
        if not any(isinstance(s, Const) for s in instr.srcs):
            return None
        return dataclasses.replace(instr, srcs=tuple(Const(s.value * factor) if isinstance(s, Const) else s
                                                     for s in instr.srcs))
    return change


def scale_constant(value: float, factor: float):
    """A change: the constant equal (to 1e-6) to ``value`` scaled by ``factor``."""
    def matches(s) -> bool:
        return isinstance(s, Const) and abs(s.value - value) <= 1e-6 * abs(value)

    def change(instr: Instr) -> Instr | None:
        if not any(matches(s) for s in instr.srcs):
            return None
        return dataclasses.replace(instr, srcs=tuple(Const(s.value * factor) if matches(s) else s
                                                     for s in instr.srcs))
    return change


def drop_term(instr: Instr) -> Instr | None:
    """A change: ``add a, b`` becomes ``mov a`` (a term forgotten)."""
    return Instr("mov", instr.dst, instr.srcs[:1]) if instr.opcode == "add" else None


def mutated(graph: DataflowGraph, name: str, change, last: bool = False) -> DataflowGraph:
    """``graph`` with the first (or last) instruction of operation ``name`` that
    ``change`` applies to replaced by its changed form."""
    op = graph.by_name[name]
    positions = [i for i, instr in enumerate(op.instrs) if change(instr) is not None]
    at = positions[-1] if last else positions[0]
    new_op = dataclasses.replace(op, instrs=op.instrs[:at] + (change(op.instrs[at]),) + op.instrs[at + 1:])
    return dataclasses.replace(graph, operations=tuple(new_op if o.name == name else o for o in graph.operations))


# --------------------------------------------------------------------------
# Structure
# --------------------------------------------------------------------------

@pytest.mark.parametrize("name", ["gri30", "heptane"])
def test_gibbs_selects_the_range_once_per_species(name):
    """Every temperature range's polynomial is evaluated and its result
    selected once (a NASA7 species: one select of two values), not one select
    of two constants per coefficient; each coefficient is read once."""
    mech = load(name)
    graph = chemistry_graph(mech)
    for op in (op for op in graph.operations if op.kind == "gibbs"):
        thermo = mech.species[int(op.name.split("_")[1])].thermo
        selects = [i for i in op.instrs if i.opcode == "sel"]
        assert len(selects) <= len(thermo.pieces[1]) - 1, op.name
        assert all(not isinstance(s, Const) for i in selects for s in i.srcs[2:]), op.name
        constants = [s for i in op.instrs if i.opcode != "sel" for s in i.srcs if isinstance(s, Const)]
        assert len(constants) <= 9 * len(thermo.pieces[1]), op.name


@pytest.mark.parametrize("name", MECHANISMS)
def test_graph_has_the_phases_of_the_paper(name):
    """Verified graph; one operation per computed reaction, per QSSA species
    and step, per stiff species; replicated operations are the point values
    and the molar density only (every warp sums the mass fractions itself);
    global fields as the kernel's interface says."""
    mech = load(name)
    graph = chemistry_graph(mech)
    graph.verify()
    assert str(graph).startswith(f"graph chemistry of {mech.name}")
    kinds = Counter(op.kind for op in graph.operations)
    assert {op.kind for op in graph.operations if op.replicated} <= POINT_KINDS
    assert all(op.replicated for op in graph.operations if op.kind in POINT_KINDS)
    assert kinds["mixture"] == 1 and not any(op.reduction for op in graph.operations if op.kind != "reduction")
    assert all(instr.opcode in OPCODES for op in graph.operations for instr in op.instrs)
    system = build_qssa_system(mech) if mech.qss_species else None
    dropped = set(system.dropped) if system else set()
    computed = [r for r in mech.reactions
                if (r.index, 0) not in dropped or (r.reversible and (r.index, 1) not in dropped)]
    assert kinds["reaction"] == len(computed)
    assert kinds["qssa_coefficients"] == len(mech.qss_species)
    # a scaled reaction is dropped when neither an output nor a stiff species reads it (QSSA <=> QSSA)
    nu_net = kinetics_tables(mech).nu_net[mech.transported_indices]
    stiff = set(mech.stiff_species)
    read = {r.index for r in mech.reactions if np.any(nu_net[:, r.index])
            or stiff & {name for name, _ in r.reactants + r.products}}
    assert kinds["qssa_scale"] == len({j for j, _, _ in system.scaled} & read if system else ())
    assert kinds["stiffness"] == len(mech.stiff_species)
    assert kinds["output"] == len(mech.transported_species)
    loads = {(i.field, i.index) for op in graph.operations for i in op.instrs if i.opcode == "ldg"}
    stores = sorted((i.field, i.index) for op in graph.operations for i in op.instrs if i.opcode == "stg")
    n = len(mech.transported_species)
    expected = {("temperature", 0), ("pressure", 0)} | {("mass_fractions", t) for t in range(n)}
    if mech.stiff_species:
        expected |= {("dt", 0)} | {("diffusion_source", mech.transported_species.index(name))
                                   for name in mech.stiff_species}
    assert loads == expected
    assert stores == [("production_rates", t) for t in range(n)]
    assert graph.flops > 0


def test_third_body_operations_are_one_per_efficiency_vector():
    mech = load("gri30")
    graph = compiled("gri30").graph
    efficiencies = kinetics_tables(mech).efficiencies
    vectors = {tuple(efficiencies[r.index]) for r in mech.reactions
               if r.kind in ("three-body", "falloff", "chemically-activated")}
    colliders = {v for v in vectors if sum(e != 0.0 for e in v) == 1 and max(v) == 1.0}
    assert Counter(op.kind for op in graph.operations)["third_body"] == len(vectors - colliders)


def test_constants_are_per_operation_mechanism_numbers():
    """Every reaction operation carries its own constants (ln A, b, E/R ...)."""
    graph = compiled("heptane").graph
    for op in graph.operations:
        if op.kind == "reaction":
            assert op.constants, op.name


# --------------------------------------------------------------------------
# Against the reference
# --------------------------------------------------------------------------

@pytest.mark.parametrize("with_dt", [False, True], ids=["no-dt", "dt"])
@pytest.mark.parametrize("name", MECHANISMS)
def test_simulated_production_rates_match_the_reference(name, with_dt):
    """1 warp x 256 points, random states, with dt = 0 (no stiffness removal)
    and with dt in 1e-9..1e-5 s and a random diffusion source."""
    mech = load(name)
    T, P, Y, dt, source = states(mech)
    kernel = compiled(name)
    if with_dt:
        ours = simulate(kernel, mech, T, P, Y, dt, source)
        theirs = net_production_rates(mech, T, P, Y, dt=dt, diffusion_source=source)
    else:
        ours = kernel.simulate(T, P, Y)
        theirs = net_production_rates(mech, T, P, Y)
    error = worst_error(ours, theirs)
    print(f"\n{name} {'dt' if with_dt else 'no dt'}: worst error {error:.2e} of max|wdot|")
    assert error <= TOLERANCE
    if with_dt and mech.stiff_species:  # the comparison is not vacuous: stiffness removal and the source count
        assert worst_error(net_production_rates(mech, T, P, Y), theirs) > 1e3 * TOLERANCE
        assert worst_error(net_production_rates(mech, T, P, Y, dt=dt), theirs) > 1e3 * TOLERANCE


@pytest.fixture(scope="module")
def forms(tmp_path_factory) -> singe.Mechanism:
    """The hand-written mechanism of test_kinetics: PLOG, Chebyshev, Troe
    (3/4 parameters, T1 = 0), SRI (3/5), chemically activated, (+N2), FORD,
    REV/0 0 0/, REV with RORD, Landau–Teller, the 1/Kc clamp."""
    folder = tmp_path_factory.mktemp("chemistry_forms")
    (folder / "therm.dat").write_text((cr.BUNDLED_MECHANISMS / "h2o2" / "therm.dat").read_text())
    (folder / "forms.inp").write_text(FORMS_COMMON + FORMS_SINGE_ONLY)
    return singe.load_mechanism(str(folder / "forms.inp"), thermo=str(folder / "therm.dat"))


def test_every_rate_form_matches_the_reference(forms):
    """Pressures inside and outside the PLOG / Chebyshev tables (the table
    pressures themselves included), temperatures beyond the Chebyshev range."""
    T, P, Y = _forms_states()
    kernel = compile_kernel(forms, "chemistry", warps=1)
    kinds = Counter(op.kind for op in kernel.graph.operations)
    assert kinds["reaction"] == len(forms.reactions)
    error = worst_error(kernel.simulate(T, P, Y), net_production_rates(forms, T, P, Y))
    print(f"\nforms: worst error {error:.2e} of max|wdot|")
    assert error <= TOLERANCE


# reaction of the forms mechanism -> a constant of its characteristic form (SI, as the graph has it)
FORM_CONSTANTS = {
    0: 1.0 / np.log(100.0),  # PLOG: 1 / (ln P_2 - ln P_1) between 0.01 and 1 atm
    1: 9.0,  # Chebyshev a_00 (log10 of the SI rate)
    2: 0.7346,  # Troe a
    5: 0.45,  # SRI a
    6: 1.3,  # SRI d
    7: -150.96586004962971,  # chemically activated: -E/R of HIGH
    10: 0.5,  # FORD O2
    15: 1.5,  # RORD H2O
    16: 10.0,  # Landau-Teller B
}


@pytest.mark.parametrize("reaction", sorted(FORM_CONSTANTS))
def test_comparison_fails_for_a_perturbed_rate_form(forms, reaction):
    """One constant of the reaction's characteristic form off by 0.1% fails the comparison."""
    T, P, Y = _forms_states()
    kernel = compile_kernel(forms, "chemistry", warps=1)
    graph = mutated(kernel.graph, f"reaction_{reaction}", scale_constant(FORM_CONSTANTS[reaction], 1.001))
    wrong = recompiled(kernel, graph)
    assert worst_error(wrong.simulate(T, P, Y), net_production_rates(forms, T, P, Y)) > TOLERANCE


@pytest.mark.parametrize("name, operation, change", [
    ("gri30", "reaction_37", scale_constants(1.001)),  # ln A and b of H + O2 <=> O + OH
    ("dme", "qssa_coefficients_0", drop_term),  # a term of D_0 or P_0 forgotten
    ("dme", "stiffness_0", scale_constants(1.001)),  # 1/W of the first stiff species
    ("dodecane", "first gibbs", scale_constants(1.001)),  # a1 - a7 of a NASA7 fit
], ids=["arrhenius", "qssa", "stiffness", "gibbs"])
def test_comparison_fails_for_a_wrong_graph(name, operation, change):
    """One instruction of one operation changed moves ω̇ past the tolerance."""
    mech = load(name)
    T, P, Y, dt, source = states(mech)
    graph = compiled(name).graph
    if operation == "first gibbs":
        operation = next(op.name for op in graph.operations if op.kind == "gibbs")
    wrong = recompiled(compiled(name), mutated(graph, operation, change))
    theirs = net_production_rates(mech, T, P, Y, dt=dt if mech.stiff_species else None, diffusion_source=source)
    assert worst_error(simulate(wrong, mech, T, P, Y, dt, source), theirs) > TOLERANCE


def test_total_concentration_is_the_ideal_gas_value_not_a_sum_over_warps():
    """GRI-Mech's third bodies read sum_k C_k = P/(R T) (the density's
    definition makes it exact): one replicated operation from P and 1/T, no
    reduction over the concentrations; the kernel matches Cantera with it
    (test_compiler_chemistry), and the reference's [M] sums the C_k."""
    from singe.constants import GAS_CONSTANT
    from singe.reference.kinetics import molar_concentrations

    graph = chemistry_graph(load("gri30"))
    total = graph.by_name["total_concentration"]
    assert total.replicated and set(total.inputs) == {"P", "invT"} and total.outputs == ("total_concentration",)
    assert not any(op.reduction and "C0" in op.inputs for op in graph.operations)
    mech = load("gri30")
    T, P = np.array([1200.0]), np.array([3e5])
    Y = np.full((len(mech.transported_species), 1), 1.0 / len(mech.transported_species))
    assert molar_concentrations(mech, T, P, Y).sum() == pytest.approx(P[0] / (GAS_CONSTANT * T[0]), rel=1e-14)
