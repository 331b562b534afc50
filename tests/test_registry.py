"""The kernel registry's error measures."""

from __future__ import annotations

import numpy as np

from singe.kernels.registry import kernel_spec, relative_errors


def test_relative_errors_are_zero_where_both_values_are_zero():
    theirs = np.array([[1.0, 0.0], [2.0, 0.0]])
    assert list(relative_errors(theirs.copy(), theirs)) == [0.0, 0.0]


def test_relative_errors_flag_a_value_against_a_zero_reference():
    """Companion: a wrong non-zero value where the reference is 0 is inf, never NaN or 0."""
    theirs = np.array([[1.0, 0.0], [2.0, 0.0]])
    ours = theirs.copy()
    ours[1, 1] = 1e-30
    ours[0, 0] = 1.5
    errors = relative_errors(ours, theirs)
    assert errors[0] == 0.5 and np.isinf(errors[1])


def test_a_kernel_takes_only_the_settings_its_graph_does():
    """``KernelSpec.graph_settings``: viscosity takes a Wilke group and ln T's replication, chemistry its products,
    diffusion none of them (what the command line gives each kernel of one set of options)."""
    given = {"wilke_group": 4, "replicate_ln_t": True, "products": "cantera"}
    assert kernel_spec("viscosity").graph_settings(**given) == {"wilke_group": 4, "replicate_ln_t": True}
    assert kernel_spec("chemistry").graph_settings(**given) == {"products": "cantera"}
    assert kernel_spec("diffusion").graph_settings(**given) == {}
