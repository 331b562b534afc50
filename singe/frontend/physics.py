"""Values that parse but cannot describe a gas: checked where they are read,
and the whole mechanism evaluated over its temperature range at load time.

Each check names the value and its place.  Values that give non-finite
outputs, or that Cantera rejects, are located errors; values Cantera accepts
that give finite outputs but lie far beyond those of every published
mechanism we have are located warnings (``ProblemCollector.warn``, returned
in ``Mechanism.warnings``).

Errors:
- NASA7/NASA9 polynomials: 0 < T_low < T_high, T_mid within them, finite
  cp/R, h/RT, s/R and cp/R > 0 on each range (a heat capacity of zero or
  less is no substance's: thermodynamic stability needs cp > 0).
- Transport records: as Cantera's ``GasTransportData.validate``: eps/k and
  sigma positive, dipole moment, polarizability and Zrot not negative, and a
  geometry that fits the number of atoms.
- Rate constants, forward and reverse, and rates of progress (as
  ``singe.reference`` evaluates them, at 0.01, 1 and 100 atm) finite and
  below ``MAX_RATE_CONSTANT`` in magnitude at every temperature of the
  mechanism's thermo range: beyond it the products of rates and
  concentrations in the kernels overflow.  Species viscosities and binary
  diffusion coefficients finite and positive there.

Warnings:
- NASA7 polynomials discontinuous at T_mid beyond Cantera's tolerances (its
  ``NasaPoly2::validate`` warns for the same), cp/R below ``MIN_GAS_CP_R``.
- Rate constants or rates of progress beyond ``PUBLISHED_RATE_CONSTANT``
  (but below the error bound), temperature exponents beyond
  ``MAX_TEMPERATURE_EXPONENT``, activation energies below
  ``MIN_ACTIVATION_TEMPERATURE`` (negative ones above it are common: every
  published mechanism has some).
"""

from __future__ import annotations

import numpy as np

from singe.constants import GAS_CONSTANT, ONE_ATM
from singe.errors import Location, ProblemCollector
from singe.frontend.kernel_inputs import check_qssa
from singe.mechanism import Arrhenius, Mechanism, Nasa7, PlogRate, TransportData

MAX_RATE_CONSTANT = 1e200  # SI units; |k| above it is a located error
# Legal but suspicious: located warnings.  The bounds keep a margin over every
# mechanism we have (GRI-Mech 3.0, H2/O2, DME, n-heptane, n-dodecane QSS,
# Alzueta NH3, nDodecane_Reitz, n-hexane NUIG 2015, measured on every
# Arrhenius set, PLOG entries included; tests/test_frontend_warnings.py).
PUBLISHED_RATE_CONSTANT = 1e30  # SI; their rate constants and rates stay below 3e28 (nDodecane_Reitz)
MAX_TEMPERATURE_EXPONENT = 100.0  # |b|; theirs stay within 56 (PLOG entries of n-hexane NUIG)
MIN_ACTIVATION_TEMPERATURE = -50_000.0  # E/R [K]; theirs stay above -18,800 K (n-hexane NUIG)
MIN_GAS_CP_R = 2.4  # cp/R; any gas has at least 2.5 (a monatomic one); theirs stay above 2.49
# Cantera's NasaPoly2::validate: a NASA7 polynomial pair discontinuous at T_mid
# beyond these (cp/R relative, h/RT relative to cp/R, s/R relative to |s/R| + cp/R).
NASA7_CONTINUITY = {"cp/R": 0.01, "h/RT": 0.001, "s/R": 0.001}
CHECK_PRESSURES = (0.01 * ONE_ATM, ONE_ATM, 100.0 * ONE_ATM)
CHECK_POINTS = 24  # temperatures per range, geometrically spaced


def _grid(T_low: float, T_high: float) -> np.ndarray:
    return np.geomspace(T_low, T_high, CHECK_POINTS)


def check_thermo(name: str, thermo, location: Location, problems: ProblemCollector) -> bool:
    """Report unphysical thermo: NASA7, or NASA9 given as ``ranges`` of
    (T_min, T_max, coefficients a1..a7 b1 b2)."""
    if isinstance(thermo, Nasa7):
        return check_nasa7(name, thermo, location, problems)
    ranges = thermo.ranges
    for T_min, T_max, _ in ranges:
        if not 0.0 < T_min < T_max:
            problems.add(location, f"thermo of {name!r}: temperature range {T_min:g}-{T_max:g} K is empty "
                         "or not positive", "each range's lower bound must be positive and below its upper one")
            return False
    pieces = [(T_min, T_max, tuple(a), f"{T_min:g}-{T_max:g} K") for T_min, T_max, a in ranges]
    return check_polynomials(name, pieces, location, problems)


def check_nasa7(name: str, nasa: Nasa7, location: Location, problems: ProblemCollector) -> bool:
    """Report a NASA7 entry whose temperatures or polynomials are unphysical."""
    if not 0.0 < nasa.T_low < nasa.T_high:
        problems.add(location, f"thermo of {name!r}: temperature range {nasa.T_low:g}-{nasa.T_high:g} K is empty "
                     "or not positive", "T_low (columns 46-55) must be positive and below T_high (56-65)")
        return False
    if not nasa.T_low <= nasa.T_mid <= nasa.T_high:
        problems.add(location, f"thermo of {name!r}: T_mid {nasa.T_mid:g} K is outside "
                     f"{nasa.T_low:g}-{nasa.T_high:g} K", "T_mid (columns 66-73) splits the range in two")
        return False
    pieces = ((nasa.T_low, nasa.T_mid, (0.0, 0.0) + tuple(nasa.low), "low-temperature"),
              (nasa.T_mid, nasa.T_high, (0.0, 0.0) + tuple(nasa.high), "high-temperature"))
    if not check_polynomials(name, pieces, location, problems):
        return False
    _check_continuity(name, nasa, location, problems)
    return True


def _check_continuity(name: str, nasa: Nasa7, location: Location, problems: ProblemCollector) -> None:
    """Warn, as Cantera does, where the two polynomials disagree at T_mid."""
    T = np.array([nasa.T_mid])
    (cp_low, h_low, s_low), (cp_high, h_high, s_high) = (
        [float(x[0]) for x in _nasa9_properties((0.0, 0.0) + tuple(a), T)] for a in (nasa.low, nasa.high))
    jumps = {"cp/R": (cp_low, cp_high, abs(cp_low - cp_high) / (abs(cp_low) + 1e-4)),
             "h/RT": (h_low, h_high, abs(h_low - h_high) / cp_low),
             "s/R": (s_low, s_high, abs(s_low - s_high) / (abs(s_low) + cp_low))}
    broken = [f"{what} {low:.6g} below, {high:.6g} above" for what, (low, high, jump) in jumps.items()
              if jump > NASA7_CONTINUITY[what]]
    if broken:
        problems.warn(location, f"thermo of {name!r}: the polynomials are discontinuous at T_mid = "
                      f"{nasa.T_mid:g} K ({'; '.join(broken)})",
                      "Cantera warns too (tolerances: cp/R 1 %, h/RT 0.1 % of cp/R, s/R 0.1 %); "
                      "check the coefficients and T_mid")


def check_polynomials(name: str, pieces, location: Location, problems: ProblemCollector) -> bool:
    """Report the first of ``pieces`` = (T_min, T_max, NASA9 coefficients a1..a7 b1 b2,
    label) with a non-finite cp/R, h/RT or s/R, or cp/R <= 0, in its range.

    NASA7 a1..a7 are NASA9 coefficients (0, 0, a1, ..., a5, a6, a7)."""
    for T_min, T_max, coefficients, which in pieces:
        if T_max > T_min and not _polynomial_is_physical(name, coefficients, _grid(T_min, T_max), which,
                                                         location, problems):
            return False
    return True


def _nasa9_properties(a, T: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """cp/R, h/RT and s/R of NASA9 coefficients a1..a7, b1, b2 at T."""
    with np.errstate(all="ignore"):
        polynomial = a[2] + T * (a[3] + T * (a[4] + T * (a[5] + T * a[6])))
        cp = a[0] / T ** 2 + a[1] / T + polynomial
        h = (-a[0] / T ** 2 + a[1] * np.log(T) / T + a[2]
             + T * (a[3] / 2 + T * (a[4] / 3 + T * (a[5] / 4 + T * a[6] / 5))) + a[7] / T)
        s = (-a[0] / (2 * T ** 2) - a[1] / T + a[2] * np.log(T)
             + T * (a[3] + T * (a[4] / 2 + T * (a[5] / 3 + T * a[6] / 4))) + a[8])
    return cp, h, s


def _polynomial_is_physical(name: str, a, T: np.ndarray, which: str, location: Location,
                            problems: ProblemCollector) -> bool:
    cp, h, s = _nasa9_properties(a, T)
    if not (np.isfinite(cp).all() and np.isfinite(h).all() and np.isfinite(s).all()):
        problems.add(location, f"thermo of {name!r}: the {which} polynomial overflows "
                     f"between {T[0]:g} and {T[-1]:g} K", "check the coefficients' exponents")
        return False
    if cp.min() <= 0.0:
        worst = int(np.argmin(cp))
        problems.add(location, f"thermo of {name!r}: negative heat capacity cp/R = {cp[worst]:.3g} at "
                     f"{T[worst]:.0f} K ({which} polynomial)",
                     "cp/R of a gas is at least 2.5; check the signs and exponents of the coefficients")
        return False
    if cp.min() < MIN_GAS_CP_R:
        worst = int(np.argmin(cp))
        problems.warn(location, f"thermo of {name!r}: heat capacity cp/R = {cp[worst]:.3g} at {T[worst]:.0f} K "
                      f"({which} polynomial), below the 2.5 of any gas", "check the coefficients")
    return True


def check_transport(name: str, data: TransportData, atoms: float, location: Location,
                    problems: ProblemCollector) -> bool:
    """Report a transport record Cantera would reject (``GasTransportData.validate``)."""
    fields = (("well depth eps/k", data.well_depth, "positive", data.well_depth > 0.0),
              ("collision diameter sigma", data.diameter, "positive", data.diameter > 0.0),
              ("dipole moment", data.dipole, "not negative", data.dipole >= 0.0),
              ("polarizability", data.polarizability, "not negative", data.polarizability >= 0.0),
              ("rotational relaxation number", data.rotational_relaxation, "not negative",
               data.rotational_relaxation >= 0.0))
    for what, value, rule, ok in fields:
        if not ok:
            problems.add(location, f"transport data of {name!r}: {what} {value:g} must be {rule}",
                         "name, geometry, eps/k [K], sigma [A], dipole [Debye], polarizability [A^3], Zrot")
            return False
    geometry_ok = {0: atoms == 1, 1: atoms >= 2, 2: atoms >= 3}[data.geometry]
    if not geometry_ok and atoms > 0:
        shape = ("an atom", "a linear molecule", "a nonlinear molecule")[data.geometry]
        problems.add(location, f"transport data of {name!r}: geometry {data.geometry} ({shape}) "
                     f"does not fit {atoms:g} atoms", "0 atom, 1 linear molecule, 2 nonlinear molecule")
        return False
    return True


def temperature_range(mech: Mechanism) -> tuple[float, float]:
    """Temperatures where every species' thermo is valid (their union when they share none)."""
    lows = [s.thermo.T_low for s in mech.species]
    highs = [s.thermo.T_high for s in mech.species]
    if max(lows) < min(highs):
        return max(lows), min(highs)
    return min(lows), max(highs)


def check_mechanism(mech: Mechanism, problems: ProblemCollector) -> None:
    """The QSSA linearization's needs; rate constants and transport properties over the thermo range."""
    check_qssa(mech, problems)
    if not mech.species:
        return
    T = _grid(*temperature_range(mech))
    _check_rate_parameters(mech, problems)
    _check_rate_constants(mech, T, problems)
    if mech.has_transport:
        _check_transport_properties(mech, T, problems)


def _arrhenius_sets(reaction) -> list[tuple[str, Arrhenius]]:
    """(which, parameters) of every Arrhenius expression of a reaction."""
    sets = [("", reaction.rate)] if isinstance(reaction.rate, Arrhenius) else []
    if isinstance(reaction.rate, PlogRate):
        sets += [(f"PLOG at {P / ONE_ATM:g} atm: ", rate) for P, rate in reaction.rate.entries]
    sets += [(f"{label}: ", rate) for label, rate in (("LOW", reaction.low), ("HIGH", reaction.high),
                                                      ("REV", reaction.reverse_rate)) if rate is not None]
    return sets


def _check_rate_parameters(mech: Mechanism, problems: ProblemCollector) -> None:
    """Warn about temperature exponents and negative activation energies far
    beyond those of published mechanisms (their rates are checked next)."""
    for index, reaction in enumerate(mech.reactions):
        for which, rate in _arrhenius_sets(reaction):
            if abs(rate.b) > MAX_TEMPERATURE_EXPONENT:
                problems.warn(reaction.location, f"reaction {index + 1}: {which}temperature exponent b = {rate.b:g}, "
                              f"beyond the +-{MAX_TEMPERATURE_EXPONENT:g} of published mechanisms",
                              "check b (the second number)")
            if rate.Ea_R < MIN_ACTIVATION_TEMPERATURE:
                problems.warn(reaction.location, f"reaction {index + 1}: {which}activation energy E/R = "
                              f"{rate.Ea_R:.4g} K, more negative than the {MIN_ACTIVATION_TEMPERATURE:g} K of "
                              "published mechanisms", "check E (the third number) and its units")


def _check_rate_constants(mech: Mechanism, T: np.ndarray, problems: ProblemCollector) -> None:
    if not mech.reactions:
        return
    worst = {"rate constant": np.zeros(len(mech.reactions)), "rate of progress": np.zeros(len(mech.reactions))}
    for P in CHECK_PRESSURES:
        for what, values in _rates(mech, T, P).items():
            for value in values:
                magnitude = np.where(np.isfinite(value), np.abs(value), np.inf).max(axis=1)
                worst[what] = np.maximum(worst[what], magnitude)
    reported: set[int] = set()
    for what, magnitude in worst.items():
        for index in np.flatnonzero(magnitude > PUBLISHED_RATE_CONSTANT):
            if index in reported:
                continue
            reported.add(index)
            size = "overflows" if not np.isfinite(magnitude[index]) else f"reaches {magnitude[index]:.3g}"
            message = (f"the {what} of reaction {index + 1} {size} between {T[0]:g} and {T[-1]:g} K "
                       "(the mechanism's thermo range)")
            hint = ("check A, the temperature exponent b, the activation energy E (and their units) "
                    "and the third-body efficiencies")
            if magnitude[index] > MAX_RATE_CONSTANT:
                problems.add(mech.reactions[index].location, message, hint)
            else:
                problems.warn(mech.reactions[index].location, f"{message}, beyond the "
                              f"{PUBLISHED_RATE_CONSTANT:.0e} of published mechanisms (SI units)", hint)


def _rates(mech: Mechanism, T: np.ndarray, P: float) -> dict[str, tuple[np.ndarray, ...]]:
    """Forward and reverse rate constants and rates of progress at pressure
    ``P``, in an equimolar mixture of every species."""
    from singe.reference.kinetics import forward_rate_constants, rates_of_progress, reverse_rate_constants

    pressure = np.full(T.size, P)
    C = np.tile(P / (GAS_CONSTANT * T) / mech.n_species, (mech.n_species, 1))
    with np.errstate(all="ignore"):
        return {"rate constant": (forward_rate_constants(mech, T, pressure, C),
                                  reverse_rate_constants(mech, T, pressure, C)),
                "rate of progress": rates_of_progress(mech, T, pressure, C)}


def _check_transport_properties(mech: Mechanism, T: np.ndarray, problems: ProblemCollector) -> None:
    from singe.reference.transport import binary_diffusion, species_viscosities

    with np.errstate(all="ignore"):
        mu = species_viscosities(mech, T)
        D = binary_diffusion(mech, T, np.full(T.size, ONE_ATM))
    bad_mu = ~(np.isfinite(mu) & (mu > 0)).all(axis=1)
    bad_D = ~(np.isfinite(D) & (D > 0)).all(axis=(1, 2))
    for index in np.flatnonzero(bad_mu | bad_D):
        species = mech.species[mech.species_index(mech.transported_species[index])]
        problems.add(species.transport.location, f"transport data of {species.name!r} give a non-finite or "
                     f"non-positive viscosity or diffusion coefficient between {T[0]:g} and {T[-1]:g} K",
                     "check eps/k, sigma, dipole moment and polarizability")
