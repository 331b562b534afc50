"""The driver: a list of stage calls, keeping every IR (paper Figure 8).

    graph    = build_graph(mechanism, kernel)        # kernels
    mapping  = map_graph(graph, options)             # mapping (§4.1)
    programs = schedule(mapping)                     # scheduling (§4.2)

``CompiledKernel`` holds them all; ``simulate`` runs the warp programs in the
warp simulator on SI inputs.
"""

from __future__ import annotations

import dataclasses
import functools
import time
from dataclasses import dataclass

import numpy as np

from singe.codegen import copied_shared_bytes, layout_with, least_table_copy_bytes
from singe.frontend.kernel_inputs import check_transport_kernel
from singe.kernels import build_graph
from singe.kernels.chemistry_tables import ChemistryTables, chemistry_tables
from singe.kernels.ir import DataflowGraph
from singe.kernels.table_form import choose_form, table_programs
from singe.kernels.registry import POINT, KernelSpec, kernel_spec, state_arrays
from singe.mapping import Mapping, map_graph
from singe.mechanism import Mechanism
from singe.memo import per_mechanism
from singe.errors import OptionError
from singe.options import MAX_WARPS, CompileOptions
from singe.programs import WarpPrograms
from singe.programs.plan import SPILL_HEADROOM, check_budgets, could_fit  # noqa: F401 (SPILL_HEADROOM: re-exported)
from singe.programs.verify import check_programs
from singe.schedule import schedule
from singe.timing import misses_the_constant_cache


@dataclass(frozen=True)
class CompiledKernel:
    """A kernel of a mechanism compiled with some options, with every IR."""

    mechanism: Mechanism
    kernel: str
    options: CompileOptions
    graph: DataflowGraph
    mapping: Mapping
    programs: WarpPrograms

    form = "unrolled"  # the chemistry kernel's form (singe.kernels.table_form)

    @property
    def spec(self) -> KernelSpec:
        """The kernel's definition in the registry."""
        return kernel_spec(self.kernel)

    def verify(self) -> None:
        """Check every IR's invariants (graph, mapping, the barrier proof of the programs)."""
        self.graph.verify()
        self.mapping.verify()
        check_programs(self.programs)
        check_budgets(self.programs.plan, self.programs.warps, self.options.target)

    def simulation_inputs(self, T, P, Y, dt=None, diffusion_source=None) -> tuple[dict[str, np.ndarray], int]:
        """Global-memory arrays of the kernel's inputs: T [K] (n,), P [Pa] (n,),
        Y (n_transported, n) mass fractions; for chemistry also dt [s] (scalar
        or (n,); None: no stiffness removal) and diffusion_source (n_transported, n)
        [kg/m^3/s] (None: zeros)."""
        n_species = len(self.mechanism.transported_species)
        return state_arrays(self.kernel, self.spec.inputs, n_species, T, P, Y, dt, diffusion_source)

    def run(self, T, P, Y, dt=None, diffusion_source=None, **simulator_options):
        """The full ``SimulationResult`` (outputs, per-warp counts, hazards)."""
        from singe.sim import simulate

        inputs, n = self.simulation_inputs(T, P, Y, dt, diffusion_source)
        return simulate(self.programs, inputs, n, **simulator_options)

    def simulate(self, T, P, Y, dt=None, diffusion_source=None, **simulator_options) -> np.ndarray:
        """The kernel's output in SI units (``spec.output``): (n,) for one
        value per point (viscosity [Pa s]), (n_transported, n) per species
        (diffusion [m^2/s], chemistry [kmol/m^3/s])."""
        outputs = self.run(T, P, Y, dt, diffusion_source, **simulator_options).outputs
        output = self.spec.output
        return outputs[output.name][0] if output.rows == POINT else outputs[output.name]

    def run_host(self, T, P, Y, dt=None, diffusion_source=None, **options) -> np.ndarray:
        """The emitted CUDA kernel compiled for and run on the CPU (singe.host):
        the same outputs and shapes as ``simulate``.  ``options``: baseline
        (the data-parallel kernel of this graph instead; ``singe.baseline_kernel(self).run_host``
        runs the one speedups are measured against), schedule ('deterministic',
        'random' or 'priority'), seed, max_ctas, same_site (see
        ``singe.host.HostKernel.run``); raises ``singe.host.HostRuntimeError``
        on a deadlock or a misused barrier or shuffle."""
        from singe.host import run_compiled

        return run_compiled(self, T, P, Y, dt, diffusion_source, **options)

    def run_gpu(self, T, P, Y, dt=None, diffusion_source=None, **options) -> np.ndarray:
        """The emitted CUDA kernel on the current CUDA device through CuPy
        (singe.gpu): the same arguments, outputs and shapes as ``simulate``;
        ``options``: baseline, allow_any_arch.  Raises
        ``singe.gpu.GpuUnavailableError`` without CuPy, a device or nvcc."""
        from singe.gpu import run_gpu

        return run_gpu(self, T, P, Y, dt, diffusion_source, **options)

    @functools.cached_property
    def counts(self):
        """Per-warp instruction, memory and barrier counts for one slab (data independent)."""
        n = len(self.mechanism.transported_species)
        Y = np.full((n, 32), 1.0 / n)
        return self.run(np.full(32, 1200.0), np.full(32, 101325.0), Y).counts

    def summary(self) -> str:
        programs = self.programs
        return (f"{self.mechanism.name} {self.kernel}: {programs.warps} warps, "
                f"{len(self.graph.operations)} operations, {len(programs.sync_points)} sync points on "
                f"{len(programs.barrier_ids)} barrier ids (limit {programs.barrier_limit}), "
                f"{programs.shared_bytes} B shared, {programs.plan}")


def compile_kernel(mech: Mechanism, kernel: str, warps: int = 8, progress=None, **options) -> CompiledKernel:
    """Compile ``kernel`` of ``mech`` for ``warps`` warps; ``options`` are the
    fields of ``CompileOptions`` (ctas_per_sm, arch, weights, placement, form ...).
    Without ``ctas_per_sm`` the CTAs per SM are chosen (``choose_ctas_per_sm``).
    ``progress(stage, seconds)``, when given, is called after each stage
    (graph, map, schedule; tables, programs for the table form)."""
    config = options.pop("options", None) or CompileOptions(warps=warps, **options)
    config.dispatch_of(kernel)  # a dispatch the kernel does not offer is refused before any work
    stages = _Stages(progress)
    default = CompileOptions(arch=config.arch, form="unrolled")
    if choose_form(mech, kernel, config.form, lambda: default_unrolled(mech, kernel, default).programs.plan) == "tables":
        # the table form's register needs are fixed (the stages' CTAs per SM), and it reads its inputs phase by
        # phase: --prefetch does not apply
        config = config.planned().replace(prefetch=False)
        tables = stages.run("tables", chemistry_tables, mech, config.products)
        programs = stages.run("programs", table_programs, mech, config)
        return TableKernel(mech, kernel, config, None, None, programs, tables)
    if kernel == "chemistry" and progress is None and config.replace(form="unrolled") == default:
        compiled = default_unrolled(mech, kernel, default)  # already compiled: the options it chose, this form
        return dataclasses.replace(compiled, options=compiled.options.replace(form=config.form))
    return _compile_unrolled(mech, kernel, config, stages)


def _compile_unrolled(mech: Mechanism, kernel: str, config: CompileOptions, stages: "_Stages") -> CompiledKernel:
    if kernel_spec(kernel).transport:
        check_transport_kernel(mech, kernel)
    graph = stages.run("graph", build_graph, mech, kernel, config)
    if config.ctas_per_sm is None:
        return choose_ctas_per_sm(mech, kernel, graph, config, stages)
    return _compile_graph(mech, kernel, graph, config, stages)


@per_mechanism
def default_unrolled(mech: Mechanism, kernel: str, options: CompileOptions) -> "CompiledKernel":
    """The unrolled ``kernel`` of ``mech`` at the default ``options`` (8 warps, CTAs per SM chosen), once per
    mechanism: its register plan decides the form 'auto' (``singe.kernels.table_form.choose_form``)."""
    return _compile_unrolled(mech, kernel, options, _Stages(None))


def _compile_graph(mech: Mechanism, kernel: str, graph: DataflowGraph, config: CompileOptions,
                   stages: "_Stages | None" = None) -> CompiledKernel:
    stages = stages or _Stages(None)
    mapping = stages.run("map", map_graph, graph, config)
    programs = stages.run("schedule", schedule, mapping)
    return CompiledKernel(mech, kernel, config, graph, mapping, programs)


def choose_ctas_per_sm(mech: Mechanism, kernel: str, graph: DataflowGraph, config: CompileOptions,
                       stages: "_Stages | None" = None) -> CompiledKernel:
    """``graph`` compiled at the most CTAs per SM (``config.cta_candidates()``)
    whose register budget covers the register plan's floor with
    ``SPILL_HEADROOM`` registers to spare (on sm_90a, each warpgroup's floor
    within its setmaxnreg count: ``RegisterPlan.fits``) and whose shared memory holds the
    mapping: the highest occupancy at which nothing is predicted to spill
    (the plan keeps as many constant stripes in registers as the budget then
    leaves); 1 CTA per SM when none does (the plan's warning then says so).

    One CTA per SM is compiled first (the most registers and shared memory);
    its plan's floor rules out the counts whose budget is smaller, and the
    others are compiled, most first, until one fits."""
    first = _compile_graph(mech, kernel, graph, config.replace(ctas_per_sm=1), stages)
    target, threads = config.target, first.programs.threads
    setmaxnreg = target if config.dispatch_of(kernel) == "switch" else None
    for ctas in config.cta_candidates():
        if ctas == 1:
            break
        if not could_fit(first.programs.plan, target.register_budget(threads, ctas), first.programs.warps, setmaxnreg):
            continue
        try:
            compiled = _compile_graph(mech, kernel, graph, config.replace(ctas_per_sm=ctas), stages)
        except OptionError:  # the mapping does not fit this CTA's shared memory
            continue
        if compiled.programs.plan.fits():
            return copy_where_the_cache_misses(compiled)
    return copy_where_the_cache_misses(first)


COPY_WARPS_PER_SM = 12
"""The fewest warps per SM at which the constant table's copy was measured faster than the constant cache where
it costs CTAs (n-heptane diffusion at 4 warps x 3 CTAs with the copy: 298.4 Mpoints/s on the H200, against
188.0 at 4 x 4 and 48.5 at 8 x 4 reading the cache); ``copy_where_the_cache_misses`` goes no lower."""


def copy_where_the_cache_misses(compiled: CompiledKernel) -> CompiledKernel:
    """``compiled``, its CTAs per SM chosen by the compiler, or the same graph with the constant table's copy in
    shared memory (``--constant-table shared``) at the same CTAs per SM planned, fewer of them resident: where
    ``--constant-table auto`` declined the copy (it does not fit beside the exchange slots at the CTAs chosen)
    and the warps' reads of the table in place would miss the constant cache
    (``timing.misses_the_constant_cache``), the copy takes precedence over occupancy.  The register plan keeps
    the budget of the CTAs planned (the launcher's persistent grid holds the resident ones:
    ``Target.resident_ctas``), and the options name the copy, so that compiling them again gives the same kernel
    (``with_table_copy``).
    Only where its lower bound (``codegen.least_table_copy_bytes``) already exceeds the budget: most compiles
    are decided without laying the kernel out.  Not where fewer than ``COPY_WARPS_PER_SM`` warps would be
    resident, nor where the user gave the CTAs per SM: 'auto' keeps its rule there.

    Measured (H200, Mpoints/s, 8 warps, the copy against the cache; docs/measurements/2026-11-27-h200-copy and
    2026-11-27-h200-stripes): GRI-Mech viscosity 454.9 / 295.9 (3 CTAs resident against 4), diffusion
    192.0-194.6 / 35.0 (2 against 4); n-heptane viscosity 245.2 / 152.2, diffusion 286.7-288.7 / 48.5.  Planned
    at the resident count instead (the register budget of 2 or 3 CTAs), they ran no faster: GRI-Mech viscosity
    456.3, n-heptane viscosity 244.1 and diffusion 286.5, and GRI-Mech diffusion at 143.0, 0.74x.  Where the reads
    fit the cache, fewer CTAs cost more than the copy gains: DME viscosity at 4 x 8, 7.9 KB read, 1517.6 with
    the copy (7 resident) against 1733.7 without."""
    programs, options = compiled.programs, compiled.options
    least = least_table_copy_bytes(programs)  # checks before laying out (seconds for n-heptane)
    if programs.constant_table != "auto" or least <= programs.table_budget:
        return compiled  # 'auto' decides (lay_out), the copy may fit
    if options.target.resident_ctas(options.ctas_per_sm, programs.shared_bytes + least) * programs.warps \
            < COPY_WARPS_PER_SM:
        return compiled
    resident = options.target.resident_ctas(options.ctas_per_sm, copied_shared_bytes(programs))
    if resident * programs.warps < COPY_WARPS_PER_SM or not misses_the_constant_cache(
            programs, options.target, layout_with(programs, table_copy=False)):
        return compiled
    return with_table_copy(compiled)


def with_table_copy(compiled: CompiledKernel) -> CompiledKernel:
    """``compiled`` with ``--constant-table shared``: the mapping and the warp programs do not depend on the
    option (only ``codegen.lay_out`` reads it), so they are kept, not made again."""
    options = compiled.options.replace(constant_table="shared")
    return dataclasses.replace(compiled, options=options, mapping=dataclasses.replace(compiled.mapping, options=options),
                               programs=dataclasses.replace(compiled.programs, constant_table="shared"))


def warps_avoiding_spills(compiled: CompiledKernel) -> int | None:
    """The fewest warps per CTA, more than ``compiled``'s, at which the kernel
    compiles (CTAs per SM chosen) without predicted spills; None if none does."""
    options = compiled.options
    for warps in range(options.warps + 1, MAX_WARPS + 1):
        trial = options.replace(warps=warps, ctas_per_sm=None, qssa_warps=min(options.qssa_warps, warps))
        if not compile_kernel(compiled.mechanism, compiled.kernel, options=trial).programs.plan.spilled:
            return warps
    return None


@dataclass(frozen=True)
class TableKernel(CompiledKernel):
    """The chemistry kernel in the table form (``singe.kernels.table_form``): no dataflow
    graph or mapping, the mechanism's tables in their place; the simulator, the host
    runtime, validation and codegen take it as any compiled kernel."""

    tables: ChemistryTables | None = None

    form = "tables"

    def verify(self) -> None:
        """The barrier proof of the programs (every workspace access of every row)."""
        check_programs(self.programs)

    def render(self):
        """The kernel's CUDA (``singe.codegen.generate`` of this form: ``singe.codegen.tables``)."""
        from singe.codegen.tables import generate_tables

        return generate_tables(self)

    def timing_model(self, preset=None, ptxas=None, slabs: int = 3, pace=None):
        """The modeled throughput (``singe.timing.model`` of this form: ``singe.timing_tables.model``)."""
        from singe.timing_tables import model

        return model(self, preset, ptxas, slabs, pace=pace)

    def summary(self) -> str:
        tables, programs = self.tables, self.programs
        return (f"{self.mechanism.name} chemistry (tables): {programs.warps} warps, {tables.n_species} species, "
                f"{tables.n_rows} reaction rows, {programs.shared_slots} workspace slots "
                f"({programs.slot_bytes} B per CTA in global memory), {programs.plan}")


class _Stages:
    """Runs stages, reporting each one's time to ``progress`` (if any)."""

    def __init__(self, progress):
        self.progress = progress

    def run(self, name: str, stage, *args):
        start = time.perf_counter()
        result = stage(*args)
        if self.progress:
            self.progress(name, time.perf_counter() - start)
        return result
