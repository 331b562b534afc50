"""autotune/device_kit.py: the session script it writes for a lent GPU, and its racecheck probe."""

from __future__ import annotations

import subprocess

import pytest

from autotune import device_kit
from singe.codegen.nvcc import find_nvcc


def test_the_session_fits_one_device_call_in_order_of_worth(tmp_path):
    args = device_kit.parse_arguments(["--folder", str(device_kit.ROOT / ".device_kit"), "--settings", "paper"])
    script = device_kit.run_script(device_kit.ROOT / ".device_kit", args)
    steps = [line.split("'")[1] for line in script.splitlines() if line.startswith("step '")]
    assert steps == ["timing", "persistent grid: SINGE_GRID_LIMIT = SMs x CTAs per SM",
                     "compute-sanitizer, warp-specialized kernels", "racecheck probe: named barriers",
                     "ncu: instructions and stall reasons, first launch of each kernel"]
    assert "--define SINGE_GRID_LIMIT=396" in script and "--define SINGE_GRID_LIMIT=264" in script  # 132 x 3, x 2
    assert "--settings paper" in script and "SINGE_CACHE=$PWD/.device_kit/cache" in script
    assert "--no-sanitizer" in script.split("step 'compute-sanitizer")[0]  # timing runs without the sanitizer
    assert sum(device_kit.LIMITS.values()) + 30 <= 600  # the device's limit for one command


@pytest.mark.skipif(find_nvcc() is None, reason="nvcc (CUDA toolkit) not installed")
def test_the_probe_builds_and_refuses_an_unknown_mode(tmp_path):
    device_kit.build_probe(tmp_path, "sm_90")
    done = subprocess.run([str(tmp_path / "probe"), "sideways"], capture_output=True, text=True)
    assert done.returncode == 2 and "usage" in done.stderr
