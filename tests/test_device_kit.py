"""autotune/device_kit.py: the session script it writes for a lent GPU, and its racecheck probe."""

from __future__ import annotations

import re
import subprocess

import pytest

from autotune import device_kit
from singe.codegen.nvcc import find_nvcc


def test_the_session_fits_one_device_call_in_order_of_worth(tmp_path):
    folder = tmp_path / ".device_kit"
    args = device_kit.parse_arguments(["--folder", str(folder), "--settings", "paper,defaults"])
    variants = device_kit.write_variants(folder)
    script = device_kit.run_script(folder, args, variants)
    steps = [line.split("'")[1] for line in script.splitlines() if line.startswith("step '")]
    assert steps == ["timing", "timing: the variants, warp-specialized", "timing: the baseline of the symmetric form",
                     "compute-sanitizer, warp-specialized kernels, paper settings",
                     "racecheck probe: named barriers",
                     "load probe: LDS.64, LDC.64, constant-bank operands; latency of dependent loads",
                     "fetch probe: code beyond the instruction cache",
                     "local probe: latency of a dependent load of local memory (a spill)",
                     "ncu: instructions and stall reasons, first launch of each kernel",
                     "ncu: instructions and stall reasons of the variants",
                     "ncu: stalls per SASS instruction, DME viscosity and chemistry"]
    timing = script.split("step 'timing'")[1].split("step '")[0]
    variants = script.split("step 'timing: the variants")[1].split("step '")[0]
    sanitizer = script.split("step 'compute-sanitizer")[1].split("step '")[0]
    assert "--sweep-best" not in timing + sanitizer and "--styles" not in timing  # both styles
    assert variants.count("--sweep-best") == len(device_kit.VARIANTS) and "--styles warp-specialized" in variants
    assert "--settings paper,defaults" in timing and "--settings paper " in sanitizer
    assert (folder / "variants" / "dme_viscosity_8_pairs.txt").read_text().endswith("--warps 8 --wilke-group 2\n")
    symmetric = script.split("step 'timing: the baseline of the symmetric form'")[1].split("step '")[0]
    assert "--styles tuned-baseline" in symmetric and symmetric.count("--sweep-best") == 1
    assert f"{device_kit.SYMMETRIC_BASELINE}.txt" in symmetric and "--wilke-symmetric" in \
        (folder / "variants" / f"{device_kit.SYMMETRIC_BASELINE}.txt").read_text()
    assert "SINGE_GRID_LIMIT" not in script  # every step launches the persistent grid
    profiled = script.split("of the variants'")[1].split("step '")[0]
    assert profiled.count("--sweep-best") == len(device_kit.VARIANTS) and "--settings ''" in profiled
    assert "sm_90a" not in script  # setmaxnreg, answered on two devices, has left the kit
    session = device_kit.session_script(folder)
    assert f"source {folder}/session.sh" in script and f"SINGE_CACHE=$PWD/{folder}/cache" in session
    assert 'step() { echo "== $(date +%T) $1"; }' in session  # the mark step_output reads
    assert "--no-sanitizer" in script.split("step 'compute-sanitizer")[0]  # timing runs without the sanitizer
    assert sum(device_kit.LIMITS.values()) + 30 <= 600  # the device's limit for one command
    outputs = set(re.findall(r'\$OUT/([\w.]+)', script))
    assert "ncu.tgz" in outputs and len(outputs) <= 8  # the device returns at most 8 files


@pytest.fixture(scope="module")
def probes(tmp_path_factory):
    """The kit's probes, built once for sm_90 (each test that reads them needs nvcc)."""
    if find_nvcc() is None:
        pytest.skip("nvcc (CUDA toolkit) not installed")
    folder = tmp_path_factory.mktemp("probes")
    device_kit.build_probes(folder, "sm_90")
    return folder


def test_the_probes_build_and_the_race_probe_refuses_an_unknown_mode(probes):
    assert all((probes / name).is_file() for name in ("mio", "fetch", "local"))
    done = subprocess.run([str(probes / "probe"), "sideways"], capture_output=True, text=True)
    assert done.returncode == 2 and "usage" in done.stderr
    assert done.stderr.split()[-1] == "|".join(device_kit.RACE_MODES)  # the session runs every mode the probe has


@pytest.mark.skipif(bool(__import__("autotune.sass").sass.missing_tools()),
                    reason="needs cuobjdump (pip install nvidia-cuda-cuobjdump)")
def test_the_load_probe_issues_the_loads_it_names(probes):
    """Each mode of autotune/probes/mio_throughput.cu is the load it measures: LDS.64 in 'lds', LDC.64 at a
    register index in 'ldc' (eight per iteration of the unrolled loop), neither in 'bank' (its loads at known
    indices hoisted out of the loop) and 'none', both in 'mixed', STS.64 in 'sts', LDS.64 and LDS.128 at a
    warp's address in 'bcast' and 'bcast128', LDS.128 at a lane's address in 'lds128'; the latency chains one
    LDS.64 or one LDC.64 per trip."""

    from autotune import sass

    listing = subprocess.run([sass.tool("cuobjdump"), "-sass", str(probes / "mio")], capture_output=True,
                             text=True, check=True).stdout
    bodies = dict(re.findall(r"Function : _Z3mioILi(\d)EEviPdPx(.*?)(?=Function :|\Z)", listing, re.S))
    assert sorted(bodies) == ["0", "1", "2", "3", "4", "5", "6", "7", "8"]
    def indexed(body: str) -> int:  # loads of the table at a register index (the parameters are c[0x0])
        return len(re.findall(r"c\[0x3\]\[R\d", body))

    assert bodies["0"].count("LDS.64") >= 8 and not indexed(bodies["0"])
    assert indexed(bodies["1"]) >= 8 and "LDS.64" not in bodies["1"]
    assert "LDS.64" not in bodies["2"] + bodies["3"] and not indexed(bodies["2"] + bodies["3"])
    assert bodies["4"].count("LDS.64") >= 4 and indexed(bodies["4"]) >= 4  # 'mixed': both in turn
    assert bodies["5"].count("STS.64") >= 8 + 1 and "LDS.64" not in bodies["5"]  # 'sts': the loop's 8, the fill
    assert bodies["6"].count("LDS.64") == 8 and not indexed(bodies["6"])  # 'bcast': one double a load
    assert bodies["7"].count("LDS.128") == 4 and "LDS.64" not in bodies["7"]  # 'bcast128': two doubles a load
    assert bodies["8"].count("LDS.128") == 4 and "LDS.64" not in bodies["8"]  # 'lds128': two a lane a load
    chains = dict(re.findall(r"Function : _Z7latencyILi(\d)EEviPxS0_(.*?)(?=Function :|\Z)", listing, re.S))
    assert sorted(chains) == ["0", "1"]
    assert chains["0"].count("LDS.64") == 1 and not indexed(chains["0"])  # the chain's one load per trip
    assert indexed(chains["1"]) == 1 and "LDS" not in chains["1"]


@pytest.mark.skipif(bool(__import__("autotune.sass").sass.missing_tools()),
                    reason="needs cuobjdump (pip install nvidia-cuda-cuobjdump)")
def test_the_local_probe_chases_through_local_memory(probes):
    """autotune/probes/local_latency.cu: each mode's array (1, 128, 4 and 16 KB a thread) stays in local memory,
    and its chase loads it (``LDL``, as a spill's reload), one load per step, with no shared or global load."""
    from autotune import sass

    listing = subprocess.run([sass.tool("cuobjdump"), "-sass", str(probes / "local")], capture_output=True,
                             text=True, check=True).stdout
    bodies = dict(re.findall(r"Function : _Z5chaseILi(\d+)EEviPiPx(.*?)(?=Function :|\Z)", listing, re.S))
    assert sorted(bodies, key=int) == ["128", "512", "2048", "16384"]
    for body in bodies.values():
        assert body.count("LDL") >= 2 and "STL" in body  # the array written, then chased
        assert "LDS" not in body and "LDG" not in body


def test_the_variants_are_command_lines_gpu_bench_reads(tmp_path):
    from autotune.gpu_bench import settings_from_sweep

    read = {path.stem: settings_from_sweep(str(path)) for path in device_kit.write_variants(tmp_path)}
    assert read["dme_viscosity_8_pairs"][:2] == ("dme", "viscosity")
    assert (read["dme_viscosity_8_pairs"][2]["warps"], read["dme_viscosity_8_pairs"][2]["wilke_group"]) == (8, 2)
    assert read["gri30_diffusion_8"][:2] == ("gri30", "diffusion") and read["gri30_diffusion_8"][2]["ctas_per_sm"] is None


def test_a_steps_output_is_read_back_from_the_log():
    log = "\n".join(["NVIDIA H200", "== 07:28:05 timing", "row 1", "row 2", "== 07:31:35 racecheck probe: named barriers",
                     "== counted", "probe arrive", "== 07:36:21 done"])
    assert device_kit.step_output(log, "timing") == "row 1\nrow 2"
    assert device_kit.step_output(log, "racecheck probe: named barriers") == "== counted\nprobe arrive"
    assert device_kit.step_output(log, "sanitizer") == ""


@pytest.mark.skipif(bool(__import__("autotune.sass").sass.missing_tools()),
                    reason="needs cuobjdump (pip install nvidia-cuda-cuobjdump)")
def test_the_fetch_probe_has_the_code_sizes_it_names(probes):
    """autotune/probes/fetch_probe.cu: 1,024 FFMA per 16 KB unit, 1-16 units shared by the warps, and the split
    layout's eight copies (one per warp) not merged by the compiler."""
    from autotune import sass

    listing = subprocess.run([sass.tool("cuobjdump"), "-sass", str(probes / "fetch")], capture_output=True,
                             text=True, check=True).stdout
    ffma = {(int(units), split == "1"): body.count("FFMA ") for units, split, body in
            re.findall(r"Function : _Z5fetchILi(\d+)ELb(\d)EEvfPKfPfPx(.*?)(?=Function :|\Z)", listing, re.S)}
    assert ffma == {(1, False): 1024, (2, False): 2048, (4, False): 4096, (8, False): 8192, (16, False): 16384,
                    (1, True): 8 * 1024, (2, True): 8 * 2048}
