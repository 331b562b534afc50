"""What the kernels need of a mechanism is checked by the frontend, located
(singe.frontend.kernel_inputs): QSSA species the linearization cannot
represent (at load), transport kernels without two transported species or
without usable TRANSPORT data (at compile); species names too long for the
Fortran launcher (at generation).  Each error has a companion: the mechanism
without the defect loads and compiles."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

import singe
from singe.derived.qssa import build_qssa_system
from singe.errors import MechanismSemanticError, SingeInternalError
from singe.kernels import build_graph
from mechanism_text import write_mechanism
from test_frontend_errors import FIRST, assert_problem

BASE = "H2+O2=2OH   1.7E13 0.0 47780.0\nOH+H2=H2O+H   1.17E9 1.3 3626.0\n"


def load(tmp_path, reactions: str, qss: str | None = None, **kwargs):
    return singe.load_mechanism(write_mechanism(tmp_path, reactions, qss=qss, **kwargs))


def load_error(tmp_path, reactions: str, qss: str | None = None, **kwargs) -> MechanismSemanticError:
    with pytest.raises(MechanismSemanticError) as info:
        load(tmp_path, reactions, qss, **kwargs)
    return info.value


# -- QSSA: whole molecules, no FORD/RORD on a QSSA species (at load) ---------------

def test_fractional_qssa_coefficient_is_located(tmp_path):
    error = load_error(tmp_path, BASE + "0.5H2O2=OH   1.0E13 0.0 0.0\n", qss="QSSA\nH2O2\nEND\n")
    assert_problem(error, "fractional coefficients of QSSA species 'H2O2' on the reactant side",
                   FIRST + 2, 1, hint="whole molecules")
    assert len(error.problems) == 1


def test_fractional_qssa_coefficient_on_the_product_side_is_located(tmp_path):
    error = load_error(tmp_path, BASE + "OH=0.5H2O2   1.0E13 0.0 0.0\n", qss="QSSA\nH2O2\nEND\n")
    assert_problem(error, "fractional coefficients of QSSA species 'H2O2' on the product side", FIRST + 2, 1)


def test_two_qssa_species_sharing_one_molecule_are_located(tmp_path):
    error = load_error(tmp_path, BASE + "0.5H2O2+0.5O2=HO2   1.0E13 0.0 0.0\n", qss="QSSA\nH2O2 O2\nEND\n")
    assert_problem(error, "fractional coefficients of QSSA species 'H2O2', 'O2' on the reactant side",
                   FIRST + 2, 1)


def test_reaction_order_on_a_qssa_species_is_located(tmp_path):
    reactions = BASE + "H2O2+H=OH+H2O   1.0E13 0.0 0.0\n  FORD / H2O2 0.5 /\n"
    error = load_error(tmp_path, reactions, qss="QSSA\nH2O2\nEND\n")
    assert_problem(error, "reaction order 0.5 of QSSA species 'H2O2' differs from its stoichiometric "
                   "coefficient", FIRST + 2, 1, hint="FORD/RORD")


def test_whole_qssa_molecules_load_and_build(tmp_path):
    """Companion: the same mechanisms with whole molecules and no order load, and the chemistry builds."""
    mech = load(tmp_path, BASE + "H2O2=2OH   1.0E13 0.0 0.0\nH2O2+H=OH+H2O   1.0E13 0.0 0.0\n",
                qss="QSSA\nH2O2\nEND\n")
    assert build_qssa_system(mech).species == ("H2O2",)
    assert build_graph(mech, "chemistry").operations


def test_qssa_structure_past_the_frontend_is_an_internal_error(tmp_path):
    """A mechanism made without the frontend that breaks the linearization is our bug, not a user's."""
    mech = load(tmp_path, BASE + "H2O2=2OH   1.0E13 0.0 0.0\n", qss="QSSA\nH2O2\nEND\n")
    reaction = mech.reactions[-1]
    broken = dataclasses.replace(reaction, reactants=(("H2O2", 0.5),))
    bad = dataclasses.replace(mech, reactions=mech.reactions[:-1] + (broken,))
    with pytest.raises(SingeInternalError, match="fractional QSSA coefficients"):
        build_qssa_system(bad)


# -- transport kernels: two transported species with TRANSPORT data (at compile) ------

ONE_TRANSPORTED = dict(species={"H2": "H2", "H": "H"}, elements="H", qss="QSSA\nH\nEND\n")


def test_transport_kernel_with_one_transported_species_is_located(tmp_path):
    mech = load(tmp_path, "H2=2H   4.577E19 -1.4 104380.0\n", **ONE_TRANSPORTED)
    assert mech.transported_species == ["H2"]
    for kernel in ("viscosity", "diffusion", "conductivity"):
        with pytest.raises(MechanismSemanticError) as info:
            singe.compile_kernel(mech, kernel, warps=2)
        assert_problem(info.value, f"the {kernel} kernel needs at least two transported species: it has one, 'H2'",
                       1, 1, file_name="tran.dat", hint="two species")


def test_one_transported_species_still_has_chemistry(tmp_path):
    """Companion: the chemistry kernel of that mechanism compiles and matches the reference."""
    mech = load(tmp_path, "H2=2H   4.577E19 -1.4 104380.0\n", **ONE_TRANSPORTED)
    kernel = singe.compile_kernel(mech, "chemistry", warps=2)
    T, P, Y = np.full(32, 2500.0), np.full(32, 101325.0), np.ones((1, 32))
    expected = singe.reference.net_production_rates(mech, T, P, Y)
    assert np.allclose(kernel.simulate(T, P, Y), expected, rtol=1e-12, atol=0)
    assert np.all(expected != 0.0)


def test_two_transported_species_compile_a_transport_kernel(tmp_path):
    """Companion: without the QSSA list the same species serve the viscosity kernel."""
    mech = load(tmp_path, "H2=2H   4.577E19 -1.4 104380.0\n", species={"H2": "H2", "H": "H"}, elements="H")
    assert singe.compile_kernel(mech, "viscosity", warps=2).programs.warps == 2


def test_transport_kernel_without_transport_data_is_located(tmp_path):
    chem = write_mechanism(tmp_path, BASE)
    (tmp_path / "tran.dat").unlink()
    mech = singe.load_mechanism(chem)
    assert not mech.has_transport
    with pytest.raises(MechanismSemanticError) as info:
        singe.compile_kernel(mech, "viscosity", warps=2)
    assert_problem(info.value, "no transport data for species 'H2'", 5, 1)
    assert singe.compile_kernel(mech, "chemistry", warps=2).programs.warps == 2  # chemistry needs none


def test_kernel_build_past_the_frontend_is_an_internal_error(tmp_path):
    mech = load(tmp_path, "H2=2H   4.577E19 -1.4 104380.0\n", **ONE_TRANSPORTED)
    with pytest.raises(SingeInternalError, match="at least two transported species"):
        build_graph(mech, "viscosity")


# -- the Fortran launcher: names within Fortran's 63 characters (at generation) ------------

def test_species_name_too_long_for_fortran_is_located(tmp_path):
    from singe.codegen import generate_fortran

    chem = write_mechanism(tmp_path, BASE, stem="m" * 51)
    mech = singe.load_mechanism(chem)
    kernel = singe.compile_kernel(mech, "viscosity", warps=2)
    with pytest.raises(singe.SingeInputError) as info:
        generate_fortran(kernel)
    assert_problem(info.value, "species 'H2O2' of m+ gives the Fortran name M+_SPECIES_H2O2 .64 characters; "
                   "Fortran takes 63.", 5, 22, file_name=f"{'m' * 51}.inp", hint="shorten")
    assert {p.message.split("'")[1] for p in info.value.problems} == {"H2O2"}  # the shorter names fit
    short = singe.load_mechanism(write_mechanism(tmp_path, BASE, stem="m" * 50))
    assert generate_fortran(singe.compile_kernel(short, "viscosity", warps=2))  # companion: one character less
