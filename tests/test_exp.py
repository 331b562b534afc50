"""``singe_exp``, the branch-free e^x of the emitted kernels (templates/common.cuh.j2),
built on the host through the runtime header and compared with numpy's exp:
at most 1 ulp on normal results over the whole double range, exact on the
special values; a version with the trailing part of ln 2 dropped is caught; and
(with nvcc and nvdisasm) its cost in issued SASS instructions."""

from __future__ import annotations

import shutil

import numpy as np
import pytest

from autotune import sass
from autotune.math_cost import issued_per_call, rendered_header
from math_harness import build, ulps
from singe import host

ULP_TOLERANCE = 1
MAX_ISSUED = 25  # SASS instructions one singe_exp issues (sm_90)

needs_compiler = pytest.mark.skipif(shutil.which(host.COMPILER) is None, reason=f"no {host.COMPILER} on PATH")


def singe_exp_built(directory, header: str):
    return build(directory, header, "singe_exp", "exp")[0]


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
    return float(np.max(ulps(singe_exp(x[normal]), expected[normal])))


@needs_compiler
def test_singe_exp_is_within_one_ulp_of_libm(tmp_path):
    assert worst_ulp(singe_exp_built(tmp_path, rendered_header("exp"))) <= ULP_TOLERANCE


@needs_compiler
def test_singe_exp_special_values_and_subnormals(tmp_path):
    singe_exp = singe_exp_built(tmp_path, rendered_header("exp"))
    special = np.array([0.0, -0.0, np.inf, -np.inf, 709.79, 710.0, 1e300, -746.0, -1e300, -744.0, -740.0])
    got = singe_exp(special)
    np.testing.assert_array_equal(got[:8], [1.0, 1.0, np.inf, 0.0, np.inf, np.inf, np.inf, 0.0])
    assert got[8] == 0.0
    np.testing.assert_allclose(got[9:], np.exp(special[9:]), rtol=1e-10)  # subnormal: fewer bits
    assert np.isnan(singe_exp(np.array([np.nan]))[0])


@needs_compiler
def test_dropping_the_trailing_part_of_ln2_is_caught(tmp_path):
    header = rendered_header("exp")
    assert "1.904654299957768e-09" in header
    broken = singe_exp_built(tmp_path, header.replace("1.904654299957768e-09", "0.0"))
    assert worst_ulp(broken) > ULP_TOLERANCE


def test_singe_exp_issues_at_most_25_instructions(tmp_path):
    """Issued SASS per further call of singe_exp in a kernel summing singe_exp
    of multiples of x (3 and 11 calls), less the kernel summing the multiples,
    without the moves of the polynomial's constants into uniform registers
    (set once per sequence, reloaded where ptxas runs out; bounded apart); no branch."""
    if sass.missing_tools():
        pytest.skip(f"SASS view needs {', '.join(sass.missing_tools())}")
    cost = issued_per_call(tmp_path, rendered_header("exp"), "singe_exp({})")
    assert 0 < cost.issued() <= MAX_ISSUED
    assert cost.umov <= 4
    assert cost.branches == 0  # branch-free
