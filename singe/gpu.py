"""Run generated kernels on a CUDA device through CuPy (``pip install 'singe[gpu]'``).

The emitted ``.cu`` is compiled by nvcc into a shared library whose
``extern "C"`` launcher — the documented interface of the header — is called
through ctypes with CuPy device arrays, on CuPy's current stream:

    from singe.gpu import run_gpu
    wdot = run_gpu(compiled, T, P, Y)      # numpy, the shapes CompiledKernel.simulate returns

(or ``compiled.run_gpu(T, P, Y)``).  Without CuPy, without a CUDA device, or
without nvcc, every entry point raises ``GpuUnavailableError`` saying which.
Libraries are cached by content in ``$SINGE_CACHE/gpu`` or ``~/.cache/singe/gpu``.
"""

from __future__ import annotations

import ctypes
import dataclasses
import functools
import hashlib
import os
import pathlib
import subprocess
import tempfile

import numpy as np

from singe.codegen.nvcc import find_nvcc, parse_ptxas
from singe.errors import SingeError
from singe.host import KernelSource, compiled_fields, kernel_source
from singe.targets import TARGETS

CLOCK_RATE_ATTRIBUTE = 13  # cudaDevAttrClockRate [kHz] (cudaDeviceProp.clockRate is gone in CUDA 13)
NVCC_FLAGS = ("-O3", "-shared", "-Xcompiler", "-fPIC", "--cudart", "shared", "-Xptxas", "-v")


class GpuUnavailableError(SingeError):
    """No way to run on a GPU here: CuPy, a CUDA device or nvcc is missing,
    or the kernel was generated for another architecture than the device's."""


def cupy_module():
    """CuPy, once it is known to see a CUDA device."""
    try:
        import cupy
    except ImportError:
        raise GpuUnavailableError("singe.gpu needs CuPy: pip install 'singe[gpu]' (or the cupy-cuda12x / "
                                  "cupy-cuda13x wheel matching your CUDA)") from None
    try:
        count = cupy.cuda.runtime.getDeviceCount()
    except Exception as error:  # CUDARuntimeError, or no driver at all
        raise GpuUnavailableError(f"no CUDA device: {error}") from None
    if count < 1:
        raise GpuUnavailableError("no CUDA device: CuPy sees none")
    return cupy


@dataclasses.dataclass(frozen=True)
class Device:
    """The current CUDA device as the benchmark needs it."""

    name: str
    arch: str  # 'sm_90'
    sms: int
    clock_hz: float


def current_device() -> Device:
    cupy = cupy_module()
    device = cupy.cuda.Device()
    properties = cupy.cuda.runtime.getDeviceProperties(device.id)
    name = properties["name"].decode() if isinstance(properties["name"], bytes) else str(properties["name"])
    clock_khz = properties.get("clockRate") or _attribute(cupy, CLOCK_RATE_ATTRIBUTE, device.id)
    return Device(name, f"sm_{device.compute_capability}", int(properties["multiProcessorCount"]),
                  float(clock_khz or 0) * 1e3)


def _attribute(cupy, attribute: int, device: int):
    """A device attribute, None where this CUDA version no longer has it."""
    try:
        return cupy.cuda.runtime.deviceGetAttribute(attribute, device)
    except Exception:  # CUDARuntimeError: an attribute CUDA removed
        return None


def generated_arch(source: KernelSource) -> str | None:
    """The architecture a warp-specialized kernel was generated for (None: any)."""
    for _, text in source.headers:
        for name in TARGETS:
            if f"generated for {name};" in text:
                return name
    return None


@dataclasses.dataclass(frozen=True)
class GpuBuild:
    """A kernel compiled by nvcc into a shared library, with ptxas's report."""

    library: pathlib.Path
    arch: str
    ptxas: str

    @property
    def entries(self):
        return parse_ptxas(self.ptxas)[0]


@functools.lru_cache(maxsize=None)
def nvcc_version(nvcc: str) -> str:
    """nvcc's version text (part of the cache key)."""
    return subprocess.run([nvcc, "--version"], capture_output=True, text=True).stdout


def cache_dir() -> pathlib.Path:
    root = os.environ.get("SINGE_CACHE")
    return (pathlib.Path(root) if root else pathlib.Path.home() / ".cache" / "singe") / "gpu"


def build(kernel, arch: str, *, allow_any_arch: bool = False, directory: os.PathLike | None = None,
          defines: tuple[str, ...] = ()) -> GpuBuild:
    """nvcc ``-arch=<arch>`` of a kernel (``GeneratedKernel``, ``.cu`` path or
    ``KernelSource``) into a shared library exporting its launcher; needs nvcc,
    not a GPU.  A warp-specialized kernel generated for another architecture
    is refused unless ``allow_any_arch``.  ``defines``: ``NAME=VALUE`` macros
    for nvcc (``SINGE_GRID_LIMIT=N``: at most N CTAs, each over several slabs)."""
    source = kernel if isinstance(kernel, KernelSource) else kernel_source(kernel)
    nvcc = find_nvcc()
    if nvcc is None:
        raise GpuUnavailableError("nvcc not found: install the CUDA toolkit or put nvcc on PATH")
    target = generated_arch(source)
    if target and target != arch and not allow_any_arch:
        raise GpuUnavailableError(f"{source.name} was generated for {target}, the device is {arch}: compile it "
                                  f"with arch='{arch}' (singe --arch {arch}) if singe knows that target")
    flags = [f"-arch={arch}", *NVCC_FLAGS] + (["-DSINGE_ALLOW_ANY_ARCH"] if allow_any_arch else []) + \
        [f"-D{define}" for define in defines]
    identity = [nvcc, nvcc_version(nvcc), *flags, source.cu, *(t for _, t in source.headers)]
    digest = hashlib.sha256("\0".join(identity).encode())
    folder = pathlib.Path(directory) if directory else cache_dir()
    folder.mkdir(parents=True, exist_ok=True)
    library = folder / f"{source.name}-{arch}-{digest.hexdigest()[:20]}.so"
    log = library.with_suffix(".ptxas")
    if library.exists() and log.exists():
        return GpuBuild(library, arch, log.read_text())
    with tempfile.TemporaryDirectory(dir=folder, prefix=".build-") as work:
        work = pathlib.Path(work)
        (work / f"{source.name}.cu").write_text(source.cu)
        for name, text in source.headers:
            (work / name).write_text(text)
        done = subprocess.run([nvcc, *flags, f"{source.name}.cu", "-o", library.name], cwd=work,
                              capture_output=True, text=True)
        if done.returncode != 0:
            raise GpuUnavailableError(f"nvcc failed on {source.name} for {arch}:\n{done.stderr.strip()[-4000:]}")
        (work / log.name).write_text(done.stdout + done.stderr)
        os.replace(work / log.name, log)
        os.replace(work / library.name, library)
    return GpuBuild(library, arch, log.read_text())


class GpuKernel:
    """A built kernel loaded with ctypes; ``launch`` takes CuPy arrays."""

    def __init__(self, source: KernelSource, built: GpuBuild):
        self.source = source
        self.build = built
        self._entry = getattr(ctypes.CDLL(str(built.library)), source.name)
        self._entry.restype = ctypes.c_int
        self._entry.argtypes = [ctypes.c_void_p] * len(source.parameters) + [ctypes.c_int, ctypes.c_int,
                                                                               ctypes.c_void_p]

    def device_inputs(self, fields: dict, n_points: int) -> dict:
        """CuPy copies of the input fields, (rows, n_points) each (None stays None: NULL)."""
        cupy = cupy_module()
        result = {}
        for field in self.source.inputs:
            value = fields.get(field)
            if value is not None:
                shape = (self.source.rows(field), n_points)
                result[field] = cupy.asarray(np.ascontiguousarray(np.broadcast_to(value, shape), dtype=np.float64))
        return result

    def device_outputs(self, n_points: int) -> dict:
        cupy = cupy_module()
        return {f: cupy.full((self.source.rows(f), n_points), np.nan) for f in self.source.outputs}

    def launch(self, inputs: dict, outputs: dict, n_points: int, stream=None) -> None:
        """One launch on ``stream`` (default: CuPy's current stream), asynchronous."""
        cupy = cupy_module()
        stream = stream if stream is not None else cupy.cuda.get_current_stream()
        arrays = {**inputs, **outputs}
        pointers = [arrays[p.field].data.ptr if arrays.get(p.field) is not None else None
                    for p in self.source.parameters]
        status = self._entry(*pointers, n_points, n_points, stream.ptr or None)
        if status:
            message = cupy.cuda.runtime.getErrorString(status)
            raise GpuUnavailableError(f"{self.source.name}: launch failed: {message!r} (cudaError {status})")

    def run(self, fields: dict, n_points: int) -> dict[str, np.ndarray]:
        """Copy ``fields`` (numpy, SI) to the device, launch, synchronize, copy back."""
        cupy = cupy_module()
        inputs, outputs = self.device_inputs(fields, n_points), self.device_outputs(n_points)
        self.launch(inputs, outputs, n_points)
        cupy.cuda.get_current_stream().synchronize()
        return {f: cupy.asnumpy(a) for f, a in outputs.items()}


def load(kernel, arch: str | None = None, **build_options) -> GpuKernel:
    """Build (for the current device's arch unless given) and load a kernel."""
    source = kernel if isinstance(kernel, KernelSource) else kernel_source(kernel)
    arch = arch or current_device().arch
    return GpuKernel(source, build(source, arch, **build_options))


def run_gpu(compiled, T, P, Y, dt=None, diffusion_source=None, *, baseline: bool = False, **build_options):
    """``CompiledKernel.run_gpu``: the emitted kernel (warp-specialized, or the
    data-parallel baseline) on the current CUDA device; the outputs in the
    shapes ``CompiledKernel.simulate`` returns.  dt / diffusion_source None:
    NULL (no stiffness removal / zero)."""
    from singe.codegen import generate, generate_baseline

    cupy_module()  # the clear error first, before generating anything
    kernel = load(generate_baseline(compiled) if baseline else generate(compiled), **build_options)
    fields, n = compiled_fields(kernel.source, T, P, Y, dt, diffusion_source)
    outputs = kernel.run(fields, n)
    shaped = {f: (a[0] if kernel.source.rows(f) == 1 else a) for f, a in outputs.items()}
    return next(iter(shaped.values())) if len(shaped) == 1 else shaped


__all__ = ["GpuUnavailableError", "GpuKernel", "GpuBuild", "Device", "build", "load", "run_gpu", "current_device",
           "cupy_module"]
