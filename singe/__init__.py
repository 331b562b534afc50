"""singe: warp-specialized GPU kernels for combustion, compiled from CHEMKIN mechanisms.

The public API (docs/design.md describes the stages behind it)::

    mech = singe.load_mechanism("mechanisms/h2o2/h2o2.inp")        # frontend -> Mechanism
    kernel = singe.compile_kernel(mech, "viscosity", warps=4)      # graph -> mapping -> warp programs
    singe.generate(kernel).write("out/")                           # CUDA
    singe.settle_if_needed(kernel)                                 # ptxas's CTAs per SM where the plan is unchecked
    singe.reference.viscosity(mech, T, P, Y)                       # what the kernel must compute

``singe.KERNELS`` holds every kernel's definition (``KernelSpec``),
``singe.CompileOptions`` the options of a compilation and ``singe.TARGETS``
the GPU targets.  The submodules ``singe.reference`` (numpy physics),
``singe.host`` (the emitted CUDA run on the CPU), ``singe.timing`` (the
timing model) and ``singe.validate`` are public too; the others are the
compiler's internals.
"""

from singe import host, reference, timing, validate
from singe.bundled import bundled_names, bundled_path, resolve_mechanism
from singe.codegen import GeneratedKernel, generate, generate_baseline
from singe.codegen.nvcc import compile_cuda
from singe.baseline import BaselineKernel, baseline_kernel, baseline_kernels, fastest_baseline
from singe.compiler import CompiledKernel, compile_kernel
from singe.errors import OptionError, SingeError, SingeInputError, SingeInternalError
from singe.frontend import load_mechanism
from singe.kernels import build_graph
from singe.kernels.registry import KERNELS, KernelSpec, kernel_spec
from singe.mechanism import Mechanism
from singe.options import PLACEMENTS, CompileOptions
from singe.ptxas_check import settle_if_needed
from singe.targets import TARGETS, Target
from singe.version import __version__

__all__ = ["load_mechanism", "compile_kernel", "baseline_kernel", "baseline_kernels", "fastest_baseline",
           "BaselineKernel", "generate", "generate_baseline",
           "CompileOptions", "CompiledKernel",
           "GeneratedKernel", "KERNELS", "KernelSpec", "kernel_spec", "Mechanism", "PLACEMENTS", "TARGETS", "Target",
           "compile_cuda", "settle_if_needed", "bundled_names", "bundled_path", "resolve_mechanism", "build_graph", "host", "reference", "timing", "validate", "OptionError", "SingeError",
           "SingeInputError", "SingeInternalError", "__version__"]
