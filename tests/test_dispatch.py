"""Chemistry dispatch (singe.codegen.dispatch: each warp's program one case of
a single switch) and the mapper's balance of issued instructions."""

from __future__ import annotations

import dataclasses
import re

import numpy as np
import pytest

from singe import host
from singe.codegen import generate
from singe.codegen.nvcc import compile_cuda, find_nvcc
from singe.compiler import compile_kernel
from singe.mapping import issue_cost
from singe.reference.kinetics import net_production_rates
from cantera_reference import random_states
from conftest import load, warp_id_from_threadidx

TOLERANCE = 1e-9  # x max|wdot| per point, as tests/test_host_runtime.py
BALANCED = 1.15  # issue goal: the slowest warp's load over the mean (mapping.BALANCE_CAP keeps it lower)
CASE = re.compile(r"^    case (\d+): \{$(\n      const int warp_id = \d+;.*$)?", re.M)  # the body: after its warp's constant


def chemistry(name: str, warps: int, **options):
    return compile_kernel(load(name), "chemistry", warps=warps, **options)


def cases(cu: str) -> dict[int, tuple[int, int]]:
    """Warp -> (start, end) character span of its case body in the switch (after the
    case's ``warp_id`` constant: a swapped body reads the other warp's constants)."""
    heads = list(CASE.finditer(cu))
    ends = [m.start() for m in heads[1:]] + [cu.index("    default: break;")]
    return {int(m.group(1)): (m.end(), end) for m, end in zip(heads, ends)}


def swap_cases(cu: str, a: int, b: int) -> str:
    """The kernel with warps ``a`` and ``b`` running each other's programs."""
    spans = cases(cu)
    (a0, a1), (b0, b1) = sorted((spans[a], spans[b]))
    return cu[:a0] + cu[b0:b1] + cu[a1:b0] + cu[a0:a1] + cu[b1:]


def worst_error(mech, generated, T, P, Y) -> float:
    """Largest |host - reference| / max over species of |reference| at the point; inf when the run fails
    or gives non-finite values."""
    source = host.kernel_source(generated)
    fields, n = host.compiled_fields(source, T, P, Y)
    try:
        ours = host.load(generated).run(fields, n)["production_rates"]
    except host.HostRuntimeError:
        return float("inf")
    if not np.all(np.isfinite(ours)):
        return float("inf")
    truth = net_production_rates(mech, T, P, Y)
    return float(np.max(np.abs(ours - truth) / np.abs(truth).max(axis=0)))


def test_chemistry_dispatches_once_per_slab():
    """One switch, one case per warp, no per-unit warp tests; transport keeps the overlay."""
    cu = generate(chemistry("h2o2", 4)).cu
    assert cu.count("switch (warp_id)") == 1
    assert "if ((1u << warp_id)" not in cu
    assert sorted(cases(cu)) == [0, 1, 2, 3]
    single = generate(chemistry("h2o2", 1)).cu
    assert "switch (warp_id)" not in single and "if ((1u << warp_id)" not in single
    viscosity = generate(compile_kernel(load("h2o2"), "viscosity", warps=4)).cu
    assert "// all warps" in viscosity


def test_each_case_reads_its_constants_at_constant_addresses():
    """Each case declares its warp's number as a constant ``warp_id`` (so
    ``SINGE_CONST``'s table addresses are immediates), before its slab loop."""
    cu = generate(chemistry("h2o2", 4)).cu
    for warp, (start, _) in cases(cu).items():
        head = cu[cu.rindex("    case ", 0, start):start]
        assert f"const int warp_id = {warp};" in head


def constant_case_warps(cu: str) -> str:
    """``cu`` with its cases' ``warp_id`` constants removed and the warp id read from threadIdx."""
    return re.sub(r"\n      const int warp_id = \d+;[^\n]*", "", warp_id_from_threadidx(cu))


@pytest.mark.skipif(find_nvcc() is None, reason="nvcc (CUDA toolkit) not installed")
def test_constant_warp_ids_avoid_cantera_air_spills(tmp_path):
    """Cantera's air chemistry, sm_90, ptxas: no spills at the defaults (8
    warps, 4 CTAs per SM chosen) nor at 7 warps x 5 CTAs; companion: there,
    with the warp id read at run time from threadIdx, ptxas hoists the warp's
    constant loads out of the slab loop into registers and spills 140 B (at the
    defaults it did too before the time-aware mapping lowered the warps'
    register peaks).  The warp id read from lane 0 (``SINGE_WARP_ID``) avoids
    that spill on its own: 0 B without the cases' constants."""
    from autotune.spills import load as load_named

    mech = load_named("cantera:air", tmp_path)
    spills = []
    for warps, ctas in ((8, None), (7, 5)):
        compiled = compile_kernel(mech, "chemistry", arch="sm_90", warps=warps, ctas_per_sm=ctas)
        assert ctas or compiled.options.ctas_per_sm == 4
        generated = generate(compiled)
        variants = (("constant", generated.cu),) + ((("runtime", constant_case_warps(generated.cu)),) if ctas
                                                    else ())
        for name, cu in variants:
            folder = tmp_path / f"{name}{warps}"
            entry = compile_cuda(dataclasses.replace(generated, cu=cu).write(folder)[0], "sm_90").entry(
                generated.name)
            spills.append(entry.spill_stores + entry.spill_loads)
    assert spills[0] == 0 and spills[1] == 0 and spills[2] > 0, spills


def test_switch_kernel_runs_right_and_misdispatch_is_caught():
    """The emitted kernel on the host matches singe.reference; with two
    warps' cases swapped (a wrong dispatch) the comparison fails."""
    mech = load("h2o2")
    T, P, Y = random_states(64, len(mech.transported_species), 3)
    generated = generate(chemistry("h2o2", 4))
    assert worst_error(mech, generated, T, P, Y) <= TOLERANCE
    swapped = dataclasses.replace(generated, cu=swap_cases(generated.cu, 1, 2))
    assert swapped.cu != generated.cu
    assert worst_error(mech, swapped, T, P, Y) > TOLERANCE


def warp_loads(compiled) -> list[int]:
    loads = [0] * compiled.options.warps
    for op in compiled.graph.operations:  # before the per-warp partial sums
        if op.name in compiled.mapping.warp_of:
            loads[compiled.mapping.warp_of[op.name]] += issue_cost(op)
    return loads


def imbalance(loads: list[int]) -> float:
    return max(loads) / (sum(loads) / len(loads))


@pytest.mark.parametrize("name, warps, qssa", [("gri30", 8, 1), ("dme", 8, 4), ("heptane", 16, 2)])
def test_mapping_balances_issued_instructions(name, warps, qssa):
    """Chemistry operations (before the per-warp partial sums) are spread so
    that no warp issues more than BALANCED x the mean."""
    loads = warp_loads(chemistry(name, warps, qssa_warps=qssa))
    assert imbalance(loads) <= BALANCED, loads


def test_imbalance_measure_flags_a_lopsided_mapping():
    """Companion: the measure above fails a mapping that piles work on one warp."""
    compiled = chemistry("gri30", 8)
    lopsided = dict(compiled.mapping.warp_of)
    for name in list(lopsided)[: len(lopsided) // 3]:
        lopsided[name] = 0
    assert imbalance(warp_loads(dataclasses.replace(
        compiled, mapping=dataclasses.replace(compiled.mapping, warp_of=lopsided)))) > BALANCED


def test_an_unknown_cantera_mechanism_is_named_with_those_known(tmp_path):
    """``autotune.spills``'s ``cantera:NAME``: a name it does not convert is an error naming the ones it does
    and the way to give another (its YAML's path), not a KeyError."""
    from autotune.spills import load as load_named

    with pytest.raises(SystemExit, match=r"cantera:gri30_ion: not one of .*cantera:air.*path of its YAML file"):
        load_named("cantera:gri30_ion", tmp_path)
