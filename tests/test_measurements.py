"""What was measured on a GPU (docs/measurements): the documented numbers are the stored runs', the
speedup script reads a run and puts the model beside it, and gpu_bench keeps compute-sanitizer's report."""

from __future__ import annotations

import json
import pathlib

from autotune.device_kit import step_output
from autotune.gpu_bench import first_report, records_from_log
from autotune.speedup import measured_lines, measured_pairs, paper_pairs

ROOT = pathlib.Path(__file__).resolve().parents[1]
RUNS = ROOT / "docs" / "measurements" / "2026-11-26-h200"
H100_RUNS = ROOT / "docs" / "measurements" / "2026-11-27-h100"
H200_TABLE = "### Throughput at the paper's settings"
H100_TABLE = "### Throughput on the H100 at the paper's settings"
H200_SESSION = ROOT / "docs" / "measurements" / "2026-11-27-h200"
H200_SESSION_TABLE = "### Throughput on the H200 at the paper's settings, persistent grid"
SETTLED_TABLE = "### Spills against occupancy"
README = ROOT / "docs" / "measurements" / "README.md"
NAMES = {"dme": "DME", "heptane": "n-heptane"}


def documented_mismatches(text: str, runs: list[dict], heading: str = H200_TABLE) -> list[str]:
    """Each paper-setting pair of each run against its row of the README's throughput table under ``heading``:
    the row names the kernel, then per run WS, baseline and **WS / baseline**, in the runs' order."""
    table = text.split(heading + " ", 1)[1].split("\n### ", 1)[0]
    rows = {line.split("|")[1].strip().split(" (")[0]: [c.strip() for c in line.split("|")[2:]]
            for line in table.splitlines() if line.startswith(("| DME ", "| n-heptane "))}
    problems = []
    for run, pairs in enumerate(runs):
        for (mechanism, kernel), pair in pairs.items():
            cells = rows.get(f"{NAMES[mechanism]} {kernel}", [])[3 * run:3 * run + 3]
            expected = [f"{pair['warp-specialized']:.1f}", f"{pair['baseline']:.1f}", f"**{pair['speedup']:.2f}**"]
            if cells != expected:
                problems.append(f"run {run + 1} {mechanism} {kernel}: documented {cells}, measured {expected}")
    return problems


def stored_runs() -> list[dict]:
    return [measured_pairs(str(RUNS / "run1_paper_defaults.json")), measured_pairs(str(RUNS / "run2_paper.json"))]


def test_documented_throughput_is_the_stored_runs():
    runs = stored_runs()
    assert [len(pairs) for pairs in runs] == [6, 6]
    assert documented_mismatches(README.read_text(), runs) == []


def h100_runs() -> list[dict]:
    return [measured_pairs(str(H100_RUNS / "run1_timing.json")), measured_pairs(str(H100_RUNS / "run2_paper.json"))]


def test_documented_h100_throughput_is_the_stored_runs():
    runs = h100_runs()
    assert [len(pairs) for pairs in runs] == [6, 6]
    assert {pair["device"] for pairs in runs for pair in pairs.values()} == {"NVIDIA H100 80GB HBM3"}
    assert documented_mismatches(README.read_text(), runs, H100_TABLE) == []
    text = README.read_text().replace("| 216.3 | 138.3 | **1.56** |", "| 216.3 | 138.3 | **1.65** |", 1)  # companion: a wrong number is caught
    assert documented_mismatches(text, runs, H100_TABLE) == [
        "run 2 dme chemistry: documented ['216.3', '138.3', '**1.65**'], measured ['216.3', '138.3', '**1.56**']"]


def test_a_wrong_documented_number_is_caught():
    text = README.read_text().replace("| 1070.6 | 2432.7 | **0.44** |", "| 1070.6 | 2432.7 | **1.44** |", 1)
    assert documented_mismatches(text, stored_runs()) == [
        "run 2 dme viscosity: documented ['1070.6', '2432.7', '**1.44**'], measured ['1070.6', '2432.7', '**0.44**']"]


def test_every_stored_kernel_matched_the_reference():
    records = [r for folder in (RUNS, H100_RUNS, H200_SESSION, COPY_SESSION) for path in folder.glob("*.json")
               for r in json.loads(path.read_text()) if "max_error" in r]
    assert records and all(r["correct"] and r["max_error"] <= 1e-9 for r in records)


def test_the_model_is_printed_beside_a_measured_pair():
    pairs = measured_pairs(str(RUNS / "run2_paper.json"))
    row = {"mechanism": "dme", "kernel": "viscosity", "preset": "H100", "speedup": 0.71,
           "ws": {"points_per_second": 2 * 1070.6e6}, "baseline": {"points_per_second": 2432.7e6}}
    line = measured_lines([row], pairs, "cache")[-1].split()  # the run read its constant tables in place
    assert line[:4] == ["dme", "viscosity", "H200", "H100"]
    assert line[4:8] == ["1070.6", "2432.7", "0.44", "0.71"]
    assert line[-2:] == ["2.00", "1.00"]  # model / measured: the WS and baseline throughputs


def test_a_measured_baseline_of_the_kernels_own_graph_is_modeled_as_such():
    """Run 2 timed DME viscosity's baseline in the kernel's Wilke pairs; the modeled row's baseline is the tuned one
    (groups of 8, ``singe.baseline_kernel``).  The model beside the measurement is the baseline of the kernel's own
    graph (``own_graph_baseline``), and a line gives the speedup against the tuned one."""
    pairs = measured_pairs(str(RUNS / "run2_paper.json"))
    row = {"mechanism": "dme", "kernel": "viscosity", "preset": "H100", "speedup": 0.5,
           "ws": {"points_per_second": 2 * 1070.6e6}, "baseline": {"points_per_second": 4281.2e6},
           "own_graph_baseline": {"points_per_second": 2432.7e6}}
    *_, line, note = measured_lines([row], pairs, "cache")
    assert line.split()[4:8] == ["1070.6", "2432.7", "0.44", "0.88"] and line.split()[-2:] == ["2.00", "1.00"]
    assert "kernel's graph" in note and note.rstrip(")").endswith("the model gives 0.50")
    without = measured_lines([{k: v for k, v in row.items() if k != "own_graph_baseline"}], pairs, "cache")[-1]
    assert without.split()[7] == "0.50" and without.split()[-1] == "1.76"  # the tuned one, measured against the other


def test_a_measured_pair_is_against_the_tuned_baseline_where_it_was_timed():
    """``paper_pairs``: a run that timed both baselines gives the speedup against 'tuned-baseline'; one that timed
    only the kernel's own graph's (every stored run), against 'baseline'."""
    from autotune.speedup import measured_baseline

    def record(style, mpoints):
        return {"setting": "paper", "mechanism": "dme", "kernel": "viscosity", "device": "a GPU", "arch": "sm_90",
                "style": style, "mpoints_per_s": mpoints}

    both = paper_pairs([record("warp-specialized", 1000.0), record("baseline", 2000.0),
                        record("tuned-baseline", 2500.0)])
    own = paper_pairs([record("warp-specialized", 1000.0), record("baseline", 2000.0)])
    assert both["dme", "viscosity"]["speedup"] == 0.4 and measured_baseline(both["dme", "viscosity"]) == "tuned-baseline"
    assert own["dme", "viscosity"]["speedup"] == 0.5 and measured_baseline(own["dme", "viscosity"]) == "baseline"


def test_a_measured_kernel_with_another_copy_of_its_table_is_named():
    """n-heptane diffusion at the paper's 13x3 was measured reading its constant table in place (0 B copied);
    the model now lays it out with the partial copy (43,264 B): the comparison says they are not the same
    kernel.  The same bytes: no such line."""
    pairs = measured_pairs(str(STRIPES_SESSION / "paper_latest.json"))
    row = {"mechanism": "heptane", "kernel": "diffusion", "preset": "H100", "speedup": 2.68, "table_copy_bytes": 43264,
           "ws": {"points_per_second": 468.2e6}, "baseline": {"points_per_second": 175.0e6}}
    assert measured_lines([row], pairs)[-1] == ("  (the measured heptane diffusion copied 0 B of its constant table into "
                                                "shared memory, the modeled one 43264 B: not the same kernel)")
    assert "not the same kernel" not in "\n".join(measured_lines([row | {"table_copy_bytes": 0}], pairs))


def test_sanitizer_report_keeps_its_first_lines():
    text = ("========= COMPUTE-SANITIZER\n========= Error: Race reported between Write access at k+0x10\n"
            "=========     and Read access at k+0x20 [32 hazards]\n=========\n"
            "========= RACECHECK SUMMARY: 1 hazard displayed (1 error, 0 warnings)\nprogram output\n")
    assert first_report(text, lines=3) == ["COMPUTE-SANITIZER", "Error: Race reported between Write access at k+0x10",
                                           "and Read access at k+0x20 [32 hazards]"]


def h200_session_run() -> dict:
    """The timing step of the 2026-11-27 H200 session, read back from its log (the step stopped before its JSON)."""
    return paper_pairs(records_from_log(step_output((H200_SESSION / "run_log.txt").read_text(), "timing")))


def test_documented_h200_session_throughput_is_its_log():
    pairs = h200_session_run()
    assert len(pairs) == 6 and {pair["device"] for pair in pairs.values()} == {"NVIDIA H200"}
    assert documented_mismatches(README.read_text(), [pairs], H200_SESSION_TABLE) == []
    text = README.read_text().replace("| 330.7 | 488.0 | **0.68** |", "| 330.7 | 488.0 | **0.86** |", 1)
    assert documented_mismatches(text, [pairs], H200_SESSION_TABLE) == [  # companion: a wrong number is caught
        "run 1 dme diffusion: documented ['330.7', '488.0', '**0.86**'], measured ['330.7', '488.0', '**0.68**']"]


def settled_mismatches(text: str) -> list[str]:
    """Each row of the spills-against-occupancy table: its 'plan / settled' Mpoints/s against the stored runs'
    warp-specialized records at the plan's and the settled CTAs per SM."""
    table = text.split(SETTLED_TABLE, 1)[1].split("\n### ", 1)[0]
    timed = {(r["mechanism"], r["kernel"], r["options"]["warps"], r["options"]["ctas_per_sm"]): r["mpoints_per_s"]
             for name in ("gri30_diffusion_4_warps.json", "settled_ctas.json")
             for r in json.loads((H200_SESSION / name).read_text()) if r["style"] == "warp-specialized"}
    names = {"GRI-Mech": "gri30", "n-heptane": "heptane"}
    problems = []
    for line in table.splitlines():
        if not line.startswith(("| GRI-Mech ", "| n-heptane ")):
            continue
        cells = [c.strip() for c in line.split("|")[1:-1]]
        mechanism, kernel = names[cells[0].split()[0]], cells[0].split()[1].rstrip(",")
        warps = int(cells[0].split()[2])
        plan, settled = (int(cells[i].split()[0]) for i in (1, 3))
        expected = f"{timed[(mechanism, kernel, warps, plan)]:.1f} / {timed[(mechanism, kernel, warps, settled)]:.1f}"
        if cells[4] != expected:
            problems.append(f"{cells[0]}: documented {cells[4]}, measured {expected}")
    return problems


def test_documented_spills_against_occupancy_are_the_stored_runs():
    text = README.read_text()
    assert text.split(SETTLED_TABLE, 1)[1].count("| GRI-Mech ") == 2 and settled_mismatches(text) == []
    wrong = text.replace("| 110.8 / 87.9 |", "| 87.9 / 110.8 |", 1)
    assert settled_mismatches(wrong) == ["GRI-Mech diffusion, 4 warps: documented 87.9 / 110.8, measured 110.8 / 87.9"]


COPY_SESSION = ROOT / "docs" / "measurements" / "2026-11-27-h200-copy"
COPY_PAPER_TABLE = "### Throughput on the H200 with the constant table's copy, paper settings"
EVERY_TRANSPORT_TABLE = "### Every transport kernel timed, warp-specialized"
COPY_RUNS = ("run1_timing.json", "run1_variants.json", "run2_gri30_defaults.json", "run2_variants.json")
SETTING_NAMES = {"DME": "dme", "n-heptane": "heptane", "GRI-Mech": "gri30"}


def copy_session_records() -> list[dict]:
    return [r for name in COPY_RUNS for r in json.loads((COPY_SESSION / name).read_text())]


def test_documented_copy_session_throughput_is_its_runs():
    pairs = paper_pairs(json.loads((COPY_SESSION / "run1_timing.json").read_text()))
    assert len(pairs) == 6 and {pair["device"] for pair in pairs.values()} == {"NVIDIA H200"}
    assert {pair["table"] for pair in pairs.values()} == {"auto"}
    assert documented_mismatches(README.read_text(), [pairs], COPY_PAPER_TABLE) == []


def kernel_rows(text: str, heading: str, width: int | None = None):
    """(mechanism, kernel, cells) of each row of the README's table under ``heading`` that names a kernel
    (``SETTING_NAMES``) and, where ``width`` is given, has that many cells."""
    table = text.split(heading, 1)[1].split("\n### ", 1)[0]
    for line in table.splitlines():
        cells = [c.strip() for c in line.split("|")[1:-1]]
        if not cells or (width is not None and len(cells) != width) or cells[0].split()[0] not in SETTING_NAMES:
            continue
        yield SETTING_NAMES[cells[0].split()[0]], cells[0].split()[1], cells


def transport_mismatches(text: str, records: list[dict]) -> list[str]:
    """Each row of the every-transport-kernel table (kernel, setting, --constant-table, read from, Mpoints/s,
    / baseline) against the warp-specialized record of that mechanism, kernel, warps x CTAs per SM ('--warps 8':
    CTAs chosen), Wilke group, option and table, and the baseline at the defaults of the same mechanism."""
    timed = {}
    for r in records:
        o = r["options"]
        timed[(r["mechanism"], r["kernel"], r["style"], o["warps"], o["ctas_per_sm"], o["wilke_group"],
               o["constant_table"], "copy" if r.get("table_copy_bytes") else "cache", r["setting"] == "paper")] = r
    baselines = {(r["mechanism"], r["kernel"]): r["mpoints_per_s"] for r in records
                 if r["style"] == "baseline" and r["setting"] == "defaults"}
    problems = []
    for mechanism, kernel, cells in kernel_rows(text, EVERY_TRANSPORT_TABLE, 6):
        shape, *rest = cells[1].split()
        warps, ctas = (8, None) if shape == "`--warps" else map(int, shape.split("x"))
        group = next((int(w[1:]) for w in rest if w.startswith("g")), None)
        record = timed.get((mechanism, kernel, "warp-specialized", warps, ctas, group, cells[2], cells[3],
                            "(paper)" in rest))
        if record is None:
            problems.append(f"{cells[0]} {cells[1]} {cells[2]}: no such run")
            continue
        expected = [f"{record['mpoints_per_s']:.1f}", f"{record['mpoints_per_s'] / baselines[(mechanism, kernel)]:.2f}"]
        if cells[4:] != expected:
            problems.append(f"{cells[0]} {cells[1]} {cells[2]}: documented {cells[4:]}, measured {expected}")
    return problems


def test_documented_transport_kernels_are_the_copy_sessions_runs():
    text, records = README.read_text(), copy_session_records()
    rows = text.split(EVERY_TRANSPORT_TABLE, 1)[1].split("\n### ", 1)[0].count("\n| ") - 1
    ws = [r for r in records if r["style"] == "warp-specialized" and r["kernel"] != "chemistry"]
    assert rows == len(ws) == 37 and transport_mismatches(text, records) == []
    wrong = text.replace("| 4x8 | shared | copy | 1517.6 |", "| 4x8 | cache | copy | 1517.6 |", 1)
    assert transport_mismatches(wrong, records) == ["DME viscosity 4x8 cache: no such run"]  # companions
    wrong = text.replace("| 13x2 | shared | copy | 308.8 | 3.37 |", "| 13x2 | shared | copy | 308.8 | 3.73 |", 1)
    assert transport_mismatches(wrong, records) == [
        "n-heptane diffusion 13x2 shared: documented ['308.8', '3.73'], measured ['308.8', '3.37']"]


NEW_DEFAULTS_TABLE = "### The new defaults, timed (run 3"


def new_defaults_mismatches(text: str, records: list[dict], heading: str = NEW_DEFAULTS_TABLE) -> list[str]:
    """Each row of the table under ``heading`` (run 3's by default: kernel, setting, WS, baseline,
    **WS / baseline**) against its records."""
    timed = {(r["mechanism"], r["kernel"], r["style"]): r["mpoints_per_s"] for r in records}
    problems = []
    for mechanism, kernel, cells in kernel_rows(text, heading):
        ws, base = timed[(mechanism, kernel, "warp-specialized")], timed[(mechanism, kernel, "baseline")]
        expected = [f"{ws:.1f}", f"{base:.1f}", f"**{ws / base:.2f}**"]
        if cells[2:5] != expected:
            problems.append(f"{cells[0]}: documented {cells[2:5]}, measured {expected}")
    return problems


def test_documented_new_defaults_are_run_3():
    text = README.read_text()
    records = json.loads((COPY_SESSION / "run3_defaults.json").read_text())
    assert all(r["table_copy_bytes"] for r in records if r["style"] == "warp-specialized")
    assert text.split(NEW_DEFAULTS_TABLE, 1)[1].split("\n### ", 1)[0].count("| GRI-Mech ") == 2
    assert new_defaults_mismatches(text, records) == []
    wrong = text.replace("| 130.6 | 105.5 | **1.24** |", "| 130.6 | 105.5 | **1.42** |", 1)
    assert new_defaults_mismatches(wrong, records) == [  # companion: a wrong number is caught
        "GRI-Mech diffusion: documented ['130.6', '105.5', '**1.42**'], measured ['130.6', '105.5', '**1.24**']"]


STRIPES_SESSION = ROOT / "docs" / "measurements" / "2026-11-27-h200-stripes"
STRIPES_TABLE = "### Constant stripes beside the copy, and where the copy is planned"
RUN5_DEFAULTS_TABLE = "### The defaults, timed (run 5"
STRIPES_RUNS = {"2": [COPY_SESSION / "run2_variants.json"], "3": [COPY_SESSION / "run3_defaults.json"],
                "4": [STRIPES_SESSION / "defaults.json", STRIPES_SESSION / "variants.json"],
                "5": [STRIPES_SESSION / "run5" / "defaults.json", STRIPES_SESSION / "run5" / "variants.json"],
                "9": [STRIPES_SESSION / "run9" / "variants.json"]}


def stripes_mismatches(text: str) -> list[str]:
    """Each row of the stripes table (kernel, setting, registers, stripes, run, Mpoints/s) against the
    warp-specialized record of its run with that mechanism, kernel, 8 warps and ptxas's registers."""
    problems = []
    for mechanism, kernel, cells in kernel_rows(text, STRIPES_TABLE, 6):
        records = [r for path in STRIPES_RUNS[cells[4]] for r in json.loads(path.read_text())
                   if (r["mechanism"], r["kernel"], r["style"], r["options"]["warps"], str(r["registers"]))
                   == (mechanism, kernel, "warp-specialized", 8, cells[2])]
        if len(records) != 1:
            problems.append(f"{cells[0]} run {cells[4]}, {cells[2]} registers: {len(records)} runs")
        elif cells[5] != f"{records[0]['mpoints_per_s']:.1f}":
            problems.append(f"{cells[0]} run {cells[4]}: documented {cells[5]}, measured "
                            f"{records[0]['mpoints_per_s']:.1f}")
    return problems


def test_documented_stripes_and_planned_copies_are_the_runs():
    text = README.read_text()
    assert text.split(STRIPES_TABLE, 1)[1].split("\n### ", 1)[0].count("\n| ") == 11  # the head and 10 rows
    assert stripes_mismatches(text) == []
    wrong = text.replace("| 64 | 0 | 4 | 192.0 |", "| 64 | 0 | 4 | 129.0 |", 1)
    assert stripes_mismatches(wrong) == ["GRI-Mech diffusion run 4: documented 129.0, measured 192.0"]  # companion
    wrong = text.replace("| 115 | 0 | 5 | 142.0 |", "| 116 | 0 | 5 | 142.0 |", 1)
    assert stripes_mismatches(wrong) == ["GRI-Mech diffusion run 5, 116 registers: 0 runs"]


def test_documented_run_5_defaults_are_its_records():
    text = README.read_text()
    records = json.loads((STRIPES_SESSION / "run5" / "defaults.json").read_text())
    assert all(r["table_copy_bytes"] for r in records if r["style"] == "warp-specialized")
    assert new_defaults_mismatches(text, records, RUN5_DEFAULTS_TABLE) == []
    wrong = text.replace("| 190.5 | 104.8 | **1.82** |", "| 190.5 | 104.8 | **1.28** |", 1)
    assert new_defaults_mismatches(wrong, records, RUN5_DEFAULTS_TABLE) == [  # companion
        "GRI-Mech diffusion: documented ['190.5', '104.8', '**1.28**'], measured ['190.5', '104.8', '**1.82**']"]


def test_every_kernel_of_the_stripes_session_matched_the_reference():
    records = [r for paths in STRIPES_RUNS.values() for path in paths if "stripes" in str(path)
               for r in json.loads(path.read_text())]
    assert len(records) == 12 + 4 + 8 + 1 + 4 and all(r["correct"] and r["max_error"] < 1e-14 for r in records)


WILKE_TABLE = "### Wilke groups that divide the species among the warps"
WILKE_RUNS = {"6": ("run6/paper.json", "run6/variants.json"), "7": ("run7/paper.json", "run7/dme_10x4.json"),
              "9": ("run9/variants.json",)}


def wilke_mismatches(text: str) -> list[str]:
    """Each row of the Wilke-group table (kernel, run, setting as given: 'WxC', 'W' with the CTAs chosen, and
    'gN' for --wilke-group N; group; WS; baseline; **WS / baseline**) against the records of its run with those
    options, both styles where the row gives a baseline."""
    problems = []
    for mechanism, _, cells in kernel_rows(text, WILKE_TABLE, 7):
        run, words = cells[1], cells[2].split()
        warps, _, ctas = words[0].partition("x")
        group = int(words[1][1:]) if len(words) > 1 else None
        given = (mechanism, int(warps), int(ctas) if ctas else None, group)
        rate = {r["style"]: r["mpoints_per_s"]
                for name in WILKE_RUNS[run] for r in json.loads((STRIPES_SESSION / name).read_text())
                if (r["mechanism"], r["options"]["warps"], r["options"]["ctas_per_sm"],
                    r["options"]["wilke_group"]) == given}
        expected = [f"{rate['warp-specialized']:.1f}" if "warp-specialized" in rate else "no run"]
        expected += [f"{rate['baseline']:.1f}", f"**{rate['warp-specialized'] / rate['baseline']:.2f}**"] \
            if cells[5] else ["", ""]
        if cells[4:] != expected:
            problems.append(f"{cells[0]} run {run} {cells[2]}: documented {cells[4:]}, measured {expected}")
    return problems


def test_documented_wilke_groups_are_runs_6_and_7():
    text = README.read_text()
    assert text.split(WILKE_TABLE, 1)[1].split("\n### ", 1)[0].count("| DME viscosity |") == 8
    assert wilke_mismatches(text) == []
    wrong = text.replace("| 7 | 13x3 | 4 | 875.3 | 487.0 | **1.80** |", "| 7 | 13x3 | 4 | 875.3 | 487.0 | **1.08** |", 1)
    assert wilke_mismatches(wrong) == [  # companion: a wrong number is caught
        "n-heptane viscosity run 7 13x3: documented ['875.3', '487.0', '**1.08**'], measured "
        "['875.3', '487.0', '**1.80**']"]
    records = [r for names in WILKE_RUNS.values() for name in names
               for r in json.loads((STRIPES_SESSION / name).read_text())]
    assert len(records) == 4 + 6 + 4 + 2 + 4 and all(r["correct"] and r["max_error"] < 1e-14 for r in records)


def test_the_latest_paper_measurements_are_the_stored_runs():
    """paper_latest.json (what the speedup plot draws): run 7's viscosity, the copy session's run 1 for the
    other four kernels at the paper's settings, nothing else."""
    latest = json.loads((STRIPES_SESSION / "paper_latest.json").read_text())
    older = [r for r in json.loads((COPY_SESSION / "run1_timing.json").read_text())
             if r["setting"] == "paper" and r["kernel"] != "viscosity"]
    assert latest == older + json.loads((STRIPES_SESSION / "run7" / "paper.json").read_text())
    assert len(paper_pairs(latest)) == 6
