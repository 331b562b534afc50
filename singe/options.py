"""Compiler options: one frozen, validated object with a stable key, and the GPU targets."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from singe.errors import OptionError

KERNELS = ("viscosity", "diffusion", "chemistry")
PLACEMENTS = ("auto", "store", "buffer", "mixed")
MAX_WARPS = 32  # 1024 threads per CTA


@dataclass(frozen=True)
class Target:
    """Per-SM resources of a GPU architecture."""

    name: str
    registers_per_sm: int
    max_registers_per_thread: int
    shared_per_sm: int  # bytes
    max_shared_per_cta: int  # bytes
    named_barriers: int = 16
    sms: int = 1
    cuda_arch: int = 0  # the value of __CUDA_ARCH__ when nvcc compiles for it (900 for sm_90)

    def register_budget(self, threads: int, ctas_per_sm: int) -> int:
        """Registers per thread available when ``ctas_per_sm`` CTAs of ``threads`` share an SM."""
        per_thread = self.registers_per_sm // (threads * ctas_per_sm)
        return min(self.max_registers_per_thread, per_thread - per_thread % 8)

    def shared_budget(self, ctas_per_sm: int) -> int:
        """Shared memory bytes per CTA with ``ctas_per_sm`` CTAs per SM."""
        return min(self.max_shared_per_cta, self.shared_per_sm // ctas_per_sm)


TARGETS = {
    "sm_80": Target("sm_80", 65536, 255, 164 * 1024, 163 * 1024, sms=108, cuda_arch=800),
    "sm_90": Target("sm_90", 65536, 255, 228 * 1024, 227 * 1024, sms=132, cuda_arch=900),
    "k20c": Target("k20c", 65536, 255, 48 * 1024, 48 * 1024, sms=13, cuda_arch=350),
}


@dataclass(frozen=True)
class CompileOptions:
    """Everything that decides a compiled kernel besides the mechanism.

    ``weights`` = (flops, registers, locality): the greedy mapper's cost
    weights.  ``placement``: where cross-warp values live ('store': a shared
    slot each; 'buffer': registers, exchanged through reused shared slots;
    'mixed': widely read values stored, the rest buffered; 'auto': store if
    it fits, else mixed, else buffer).
    """

    warps: int = 8
    ctas_per_sm: int = 2
    arch: str = "sm_90"
    weights: tuple[float, float, float] = (1.0, 0.5, 1.0)
    placement: str = "auto"
    qssa_warps: int = 1
    group_barriers: bool = True

    def __post_init__(self):
        self.validate()

    def validate(self) -> None:
        if not isinstance(self.warps, int) or not 1 <= self.warps <= MAX_WARPS:
            raise OptionError(f"--warps must be an integer from 1 to {MAX_WARPS}, got {self.warps!r}")
        if not isinstance(self.ctas_per_sm, int) or not 1 <= self.ctas_per_sm <= 16:
            raise OptionError(f"--ctas-per-sm must be an integer from 1 to 16, got {self.ctas_per_sm!r}")
        if self.arch not in TARGETS:
            raise OptionError(f"--arch must be one of {', '.join(TARGETS)}, got {self.arch!r}")
        if len(self.weights) != 3 or any(not w >= 0 for w in self.weights) or sum(self.weights) == 0:
            raise OptionError(f"mapping weights must be three non-negative numbers, not all zero: {self.weights!r}")
        if self.placement not in PLACEMENTS:
            raise OptionError(f"--placement must be one of {', '.join(PLACEMENTS)}, got {self.placement!r}")
        if not isinstance(self.qssa_warps, int) or not 1 <= self.qssa_warps <= self.warps:
            raise OptionError(f"--qssa-warps must be from 1 to the number of warps ({self.warps}), "
                              f"got {self.qssa_warps!r}")
        if self.warps * 32 * self.ctas_per_sm > 2048:
            raise OptionError(f"{self.warps} warps x {self.ctas_per_sm} CTAs per SM exceed 2048 threads per SM")
        if self.barrier_limit < 2:
            raise OptionError(f"{self.ctas_per_sm} CTAs per SM leave fewer than 2 named barriers per CTA")

    @property
    def target(self) -> Target:
        return TARGETS[self.arch]

    @property
    def barrier_limit(self) -> int:
        """Named barrier ids per CTA: 16 per SM shared by the CTAs on it."""
        return 16 // self.ctas_per_sm

    def replace(self, **changes) -> "CompileOptions":
        return dataclasses.replace(self, **changes)

    def key(self) -> str:
        """Stable text naming these options (file names, caches, autotune records)."""
        weights = "-".join(f"{w:g}" for w in self.weights)
        return (f"w{self.warps}-c{self.ctas_per_sm}-{self.arch}-mw{weights}-{self.placement}"
                f"-q{self.qssa_warps}{'' if self.group_barriers else '-nogroup'}")
