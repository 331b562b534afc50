"""Physical constants (SI, CODATA 2018 exact values as Cantera uses them)."""

import importlib.resources
import json

GAS_CONSTANT = 8314.46261815324  # J/kmol/K
BOLTZMANN = 1.380649e-23  # J/K
AVOGADRO = 6.02214076e26  # 1/kmol
ONE_ATM = 101325.0  # Pa
CAL = 4.184  # J
FARADAY = 96485332.12331001  # C/kmol (eV per particle -> J/kmol)
LIGHT_SPEED = 299792458.0  # m/s
FINE_STRUCTURE = 7.2973525693e-3
PLANCK = 6.62607015e-34  # J s
ELEMENTARY_CHARGE = 1.602176634e-19  # C
PERMEABILITY_0 = 2.0 * FINE_STRUCTURE * PLANCK / (ELEMENTARY_CHARGE**2 * LIGHT_SPEED)
PERMITTIVITY_0 = 1.0 / (LIGHT_SPEED**2 * PERMEABILITY_0)

# Numerical guards of the formulas, shared by the kernels and singe.reference.
SMALL_NUMBER = 1e-300  # Cantera's SmallNumber: falloff guards, PLOG sums
BIG_NUMBER = 1e300  # Cantera's BigNumber: clamp of 1/Kc
D_FLOOR = 1e-50  # lower bound of a QSSA species' consumption rate D_i [kmol/m^3/s] (docs/formulas.md §7)
C_FLOOR = 1e-200  # lower bound of a stiff species' concentration [kmol/m^3] (docs/formulas.md §8)

# Cantera's element table (kg/kmol), every element with a standard atomic
# weight (singe/data/elements.json, from cantera.Element). CHEMKIN's own
# weights differ in the 4th digit (H 1.00797); docs/formulas.md §1 uses Cantera's.
_ELEMENTS = json.loads((importlib.resources.files("singe") / "data" / "elements.json").read_text())
ATOMIC_WEIGHTS: dict[str, float] = _ELEMENTS["weights"]
ELEMENT_SYMBOLS: tuple[str, ...] = tuple(_ELEMENTS["symbols"])  # the periodic table, upper-case
