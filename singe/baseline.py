"""The data-parallel baseline a warp-specialized kernel is compared with (the paper's comparison).

``baseline_kernel(compiled)`` is what ``singe.codegen.generate_baseline`` and ``singe.timing.model_baseline``
take for it: the same math and the same algebraic savings as ``compiled``, its graph built the way a kernel of
one thread a point runs fastest (``KernelSpec.baseline_settings``).  Its own module, below the compiler and
the timing model, both of which use it.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from singe.kernels import build_baseline_graph
from singe.kernels.ir import DataflowGraph
from singe.kernels.registry import KernelSpec, kernel_spec
from singe.mechanism import Mechanism
from singe.options import CompileOptions


@dataclass(frozen=True)
class BaselineKernel:
    """What the data-parallel baseline of a compiled kernel is generated and modeled from (``baseline_kernel``):
    its mechanism, kernel and options (the warp-specialized kernel's: arch, products) and its own graph."""

    mechanism: Mechanism
    kernel: str
    options: CompileOptions
    graph: DataflowGraph

    form = "unrolled"

    @property
    def spec(self) -> KernelSpec:
        return kernel_spec(self.kernel)

    def run_host(self, T, P, Y, dt=None, diffusion_source=None, **options) -> np.ndarray:
        """The baseline compiled for and run on the CPU (``CompiledKernel.run_host`` with baseline=True)."""
        from singe.host import run_compiled

        return run_compiled(self, T, P, Y, dt, diffusion_source, baseline=True, **options)


def baseline_kernel(compiled):
    """The data-parallel baseline to compare ``compiled`` with: the same math and the same algebraic savings, its
    graph, in ``compiled``'s form, built the way a kernel of one thread a point runs fastest
    (``KernelSpec.baseline_settings``: viscosity's Wilke groups of 8, not the groups that balance the warps, or the
    symmetric form's triangle).  ``compiled`` itself where the kernel's own graph is the baseline's, or where there
    is no graph (the table form, which has no baseline).  The fastest of every form: ``fastest_baseline``."""
    if compiled.spec.baseline_settings is None or compiled.form == "tables":
        return compiled
    graph = build_baseline_graph(compiled.mechanism, compiled.kernel, compiled.options)
    return BaselineKernel(compiled.mechanism, compiled.kernel, compiled.options, graph)


def baseline_kernels(compiled) -> dict[str, object]:
    """The data-parallel baselines of ``compiled`` in every form of the kernel's math (``KernelSpec.baseline_forms``:
    viscosity's row and symmetric forms), by form name, its own form's (``baseline_kernel``) first; where the kernel
    has one form, {form or '': ``baseline_kernel(compiled)``}.  A script that reports a speedup compares with the
    fastest of them: a data-parallel kernel would be written in whichever form runs faster."""
    spec = compiled.spec
    own = spec.form_of(compiled.options)
    found = {own or "": baseline_kernel(compiled)}
    if compiled.form == "tables" or own is None:
        return found
    for name, values in spec.baseline_forms.items():
        if name != own:
            options = compiled.options.replace(**values)
            found[name] = BaselineKernel(compiled.mechanism, compiled.kernel, options,
                                         build_baseline_graph(compiled.mechanism, compiled.kernel, options))
    return found


def fastest_baseline(compiled, throughput) -> tuple[str, dict[str, tuple]]:
    """The fastest of ``baseline_kernels(compiled)`` by ``throughput(baseline)``, a result with
    ``points_per_second`` (``singe.timing.model_baseline``'s): (its form, {form: (baseline, result)} for every
    form), the kernel's own form on a tie."""
    results = {form: (kernel, throughput(kernel)) for form, kernel in baseline_kernels(compiled).items()}
    return max(results, key=lambda f: results[f][1].points_per_second), results


__all__ = ["BaselineKernel", "baseline_kernel", "baseline_kernels", "fastest_baseline"]
