"""A Python caller of singe's kernels: the H2/O2 chemistry kernel on the CUDA
device through CuPy where there is one, else the same CUDA source compiled
for the CPU; checked against singe.reference.

    python examples/python/run_kernels.py [N_POINTS]
"""

import sys

import numpy as np

import singe
from singe.bundled import bundled_path
from singe.compiler import compile_kernel
from singe.gpu import GpuUnavailableError
from singe.reference.kinetics import net_production_rates
from singe.statefile import draw_states


def main(n: int) -> int:
    mech = singe.load_mechanism(bundled_path("h2o2"))
    T, P, Y = draw_states(mech, n)  # T [K] (n,), P [Pa] (n,), Y (n_species, n) species-major
    compiled = compile_kernel(mech, "chemistry", warps=8)
    # [python]
    try:
        wdot = compiled.run_gpu(T, P, Y)  # on the CUDA device, through CuPy; (n_species, n) [kmol/m^3/s]
        where = "GPU"
    except GpuUnavailableError as error:  # no CuPy, no device or no nvcc: the same CUDA on the CPU
        print(f"not on a GPU: {error}")
        wdot, where = compiled.run_host(T, P, Y), "CPU (host runtime)"
    # [python end]
    truth = net_production_rates(mech, T, P, Y)
    error = float(np.max(np.abs(wdot - truth) / np.abs(truth).max(axis=0)))
    print(f"h2o2_chemistry on the {where}: {n} points, largest error {error:.2e} of max|wdot| per point")
    return 0 if error <= 1e-9 else 1


if __name__ == "__main__":
    sys.exit(main(int(sys.argv[1]) if len(sys.argv) > 1 else 256))
