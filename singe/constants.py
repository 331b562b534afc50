"""Physical constants (SI, CODATA 2018 exact values as Cantera uses them)."""

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

# Cantera's element table (kg/kmol). CHEMKIN's own weights differ in the 4th
# digit (H 1.00797); docs/formulas.md §1 uses Cantera's.
ATOMIC_WEIGHTS = {
    "H": 1.008, "D": 2.0141017781, "HE": 4.002602, "LI": 6.94, "BE": 9.0121831,
    "B": 10.81, "C": 12.011, "N": 14.007, "O": 15.999, "F": 18.998403163,
    "NE": 20.1797, "NA": 22.98976928, "MG": 24.305, "AL": 26.9815384,
    "SI": 28.085, "P": 30.973761998, "S": 32.06, "CL": 35.45, "AR": 39.95,
    "K": 39.0983, "CA": 40.078, "TI": 47.867, "CR": 51.9961, "MN": 54.938043,
    "FE": 55.845, "CO": 58.933194, "NI": 58.6934, "CU": 63.546, "ZN": 65.38,
    "KR": 83.798, "XE": 131.293, "E": 0.0005485799088728283,
}
