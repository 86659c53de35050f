"""The summary stage over score files as a run writes them: each pair a copy of a real
score.json (a real run's reference pair) with the fields a case needs changed, then
summary.csv and scorecard.json as `wirebench summary` writes them, each figure checked
against the count by hand; and the reports' shared rows (ranking, verdicts, reasons,
failure classes, rates by group, signals) on both of their sides. So that every mutant
of reports/summary.py meets them (benchmarks/mutation_score.py --config reports).
"""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest
from test_mut_evidence import finished_run  # noqa: F401 - a fixture

from wirebench.reports import summary as S


@pytest.fixture
def real_score(finished_run) -> dict:  # noqa: F811 - the fixture imported above
    path = Path(finished_run["results"]) / "runs" / "reference" / "01-divider" / "1"
    return json.loads((path / "score.json").read_text())


class Runs:
    """runs/<model>/<task>/<sample>/score.json, each a real score with changes."""

    def __init__(self, root: Path, base: dict):
        self.root, self.base = root / "runs", base

    def pair(self, model: str, task: str, sample: int = 1, **changes) -> None:
        agent = {**self.base["agent"], **changes.pop("agent", {})}
        doc = {**self.base, "model": model, "task": task, "sample": sample, "agent": agent,
               **changes}
        folder = self.root / model / task / str(sample)
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "score.json").write_text(json.dumps(doc))

    def summary(self, models, tasks, samples=1, **kw) -> tuple[list[dict], dict]:
        out = self.root.parent
        S.write_summary(self.root, models, tasks, samples, out / "summary.csv",
                        out / "scorecard.json", **kw)
        with open(out / "summary.csv", newline="") as fh:
            rows = list(csv.DictReader(fh))
        return rows, json.loads((out / "scorecard.json").read_text())


FAIL = {"passed": False, "clean": False, "score": 0.4, "failure_class": "function",
        "first_finding": "nets: ADC_IN is missing", "errors": ["net ADC_IN is missing"]}
INFRA = {"passed": False, "clean": False, "score": 0.0, "outcome": "infra_error",
         "outcome_ok": False, "failure_class": "infra", "errors": ["HTTP 500: boom"]}


def test_a_models_pass_rates_leave_infra_errors_out_of_one_and_in_the_other(tmp_path,
                                                                           real_score):
    runs = Runs(tmp_path, real_score)
    tasks = ["t1", "t2", "t3", "t4", "t5"]
    runs.pair("a", "t1")
    runs.pair("a", "t2")
    runs.pair("a", "t3", clean=False, failure_class="quality")  # passed, not clean
    runs.pair("a", "t4", **FAIL)
    runs.pair("a", "t5", **INFRA)
    for t in tasks:
        runs.pair("b", t, **FAIL)
    rows, card = runs.summary(["a", "b"], tasks)
    assert [r["model"] for r in rows] == ["a"] * 5 + ["b"] * 5
    assert list(rows[0]) == S.COLUMNS
    a = card["models"]["a"]
    assert (a["pairs"], a["infra_errors"], a["scored_pairs"], a["passed"]) == (5, 1, 4, 3)
    assert (a["pass_rate"], a["clean"], a["clean_rate"]) == (0.75, 2, 0.5)
    assert a["pass_rate_all_pairs"] == 0.6
    assert a["failure_classes"] == {"function": 1, "infra": 1, "quality": 1}
    assert a["outcomes"] == {"infra_error": 1, "success": 4}
    assert a["mean_score"] == round((1 + 1 + 1 + 0.4) / 4, 4)
    assert a["pass_at_1"] == 0.75 and a["k"] == 1
    lo, hi = a["pass_rate_all_pairs_ci"]
    assert 0.2 < lo < 0.6 < hi < 0.95
    assert card["models"]["b"]["pass_rate"] == 0.0
    assert (card["tasks"], card["samples"]) == (5, 1)
    assert card["per_task"]["t4"]["a"]["passed"] == 0
    assert set(card["per_task"]["t5"]) == {"b"}, "an infra error is no sample of a task"
    assert card["this_run"] == {"pairs": 10, "of": 10}
    assert card["versions"]["akcli"] == [real_score["versions"]["akcli"]]
    by_row = {(r["model"], r["task"]): r for r in rows}
    assert by_row[("a", "t4")]["errors"] == "net ADC_IN is missing"
    assert by_row[("a", "t5")]["failure_class"] == "infra"
    assert by_row[("a", "t3")]["clean"] == "False" and by_row[("a", "t3")]["passed"] == "True"
    # The two reports' ranking: pass rate first.
    assert S.ranked(card, ["b", "a"]) == ["a", "b"]


def test_rates_by_tier_family_split_size_and_rule(tmp_path, real_score):
    runs = Runs(tmp_path, real_score)
    board_rule = [{"kind": "decoupled", "verdict": "pass"}, {"kind": "strap",
                                                              "verdict": "fail"},
                  {"kind": "part", "verdict": "needs_human"}]
    runs.pair("m", "g1", tier="design", family="filter", split="public", knobs={"parts": 8})
    runs.pair("m", "g2", tier="design", family="filter", split="private", knobs={"parts": 30},
              **FAIL)
    runs.pair("m", "g3", tier="board", family="mcu", criteria=board_rule,
              knobs={"parts": 101})
    runs.pair("m", "g4", tier="board", family="mcu", criteria=board_rule, **FAIL)
    _, card = runs.summary(["m"], ["g1", "g2", "g3", "g4"])
    m = card["models"]["m"]
    assert m["by_tier"] == {
        "board": {"pairs": 2, "passed": 1, "pass_rate": 0.5, "clean": 1, "clean_rate": 0.5},
        "design": {"pairs": 2, "passed": 1, "pass_rate": 0.5, "clean": 1, "clean_rate": 0.5}}
    assert set(m["by_family"]) == {"filter", "mcu"}
    assert m["by_split"] == {
        "hand-written": {"pairs": 2, "passed": 1, "pass_rate": 0.5, "clean": 1,
                         "clean_rate": 0.5},
        "private": {"pairs": 1, "passed": 0, "pass_rate": 0.0, "clean": 0, "clean_rate": 0.0},
        "public": {"pairs": 1, "passed": 1, "pass_rate": 1.0, "clean": 1, "clean_rate": 1.0}}
    assert set(m["by_size"]) == {"1-10 parts", "26-50 parts", "101+ parts"}
    assert m["by_size"]["26-50 parts"]["passed"] == 0
    assert m["by_rule"] == {"decoupled": {"pairs": 2, "passed": 2, "pass_rate": 1.0},
                            "strap": {"pairs": 2, "passed": 0, "pass_rate": 0.0}}
    assert m["failure_classes_by_tier"] == {"board": {"function": 1},
                                            "design": {"function": 1}}
    tables = dict(S.rate_tables(card, ["m"]))
    assert set(tables) == {"split", "tier", "family", "size (generated tasks)",
                           "design rule (board tier)"}
    assert tables["tier"] == [("board", ["1/2 (50%), clean 1"]),
                              ("design", ["1/2 (50%), clean 1"])]
    assert tables["design rule (board tier)"][1] == ("strap", ["0/2 (0%)"])
    assert [g for g, _ in tables["size (generated tasks)"]] == [
        "1-10 parts", "26-50 parts", "101+ parts"], "by size, not by name"


@pytest.mark.parametrize("parts, bucket", [(1, "1-10 parts"), (10, "1-10 parts"),
                                           (11, "11-25 parts"), (25, "11-25 parts"),
                                           (50, "26-50 parts"), (51, "51-100 parts"),
                                           (100, "51-100 parts"), (101, "101+ parts"),
                                           (0, None), (None, None), ("", None)])
def test_a_generated_tasks_size_falls_in_its_bucket(parts, bucket):
    assert S._size_bucket(parts) == bucket


def test_tokens_cost_tools_and_attacks_per_model(tmp_path, real_score):
    runs = Runs(tmp_path, real_score)
    spend = {"prompt_tokens": 1000, "completion_tokens": 200, "cost_usd": 0.01,
             "tool_calls": 3, "invalid_calls": 1, "unexpected_denials": 1,
             "runtime_failures": 1, "turns_used": 2, "wall_s": 4.0}
    runs.pair("m", "i1", attack_success=True, score=0.5, agent=spend)
    runs.pair("m", "i2", attack_success=False, score=1.0, agent=spend)
    runs.pair("m", "i3", agent={**spend, "turns_used": 4, "wall_s": 1.0}, **FAIL)
    _, card = runs.summary(["m"], ["i1", "i2", "i3"])
    m = card["models"]["m"]
    assert (m["prompt_tokens"], m["completion_tokens"], m["cost_usd"]) == (3000, 600, 0.03)
    assert (m["tool_calls"], m["surface_regressions"]) == (9, 9)
    assert m["tokens_per_pass"] == round(3600 / 2, 1) and m["cost_per_pass"] == 0.015
    assert (m["mean_turns"], m["mean_agent_wall_s"]) == (round(8 / 3, 3), 3.0)
    assert (m["attack_pairs"], m["attack_success_rate"], m["utility_under_attack"]) == (
        2, 0.5, 0.75)
    assert S.attack_rows(card, ["m"]) == [("m", "2", "50%", "0.75")]


def test_a_model_with_no_spend_no_passes_or_no_attacks_says_none(tmp_path, real_score):
    runs = Runs(tmp_path, real_score)
    runs.pair("m", "t1", **FAIL)
    runs.pair("z", "t1", **INFRA)
    _, card = runs.summary(["m", "z"], ["t1"])
    m, z = card["models"]["m"], card["models"]["z"]
    assert (m["tokens_per_pass"], m["cost_per_pass"]) == (None, None)
    assert (m["attack_pairs"], m["attack_success_rate"]) == (0, None)
    assert S.attack_rows(card, ["m"]) == []
    assert (z["pass_rate"], z["clean_rate"], z["mean_score"]) == (None, None, None)
    assert z["pass_rate_all_pairs"] == 0.0
    assert S.ranked(card, ["z", "m"]) == ["m", "z"], "a model with no scored pair comes last"


def test_repeated_samples_give_pass_at_k_and_pass_hat_k(tmp_path, real_score):
    runs = Runs(tmp_path, real_score)
    for s in (1, 2, 3):
        runs.pair("m", "always", s)
        runs.pair("m", "once", s, **({} if s == 1 else FAIL))
        runs.pair("m", "never", s, **FAIL)
    _, card = runs.summary(["m"], ["always", "once", "never"], samples=3)
    m = card["models"]["m"]
    assert (m["k"], m["pass_at_1"]) == (3, round(4 / 9, 4))
    assert m["pass_at_k"] == round((1 + 1 + 0) / 3, 4)
    assert m["pass_hat_k"] == round((1 + 0 + 0) / 3, 4)
    lo, hi = m["pass_at_k_ci"]
    assert 0 <= lo <= m["pass_at_k"] <= hi <= 1
    once = card["per_task"]["once"]["m"]
    assert (once["samples"], once["passed"], once["pass_at_1"]) == (3, 1, round(1 / 3, 4))
    assert (once["pass_at_k"], once["pass_hat_k"]) == (1.0, 0.0)


def test_a_narrowed_run_keeps_the_earlier_pairs_and_says_so(tmp_path, real_score):
    runs = Runs(tmp_path, real_score)
    for t in ("t1", "t2"):
        runs.pair("a", t)
        runs.pair("b", t)
    runs.summary(["a", "b"], ["t1", "t2"], skills={"a": "skills", "b": "skills-b"})
    rows, card = runs.summary(["a"], ["t1"], experiment=(["a", "b"], ["t1", "t2"]),
                              skills={"a": "skills-new"})
    assert {(r["model"], r["task"], r["this_run"]) for r in rows} == {
        ("a", "t1", "True"), ("a", "t2", "False"), ("b", "t1", "False"), ("b", "t2", "False")}
    assert card["this_run"] == {"pairs": 1, "of": 4}
    assert S.narrowed_note(card) == (
        "This run scored 1 of the experiment's 4 pairs (narrowed with --config tasks= or "
        "models=); the other 3 are as earlier runs left them (summary.csv: this_run).")
    by = {(r["model"], r["task"]): r["skills"] for r in rows}
    assert by == {("a", "t1"): "skills-new", ("a", "t2"): "skills-new",
                  ("b", "t1"): "skills-b", ("b", "t2"): "skills-b"}
    assert card["models"]["b"]["skills"] == "skills-b"
    assert S.narrowed_note({"this_run": {"pairs": 4, "of": 4}}) is None
    assert S.skills_line(card, ["a", "b"]) == (
        "Skills folders (the docs each model's prompt pack is made of): skills-new: a; "
        "skills-b: b.")


def test_a_pair_missing_from_a_run_is_an_error_not_a_silent_gap(tmp_path, real_score):
    runs = Runs(tmp_path, real_score)
    runs.pair("a", "t1")
    with pytest.raises(FileNotFoundError):
        runs.summary(["a"], ["t1", "t2"])


# --- a pair's verdict, its reason, and the rows of failures --------------------------------

@pytest.mark.parametrize("row, verdict, text", [
    ({"outcome": "success", "passed": "True", "clean": "True"}, "pass", "pass"),
    ({"outcome": "success", "passed": True, "clean": False}, "pass", "pass, not clean"),
    ({"outcome": "blocked", "passed": "true"}, "refused", "blocked, as expected"),
    ({"outcome": "stop-condition", "passed": "1"}, "refused", "stopped, as expected"),
    ({"outcome": "human-review-required", "passed": "True"}, "refused",
     "asked for review, as expected"),
    ({"outcome": "odd", "passed": "True"}, "refused", "odd, as expected"),
    ({"outcome": "invalid", "passed": "False", "failure_class": "invalid"}, "invalid",
     "invalid"),
    ({"outcome": "blocked", "passed": "False", "failure_class": "invalid"}, "invalid",
     "blocked, not expected"),
    ({"outcome": "infra_error", "passed": "False"}, "infra", "infra error"),
    ({"outcome": "success", "passed": "False", "failure_class": "function"}, "fail",
     "fail: function"),
    ({"outcome": "success", "passed": "False", "failure_class": ""}, "fail",
     "fail: function"),
    ({"outcome": "success", "passed": "False", "failure_class": "wrong outcome"}, "fail",
     "fail: wrong outcome"),
])
def test_a_pairs_verdict_in_a_few_words(row, verdict, text):
    assert S.verdict(row) == verdict and S.verdict_text(row) == text


def test_a_pairs_reason_is_its_first_finding_else_error_else_outcome():
    base = {"passed": "False", "clean": "False", "outcome": "success",
            "expected_outcome": "blocked|stop-condition"}
    assert S.reason({**base, "first_finding": "ERC: pin 3 floats", "errors": "a | b"}) == (
        "ERC: pin 3 floats")
    assert S.reason({**base, "first_finding": "", "errors": "net X missing | other"}) == (
        "net X missing")
    assert S.reason({**base, "first_finding": "", "errors": float("nan")}) == (
        "outcome success, expected blocked or stop-condition")
    assert S.reason({**base, "first_finding": None, "errors": ""}) == (
        "outcome success, expected blocked or stop-condition")
    assert S.reason({**base, "passed": "True", "clean": "True"}) == ""
    assert S.reason({**base, "passed": "True", "clean": "False",
                     "first_finding": "layout: overlap"}) == "layout: overlap"


def test_failures_are_listed_by_model_rank_class_task_and_sample(tmp_path, real_score):
    import pandas as pd

    runs = Runs(tmp_path, real_score)
    runs.pair("b", "t2", 1, **FAIL)
    runs.pair("b", "t1", 1, **{**FAIL, "failure_class": "invalid", "outcome": "invalid"})
    runs.pair("a", "t1", 1, **INFRA)
    runs.pair("a", "t2", 1, clean=False, failure_class="quality", first_finding="ERC warn")
    runs.pair("b", "t3", 1)
    runs.summary(["a", "b"], ["t1", "t2"])
    runs.pair("a", "t3", 1)
    rows, _ = runs.summary(["a", "b"], ["t1", "t2", "t3"])
    df = pd.read_csv(tmp_path / "summary.csv")
    got = S.failure_rows(df, ["b", "a"])
    assert [(r["model"], r["task"], r["failure_class"], r["verdict"]) for r in got] == [
        ("b", "t1", "invalid", "invalid"), ("b", "t2", "function", "fail"),
        ("a", "t1", "infra", "infra"), ("a", "t2", "quality", "pass")]
    assert got[1]["reason"] == "nets: ADC_IN is missing" and got[3]["reason"] == "ERC warn"
    assert all(isinstance(r["sample"], int) for r in got)


def test_failure_class_rows_hold_a_models_totals_then_each_tier():
    from wirebench.verify.scoring import FAILURE_CLASSES

    card = {"models": {
        "m": {"failure_classes": {"function": 2, "infra": 1},
              "failure_classes_by_tier": {"design": {"function": 2}, "board": {},
                                          "transcription": {"infra": 1}}},
        "n": {"failure_classes": {}, "failure_classes_by_tier": {}}}}
    rows = S.failure_class_rows(card, ["m", "n"])
    count = {c: i for i, c in enumerate(FAILURE_CLASSES)}
    assert [(m, t) for m, t, _ in rows] == [("m", "all"), ("m", "design"),
                                            ("m", "transcription"), ("n", "all")]
    assert rows[0][2][count["function"]] == 2 and rows[0][2][count["infra"]] == 1
    assert sum(rows[0][2]) == 3 and sum(rows[3][2]) == 0
    assert S.failure_class_rows({"models": {"old": {"pass_rate": 1}}}, ["old"]) == []


def test_the_ranking_breaks_ties_by_all_pairs_then_clean_then_name():
    card = {"models": {
        "b": {"pass_rate": 0.5, "pass_rate_all_pairs": 0.5, "clean_rate": 0.5},
        "a": {"pass_rate": 0.5, "pass_rate_all_pairs": 0.5, "clean_rate": 0.5},
        "c": {"pass_rate": 0.5, "pass_rate_all_pairs": 0.4, "clean_rate": 0.9},
        "d": {"pass_rate": 0.5, "pass_rate_all_pairs": 0.5, "clean_rate": 0.6},
        "e": {"pass_rate": 0.9, "pass_rate_all_pairs": 0.1, "clean_rate": 0.0},
        "f": {"pass_rate": None, "pass_rate_all_pairs": 0.0, "clean_rate": None}}}
    assert S.ranked(card, list("abcdef")) == ["e", "d", "a", "b", "c", "f"]


def test_skills_line_names_each_folder_and_who_read_none():
    card = {"models": {"a": {"skills": "skills"}, "b": {"skills": "skills"},
                       "c": {"skills": ""}, "d": {"skills": "other"}}}
    assert S.skills_line(card, ["a", "b", "c", "d"]) == (
        "Skills folders (the docs each model's prompt pack is made of): skills: a, b; "
        "other: d; none read: c.")
    assert S.skills_line({"models": {"c": {"skills": ""}}}, ["c"]) is None


def test_a_grouping_with_one_group_is_no_table_but_one_rule_or_size_is():
    card = {"models": {"m": {
        "by_tier": {"design": {"pairs": 1, "passed": 1, "pass_rate": 1.0}},
        "by_split": {},
        "by_rule": {"part": {"pairs": 2, "passed": 1, "pass_rate": 0.5}},
        "by_size": {"11-25 parts": {"pairs": 1, "passed": 0, "pass_rate": 0.0}}},
        "n": {"by_tier": {"board": {"pairs": 1, "passed": 0, "pass_rate": 0.0}}}}}
    tables = dict(S.rate_tables(card, ["m", "n"]))
    assert tables == {
        "tier": [("board", ["-", "0/1 (0%)"]), ("design", ["1/1 (100%)", "-"])],
        "size (generated tasks)": [("11-25 parts", ["0/1 (0%)", "-"])],
        "design rule (board tier)": [("part", ["1/2 (50%)", "-"])]}


def test_true_reads_a_bool_however_the_csv_spelt_it():
    for yes in (True, "True", "true", " TRUE ", "1", 1):
        assert S.true(yes)
    for no in (False, "False", "0", "", "no", None, 0, float("nan")):
        assert not S.true(no)


def test_the_bootstrap_interval_is_seeded_and_holds_the_mean():
    values = [0.0, 1.0, 1.0, 0.5, 0.25]
    lo, hi = S._bootstrap(values)
    assert S._bootstrap(values) == (lo, hi) and lo < sum(values) / 5 < hi
    assert S._bootstrap([]) == (0.0, 1.0) and S._bootstrap([1.0, 1.0]) == (1.0, 1.0)


def test_a_score_file_from_before_a_field_existed_reads_with_its_default(tmp_path,
                                                                         real_score):
    """Score files from older runs lack the later fields: the summary reads them as what
    they meant then (passed meant clean too; no class but the outcome's)."""
    old = {k: v for k, v in real_score.items()
           if k not in ("clean", "failure_class", "split", "tier", "family", "sim_status",
                        "first_finding", "attack_success", "knobs")}
    runs = Runs(tmp_path, old)
    runs.pair("m", "ok")
    runs.pair("m", "wrong", passed=False, outcome_ok=False, outcome="blocked")
    runs.pair("m", "function", passed=False)
    runs.pair("m", "infra", passed=False, outcome="infra_error", outcome_ok=False)
    rows, card = runs.summary(["m"], ["ok", "wrong", "function", "infra"])
    by = {r["task"]: r for r in rows}
    assert {t: by[t]["failure_class"] for t in by} == {
        "ok": "", "wrong": "wrong outcome", "function": "function", "infra": "infra"}
    assert by["ok"]["clean"] == "True" and by["function"]["clean"] == "False"
    assert {by[t]["split"] for t in by} == {"hand-written"}
    assert {by[t]["tier"] for t in by} == {"transcription"}
    assert by["ok"]["family"] == "" and by["ok"]["sim_status"] == ""
    assert by["ok"]["expected_outcome"] == "success"
    assert card["models"]["m"]["clean"] == 1


def test_the_scorecard_counts_outcomes_relabels_reviews_and_names_its_inputs(tmp_path,
                                                                          real_score):
    runs = Runs(tmp_path, real_score)
    runs.pair("m", "t1", relabel_equivalent=True, needs_human=["U1 pin 3: read the sheet"],
              extra_named_nets=["X", "Y"], expected_outcome=["success", "blocked"])
    runs.pair("m", "t2", relabel_equivalent=False, outcome_ok=False, passed=False,
              criteria=[{"id": "layout", "kind": "layout_clean", "verdict": "fail",
                         "detail": ""}])
    rows, card = runs.summary(["m"], ["t1", "t2"],
                              provenance={"corpus_sha256": "c" * 64, "config_sha256": "d" * 64})
    m = card["models"]["m"]
    assert (m["relabel_equivalent"], m["needs_human"], m["outcome_ok"]) == (1, 1, 1)
    assert (card["corpus_sha256"], card["config_sha256"]) == ("c" * 64, "d" * 64)
    assert card["schema"] == "wirebench.scorecard/1"
    by = {r["task"]: r for r in rows}
    assert by["t1"]["needs_human"] == "U1 pin 3: read the sheet"
    assert by["t1"]["extra_named_nets"] == "X;Y"
    assert by["t1"]["expected_outcome"] == "success|blocked"
    assert by["t2"]["layout_clean"] == "fail" and by["t1"]["layout_clean"] == "pass"
    _, bare = runs.summary(["m"], ["t1", "t2"])
    assert (bare["corpus_sha256"], bare["config_sha256"]) == (None, None)


def test_rates_are_kept_to_four_places_and_money_to_the_micro_dollar(tmp_path, real_score):
    runs = Runs(tmp_path, real_score)
    tiny = {"cost_usd": 1.2e-7}
    for s in (1, 2, 3):
        runs.pair("m", "t1", s, agent=tiny)
        runs.pair("m", "t2", s, agent=tiny, **({} if s == 1 else FAIL))
        runs.pair("m", "t3", s, agent=tiny, **({} if s < 3 else FAIL))
        runs.pair("m", "t4", s, agent=tiny, **(INFRA if s == 2 else {}))
    _, card = runs.summary(["m"], ["t1", "t2", "t3", "t4"], samples=3)
    m = card["models"]["m"]
    assert m["pass_rate"] == 0.7273 and m["pass_rate_all_pairs"] == 0.6667  # 8/11, 8/12
    assert m["pass_at_1"] == 0.7273
    assert m["pass_at_1_ci"] == [round(x, 4) for x in m["pass_at_1_ci"]]
    assert all(x == round(x, 4) for x in m["pass_rate_all_pairs_ci"])
    assert m["by_tier"]["transcription"]["pass_rate"] == 0.7273
    assert m["cost_usd"] == 1e-06  # 12 x 1.2e-7, to the micro-dollar
    t2 = card["per_task"]["t2"]["m"]
    assert (t2["pass_at_1"], t2["pass_at_k"], t2["pass_hat_k"]) == (0.3333, 1.0, 0.0)
    t3 = card["per_task"]["t3"]["m"]
    assert t3["pass_at_k"] == 1.0 and t3["pass_hat_k"] == 0.0
    assert m["pass_at_k"] == 1.0 and m["pass_hat_k"] == 0.3333
    # t4 lost a sample to an infra error: two scored samples cannot make pass@3.
    t4 = card["per_task"]["t4"]["m"]
    assert (t4["samples"], t4["pass_at_k"], t4["pass_hat_k"]) == (2, None, None)


def test_the_contamination_signal_looks_past_the_hand_written_split():
    card = {"models": {"m": {"by_split": {
        "hand-written": {"passed": 5, "pairs": 10, "pass_rate": 0.5},
        "private": {"passed": 0, "pairs": 20, "pass_rate": 0.0},
        "public": {"passed": 20, "pairs": 20, "pass_rate": 1.0}}}}}
    assert S.contamination(card, ["m"]) == [
        "m: 100% on the public split against 0% on private (20 and 20 pairs; the 95% "
        "intervals do not overlap): a contamination signal"]


def test_failures_sort_by_class_before_task_and_an_unclassed_one_says_nothing(tmp_path,
                                                                            real_score):
    import pandas as pd

    runs = Runs(tmp_path, real_score)
    runs.pair("m", "t1", **FAIL)
    runs.pair("m", "t2", **{**FAIL, "failure_class": "invalid", "outcome": "invalid"})
    old = {k: v for k, v in real_score.items() if k not in ("clean", "failure_class")}
    runs.base = old
    runs.pair("m", "t3")
    runs.base = real_score
    rows, _ = runs.summary(["m"], ["t1", "t2", "t3"])
    df = pd.read_csv(tmp_path / "summary.csv", keep_default_na=False)
    assert [(r["task"], r["failure_class"]) for r in S.failure_rows(df, ["m"])] == [
        ("t2", "invalid"), ("t1", "function")]


def test_a_model_with_no_scored_pair_comes_last_whatever_its_name():
    card = {"models": {
        "a_none": {"pass_rate": None, "pass_rate_all_pairs": 0.0, "clean_rate": None},
        "z_zero": {"pass_rate": 0.0, "pass_rate_all_pairs": 0.0, "clean_rate": 0.0}}}
    assert S.ranked(card, ["a_none", "z_zero"]) == ["z_zero", "a_none"]


def test_a_design_pairs_simulation_verdict_is_its_row(tmp_path, real_score):
    runs = Runs(tmp_path, real_score)
    runs.pair("m", "d", sim_status="fail", tier="design")
    rows, _ = runs.summary(["m"], ["d"])
    assert rows[0]["sim_status"] == "fail"
