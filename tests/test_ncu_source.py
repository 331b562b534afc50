"""autotune/ncu_source.py: ncu's per-instruction stall samples summed by opcode."""

from __future__ import annotations

import gzip

from autotune import ncu_source

HEADER = '"Address","Source","Instructions Executed","stall_short_sb","stall_mio","stall_short_sb (Not Issued)"'


def listing(kernel: str, rows: list[str]) -> str:
    return "\n".join([f'"Kernel Name","{kernel}(const double *, int)",', HEADER, *rows])


def test_samples_are_summed_by_opcode_and_reason(tmp_path):
    text = "\n".join([listing("visc_kernel", ['"0x10","      DFMA R4, R2, R6, R4","100","30","0","99"',
                                              '"0x20","      @P0 DFMA.RM R4, R2, R6, R4","100","10","0","99"',
                                              '"0x30","      LDC.64 R2, c[0x3][R5]","50","0","60","0"']),
                      listing("chem_kernel", ['"0x10","      BAR.SYNC 0x1, 0x100","5","0","1","0"'])])
    path = tmp_path / "source.csv.gz"
    path.write_bytes(gzip.compress(text.encode()))
    found = ncu_source.kernels(ncu_source.read_rows(str(path)))
    assert list(found) == ["visc_kernel", "chem_kernel"]
    total, by_opcode, executed = ncu_source.stall_summary(found["visc_kernel"])
    assert total == {"short_sb": 40, "mio": 60}  # the 'Not Issued' columns are a subset, not counted again
    assert by_opcode["DFMA"] == {"short_sb": 40, "mio": 0} and executed == {"DFMA": 200, "LDC": 50}
    lines = ncu_source.report("visc_kernel", found["visc_kernel"], top=2)
    assert lines[1] == "  by reason: mio 60.0%, short_sb 40.0%"
    assert lines[2].startswith("  LDC       60.0% of samples (mio 60.0%)")


def test_a_file_that_is_not_the_source_page_is_refused(tmp_path, capsys):
    path = tmp_path / "other.csv"
    path.write_text('"ID","Metric Name"\n"0","smsp__inst_executed.sum"\n')
    assert ncu_source.main([str(path)]) == 1
    assert "not ncu's source page as CSV" in capsys.readouterr().err
    assert ncu_source.main([str(tmp_path / "missing.csv")]) == 1


def test_short_scoreboard_samples_go_to_the_load_written_last():
    """Of a waiting instruction's sources, the one a load wrote last is what it waits for: the DFMA reads an
    LDS result from three instructions earlier and an LDC.64 result (its high word, R9) from one earlier, so
    its samples go to the LDC; the DMUL reads only a DFMA result and the LDS's, so its go to the LDS."""
    rows = ['"0x10","      LDS.64 R4, [R2+0x100]","1","0","0","0"',
            '"0x20","      IMAD R7, R1, 0x8, RZ","1","0","0","0"',
            '"0x30","      LDC.64 R8, c[0x3][R7]","1","0","0","0"',
            '"0x40","      DFMA R10, R4, R8, R10","1","30","0","30"',
            '"0x50","      DMUL R12, R10, R4","1","10","0","10"',
            '"0x60","      DADD R14, R9, R12","1","5","0","5"',
            '"0x70","      DADD R16, R14, R14","1","2","0","2"']
    found = ncu_source.kernels(ncu_source.read_rows_from_text(listing("visc_kernel", rows)))
    waited = ncu_source.waited_loads(found["visc_kernel"])
    assert waited == {"LDC": (35, (30 * 1 + 5 * 3) / 35), "LDS": (10, 4.0), "none": (2, 0.0)}
    lines = ncu_source.report("visc_kernel", found["visc_kernel"], top=2)
    assert lines[-1].startswith("  short scoreboard by the load waited for: LDC 74.5% (1.3 instructions earlier)")
