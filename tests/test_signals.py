"""Both sides of the contamination signal: it fires where a model passes the public split
clearly more often than a private one (95% Wilson intervals apart), and stays silent
where it must: equal rates, a private split passed more often, samples too small to
tell, the hand-written split, a run with no public split.

The unit half calls reports/summary.contamination on scorecards written by hand, at the
edges of the interval test; the run half is one real Snakemake run in which one model's
gap is called and two others' are not, in report.md and report.html alike.
"""

from __future__ import annotations

import json

import pytest
from conftest import Project

from wirebench.reports.summary import contamination


def _card(**models: dict[str, tuple[int, int]]) -> dict:
    """A scorecard: model -> {split: (passed, pairs)}."""
    return {"models": {m: {"by_split": {s: {"passed": p, "pairs": n,
                                            "pass_rate": round(p / n, 4)}
                                        for s, (p, n) in splits.items()}}
                       for m, splits in models.items()}}


def test_a_clear_public_gap_is_called_for_that_model_and_split_alone():
    card = _card(memorizer={"public": (20, 20), "private": (0, 20), "private-b": (19, 20)},
                 honest={"public": (10, 20), "private": (10, 20)})
    assert contamination(card, ["memorizer", "honest"]) == [
        "memorizer: 100% on the public split against 0% on private (20 and 20 pairs; "
        "the 95% intervals do not overlap): a contamination signal"]


@pytest.mark.parametrize("splits", [
    {"public": (15, 20), "private": (15, 20)},           # the same rate
    {"public": (0, 20), "private": (20, 20)},            # private passed more often
    {"public": (20, 20), "private": (17, 20)},           # a small gap: intervals overlap
    {"public": (3, 3), "private": (0, 3)},               # 100% against 0%, on 3 pairs each
    {"public": (20, 20), "hand-written": (0, 20)},       # the hand-written tasks: no split
    {"private": (0, 20), "private-b": (20, 20)},         # no public split at all
], ids=["equal", "private-higher", "small-gap", "too-few-pairs", "hand-written",
        "no-public"])
def test_the_signal_stays_silent_where_the_split_shows_no_gap(splits):
    assert contamination(_card(m=splits), ["m"]) == []


def test_the_interval_edge_four_pairs_fire_where_three_do_not():
    """100% against 0%: on 4 pairs each the 95% intervals are apart (0.51 > 0.49), on 3
    they overlap (0.44 < 0.56). A test on the rates alone would call both."""
    assert len(contamination(_card(m={"public": (4, 4), "private": (0, 4)}), ["m"])) == 1
    assert contamination(_card(m={"public": (3, 3), "private": (0, 3)}), ["m"]) == []


def test_a_model_left_out_of_the_report_is_not_called():
    card = _card(memorizer={"public": (20, 20), "private": (0, 20)})
    assert contamination(card, []) == []


# --- one real run: one model's gap is called, two others' are not --------------------------

@pytest.mark.slow
def test_a_run_calls_the_memorizers_gap_and_no_one_elses(tmp_path):
    from wirebench.taskgen.generator import generate

    split = tmp_path / "split"
    public = generate("prose", "pub", 4, split, split="public")
    private = generate("prose", "secret", 4, split, split="private")
    memories = {}
    for name, tasks in (("public-memory", public), ("private-memory", private)):
        folder = tmp_path / name
        folder.mkdir()
        for task in tasks:
            (folder / f"{task.name}.json").write_bytes(
                (task / "reference_ops.json").read_bytes())
        memories[name] = {"kind": "ops_dir", "dir": str(folder)}
    project = Project(tmp_path / "wb").configure(
        {"memorizer": memories["public-memory"],       # public 100%, private 0%: called
         "reverse": memories["private-memory"],        # public 0%, private 100%: silent
         "reference": {"kind": "reference"}},          # 100% on both: silent
        tasks_dir=split)
    project.snakemake()
    card = json.loads((project.root / "results" / "scorecard.json").read_text())
    rates = {m: (c["by_split"]["public"]["pass_rate"], c["by_split"]["private"]["pass_rate"])
             for m, c in card["models"].items()}
    assert rates == {"memorizer": (1.0, 0.0), "reverse": (0.0, 1.0), "reference": (1.0, 1.0)}
    report = (project.root / "results" / "report.md").read_text()
    html = (project.root / "results" / "report.html").read_text()
    for text in (report, html):
        assert text.count("contamination signal") == 1, "one model, one split"
    (line,) = [x for x in report.splitlines() if x.startswith("**Public against private")]
    assert "memorizer: 100% on the public split against 0% on private" in line
    assert "reverse" not in line and "reference" not in line
    called = html.split("<ul id='contamination'>")[1].split("</ul>")[0]
    assert called.count("<li>") == 1 and called.startswith("<li>memorizer: 100%")
