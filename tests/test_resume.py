"""kill -9 in the middle of a real run, then run again: nothing finished is lost or
recomputed, no agent call is repeated for a finished pair, nothing is half-written."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time

from conftest import REPO, TASKS, Project

AGENT = """
import os, shutil, sys, time
with open(sys.argv[1], "a") as fh:
    fh.write(os.environ["TASK_ID"] + "\\n")
time.sleep(0.6)
shutil.copy(os.environ["TASK_FILE"].replace("task.md", "reference_ops.json"), os.environ["OPS_OUT"])
"""


def test_kill_9_then_resume(tmp_path):
    tasks = [f"t{i:02d}" for i in range(8)]
    for i, t in enumerate(tasks):
        src = sorted(d for d in TASKS.iterdir() if (d / "task.md").is_file())[i]
        shutil.copytree(src, tmp_path / "wb" / "tasks" / t)
    (tmp_path / "agent.py").write_text(AGENT)
    calls = tmp_path / "calls.log"
    project = Project(tmp_path / "wb").configure(
        {"slow": {"kind": "command", "command": f"{sys.executable} {tmp_path / 'agent.py'} "
                  f"{calls}", "retries": 0}}, tasks_dir="tasks")
    cmd = ["snakemake", "-s", str(REPO / "Snakefile"), "-d", str(project.root), "--cores", "2"]
    run = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                           start_new_session=True)
    runs = project.root / "results" / "runs" / "slow"
    deadline = time.monotonic() + 120
    while len(list(runs.glob("*/1/score.json"))) < 3 and time.monotonic() < deadline:
        time.sleep(0.05)
    os.killpg(run.pid, signal.SIGKILL)
    run.wait()

    # What had finished when the run died: score written and not marked incomplete.
    finished = project.finished_scores("slow")
    assert 1 <= len(finished) < len(tasks), "the kill must land mid-run"
    calls_before = calls.read_text().split()

    # Snakemake keeps its lock after a kill -9; --unlock is the documented way back.
    project.snakemake("--unlock")
    project.snakemake()

    for task, (data, mtime) in finished.items():
        score = runs / task / "1" / "score.json"
        assert (score.read_bytes(), score.stat().st_mtime_ns) == (data, mtime), task
    calls_after = calls.read_text().split()
    for task in finished:
        assert calls_after.count(task) == 1, f"{task}: its agent was called again"
    assert sorted(set(calls_after)) == tasks
    assert len(calls_after) - len(calls_before) <= len(tasks) - len(finished) + 2
    assert project.summary()["passed"].all()
    leftovers = [p for p in (project.root / "results").rglob(".*")]
    assert leftovers == [], leftovers
    assert subprocess.run(["wirebench", "verify", str(project.root / "results")],
                          capture_output=True).returncode == 0
