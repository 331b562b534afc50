"""Compiling emitted kernels with nvcc and reading ptxas's resource report."""

from __future__ import annotations

import os
import pathlib
import re
import shutil
import subprocess
import tempfile
from dataclasses import dataclass, field

from singe.errors import SingeInputError
from singe.targets import nvcc_arch

NVCC_CANDIDATES = ("nvcc", "/usr/local/cuda/bin/nvcc")
_ENTRY = re.compile(r"Compiling entry function '(\w+)' for '(\w+)'")
_SPILLS = re.compile(r"(\d+) bytes stack frame, (\d+) bytes spill stores, (\d+) bytes spill loads")
_USED = re.compile(r"Used (\d+) registers(?:, used (\d+) barriers)?(?:, (\d+) bytes smem)?")


def find_nvcc() -> str | None:
    """Path of nvcc, or None when the CUDA toolkit is not installed."""
    for candidate in NVCC_CANDIDATES:
        path = shutil.which(candidate)
        if path:
            return path
    return None


@dataclass(frozen=True)
class PtxasEntry:
    """Resources of one kernel as ptxas reports them (bytes per thread for spills)."""

    function: str
    arch: str
    registers: int
    stack_frame: int
    spill_stores: int
    spill_loads: int
    barriers: int = 0
    shared: int = 0


@dataclass(frozen=True)
class NvccResult:
    arch: str
    entries: tuple[PtxasEntry, ...]
    warnings: tuple[str, ...]
    output: str = field(repr=False, default="")

    def entry(self, name_part: str) -> PtxasEntry:
        return next(e for e in self.entries if name_part in e.function)


def parse_ptxas(output: str) -> tuple[list[PtxasEntry], list[str]]:
    """Entries of a ``-Xptxas -v`` log, and every warning line in it."""
    entries = []
    current = None
    spills = (0, 0, 0)
    for line in output.splitlines():
        if m := _ENTRY.search(line):
            current, spills = (m.group(1), m.group(2)), (0, 0, 0)
        elif (m := _SPILLS.search(line)) and current:
            spills = tuple(int(x) for x in m.groups())
        elif (m := _USED.search(line)) and current:
            registers, barriers, shared = (int(x) if x else 0 for x in m.groups())
            entries.append(PtxasEntry(current[0], current[1], registers, *spills, barriers, shared))
            current = None
    warnings = [line for line in output.splitlines() if "warning" in line.lower()]
    return entries, warnings


def compile_cuda(source: str | os.PathLike, arch: str = "sm_90", include: list[str] | None = None,
                 extra: list[str] | None = None) -> NvccResult:
    """``nvcc -arch=ARCH -Xptxas -v -c SOURCE``; raises on errors, returns ptxas's report.
    ``arch``: a target of ``singe.targets`` (its nvcc arch is used) or an nvcc arch."""
    nvcc = find_nvcc()
    if nvcc is None:
        raise SingeInputError("nvcc not found: install the CUDA toolkit or put nvcc on PATH")
    source = pathlib.Path(source)
    with tempfile.TemporaryDirectory() as scratch:
        command = [nvcc, f"-arch={nvcc_arch(arch)}", "-Xptxas", "-v", "-O3", "-c", str(source),
                   "-o", str(pathlib.Path(scratch) / "kernel.o"), f"-I{source.parent}"]
        command += [f"-I{d}" for d in include or []] + list(extra or [])
        result = subprocess.run(command, capture_output=True, text=True)
    output = result.stdout + result.stderr
    if result.returncode != 0:
        raise SingeInputError(f"nvcc failed on {source}:\n{output}")
    entries, warnings = parse_ptxas(output)
    return NvccResult(arch, tuple(entries), tuple(warnings), output)


def ptxas_entry(generated, arch: str, compile=compile_cuda) -> PtxasEntry:
    """ptxas's report of a generated kernel (``singe.codegen.GeneratedKernel``, either style) for ``arch``:
    its files written to a scratch folder and compiled there (``compile``: ``compile_cuda`` or a stand-in
    with its signature)."""
    with tempfile.TemporaryDirectory() as scratch:
        return compile(generated.write(scratch)[0], arch).entry(generated.name)
