"""autotune/gpu_bench.py without a GPU (compile-only: nvcc builds, nothing
timed, exit 0) and the timing model printed beside a measurement."""

from __future__ import annotations

import json
import os
import pathlib
import subprocess
import sys

import pytest

from singe.codegen.nvcc import find_nvcc

ROOT = pathlib.Path(__file__).resolve().parents[1]


@pytest.mark.skipif(find_nvcc() is None, reason="nvcc (CUDA toolkit) not installed")
def test_compile_only_builds_every_style_and_says_nothing_was_timed(tmp_path):
    """H2/O2 viscosity at the defaults: the warp-specialized kernel, the baseline of its graph (Wilke pairs) and
    the tuned baseline (groups of 8, ``singe.baseline_kernel``), three builds."""
    results = tmp_path / "gpu_bench.json"
    done = subprocess.run([sys.executable, "-m", "autotune.gpu_bench", "--mechanisms", "h2o2", "--kernels", "viscosity",
                           "--settings", "defaults", "--compile-only", "--json", str(results)],
                          cwd=ROOT, capture_output=True, text=True, env={**os.environ, "SINGE_CACHE": str(tmp_path / "cache")},
                          timeout=600)
    print(done.stdout)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "nothing will be timed" in done.stdout and "compiled 3 kernels; nothing was timed" in done.stdout
    records = json.loads(results.read_text())
    assert [r["style"] for r in records] == ["warp-specialized", "baseline", "tuned-baseline"]
    assert all(r["registers"] > 0 and "mpoints_per_s" not in r for r in records)
    assert len(list((tmp_path / "cache" / "gpu").glob("h2o2_viscosity*.so"))) == 3


def test_a_kernel_whose_baseline_is_its_own_graphs_has_no_tuned_baseline():
    """Chemistry's baseline is the data-parallel kernel of its own graph: no 'tuned-baseline' to time; viscosity's
    is of its graph in Wilke groups of 8."""
    from autotune.gpu_bench import style_kernel
    from conftest import load
    from singe import compile_kernel

    chemistry, viscosity = (compile_kernel(load("h2o2"), k, warps=4, ctas_per_sm=2) for k in ("chemistry", "viscosity"))
    assert style_kernel(chemistry, "tuned-baseline") is None and style_kernel(chemistry, "baseline") is chemistry
    tuned = style_kernel(viscosity, "tuned-baseline")
    assert tuned is not None and tuned.graph is not viscosity.graph


def test_fewer_than_ten_repeats_are_refused():
    done = subprocess.run([sys.executable, "-m", "autotune.gpu_bench", "--repeats", "3", "--compile-only"], cwd=ROOT, capture_output=True,
                          text=True)
    assert done.returncode == 2 and "--repeats must be at least 10" in done.stderr


def fake_measurement(mpoints: float) -> dict:
    return {"label": "h2o2 viscosity defaults (8x2)", "mechanism": "h2o2", "kernel": "viscosity",
            "setting": "defaults", "style": "warp-specialized", "arch": "sm_90", "device": "a test device",
            "options": {"warps": 8, "ctas_per_sm": 2, "arch": "sm_90", "weights": [1.0, 0.5, 1.0],
                        "placement": "auto", "qssa_warps": 1},
            "registers": 102, "spill_stores": 0, "spill_loads": 0, "mpoints_per_s": mpoints}


def test_model_beside_measurement():
    """The ratio is the model's Mpoints/s over the measured one (a measurement
    twice as fast halves it)."""
    from autotune.gpu_bench import model_comparison_lines

    one, two = (model_comparison_lines([fake_measurement(m)])[1] for m in (100.0, 200.0))
    modeled = float(one.split("model")[1].split()[0])
    ratio_one, ratio_two = float(one.split("ratio")[1]), float(two.split("ratio")[1])
    assert ratio_one == pytest.approx(modeled / 100.0, rel=1e-2)
    assert ratio_two == pytest.approx(ratio_one / 2, rel=1e-2)


def test_bench_prints_the_comparison_when_measurements_exist(tmp_path):
    measured = tmp_path / "gpu_bench.json"
    measured.write_text(json.dumps([fake_measurement(100.0)]))
    done = subprocess.run([sys.executable, "-m", "autotune.bench", "--mechanisms", "h2o2",
                           "--kernels", "viscosity", "--points", "32", "--gpu-bench", str(measured)],
                          cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    assert "The timing model against gpu_bench.py's measurements" in done.stdout
    assert "measured    100.00 (a test device)  ratio" in done.stdout


def timed(mpoints: float, fp64=0.192, verdict=True) -> dict:
    return {**fake_measurement(mpoints), "median_ms": 1.915, "gflops": 6412.0, "fp64_fraction": fp64,
            "max_error": 2.4e-15, "correct": verdict}


def test_a_log_gives_back_the_rows_it_printed():
    """``records_from_log`` reads ``row_line``'s rows (a run stopped before its JSON keeps its log), with the
    device of the ``device:`` line above them; untimed rows and other lines are not rows."""
    from autotune.gpu_bench import records_from_log, row_line

    rows = [timed(1095.32), {**timed(2443.28, fp64=None, verdict=False), "style": "baseline"},
            {**timed(2601.5), "style": "tuned-baseline"}]
    untimed = {k: v for k, v in timed(1.0).items() if k not in ("mpoints_per_s", "median_ms")}
    log = "\n".join(["device: NVIDIA H200 (sm_90, 132 SMs)", "configuration  style", *map(row_line, rows),
                     row_line(untimed), "    racecheck: Error: Race reported"])
    read = records_from_log(log)
    assert [(r["style"], r["mpoints_per_s"], r["fp64_fraction"], r["correct"]) for r in read] == [
        ("warp-specialized", 1095.32, 0.192, True), ("baseline", 2443.28, None, False),
        ("tuned-baseline", 2601.5, 0.192, True)]
    assert {r["device"] for r in read} == {"NVIDIA H200"} and read[0]["label"] == rows[0]["label"]
    assert (read[0]["mechanism"], read[0]["kernel"], read[0]["setting"]) == ("h2o2", "viscosity", "defaults")


def test_the_results_are_written_after_each_configuration(tmp_path, monkeypatch):
    """A run stopped at a time limit keeps the configurations it finished."""
    from autotune import gpu_bench

    results = tmp_path / "gpu_bench.json"
    seen = []

    def run_config(config, *rest):
        if seen:
            assert [r["mpoints_per_s"] for r in json.loads(results.read_text())] == [100.0]  # the first is on disk
            raise KeyboardInterrupt  # the limit's kill
        seen.append(config)
        return [timed(100.0)]

    monkeypatch.setattr(gpu_bench, "run_config", run_config)
    monkeypatch.setattr(gpu_bench, "find_device", lambda args: (None, "a test"))
    with pytest.raises(KeyboardInterrupt):
        gpu_bench.main(["--mechanisms", "h2o2", "--kernels", "viscosity,diffusion", "--settings", "defaults",
                        "--json", str(results), "--plot", ""])
    assert len(seen) == 1 and len(json.loads(results.read_text())) == 1


def test_a_session_log_gives_the_timing_steps_rows_with_their_options(tmp_path):
    """``measured_records`` of a device session's log: the rows of its timing step only (the ncu step times the
    same kernels under the profiler), each with the options its label's shape names, ready for the model."""
    from autotune.gpu_bench import measured_records, options_of_shape, row_line

    assert (options_of_shape("8x2q4", "sm_90")["warps"], options_of_shape("8x2q4", "sm_90")["ctas_per_sm"],
            options_of_shape("8x2q4", "sm_90")["qssa_warps"]) == (8, 2, 4)
    assert options_of_shape("8xauto", "sm_80")["ctas_per_sm"] is None and options_of_shape("8xauto", "sm_80")["arch"] == "sm_80"
    assert options_of_shape("sweep", "sm_90") is None
    timed_row, profiled_row = row_line(timed(1095.32)), row_line(timed(447.25))
    log = tmp_path / "log.txt"
    log.write_text("\n".join(["== 07:28:05 timing", "device: NVIDIA H200 (sm_90, 132 SMs)", timed_row,
                              "== 07:34:59 ncu: instructions and stall reasons, first launch of each kernel",
                              "device: NVIDIA H200 (sm_90, 132 SMs)", profiled_row, "== 07:36:21 done"]))
    records = measured_records(str(log))
    assert [r["mpoints_per_s"] for r in records] == [1095.32]
    assert records[0]["options"]["warps"] == 8 and records[0]["options"]["ctas_per_sm"] == 2
    assert records[0]["spill_loads"] is None


def test_labels_and_records_name_the_constant_table():
    """A warp-specialized row's label names where its kernel reads the constant table ('copy' or 'cache') and a
    Wilke group other than the kernel's, so a log read back compiles the kernel that ran; a label or a record
    that names no table predates the 'auto' default and read it through the constant cache."""
    from autotune.gpu_bench import Config, options_of_shape, record_options
    from autotune.speedup import measured_lines, paper_pairs
    from singe.options import CompileOptions

    config = Config("dme", "viscosity", "defaults", CompileOptions(warps=8, ctas_per_sm=4, wilke_group=4))
    assert config.label("copy") == "dme viscosity defaults (8x4 g4 copy)"
    shape = config.label("copy").split("(")[1].rstrip(")")
    assert (options_of_shape(shape, "sm_90")["wilke_group"], options_of_shape(shape, "sm_90")["constant_table"]) == \
        (4, "shared")
    assert options_of_shape("15x3 cache", "sm_90")["constant_table"] == "cache"
    assert options_of_shape("13x3 partial", "sm_90")["constant_table"] == "auto"  # auto copies part of it there
    assert options_of_shape("15x3", "sm_90")["constant_table"] == "cache"  # a log of an earlier session
    prefetching = Config("dme", "viscosity", "sweep", CompileOptions(warps=10, ctas_per_sm=4, prefetch=True))
    assert prefetching.label("copy") == "dme viscosity sweep (10x4 pf copy)"
    assert options_of_shape("10x4 pf copy", "sm_90")["prefetch"] and not options_of_shape("10x4 copy", "sm_90")["prefetch"]
    guarded = Config("dme", "chemistry", "sweep", CompileOptions(warps=8, ctas_per_sm=2, qssa_warps=4, products="cantera"))
    assert guarded.label("cache") == "dme chemistry sweep (8x2q4 cantera cache)"
    assert options_of_shape("8x2q4 cantera cache", "sm_90")["products"] == "cantera"
    assert options_of_shape("8x2q4 cache", "sm_90")["products"] == "chemkin"
    legacy = fake_measurement(100.0)
    assert record_options(legacy).constant_table == "cache"
    assert record_options({**legacy, "options": {**legacy["options"], "constant_table": "auto"}}).constant_table == "auto"
    paper = [{**legacy, "setting": "paper", "style": style} for style in ("warp-specialized", "baseline")]
    pairs = paper_pairs(paper)
    assert pairs[("h2o2", "viscosity")]["table"] == "cache"
    assert "--constant-table cache compares like with like" in measured_lines([], pairs, "auto")[-1]
    assert "like with like" not in "\n".join(measured_lines([], pairs, "cache"))


def test_an_unknown_mechanism_is_named_not_a_traceback():
    from autotune.bench import mechanism_path

    assert mechanism_path("gri30").name == "gri30.inp"  # bundled
    with pytest.raises(SystemExit, match=r"no mechanism 'octane': not .*octane.inp \(the shared mechanisms"):
        mechanism_path("octane")
