"""Shared fixtures: the test mechanisms, loaded once per session."""

from __future__ import annotations

import functools
import pathlib
import sys

import pytest

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))

import cantera_reference as ref  # noqa: E402

import singe  # noqa: E402


def warp_id_from_threadidx(cu: str) -> str:
    """Emitted CUDA with the warp index read straight from threadIdx, which ptxas does not know to be
    warp-uniform (the emitted ``SINGE_WARP_ID()`` reads it from lane 0)."""
    replaced = cu.replace("const int warp_id = SINGE_WARP_ID();", "const int warp_id = threadIdx.x >> 5;")
    assert replaced != cu, "no SINGE_WARP_ID() warp index in the kernel"
    return replaced


@functools.lru_cache(maxsize=None)
def load(name: str) -> singe.Mechanism:
    """Mechanism ``name`` of cantera_reference.MECHANISMS, parsed by singe (cached)."""
    if name in ref.SHARED_NAMES and not ref.have_shared():
        pytest.skip(f"../shared/mechanisms not found ({ref.SHARED_MECHANISMS}): set SINGE_SHARED")
    return singe.load_mechanism(ref.chemistry_file(name))


@pytest.fixture(params=ref.ALL_NAMES)
def mechanism_name(request) -> str:
    return request.param


@pytest.fixture
def mechanism(mechanism_name) -> singe.Mechanism:
    return load(mechanism_name)
