"""Reference physics in numpy: the definition every kernel is checked against.

The functions every kernel is compared with, by the state of the kernels
(T [K] (n,), P [Pa] (n,), Y (n_transported, n) mass fractions):
``net_production_rates`` [kmol/m^3/s] (QSSA and stiffness removal applied),
``viscosity`` [Pa s], ``mixture_diffusion`` [m^2/s], ``thermal_conductivity``
[W/m/K].  The modules hold the parts: ``thermo``, ``kinetics``, ``qssa``,
``stiffness``, ``transport``; they evaluate the mechanism's derived tables
(``singe.derived``).
"""

from singe.reference.kinetics import net_production_rates
from singe.reference.transport import mixture_diffusion, thermal_conductivity, viscosity

__all__ = ["net_production_rates", "viscosity", "mixture_diffusion", "thermal_conductivity"]
