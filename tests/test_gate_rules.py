"""The strict gate's rules on hand-written score files: which reference pairs fail it,
how floors compare, and that a failed gate leaves no output (so it runs again).
test_gates.py checks the same gate on real pairs scored through akcli."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from wirebench.reports import gate


def score(root: Path, model: str, task: str, sample: int, *, outcome="success",
          expected=("success",), passed=True):
    path = root / "runs" / model / task / str(sample) / "score.json"
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps({"task": task, "sample": sample, "outcome": outcome,
                                "expected_outcome": list(expected), "passed": passed,
                                "outcome_ok": outcome in expected}))


@pytest.fixture
def results(tmp_path) -> Path:
    score(tmp_path, "reference", "01-a", 1)
    score(tmp_path, "reference", "02-b", 1, outcome="blocked", expected=("blocked",))
    score(tmp_path, "m", "01-a", 1, outcome="invalid", passed=False)
    (tmp_path / "scorecard.json").write_text(json.dumps({"models": {
        "m": {"pass_rate": 0.5}, "n": {"pass_rate": None}, "reference": {"pass_rate": 1.0}}}))
    return tmp_path


def test_a_clean_reference_and_met_floors_pass(results):
    assert gate.check(results, {"m": 0.5, "reference": 1.0}) == {
        "schema": "wirebench.gate/1", "passed": True, "problems": [],
        "floors": {"m": 0.5, "reference": 1.0}}


def test_a_reference_pair_fails_on_a_wrong_outcome_or_a_failed_pass(results):
    score(results, "reference", "03-c", 2, outcome="invalid")
    score(results, "reference", "04-d", 1, passed=False)
    assert gate.check(results, {})["problems"] == [
        "reference pair 03-c/2 ends invalid (expected success), passed=True",
        "reference pair 04-d/1 ends success (expected success), passed=False"]
    score(results, "reference", "05-e", 1, outcome="success", expected=("blocked", "invalid"))
    assert gate.check(results, {})["problems"][-1] == (
        "reference pair 05-e/1 ends success (expected blocked or invalid), passed=True")


def test_only_the_named_reference_models_pairs_are_held_to_their_outcome(results):
    assert gate.check(results, {})["passed"]
    assert gate.check(results, {}, reference="m")["problems"] == [
        "reference pair 01-a/1 ends invalid (expected success), passed=False"]


def test_floors_fail_below_an_unknown_model_or_no_rate(results):
    assert gate.check(results, {"m": 0.51, "n": 0.0, "x": 0.1})["problems"] == [
        "model 'm' passes 0.5 < floor 0.51",
        "model 'n' passes None < floor 0.0",
        "model 'x' has a floor but is not in the run"]


def test_write_keeps_only_a_passed_gate(results, tmp_path):
    out = tmp_path / "out" / "gate.json"
    assert not gate.write(results, {"m": 0.9}, "reference", out)["passed"]
    assert not out.exists()
    report = gate.write(results, {"m": 0.5}, "reference", out)
    assert report["passed"] and json.loads(out.read_text()) == report
    assert gate.write(results, {}, "reference", None)["passed"]
    assert not gate.write(results, {}, "m", None)["passed"]
