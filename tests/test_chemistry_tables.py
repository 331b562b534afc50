"""The table form of the chemistry kernel (singe.kernels.table_form): simulated and run on the host
against Cantera and singe.reference (QSSA and stiffness removal included), with companions that fail
on a wrong table entry or a missing barrier; the choice of form; the command's progress lines."""

from __future__ import annotations

import dataclasses
import subprocess
import sys

import cantera as ct
import numpy as np
import pytest

import singe
from singe.cli import main
from singe.codegen import generate
from singe.codegen.nvcc import compile_cuda, find_nvcc
from singe.compiler import compile_kernel
from singe.errors import SingeInputError, SingeInternalError
from singe.kernels.table_form import choose_form
from singe.programs import FullSync, WarpProgram
from singe.reference.kinetics import net_production_rates
from singe.sim import SimulationError
from singe.compiler import TableKernel
from autotune.bench_detailed import cantera_rates
from conftest import load
from cantera_reference import BUNDLED_MECHANISMS, CANTERA_DATA, cantera_solution, random_states
from test_kinetics import FORMS_COMMON, FORMS_SINGE_ONLY

TOLERANCE = 1e-9  # x max|wdot| per point
STATES = 64
REITZ = CANTERA_DATA / "nDodecane_Reitz.yaml"
HEXANE = CANTERA_DATA / "example_data" / "n-hexane-NUIG-2015.yaml"


def worst_error(ours: np.ndarray, theirs: np.ndarray) -> float:
    """Largest |ours - theirs| relative to max|wdot| of the point."""
    return float(np.max(np.abs(ours - theirs) / np.abs(theirs).max(axis=0)))


def states(mech, seed: int, n: int = STATES):
    return random_states(n, mech.n_species, seed=seed, T_range=(800.0, 2400.0))


def tables_kernel(mech, warps: int = 8) -> TableKernel:
    compiled = compile_kernel(mech, "chemistry", warps=warps, form="tables")
    assert isinstance(compiled, TableKernel)
    compiled.verify()
    return compiled


def with_tables(compiled: TableKernel, tables) -> TableKernel:
    """The same kernel reading other tables."""
    return dataclasses.replace(compiled, tables=tables, programs=_retarget(compiled.programs, tables))


def _retarget(programs, tables):
    items = [tuple(dataclasses.replace(item, tables=tables) if hasattr(item, "tables") else item
                   for item in p.items) for p in programs.programs]
    return dataclasses.replace(programs, programs=tuple(WarpProgram(p.warp, i) for p, i in
                                                        zip(programs.programs, items)))


@pytest.mark.parametrize("name", ["h2o2", "gri30"])
def test_small_mechanisms_match_cantera_in_the_simulator(name):
    mech = load(name)
    T, P, Y = states(mech, seed=21)
    expected = cantera_rates(cantera_solution(name), mech, T, P, Y)
    for warps in (1, 3, 8, 16):
        error = worst_error(tables_kernel(mech, warps).simulate(T, P, Y), expected)
        assert error <= TOLERANCE, f"{name} warps={warps}: {error:.2e}"


def test_h2o2_on_the_host_matches_cantera():
    mech = load("h2o2")
    T, P, Y = states(mech, seed=22)
    compiled = tables_kernel(mech, 4)
    expected = cantera_rates(cantera_solution("h2o2"), mech, T, P, Y)
    assert worst_error(compiled.run_host(T, P, Y), expected) <= TOLERANCE
    assert worst_error(compiled.run_host(T, P, Y, schedule="priority", seed=3), expected) <= TOLERANCE
    # one CTA looping over slabs (the workspace reused), a partial last slab
    part = slice(0, 50)
    ours = compiled.run_host(T[part], P[part], Y[:, part], max_ctas=1)
    assert worst_error(ours, expected[:, part]) <= TOLERANCE
    sim = compiled.run(T[part], P[part], Y[:, part], slabs=2, schedule="random", seed=5)
    assert not sim.hazards and worst_error(sim.outputs["production_rates"], expected[:, part]) <= TOLERANCE


def test_a_wrong_table_entry_is_caught():
    """Companion: one pre-exponential factor off by 1e-6 fails the comparison (simulator and host)."""
    mech = load("h2o2")
    T, P, Y = states(mech, seed=22)
    compiled = tables_kernel(mech, 4)
    tables = compiled.tables
    A = tables.forward.A.copy()
    A[3] *= 1.0 + 1e-6
    wrong = with_tables(compiled, dataclasses.replace(tables, forward=dataclasses.replace(tables.forward, A=A)))
    expected = cantera_rates(cantera_solution("h2o2"), mech, T, P, Y)
    assert worst_error(wrong.simulate(T, P, Y), expected) > TOLERANCE
    assert worst_error(wrong.run_host(T, P, Y), expected) > TOLERANCE


def test_a_missing_barrier_is_caught():
    """Companion: without the barrier before the rates phase the proof fails and the simulator races."""
    compiled = tables_kernel(load("h2o2"), 4)
    programs = compiled.programs
    cut = []
    for p in programs.programs:
        syncs = [i for i, item in enumerate(p.items) if isinstance(item, FullSync)]
        cut.append(WarpProgram(p.warp, p.items[:syncs[1]] + p.items[syncs[1] + 1:]))
    broken = dataclasses.replace(compiled, programs=dataclasses.replace(programs, programs=tuple(cut)))
    with pytest.raises(SingeInternalError, match="not ordered after"):
        broken.verify()
    mech = compiled.mechanism
    T, P, Y = states(mech, seed=23, n=32)
    with pytest.raises(SimulationError, match="race"):
        broken.simulate(T, P, Y)


@pytest.fixture(scope="module")
def rate_forms(tmp_path_factory):
    """PLOG, Chebyshev, Troe, SRI, chemically activated, FORD/RORD, REV, Landau-Teller:
    (singe mechanism with every form, the same without the forms ck2yaml cannot read, its Cantera gas)."""
    folder = tmp_path_factory.mktemp("table_forms")
    thermo = folder / "therm.dat"
    thermo.write_text((BUNDLED_MECHANISMS / "h2o2" / "therm.dat").read_text())
    (folder / "all.inp").write_text(FORMS_COMMON + FORMS_SINGE_ONLY)
    (folder / "common.inp").write_text(FORMS_COMMON + "END\n")
    subprocess.run([sys.executable, "-m", "cantera.ck2yaml", f"--input={folder / 'common.inp'}",
                    f"--thermo={thermo}", f"--output={folder / 'common.yaml'}", "--quiet"],
                   check=True, capture_output=True)
    return (singe.load_mechanism(folder / "all.inp", thermo=thermo),
            singe.load_mechanism(folder / "common.inp", thermo=thermo), ct.Solution(str(folder / "common.yaml")))


def test_every_rate_form_matches_cantera_and_the_reference(rate_forms):
    every, common, gas = rate_forms
    T, P, Y = random_states(STATES, common.n_species, seed=24, T_range=(800.0, 2400.0), P_range_atm=(1e-3, 1e3))
    expected = cantera_rates(gas, common, T, P, Y)
    compiled = tables_kernel(common, 3)
    assert {"plog", "chebyshev", "falloff"} <= {compiled.tables.group_of(r) for r in range(compiled.tables.n_rows)}
    assert worst_error(compiled.simulate(T, P, Y), expected) <= TOLERANCE
    assert worst_error(compiled.run_host(T, P, Y), expected) <= TOLERANCE
    full = tables_kernel(every, 5)
    assert full.tables.landau_teller
    reference = net_production_rates(every, T, P, Y)
    assert worst_error(full.simulate(T, P, Y), reference) <= TOLERANCE
    assert worst_error(full.run_host(T, P, Y), reference) <= TOLERANCE


@pytest.fixture(scope="module")
def reitz():
    return singe.load_mechanism(REITZ)


def test_reitz_dodecane_matches_cantera(reitz):
    """Cantera's bundled n-dodecane (Reitz, 100 species): simulator and host, 64 states, 800-2400 K."""
    T, P, Y = states(reitz, seed=25)
    expected = cantera_rates(ct.Solution(str(REITZ), "nDodecane_IG"), reitz, T, P, Y)  # its ideal-gas phase
    compiled = compile_kernel(reitz, "chemistry")  # 'auto' takes the table form at 100 species
    assert compiled.form == "tables"
    compiled.verify()
    assert worst_error(compiled.simulate(T, P, Y), expected) <= TOLERANCE
    assert worst_error(compiled.run_host(T, P, Y), expected) <= TOLERANCE


@pytest.mark.exhaustive
def test_nuig_hexane_matches_cantera():
    """NUIG n-hexane (1,268 species, 5,336 reactions): simulator and host, 64 states."""
    mech = singe.load_mechanism(HEXANE)
    T, P, Y = states(mech, seed=26)
    expected = cantera_rates(ct.Solution(str(HEXANE)), mech, T, P, Y)
    compiled = compile_kernel(mech, "chemistry")
    assert compiled.form == "tables"
    compiled.verify()
    assert worst_error(compiled.simulate(T, P, Y), expected) <= TOLERANCE
    assert worst_error(compiled.run_host(T, P, Y), expected) <= TOLERANCE


def test_form_choice(reitz):
    assert choose_form(load("gri30"), "chemistry", "auto") == "unrolled"
    assert choose_form(load("h2o2"), "chemistry", "auto") == "unrolled"
    assert choose_form(reitz, "chemistry", "auto") == "tables"
    assert choose_form(reitz, "chemistry", "unrolled") == "unrolled"
    assert choose_form(reitz, "viscosity", "auto") == "unrolled"
    with pytest.raises(SingeInputError, match="chemistry kernel only"):
        choose_form(reitz, "viscosity", "tables")


def test_form_choice_from_the_register_plan(reitz):
    """A small mechanism takes the table form when its unrolled kernel's register plan (default
    configuration) predicts more than FORM_SPILL_MARGIN registers of spills, the unrolled form otherwise
    (a borderline plan: 11 predicted, as the QSSA n-dodecane's was under the greedy mapping, where ptxas
    fitted it; mapped in time its floor is 244 of 255 and none are predicted); the size alone decides for
    a large mechanism (its unrolled kernel is never built)."""
    from singe.compiler import default_unrolled
    from singe.kernels.table_form import FORM_SPILL_MARGIN
    from singe.options import CompileOptions
    from singe.programs.plan import RegisterPlan

    mech = load("dodecane")
    assert default_unrolled(mech, "chemistry", CompileOptions(form="unrolled")).programs.plan.spilled \
        <= FORM_SPILL_MARGIN
    assert compile_kernel(mech, "chemistry").form == "unrolled"
    fits, borderline, spills = (RegisterPlan(255, (60,), (0,)), RegisterPlan(255, (121,), (0,)),
                                RegisterPlan(128, (120,), (0,)))
    assert borderline.spilled == 11 and spills.spilled > FORM_SPILL_MARGIN
    assert choose_form(mech, "chemistry", "auto", lambda: fits) == "unrolled"
    assert choose_form(mech, "chemistry", "auto", lambda: borderline) == "unrolled"
    assert choose_form(mech, "chemistry", "auto", lambda: spills) == "tables"

    def never():
        raise AssertionError("the unrolled plan of a large mechanism was asked for")
    assert choose_form(reitz, "chemistry", "auto", never) == "tables"


@pytest.mark.parametrize("name", ["dme", "heptane"])
def test_published_mechanisms_stay_unrolled(name):
    """DME and n-heptane keep the unrolled form by default (small, and their register plans fit)."""
    mech = load(name)
    assert choose_form(mech, "chemistry", "auto") == "unrolled"
    assert compile_kernel(mech, "chemistry").form == "unrolled"


def test_cli_writes_the_table_form_of_a_qssa_mechanism(capsys, tmp_path):
    """DME (QSSA and stiff species) in the table form: dt and diffusion_source are its inputs."""
    mech = load("dme")
    assert main([mech.sources[0], "--kernels", "chemistry", "--form", "tables", "-o", str(tmp_path)]) == 0
    assert "table form" in capsys.readouterr().out
    cu = next(tmp_path.glob("*_chemistry.cu")).read_text()
    assert "qssa_solve_phase" in cu and "stiffness_phase" in cu and "const double *__restrict__ dt" in cu


def test_cli_reports_progress_for_a_large_mechanism(capsys, tmp_path):
    assert main([str(REITZ), "--kernels", "chemistry", "-o", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    for stage in ("tables", "programs", "emit"):
        assert f"  chemistry: {stage} " in out
    assert "nDodecane_Reitz_chemistry.cu: table form, 8 warps, 100 species" in out
    assert (tmp_path / "nDodecane_Reitz_chemistry.cu").stat().st_size < 200_000


def test_cli_stays_quiet_for_a_small_mechanism(capsys, tmp_path):
    assert main(["h2o2", "--kernels", "chemistry", "--form", "tables", "-o", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "h2o2_chemistry.cu: table form" in out and "chemistry: emit" not in out


@pytest.mark.skipif(find_nvcc() is None, reason="nvcc not found")
def test_table_form_compiles_without_spills(tmp_path):
    generate(tables_kernel(load("gri30"), 8)).write(tmp_path)
    entry = compile_cuda(tmp_path / "gri30_chemistry.cu", "sm_90").entry("gri30_chemistry")
    assert entry.spill_stores == 0 and entry.stack_frame == 0
    assert entry.registers <= 128  # the launch bounds at 2 CTAs per SM


def test_cli_validates_a_mechanism_without_transport_data(capsys, tmp_path):
    """--validate draws states in the thermo range when there are no transport fits (chemistry only)."""
    assert main([str(REITZ), "--kernels", "chemistry", "--validate", "-o", str(tmp_path)]) == 0
    line = capsys.readouterr().out.splitlines()[-1]
    assert "against singe.reference" in line and "[simulator]" in line
    assert float(line.split("singe.reference ")[1].split()[0]) <= TOLERANCE


def test_no_baseline_of_the_table_form():
    from singe.codegen import generate_baseline

    with pytest.raises(SingeInputError, match="form='unrolled'"):
        generate_baseline(tables_kernel(load("h2o2"), 2))


@pytest.mark.exhaustive
@pytest.mark.parametrize("warps", [1, 2, 5, 12, 16, 32])
def test_reitz_every_warp_count(reitz, warps):
    """The phases split over any number of warps (ctas_per_sm 1 where 2 do not fit)."""
    T, P, Y = states(reitz, seed=27)
    compiled = compile_kernel(reitz, "chemistry", warps=warps, ctas_per_sm=1 if warps > 16 else 2, form="tables")
    compiled.verify()
    expected = net_production_rates(reitz, T, P, Y)
    assert worst_error(compiled.simulate(T, P, Y, schedule="random", seed=warps), expected) <= TOLERANCE
    assert worst_error(compiled.run_host(T, P, Y, schedule="priority", seed=warps), expected) <= TOLERANCE


# --------------------------------------------------------------------------- QSSA and stiffness removal

def transported_states(mech, seed: int, n: int = STATES):
    return random_states(n, len(mech.transported_species), seed=seed, T_range=(800.0, 2400.0))


def stiffness_inputs(n: int, species: int, seed: int):
    rng = np.random.default_rng(seed)
    return 10.0 ** rng.uniform(-9, -5, n), rng.normal(0.0, 1.0, (species, n))


def test_qssa_solve_table_is_the_reference_elimination():
    """The solve's table of operations, run on random coefficients with the system's structure,
    gives singe.reference.qssa.solve's x (the same elimination, structural zeros skipped)."""
    from singe.derived.qssa import build_qssa_system
    from singe.kernels import chemistry_tables as tab
    from singe.reference.qssa import solve

    mech = load("dodecane")
    system, q = build_qssa_system(mech), chemistry_tables_of(mech).qssa
    rng = np.random.default_rng(5)
    n, nq = 16, system.n_qss
    a0, A = rng.uniform(0.1, 1.0, (nq, n)), np.zeros((nq, nq, n))
    for i in range(nq):
        for j in system.dependencies(i):
            A[i, j] = rng.uniform(-0.3, 0.3, n)
    expected = solve(system, a0, A)
    slots = [a0[i] for i in range(nq)]
    for c in range(q.n_cells):
        i = int(np.searchsorted(q.cell_ptr, c, side="right")) - 1
        a = A[i, int(q.cell_j[c])]
        slots.append({tab.EXTERNAL: a, tab.OFF_DIAGONAL: 0.0 - a, tab.DIAGONAL: 1.0 - a}[int(q.cell_mode[c])])
    for op, d, a, b in q.ops:
        slots[d] = {tab.ADD_PRODUCT: lambda: slots[d] + slots[a] * slots[b],
                    tab.SUBTRACT_PRODUCT: lambda: slots[d] - slots[a] * slots[b],
                    tab.DIVIDE: lambda: slots[a] / slots[b]}[int(op)]()
    x = np.array(slots[:nq])
    assert np.max(np.abs(x - expected) / np.abs(expected).max(axis=0)) <= 1e-13
    assert len(q.ops) < nq * nq  # the structural zeros are skipped


def chemistry_tables_of(mech):
    from singe.kernels.chemistry_tables import chemistry_tables

    return chemistry_tables(mech)


@pytest.fixture(scope="module")
def dodecane_case():
    """QSSA n-dodecane (53 species, 18 QSSA), the table form at 8 warps, random and ignition states."""
    from reaction_map import ignition_states

    mech = load("dodecane")
    T, P, Y = transported_states(mech, seed=31)
    Ti, Pi, Yi = ignition_states("dodecane", "NC12H26", 900.0, 20.0, samples=8)
    Yi = np.array(Yi[mech.transported_indices])
    Yi /= Yi.sum(axis=0)
    T, P, Y = np.concatenate([T, Ti]), np.concatenate([P, Pi]), np.concatenate([Y, Yi], axis=1)
    return mech, tables_kernel(mech, 8), (T, P, Y), net_production_rates(mech, T, P, Y)


def test_qssa_dodecane_matches_the_reference(dodecane_case):
    """Simulator and host runtime, against singe.reference.net_production_rates (QSSA applied)."""
    mech, compiled, (T, P, Y), expected = dodecane_case
    assert compiled.tables.qssa is not None and compiled.tables.stiff is None
    assert worst_error(compiled.simulate(T, P, Y), expected) <= TOLERANCE
    assert worst_error(compiled.run_host(T, P, Y, schedule="priority", seed=2), expected) <= TOLERANCE


def test_a_wrong_qssa_table_entry_is_caught(dodecane_case):
    """Companion: one multiplicity of one QSSA coupling term off by 1e-3 fails the comparison
    (simulator and host)."""
    mech, compiled, (T, P, Y), expected = dodecane_case
    q = compiled.tables.qssa
    u = 2 * q.n_qss + int(np.argmax(np.diff(q.sums.ptr)[2 * q.n_qss:]))  # the cell with the most terms
    value = q.sums.value.copy()
    value[q.sums.ptr[u]] *= 1.0 + 1e-3
    sums = dataclasses.replace(q.sums, value=value)
    wrong = with_tables(compiled, dataclasses.replace(compiled.tables, qssa=dataclasses.replace(q, sums=sums)))
    assert worst_error(wrong.simulate(T, P, Y), expected) > TOLERANCE
    assert worst_error(wrong.run_host(T, P, Y), expected) > TOLERANCE


def _without_barrier(compiled, before: str):
    """``compiled`` without the barrier in front of phase ``before``."""
    programs, cut = compiled.programs, []
    for p in programs.programs:
        items = [item for item in p.items if not (isinstance(item, FullSync) and item.reason.startswith(before + " "))]
        assert len(items) == len(p.items) - 1
        cut.append(WarpProgram(p.warp, tuple(items)))
    return dataclasses.replace(compiled, programs=dataclasses.replace(programs, programs=tuple(cut)))


@pytest.mark.parametrize("phase", ["qssa_coefficients", "qssa_solve", "scale"])
def test_a_missing_qssa_barrier_is_caught(dodecane_case, phase):
    """Companion: without the barrier between the rates and the QSSA coefficients, the coefficients and
    the solve, or the solve and the scale that reads x, the proof fails and the simulator races."""
    mech, compiled, (T, P, Y), _ = dodecane_case
    broken = _without_barrier(compiled, phase)
    with pytest.raises(SingeInternalError, match="not ordered after"):
        broken.verify()
    with pytest.raises(SimulationError, match="race"):
        broken.simulate(T[:32], P[:32], Y[:, :32])


@pytest.mark.parametrize("name", ["dme", "heptane"])
def test_qssa_and_stiffness_removal_match_the_reference(name):
    """DME and n-heptane (QSSA and stiff species) in the table form, without and with dt (stiffness
    removal, with diffusion sources): simulator and host runtime against singe.reference."""
    mech = load(name)
    T, P, Y = transported_states(mech, seed=32)
    dt, source = stiffness_inputs(T.size, Y.shape[0], seed=33)
    compiled = tables_kernel(mech, 5)
    assert compiled.tables.stiff is not None
    for extra in ({}, {"dt": dt, "diffusion_source": source}):
        expected = net_production_rates(mech, T, P, Y, **extra)
        assert worst_error(compiled.simulate(T, P, Y, **extra), expected) <= TOLERANCE, extra.keys()
        assert worst_error(compiled.run_host(T, P, Y, **extra), expected) <= TOLERANCE, extra.keys()


def test_missing_stiffness_removal_is_caught():
    """Companion: the kernel run without dt is far from the reference with dt, and a stiffness factor's
    exponent off (nu 1 -> 2) is caught."""
    mech = load("dme")
    T, P, Y = transported_states(mech, seed=32)
    dt, source = stiffness_inputs(T.size, Y.shape[0], seed=33)
    compiled = tables_kernel(mech, 5)
    expected = net_production_rates(mech, T, P, Y, dt=dt, diffusion_source=source)
    assert worst_error(compiled.simulate(T, P, Y), expected) > TOLERANCE
    sc = compiled.tables.scale
    value = sc.factors.value.copy()
    value[:] = np.where(value == 1.0, 2.0, value)
    wrong = with_tables(compiled, dataclasses.replace(
        compiled.tables, scale=dataclasses.replace(sc, factors=dataclasses.replace(sc.factors, value=value))))
    assert worst_error(wrong.simulate(T, P, Y, dt=dt, diffusion_source=source), expected) > TOLERANCE


def test_cli_validates_the_table_form_of_a_stiff_mechanism(capsys, tmp_path):
    """--validate of DME's table form: without and with dt, against singe.reference."""
    mech = load("dme")
    assert main([mech.sources[0], "--kernels", "chemistry", "--form", "tables", "--validate",
                 "-o", str(tmp_path)]) == 0
    line = capsys.readouterr().out.splitlines()[-1]
    assert "against singe.reference" in line
    assert float(line.split("singe.reference ")[1].split()[0]) <= TOLERANCE


@pytest.mark.exhaustive
@pytest.mark.parametrize("name", ["dme", "heptane", "dodecane"])
@pytest.mark.parametrize("warps", [1, 2, 3, 8, 16, 20])
def test_qssa_mechanisms_every_warp_count(name, warps):
    """The QSSA, stiffness and scale phases split over any number of warps; random schedules."""
    mech = load(name)
    T, P, Y = transported_states(mech, seed=34)
    dt, source = stiffness_inputs(T.size, Y.shape[0], seed=35)
    compiled = compile_kernel(mech, "chemistry", warps=warps, ctas_per_sm=1, form="tables")
    compiled.verify()
    for extra in ({}, {"dt": dt, "diffusion_source": source}) if mech.stiff_species else ({},):
        expected = net_production_rates(mech, T, P, Y, **extra)
        ours = compiled.simulate(T, P, Y, schedule="random", seed=warps, **extra)
        assert worst_error(ours, expected) <= TOLERANCE
        ours = compiled.run_host(T, P, Y, schedule="priority", seed=warps, **extra)
        assert worst_error(ours, expected) <= TOLERANCE
