"""Findings of the security review that are fixed: each test failed on the code before
its fix. (The sandbox and the other findings are still open; see the trustworthy-numbers
issue.)"""

from __future__ import annotations

import json
import math
import shutil
import subprocess

import pytest
from conftest import SYMBOLS, TASKS, Project, reference_ops

from wirebench.steps.pair import evaluate_pair

BLOCKED = TASKS / "15-edit-tie-grounds-blocked"


def run(tmp_path, ops_path, task=BLOCKED):
    return evaluate_pair(ops_path, task, SYMBOLS, tmp_path / "pair",
                         {"model": "m", "task": task.name, "sample": 1})


def test_a_refusal_by_the_rails_is_blocked_and_passes_the_task_that_expects_it(tmp_path):
    r = run(tmp_path, BLOCKED / "reference_ops.json")
    assert r["outcome"] == "blocked" and r["passed"] and r["score"] == 1.0


@pytest.mark.parametrize("junk", [
    pytest.param(lambda ops: {"protocol_version": 2, "target_format": "altium", "ops": []},
                 id="altium-envelope"),
    pytest.param(lambda ops: {"protocol_version": 2, "target_format": "kicad", "ops": [
        {"op": "place_component", "lib_id": "Device:NOPE", "designator": "R9",
         "x_mil": 1000, "y_mil": 1000}]}, id="unknown-lib-id"),
    pytest.param(lambda ops: {"protocol_version": 2, "target_format": "kicad", "ops": [
        {"op": "place_component", "lib_id": "Device:R", "designator": "R9",
         "x_mil": math.nan, "y_mil": 1000, "value": "1k"}]}, id="nan-coordinate"),
])
def test_junk_that_fails_to_draw_is_invalid_never_blocked(tmp_path, junk):
    """Finding 2: every failed draw used to count as `blocked`, so junk passed a task
    that expects the rails to refuse. Only the rails' refusal of a named-net change is
    `blocked`; anything else that fails to draw is `invalid`, with akcli's reason."""
    path = tmp_path / "junk.json"
    path.write_text(json.dumps(junk(reference_ops("15-edit-tie-grounds-blocked"))))
    r = run(tmp_path, path)
    assert r["outcome"] == "invalid", r["errors"]
    assert not r["passed"] and r["score"] == 0.0
    assert r["errors"], "the reason is recorded"


def test_a_step_sweeps_only_the_leftovers_it_makes_itself(tmp_path):
    """Finding 12: `wirebench step` deleted every hidden folder next to its output."""
    pair = tmp_path / "pair"
    keep = [pair / ".git" / "HEAD", pair / ".venv" / "x", pair / ".snakemake" / "y",
            pair / ".notes.txt"]
    gone = [pair / ".apply-abc123" / "board.kicad_sch", pair / ".validate-x" / "c.json",
            pair / ".simulate-q" / "spec.json", pair / ".validate.json.k2j3.tmp"]
    for path in keep + gone:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("x")
    proc = subprocess.run(["wirebench", "step", "validate", "--ops",
                           str(TASKS / "01-divider" / "reference_ops.json"),
                           "--out", str(pair / "validate.json")],
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    assert all(p.exists() for p in keep), [p for p in keep if not p.exists()]
    assert not any(p.exists() for p in gone)


def test_an_answer_nested_past_any_reason_is_invalid_not_an_internal_error(tmp_path):
    """Finding 14: `{"ops":` and 100,000 `[` made validate exit 70 and stop the run."""
    ops = tmp_path / "deep.json"
    ops.write_text('{"ops": ' + "[" * 100_000)
    proc = subprocess.run(["wirebench", "step", "validate", "--ops", str(ops), "--out",
                           str(tmp_path / "validate.json")], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    doc = json.loads((tmp_path / "validate.json").read_text())
    assert not doc["valid"] and "nested too deeply" in doc["errors"][0]


@pytest.mark.parametrize("folder", ["my tasks", "t$(touch PWNED)x"])
@pytest.mark.slow
def test_config_paths_reach_the_shell_quoted(tmp_path, folder):
    """Finding 18: `tasks_dir: 'my tasks'` broke every job; `t$(touch X)x` ran touch."""
    project = Project(tmp_path / "wb")
    shutil.copytree(TASKS / "01-divider", project.root / folder / "01-divider")
    project.configure({"reference": {"kind": "reference"},
                       "base": {"kind": "command", "command": "wirebench-baseline",
                                "timeout": 60}}, tasks_dir=folder)
    project.snakemake()
    assert project.summary()["passed"].all()
    assert not list(project.root.rglob("PWNED")) and not list(tmp_path.rglob("PWNED"))


def test_a_malformed_task_stops_the_run_before_any_job_and_names_its_file(tmp_path):
    """Finding 17: a bad task.yaml stopped the run midway as an internal error."""
    project = Project(tmp_path / "wb")
    for t in ("01-divider", "02-rc-lowpass"):
        shutil.copytree(TASKS / t, project.root / "tasks" / t)
    (project.root / "tasks" / "02-rc-lowpass" / "task.yaml").write_text(
        "id: 02-rc-lowpass\ncriteria:\n  - {id: x, kind: no_such_kind}\n")
    project.configure({"reference": {"kind": "reference"}}, tasks_dir="tasks")
    proc = project.snakemake(check=False)
    assert proc.returncode != 0
    assert "tasks/02-rc-lowpass/task.yaml" in proc.stderr and "no_such_kind" in proc.stderr
    assert not (project.root / "results" / "runs").exists()


def test_a_child_sheet_in_a_subfolder_is_moved_and_scored(tmp_path):
    """Finding 3: a child sheet in a subfolder was left behind, so nets failed and a
    right answer scored `blocked` 0."""
    task = tmp_path / "tasks" / "19-hierarchical-frontend"
    shutil.copytree(TASKS / task.name, task)
    for name in ("base_ops.json", "reference_ops.json"):
        path = task / name
        path.write_text(path.read_text().replace('"file": "frontend.kicad_sch"',
                                                 '"file": "sub/frontend.kicad_sch"'))
    r = evaluate_pair(task / "reference_ops.json", task, SYMBOLS, tmp_path / "pair",
                      {"model": "m", "task": task.name, "sample": 1})
    assert r["outcome"] == "success" and r["score"] == 1.0, r["errors"]
    assert (tmp_path / "pair" / "sub" / "frontend.kicad_sch").is_file()
    assert not (tmp_path / "pair" / "frontend.kicad_sch").exists()
