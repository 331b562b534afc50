"""Kernels: a ``Mechanism`` -> one ``DataflowGraph`` per kernel (paper §3).

``registry.KERNELS`` defines every kernel (``KernelSpec``); ``build_graph``
builds one by name.
"""

from __future__ import annotations

from singe.kernels.ir import DataflowGraph
from singe.mechanism import Mechanism
from singe.memo import per_mechanism


@per_mechanism
def build_graph(mech: Mechanism, kernel: str, options=None) -> DataflowGraph:
    """The dataflow graph of ``kernel`` (a name in ``registry.KERNELS``) for ``mech`` (``options``: the
    ``CompileOptions`` whose fields the kernel's builder takes, ``KernelSpec.graph_options``; None: its defaults)."""
    from singe.kernels.registry import kernel_spec

    return kernel_spec(kernel).build(mech, options)


__all__ = ["build_graph", "DataflowGraph"]
