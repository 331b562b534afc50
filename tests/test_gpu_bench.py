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
def test_compile_only_builds_both_styles_and_says_nothing_was_timed(tmp_path):
    results = tmp_path / "gpu_bench.json"
    done = subprocess.run([sys.executable, "-m", "autotune.gpu_bench", "--mechanisms", "h2o2", "--kernels", "viscosity",
                           "--settings", "defaults", "--compile-only", "--json", str(results)],
                          cwd=ROOT, capture_output=True, text=True, env={**os.environ, "SINGE_CACHE": str(tmp_path / "cache")},
                          timeout=600)
    print(done.stdout)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "nothing will be timed" in done.stdout and "compiled 2 kernels; nothing was timed" in done.stdout
    records = json.loads(results.read_text())
    assert [r["style"] for r in records] == ["warp-specialized", "baseline"]
    assert all(r["registers"] > 0 and "mpoints_per_s" not in r for r in records)
    assert len(list((tmp_path / "cache" / "gpu").glob("h2o2_viscosity*.so"))) == 2


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
