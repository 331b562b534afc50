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
                     "load throughput probe: LDS.64, LDC.64, constant-bank operands", "ncu: instructions and stall reasons, first launch of each kernel"]
    assert "--define SINGE_GRID_LIMIT=396" in script and "--define SINGE_GRID_LIMIT=264" in script  # 132 x 3, x 2
    assert "--settings paper" in script and "SINGE_CACHE=$PWD/.device_kit/cache" in script
    assert "--no-sanitizer" in script.split("step 'compute-sanitizer")[0]  # timing runs without the sanitizer
    assert sum(device_kit.LIMITS.values()) + 30 <= 600  # the device's limit for one command


@pytest.mark.skipif(find_nvcc() is None, reason="nvcc (CUDA toolkit) not installed")
def test_the_probes_build_and_the_race_probe_refuses_an_unknown_mode(tmp_path):
    device_kit.build_probes(tmp_path, "sm_90")
    assert (tmp_path / "mio").is_file()
    done = subprocess.run([str(tmp_path / "probe"), "sideways"], capture_output=True, text=True)
    assert done.returncode == 2 and "usage" in done.stderr


@pytest.mark.skipif(find_nvcc() is None or bool(__import__("autotune.sass").sass.missing_tools()),
                    reason="needs nvcc and cuobjdump (pip install nvidia-cuda-cuobjdump)")
def test_the_load_probe_issues_the_loads_it_names(tmp_path):
    """Each mode of autotune/probes/mio_throughput.cu is the load it measures: LDS.64 in 'lds', LDC.64 at a
    register index in 'ldc' (eight per iteration of the unrolled loop), neither in 'bank' (its loads at known
    indices hoisted out of the loop) and 'none'."""
    import re

    from autotune import sass

    device_kit.build_probes(tmp_path, "sm_90")
    listing = subprocess.run([sass.tool("cuobjdump"), "-sass", str(tmp_path / "mio")], capture_output=True,
                             text=True, check=True).stdout
    bodies = dict(re.findall(r"Function : _Z3mioILi(\d)EEviPdPx(.*?)(?=Function :|\Z)", listing, re.S))
    assert sorted(bodies) == ["0", "1", "2", "3"]
    def indexed(body: str) -> int:  # loads of the table at a register index (the parameters are c[0x0])
        return len(re.findall(r"c\[0x3\]\[R\d", body))

    assert bodies["0"].count("LDS.64") >= 8 and not indexed(bodies["0"])
    assert indexed(bodies["1"]) >= 8 and "LDS.64" not in bodies["1"]
    assert "LDS.64" not in bodies["2"] + bodies["3"] and not indexed(bodies["2"] + bodies["3"])
