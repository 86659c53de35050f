"""Pairs per minute, local executor vs a real single-node Slurm, on the same matrix.

Needs a running Slurm (scripts/slurm-single-node.sh starts one). The matrix: reference
and baseline models x TASKS shipped tasks. Slurm runs with profiles/slurm and the fast
status polling the tests use (1 s), since the profile's cluster-friendly 10 s polling
would measure the poll interval, not the work.

    python benchmarks/cluster_throughput.py [--tasks 6]
"""

from __future__ import annotations

import argparse
import subprocess
import tempfile
import time
from pathlib import Path

from workflow_overhead import REPO, SNAKEMAKE

FAST = ["--slurm-init-seconds-before-status-checks", "1", "--seconds-between-status-checks",
        "1", "--latency-wait", "5"]


def project(root: Path, tasks: list[str]) -> Path:
    symbols = "".join(f"\n  - {p}" for p in sorted((REPO / "symbols").glob("*.kicad_sym")))
    (root / "config").mkdir(parents=True)
    (root / "config" / "config.yaml").write_text(
        f"tasks_dir: {REPO / 'tasks'}\ntasks: [{', '.join(tasks)}]\nsymbols:{symbols}\n"
        "models:\n  reference: {kind: reference}\n"
        "  baseline: {kind: command, command: wirebench-baseline}\n")
    return root


def timed(root: Path, *args: str) -> float:
    start = time.perf_counter()
    subprocess.run([SNAKEMAKE, "-s", str(REPO / "Snakefile"), "-d", str(root), "--cores", "2",
                    "-q", *args], check=True, stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL)
    return time.perf_counter() - start


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tasks", type=int, default=6)
    args = ap.parse_args()
    tasks = sorted(p.name for p in (REPO / "tasks").iterdir() if (p / "task.md").is_file())
    tasks = tasks[: args.tasks]
    pairs = 2 * len(tasks)
    with tempfile.TemporaryDirectory(prefix="wirebench-tp-") as td:
        local = timed(project(Path(td) / "local", tasks))
        slurm = timed(project(Path(td) / "slurm", tasks), "--workflow-profile",
                      str(REPO / "profiles" / "slurm"), *FAST)
    print(f"{pairs} pairs (2 models x {len(tasks)} tasks), 2 cores, one node")
    print(f"local executor: {local:6.1f} s = {pairs / local * 60:6.1f} pairs/min")
    print(f"slurm executor: {slurm:6.1f} s = {pairs / slurm * 60:6.1f} pairs/min")


if __name__ == "__main__":
    main()
