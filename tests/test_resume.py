"""kill -9 in the middle of a real run, then run again: nothing finished is lost or
recomputed, no agent call is repeated for a finished pair, nothing is half-written."""

from __future__ import annotations

import http.server
import os
import shutil
import signal
import subprocess
import sys
import threading
import time

import pytest
from conftest import REPO, TASKS, Project

from wirebench.steps.batch import read_record

# The agent runs sandboxed: it reports each call to a counter on 127.0.0.1 (it may use
# the network) and reads its answer from the one folder its entry exposes.
AGENT = """
import os, shutil, sys, time, urllib.request
urllib.request.urlopen(sys.argv[1] + os.environ["TASK_ID"]).read()
time.sleep(0.6)
shutil.copy(os.path.join(sys.argv[2], os.environ["TASK_ID"] + ".json"), os.environ["OPS_OUT"])
"""


# Each step's files, as its batch's record vouches for them.
RECORDED = {"validate": ["validate.json"], "apply": ["board.kicad_sch", "board.svg", "apply.json"],
            "nets": ["nets.json"], "score": ["score.json", "trace.json"]}


class _Counter(http.server.BaseHTTPRequestHandler):
    calls: list[str] = []

    def do_GET(self):  # noqa: N802 - the http.server API
        self.calls.append(self.path.strip("/"))
        self.send_response(200)
        self.end_headers()

    def log_message(self, *_):
        pass


@pytest.mark.slow
def test_kill_9_then_resume(tmp_path):
    tasks = [f"t{i:02d}" for i in range(8)]
    answers = tmp_path / "answers"
    answers.mkdir()
    for i, t in enumerate(tasks):
        src = sorted(d for d in TASKS.iterdir() if (d / "task.md").is_file())[i]
        shutil.copytree(src, tmp_path / "wb" / "tasks" / t)
        shutil.copy(src / "reference_ops.json", answers / f"{t}.json")
    (tmp_path / "agent.py").write_text(AGENT)
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Counter)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        _kill_and_resume(tmp_path, tasks, answers, f"http://127.0.0.1:{server.server_port}/")
    finally:
        server.shutdown()
        server.server_close()


def _kill_and_resume(tmp_path, tasks, answers, counter_url):
    calls = _Counter.calls
    project = Project(tmp_path / "wb").configure(
        {"slow": {"kind": "command", "command": f"{sys.executable} {tmp_path / 'agent.py'} "
                  f"{counter_url} {answers}", "retries": 0,
                  "expose": [str(tmp_path / "agent.py"), str(answers)]}}, tasks_dir="tasks",
        batch=3)
    cmd = ["snakemake", "-s", str(REPO / "Snakefile"), "-d", str(project.root), "--cores", "2"]
    run = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                           start_new_session=True)
    runs = project.root / "results" / "runs" / "slow"
    deadline = time.monotonic() + 120
    # Until a batch of scores is finished (Snakemake no longer marks it incomplete).
    while not project.finished_scores("slow") and time.monotonic() < deadline:
        time.sleep(0.05)
    os.killpg(run.pid, signal.SIGKILL)
    run.wait()
    # Every agent dies with its step: none is left running, and billing, after the kill.
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline and subprocess.run(
            ["pgrep", "-f", str(tmp_path / "agent.py")], capture_output=True).stdout:
        time.sleep(0.1)
    left = subprocess.run(["pgrep", "-af", str(tmp_path / "agent.py")], capture_output=True,
                          text=True).stdout
    assert left == "", f"agents outlived their steps: {left}"

    # What had finished when the run died: score written and not marked incomplete.
    finished = project.finished_scores("slow")
    assert 1 <= len(finished) < len(tasks), "the kill must land mid-run"
    calls_before = list(calls)

    # Within a batch cut short, the pairs its record names had finished: they are kept too.
    recorded, done = {}, set()
    for record in (project.root / "results" / "batches" / "slow").glob("*/*.json"):
        for pair in read_record(record):
            done.add((record.stem, pair))
            for name in RECORDED[record.stem]:
                path = project.root / "results" / "runs" / pair / name
                recorded[path] = path.read_bytes()

    # Snakemake keeps its lock after a kill -9; --unlock is the documented way back.
    project.snakemake("--unlock")
    resumed = time.time()
    project.snakemake()

    for task, (data, mtime) in finished.items():
        score = runs / task / "1" / "score.json"
        assert (score.read_bytes(), score.stat().st_mtime_ns) == (data, mtime), task
    # Their bytes, and no step redone for them (Snakemake touches a rerun job's outputs).
    for path, data in recorded.items():
        assert path.read_bytes() == data, path
    assert any(p.name == "score.json" for p in recorded)
    redone = {(log.stem, line[3:]) for log in (project.root / "results" / "logs").rglob("*.log")
              if log.stat().st_mtime > resumed
              for line in log.read_text().splitlines() if line.startswith("== ")}
    assert done and not redone & done, redone & done
    calls_after = list(calls)
    for task in finished:
        assert calls_after.count(task) == 1, f"{task}: its agent was called again"
    assert sorted(set(calls_after)) == tasks
    assert len(calls_after) - len(calls_before) <= len(tasks) - len(finished) + 2
    assert project.summary()["passed"].all()
    leftovers = [p for p in (project.root / "results").rglob(".*")]
    assert leftovers == [], leftovers
    assert subprocess.run(["wirebench", "verify", str(project.root / "results")],
                          capture_output=True).returncode == 0
