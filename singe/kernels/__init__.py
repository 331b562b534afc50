"""Kernels: a ``Mechanism`` -> one ``DataflowGraph`` per kernel (paper §3).

``registry.KERNELS`` defines every kernel (``KernelSpec``); ``build_graph``
builds one by name.
"""

from __future__ import annotations

from singe.kernels.ir import DataflowGraph
from singe.mechanism import Mechanism
from singe.memo import per_mechanism


def build_graph(mech: Mechanism, kernel: str, options=None) -> DataflowGraph:
    """The dataflow graph of ``kernel`` (a name in ``registry.KERNELS``) for ``mech`` (``options``: the
    ``CompileOptions`` whose fields the kernel's builder takes, ``KernelSpec.graph_options``; None: its
    defaults), built once per mechanism and those fields' values: keyed on the whole options, a sweep over
    warps and weights kept one graph per compilation (96 per mechanism and kernel in
    tests/test_compiler_transport.py: the session grew by ~450 MB a test)."""
    from singe.kernels.registry import kernel_spec

    names = kernel_spec(kernel).graph_options
    settings = tuple((name, getattr(options, name)) for name in names) if options is not None else ()
    return _graph(mech, kernel, settings)


def build_baseline_graph(mech: Mechanism, kernel: str, options=None) -> DataflowGraph:
    """The dataflow graph the data-parallel baseline of ``kernel`` is generated from: the kernel's graph at
    ``options`` with the settings of its ``KernelSpec.baseline_settings`` in place of those fields (where it has
    none, ``build_graph``'s)."""
    from singe.kernels.registry import kernel_spec

    spec = kernel_spec(kernel)
    if spec.baseline_settings is None:
        return build_graph(mech, kernel, options)
    own = dict(spec.baseline_settings(mech))
    settings = tuple((name, own.get(name, getattr(options, name, None))) for name in spec.graph_options)
    return _graph(mech, kernel, settings)


@per_mechanism
def _graph(mech: Mechanism, kernel: str, settings: tuple) -> DataflowGraph:
    """``build_graph`` of the builder's ``settings`` ((field, value) pairs; () for its defaults)."""
    from singe.kernels.registry import kernel_spec

    return kernel_spec(kernel).build(mech, **dict(settings))

__all__ = ["build_baseline_graph", "build_graph", "DataflowGraph"]
