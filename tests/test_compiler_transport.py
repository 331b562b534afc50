"""Viscosity and diffusion compiled for every warp count, simulated, against Cantera."""

from __future__ import annotations

import dataclasses
import itertools
from collections import Counter

import numpy as np
import pytest

from singe.compiler import compile_kernel
from singe.errors import SingeInternalError
from singe.kernels.ir import Const, Instr, Reg
from singe.kernels import transport
from singe.kernels.transport import COLUMNS_PER_PASS, diffusion_columns
from singe.reference import transport as reference_transport
from singe.options import PLACEMENTS, CompileOptions
from singe.programs import Arrive, FullSync, SharedStore, Sync, WarpProgram
from singe.programs.verify import check_programs
from singe.sim import SimulationError
from singe.derived.transport import fit_transport
from conftest import load
from cantera_reference import cantera_solution, random_states

TOLERANCE = 1e-9  # relative, against Cantera's mixture-averaged-CK transport
WEIGHTS = [CompileOptions().weights, (1.0, 0.0, 0.0), (0.2, 1.0, 3.0)]
STATES = 512
BARRIERS_USED: dict = {}


def cantera_transport(name: str, n: int = STATES, seed: int = 7):
    """Random states inside the fit range and Cantera's viscosity and mixture
    diffusion coefficients of the transported species there."""
    mech = load(name)
    fits = fit_transport(mech)
    T, P, Y = random_states(n, len(mech.transported_species), seed, T_range=(fits.T_min, min(fits.T_max, 3000.0)))
    gas = cantera_solution(name)
    index = mech.transported_indices
    viscosity = np.empty(n)
    diffusion = np.empty((len(index), n))
    full = np.zeros(gas.n_species)
    for i in range(n):
        full[:] = 0.0
        full[index] = Y[:, i]
        gas.TPY = T[i], P[i], full
        viscosity[i] = gas.viscosity
        diffusion[:, i] = gas.mix_diff_coeffs[index]
    return mech, (T, P, Y), {"viscosity": viscosity, "diffusion": diffusion}


_CANTERA: dict = {}


def reference(name: str):
    if name not in _CANTERA:
        _CANTERA[name] = cantera_transport(name)
    return _CANTERA[name]


def worst_error(ours: np.ndarray, theirs: np.ndarray) -> float:
    """Largest relative error over every output and point."""
    return float(np.max(np.abs(ours - theirs) / np.abs(theirs)))


def check_every_warp_count(name: str, kernel: str, weight_settings) -> None:
    """Warps 1..32 x ``weight_settings``: verified programs, a clean simulation (no race, deadlock or misuse:
    strict mode raises), Cantera to 1e-9."""
    mech, (T, P, Y), expected = reference(name)
    worst = 0.0
    for warps, weights in itertools.product(range(1, 33), weight_settings):
        compiled = compile_kernel(mech, kernel, warps=warps, weights=weights)
        compiled.verify()
        programs = compiled.programs
        assert len(programs.barrier_ids) <= programs.barrier_limit
        BARRIERS_USED[(name, kernel, warps, weights)] = len(programs.barrier_ids)
        error = worst_error(compiled.simulate(T, P, Y), expected[kernel])
        assert error <= TOLERANCE, f"{name} {kernel} warps={warps} weights={weights}: {error:.2e}"
        worst = max(worst, error)
    print(f"\n{name} {kernel}: worst relative error {worst:.2e} over {32 * len(weight_settings)} compilations; "
          "barrier ids used by warp count: " +
          " ".join(f"{w}:{BARRIERS_USED[(name, kernel, w, weight_settings[0])]}" for w in range(1, 33)))


@pytest.mark.parametrize("name", ["dme", "heptane", "gri30"])
@pytest.mark.parametrize("kernel", ["viscosity", "diffusion"])
def test_every_warp_count_matches_cantera(name, kernel):
    """Warps 1..32 for every mechanism, DME at the three weight settings and the larger two at the default
    weights (their other two behind ``exhaustive``: the default run stays under 20 minutes on 2 cores)."""
    check_every_warp_count(name, kernel, WEIGHTS if name == "dme" else WEIGHTS[:1])


@pytest.mark.exhaustive
@pytest.mark.parametrize("name", ["heptane", "gri30"])
@pytest.mark.parametrize("kernel", ["viscosity", "diffusion"])
def test_every_warp_count_matches_cantera_at_the_other_weights(name, kernel):
    """pytest -m exhaustive: n-heptane and GRI-Mech at warps 1..32 with the two other weight settings."""
    check_every_warp_count(name, kernel, WEIGHTS[1:])


@pytest.mark.parametrize("kernel", ["viscosity", "diffusion"])
def test_every_placement_matches_cantera(kernel):
    """DME at 1, 3, 8, 13 and 32 warps with each placement of the crossing values ('store',
    'buffer', 'mixed', and 'auto'): each mapped as asked, Cantera to 1e-9
    (``test_comparison_catches_a_wrong_operand``: the comparison sees a wrong answer)."""
    mech, (T, P, Y), expected = reference("dme")
    for warps, placement in itertools.product((1, 3, 8, 13, 32), PLACEMENTS):
        compiled = compile_kernel(mech, kernel, warps=warps, placement=placement)
        assert placement == "auto" or compiled.mapping.mode == placement
        error = worst_error(compiled.simulate(T, P, Y), expected[kernel])
        assert error <= TOLERANCE, f"{kernel} warps={warps} placement={placement}: {error:.2e}"


def edge_states(mech, n: int = 48, seed: int = 5):
    """Random states with exact zeros, mass fractions of 1e-30 and -1e-12 (a flow solver's
    undershoot), and states of a single species."""
    fits = fit_transport(mech)
    T, P, Y = random_states(n, len(mech.transported_species), seed, T_range=(fits.T_min, min(fits.T_max, 3000.0)))
    rng = np.random.default_rng(seed)
    Y = Y.copy()
    Y[rng.random(Y.shape) < 0.1] = 1e-30
    Y[rng.random(Y.shape) < 0.1] = -1e-12
    for i in range(0, n, 8):
        Y[:, i] = 0.0
        Y[i % Y.shape[0], i] = 1.0
    return T, P, Y


def viscosity_on_edge_states(mech) -> float:
    """The worst relative error of DME viscosity at the paper's 15 warps on ``edge_states`` against
    singe.reference (mole fractions clamped to 1e-20, docs/formulas.md §6)."""
    T, P, Y = edge_states(mech)
    compiled = compile_kernel(mech, "viscosity", warps=15, ctas_per_sm=3)
    return worst_error(compiled.simulate(T, P, Y), reference_transport.viscosity(mech, T, P, Y))


def test_viscosity_from_mole_numbers_matches_the_mole_fractions_on_edge_states():
    """The kernel weighs species by mole numbers Y_k/M_k floored at MOLES_FLOOR in place of mole
    fractions floored at 1e-20: the same viscosity to TOLERANCE with zeros, tiny and slightly
    negative mass fractions and single species."""
    assert viscosity_on_edge_states(load("dme")) <= TOLERANCE


def test_a_floor_that_counts_absent_species_is_caught(monkeypatch):
    """Companion: a floor of 1e-4 kmol/kg (absent species weighed as present) fails the comparison
    (a copy of the mechanism: graphs are built once per mechanism object)."""
    monkeypatch.setattr(transport, "MOLES_FLOOR", 1e-4)
    assert viscosity_on_edge_states(dataclasses.replace(load("dme"))) > TOLERANCE


def test_comparison_catches_a_wrong_operand():
    """A constant changed in one Wilke operation moves the viscosity past the tolerance."""
    mech, (T, P, Y), expected = reference("dme")
    compiled = compile_kernel(mech, "viscosity", warps=4)
    op = compiled.mapping.graph.by_name["wilke_8_9_10_11_12_13_14_15"]  # species 8-15 (groups of 8 at 4 warps)
    at = next(i for i, instr in enumerate(op.instrs) if any(isinstance(s, Const) for s in instr.srcs))
    instr = op.instrs[at]
    wrong = Instr(instr.opcode, instr.dst, tuple(Const(s.value * 1.001) if isinstance(s, Const) else s
                                                 for s in instr.srcs))
    mutated = _replace_operation(compiled, dataclasses.replace(op, instrs=op.instrs[:at] + (wrong,) + op.instrs[at + 1:]))
    assert worst_error(mutated.simulate(T, P, Y), expected["viscosity"]) > TOLERANCE


def _replace_operation(compiled, new_op):
    programs = compiled.programs
    new_programs = []
    for program in programs.programs:
        items = tuple(dataclasses.replace(item, op=new_op) if getattr(item, "op", None) is not None
                      and item.op.name == new_op.name else item for item in program.items)
        new_programs.append(WarpProgram(program.warp, items))
    return dataclasses.replace(compiled, programs=dataclasses.replace(programs, programs=tuple(new_programs)))


def _with_items(compiled, edit):
    programs = compiled.programs
    new = tuple(WarpProgram(p.warp, tuple(edit(p.warp, list(p.items)))) for p in programs.programs)
    return dataclasses.replace(compiled, programs=dataclasses.replace(programs, programs=new))


def test_removed_barrier_is_reported_as_a_race():
    mech, (T, P, Y), _ = reference("dme")
    compiled = compile_kernel(mech, "diffusion", warps=6)
    point = compiled.programs.sync_points[0]
    broken = _with_items(compiled, lambda w, items: [i for i in items
                                                      if not (isinstance(i, (Arrive, Sync)) and i.point == point.number)])
    with pytest.raises(SimulationError) as info:
        for seed in range(5):
            broken.run(T[:64], P[:64], Y[:, :64], schedule="random", seed=seed)
    assert any(h.kind in ("race", "uninitialized") for h in info.value.hazards)


def test_swapped_barriers_are_reported_as_a_deadlock():
    """Warp a moves its wait at a later point q before its item at an earlier
    point p, while a warp b waits at p before reaching q: each waits for the other."""
    mech, (T, P, Y), _ = reference("dme")
    compiled = compile_kernel(mech, "viscosity", warps=4, ctas_per_sm=2)
    points = compiled.programs.sync_points
    p, q, a = next((p, q, a) for p in points for q in points if q.number > p.number
                   for a in set(p.participants) & set(q.syncers)
                   if set(p.syncers) & set(q.participants) - {a})

    def swap(warp, items):
        if warp != a:
            return items
        first = next(i for i, item in enumerate(items) if isinstance(item, (Arrive, Sync)) and item.point == p.number)
        wait = next(i for i, item in enumerate(items) if isinstance(item, Sync) and item.point == q.number)
        items.insert(first, items.pop(wait))
        return items

    with pytest.raises(SimulationError) as info:
        _with_items(compiled, swap).run(T[:32], P[:32], Y[:, :32])
    assert [h.kind for h in info.value.hazards] == ["deadlock"]
    assert "barrier" in str(info.value)


@pytest.mark.parametrize("n", [2, 3, 4, 5, 8, 30, 31, 52])
def test_diffusion_columns_cover_each_pair_once(n):
    columns = diffusion_columns(n)
    pairs = [frozenset((c, r)) for c, rows in enumerate(columns) for r in rows]
    assert len(pairs) == len(set(pairs)) == n * (n - 1) // 2
    expected = [n // 2] * n if n % 2 else [n // 2] * (n // 2) + [n // 2 - 1] * (n // 2)
    assert [len(rows) for rows in columns] == expected


def test_barrier_ids_stay_within_the_limit_at_more_ctas_per_sm():
    mech, (T, P, Y), expected = reference("dme")
    for ctas in (1, 2, 3, 4):
        compiled = compile_kernel(mech, "diffusion", warps=512 // (32 * ctas) if ctas > 1 else 16,
                                  ctas_per_sm=ctas)
        compiled.verify()
        assert len(compiled.programs.barrier_ids) <= compiled.options.barrier_limit == 16 // ctas
        assert worst_error(compiled.simulate(T[:64], P[:64], Y[:, :64]), expected["diffusion"][:, :64]) <= TOLERANCE


# -- the skewed schedule of the diffusion kernel (transport.skew_diffusion) -----------------

def _turns(compiled) -> dict[int, dict[int, set[int]]]:
    """Phase -> warp -> the rows whose sums that warp adds into in that phase."""
    mapping = compiled.mapping
    producers = mapping.graph.producers()
    result: dict[int, dict[int, set[int]]] = {}
    for value, chain in mapping.chains.items():
        op = producers[value]
        if chain.startswith("rowsum") and op in mapping.phases:
            rows = result.setdefault(mapping.phases[op], {}).setdefault(mapping.warp_of[op], set())
            rows.add(int(chain[len("rowsum"):]))
    return result


@pytest.mark.parametrize("name, warps, ctas", [("heptane", 13, 3), ("dme", 10, 3), ("dme", 7, None), ("dme", 32, None)])
def test_diffusion_turns_give_each_row_sum_to_one_warp_per_phase(name, warps, ctas):
    """The original Singe's skewed schedule: in each phase every row sum is added into by
    one warp at most, warp w taking the rows of the species of warp (w + t) mod W at turn t;
    each row sum is one running sum in one shared slot (in species order), and a full
    barrier precedes each phase on every warp."""
    mech, _, _ = reference(name)
    compiled = compile_kernel(mech, "diffusion", warps=warps, ctas_per_sm=ctas)
    turns = _turns(compiled)
    owner = {int(op.name.split("_")[1]): w for op in compiled.mapping.graph.operations
             if op.kind == "output" for w in [compiled.mapping.warp_of[op.name]]}
    for phase, rows_by_warp in turns.items():
        seen = [r for rows in rows_by_warp.values() for r in rows]
        assert len(seen) == len(set(seen)), f"phase {phase}: two warps add into one row sum"
        for warp, rows in rows_by_warp.items():
            assert {owner[r] for r in rows} == {(warp + phase) % warps}
    slots: dict[str, set[int]] = {}
    for program in compiled.programs.programs:
        for item in program.items:
            if isinstance(item, SharedStore) and item.value in compiled.mapping.chains:
                slots.setdefault(compiled.mapping.chains[item.value], set()).add(item.slot)
    rows = sorted(int(chain[len("rowsum"):]) for chain in slots if chain.startswith("rowsum"))
    assert rows == list(range(len(mech.transported_species)))
    bases = {slot - r for r in rows for slot in slots[f"rowsum{r}"]}
    assert len(bases) == 1  # one slot per row sum, in species order
    phases = len(set(compiled.mapping.phases.values()))  # turns with pairs, and the outputs
    for program in compiled.programs.programs:
        assert sum(isinstance(item, FullSync) and item.reason.startswith("phase") for item in program.items) == phases


def test_a_warp_with_many_columns_goes_over_its_rows_in_passes():
    """n-heptane at 4 warps (13 columns a warp): each turn in two passes of at most
    ``COLUMNS_PER_PASS`` columns, the second continuing the row sums the first wrote;
    at 13 warps (4 columns) one pass.  Both match Cantera (``test_every_warp_count_matches_cantera``)."""
    mech, _, _ = reference("heptane")
    for warps, passes in ((4, 2), (13, 1)):
        graph = compile_kernel(mech, "diffusion", warps=warps).mapping.graph
        turns = [op for op in graph.operations if op.kind == "turn"]
        for op in turns:
            columns = {int(i.dst.split(".c")[1].split("_")[0]) for i in op.instrs if ".c" in (i.dst or "")}
            assert len(columns) <= COLUMNS_PER_PASS
        per_turn = Counter(op.name.split("_")[2:4][0] + "_" + op.name.split("_")[3] for op in turns)
        assert max(per_turn.values()) == passes


def test_a_missing_barrier_between_turns_is_caught():
    """The companion: without the full barrier before a turn, a warp reads a row sum the
    warp before it may not have written yet: the barrier proof fails and the simulator
    reports the race."""
    mech, (T, P, Y), _ = reference("dme")
    compiled = compile_kernel(mech, "diffusion", warps=10, ctas_per_sm=3)
    compiled.verify()

    def drop_second_full_sync(warp, items):
        where = [i for i, item in enumerate(items) if isinstance(item, FullSync)][2]  # before turn 1
        return items[:where] + items[where + 1:]

    broken = _with_items(compiled, drop_second_full_sync)
    with pytest.raises(SingeInternalError, match="synchronization"):
        check_programs(broken.programs)
    with pytest.raises(SimulationError) as info:
        for seed in range(5):
            broken.run(T[:32], P[:32], Y[:, :32], schedule="random", seed=seed)
    assert any(h.kind in ("race", "uninitialized") for h in info.value.hazards)


@pytest.mark.parametrize("wrong", ["row", "row sum"])
def test_a_wrong_row_in_a_turn_gives_a_wrong_answer(wrong):
    """The companion of the comparison with Cantera: one pair of a turn reading another
    row's mole fraction, or one row continuing another row's sum, moves the result past
    the tolerance."""
    mech, (T, P, Y), expected = reference("dme")
    compiled = compile_kernel(mech, "diffusion", warps=10, ctas_per_sm=3)
    assert worst_error(compiled.simulate(T[:64], P[:64], Y[:, :64]), expected["diffusion"][:, :64]) <= TOLERANCE
    def candidates(op) -> list[str]:  # the rows' mole fractions (a column sum's factor), or their sums so far
        if wrong == "row":
            return [f"x{v[len('rowsum'):].split('@')[0]}" for v in op.outputs if v.startswith("rowsum")]
        return [n for n in op.inputs if n.startswith("rowsum") and not n.endswith("@zero")]

    op = next(op for op in compiled.mapping.graph.operations
              if op.name.startswith("diffusion_turn_") and len(candidates(op)) > 1)
    first, second = candidates(op)[0], candidates(op)[-1]
    at = next(i for i, instr in enumerate(op.instrs) if Reg(first) in instr.srcs)
    instr = op.instrs[at]
    wrong_instr = Instr(instr.opcode, instr.dst, tuple(Reg(second) if s == Reg(first) else s for s in instr.srcs))
    mutated = _replace_operation(compiled, dataclasses.replace(op, instrs=op.instrs[:at] + (wrong_instr,)
                                                               + op.instrs[at + 1:]))
    assert worst_error(mutated.simulate(T[:64], P[:64], Y[:, :64]), expected["diffusion"][:, :64]) > TOLERANCE
