"""The timing model of the table-form chemistry kernel (``singe.compiler.TableKernel``).

The table form's code is the same few loops for every mechanism
(``templates/chemistry_tables.cu.j2``, ``singe.codegen.tables``); what a warp
issues per slab is those loops' bodies times their trip counts.  The trip
counts come from the warp programs' ``TableLoop`` shares and from the
mechanism tables codegen writes (``ChemistryTables``: the rows' flags, the
sparse rows' entry counts, the thermo ranges, the PLOG pressures; with QSSA or
stiff species the QSSA sums, cells and solve operations, the stiffness sums and
the scaled directions of ``templates/chemistry_tables_qssa.cuh.j2``):
``warp_features`` counts, per warp, the iterations of each loop and branch of
the template (``FEATURES``).  What one iteration issues, by
``singe.timing.ISSUE_CLASSES``, is ``PER_FEATURE``: read off the SASS (sm_90)
of fit kernels by a least-squares fit of the per-warp counts of the SASS walk
(``autotune.sass``) to the features (``autotune/table_fit.py``, which prints
the table; the fit kernels are named there).  A held-out mechanism checks it
(tests/test_timing_tables.py).

Where C_k and g_k/RT live decides the class of their accesses: shared memory
(``LDS``/``STS``, the fit kernels' placement) or the workspace in global
memory (``LDG``/``STG``, ``singe.codegen.tables.species_shared_bytes``).

The CTA-level timing is ``singe.timing``'s: a warp's program is its phases
(``singe.kernels.table_form.phases``) as segments separated by the ``FullSync`` items, each segment's demand its issued
instructions, FP64 and MUFU instructions, shared-memory bytes and workspace
bytes (on L2 when the grid's workspace fits it, else DRAM); its solo time the
larger of its issue count and its dependence chain: per iteration the memory
round trips the loop body waits on (``ROUND_TRIPS``: on-SM ones, an L1 or
constant-cache hit or a shared access, at the shared-memory latency; workspace
loads at the L2 latency, ``Latencies.constant_miss``, or DRAM's when the
workspace does not fit the L2; the mass fractions from DRAM) and its FP64
instructions, taken as one chain (the exponentials' polynomials and the
products are).  Occupancy from the register plan (or ptxas), the shared bytes
of C_k and g_k/RT and one barrier id; the code (a few thousand instructions)
fits the instruction cache.
"""

from __future__ import annotations

from collections import Counter

import numpy as np

from singe import timing
from singe.codegen.tables import species_shared_bytes
from singe.kernels import chemistry_tables as ct
from singe.kernels import table_form
from singe.programs import FULL_BARRIER_ID, WARP_SIZE
from singe.programs.tables import TableLoop
from singe.timing import ISSUE_CLASSES, WARP_BYTES, Barrier, Segment

FEATURES = ("slab", "partials", "species", "ranges", "sums_species", "sums_entries", "rows", "falloff", "troe",
            "plog", "plog_pressures", "plog_sets", "eff_entries", "plain_entries", "gibbs_entries", "equilibrium",
            "reverse", "explicit_reverse", "split_rows", "split_entries", "qssa_slab", "qssa_species", "qssa_cells", "qssa_terms",
            "solve_ops", "solve_divides", "stiff_slab", "stiff_species", "stiff_entries", "scale_slab", "scale_rows",
            "scale_factors", "scale_powers", "stiff_qssa_entries", "scale_qssa_rows")
"""What a warp's code repeats per slab, by the template's loops and branches:
``slab`` 1 (the slab loop, the point's values, the barriers, the phases' set-up);
``partials`` the concentrations phase's sum over the other warps' partial sums;
``species`` C_k and g_k/RT of one species (thermo and concentrations phases),
``ranges`` one more thermo range of it (the search for T's range);
``sums_species`` wdot_k of one species, ``sums_entries`` one (row, nu) entry of its sum;
``rows`` one reaction row (its rate constant, ``finish_row``), ``falloff``,
``troe`` and ``plog`` rows of those forms on top, ``plog_pressures`` one
tabulated pressure of a PLOG row (the search), ``plog_sets`` its Arrhenius
sets at the two pressures it interpolates between (the sets per pressure of
the row, twice); ``eff_entries`` a third-body efficiency; ``plain_entries`` a
factor of a row's forward or reverse product (no equilibrium constant),
``gibbs_entries`` one of a row that also sums g/RT (equilibrium reverse);
``equilibrium`` rows whose k_r comes from Kc, ``reverse`` reversible rows,
``explicit_reverse`` those with an Arrhenius k_r (n-heptane's).
Where q_f and q_r are kept apart (a mechanism with QSSA or stiff species,
``templates/chemistry_tables_qssa.cuh.j2``): ``split_rows`` a row's second
store, ``split_entries`` a species-sum entry's second read; ``qssa_slab``,
``stiff_slab``, ``scale_slab`` 1 per warp with those phases (their set-up and
barriers); ``qssa_species`` one QSSA species' coefficients (D_i, a_i0),
``qssa_cells`` one cell of its row, ``qssa_terms`` one term of their sums;
``solve_ops`` one operation of the solve (warp 0), ``solve_divides`` a division
among them; ``stiff_species`` one stiff species' factor, ``stiff_entries`` one
term of its destruction or creation sum (``stiff_qssa_entries`` one whose direction a QSSA
species' x_i scales); ``scale_rows`` one scaled direction (``scale_qssa_rows`` by an x_i),
``scale_factors`` one stiffness factor of it (with stiff species), ``scale_powers`` one
whose exponent is not 1 (``pow``)."""

PHASE_FEATURES = {"thermo": ("slab", "species", "ranges"), "concentrations": ("partials",),
                  "rates": ("rows", "falloff", "troe", "plog", "plog_pressures", "plog_sets", "eff_entries",
                            "plain_entries", "gibbs_entries", "equilibrium", "reverse", "explicit_reverse",
                            "split_rows"),
                  "qssa_coefficients": ("qssa_slab", "qssa_species", "qssa_cells", "qssa_terms"),
                  "qssa_solve": ("solve_ops", "solve_divides"), "stiffness": ("stiff_slab", "stiff_species",
                                                                                "stiff_entries", "stiff_qssa_entries"),
                  "scale": ("scale_slab", "scale_rows", "scale_factors", "scale_powers", "scale_qssa_rows"),
                  "species": ("sums_species", "sums_entries", "split_entries")}
"""The phase (segment) whose code each feature's instructions are in, in the kernel's order
(``singe.kernels.table_form.PHASES``; the per-species concentrations work is priced with the thermo
phase's ``species``: both loops run over the same species).  ``qssa_slab`` also prices the scale
phase's set-up where both phases are there (every fit kernel with QSSA species has them together)."""


def _rates_features(tables: ct.ChemistryTables, begin: int, end: int) -> Counter:
    """The rates phase's features of rows ``begin:end``."""
    features = Counter()
    rows = np.arange(begin, end)
    if not rows.size:
        return features
    flags = tables.flags[rows]
    groups = np.searchsorted(tables.group_ptr, rows, side="right") - 1
    fwd = np.diff(tables.forward_factors.ptr)[rows]
    rev = np.diff(tables.reverse_factors.ptr)[rows]
    eff = np.diff(tables.efficiencies.ptr)[rows]
    equilibrium = (flags & ct.EQUILIBRIUM) != 0
    reverse = (flags & (ct.EXPLICIT_REVERSE | ct.EQUILIBRIUM)) != 0
    entries = fwd + np.where(reverse, rev, 0)
    features.update(rows=rows.size, falloff=int((groups == 1).sum()), troe=int(((flags & ct.TROE) != 0).sum()),
                    plog=int((groups == 2).sum()), eff_entries=int(eff[groups <= 1].sum()),
                    plain_entries=int(entries[~equilibrium].sum()),
                    gibbs_entries=int((fwd + rev)[equilibrium].sum()), equilibrium=int(equilibrium.sum()),
                    reverse=int(reverse.sum()), explicit_reverse=int(((flags & ct.EXPLICIT_REVERSE) != 0).sum()))
    for row in rows[groups == 2]:
        e = int(tables.extra[row])
        first, last = int(tables.plog_ptr[e]), int(tables.plog_ptr[e + 1])
        sets = int(tables.plog_set_ptr[last] - tables.plog_set_ptr[first])
        features["plog_pressures"] += last - first
        features["plog_sets"] += 2 * sets / (last - first)
    return features


def _slab_features(tables: ct.ChemistryTables) -> Counter:
    """The per-warp set-up of the QSSA, stiffness and scale phases (counted with the thermo loop, which every
    warp runs: a warp with no share of a phase still runs its set-up and barrier)."""
    return Counter(qssa_slab=int(tables.qssa is not None), stiff_slab=int(tables.stiff is not None),
                   scale_slab=int(tables.split))


def _qssa_features(tables: ct.ChemistryTables, begin: int, end: int) -> Counter:
    """The QSSA coefficients phase's features of QSSA species ``begin:end``."""
    q = tables.qssa
    first, last = int(q.cell_ptr[begin]), int(q.cell_ptr[end])
    ptr = q.sums.ptr
    terms = int(ptr[2 * end] - ptr[2 * begin]) + int(ptr[2 * q.n_qss + last] - ptr[2 * q.n_qss + first])
    return Counter(qssa_species=end - begin, qssa_cells=last - first, qssa_terms=terms)


def _solve_features(tables: ct.ChemistryTables, begin: int, end: int) -> Counter:
    ops = tables.qssa.ops[begin:end, 0]
    return Counter(solve_ops=end - begin, solve_divides=int((ops == ct.DIVIDE).sum()))


def _stiffness_features(tables: ct.ChemistryTables, begin: int, end: int) -> Counter:
    st = tables.stiff
    directions = np.concatenate([csr.index[csr.ptr[begin]:csr.ptr[end]] for csr in (st.destruction, st.creation)])
    scaled = int((tables.scale.direction_qss[directions] >= 0).sum()) if tables.qssa is not None else 0
    return Counter(stiff_species=end - begin, stiff_entries=directions.size, stiff_qssa_entries=scaled)


def _scale_features(tables: ct.ChemistryTables, begin: int, end: int) -> Counter:
    qssa = tables.scale.direction_qss[tables.scale.direction[begin:end]]
    scaled = int((qssa >= 0).sum()) if tables.qssa is not None else 0
    if tables.stiff is None:  # the template's scale loop has no factor loop
        return Counter(scale_rows=end - begin, scale_qssa_rows=scaled)
    csr = tables.scale.factors
    nu = csr.value[csr.ptr[begin]:csr.ptr[end]]
    return Counter(scale_rows=end - begin, scale_factors=nu.size, scale_powers=int((nu != 1.0).sum()),
                   scale_qssa_rows=scaled)


_EXTENSION_FEATURES = {"qssa_coefficients": _qssa_features, "qssa_solve": _solve_features,
                       "stiffness": _stiffness_features, "scale": _scale_features}


def loop_features(loop: TableLoop, warps: int) -> Counter:
    """The features of one warp's table loop (see ``FEATURES``)."""
    tables = loop.tables
    n = loop.end - loop.begin
    if loop.phase == "thermo":
        counts = np.diff(tables.thermo_ptr)[loop.begin:loop.end]
        return Counter(slab=1, partials=warps - 1, species=n, ranges=int((counts - 1).sum())) + \
            _slab_features(tables)
    if loop.phase == "concentrations":  # its species are the thermo loop's; every warp sums the partials
        return Counter()
    if loop.phase == "species":
        entries = int(tables.species_sums.ptr[loop.end] - tables.species_sums.ptr[loop.begin])
        return Counter(sums_species=n, sums_entries=entries, split_entries=entries if tables.split else 0)
    if loop.phase in _EXTENSION_FEATURES:
        return _EXTENSION_FEATURES[loop.phase](tables, loop.begin, loop.end)
    features = _rates_features(tables, loop.begin, loop.end)
    if tables.split:
        features["split_rows"] = n
    return features


def warp_features(programs) -> list[Counter]:
    """Per warp, the features of its table loops (one slab)."""
    result = []
    for program in programs.programs:
        features = Counter()
        for item in program.items:
            if isinstance(item, TableLoop):
                features.update(loop_features(item, programs.warps))
        result.append(features)
    return result


# --------------------------------------------------------------------------- issued instructions

PER_FEATURE: dict[str, dict[str, float]] = {
    "fp64": {"slab": 104.73, "partials": 0.71, "species": 11.19, "sums_species": 2.72, "sums_entries": 1.08,
        "rows": 18.11, "falloff": 51.77, "troe": 234.0, "plog": 355.78, "eff_entries": 1.06, "plain_entries": 3.46,
        "gibbs_entries": 3.37, "equilibrium": 2.59, "reverse": 21.85, "split_rows": 3.14, "split_entries": 0.18,
        "qssa_species": 28.93, "qssa_cells": 0.19, "qssa_terms": 0.98, "solve_divides": 20.88, "stiff_slab": 4.73,
        "stiff_species": 48.11, "stiff_entries": 1.55, "scale_rows": 1.79, "scale_powers": 99.49,
        "stiff_qssa_entries": 4.71},
    "mufu": {"slab": 5.97, "partials": 0.09, "sums_species": 0.25, "sums_entries": 0.01, "falloff": 2.46,
        "troe": 5.64, "plog": 3.49, "eff_entries": 0.02, "gibbs_entries": 0.06, "explicit_reverse": 0.4,
        "split_rows": 0.18, "qssa_species": 0.34, "qssa_cells": 0.47, "qssa_terms": 0.02, "solve_divides": 1.02,
        "stiff_slab": 0.97, "stiff_species": 4.26, "scale_powers": 3.18},
    "lds": {"eff_entries": 1.0, "plain_entries": 1.0, "gibbs_entries": 2.0, "stiff_species": 1.0},
    "sts": {"species": 2.0},
    "ldg": {"partials": 1.22, "species": 14.0, "sums_species": 1.4, "sums_entries": 2.99, "rows": 0.71,
        "falloff": 6.25, "troe": 0.93, "plog": 46.66, "eff_entries": 1.97, "plain_entries": 1.78,
        "gibbs_entries": 1.55, "equilibrium": 0.14, "explicit_reverse": 2.39, "split_rows": 0.94,
        "split_entries": 0.73, "qssa_terms": 2.96, "solve_ops": 2.76, "solve_divides": 1.3, "stiff_slab": 2.56,
        "stiff_species": 0.61, "stiff_entries": 3.83, "scale_rows": 1.43, "scale_factors": 2.45,
        "scale_powers": 2.99, "stiff_qssa_entries": 1.1},
    "stg": {"slab": 1.0, "sums_species": 1.0, "rows": 1.0, "split_rows": 1.0, "qssa_species": 1.0,
        "qssa_cells": 1.0, "solve_ops": 1.0, "stiff_species": 1.0, "scale_rows": 1.0},
    "bar": {"slab": 3.0, "qssa_slab": 3.0, "stiff_slab": 1.0},
    "shfl": {},
    "branch": {"slab": 13.37, "species": 6.81, "sums_species": 7.93, "sums_entries": 0.07, "rows": 8.76,
        "falloff": 5.77, "troe": 10.87, "plog": 19.22, "eff_entries": 1.0, "plain_entries": 0.12,
        "gibbs_entries": 0.85, "explicit_reverse": 3.84, "split_rows": 0.52, "qssa_species": 0.68,
        "qssa_cells": 4.09, "qssa_terms": 0.43, "solve_ops": 1.73, "solve_divides": 2.41, "stiff_slab": 5.94,
        "stiff_species": 11.78, "stiff_entries": 0.44, "scale_rows": 2.47, "scale_factors": 1.81,
        "scale_powers": 17.66, "stiff_qssa_entries": 0.04},
    "other": {"slab": 39.14, "partials": 14.0, "species": 110.52, "sums_species": 53.66, "sums_entries": 4.99,
        "rows": 95.67, "falloff": 86.95, "troe": 291.0, "plog": 447.8, "eff_entries": 5.85, "plain_entries": 2.8,
        "gibbs_entries": 3.85, "equilibrium": 28.02, "explicit_reverse": 62.39, "split_rows": 10.53,
        "split_entries": 0.76, "qssa_species": 29.06, "qssa_cells": 19.69, "qssa_terms": 10.17, "solve_ops": 20.7,
        "solve_divides": 25.4, "stiff_slab": 59.47, "stiff_species": 118.15, "stiff_entries": 15.28,
        "scale_rows": 22.73, "scale_factors": 2.25, "scale_powers": 168.51, "stiff_qssa_entries": 6.59},
}
"""Machine instructions per unit of each feature, by class (``singe.timing.ISSUE_CLASSES``;
'lds'/'sts' are the C_k and g_k/RT accesses in shared memory).  Fitted by
``autotune/table_fit.py`` (see there for the fit kernels), refitted once the SASS walk read the tables
(``autotune.sass.global_tables``): before, it guessed the branches on them, the scaled directions'
``pow`` among them (taken for every factor; skipped for an exponent of 1, as the kernel does)."""


def _place(counts: dict, shared: bool) -> dict:
    """``counts`` with the C_k and g_k/RT accesses in the workspace (global) unless ``shared``."""
    if shared:
        return counts
    counts = dict(counts)
    counts["ldg"] = counts.get("ldg", 0.0) + counts.pop("lds", 0.0)
    counts["stg"] = counts.get("stg", 0.0) + counts.pop("sts", 0.0)
    return counts


def feature_classes(features: Counter, names=FEATURES, table: dict | None = None) -> dict:
    """Machine instructions by class of ``features`` (only those in ``names``)."""
    table = PER_FEATURE if table is None else table
    counts: dict[str, float] = {}
    for name, per in table.items():
        for feature in names:
            n = features.get(feature, 0)
            if n:
                counts[name] = counts.get(name, 0.0) + per.get(feature, 0.0) * n
    return counts


def species_in_shared(compiled) -> bool:
    """Whether C_k and g_k/RT live in shared memory (``singe.codegen.tables.species_shared_bytes``)."""
    return species_shared_bytes(compiled.tables, compiled.options) > 0


def issued_per_warp(compiled, table: dict | None = None) -> list[dict]:
    """Machine instructions each warp issues per slab, by class (compare with
    ``autotune.sass``'s per-warp counts of the compiled kernel)."""
    shared = species_in_shared(compiled)
    result = []
    for features in warp_features(compiled.programs):
        counts = _place(feature_classes(features, FEATURES, table), shared)
        result.append({name: round(counts.get(name, 0.0)) for name in ISSUE_CLASSES})
    return result


# --------------------------------------------------------------------------- the CTA

ROUND_TRIPS = {"slab": {"dram": 1, "ws": 1}, "species": {"dram": 1, "sm": 1}, "rows": {"sm": 2},
               "falloff": {"sm": 1}, "plog_pressures": {"sm": 1}, "plog_sets": {"sm": 1},
               "eff_entries": {"sm": 1, "cg": 1}, "plain_entries": {"sm": 1, "cg": 1},
               "gibbs_entries": {"sm": 1, "cg": 1}, "sums_species": {"sm": 1, "ws": 1},
               "qssa_species": {"sm": 1}, "qssa_cells": {"sm": 1}, "qssa_terms": {"sm": 1, "ws": 1},
               "solve_ops": {"sm": 1, "ws": 1}, "stiff_species": {"sm": 1, "cg": 1, "dram": 1},
               "stiff_entries": {"sm": 1, "ws": 1}, "scale_rows": {"sm": 1, "ws": 1}, "scale_factors": {"sm": 1, "ws": 1}}
"""Memory round trips one unit of a feature waits on, in sequence: the loops over rows and over a
row's entries are not unrolled (``#pragma unroll 1``) and ptxas does not pipeline their iterations
(an entry: its species index, then its C_k and g_k/RT); ptxas unrolls the loop of a species sum by
16 and the partial sums' loop in full, whose loads then overlap (none counted per entry).  'sm': an
access served on the SM (a constant-cache or L1 hit of a table, a shared-memory access); 'cg': a
C_k or g_k/RT read (shared memory or the workspace); 'ws': a workspace read (L2 or DRAM); 'dram': a
global input (T and P once per slab, the mass fraction of each species, a stiff species' diffusion
source).  The QSSA and stiffness loops are as the rates': a sum's term is its direction (a table
load), then q (a workspace read); a solve operation its operands, then the two slots' values."""


def workspace_level(compiled, preset, ctas: int) -> str:
    """'l2' when the workspaces of every resident CTA of the GPU fit the L2 cache, else 'dram'."""
    footprint = compiled.programs.slot_bytes * ctas * preset.sms
    return "l2" if footprint <= preset.l2_bytes else "dram"


def workspace_accesses(features: Counter, phase: str, warps: int) -> float:
    """Warp-wide workspace accesses (one double per lane) of one warp's ``phase`` besides C_k and g_k/RT:
    the partial sums (a store, every warp's read), q_j (a store per row, a read per species-sum entry; q_f
    and q_r apart: twice), the QSSA sums' reads of q and stores of x_i and the cells, the solve's three reads
    and a store per operation, the stiffness sums' reads of q and factor stores, the scale phase's read and
    store of q and read of each factor (the reads of x_i that scale q are on top: an L1 hit, not counted)."""
    get = features.get
    return {"thermo": 1.0, "concentrations": float(warps), "rates": float(get("rows", 0) + get("split_rows", 0)),
            "qssa_coefficients": float(get("qssa_terms", 0) + get("qssa_species", 0) + get("qssa_cells", 0)),
            "qssa_solve": 4.0 * get("solve_ops", 0),
            "stiffness": float(get("stiff_entries", 0) + get("stiff_species", 0)),
            "scale": float(2 * get("scale_rows", 0) + get("scale_factors", 0)),
            "species": float(get("sums_entries", 0) + get("split_entries", 0))}[phase]


def _latencies(preset, shared: bool, level: str) -> dict:
    lat = preset.latency
    workspace = lat.constant_miss if level == "l2" else lat.global_  # an L2 hit: what a constant-cache miss costs
    return {"sm": lat.shared, "cg": lat.shared if shared else workspace, "ws": workspace, "dram": lat.global_}


def phase_segment(features: Counter, phase: str, compiled, preset, level: str):
    """One warp's ``phase`` as a ``singe.timing.Segment`` (see the module docstring)."""
    shared = species_in_shared(compiled)
    names = PHASE_FEATURES[phase]
    placed = feature_classes(features, names)  # C_k and g_k/RT accesses as 'lds' and 'sts'
    species_accesses = placed.get("lds", 0.0) + placed.get("sts", 0.0)
    counts = _place(placed, shared)
    issue = sum(counts.values())
    latency = _latencies(preset, shared, level)
    chain = counts.get("fp64", 0.0) * preset.latency.fp64
    for name in names:
        for where, n in ROUND_TRIPS.get(name, {}).items():
            chain += features.get(name, 0) * n * latency[where]
    cg = species_accesses if shared else 0.0
    workspace = workspace_accesses(features, phase, compiled.programs.warps) + (0.0 if shared else species_accesses)
    demand = {"issue": issue, "fp64": counts.get("fp64", 0.0), "mufu": counts.get("mufu", 0.0),
              "shared": cg * WARP_BYTES, level: workspace * WARP_BYTES}
    if phase == "thermo":  # the mass fractions (read twice: again from L2 by the concentrations phase)
        demand["dram"] = demand.get("dram", 0.0) + features.get("species", 0) * WARP_BYTES
    if phase == "stiffness":  # the diffusion sources of the stiff species
        demand["dram"] = demand.get("dram", 0.0) + features.get("stiff_species", 0) * WARP_BYTES
    if phase == "species":  # the production rates
        demand["dram"] = demand.get("dram", 0.0) + features.get("sums_species", 0) * WARP_BYTES
    # a warp with no share of a phase (the solve's warps but warp 0) still tests its loop: a cycle at least
    return Segment(max(issue, chain, 1.0), tuple((k, v) for k, v in demand.items() if v))


def warp_steps(compiled, preset, level: str) -> list[list]:
    """Each warp's phases (those of the mechanism, ``singe.kernels.table_form.phases``) as Segments,
    separated by the full barriers of its program."""
    threads = compiled.programs.threads
    result = []
    order = table_form.phases(compiled.tables)
    for features in warp_features(compiled.programs):
        steps = []
        for k, phase in enumerate(order):
            if k:
                steps.append(Barrier(FULL_BARRIER_ID, threads, True))
            steps.append(phase_segment(features, phase, compiled, preset, level))
        result.append(steps)
    return result


CODE_INSTRUCTIONS = 5290
"""Static SASS instructions of the table form's kernel, at most (sm_90): the code is the same loops
for every mechanism, the mechanism being data, less the loops of rate forms it lacks (GRI-Mech 3.0
3,516; NUIG n-hexane, with PLOG rows, 5,290), so it is taken as the larger for all
(``singe.timing.instruction_fetch``: it fits the 128 KB instruction cache)."""


def model(compiled, preset=None, ptxas=None, slabs: int = 3, flops: int | None = None, pace=None):
    """Modeled throughput of the table-form kernel of ``compiled`` (a ``TableKernel``) as a
    ``singe.timing.TimingResult``; ``ptxas`` and ``pace`` as for ``singe.timing.model``; ``flops`` per point for
    the FP64 roofline (default: the unrolled dataflow graph's count of the same mechanism)."""
    preset = timing.preset_for(preset or compiled.options.arch)
    programs, options = compiled.programs, compiled.options
    plan = timing._plan_for(programs, preset.register_budget(programs.threads, options.ctas_per_sm))
    registers, spills, source = timing._registers(plan.predicted, plan.spilled, ptxas)
    occ = timing.occupancy(preset, programs.warps, registers, species_shared_bytes(compiled.tables, options), 1)
    if flops is None:
        from singe.kernels import build_graph

        flops = build_graph(compiled.mechanism, "chemistry").flops
    result = None
    if occ.ctas:
        level = workspace_level(compiled, preset, occ.ctas)
        where = spills.resource(preset, occ.warps * WARP_SIZE)
        steps = [timing.add_spills(s, spills, where) for s in warp_steps(compiled, preset, level)]
        fetch = timing.instruction_fetch(CODE_INSTRUCTIONS, preset, occ.ctas)
        steps = [timing.spread_issue(s, 0.0, {"l2": fetch / len(steps)}) if fetch else s for s in steps]
        steps = [timing.issue_floor(s, p) for s, p in zip(steps, timing.warp_paces(pace, len(steps)))]
        result = timing.cta_timing(steps, preset, occ.ctas, slabs)
    return timing._result(compiled.kernel, "tables", preset, occ, result, WARP_SIZE, flops, spills.traffic, source)
