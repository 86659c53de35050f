"""Shared helpers: the real repo, real akcli, real Snakemake runs in temp folders."""

from __future__ import annotations

import base64
import json
import os
import shutil
import subprocess
import time
from pathlib import Path

import pytest
import yaml

REPO = Path(__file__).resolve().parents[1]
TASKS = REPO / "tasks"
SYMBOLS = sorted(str(p) for p in (REPO / "symbols").glob("*.kicad_sym"))


def write_ops(path: Path, ops: list[dict], **envelope) -> Path:
    path.write_text(json.dumps({"protocol_version": 2, "target_format": "kicad", **envelope,
                                "ops": ops}))
    return path


def reference_ops(task: str) -> list[dict]:
    return json.loads((TASKS / task / "reference_ops.json").read_text())["ops"]


class Project:
    """A working directory for the repo's Snakefile: its own config and results."""

    def __init__(self, root: Path):
        self.root = root
        self.config_path = root / "config" / "config.yaml"

    def configure(self, models: dict, tasks: list[str] | None = None,
                  tasks_dir: str | Path = TASKS, **extra) -> Project:
        config = {"tasks_dir": str(tasks_dir), "symbols": SYMBOLS, "models": models, **extra}
        if tasks:
            config["tasks"] = tasks
        self.config_path.parent.mkdir(parents=True, exist_ok=True)
        self.config_path.write_text(yaml.safe_dump(config))
        return self

    def self_contained(self, task_ids: list[str], **extra) -> Project:
        """Its own copy of these tasks, the symbols and the skills, with the reference and
        the heuristic baseline (`base`) as models: a world a test may edit."""
        for t in task_ids:
            shutil.copytree(TASKS / t, self.root / "tasks" / t)
        shutil.copytree(REPO / "symbols", self.root / "symbols")
        shutil.copytree(REPO / "skills", self.root / "skills")
        return self.configure(
            {"reference": {"kind": "reference"},
             "base": {"kind": "command", "command": "wirebench-baseline", "timeout": 60,
                      "skills": "skills"}},
            tasks_dir="tasks", symbols=sorted(f"symbols/{p.name}"
                                              for p in (REPO / "symbols").glob("*.kicad_sym")),
            **extra)

    def snakemake(self, *args: str, check: bool = True, env: dict | None = None):
        cmd = ["snakemake", "-s", str(REPO / "Snakefile"), "-d", str(self.root),
               "--cores", "2", *args]
        proc = subprocess.run(cmd, capture_output=True, text=True,
                              env={**os.environ, **(env or {})}, timeout=600)
        if check and proc.returncode != 0:
            raise AssertionError(f"snakemake failed ({proc.returncode}):\n{proc.stderr[-4000:]}")
        return proc

    def pair(self, model: str, task: str, sample: int = 1) -> Path:
        return self.root / "results" / "runs" / model / task / str(sample)

    def score(self, model: str, task: str, sample: int = 1) -> dict:
        return json.loads((self.pair(model, task, sample) / "score.json").read_text())

    def pending(self) -> set[str]:
        """Outputs Snakemake itself still marks as being written (its incomplete markers).
        After a kill, an output not in here is one Snakemake recorded as finished."""
        marks = self.root / ".snakemake" / "incomplete"
        names = set()
        for p in marks.glob("*") if marks.is_dir() else []:
            try:
                names.add(base64.b64decode(p.name.replace("-", "/").encode() + b"==").decode())
            except (ValueError, UnicodeDecodeError):
                names.add(p.name)
        return names

    def finished_scores(self, model: str) -> dict[str, tuple[bytes, int]]:
        """task -> (bytes, mtime) of each score.json whose job Snakemake recorded as
        finished. A batch job is marked by its record alone: its pairs are finished when
        that record is not pending and names them."""
        from wirebench.steps.batch import read_record

        pending, done = self.pending(), set()
        for record in (self.root / "results" / "batches" / model).glob("*/score.json"):
            if not any(str(record).endswith(name) for name in pending):
                done.update(read_record(record))
        return {p.parent.parent.name: (p.read_bytes(), p.stat().st_mtime_ns)
                for p in (self.root / "results" / "runs" / model).glob("*/1/score.json")
                if f"{model}/{p.parent.parent.name}/1" in done}

    def summary(self):
        import pandas as pd

        text = {"errors": str, "extra_named_nets": str, "needs_human": str,
                "expected_outcome": str}
        df = pd.read_csv(self.root / "results" / "summary.csv", dtype=text)
        return df.fillna({k: "" for k in text})


@pytest.fixture
def project(tmp_path: Path) -> Project:
    return Project(tmp_path / "wb")


@pytest.fixture(scope="session")
def slurm():
    """A real single-node Slurm, started by the first test that asks for it and stopped
    when the session ends. Session-wide on purpose: the Slurm executor plugin runs
    `scontrol show config` whenever Snakemake starts, and with Slurm installed but its
    daemons stopped that call waits about 9 s, in every later Snakemake run of the suite."""
    if os.geteuid() != 0:
        pytest.skip("a single-node Slurm needs root here (apt-get, munged, slurmd)")
    if not shutil.which("slurmctld") and not shutil.which("apt-get"):
        pytest.skip("this OS has neither Slurm nor apt-get to install it")
    # Leave the machine as we found it: stop the daemons this test starts, and put back
    # the config files the start script writes over.
    daemons = ("slurmd", "slurmctld", "slurmscriptd", "munged")
    before = {d for d in daemons if _running(d)}
    confs = {p: (p.read_bytes() if p.is_file() else None)
             for p in (Path("/etc/slurm/slurm.conf"), Path("/etc/slurm/cgroup.conf"))}
    proc = subprocess.run(["bash", str(REPO / "scripts" / "slurm-single-node.sh")],
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0 and "slurm ready" in proc.stdout, proc.stdout + proc.stderr
    yield
    for daemon in daemons:
        if daemon not in before:
            subprocess.run(["pkill", "-x", daemon], check=False)
    for path, old in confs.items():
        if old is None:
            path.unlink(missing_ok=True)
        else:
            path.write_bytes(old)
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and any(_running(d) for d in daemons if d not in before):
        time.sleep(0.5)
    left = [d for d in daemons if d not in before and _running(d)]
    assert not left, f"the Slurm test left {left} running"


def _running(name: str) -> bool:
    return subprocess.run(["pgrep", "-x", name], capture_output=True).returncode == 0
