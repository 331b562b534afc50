"""singe.gpu: clear errors without CuPy or a device; on a CUDA device (when
one is there) the emitted kernels through CuPy match singe.reference."""

from __future__ import annotations

import sys
import types

import numpy as np
import pytest

from singe import gpu
from singe.codegen import generate
from singe.compiler import compile_kernel
from singe.errors import SingeError
from singe.reference.kinetics import net_production_rates
from singe.reference.transport import viscosity
from conftest import load
from cantera_reference import random_states


def states(n=256):
    return random_states(n, len(load("h2o2").transported_species), 7, T_range=(500.0, 2500.0))


def test_without_cupy_the_error_says_how_to_get_it(monkeypatch):
    monkeypatch.setitem(sys.modules, "cupy", None)  # import cupy raises ImportError
    compiled = compile_kernel(load("h2o2"), "viscosity", warps=2)
    with pytest.raises(gpu.GpuUnavailableError, match=r"needs CuPy: pip install 'singe\[gpu\]'") as caught:
        compiled.run_gpu(*states(32))
    assert isinstance(caught.value, SingeError)


def test_without_a_device_the_error_says_so(monkeypatch):
    def no_device():
        raise RuntimeError("cudaErrorNoDevice: no CUDA-capable device is detected")

    fake = types.SimpleNamespace(cuda=types.SimpleNamespace(runtime=types.SimpleNamespace(getDeviceCount=no_device)))
    monkeypatch.setitem(sys.modules, "cupy", fake)
    with pytest.raises(gpu.GpuUnavailableError, match="no CUDA device: cudaErrorNoDevice"):
        gpu.run_gpu(compile_kernel(load("h2o2"), "viscosity", warps=2), *states(32))
    with pytest.raises(gpu.GpuUnavailableError, match="no CUDA device"):
        gpu.current_device()


def test_a_kernel_for_another_arch_is_refused():
    kernel = generate(compile_kernel(load("h2o2"), "viscosity", warps=2))
    with pytest.raises(gpu.GpuUnavailableError, match="generated for sm_90, the device is sm_80"):
        gpu.build(kernel, "sm_80")


def device_or_skip():
    try:
        return gpu.current_device()
    except gpu.GpuUnavailableError as error:
        pytest.skip(f"no GPU run here: {error}")


@pytest.mark.parametrize("baseline", [False, True], ids=["warp-specialized", "baseline"])
def test_on_the_device_matches_reference(baseline):
    """On a CUDA device: H2/O2 viscosity and chemistry against singe.reference
    (1e-9 relative / of max|wdot| per point), the kernel generated for the device's arch."""
    device = device_or_skip()
    if device.arch not in ("sm_80", "sm_90"):
        pytest.skip(f"singe has no target for {device.arch}")
    mech = load("h2o2")
    T, P, Y = states()
    mu = compile_kernel(mech, "viscosity", warps=4, arch=device.arch).run_gpu(T, P, Y, baseline=baseline)
    assert mu.shape == T.shape
    assert np.max(np.abs(mu / viscosity(mech, T, P, Y) - 1.0)) <= 1e-9
    wdot = compile_kernel(mech, "chemistry", warps=4, arch=device.arch).run_gpu(T, P, Y, baseline=baseline)
    truth = net_production_rates(mech, T, P, Y)
    assert np.max(np.abs(wdot - truth) / np.abs(truth).max(axis=0)) <= 1e-9


# -- the marshalling, on the CPU: a numpy stand-in for CuPy, the host build for the library --------

@pytest.fixture
def cpu_as_gpu(monkeypatch):
    """singe.gpu with fake_cupy and host-built libraries (the same extern "C" launcher)."""
    import fake_cupy
    from singe import host

    monkeypatch.setitem(sys.modules, "cupy", fake_cupy)
    monkeypatch.setattr(gpu, "current_device", lambda: gpu.Device("the CPU", "sm_90", 132, 1.98e9))
    monkeypatch.setattr(gpu, "build", lambda kernel, arch, **options: gpu.GpuBuild(host.build(kernel).library, arch, ""))


@pytest.mark.parametrize("baseline", [False, True], ids=["warp-specialized", "baseline"])
def test_run_gpu_marshalling_with_null_dt(cpu_as_gpu, baseline):
    """run_gpu's pointers, NULL for None and shapes: DME chemistry with and
    without dt agrees with singe.reference (1e-9 of max|wdot| per point)."""
    mech = load("dme")
    T, P, Y = random_states(64, len(mech.transported_species), 3)
    compiled = compile_kernel(mech, "chemistry", warps=4)
    dt = np.full(64, 1e-7)
    for step in (None, dt):
        ours = compiled.run_gpu(T, P, Y, dt=step, baseline=baseline)
        truth = net_production_rates(mech, T, P, Y, dt=step)
        assert ours.shape == Y.shape
        assert np.max(np.abs(ours - truth) / np.abs(truth).max(axis=0)) <= 1e-9


def test_gpu_bench_measure_on_the_stand_in(cpu_as_gpu):
    """gpu_bench's measurement path (tiling, events, median, check, FLOP rate)."""
    import argparse
    import pathlib

    from autotune import gpu_bench

    compiled = compile_kernel(load("h2o2"), "viscosity", warps=2)
    generated = generate(compiled)
    built = gpu.build(generated, "sm_90")
    args = argparse.Namespace(points=5000, warmup=1, repeats=10)
    record = gpu_bench.measure(compiled, generated, built, args, gpu.current_device())
    assert record["points"] == 5000 and len(record["times_ms"]) == 10 and record["correct"]
    assert record["max_error"] <= 1e-9 and record["checked_points"] == gpu_bench.CHECKED
    rate = 5000 / (record["median_ms"] / 1e3)
    assert record["gflops"] == pytest.approx(rate * compiled.graph.flops / 1e9)
    assert record["fp64_fraction"] == pytest.approx(record["gflops"] * 1e9 / (2 * 64 * 132 * 1.98e9))
