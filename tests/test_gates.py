"""The numbers a gate decides on, against values worked out by hand: the strict gate's
reference branch and floors, and compare's exact McNemar p on a real regression.

Pairs are real: every one is scored through validate, apply (akcli), nets and score.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import SYMBOLS, TASKS

from wirebench.reports import compare, gate
from wirebench.reports.summary import write_summary
from wirebench.steps.pair import evaluate_pair

TASK_IDS = ["01-divider", "02-rc-lowpass", "03-pi-filter", "04-i2c-pullups"]


@pytest.fixture(scope="module")
def results(tmp_path_factory) -> Path:
    """`a` passes all four tasks; `b` answers three with nothing; `reference` misses one."""
    root = tmp_path_factory.mktemp("gates") / "results"
    empty = root.parent / "empty.json"
    empty.write_text("")
    answers = {
        "a": dict.fromkeys(TASK_IDS, None),
        "b": {t: (None if t == TASK_IDS[0] else empty) for t in TASK_IDS},
        "reference": {t: (empty if t == TASK_IDS[1] else None) for t in TASK_IDS},
    }
    for model, by_task in answers.items():
        for task, ops in by_task.items():
            evaluate_pair(ops or TASKS / task / "reference_ops.json", TASKS / task, SYMBOLS,
                          root / "runs" / model / task / "1",
                          {"model": model, "task": task, "sample": 1})
    write_summary(root / "runs", sorted(answers), TASK_IDS, 1, root / "summary.csv",
                  root / "scorecard.json")
    return root


def test_the_gate_fails_a_reference_pair_that_misses_its_outcome(results):
    report = gate.check(results, {})
    assert not report["passed"]
    assert report["problems"] == [
        f"reference pair {TASK_IDS[1]}/1 ends invalid (expected success), passed=False"]


def test_the_gate_holds_each_model_to_its_floor(results):
    assert gate.check(results, {"a": 1.0}, reference="a")["passed"]
    report = gate.check(results, {"a": 1.0, "b": 0.5}, reference="a")
    assert report["problems"] == ["model 'b' passes 0.25 < floor 0.5"]
    assert gate.check(results, {"nobody": 0.1}, reference="a")["problems"] == [
        "model 'nobody' has a floor but is not in the run"]


def test_compare_gives_the_exact_mcnemar_p_of_three_regressions(results):
    """a -> b: three regressions, no fix. Under no change each discordant pair is a fair
    coin, so p = 2 * P(X <= 0), X ~ Binomial(3, 1/2) = 2/8 = 0.25."""
    report = compare.run(results, None, ["a", "b"])
    assert (len(report["regressions"]), len(report["fixes"]), report["pairs"]) == (3, 0, 4)
    assert report["mcnemar_p"] == 0.25
    assert (report["pass_rate_a"], report["pass_rate_b"], report["delta"]) == (1.0, 0.25, -0.75)
    back = compare.run(results, None, ["b", "a"])
    assert (len(back["fixes"]), back["mcnemar_p"]) == (3, 0.25)
