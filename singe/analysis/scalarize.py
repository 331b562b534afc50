"""Convergence, variance and affine analyses, and scalarization (CGO'13 §2–3).

Over a ``singe.analysis.program.Program`` (SSA CFG):

* ``control_dependence`` -- Ferrante, Ottenstein & Warren's control dependence
  (X -> the blocks control dependent on X), from the post-dominator tree with a
  virtual exit; ``iterated_control_dependence`` its transitive closure.
* ``structural_convergence`` -- CGO §3.1: the blocks with no control-dependence
  predecessor (control-equivalent to the entry) are convergent.
* ``analyze`` -- CGO §3.2 Figure 3, the optimistic combined convergence and
  variance analysis, with the exit handling of §3.4 and the affine tracking of
  §3.5: every value is ``a*tid + b`` with uniform ``a``, ``b`` (a ``Variance``);
  ``a == 0`` is uniform, a known ``a`` equal to the access width makes a load or
  store warp-sequential (coalesced).
* ``divergence`` -- Pereira's (Coutinho et al.'s) divergence analysis, for
  comparison: data dependence plus sync dependence through the influence region
  of each divergent branch (values defined there and used past its
  post-dominator, and the phis at the post-dominator).
* ``scalarize`` / ``report`` -- CGO §2.3 and §4: uniform values go to scalar
  registers (affine ones as their uniform base), uniform instructions become
  scalar instructions, unit-stride accesses warp-sequential; the
  ``ScalarizationReport`` counts what that saves.
* ``analyze_programs`` -- the same analysis over singe's ``WarpPrograms``,
  lowered to what the emitted CUDA does per slab (``lower_warp_program``).
* Dynamic checks: ``UniformityCheck`` (an observer of ``program.run``) and
  ``UniformCheck`` (a hook of ``singe.sim.simulate``) raise
  ``SingeInternalError`` when a value classified uniform differs across the
  lanes of a warp.
"""

from __future__ import annotations

from collections import Counter, deque
from dataclasses import dataclass, field
from typing import Mapping

import numpy as np

from singe.errors import SingeInternalError
from singe.kernels.registry import FIELDS, POINT_INPUTS
from singe.analysis.program import (EXIT, WARP_SIZE, Address, Event, Imm, Instr, Memory, Phi, Profile,
                               Program, ProgramBuilder, Special, Symbol, Var, dominators, evaluate,
                               opcode_info, operand_vars, post_dominators, run)

__all__ = ["Access", "Analysis", "Divergence", "DivergenceCheck", "LoweredWarp", "Registers", "Scalarization",
           "ScalarizationReport", "Tally", "UNDEF", "UniformCheck", "UniformityCheck", "VARYING", "Variance",
           "affine", "analyze", "analyze_programs", "analyze_warps", "check_lanes", "control_dependence",
           "divergence", "dominators", "influence_region", "iterated_control_dependence", "join",
           "lower_warp_program", "post_dominators", "register_pressure", "report", "run_lowered", "scalarize",
           "structural_convergence", "sync_dependences", "syncwarp_blocks", "uniform", "uniform_check"]


# --------------------------------------------------------------------------- control dependence

def control_dependence(program: Program) -> dict[str, frozenset[str]]:
    """X -> the blocks control dependent on X (Ferrante et al.): Y is control
    dependent on X iff a path X -> Y has every node after X post-dominated by Y
    and X is not post-dominated by Y.  For each edge X -> S where S does not
    post-dominate X, the post-dominator tree path from S up to (not including)
    ipdom(X) is control dependent on X."""
    ipdom = post_dominators(program)
    result: dict[str, set[str]] = {b.label: set() for b in program.blocks}
    for x in result:
        for s in program.successors[x]:
            runner = s
            while runner != ipdom.get(x) and runner != EXIT:
                result[x].add(runner)
                runner = ipdom[runner]
    return {k: frozenset(v) for k, v in result.items()}


def iterated_control_dependence(program: Program) -> dict[str, frozenset[str]]:
    """X -> every block transitively control dependent on X."""
    direct = control_dependence(program)
    result = {}
    for x in direct:
        seen: set[str] = set()
        stack = list(direct[x])
        while stack:
            y = stack.pop()
            if y not in seen:
                seen.add(y)
                stack.extend(direct[y])
        result[x] = frozenset(seen)
    return result


def structural_convergence(program: Program) -> frozenset[str]:
    """CGO §3.1: blocks without control-dependence predecessors (control
    equivalent to the entry, where all threads start converged)."""
    dependent = set().union(*control_dependence(program).values())
    return frozenset(b.label for b in program.blocks if b.label not in dependent)


def influence_region(program: Program, block: str, ipdom: Mapping[str, str]) -> frozenset[str]:
    """Blocks reachable from ``block``'s successors without passing its
    immediate post-dominator (Pereira's influence region of its branch)."""
    stop = ipdom.get(block, EXIT)
    seen: set[str] = set()
    stack = [s for s in program.successors[block] if s != stop]
    while stack:
        b = stack.pop()
        if b not in seen:
            seen.add(b)
            stack.extend(s for s in program.successors[b] if s != stop)
    return frozenset(seen)


# --------------------------------------------------------------------------- the lattice

ALIGN_MAX = 1 << 30  # "aligned to anything": the base is 0


def lowbit(value) -> int:
    """Largest power of two dividing an integer (ALIGN_MAX for 0; 1 for a float)."""
    if isinstance(value, bool) or not isinstance(value, int):
        return 1
    return ALIGN_MAX if value == 0 else min(value & -value, ALIGN_MAX)


@dataclass(frozen=True)
class Variance:
    """What a value is across the threads of a warp: ``stride * tid + base``
    with ``stride`` and ``base`` uniform.

    ``kind``: 'undef' (not yet seen: the optimistic start), 'uniform'
    (stride 0), 'affine' (stride known, or None: uniform but unknown) or
    'varying'.  ``base`` is the base when it is a compile-time constant;
    ``align`` a power of two the base is known to be a multiple of.
    """

    kind: str
    stride: object = 0
    base: object = None
    align: int = 1

    @property
    def is_uniform(self) -> bool:
        return self.kind == "uniform"

    @property
    def is_affine(self) -> bool:
        return self.kind == "affine"

    @property
    def is_varying(self) -> bool:
        return self.kind == "varying"

    @property
    def known(self) -> bool:
        """Uniform or affine with a known stride (representable by its base)."""
        return self.kind == "uniform" or (self.kind == "affine" and self.stride is not None)

    @property
    def constant(self) -> bool:
        """Known stride and compile-time base: no register needed (an immediate)."""
        return self.known and self.base is not None

    def __str__(self) -> str:
        if self.kind == "uniform":
            return "uniform" if self.base is None else f"uniform(={self.base!r})"
        if self.kind == "affine":
            stride = "?" if self.stride is None else repr(self.stride)
            return f"affine({stride}*tid{'' if self.base is None else f'+{self.base!r}'})"
        return self.kind


UNDEF = Variance("undef")
VARYING = Variance("varying", None)


def affine(stride, base=None, align: int = 1) -> Variance:
    """``stride * tid + base`` (uniform when stride is 0), alignment normalized."""
    if base is not None:
        align = lowbit(base)
    align = max(1, min(int(align), ALIGN_MAX))
    return Variance("uniform" if stride == 0 else "affine", stride, base, align)


def uniform(base=None, align: int = 1) -> Variance:
    return affine(0, base, align)


def join(a: Variance, b: Variance) -> Variance:
    """Least upper bound: undef is the identity, varying absorbs, differing
    strides or bases become unknown."""
    if a.kind == "undef":
        return b
    if b.kind == "undef":
        return a
    if a.is_varying or b.is_varying:
        return VARYING
    stride = a.stride if a.stride == b.stride else None
    base = a.base if a.base == b.base and a.stride == b.stride else None
    return affine(stride, base, min(a.align, b.align))


def _sum(x: Variance, y: Variance, sign: int = 1) -> Variance:
    """x + sign * y."""
    stride = None if x.stride is None or y.stride is None else x.stride + sign * y.stride
    base = None if x.base is None or y.base is None else x.base + sign * y.base
    return affine(stride, base, min(x.align, y.align))


def _product(x: Variance, y: Variance) -> Variance:
    """x * y: uniform * uniform, or affine scaled by a uniform (a constant keeps the stride known)."""
    if not x.is_uniform:
        x, y = y, x
    if not x.is_uniform:
        return VARYING
    if y.is_uniform:
        base = None if x.base is None or y.base is None else x.base * y.base
        return uniform(base, x.align * y.align)
    if x.base is None:
        return affine(None, None, x.align * y.align)
    stride = None if y.stride is None else y.stride * x.base
    base = None if y.base is None else y.base * x.base
    return affine(stride, base, y.align * lowbit(x.base))


def _power_of_two(v: Variance) -> int | None:
    """k when ``v`` is the compile-time integer 2**k."""
    if v.is_uniform and isinstance(v.base, int) and v.base > 0 and (v.base & (v.base - 1)) == 0:
        return v.base.bit_length() - 1
    return None


def _lane_alignment(x: Variance) -> int:
    """Alignment of ``x``'s base as a function of the lane (tid = 32 warp + lane):
    ``x = stride*lane + (base + 32*stride*warp)``."""
    return min(x.align, 32 * lowbit(x.stride))


def _low_bits(x: Variance, k: int, keep_low: bool) -> Variance:
    """``x >> k`` (keep_low False) or ``x & (2**k - 1)`` (True) for affine x:
    when the lane part never carries past bit k (31*stride < 2**k) and the
    per-warp base is a multiple of 2**k, the high part is uniform and the low
    part is ``stride * lane``."""
    s = x.stride
    if not (isinstance(s, int) and s > 0 and 31 * s < (1 << k) and _lane_alignment(x) >= (1 << k)):
        return VARYING
    if keep_low:
        return affine(s, None, 32 * lowbit(s))
    return uniform(None, _lane_alignment(x) >> k)


def _folded(opcode: str, xs: list[Variance]) -> Variance:
    """All operands uniform: uniform, with the constant folded when every base is known."""
    if all(x.base is not None for x in xs):
        try:
            return uniform(evaluate(opcode, [x.base for x in xs]))
        except Exception:  # noqa: BLE001 - a fold that fails (division by zero) stays unknown
            return uniform()
    return uniform()


def arithmetic(opcode: str, xs: list[Variance], affine_compare: bool = True) -> Variance:
    """The variance of a pure opcode's result from its operands' (CGO §3.5 affine rules)."""
    if any(x.kind == "undef" for x in xs):
        return UNDEF
    if any(x.is_varying for x in xs):
        return VARYING
    info = opcode_info(opcode)
    base = info.base
    if all(x.is_uniform for x in xs) and base not in ("add", "sub", "mul", "mad", "fma"):
        return _folded(opcode, xs)
    if base in ("mov", "cvt"):
        return xs[0]
    if base == "neg":
        return _product(uniform(-1), xs[0])
    if base in ("add", "sub"):
        return _sum(xs[0], xs[1], 1 if base == "add" else -1)
    if base == "mul":
        return _product(xs[0], xs[1])
    if base in ("mad", "fma"):
        return _sum(_product(xs[0], xs[1]), xs[2])
    k = _power_of_two(xs[1]) if len(xs) == 2 else None
    if base == "shl":
        if xs[1].is_uniform and isinstance(xs[1].base, int) and xs[1].base >= 0:
            return _product(xs[0], uniform(1 << xs[1].base))
        return affine(None) if xs[1].is_uniform else VARYING
    if base in ("shr", "div") and xs[1].is_uniform:
        shift = xs[1].base if base == "shr" else k
        return _low_bits(xs[0], shift, False) if isinstance(shift, int) and xs[0].is_affine else VARYING
    if base in ("and", "rem") and xs[1].is_uniform and xs[0].is_affine:
        mask = xs[1].base
        bits = (mask + 1).bit_length() - 1 if base == "and" and isinstance(mask, int) and mask >= 0 \
            and (mask & (mask + 1)) == 0 else k
        return _low_bits(xs[0], bits, True) if bits is not None else VARYING
    if base == "set" and affine_compare and xs[0].stride == xs[1].stride and xs[0].stride is not None:
        return uniform()  # a*tid + b1 < a*tid + b2  iff  b1 < b2 (no wrap-around)
    return VARYING


SPECIAL_VARIANCE = {
    "tid": affine(1, 0),                # the affine variable itself
    "laneid": affine(1, None, 32),      # tid - 32*warpid
    "warpid": uniform(), "ctaid": uniform(), "nctaid": uniform(), "ntid": uniform(),
}


def operand_variance(operand, values: Mapping[str, Variance]) -> Variance:
    """The variance of an operand given the values' variances."""
    if isinstance(operand, Var):
        return values.get(operand.name, UNDEF)
    if isinstance(operand, Special):
        return SPECIAL_VARIANCE[operand.name]
    if isinstance(operand, Imm):
        return uniform(operand.value)
    if isinstance(operand, Symbol):
        return uniform()
    if isinstance(operand, Address):
        base = operand_variance(operand.base, values)
        return base if base.kind in ("undef", "varying") else _sum(base, uniform(operand.offset))
    raise SingeInternalError(f"operand {operand!r}")


def instruction_variance(instr: Instr, values: Mapping[str, Variance], affine_compare: bool = True) -> Variance:
    """The variance of an instruction's result in a convergent block."""
    info = instr.info
    xs = [operand_variance(s, values) for s in instr.srcs]
    if instr.guard is not None:
        g = values.get(instr.guard, UNDEF)
        if g.kind == "undef":
            return UNDEF
        if not g.is_uniform:
            return VARYING
    if info.base == "ld":
        if info.space == "param":
            return uniform()
        if info.volatile:
            return VARYING
        return xs[0] if xs[0].kind == "undef" else (uniform() if xs[0].is_uniform else VARYING)
    if info.base == "atom":
        return VARYING
    if info.base == "vote":
        return uniform()
    if info.base == "shfl":
        if any(x.kind == "undef" for x in xs):
            return UNDEF
        return uniform() if xs[1].is_uniform or xs[0].is_uniform else VARYING
    return arithmetic(instr.opcode, xs, affine_compare)


# --------------------------------------------------------------------------- CGO Figure 3

@dataclass(frozen=True)
class Analysis:
    """The result of ``analyze``: convergent blocks, variant branches (blocks
    whose conditional branch is thread-variant) and every value's variance."""

    program: Program
    convergent: frozenset[str]
    variant_branches: frozenset[str]
    values: Mapping[str, Variance]
    affine: bool = True
    exits: bool = True

    @property
    def divergent(self) -> frozenset[str]:
        return frozenset(b.label for b in self.program.blocks) - self.convergent

    def variance(self, operand) -> Variance:
        return operand_variance(operand if not isinstance(operand, str) else Var(operand), self.values)

    def uniform_values(self) -> frozenset[str]:
        return frozenset(v for v, x in self.values.items() if x.is_uniform)

    def __str__(self) -> str:
        lines = [f"analysis of {self.program.name}: convergent {sorted(self.convergent)}, "
                 f"divergent {sorted(self.divergent)}, variant branches {sorted(self.variant_branches)}"]
        lines += [f"    %{v}: {x}" for v, x in self.values.items()]
        return "\n".join(lines)


class _Solver:
    """The optimistic worklist of CGO Figure 3 over sites, generalized to the
    affine lattice: every block starts convergent and every value undefined
    (optimistically invariant); values only rise."""

    def __init__(self, program: Program, affine: bool, exits: bool):
        self.program, self.affine, self.exits = program, affine, exits
        self.values: dict[str, Variance] = {}
        self.convergent = {b.label for b in program.blocks}
        self.variant: set[str] = set()
        self.forced: set = set()  # phi sites at the join of a variant branch
        self.icd = iterated_control_dependence(program)
        self.ipdom = post_dominators(program)
        self.worklist = deque(site for site, _ in program.sites())
        self.queued = set(self.worklist)

    def push(self, site) -> None:
        if site not in self.queued:
            self.queued.add(site)
            self.worklist.append(site)

    def solve(self) -> Analysis:
        while self.worklist:
            site = self.worklist.popleft()
            self.queued.discard(site)
            self.visit(site, self.program.item(site))
        return Analysis(self.program, frozenset(self.convergent), frozenset(self.variant),
                        dict(self.values), self.affine, self.exits)

    def visit(self, site, item) -> None:
        """Re-evaluate a site: raise its value (pushing its users), and diverge
        at a conditional branch that turned thread-variant."""
        if item.dst is not None:
            old = self.values.get(item.dst, UNDEF)
            new = join(old, self.evaluate(site, item))
            if new != old:
                self.values[item.dst] = new
                for user in self.program.uses.get(item.dst, ()):
                    self.push(user)
        if isinstance(item, Instr) and item.is_conditional_branch and site[0] not in self.variant:
            cond = operand_variance(item.srcs[0], self.values)
            if site[0] not in self.convergent or cond.kind not in ("undef", "uniform"):
                self.diverge(site[0])

    def evaluate(self, site, item) -> Variance:
        """The variance of a site's value from its operands' current variances."""
        if site[0] not in self.convergent or site in self.forced:
            return VARYING
        if isinstance(item, Phi):
            result = UNDEF
            for _, value in item.incoming:
                result = join(result, operand_variance(value, self.values))
        else:
            result = instruction_variance(item, self.values, self.affine)
        if not self.affine and result.is_affine:
            return VARYING
        return result

    def diverge(self, block: str) -> None:
        """A thread-variant branch: its iterated control-dependence successors
        without a barrier become divergent (all their instructions variant),
        and the phis where its paths join select per thread -- unless one side
        is an early exit (CGO §3.4)."""
        self.variant.add(block)
        exits = [s for s in self.program.successors[block] if self.program.by_label[s].is_exit_only]
        if self.exits and exits:  # the threads leaving wait at the exit: only the exit block diverges
            self.convergent.difference_update(exits)
            return
        for bb in self.icd[block]:
            if bb in self.convergent and not self.program.by_label[bb].has_barrier():
                self.convergent.discard(bb)
                for k in range(len(self.program.by_label[bb].code)):
                    self.push((bb, k))
        join_block = self.ipdom.get(block, EXIT)
        if join_block != EXIT:
            for k in range(len(self.program.by_label[join_block].phis)):
                self.forced.add((join_block, k))
                self.push((join_block, k))


def analyze(program: Program, *, affine: bool = True, exits: bool = True) -> Analysis:
    """CGO'13 combined convergence and variance analysis (Figure 3) with affine
    tracking (§3.5) and the early-exit rule (§3.4).

    ``affine=False``: plain variance analysis (any thread-id dependence is
    varying); ``exits=False``: without the exit rule.  With ``affine`` two
    values of the same known stride compare uniformly (an extension: their
    difference is uniform), so a loop ``for (i = tid; i < tid + n; ...)`` stays
    convergent."""
    program.verify()
    return _Solver(program, affine, exits).solve()


# --------------------------------------------------------------------------- Pereira's analysis

@dataclass(frozen=True)
class Divergence:
    """Pereira's divergence analysis: divergent values (different threads may
    see different values) and divergent branches; the rest is uniform (among
    the threads active where it is defined).  ``divergent_uses``: (site, value)
    where a value uniform inside a divergent branch's influence region is read
    past it, through the live-range split copy that the branch gates (the
    copy is divergent, the value itself is not)."""

    program: Program
    divergent: frozenset[str]
    divergent_branches: frozenset[str]
    divergent_uses: frozenset = frozenset()

    @property
    def uniform(self) -> frozenset[str]:
        return frozenset(self.program.definitions) - self.divergent

    def __str__(self) -> str:
        return (f"divergence of {self.program.name}: divergent {sorted(self.divergent)}, "
                f"uniform {sorted(self.uniform)}, divergent branches {sorted(self.divergent_branches)}")


def sync_dependences(program: Program) -> dict[str, set]:
    """Branch block -> (site, value) sync dependent on its predicate: the phis
    at its post-dominator (value None), and sites outside its influence region
    reading a value defined inside it (they read the live-range split copy,
    gated by the branch)."""
    ipdom = post_dominators(program)
    result = {}
    for block in program.blocks:
        term = block.terminator
        if term is None or not term.is_conditional_branch:
            continue
        region = influence_region(program, block.label, ipdom)
        users = set()
        join_block = ipdom.get(block.label, EXIT)
        if join_block != EXIT:
            users.update(((join_block, k), None) for k in range(len(program.by_label[join_block].phis)))
        for label in region:
            for item in program.by_label[label].code:
                for site in program.uses.get(item.dst, ()) if item.dst else ():
                    if site[0] not in region:
                        users.add((site, item.dst))
        result[block.label] = users
    return result


def _reads_divergent(operands, divergent: set) -> bool:
    """Does any operand read a thread id or a divergent value?"""
    for operand in operands:
        base = operand.base if isinstance(operand, Address) else operand
        if isinstance(base, Special) and base.name in ("tid", "laneid"):
            return True
        if isinstance(base, Var) and base.name in divergent:
            return True
    return False


def _pereira_divergent(item, divergent: set) -> bool:
    """Is a site's value divergent by data dependence (thread ids, atomics,
    volatile loads, divergent operands)?  Votes and ``ld.param`` are uniform; a
    shuffle is divergent only when both its value and its source lane are."""
    if isinstance(item, Phi):
        return any(n in divergent for n in item.reads())
    info = item.info
    if info.base == "atom" or info.volatile:
        return True
    if info.base == "vote" or (info.base == "ld" and info.space == "param"):
        return False
    if info.base == "shfl":
        return _reads_divergent(item.srcs[1:], divergent) and _reads_divergent(item.srcs[:1], divergent)
    return _reads_divergent(item.srcs, divergent) or (item.guard is not None and item.guard in divergent)


def divergence(program: Program) -> Divergence:
    """Divergent values: thread ids, atomics and volatile loads, and everything
    data or sync dependent on them (a fixed point over the dependence graph)."""
    program.verify()
    sync = {branch: {site for site, _ in users} for branch, users in sync_dependences(program).items()}
    gated: dict = {}
    for branch, users in sync.items():
        for site in users:
            gated.setdefault(site, []).append(branch)
    divergent: set[str] = set()
    branches: set[str] = set()
    worklist = deque(site for site, _ in program.sites())
    while worklist:
        site = worklist.popleft()
        item = program.item(site)
        if item.dst is not None and item.dst not in divergent and (
                _pereira_divergent(item, divergent) or any(b in branches for b in gated.get(site, ()))):
            divergent.add(item.dst)
            worklist.extend(program.uses.get(item.dst, ()))
        if isinstance(item, Instr) and item.is_conditional_branch and site[0] not in branches and \
                _reads_divergent(item.srcs, divergent):
            branches.add(site[0])
            worklist.extend(sync.get(site[0], ()))
    uses = frozenset((site, name) for branch, users in sync_dependences(program).items() if branch in branches
                     for site, name in users if name is not None)
    return Divergence(program, frozenset(divergent), frozenset(branches), uses)


def syncwarp_blocks(analysis: Analysis) -> frozenset[str]:
    """CGO §5.2: where a stackless SIMT machine must reconverge with a
    ``syncwarp``: convergent blocks with a divergent predecessor."""
    program = analysis.program
    return frozenset(b for b in analysis.convergent
                     if any(p not in analysis.convergent for p in program.predecessors[b]))


# --------------------------------------------------------------------------- scalarization

ROLES = ("scalar", "warp-seq", "thread", "eliminated")
LANES = "@lanes"  # suffix of the private copy of a value held as a scalar


@dataclass(frozen=True)
class Scalarization:
    """Where every value lives and how every instruction executes after scalarization.

    ``storage``: value -> 'scalar' (one register per warp; an affine value
    keeps its uniform base there), 'private' (one per thread) or 'const' (a
    compile-time constant or constant-based affine value: an immediate, no
    register).  ``alias``: value -> the value whose register it shares (a
    copy, or an affine value whose base equals an operand's).  ``roles``:
    instruction site -> 'scalar' (once per warp), 'warp-seq' (a unit-stride
    load/store from a scalar base, once per warp), 'thread' (once per thread)
    or 'eliminated' (nothing left to do).  ``lane_uses``: (site, value) where a
    value held as a scalar is needed per thread (an affine value read as data,
    a scalar flowing into a private phi): such values are ``materialized``,
    one added thread instruction writing a private copy (``value@lanes``).
    """

    analysis: Analysis
    storage: Mapping[str, str]
    alias: Mapping[str, str]
    roles: Mapping[tuple, str]
    lane_uses: frozenset = frozenset()

    @property
    def program(self) -> Program:
        return self.analysis.program

    @property
    def materialized(self) -> frozenset[str]:
        return frozenset(name for _, name in self.lane_uses)

    def root(self, name: str) -> str:
        return _resolve(name, self.alias)

    def read_registers(self, site, names) -> list[tuple[str, str]]:
        """(register, class) read for the values ``names`` used at ``site``
        (constants read nothing)."""
        result = []
        for name in names:
            if (site, name) in self.lane_uses:
                result.append((name + LANES, "private"))
                continue
            root = self.root(name)
            if self.storage[root] != "const":
                result.append((root, self.storage[root]))
        return result

    def defined_registers(self, site, item) -> list[tuple[str, str]]:
        """(register, class) written at ``site`` (with a materialized copy)."""
        if item.dst is None:
            return []
        result = []
        if self.roles.get(site) != "eliminated" and self.storage[item.dst] != "const":
            result.append((item.dst, self.storage[item.dst]))
        if item.dst in self.materialized:
            result.append((item.dst + LANES, "private"))
        return result

    def __str__(self) -> str:
        marks = {"scalar": "@s ", "warp-seq": "@s ", "thread": "   ", "eliminated": " - "}
        lines = [f"scalarized {self.program.name}: @s scalar, - eliminated, wseq warp-sequential, "
                 f"+lanes a private copy added"]
        for block in self.program.blocks:
            lines.append(f"{block.label}:{'' if block.label in self.analysis.convergent else '  (divergent)'}")
            for k, item in enumerate(block.code):
                role = self.roles.get((block.label, k))
                notes = ("   # wseq" if role == "warp-seq" else "") + \
                    ("   # +lanes" if item.dst in self.materialized else "")
                lines.append(f"  {marks.get(role, '   ')}{item}{notes}")
        return "\n".join(lines)


def _resolve(name: str, alias: Mapping[str, str]) -> str:
    while name in alias:
        name = alias[name]
    return name


def _initial_storage(analysis: Analysis) -> dict[str, str]:
    """Value -> storage from its variance: constant forms need no register,
    other uniform/known-affine values in convergent blocks are scalar."""
    program = analysis.program
    storage = {}
    for name, site in program.definitions.items():
        x = analysis.values.get(name, VARYING)
        item = program.item(site)
        convergent = site[0] in analysis.convergent
        guarded = isinstance(item, Instr) and item.guard is not None and \
            not analysis.values.get(item.guard, VARYING).is_uniform
        if not convergent or not x.known or guarded:
            storage[name] = "private"
        elif isinstance(item, Instr) and x.constant and item.info.base not in ("ld", "vote", "shfl", "atom"):
            storage[name] = "const"
        else:
            storage[name] = "scalar"
    return storage


def _find_alias(instr: Instr, analysis: Analysis, storage: Mapping[str, str]) -> str | None:
    """The value whose register ``instr``'s scalar result can share: ``r + c``
    or ``r - c`` where c is a constant form with base 0 (such as ``tid * 4``):
    the result's uniform base is r's.  (Plain copies are left alone: a
    conventional compiler propagates those too.)"""
    base = instr.info.base
    if base not in ("add", "sub") or storage[instr.dst] != "scalar":
        return None
    for k in ((0, 1) if base == "add" else (0,)):
        r, c = instr.srcs[k], instr.srcs[1 - k]
        cx = analysis.variance(c)
        if isinstance(r, Var) and storage[r.name] == "scalar" and cx.constant and cx.base == 0:
            return r.name
    return None


def _access_role(instr: Instr, site, analysis: Analysis) -> str:
    """'scalar' (uniform address, convergent), 'warp-seq' (address stride equal
    to the access width: the scalar base is enough) or 'thread'."""
    info = instr.info
    if info.base == "atom" or site[0] not in analysis.convergent:
        return "thread"
    if info.space == "param":
        return "scalar"
    address = analysis.variance(instr.srcs[0])
    guard_uniform = instr.guard is None or analysis.values.get(instr.guard, VARYING).is_uniform
    value_uniform = info.base == "ld" or analysis.variance(instr.srcs[1]).is_uniform
    if address.is_uniform and guard_uniform and value_uniform:
        return "scalar"
    if address.is_affine and info.width and address.stride == info.width:
        return "warp-seq"
    return "thread"


def _keeps_base(site, name: str, analysis: Analysis, storage) -> bool:
    """Can the use of a value held as a scalar at ``site`` work on the scalar?
    Yes for a scalar phi, an instruction computing a scalar or constant form,
    the address of a warp-sequential access, and -- for a uniform value -- any
    instruction (a thread instruction reads a scalar operand directly)."""
    item = analysis.program.item(site)
    x = analysis.values.get(name, VARYING)
    if isinstance(item, Phi):
        return storage[item.dst] != "private"
    if x.is_uniform:
        return True
    if item.info.is_memory:
        elsewhere = [n for s in item.srcs[1:] for n in operand_vars(s)] + [item.guard]
        return name in operand_vars(item.srcs[0]) and name not in elsewhere and \
            _access_role(item, site, analysis) == "warp-seq"
    if item.dst is None or name == item.guard:
        return False
    return storage[item.dst] in ("scalar", "const") and item.info.base not in ("vote", "shfl")


def _lane_uses(analysis: Analysis, storage: Mapping[str, str]) -> frozenset:
    """(site, value) for every use needing per-thread copies of a value held as a scalar."""
    program = analysis.program
    result = set()
    for name in program.definitions:
        if storage[name] == "private":
            continue
        for site in program.uses.get(name, ()):
            if not _keeps_base(site, name, analysis, storage):
                result.add((site, name))
    return frozenset(result)


def _materialize_phi_constants(program: Program, storage: dict) -> None:
    """A constant flowing into a phi is written into the phi's register (the
    paper's ``mov r6, 0`` before the loop): private if any such phi is private."""
    for name, kind in list(storage.items()):
        if kind != "const":
            continue
        phis = [program.item(s) for s in program.uses.get(name, ()) if isinstance(program.item(s), Phi)]
        if phis:
            storage[name] = "private" if any(storage[p.dst] == "private" for p in phis) else "scalar"


def _instruction_role(site, instr: Instr, analysis: Analysis, storage, alias) -> str:
    """'scalar', 'warp-seq', 'thread' or 'eliminated' for one instruction."""
    base = instr.info.base
    if base == "exit":
        return "thread"
    if base in ("bra", "bar"):
        uniform_operands = all(analysis.variance(s).is_uniform for s in instr.srcs)
        return "scalar" if site[0] in analysis.convergent and uniform_operands else "thread"
    if instr.info.is_memory:
        return _access_role(instr, site, analysis)
    if instr.dst is None:
        return "thread"
    if instr.dst in alias or storage[instr.dst] == "const":
        return "eliminated"
    if storage[instr.dst] != "scalar" or base == "vote":  # a vote reads every lane's predicate
        return "thread"
    return "scalar"


def scalarize(analysis: Analysis) -> Scalarization:
    """CGO §2.3/§3: map uniform values to scalar registers (affine ones as their
    uniform base) and uniform instructions to scalar instructions, unit-stride
    accesses to warp-sequential ones; copy a scalar into private registers
    only where a use needs it per thread."""
    program = analysis.program
    storage = _initial_storage(analysis)
    _materialize_phi_constants(program, storage)
    for name, site in program.definitions.items():  # loads: private unless scalar accesses
        item = program.item(site)
        if isinstance(item, Instr) and item.info.is_memory and _access_role(item, site, analysis) != "scalar":
            storage[name] = "private"
    alias: dict[str, str] = {}
    for name, site in program.definitions.items():
        item = program.item(site)
        if isinstance(item, Instr) and storage[name] != "const":
            target = _find_alias(item, analysis, storage)
            if target is not None:
                alias[name] = target
    roles = {site: _instruction_role(site, item, analysis, storage, alias)
             for site, item in program.sites() if isinstance(item, Instr)}
    return Scalarization(analysis, storage, alias, roles, _lane_uses(analysis, storage))


# --------------------------------------------------------------------------- register pressure

def register_pressure(program: Program, defined, read) -> Counter:
    """Peak number of simultaneously live registers per class over all program
    points (SSA liveness; phi operands live to the end of their predecessor).

    ``defined(site, item)`` -> [(register, class)] written there;
    ``read(site, names)`` -> [(register, class)] read for those values there."""
    live_in: dict[str, frozenset] = {b.label: frozenset() for b in program.blocks}
    changed = True
    while changed:
        changed = False
        for block in reversed(program.blocks):
            out = _live_out(program, block, live_in, defined, read)
            new = _block_liveness(block, out, defined, read, None)
            if new != live_in[block.label]:
                live_in[block.label] = new
                changed = True
    peak: Counter = Counter()
    for block in program.blocks:
        _block_liveness(block, _live_out(program, block, live_in, defined, read), defined, read, peak)
    return peak


def _live_out(program: Program, block, live_in, defined, read) -> set:
    """Registers live at the end of ``block``: live into its successors (less
    their phis) and the phi operands coming from ``block``."""
    out = set()
    for s in program.successors[block.label]:
        succ = program.by_label[s]
        killed = {r for k, phi in enumerate(succ.phis) for r in defined((s, k), phi)}
        out |= live_in[s] - killed
        for k, phi in enumerate(succ.phis):
            out.update(read((s, k), operand_vars(phi.value_from(block.label))))
    return out


def _block_liveness(block, out: set, defined, read, peak) -> frozenset:
    """Backward pass over a block's instructions; with ``peak``, records the
    pressure per class at every point (counts kept incrementally)."""
    live = set(out)
    counts = Counter(c for _, c in live) if peak is not None else None

    def add(registers) -> None:
        for r in registers:
            if r not in live:
                live.add(r)
                if counts is not None:
                    counts[r[1]] += 1

    def remove(registers) -> None:
        for r in registers:
            if r in live:
                live.discard(r)
                if counts is not None:
                    counts[r[1]] -= 1

    def record() -> None:
        if counts is not None:
            for cls, n in counts.items():
                if n > peak[cls]:
                    peak[cls] = n

    record()
    for k in range(len(block.instrs) - 1, -1, -1):
        site = (block.label, len(block.phis) + k)
        instr = block.instrs[k]
        registers = defined(site, instr)
        add(registers)  # a definition needs its register even if never read
        record()
        remove(registers)
        add(read(site, instr.reads()))
        record()
    for k, phi in enumerate(block.phis):
        add(defined((block.label, k), phi))
    record()
    return frozenset(live)


def _conventional_defined(site, item) -> list:
    return [(item.dst, "conventional")] if item.dst is not None else []


def _conventional_read(site, names) -> list:
    return [(n, "conventional") for n in names]


# --------------------------------------------------------------------------- the report

@dataclass(frozen=True)
class Tally:
    """One metric, conventional vs scalarized.

    Per thread (weighted by warp-level issues): ``conventional + added ==
    scalar + private + removed``, where ``scalar`` happens once per warp,
    ``private`` once per thread, ``removed`` no more, and ``added`` counts
    what scalarization adds (private copies of scalars).  Per warp:
    ``conventional_lanes`` (every active thread does it) against
    ``scalar + private_lanes``.
    """

    conventional: int = 0
    scalar: int = 0
    private: int = 0
    removed: int = 0
    added: int = 0
    conventional_lanes: int = 0
    private_lanes: int = 0

    @property
    def warp_conventional(self) -> int:
        return self.conventional_lanes

    @property
    def warp_scalarized(self) -> int:
        return self.scalar + self.private_lanes

    @property
    def saved(self) -> float:
        """Fraction of the per-warp count scalarization removes."""
        return 1.0 - self.warp_scalarized / self.warp_conventional if self.warp_conventional else 0.0

    def __add__(self, other: "Tally") -> "Tally":
        return Tally(*(a + b for a, b in zip(self._values(), other._values())))

    def scaled(self, issues: int, lanes: int) -> "Tally":
        """This per-execution tally over ``issues`` warp executions covering ``lanes`` threads."""
        c, sc, pr, rm, ad = self._values()[:5]
        return Tally(c * issues, sc * issues, pr * issues, rm * issues, ad * issues, c * lanes, pr * lanes)

    def _values(self) -> tuple:
        return (self.conventional, self.scalar, self.private, self.removed, self.added,
                self.conventional_lanes, self.private_lanes)

    def verify(self) -> None:
        if self.conventional + self.added != self.scalar + self.private + self.removed:
            raise SingeInternalError(f"{self}: conventional + added != scalar + private + removed")


@dataclass(frozen=True)
class Registers:
    """Registers per thread conventionally; after scalarization private
    registers per thread and scalar registers per warp."""

    conventional: int
    private: int
    scalar: int

    def warp_conventional(self, warp_size: int = WARP_SIZE) -> int:
        return self.conventional * warp_size

    def warp_scalarized(self, warp_size: int = WARP_SIZE) -> int:
        return self.private * warp_size + self.scalar

    def saved(self, warp_size: int = WARP_SIZE) -> float:
        conventional = self.warp_conventional(warp_size)
        return 1.0 - self.warp_scalarized(warp_size) / conventional if conventional else 0.0


@dataclass(frozen=True)
class Access:
    """A load or store: where, its space and width, and how it executes after
    scalarization ('scalar': one access for the warp; 'warp-seq': unit stride,
    statically coalesced; 'thread': one address per thread)."""

    site: tuple
    text: str
    space: str
    kind: str
    width: int
    role: str

    @property
    def coalesced(self) -> bool:
        return self.role == "warp-seq"


METRICS = ("issued", "operations", "reads", "writes", "addresses", "data")
METRIC_NAMES = {"issued": "instructions issued", "operations": "operations executed",
                "reads": "register reads", "writes": "register writes",
                "addresses": "memory addresses", "data": "memory data accesses"}


def _site_counts(s: Scalarization, site, instr: Instr) -> dict[str, Tally]:
    """Per metric, the tally of one execution of ``instr`` by one thread (lane
    fields 1 per thread; ``report`` scales them)."""
    role = s.roles[site]
    once = {"scalar": (1, 1, 0, 0), "warp-seq": (1, 1, 0, 0), "thread": (1, 0, 1, 0),
            "eliminated": (1, 0, 0, 1)}[role]
    counts = {"issued": _tally(*once), "operations": _tally(*once)}
    names = instr.reads()
    if role == "eliminated":
        counts["reads"] = _tally(len(names), 0, 0, len(names))
    else:
        classes = [cls for _, cls in s.read_registers(site, names)]
        scalar = sum(c == "scalar" or role == "scalar" for c in classes)  # a scalar op reads one element
        counts["reads"] = _tally(len(names), scalar, len(classes) - scalar, len(names) - len(classes))
    if instr.dst is not None:
        kind = "eliminated" if role == "eliminated" else s.storage[instr.dst]
        counts["writes"] = _tally(1, kind == "scalar", kind == "private", kind not in ("scalar", "private"))
    if instr.info.is_memory:
        counts["addresses"] = _tally(1, role != "thread", role == "thread", 0)
        counts["data"] = _tally(1, role == "scalar", role != "scalar", 0)
    if instr.dst in s.materialized:  # the added private copy: base + stride * tid, one thread op
        base_read = int(s.storage[s.root(instr.dst)] == "scalar")
        added = {"issued": (1, 0), "operations": (1, 0), "reads": (0, base_read), "writes": (1, 0)}
        for metric, (private, scalar) in added.items():
            counts[metric] = counts.get(metric, Tally()) + Tally(0, scalar, private, 0, private + scalar, 0, private)
    return counts


def _tally(conventional, scalar, private, removed) -> Tally:
    return Tally(int(conventional), int(scalar), int(private), int(removed), 0, int(conventional), int(private))


def _registers(s: Scalarization) -> Registers:
    """Peak register pressure: conventional (every value per thread) and
    scalarized (private per thread, scalar per warp)."""
    program = s.program
    conventional = register_pressure(program, _conventional_defined, _conventional_read)["conventional"]

    def read(site, names):
        item = program.item(site)
        if isinstance(item, Instr) and s.roles[site] == "eliminated":
            copy = item.dst in s.materialized and s.storage[s.root(item.dst)] == "scalar"
            return [(s.root(item.dst), "scalar")] if copy else []
        return s.read_registers(site, names)

    peak = register_pressure(program, s.defined_registers, read)
    return Registers(conventional, peak["private"], peak["scalar"])


def _accesses(s: Scalarization) -> tuple[Access, ...]:
    result = []
    for site, item in s.program.sites():
        if isinstance(item, Instr) and item.info.is_memory:
            info = item.info
            kind = {"ld": "load", "st": "store", "atom": "atomic"}[info.base]
            result.append(Access(site, str(item), info.space, kind, info.width, s.roles[site]))
    return tuple(result)


@dataclass(frozen=True)
class ScalarizationReport:
    """What scalarization saves (CGO §2.3, §4.2): per metric a ``Tally``
    (instructions issued, operations executed, register reads and writes,
    memory addresses and data accesses), the registers, and every load/store
    with how it executes.  A kernel's report sums its warps' (``parts``);
    its registers are the largest of any warp."""

    name: str
    warp_size: int
    issued: Tally
    operations: Tally
    reads: Tally
    writes: Tally
    addresses: Tally
    data: Tally
    registers: Registers
    accesses: tuple[Access, ...] = ()
    parts: tuple["ScalarizationReport", ...] = ()

    def tallies(self) -> dict[str, Tally]:
        return {m: getattr(self, m) for m in METRICS}

    @property
    def scalar_fraction(self) -> float:
        """Fraction of the instructions left after scalarization that are scalar."""
        left = self.issued.scalar + self.issued.private
        return self.issued.scalar / left if left else 0.0

    def access_summary(self) -> Counter:
        """(space, kind, role) -> number of accesses."""
        return Counter((a.space, a.kind, a.role) for a in self.accesses)

    def verify(self) -> None:
        """Every tally adds up; operations match instructions; parts add up to the whole."""
        for tally in self.tallies().values():
            tally.verify()
        issued, ops = self.issued, self.operations
        if (issued.conventional, issued.scalar, issued.private, issued.removed) != \
                (ops.conventional, ops.scalar, ops.private, ops.removed):
            raise SingeInternalError(f"{self.name}: issued instructions and operations disagree")
        if self.addresses.conventional != self.data.conventional:
            raise SingeInternalError(f"{self.name}: address and data counts disagree")
        if self.parts:
            for metric in METRICS:
                if sum((getattr(p, metric) for p in self.parts), Tally()) != getattr(self, metric):
                    raise SingeInternalError(f"{self.name}: {metric} is not the sum of its parts")

    @classmethod
    def combine(cls, name: str, parts: list["ScalarizationReport"]) -> "ScalarizationReport":
        tallies = {m: sum((getattr(p, m) for p in parts), Tally()) for m in METRICS}
        registers = Registers(*(max(getattr(p.registers, f) for p in parts)
                                for f in ("conventional", "private", "scalar")))
        accesses = tuple(a for p in parts for a in p.accesses)
        return cls(name, parts[0].warp_size, registers=registers, accesses=accesses,
                   parts=tuple(parts), **tallies)

    def __str__(self) -> str:
        w = self.warp_size
        lines = [f"scalarization of {self.name} (warps of {w} threads)",
                 f"  {'':22} {'per thread: conventional -> scalar + private (-removed)':55} "
                 f"per warp: conventional -> scalarized (saved)"]
        for metric, t in self.tallies().items():
            added = f" +{t.added} added" if t.added else ""
            per_thread = f"{t.conventional} -> {t.scalar} + {t.private} (-{t.removed}{added})"
            lines.append(f"  {METRIC_NAMES[metric]:22} {per_thread:55} "
                         f"{t.warp_conventional} -> {t.warp_scalarized} ({t.saved:.0%})")
        r = self.registers
        lines.append(f"  registers: {r.conventional} per thread ({r.warp_conventional(w)} per warp) -> "
                     f"{r.private} private per thread + {r.scalar} scalar per warp "
                     f"({r.warp_scalarized(w)} per warp, {r.saved(w):.0%} fewer)")
        lines.append(f"  scalar instructions: {self.scalar_fraction:.1%} of those left")
        summary = ", ".join(f"{n} {space} {kind}s {role}" for (space, kind, role), n
                            in sorted(self.access_summary().items()))
        lines.append(f"  accesses: {summary or 'none'}")
        return "\n".join(lines)


def report(s: Scalarization, profile: Profile | None = None, name: str | None = None,
           warp_size: int = WARP_SIZE) -> ScalarizationReport:
    """Count what scalarization saves: static counts (each block once) by
    default, or weighted by a ``Profile`` (block -> warp issues and lane
    executions, e.g. from ``program.run``, or ``Profile.of({'BB_4': 1})`` for one
    loop iteration)."""
    program = s.program
    profile = profile if profile is not None else Profile.static(program, warp_size)
    tallies = {m: Tally() for m in METRICS}
    for site, item in program.sites():
        issues = profile.issues.get(site[0], 0)
        if not isinstance(item, Instr) or not issues:
            continue
        lanes = profile.lanes.get(site[0], 0)
        for metric, tally in _site_counts(s, site, item).items():
            tallies[metric] += tally.scaled(issues, issues if metric == "issued" else lanes)
    result = ScalarizationReport(name or program.name, warp_size, registers=_registers(s),
                                 accesses=_accesses(s), **tallies)
    result.verify()
    return result


# --------------------------------------------------------------------------- singe's warp programs

PER_SLAB = {"loop": 1, "body": 1}  # the blocks one slab executes


@dataclass(frozen=True)
class LoweredWarp:
    """One warp's program as the emitted CUDA runs it (see ``lower_warp_program``).

    ``registers``: SSA value -> the simulator register it holds (values of the
    operations and shared loads); ``constants``: the warp's constant table in
    slot order; ``fields``: the global arrays it touches."""

    warp: int
    program: Program
    registers: Mapping[str, str]
    constants: tuple[float, ...]
    stripes: int
    fields: tuple[str, ...]


class _Lowering:
    """Builds the per-warp program: entry (ids, parameters, constant stripes),
    the slab loop, and one body block with every item of the warp program."""

    def __init__(self, programs, warp: int):
        self.programs, self.warp = programs, warp
        ops = programs.programs[warp].computes()
        used = {i.field for op in ops for i in op.instrs if i.opcode in ("ldg", "stg")}
        self.fields = tuple([f for f in FIELDS if f in used] + sorted(used - set(FIELDS)))
        self.constants = tuple(dict.fromkeys(programs.constants(warp)))
        self.slots = {c: k for k, c in enumerate(self.constants)}
        self.stripes = -(-len(self.constants) // WARP_SIZE)
        params = list(self.fields) + ["n_points", "species_stride"] + (["constants"] if self.stripes else [])
        self.b = ProgramBuilder(f"{programs.kernel}_warp{warp}", params)
        self.current: dict[str, Var] = {}
        self.registers: dict[str, str] = {}
        self.v: dict[str, Var] = {}

    def value(self, opcode: str, *srcs, stem: str = "t", guard=None) -> Var:
        return self.b.value(opcode, *srcs, stem=f"${stem}", guard=guard)

    def define(self, register: str) -> str:
        """A fresh SSA name for a (re)definition of a simulator register."""
        name, k = register, 1
        while name in self.registers:
            k += 1
            name = f"{register}'{k}"
        self.registers[name] = register
        self.current[register] = Var(name)
        return name

    def entry(self) -> None:
        """Once per thread: lane, parameters, the warp's constant stripes, n_slabs."""
        b, v = self.b, self.v
        b.block("entry")
        v["lane"] = self.value("and", Special("tid"), Imm(31), stem="lane")
        v["lane8"] = self.value("shl", v["lane"], Imm(3), stem="lane8")
        v["n"] = self.value("ld.param.s32", Address(Symbol("n_points")), stem="n_points")
        v["stride8"] = self.value("shl", self.value("ld.param.s32", Address(Symbol("species_stride")),
                                                    stem="species_stride"), Imm(3), stem="stride8")
        for f in self.fields:
            v[f] = self.value("ld.param.u64", Address(Symbol(f)), stem=f)
        if self.stripes:
            warp = self.value("shr", Special("tid"), Imm(5), stem="warp")
            table = self.value("ld.param.u64", Address(Symbol("constants")), stem="constants")
            row = self.value("add", table, self.value("mul", warp, Imm(self.stripes * WARP_SIZE * 8)))
            mine = self.value("add", row, v["lane8"], stem="table")
            for s in range(self.stripes):  # cs[s] = constants[(warp * stripes + s) * 32 + lane]
                v[f"cs{s}"] = self.value("ld.global.f64", Address(mine, s * WARP_SIZE * 8), stem=f"cs{s}_")
        v["n_slabs"] = self.value("shr", self.value("add", v["n"], Imm(31)), Imm(5), stem="n_slabs")
        v["slab0"] = self.value("mov", Special("ctaid"), stem="slab")
        b.emit("bra", targets=("loop",))

    def loop(self) -> None:
        """``for (slab = blockIdx.x; slab < n_slabs; slab += gridDim.x)``."""
        b, v = self.b, self.v
        b.block("loop")
        v["slab"] = b.phi("$slab", ("entry", v["slab0"]), ("body", Var("$slab_next")))
        more = self.value("set.lt.s32", v["slab"], v["n_slabs"], stem="more")
        b.emit("bra", more, targets=("body", "done"))

    def body(self) -> None:
        """One slab: the point index and its validity, then every unit of the warp."""
        b, v = self.b, self.v
        b.block("body")
        point = self.value("add", self.value("shl", v["slab"], Imm(5)), v["lane"], stem="point")
        v["valid"] = self.value("set.lt.s32", point, v["n"], stem="valid")
        point8 = self.value("shl", point, Imm(3), stem="point8")
        for f in self.fields:  # &field[point]
            v[f"at_{f}"] = self.value("add", v[f], point8, stem=f"at_{f}_")
        from singe.programs.lowering import program_units
        for unit in program_units(self.programs.programs[self.warp]):
            self.unit(unit)
        b.emit("add", v["slab"], Special("nctaid"), dst="$slab_next")
        b.emit("bra", targets=("loop",))
        b.block("done")
        b.emit("exit")

    def unit(self, unit) -> None:
        """One codegen unit (``singe.programs.lowering``): an operation with the
        shared loads it reads in place and the stores it writes in place, a
        register load or store, or a barrier."""
        from singe.programs.lowering import BarrierUnit, ComputeUnit, LoadUnit, StoreUnit
        from singe.programs import Arrive, FullSync
        if isinstance(unit, ComputeUnit):
            self.compute(unit)
        elif isinstance(unit, StoreUnit):
            self.b.emit("st.shared.f64", self.shared(unit.slot), self.current[unit.value])
        elif isinstance(unit, LoadUnit):
            self.b.emit("ld.shared.f64", self.shared(unit.slot), dst=self.define(unit.value))
        elif isinstance(unit, BarrierUnit):
            item = unit.item
            if isinstance(item, FullSync):
                self.b.emit("bar.sync", Imm(0), Imm(self.programs.threads))
            else:
                kind = "bar.arrive" if isinstance(item, Arrive) else "bar.sync"
                self.b.emit(kind, Imm(item.barrier_id), Imm(item.threads))
        else:
            raise SingeInternalError(f"unknown unit {unit!r}")

    def compute(self, unit) -> None:
        """The live instructions of an operation, as ``codegen.render`` emits
        them: a shared value read in place is loaded at its first use."""
        from singe.programs.lowering import live_instructions
        from singe.kernels.ir import Reg
        loaded: set[str] = set()
        for instr in live_instructions(unit.op.instrs, set(unit.keep) | set(unit.stores)):
            for src in instr.srcs:
                if isinstance(src, Reg) and src.name in unit.loads and src.name not in loaded:
                    loaded.add(src.name)
                    self.b.emit("ld.shared.f64", self.shared(unit.loads[src.name]), dst=self.define(src.name))
            self.instruction(instr)
            if instr.dst in unit.stores:
                self.b.emit("st.shared.f64", self.shared(unit.stores[instr.dst]), self.current[instr.dst])

    def shared(self, slot: int) -> Address:
        """``shared[slot][lane]``: a constant offset from ``lane * 8``."""
        return Address(self.v["lane8"], slot * WARP_SIZE * 8)

    def global_address(self, field_name: str, index: int) -> Var:
        """``&field[index * species_stride + point]``."""
        at = self.v[f"at_{field_name}"]
        if field_name in POINT_INPUTS or index == 0:
            return at
        return self.value("add", at, self.value("mul", self.v["stride8"], Imm(index)), stem="addr")

    def operand(self, operand):
        """An IR operand in the generic form (a ``Const`` becomes a shuffle)."""
        from singe.kernels.ir import Const, Imm as IrImm, Reg
        if isinstance(operand, Reg):
            return self.current[operand.name]
        if isinstance(operand, IrImm):
            return Imm(float(operand.value))
        if isinstance(operand, Const):  # SINGE_CONST(slot): __shfl_sync(cs[slot / 32], slot % 32)
            slot = self.slots[float(operand.value)]
            return self.value("shfl", self.v[f"cs{slot // WARP_SIZE}"], Imm(slot % WARP_SIZE), stem="k")
        raise SingeInternalError(f"operand {operand!r}")

    def instruction(self, instr) -> None:
        """One IR instruction; global accesses are masked by ``valid``."""
        valid = self.v["valid"].name
        if instr.opcode == "ldg":
            address = Address(self.global_address(instr.field, instr.index))
            self.b.emit("ld.global.f64", address, dst=self.define(instr.dst), guard=valid)
        elif instr.opcode == "stg":
            address = Address(self.global_address(instr.field, instr.index))
            self.b.emit("st.global.f64", address, self.operand(instr.srcs[0]), guard=valid)
        else:
            srcs = [self.operand(s) for s in instr.srcs]
            self.b.emit(instr.opcode, *srcs, dst=self.define(instr.dst))


def lower_warp_program(programs, warp: int) -> LoweredWarp:
    """Warp ``warp``'s program as the emitted CUDA executes it, in the generic form.

    The body follows codegen's units (``singe.programs.lowering``): shared values an
    operation reads in place are loaded at their first use, stores of its
    outputs follow their computation, dead instructions are left out.
    Entry: ``lane = tid & 31`` and the warp's constant stripes ``cs[s] =
    constants[(warp * stripes + s) * 32 + lane]`` (each lane holds a different
    constant: varying), parameters, ``n_slabs``.  The slab loop: ``point =
    slab * 32 + lane``, ``valid = point < n_points``.  The body, item by item:
    an ``Instr`` keeps its opcode and per-point operands; a ``Const`` operand is
    ``shfl cs[slot / 32], slot % 32`` (uniform: a broadcast); ``ldg``/``stg`` access
    ``field + (index * species_stride + point) * 8``; shared loads and stores
    ``[slot][lane]``, i.e. ``lane * 8 + slot * 256``; barriers ``bar.sync`` /
    ``bar.arrive id, threads``; mechanism constants go to the warp's table in
    order of first use (codegen's overlay may number the slots differently).

    Two simplifications: lanes past ``n_points`` are masked with ``@valid`` on
    global loads and stores (the emitted code clamps their loads to the last
    point and skips their stores -- the same for the valid lanes), and the
    overlay's warp-mask tests and ``singe_index[row][warp_id]`` lookups (uniform,
    one scalar load each where warps share code) are not modeled: each warp's
    slots and indices are immediates here.
    """
    lowering = _Lowering(programs, warp)
    lowering.entry()
    lowering.loop()
    lowering.body()
    program = lowering.b.build()
    return LoweredWarp(warp, program, dict(lowering.registers), lowering.constants, lowering.stripes,
                       lowering.fields)


def analyze_warps(programs) -> tuple[tuple[LoweredWarp, Analysis], ...]:
    """Every warp's lowered program and its analysis."""
    result = []
    for warp in range(programs.warps):
        lowered = lower_warp_program(programs, warp)
        result.append((lowered, analyze(lowered.program)))
    return tuple(result)


def analyze_programs(programs, warp_size: int = WARP_SIZE, analyses=None) -> ScalarizationReport:
    """The scalarization report of a kernel's ``WarpPrograms``, per slab: each
    warp's lowered program analyzed and scalarized, counted over one slab
    (the loop test and the body; the entry runs once per thread and is left
    out), then summed over warps (registers: the largest warp's).
    ``analyses``: ``analyze_warps(programs)`` if already at hand."""
    parts = []
    for lowered, analysis in analyses or analyze_warps(programs):
        s = scalarize(analysis)
        parts.append(report(s, Profile.of(PER_SLAB, warp_size), f"warp {lowered.warp}", warp_size))
    combined = ScalarizationReport.combine(f"{programs.kernel} of {programs.mechanism}", parts)
    combined.verify()
    return combined


# --------------------------------------------------------------------------- dynamic checks

def _same(a, b) -> bool:
    """Equal, with NaN equal to NaN."""
    return a == b or (a != a and b != b)


class UniformityCheck:
    """An observer for ``program.run`` checking an ``Analysis`` at run time:
    a block classified convergent runs with every live lane of the warp; a
    value classified uniform is equal across the lanes that wrote it; an affine
    one is ``stride * tid + b`` with one ``b`` for the warp.  ``checked``
    counts the checks made, by kind."""

    def __init__(self, analysis: Analysis):
        self.analysis = analysis
        self.checked: Counter = Counter()

    def __call__(self, event: Event) -> None:
        block = event.site[0]
        if block in self.analysis.convergent:
            self.checked["convergence"] += 1
            if set(event.active) != set(event.live):
                raise SingeInternalError(
                    f"block {block} is classified convergent but warp {event.warp} runs {event.item} there "
                    f"with lanes {list(event.active)} of its live lanes {list(event.live)}")
        dst = event.item.dst
        if dst is None or not event.values:
            return
        x = self.analysis.values.get(dst, VARYING)
        if x.is_uniform:
            self.checked["uniform"] += 1
            _check_equal(dst, "uniform", event.values, event)
        elif x.is_affine and x.stride is not None:
            self.checked["affine"] += 1
            bases = {lane: v - x.stride * event.tids[lane] for lane, v in event.values.items()}
            _check_equal(dst, f"affine with stride {x.stride}", bases, event)


def _check_equal(name: str, what: str, values: Mapping[int, object], event: Event) -> None:
    lanes = sorted(values)
    first = values[lanes[0]]
    for lane in lanes[1:]:
        if not _same(values[lane], first):
            raise SingeInternalError(
                f"%{name} is classified {what} but differs across the lanes of warp {event.warp} "
                f"at {event.site[0]}: lane {lanes[0]} has {first}, lane {lane} has {values[lane]}")


class DivergenceCheck:
    """An observer for ``program.run`` checking Pereira's classification: a
    value classified uniform is equal across the lanes active where it is defined."""

    def __init__(self, result: Divergence):
        self.result = result
        self.checked = 0

    def __call__(self, event: Event) -> None:
        dst = event.item.dst
        if dst is not None and event.values and dst not in self.result.divergent:
            self.checked += 1
            _check_equal(dst, "uniform (Pereira)", event.values, event)


def run_lowered(lowered: LoweredWarp, programs, inputs: Mapping, n_points: int, observe=None):
    """Run a lowered warp program in ``program.run`` on real inputs (field ->
    (rows, n_points), as ``CompiledKernel.simulation_inputs`` gives them).
    Shared memory this warp did not store (other warps' values) reads as
    deterministic per-address noise: the check is about uniformity, not results."""
    memory = Memory(fill=_noise)
    bases = {f: (k + 1) << 32 for k, f in enumerate(lowered.fields)}
    for f in lowered.fields:
        if f in inputs:
            rows = np.atleast_2d(np.asarray(inputs[f], dtype=float))
            memory.array(bases[f], [float(v) for v in rows.reshape(-1)], width=8)
    params = dict(bases, n_points=n_points, species_stride=n_points)
    if lowered.stripes:
        params["constants"] = table = (len(bases) + 1) << 32
        padded = list(lowered.constants) + [0.0] * (lowered.stripes * WARP_SIZE - len(lowered.constants))
        memory.array(table + lowered.warp * lowered.stripes * WARP_SIZE * 8, padded, width=8)
    return run(lowered.program, params, memory, warps=(lowered.warp,), ntid=programs.threads, observe=observe)


def _noise(space: str, address: int) -> float:
    """Shared memory: a value in [1, 2) fixed by the address; elsewhere an error."""
    if space != "shared":
        raise SingeInternalError(f"lowered program reads {space} address {address:#x}, which holds no input")
    return 1.0 + (address * 2654435761 % 9973) / 9973.0


@dataclass(frozen=True)
class UniformCheck:
    """A ``singe.sim.simulate(..., check_uniform=...)`` hook: ``uniform[warp]``
    names the simulator registers classified uniform in that warp; every
    instruction writing one is followed by a check that its value is the same
    on the 32 lanes of every warp (a ``SingeInternalError`` naming it if not).
    ``checked`` counts the checks made."""

    uniform: Mapping[int, frozenset[str]]
    checked: Counter = field(default_factory=Counter, compare=False)

    def __call__(self, warp: int, op, code: tuple) -> tuple:
        """Wrap the decoded instructions of ``op`` (one closure per instruction,
        in order, possibly followed by a clean-up closure)."""
        names = self.uniform.get(warp, frozenset())
        wrapped = list(code)
        for k, instr in enumerate(op.instrs):
            if instr.dst is not None and instr.dst in names:
                wrapped[k] = self._checked(code[k], instr.dst, warp, op.name)
        return tuple(wrapped)

    def _checked(self, run_instr, name: str, warp: int, op_name: str):
        checked = self.checked

        def run_and_check(regs, memory):
            run_instr(regs, memory)
            checked[name] += 1
            check_lanes(regs[name], name, warp, op_name)
        return run_and_check


def check_lanes(value, name: str, warp: int, where: str = "") -> None:
    """Raise if a simulator register (an array over CTAs x 32 lanes, or a
    scalar) is not the same on every lane of each warp."""
    array = np.asarray(value, dtype=float)
    if array.ndim == 0:
        return
    lanes = array.reshape(-1, WARP_SIZE)
    first = lanes[:, :1]
    same = (lanes == first) | (np.isnan(lanes) & np.isnan(first))
    if not same.all():
        cta, lane = map(int, np.argwhere(~same)[0])
        raise SingeInternalError(
            f"register {name} of warp {warp} ({where}) is classified uniform but differs across lanes: "
            f"CTA {cta} lane 0 has {float(lanes[cta, 0])}, lane {lane} has {float(lanes[cta, lane])}")


def uniform_check(programs, analyses=None) -> UniformCheck:
    """The ``UniformCheck`` of a kernel's ``WarpPrograms``: per warp, the
    simulator registers all of whose definitions the analysis of the lowered
    program classifies uniform.  ``analyses``: ``analyze_warps(programs)``."""
    uniform = {}
    for lowered, analysis in analyses or analyze_warps(programs):
        verdict: dict[str, bool] = {}
        for ssa, register in lowered.registers.items():
            verdict[register] = verdict.get(register, True) and analysis.values[ssa].is_uniform
        uniform[lowered.warp] = frozenset(r for r, ok in verdict.items() if ok)
    return UniformCheck(uniform)
