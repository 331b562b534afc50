"""``singe_exp``, the branch-free e^x of the emitted kernels (templates/common.cuh.j2),
built on the host through the runtime header and compared with numpy's exp:
at most 1 ulp on normal results over the whole double range, exact on the
special values; a version with the trailing part of ln 2 dropped is caught; and
(with nvcc and nvdisasm) its cost in issued SASS instructions."""

from __future__ import annotations

import ctypes
import pathlib
import shutil
import subprocess

import numpy as np
import pytest

from singe import host
from singe.codegen import environment

ULP_TOLERANCE = 1
MAX_ISSUED = 25  # SASS instructions one singe_exp issues (sm_90)
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
def test_singe_exp_is_within_one_ulp_of_libm(tmp_path):
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
    assert "1.904654299957768e-09" in header
    broken = build(tmp_path, header.replace("1.904654299957768e-09", "0.0"))
    assert worst_ulp(broken) > ULP_TOLERANCE


def _sass_module():
    from autotune import sass

    return sass


KERNEL = """
{header}
__global__ void __launch_bounds__(128) exp_kernel(const double *x, double *y, const int n_points, const int stride)
{{
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n_points) y[i] = {call};
}}
"""


def _issued(sass, directory: pathlib.Path, wrap: str, calls: int):
    terms = "0.0"
    for j in range(calls):  # rounded operations: nothing fuses with the exp's last multiply
        terms = f"__dadd_rn({terms}, {wrap.format(f'__dmul_rn(x[i], {1.0 + 0.1 * j})')})"
    source = directory / f"{'exp' if 'exp' in wrap else 'plain'}{calls}.cu"
    source.write_text(KERNEL.format(header=rendered_header(), call=terms))
    view = sass.analyse(source, "sm_90", data_parallel=True)
    umov = view.warps[0].opcodes["UMOV"]
    return view.total - umov, umov, view.warps[0].counts["branch"]


def test_singe_exp_issues_at_most_25_instructions(tmp_path):
    """Issued SASS per further call of singe_exp in a kernel summing singe_exp
    of multiples of x (3 and 11 calls), less the kernel summing the multiples,
    without the moves of the polynomial's constants into uniform registers
    (set once per sequence, reloaded where ptxas runs out; bounded apart); no branch."""
    sass = _sass_module()
    if sass.missing_tools():
        pytest.skip(f"SASS view needs {', '.join(sass.missing_tools())}")
    few, many = 3, 11
    exp = {n: _issued(sass, tmp_path, "singe_exp({})", n) for n in (few, many)}
    plain = {n: _issued(sass, tmp_path, "({})", n) for n in (few, many)}
    cost = ((exp[many][0] - plain[many][0]) - (exp[few][0] - plain[few][0])) / (many - few)
    assert 0 < cost <= MAX_ISSUED
    assert (exp[many][1] - plain[many][1]) / many <= 4
    assert exp[many][2] == plain[many][2]  # branch-free
