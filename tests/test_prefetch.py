"""--prefetch: each slab prefetches the next slab's inputs into the L1 (``CompileOptions.prefetch``,
``codegen.render.prefetch_plan``).  The lines cover every row of every input field the kernel may read (not
``dt``, which may be NULL); the prefetching kernel gives the same bits as the one without it on the host; on
sm_90 it adds one ``CCTL.E.PF1`` a warp and no register, and the timing model charges what it adds
(``timing.PREFETCH_SLAB``)."""

from __future__ import annotations

import numpy as np
import pytest

from singe import host
from singe.codegen import generate
from singe.codegen.nvcc import find_nvcc
from singe.codegen.render import prefetch_plan
from singe.compiler import compile_kernel
from singe.errors import OptionError
from singe.options import CompileOptions
from singe.timing import PREFETCH_SLAB, issued_per_warp

from cantera_reference import random_states
from conftest import load


def test_the_plan_covers_every_row_of_the_inputs():
    """Two 128-byte lines per row of a 32-point slab: DME viscosity (T, then 30 mass fractions) has 62, one a
    lane at 15 warps; chemistry's dt may be NULL and is left out; one warp of n-heptane takes 4 lines a lane."""
    plan = prefetch_plan(["temperature", "mass_fractions"], 30, 480)
    assert (plan.lines, plan.per_lane) == (62, 1)
    assert plan.address == "line < 2 ? &temperature[at] : &mass_fractions[((line >> 1) - 1) * species_stride + at]"
    chemistry = prefetch_plan(["temperature", "pressure", "mass_fractions", "dt"], 30, 256)
    assert chemistry.lines == 64 and "dt" not in chemistry.address and "((line >> 1) - 2)" in chemistry.address
    assert prefetch_plan(["temperature", "mass_fractions"], 52, 32).per_lane == 4  # 106 lines, 32 lanes


def test_the_option_is_named_checked_and_left_out_of_the_table_form():
    assert CompileOptions(prefetch=True).key().endswith("-pf") and not CompileOptions().key().endswith("-pf")
    with pytest.raises(OptionError, match="--prefetch is on or off"):
        CompileOptions(prefetch="yes")
    from singe.cli import _options, build_parser

    args = build_parser().parse_args(["gri30", "--prefetch"])
    assert _options(args, "viscosity").prefetch and _options(args, "chemistry").prefetch
    tables = compile_kernel(load("h2o2"), "chemistry", warps=4, form="tables", prefetch=True)
    assert not tables.options.prefetch  # the table form reads its inputs phase by phase


@pytest.mark.parametrize("kernel, warps", [("viscosity", 15), ("diffusion", 10)])
def test_the_prefetching_kernel_gives_the_same_bits_on_the_host(kernel, warps):
    """DME viscosity and diffusion at the paper's warps, 3 CTAs: the same outputs to the bit, with and without
    (the host runtime runs the prefetch's address arithmetic, one CTA looping over the 3 slabs so that each
    slab but the last prefetches; the prefetch itself is a hint)."""
    mech = load("dme")
    T, P, Y = random_states(80, len(mech.transported_species), 7)  # 3 slabs, the last a partial one
    outputs = []
    for prefetch in (False, True):
        generated = generate(compile_kernel(mech, kernel, warps=warps, ctas_per_sm=3, prefetch=prefetch))
        assert ("SINGE_PREFETCH(" in generated.cu) == prefetch
        fields, n = host.compiled_fields(host.kernel_source(generated), T, P, Y)
        outputs.append(next(iter(host.run_host(generated, fields, n, max_ctas=1).values())))
    assert np.all(np.isfinite(outputs[0])) and np.array_equal(outputs[0], outputs[1])


def _walk(sass, compiled):
    """The SASS view (autotune/sass.py) of ``compiled``'s warp-specialized kernel on sm_90."""
    import tempfile

    with tempfile.TemporaryDirectory() as scratch:
        return sass.analyse(generate(compiled).write(scratch)[0], "sm_90", compiled.programs.warps)


@pytest.mark.skipif(find_nvcc() is None, reason="needs nvcc")
def test_the_prefetch_is_one_instruction_a_warp_and_the_model_counts_it():
    """DME viscosity at 15 warps x 3 CTAs on sm_90: one CCTL.E.PF1 a warp, the same registers, no spills, and
    the model's count of each warp within the SASS check's tolerance with ``PREFETCH_SLAB``; without it the
    model would count the same as for the kernel without the prefetch (the companion: the difference is
    PREFETCH_SLAB a warp)."""
    from autotune import sass

    if sass.missing_tools():
        pytest.skip(f"needs {', '.join(sass.missing_tools())}")
    mech = load("dme")
    plain = compile_kernel(mech, "viscosity", warps=15, ctas_per_sm=3)
    prefetching = compile_kernel(mech, "viscosity", warps=15, ctas_per_sm=3, prefetch=True)
    rows = sass.model_check(prefetching, "sm_90")
    for warp, modeled, issued in rows:
        assert abs(modeled - issued) <= 0.10 * issued, (warp, modeled, issued)
    added = [sum(b.values()) - sum(a.values()) for a, b in zip(issued_per_warp(plain.programs),
                                                              issued_per_warp(prefetching.programs))]
    assert added == [sum(PREFETCH_SLAB.values())] * 15
    with_it, without = (_walk(sass, compiled) for compiled in (prefetching, plain))
    assert all(w.opcodes.get("CCTL.E.PF1", 0) == 1 for w in with_it.warps)
    assert all(w.opcodes.get("CCTL.E.PF1", 0) == 0 for w in without.warps)
    assert with_it.registers <= without.registers and with_it.spill_stores == with_it.spill_loads == 0
