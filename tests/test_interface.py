"""The launch interface a solver sees: the generated header (documentation,
species macros, the architecture guard) and NULL for the optional inputs
(dt: no stiffness removal; diffusion_source: zero) in the kernel itself."""

from __future__ import annotations

import functools
import re
import shutil
import subprocess

import numpy as np
import pytest

from singe.codegen import generate, generate_baseline
from singe.codegen.interface import species_names
from singe.codegen.nvcc import find_nvcc
from singe.compiler import compile_kernel
from singe.reference.kinetics import net_production_rates
from conftest import load
from cantera_reference import random_states

TOLERANCE = 1e-9  # x max|wdot| per point
needs_nvcc = pytest.mark.skipif(find_nvcc() is None, reason="nvcc (CUDA toolkit) not installed")
needs_gxx = pytest.mark.skipif(shutil.which("g++") is None or shutil.which("gcc") is None,
                               reason="g++/gcc not installed")


def worst_error(ours, theirs) -> float:
    return float(np.max(np.abs(ours - theirs) / np.abs(theirs).max(axis=0)))


# -- species names ---------------------------------------------------------------------------

def test_species_names_are_valid_and_collision_free():
    names = species_names("n-dodecane", ["CH2(S)", "CH2-S-", "ch2(s)", "COUNT", "1-C4H8", "H2"])
    macros = [n.macro for n in names]
    assert macros == ["N_DODECANE_SPECIES_CH2_S_", "N_DODECANE_SPECIES_CH2_S__", "N_DODECANE_SPECIES_CH2_S___",
                      "N_DODECANE_SPECIES_COUNT_", "N_DODECANE_SPECIES_1_C4H8", "N_DODECANE_SPECIES_H2"]
    assert [n.index for n in names] == list(range(6))
    assert all(re.fullmatch(r"[A-Z][A-Z0-9_]*", m) for m in macros)
    assert species_names("2step", ["A"])[0].macro == "M2STEP_SPECIES_A"


# -- the header ------------------------------------------------------------------------------

@functools.lru_cache(maxsize=None)
def gri30_kernels():
    mech = load("gri30")
    viscosity = compile_kernel(mech, "viscosity", warps=4)
    chemistry = compile_kernel(mech, "chemistry", warps=4)
    return generate(viscosity), generate(chemistry), generate_baseline(viscosity)


def defined_macros(header: str) -> set[str]:
    return set(re.findall(r"^#define (\w+)", header, re.MULTILINE))


def test_header_documents_the_interface():
    viscosity, chemistry, baseline = gri30_kernels()
    for words in ("DEVICE pointer", "species_stride", "SI", "__restrict__", "no in-place", "asynchronous on stream",
                  "cudaSuccess", "cudaGetLastError", "generated for sm_90", "#error", "GRI30_SPECIES_<NAME>"):
        assert words in chemistry.header, words
    assert "Architecture: any" in baseline.header
    assert "#error" in viscosity.cu and "#error" not in baseline.cu
    assert "temperature: in, temperature [K], n_points values" in viscosity.header
    assert "viscosity: out, mixture viscosity [Pa s], n_points values" in viscosity.header


def program_using_every_macro(kernels) -> str:
    """C++ that uses every macro the headers should define and checks its
    value; prints the species table so the test can read it back."""
    mech = load("gri30")
    names = species_names("gri30", mech.transported_species)
    lines = [f'#include "{k.header_name}"' for k in kernels] + ["#include <cstdio>", "#include <cstring>",
                                                               "int main() {", "  int bad = 0;"]
    for k in kernels:
        lines.append(f"  static_assert({k.name.upper()}_SPECIES == {len(names)}, \"count\");")
        lines.append(f"  (void)&{k.name};")
    lines.append(f"  static_assert(GRI30_SPECIES_COUNT == {len(names)}, \"count\");")
    for n in names:
        lines.append(f"  static_assert({n.macro} == {n.index}, \"{n.macro}\");")
        lines.append(f"  bad += std::strcmp(gri30_species_names[{n.macro}], \"{n.species}\") != 0;")
    lines += ["  for (int k = 0; k < GRI30_SPECIES_COUNT; k++) std::printf(\"%s\\n\", gri30_species_names[k]);",
              "  return bad;", "}"]
    return "\n".join(lines) + "\n"


def expected_macros(kernels) -> set[str]:
    names = species_names("gri30", load("gri30").transported_species)
    return ({n.macro for n in names} | {"GRI30_SPECIES_COUNT", "SINGE_GRI30_SPECIES_H"}
            | {f"{k.name.upper()}_SPECIES" for k in kernels} | {f"SINGE_{k.name.upper()}_H" for k in kernels})


@needs_gxx
def test_every_documented_macro_compiles_in_cxx_and_c(tmp_path):
    """g++ -Wall -Wextra -Werror on a program using every macro of two
    headers of one mechanism (their shared species block included twice);
    gcc compiles the header as C99; the program prints the species in order."""
    kernels = gri30_kernels()
    for k in kernels:
        k.write(tmp_path)
    assert set().union(*(defined_macros(k.header) for k in kernels)) == expected_macros(kernels)
    (tmp_path / "use.cpp").write_text(program_using_every_macro(kernels))
    subprocess.run(["g++", "-std=c++11", "-Wall", "-Wextra", "-Werror", f"-I{tmp_path}", "-c", "use.cpp", "-o",
                    "use.o"], cwd=tmp_path, check=True)
    # link against stubs of the launchers (no CUDA here): the program only reads the macros
    stubs = "\n".join(f'extern "C" int {k.name}() {{ return 0; }}' for k in kernels)
    (tmp_path / "stubs.cpp").write_text(stubs + "\n")
    subprocess.run(["g++", "use.o", "stubs.cpp", "-o", "use"], cwd=tmp_path, check=True)
    printed = subprocess.run([str(tmp_path / "use")], capture_output=True, text=True, check=True).stdout.split()
    assert printed == list(load("gri30").transported_species)
    (tmp_path / "use.c").write_text("".join(f'#include "{k.header_name}"\n' for k in kernels) +
                                    "int main(void) { return GRI30_SPECIES_CH2_S_ != 11; }\n")
    subprocess.run(["gcc", "-std=c99", "-Wall", "-Wextra", "-Werror", "-pedantic", "use.c", "-o", "usec"],
                   cwd=tmp_path, check=True)
    assert subprocess.run([str(tmp_path / "usec")]).returncode == 0


@needs_gxx
def test_a_missing_macro_fails_the_compile(tmp_path):
    """Companion: the program does not compile against a header that lost a species macro."""
    kernels = gri30_kernels()
    for k in kernels:
        k.write(tmp_path)
    for k in kernels:
        path = tmp_path / k.header_name
        text = path.read_text()
        assert "#define GRI30_SPECIES_CH2_S_ 11  /* CH2(S) */\n" in text
        path.write_text(text.replace("#define GRI30_SPECIES_CH2_S_ 11  /* CH2(S) */\n", ""))
    (tmp_path / "use.cpp").write_text(program_using_every_macro(kernels))
    done = subprocess.run(["g++", "-std=c++11", f"-I{tmp_path}", "-c", "use.cpp", "-o", "use.o"], cwd=tmp_path,
                          capture_output=True, text=True)
    assert done.returncode != 0 and "GRI30_SPECIES_CH2_S_" in done.stderr


@needs_nvcc
def test_architecture_guard(tmp_path):
    """The kernel generated for sm_90 compiles for sm_90 and stops with the
    #error message for sm_80."""
    kernel = generate(compile_kernel(load("h2o2"), "viscosity", warps=2))
    path = kernel.write(tmp_path)[0]
    nvcc = find_nvcc()
    ok = subprocess.run([nvcc, "-arch=sm_90", "-c", str(path), "-o", str(tmp_path / "ok.o")], capture_output=True,
                        text=True)
    assert ok.returncode == 0, ok.stderr
    wrong = subprocess.run([nvcc, "-arch=sm_80", "-c", str(path), "-o", str(tmp_path / "bad.o")],
                           capture_output=True, text=True)
    assert wrong.returncode != 0
    assert "h2o2_viscosity.cu was generated for sm_90: compile it with nvcc -arch=sm_90" in wrong.stderr


# -- NULL dt and diffusion_source --------------------------------------------------------------

@functools.lru_cache(maxsize=None)
def dme_chemistry():
    mech = load("dme")
    T, P, Y = random_states(64, len(mech.transported_species), 3)
    rng = np.random.default_rng(1)
    return mech, compile_kernel(mech, "chemistry", warps=4), (T, P, Y), (10.0 ** rng.uniform(-9, -5, 64),
                                                                         rng.normal(0.0, 1.0, Y.shape))


CASES = [(False, False), (True, False), (False, True), (True, True)]  # (dt given, diffusion_source given)


@pytest.mark.parametrize("baseline", [False, True], ids=["warp-specialized", "baseline"])
def test_null_dt_and_diffusion_source_in_the_kernel(baseline):
    """DME chemistry on the host with NULL / given dt and diffusion_source
    matches singe.reference (None there too) within 1e-9 of max|wdot| per point."""
    mech, compiled, (T, P, Y), (dt, source) = dme_chemistry()
    code = (generate_baseline if baseline else generate)(compiled).cu
    assert "dt != nullptr ?" in code and "diffusion_source != nullptr ?" in code
    for with_dt, with_source in CASES:
        step, diffusion = dt if with_dt else None, source if with_source else None
        ours = compiled.run_host(T, P, Y, dt=step, diffusion_source=diffusion, baseline=baseline)
        error = worst_error(ours, net_production_rates(mech, T, P, Y, dt=step, diffusion_source=diffusion))
        assert error <= TOLERANCE, (with_dt, with_source, error)


def test_simulator_takes_none_the_same_way():
    mech, compiled, (T, P, Y), (dt, source) = dme_chemistry()
    for step, diffusion in ((None, None), (dt, None)):
        ours = compiled.simulate(T[:32], P[:32], Y[:, :32], dt=None if step is None else step[:32],
                                 diffusion_source=diffusion)
        truth = net_production_rates(mech, T[:32], P[:32], Y[:, :32], dt=None if step is None else step[:32])
        assert worst_error(ours, truth) <= TOLERANCE


def test_null_comparison_catches_a_kernel_that_ignores_its_inputs():
    """Companion: NULL dt is far from the reference with dt, NULL diffusion
    source measurably off the reference with it (so the cases above can fail)."""
    mech, compiled, (T, P, Y), (dt, source) = dme_chemistry()
    assert worst_error(compiled.run_host(T, P, Y), net_production_rates(mech, T, P, Y, dt=dt)) > 1.0
    with_dt = compiled.run_host(T, P, Y, dt=dt)
    assert worst_error(with_dt, net_production_rates(mech, T, P, Y, dt=dt, diffusion_source=source)) > 1e-5
