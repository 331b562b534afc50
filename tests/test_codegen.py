"""Emitted CUDA: barriers read back from the text, golden files, nvcc/ptxas checks."""

from __future__ import annotations

import collections
import concurrent.futures
import os
import pathlib
import re
import subprocess
import sys

import pytest

import singe
from singe.cli import main
from singe.codegen import generate, generate_baseline
from singe.codegen.nvcc import compile_cuda, find_nvcc
from singe.compiler import compile_kernel
from singe.programs import FULL_BARRIER_ID
from autotune import sass
from conftest import load, warp_id_from_threadidx

GOLDEN = pathlib.Path(__file__).resolve().parent / "golden"
sys.path.insert(0, str(GOLDEN))
import regenerate  # noqa: E402

BARRIER_CALL = re.compile(r"SINGE_BAR_(SYNC|ARRIVE)\((\d+), (\d+)\)")
needs_nvcc = pytest.mark.skipif(find_nvcc() is None, reason="nvcc (CUDA toolkit) not installed")
needs_sass = pytest.mark.skipif(bool(sass.missing_tools()), reason=sass.missing_reason() or "")
JOBS = max(1, min(2, os.cpu_count() or 1))


def barriers_in_text(cu: str) -> set[tuple[str, int, int]]:
    return {(kind.lower(), int(i), int(n)) for kind, i, n in BARRIER_CALL.findall(cu)}


def barriers_in_programs(programs) -> set[tuple[str, int, int]]:
    result = {("sync", FULL_BARRIER_ID, programs.threads)}
    for point in programs.sync_points:
        if set(point.arrivers) - set(point.syncers):
            result.add(("arrive", point.barrier_id, point.threads))
        result.add(("sync", point.barrier_id, point.threads))
    return result


@pytest.mark.parametrize("name, kernel, warps", [("dme", "viscosity", 15), ("dme", "diffusion", 10),
                                                 ("heptane", "diffusion", 32), ("gri30", "viscosity", 7)])
def test_emitted_barriers_are_exactly_the_programs(name, kernel, warps):
    compiled = compile_kernel(load(name), kernel, warps=warps)
    cu = generate(compiled).cu
    assert barriers_in_text(cu) == barriers_in_programs(compiled.programs)
    ids = {i for _, i, _ in barriers_in_text(cu)}
    assert ids == set(compiled.programs.barrier_ids)


def test_barrier_readback_would_catch_a_wrong_id():
    """Companion: a changed barrier id in the text no longer matches the programs."""
    compiled = compile_kernel(load("dme"), "viscosity", warps=6)
    cu = generate(compiled).cu.replace("SINGE_BAR_SYNC(1,", "SINGE_BAR_SYNC(9,", 1)
    assert barriers_in_text(cu) != barriers_in_programs(compiled.programs)


def test_every_barrier_names_what_it_orders():
    cu = generate(compile_kernel(load("dme"), "diffusion", warps=10)).cu
    for line in cu.splitlines():
        if "SINGE_BAR_" in line and "#define" not in line:
            assert re.search(r"// (point \d+: \S|all warps: \S)", line), line


FLOAT_LITERAL = re.compile(r"(?<![\w.])[-+]?(?:\d+\.\d*|\.\d+)(?:[eE][-+]?\d+)?(?![\w.])")
# The fitted transport literals moved by up to 4.3e-12 (relative) between numpy/LAPACK builds of this
# machine's image (numpy 2.4): 1e-9 leaves room for that and still catches any change of a fit.
GOLDEN_RTOL = 1e-9


def golden_difference(expected: str, actual: str) -> str | None:
    """Where ``actual`` departs from ``expected``: text identical, floating literals within GOLDEN_RTOL.

    The transport fits are least-squares solutions whose last digit depends on the LAPACK build
    numpy links, so the literals are compared as numbers; everything else must match exactly."""
    expected_text, actual_text = FLOAT_LITERAL.split(expected), FLOAT_LITERAL.split(actual)
    if expected_text != actual_text:
        lines = zip(expected.splitlines() + [""], actual.splitlines() + [""])
        first = next(i for i, (a, b) in enumerate(lines, 1) if FLOAT_LITERAL.sub("#", a) != FLOAT_LITERAL.sub("#", b))
        return f"text differs from line {first}"
    for a, b in zip(FLOAT_LITERAL.findall(expected), FLOAT_LITERAL.findall(actual)):
        if abs(float(a) - float(b)) > GOLDEN_RTOL * max(abs(float(a)), abs(float(b))):
            return f"literal {a} became {b}"
    return None


def test_golden_files_match():
    """Regenerate with: python tests/golden/regenerate.py"""
    for generated in regenerate.golden_kernels():
        for file_name, text in ((generated.cu_name, generated.cu), (generated.header_name, generated.header)):
            problem = golden_difference((GOLDEN / file_name).read_text(), text)
            assert problem is None, \
                f"{file_name} changed ({problem}): review, then run python tests/golden/regenerate.py"


def test_golden_comparison_catches_changes():
    """Companion: a changed literal beyond the tolerance, or changed text, is reported; a last-ulp change is not."""
    text = "c[2] = {1.2345678901234567, -3.5e-07};\nx = y;\n"
    assert golden_difference(text, text.replace("1.2345678901234567", "1.2345678901234569")) is None
    assert golden_difference(text, text.replace("1.2345678901234567", "1.2345678")) is not None
    assert golden_difference(text, text.replace("x = y", "x = z")) is not None
    assert golden_difference(text, text.replace("c[2]", "c[3]")) is not None


def test_write_is_atomic(tmp_path, monkeypatch):
    """A failure while writing leaves no partial file and keeps the previous one."""
    generated = generate(compile_kernel(load("h2o2"), "viscosity", warps=2))
    target = tmp_path / generated.cu_name
    target.write_text("previous")

    def fail(*args, **kwargs):
        raise OSError("disk full")

    monkeypatch.setattr(os, "replace", fail)
    with pytest.raises(OSError):
        generated.write(tmp_path)
    assert target.read_text() == "previous"
    assert not list(tmp_path.glob(".*"))


def test_command_writes_files_and_prints_one_line_per_kernel(tmp_path, capsys):
    assert main(["h2o2", "--warps", "4", "--diffusion-warps", "3", "-o", str(tmp_path), "--baseline",
                 "--validate", "--kernels", "viscosity,diffusion"]) == 0
    out = capsys.readouterr().out
    assert re.search(r"h2o2_viscosity\.cu: 4 warps x \d+ CTAs? per SM, \d+ operations, \d+ named barriers", out)
    assert re.search(r"h2o2_diffusion\.cu: 3 warps", out)
    assert re.findall(r"largest relative error against Cantera (\S+)", out)
    assert all(float(e) <= 1e-9 for e in re.findall(r"against Cantera (\S+)", out))
    names = sorted(p.name for p in tmp_path.iterdir())
    assert names == sorted(f"h2o2_{k}{s}.{e}" for k in ("viscosity", "diffusion") for s in ("", "_baseline")
                           for e in ("cu", "h"))


def test_command_bad_output_directory(tmp_path, capsys):
    blocker = tmp_path / "file"
    blocker.write_text("")
    assert main(["h2o2", "-o", str(blocker / "sub")]) == 2
    err = capsys.readouterr().err
    assert "error" in err and "Traceback" not in err and len(err.strip().splitlines()) == 1


def _compile(args):
    """nvcc for ``arch``; a kernel generated for another architecture is
    compiled with SINGE_ALLOW_ANY_ARCH (its #error guard would stop it)."""
    generated, directory, arch = args
    path = generated.write(directory)[0]
    extra = [] if f"generated for {arch};" in generated.header else ["-DSINGE_ALLOW_ANY_ARCH"]
    return generated.name, arch, compile_cuda(path, arch, extra=extra)


def compile_all(kernels, directory, archs):
    jobs = [(g, directory / f"{i}-{g.name}-{arch}", arch) for i, g in enumerate(kernels) for arch in archs]
    with concurrent.futures.ThreadPoolExecutor(JOBS) as pool:
        return list(pool.map(_compile, jobs))


PAPER = [("dme", "viscosity", 15), ("dme", "diffusion", 10), ("heptane", "viscosity", 13),
         ("heptane", "diffusion", 13)]


@needs_nvcc
def test_paper_kernels_compile_without_spills_on_sm90(tmp_path):
    """The paper's warp counts at 2 CTAs per SM: 0 bytes of spill stores and loads."""
    kernels = [generate(compile_kernel(load(n), k, warps=w, ctas_per_sm=2)) for n, k, w in PAPER]
    for name, arch, result in compile_all(kernels, tmp_path, ["sm_90"]):
        entry = result.entries[0]
        print(f"\n{name} {arch}: {entry.registers} registers, {entry.spill_stores} B spill stores, "
              f"{entry.spill_loads} B spill loads")
        assert not result.warnings, result.warnings
        assert entry.spill_stores == 0 and entry.spill_loads == 0, f"{name}: {entry}"


@needs_nvcc
def test_small_and_baseline_kernels_compile_cleanly_on_both_archs(tmp_path):
    compiled = [compile_kernel(load("dme"), k, warps=w) for k, w in (("viscosity", 8), ("diffusion", 4))]
    kernels = [generate(c) for c in compiled] + [generate_baseline(c) for c in compiled]
    for name, arch, result in compile_all(kernels, tmp_path, ["sm_80", "sm_90"]):
        assert result.entries and not result.warnings, (name, arch, result.warnings)


@needs_nvcc
@pytest.mark.exhaustive
@pytest.mark.parametrize("name", ["dme", "heptane"])
@pytest.mark.parametrize("kernel", ["viscosity", "diffusion"])
def test_every_warp_count_compiles_on_both_archs(tmp_path, name, kernel):
    """pytest -m exhaustive: warps 1, 2, 4, 8, 13, 16, 32 and the baseline, sm_80 and sm_90."""
    mech = load(name)
    compiled = [compile_kernel(mech, kernel, warps=w) for w in (1, 2, 4, 8, 13, 16, 32)]
    kernels = [generate(c) for c in compiled] + [generate_baseline(compiled[0])]
    for generated_name, arch, result in compile_all(kernels, tmp_path, ["sm_80", "sm_90"]):
        entry = result.entries[0]
        print(f"\n{generated_name} {arch}: {entry.registers} registers, {entry.spill_stores} B spill stores")
        assert not result.warnings, (generated_name, arch, result.warnings)


@needs_nvcc
def test_a_mechanism_without_reactions_compiles_to_zero_rates(tmp_path):
    """A gas phase whose chemistry is all on surfaces (Cantera's ammonia-Ru-Ba-YSZ gas, converted by
    yaml2ck) has no reactions and so no constants: its chemistry kernel, and the data-parallel one,
    compile on both archs (the constant table is left out, and nothing reads it) and write zeros."""
    from mechanism_text import write_mechanism
    from cantera_reference import random_states

    mech = singe.load_mechanism(write_mechanism(tmp_path, ""))
    compiled = compile_kernel(mech, "chemistry", warps=4)
    kernels = [generate(compiled), generate_baseline(compiled)]
    for name, arch, result in compile_all(kernels, tmp_path, ["sm_80", "sm_90"]):
        assert result.entries and not result.warnings, (name, arch, result.warnings)
    T, P, Y = random_states(8, len(mech.transported_species), seed=5)
    assert not compiled.run_host(T, P, Y).any()


CHEMISTRY_PAPER = [("dme", 8, 4, 2), ("heptane", 16, 2, 1)]  # warps, QSSA warps, CTAs per SM


@needs_nvcc
def test_paper_chemistry_kernels_compile_on_both_archs(tmp_path):
    """The paper's chemistry settings, warp-specialized and data-parallel, on
    sm_80 and sm_90, without warnings; registers and spills reported side by side."""
    kernels = []
    for name, warps, qssa, ctas in CHEMISTRY_PAPER:
        compiled = compile_kernel(load(name), "chemistry", warps=warps, qssa_warps=qssa, ctas_per_sm=ctas)
        assert f"__launch_bounds__({32 * warps}, {ctas})" in generate(compiled).cu
        kernels += [generate(compiled), generate_baseline(compiled)]
    for name, arch, result in compile_all(kernels, tmp_path, ["sm_80", "sm_90"]):
        entry = result.entries[0]
        print(f"\n{name} {arch}: {entry.registers} registers, {entry.spill_stores} B spill stores, "
              f"{entry.spill_loads} B spill loads")
        assert not result.warnings, (name, arch, result.warnings)


def convergence_code(generated, cu: str, folder: pathlib.Path) -> dict[str, int]:
    """ptxas's divergence handling in ``generated`` compiled with ``cu`` as its text: the BRA.DIV and WARPSYNC
    instructions it issues per slab."""
    source = generated.write(folder)[0]
    source.write_text(cu)
    issued = sum((walk.opcodes for walk in sass.analyse(source, "sm_90").warps), start=collections.Counter())
    return {op: n for op, n in issued.items() if op.startswith(("BRA.DIV", "WARPSYNC"))}


@needs_sass
def test_warp_branches_compile_without_convergence_code(tmp_path):
    """The named barriers are PTX's unaligned barrier.sync / barrier.arrive (the warps meeting at one come from
    different warps' code: the aligned forms would be undefined), and the warp index reaches ptxas as warp-uniform
    (SINGE_WARP_ID): ptxas adds no divergence path around the barriers.  Companion: with the index read straight
    from threadIdx, ptxas adds one."""
    generated = generate(compile_kernel(load("gri30"), "viscosity", warps=8))
    source = generated.write(tmp_path / "ptx")[0]
    subprocess.run([find_nvcc(), "-arch=sm_90", "-ptx", source.name, "-o", "kernel.ptx"], cwd=source.parent,
                   check=True)
    ptx = (source.parent / "kernel.ptx").read_text()
    assert re.search(r"\bbarrier\.sync\b", ptx) and re.search(r"\bbarrier\.arrive\b", ptx)
    assert not re.search(r"\bbar\.(sync|arrive)\b", ptx)
    assert convergence_code(generated, generated.cu, tmp_path) == {}
    divergent = warp_id_from_threadidx(generated.cu)
    assert convergence_code(generated, divergent, tmp_path).get("BRA.DIV", 0) > 0


def larger_blocks_first(n: int, warps: int) -> list[list[int]]:
    """The column blocks as they were: the larger ones on the first warps."""
    size, extra = divmod(n, warps)
    starts = [w * size + min(w, extra) for w in range(warps + 1)]
    return [list(range(starts[w], starts[w + 1])) for w in range(warps)]


@needs_sass
def test_spread_column_blocks_keep_the_diffusion_code_small(tmp_path, monkeypatch):
    """n-heptane's 52 species over the default 8 warps: blocks of 6 and 7 columns.  Spread evenly, a turn's warps
    share two copies of its code; with the larger blocks first (the companion) the static code is about twice
    as large (sm_90: 9,257 against 17,819 instructions), for the same work per point."""
    from singe.kernels import transport

    assert [len(b) for b in transport.column_blocks(52, 8)] == [6, 7] * 4
    assert [len(b) for b in transport.column_blocks(3, 5)] == [1, 1, 1, 0, 0]  # the first n warps, one each
    mechanism = load("heptane")
    views = []
    for blocks in (transport.column_blocks, larger_blocks_first):
        monkeypatch.setattr(transport, "column_blocks", blocks)
        generated = generate(compile_kernel(mechanism, "diffusion", warps=8, ctas_per_sm=3))
        views.append(sass.analyse(generated.write(tmp_path / blocks.__name__)[0], "sm_90"))
    spread, first = views
    assert spread.static < 0.6 * first.static
    assert spread.total < 1.02 * first.total
