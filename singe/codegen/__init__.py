"""Code generation: warp programs -> CUDA text through Jinja templates (paper §5).

``generate`` renders the warp-specialized kernel of a ``CompiledKernel``;
``generate_baseline`` the data-parallel kernel (one thread per point) of the
same graph.  Python decides everything; the templates in the top-level
``templates/`` folder (``singe/templates`` in an installed wheel) only lay
the pieces out.
"""

from __future__ import annotations

import dataclasses
import os
import pathlib
import tempfile
from dataclasses import dataclass, field

import jinja2

from singe.codegen.dispatch import unswitched, warp_switch
from singe.codegen.overlay import OverlaidKernel, overlay
from singe.codegen.interface import (SpeciesTable, c_string, fortran_string, kernel_name, nullable_note,
                                     species_names)
from singe.codegen.render import (BASELINE_EXPRESSIONS, EXPRESSIONS, global_address, literal, load_expression,
                                  prefetch_plan)
from singe.errors import OptionError, Problem, SingeInputError, SingeInternalError
from singe.kernels.ir import Const, DataflowGraph, Imm, Reg
from singe.kernels.table_form import OUTPUTS as TABLE_OUTPUTS
from singe.kernels.table_form import table_inputs
from singe.kernels.registry import field_doc, kernel_signature, kernel_spec
from singe.memo import per_object
from singe.programs.lowering import ROLLED_KERNELS, live_instructions
from singe.programs.plan import WARPGROUP
from singe.targets import TARGETS
from singe.version import __version__

_PACKAGE = pathlib.Path(__file__).resolve().parents[1]
TEMPLATE_DIRS = [_PACKAGE.parent / "templates", _PACKAGE / "templates"]
CONSTANTS_PER_LINE = 4
BASELINE_THREADS = 128
#: the constant bank's 64 KB, less a margin for what nvcc puts there itself and the math functions' constants
#: (144 B: singe_exp_constants, singe_log_constants, templates/common.cuh.j2); a larger constant table stays in
#: global memory (read with __ldg).  In the bank, a warp-uniform read is one LDC with the index in a register,
#: no 64-bit address (DME diffusion at 10 warps, 3 CTAs/SM on sm_90: 23,939 against 24,928 issued/point,
#: 8 against 84 B of spill stores)
CONSTANT_BANK_BYTES = 60 * 1024


@dataclass(frozen=True)
class CodegenInfo:
    """What codegen decided for one kernel (the command's summary and the tests read it).

    ``threads``: per CTA; ``constant_slots``: the widest warp's constants;
    ``stripes``: constants per thread (32 a stripe), ``register_stripes`` of
    them held in registers (the register plan's choice); ``variables``: the
    overlaid register variables; ``blocks``: code blocks of the overlay;
    ``index_rows``: rows of the per-lane index table; ``shared_fraction``:
    the share of the warps' units emitted once as code several warps share;
    ``loops``: loops emitted (``lowering.find_loops``), reading ``loop_ints``
    entries of the loop table; ``constant_memory``: the constant table is
    ``__constant__`` (else ``__device__``, read with ``__ldg``).
    The data-parallel baseline has only ``threads``.
    """

    threads: int
    constant_slots: int = 0
    stripes: int = 0
    register_stripes: int = 0
    variables: int = 0
    blocks: int = 0
    index_rows: int = 0
    shared_fraction: float = 0.0
    loops: int = 0
    loop_ints: int = 0
    constant_memory: bool = False
    table_copy_bytes: int = 0
    copied_stripes: int = 0  # of ``stripes``, in the copy (``OverlaidKernel.copied_stripes``)
    loops_per_warp: bool = False  # the units with loops once per warp (``OverlaidKernel.loops_per_warp``)

    @property
    def copies_part(self) -> bool:
        """The copy in shared memory holds only the first stripes of each warp's row (``partial_copy``)."""
        return 0 < self.copied_stripes < self.stripes


@dataclass(frozen=True)
class GeneratedKernel:
    """The text of one kernel's ``.cu`` and ``.h`` files."""

    name: str
    style: str  # 'warp-specialized' or 'baseline'
    cu: str
    header: str
    info: CodegenInfo = field(compare=False, hash=False)

    @property
    def cu_name(self) -> str:
        return f"{self.name}.cu"

    @property
    def header_name(self) -> str:
        return f"{self.name}.h"

    def write(self, directory: str | os.PathLike) -> list[pathlib.Path]:
        """Write both files atomically (a temporary file renamed into place)."""
        directory = pathlib.Path(directory)
        directory.mkdir(parents=True, exist_ok=True)
        written = []
        for file_name, text in ((self.cu_name, self.cu), (self.header_name, self.header)):
            target = directory / file_name
            handle, temporary = tempfile.mkstemp(dir=directory, prefix=f".{file_name}.")
            try:
                with os.fdopen(handle, "w") as out:
                    out.write(text)
                os.chmod(temporary, _new_file_mode())
                os.replace(temporary, target)
            finally:
                if os.path.exists(temporary):
                    os.unlink(temporary)
            written.append(target)
        return written


def _new_file_mode() -> int:
    """The mode ``open`` gives a new file: 0666 less the umask (mkstemp's is 0600)."""
    umask = os.umask(0)
    os.umask(umask)
    return 0o666 & ~umask


def environment() -> jinja2.Environment:
    """The Jinja environment: strict about undefined names, whitespace-controlled."""
    folders = [str(d) for d in TEMPLATE_DIRS if d.is_dir()]
    if not folders:
        raise SingeInternalError(f"no template folder among {TEMPLATE_DIRS}")
    return jinja2.Environment(loader=jinja2.FileSystemLoader(folders), undefined=jinja2.StrictUndefined,
                              keep_trailing_newline=True, autoescape=False)


def _fields(graph: DataflowGraph) -> tuple[list[str], list[str]]:
    """Global input and output fields of the graph's kernel, in parameter order (its registry entry)."""
    return kernel_spec(graph.kernel).signature(graph)


HELPERS = {"sel": "select", "exp": "exp", "log": "log", "max": "max", "min": "min"}
"""Opcodes whose expressions may call a helper function of templates/common.cuh.j2 -> the helper
(``singe_<helper>``, emitted where the template flag ``uses_<helper>`` is set)."""


def helper_flags(used=()) -> dict[str, bool]:
    """common.cuh.j2's flags: ``uses_<helper>`` for every helper of ``HELPERS``, set for the opcodes ``used``."""
    return {f"uses_{helper}": opcode in used for opcode, helper in HELPERS.items()}


def _parameters(graph: DataflowGraph, expressions: dict[str, str]) -> dict:
    """Kernel and launcher parameters, and what the shared template part needs
    (helper functions only where ``expressions`` call them)."""
    inputs, outputs = _fields(graph)
    opcodes = {i.opcode for op in graph.operations for i in op.instrs}
    called = {op for op, helper in HELPERS.items() if op in opcodes and f"singe_{helper}" in expressions[op]}
    return {**helper_flags(called), **field_parameters(inputs, outputs)}


def field_parameters(inputs: list[str], outputs: list[str]) -> dict:
    """The kernel's and the launcher's parameters, arguments and their documentation."""
    return {
        "kernel_parameters": [f"const double *__restrict__ {f}" for f in inputs] +
                             [f"double *__restrict__ {f}" for f in outputs],
        "parameters": [f"const double *{f}" for f in inputs] + [f"double *{f}" for f in outputs],
        "arguments": inputs + outputs,
        "argument_docs": [f"{f}: in, {field_doc(f)}{nullable_note(f)}" for f in inputs] +
                         [f"{f}: out, {field_doc(f)}" for f in outputs],
    }


def _compiled_parameters(compiled) -> dict:
    """The launcher's parameters of a compiled kernel of either chemistry form."""
    if compiled.form == "tables":
        return field_parameters(list(table_inputs(compiled.mechanism)), list(TABLE_OUTPUTS))
    return _parameters(compiled.graph, EXPRESSIONS)


def _header(env, name: str, description: str, graph: DataflowGraph, species: list[str], arch: str = "") -> str:
    """The launcher's header: its documented interface and the species names.
    ``arch``: the target the kernel was generated for ('' for any)."""
    return header_text(env, name, description, graph.mechanism, _parameters(graph, EXPRESSIONS), species, arch)


def header_text(env, name: str, description: str, mechanism: str, parameters: dict, species: list[str],
                arch: str = "") -> str:
    """The launcher's header from the kernel's ``field_parameters``."""
    return env.get_template("kernel.h.j2").render(
        name=name, description=description, mechanism=mechanism, version=__version__,
        species=species, guard=f"SINGE_{name.upper()}_H", arch=arch, cuda_arch=TARGETS[arch].cuda_arch if arch else 0,
        table=SpeciesTable(mechanism), species_names=species_names(mechanism, species),
        quoted=[c_string(s) for s in species], **parameters)


def _constant_lines(overlaid: OverlaidKernel, stripes: int) -> list[str]:
    """The per-warp constant table in memory order: warp, stripe, lane."""
    values = []
    for table in overlaid.constants:
        padded = table + [0.0] * (stripes * 32 - len(table))
        values.extend(padded)
    text = [literal(v) for v in values]
    return [", ".join(text[i:i + CONSTANTS_PER_LINE]) + "," for i in range(0, len(text), CONSTANTS_PER_LINE)]


def generate(compiled, roll: bool | None = None) -> GeneratedKernel:
    """The warp-specialized CUDA kernel of a ``CompiledKernel`` (of either chemistry form; ``roll``:
    isomorphic runs of an operation as loops over per-warp tables; default:
    for the kernels in ``ROLLED_KERNELS``)."""
    if compiled.form == "tables":
        return compiled.render()  # singe.codegen.tables, through the compiled kernel
    programs = compiled.programs
    options = compiled.options
    overlaid = lay_out(programs, roll)
    slots, stripes = overlaid.slots, overlaid.stripes
    kept = register_stripes(programs, overlaid)
    constant_memory = constants_in_bank(overlaid)
    table_copy = table_copy_bytes(overlaid)
    shared_bytes = kernel_shared_bytes(programs, overlaid)
    check_shared_bytes(shared_bytes, programs, options)
    name = kernel_name(compiled.mechanism.name, compiled.kernel)
    env = environment()
    spill = programs.warnings[0] if programs.warnings else ""
    warpgroups = _warpgroups(programs.plan, programs.warps, unswitched(overlaid))
    context = dict(
        name=name, kernel=compiled.kernel, mechanism=compiled.mechanism.name, version=__version__,
        options_key=options.key(), warps=programs.warps, threads=programs.threads,
        ctas_per_sm=options.ctas_per_sm, arch=options.arch, cuda_arch=TARGETS[options.arch].cuda_arch,
        registers=max(programs.registers),
        register_budget=programs.plan.budget, shared_bytes=shared_bytes,
        table_in_shared=table_copy > 0,
        sync_points=len(programs.sync_points), barrier_ids=programs.barrier_ids, constant_slots=slots,
        stripes=stripes, copied_stripes=overlaid.copied_stripes, partial_copy=overlaid.partial_stripes is not None,
        register_stripes=kept, spill_warning=spill,
        species=compiled.mechanism.transported_species,
        header=f"{name}.h", constant_lines=_constant_lines(overlaid, stripes), index_rows=overlaid.index_rows,
        loop_ints=overlaid.loop_ints, constant_memory=constant_memory,
        shared_slots=programs.shared_slots, variables=[f"r{i}" for i in range(overlaid.variables)],
        blocks=[_block_context(b) for b in overlaid.blocks], unswitched=unswitched(overlaid),
        warpgroups=warpgroups, setmaxnreg=bool(warpgroups),
        prefetch=prefetch_plan(_fields(compiled.graph)[0], len(compiled.mechanism.transported_species),
                               programs.threads) if programs.prefetch else None,
        **_parameters(compiled.graph, EXPRESSIONS))
    cu = env.get_template("warp_specialized.cu.j2").render(**context) + \
        kernel_signature(name, compiled.graph, "warp-specialized", compiled.mechanism.transported_species).line()
    header = _header(env, name, f"warp-specialized {compiled.kernel} kernel", compiled.graph,
                     compiled.mechanism.transported_species, options.arch)
    info = CodegenInfo(threads=programs.threads, constant_slots=slots, stripes=stripes, register_stripes=kept,
                       variables=overlaid.variables, blocks=len(overlaid.blocks),
                       index_rows=len(overlaid.index_rows),
                       shared_fraction=overlaid.shared_units / max(overlaid.total_units, 1),
                       loops=overlaid.loops, loop_ints=len(overlaid.loop_ints), constant_memory=constant_memory,
                       table_copy_bytes=table_copy, copied_stripes=overlaid.copied_stripes,
                       loops_per_warp=overlaid.loops_per_warp)
    return GeneratedKernel(name, "warp-specialized", cu, header, info)


def lay_out(programs, roll: bool | None = None) -> OverlaidKernel:
    """The kernel body codegen emits for ``programs``: every warp's program as
    one case of a switch (``WarpPrograms.dispatch``, ``codegen.dispatch``)
    or the overlay (``roll``: loops over per-warp tables; default: for the
    kernels in ``ROLLED_KERNELS``), with the constant table's copy in shared memory where
    ``programs.constant_table`` is 'shared', or 'auto' and the copy fits ``programs.table_budget`` (the
    occupancy the kernel was compiled for is kept), or, where it does not, the first stripes of each warp's
    row that fit (``partial_copy``).  The timing model counts from the same layout.

    Why the copy by default: ncu's samples per SASS instruction of DME viscosity at the paper's setting
    (H200, docs/measurements/2026-11-27-h200, ``python -m autotune.ncu_source``) put 94 % of its
    short-scoreboard waits on ``LDC.64`` results, which ptxas schedules a few instructions before their
    use, and 5 % on ``LDS`` results, which it hoists, though the kernel issues as many of each; the copy
    turns those ``LDC.64`` into warp-uniform ``LDS`` (half of them ``LDS.128``), and the kernel issues
    fewer instructions (sm_90 SASS walk).  Timed on the H200 (docs/measurements/2026-11-27-h200-copy): 1.79x
    (DME viscosity), 2.60x (diffusion) and 2.11x (n-heptane viscosity) the same kernels reading the cache.
    Where the compiler chooses the CTAs per SM, ``compiler.copy_where_the_cache_misses`` also takes the copy
    where fewer of them stay resident."""
    if programs.dispatch == "switch":
        return warp_switch(programs)
    if programs.loops_per_warp:
        return _in_the_bank(layout_with(programs, False, roll))
    if programs.constant_table != "auto":
        return layout_with(programs, programs.constant_table == "shared", roll)
    copied = layout_with(programs, True, roll)
    if table_copy_bytes(copied) <= programs.table_budget:
        return copied
    return partial_copy(copied, programs.table_budget) or layout_with(programs, False, roll)


def _in_the_bank(overlaid: OverlaidKernel) -> OverlaidKernel:
    """``overlaid`` (``--constant-table bank``), whose constant tables must be ``__constant__`` arrays: read
    at indices ptxas knows, a global table would be an ``LDG`` a constant, on the load queue."""
    if not constants_in_bank(overlaid):
        raise OptionError(f"--constant-table bank: the kernel's constant tables take {_constant_bytes(overlaid)} B, "
                          f"more than the {CONSTANT_BANK_BYTES} B the constant bank holds for them; use "
                          f"--constant-table shared (a copy in shared memory) or cache, or more warps")
    return overlaid


def layout_with(programs, table_copy: bool, roll: bool | None = None) -> OverlaidKernel:
    """The overlay of ``programs`` with the constant table's copy in shared memory or without
    (``table_copy``), whatever ``programs.constant_table`` says; ``roll`` as ``lay_out``.  Made once per
    programs object (``memo.per_object``): the compiler, codegen and the timing model lay the same programs
    out in turn, and finding the loops takes seconds (n-heptane viscosity at 8 warps: 1.4 s a layout).
    Nothing changes an ``OverlaidKernel`` once made."""
    return _layout(programs, table_copy, programs.kernel in ROLLED_KERNELS if roll is None else roll)


@per_object
def _layout(programs, table_copy: bool, roll: bool) -> OverlaidKernel:
    return overlay(programs, roll=roll, table_copy=table_copy)


def emitted_plan(plan, overlaid: OverlaidKernel):
    """``plan`` (a ``RegisterPlan``) as codegen follows it in the layout ``overlaid``: with no constant stripe in
    registers where the constant table's copy is in shared memory.  A stripe in registers is read by two
    ``SHFL`` from the lane holding the slot, the copy by one warp-uniform ``LDS.64``.

    Measured (H200, docs/measurements/2026-11-27-h200-stripes, Mpoints/s, 8 warps x 2 CTAs with the copy): GRI-Mech
    diffusion 130.6 with 23 of its 24 stripes in registers, 143.0 with none; n-heptane diffusion 262.0 and
    286.5."""
    return dataclasses.replace(plan, stripe_limit=0) if overlaid.table_copy else plan


def register_stripes(programs, overlaid: OverlaidKernel) -> int:
    """Constant stripes each warp keeps in registers in the layout ``overlaid`` (``emitted_plan``)."""
    return emitted_plan(programs.plan, overlaid).stripes_in_registers(overlaid.stripes)


def constants_in_bank(overlaid: OverlaidKernel) -> bool:
    """The kernel's constant tables are __constant__ arrays (read with LDC), not global ones (LDG)."""
    return _constant_bytes(overlaid) <= CONSTANT_BANK_BYTES


def table_copy_bytes(overlaid: OverlaidKernel) -> int:
    """Bytes of the constant table's copy in shared memory (``OverlaidKernel.table_copy``: every warp's row,
    or its first stripes (``OverlaidKernel.copied_stripes``), x 32 doubles); 0 where the kernel reads the table
    in place."""
    return 8 * len(overlaid.constants) * overlaid.copied_slots


def partial_copy(copied: OverlaidKernel, budget: int) -> OverlaidKernel | None:
    """``copied`` (a layout with the whole table's copy) with only the first stripes of each warp's row in the
    copy, as many as ``budget`` bytes hold, the rest read from the table itself (an ``LDC.64`` at a
    warp-dependent index, as without the copy); None where they would not hold every slot the loops read
    (``OverlaidKernel.loop_slots``: a loop reads its constants at a running index, from one place).

    Why: n-heptane diffusion at the paper's 13 warps x 3 CTAs reads 429 constant slots a warp; the whole copy,
    46,592 B, does not fit beside the exchange slots (43,264 B), and reading the table in place it ran at 1.04x
    its baseline on the H200, against 3.37x at 13 x 2 with the copy (docs/measurements/2026-11-27-h200-copy).
    Its first 13 stripes hold every slot its loops read and 416 of its 429: 13 slots a warp, straight-line
    reads, stay in the constant bank (3.3 KB for the CTA, within the constant cache)."""
    warps = len(copied.constants)
    stripes = budget // (8 * 32 * warps) if warps else 0
    if stripes >= copied.stripes or 32 * stripes < copied.loop_slots or stripes < 1:
        return None
    return _partial(copied, stripes)


@per_object
def _partial(copied: OverlaidKernel, stripes: int) -> OverlaidKernel:
    return dataclasses.replace(copied, partial_stripes=stripes)


def least_table_copy_bytes(programs) -> int:
    """A lower bound of ``table_copy_bytes`` without laying the kernel out: every warp's row as wide as the
    widest warp's distinct constants (``RegisterPlan.stripes``); the overlay may give a row more slots, where
    warps share code (n-heptane and GRI-Mech viscosity and diffusion, 2-32 warps: 0-25 % more)."""
    return 8 * 32 * programs.warps * programs.plan.stripes


def kernel_shared_bytes(programs, overlaid: OverlaidKernel) -> int:
    """Dynamic shared memory per CTA of the warp-specialized kernel: the exchange slots, then the
    constant table's copy (``table_copy_bytes``)."""
    return programs.shared_bytes + table_copy_bytes(overlaid)


def copied_shared_bytes(programs) -> int:
    """``kernel_shared_bytes`` of ``programs`` laid out with the constant table's copy, whatever
    ``programs.constant_table`` says."""
    return kernel_shared_bytes(programs, layout_with(programs, table_copy=True))


def check_shared_bytes(shared_bytes: int, programs, options) -> None:
    """An ``OptionError`` where the kernel's shared memory (``kernel_shared_bytes``) exceeds what a CTA
    may have on the target, naming both and the setting that avoids it."""
    limit = options.target.max_shared_per_cta
    if shared_bytes > limit:
        raise OptionError(
            f"{programs.kernel} of {programs.mechanism}: {shared_bytes} B of shared memory per CTA "
            f"({programs.shared_bytes} B of exchange slots and the constant table's copy) exceed the "
            f"{limit} B a CTA may have on {options.arch}: use --constant-table cache")


def _constant_bytes(overlaid: OverlaidKernel) -> int:
    """Bytes of the kernel's __constant__ tables if the constant table is one of them."""
    return 8 * len(overlaid.constants) * overlaid.stripes * 32 + int_table_bytes(overlaid)


def int_table_bytes(overlaid: OverlaidKernel) -> int:
    """Bytes of the overlay's integer tables: its index rows (one entry per warp) and the loop table."""
    return 4 * (len(overlaid.index_rows) * len(overlaid.constants) + len(overlaid.loop_ints))


def _warpgroups(plan, warps: int, unswitched_body: bool) -> list[dict]:
    """Per warpgroup of a plan with setmaxnreg budgets (``RegisterPlan.warp_budgets``): its
    index, warps, count and the setmaxnreg that sets it ('DEC' below the launch budget, 'INC'
    above, '' at it).  Only a body that is one switch outside the slab loop puts each warpgroup
    in a branch of its own, which ptxas needs to allocate each within its count."""
    if plan is None or not plan.warp_budgets:
        return []
    if not unswitched_body:
        raise SingeInternalError("setmaxnreg budgets need the kernel body as one switch on the warp id")
    groups = []
    for first in range(0, warps, WARPGROUP):
        count = plan.warp_budgets[first]
        action = "DEC" if count < plan.budget else "INC" if count > plan.budget else ""
        groups.append({"index": first // WARPGROUP, "warps": list(range(first, first + WARPGROUP)),
                       "count": count, "action": action})
    return groups


def _block_context(block) -> dict:
    return {"kind": block.kind, "warps": list(block.warps), "mask": block.mask, "lines": block.lines,
            "cases": sorted(block.cases.items())}


# -- the data-parallel baseline -----------------------------------------------------------

def _baseline_lines(graph: DataflowGraph) -> list[str]:
    """Straight-line code of every operation, one thread per point, constants inline."""
    lines = []
    consumed = set(graph.consumers())
    for op in graph.topological_order():
        lines.extend(f"double v_{v};" for v in op.outputs if v in consumed)
        lines.append(f"{{  // {op.name}")
        temps: dict[str, str] = {}
        for instr in live_instructions(op.instrs, {v for v in op.outputs if v in consumed}):
            def operand(src) -> str:
                if isinstance(src, (Imm, Const)):
                    return literal(src.value)
                return temps.get(src.name, f"v_{src.name}")
            if instr.opcode == "stg":
                lines.append(f"  {global_address(instr.field, str(instr.index))} = {operand(instr.srcs[0])};")
                continue
            if instr.opcode == "ldg":
                expression = load_expression(instr.field, str(instr.index))
            else:
                expression = BASELINE_EXPRESSIONS[instr.opcode].format(*(operand(s) for s in instr.srcs))
            temp = f"t{len(temps)}"
            temps[instr.dst] = temp
            lines.append(f"  const double {temp} = {expression};")
            if instr.dst in op.outputs and instr.dst in consumed:
                lines.append(f"  v_{instr.dst} = {temp};")
        lines.append("}")
    return lines


def generate_baseline(compiled) -> GeneratedKernel:
    """The data-parallel kernel of ``compiled``'s graph (the paper's comparison): one thread a point.  The
    baseline a warp-specialized kernel is compared with is that of ``singe.baseline.baseline_kernel(compiled)``,
    its graph built the way a data-parallel kernel runs fastest (viscosity's Wilke groups)."""
    if compiled.form == "tables":
        raise SingeInputError(f"{compiled.mechanism.name}: the table form of the chemistry kernel has no "
                              f"data-parallel baseline; compile with form='unrolled' (--form unrolled) for one")
    graph = compiled.graph
    name = kernel_name(compiled.mechanism.name, compiled.kernel, baseline=True)
    env = environment()
    cu = env.get_template("baseline.cu.j2").render(
        name=name, kernel=compiled.kernel, mechanism=compiled.mechanism.name, version=__version__,
        species=compiled.mechanism.transported_species, header=f"{name}.h", threads=BASELINE_THREADS,
        lines=_baseline_lines(graph), **_parameters(graph, BASELINE_EXPRESSIONS)) + \
        kernel_signature(name, graph, "baseline", compiled.mechanism.transported_species).line()
    header = _header(env, name, f"data-parallel {compiled.kernel} kernel", graph,
                     compiled.mechanism.transported_species)
    return GeneratedKernel(name, "baseline", cu, header, CodegenInfo(threads=BASELINE_THREADS))


# -- the Fortran interface -----------------------------------------------------------------

FORTRAN_NAME_LIMIT = 63  # characters of a Fortran 2003 name


def generate_fortran(compiled, baseline: bool = False) -> dict[str, str]:
    """The Fortran files of a kernel's launcher: ``<name>.f90`` (module
    ``singe_<name>``, a bind(C) interface) and ``<mech>_species.f90`` (module
    ``singe_<mech>_species``, the species' 1-based columns and names)."""
    mechanism = compiled.mechanism
    species = list(mechanism.transported_species)
    names = species_names(mechanism.name, species)
    too_long = [n for n in names if len(n.macro) > FORTRAN_NAME_LIMIT]
    if too_long:
        raise SingeInputError([Problem(
            mechanism.species[mechanism.species_index(n.species)].location,
            f"species '{n.species}' of {mechanism.name} gives the Fortran name {n.macro} ({len(n.macro)} "
            f"characters; Fortran takes {FORTRAN_NAME_LIMIT})",
            "shorten the species name or the mechanism's file name (the names' prefix)") for n in too_long])
    table = SpeciesTable(mechanism.name)
    name = kernel_name(mechanism.name, compiled.kernel, baseline)
    env = environment()
    context = dict(name=name, mechanism=mechanism.name, version=__version__, species_count=len(species),
                   table=table)
    parameters = _compiled_parameters(compiled)
    description = f"{'data-parallel' if baseline else 'warp-specialized'} {compiled.kernel} kernel"
    kernel = env.get_template("kernel.f90.j2").render(description=description, arguments=parameters["arguments"],
                                                      argument_docs=parameters["argument_docs"], **context)
    species_file = env.get_template("species.f90.j2").render(
        species_names=names, quoted=[fortran_string(s) for s in species], name_length=max(map(len, species)),
        **context)
    return {f"{name}.f90": kernel, table.fortran_file: species_file}


__all__ = ["GeneratedKernel", "generate", "generate_baseline", "generate_fortran", "environment", "Reg"]
