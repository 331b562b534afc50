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
