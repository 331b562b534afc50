"""examples/: the C++ and Fortran drivers run on the CPU against the host
builds of the generated H2/O2 kernels (singe/runtime/host_cudart stands in for
the CUDA runtime) and match singe's reference files; the CMake project
configures and builds with nvcc; ``--write-reference`` and ``--fortran``."""

from __future__ import annotations

import pathlib
import shutil
import subprocess

import numpy as np
import pytest

from singe import host
from singe.cli import main
from singe.codegen.nvcc import find_nvcc
from singe.statefile import read_states, read_table, reference_values
import singe

ROOT = pathlib.Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "examples"
HOST_CUDART = ROOT / "singe" / "runtime" / "host_cudart"
POINTS = 64
needs_gxx = pytest.mark.skipif(shutil.which("g++") is None or shutil.which("gcc") is None,
                               reason="g++/gcc not installed")
needs_gfortran = pytest.mark.skipif(shutil.which("gfortran") is None,
                                    reason="gfortran not installed (apt-get install gfortran)")


@pytest.fixture(scope="module")
def generated(tmp_path_factory):
    """singe h2o2 --fortran --write-reference 64: kernels, interfaces, states, references."""
    folder = tmp_path_factory.mktemp("gen")
    assert main(["h2o2", "-o", str(folder), "--fortran", "--write-reference", str(POINTS)]) == 0
    return folder


@pytest.fixture(scope="module")
def host_libraries(generated):
    """The host builds of the three kernels, and the CPU stand-in of the CUDA runtime."""
    if shutil.which("g++") is None or shutil.which("gcc") is None:
        pytest.skip("g++/gcc not installed")
    libraries = {cu.stem: host.build(cu).library for cu in sorted(generated.glob("*.cu"))}
    cudart = generated / "host_cudart.o"
    subprocess.run(["gcc", "-Wall", "-Wextra", "-Werror", "-c", str(HOST_CUDART / "host_cudart.c"), "-o", str(cudart)],
                   check=True)
    return libraries, cudart


def corrupted_copy(generated, tmp_path, reference: str) -> pathlib.Path:
    """The generated folder with one value of a reference file off by 1e-6."""
    copy = tmp_path / "corrupted"
    shutil.copytree(generated, copy)
    path = copy / reference
    lines = path.read_text().splitlines()
    values = lines[-1].split()
    values[0] = repr(float(values[0]) * (1 + 1e-6))
    lines[-1] = " ".join(values)
    path.write_text("\n".join(lines) + "\n")
    return copy


def test_write_reference_files(generated):
    mech = singe.load_mechanism(ROOT / "mechanisms" / "h2o2" / "h2o2.inp")
    T, P, Y = read_states(generated / "h2o2_states.dat")
    assert T.shape == (POINTS,) and Y.shape == (len(mech.transported_species), POINTS)
    assert np.allclose(Y.sum(axis=0), 1.0, rtol=1e-14)
    for kernel in ("viscosity", "diffusion", "chemistry"):
        stored = read_table(generated / f"h2o2_{kernel}.ref")
        assert np.array_equal(stored.T, reference_values(mech, kernel, T, P, Y)), kernel


def test_write_reference_from_a_state_file(generated, tmp_path, capsys):
    assert main(["h2o2", "--kernels", "viscosity", "-o", str(tmp_path), "--write-reference",
                 str(generated / "h2o2_states.dat")]) == 0
    assert (tmp_path / "h2o2_viscosity.ref").read_text() == (generated / "h2o2_viscosity.ref").read_text()
    assert not (tmp_path / "h2o2_states.dat").exists()


def test_write_reference_of_conductivity(generated, tmp_path):
    """A kernel the command compiles only on request writes its own reference (conductivity wrote the
    chemistry kernel's production rates)."""
    from singe.reference.transport import thermal_conductivity

    assert main(["h2o2", "--kernels", "conductivity", "-o", str(tmp_path), "--write-reference",
                 str(generated / "h2o2_states.dat")]) == 0
    mech = singe.load_mechanism(ROOT / "mechanisms" / "h2o2" / "h2o2.inp")
    T, P, Y = read_states(generated / "h2o2_states.dat")
    stored = read_table(tmp_path / "h2o2_conductivity.ref")
    assert np.array_equal(stored[:, 0], thermal_conductivity(mech, T, P, Y))


def test_write_reference_takes_the_products_setting(generated, tmp_path):
    """``--products cantera`` writes the chemistry reference with Cantera's sign guard: at states with negative
    mass fractions it differs from the default's."""
    from singe.statefile import write_states

    mech = singe.load_mechanism(ROOT / "mechanisms" / "h2o2" / "h2o2.inp")
    T, P, Y = read_states(generated / "h2o2_states.dat")
    Y = Y.copy()
    Y[[2, 4], :] = -1e-3  # O and OH below zero: products of two negative factors
    states = write_states(tmp_path / "negative.dat", mech, T, P, Y)
    written = {}
    for products in ("chemkin", "cantera"):
        folder = tmp_path / products
        assert main(["h2o2", "--kernels", "chemistry", "-o", str(folder), "--products", products,
                     "--write-reference", str(states)]) == 0
        written[products] = read_table(folder / "h2o2_chemistry.ref")
        assert np.array_equal(written[products].T, reference_values(
            mech, "chemistry", T, P, Y, singe.CompileOptions(products=products))), products
    assert not np.array_equal(written["chemkin"], written["cantera"])


@pytest.mark.parametrize("text, line, message", [
    ("# states\n2 10\n1 2 3\n", 3, "expected 12 numbers, found 3"),
    ("2 x\n", 1, "expected numbers separated by spaces"),
    ("# only a comment\n", 1, "no counts line"),
    ("1 1\n" + "1.0 " * 3 + "\n1 2 3\n", 3, "more points than the counts line says (1)"),
    ("3 1\n1 2 3\n", 2, "1 points where the counts line says 3"),
])
def test_bad_state_file_is_reported_with_its_line(tmp_path, capsys, text, line, message):
    path = tmp_path / "bad.dat"
    path.write_text(text)
    assert main(["h2o2", "--kernels", "viscosity", "-o", str(tmp_path), "--write-reference", str(path)]) == 2
    err = capsys.readouterr().err
    assert f"bad.dat:{line}:1: error: " in err and message in err and "Traceback" not in err


def test_fortran_files_are_written(generated):
    text = (generated / "h2o2_chemistry.f90").read_text()
    assert "module singe_h2o2_chemistry" in text and 'bind(C, name="h2o2_chemistry")' in text
    species = (generated / "h2o2_species.f90").read_text()
    assert "integer(c_int), parameter :: H2O2_SPECIES_H2 = 1" in species
    assert "H2O2_SPECIES_COUNT = 10" in species


def run_driver(executable: pathlib.Path, folder: pathlib.Path) -> subprocess.CompletedProcess:
    return subprocess.run([str(executable), str(folder)], capture_output=True, text=True, timeout=120)


@needs_gxx
def test_cpp_driver_on_the_host(generated, host_libraries, tmp_path):
    """examples/cpp/driver.cpp, unchanged, against the host builds: all three
    kernels within 1e-9 of the reference files; a reference off by 1e-6 fails."""
    libraries, cudart = host_libraries
    executable = tmp_path / "driver"
    subprocess.run(["g++", "-std=c++17", "-Wall", "-Wextra", "-Werror", f"-I{HOST_CUDART}", f"-I{generated}",
                    str(EXAMPLES / "cpp" / "driver.cpp"), str(cudart), *map(str, libraries.values()),
                    "-o", str(executable)], check=True)
    done = run_driver(executable, generated)
    print(done.stdout)
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.count(": ok") == 3
    wrong = run_driver(executable, corrupted_copy(generated, tmp_path, "h2o2_diffusion.ref"))
    assert wrong.returncode == 1 and "h2o2_diffusion: 64 points" in wrong.stdout and "MISMATCH" in wrong.stdout


@needs_gfortran
def test_fortran_driver_on_the_host(generated, host_libraries, tmp_path):
    """examples/fortran/driver.f90 with the generated modules, calling the host
    build of h2o2_chemistry: within 1e-9 of singe.reference; a reference off by 1e-6 fails."""
    libraries, cudart = host_libraries
    executable = tmp_path / "fortran_driver"
    sources = [generated / "h2o2_species.f90", generated / "h2o2_chemistry.f90", EXAMPLES / "fortran" / "driver.f90"]
    subprocess.run(["gfortran", "-Wall", "-Werror", "-std=f2008", *map(str, sources), str(cudart),
                    str(libraries["h2o2_chemistry"]), "-o", str(executable)], cwd=tmp_path, check=True)
    done = run_driver(executable, generated)
    print(done.stdout)
    assert done.returncode == 0, done.stdout + done.stderr
    error = float(done.stdout.split("largest error")[1].split()[0])
    assert error <= 1e-9
    wrong = run_driver(executable, corrupted_copy(generated, tmp_path, "h2o2_chemistry.ref"))
    assert wrong.returncode != 0 and "MISMATCH" in wrong.stdout + wrong.stderr


@pytest.mark.skipif(shutil.which("cmake") is None, reason="cmake not installed")
@pytest.mark.skipif(find_nvcc() is None, reason="nvcc (CUDA toolkit) not installed")
def test_cmake_project_builds_with_nvcc(generated, tmp_path):
    """examples/CMakeLists.txt: the three H2/O2 kernels into a library, the C++
    driver (and the Fortran driver where gfortran is) linked to it, for sm_90."""
    build = tmp_path / "build"
    configure = subprocess.run(["cmake", "-S", str(EXAMPLES), "-B", str(build), f"-DSINGE_KERNEL_DIR={generated}",
                                f"-DCMAKE_CUDA_COMPILER={find_nvcc()}", "-DCMAKE_CUDA_ARCHITECTURES=90"],
                               capture_output=True, text=True)
    assert configure.returncode == 0, configure.stdout + configure.stderr
    done = subprocess.run(["cmake", "--build", str(build), "-j1"], capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr
    assert (build / "libsinge_kernels.a").exists() and (build / "singe_driver").exists()
    assert (build / "singe_fortran_driver").exists() == (shutil.which("gfortran") is not None)


@needs_gfortran
def test_fortran_interface_of_a_stiff_mechanism_compiles(tmp_path):
    """DME chemistry (dt and diffusion_source, 30 species) and GRI-Mech's
    species (CH2(S)): gfortran -std=f2008 accepts the generated modules."""
    from singe.codegen import generate_fortran
    from singe.compiler import compile_kernel
    from conftest import load

    files = {**generate_fortran(compile_kernel(load("gri30"), "viscosity", warps=2))}
    dme = generate_fortran(compile_kernel(load("dme"), "chemistry", warps=2))
    assert "type(c_ptr), value :: dt" in dme["dme_chemistry.f90"]
    for name, text in {**files, **dme}.items():
        (tmp_path / name).write_text(text)
    for name in ("gri30_species.f90", "gri30_viscosity.f90", "dme_species.f90", "dme_chemistry.f90"):
        done = subprocess.run(["gfortran", "-std=f2008", "-Wall", "-Werror", "-c", name], cwd=tmp_path,
                              capture_output=True, text=True)
        assert done.returncode == 0, done.stderr
