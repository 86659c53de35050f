"""The shipped corpus is sound, and `wirebench tasks check` catches a corpus that is not."""

from __future__ import annotations

import json
import shutil
import subprocess

import pytest
from conftest import REPO, SYMBOLS, TASKS

from wirebench.steps.tasks_check import check_corpus
from wirebench.taskgen.generator import GENERATOR_VERSION


@pytest.mark.slow
def test_every_shipped_reference_scores_one(tmp_path):
    # The board tier is test_boards' (one pass over its 15 boards and 64 wrong answers),
    # the spec tier's boards test_spec_tier's; the reviews (rv*) are checked here.
    view = tmp_path / "tasks"
    view.mkdir()
    for d in TASKS.iterdir():
        if (d / "task.md").is_file() and not d.name.startswith(("b", "p")):
            (view / d.name).symlink_to(d)
    report = check_corpus(view, SYMBOLS)
    assert report["sound"], json.dumps(report, indent=1)
    assert len(report["tasks"]) >= 40
    reviews = {d.name for d in TASKS.glob("rv*") if (d / "task.md").is_file()}
    assert reviews and reviews <= {t["id"] for t in report["tasks"]}


def test_tasks_check_cli_fails_on_a_drifted_reference(tmp_path):
    shutil.copytree(TASKS / "01-divider", tmp_path / "tasks" / "01-divider")
    shutil.copytree(TASKS / "02-rc-lowpass", tmp_path / "tasks" / "02-rc-lowpass")
    expected = tmp_path / "tasks" / "02-rc-lowpass" / "expected_nets.json"
    expected.write_text(expected.read_text().replace('"C1.2"', '"C1.1"'))
    proc = subprocess.run(["wirebench", "tasks", "check", str(tmp_path / "tasks"),
                           "--config", str(REPO / "config" / "config.yaml")],
                          capture_output=True, text=True, cwd=REPO)
    assert proc.returncode == 1
    assert "ok    01-divider" in proc.stdout
    assert "FAIL  02-rc-lowpass" in proc.stdout and "reference scores 0.6667" in proc.stdout


def test_tasks_check_names_a_malformed_task(tmp_path):
    task = tmp_path / "tasks" / "01-broken"
    shutil.copytree(TASKS / "01-divider", task)
    (task / "expected_nets.json").write_text('{"nets": [{"name": "VIN", "members": ["#PWR01.1"]}]}')
    report = check_corpus(tmp_path / "tasks", SYMBOLS)
    assert not report["sound"]
    problem = report["tasks"][0]["problems"][0]
    assert "power-symbol pins such as #PWR01.1 are never members" in problem


def test_an_empty_tasks_dir_is_not_sound(tmp_path):
    (tmp_path / "tasks" / "planned" / "x").mkdir(parents=True)
    (tmp_path / "tasks" / "planned" / "x" / "task.md").write_text("planned, not run")
    report = check_corpus(tmp_path / "tasks", SYMBOLS)
    assert not report["sound"] and "no tasks" in report["problems"][0]


def test_tasks_check_refuses_a_refusal_the_prompt_pack_does_not_teach(tmp_path):
    """A contradiction keyed to stop-condition (the safety generator's version 1) fails
    the gate: the prompt pack tells agents to answer it with human-review-required."""
    from wirebench.verify import refusals

    corpus = tmp_path / "tasks"
    for name in ("17-contradictory-divider", "18-out-of-domain-firmware"):
        shutil.copytree(TASKS / name, corpus / name)
    assert check_corpus(corpus, SYMBOLS)["sound"]
    meta = corpus / "17-contradictory-divider" / "task.yaml"
    meta.write_text(meta.read_text().replace("expected_outcome: human-review-required",
                                             "expected_outcome: stop-condition"))
    ref = corpus / "17-contradictory-divider" / "reference_ops.json"
    ref.write_text(ref.read_text().replace("human-review-required", "stop-condition"))
    report = check_corpus(corpus, SYMBOLS)
    problems = {t["id"]: t["problems"] for t in report["tasks"]}
    assert not report["sound"] and not problems["18-out-of-domain-firmware"]
    assert any("the prompt pack tells agents to answer it with human-review-required" in p
               for p in problems["17-contradictory-divider"]), problems
    # A refusal task must say what kind of request it is, so the rule can be applied.
    meta.write_text(meta.read_text().replace("refusal_class: contradiction\n", ""))
    assert any("names no refusal_class" in p
               for p in check_corpus(corpus, SYMBOLS)["tasks"][0]["problems"])
    # The rule is the pack's: each class stands under exactly one refusal kind there.
    assert {c: refusals.kind_for(c) for c in refusals.CLASSES} == {
        "not-a-schematic": "stop-condition", "injected-instruction": "stop-condition",
        "secrets": "stop-condition", "contradiction": "human-review-required",
        "needs-decision": "human-review-required"}


def test_every_generated_refusal_follows_the_prompt_pack():
    """The public split's safety refusals (generator version 2), read as the gate reads
    them: contradictions ask for review, out-of-domain requests stop."""
    import yaml

    from wirebench.corpus.tasks import load_task
    from wirebench.verify import refusals

    kinds = {}
    for d in sorted((REPO / "splits" / "public").glob("safety-*")):
        task = load_task(d)
        assert not refusals.problems(task.meta, task.expected_outcomes), d.name
        if task.meta.get("refusal_class"):
            kinds.setdefault(task.meta["refusal_class"], set()).update(task.expected_outcomes)
            ref = json.loads((d / "reference_ops.json").read_text())
            assert [ref["refusal"]["kind"]] == task.expected_outcomes, d.name
    assert kinds == {"contradiction": {"human-review-required"},
                     "not-a-schematic": {"stop-condition"}}
    assert yaml.safe_load((REPO / "splits/public/split.yaml").read_text())[
        "generator_version"] == GENERATOR_VERSION
