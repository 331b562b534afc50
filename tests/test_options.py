"""CompileOptions: validation with the option's name, a stable key, the target's budgets."""

from __future__ import annotations

import pytest

from singe.errors import OptionError
from singe.options import CompileOptions
from singe.targets import TARGETS


@pytest.mark.parametrize("changes, message", [
    ({"warps": 0}, "--warps must be an integer from 1 to 32"),
    ({"warps": 33}, "--warps must be an integer from 1 to 32"),
    ({"ctas_per_sm": 17}, "--ctas-per-sm must be an integer from 1 to 16"),
    ({"arch": "sm_70"}, "--arch must be one of"),
    ({"weights": (0.0, 0.0, 0.0)}, "mapping weights must be three non-negative numbers"),
    ({"placement": "everywhere"}, "--placement must be one of"),
    ({"dispatch": "jump"}, "--dispatch must be one of auto, overlay, switch"),
    ({"products": "clipped"}, "--products must be one of chemkin, cantera"),
    ({"warps": 4, "qssa_warps": 5}, r"--qssa-warps must be from 1 to the number of warps \(4\)"),
    ({"warps": 32, "ctas_per_sm": 3}, "exceed 2048 threads per SM"),
    ({"warps": 1, "ctas_per_sm": 9}, "fewer than 2 named barriers per CTA"),
])
def test_bad_options_name_the_option(changes, message):
    with pytest.raises(OptionError, match=message):
        CompileOptions(**changes)


def test_key_is_stable_and_distinguishes_options():
    a = CompileOptions(warps=8, ctas_per_sm=2, weights=(1.0, 0.5, 1.0))
    assert a.key() == "w8-c2-sm_90-mw1-0.5-1-auto-q1"
    assert a.replace(group_barriers=False).key() == a.key() + "-nogroup"
    assert a.replace(dispatch="switch").key() == a.key() + "-switch"
    assert a.replace(products="cantera").key() == a.key() + "-cantera"
    assert len({a.key(), a.replace(warps=9).key(), a.replace(arch="sm_80").key()}) == 3


def test_dispatch_is_the_kernels_unless_given_where_offered():
    auto = CompileOptions()
    assert (auto.dispatch_of("chemistry"), auto.dispatch_of("viscosity")) == ("switch", "overlay")
    assert CompileOptions(dispatch="switch").dispatch_of("viscosity") == "switch"
    assert CompileOptions(dispatch="switch").dispatch_of("chemistry") == "switch"  # its own
    with pytest.raises(OptionError, match="--dispatch switch is not offered for the diffusion kernel, which is "
                                          "dispatched by the overlay only"):
        CompileOptions(dispatch="switch").dispatch_of("diffusion")
    with pytest.raises(OptionError, match="--dispatch overlay is not offered for the chemistry kernel"):
        CompileOptions(dispatch="overlay").dispatch_of("chemistry")


def test_target_and_barrier_limit_come_from_the_target_table():
    options = CompileOptions(arch="sm_80", ctas_per_sm=4)
    assert options.target is TARGETS["sm_80"]
    assert options.barrier_limit == TARGETS["sm_80"].named_barriers // 4 == 4


def test_ctas_per_sm_left_to_the_compiler():
    """None (the default) lets compile_kernel choose; the candidates respect the
    threads per SM and at least 2 named barriers per CTA."""
    auto = CompileOptions(warps=8)
    assert auto.ctas_per_sm is None and "-cauto-" in auto.key()
    assert list(auto.cta_candidates()) == [8, 7, 6, 5, 4, 3, 2, 1]  # 2048 threads / 256; 16 barriers / 2
    assert list(CompileOptions(warps=16).cta_candidates()) == [4, 3, 2, 1]
    assert list(CompileOptions(warps=8, ctas_per_sm=3).cta_candidates()) == [3]
    assert auto.planned().ctas_per_sm == 2 and auto.barrier_limit == 8
