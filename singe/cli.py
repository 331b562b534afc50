"""The ``singe`` command: the only place that prints or exits."""

from __future__ import annotations

import argparse
import os
import pathlib
import shutil
import sys
import time
from collections import Counter

from singe.bundled import bundled_names, resolve_mechanism
from singe.version import __version__
from singe.errors import OptionError, SingeInputError
from singe.frontend import load_mechanism
from singe.mechanism import Mechanism
from singe.kernels.registry import KERNELS, default_kernels, kernel_spec
from singe.options import CONSTANT_TABLES, DEFAULT_PRODUCTS, DISPATCHES, FORMS, PLACEMENTS, PRODUCTS, CompileOptions
from singe.targets import TARGETS

DUMPS = ("graph", "mapping", "schedule")


class _Parser(argparse.ArgumentParser):
    """argparse that reports a bad option in one line with exit status 2."""

    def error(self, message):
        self.exit(2, f"singe: error: {message}\n")


def _weights(text: str) -> tuple[float, float, float]:
    try:
        values = tuple(float(v) for v in text.split(","))
    except ValueError:
        raise argparse.ArgumentTypeError(f"weights must be three numbers like 1,0.5,1: {text!r}") from None
    if len(values) != 3:
        raise argparse.ArgumentTypeError(f"weights must be three numbers (flops,registers,locality): {text!r}")
    return values  # type: ignore[return-value]


def _kernels(text: str) -> list[str]:
    names = [k.strip() for k in text.split(",") if k.strip()]
    try:
        for name in names or [text]:
            kernel_spec(name)
    except OptionError as error:
        raise argparse.ArgumentTypeError(str(error)) from None
    return names


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="singe", description="Compile a CHEMKIN mechanism into warp-specialized GPU kernels.")
    parser.add_argument("--version", action="version", version=f"singe {__version__}")
    parser.add_argument("mechanism", help="CHEMKIN reaction file, Cantera YAML file, or a bundled mechanism: "
                        + ", ".join(bundled_names()))
    parser.add_argument("--thermo", help="THERMO file (default: therm.dat beside the mechanism, or embedded)")
    parser.add_argument("--transport", help="TRANSPORT file (default: tran.dat beside the mechanism, or embedded)")
    parser.add_argument("--qss", help="QSSA/STIFF species list (default: <stem>.qss beside the mechanism)")
    parser.add_argument("--phase", help="the gas phase of a Cantera YAML file (default: its first ideal-gas phase)")
    parser.add_argument("--permissive", action="store_true",
                        help="accept what ck2yaml --permissive accepts (duplicate thermo entries: the first is "
                             "kept; duplicate species declarations), with a warning for each")
    parser.add_argument("-o", "--output", default=".", help="directory for the .cu and .h files (default: .)")
    parser.add_argument("--kernels", type=_kernels, help="kernels to compile (default: every kernel the "
                        "mechanism supports)")
    parser.add_argument("--warps", type=int, default=8, help="warps per CTA (default 8)")
    for kernel in KERNELS:
        parser.add_argument(f"--{kernel}-warps", type=int, metavar="N", help=f"warps of the {kernel} kernel")
    parser.add_argument("--qssa-warps", type=int, default=1, metavar="N",
                        help="warps of the chemistry kernel that take the QSSA computation (default 1)")
    parser.add_argument("--ctas-per-sm", type=int, default=None,
                        help="target CTAs per SM (default: the most the register plan and shared memory allow "
                             "without spills; where the plan's estimate is unchecked, diffusion turns wider than 7 "
                             "columns a warp or chemistry below 6 warps, settled by ptxas when nvcc is installed; "
                             "a count given where registers may spill is checked by ptxas)")
    parser.add_argument("--arch", choices=sorted(TARGETS), default="sm_90")
    parser.add_argument("--weights", type=_weights, default=CompileOptions().weights,
                        help="mapping weights flops,registers,locality (default 1,0.5,1)")
    parser.add_argument("--placement", choices=PLACEMENTS, default="auto")
    parser.add_argument("--form", choices=FORMS, default="auto",
                        help="the chemistry kernel unrolled (one operation per reaction) or as tables the kernel "
                             "loops over (detailed mechanisms); default: chosen from the mechanism's size")
    parser.add_argument("--viscosity-dispatch", choices=DISPATCHES[1:], default=None,
                        help="the viscosity kernel's body as code shared between warps ('overlay', the "
                             "default: constants at warp-dependent indices) or one switch case per warp "
                             "('switch': each warp's own code, its constants at indices ptxas knows, ~5x the code; "
                             "measured 3.4x slower on an H100 at the paper's settings)")
    parser.add_argument("--constant-table", choices=CONSTANT_TABLES, default="auto",
                        help="where kernels the overlay lays out (viscosity, diffusion, conductivity) read their "
                             "per-warp constants: from a copy in shared memory each warp makes before its first "
                             "slab ('shared': a warp-uniform LDS, two constants of a loop iteration per LDS.128), "
                             "through the constant cache ('cache': an LDC.64 each), or 'auto' (the default): the "
                             "copy where it fits beside the exchange slots at the CTAs per SM, or, where singe "
                             "chooses them and the reads in place would miss the constant cache, at the CTAs per SM "
                             "that hold it, or its first stripes where those fit and hold every constant its loops "
                             "read, the rest through the cache; else the cache), or 'bank': the code of each loop "
                             "once per warp, its constants read from the constant bank at indices ptxas knows "
                             "(ULDC.64, off the load queue; untimed on a GPU)")
    _add_viscosity_arguments(parser)
    parser.add_argument("--prefetch", action="store_true",
                        help="each slab prefetches the next slab's inputs into the L1 (one 128-byte line a lane), "
                             "so that its global loads need not wait on DRAM; not yet timed on a GPU (the table "
                             "form of chemistry does not prefetch)")
    parser.add_argument("--products", choices=PRODUCTS, default=DEFAULT_PRODUCTS,
                        help="how the chemistry kernel multiplies negative concentrations, which a solver's step "
                             "leaves: 'chemkin' (the default) as they are, as CHEMKIN, S3D and Pele do; 'cantera' "
                             "as Cantera does: 0 where two factors of up to three are negative (or one of more), so "
                             "that two negative concentrations never make a positive rate (a select more a "
                             "reaction direction).  The two agree wherever no concentration is negative")
    parser.add_argument("--baseline", action="store_true", help="also write the data-parallel kernels")
    parser.add_argument("--validate", nargs="?", const="simulator", choices=("simulator", "host"),
                        help="run the kernels on random states — their warp programs in the simulator "
                             "(default) or the emitted CUDA on the CPU ('host') — and compare with Cantera "
                             "(transport) or singe.reference (chemistry)")
    parser.add_argument("--dump", choices=DUMPS, help="print an intermediate representation instead of code")
    parser.add_argument("--fortran", action="store_true", help="also write <mech>_<kernel>.f90 (a bind(C) module "
                        "for the launcher) and <mech>_species.f90")
    parser.add_argument("--write-reference", metavar="STATES",
                        help="also write <mech>_<kernel>.ref, the outputs singe.reference computes at STATES: a "
                             "state file, or a number of random states to draw (written to <mech>_states.dat)")
    return parser


def _add_viscosity_arguments(parser: argparse.ArgumentParser) -> None:
    """The options of the viscosity kernel's graph: its Wilke groups, ln T, and its symmetric form."""
    parser.add_argument("--wilke-group", type=int, default=None, metavar="N",
                        help="outer species per Wilke sum of the viscosity kernel: a warp reads each inner "
                             "species' two values once per N sums (default: one sum a warp, the species over the "
                             "warps rounded up, e.g. 7 for 52 species at 8 warps; two sums a warp where that is "
                             "above 8; 2 where it is below 3; more: fewer shared-memory loads, more registers)")
    parser.add_argument("--replicate-ln-t", action="store_true",
                        help="every warp of the viscosity kernel computes ln T itself, instead of one warp sharing "
                             "it through shared memory: a sync point less a slab, a log more a warp (DME at 5 warps "
                             "x 8 CTAs with --constant-table bank: modeled 0.93 -> 0.96 of the row form's baseline on "
                             "the H100 preset; untimed on a GPU)")
    parser.add_argument("--wilke-symmetric", action="store_true",
                        help="the viscosity kernel's symmetric form: each unordered pair's symmetric factor computed "
                             "once and added into both species' sums, each warp a band of adjacent columns (2.5 FP64 "
                             "instructions an ordered pair against 3, no square roots; untimed on a GPU); no "
                             "--wilke-group with it")


def describe(mech: Mechanism, seconds: float) -> str:
    """The summary the command prints for a mechanism."""
    kinds = Counter(r.kind for r in mech.reactions)
    rev = sum(r.reverse_rate is not None for r in mech.reactions)
    lines = [
        f"{mech.name}: {mech.n_species} species ({len(mech.transported_species)} transported, "
        f"{len(mech.qss_species)} QSSA, {len(mech.stiff_species)} stiff), {len(mech.reactions)} reactions "
        f"(parsed in {seconds:.2f} s)",
        "  reactions: " + (", ".join(f"{n} {k}" for k, n in sorted(kinds.items())) or "none")
        + f"; {rev} with explicit REV",
        f"  transport data: {'complete' if mech.has_transport else 'missing (no viscosity/diffusion kernels)'}",
        "  files: " + ", ".join(mech.sources),
    ]
    return "\n".join(lines)


def _options(args, kernel: str) -> CompileOptions:
    warps = getattr(args, f"{kernel}_warps")
    warps = args.warps if warps is None else warps
    qssa_warps = args.qssa_warps if kernel_spec(kernel).qssa else 1
    return CompileOptions(warps=warps, ctas_per_sm=args.ctas_per_sm, arch=args.arch, weights=args.weights,
                          placement=args.placement, qssa_warps=qssa_warps,
                          form=args.form if kernel == "chemistry" else "auto",
                          dispatch=(args.viscosity_dispatch if kernel == "viscosity" else None) or "auto",
                          constant_table=args.constant_table,
                          prefetch=args.prefetch,
                          **kernel_spec(kernel).graph_settings(wilke_group=args.wilke_group,
                                                               replicate_ln_t=args.replicate_ln_t,
                                                               wilke_symmetric=args.wilke_symmetric,
                                                               products=args.products))


def setmaxnreg_note(plan) -> str:
    """' (setmaxnreg per warpgroup 72/56)' for a plan with warpgroup budgets (sm_90a), else ''."""
    return f" (setmaxnreg per warpgroup {'/'.join(map(str, plan.warp_budgets[::4]))})" if plan.warp_budgets else ""


def _table_note(compiled, info) -> str:
    """Where the kernel reads its constant table, when it has a copy or ``auto`` declined one."""
    if info.copies_part:
        return (f" ({info.table_copy_bytes} B of them the constant table's copy, its first {info.copied_stripes} of "
                f"{info.stripes} stripes a warp: the whole does not fit beside the slots at "
                f"{compiled.options.ctas_per_sm} CTAs per SM)")
    if info.table_copy_bytes:
        return f" ({info.table_copy_bytes} B of them the constant table's copy)"
    if compiled.programs.constant_table == "auto":  # the overlay's (a switch reads its table in place)
        from singe.codegen import copied_shared_bytes

        ctas = compiled.options.ctas_per_sm
        resident = compiled.options.target.resident_ctas(ctas, copied_shared_bytes(compiled.programs))
        shared = f"; --constant-table shared copies it, {resident} of them resident" if resident else ""
        return f" (the constant table read in place: its copy does not fit beside the slots at {ctas} CTAs per SM{shared})"
    return ""


def _ctas_text(compiled, shared_bytes: int) -> str:
    """'4 CTAs per SM', and how many of them are resident where their shared memory holds fewer."""
    ctas = compiled.options.ctas_per_sm
    text = f"{ctas} CTA{'s' if ctas != 1 else ''} per SM"
    resident = compiled.options.target.resident_ctas(ctas, shared_bytes)
    return text if resident == ctas else f"{text} ({resident} resident: their shared memory)"


def kernel_line(compiled, generated, seconds: float) -> str:
    """One line per kernel: the numbers a GPU engineer checks first."""
    from singe.codegen import emitted_plan, lay_out

    programs = compiled.programs
    info = generated.info
    if compiled.form == "tables":
        return table_kernel_line(compiled, generated, seconds)
    shared = programs.shared_bytes + info.table_copy_bytes
    line = (f"{generated.cu_name}: {programs.warps} warps x {_ctas_text(compiled, shared)}, "
            f"{len(compiled.graph.operations)} operations, "
            f"{len(programs.barrier_ids)} named barriers ({len(programs.sync_points)} sync points), "
            f"{shared} B shared{_table_note(compiled, info)}, "
            f"{info.stripes} constants per thread "
            f"({info.register_stripes} in registers), ~{emitted_plan(programs.plan, lay_out(programs)).predicted} "
            f"registers{setmaxnreg_note(programs.plan)} [{seconds:.2f} s]")
    for warning in programs.plan.warnings(programs.warps, _more_warps(compiled)):
        line += f"\n  warning: {warning}"
    return line


def _more_warps(compiled) -> int | None:
    """Warps per CTA that avoid the predicted spills, when fewer CTAs per SM do not (else None)."""
    from singe.compiler import warps_avoiding_spills

    plan = compiled.programs.plan
    if not plan.spilled or plan.ctas_avoiding_spills() is not None:
        return None
    return warps_avoiding_spills(compiled)


def table_kernel_line(compiled, generated, seconds: float) -> str:
    """The kernel line of the table-form chemistry kernel."""
    tables, programs = compiled.tables, compiled.programs
    return (f"{generated.cu_name}: table form, {programs.warps} warps, {tables.n_species} species, "
            f"{tables.n_rows} reaction rows, {generated.info.table_entries} table entries, "
            f"{generated.info.shared_bytes} B shared, {programs.slot_bytes} B workspace per CTA (global memory), "
            f"~{programs.plan.predicted} registers, "
            f"{len(generated.cu) / 1e6:.2f} MB [{seconds:.2f} s]")


def is_large(mech: Mechanism) -> bool:
    """Mechanisms whose compilation takes long enough to report each stage."""
    from singe.kernels.table_form import large

    return large(mech)


def _progress(kernel: str):
    """A progress callback printing each stage of ``kernel`` as it finishes."""
    def report(stage: str, seconds: float) -> None:
        print(f"  {kernel}: {stage} {seconds:.2f} s", flush=True)
    return report


def _settle(compiled, kernel: str, given: bool):
    """``singe.ptxas_check.settle_if_needed`` (``given``: the CTAs per SM were given, and are checked only),
    each ptxas run reported as it ends; None where nvcc fails (the plan's warning stands)."""
    from singe.ptxas_check import settle_if_needed

    def report(trial) -> None:
        print(f"  {kernel}: ptxas at {trial}", flush=True)
    try:
        return settle_if_needed(compiled, progress=report, given=given)
    except SingeInputError as error:  # nvcc's own line: an arch it does not know (k20c: sm_35)
        lines = [line.strip() for line in str(error).splitlines() if line.strip()]
        reason = next((line for line in lines if "fatal" in line), lines[-1])
        print(f"  {kernel}: ptxas did not check the CTAs per SM ({reason})")
        return None


def _dump(compiled, what: str) -> str:
    if compiled.form == "tables" and what != "schedule":
        return (f"{compiled.summary()}\n(the table form has no dataflow graph or mapping: its tables are read by "
                f"the warp programs that --dump schedule prints)")
    return str({"graph": compiled.graph, "mapping": compiled.mapping, "schedule": compiled.programs}[what])


def _compile_all(mech: Mechanism, args) -> None:
    from singe.codegen import generate, generate_baseline
    from singe.baseline import baseline_kernel
    from singe.compiler import compile_kernel

    progress = is_large(mech) and not args.dump
    for kernel in args.kernels or default_kernels(mech):
        start = time.perf_counter()
        compiled = compile_kernel(mech, kernel, options=_options(args, kernel),
                                  progress=_progress(kernel) if progress else None)
        settled = None if args.dump else _settle(compiled, kernel, given=args.ctas_per_sm is not None)
        compiled = settled.compiled if settled else compiled
        if args.dump:
            print(_dump(compiled, args.dump))
            continue
        emit = time.perf_counter()
        generated = generate(compiled)
        generated.write(args.output)
        if progress:
            _progress(kernel)("emit", time.perf_counter() - emit)
        print(kernel_line(compiled, generated, time.perf_counter() - start))
        if settled:
            print(f"  {settled.report()}")
        if args.baseline and compiled.form == "tables":
            print("  no data-parallel baseline of the table form (--form unrolled --baseline writes one)")
        elif args.baseline:
            baseline = generate_baseline(baseline_kernel(compiled))
            baseline.write(args.output)
            print(f"{baseline.cu_name}: data-parallel, {baseline.info.threads} threads per CTA, one point each")
        if args.fortran:
            _write_fortran(compiled, args)
        if args.validate:
            from singe.validate import validate
            print(f"  {validate(compiled, on=args.validate)} [{args.validate}]")


def _write_fortran(compiled, args) -> None:
    from singe.codegen import generate_fortran

    for baseline in (False, True) if args.baseline and compiled.form != "tables" else (False,):
        files = generate_fortran(compiled, baseline)
        for file_name, text in files.items():
            (pathlib.Path(args.output) / file_name).write_text(text)
        print(f"{', '.join(files)}: Fortran interface")


def _write_references(mech: Mechanism, args) -> None:
    from singe.statefile import write_reference_files

    kernels = args.kernels or default_kernels(mech)
    options = CompileOptions(products=args.products)
    for path in write_reference_files(mech, kernels, args.write_reference, args.output, options):
        print(f"{path.name}: {'states' if path.suffix == '.dat' else 'reference'}")


def check_arguments(args) -> None:
    """Every option problem, before a mechanism is read or a kernel compiled."""
    for kernel in KERNELS:
        _options(args, kernel)
    _check_output_directory(pathlib.Path(args.output))
    if args.validate == "host":
        from singe.host import COMPILER
        if shutil.which(COMPILER) is None:
            raise OptionError(f"--validate host needs a C++ compiler: '{COMPILER}' is not on PATH "
                              "(install g++, or name one with SINGE_HOST_CXX)")


def _check_output_directory(output: pathlib.Path) -> None:
    existing = output
    while not existing.exists() and existing != existing.parent:
        existing = existing.parent
    if not existing.is_dir():
        raise OptionError(f"-o {output}: {existing} is not a directory")
    if not os.access(existing, os.W_OK | os.X_OK):
        raise OptionError(f"-o {output}: {existing} is not writable")


CLI_HINTS = {f"pass {name}=...": f"use --{name} FILE" for name in ("thermo", "transport", "qss")}


def command_line_words(error: SingeInputError) -> str:
    """The error's text with the command's options where it names ``load_mechanism``'s keywords."""
    text = str(error)
    for keyword, option in CLI_HINTS.items():
        text = text.replace(keyword, option)
    return text


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        check_arguments(args)
        start = time.perf_counter()
        mech = load_mechanism(resolve_mechanism(args.mechanism), args.thermo, args.transport, args.qss,
                              permissive=args.permissive, phase=args.phase)
        for warning in mech.warnings:
            print(warning, file=sys.stderr)
        if not args.dump:
            print(describe(mech, time.perf_counter() - start), flush=True)
        _compile_all(mech, args)
        if args.write_reference and not args.dump:
            _write_references(mech, args)
    except SingeInputError as error:
        print(command_line_words(error), file=sys.stderr)
        return 2
    except OSError as error:
        print(f"singe: error: {error}", file=sys.stderr)
        return 2
    return 0
