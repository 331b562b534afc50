"""The kernel registry: one ``KernelSpec`` per kernel, the only place a kernel is defined.

A spec names the kernel, its graph builder, its global input and output
fields (rows, units, documentation), the ``singe.reference`` function it
must match with its tolerance, and the Cantera property ``--validate``
compares it with.  The CLI, the options, the mapper, codegen, validation,
the host runner and autotune read it; ``kernel_spec`` is the one place an
unknown kernel name is refused.

Adding a kernel is one builder (a function ``Mechanism -> DataflowGraph``)
and one entry in ``KERNELS``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

import numpy as np

from singe.errors import OptionError, SingeInternalError
from singe.kernels import chemistry, conductivity, transport
from singe.kernels.ir import DataflowGraph, Regrouping
from singe.mechanism import Mechanism
from singe.reference import kinetics as reference_kinetics
from singe.reference import transport as reference_transport
from singe.signature import POINT, SPECIES, Parameter, Signature

# Rows of a field: POINT, one value per point (n_points,); SPECIES, one per transported species
# and point, species-major (n_species, n_points).


@dataclass(frozen=True)
class Field:
    """A global array a kernel reads or writes.

    ``rows``: POINT or SPECIES; ``units``: SI units; ``doc``: what it holds.
    """

    name: str
    rows: str
    units: str
    doc: str

    def describe(self) -> str:
        """The field's line in the generated documentation."""
        layout = "n_points values" if self.rows == POINT else "of the species below, species-major"
        return f"{self.doc} [{self.units}]{',' if self.rows == POINT else ''} {layout}"

    def row_count(self, n_species: int) -> int:
        return 1 if self.rows == POINT else n_species


FIELDS: dict[str, Field] = {f.name: f for f in (
    Field("temperature", POINT, "K", "temperature"),
    Field("pressure", POINT, "Pa", "pressure"),
    Field("mass_fractions", SPECIES, "-", "mass fractions"),
    Field("dt", POINT, "s", "time step"),
    Field("diffusion_source", SPECIES, "kg/m^3/s", "diffusion source terms"),
    Field("viscosity", POINT, "Pa s", "mixture viscosity"),
    Field("diffusion", SPECIES, "m^2/s", "mixture-averaged diffusion coefficients"),
    Field("production_rates", SPECIES, "kmol/m^3/s", "net production rates"),
    Field("conductivity", POINT, "W/m/K", "mixture thermal conductivity"),
)}
"""Every global field of every kernel, in parameter order (inputs first)."""

# Field documentation that reads better than the generic "<doc> [units], layout" line.
_SPECIAL_DOCS = {
    "dt": "time step [s], n_points values (0: no stiffness removal)",
}


def field_doc(name: str) -> str:
    """The one-line documentation of a field in the generated header."""
    return _SPECIAL_DOCS.get(name) or FIELDS[name].describe()


def relative_errors(ours: np.ndarray, theirs: np.ndarray) -> np.ndarray:
    """|ours - theirs| / |theirs|, per point (the largest over species).

    Equal values count 0 even where both are 0 (a species absent at a point);
    a non-zero value against a zero reference counts inf, never NaN."""
    difference = np.abs(ours - theirs)
    with np.errstate(divide="ignore", invalid="ignore"):
        error = np.where(difference == 0.0, 0.0, difference / np.abs(theirs))
    return error if error.ndim == 1 else error.max(axis=0)


def scaled_errors(ours: np.ndarray, theirs: np.ndarray) -> np.ndarray:
    """|ours - theirs| / max_k |theirs_k| per point: rates of either sign that
    cancel to ~0 are not compared with themselves."""
    scale = np.maximum(np.abs(theirs).max(axis=0), 1e-300)
    return (np.abs(ours - theirs) / scale).max(axis=0)


@dataclass(frozen=True)
class KernelSpec:
    """Everything that defines one kernel.

    ``builder(mech)``: its dataflow graph.  ``inputs`` / ``outputs``: names in
    ``FIELDS``, in parameter order (a mechanism's graph may leave inputs
    unread: dt and diffusion_source without stiff species, T and P without
    reactions; they are then not parameters of its kernel).  ``reference(mech, T, P, Y, **extra)``:
    the ``singe.reference`` function it must match, to ``tolerance`` under
    ``errors(ours, theirs)`` (per-point errors).  ``cantera``: the property of
    a Cantera ``mixture-averaged-CK`` Solution ``--validate`` compares with
    (None: compare with ``reference``; a per-species property is indexed by
    the transported species).  ``transport``: the kernel needs transport data
    (missing data is reported, with its location, by the transport fits).
    ``default``: compiled when the command names no kernels.  ``qssa``: the
    kernel has QSSA operations (``--qssa-warps`` applies).  ``auto_placement``:
    the placement mode 'auto' means for this kernel (None: decided by what fits).
    ``dispatch``: how the warps' programs become one kernel body, 'overlay'
    (code shared between warps whose next units agree, ``singe.codegen.overlay``)
    or 'switch' (each warp's program one case of a single switch,
    ``singe.codegen.dispatch``); ``other_dispatch``: the other one, when the kernel
    offers it (``CompileOptions.dispatch``; None: its own only).  ``balance``: what the warp mapper evens out
    between warps, 'flops' or 'issue' (machine instructions issued,
    ``singe.mapping.issue_cost``).  ``fixed_warps(graph, warps)``: warps the
    kernel fixes for some operations before the mapper places the others;
    ``regroup(graph, warp_of, warps)``: the graph regrouped once every
    operation has a warp (a ``Regrouping``: the diffusion kernel's turns).  ``graph_options``: the
    ``CompileOptions`` fields ``builder`` takes as keywords (viscosity's ``wilke_group`` and ``warps``);
    ``reference_options``: those ``reference`` takes (chemistry's ``products``).  ``baseline_settings(mech)``:
    the values of ``graph_options`` the data-parallel baseline's graph is built with, where they are not the
    warp-specialized kernel's (viscosity's Wilke groups, ``transport.baseline_viscosity_settings``; None: the
    kernel's own graph).  ``baseline_forms``: the forms of the kernel's math, by name, as values of
    ``graph_options`` (viscosity's row and symmetric forms, ``wilke_symmetric``): a kernel's data-parallel
    baseline has its form, and the scripts that report speedups compare with the fastest baseline of every form
    (``singe.baseline.baseline_kernels``).
    """

    name: str
    builder: Callable[..., DataflowGraph]
    inputs: tuple[str, ...]
    outputs: tuple[str, ...]
    reference: Callable[..., np.ndarray]
    tolerance: float
    description: str
    errors: Callable[[np.ndarray, np.ndarray], np.ndarray] = relative_errors
    error_measure: str = "relative error"
    cantera: str | None = None
    transport: bool = True
    default: bool = True
    qssa: bool = False
    auto_placement: str | None = None
    dispatch: str = "overlay"
    other_dispatch: str | None = None
    balance: str = "flops"
    fixed_warps: Callable[[DataflowGraph, int], dict[str, int]] | None = None
    regroup: Callable[[DataflowGraph, dict[str, int], int], Regrouping] | None = None
    graph_options: tuple[str, ...] = ()
    reference_options: tuple[str, ...] = ()
    baseline_settings: Callable[[Mechanism], dict] | None = None
    baseline_forms: dict[str, dict] = field(default_factory=dict)

    def form_of(self, options) -> str | None:
        """The name of the form (``baseline_forms``) ``options`` compile this kernel in; None without forms."""
        return next((name for name, values in self.baseline_forms.items()
                     if all(getattr(options, k) == v for k, v in values.items())), None)

    def graph_settings(self, **values) -> dict:
        """Those of ``values`` (``CompileOptions`` fields) that this kernel's graph takes (``graph_options``):
        what the command line, the sweep and the scripts give a kernel of their settings, the others left at
        their defaults."""
        return {name: value for name, value in values.items() if name in self.graph_options}

    def reference_settings(self, options) -> dict:
        """The keywords ``reference`` takes from ``options`` (``reference_options``: chemistry's ``products``)."""
        return {name: getattr(options, name) for name in self.reference_options}

    @property
    def output(self) -> Field:
        """The kernel's one output field."""
        return FIELDS[self.outputs[0]]

    @property
    def fields(self) -> tuple[str, ...]:
        return self.inputs + self.outputs

    def build(self, mech: Mechanism, **settings) -> DataflowGraph:
        """The kernel's graph for ``mech`` (``settings``: values of the ``CompileOptions`` fields named
        in ``graph_options``, which the builder takes; none: its defaults).  A mechanism it cannot serve is the
        user's error, found with its location by ``singe.frontend``
        (``check_transport_kernel``, which ``compile_kernel`` runs first)."""
        if self.transport and len(mech.transported_species) < 2:
            raise SingeInternalError(f"{mech.name}: the {self.name} kernel needs at least two transported species "
                                     "(singe.frontend.kernel_inputs.check_transport_kernel refuses such a mechanism)")
        graph = self.builder(mech, **settings)
        self.check_fields(graph)
        return graph

    def signature(self, graph: DataflowGraph) -> tuple[list[str], list[str]]:
        """The input and output fields of the kernel built as ``graph``, in
        parameter order: every input the graph reads, then the outputs."""
        loaded = {i.field for op in graph.operations for i in op.instrs if i.opcode == "ldg"}
        return [f for f in self.inputs if f in loaded], list(self.outputs)

    def check_fields(self, graph: DataflowGraph) -> None:
        """The graph reads only the spec's inputs and writes exactly its outputs."""
        loaded = {i.field for op in graph.operations for i in op.instrs if i.opcode == "ldg"}
        stored = {i.field for op in graph.operations for i in op.instrs if i.opcode == "stg"}
        if not loaded <= set(self.inputs) or stored != set(self.outputs):
            raise SingeInternalError(f"{self.name} graph reads {sorted(loaded)} and writes {sorted(stored)}; "
                                     f"its spec says {list(self.inputs)} -> {list(self.outputs)}")

    def supports(self, mech: Mechanism) -> bool:
        """Can this kernel be compiled for ``mech`` (transport data and two species to mix where needed)?"""
        return not self.transport or (mech.has_transport and len(mech.transported_species) >= 2)


KERNELS: dict[str, KernelSpec] = {spec.name: spec for spec in (
    KernelSpec("viscosity", transport.viscosity_graph, ("temperature", "mass_fractions"), ("viscosity",),
               reference_transport.viscosity, 1e-10, "mixture viscosity (Wilke)", cantera="viscosity",
               # the switch: each warp's constants at indices ptxas knows (no LDC.64), 5x the code (DME 15x3)
               other_dispatch="switch", graph_options=("wilke_group", "warps", "replicate_ln_t", "wilke_symmetric"),
               fixed_warps=transport.band_warps,
               baseline_settings=transport.baseline_viscosity_settings,
               baseline_forms={"rows": {"wilke_symmetric": False},
                               "symmetric": {"wilke_symmetric": True, "wilke_group": None}}),
    KernelSpec("diffusion", transport.diffusion_graph, ("temperature", "pressure", "mass_fractions"),
               ("diffusion",), reference_transport.mixture_diffusion, 1e-10,
               "mixture-averaged diffusion coefficients", cantera="mix_diff_coeffs",
               fixed_warps=transport.diffusion_warps, regroup=transport.skew_diffusion),
    KernelSpec("chemistry", chemistry.chemistry_graph,
               ("temperature", "pressure", "mass_fractions", "dt", "diffusion_source"), ("production_rates",),
               reference_kinetics.net_production_rates, 1e-9, "net production rates (QSSA, stiffness removal)",
               errors=scaled_errors, error_measure="error / max|wdot|", transport=False, qssa=True,
               auto_placement=None,  # placement as fits (store, mixed, else buffer: the paper's passes, §3.4)
               dispatch="switch", balance="issue",  # warps share little code: one dispatch per slab
               graph_options=("products",), reference_options=("products",)),
    KernelSpec("conductivity", conductivity.conductivity_graph, ("temperature", "mass_fractions"),
               ("conductivity",), reference_transport.thermal_conductivity, 1e-10,
               "mixture thermal conductivity", cantera="thermal_conductivity", default=False),
)}
"""Every kernel, by name, in the order the command compiles them."""


POINT_INPUTS = tuple(name for name, f in FIELDS.items()
                     if f.rows == POINT and any(name in spec.inputs for spec in KERNELS.values()))
"""Inputs with one value per point (addressed by point alone in the emitted code)."""


def kernel_spec(name: str) -> KernelSpec:
    """The spec of kernel ``name``; an unknown name is refused here and only here."""
    spec = KERNELS.get(name)
    if spec is None:
        raise OptionError(f"unknown kernel {name!r}: choose from {', '.join(KERNELS)}")
    return spec


def kernel_signature(entry: str, graph: DataflowGraph, style: str, species) -> Signature:
    """The signature the emitted kernel of ``graph`` carries (``singe.signature``)."""
    inputs, outputs = kernel_spec(graph.kernel).signature(graph)
    parameters = [Parameter(f, False, FIELDS[f].rows) for f in inputs] + \
        [Parameter(f, True, FIELDS[f].rows) for f in outputs]
    return Signature(entry, graph.kernel, style, tuple(species), tuple(parameters))


def default_kernels(mech: Mechanism) -> list[str]:
    """The kernels compiled when none are named: the default ones ``mech`` supports, in registry order."""
    return [name for name, spec in KERNELS.items() if spec.default and spec.supports(mech)]


def state_arrays(kernel: str, inputs, n_species: int, T, P, Y, dt=None, diffusion_source=None):
    """The input arrays (fields ``inputs``) of ``kernel``, (rows, n) each, from a state: T [K] and P [Pa]
    (scalars or (n,)), Y (n_species, n) mass fractions, and for kernels that
    read them dt [s] (scalar or (n,); None: 0, no stiffness removal) and
    diffusion_source (n_species, n) [kg/m^3/s] (None: zeros).  Returns
    (arrays by field name, n)."""
    Y = np.atleast_2d(np.asarray(Y, dtype=float))
    if Y.shape[0] != n_species:
        raise ValueError(f"Y must have shape (n_species={n_species}, n), got {Y.shape}")
    n = Y.shape[1]
    if "dt" not in inputs and (dt is not None or diffusion_source is not None):
        raise ValueError(f"dt and diffusion_source are inputs of the chemistry kernel, not of {kernel}")
    values = {"temperature": T, "pressure": P, "mass_fractions": Y, "dt": 0.0 if dt is None else dt,
              "diffusion_source": 0.0 if diffusion_source is None else diffusion_source}
    arrays = {}
    for name in inputs:
        if name not in values:
            raise ValueError(f"{kernel}: no value for input field '{name}'")
        shape = (FIELDS[name].row_count(n_species), n)
        value = np.asarray(values[name], dtype=float)
        arrays[name] = np.broadcast_to(value if value.ndim != 1 or shape[0] != 1 else value[None, :], shape)
    return arrays, n
