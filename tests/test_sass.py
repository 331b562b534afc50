"""The SASS view of autotune/sass.py: the per-warp walk of a listing against
hand counts (a hand-written listing with a warp-id branch, a jump table, a
loop over slabs, an unknown branch around a library call and a divergence
branch), and the counts of a tiny compiled kernel (skipped without nvcc and
nvdisasm)."""

from __future__ import annotations

import pathlib

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]
from autotune import sass  # noqa: E402

LISTING = """
        .type           k_kernel,@function
k_kernel:
        /*0000*/                   S2R R0, SR_TID.X ;
        /*0010*/                   SHF.R.U32.HI R0, RZ, 0x5, R0 ;
        /*0020*/                   MOV R1, RZ ;
        /*0030*/                   ULDC UR4, c[0x0][0x218] ;
        /*0040*/                   UIADD3 UR4, UR4, 0x1f, URZ ;
        /*0050*/                   USHF.R.S32.HI UR4, URZ, 0x5, UR4 ;
.L_x_0:
        /*0060*/                   ISETP.GE.AND P0, PT, R1, UR4, PT ;
        /*0070*/               @P0 EXIT ;
        /*0080*/                   DMUL R2, R4, R4 ;
        /*0090*/                   ISETP.NE.AND P1, PT, R0, RZ, PT ;
        /*00a0*/               @P1 BRA `(.L_x_1) ;
        /*00b0*/                   DFMA R2, R2, R4, R2 ;
        /*00c0*/                   DFMA R2, R2, R4, R2 ;
        /*00d0*/                   BRA `(.L_x_3) ;
.L_x_1:
        /*00e0*/                   IMAD.SHL.U32 R6, R0, 0x4, RZ ;
        /*00f0*/                   LDC R7, c[0x2][R6+-0x4] ;
        /*0100*/                   BRX R7 -0x110                                        (*"BRANCH_TARGETS .L_x_4,.L_x_5"*);
.L_x_4:
        /*0110*/                   MUFU.RCP64H R3, R3 ;
        /*0120*/                   BRA `(.L_x_3) ;
.L_x_5:
        /*0130*/                   BAR.SYNC.DEFER_BLOCKING 0x1, 0x40 ;
        /*0140*/                   SHFL.IDX PT, R5, R4, RZ, 0x1f ;
        /*0150*/                   SHFL.IDX PT, R5, R4, 0x1, 0x1f ;
.L_x_3:
        /*0160*/                   DSETP.GT.AND P2, PT, R2, R4, PT ;
        /*0170*/               @P2 BRA `(.L_x_6) ;
        /*0180*/                   CALL.REL.NOINC `($__internal_0_$slowpath) ;
.L_x_6:
        /*0190*/                   BRA.DIV UR4, `(.L_x_7) ;
        /*01a0*/                   IADD3 R1, R1, 0x1, RZ ;
        /*01b0*/                   BRA `(.L_x_0) ;
.L_x_7:
        /*01c0*/                   BRA `(.L_x_7) ;
        .type           $__internal_0_$slowpath,@function
$__internal_0_$slowpath:
        /*01d0*/                   DADD R2, R2, R2 ;
        /*01e0*/                   RET.REL.NODEC R20 `(k_kernel) ;
"""

ELF = """
.nv.constant2.k_kernel
0x00000110 0x00000130

	Value:	Index : 0x0	Ordinal : 0x2	Offset  : 0xc	Size    : 0x4
	Value:	Index : 0x0	Ordinal : 0x1	Offset  : 0x8	Size    : 0x4
	Value:	Index : 0x0	Ordinal : 0x0	Offset  : 0x0	Size    : 0x8
"""

# per warp and slab: ISETP, EXIT (not taken), DMUL, ISETP, BRA; then
#   warp 0: DFMA, DFMA, BRA
#   warp 1: IMAD, LDC, BRX, MUFU, BRA (jump table entry 0)
#   warp 2: IMAD, LDC, BRX, BAR, SHFL, SHFL (entry 1, falls through to the join)
# join: DSETP, BRA taken round the call (unknown predicate), BRA.DIV not taken, IADD3, BRA
HAND = [
    {"fp64": 4, "branch": 6, "other": 3},
    {"fp64": 2, "mufu": 1, "branch": 7, "other": 5},
    {"fp64": 2, "bar": 1, "shfl": 2, "branch": 6, "other": 5},
]


def test_walk_matches_a_hand_count_per_warp():
    listing = sass.parse_listing(LISTING)
    walks = sass.count_kernel(listing, ELF, "k_kernel", "sm_90", warps=3)
    assert [dict(w.counts) for w in walks] == HAND
    assert all(w.unknown_branches == 1 for w in walks)
    assert sass.static_count(listing, "k_kernel") == 28  # the self-branch at the end is padding


def test_walk_follows_the_slab_loop():
    """Three slabs issue the loop body three times (and the prologue once)."""
    listing = sass.parse_listing(LISTING)
    banks = sass._banks(ELF, "k_kernel", "sm_90", {1: 96, 2: 96}, 96)
    walk = sass.walk(listing, "k_kernel", sass.Machine(tid=0, block_dim=96, banks=banks))
    assert walk.total == 6 + 3 * 13 + 2  # prologue, three slabs, the last loop test and EXIT


def test_a_wrong_jump_table_is_caught():
    """The companion: with the table's entries swapped warps 1 and 2 trade paths."""
    listing = sass.parse_listing(LISTING)
    swapped = ELF.replace("0x00000110 0x00000130", "0x00000130 0x00000110")
    walks = sass.count_kernel(listing, swapped, "k_kernel", "sm_90", warps=3)
    assert [dict(w.counts) for w in walks] != HAND


TINY = r"""
extern "C" __global__ void __launch_bounds__(96) tiny_kernel(const double *x, double *y, const int n_points,
                                                              const int species_stride)
{
  const int warp_id = threadIdx.x >> 5;
  const int lane = threadIdx.x & 31;
  const int n_slabs = (n_points + 31) >> 5;
#pragma unroll 1
  for (int slab = blockIdx.x; slab < n_slabs; slab += gridDim.x) {
    const int point = min(slab * 32 + lane, n_points - 1);
    const double v = x[point];
    double acc = v;
#pragma unroll 1
    for (int i = 0; i <= warp_id; i++) acc = fma(acc, v, 1.5);
    y[warp_id * species_stride + point] = acc;
  }
}
"""


@pytest.mark.skipif(bool(sass.missing_tools()), reason=sass.missing_reason() or "")
def test_compiled_kernel_issues_the_hand_counted_fp64(tmp_path):
    """Warp w runs w + 1 fused multiply-adds in a loop (a trip count known per warp only)."""
    source = tmp_path / "tiny.cu"
    source.write_text(TINY)
    view = sass.analyse(source, "sm_90", warps=3)
    for w, walk in enumerate(view.warps):
        assert walk.opcodes["DFMA"] == walk.counts["fp64"] == w + 1
        assert walk.counts["ldg"] == 1 and walk.counts["stg"] == 1
    assert view.per_point["fp64"] == 1 + 2 + 3
    assert view.spill_stores == 0 and view.registers > 0


SPILLED = """
        .type           s_kernel,@function
s_kernel:
        /*0000*/                   LDC R1, c[0x0][0x28] ;
        /*0010*/                   S2R R4, SR_TID.X ;
        /*0020*/                   SHF.R.U32.HI R4, RZ, 0x5, R4 ;
        /*0030*/                   STL [R1+0x68], R4 ;
        /*0040*/                   DADD R4, R6, R8 ;
        /*0050*/                   LDL.LU R4, [R1+0x68] ;
        /*0060*/                   ISETP.NE.AND P0, PT, R4, RZ, PT ;
        /*0070*/               @P0 EXIT ;
        /*0080*/                   DMUL R6, R6, R6 ;
        /*0090*/                   EXIT ;
"""


def test_a_spilled_warp_id_is_refilled():
    """The warp id spilled to local memory and refilled decides the branch (warp 0 runs the DMUL)."""
    listing = sass.parse_listing(SPILLED)
    banks = sass._banks(ELF, "s_kernel", "sm_90", {}, 64)
    walks = [sass.walk(listing, "s_kernel", sass.Machine(tid=32 * w, block_dim=64, banks=banks)) for w in (0, 1)]
    assert [w.opcodes["DMUL"] for w in walks] == [1, 0]
    assert walks[0].counts["stl"] == walks[0].counts["ldl"] == 1
    assert walks[0].unknown_branches == walks[1].unknown_branches == 0


MASKED = """
        .type           m_kernel,@function
m_kernel:
        /*0000*/                   S2R R6, SR_TID.X ;
        /*0010*/                   SHF.R.U32.HI R6, RZ, 0x5, R6 ;
        /*0020*/                   HFMA2.MMA R7, -RZ, RZ, 0, 5.9604644775390625e-08 ;
        /*0030*/                   SHF.L.U32 R7, R7, R6, RZ ;
        /*0040*/                   LOP3.LUT P0, RZ, R7, 0x2, RZ, 0xc0, !PT ;
        /*0050*/              @!P0 EXIT ;
        /*0060*/                   DMUL R2, R2, R2 ;
        /*0070*/                   EXIT ;
"""


def test_a_warp_mask_test_on_a_half2_constant_is_followed():
    """ptxas writes the 1 of ``(1u << warp_id) & mask`` as an HFMA2.MMA immediate:
    only warp 1 (mask 0x2) runs the DMUL, and no branch is unknown."""
    listing = sass.parse_listing(MASKED)
    banks = sass._banks(ELF, "s_kernel", "sm_90", {}, 64)
    walks = [sass.walk(listing, "m_kernel", sass.Machine(tid=32 * w, block_dim=64, banks=banks)) for w in (0, 1)]
    assert [w.opcodes["DMUL"] for w in walks] == [0, 1]
    assert walks[0].unknown_branches == walks[1].unknown_branches == 0


REUSED = """
        .type           r_kernel,@function
r_kernel:
        /*0000*/                   S2R R0, SR_TID.X ;
        /*0010*/                   SHF.R.U32.HI R0, RZ, 0x5, R0 ;
        /*0020*/                   S2R R8, SR_CTAID.X ;
        /*0030*/                   ULDC UR4, c[0x0][0x218] ;
        /*0040*/                   UIADD3 UR4, UR4, 0x1f, URZ ;
        /*0050*/                   USHF.R.S32.HI UR4, URZ, 0x5, UR4 ;
        /*0060*/                   MOV R10, UR4 ;
        /*0070*/                   ISETP.GE.AND P0, PT, R8, UR4, PT ;
        /*0080*/               @P0 EXIT ;
.L_x_0:
        /*0090*/                   ISETP.NE.AND P1, PT, R0, RZ, PT ;
        /*00a0*/               @P1 BRA `(.L_x_1) ;
        /*00b0*/                   DMUL R2, R4, R4 ;
        /*00c0*/                   BRA `(.L_x_2) ;
.L_x_1:
        /*00d0*/                   UMOV UR4, 0x0 ;
        /*00e0*/                   UMOV UR5, 0x3ff00000 ;
        /*00f0*/                   DFMA R2, R4, R4, UR4 ;
        /*0100*/                   DFMA R2, R2, R4, UR4 ;
        /*0110*/                   RESTORE ;
        /*0120*/                   R2UR UR4, R9 ;
.L_x_2:
        /*0130*/                   ULDC UR5, c[0x0][0xc] ;
        /*0140*/                   VIADD R8, R8, UR5 ;
        /*0150*/                   ISETP.GE.AND P0, PT, R8, UR4, PT ;
        /*0160*/              @!P0 BRA `(.L_x_0) ;
        /*0170*/                   EXIT ;
"""
# the slab count comes back into R9 through shared memory (the walk cannot follow) or from R10 (it can)
THROUGH_SHARED = REUSED.replace("RESTORE", "LDS R9, [RZ]")
THROUGH_REGISTER = REUSED.replace("RESTORE", "MOV R9, R10")

# per warp and slab: ISETP, BRA; warp 0: DMUL, BRA; warp 1: UMOV, UMOV, DFMA, DFMA, restore, R2UR;
# then the back-edge: ULDC, VIADD, ISETP, BRA
HAND_REUSED = [
    {"fp64": 1, "branch": 3, "other": 4},
    {"fp64": 2, "lds": 1, "branch": 2, "other": 7},
]


def test_slab_loop_is_counted_when_the_slab_count_register_is_reused():
    """Warp 1 reuses UR4 (the slab count) for a double constant and restores
    it from shared memory: its exit test is unknown, the trip count decides."""
    walks = sass.count_kernel(sass.parse_listing(THROUGH_SHARED), ELF, "r_kernel", "sm_90", warps=2)
    assert [dict(w.counts) for w in walks] == HAND_REUSED
    assert [w.slab_tests_overruled for w in walks] == [0, 2]  # two slabs: both of warp 1's tests unknown
    assert all(w.unknown_branches == 0 for w in walks)


def test_register_values_alone_stop_after_one_slab():
    """The companion: walked on register values alone (no slab count given,
    the old behaviour), warp 1 leaves the loop after one slab, so two slabs
    and one issue the same and the per-slab difference is empty."""
    listing = sass.parse_listing(THROUGH_SHARED)
    totals = []
    for slabs in (1, 2):
        banks = sass._banks(ELF, "r_kernel", "sm_90", {1: 32 * slabs, 2: 32 * slabs}, 64)
        totals.append(sass.walk(listing, "r_kernel", sass.Machine(tid=32, block_dim=64, banks=banks)).total)
    assert totals[1] - totals[0] != sum(HAND_REUSED[1].values())
    assert totals[1] == totals[0]


def test_a_slab_count_restored_by_r2ur_is_evaluated():
    """R2UR copies a known register: the exit test is decided by the registers, matching the trip count."""
    listing = sass.parse_listing(THROUGH_REGISTER)
    walks = sass.count_kernel(listing, ELF, "r_kernel", "sm_90", warps=2)
    assert [w.slab_tests_overruled for w in walks] == [0, 0]
    banks = sass._banks(ELF, "r_kernel", "sm_90", {1: 96, 2: 96}, 64)
    alone = sass.walk(listing, "r_kernel", sass.Machine(tid=32, block_dim=64, banks=banks))
    assert alone.total == 9 + 3 * sum(HAND_REUSED[1].values()) + 1  # prologue, three slabs, EXIT


def test_a_loop_tested_at_the_top_has_no_slab_back_edge():
    """The first listing's slab loop ends in an unconditional BRA: no branch is taken by trip count
    (an inner loop's conditional back-edge must never be mistaken for it)."""
    assert sass.slab_back_edge(sass.parse_listing(LISTING), "k_kernel") is None
    assert sass.slab_back_edge(sass.parse_listing(THROUGH_SHARED), "r_kernel") == 0x160


UNSWITCHED = r"""
extern "C" __global__ void __launch_bounds__(96) u_kernel(const double *x, double *y, const int n_points,
                                                           const int species_stride)
{
  const int warp_id = threadIdx.x >> 5;
  const int lane = threadIdx.x & 31;
  const int n_slabs = (n_points + 31) >> 5;
  switch (warp_id) {
#define CASE(w, body) \
    case w: { \
_Pragma("unroll 1") \
      for (int slab = blockIdx.x; slab < n_slabs; slab += gridDim.x) { \
        const int point = min(slab * 32 + lane, n_points - 1); \
        const double v = x[point]; \
        double acc = v; \
        body \
        y[w * species_stride + point] = acc; \
      } \
      break; \
    }
    CASE(0, acc = fma(acc, v, 1.5);)
    CASE(1, acc = fma(acc, v, 1.5); acc = fma(acc, v, 2.5);)
    CASE(2, acc = fma(acc, v, 1.5); acc = fma(acc, v, 2.5); acc = fma(acc, v, 3.5);)
    default: break;
  }
}
"""


@pytest.mark.skipif(bool(sass.missing_tools()), reason=sass.missing_reason() or "")
def test_each_case_of_a_switch_outside_the_slab_loop_loops_on_its_own(tmp_path):
    """The chemistry layout (codegen.dispatch): one slab loop per case, each
    back-edge taken by trip count; warp w issues w + 1 FMAs per slab."""
    source = tmp_path / "unswitched.cu"
    source.write_text(UNSWITCHED)
    view = sass.analyse(source, "sm_90", warps=3, keep=str(tmp_path))
    assert [walk.counts["fp64"] for walk in view.warps] == [1, 2, 3]
    assert all(walk.counts["ldg"] == 1 and walk.counts["stg"] == 1 for walk in view.warps)
    listing = sass.parse_listing((tmp_path / "unswitched.sass").read_text())
    assert len(sass.slab_back_edges(listing, "u_kernel")) == 3  # one per case, none enclosing another


CALLED_EXIT = """
        .type           c_kernel,@function
c_kernel:
        /*0000*/                   MOV R1, RZ ;
        /*0010*/                   ULDC UR4, c[0x0][0x218] ;
        /*0020*/                   UIADD3 UR4, UR4, 0x1f, URZ ;
        /*0030*/                   USHF.R.S32.HI UR4, URZ, 0x5, UR4 ;
.L_x_0:
        /*0040*/                   DMUL R2, R4, R4 ;
        /*0050*/                   CALL.REL.NOINC `($__internal_0_$slowpath) ;
        /*0060*/                   IADD3 R1, R1, 0x1, RZ ;
        /*0070*/                   ISETP.GE.AND P5, PT, R1, UR4, PT ;
        /*0080*/               @P5 CALL.REL.NOINC `(.L_x_1) ;
        /*0090*/                   BRA `(.L_x_0) ;
.L_x_1:
        /*00a0*/                   BSYNC B0 ;
        /*00b0*/                   EXIT ;
        .type           $__internal_0_$slowpath,@function
$__internal_0_$slowpath:
        /*00c0*/                   DADD R2, R2, R2 ;
        /*00d0*/                   RET.REL.NODEC R20 `(c_kernel) ;
"""


def test_a_predicated_call_of_an_exit_ends_the_slab_loop():
    """ptxas (sm_80) may end a slab loop whose back-edge is unconditional with
    ``@P CALL`` of a block that exits (``BSYNC; EXIT``): the walk takes it as
    the exit (two slabs: the body twice, then BSYNC and EXIT), while a call of
    a subroutine that returns is still followed and returned from (the
    companion: the DADD of the slow path is counted once per slab)."""
    listing = sass.parse_listing(CALLED_EXIT)
    banks = sass._banks(ELF, "c_kernel", "sm_90", {1: 64, 2: 64}, 32)
    walk = sass.walk(listing, "c_kernel", sass.Machine(tid=0, block_dim=32, banks=banks))
    assert walk.opcodes["DMUL"] == walk.opcodes["DADD"] == 2
    assert walk.opcodes["BSYNC"] == walk.opcodes["EXIT"] == 1
    assert walk.total == 4 + 8 + 7 + 2  # prologue, a trip, the last trip (no back-edge), BSYNC and EXIT


CALLED_LABEL = """
        .type           l_kernel,@function
l_kernel:
        /*0000*/                   MOV R1, RZ ;
        /*0010*/                   ISETP.NE.AND P0, PT, R1, RZ, PT ;
        /*0020*/              @!P0 CALL.REL.NOINC `(.L_x_1) ;
        /*0030*/                   BRA `(.L_x_2) ;
.L_x_1:
        /*0040*/                   BAR.SYNC 0x0 ;
        /*0050*/                   DMUL R2, R4, R4 ;
        /*0060*/                   BRA `(.L_x_3) ;
.L_x_2:
        /*0070*/                   DADD R2, R2, R2 ;
.L_x_3:
        /*0080*/                   EXIT ;
"""


def test_a_call_of_a_label_of_the_kernel_is_a_jump():
    """ptxas (sm_80) enters the code after a warp's last barrier by a ``CALL`` of a label of the kernel itself,
    which never returns (n-heptane diffusion at 13 warps x 3 CTAs): the walk takes it as a jump and ends at the
    EXIT.  Taken as a call, the EXIT would be inside it: the walk refused such kernels."""
    listing = sass.parse_listing(CALLED_LABEL)
    walk = sass.walk(listing, "l_kernel", sass.Machine(tid=0, block_dim=32))
    assert walk.opcodes["DMUL"] == walk.opcodes["EXIT"] == 1 and walk.opcodes["DADD"] == 0
    assert walk.total == 7


def test_paper_table_covers_the_paper_kernels_and_compares_with_the_original():
    """autotune.paper_sass: an original Singe row for each of the paper's kernels, and the
    table's ratios are singe's over the original's (a row twice the original reads 2.00)."""
    from autotune.bench import PAPER_SETTINGS
    from autotune.paper_sass import ORIGINAL, format_rows

    assert set(ORIGINAL) == {(m, k) for m, kernels in PAPER_SETTINGS.items() for k in kernels}
    o = ORIGINAL["dme", "viscosity"]
    row = {"mechanism": "dme", "kernel": "viscosity", "setting": "15x3", "issued": 2 * o["issued"],
           "fp64": 2 * o["fp64_fast"], "bar": 60, "imbalance": 1.1, "static": 2 * o["static"], "registers": 40,
           "nvcc_s": 0.4, "spills": {"sm_90": 0, "sm_80": 0}, "model_error": 0.05}
    line = format_rows([row])[3]
    assert line.count(" 2.00") == 3 and "5.0%" in line and "0/0" in line


def test_paper_table_names_an_unknown_kernel(capsys):
    """--kernels takes mechanism:kernel pairs; another spelling is an error
    naming it and the pairs there are (no traceback)."""
    from autotune.paper_sass import main

    with pytest.raises(SystemExit) as exit_:
        main(["--kernels", "dme:chemistry,dme_chemistry"])
    assert exit_.value.code == 2
    assert "dme_chemistry not among the paper's kernels (dme:viscosity" in capsys.readouterr().err


SHUFFLED = """
        .type           u_kernel,@function
u_kernel:
        /*0000*/                   S2R R0, SR_TID.X ;
        /*0010*/                   SHF.R.U32.HI R0, RZ, 0x5, R0 ;
        /*0020*/                   SHFL.IDX PT, R0, R0, {lane}, 0x1f ;
        /*0030*/                   ISETP.NE.AND P0, PT, R0, RZ, PT ;
        /*0040*/               @P0 EXIT ;
        /*0050*/                   DMUL R2, R2, R2 ;
        /*0060*/                   EXIT ;
"""


def test_a_warp_id_shuffled_from_lane_0_decides_the_branch():
    """The emitted warp id is read from lane 0 with SHFL.IDX (SINGE_WARP_ID): warp 0 runs the DMUL, warp 1 exits.
    Companion: a shuffle from another lane gives a value the walk cannot know (an unknown branch)."""
    def walks(lane: str):
        listing = sass.parse_listing(SHUFFLED.format(lane=lane))
        banks = sass._banks(ELF, "u_kernel", "sm_90", {}, 64)
        return [sass.walk(listing, "u_kernel", sass.Machine(tid=32 * w, block_dim=64, banks=banks)) for w in (0, 1)]

    assert [w.opcodes["DMUL"] for w in walks("RZ")] == [1, 0]
    assert all(w.unknown_branches == 0 for w in walks("RZ"))
    assert all(w.unknown_branches == 1 for w in walks("0x1"))


TABLES = """
        .type           t_kernel,@function
t_kernel:
        /*0000*/                   LDC.64 R2, c[0x4][0x8] ;
        /*0010*/                   MOV R14, 0x1 ;
        /*0020*/                   LEA R16, P3, R14, R2, 0x2 ;
        /*0030*/                   LEA.HI.X R17, R14, R3, RZ, 0x2, P3 ;
        /*0040*/                   LDG.E.CONSTANT R18, desc[UR6][R16.64] ;
        /*0050*/                   ISETP.NE.AND P4, PT, R18, 0x2, PT ;
        /*0060*/               @P4 EXIT ;
        /*0070*/                   LDG.E.CONSTANT R4, desc[UR6][R2.64] ;
        /*0080*/                   MOV R5, RZ ;
.L_x_0:
        /*0090*/                   DMUL R6, R6, R6 ;
        /*00a0*/                   IADD3 R5, R5, 0x1, RZ ;
        /*00b0*/                   ISETP.GE.AND P0, PT, R5, R4, PT ;
        /*00c0*/              @!P0 BRA `(.L_x_0) ;
        /*00d0*/                   LDC.64 R8, c[0x4][RZ] ;
        /*00e0*/                   IADD3 R10, P1, PT, R8, 0x8, RZ ;
        /*00f0*/                   IADD3.X R11, R9, RZ, RZ, P1, !PT ;
        /*0100*/                   LDG.E.64.CONSTANT R12, desc[UR6][R10.64] ;
        /*0110*/                   DSETP.NEU.AND P2, PT, R12, 1, PT ;
        /*0120*/              @!P2 EXIT ;
        /*0130*/                   MUFU.RCP64H R13, R13 ;
        /*0140*/                   EXIT ;
"""

TABLES_ELF = """
.section .symtab
   Num            Value             Size  Type          Bind    Vis        Other      Ndx  Name
   0x1                0                0  SECTION       LOCAL   DEFAULT    -         0x11  .nv.global.init
   0x2                0             0x10  OBJECT        LOCAL   DEFAULT    -         0x11  t_value
   0x3             0x10              0x8  OBJECT        LOCAL   DEFAULT    -         0x11  t_count
.nv.global.init
0x00000000 0x40000000 0x00000000 0x3ff00000
0x00000003 0x00000002
.section .rela.nv.constant4	RELA
0x8    t_count    R_CUDA_64    0x0
0x0    t_value    R_CUDA_64    0x0
.section .rela.debug_frame	RELA
"""


def test_the_walk_reads_the_tables_a_kernel_loads_from_global_memory():
    """The table form's loops run over counts in ``static __device__`` arrays: the walk places
    ``.nv.global.init`` and the bank-4 pointers to it, and follows 64-bit address arithmetic (LEA with
    LEA.HI.X, IADD3 with IADD3.X) and a table double against 1 (DSETP).  Here t_count = {3, 2} and t_value =
    {2.0, 1.0}: t_count[1] == 2 goes on, the loop runs t_count[0] = 3 times, t_value[1] == 1 exits."""
    listing = sass.parse_listing(TABLES)
    banks = sass._banks(TABLES_ELF, "t_kernel", "sm_90", {}, 32)
    memory = sass.global_tables(TABLES_ELF)[1]
    walk = sass.walk(listing, "t_kernel", sass.Machine(tid=0, banks=banks, memory=memory))
    assert walk.unknown_branches == 0 and walk.opcodes["DMUL"] == 3 and walk.opcodes["MUFU.RCP64H"] == 0
    assert walk.total == 9 + 3 * 4 + 6
    # the companion: without the tables nothing past the first load is known
    blind = sass.walk(listing, "t_kernel", sass.Machine(tid=0, banks=sass._banks("", "t_kernel", "sm_90", {}, 32)))
    assert blind.unknown_branches > 0 and blind.opcodes["DMUL"] != 3


def test_transport_sass_rows_name_the_wilke_group():
    """autotune.transport_sass's rows: warps, CTAs per SM and viscosity's Wilke group, each optional but the
    warps; a malformed row is named."""
    import argparse

    from autotune.transport_sass import parse_rows

    assert parse_rows("dme:viscosity:15x3,heptane:viscosity:8g2,gri30:diffusion:8,dme:viscosity:10x4g3") == [
        ("dme", "viscosity", 15, 3, None), ("heptane", "viscosity", 8, None, 2), ("gri30", "diffusion", 8, None, None),
        ("dme", "viscosity", 10, 4, 3)]
    for wrong in ("dme:viscosity:x", "dme:viscosity", "dme:viscosity:8g"):
        with pytest.raises(argparse.ArgumentTypeError, match=f"not '{wrong}'"):
            parse_rows(wrong)
