"""The chemistry kernel compiled for many warp and QSSA-warp counts, simulated,
against Cantera (mechanisms without QSSA) and singe.reference (QSSA, stiffness)."""

from __future__ import annotations

import dataclasses
import itertools
import subprocess
import sys

import cantera as ct
import numpy as np
import pytest

import singe
from singe.compiler import compile_kernel
from singe.options import PLACEMENTS
from singe.programs import SharedLoad, WarpProgram
from singe.sim.simulator import SimulationError
from singe.reference.kinetics import net_production_rates
from conftest import load
from cantera_reference import BUNDLED_MECHANISMS, CANTERA_DATA, cantera_solution, random_states
from reaction_map import ignition_states
from test_kinetics import FORMS_COMMON

TOLERANCE = 1e-9  # x max|wdot| per point
STATES = 512
WARPS = (1, 2, 4, 8, 16, 20)
QSSA_WARPS = (1, 2, 4)
IGNITIONS = {"dme": ("CH3OCH3", 1000.0, 20.0), "heptane": ("nc7h16", 900.0, 20.0),
             "dodecane": ("NC12H26", 900.0, 20.0)}


def worst_error(ours: np.ndarray, theirs: np.ndarray) -> float:
    """Largest |ours - theirs| relative to max|wdot| of the point."""
    return float(np.max(np.abs(ours - theirs) / np.abs(theirs).max(axis=0)))


def stiffness_inputs(n: int, species: int, seed: int):
    rng = np.random.default_rng(seed)
    return 10.0 ** rng.uniform(-9, -5, n), rng.normal(0.0, 1.0, (species, n))


def cantera_rates(name: str, T, P, Y):
    """Cantera's net production rates of the transported species (no QSSA here)."""
    gas = cantera_solution(name)
    out = np.empty_like(Y)
    for i in range(Y.shape[1]):
        gas.TPY = T[i], P[i], Y[:, i]
        out[:, i] = gas.net_production_rates
    return out


def configurations(mech):
    qssa = QSSA_WARPS if mech.qss_species else (1,)
    return [(w, q) for w, q in itertools.product(WARPS, qssa) if q <= w]


@pytest.mark.parametrize("name", ["gri30", "h2o2"])
def test_matches_cantera(name):
    mech = load(name)
    T, P, Y = random_states(STATES, len(mech.transported_species), seed=11)
    expected = cantera_rates(name, T, P, Y)
    for warps, qssa in configurations(mech):
        compiled = compile_kernel(mech, "chemistry", warps=warps, qssa_warps=qssa)
        compiled.verify()
        assert len(compiled.programs.barrier_ids) <= compiled.programs.barrier_limit
        error = worst_error(compiled.simulate(T, P, Y), expected)
        assert error <= TOLERANCE, f"{name} warps={warps}: {error:.2e}"


def _reference_states(name: str):
    mech = load(name)
    T, P, Y = random_states(STATES, len(mech.transported_species), seed=12)
    fuel, T0, P0 = IGNITIONS[name]
    Ti, Pi, Yi = ignition_states(name, fuel, T0, P0, samples=16)
    Yi = np.array(Yi[mech.transported_indices])
    Yi /= Yi.sum(axis=0)
    return mech, np.concatenate([T, Ti]), np.concatenate([P, Pi]), np.concatenate([Y, Yi], axis=1)


@pytest.mark.parametrize("name", ["dme", "heptane", "dodecane"])
def test_matches_reference_with_qssa_and_stiffness(name):
    """Random states and states of a Cantera ignition of the full mechanism;
    every warp count and QSSA-warp count; with and without stiffness removal."""
    mech, T, P, Y = _reference_states(name)
    dt, source = stiffness_inputs(T.size, Y.shape[0], seed=13)
    expected = {False: net_production_rates(mech, T, P, Y),
                True: net_production_rates(mech, T, P, Y, dt=dt, diffusion_source=source)}
    worst = 0.0
    for warps, qssa in configurations(mech):
        compiled = compile_kernel(mech, "chemistry", warps=warps, qssa_warps=qssa)
        compiled.verify()
        assert len(compiled.programs.barrier_ids) <= compiled.programs.barrier_limit
        for stiff in (False, True):
            ours = compiled.simulate(T, P, Y, dt=dt if stiff else None, diffusion_source=source if stiff else None)
            error = worst_error(ours, expected[stiff])
            assert error <= TOLERANCE, f"{name} warps={warps} qssa={qssa} dt={stiff}: {error:.2e}"
            worst = max(worst, error)
    print(f"\n{name}: worst error {worst:.2e} x max|wdot| over {len(configurations(mech))} configurations")


def test_every_placement_matches_the_reference():
    """DME at 1, 4, 8 and 16 warps with each placement of the crossing values, and at the
    paper's setting for sm_80 (buffered values the scheduler moves out of registers): each mapped
    as asked, the reference to 1e-9 x max|wdot| (``test_comparison_catches_missing_stiffness_removal``)."""
    mech, T, P, Y = _reference_states("dme")
    expected = net_production_rates(mech, T, P, Y)
    settings = [dict(warps=w, qssa_warps=q, placement=p) for (w, q), p in
                itertools.product(((1, 1), (4, 2), (8, 4), (16, 4)), PLACEMENTS)]
    for options in settings + [dict(warps=8, qssa_warps=4, ctas_per_sm=2, arch="sm_80")]:
        compiled = compile_kernel(mech, "chemistry", **options)
        assert options.get("placement", "auto") in ("auto", compiled.mapping.mode)
        error = worst_error(compiled.simulate(T, P, Y), expected)
        assert error <= TOLERANCE, f"{options}: {error:.2e}"


def test_comparison_catches_missing_stiffness_removal():
    """Companion: the kernel run without dt is far from the reference with dt."""
    mech, T, P, Y = _reference_states("dme")
    dt, source = stiffness_inputs(T.size, Y.shape[0], seed=13)
    compiled = compile_kernel(mech, "chemistry", warps=4, qssa_warps=2)
    assert worst_error(compiled.simulate(T, P, Y), net_production_rates(mech, T, P, Y, dt=dt,
                                                                        diffusion_source=source)) > TOLERANCE


def _own_reads(compiled) -> list[tuple[int, int, SharedLoad]]:
    """(warp, item, load) of every shared read of a value the reading warp made itself."""
    producers = compiled.mapping.graph.producers()
    return [(w, i, item) for w, program in enumerate(compiled.programs.programs) for i, item in enumerate(program.items)
            if isinstance(item, SharedLoad) and compiled.mapping.warp_of.get(producers[item.value]) == w]


def _paper_dme_on_the_a100(mech):
    return compile_kernel(mech, "chemistry", warps=8, qssa_warps=4, ctas_per_sm=2, arch="sm_80")


def test_values_read_back_from_their_slots_match_the_reference():
    """DME at the paper's setting on sm_80 (buffered values, 128 registers): the values the
    scheduler moves out of their producer's registers (``schedule._Scheduler._relieve``) are read
    back from their slots, and the rates match the reference with and without stiffness removal."""
    mech, T, P, Y = _reference_states("dme")
    dt, source = stiffness_inputs(T.size, Y.shape[0], seed=13)
    compiled = _paper_dme_on_the_a100(mech)
    compiled.verify()
    assert len(_own_reads(compiled)) > 20
    for stiff in (False, True):
        expected = net_production_rates(mech, T, P, Y, dt=dt, diffusion_source=source) if stiff else \
            net_production_rates(mech, T, P, Y)
        ours = compiled.simulate(T, P, Y, dt=dt if stiff else None, diffusion_source=source if stiff else None)
        assert worst_error(ours, expected) <= TOLERANCE


def test_a_value_read_back_from_another_slot_is_caught():
    """Companion: one of those reads pointed at the next slot is a race the simulator reports."""
    mech, T, P, Y = _reference_states("dme")
    compiled = _paper_dme_on_the_a100(mech)
    warp, index, load_item = _own_reads(compiled)[len(_own_reads(compiled)) // 2]
    items = list(compiled.programs.programs[warp].items)
    items[index] = SharedLoad(load_item.value, (load_item.slot + 1) % compiled.programs.shared_slots)
    programs = list(compiled.programs.programs)
    programs[warp] = WarpProgram(warp, tuple(items))
    wrong = dataclasses.replace(compiled, programs=dataclasses.replace(compiled.programs, programs=tuple(programs)))
    with pytest.raises(SimulationError, match="race"):
        wrong.simulate(T, P, Y)


@pytest.fixture(scope="module")
def plog_chebyshev(tmp_path_factory):
    """A mechanism with PLOG, Chebyshev, Troe, SRI and chemically activated
    reactions, read by singe and (through ck2yaml) by Cantera."""
    folder = tmp_path_factory.mktemp("pdep")
    thermo = folder / "therm.dat"
    thermo.write_text((BUNDLED_MECHANISMS / "h2o2" / "therm.dat").read_text())
    (folder / "pdep.inp").write_text(FORMS_COMMON + "END\n")
    subprocess.run([sys.executable, "-m", "cantera.ck2yaml", f"--input={folder / 'pdep.inp'}",
                    f"--thermo={thermo}", f"--output={folder / 'pdep.yaml'}", "--quiet"],
                   check=True, capture_output=True)
    return singe.load_mechanism(folder / "pdep.inp"), ct.Solution(str(folder / "pdep.yaml"))


def test_plog_and_chebyshev_mechanism_matches_cantera(plog_chebyshev):
    mech, gas = plog_chebyshev
    assert {"plog", "chebyshev", "chemically-activated"} <= {r.kind for r in mech.reactions}
    T, P, Y = random_states(256, mech.n_species, seed=14, T_range=(300.0, 2500.0))
    expected = np.empty_like(Y)
    for i in range(Y.shape[1]):
        gas.TPY = T[i], P[i], Y[:, i]
        expected[:, i] = gas.net_production_rates
    for warps in (1, 3, 7):
        compiled = compile_kernel(mech, "chemistry", warps=warps)
        compiled.verify()
        assert worst_error(compiled.simulate(T, P, Y), expected) <= TOLERANCE


def negative_states(name: str, n: int = 64, T_range=(300.0, 3000.0)):
    """Random states with three mass fractions a point below zero (-1e-12 to -1e-3), as a solver's step can leave
    them."""
    mech = load(name)
    T, P, Y = random_states(n, len(mech.transported_species), seed=21, T_range=T_range)
    rng = np.random.default_rng(22)
    for i in range(n):
        Y[rng.choice(Y.shape[0], 3, replace=False), i] = -10.0 ** rng.uniform(-12, -3, 3)
    return mech, T, P, Y


def cantera_rates_as_given(gas, T, P, Y, index=None):
    """``gas``'s net production rates with the mass fractions as given (``set_unnormalized_mass_fractions``, as
    Cantera's reactors set them), negative ones included; ``index``: the gas's species of Y's rows (None: all,
    in order), whose rates are returned."""
    index = list(range(gas.n_species)) if index is None else index
    full = np.zeros(gas.n_species)
    out = np.empty_like(Y)
    for i in range(Y.shape[1]):
        full[index] = Y[:, i]
        gas.TP = T[i], P[i]
        gas.set_unnormalized_mass_fractions(full)
        gas.TP = T[i], P[i]
        out[:, i] = gas.net_production_rates[index]
    return out


@pytest.mark.parametrize("name", ["gri30", "h2o2"])
def test_negative_concentrations_match_cantera_with_its_products(name):
    """With negative concentrations Cantera's products of concentrations are 0 where two factors of up to three
    are negative, or one of more (``negative_factors_allowed``), the collision partner of '2 H + H2 <=> 2 H2'
    outside that guard (``Reaction.collision_partner``): with ``products='cantera'`` the reference, the
    simulator of both forms and the emitted CUDA on the host (both forms, and the unrolled form's baseline)
    agree with it."""
    mech, T, P, Y = negative_states(name)
    expected = cantera_rates_as_given(cantera_solution(name), T, P, Y)
    assert worst_error(net_production_rates(mech, T, P, Y, products="cantera"), expected) <= 1e-12
    for form in ("unrolled", "tables"):
        compiled = compile_kernel(mech, "chemistry", warps=4, form=form, products="cantera")
        runs = [compiled.simulate(T, P, Y), compiled.run_host(T, P, Y)]
        if form == "unrolled" and name == "h2o2":
            runs.append(compiled.run_host(T, P, Y, baseline=True))
        for ours in runs:
            assert worst_error(ours, expected) <= TOLERANCE, form


def test_chemkin_products_multiply_negative_concentrations_as_they_are():
    """The default (``products='chemkin'``, as CHEMKIN, S3D and Pele): the kernels of both forms match the
    reference's plain products, which differ from Cantera's at these states by more than the tolerance (the
    companion of the test above); so does a guard that takes '2 H + H2 <=> 2 H2' for three factors, as the
    equation stands, instead of Cantera's two and the partner."""
    mech, T, P, Y = negative_states("h2o2")
    plain = net_production_rates(mech, T, P, Y)
    for form in ("unrolled", "tables"):
        compiled = compile_kernel(mech, "chemistry", warps=4, form=form)
        assert worst_error(compiled.simulate(T, P, Y), plain) <= TOLERANCE, form
    expected = cantera_rates_as_given(cantera_solution("h2o2"), T, P, Y)
    assert worst_error(plain, expected) > TOLERANCE
    without_partner = dataclasses.replace(mech, reactions=tuple(dataclasses.replace(r, collision_partner=None)
                                                                for r in mech.reactions))
    assert worst_error(net_production_rates(without_partner, T, P, Y, products="cantera"), expected) > TOLERANCE


@pytest.mark.parametrize("name", ["dme", "dodecane"])
def test_negative_concentrations_with_qssa_and_stiffness_match_the_reference(name):
    """QSSA species count as factors of 1 (never negative) in the guard, in the reference and the kernels.  From
    1000 K: below, a negative concentration can all but cancel a QSSA species' consumption D_i, and the
    linearized system's solution changes by 100 % for a change of 1e-13 in Y (QSSA n-dodecane at 301 K,
    C6H12 at -1.6e-7: 7.2e15 kmol/m^3/s where the clipped state gives 2.1e5), which no two summation orders
    agree on."""
    mech, T, P, Y = negative_states(name, n=32, T_range=(1000.0, 3000.0))
    dt, source = stiffness_inputs(T.size, Y.shape[0], seed=23)
    for options in (dict(warps=8, qssa_warps=2), dict(warps=8, form="tables")):
        compiled = compile_kernel(mech, "chemistry", products="cantera", **options)
        theirs = net_production_rates(mech, T, P, Y, products="cantera")
        assert worst_error(compiled.simulate(T, P, Y), theirs) <= TOLERANCE
        if mech.stiff_species:
            ours = compiled.simulate(T, P, Y, dt=dt, diffusion_source=source)
            theirs = net_production_rates(mech, T, P, Y, dt=dt, diffusion_source=source, products="cantera")
            assert worst_error(ours, theirs) <= TOLERANCE


@pytest.mark.parametrize("file, phase", [
    ("example_data/ammonia-CO-H2-Alzueta-2023.yaml", "baseline"),  # PLOG rows, 7 collision partners
    ("gri30_highT.yaml", None),  # 9 collision partners
    ("nDodecane_Reitz.yaml", "nDodecane_IG"),  # FORD orders, half the reactions irreversible
])
def test_cantera_products_match_cantera_on_its_bundled_mechanisms(file, phase):
    """``products='cantera'`` against Cantera on mechanisms read from Cantera's own YAML (its partners as it
    detects them), five mass fractions a point below zero: the reference, and the table form's simulator on
    Alzueta's (its PLOG rows carry the partner's entry last)."""
    path = CANTERA_DATA / file
    mech = singe.load_mechanism(path, phase=phase) if phase else singe.load_mechanism(path)
    gas = ct.Solution(str(path), phase) if phase else ct.Solution(str(path))
    T, P, Y = random_states(16, len(mech.transported_species), seed=21, T_range=(800.0, 2500.0))
    rng = np.random.default_rng(22)
    for i in range(T.size):
        Y[rng.choice(Y.shape[0], 5, replace=False), i] = -10.0 ** rng.uniform(-12, -3, 5)
    expected = cantera_rates_as_given(gas, T, P, Y, [gas.species_index(name) for name in mech.transported_species])
    assert worst_error(net_production_rates(mech, T, P, Y, products="cantera"), expected) <= 1e-12
    if phase == "baseline":
        compiled = compile_kernel(mech, "chemistry", warps=4, form="tables", products="cantera")
        assert worst_error(compiled.simulate(T, P, Y), expected) <= TOLERANCE
