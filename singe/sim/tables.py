"""What a table loop computes (``singe.programs.tables.TableLoop``), in numpy.

The simulator's definition of the phases of the table-form chemistry kernel
(``singe.kernels.table_form``): each function runs the loop body once per row
of the warp's share, in the order and with the operations of the emitted
CUDA loop (``templates/chemistry_tables.cu.j2``), over every point of the
slab at once.  ``values`` holds the workspace slots the loop reads (by value
name), ``load(field, index)`` reads global memory; a phase returns the values
it writes (by name) and the global rows it stores ((field, index) -> array).
"""

from __future__ import annotations

import numpy as np

from singe.constants import BIG_NUMBER as BIG
from singe.constants import C_FLOOR, D_FLOOR
from singe.constants import GAS_CONSTANT, ONE_ATM
from singe.constants import SMALL_NUMBER as SMALL
from singe.derived.rates import negative_factors_allowed
from singe.errors import SingeInternalError
from singe.kernels import chemistry_tables as ct
from singe.reference.kinetics import sri_falloff
from singe.reference.kinetics import troe_falloff



class _Point:
    """Per-point values every phase derives from T and P."""

    def __init__(self, load):
        self.T = load("temperature", 0)
        self.lnT = np.log(self.T)
        self.invT = 1.0 / self.T
        self._load = load

    def pressure(self):
        P = self._load("pressure", 0)
        self.P = P
        self.lnP = np.log(P)
        self.log10P = np.log10(P)
        self.C_total = P / (GAS_CONSTANT * self.T)
        self.lnC0 = np.log(ONE_ATM / (GAS_CONSTANT * self.T))
        cube_root = np.cbrt(self.T)
        self.Tm13 = 1.0 / cube_root
        self.Tm23 = 1.0 / (cube_root * cube_root)
        return self


def gibbs(tables: ct.ChemistryTables, k: int, pt: _Point) -> np.ndarray:
    """g_k/RT: the NASA9-form coefficients of the range T falls in, then the terms of
    ``singe.kernels.chemistry._gibbs_terms`` (the unrolled form adds ln(R T/P_atm) and the
    elements' shift to them: docs/formulas.md §3)."""
    first, last = int(tables.thermo_ptr[k]), int(tables.thermo_ptr[k + 1])
    a = [np.full(pt.T.shape, c) for c in tables.thermo_coeffs[first]]
    for i in range(first + 1, last):
        bound = tables.thermo_bound[i]
        above = pt.T >= bound if tables.thermo_nasa9[k] else pt.T > bound
        a = [np.where(above, c, x) for c, x in zip(tables.thermo_coeffs[i], a)]
    c0, c_ln, c_inv = a[2] - a[8], -a[2], a[1] + a[7]
    c1, c2, c3, c4 = -a[3] / 2.0, -a[4] / 6.0, -a[5] / 12.0, -a[6] / 20.0
    poly = (((c4 * pt.T + c3) * pt.T + c2) * pt.T + c1) * pt.T
    poly = a[1] * (pt.lnT * pt.invT) + poly
    poly = (-0.5 * a[0]) * (pt.invT * pt.invT) + poly
    return (c_inv * pt.invT + (c_ln * pt.lnT + poly)) + c0


def thermo_phase(item, values, load):
    tables, pt = item.tables, _Point(load)
    writes = {}
    partial = np.zeros(pt.T.shape)
    for k in range(item.begin, item.end):
        writes[f"g{k}"] = gibbs(tables, k, pt)
        if k < tables.n_transported:  # QSSA species have no mass fraction
            partial = partial + load("mass_fractions", k) / tables.weights[k]
    writes[item.writes[-1][0]] = partial
    return writes, {}


def concentrations_phase(item, values, load):
    tables, pt = item.tables, _Point(load).pressure()
    total = values[item.reads[0][0]]
    for name, _ in item.reads[1:]:
        total = total + values[name]
    density = pt.P * (1.0 / total) / (GAS_CONSTANT * pt.T)
    return {f"C{k}": (load("mass_fractions", k) / tables.weights[k]) * density if k < tables.n_transported
            else np.ones_like(density) for k in range(item.begin, item.end)}, {}  # QSSA species: C = 1


def arrhenius(sets: ct.ArrheniusSets, i: int, pt: _Point) -> np.ndarray:
    exponent = sets.b[i] * pt.lnT - sets.Ea_R[i] * pt.invT
    if sets.lt_B[i] != 0.0 or sets.lt_C[i] != 0.0:
        exponent = exponent + sets.lt_B[i] * pt.Tm13 + sets.lt_C[i] * pt.Tm23
    return sets.A[i] * np.exp(exponent)


def _falloff(tables, row, flags, M, pt):
    e = int(tables.extra[row])
    first, second = arrhenius(tables.forward, row, pt), arrhenius(tables.falloff_second, e, pt)
    activated = bool(flags & ct.ACTIVATED)
    k_low, k_high = (first, second) if activated else (second, first)
    Pr = M * k_low / (k_high + SMALL)
    F = 1.0
    if flags & ct.TROE:  # the broadening functions as the reference evaluates them, one row
        F = troe_falloff(tables.falloff_params[e, :4, None], pt.T, Pr[None, :])[0]
    elif flags & ct.SRI:
        F = sri_falloff(tables.falloff_params[e, :, None], pt.T, Pr[None, :])[0]
    if activated:
        return (F / (1.0 + Pr)) * k_low
    return (Pr * (F / (1.0 + Pr))) * k_high


def _plog(tables, row, pt):
    e = int(tables.extra[row])
    first, last = int(tables.plog_ptr[e]), int(tables.plog_ptr[e + 1])
    log_k = []
    for i in range(first, last):
        total = np.full(pt.T.shape, SMALL)
        for s in range(int(tables.plog_set_ptr[i]), int(tables.plog_set_ptr[i + 1])):
            total = total + arrhenius(tables.plog_sets, s, pt)
        log_k.append(np.log(total))
    log_p = tables.plog_log_p
    result = log_k[0]
    for i in range(first, last):
        j = i - first
        if i + 1 < last:
            slope = (log_k[j + 1] - log_k[j]) * (pt.lnP - log_p[i]) * (1.0 / (log_p[i + 1] - log_p[i]))
            inside = log_k[j] + slope
        else:
            inside = log_k[j]
        result = np.where(pt.lnP >= log_p[i], inside, result)
    return np.exp(result)


def _chebyshev(tables, row, pt):
    e = int(tables.extra[row])
    n_T, n_P, offset = (int(x) for x in tables.cheb_shape[e])
    T_num, T_den, P_num, P_den = tables.cheb_scale[e]
    coeffs = tables.cheb_coeffs[offset:offset + n_T * n_P].reshape(n_T, n_P)
    P_red = (2.0 * pt.log10P + P_num) * P_den
    T_red = (2.0 * pt.invT + T_num) * T_den
    dots = []
    for t in range(n_T):
        dot, previous, current = np.full(pt.T.shape, coeffs[t, 0]), P_red, np.ones_like(P_red)
        for p in range(1, n_P):
            following = 2.0 * P_red * current - previous
            dot = dot + following * coeffs[t, p]
            previous, current = current, following
        dots.append(dot)
    log10_k, previous, current = dots[0], T_red, np.ones_like(T_red)
    for t in range(1, n_T):
        following = 2.0 * T_red * current - previous
        log10_k = log10_k + following * dots[t]
        previous, current = current, following
    return np.power(10.0, log10_k)


def _product(csr: ct.Csr, row: int, power: bool, partner: bool, guarded: bool, values):
    """One direction's concentration product: C^order with C > 0 (power form), or a factor of C per entry;
    ``guarded``: under the sign guard (``negative_factors_allowed``), the last entry outside it with
    ``partner``."""
    product = 1.0
    concentrations = [(values[f"C{k}"], order) for k, order in zip(*csr.row(row))]
    if power:
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            for C, order in concentrations:
                product = product * np.where(C > 0.0, np.power(np.where(C > 0.0, C, 1.0), order), 0.0)
        return product
    for C, _ in concentrations:  # a factor of C per entry (repeated species for nu > 1)
        product = product * C
    if not guarded:
        return product
    factors = concentrations[:len(concentrations) - partner]
    negative = sum((C < 0.0).astype(int) for C, _ in factors)
    return np.where(negative > negative_factors_allowed(len(factors)), 0.0, product)


def _reciprocal_equilibrium(tables, row, flags, values, pt):
    """min(1/Kc, 1e300) = min(exp(sum nu g/RT - dn ln(P_atm/RT)), 1e300): from the net stoichiometry
    for power-form rows, else as (sum of g over the reverse entries - over the forward ones), each
    species once per unit of its coefficient."""
    if flags & (ct.FORWARD_POWER | ct.REVERSE_POWER):
        sum_g, dn = 0.0, 0.0
        for k, nu in zip(*tables.net.row(row)):
            sum_g = sum_g + nu * values[f"g{k}"]
            dn = dn + nu
    else:
        sides = []
        for csr in (tables.reverse_factors, tables.forward_factors):
            total = 0.0
            for k in csr.row(row)[0]:
                total = total + values[f"g{k}"]
            sides.append(total)
        sum_g = sides[0] - sides[1]
        dn = float(tables.reverse_factors.row(row)[0].size - tables.forward_factors.row(row)[0].size)
    return np.minimum(np.exp(sum_g - dn * pt.lnC0), BIG)


def rate_of_progress(tables: ct.ChemistryTables, row: int, values, pt: _Point) -> np.ndarray:
    """q = q_f - q_r of one row."""
    forward, reverse = directions_of_progress(tables, row, values, pt)
    return forward if reverse is None else forward - reverse


def directions_of_progress(tables: ct.ChemistryTables, row: int, values, pt: _Point):
    """(q_f, q_r) of one row (q_r None where it has no reverse rate)."""
    flags = int(tables.flags[row])
    group = tables.group_of(row)
    M = None
    if tables.efficiencies.ptr[row + 1] > tables.efficiencies.ptr[row] or flags & ct.BASE_ONE:
        M = pt.C_total if flags & ct.BASE_ONE else 0.0
        for k, w in zip(*tables.efficiencies.row(row)):
            M = M + w * values[f"C{k}"]
    if group == "elementary":
        kf = arrhenius(tables.forward, row, pt)
    elif group == "falloff":
        kf = _falloff(tables, row, flags, M, pt)
    elif group == "plog":
        kf = _plog(tables, row, pt)
    else:
        kf = _chebyshev(tables, row, pt)
    kr = None
    if flags & ct.EXPLICIT_REVERSE:
        kr = arrhenius(tables.reverse, int(tables.reverse_index[row]), pt)
    elif flags & ct.EQUILIBRIUM:
        kr = kf * _reciprocal_equilibrium(tables, row, flags, values, pt)
    if flags & ct.THIRD_BODY:
        kf = kf * M
        kr = None if kr is None else kr * M
    partner = bool(flags & ct.PARTNER)
    q = kf * _product(tables.forward_factors, row, bool(flags & ct.FORWARD_POWER), partner, tables.guarded, values)
    if kr is None:
        return q, None
    return q, kr * _product(tables.reverse_factors, row, bool(flags & ct.REVERSE_POWER), partner, tables.guarded,
                            values)


def rates_phase(item, values, load):
    pt = _Point(load).pressure()
    tables = item.tables
    if not tables.split:
        return {f"q{row}": rate_of_progress(tables, row, values, pt) for row in range(item.begin, item.end)}, {}
    writes = {}
    for row in range(item.begin, item.end):
        forward, reverse = directions_of_progress(tables, row, values, pt)
        writes[f"qf{row}"] = forward
        writes[f"qr{row}"] = np.zeros_like(pt.T) if reverse is None else reverse
    return writes, {}


def species_phase(item, values, load):
    tables = item.tables
    stores = {}
    width = load("temperature", 0).shape
    for k in range(item.begin, item.end):
        total = np.zeros(width)
        for row, nu in zip(*tables.species_sums.row(k)):
            if tables.split:
                total = total + nu * (_final(tables, values, row) - _final(tables, values, tables.n_rows + row))
            else:
                total = total + nu * values[f"q{row}"]
        stores[("production_rates", k)] = total
    return {}, stores


def _direction_name(tables, d: int, scaled: bool = False) -> str:
    """The value of direction d (``singe.kernels.table_form.SlotLayout.direction``)."""
    return f"{'qf' if d < tables.n_rows else 'qr'}{'s' if scaled else ''}{d % tables.n_rows}"


def _final(tables, values, d: int):
    scaled = _direction_name(tables, d, True)
    return values[scaled] if scaled in values else values[_direction_name(tables, d)]


def qssa_coefficients_phase(item, values, load):
    """D_i (floored), x_i's right-hand side a_i0 = P_i0 / D_i and the cells of QSSA species i:
    a_ij, 0 - a_ij or 1 - a_ii, with P = sum over the terms of multiplicity x direction."""
    q, tables = item.tables.qssa, item.tables

    def total(u):
        result = 0.0
        for d, nu in zip(*q.sums.row(u)):
            result = result + nu * values[_direction_name(tables, int(d))]
        return result
    writes = {}
    for i in range(item.begin, item.end):
        D = np.maximum(total(2 * i), D_FLOOR)
        writes[f"b{i}"] = total(2 * i + 1) / D
        for c in range(int(q.cell_ptr[i]), int(q.cell_ptr[i + 1])):
            a = total(2 * q.n_qss + c) / D
            mode = int(q.cell_mode[c])
            writes[f"m{c}"] = a if mode == ct.EXTERNAL else (0.0 - a if mode == ct.OFF_DIAGONAL else 1.0 - a)
    return writes, {}


def qssa_solve_phase(item, values, load):
    """The elimination's operations ``begin:end`` over the solve slots (x_i, then the cells)."""
    q = item.tables.qssa
    slots = [values[f"b{i}"] for i in range(q.n_qss)] + [values[f"m{c}"] for c in range(q.n_cells)]
    for op, d, a, b in q.ops[item.begin:item.end]:
        if op == ct.ADD_PRODUCT:
            slots[d] = slots[d] + slots[a] * slots[b]
        elif op == ct.SUBTRACT_PRODUCT:
            slots[d] = slots[d] - slots[a] * slots[b]
        else:
            slots[d] = slots[a] / slots[b]
    names = {name for name, _ in item.writes}
    return {name: slots[u] for u, name in enumerate([f"x{i}" for i in range(q.n_qss)] +
                                                     [f"e{c}" for c in range(q.n_cells)]) if name in names}, {}


def _qssa_scaled(tables, values, d: int):
    """Direction d times x_i of its consumed QSSA species (its rate as the QSSA leaves it)."""
    rate = values[_direction_name(tables, d)]
    i = int(tables.scale.direction_qss[d])
    return rate * values[f"x{i}"] if i >= 0 else rate


def stiffness_phase(item, values, load):
    """r_s of ``singe.reference.stiffness`` (simultaneous form): 1 unless DDOT / C_s > 2/dt; dt = 0 (NULL):
    no species is stiff."""
    tables, st = item.tables, item.tables.stiff
    dt = load("dt", 0)
    writes = {}
    for s in range(item.begin, item.end):
        sums = []
        for csr in (st.destruction, st.creation):
            total = 0.0
            for d, nu in zip(*csr.row(s)):
                total = total + nu * _qssa_scaled(tables, values, int(d))
            sums.append(total)
        destruction, creation = sums
        k = int(st.species[s])
        C = np.maximum(values[f"C{k}"], C_FLOOR)
        supply = creation + load("diffusion_source", k) / st.weights[s]
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            stiff = destruction / C > 2.0 / dt
            c0 = C * supply / destruction
            c0 = C * (supply + (C - c0) / dt) / destruction
            writes[f"r{s}"] = np.where(stiff, c0 / C, 1.0)
    return writes, {}


def scale_phase(item, values, load):
    """Each direction of entries ``begin:end`` times x_i (0 where dropped), then times r_s^nu."""
    tables, sc = item.tables, item.tables.scale
    writes = {}
    for e in range(item.begin, item.end):
        d = int(sc.direction[e])
        rate = np.zeros_like(values[_direction_name(tables, d)]) if sc.direction_qss[d] == ct.DROPPED else             _qssa_scaled(tables, values, d)
        for s, nu in zip(*sc.factors.row(e)):
            factor = values[f"r{int(s)}"]
            rate = rate * (factor if nu == 1.0 else np.power(factor, nu))
        writes[_direction_name(tables, d, True)] = rate
    return writes, {}


PHASES = {"thermo": thermo_phase, "concentrations": concentrations_phase, "rates": rates_phase,
          "qssa_coefficients": qssa_coefficients_phase, "qssa_solve": qssa_solve_phase,
          "stiffness": stiffness_phase, "scale": scale_phase, "species": species_phase}


def run_table_loop(item, values: dict, load) -> tuple[dict, dict]:
    """(values written, global rows stored) of one ``TableLoop``."""
    phase = PHASES.get(item.phase)
    if phase is None:
        raise SingeInternalError(f"unknown table phase {item.phase!r}")
    return phase(item, values, load)
