"""Run emitted CUDA kernels on the CPU, unchanged (no GPU needed).

The ``.cu`` text that ``singe.codegen`` writes is compiled as C++17 with
``-DSINGE_HOST``, which makes it include ``singe/runtime/singe_host_runtime.h``
instead of CUDA: every thread of a CTA becomes a fiber, warp shuffles and the
named barriers (PTX ``bar.sync`` / ``bar.arrive``) keep their exact
semantics, shared memory is poisoned with NaN at each CTA start, and a
deadlock or a misused barrier stops the launch with a message instead of
hanging.

    from singe.host import run_host
    out = run_host(generate(compiled), {"temperature": T, "pressure": P, "mass_fractions": Y}, n)

Shared libraries are cached by a hash of the source, the runtime header, the
compiler and its flags, in ``$SINGE_CACHE`` or ``~/.cache/singe/host``.
"""

from __future__ import annotations

import ctypes
import dataclasses
import functools
import hashlib
import os
import pathlib
import re
import shutil
import subprocess
import tempfile
import threading
import time
import weakref

import numpy as np

from singe.errors import SingeInternalError
from singe.kernels.ir import NULLABLE_INPUTS
from singe.kernels.registry import state_arrays
from singe.signature import MARKER, Parameter, Signature, find_signature
from singe.targets import DEFAULT_SHARED_PER_CTA, MAX_SHARED_PER_CTA

RUNTIME_HEADER = pathlib.Path(__file__).resolve().parent / "runtime" / "singe_host_runtime.h"
COMPILER = os.environ.get("SINGE_HOST_CXX", "g++")
# -Og: a fifth to a half of -O1's build time on the large kernels (register allocation of one huge
# function dominates -O1: 40 s -> 8 s for n-heptane diffusion at 1 warp), small stack frames, the same
# arithmetic (no contraction in ISO C++ mode); -Wno-unknown-pragmas for `#pragma unroll`.
FLAGS = ("-std=c++17", "-Og", "-fPIC", "-shared", "-DSINGE_HOST", "-Wall", "-Wextra", "-Wno-unknown-pragmas",
         "-Wl,-Bsymbolic", "-Wl,--no-undefined")
# The shared-memory limits the runtime header needs, from the GPU target table.
SHARED_LIMIT_FLAGS = (f"-DSINGE_HOST_MAX_SHARED_BYTES={MAX_SHARED_PER_CTA}",
                      f"-DSINGE_HOST_DEFAULT_SHARED_BYTES={DEFAULT_SHARED_PER_CTA}")
SCHEDULES = {"deterministic": 0, "random": 1, "priority": 2}
STATUS = {1: "invalid launch configuration", 2: "deadlock", 3: "misuse", 4: "out of resources"}

_EXTERN_SHARED = re.compile(r"extern\s+__shared__\s+(?:alignas\(\s*\d+\s*\)\s+)?([A-Za-z_][\w:]*)\s+(\w+)\s*\[\s*\]")
_INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.MULTILINE)


class HostRuntimeError(SingeInternalError):
    """A kernel failed on the host runtime: deadlock, barrier misuse, an
    invalid launch, or a build that did not compile."""


@dataclasses.dataclass(frozen=True)
class KernelSource:
    """The text of an emitted kernel and the signature it carries (``singe.signature``)."""

    cu: str
    headers: tuple[tuple[str, str], ...]  # (file name, text) of the quoted includes
    signature: Signature
    shared_array: tuple[str, str] | None  # (element type, name) of the extern __shared__ array

    @property
    def name(self) -> str:
        """The extern "C" entry point."""
        return self.signature.entry

    @property
    def parameters(self) -> tuple[Parameter, ...]:
        return self.signature.parameters

    @property
    def n_species(self) -> int:
        return len(self.signature.species)

    @property
    def inputs(self) -> list[str]:
        return [p.field for p in self.parameters if not p.output]

    @property
    def outputs(self) -> list[str]:
        return [p.field for p in self.parameters if p.output]

    def rows(self, field: str) -> int:
        """Rows of a field's array: 1 for one value per point, the species count for species-major fields."""
        return self.signature.row_count(field)


@dataclasses.dataclass(frozen=True)
class BuildResult:
    """A built shared library: where, how long the compiler took [s] (0 when
    cached), and what it printed on stderr (warnings)."""

    library: pathlib.Path
    seconds: float
    warnings: str
    cached: bool


def kernel_source(kernel) -> KernelSource:
    """The ``KernelSource`` of a ``GeneratedKernel`` or of a ``.cu`` path (its
    quoted includes are read from the same folder)."""
    if isinstance(kernel, (str, os.PathLike)):
        path = pathlib.Path(kernel)
        cu = path.read_text()
        headers = []
        for included in _INCLUDE.findall(cu):
            candidate = path.parent / included
            if candidate.is_file():
                headers.append((included, candidate.read_text()))
    else:
        cu = kernel.cu
        headers = [(kernel.header_name, kernel.header)]
    return parse_source(cu, tuple(headers))


def parse_source(cu: str, headers: tuple[tuple[str, str], ...] = ()) -> KernelSource:
    """The ``KernelSource`` of kernel text carrying a signature line
    (``singe.signature``; its entry point takes the signature's arrays, then
    ``int n_points, int species_stride, void *stream``); ``headers``: (file
    name, text) of the files it includes."""
    try:
        signature = find_signature(cu)
    except ValueError as error:
        raise HostRuntimeError(f"kernel source: {error}") from None
    if signature is None:
        raise HostRuntimeError(f"kernel source: no '{MARKER.strip()}' line (singe's codegen writes one; a "
                               "hand-written kernel must carry one too)")
    return KernelSource(cu, headers, signature, _shared_array(signature.entry, cu))


def _shared_array(name: str, cu: str) -> tuple[str, str] | None:
    """The one ``extern __shared__`` array (type, name); the runtime gives it
    storage.  Static ``__shared__`` arrays are refused: a host build would
    silently make them per-thread."""
    code = re.sub(r"//[^\n]*", "", cu)
    for match in re.finditer(r"\b__shared__\b", code):
        if not re.search(r"\bextern\s+$", code[:match.start()]):
            line = code.count("\n", 0, match.start()) + 1
            raise HostRuntimeError(f"{name}: line {line}: static __shared__ arrays are not supported by the host "
                                   "runtime (use extern __shared__)")
    arrays = set(_EXTERN_SHARED.findall(code))
    if len(arrays) > 1:
        raise HostRuntimeError(f"{name}: more than one extern __shared__ array: {sorted(arrays)}")
    return arrays.pop() if arrays else None


# -- building ------------------------------------------------------------------------------

def cache_dir() -> pathlib.Path:
    """Where built libraries are kept: $SINGE_CACHE/host or ~/.cache/singe/host."""
    root = os.environ.get("SINGE_CACHE")
    base = pathlib.Path(root) if root else pathlib.Path.home() / ".cache" / "singe"
    return base / "host"


@functools.lru_cache(maxsize=None)
def compiler_identity(compiler: str = COMPILER) -> str:
    """The compiler's version and target (part of the cache key)."""
    if shutil.which(compiler) is None:
        raise HostRuntimeError(f"no C++ compiler '{compiler}' on PATH (set SINGE_HOST_CXX)")
    version = subprocess.run([compiler, "--version"], capture_output=True, text=True).stdout.splitlines()
    target = subprocess.run([compiler, "-dumpmachine"], capture_output=True, text=True).stdout.strip()
    return f"{version[0] if version else compiler} {target}"


def build_flags(source: KernelSource, flags=FLAGS) -> list[str]:
    """Compiler flags of ``source``: the defaults, the shared-memory limits of
    the GPU targets, the shared array's name and type."""
    result = list(flags) + list(SHARED_LIMIT_FLAGS)
    if source.shared_array:
        element, array = source.shared_array
        result += [f"-DSINGE_HOST_DYNAMIC_SHARED={array}", f"-DSINGE_HOST_DYNAMIC_SHARED_TYPE={element}"]
    return result


def _cache_key(source: KernelSource, flags: list[str], compiler: str) -> str:
    digest = hashlib.sha256()
    for part in (compiler_identity(compiler), "\0".join(flags), RUNTIME_HEADER.read_text(), source.cu,
                 *(f"{name}\0{text}" for name, text in source.headers)):
        digest.update(part.encode())
        digest.update(b"\0\1")
    return digest.hexdigest()[:20]


def build(kernel, *, flags=FLAGS, compiler: str = COMPILER, directory: os.PathLike | None = None) -> BuildResult:
    """Compile a kernel (``GeneratedKernel``, ``KernelSource`` or ``.cu`` path)
    into a shared library for the host runtime; cached by content."""
    source = kernel if isinstance(kernel, KernelSource) else kernel_source(kernel)
    all_flags = build_flags(source, flags)
    folder = pathlib.Path(directory) if directory else cache_dir()
    folder.mkdir(parents=True, exist_ok=True)
    library = folder / f"{source.name}-{_cache_key(source, all_flags, compiler)}.so"
    log = library.with_suffix(".log")
    if library.exists():
        return BuildResult(library, 0.0, log.read_text() if log.exists() else "", cached=True)
    with tempfile.TemporaryDirectory(dir=folder, prefix=".build-") as work:
        work = pathlib.Path(work)
        cu = work / f"{source.name}.cu"
        cu.write_text(source.cu)
        for name, text in source.headers:
            (work / name).write_text(text)
        output = work / library.name
        command = [compiler, *all_flags, f"-I{RUNTIME_HEADER.parent}", f"-I{work}", "-x", "c++", str(cu),
                   "-o", str(output)]
        start = time.perf_counter()
        done = subprocess.run(command, capture_output=True, text=True)
        seconds = time.perf_counter() - start
        if done.returncode != 0:
            raise HostRuntimeError(f"{source.name}: the host build failed ({' '.join(command)}):\n"
                                   f"{done.stderr.strip()[-4000:]}")
        (work / log.name).write_text(done.stderr)
        os.replace(work / log.name, log)
        os.replace(output, library)
    return BuildResult(library, seconds, done.stderr, cached=False)


def build_all(kernels, *, jobs: int | None = None, **build_options) -> list[BuildResult]:
    """Build several kernels, ``jobs`` compilers at a time (default: one per CPU)."""
    from concurrent.futures import ThreadPoolExecutor

    sources = [k if isinstance(k, KernelSource) else kernel_source(k) for k in kernels]
    with ThreadPoolExecutor(max_workers=jobs or os.cpu_count() or 1) as pool:
        return list(pool.map(lambda source: build(source, **build_options), sources))


# -- running -------------------------------------------------------------------------------

class HostKernel:
    """A built kernel loaded with ctypes; ``run`` launches it on numpy arrays."""

    def __init__(self, source: KernelSource, library: pathlib.Path):
        self.source = source
        self.library_path = library
        self._lib = ctypes.CDLL(str(library))
        self._lock = threading.Lock()  # the runtime's state is per library
        self._entry = getattr(self._lib, source.name)
        self._entry.restype = ctypes.c_int
        self._entry.argtypes = ([ctypes.c_void_p] * len(source.parameters) +
                                [ctypes.c_int, ctypes.c_int, ctypes.c_void_p])
        self._lib.singe_host_configure.argtypes = [ctypes.c_int, ctypes.c_ulonglong]
        self._lib.singe_host_configure.restype = ctypes.c_int
        self._lib.singe_host_last_error.restype = ctypes.c_char_p
        self._lib.singe_host_statistics.argtypes = [ctypes.POINTER(ctypes.c_ulonglong)]
        self._lib.singe_host_set_grid_limit.argtypes = [ctypes.c_uint]
        self._lib.singe_host_set_checks.argtypes = [ctypes.c_int]
        self.statistics: dict[str, int] = {}

    def _array(self, field: str, value, n_points: int) -> np.ndarray:
        rows = self.source.rows(field)
        array = np.ascontiguousarray(np.asarray(value, dtype=np.float64))
        if array.ndim == 1 and rows == 1:
            array = array[None, :]
        if array.shape != (rows, n_points):
            raise ValueError(f"{self.source.name}: field '{field}' must have shape ({rows}, {n_points})"
                             f"{' or (' + str(n_points) + ',)' if rows == 1 else ''}, got {array.shape}")
        return array

    def run(self, fields: dict, n_points: int, *, schedule: str = "deterministic", seed: int = 0,
            max_ctas: int = 0, same_site: bool = True) -> dict[str, np.ndarray]:
        """Launch on ``fields`` (SoA, species-major (rows, n_points) arrays in
        SI units, species_stride = n_points; a nullable input (dt,
        diffusion_source) left out or None is passed as NULL); the outputs as (rows, n_points)
        arrays, NaN where the kernel stored nothing.  ``max_ctas`` > 0 runs
        at most that many CTAs, each looping over several slabs: only for the
        warp-specialized kernels (grid-stride loops), to exercise the reuse of
        shared memory and barriers from one slab to the next.  ``same_site``:
        the lanes of a warp must meet at the same call site of each shuffle
        or barrier (else a misuse is raised); False joins any instance with
        the same mask, as PTX does from sm_70 on."""
        if schedule not in SCHEDULES:
            raise ValueError(f"schedule must be one of {sorted(SCHEDULES)}, got {schedule!r}")
        missing = [f for f in self.source.inputs if fields.get(f) is None and f not in NULLABLE_INPUTS]
        if missing:
            raise ValueError(f"{self.source.name} needs fields {self.source.inputs}; missing {missing}")
        n_points = int(n_points)
        inputs = {f: self._array(f, fields[f], n_points) for f in self.source.inputs if fields.get(f) is not None}
        outputs = {f: np.full((self.source.rows(f), n_points), np.nan) for f in self.source.outputs}
        arrays = [inputs.get(p.field, outputs.get(p.field)) for p in self.source.parameters]
        pointers = [None if a is None else a.ctypes.data for a in arrays]  # None: NULL (a nullable input left out)
        with self._lock:
            self._lib.singe_host_configure(SCHEDULES[schedule], int(seed) & (2 ** 64 - 1))
            self._lib.singe_host_set_grid_limit(int(max_ctas))
            self._lib.singe_host_set_checks(int(bool(same_site)))
            status = self._entry(*pointers, n_points, n_points, None)
            counters = (ctypes.c_ulonglong * 4)()
            self._lib.singe_host_statistics(counters)
            self.statistics = dict(zip(("switches", "collectives", "generations", "ctas"), counters))
            message = self._lib.singe_host_last_error().decode() if status else ""
        if status:
            raise HostRuntimeError(f"{self.source.name}: {message or STATUS.get(status, f'status {status}')}")
        return outputs


_LOADED: dict[pathlib.Path, HostKernel] = {}
_LOADED_LOCK = threading.Lock()


def load(kernel, **build_options) -> HostKernel:
    """Build (or find in the cache) and load a kernel; loaded libraries are kept."""
    source = kernel if isinstance(kernel, KernelSource) else kernel_source(kernel)
    library = build(source, **build_options).library
    with _LOADED_LOCK:
        if library not in _LOADED:
            _LOADED[library] = HostKernel(source, library)
        return _LOADED[library]


def run_host(generated, fields: dict, n_points: int, *, schedule: str = "deterministic", seed: int = 0,
             max_ctas: int = 0, same_site: bool = True, **build_options) -> dict[str, np.ndarray]:
    """Run an emitted kernel (``GeneratedKernel`` or ``.cu`` path) on the CPU.

    ``fields``: input arrays by field name (temperature [K], pressure [Pa],
    mass_fractions [-] (n_species, n_points), dt [s], diffusion_source
    [kg/m^3/s] ...), species-major with species_stride = n_points.  Returns
    the output fields as (rows, n_points) arrays (rows = 1 for one value per
    point).  ``schedule``: 'deterministic' (lanes in order, FIFO), 'random' (a random
    ready thread after every shuffle or barrier) or 'priority' (random warp
    priorities changed at random points, so warps run far ahead of each
    other); the last two are seeded by ``seed``.
    ``max_ctas``, ``same_site``: see ``HostKernel.run``.  Raises ``HostRuntimeError`` with
    the runtime's message on a deadlock or a misused barrier.
    """
    return load(generated, **build_options).run(fields, n_points, schedule=schedule, seed=seed, max_ctas=max_ctas,
                                                same_site=same_site)


def compiled_fields(source: KernelSource, T, P, Y, dt=None, diffusion_source=None) -> tuple[dict, int]:
    """The input arrays of a kernel from T [K] (scalar or (n,)), P [Pa] (scalar
    or (n,)), Y (n_species, n) mass fractions, dt [s] (scalar or (n,); None:
    NULL, no stiffness removal) and diffusion_source [kg/m^3/s] ((n_species, n);
    None: NULL, zeros), keeping those the kernel reads (a nullable input given
    as None is left out: the kernel gets NULL)."""
    arrays, n = state_arrays(source.name, source.inputs, source.n_species, T, P, Y, dt, diffusion_source)
    given = {"dt": dt, "diffusion_source": diffusion_source}
    return {f: (a[0] if a.shape[0] == 1 else a) for f, a in arrays.items()
            if not (f in NULLABLE_INPUTS and given.get(f) is None)}, n


_COMPILED: dict[tuple, tuple] = {}  # (id(compiled), baseline, options) -> (weak reference, HostKernel)


def _compiled_kernel(compiled, baseline: bool, build_options: dict) -> HostKernel:
    """The loaded kernel of a ``CompiledKernel``, generated once per object
    (generating the CUDA text of a large mechanism takes a fraction of a second)."""
    from singe.codegen import generate, generate_baseline

    key = (id(compiled), baseline, tuple(sorted((k, repr(v)) for k, v in build_options.items())))
    cached = _COMPILED.get(key)
    if cached is not None and cached[0]() is compiled:
        return cached[1]
    generated = generate_baseline(compiled) if baseline else generate(compiled)
    kernel = load(generated, **build_options)
    for stale in [k for k, (ref, _) in _COMPILED.items() if ref() is None]:
        del _COMPILED[stale]
    _COMPILED[key] = (weakref.ref(compiled), kernel)
    return kernel


def run_compiled(compiled, T, P, Y, dt=None, diffusion_source=None, *, baseline: bool = False,
                 schedule: str = "deterministic", seed: int = 0, max_ctas: int = 0, same_site: bool = True,
                 **build_options):
    """``CompiledKernel.run_host``: generate the kernel's CUDA (warp-specialized,
    or the data-parallel baseline), run it on the host; the outputs in the
    shapes ``CompiledKernel.simulate`` returns (one value per point: (n,);
    species-major: (n_species, n))."""
    kernel = _compiled_kernel(compiled, baseline, build_options)
    fields, n = compiled_fields(kernel.source, T, P, Y, dt, diffusion_source)
    outputs = kernel.run(fields, n, schedule=schedule, seed=seed, max_ctas=max_ctas, same_site=same_site)
    shaped = {f: (a[0] if kernel.source.rows(f) == 1 else a) for f, a in outputs.items()}
    return next(iter(shaped.values())) if len(shaped) == 1 else shaped


__all__ = ["HostRuntimeError", "HostKernel", "KernelSource", "BuildResult", "build", "build_all", "load", "run_host",
           "run_compiled", "compiled_fields", "kernel_source", "parse_source", "cache_dir"]
