"""Checking compiled kernels against Cantera from the command line (``--validate``).

The Cantera model is built in memory from the parsed mechanism's species
(NASA7 thermodynamics and transport data), so any file singe reads can be
validated; the test suite checks the same kernels against Cantera models
built independently from the original files.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from singe.derived.transport import fit_transport
from singe.errors import SingeInputError
from singe.mechanism import Mechanism, Nasa9

GEOMETRY = {0: "atom", 1: "linear", 2: "nonlinear"}
RUNNERS = {"simulator": "simulate", "host": "run_host"}  # --validate WHERE -> CompiledKernel method


def cantera_species(mech: Mechanism):
    """Cantera ``Species`` objects for every species of ``mech``."""
    import cantera as ct

    result = []
    for species in mech.species:
        s = ct.Species(species.name, {e.capitalize(): n for e, n in species.composition})
        s.thermo = _cantera_thermo(ct, species.thermo)
        if species.transport is not None:
            d = species.transport
            s.transport = ct.GasTransportData()
            s.transport.set_customary_units(GEOMETRY[d.geometry], d.diameter, d.well_depth, d.dipole,
                                            d.polarizability, d.rotational_relaxation)
        result.append(s)
    return result


def _cantera_thermo(ct, t):
    """Cantera's form of NASA7 or NASA9 polynomials."""
    if isinstance(t, Nasa9):
        coefficients = [len(t.ranges)] + [x for low, high, a in t.ranges for x in (low, high, *a)]
        return ct.Nasa9PolyMultiTempRegion(t.T_low, t.T_high, 101325.0, coefficients)
    return ct.NasaPoly2(t.T_low, t.T_high, 101325.0, [t.T_mid] + list(t.high) + list(t.low))


def cantera_transport_gas(mech: Mechanism):
    """An ideal gas of ``mech``'s species with Cantera's CHEMKIN-style mixture-averaged transport."""
    import cantera as ct

    if not mech.has_transport:
        raise SingeInputError(f"{mech.name}: --validate needs transport data for every species")
    return ct.Solution(thermo="ideal-gas", kinetics="none", transport_model="mixture-averaged-CK",
                       species=cantera_species(mech))


def _temperature_range(mech: Mechanism) -> tuple[float, float]:
    """The transport fits' range, or without transport data (chemistry only) the range every
    species' thermo covers; at most 3000 K."""
    if mech.has_transport:
        fits = fit_transport(mech)
        return fits.T_min, min(fits.T_max, 3000.0)
    low = max(s.thermo.T_low for s in mech.species)
    return low, max(low, min(min(s.thermo.T_high for s in mech.species), 3000.0))


def random_states(mech: Mechanism, n: int, seed: int = 0):
    """Random states in the transport fit range (the thermo range without transport data):
    T [K], P [Pa], Y (n_transported, n) with some zeros."""
    rng = np.random.default_rng(seed)
    T = rng.uniform(*_temperature_range(mech), n)
    P = 101325.0 * np.exp(rng.uniform(np.log(0.1), np.log(100.0), n))
    Y = rng.random((len(mech.transported_species), n)) ** 3
    Y[rng.random(Y.shape) < 0.2] = 0.0
    Y[rng.integers(Y.shape[0], size=n), np.arange(n)] += 0.5
    return T, P, Y / Y.sum(axis=0)


@dataclass(frozen=True)
class Validation:
    kernel: str
    points: int
    max_relative_error: float
    worst_point: int
    against: str = "Cantera"
    measure: str = "relative error"

    def __str__(self) -> str:
        return (f"{self.kernel}: largest {self.measure} against {self.against} {self.max_relative_error:.2e} "
                f"over {self.points} random states (point {self.worst_point})")


def validate(compiled, n: int = 256, seed: int = 0, on: str = "simulator") -> Validation:
    """Check a compiled kernel — its warp programs in the simulator, or
    (``on='host'``) the emitted CUDA run on the CPU — against what its
    registry entry names: the Cantera property (transport), else its
    ``singe.reference`` function (chemistry: Cantera has no QSSA), with and
    without stiffness removal (the worse of the two is reported)."""
    if on not in RUNNERS:
        raise SingeInputError(f"--validate takes one of {', '.join(RUNNERS)}, not {on!r}")
    run = getattr(compiled, RUNNERS[on])
    if compiled.spec.cantera is None:
        return validate_reference(compiled, n, seed, run)
    return validate_cantera(compiled, n, seed, run)


def validate_reference(compiled, n: int = 256, seed: int = 0, run=None) -> Validation:
    """The kernel against its ``singe.reference`` function on random states;
    kernels that take dt also without and with dt (1e-9 .. 1e-5 s) and
    diffusion sources."""
    spec = compiled.spec
    mech = compiled.mechanism
    T, P, Y = random_states(mech, n, seed)
    cases = [{}]
    if "dt" in spec.inputs and mech.stiff_species:  # without stiff species dt is no input of the kernel
        rng = np.random.default_rng(seed + 1)
        cases = [{"dt": None, "diffusion_source": None},
                 {"dt": 10.0 ** rng.uniform(-9, -5, n), "diffusion_source": rng.normal(0.0, 1.0, Y.shape)}]
    worst, point = 0.0, 0
    for extra in cases:
        ours = (run or compiled.simulate)(T, P, Y, **extra)
        theirs = spec.reference(mech, T, P, Y, **extra, **spec.reference_settings(compiled.options))
        error = spec.errors(ours, theirs)
        if error.max() >= worst:
            worst, point = float(error.max()), int(np.argmax(error))
    return Validation(spec.name, n, worst, point, "singe.reference", spec.error_measure)


def cantera_property(gas, spec, mech: Mechanism, T, P, Y) -> np.ndarray:
    """Cantera's value of the kernel's property (``spec.cantera``) at every
    state, in the kernel's output shape."""
    index = mech.transported_indices
    full = np.zeros(gas.n_species)
    values = []
    for i in range(T.shape[0]):
        full[:] = 0.0
        full[index] = Y[:, i]
        gas.TPY = T[i], P[i], full
        value = np.asarray(getattr(gas, spec.cantera))
        values.append(value[index] if value.ndim else value)
    return np.array(values).T


def validate_cantera(compiled, n: int = 256, seed: int = 0, run=None) -> Validation:
    """Run ``compiled`` (a transport kernel) and compare with Cantera's ``mixture-averaged-CK`` model."""
    spec = compiled.spec
    mech = compiled.mechanism
    T, P, Y = random_states(mech, n, seed)
    ours = (run or compiled.simulate)(T, P, Y)
    errors = spec.errors(ours, cantera_property(cantera_transport_gas(mech), spec, mech, T, P, Y))
    worst = int(np.argmax(errors))
    return Validation(compiled.kernel, n, float(errors[worst]), worst)
