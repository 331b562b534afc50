"""Reference physics in numpy: the definition every kernel is checked against.

The functions every kernel is compared with, by the state of the kernels
(T [K] (n,), P [Pa] (n,), Y (n_transported, n) mass fractions):
``net_production_rates`` [kmol/m^3/s] (QSSA and stiffness removal applied),
``viscosity`` [Pa s], ``mixture_diffusion`` [m^2/s], ``thermal_conductivity``
[W/m/K].  The modules hold the parts: ``thermo``, ``kinetics``, ``qssa``,
``stiffness``, ``transport``.

The functions are looked up on first use (PEP 562): the transport fits read
``singe.reference.thermo``, so importing the package must not import
``singe.reference.transport`` eagerly.
"""

import importlib

_FUNCTIONS = {"net_production_rates": "kinetics", "viscosity": "transport", "mixture_diffusion": "transport",
              "thermal_conductivity": "transport"}

__all__ = list(_FUNCTIONS)


def __getattr__(name: str):
    if name in _FUNCTIONS:
        return getattr(importlib.import_module(f"singe.reference.{_FUNCTIONS[name]}"), name)
    raise AttributeError(f"module 'singe.reference' has no attribute {name!r}")


def __dir__():
    return sorted(list(globals()) + __all__)
