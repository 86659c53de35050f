"""The shipped corpus is sound, and `wirebench tasks check` catches a corpus that is not."""

from __future__ import annotations

import json
import shutil
import subprocess

from conftest import REPO, SYMBOLS, TASKS

from wirebench.steps.tasks_check import check_corpus


def test_every_shipped_reference_scores_one(tmp_path):
    # The board tier is test_boards' (one pass over its 12 boards and 46 wrong answers).
    view = tmp_path / "tasks"
    view.mkdir()
    for d in TASKS.iterdir():
        if (d / "task.md").is_file() and not d.name.startswith("b"):
            (view / d.name).symlink_to(d)
    report = check_corpus(view, SYMBOLS)
    assert report["sound"], json.dumps(report, indent=1)
    assert len(report["tasks"]) >= 40


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
