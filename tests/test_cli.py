"""`wirebench score`: one op-list against one task, the same code path as the rules."""

from __future__ import annotations

import json
import subprocess

from conftest import REPO, TASKS, write_ops


def wirebench(*args, cwd=REPO):
    return subprocess.run(["wirebench", *args], capture_output=True, text=True, cwd=cwd)


def test_score_passes_a_reference_with_exit_zero():
    proc = wirebench("score", "--task", str(TASKS / "04-i2c-pullups"),
                     "--ops", str(TASKS / "04-i2c-pullups" / "reference_ops.json"))
    assert proc.returncode == 0
    assert proc.stdout.startswith("PASS  04-i2c-pullups  score=1.0  matched=4/4")


def test_score_json_reports_a_failure_with_exit_one(tmp_path):
    ops = write_ops(tmp_path / "ops.json", [
        {"op": "place_component", "lib_id": "Device:R", "designator": "R1", "x_mil": 1000,
         "y_mil": 1000},
        {"op": "add_net_label", "name": "VIN", "at": "R1.1"}])
    proc = wirebench("score", "--task", str(TASKS / "01-divider"), "--ops", str(ops), "--json")
    assert proc.returncode == 1
    doc = json.loads(proc.stdout)
    assert (doc["schema"], doc["matched"], doc["expected"], doc["score"]) == (
        "wirebench.score/1", 1, 3, 0.3333)


def test_score_with_a_missing_task_is_a_usage_error(tmp_path):
    proc = wirebench("score", "--task", str(tmp_path / "nope"), "--ops", str(tmp_path / "x"))
    assert proc.returncode == 2
    assert "not a task (no task.md)" in proc.stderr
