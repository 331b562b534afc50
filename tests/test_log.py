"""``singe_log``, the branch-free ln x of the emitted kernels (templates/common.cuh.j2),
built on the host through the runtime header (its model of rcp.approx) and
compared with glibc's log, built alike: at most 1 ulp over random positive
normal and subnormal doubles of the whole range, around the reduction's split
and near 1, exact at 1 and on the special values; still within 1 ulp with a
17-bit reciprocal approximation; a perturbed polynomial coefficient is caught;
and (with nvcc and nvdisasm) its cost in issued SASS instructions."""

from __future__ import annotations

import shutil

import numpy as np
import pytest

from autotune import sass
from autotune.math_cost import issued_per_call, rendered_header
from math_harness import build, ulps
from singe import host

ULP_TOLERANCE = 1
RANDOM_POINTS = 4_000_000
MAX_ISSUED = 37  # SASS instructions one singe_log issues (sm_90), constants' moves apart
MAX_FP64 = 20
COEFFICIENT = "2.8571428742469784e-01"  # P's z^2 coefficient
PERTURBED = "2.857142874e-01"  # the same to 10 digits: 3 ulps off at the ends of the reduced range

needs_compiler = pytest.mark.skipif(shutil.which(host.COMPILER) is None, reason=f"no {host.COMPILER} on PATH")


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    """(singe_log, glibc's log) on the host."""
    return build(tmp_path_factory.mktemp("log"), rendered_header("log"), "singe_log", "log")


def from_bits(bits: np.ndarray) -> np.ndarray:
    return np.asarray(bits, dtype=np.int64).view(np.float64)


def positive_normals() -> np.ndarray:
    """Random exponents and mantissas; at every exponent the mantissas around the
    reduction's split (high word 0x...6a09e) and the ends of the binade; near 1."""
    rng = np.random.default_rng(12)
    exponent = np.arange(1, 2047, dtype=np.int64) << 52
    edges = [exponent | (high << 32) | low for high in (0x6a09d, 0x6a09e, 0x00000, 0xfffff)
             for low in (0, 1, 0x80000000, 0xffffffff)]
    random = (rng.integers(1, 2047, RANDOM_POINTS) << 52) | rng.integers(0, 1 << 52, RANDOM_POINTS)
    near_one = 1.0 + np.arange(-5000, 5000) * 2.0 ** -52
    return np.concatenate([from_bits(random), from_bits(np.concatenate(edges)), near_one,
                           rng.uniform(0.5, 2.0, 500_000)])


def subnormals() -> np.ndarray:
    rng = np.random.default_rng(13)
    return from_bits(np.concatenate([rng.integers(1, 1 << 52, 200_000), 1 << np.arange(52)]))


def worst_ulp(singe_log, libm_log, x: np.ndarray) -> float:
    return float(np.max(ulps(singe_log(x), libm_log(x))))


@needs_compiler
def test_singe_log_is_within_one_ulp_of_glibc(built):
    singe_log, libm_log = built
    assert worst_ulp(singe_log, libm_log, positive_normals()) <= ULP_TOLERANCE


@needs_compiler
def test_singe_log_of_subnormals_is_within_one_ulp(built):
    singe_log, libm_log = built
    assert worst_ulp(singe_log, libm_log, subnormals()) <= ULP_TOLERANCE


@needs_compiler
def test_singe_log_special_values(built):
    singe_log, _ = built
    exact = np.array([1.0, 0.0, -0.0, np.inf])
    got = singe_log(exact)
    np.testing.assert_array_equal(got, [0.0, -np.inf, -np.inf, np.inf])
    assert not np.signbit(got[0])  # +0
    nan_high_word = from_bits([0x7FF0000000000001, 0x7FF8000000000000, -0x0008000000000000])  # NaNs
    not_a_number = np.concatenate([[-np.inf, -1.0, -2.0, -0.5, -3.0, -1e-310, -5e-324, -1e300], nan_high_word])
    assert np.all(np.isnan(singe_log(not_a_number)))
    largest = np.array([np.finfo(np.float64).max, np.finfo(np.float64).tiny, 5e-324])
    np.testing.assert_array_equal(singe_log(largest), np.log(largest))


@needs_compiler
def test_singe_log_holds_with_a_coarser_reciprocal(tmp_path):
    """The runtime models rcp.approx as the high word's reciprocal kept to the
    high word (20 bits); with 17 bits singe_log is still within 1 ulp."""
    singe_log, libm_log = build(tmp_path, rendered_header("log"), "singe_log", "log",
                                defines=("SINGE_HOST_RCP_BITS=17",))
    assert worst_ulp(singe_log, libm_log, positive_normals()) <= ULP_TOLERANCE


@needs_compiler
def test_a_perturbed_coefficient_is_caught(tmp_path):
    header = rendered_header("log")
    assert header.count(COEFFICIENT) == 1
    singe_log, libm_log = build(tmp_path, header.replace(COEFFICIENT, PERTURBED), "singe_log", "log")
    assert worst_ulp(singe_log, libm_log, positive_normals()) > ULP_TOLERANCE


def test_singe_log_issues_at_most_37_instructions(tmp_path):
    """Issued SASS per further call of singe_log (sm_90), measured as
    tests/test_exp.py measures singe_exp: at most 37 without the moves of its
    constants into uniform registers (bounded apart), 20 of them FP64, one
    MUFU (the reciprocal), no branch."""
    if sass.missing_reason():
        pytest.skip(sass.missing_reason())
    cost = issued_per_call(tmp_path, rendered_header("log"), "singe_log({})")
    assert 0 < cost.issued() <= MAX_ISSUED
    assert cost.of_class("fp64") <= MAX_FP64
    assert cost.of_class("mufu") == 1
    assert cost.umov <= 4
    assert cost.branches == 0
