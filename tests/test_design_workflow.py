"""The design tier in a real Snakemake run: a simulate job and sim.json for design pairs
only, scores by measures, tier columns, and reruns that follow the testbench and the
simulator and never reach generate."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import Project
from test_reruns import REST, job_counts

from wirebench.runtime import akcli_backend

pytestmark = pytest.mark.skipif(akcli_backend.ngspice_library() is None,
                                reason="needs Debian's libngspice0 (or AKCLI_NGSPICE)")

TASK_IDS = ["01-divider", "d01-rc-lowpass-loaded", "d03-noninverting-gain"]
DESIGN = [t for t in TASK_IDS if t.startswith("d")]


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    # A batch of one pair: the rerun counts below are pairs.
    project = Project(tmp_path_factory.mktemp("design") / "wb").self_contained(TASK_IDS, batch=1)
    project.snakemake()
    return project


@pytest.mark.slow
def test_design_pairs_and_only_they_get_a_simulation(world):
    for model in ("reference", "base"):
        for task in TASK_IDS:
            has_sim = (world.pair(model, task) / "sim.json").is_file()
            assert has_sim == (task in DESIGN), (model, task)
    sim = json.loads((world.pair("reference", "d03-noninverting-gain") / "sim.json").read_text())
    assert sim["schema"] == "wirebench.sim/1" and sim["status"] == "pass"
    assert sim["deck_sha256"] and sim["versions"]["ngspice"]
    assert {m["name"] for m in sim["measures"]} == {"gain_1k", "bandwidth", "startup"}
    assert sim["wave"]["x"] == "time" and "v(VOUT)" in sim["wave"]["columns"]


@pytest.mark.slow
def test_the_summary_tells_tiers_and_layout_apart(world):
    df = world.summary()
    design = df[df["task"].isin(DESIGN)]
    assert set(design["tier"]) == {"design"}
    assert set(df[df["task"] == "01-divider"]["tier"]) == {"transcription"}
    ref = design[design["model"] == "reference"]
    assert ref["passed"].all() and set(ref["sim_status"]) == {"pass"}
    assert set(ref["layout_clean"]) == {"pass"}
    base = design[design["model"] == "base"]
    assert not base["passed"].any()        # the heuristic cannot design
    card = json.loads((world.root / "results" / "scorecard.json").read_text())
    assert card["models"]["reference"]["by_tier"]["design"] == {
        "pairs": 2, "passed": 2, "pass_rate": 1.0, "clean": 2, "clean_rate": 1.0}
    assert card["models"]["base"]["by_tier"]["design"]["pass_rate"] == 0.0


@pytest.mark.slow
def test_a_testbench_edit_reruns_that_tasks_simulate_and_score_only(world):
    path = world.root / "tasks" / "d01-rc-lowpass-loaded" / "task.yaml"
    old = path.read_bytes()
    try:
        path.write_bytes(old.replace(b"target: 1k", b"target: 1.05k"))
        counts = job_counts(world.snakemake("-n"))
    finally:
        path.write_bytes(old)
    assert counts == {"simulate": 2, "score": 2, **REST}


@pytest.mark.slow
def test_an_ngspice_upgrade_reruns_simulate_and_score_never_generate(world, tmp_path):
    other = tmp_path / "libngspice.so.0"
    other.write_bytes(Path(akcli_backend.ngspice_library()).read_bytes() + b"\0")
    counts = job_counts(world.snakemake("-n", env={"AKCLI_NGSPICE": str(other)}))
    assert counts == {"simulate": 4, "score": 4, **REST}


@pytest.mark.slow
def test_nothing_changed_means_nothing_to_do(world):
    assert job_counts(world.snakemake("-n")) == {}


@pytest.mark.slow
def test_the_reports_show_tiers_and_a_design_pairs_measures_and_plot(world):
    md = (world.root / "results" / "report.md").read_text()
    assert "| tier | reference | base |" in md  # best first
    assert "| design | 2/2 (100%), clean 2 | 0/2 (0%), clean 0 |" in md
    assert "| transcription | 1/1 (100%), clean 1 | 1/1 (100%), clean 1 |" in md
    html = (world.root / "results" / "report.html").read_text()
    assert "<table id='tier-rates'>" in html and "<table id='family-rates'>" in html
    # Why pairs failed, as in report.md: the baseline's design pairs fail on function.
    classes = html.split("<table id='failure-classes'>", 1)[1].split("</table>", 1)[0]
    card = json.loads((world.root / "results" / "scorecard.json").read_text())
    function = card["models"]["base"]["failure_classes_by_tier"]["design"]["function"]
    assert function >= 1 and "<tr><td>base</td><td>design</td>" in classes
    assert f"<td>{function}</td>" in classes.split("<tr><td>base</td><td>design</td>")[1]
    assert "<th>clean</th>" in html
    pair = html.split("id='pair-reference-d03-noninverting-gain-1'", 1)[1].split("</details>")[0]
    assert "<h4>Simulation</h4>" in pair and "Nets: expected vs observed" not in pair
    assert "<td>gain_1k</td><td>11 ± 2%</td>" in pair and "class='sim-plot'><svg" in pair
    transcription = html.split("id='pair-reference-01-divider-1'", 1)[1].split("</details>")[0]
    assert "Nets: expected vs observed" in transcription
