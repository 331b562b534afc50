"""The timing model of the table-form chemistry kernel (``singe.timing_tables``): its per-warp
issued instructions against the SASS walk of the compiled kernel, and the modeled throughput."""

from __future__ import annotations

import pathlib
from collections import Counter

import numpy as np
import pytest

from singe import timing, timing_tables
from singe.compiler import compile_kernel
from singe.errors import SingeInternalError
from conftest import load

SASS_TOLERANCE = 0.10  # relative, per warp, as tests/test_timing.py's check of the unrolled kernels
REITZ = "nDodecane_Reitz.yaml"


def _sass_tools_missing() -> list[str]:
    from autotune import sass

    return sass.missing_tools()


needs_sass = pytest.mark.skipif(bool(_sass_tools_missing()), reason="needs nvcc, nvdisasm and cuobjdump (pip install "
                                                                     "nvidia-cuda-nvdisasm nvidia-cuda-cuobjdump)")


def _tables(name: str, warps: int):
    if name == REITZ:
        cantera = pytest.importorskip("cantera")
        path = pathlib.Path(cantera.__file__).resolve().parent / "data" / REITZ
        import singe

        return compile_kernel(singe.load_mechanism(path), "chemistry", warps=warps, form="tables")
    return compile_kernel(load(name), "chemistry", warps=warps, form="tables")


@pytest.fixture(scope="module")
def h2o2_check():
    """The H2/O2 table-form kernel at 4 warps and its model check rows (warp, model, SASS)."""
    from autotune import sass

    compiled = _tables("h2o2", 4)
    return compiled, sass.model_check(compiled, "sm_90")


@needs_sass
@pytest.mark.parametrize("name,warps", [("gri30", 4), (REITZ, 8)])
def test_model_issues_what_the_table_kernel_issues_per_warp(name, warps):
    """Per warp, the model's issued instructions per slab against the SASS walk (sm_90).  GRI-Mech
    3.0 is one of the fit kernels of ``PER_FEATURE`` (autotune/table_fit.py); Reitz's n-dodecane
    (100 species, 553 rows, half of them irreversible) is held out."""
    from autotune import sass

    rows = sass.model_check(_tables(name, warps), "sm_90")
    print("\n" + sass.format_model_check(f"{name} tables", rows))
    for warp, modeled, issued in rows:
        assert abs(modeled - issued) <= SASS_TOLERANCE * issued, (warp, modeled, issued)


@needs_sass
def test_model_issues_what_the_held_out_h2o2_kernel_issues(h2o2_check):
    """H2/O2 (held out: 10 species, 29 rows, warps of a few rows each) within the same tolerance."""
    _, rows = h2o2_check
    for warp, modeled, issued in rows:
        assert abs(modeled - issued) <= SASS_TOLERANCE * issued, (warp, modeled, issued)


@pytest.fixture(scope="module")
def dme_check():
    """The DME table-form kernel at 8 warps (held out of the fit: QSSA and stiff species, the QSSA,
    stiffness and scale phases) and its model check rows (warp, model, SASS)."""
    from autotune import sass

    compiled = _tables("dme", 8)
    return compiled, sass.model_check(compiled, "sm_90")


@needs_sass
def test_model_issues_what_the_held_out_qssa_kernel_issues(dme_check):
    """DME (39 species, 9 of them QSSA, 22 stiff; held out of autotune/table_fit.py, whose QSSA kernels
    are n-heptane and the QSSA n-dodecane) within the same tolerance, per warp."""
    from autotune import sass

    compiled, rows = dme_check
    assert compiled.tables.qssa is not None and compiled.tables.stiff is not None
    print("\n" + sass.format_model_check("DME tables", rows))
    for warp, modeled, issued in rows:
        assert abs(modeled - issued) <= SASS_TOLERANCE * issued, (warp, modeled, issued)


FEATURES_BEFORE_QSSA = timing_tables.FEATURES[:timing_tables.FEATURES.index("split_rows")]


def _priced_as_rates_rows(compiled) -> list[float]:
    """Per warp, the issued count of the model that priced every loop of the QSSA, stiffness and scale
    phases as the rates rows begin:end of its range (the model before those phases had features; it
    failed on a scale loop past the last row, here cut at it)."""
    result = []
    for program in compiled.programs.programs:
        features = Counter()
        for loop in program.items:
            if not isinstance(loop, timing_tables.TableLoop):
                continue
            if loop.phase in ("thermo", "concentrations", "rates", "species"):
                features.update(timing_tables.loop_features(loop, compiled.programs.warps))
            else:
                n = loop.tables.n_rows  # a scale loop's directions run to 2 n_rows: the rows there are
                features.update(timing_tables._rates_features(loop.tables, min(loop.begin, n), min(loop.end, n)))
        result.append(sum(timing_tables.feature_classes(features, FEATURES_BEFORE_QSSA).values()))
    return result


@needs_sass
def test_the_qssa_sass_check_fails_when_qssa_phases_are_priced_as_rates_rows(dme_check):
    """The held-out check above catches the old pricing of the QSSA, stiffness and scale loops as rates rows."""
    compiled, rows = dme_check
    wrong = _priced_as_rates_rows(compiled)
    print("\nDME priced as rates rows: per warp model/SASS " + " ".join(f"{m:.0f}/{s}" for m, (_, _, s) in
                                                                          zip(wrong, rows)))
    assert any(abs(m - s) > SASS_TOLERANCE * s for m, (_, _, s) in zip(wrong, rows))


def test_qssa_features_cover_every_qssa_term_op_and_scaled_direction_once():
    """The warps' QSSA, stiffness and scale trip counts add up to the tables (DME: QSSA and stiff species)."""
    compiled = _tables("dme", 6)
    tables = compiled.tables
    q, st, sc = tables.qssa, tables.stiff, tables.scale
    total = sum(timing_tables.warp_features(compiled.programs), Counter())
    assert total["qssa_species"] == q.n_qss and total["qssa_cells"] == q.n_cells
    assert total["qssa_terms"] == q.sums.index.size
    assert total["solve_ops"] == len(q.ops) and total["solve_divides"] == int((q.ops[:, 0] == 2).sum())
    assert total["stiff_species"] == st.species.size
    assert total["stiff_entries"] == st.destruction.index.size + st.creation.index.size
    assert total["scale_rows"] == sc.direction.size and total["scale_factors"] == sc.factors.index.size
    assert total["scale_powers"] == int((sc.factors.value != 1).sum()) > 0
    assert total["scale_qssa_rows"] == int((sc.direction_qss[sc.direction] >= 0).sum()) > 0
    assert total["qssa_slab"] == total["stiff_slab"] == total["scale_slab"] == 6
    assert total["split_rows"] == tables.n_rows and total["split_entries"] == total["sums_entries"]


def test_every_feature_is_priced_in_one_phase_of_the_kernel():
    from singe.kernels import table_form

    listed = [f for names in timing_tables.PHASE_FEATURES.values() for f in names]
    assert sorted(listed) == sorted(timing_tables.FEATURES) and len(set(listed)) == len(listed)
    assert set(timing_tables.PHASE_FEATURES) == set(table_form.PHASES)


def test_qssa_table_kernel_has_a_segment_per_phase():
    """The CTA model runs the mechanism's phases: 8 segments and 7 barriers per warp with QSSA and stiff species."""
    compiled = _tables("dme", 4)
    steps = timing_tables.warp_steps(compiled, timing.H100, "l2")
    assert all(len(s) == 15 for s in steps)
    assert sum(isinstance(x, timing.Barrier) for x in steps[0]) == 7
    assert all(len(s) == 7 for s in timing_tables.warp_steps(_tables("h2o2", 4), timing.H100, "l2"))


def test_qssa_table_kernel_is_modeled_on_every_preset(monkeypatch):
    """DME's table form (warps with no share of the solve: an empty segment) is modeled on both presets,
    below its roofline, and its QSSA, stiffness and scale phases cost time: without them it is faster."""
    compiled = _tables("dme", 8)
    for preset in ("H100", "A100"):
        result = timing.model(compiled, preset)
        assert 0 < result.points_per_second <= result.roofline
    full = timing_tables.model(compiled, "H100", flops=1000).points_per_second
    features = timing_tables.warp_features
    monkeypatch.setattr(timing_tables, "warp_features", lambda programs: [
        Counter({k: v for k, v in f.items() if k in FEATURES_BEFORE_QSSA}) for f in features(programs)])
    assert timing_tables.model(compiled, "H100", flops=1000).points_per_second > 1.2 * full


def _one_iteration(features: Counter) -> Counter:
    return Counter({name: min(n, 1) for name, n in features.items()})


@needs_sass
def test_the_table_sass_check_fails_on_a_wrong_model(h2o2_check):
    """The check above catches a model that costs every loop as one iteration, or that drops a class
    (the integer and address work, 'other')."""
    compiled, rows = h2o2_check
    issued = [s for _, _, s in rows]
    features = timing_tables.warp_features(compiled.programs)
    once = [sum(timing_tables.feature_classes(_one_iteration(f)).values()) for f in features]
    dropped = [sum(n for name, n in c.items() if name != "other") for c in timing_tables.issued_per_warp(compiled)]
    for wrong in (once, dropped):
        assert any(abs(m - s) > SASS_TOLERANCE * s for m, s in zip(wrong, issued))


def test_features_cover_every_row_species_and_entry_once():
    """The warps' trip counts add up to the mechanism's tables (every row, species and sum entry once)."""
    compiled = _tables("gri30", 6)
    tables = compiled.tables
    total = sum(timing_tables.warp_features(compiled.programs), Counter())
    assert total["rows"] == tables.n_rows and total["species"] == total["sums_species"] == tables.n_species
    assert total["sums_entries"] == tables.species_sums.index.size
    assert total["slab"] == 6 and total["partials"] == 6 * 5
    assert total["falloff"] == len(tables.group_rows("falloff"))
    fwd, rev = np.diff(tables.forward_factors.ptr), np.diff(tables.reverse_factors.ptr)
    equilibrium = (tables.flags & 4) != 0
    assert total["gibbs_entries"] == int((fwd + rev)[equilibrium].sum())


def test_more_rows_issue_more():
    """A warp's issued count follows its share: the whole mechanism on 2 warps issues more per warp than on 8."""
    few = timing_tables.issued_per_warp(_tables("gri30", 2))
    many = timing_tables.issued_per_warp(_tables("gri30", 8))
    assert min(sum(c.values()) for c in few) > 2.5 * max(sum(c.values()) for c in many)


def test_table_kernel_is_modeled_on_every_preset():
    compiled = _tables("h2o2", 4)
    for preset in ("H100", "A100"):
        result = timing.model(compiled, preset)
        assert result.style == "tables" and result.preset == preset
        assert 0 < result.points_per_second <= result.roofline
        assert result.occupancy.shared_bytes == 2 * 10 * 32 * 8
    faster = timing.model(compiled, "H100").points_per_second
    assert faster > timing.model(compiled, "A100").points_per_second


def test_species_outside_shared_memory_are_workspace_traffic(monkeypatch):
    """Where C_k and g_k/RT do not fit shared memory, their accesses are global loads and stores."""
    compiled = _tables("h2o2", 4)
    shared = timing_tables.issued_per_warp(compiled)
    monkeypatch.setattr(timing_tables, "species_in_shared", lambda compiled: False)
    workspace = timing_tables.issued_per_warp(compiled)
    for s, w in zip(shared, workspace):
        assert w["lds"] == w["sts"] == 0 and s["lds"] > 0
        assert abs(w["ldg"] - (s["ldg"] + s["lds"])) <= 1 and abs(w["stg"] - (s["stg"] + s["sts"])) <= 1


def test_unrolled_pricing_refuses_table_programs():
    with pytest.raises(SingeInternalError, match="timing_tables"):
        timing.issued_per_warp(_tables("h2o2", 2).programs)


def test_workspace_traffic_goes_to_l2_or_dram_by_its_footprint():
    """The workspaces of the resident CTAs in the L2 (a small mechanism) or, past its size, in DRAM:
    the model charges the slower latency and the other bandwidth."""
    import dataclasses

    compiled = _tables("h2o2", 4)
    small_l2 = dataclasses.replace(timing.H100, name="H100 small L2", l2_bytes=1024)
    assert timing_tables.workspace_level(compiled, timing.H100, 4) == "l2"
    assert timing_tables.workspace_level(compiled, small_l2, 4) == "dram"
    fits = timing_tables.model(compiled, timing.H100, flops=1000)
    spills_over = timing_tables.model(compiled, small_l2, flops=1000)
    assert fits.utilization["l2"] > 0 and spills_over.points_per_second < fits.points_per_second


def test_bench_detailed_reports_the_modeled_table_form():
    """autotune/bench_detailed's model columns: the table form on both presets (with ptxas's registers),
    its issued count per point (every warp's per slab of 32 points), the baseline beside."""
    from autotune import bench_detailed

    compiled = _tables("h2o2", 4)
    row = bench_detailed.model(compiled.mechanism, compiled, {"registers": 92, "spill_stores": 0, "spill_loads": 0})
    assert row["tables_mpts_H100"] > row["tables_mpts_A100"] > 0 and row["baseline_mpts"] > 0
    issued = sum(sum(c.values()) for c in timing_tables.issued_per_warp(compiled))
    assert row["modeled_issued_per_point"] == issued
    assert 0 < row["tables_roofline_fraction_H100"] < 1
