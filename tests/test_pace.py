"""A warp's pace: the least cycles per instruction it issues at, by the stall counts ptxas writes into the SASS
(``autotune.sass.stall_count``, ``Walk.pace``), against ncu's measured 'wait' stalls of the paper's baselines
(H200, docs/measurements/2026-11-27-h200-copy), and as the timing model's floor on each warp's issue
(``singe.timing.model``'s ``pace``)."""

from __future__ import annotations

import functools

import pytest

from autotune import pace as pace_script
from autotune import sass
from singe.compiler import compile_kernel
from singe.errors import SingeInternalError
from singe.timing import baseline_steps, issued, model, model_baseline, preset_for, warp_paces
from conftest import load

NEEDS_SASS = pytest.mark.skipif(bool(sass.missing_tools()), reason=sass.missing_reason() or "")
WAIT_TOLERANCE = 0.10
"""How far the wait a baseline's pace predicts (pace - 1 cycles per instruction) may be from ncu's (relative);
the six baselines are within 7 % on sm_90 (docs/measurements/README.md)."""


def encoding(stall: int) -> int:
    """A second encoding word with stall count ``stall`` and every other control field set: a reuse flag, the
    full wait mask, the read and write barriers at 7 (none), the yield bit."""
    return (0x1 << 58) | (0x3F << 52) | (0x7 << 49) | (0x7 << 46) | (0x1 << 45) | (stall << 41) | 0x0BF0


def test_the_stall_count_is_bits_41_to_44_of_the_second_word():
    assert [sass.stall_count(encoding(s)) for s in (0, 1, 7, 8, 15)] == [0, 1, 7, 8, 15]
    assert sass.stall_count(0x000FCE0000000800) == 7  # sm_90: ULDC UR4, c[0x0][0x228] of a compiled baseline
    assert sass.stall_count(0x1 << 45) == 0 and sass.stall_count(0x7 << 46) == 0  # the yield bit, a barrier


LISTING = """
        .type           k_kernel,@function
k_kernel:
        /*0000*/                   DFMA R2, R4, R4, R2 ;            /* 0x0000000404027228 */
                                                                   /* {0} */
        /*0010*/                   DFMA R2, R4, R2, R2 ;            /* 0x0000000204027228 */
                                                                   /* {1} */
        /*0020*/                   IADD3 R6, R6, 0x1, RZ ;          /* 0x0000000106067810 */
                                                                   /* {2} */
        /*0030*/                   EXIT ;                           /* 0x000000000000794d */
                                                                   /* {3} */
"""


def test_a_listing_with_encodings_gives_each_warp_its_stall_cycles():
    text = LISTING.format(*(f"{encoding(s):#018x}" for s in (8, 8, 1, 5)))
    listing = sass.parse_listing(text)
    assert listing.stalls == {0x0: 8, 0x10: 8, 0x20: 1, 0x30: 5}
    walk = sass.walk(listing, "k_kernel", sass.Machine(tid=0))
    assert walk.total == 4 and walk.stall_cycles == 22 and walk.pace == 22 / 4


CHAINS = """
extern "C" __global__ void chains(const double* x, double* y)
{
  double a[CHAINS];
  for (int c = 0; c < CHAINS; ++c) a[c] = x[threadIdx.x + 32 * c];
#pragma unroll
  for (int i = 0; i < 64; ++i)
#pragma unroll
    for (int c = 0; c < CHAINS; ++c) asm volatile("fma.rn.f64 %0, %0, %0, %0;" : "+d"(a[c]));
  for (int c = 0; c < CHAINS; ++c) y[threadIdx.x + 32 * c] = a[c];
}
"""


@NEEDS_SASS
def test_a_dependent_chain_waits_the_fp64_latency_and_independent_ones_do_not(tmp_path):
    """64 DFMA in one dependent chain: each waits for the one before, the stall count at least the FP64 latency
    ptxas assumes (8 cycles on sm_90); in 8 independent chains, interleaved, far less."""
    stalls = {}
    for chains in (1, 8):
        source = tmp_path / f"chains{chains}.cu"
        source.write_text(f"#define CHAINS {chains}\n" + CHAINS)
        listing_walk = sass.analyse(source, "sm_90", warps=1, data_parallel=True).warps[0]
        assert listing_walk.opcodes["DFMA"] == 64 * chains
        stalls[chains] = listing_walk.pace
    assert stalls[1] > 6 and stalls[8] < stalls[1] / 2, stalls  # 7.2 and 2.1 cycles an instruction


def test_a_listing_without_encodings_has_no_pace():
    text = "\n".join(line for line in LISTING.splitlines() if "{" not in line)
    walk = sass.walk(sass.parse_listing(text), "k_kernel", sass.Machine(tid=0))
    assert walk.total == 4 and walk.stall_cycles == 0 and walk.pace is None


def test_the_ncu_profile_is_read_per_kernel_and_reason():
    stalls = pace_script.read_ncu_stalls(pace_script.NCU_RUN)
    assert stalls["dme_viscosity_baseline_kernel"]["wait"] == 1.34
    assert stalls["heptane_chemistry_kernel"]["barrier"] > 0
    assert len(stalls) == 12 and all(pace_script.WAIT in reasons for reasons in stalls.values())


@functools.lru_cache(maxsize=None)
def measured_paces(mechanism: str, kernel: str) -> dict:
    return pace_script.paces(mechanism, kernel, "sm_90", load(mechanism))


def baseline_errors(kernels, shift: float = 0.0) -> dict:
    """Kernel -> how far the wait its baseline's pace (plus ``shift``) predicts is from ncu's."""
    stalls = pace_script.read_ncu_stalls(pace_script.NCU_RUN)
    return {(m, k): pace_script.wait_error(measured_paces(m, k)["baseline"] + shift,
                                           stalls[pace_script.kernel_name(m, k, "baseline")][pace_script.WAIT])
            for m, k in kernels}


DME = [("dme", kernel) for kernel in ("viscosity", "diffusion", "chemistry")]


@NEEDS_SASS
def test_the_dme_baselines_paces_are_ncus_wait_stalls():
    """The DME baselines at the paper's settings (sm_90): pace - 1 is ncu's 'wait' per issued instruction on the
    H200 (1.34, 3.64, 2.46) within ``WAIT_TOLERANCE``."""
    errors = baseline_errors(DME)
    assert max(errors.values()) <= WAIT_TOLERANCE, errors


@NEEDS_SASS
def test_a_pace_without_the_stall_counts_is_caught():
    """Companion: one cycle an instruction (no stall counts, what the model assumed before) predicts no wait, and a
    pace one cycle off predicts another; neither agrees."""
    stalls = pace_script.read_ncu_stalls(pace_script.NCU_RUN)
    assert pace_script.wait_error(1.0, stalls["dme_viscosity_baseline_kernel"]["wait"]) == 1.0
    assert min(baseline_errors(DME, shift=1.0).values()) > WAIT_TOLERANCE


@pytest.mark.exhaustive
@NEEDS_SASS
def test_the_n_heptane_baselines_paces_are_ncus_wait_stalls():
    """The n-heptane baselines (minutes of nvcc): 2.67, 3.80 and 3.05 wait cycles an instruction on the H200."""
    errors = baseline_errors([("heptane", kernel) for kernel in ("viscosity", "diffusion", "chemistry")])
    assert max(errors.values()) <= WAIT_TOLERANCE, errors


@functools.lru_cache(maxsize=None)
def dme_viscosity():
    return compile_kernel(load("dme"), "viscosity", warps=10, ctas_per_sm=4, arch="sm_90")


def test_a_pace_of_one_or_none_leaves_the_model_as_it_was():
    compiled = dme_viscosity()
    assert model_baseline(compiled, "H100", pace=1.0) == model_baseline(compiled, "H100")
    assert model(compiled, "H100", pace=[1.0] * 10) == model(compiled, "H100")


def test_the_baseline_issues_no_faster_than_its_pace():
    """DME viscosity's baseline at sm_90's pace (2.38 cycles an instruction): each warp's slab lasts at least its
    instructions times the pace; two warps a scheduler then leave the FP64 pipe idle part of the time."""
    compiled = dme_viscosity()
    preset = preset_for("H100")
    free, paced = model_baseline(compiled, preset), model_baseline(compiled, preset, pace=2.38)
    instructions = issued(baseline_steps(compiled.graph, preset))
    assert paced.cycles_per_slab >= 2.38 * instructions > free.cycles_per_slab
    assert paced.utilization["fp64"] < free.utilization["fp64"]


def test_the_warp_specialized_warps_are_held_to_their_paces():
    compiled = dme_viscosity()
    slow = model(compiled, "H100", pace=[1.0] * 9 + [40.0])
    assert slow.cycles_per_slab > model(compiled, "H100").cycles_per_slab


def test_a_pace_per_warp_must_name_every_warp():
    assert warp_paces(None, 3) == [1.0, 1.0, 1.0] and warp_paces(2, 2) == [2.0, 2.0]
    with pytest.raises(SingeInternalError, match="2 paces for 3 warps"):
        warp_paces([1.5, 2.0], 3)


PACE_TABLE = "| kernel | baseline: pace - 1 | ncu wait | diff | warp-specialized: pace - 1 | ncu wait | diff |"


def pace_table_mismatches(text: str) -> list[str]:
    """Cells of docs/measurements' pace table that are not the ncu profile's wait or the difference of the row's
    pace and wait."""
    stalls = pace_script.read_ncu_stalls(pace_script.NCU_RUN)
    lines = text[text.index(PACE_TABLE):].splitlines()[2:]
    mismatches = []
    for line in lines[:6]:
        name, *cells = [c.strip() for c in line.strip("|").split("|")]
        mechanism, kernel = {"DME": "dme", "n-heptane": "heptane"}[name.split()[0]], name.split()[1]
        for style, (wait_less_one, wait, diff) in zip(("baseline", "ws"), (cells[:3], cells[3:])):
            measured = stalls[pace_script.kernel_name(mechanism, kernel, style)][pace_script.WAIT]
            expected = f"{pace_script.wait_error(float(wait_less_one) + 1, measured):.1%}".replace("%", " %")
            if float(wait) != measured or diff != expected:
                mismatches.append(f"{name} {style}: {wait} {diff} (profile {measured}, {expected})")
    return mismatches


def test_the_documented_paces_are_the_profiles_waits():
    text = (pace_script.ROOT / "docs" / "measurements" / "README.md").read_text()
    assert PACE_TABLE in text and pace_table_mismatches(text) == []


def test_a_wrong_documented_wait_is_caught():
    text = (pace_script.ROOT / "docs" / "measurements" / "README.md").read_text()
    wrong = text.replace("| DME viscosity | 1.40 | 1.34 |", "| DME viscosity | 1.40 | 1.43 |")
    assert wrong != text and pace_table_mismatches(wrong)


@pytest.mark.parametrize("argv, message", [(["--kernels", "dme:conductivity"], "'dme:conductivity' is not one of"),
                                           (["--styles", "both"], "name baseline, ws or both")])
def test_the_pace_script_names_what_it_cannot_measure(argv, message, capsys):
    with pytest.raises(SystemExit):
        pace_script.main(argv)
    assert message in capsys.readouterr().err


@NEEDS_SASS
def test_the_pace_script_prints_a_kernel_beside_its_profile(capsys):
    load("dme")  # skips without the shared mechanisms, which the script reads beside the repository
    assert pace_script.main(["--kernels", "dme:viscosity", "--styles", "baseline"]) == 0
    row = next(line for line in capsys.readouterr().out.splitlines() if line.startswith("dme "))
    assert row.split()[2:] == ["baseline", "2.40", "1.40", "1.34", "4.7%"]
