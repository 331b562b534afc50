"""State and reference files for drivers outside Python (examples/).

A *state file* holds points of a reacting flow; a *reference file* the
values a kernel must produce at them, computed by ``singe.reference``.  Both
are plain text a C++ or Fortran program reads with its standard input
routines: lines starting with '#' are comments, then a line of two counts,
then one line per point.

    state file:      n_points n_species, then per point  T [K]  P [Pa]  Y_1 ... Y_n
    reference file:  n_points n_values,  then per point  its n_values outputs

Species are in the order of the kernels' headers (the mechanism's
transported species); chemistry references are without stiffness removal and
with zero diffusion source (``dt`` and ``diffusion_source`` NULL).
"""

from __future__ import annotations

import os
import pathlib

import numpy as np

from singe.errors import Location, Problem, SingeInputError
from singe.mechanism import Mechanism

DEFAULT_SEED = 2014


def reference_values(mech: Mechanism, kernel: str, T, P, Y, options=None) -> np.ndarray:
    """What ``kernel`` computes at the states, (n_values, n): viscosity and conductivity one value per point,
    diffusion and chemistry one per species (its ``singe.reference`` function, ``KernelSpec.reference``, with
    the settings of ``options`` it takes: chemistry's ``products``; None: the defaults)."""
    from singe.kernels.registry import kernel_spec

    spec = kernel_spec(kernel)
    settings = spec.reference_settings(options) if options is not None else {}
    return np.atleast_2d(spec.reference(mech, T, P, Y, **settings))


def draw_states(mech: Mechanism, n: int, seed: int = DEFAULT_SEED):
    """``n`` random states: T, P (n,), Y (n_transported, n); in the transport
    fits' range when the mechanism has transport data, else 800-2500 K."""
    from singe.validate import random_states

    if mech.has_transport:
        return random_states(mech, n, seed)
    rng = np.random.default_rng(seed)
    Y = rng.random((len(mech.transported_species), n)) ** 3
    P = 101325.0 * np.exp(rng.uniform(np.log(0.1), np.log(100.0), n))
    return rng.uniform(800.0, 2500.0, n), P, Y / Y.sum(axis=0)


def _write(path: str | os.PathLike, comments: list[str], counts: tuple[int, int], rows: np.ndarray) -> pathlib.Path:
    path = pathlib.Path(path)
    lines = [f"# {c}" for c in comments] + [f"{counts[0]} {counts[1]}"]
    lines += [" ".join(f"{v:.17e}" for v in row) for row in rows]
    path.write_text("\n".join(lines) + "\n")
    return path


def write_states(path: str | os.PathLike, mech: Mechanism, T, P, Y) -> pathlib.Path:
    """Write a state file; species order ``mech.transported_species``."""
    Y = np.asarray(Y, dtype=float)
    n = Y.shape[1]
    rows = np.column_stack([np.broadcast_to(T, n), np.broadcast_to(P, n), Y.T])
    return _write(path, [f"singe states of {mech.name}: n_points n_species, then per point T [K] P [Pa] and the "
                         "mass fractions of", "species: " + " ".join(mech.transported_species)], (n, Y.shape[0]), rows)


def read_states(path: str | os.PathLike):
    """T, P (n,) and Y (n_species, n) of a state file."""
    rows = read_table(path, extra_columns=2)
    return rows[:, 0], rows[:, 1], rows[:, 2:].T.copy()


def write_reference(path: str | os.PathLike, mech: Mechanism, kernel: str, values: np.ndarray) -> pathlib.Path:
    """Write a reference file: ``values`` (n_values, n) of ``kernel``."""
    from singe.kernels.registry import kernel_spec

    values = np.atleast_2d(values)
    what = "per point its value" if values.shape[0] == 1 else "per point the values of the species in order"
    units = kernel_spec(kernel).output.units
    return _write(path, [f"singe reference of {mech.name} {kernel} [{units}] by singe.reference "
                         "(chemistry: dt and diffusion_source NULL)", f"n_points n_values, then {what}"],
                  (values.shape[1], values.shape[0]), values.T)


def read_table(path: str | os.PathLike, extra_columns: int = 0) -> np.ndarray:
    """The rows (n_points, n_values + extra_columns) of a state or reference
    file; a SingeInputError naming file and line for anything malformed."""
    path = pathlib.Path(path)
    counts, rows = None, []
    for number, line in enumerate(path.read_text().splitlines(), 1):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        where = Location(str(path), number, 1, line)
        try:
            values = [float(v) for v in line.split()]
        except ValueError:
            raise SingeInputError(Problem(where, "expected numbers separated by spaces")) from None
        if counts is None:
            if len(values) != 2 or any(v != int(v) or v < 0 for v in values):
                raise SingeInputError(Problem(where, "expected the counts line: n_points n_values"))
            counts = (int(values[0]), int(values[1]) + extra_columns)
        elif len(rows) == counts[0]:
            raise SingeInputError(Problem(where, f"more points than the counts line says ({counts[0]})"))
        elif len(values) != counts[1]:
            raise SingeInputError(Problem(where, f"expected {counts[1]} numbers, found {len(values)}"))
        else:
            rows.append(values)
    if counts is None or len(rows) != counts[0]:
        found = "no counts line" if counts is None else f"{len(rows)} points where the counts line says {counts[0]}"
        raise SingeInputError(Problem(Location(str(path), number if counts else 1), found))
    return np.array(rows, dtype=float).reshape(counts)


def write_reference_files(mech: Mechanism, kernels: list[str], states: str,
                          directory: str | os.PathLike, options=None) -> list[pathlib.Path]:
    """``states``: a state file, or a number of random states to draw (then
    written to ``<mech>_states.dat``); writes ``<mech>_<kernel>.ref`` per kernel (``options``: the
    ``CompileOptions`` whose reference settings apply, ``reference_values``)."""
    directory = pathlib.Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    written = []
    if states.isdigit():
        T, P, Y = draw_states(mech, int(states))
        written.append(write_states(directory / f"{mech.name}_states.dat", mech, T, P, Y))
    else:
        T, P, Y = read_states(states)
        if Y.shape[0] != len(mech.transported_species):
            raise SingeInputError(f"{states}: {Y.shape[0]} species per point; {mech.name} has "
                                  f"{len(mech.transported_species)} transported species")
    for kernel in kernels:
        values = reference_values(mech, kernel, T, P, Y, options)
        written.append(write_reference(directory / f"{mech.name}_{kernel}.ref", mech, kernel, values))
    return written
