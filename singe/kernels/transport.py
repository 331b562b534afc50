"""Dataflow graphs of the viscosity and diffusion kernels (paper §3.2, §3.3).

Both kernels see the transported species only (QSSA species are not in the
state).  Inputs: temperature [K], pressure [Pa], mass fractions (species
major); outputs: viscosity [Pa s], or the mixture-averaged diffusion
coefficient of every transported species [m^2/s].
"""

from __future__ import annotations

import math

import numpy as np

from singe.derived.transport import fit_transport
from singe.kernels.ir import Const, DataflowGraph, Imm, Instr, InstrBuilder, Operation, Reg, Regrouping
from singe.mechanism import Mechanism

MOLES_FLOOR = 1e-100
"""Lower bound of the mole numbers Y_k/M_k [kmol/kg] the transport kernels use in place of mole fractions
(``viscosity_species_op``, ``conductivity.species_conductivity_op``; of the mass fractions in
``diffusion_species_op``, whose mole numbers then stay above 1e-100/M_k, normal doubles): each kernel's
formula is homogeneous in the mole fractions, so no warp waits for their sum, and homogeneous of degree 0 in
the mass fractions, so the clamped mole numbers also make the sums (a negative mass fraction counts as 0, as
Cantera's ``TPY`` sets it).  Cantera clamps the mole fractions at 1e-20 instead, which differs only for species
below it, whose share of any sum is below 1e-20 relative.  A Wilke fraction's numerator and denominator
(``wilke_op``) stay normal (products of two D_k above 1e-200) even when every species is at the floor."""


def _op(builder: InstrBuilder, name: str, kind: str, inputs, outputs, **flags) -> Operation:
    return Operation(name, kind, tuple(builder.instrs), tuple(inputs), tuple(outputs), **flags)


def temperature_op(replicated: bool = True) -> Operation:
    """T and ln T: computed by every warp that needs them (``replicated``), or by one warp and
    shared through shared memory."""
    b = InstrBuilder("temp")
    T = b.load("temperature", 0, dst="T")
    b.emit("log", T, dst="lnT")
    return _op(b, "temperature", "point", [], ["lnT"] if not replicated else ["T", "lnT"], replicated=replicated)


def pressure_op() -> Operation:
    b = InstrBuilder("pres")
    b.load("pressure", 0, dst="P")
    return _op(b, "pressure", "point", [], ["P"], replicated=True)


def mole_number(b: InstrBuilder, k: int, weight: float, dst: str | None = None) -> Reg:
    """Species k's mole number max(Y_k/M_k, ``MOLES_FLOOR``), as the viscosity and conductivity kernels read it."""
    return b.emit("max", b.emit("mul", b.load("mass_fractions", k), Const(1.0 / weight)), Imm(MOLES_FLOOR), dst=dst)


def reduction_op(name: str, terms: list[str], output: str) -> Operation:
    """output = sum of terms (associative: mapping may split it per warp)."""
    b = InstrBuilder(name)
    total = Reg(terms[0])
    for term in terms[1:-1]:
        total = b.emit("add", total, Reg(term))
    if len(terms) > 1:
        b.emit("add", total, Reg(terms[-1]), dst=output)
    else:
        b.emit("mov", total, dst=output)
    return _op(b, name, "reduction", terms, [output], reduction=True)


# -- viscosity ---------------------------------------------------------------
#
# Wilke's rule (docs/formulas.md §6) with s_k = sqrt(eta_k) M_k^(-1/4) and r_k = 1/s_k:
#     Phi_kj = d_kj (1 + s_k/s_j)^2 = d_kj (r_k + r_j)^2 / r_k^2,   d_kj = 1/sqrt(8 (1 + M_k/M_j)),
#     eta_k = sqrt(M_k) / r_k^2,
# so  eta = sum_k x_k eta_k / sum_j x_j Phi_kj = sum_k x_k sqrt(M_k) / D_k,
#     D_k = sum_j d_kj x_j (r_k + r_j)^2 = sum_j d_kj (r_k p_j + q_j)^2,   p_j = sqrt(x_j), q_j = p_j r_j:
# one exp per species (r_k), per pair an FMA, a square and an FMA with the pair's constant, and the
# inner species read as two values (p_j, q_j); every term is positive, nothing cancels.


def viscosity_species_op(k: int, coefficients, weight: float) -> Operation:
    """What the Wilke sums read of species k: p_k = sqrt(x_k) of its mole number
    x_k = max(Y_k/M_k, MOLES_FLOOR), r_k = 1/s_k = eta_k^(-1/2) M_k^(1/4) and q_k = p_k r_k.

    Wilke's rule is homogeneous of degree 0 in the mole fractions, so mole
    numbers serve in their place without their sum (x_k / sum_j x_j is the
    mole fraction): no reduction, no reciprocal, no barrier before the
    sums (the clamp: ``MOLES_FLOOR``).

    r_k is one exp of the viscosity fit's cubic in ln T with its coefficients
    halved and negated and the weight folded into the constant term: the
    species' only exp, as Cantera computes the Wilke ratios from per-species
    square roots (MixTransport::updateViscosity_T)."""
    b = InstrBuilder(f"vs{k}")
    p = b.emit("sqrt", mole_number(b, k, weight), dst=f"p{k}")
    b.emit("mul", p, inverse_root_viscosity(b, k, coefficients, weight), dst=f"q{k}")
    return _op(b, f"viscosity_species_{k}", "species", ["lnT"], [f"p{k}", f"q{k}", f"r{k}"])


def inverse_root_viscosity(b: InstrBuilder, k: int, coefficients, weight: float) -> Reg:
    """r_k = eta_k^(-1/2) M_k^(1/4) (``r<k>``): one exp of the viscosity fit's cubic in ln T, its coefficients halved
    and negated and the weight folded into the constant term."""
    scaled = [-0.5 * float(c) for c in coefficients]
    scaled[0] += 0.25 * math.log(weight)
    return b.emit("exp", b.polynomial(scaled, Reg("lnT")), dst=f"r{k}")


MAX_WILKE_GROUP = 8  # outer species per Wilke sum (each a running sum and its r_k in registers)
WILKE_GROUP = 2
"""Outer species per Wilke operation: their sums run over the inner species j together, so that a
warp reads p_j and q_j once for the group (DME viscosity at the paper's 15 warps: one group per
warp; with the former sums of x_j and 1/s_j, 15,566 -> 11,649 lane-instructions issued per point,
sm_90 SASS walk).  In every mechanism: n-heptane (52 species, its loops rolled) at the paper's 13
warps x 3 CTAs issues 23,755 per point against 31,553 with one outer species per operation, half the
shared loads, 46 registers and no spills on sm_90 and sm_80 (ptxas; the second running sum spilled
8-20 B when larger mechanisms kept one, before the loops' fences)."""


def balanced_wilke_group(n: int, warps: int | None = None) -> int:
    """Outer species per Wilke operation when ``--wilke-group`` is not given, for ``n`` species at ``warps`` warps
    per CTA: as few sums a warp as groups of at most ``MAX_WILKE_GROUP`` allow (one where the species fit, m =
    ceil(n / (warps MAX_WILKE_GROUP))), their groups as small as m sums a warp allow (ceil(n / (m warps))), so
    that the slowest warp's share, ceil(n / warps) outer species, is the least any grouping gives; a pair
    (``WILKE_GROUP``) where that group would be smaller.  n-heptane's 52 species at the paper's 13 warps: 4;
    DME's 30 at 10: 3; at the default 8 warps, where 8 does not divide the species, 7 (n-heptane, GRI-Mech's
    53: seven groups of 7 and one of 3 or 4) and 4 (DME: seven of 4 and one of 2).  A larger group reads each
    p_j and q_j once for more outer species: fewer shared loads, the viscosity kernels' bound.

    Measured (H200, docs/measurements/2026-11-27-h200-stripes, run 6, Mpoints/s): n-heptane viscosity at the
    paper's 13 warps x 3 CTAs, 889.7 in groups of 4 against 779.8 in groups of 2 (its baseline: 480.2); DME at
    10 x 4, 2213.5 in groups of 3 against 1728.0 in groups of 2 (run 2; its 15 x 3 in groups of 2: 1914.4).
    The groups at warp counts that do not divide the species are not measured (this session had no GPU): the
    sm_90 SASS walk and the model give them the same kind of gain (docs/measurements/README.md)."""
    if not warps:
        return WILKE_GROUP
    sums_a_warp = math.ceil(n / (warps * MAX_WILKE_GROUP))
    size = math.ceil(n / (sums_a_warp * warps))
    return size if size > WILKE_GROUP else WILKE_GROUP


def wilke_groups(n: int, size: int | None = None, warps: int | None = None) -> list[tuple[int, ...]]:
    """The outer species of each Wilke operation: consecutive runs of ``size`` (``--wilke-group``; None:
    ``balanced_wilke_group`` at ``warps`` warps per CTA)."""
    size = size or balanced_wilke_group(n, warps)
    return [tuple(range(k, min(k + size, n))) for k in range(0, n, size)]


def baseline_viscosity_settings(mech: Mechanism) -> dict:
    """The viscosity graph's settings for the data-parallel baseline: Wilke groups of ``MAX_WILKE_GROUP``, the
    largest a group's one fraction is built for (its denominator is the product of the group's sums).  The
    warp-specialized kernel's groups are chosen to balance its warps (``balanced_wilke_group``), which a kernel
    of one thread a point has no use for; a larger group issues fewer instructions (one division a group, the
    inner species' p_j and q_j used once for the group's sums).

    Modeled (ptxas and the SASS paces, Mpoints/s, H100 / A100 preset), the baseline in groups of 2, 4 and 8:
    DME 3,965 / 1,253, 4,081 / 1,267 and 4,175 / 1,275 (FP64-bound: 95 % and 100 % of the roofline in groups
    of 8); n-heptane, which spills at 255 registers in every grouping, 607 / 99.5 in the paper's groups of 4
    and 615 / 100.2 in groups of 8.  One group of every species would model 1.4 % faster for DME and 0.8 % for
    n-heptane, but its fraction's denominator would be the product of 30 or 52 sums, which can leave the
    double's range."""
    return {"wilke_group": MAX_WILKE_GROUP, "warps": None, "replicate_ln_t": False}  # ln T: once a thread either way


def wilke_factor(weight_k: float, weight_j: float) -> float:
    """d_kj = 1 / sqrt(8 (1 + M_k/M_j)), the constant of the pair (k, j)."""
    return 1.0 / math.sqrt(8.0 * (1.0 + weight_k / weight_j))


def wilke_term_name(ks) -> str:
    """The graph value of the Wilke operation of the outer species ``ks``: their terms' sum."""
    return "term" + "_".join(map(str, ks))


def wilke_op(ks, weights: np.ndarray) -> Operation:
    """sum_k x_k sqrt(M_k) / D_k over the outer species k of ``ks`` (one index
    or a group), D_k = sum_j d_kj (r_k p_j + q_j)^2 (the section's comment):
    the group's sums interleaved per inner species j, then the terms as one
    fraction, N/D + n/d = (N d + n D) / (D d): one division per group."""
    ks = (ks,) if isinstance(ks, (int, np.integer)) else tuple(ks)
    n = len(weights)
    b = InstrBuilder("wk" + "_".join(map(str, ks)))
    sums: dict[int, Reg] = {}
    for j in range(n):  # j == k included (Phi_kk = 1 to rounding): every outer species has the same code
        for k in ks:
            w = b.emit("fma", Reg(f"r{k}"), Reg(f"p{j}"), Reg(f"q{j}"))
            square = b.emit("mul", w, w)
            factor = Const(wilke_factor(weights[k], weights[j]))
            sums[k] = b.emit("mul", square, factor) if j == 0 else b.emit("fma", square, factor, sums[k])
    numerator = denominator = None
    for k in ks:
        term = b.emit("mul", b.emit("mul", Reg(f"p{k}"), Reg(f"p{k}")), Const(math.sqrt(weights[k])))
        if numerator is None:
            numerator, denominator = term, sums[k]
        else:
            numerator = b.emit("fma", term, denominator, b.emit("mul", numerator, sums[k]))
            denominator = b.emit("mul", denominator, sums[k])
    b.emit("div", numerator, denominator, dst=wilke_term_name(ks))
    inputs = [f"{v}{j}" for j in range(n) for v in "pq"] + [f"r{k}" for k in ks]
    return _op(b, f"wilke_{'_'.join(map(str, ks))}", "species", inputs, [wilke_term_name(ks)])


def viscosity_graph(mech: Mechanism, wilke_group: int | None = None, warps: int | None = None,
                    replicate_ln_t: bool = False, wilke_symmetric: bool = False) -> DataflowGraph:
    """The viscosity kernel's graph: its symmetric form with ``wilke_symmetric`` (``viscosity_symmetric_graph``);
    else its row form, ln T (one warp, shared; every warp its own with ``replicate_ln_t``), per species p_k, q_k, r_k
    (``viscosity_species_op``), one Wilke operation per group of outer species (``wilke_groups``: ``wilke_group``
    species, or as ``warps`` warps per CTA balance them), a reduction of their terms, the write."""
    if wilke_symmetric:
        return viscosity_symmetric_graph(mech, replicate_ln_t, warps)
    fits = fit_transport(mech)
    index = mech.transported_indices
    weights = mech.molecular_weights[index]
    species = [viscosity_species_op(k, fits.viscosity[i], w) for k, (i, w) in enumerate(zip(index, weights))]
    # the last species first: the scheduler's ties follow graph order, so the warp computing ln T (the
    # first, mapping's tie) shares it before computing its own species, which come last
    ops = [temperature_op(replicated=replicate_ln_t)] + species[::-1]
    groups = wilke_groups(len(index), wilke_group, warps)
    ops += [wilke_op(ks, weights) for ks in groups]
    ops += viscosity_sum_ops([wilke_term_name(ks) for ks in groups])
    return DataflowGraph("viscosity", mech.name, tuple(ops), len(index))


def viscosity_sum_ops(terms: list[str]) -> list[Operation]:
    """The viscosity kernel's last operations, in either form: the sum of its ``terms``, and the write."""
    write = InstrBuilder("wv")
    write.store("viscosity", 0, Reg("mixture_viscosity"))
    return [reduction_op("viscosity_sum", terms, "mixture_viscosity"),
            _op(write, "write_viscosity", "output", ["mixture_viscosity"], [])]


def wilke_symmetric_factor(weight_k: float, weight_j: float) -> float:
    """e_kj = 1 / sqrt(8 (M_k + M_j)), symmetric: d_kj = sqrt(M_j) e_kj."""
    return 1.0 / math.sqrt(8.0 * (weight_k + weight_j))


def viscosity_symmetric_species_op(k: int, coefficients, weight: float) -> Operation:
    """What the symmetric form reads of species k: its mole number x_k (``mole_number``), its weight
    w_k = x_k sqrt(M_k) and r_k = eta_k^(-1/2) M_k^(1/4), the species' one exp (``viscosity_species_op``)."""
    b = InstrBuilder(f"vs{k}")
    moles = mole_number(b, k, weight, dst=f"x{k}")
    b.emit("mul", moles, Const(math.sqrt(weight)), dst=f"w{k}")
    inverse_root_viscosity(b, k, coefficients, weight)
    return _op(b, f"moles_{k}", "species", ["lnT"], [f"x{k}", f"w{k}", f"r{k}"])


def symmetric_pair(b: InstrBuilder, r: int, c: int, weights: np.ndarray, dst: str | None = None) -> Reg:
    """The pair (r, c)'s factor e_rc (r_r + r_c)^2 of the symmetric form: an add and two multiplies."""
    total = b.emit("add", Reg(f"r{r}"), Reg(f"r{c}"))
    return b.emit("mul", b.emit("mul", total, total), Const(wilke_symmetric_factor(weights[r], weights[c])), dst=dst)


def viscosity_symmetric_column_op(c: int, rows: list[int], weights: np.ndarray,
                                  previous: dict[int, str]) -> Operation:
    """Column c of the viscosity kernel's symmetric form for one thread a point (``column_op``): each row's factor
    (``symmetric_pair``), weighted by w."""
    def pair(b: InstrBuilder, r: int) -> Reg:
        return symmetric_pair(b, r, c, weights, dst=pair_value_name(c, r))
    return column_op("viscosity", c, rows, pair, "w", previous, [f"r{c}"] + [f"r{r}" for r in rows])


def pair_sum(b: InstrBuilder, k: int, sums: list[str]) -> Reg:
    """D_k = x_k r_k^2 (the pair (k, k): e_kk 4 r_k^2 w_k) plus its row of the pair matrix, the sums ``sums``
    (``band_sums``, ``triangular_pair_columns``)."""
    row = Reg(sums[0])
    for other in sums[1:]:
        row = b.emit("add", row, Reg(other))
    return b.emit("fma", b.emit("mul", Reg(f"x{k}"), Reg(f"r{k}")), Reg(f"r{k}"), row, dst=f"D{k}")


def viscosity_term_op(k: int, sums: list[str]) -> Operation:
    """Species k's term w_k / D_k (``pair_sum``), on the warp of its column."""
    b = InstrBuilder(f"vt{k}")
    b.emit("div", Reg(f"w{k}"), pair_sum(b, k, sums), dst=f"term{k}")
    return _op(b, f"viscosity_{k}", "species", [f"x{k}", f"r{k}", f"w{k}", *sums], [f"term{k}"])


def viscosity_pair_sum_op(k: int, sums: list[str]) -> Operation:
    """Species k's D_k (``pair_sum``) alone, for the triangle's fractions (``viscosity_fraction_op``)."""
    b = InstrBuilder(f"vt{k}")
    pair_sum(b, k, sums)
    return _op(b, f"viscosity_{k}", "species", [f"x{k}", f"r{k}", *sums], [f"D{k}"])


def viscosity_fraction_op(ks: tuple[int, ...]) -> Operation:
    """The terms w_k / D_k of the species ``ks`` added as one fraction, N/D + n/d = (N d + n D) / (D d): one
    division for the group (``wilke_op``'s fraction; each D_k sums every species, so the product of
    ``MAX_WILKE_GROUP`` of them stays in range as the row form's does)."""
    b = InstrBuilder("vf" + "_".join(map(str, ks)))
    numerator, denominator = Reg(f"w{ks[0]}"), Reg(f"D{ks[0]}")
    for k in ks[1:]:
        numerator = b.emit("fma", numerator, Reg(f"D{k}"), b.emit("mul", Reg(f"w{k}"), denominator))
        denominator = b.emit("mul", denominator, Reg(f"D{k}"))
    b.emit("div", numerator, denominator, dst=wilke_term_name(ks))
    return _op(b, f"viscosity_fraction_{ks[0]}", "species", [f"{v}{k}" for k in ks for v in "wD"],
               [wilke_term_name(ks)])


def share_name(r: int, w: int) -> str:
    """Species r's share of its pair sum D_r from warp w's band (``viscosity_band_op``)."""
    return f"share{r}@{w}"


def viscosity_band_op(w: int, block: list[int], n: int, weights: np.ndarray) -> Operation:
    """Warp w's pairs in the symmetric form: those of the columns ``block`` (``column_blocks``; column c pairs with the
    rows of ``diffusion_columns``, every unordered pair once).  Rows outermost, in order from the block on: for
    each row r and each of the block's columns c with it, the pair's factor e_rc (r_r + r_c)^2
    (``symmetric_pair``) added into the column sum of c, held in a register across the band, and into
    r's share, complete once the row is (``share_name``: the warp writes it once).  The row's r_r and w_r are
    read once a row, the columns' values once a band; no warp waits for another's sums before its own."""
    rows_of = diffusion_columns(n)
    b = InstrBuilder(f"vb{w}")
    column_sum: dict[int, Reg] = {}
    outputs, inputs = [], [f"{v}{c}" for c in block for v in "rw"]
    for r in sorted({r for c in block for r in rows_of[c]}, key=lambda r: (r - block[0]) % n):
        columns = [c for c in block if r in rows_of[c]]
        inputs += [f"r{r}", f"w{r}"]
        share: Reg | None = None
        for c in columns:
            factor = symmetric_pair(b, r, c, weights)
            column_sum[c] = b.emit("mul", factor, Reg(f"w{r}")) if c not in column_sum else \
                b.emit("fma", factor, Reg(f"w{r}"), column_sum[c])
            dst = share_name(r, w) if c == columns[-1] else None
            share = b.emit("mul", factor, Reg(f"w{c}"), dst=dst) if share is None else \
                b.emit("fma", factor, Reg(f"w{c}"), share, dst=dst)
        outputs.append(share_name(r, w))
    for c, value in column_sum.items():
        b.emit("mov", value, dst=column_sum_name(c))
        outputs.append(column_sum_name(c))
    return _op(b, f"viscosity_band_{w}", "band", list(dict.fromkeys(inputs)), outputs)


def band_sums(k: int, blocks: list[list[int]]) -> list[str]:
    """What species k's pair sum D_k adds up in the symmetric form (``viscosity_band_op``): its column sum (where its
    column has rows) and the share of every band with k among its rows."""
    rows_of = diffusion_columns(sum(map(len, blocks)))
    return ([column_sum_name(k)] if rows_of[k] else []) + \
        [share_name(k, w) for w, block in enumerate(blocks) if any(k in rows_of[c] for c in block)]


def band_warps(graph: DataflowGraph, warps: int) -> dict[str, int]:
    """Where the viscosity kernel's symmetric form fixes its operations: band w on warp w, and species k's mole
    number, r_k and term on the warp of its column (``column_blocks``).  None for the row form."""
    if "viscosity_band_0" not in graph.by_name:
        return {}
    fixed = {}
    for w, block in enumerate(column_blocks(graph.n_species, warps)):
        for k in block:
            fixed[f"moles_{k}"] = fixed[f"viscosity_{k}"] = w
        if block:
            fixed[f"viscosity_band_{w}"] = w
    return fixed


def viscosity_symmetric_graph(mech: Mechanism, replicate_ln_t: bool = False,
                              warps: int | None = None) -> DataflowGraph:
    """The viscosity kernel's symmetric form (``CompileOptions.wilke_symmetric``): Wilke's D_k written as
    D_k = sum_j e_kj (r_k + r_j)^2 w_j with e_kj = 1/sqrt(8 (M_k + M_j)) symmetric and w_j = x_j sqrt(M_j)
    (d_kj = sqrt(M_j) e_kj), so that each unordered pair's factor e_kj (r_k + r_j)^2 is computed once and added
    into both rows: an add, two multiplies and two FMAs a pair, 2.5 FP64 instructions an ordered pair against
    the row form's 3, and no square roots.  Then eta = sum_k w_k / D_k.

    For warps (``warps`` given) the pairs are the diffusion kernel's balanced columns, in a band of adjacent
    columns a warp (``viscosity_band_op``): each warp adds its columns' sums in registers and writes each row's
    share once, and each species' term sums its column sum and its shares.  For one thread a point (the
    data-parallel baseline, ``warps`` None) they are the upper triangle in row order, each species' D_k right
    after its last pair, so that its sum's register is free for the rest, and the terms in fractions of
    ``MAX_WILKE_GROUP`` (``triangular_pair_columns``)."""
    fits = fit_transport(mech)
    index = mech.transported_indices
    weights = mech.molecular_weights[index]
    n = len(index)
    ops = [temperature_op(replicated=replicate_ln_t)]
    ops += [viscosity_symmetric_species_op(k, fits.viscosity[i], w) for k, (i, w) in enumerate(zip(index, weights))]
    if warps is None:
        column = lambda c, rows, previous: viscosity_symmetric_column_op(c, rows, weights, previous)  # noqa: E731
        triangle, terms = triangular_pair_columns(n, column)
        ops += triangle
    else:
        blocks = column_blocks(n, warps)
        ops += [viscosity_band_op(w, block, n, weights) for w, block in enumerate(blocks) if block]
        ops += [viscosity_term_op(k, band_sums(k, blocks)) for k in range(n)]
        terms = [f"term{k}" for k in range(n)]
    ops += viscosity_sum_ops(terms)
    return DataflowGraph("viscosity", mech.name, tuple(ops), n)


def triangular_pair_columns(n: int, column) -> tuple[list[Operation], list[str]]:
    """The pairs of ``n`` species as the upper triangle, column c taking rows c+1 .. n-1 (``column(c, rows,
    previous)``, ``column_op``), each followed by species c's D_c (``viscosity_pair_sum_op``): its row is complete
    once its column is (the row sum of the columns before it, its column sum); each ``MAX_WILKE_GROUP`` species'
    terms as one fraction (``viscosity_fraction_op``) after the last of them.  Returns the operations and the
    fractions' terms."""
    ops: list[Operation] = []
    terms: list[str] = []
    last_row_sum: dict[int, str] = {}
    for c in range(n):
        rows = list(range(c + 1, n))
        sums = ([column_sum_name(c)] if rows else []) + ([last_row_sum[c]] if c in last_row_sum else [])
        if rows:
            ops.append(column(c, rows, dict(last_row_sum)))
            last_row_sum.update({r: row_sum_name(r, c) for r in rows})
        ops.append(viscosity_pair_sum_op(c, sums))
        if c % MAX_WILKE_GROUP == MAX_WILKE_GROUP - 1 or c == n - 1:
            ops.append(viscosity_fraction_op(tuple(range(c - c % MAX_WILKE_GROUP, c + 1))))
            terms.append(ops[-1].outputs[0])
    return ops, terms


# -- diffusion ---------------------------------------------------------------

def diffusion_columns(n: int) -> list[list[int]]:
    """Rows computed by each column of the symmetric D matrix (paper Figure 5):
    floor(n/2) per column for odd n; n/2 for the first n/2 columns and n/2 - 1
    for the others when n is even.  Every unordered pair appears once."""
    if n % 2:
        counts = [n // 2] * n
    else:
        counts = [n // 2] * (n // 2) + [n // 2 - 1] * (n // 2)
    return [[(c + d) % n for d in range(1, counts[c] + 1)] for c in range(n)]


def row_sum_name(r: int, c: int) -> str:
    """The running row sum of species r after column c (sum over the columns up to c of x_c / (P D_rc))."""
    return f"rowsum{r}_{c}"


COLUMN_SUM = "colsum"


def column_sum_name(c: int, turn: int | None = None) -> str:
    """Column c's sum: complete, or as a diffusion turn leaves it (``_turn_op``; ``turn_columns`` reads it)."""
    return f"{COLUMN_SUM}{c}" if turn is None else f"{COLUMN_SUM}{c}@{turn}"


def pair_value_name(c: int, r: int) -> str:
    """The pair (r, c)'s symmetric value in the operation of column c (a temporary: ``_pair_slice`` finds its
    instructions): 1/(P D_rc) in the diffusion kernel, e_rc (r_r + r_c)^2 in the viscosity kernel's symmetric form."""
    return f"dc{c}.d{r}"


def column_op(kernel: str, c: int, rows: list[int], pair, weight: str, previous: dict[int, str],
              inputs: list[str]) -> Operation:
    """Column c of a symmetric pair matrix (paper Figure 5): for each row r, the pair's value v_rc (``pair(b, r)``
    emits it as ``pair_value_name(c, r)``), added into the column sum sum_r v_rc m_r and into the running row sum
    of r, ``previous[r]`` (the row sum after the column before c that has row r; none for the first) as
    v_rc m_c, where m is the weight ``weight``<k>: two FMAs per pair, as a sequential loop over the pairs computes
    them.  ``inputs``: what the pair values read besides the weights."""
    b = InstrBuilder(f"dc{c}")
    column_sum: Reg | None = None
    outputs = []
    for r in rows:
        value = pair(b, r)
        column_sum = b.emit("mul", value, Reg(f"{weight}{r}")) if column_sum is None else \
            b.emit("fma", value, Reg(f"{weight}{r}"), column_sum)
        if r in previous:
            b.emit("fma", value, Reg(f"{weight}{c}"), Reg(previous[r]), dst=row_sum_name(r, c))
        else:
            b.emit("mul", value, Reg(f"{weight}{c}"), dst=row_sum_name(r, c))
        outputs.append(row_sum_name(r, c))
    if column_sum is not None:
        b.emit("mov", column_sum, dst=column_sum_name(c))
        outputs.append(column_sum_name(c))
    reads = [*inputs, f"{weight}{c}"] + [f"{weight}{r}" for r in rows] + [previous[r] for r in rows if r in previous]
    return _op(b, f"{kernel}_column_{c}", "column", list(dict.fromkeys(reads)), outputs)


def diffusion_column_op(c: int, rows: list[int], coefficients: np.ndarray, previous: dict[int, str]) -> Operation:
    """Column c of the diffusion kernel (``column_op``): 1/(P D_rc) = exp(-fit_rc(ln T)) for each row r (the
    pressure is applied once per species, in the output), weighted by the mole numbers x."""
    def inverse(b: InstrBuilder, r: int) -> Reg:
        polynomial = b.polynomial([-float(a) for a in coefficients[r]], Reg("lnT"))
        return b.emit("exp", polynomial, dst=pair_value_name(c, r))
    return column_op("diffusion", c, rows, inverse, "x", previous, ["lnT"])


def diffusion_output_op(k: int, weight: float, sums: list[str]) -> Operation:
    """D_km = (M - x_k M_k) / (M sum_{j != k} x_j / D_jk) from the mole numbers m_j (``diffusion_species_op``):
    with S = sum_j m_j and Y = sum_j m_j M_j, x_j = m_j / S and M = Y / S, so
    D_km = S (Y - m_k M_k) / (Y P sum_{j != k} m_j / (P D_jk)), the sum being the column sum of k plus its
    row sum (``sums``: those it has)."""
    b = InstrBuilder(f"do{k}")
    resistance = b.emit("add", Reg(sums[0]), Reg(sums[1])) if len(sums) == 2 else Reg(sums[0])
    numerator = b.emit("mul", b.emit("fma", Reg(f"x{k}"), Const(-weight), Reg("total_mass")), Reg("total_moles"))
    denominator = b.emit("mul", b.emit("mul", Reg("total_mass"), resistance), Reg("P"))
    b.store("diffusion", k, b.emit("div", numerator, denominator))
    return _op(b, f"diffusion_{k}", "output", [f"x{k}", "total_moles", "total_mass", *sums, "P"], [])


def diffusion_species_op(k: int, weight: float) -> Operation:
    """Species k's mass fraction y_k = max(Y_k, ``MOLES_FLOOR``) and mole number x_k = y_k/M_k, what the pairs
    read in place of the mole fraction (their sums are homogeneous of degree 1 in it: no warp waits for S before
    them); the terms of the sums Y and S of the output."""
    b = InstrBuilder(f"ds{k}")
    clamped = b.emit("max", b.load("mass_fractions", k), Imm(MOLES_FLOOR), dst=f"y{k}")
    b.emit("mul", clamped, Const(1.0 / weight), dst=f"x{k}")
    return _op(b, f"moles_{k}", "species", [], [f"y{k}", f"x{k}"])


def diffusion_graph(mech: Mechanism) -> DataflowGraph:
    """Column operations of the D matrix (each pair once, paper Figure 5),
    the row sums running through them in column order, and the per-species
    output."""
    fits = fit_transport(mech)
    index = mech.transported_indices
    weights = mech.molecular_weights[index]
    n = len(index)
    coefficients = fits.diffusion[np.ix_(index, index)]
    columns = diffusion_columns(n)
    ops = [temperature_op(), pressure_op()] + [diffusion_species_op(k, w) for k, w in enumerate(weights)]
    ops.append(reduction_op("moles_sum", [f"x{k}" for k in range(n)], "total_moles"))
    ops.append(reduction_op("mass_sum", [f"y{k}" for k in range(n)], "total_mass"))
    last_row_sum: dict[int, str] = {}
    for c, rows in enumerate(columns):
        ops.append(diffusion_column_op(c, rows, coefficients[:, c], dict(last_row_sum)))
        last_row_sum.update({r: row_sum_name(r, c) for r in rows})
    for k in range(n):
        sums = ([column_sum_name(k)] if columns[k] else []) + ([last_row_sum[k]] if k in last_row_sum else [])
        ops.append(diffusion_output_op(k, float(weights[k]), sums))
    return DataflowGraph("diffusion", mech.name, tuple(ops), n)


# -- the skewed schedule of the diffusion kernel (paper §3.3) ---------------------

TURN_COLUMNS_CHECKED = 7
"""Columns per warp (the block of ``column_blocks``, summed over the warp's turns) up to which the register plan's
floor was checked against ptxas (``singe.programs.plan``): every mechanism measured at the defaults' 8 warps has at
most 7 (GRI-Mech and n-heptane 7, n-dodecane 5, DME 4), and none spills.  Wider, ptxas's schedule of the turns holds
more than the floor counts, and at the CTAs chosen from the floor it spilled (sm_90, spill stores): GRI-Mech 8-288 B
at 7 down to 2 warps (8-27 columns), n-heptane 8-248 B at 5 down to 2 (11-26), DME 8 B at 3 (10); not n-heptane at
7 or 6 (8, 9 columns), nor DME at 4 or 2 (8, 15).  Beyond it ptxas settles the CTAs per SM where nvcc is installed
(``singe.ptxas_check``), and the command warns that registers may spill where it is not."""


def turn_columns(op: Operation) -> set[int]:
    """The columns a diffusion turn adds into (its outputs named by ``column_sum_name``); none for any other
    operation."""
    if op.kind != "turn":
        return set()
    return {int(name[len(COLUMN_SUM):].split("@")[0]) for name in op.outputs if name.startswith(COLUMN_SUM)}


def column_blocks(n: int, warps: int) -> list[list[int]]:
    """The columns of each warp: adjacent columns (paper §3.3), in blocks of
    ceil(n / warps) or floor(n / warps), the larger ones spread evenly among
    the warps (none beyond n warps: the first n take one each).  Spread, the
    warps of one turn fall into two shapes (a block of each size against rows
    of each size) rather than up to four, and each shape's warps share one copy
    of the turn's code: at 8 warps n-heptane diffusion takes 9,257 static SASS
    instructions against 17,819 with the larger blocks first, n-dodecane 7,902
    against 11,176, GRI-Mech 12,386 against 15,556 (sm_90; issued per point
    within 2 %).  On an H200 the 17,819 ran 2.8x slower than the paper's 13
    warps (3,697) for the same issued count (docs/measurements)."""
    size, extra = divmod(n, warps)
    blocks, start = [], 0
    for w in range(warps):
        larger = (w < extra) if size == 0 else ((w + 1) * extra // warps > w * extra // warps)
        end = start + size + larger
        blocks.append(list(range(start, end)))
        start = end
    return blocks


def diffusion_warps(graph: DataflowGraph, warps: int) -> dict[str, int]:
    """Where the diffusion kernel fixes its operations before the mapper
    places the rest: column c on the warp of its block (``column_blocks``),
    and the other operations of species k (its Y_k/M_k, x_k and output) on
    the warp of column k, which holds its column sum: every warp's program
    then has the same shape."""
    fixed = {}
    for w, block in enumerate(column_blocks(graph.n_species, warps)):
        for k in block:
            for name in (f"moles_{k}", f"diffusion_column_{k}", f"diffusion_{k}"):
                fixed[name] = w
    return fixed


def _pair_slice(op: Operation, name: str) -> list[Instr]:
    """The instructions of ``op`` that compute ``name`` (a pair's 1/(P D), from ln T)."""
    defined = {instr.dst: instr for instr in op.instrs}
    needed, found = [name], {}
    while needed:
        value = needed.pop()
        if value in defined and value not in found:
            found[value] = defined[value]
            needed.extend(defined[value].registers_read())
    return [instr for instr in op.instrs if instr.dst in found]


def _renamed(op: Operation, renames: dict[str, str]) -> Operation:
    """``op`` reading ``renames[v]`` wherever it read ``v``."""
    def operand(src):
        return Reg(renames[src.name]) if isinstance(src, Reg) and src.name in renames else src
    instrs = tuple(Instr(i.opcode, i.dst, tuple(operand(s) for s in i.srcs), i.field, i.index) for i in op.instrs)
    inputs = tuple(renames.get(v, v) for v in op.inputs)
    return Operation(op.name, op.kind, instrs, inputs, op.outputs, op.replicated, op.reduction)


COLUMNS_PER_PASS = 8
"""Columns of a warp whose pairs of one row a turn computes together: a warp with more (fewer
than 7 warps for 50 species) goes over a turn's rows in passes of at most this many columns,
adding into each row's sum once per pass, so that ptxas overlaps no more exponentials of a row
than it has registers for.  Measured (ptxas, sm_80 / sm_90 spill stores at the CTAs per SM the
compiler chooses): n-heptane at 4 warps, 13 columns a warp, 3,164 / 4,124 B in one pass at 72
registers, 8 / 8 B in two at 96; at 2 warps 80 / 4,040 B -> 460 / 376 B; DME at 2 warps
0 / 876 B -> 0 / 100 B.  The paper's settings and the defaults (at most 8 columns a warp) are
one pass."""


class _Turns:
    """The pairs of each warp grouped into turns: at turn t warp w takes the
    rows of the species whose columns warp (w + t) mod W holds, so that no two
    warps add into one row's sum in the same turn; a turn's pairs in passes
    over its rows (``COLUMNS_PER_PASS``).  An *adder* (warp, pass) adds into
    row sums; ``pairs[adder][t]`` are its (row, column) pairs of turn t."""

    def __init__(self, graph: DataflowGraph, warp_of: dict[str, int], warps: int):
        self.n = graph.n_species
        self.warps = warps
        self.columns = diffusion_columns(self.n)
        self.owner = [warp_of[f"diffusion_column_{k}"] for k in range(self.n)]
        self.pairs: dict[tuple[int, int], dict[int, list[tuple[int, int]]]] = {}
        for w in range(warps):
            mine = [c for c in range(self.n) if self.owner[c] == w]
            passes = -(-len(mine) // COLUMNS_PER_PASS)
            for g in range(passes):
                chunk = mine[len(mine) * g // passes:len(mine) * (g + 1) // passes]
                pairs = sorted(((self.turn(w, r), (r - mine[0]) % self.n, (c - mine[0]) % self.n, r, c)
                                for c in chunk for r in self.columns[c]))
                turns: dict[int, list[tuple[int, int]]] = {}
                for t, _, _, r, c in pairs:
                    turns.setdefault(t, []).append((r, c))
                self.pairs[w, g] = turns

    def turn(self, warp: int, row: int) -> int:
        return (self.owner[row] - warp) % self.warps

    def row_order(self) -> dict[int, list[tuple[int, int]]]:
        """Row -> the adders adding into its sum, in turn order (passes in order within a turn)."""
        order: dict[int, list[tuple[int, int, int]]] = {}
        for (w, g), turns in self.pairs.items():
            for t, pairs in turns.items():
                for r in dict.fromkeys(r for r, _ in pairs):
                    order.setdefault(r, []).append((t, g, w))
        return {r: [(w, g) for _, g, w in sorted(adders)] for r, adders in order.items()}

    def turns_of(self, adder: tuple[int, int], column: int) -> list[int]:
        """The turns in which ``adder`` computes pairs of ``column``, in order."""
        return sorted(t for t, pairs in self.pairs[adder].items() if any(c == column for _, c in pairs))


def _row_sum(r: int, adder: tuple[int, int] | None) -> str:
    """The sum of row r after ``adder`` added into it (None: before any, zero)."""
    return f"rowsum{r}@{adder[0]}.{adder[1]}" if adder else f"rowsum{r}@zero"


def _turn_op(adder: tuple[int, int], t: int, pairs: list[tuple[int, int]], turns: _Turns,
             columns: dict[int, Operation], chain: dict[int, list[tuple[int, int]]]) -> Operation:
    """Warp w's turn t (pass g, ``adder`` (w, g)): for each row (in order) and
    each of the pass's columns with that row, the pair's 1/(P D) (the column
    operation's instructions), added into the column sum (held in a register
    across turns) and into the row's partial sum, which starts from the row
    sum the previous adder left in its shared slot (zero before the first,
    ``_zero_op``: every row's code alike) and is written back once per row."""
    w, g = adder
    name = f"diffusion_turn_{w}_{t}" + (f"_{g}" if g else "")
    instrs: list[Instr] = []
    inputs: dict[str, None] = {"lnT": None}
    outputs: list[str] = []
    column_sum: dict[int, str] = {}
    for c in dict.fromkeys(c for _, c in pairs):
        before = turns.turns_of(adder, c)
        if before[0] < t:
            column_sum[c] = column_sum_name(c, max(u for u in before if u < t))
            inputs[column_sum[c]] = None
    by_row: dict[int, list[int]] = {}
    for r, c in pairs:
        by_row.setdefault(r, []).append(c)
    for r, cols in by_row.items():
        step = chain[r].index(adder)
        row_sum = _row_sum(r, chain[r][step - 1] if step else None)
        inputs[row_sum] = None
        inputs[f"x{r}"] = None
        for k, c in enumerate(cols):
            inputs[f"x{c}"] = None
            instrs += _pair_slice(columns[c], pair_value_name(c, r))
            inverse = Reg(pair_value_name(c, r))
            summed = f"{name}.c{c}_{r}"
            instrs.append(Instr("fma", summed, (inverse, Reg(f"x{r}"), Reg(column_sum[c])))
                          if c in column_sum else Instr("mul", summed, (inverse, Reg(f"x{r}"))))
            column_sum[c] = summed
            out = _row_sum(r, adder) if k == len(cols) - 1 else f"{name}.r{c}_{r}"
            instrs.append(Instr("fma", out, (inverse, Reg(f"x{c}"), Reg(row_sum))))
            row_sum = out
        outputs.append(row_sum)
    for c, value in column_sum.items():
        out = column_sum_name(c, None if turns.turns_of(adder, c)[-1] == t else t)
        instrs.append(Instr("mov", out, (Reg(value),)))
        outputs.append(out)
    return Operation(name, "turn", tuple(instrs), tuple(inputs), tuple(outputs))


def _zero_op(w: int, rows: list[int]) -> Operation:
    """Warp w sets the row sums of its species to zero (their slots are then
    read and written alike by every turn)."""
    instrs = tuple(Instr("mov", _row_sum(r, None), (Imm(0.0),)) for r in rows)
    return Operation(f"diffusion_zero_{w}", "species", instrs, (), tuple(i.dst for i in instrs))


def skew_diffusion(graph: DataflowGraph, warp_of: dict[str, int], warps: int) -> Regrouping:
    """The diffusion kernel regrouped into turns (the original Singe's skewed
    schedule): each warp's column operations become one operation per turn
    (``_turn_op``), every row sum is one running sum in one shared slot that the
    warps add into in turn (chain ``rowsum<r>``), a full barrier separates the
    turns, and the outputs, on the warps of their columns, follow the last turn."""
    turns = _Turns(graph, warp_of, warps)
    chain = turns.row_order()
    final = {r: _row_sum(r, adders[-1]) for r, adders in chain.items()}
    by_name = graph.by_name
    columns = {c: by_name[f"diffusion_column_{c}"] for c in range(graph.n_species)}
    renames = {}
    for r in chain:
        renames[next(v for v in by_name[f"diffusion_{r}"].inputs if v.startswith(f"rowsum{r}_"))] = final[r]
    new_warps = {name: w for name, w in warp_of.items() if not name.startswith("diffusion_column_")}
    turn_ops, phases = [], {}
    for w in range(warps):
        rows = [r for r in sorted(chain) if turns.owner[r] == w]
        if rows:
            turn_ops.append(_zero_op(w, rows))
            new_warps[turn_ops[-1].name] = w
    for adder, by_turn in sorted(turns.pairs.items()):
        for t, pairs in sorted(by_turn.items()):
            turn_ops.append(_turn_op(adder, t, pairs, turns, columns, chain))
            new_warps[turn_ops[-1].name] = adder[0]
            phases[turn_ops[-1].name] = t
    ops = [op for op in graph.operations if op.kind not in ("column", "output")] + turn_ops
    last = max(phases.values(), default=-1)
    for op in graph.operations:
        if op.kind == "output":
            ops.append(_renamed(op, renames))
            phases[op.name] = last + 1
    chains = {_row_sum(r, adder): f"rowsum{r}" for r, adders in chain.items() for adder in [None, *adders]}
    regrouped = DataflowGraph(graph.kernel, graph.mechanism, tuple(ops), graph.n_species)
    layout = tuple(f"x{k}" for k in range(graph.n_species)) + tuple(f"rowsum{k}" for k in range(graph.n_species))
    return Regrouping(regrouped, new_warps, phases, chains, layout)
