"""Prepare one GPU session: everything the device needs, built here, in one folder to carry.

    python -m autotune.device_kit [--folder .device_kit] [--mechanisms dme,heptane]
        [--kernels viscosity,diffusion,chemistry] [--settings paper,defaults] [--arch sm_90]
        [--sweep-best FILE ...] [--points 2097152]

A lent GPU comes for minutes, bare: no PLY, no mechanisms beside the checkout, and every nvcc run there
costs device time.  This builds here, into ``FOLDER``:

- ``cache/``: every kernel ``autotune/gpu_bench.py`` will time (every style), compiled by nvcc into
  singe's content-addressed build cache (``SINGE_CACHE``).  With the same nvcc there, nothing is
  compiled on the device.
- ``shared/mechanisms/``: the shared mechanisms named (copied to ``../shared`` there).
- ``wheels/``: the pure-Python packages the device image lacks (PLY).
- ``probe``: ``autotune/probes/named_barrier_race.cu`` built for the arch.  Under racecheck it shows
  whether the tool orders shared accesses by named barriers.
- ``mio``: ``autotune/probes/mio_throughput.cu``: what an SM sustains of LDS.64, of LDC.64 at warp-dependent
  indices and of constant-bank operands, feeding DFMA (the timing model's prices of the warp-specialized
  kernels' shared and constant loads), STS.64, LDS.64 and LDS.128 at a warp-uniform address (a constant table
  in shared memory), LDS.128 of two doubles a lane (a Wilke loop's two lane values of one species in one
  load), and the latency of a dependent LDS.64 and LDC.64.
- ``fetch``: ``autotune/probes/fetch_probe.cu``: the issue rate of straight-line code of 16-256 KB, run by
  every warp or split among them (what code beyond the instruction cache costs: the model's
  ``Target.unshared_fetch`` and ``shared_fetch``, measured on the H200).
- ``variants/``: command lines of configurations beyond the paper's and the defaults, timed with them
  (``VARIANTS``: GRI-Mech diffusion and viscosity at the defaults; viscosity at 8 warps in Wilke pairs, the
  former defaults; DME viscosity at 10x4 and 6 warps, its fastest settings measured, and at 10x4 and 5x6 with
  ``--constant-table bank``, at 5x8 with the bank in groups of 6 and with ``--replicate-ln-t`` there and at 10x4
  with the bank; ``--prefetch`` on DME viscosity, n-heptane diffusion and DME chemistry; DME and n-heptane
  chemistry with ``--products cantera``; n-heptane diffusion at 13x3 reading the table in place, the partial
  copy's control).
- ``session.sh``: what every script on the device does first (the wheels, the build cache, the mechanisms, the
  step mark); ``run.sh`` sources it, and a script written for one question should too.
- ``run.sh``: the session, in order of worth, each step under its own time limit, output in ``$OUT``:
  1. the timing run (gpu_bench, no sanitizer), then the variants' warp-specialized kernels;
  2. compute-sanitizer racecheck and synccheck of every warp-specialized kernel at 65,536 points;
  3. the probe under racecheck;
  4. the load-throughput probe, and the latency of a dependent LDS.64 and LDC.64; the fetch probe (16-256 KB
     of code, shared by the warps or one part per warp);
  5. ncu's issued instructions and stall reasons per kernel (first launch of each);
  6. the same of the variants' warp-specialized kernels (the fastest settings measured);
  7. ncu's stalls per SASS instruction of DME viscosity and chemistry (``NCU_SOURCE``), as a report and as CSV.
  (sm_90a's setmaxnreg budgets, timed on the H100 and the H200, no longer gain with the persistent grid: the step
  has left the kit.)

It prints the device call to make.  The folder is git-ignored; the tool carries it when ``carry`` names it.
"""

from __future__ import annotations

import argparse
import os
import pathlib
import shlex
import shutil
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parents[1]
PROBES = {"probe": ROOT / "autotune" / "probes" / "named_barrier_race.cu",
          "mio": ROOT / "autotune" / "probes" / "mio_throughput.cu",
          "fetch": ROOT / "autotune" / "probes" / "fetch_probe.cu",
          "local": ROOT / "autotune" / "probes" / "local_latency.cu"}  # kit file -> source
WHEELS = ("ply==3.11",)
SANITIZER_POINTS = 65536
NCU_POINTS = 262144
NCU_METRICS = ("smsp__inst_executed.sum", "smsp__sass_thread_inst_executed_op_dfma_pred_on.sum",
               "smsp__sass_thread_inst_executed_op_dadd_pred_on.sum",
               "smsp__sass_thread_inst_executed_op_dmul_pred_on.sum", "smsp__cycles_active.avg",
               "smsp__average_warps_issue_stalled_barrier_per_issue_active.ratio",
               "smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active.ratio",
               "smsp__average_warps_issue_stalled_short_scoreboard_per_issue_active.ratio",
               "smsp__average_warps_issue_stalled_wait_per_issue_active.ratio",
               "smsp__average_warps_issue_stalled_math_pipe_throttle_per_issue_active.ratio",
               "smsp__average_warps_issue_stalled_mio_throttle_per_issue_active.ratio",
               "smsp__average_warps_issue_stalled_no_instruction_per_issue_active.ratio",
               "smsp__average_warps_issue_stalled_not_selected_per_issue_active.ratio",
               "smsp__average_warps_issue_stalled_dispatch_stall_per_issue_active.ratio")
# seconds per step on the device (a 15-minute lease: ~1 minute to start, the rest here).  Measured: the timing
# run's 32 configurations took 193 s on the H100 (docs/measurements/2026-11-27-h100); on the H200
# (2026-11-27-h200) 26 of 30 took 210 s, and the step was stopped there: the paper's settings and the defaults
# (24) now have 220 s, the variants (warp-specialized only) 50 s.
# The variants (eight: the constant table through the constant cache, four Wilke sums a group, fewer warps) took 35 s
# from the sanitizer's 100 and 10 from ncu's of the variants; DME diffusion at 3 warps (spills against occupancy,
# answered in three kernels on the H200) left them.
# The symmetric form's baseline (its own step: the variants time warp-specialized kernels only) took 15 s of the
# variants' profile (2026-11-28, untimed).
LIMITS = {"timing": 220, "variants": 95, "symmetric_baseline": 15, "sanitizer": 65, "probe": 30, "mio": 10, "fetch": 15,
          "local": 15, "ncu": 60, "ncu_variants": 15, "ncu_source": 30}
NCU_SOURCE = ("dme", "viscosity,chemistry")  # (mechanisms, kernels) whose stalls ncu gives per SASS instruction
STEP_MARK = "== "  # run.sh's step() prints "== HH:MM:SS name" before each step
RACE_MODES = ("arrive", "sync", "none", "chain", "war", "many", "slabs")  # of the racecheck probe (named_barrier_race.cu)
SYMMETRIC_BASELINE = "dme_viscosity_6x4_lnt_sym"
"""The variant whose tuned baseline (``gpu_bench`` style 'tuned-baseline': the symmetric form's triangle,
``singe.baseline_kernel``) the kit times: the paper's settings time the row form's only, and every symmetric
variant has the same baseline."""
VARIANTS = {  # name -> a singe command line (gpu_bench --sweep-best reads it), timed warp-specialized, in this order
    # GRI-Mech diffusion at the defaults (the copy at 4 CTAs planned, 2 resident: 190.5-192.0 Mpoints/s on the H200;
    # planned at 2 and 3 it ran at 142.0-143.0 and 153.2, docs/measurements/2026-11-27-h200-stripes).
    "gri30_diffusion_8": "singe gri30 --kernels diffusion --warps 8",
    # Viscosity and its Wilke groups (transport.balanced_wilke_group).  Since 2026-11-27 (night) the defaults (8 warps,
    # which divide none of DME's 30, n-heptane's 52 and GRI-Mech's 53 species) take one sum a warp, in groups of 4,
    # 7 and 7; the pairs are the former defaults, the rule's control (untimed on a GPU when it was made: the
    # sm_90 SASS walk issues 7,933 -> 7,352, 31,636 -> 20,701 and 31,142 -> 19,966 per point).  DME and n-heptane
    # at the defaults are in the timing step; GRI-Mech's is here.
    "gri30_viscosity_8": "singe gri30 --kernels viscosity --warps 8",
    "dme_viscosity_8_pairs": "singe dme.inp --kernels viscosity --warps 8 --wilke-group 2",
    "heptane_viscosity_8_pairs": "singe heptane.inp --kernels viscosity --warps 8 --wilke-group 2",
    "gri30_viscosity_8_pairs": "singe gri30 --kernels viscosity --warps 8 --wilke-group 2",
    # --prefetch (each slab prefetches the next one's inputs into the L1; untimed when it was made): ncu put 10 % of
    # DME viscosity's stall samples on a DMUL waiting for its mass fraction's LDG and 15 % on the LDG after the
    # end-of-slab barrier (docs/measurements/2026-11-27-h200-copy, run 1).  DME viscosity at its best setting
    # measured, 10x4 (0.96x its baseline), with and without; the paper's DME viscosity, n-heptane diffusion (1.04x)
    # and DME chemistry with it (their controls are the timing step's paper settings).
    "dme_viscosity_10x4": "singe dme.inp --kernels viscosity --warps 10 --ctas-per-sm 4",
    # DME viscosity, the one kernel below its baseline at the paper's setting (0.82x), with fewer warps: since
    # singe_exp's constants come from the constant bank (2026-11-28, untimed), 10x4 issues 6,556 instructions a
    # point and 6 warps (5 CTAs chosen, groups of 5) 6,131, below the baseline's 6,886 (the sm_90 walk; 7,092 and
    # 6,668 when 10x4 ran at 0.96x and 6 warps at 2,144 Mpoints/s, docs/measurements/2026-11-27-h200-stripes).
    "dme_viscosity_6": "singe dme.inp --kernels viscosity --warps 6",
    # --constant-table bank (2026-11-28, untimed): the Wilke sums once per warp, their constants read by ULDC.64 at a
    # uniform index, off the load queue, which ncu found the warps waiting in (short scoreboard and MIO throttle).
    # The model (H100 preset) puts 10x4 at 3,585 Mpoints/s against 2,703 reading the copy, and 5 warps (6 CTAs) at
    # 3,778, its best setting; the sm_90 walk issues 7,925 and 6,556 (copy) instructions a point at 10x4.
    "dme_viscosity_10x4_bank": "singe dme.inp --kernels viscosity --warps 10 --ctas-per-sm 4 --constant-table bank",
    "dme_viscosity_5x6_bank": "singe dme.inp --kernels viscosity --warps 5 --ctas-per-sm 6 --constant-table bank",
    # --replicate-ln-t (2026-11-28, untimed): every warp computes ln T, a sync point less a slab.  The model (H100
    # preset, ptxas and the paces) puts the best setting of the sweeps, 5x8 with the bank in groups of 6, at 3,875
    # Mpoints/s with ln T shared and 4,018 replicated (barrier waits 4.3 % -> 0.8 % of the slab), 10x4 with the
    # bank at 3,679 and 3,971; the tuned baseline at 4,175.  ptxas spills 4 B at 5x8 with ln T replicated (sm_90).
    "dme_viscosity_5x8_bank_g6": "singe dme.inp --kernels viscosity --warps 5 --ctas-per-sm 8 --constant-table bank "
                                 "--wilke-group 6",
    "dme_viscosity_5x8_bank_g6_lnt": "singe dme.inp --kernels viscosity --warps 5 --ctas-per-sm 8 --constant-table "
                                     "bank --wilke-group 6 --replicate-ln-t",
    "dme_viscosity_10x4_bank_lnt": "singe dme.inp --kernels viscosity --warps 10 --ctas-per-sm 4 --constant-table bank "
                                   "--replicate-ln-t",
    # --wilke-symmetric (2026-11-28, untimed): each unordered pair's factor once, added into both species' sums; its
    # tuned baseline is the symmetric triangle, which the model puts above the row form's (H100 preset 5,223 against
    # 4,175 Mpoints/s; A100 1,579 against 1,275).  The sweeps' best settings: 8x4 with the bank on the H100 preset
    # (3,751), 6x4 on the A100's (1,383, against the row form's best 1,249), both with ln T replicated.
    "dme_viscosity_8x4_bank_lnt_sym": "singe dme.inp --kernels viscosity --warps 8 --ctas-per-sm 4 --constant-table "
                                      "bank --replicate-ln-t --wilke-symmetric",
    "dme_viscosity_6x4_lnt_sym": "singe dme.inp --kernels viscosity --warps 6 --ctas-per-sm 4 --replicate-ln-t "
                                 "--wilke-symmetric",
    "dme_viscosity_10x4_prefetch": "singe dme.inp --kernels viscosity --warps 10 --ctas-per-sm 4 --prefetch",
    "dme_viscosity_15x3_prefetch": "singe dme.inp --kernels viscosity --warps 15 --ctas-per-sm 3 --prefetch",
    "heptane_diffusion_13x3_prefetch": "singe heptane.inp --kernels diffusion --warps 13 --ctas-per-sm 3 --prefetch",
    "dme_chemistry_8x2q4_prefetch": "singe dme.inp --kernels chemistry --warps 8 --qssa-warps 4 --ctas-per-sm 2 "
                                    "--prefetch",
    # --products cantera (2026-11-28, untimed): Cantera's sign guard on products of negative concentrations.  The
    # sm_90 walk issues 7 % more instructions a point at the paper's settings (DME 20,128 -> 21,536, n-heptane
    # 28,128 -> 30,048), and the model puts DME at 0.86 of its baseline on the H100 preset against 1.01.  The
    # states drawn have no negative fraction, so the guard's selects run without zeroing a rate: its cost is
    # timed, beside the timing step's kernels at the same settings without it.
    "dme_chemistry_8x2q4_cantera": "singe dme.inp --kernels chemistry --warps 8 --qssa-warps 4 --ctas-per-sm 2 "
                                   "--products cantera",
    "heptane_chemistry_16x1q2_cantera": "singe heptane.inp --kernels chemistry --warps 16 --qssa-warps 2 "
                                        "--ctas-per-sm 1 --products cantera",
    # The partial copy (codegen.partial_copy; untimed when it was made): n-heptane diffusion at the paper's 13x3
    # copies 13 of its 14 stripes a warp (the whole copy does not fit at 3 CTAs); read in place it ran at 1.04x
    # its baseline, 3.37x at 13x2 with the whole copy.  The timing step has the partial copy; this is its control.
    "heptane_diffusion_13x3_cache": "singe heptane.inp --kernels diffusion --warps 13 --ctas-per-sm 3 "
                                    "--constant-table cache",
}


def bench_arguments(args) -> list[str]:
    """gpu_bench's selection of the timing run, the same here (compiling) and there (timing): ``args.settings``
    and the sweeps' best, every style."""
    words = ["--mechanisms", args.mechanisms, "--kernels", args.kernels, "--settings", args.settings,
             "--arch", args.arch]
    for path in args.sweep_best or []:
        words += ["--sweep-best", str(path)]
    return words


def variants_arguments(args, variants: list) -> list[str]:
    """gpu_bench's selection of ``variants`` (the files of ``write_variants``, as each side names them), the
    warp-specialized kernels only: a baseline does not depend on the warps or the CTAs per SM, and the timing
    run times each one at the paper's settings."""
    return ["--settings", "", "--arch", args.arch, "--styles", "warp-specialized",
            *[word for path in variants for word in ("--sweep-best", str(path))]]


def symmetric_baseline_arguments(args, variants: list) -> list[str]:
    """gpu_bench's selection of the symmetric form's baseline: the tuned baseline of ``SYMMETRIC_BASELINE`` (of
    ``variants``, as each side names them)."""
    path = next((p for p in variants if pathlib.Path(p).stem == SYMMETRIC_BASELINE), None)
    if path is None:
        raise ValueError(f"the kit's variants have no {SYMMETRIC_BASELINE}: write_variants writes it")
    return ["--settings", "", "--arch", args.arch, "--styles", "tuned-baseline", "--sweep-best", str(path)]


def gpu_bench(words: list[str]) -> str:
    """The session script's gpu_bench command of ``words``."""
    return f"python3 -m autotune.gpu_bench {shlex.join(words)}"


def write_variants(folder: pathlib.Path) -> list[pathlib.Path]:
    """``VARIANTS`` as files in the kit (of the mechanisms copied into it)."""
    (folder / "variants").mkdir(parents=True, exist_ok=True)
    paths = []
    for name, line in VARIANTS.items():
        path = folder / "variants" / f"{name}.txt"
        path.write_text(line + "\n")
        paths.append(path)
    return paths


def paper_arguments(args, mechanisms: str, kernels: str, *defines: str) -> list[str]:
    """gpu_bench's selection of the warp-specialized kernels of ``mechanisms`` x ``kernels`` at the paper's
    settings, for the kit's arch, with nvcc's ``defines``."""
    words = ["--mechanisms", mechanisms, "--kernels", kernels, "--settings", "paper", "--arch", args.arch,
             "--styles", "warp-specialized"]
    for define in defines:
        words += ["--define", define]
    return words


def compile_into(folder: pathlib.Path, selection: list[str]) -> None:
    """The kernels gpu_bench selects, compiled into the kit's build cache."""
    from autotune import gpu_bench

    os.environ["SINGE_CACHE"] = str(folder / "cache")
    status = gpu_bench.main(["--compile-only", *selection, "--json", "", "--plot", ""])
    if status:
        raise SystemExit(f"device_kit: compiling {shlex.join(selection)} failed (gpu_bench exit {status})")


def copy_mechanisms(folder: pathlib.Path, names: list[str]) -> None:
    from autotune.bench import SHARED

    for name in names:
        source = SHARED / {"dodecane": "dodecane_qss"}.get(name, name)
        if source.is_dir():
            shutil.copytree(source, folder / "shared" / "mechanisms" / source.name, dirs_exist_ok=True)


def download_wheels(folder: pathlib.Path) -> None:
    done = subprocess.run([sys.executable, "-m", "pip", "download", "--no-deps", "-q", "-d", str(folder / "wheels"),
                           *WHEELS], capture_output=True, text=True)
    if done.returncode:
        raise SystemExit(f"device_kit: pip could not fetch {', '.join(WHEELS)} (a package registry is needed "
                         f"once):\n{done.stderr.strip()[-800:]}")


def build_probes(folder: pathlib.Path, arch: str) -> None:
    from singe.codegen.nvcc import find_nvcc

    nvcc = find_nvcc()
    if nvcc is None:
        raise SystemExit("device_kit: nvcc not found: the kit is built with the CUDA toolkit")
    for name, source in PROBES.items():
        subprocess.run([nvcc, f"-arch={arch}", "-O3", "-o", str(folder / name), str(source)], check=True)


def kit_path(folder: pathlib.Path) -> pathlib.Path:
    """The kit's folder as the session script names it: from the repository root, which the device's copy shares."""
    return folder.relative_to(ROOT) if folder.is_relative_to(ROOT) else folder


def session_script(folder: pathlib.Path) -> str:
    """What every script run on the device needs first, as bash to source from the repository root there
    (``session.sh``: ``run.sh`` sources it, and so does a script written for one question): the kit's wheels on
    the path, its build cache, the shared mechanisms beside the checkout, the step mark and the device's name."""
    kit = kit_path(folder)
    return "\n".join([
        f"# written by autotune/device_kit.py; source it from the repository root: source {kit}/session.sh",
        "export PYTHONUNBUFFERED=1",
        f"python3 -m pip install -q --no-index --no-deps --target /tmp/site {kit}/wheels/*.whl || exit 1",
        f'export PYTHONPATH=/tmp/site:$PWD SINGE_CACHE=$PWD/{kit}/cache',
        f"mkdir -p ../shared && cp -r {kit}/shared/mechanisms ../shared/",
        "nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm --format=csv,noheader; nvcc --version | tail -1",
        f'step() {{ echo "{STEP_MARK}$(date +%T) $1"; }}', ""])


def run_script(folder: pathlib.Path, args, variants: list[pathlib.Path] = ()) -> str:
    """The device session, as bash, run from the repository root there (after ``session_script``)."""
    kit = kit_path(folder)
    bench = gpu_bench(bench_arguments(args))
    paper = gpu_bench(paper_arguments(args, args.mechanisms, args.kernels))
    variants_bench = gpu_bench(variants_arguments(args, [kit_path(v) for v in variants]))
    symmetric = gpu_bench(symmetric_baseline_arguments(args, [kit_path(v) for v in variants]))
    metrics = ",".join(NCU_METRICS)
    return "\n".join([
        "#!/bin/bash",
        f"# written by autotune/device_kit.py; run from the repository root: bash {kit}/run.sh",
        'exec > >(tee "$OUT/log.txt") 2>&1',
        f"source {kit}/session.sh",
        "step 'timing'",
        f"timeout {LIMITS['timing']} {bench} --points {args.points} --no-sanitizer "
        '--json "$OUT/timing.json" --plot "$OUT/timing.png"',
        "step 'timing: the variants, warp-specialized'",
        f"timeout {LIMITS['variants']} {variants_bench} --points {args.points} --no-sanitizer "
        '--json "$OUT/variants.json" --plot ""',
        "step 'timing: the baseline of the symmetric form'",
        f"timeout {LIMITS['symmetric_baseline']} {symmetric} --points {args.points} --no-sanitizer "
        '--json "$OUT/symmetric_baseline.json" --plot ""',
        "step 'compute-sanitizer, warp-specialized kernels, paper settings'",
        f"timeout {LIMITS['sanitizer']} {paper} --points {SANITIZER_POINTS} "
        '--json "$OUT/sanitizer.json" --plot ""',
        "step 'racecheck probe: named barriers'",
        f"for mode in {' '.join(RACE_MODES)}; do timeout {LIMITS['probe'] // len(RACE_MODES)} "
        "compute-sanitizer --tool racecheck "
        f"{kit}/probe $mode 2>&1 | grep -E 'probe|hazard|SUMMARY'; done",
        "step 'load probe: LDS.64, LDC.64, constant-bank operands; latency of dependent loads'",
        f"timeout {LIMITS['mio']} {kit}/mio",
        "step 'fetch probe: code beyond the instruction cache'",
        f"timeout {LIMITS['fetch']} {kit}/fetch",
        "step 'local probe: latency of a dependent load of local memory (a spill)'",
        f"timeout {LIMITS['local']} {kit}/local",
        "step 'ncu: instructions and stall reasons, first launch of each kernel'",
        "mkdir -p /tmp/ncu",
        f"timeout {LIMITS['ncu']} ncu --kernel-id '::regex:_kernel$:1' --csv --log-file /tmp/ncu/ncu.csv "
        f"--metrics {metrics} {bench} --points {NCU_POINTS} --no-sanitizer --json '' --plot ''",
        "step 'ncu: instructions and stall reasons of the variants'",
        f"timeout {LIMITS['ncu_variants']} ncu --kernel-id '::regex:_kernel$:1' --csv "
        f"--log-file /tmp/ncu/ncu_variants.csv --metrics {metrics} {variants_bench} --points {NCU_POINTS} "
        "--no-sanitizer --json '' --plot ''",
        "step 'ncu: stalls per SASS instruction, DME viscosity and chemistry'",
        f"timeout {LIMITS['ncu_source']} ncu --kernel-id '::regex:_kernel$:1' --section WarpStateStats "
        f"--section SourceCounters -o /tmp/ncu/source {gpu_bench(paper_arguments(args, *NCU_SOURCE))} "
        f"--points {NCU_POINTS} --no-sanitizer "
        "--json '' --plot ''",
        "ncu --import /tmp/ncu/source.ncu-rep --page source --csv --print-source sass > /tmp/ncu/source.csv",
        'tar czf "$OUT/ncu.tgz" -C /tmp ncu  # one file: the device returns at most 8',
        "step done", ""])


def step_output(log: str, name: str) -> str:
    """What step ``name`` of a session's log (run.sh's ``$OUT/log.txt``) printed, up to the next step."""
    lines, inside = [], False
    for line in log.splitlines():
        if line.startswith(STEP_MARK) and line[len(STEP_MARK) + 8:9 + len(STEP_MARK)] == " ":  # after HH:MM:SS
            inside = line[len(STEP_MARK) + 9:] == name
            continue
        if inside:
            lines.append(line)
    return "\n".join(lines)


def parse_arguments(argv):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--folder", default=str(ROOT / ".device_kit"))
    parser.add_argument("--mechanisms", default="dme,heptane")
    parser.add_argument("--kernels", default="viscosity,diffusion,chemistry")
    parser.add_argument("--settings", default="paper,defaults")
    parser.add_argument("--arch", default="sm_90")
    parser.add_argument("--sweep-best", action="append", metavar="FILE")
    parser.add_argument("--points", type=int, default=2097152)
    return parser.parse_args(argv)


def main(argv=None) -> int:
    args = parse_arguments(argv)
    folder = pathlib.Path(args.folder).resolve()
    folder.mkdir(parents=True, exist_ok=True)
    shutil.rmtree(folder / "cache", ignore_errors=True)  # only this kit's kernels travel, not an earlier kit's
    variants = write_variants(folder)
    compile_into(folder, bench_arguments(args))
    compile_into(folder, variants_arguments(args, variants))
    copy_mechanisms(folder, args.mechanisms.split(","))
    download_wheels(folder)
    build_probes(folder, args.arch)
    (folder / "session.sh").write_text(session_script(folder))
    script = folder / "run.sh"
    script.write_text(run_script(folder, args, variants))
    size = sum(f.stat().st_size for f in folder.rglob("*") if f.is_file())
    kit = kit_path(folder)
    print(f"kit ready: {kit} ({size / 2 ** 20:.1f} MiB; the device carries at most 64 MiB with the checkout)")
    print(f"device call: run(command='bash {kit}/run.sh', carry=['{kit}'], timeout_s={sum(LIMITS.values()) + 30})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
