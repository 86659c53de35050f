"""The same workflow on a real single-node Slurm (and a Kubernetes profile dry run).

The Slurm tests start Slurm with scripts/slurm-single-node.sh (Debian's slurm-wlm and
munge). They are skipped, with the reason, only where this OS cannot run slurmd: not
root, or neither Slurm nor apt-get to install it.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import time

import pytest
from conftest import REPO, Project
from test_reruns import job_counts

FAST_POLLING = ["--slurm-init-seconds-before-status-checks", "1",
                "--seconds-between-status-checks", "1", "--latency-wait", "5"]
MODELS = {"reference": {"kind": "reference"},
          "baseline": {"kind": "command", "command": "wirebench-baseline"}}
TASK_IDS = ["01-divider", "07-arrange-safe-blocks"]
# One Slurm for the session (conftest's `slurm`): all its tests on one pytest-xdist worker,
# so that two workers never install or stop it under each other.
pytestmark = pytest.mark.xdist_group("slurm")
COMPARED = ["model", "task", "sample", "outcome", "expected_outcome", "outcome_ok", "valid",
            "applied", "score", "passed", "matched", "expected", "extra_named_nets",
            "relabel_equivalent", "needs_human", "turns", "attempts", "errors"]


def on_slurm(project: Project, *args, check=True):
    return project.snakemake("--workflow-profile", str(REPO / "profiles" / "slurm"),
                             *FAST_POLLING, *args, check=check)


def queued() -> list[str]:
    """This user's Slurm jobs still pending or running."""
    proc = subprocess.run(["squeue", "--me", "-h", "-o", "%i"], capture_output=True, text=True,
                          check=True)
    return proc.stdout.split()


@pytest.mark.slow
def test_slurm_gives_the_local_summary_pair_for_pair(slurm, tmp_path):
    local = Project(tmp_path / "local").configure(MODELS, tasks=TASK_IDS)
    local.snakemake()
    cluster = Project(tmp_path / "slurm").configure(MODELS, tasks=TASK_IDS)
    proc = on_slurm(cluster)
    assert "slurm" in proc.stderr.lower()
    a = local.summary()[COMPARED].sort_values(["model", "task"]).reset_index(drop=True)
    b = cluster.summary()[COMPARED].sort_values(["model", "task"]).reset_index(drop=True)
    assert a.equals(b), (a.compare(b))
    # Each batch's steps ran as one Slurm job (group "evaluate").
    log = (cluster.root / ".snakemake" / "log")
    text = "".join(p.read_text() for p in log.glob("*.log"))
    assert "Group job evaluate" in text


@pytest.mark.slow
def test_killing_the_client_keeps_finished_pairs(slurm, tmp_path):
    tasks = ["01-divider", "02-rc-lowpass", "03-pi-filter", "04-i2c-pullups"]
    # A batch of one pair: a Slurm job per pair's steps, so the kill can land between.
    project = Project(tmp_path / "wb").configure({"reference": {"kind": "reference"}},
                                                 tasks=tasks, batch=1)
    cmd = ["snakemake", "-s", str(REPO / "Snakefile"), "-d", str(project.root), "--cores", "2",
           "--workflow-profile", str(REPO / "profiles" / "slurm"), *FAST_POLLING]
    client = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                              start_new_session=True)
    runs = project.root / "results" / "runs" / "reference"

    # Kill the client once it has recorded a pair as finished. Its Slurm jobs run on, as
    # they would on a real cluster; the documented way back is to let them leave the queue
    # (they finish their pairs), then --unlock and run again.
    deadline = time.monotonic() + 300
    while not project.finished_scores("reference") and time.monotonic() < deadline:
        time.sleep(0.2)
    os.killpg(client.pid, signal.SIGKILL)
    client.wait()
    while queued() and time.monotonic() < deadline:
        time.sleep(0.5)
    assert not queued(), "the orphaned Slurm jobs must end by themselves"
    finished = project.finished_scores("reference")
    answers = {p.parent.parent.name: p.stat().st_mtime_ns for p in runs.glob("*/1/ops.json")}
    assert finished and len(finished) < len(tasks), "the kill must land mid-run"

    project.snakemake("--unlock")
    on_slurm(project)
    for task, (data, mtime) in finished.items():
        score = runs / task / "1" / "score.json"
        assert (score.read_bytes(), score.stat().st_mtime_ns) == (data, mtime), task
    for task, mtime in answers.items():
        assert (runs / task / "1" / "ops.json").stat().st_mtime_ns == mtime, \
            f"{task}: a finished agent answer was made again"
    assert project.summary()["passed"].all() and len(project.summary()) == len(tasks)


@pytest.mark.slow
def test_the_slurm_profile_gives_the_local_dag(tmp_path):
    project = Project(tmp_path / "wb").configure(MODELS, tasks=TASK_IDS)
    local = job_counts(project.snakemake("-n"))
    slurm = job_counts(project.snakemake("-n", "--workflow-profile",
                                         str(REPO / "profiles" / "slurm")))
    # A job per baseline answer, one for the reference's batch; a scoring batch per model.
    assert local == slurm and local["generate"] == 3 and local["score"] == 2


@pytest.mark.slow
def test_the_kubernetes_profile_dry_runs_without_a_cluster(tmp_path):
    # As on the PVC: a self-contained project folder, every path in it relative.
    root = tmp_path / "wb"
    for t in TASK_IDS:
        shutil.copytree(REPO / "tasks" / t, root / "tasks" / t)
    for folder in ("symbols", "skills"):
        shutil.copytree(REPO / folder, root / folder)
    models = {**MODELS, "baseline": {**MODELS["baseline"], "skills": "skills"}}
    project = Project(root).configure(models, tasks=TASK_IDS, tasks_dir="tasks", symbols=[
        f"symbols/{p.name}" for p in sorted((REPO / "symbols").glob("*.kicad_sym"))])
    proc = subprocess.run(
        ["snakemake", "-s", str(REPO / "Snakefile"), "-d", str(project.root), "-n",
         "--workflow-profile", str(REPO / "profiles" / "kubernetes")],
        cwd=project.root, env={**os.environ, "PWD": str(project.root)}, capture_output=True,
        text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert job_counts(proc)["generate"] == 3
