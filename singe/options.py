"""Compiler options: one frozen, validated object with a stable key."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from singe.derived.rates import DEFAULT_PRODUCTS, PRODUCTS
from singe.errors import OptionError
from singe.kernels.transport import MAX_WILKE_GROUP
from singe.targets import TARGETS, Target

PLACEMENTS = ("auto", "store", "buffer", "mixed")
FORMS = ("auto", "unrolled", "tables")  # the chemistry kernel's form (singe.kernels.table_form)
DISPATCHES = ("auto", "overlay", "switch")  # how the warps' programs become one body (singe.codegen.lay_out)
CONSTANT_TABLES = ("auto", "cache", "shared", "bank")  # where the overlay reads its per-warp constants (singe.codegen)
MAX_WARPS = 32  # 1024 threads per CTA
MAX_CTAS_PER_SM = 16
STAGE_CTAS_PER_SM = 2
"""CTAs per SM the stages plan for when called directly with options that leave
the count to ``compile_kernel`` (which chooses it before mapping)."""


@dataclass(frozen=True)
class CompileOptions:
    """Everything that decides a compiled kernel besides the mechanism.

    ``weights`` = (flops, registers, locality): the greedy mapper's cost
    weights.  ``placement``: where cross-warp values live ('store': a shared
    slot each; 'buffer': registers, exchanged through reused shared slots;
    'mixed': widely read values stored, the rest buffered; 'auto': store if
    it fits, else mixed, else buffer).  ``form``: the chemistry kernel
    unrolled, as tables, or chosen from the mechanism ('auto',
    ``singe.kernels.table_form.choose_form``).  ``dispatch``: the kernel body as the
    overlay (code shared between warps, constants at warp-dependent indices) or
    as one switch case per warp outside the slab loop (each warp's own code,
    constants at indices ptxas knows); 'auto': the kernel's (``KernelSpec.dispatch``:
    the switch for chemistry, the overlay for the others).  ``constant_table``: where the
    overlay's per-warp constant tables are read at warp-dependent indices: through the constant
    cache ('cache': ``LDC.64`` per constant, or ``LDG`` where the table exceeds the constant bank),
    from a copy in shared memory that each warp makes of its own table before the slab loop
    ('shared': a warp-uniform ``LDS``, two adjacent constants of a loop iteration in one ``LDS.128``),
    or 'auto': the copy where it fits the shared memory the CTAs per SM leave a CTA beside its
    exchange slots (``codegen.lay_out``), or, where ``compile_kernel`` chooses the CTAs per SM and the
    reads in place would miss the constant cache, with fewer CTAs per SM resident than planned
    (``compiler.copy_where_the_cache_misses``: the options then say 'shared'); else the cache.  'bank': a unit
    with loops that several warps would share is emitted once for each of them instead (a switch case that
    declares the warp a constant), so that ptxas knows its constants' indices and reads them from the constant
    bank by ``ULDC.64`` at a uniform index, off the load queue, the loops partly unrolled
    (``codegen.overlay.OverlaidKernel.loops_per_warp``); the tables must fit the constant bank.
    ``wilke_group``: outer species per Wilke sum of the viscosity kernel (None: the kernel's at these
    warps, ``singe.kernels.transport.balanced_wilke_group``).  ``replicate_ln_t``: every warp of the viscosity
    kernel computes ln T itself, where by default one warp computes it and shares it through shared memory (a
    sync point a slab, which every other warp waits at; the other transport kernels always replicate it).
    ``wilke_symmetric``: the viscosity kernel's symmetric form (``transport.viscosity_symmetric_graph``): each
    unordered pair's symmetric factor computed once and added into both species' sums, where the row form
    computes each ordered pair, in Wilke groups (``wilke_group``, which the symmetric form has none of).
    ``prefetch``: at the start of each slab, the warps prefetch the next slab's inputs into the L1
    (``codegen.render.prefetch_plan``), so that its global loads hit there instead of waiting on DRAM after
    the end-of-slab barrier; off by default until a GPU has timed it.  ``products``: how the chemistry kernel multiplies negative concentrations (a solver's step
    leaves them): 'chemkin', as they are (CHEMKIN, S3D, Pele and the original Singe), or 'cantera', as
    Cantera does, 0 where two factors of up to three are negative or one of more
    (``singe.derived.rates.negative_factors_allowed``; a select more a guarded direction).  The two agree
    wherever no concentration is negative.  ``ctas_per_sm``: the occupancy target;
    None lets ``compile_kernel`` choose it from the register plan and shared
    memory (``choose_ctas_per_sm``), and the compiled kernel's options carry the choice.
    """

    warps: int = 8
    ctas_per_sm: int | None = None
    arch: str = "sm_90"
    weights: tuple[float, float, float] = (1.0, 0.5, 1.0)
    placement: str = "auto"
    qssa_warps: int = 1
    group_barriers: bool = True
    form: str = "auto"
    dispatch: str = "auto"
    constant_table: str = "auto"
    wilke_group: int | None = None
    replicate_ln_t: bool = False
    wilke_symmetric: bool = False
    prefetch: bool = False
    products: str = DEFAULT_PRODUCTS

    def __post_init__(self):
        self.validate()

    def validate(self) -> None:
        if not isinstance(self.warps, int) or not 1 <= self.warps <= MAX_WARPS:
            raise OptionError(f"--warps must be an integer from 1 to {MAX_WARPS}, got {self.warps!r}")
        if self.ctas_per_sm is not None and (not isinstance(self.ctas_per_sm, int)
                                             or not 1 <= self.ctas_per_sm <= MAX_CTAS_PER_SM):
            raise OptionError(f"--ctas-per-sm must be an integer from 1 to {MAX_CTAS_PER_SM}, got {self.ctas_per_sm!r}")
        if self.arch not in TARGETS:
            raise OptionError(f"--arch must be one of {', '.join(TARGETS)}, got {self.arch!r}")
        if len(self.weights) != 3 or any(not w >= 0 for w in self.weights) or sum(self.weights) == 0:
            raise OptionError(f"mapping weights must be three non-negative numbers, not all zero: {self.weights!r}")
        if self.placement not in PLACEMENTS:
            raise OptionError(f"--placement must be one of {', '.join(PLACEMENTS)}, got {self.placement!r}")
        if self.form not in FORMS:
            raise OptionError(f"--form must be one of {', '.join(FORMS)}, got {self.form!r}")
        if self.dispatch not in DISPATCHES:
            raise OptionError(f"--dispatch must be one of {', '.join(DISPATCHES)}, got {self.dispatch!r}")
        if self.constant_table not in CONSTANT_TABLES:
            raise OptionError(f"--constant-table must be one of {', '.join(CONSTANT_TABLES)}, "
                              f"got {self.constant_table!r}")
        if self.wilke_group is not None and (not isinstance(self.wilke_group, int)
                                             or not 1 <= self.wilke_group <= MAX_WILKE_GROUP):
            raise OptionError(f"--wilke-group must be an integer from 1 to {MAX_WILKE_GROUP}, got {self.wilke_group!r}")
        if self.products not in PRODUCTS:
            raise OptionError(f"--products must be one of {', '.join(PRODUCTS)}, got {self.products!r}")
        if not isinstance(self.prefetch, bool):
            raise OptionError(f"--prefetch is on or off (a bool), got {self.prefetch!r}")
        if not isinstance(self.wilke_symmetric, bool):
            raise OptionError(f"--wilke-symmetric is on or off (a bool), got {self.wilke_symmetric!r}")
        if self.wilke_symmetric and self.wilke_group is not None:
            raise OptionError("--wilke-group and --wilke-symmetric exclude each other: the symmetric form has no "
                              "Wilke groups")
        if not isinstance(self.replicate_ln_t, bool):
            raise OptionError(f"--replicate-ln-t is on or off (a bool), got {self.replicate_ln_t!r}")
        if not isinstance(self.qssa_warps, int) or not 1 <= self.qssa_warps <= self.warps:
            raise OptionError(f"--qssa-warps must be from 1 to the number of warps ({self.warps}), "
                              f"got {self.qssa_warps!r}")
        if self.ctas_per_sm is None:
            return
        if self.warps * 32 * self.ctas_per_sm > 2048:
            raise OptionError(f"{self.warps} warps x {self.ctas_per_sm} CTAs per SM exceed 2048 threads per SM")
        if self.barrier_limit < 2:
            raise OptionError(f"{self.ctas_per_sm} CTAs per SM leave fewer than 2 named barriers per CTA")

    def cta_candidates(self) -> range:
        """CTAs per SM these options allow, most first: what ``--ctas-per-sm`` gives,
        or, when it is None, every count the threads per SM and the named barriers
        (at least 2 per CTA) allow."""
        if self.ctas_per_sm is not None:
            return range(self.ctas_per_sm, self.ctas_per_sm - 1, -1)
        target = self.target
        most = min(MAX_CTAS_PER_SM, target.max_ctas_per_sm, target.max_threads_per_sm // (32 * self.warps),
                   target.named_barriers // 2)
        return range(most, 0, -1)

    def planned(self) -> "CompileOptions":
        """These options with a CTA count: as given, else ``STAGE_CTAS_PER_SM``."""
        return self if self.ctas_per_sm is not None else self.replace(ctas_per_sm=STAGE_CTAS_PER_SM)

    @property
    def target(self) -> Target:
        return TARGETS[self.arch]

    @property
    def barrier_limit(self) -> int:
        """Named barrier ids per CTA: the target's per-SM barriers shared by the CTAs on it."""
        return self.target.barrier_limit(self.planned().ctas_per_sm)

    def dispatch_of(self, kernel: str) -> str:
        """'overlay' or 'switch' for ``kernel``: as given, or the kernel's own (``KernelSpec.dispatch``).
        A kernel offers the other one only where it is measured correct and free of spills
        (``KernelSpec.other_dispatch``: viscosity's switch); the diffusion turns, one copy per warp, spill
        (DME at 10 warps x 3 CTAs: 484 B, sm_90), and the chemistry overlay spills at the defaults (DME: 16 B)."""
        from singe.kernels.registry import kernel_spec

        spec = kernel_spec(kernel)
        if self.dispatch in ("auto", spec.dispatch):
            return spec.dispatch
        if self.dispatch != spec.other_dispatch:
            raise OptionError(f"--dispatch {self.dispatch} is not offered for the {kernel} kernel, which is "
                              f"dispatched by {'a switch' if spec.dispatch == 'switch' else 'the overlay'} only")
        return self.dispatch

    def replace(self, **changes) -> "CompileOptions":
        return dataclasses.replace(self, **changes)

    def key(self) -> str:
        """Stable text naming these options (file names, caches, autotune records)."""
        weights = "-".join(f"{w:g}" for w in self.weights)
        ctas = "auto" if self.ctas_per_sm is None else self.ctas_per_sm
        return (f"w{self.warps}-c{ctas}-{self.arch}-mw{weights}-{self.placement}"
                f"-q{self.qssa_warps}{'' if self.group_barriers else '-nogroup'}"
                f"{'' if self.form == 'auto' else '-' + self.form}"
                f"{'' if self.dispatch == 'auto' else '-' + self.dispatch}"
                f"{'' if self.constant_table == 'auto' else '-' + self.constant_table}"
                f"{'' if self.wilke_group is None else f'-g{self.wilke_group}'}"
                f"{'-lnt' if self.replicate_ln_t else ''}"
                f"{'-sym' if self.wilke_symmetric else ''}"
                f"{'-pf' if self.prefetch else ''}"
                f"{'' if self.products == DEFAULT_PRODUCTS else '-' + self.products}")
