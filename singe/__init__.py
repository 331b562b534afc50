"""singe: warp-specialized GPU kernels for combustion, compiled from CHEMKIN mechanisms.

The stages, each a function of its input (see ../shared/ARCHITECTURE.md):
``load_mechanism`` (frontend) -> ``Mechanism`` -> kernels -> mapping ->
scheduling -> code generation, with ``singe.reference`` as the numpy
definition of what every kernel computes.
"""

from singe.errors import SingeError, SingeInputError
from singe.frontend import load_mechanism
from singe.mechanism import Mechanism

__all__ = ["load_mechanism", "Mechanism", "SingeError", "SingeInputError"]
__version__ = "0.1.0"
