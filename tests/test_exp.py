"""``singe_exp``, the branch-free e^x of the emitted kernels (templates/common.cuh.j2),
built on the host through the runtime header and compared with numpy's exp:
at most 2 ulp on normal results over the whole double range, exact on the
special values; a version with the trailing part of ln 2 dropped is caught."""

from __future__ import annotations

import ctypes
import pathlib
import shutil
import subprocess

import numpy as np
import pytest

from singe import host
from singe.codegen import environment

ULP_TOLERANCE = 2
HARNESS = """
#define SINGE_HOST
{header}
extern "C" void singe_exp_many(const double *x, double *y, int n)
{{
  for (int i = 0; i < n; i++) y[i] = singe_exp(x[i]);
}}
"""

needs_compiler = pytest.mark.skipif(shutil.which(host.COMPILER) is None, reason=f"no {host.COMPILER} on PATH")


def build(directory: pathlib.Path, header: str):
    """The rendered common header with ``singe_exp`` as a shared library."""
    source = directory / "exp.cpp"
    library = directory / "libexp.so"
    source.write_text(HARNESS.format(header=header))
    subprocess.run([host.COMPILER, "-std=c++17", "-O2", "-fPIC", "-shared", *host.SHARED_LIMIT_FLAGS, f"-I{host.RUNTIME_HEADER.parent}",
                    str(source), "-o", str(library)], check=True, capture_output=True, text=True)
    function = ctypes.CDLL(str(library)).singe_exp_many
    function.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int]

    def singe_exp(x: np.ndarray) -> np.ndarray:
        x = np.ascontiguousarray(x, dtype=np.float64)
        y = np.empty_like(x)
        function(x.ctypes.data, y.ctypes.data, x.size)
        return y
    return singe_exp


def rendered_header() -> str:
    return environment().get_template("common.cuh.j2").render(uses_select=False, uses_exp=True)


def arguments() -> np.ndarray:
    """Uniform over the range, dense near 0, around the integers k ln 2 where
    the reduction switches, and at the ends of the normal and subnormal range."""
    rng = np.random.default_rng(7)
    k = np.arange(-1074, 1024)
    return np.concatenate([rng.uniform(-745.0, 709.7, 400_000), rng.normal(0.0, 1.0, 100_000),
                           k * np.log(2.0), k * np.log(2.0) + 1e-9, np.linspace(-745.1, -700.0, 10_000),
                           np.linspace(700.0, 709.78, 10_000)])


def worst_ulp(singe_exp) -> float:
    x = arguments()
    expected = np.exp(x)
    normal = expected >= np.finfo(np.float64).tiny
    got = singe_exp(x[normal])
    return float(np.max(np.abs(got.view(np.int64) - expected[normal].view(np.int64))))


@needs_compiler
def test_singe_exp_is_within_two_ulp_of_libm(tmp_path):
    assert worst_ulp(build(tmp_path, rendered_header())) <= ULP_TOLERANCE


@needs_compiler
def test_singe_exp_special_values_and_subnormals(tmp_path):
    singe_exp = build(tmp_path, rendered_header())
    special = np.array([0.0, -0.0, np.inf, -np.inf, 709.79, 710.0, 1e300, -746.0, -1e300, -744.0, -740.0])
    got = singe_exp(special)
    np.testing.assert_array_equal(got[:8], [1.0, 1.0, np.inf, 0.0, np.inf, np.inf, np.inf, 0.0])
    assert got[8] == 0.0
    np.testing.assert_allclose(got[9:], np.exp(special[9:]), rtol=1e-10)  # subnormal: fewer bits
    assert np.isnan(singe_exp(np.array([np.nan]))[0])


@needs_compiler
def test_dropping_the_trailing_part_of_ln2_is_caught(tmp_path):
    header = rendered_header()
    assert "-2.3190468138462996e-17" in header
    broken = build(tmp_path, header.replace("-2.3190468138462996e-17", "0.0"))
    assert worst_ulp(broken) > ULP_TOLERANCE
