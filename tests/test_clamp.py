"""``singe_max`` / ``singe_min``, the floors and caps of the emitted kernels
(templates/common.cuh.j2): a signed comparison of bit patterns against a
positive constant.  Built on the host through the runtime header and compared
with fmax / fmin (numpy's fmax / fmin) on every kind of double; an unsigned
comparison (wrong for negative arguments) is caught; the IR refuses a max or
min whose second operand is not a positive constant; and (with nvcc and
nvdisasm) each call issues no FP64 instruction."""

from __future__ import annotations

import ctypes
import pathlib
import shutil
import subprocess

import numpy as np
import pytest

from autotune.math_cost import rendered_header
from singe import host
from singe.errors import SingeInternalError
from singe.kernels.ir import Const, Imm, Instr, Reg

CONSTANTS = (1e-300, 1e-100, 1e-20, 1.0, 1e300)  # the floors and caps the kernels use are of these sizes
HARNESS = """
#define SINGE_HOST
{header}
extern "C" void clamp_many(const double *x, double *lower, double *upper, double c, int n)
{{
  for (int i = 0; i < n; i++) {{ lower[i] = singe_max(x[i], c); upper[i] = singe_min(x[i], c); }}
}}
"""

needs_compiler = pytest.mark.skipif(shutil.which(host.COMPILER) is None, reason=f"no {host.COMPILER} on PATH")


def build(directory: pathlib.Path, header: str):
    """``(x, c) -> (singe_max(x, c), singe_min(x, c))`` from ``header`` built as a shared library."""
    source, library = directory / "clamp.cpp", directory / "libclamp.so"
    source.write_text(HARNESS.format(header=header))
    subprocess.run([host.COMPILER, "-std=c++17", "-O2", "-fPIC", "-shared", *host.SHARED_LIMIT_FLAGS,
                    f"-I{host.RUNTIME_HEADER.parent}", str(source), "-o", str(library)],
                   check=True, capture_output=True, text=True)
    function = ctypes.CDLL(str(library)).clamp_many
    function.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_double, ctypes.c_int]

    def clamp(x: np.ndarray, c: float) -> tuple[np.ndarray, np.ndarray]:
        x = np.ascontiguousarray(x, dtype=np.float64)
        lower, upper = np.empty_like(x), np.empty_like(x)
        function(x.ctypes.data, lower.ctypes.data, upper.ctypes.data, c, x.size)
        return lower, upper
    return clamp


def arguments() -> np.ndarray:
    """Random bit patterns (every sign, exponent and mantissa, NaNs removed), the
    constants and their neighbours, zeros, infinities and subnormals."""
    rng = np.random.default_rng(11)
    bits = rng.integers(np.iinfo(np.int64).min, np.iinfo(np.int64).max, 200_000, dtype=np.int64).view(np.float64)
    near = np.concatenate([np.nextafter(c, [0.0, np.inf]) for c in CONSTANTS] + [np.array(CONSTANTS)])
    special = np.array([0.0, -0.0, np.inf, -np.inf, 5e-324, -5e-324, 2.2e-308, -1e-300, -1e300])
    x = np.concatenate([bits, near, -near, special, rng.normal(0.0, 1.0, 10_000)])
    return x[~np.isnan(x)]


def worst_mismatch(clamp) -> int:
    """How many (x, c) give another value than fmax / fmin (bit for bit, -0.0 and 0.0 apart)."""
    x = arguments()
    wrong = 0
    for c in CONSTANTS:
        lower, upper = clamp(x, c)
        wrong += int(np.sum(lower.view(np.int64) != np.fmax(x, c).view(np.int64)))
        wrong += int(np.sum(upper.view(np.int64) != np.fmin(x, c).view(np.int64)))
    return wrong


@needs_compiler
def test_clamps_equal_fmax_and_fmin_on_every_double_but_nan(tmp_path):
    assert worst_mismatch(build(tmp_path, rendered_header("max", "min"))) == 0


@needs_compiler
def test_an_unsigned_comparison_is_caught(tmp_path):
    """The companion: comparing the patterns as unsigned integers puts every negative x
    above c (its sign bit is the top bit): the comparison fails."""
    header = rendered_header("max", "min")
    assert header.count("__double_as_longlong(x) ") == 2
    broken = header.replace("__double_as_longlong(x) ", "(unsigned long long)__double_as_longlong(x) ")
    broken = broken.replace("__double_as_longlong(c)", "(unsigned long long)__double_as_longlong(c)")
    assert worst_mismatch(build(tmp_path, broken)) > 0


@needs_compiler
def test_nan_arguments_keep_their_sign_rule(tmp_path):
    """What NaN gives (documented beside the functions): a NaN with the sign bit clear is
    above every c, one with it set below."""
    clamp = build(tmp_path, rendered_header("max", "min"))
    nan, negative_nan = np.array([np.nan]), -np.array([np.nan])
    assert np.isnan(clamp(nan, 1e-20)[0][0]) and clamp(nan, 1e-20)[1][0] == 1e-20
    assert clamp(negative_nan, 1e-20)[0][0] == 1e-20 and np.isnan(clamp(negative_nan, 1e-20)[1][0])


@pytest.mark.parametrize("second", [Reg("y"), Imm(0.0), Imm(-1.0), Const(-2.0), Imm(float("inf"))])
def test_the_ir_refuses_max_and_min_against_anything_but_a_positive_constant(second):
    for opcode in ("max", "min"):
        with pytest.raises(SingeInternalError, match="positive finite constant"):
            Instr(opcode, "z", (Reg("x"), second)).verify()
    Instr("max", "z", (Reg("x"), Imm(1e-20))).verify()  # the companion: a floor passes
    Instr("min", "z", (Reg("x"), Const(1e300))).verify()


def test_kernels_use_the_clamps():
    """Every kernel that floors or caps calls them: no fmax / fmin in the emitted code."""
    from conftest import load
    from singe import compile_kernel
    from singe.codegen import generate

    generated = generate(compile_kernel(load("h2o2"), "chemistry", warps=4))
    assert "singe_min(" in generated.cu and "fmin(" not in generated.cu and "fmax(" not in generated.cu


def test_each_clamp_issues_no_fp64_instruction(tmp_path):
    """Issued SASS per further call (3 and 11 calls, as tests/test_exp.py measures
    singe_exp): 4 instructions (two ISETP, two SEL), none of them FP64."""
    from autotune import sass
    from autotune.math_cost import issued_per_call

    if sass.missing_reason():
        pytest.skip(sass.missing_reason())
    for call in ("singe_max({}, 1e-20)", "singe_min({}, 1e300)"):
        cost = issued_per_call(tmp_path, rendered_header("max", "min"), call)
        assert cost.of_class("fp64") == 0 and cost.of_class("other") == 4, cost
