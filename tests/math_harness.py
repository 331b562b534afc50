"""The branch-free math functions of the emitted kernels (``singe_exp``,
``singe_log`` in templates/common.cuh.j2) built on the host through the runtime
header, beside libm's function compiled the same way, for tests/test_exp.py and
tests/test_log.py (their SASS cost: autotune/math_cost.py)."""

from __future__ import annotations

import ctypes
import pathlib
import subprocess

import numpy as np

from singe import host

HARNESS = """
#define SINGE_HOST
{header}
extern "C" void singe_many(const double *x, double *y, int n)
{{
  for (int i = 0; i < n; i++) y[i] = {function}(x[i]);
}}
extern "C" void libm_many(const double *x, double *y, int n)
{{
  for (int i = 0; i < n; i++) y[i] = {libm}(x[i]);
}}
"""


def _vectorized(library: ctypes.CDLL, name: str):
    function = getattr(library, name)
    function.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int]

    def apply(x: np.ndarray) -> np.ndarray:
        x = np.ascontiguousarray(x, dtype=np.float64)
        y = np.empty_like(x)
        function(x.ctypes.data, y.ctypes.data, x.size)
        return y
    return apply


def build(directory: pathlib.Path, header: str, function: str, libm: str, defines: tuple[str, ...] = ()):
    """(``function`` of ``header``, libm's ``libm``) as numpy functions, built with the host compiler
    (``defines``: -D flags, e.g. the runtime's model of an intrinsic)."""
    source = directory / f"{function}.cpp"
    library = directory / f"lib{function}{len(list(directory.glob('*.so')))}.so"
    source.write_text(HARNESS.format(header=header, function=function, libm=libm))
    subprocess.run([host.COMPILER, "-std=c++17", "-O2", "-fPIC", "-shared", *host.SHARED_LIMIT_FLAGS,
                    *(f"-D{d}" for d in defines), f"-I{host.RUNTIME_HEADER.parent}", str(source), "-o",
                    str(library)], check=True, capture_output=True, text=True)
    loaded = ctypes.CDLL(str(library))
    return _vectorized(loaded, "singe_many"), _vectorized(loaded, "libm_many")


def ulps(got: np.ndarray, expected: np.ndarray) -> np.ndarray:
    """|got - expected| in units in the last place (both finite, of one sign)."""
    return np.abs(got.view(np.int64) - expected.view(np.int64))
