"""The singe command: summaries, IR dumps, one-line errors with status 2."""

from __future__ import annotations

import pytest

from singe.cli import main
from singe.compiler import compile_kernel
from singe.errors import OptionError
from conftest import load


def test_compiles_transport_kernels_of_a_bundled_mechanism(capsys, tmp_path):
    assert main(["h2o2", "--warps", "3", "-o", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "h2o2_viscosity.cu: 3 warps" in out and "h2o2_diffusion.cu: 3 warps" in out


def test_viscosity_dispatch_applies_to_the_viscosity_kernel_alone(capsys, tmp_path):
    """``--viscosity-dispatch switch``: the viscosity kernel as one switch case per warp (its options' key says
    so in the file's header); the diffusion kernel of the same command keeps its overlay."""
    assert main(["h2o2", "--warps", "3", "--viscosity-dispatch", "switch", "-o", str(tmp_path)]) == 0
    viscosity = (tmp_path / "h2o2_viscosity.cu").read_text()
    diffusion = (tmp_path / "h2o2_diffusion.cu").read_text()
    assert "-switch)" in viscosity.splitlines()[1] and "switch (warp_id)" in viscosity
    assert "-switch" not in diffusion.splitlines()[1] and "(1u << warp_id)" in diffusion


def test_the_summary_says_where_the_constant_table_is_read(capsys, tmp_path):
    """``auto`` (the default): H2/O2 viscosity's copy fits beside its slots and the line gives its bytes;
    n-heptane diffusion's at 13 warps x 3 CTAs does not (33.5 KB of slots and a 46.6 KB copy against 75 KB a
    CTA), its first 13 stripes do, and the line says so; at 8 warps x 4 CTAs not even the stripes its loops
    read fit, and the line says the table is read in place and how many CTAs the copy would leave resident;
    ``--constant-table cache`` says nothing.  Where the copy is forced at 4 CTAs per SM, the line says 2 of
    them are resident."""
    import cantera_reference as ref

    assert main(["h2o2", "--warps", "3", "--kernels", "viscosity", "-o", str(tmp_path)]) == 0
    assert "B of them the constant table's copy)" in capsys.readouterr().out
    assert main(["h2o2", "--warps", "3", "--kernels", "viscosity", "--constant-table", "cache",
                 "-o", str(tmp_path)]) == 0
    assert "constant table" not in capsys.readouterr().out
    if not ref.have_shared():
        pytest.skip("../shared/mechanisms not found: set SINGE_SHARED")
    assert main([str(ref.chemistry_file("heptane")), "--kernels", "diffusion", "--warps", "13", "--ctas-per-sm", "3",
                 "-o", str(tmp_path)]) == 0
    assert ("(43264 B of them the constant table's copy, its first 13 of 14 stripes a warp: the whole does not fit "
            "beside the slots at 3 CTAs per SM)") in capsys.readouterr().out
    assert main([str(ref.chemistry_file("heptane")), "--kernels", "diffusion", "--ctas-per-sm", "4",
                 "-o", str(tmp_path)]) == 0
    assert ("the constant table read in place: its copy does not fit beside the slots at 4 CTAs per SM; "
            "--constant-table shared copies it, 2 of them resident)") in capsys.readouterr().out
    assert main([str(ref.chemistry_file("heptane")), "--kernels", "diffusion", "--ctas-per-sm", "4",
                 "--constant-table", "shared", "-o", str(tmp_path)]) == 0
    assert "8 warps x 4 CTAs per SM (2 resident: their shared memory)" in capsys.readouterr().out


@pytest.mark.parametrize("dump, marker", [("graph", "graph viscosity of h2o2"),
                                          ("mapping", "mapping viscosity of h2o2 onto 2 warps"),
                                          ("schedule", "warp programs viscosity of h2o2: 2 warps")])
def test_dump(capsys, dump, marker):
    assert main(["h2o2", "--warps", "2", "--kernels", "viscosity", "--dump", dump]) == 0
    assert marker in capsys.readouterr().out


@pytest.mark.parametrize("argv, message", [
    (["h2o2", "--warps", "33"], "--warps must be an integer from 1 to 32"),
    (["h2o2", "--kernels", "chem"], "unknown kernel"),
    (["h2o2", "--weights", "1,2"], "weights must be three numbers"),
    (["h2o2", "--arch", "sm_70"], "invalid choice"),
    (["h2o2", "--viscosity-dispatch", "jump"], "invalid choice"),
])
def test_bad_options_one_line_status_2(capsys, argv, message):
    try:
        status = main(argv)
    except SystemExit as exit_:
        status = exit_.code
    assert status == 2
    err = capsys.readouterr().err
    assert message in err and len(err.strip().splitlines()) == 1 and "Traceback" not in err


def test_compile_kernel_options_are_validated():
    with pytest.raises(OptionError, match="placement"):
        compile_kernel(load("h2o2"), "viscosity", warps=2, placement="everywhere")


def test_counts_are_reported_per_warp():
    compiled = compile_kernel(load("h2o2"), "viscosity", warps=2)
    counts = compiled.counts
    assert len(counts) == 2
    assert sum(c["dfma"] for c in counts) > 0 and sum(c["sync"] + c["arrive"] for c in counts) > 0
    assert sum(c["global_store"] for c in counts) == 1  # one viscosity per point
