"""Spill table: the register plan against ptxas for every kernel of every mechanism.

    python -m autotune.spills [--mechanisms gri30,h2o2,dme,...] [--arch sm_80,sm_90,sm_90a] [--warps 8]
        [--settings defaults|paper] [--kernels viscosity,diffusion,chemistry] [--json FILE] [--threshold]

Per mechanism x kernel x arch: the settings (warps, CTAs per SM: chosen by
the compiler from the register plan unless ``--ctas-per-sm`` is given, and
settled by ptxas where the plan's floor is unchecked, as the command does:
``singe.ptxas_check``),
the plan's printed estimate (``~N``), its need and budget, ptxas's registers
and spill bytes, and the estimate's error against ptxas; with ``--threshold``
also the fewest registers (a multiple of 8) at which ptxas compiles the same
code without spills (``.maxnreg`` in place of the launch bounds' CTA count,
from ``THRESHOLD_BELOW_FLOOR`` registers under the plan's floor up; one ptxas run per step).  ``--settings
paper`` compiles the paper's kernels (DME, n-heptane) at the published
settings instead of the defaults.

Mechanisms: the bundled ones (gri30, h2o2), the shared ones (dme, heptane,
dodecane: ../shared/mechanisms), and ``cantera:NAME`` for a mechanism of
Cantera's bundled data converted to CHEMKIN with ``yaml2ck`` (those with
transport data: gri30_highT, air, alzueta = example_data/ammonia-CO-H2-Alzueta-2023,
sif4 = the gas phase of SiF4_NH3_mec, ammonia_ru = the gas phase of
example_data/ammonia-Ru-Ba-YSZ-CSM-2019), or a Cantera YAML file by its path: gri30_ion,
the other one with transport data, is read from its YAML (yaml2ck writes its species
notes as bare lines, which neither Cantera's ck2yaml nor singe reads back).
For ``sm_90a``, a kernel with per-warpgroup register budgets (setmaxnreg)
also shows the budgets and the same kernel without them (its CTAs per SM,
registers, spills).  One nvcc at a time; the n-heptane kernels take minutes, so run it niced.
"""

from __future__ import annotations

import argparse
import json
import pathlib
import re
import shutil
import subprocess
import sys
import tempfile
import time

import singe
from singe import SingeError, compile_kernel
from singe.codegen import emitted_plan, generate, lay_out
from singe.codegen.nvcc import compile_cuda, find_nvcc, nvcc_arch, parse_ptxas
from singe.kernels.registry import kernel_spec
from singe.ptxas_check import settle_if_needed

from autotune.bench import PAPER_SETTINGS, kernel_names, mechanism_path

DEFAULT_MECHANISMS = ("gri30,h2o2,dme,heptane,dodecane,cantera:gri30_highT,cantera:air,cantera:alzueta,"
                      "cantera:sif4,cantera:ammonia_ru")
CANTERA_FILES = {"gri30_highT": ("gri30_highT.yaml", None), "air": ("air.yaml", None),
                 "alzueta": ("example_data/ammonia-CO-H2-Alzueta-2023.yaml", "baseline"),
                 "sif4": ("SiF4_NH3_mec.yaml", "gas"),
                 "ammonia_ru": ("example_data/ammonia-Ru-Ba-YSZ-CSM-2019.yaml", "gas")}


def load(name: str, scratch: pathlib.Path) -> singe.Mechanism:
    """A mechanism by name: bundled, shared, or ``cantera:NAME`` converted with yaml2ck into ``scratch``."""
    if not name.startswith("cantera:"):
        return singe.load_mechanism(mechanism_path(name))
    import cantera as ct
    from cantera.yaml2ck import convert

    known = CANTERA_FILES.get(name.split(":", 1)[1])
    if known is None:
        raise SystemExit(f"{name}: not one of Cantera's mechanisms this script converts "
                         f"({', '.join('cantera:' + n for n in CANTERA_FILES)}); give another by the path of its YAML file")
    file, phase = known
    gas = ct.Solution(file, phase) if phase else ct.Solution(file)
    stem = scratch / name.split(":", 1)[1]
    convert(gas, mechanism_path=stem.with_suffix(".inp"), thermo_path=stem.with_suffix(".therm"),
            transport_path=stem.with_suffix(".tran"), overwrite=True)
    return singe.load_mechanism(stem.with_suffix(".inp"), thermo=stem.with_suffix(".therm"),
                                transport=stem.with_suffix(".tran"))


def kernels_of(mech: singe.Mechanism, wanted: list[str]) -> list[str]:
    """The kernels of ``wanted`` the mechanism supports (transport kernels need transport data)."""
    return [k for k in wanted if kernel_spec(k).supports(mech)]


def settings(mechanism: str, kernel: str, which: str, warps: int, ctas: int | None) -> dict | None:
    """Compile options of one row: the defaults (``warps``, CTAs chosen unless given) or the paper's."""
    if which == "paper":
        paper = PAPER_SETTINGS.get(mechanism, {}).get(kernel)
        if paper is None:
            return None
        return {"warps": paper[0], "qssa_warps": paper[1], "ctas_per_sm": paper[2]}
    return {"warps": warps, "ctas_per_sm": ctas}


def row(name: str, mech, kernel: str, options: dict, arch: str, scratch: pathlib.Path,
        threshold: bool = False) -> dict:
    """One kernel compiled by singe and by nvcc for ``arch``; with the CTAs per SM chosen, as the command
    does: settled by ptxas where the plan's floor is unchecked (``singe.ptxas_check``; ``settled``: the
    counts ptxas spilled at before)."""
    start = time.perf_counter()
    compiled = compile_kernel(mech, kernel, arch=arch, **options)
    settled = settle_if_needed(compiled) if options.get("ctas_per_sm") is None else None
    compiled = settled.compiled if settled else compiled
    plan = emitted_plan(compiled.programs.plan, lay_out(compiled.programs))
    generated = generate(compiled)
    path = generated.write(scratch / f"{name.replace(':', '_')}_{arch}")[0]
    nvcc_start = time.perf_counter()
    entry = compile_cuda(path, arch).entry(generated.name)
    result = {"mechanism": name, "kernel": kernel, "arch": arch, "warps": compiled.options.warps,
            "qssa_warps": compiled.options.qssa_warps, "ctas_per_sm": compiled.options.ctas_per_sm,
            "predicted": plan.predicted, "need": plan.need, "budget": plan.budget,
            "registers": entry.registers, "spill_stores": entry.spill_stores, "spill_loads": entry.spill_loads,
            "error": (plan.predicted - entry.registers) / entry.registers,
            "singe_s": nvcc_start - start, "nvcc_s": time.perf_counter() - nvcc_start,
            "settled": [[t.ctas, t.entry.spill_stores] for t in settled.trials[:-1]] if settled else [],
            "threshold": spill_threshold(path, arch, plan.floor - THRESHOLD_BELOW_FLOOR) if threshold else None}
    budgets = list(plan.warp_budgets[::4])
    plain = without_setmaxnreg(mech, kernel, options, arch, scratch) if budgets else None
    return {**result, "setmaxnreg": budgets, "without": plain}


def without_setmaxnreg(mech, kernel: str, options: dict, arch: str, scratch: pathlib.Path) -> dict:
    """The same kernel for ``arch`` (sm_90a) without per-warpgroup budgets: compiled by singe
    for the same GPU without setmaxnreg (sm_90), by ptxas for ``arch``; its CTAs per SM,
    registers and spill bytes."""
    compiled = compile_kernel(mech, kernel, arch="sm_90", **options)
    generated = generate(compiled)
    path = generated.write(scratch / f"{compiled.mechanism.name}_plain_{arch}")[0]
    entry = compile_cuda(path, arch).entry(generated.name)
    return {"ctas_per_sm": compiled.options.ctas_per_sm, "registers": entry.registers,
            "spill_stores": entry.spill_stores, "spill_loads": entry.spill_loads}


THRESHOLD_BELOW_FLOOR = 16  # the floor is an estimate: ptxas may compile the code in fewer registers


def spill_threshold(source: pathlib.Path, arch: str, start: int) -> int:
    """The fewest registers, a multiple of 8 from ``start`` down-rounded, at which ptxas
    compiles ``source``'s PTX without spills (its ``.minnctapersm`` replaced by ``.maxnreg``)."""
    nvcc, arch = find_nvcc(), nvcc_arch(arch)
    ptxas = shutil.which("ptxas") or str(pathlib.Path(nvcc).with_name("ptxas"))
    ptx = source.with_suffix(".ptx")
    subprocess.run([nvcc, f"-arch={arch}", "-O3", "-ptx", str(source), "-o", str(ptx), f"-I{source.parent}"],
                   check=True, capture_output=True)
    text = ptx.read_text()
    registers = max(start - start % 8, 16)
    while registers < 255:
        ptx.write_text(re.sub(r"^\.minnctapersm \d+", f".maxnreg {registers}", text, flags=re.M))
        log = subprocess.run([ptxas, f"-arch={arch}", "-v", "-O3", str(ptx), "-o", str(ptx.with_suffix(".o"))],
                             capture_output=True, text=True, check=True)
        entries = parse_ptxas(log.stdout + log.stderr)[0]
        if not any(e.spill_stores or e.spill_loads for e in entries):
            return registers
        registers += 8
    return 255


def format_row(r: dict) -> str:
    setting = f"{r['warps']}w x {r['ctas_per_sm']}" + (f" q{r['qssa_warps']}" if r["kernel"] == "chemistry" else "")
    plain = r.get("without")
    budgets = (f" setmaxnreg {'/'.join(map(str, r['setmaxnreg']))}; without: {plain['ctas_per_sm']} CTAs, "
               f"{plain['registers']} registers, {plain['spill_stores']}/{plain['spill_loads']} B") if plain else ""
    return (f"{r['mechanism']:20} {r['kernel']:11} {r['arch']:6} {setting:>11} {r['predicted']:5} {r['need']:5} "
            f"{r['budget']:6} {r['registers']:6} {r['spill_stores']:6}/{r['spill_loads']:<6} {r['error']:+7.1%} "
            f"{r['nvcc_s']:6.1f}s" + (f" {r['threshold']:9}" if r.get("threshold") else "") + budgets
            + "".join(f" (ptxas spilled {stores} B at {ctas})" for ctas, stores in r.get("settled", [])))


HEADER = (f"{'mechanism':20} {'kernel':11} {'arch':6} {'warps x CTA':>11} {'~plan':>5} {'need':>5} {'budget':>6} "
          f"{'ptxas':>6} {'spill st/ld B':>13} {'error':>7} {'nvcc':>7}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mechanisms", default=DEFAULT_MECHANISMS)
    parser.add_argument("--kernels", type=kernel_names, default="viscosity,diffusion,chemistry")
    parser.add_argument("--arch", default="sm_80,sm_90")
    parser.add_argument("--warps", type=int, default=8)
    parser.add_argument("--ctas-per-sm", type=int, help="CTAs per SM (default: chosen from the register plan)")
    parser.add_argument("--settings", choices=("defaults", "paper"), default="defaults")
    parser.add_argument("--json", help="also write the rows as JSON here")
    parser.add_argument("--threshold", action="store_true",
                        help="also the fewest registers ptxas compiles each kernel in without spills")
    args = parser.parse_args(argv)
    if find_nvcc() is None:
        print("skipped: nvcc (CUDA toolkit) not installed")
        return 0
    rows = []
    print(HEADER + (" no-spill at" if args.threshold else ""), flush=True)
    with tempfile.TemporaryDirectory() as folder:
        scratch = pathlib.Path(folder)
        for name in args.mechanisms.split(","):
            mech = load(name, scratch)
            for kernel in kernels_of(mech, args.kernels):
                options = settings(name, kernel, args.settings, args.warps, args.ctas_per_sm)
                for arch in args.arch.split(",") if options is not None else ():
                    try:
                        rows.append(row(name, mech, kernel, options, arch, scratch, args.threshold))
                    except SingeError as error:
                        print(f"{name} {kernel} {arch}: {str(error).splitlines()[0]}", flush=True)
                        continue
                    print(format_row(rows[-1]), flush=True)
    spilled = [r for r in rows if r["spill_stores"] or r["spill_loads"]]
    errors = [abs(r["error"]) for r in rows]
    print(f"{len(rows)} kernels, {len(spilled)} with spills; plan vs ptxas: largest error "
          f"{max(errors, default=0):.1%}, mean {sum(errors) / max(len(errors), 1):.1%}")
    if args.json:
        pathlib.Path(args.json).write_text(json.dumps(rows, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
