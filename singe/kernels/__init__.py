"""Kernels: a ``Mechanism`` -> one ``DataflowGraph`` per kernel (paper §3)."""

from __future__ import annotations

import functools

from singe.errors import OptionError, SingeInputError
from singe.kernels.ir import DataflowGraph
from singe.mechanism import Mechanism


@functools.lru_cache(maxsize=32)
def build_graph(mech: Mechanism, kernel: str) -> DataflowGraph:
    """The dataflow graph of ``kernel`` ('viscosity', 'diffusion', 'chemistry') for ``mech``."""
    from singe.kernels import chemistry, transport

    builders = {"viscosity": transport.viscosity_graph, "diffusion": transport.diffusion_graph,
                "chemistry": chemistry.chemistry_graph}
    if kernel not in builders:
        raise OptionError(f"unknown kernel {kernel!r}: choose from {', '.join(builders)}")
    if kernel != "chemistry" and len(mech.transported_species) < 2:
        raise SingeInputError(f"{mech.name}: the {kernel} kernel needs at least two transported species")
    return builders[kernel](mech)


__all__ = ["build_graph", "DataflowGraph"]
