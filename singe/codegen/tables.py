"""Code generation of the table-form chemistry kernel (``singe.kernels.table_form``).

The kernel's code is the same few loops for every mechanism
(``templates/chemistry_tables.cu.j2``); the mechanism is data: the arrays of
``singe.kernels.chemistry_tables.ChemistryTables`` written as initialised
``__device__`` arrays, and each warp's share of every phase read from the
warp programs' table loops.  Rows are visited in order within a warp, so
the sparse rows are stored as counts (packed into the row's info word) and
each warp starts from its own offsets: the ``.cu`` stays near 2 numbers per
table entry (n-hexane: well under 1 MB).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import numpy as np

from singe.codegen import CodegenInfo, GeneratedKernel, environment, field_parameters, header_text, helper_flags
from singe.codegen.interface import kernel_name
from singe.errors import SingeInputError, SingeInternalError
from singe.kernels import chemistry_tables as ct
from singe.constants import C_FLOOR, D_FLOOR
from singe.derived.rates import SIGNED_PRODUCT_FACTORS
from singe.kernels.table_form import OUTPUTS, SlotLayout, phases, table_inputs
from singe.programs.tables import TableLoop
from singe.signature import Parameter, Signature
from singe.kernels.registry import FIELDS
from singe.targets import TARGETS
from singe.version import __version__

COUNT_BITS = 6   # forward, reverse and net entry counts of a row, packed above the flags
FLAG_BITS = 10
NUMBERS_PER_LINE = 16


def number(value: float) -> str:
    """The shortest C literal that reads back as ``value`` (a double array's element)."""
    text = repr(float(value))
    if text in ("inf", "-inf", "nan"):
        raise SingeInternalError(f"cannot write {text} in a table")
    if text.endswith(".0"):
        text = text[:-2]
    return text.replace("e+", "e").replace("e0", "e").replace("e-0", "e-")


CONSTANT_BUDGET = 60 * 1024  # bytes of __constant__ memory for the arrays that steer the loops (64 KB per module)
STEERING = ("thermo_rows", "concentrations_rows", "rates_rows", "species_rows", "thermo_start", "sums_start",
            "rate_start", "info", "thermo_info", "sums_count", "plog_ptr", "plog_set_ptr", "cheb_shape", "eff_count",
            "qssa_coefficients_rows", "qssa_solve_rows", "stiffness_rows", "scale_rows", "qss_sum_ptr", "qss_cell_ptr",
            "qss_cell_mode", "qss_ops", "destruction_ptr", "creation_ptr", "scale_dir", "dir_qss", "scale_factor_ptr",
            "scale_factor_nu")
"""Arrays read with warp-uniform indices that decide loop bounds and branches, in order of priority for
constant memory (where a SASS walk can also read them; the QSSA, stiffness and scale phases' arrays where
the mechanism has them)."""


@dataclass(frozen=True)
class TableCodegenInfo(CodegenInfo):
    """``CodegenInfo`` of the table form: ``arrays`` and ``table_entries`` written,
    ``workspace_bytes`` per CTA in global memory, ``shared_bytes`` (C_k and g_k/RT, 0 where
    they stay in the workspace), ``max_ctas`` the launcher's grid limit."""

    arrays: int = 0
    table_entries: int = 0
    workspace_bytes: int = 0
    shared_bytes: int = 0
    max_ctas: int = 0


@dataclass(frozen=True)
class Array:
    """One initialised array of the kernel, in ``__device__`` (global) or ``__constant__`` memory."""

    ctype: str
    name: str
    values: tuple
    space: str = "__device__"

    @property
    def lines(self) -> list[str]:
        text = [str(int(v)) for v in self.values] if self.ctype == "int" else [number(v) for v in self.values]
        text = text or ["0"]  # C has no empty arrays
        return [",".join(text[i:i + NUMBERS_PER_LINE]) + "," for i in range(0, len(text), NUMBERS_PER_LINE)]

    @property
    def size(self) -> int:
        return max(len(self.values), 1)


def _counts(csr: ct.Csr) -> np.ndarray:
    return np.diff(csr.ptr)


def _row_info(tables: ct.ChemistryTables) -> np.ndarray:
    """flags | forward count << FLAG_BITS | reverse count << FLAG_BITS + 6 | net count << FLAG_BITS + 12."""
    counts = [_counts(c) for c in (tables.forward_factors, tables.reverse_factors, tables.net)]
    limit = 1 << COUNT_BITS
    for name, c in zip(("reactants", "products", "species"), counts):
        if c.size and c.max() >= limit:
            row = int(np.argmax(c))
            raise SingeInputError(f"reaction {int(tables.reaction[row]) + 1} of {tables.mechanism}: more than "
                                  f"{limit - 1} {name} for the table form; use --form unrolled")
    if tables.flags.size and tables.flags.max() >= 1 << FLAG_BITS:
        raise SingeInternalError("row flags overflow their bits")
    return tables.flags | counts[0] << FLAG_BITS | counts[1] << (FLAG_BITS + COUNT_BITS) | \
        counts[2] << (FLAG_BITS + 2 * COUNT_BITS)


def _arrhenius_arrays(prefix: str, sets: ct.ArrheniusSets, landau_teller: bool) -> list[Array]:
    arrays = [Array("double", f"{prefix}_A", tuple(sets.A)), Array("double", f"{prefix}_b", tuple(sets.b)),
              Array("double", f"{prefix}_Ea", tuple(sets.Ea_R))]
    if landau_teller:
        arrays += [Array("double", f"{prefix}_ltB", tuple(sets.lt_B)),
                   Array("double", f"{prefix}_ltC", tuple(sets.lt_C))]
    return arrays


def _check_group_positions(tables: ct.ChemistryTables) -> None:
    """The falloff, PLOG and Chebyshev entry of a row is its position in its group (the kernel relies on it)."""
    for group in ct.GROUPS[1:]:
        rows = tables.group_rows(group)
        if any(int(tables.extra[r]) != r - rows.start for r in rows):
            raise SingeInternalError(f"{group} rows are not in table order")


def gibbs_terms(coeffs: np.ndarray) -> np.ndarray:
    """Per thermo range (rows of NASA9-form a1..a7, b1, b2), the terms ``gibbs`` of the template
    multiplies: a2, -a1/2, a2 + b1, -a3, a3 - b2, -a4/2, -a5/6, -a6/12, -a7/20 (0-based a[0..8] in the
    template's names).  Each is one correctly rounded operation on two constants, so computing it
    here gives the kernel the bits it would compute, without its per-point divisions."""
    a = coeffs.T
    return np.stack([a[1], -0.5 * a[0], a[1] + a[7], -a[2], a[2] - a[8], -a[3] / 2.0, -a[4] / 6.0, -a[5] / 12.0,
                     -a[6] / 20.0], axis=1)


def table_arrays(tables: ct.ChemistryTables) -> list[Array]:
    """Every mechanism array of the kernel."""
    _check_group_positions(tables)
    lt = tables.landau_teller
    thermo_info = np.diff(tables.thermo_ptr) | tables.thermo_nasa9.astype(np.int64) << 8
    arrays = [Array("double", "weights", tuple(tables.weights)), Array("int", "thermo_info", tuple(thermo_info)),
              Array("double", "thermo_bound", tuple(tables.thermo_bound)),
              Array("double", "thermo_coeffs", tuple(gibbs_terms(tables.thermo_coeffs).ravel())),
              Array("int", "info", tuple(_row_info(tables))),
              Array("int", "eff_count", tuple(_counts(tables.efficiencies)))]
    arrays += _arrhenius_arrays("fwd", tables.forward, lt) + _arrhenius_arrays("rev", tables.reverse, lt)
    for prefix, csr in (("fwd", tables.forward_factors), ("rev", tables.reverse_factors),
                        ("eff", tables.efficiencies), ("net", tables.net), ("sums", tables.species_sums)):
        arrays += [Array("int", f"{prefix}_index", tuple(csr.index)),
                   Array("double", f"{prefix}_value", tuple(csr.value))]
    arrays += [Array("int", "sums_count", tuple(_counts(tables.species_sums)))]
    arrays += _arrhenius_arrays("falloff", tables.falloff_second, lt)
    arrays += [Array("double", "falloff_params", tuple(tables.falloff_params.ravel())),
               Array("int", "plog_ptr", tuple(tables.plog_ptr)),
               Array("double", "plog_log_p", tuple(tables.plog_log_p)),
               Array("int", "plog_set_ptr", tuple(tables.plog_set_ptr))]
    arrays += _arrhenius_arrays("plog", tables.plog_sets, lt)
    arrays += [Array("int", "cheb_shape", tuple(tables.cheb_shape.ravel())),
               Array("double", "cheb_scale", tuple(tables.cheb_scale.ravel())),
               Array("double", "cheb_coeffs", tuple(tables.cheb_coeffs))]
    return arrays


def _csr_arrays(prefix: str, csr: ct.Csr, index: str = "index", value: str = "value") -> list[Array]:
    return [Array("int", f"{prefix}_ptr", tuple(csr.ptr)), Array("int", f"{prefix}_{index}", tuple(csr.index)),
            Array("double", f"{prefix}_{value}", tuple(csr.value))]


def extension_arrays(tables: ct.ChemistryTables) -> list[Array]:
    """The QSSA, stiffness and scale tables (none without QSSA and stiff species)."""
    arrays = []
    if tables.qssa is not None:
        q = tables.qssa
        arrays += _csr_arrays("qss_sum", q.sums, "dir", "nu")
        arrays += [Array("int", "qss_cell_ptr", tuple(q.cell_ptr)), Array("int", "qss_cell_mode", tuple(q.cell_mode)),
                   Array("int", "qss_ops", tuple(q.ops.ravel()))]
    if tables.stiff is not None:
        st = tables.stiff
        arrays += [Array("int", "stiff_species", tuple(st.species)), Array("double", "stiff_weight", tuple(st.weights))]
        arrays += _csr_arrays("destruction", st.destruction, "dir", "nu")
        arrays += _csr_arrays("creation", st.creation, "dir", "nu")
    if tables.scale is not None:
        sc = tables.scale
        arrays += [Array("int", "dir_qss", tuple(sc.direction_qss)), Array("int", "scale_dir", tuple(sc.direction))]
        arrays += _csr_arrays("scale_factor", sc.factors, "s", "nu")
    return arrays


def _shares(programs, phase: str) -> list[tuple[int, int]]:
    """Each warp's rows of ``phase``, from its table loop ((0, 0) where it has none)."""
    shares = []
    for program in programs.programs:
        loops = [item for item in program.items if isinstance(item, TableLoop) and item.phase == phase]
        if len(loops) > 1:
            raise SingeInternalError(f"warp {program.warp} has {len(loops)} {phase} loops")
        shares.append((loops[0].begin, loops[0].end) if loops else (0, 0))
    return shares


def warp_arrays(tables: ct.ChemistryTables, programs) -> list[Array]:
    """Per warp: its rows of each phase and the offsets its sparse rows start at."""
    arrays = []
    for phase in phases(tables):
        shares = _shares(programs, phase)
        arrays.append(Array("int", f"{phase}_rows", tuple(x for share in shares for x in share)))
    species = _shares(programs, "thermo")
    sums = _shares(programs, "species")
    rates = _shares(programs, "rates")
    explicit = np.concatenate([[0], np.cumsum((tables.flags & ct.EXPLICIT_REVERSE) != 0)])
    starts = [(tables.forward_factors.ptr[a], tables.reverse_factors.ptr[a], tables.efficiencies.ptr[a],
               tables.net.ptr[a], explicit[a]) for a, _ in rates]
    arrays += [Array("int", "thermo_start", tuple(tables.thermo_ptr[a] for a, _ in species)),
               Array("int", "sums_start", tuple(tables.species_sums.ptr[a] for a, _ in sums)),
               Array("int", "rate_start", tuple(x for start in starts for x in start))]
    return arrays


def place_arrays(arrays: list[Array]) -> list[Array]:
    """The steering arrays in constant memory, by priority, as long as they fit ``CONSTANT_BUDGET``."""
    by_name = {a.name: a for a in arrays}
    room, constant = CONSTANT_BUDGET, set()
    for name in (n for n in STEERING if n in by_name):
        size = (8 if by_name[name].ctype == "double" else 4) * by_name[name].size
        if size <= room:
            constant.add(name)
            room -= size
    return [dataclasses.replace(a, space="__constant__") if a.name in constant else a for a in arrays]


def _signature(name: str, species, inputs) -> Signature:
    parameters = tuple(Parameter(f, False, FIELDS[f].rows) for f in inputs) + \
        tuple(Parameter(f, True, FIELDS[f].rows) for f in OUTPUTS)
    return Signature(name, "chemistry", "warp-specialized", tuple(species), parameters)


def species_shared_bytes(tables: ct.ChemistryTables, options) -> int:
    """Shared memory for C_k and g_k/RT (the values the rates phase reads most), 0 where they do not
    fit the target's share of an SM at the options' CTAs per SM (they then stay in the workspace)."""
    needed = 2 * tables.n_species * 32 * 8
    return needed if needed <= options.target.shared_budget(options.ctas_per_sm) else 0


def table_parameters(mech) -> dict:
    """The kernel's and the launcher's parameters (``singe.codegen.field_parameters``)."""
    return field_parameters(list(table_inputs(mech)), list(OUTPUTS))


def _context(compiled, name: str, shared_bytes: int) -> dict:
    """What the template lays out (besides the launcher's parameters)."""
    tables, programs, options = compiled.tables, compiled.programs, compiled.options
    target = TARGETS[options.arch]
    layout = SlotLayout(tables, programs.warps)
    return dict(
        name=name, mechanism=compiled.mechanism.name, version=__version__, options_key=options.key(),
        warps=programs.warps, threads=programs.threads, ctas_per_sm=options.ctas_per_sm, arch=options.arch,
        cuda_arch=target.cuda_arch, max_ctas=options.ctas_per_sm * target.sms, header=f"{name}.h",
        n_species=tables.n_species, n_rows=tables.n_rows, slots=layout.count, slot_offsets=layout.offsets,
        workspace_bytes=programs.slot_bytes, shared_bytes=shared_bytes,
        groups={g: tables.group_rows(g) for g in ct.GROUPS}, flags=ct.FLAG_NAMES, flag_bits=FLAG_BITS,
        count_bits=COUNT_BITS, count_mask=(1 << COUNT_BITS) - 1, landau_teller=tables.landau_teller,
        signed_product_factors=SIGNED_PRODUCT_FACTORS, sign_guard=tables.guarded,
        arrays=place_arrays(table_arrays(tables) + extension_arrays(tables) + warp_arrays(tables, programs)),
        registers=max(programs.registers), n_transported=tables.n_transported, split=tables.split,
        qssa=tables.qssa is not None, n_qss=layout.n_qss, stiff=tables.stiff is not None,
        qss_modes={"EXTERNAL": ct.EXTERNAL, "OFF_DIAGONAL": ct.OFF_DIAGONAL, "DIAGONAL": ct.DIAGONAL},
        qss_ops={"ADD_PRODUCT": ct.ADD_PRODUCT, "SUBTRACT_PRODUCT": ct.SUBTRACT_PRODUCT, "DIVIDE": ct.DIVIDE},
        dropped=ct.DROPPED, d_floor=number(D_FLOOR), c_floor=number(C_FLOOR),
        species=compiled.mechanism.transported_species, **helper_flags({"exp"}))


def generate_tables(compiled) -> GeneratedKernel:
    """The CUDA of a ``singe.compiler.TableKernel``."""
    options = compiled.options
    species = compiled.mechanism.transported_species
    name = kernel_name(compiled.mechanism.name, "chemistry")
    shared_bytes = species_shared_bytes(compiled.tables, options)
    parameters = table_parameters(compiled.mechanism)
    context = _context(compiled, name, shared_bytes)
    env = environment()
    cu = env.get_template("chemistry_tables.cu.j2").render(**context, **parameters) + \
        _signature(name, species, table_inputs(compiled.mechanism)).line()
    header = header_text(env, name, "warp-specialized chemistry kernel (table form)", compiled.mechanism.name,
                         parameters, species, options.arch)
    arrays = context["arrays"]
    info = TableCodegenInfo(threads=compiled.programs.threads, arrays=len(arrays),
                            table_entries=sum(len(a.values) for a in arrays),
                            workspace_bytes=compiled.programs.slot_bytes, shared_bytes=shared_bytes,
                            max_ctas=context["max_ctas"])
    return GeneratedKernel(name, "warp-specialized", cu, header, info)
