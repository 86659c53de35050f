"""Pairs per minute, local executor vs a real single-node Slurm, on the same matrix.

Needs a running Slurm (scripts/slurm-single-node.sh starts one). The matrix is the one
workflow_overhead.py builds: MODELS reference-kind models x TASKS tasks cloned from the
shipped corpus. Slurm runs with profiles/slurm and the fast status polling the tests use
(1 s), since the profile's cluster-friendly 10 s polling would measure the poll interval,
not the work.

    python benchmarks/cluster_throughput.py [--models 2] [--tasks 6]     # 12 pairs
    python benchmarks/cluster_throughput.py --models 4 --tasks 50       # 200 pairs
"""

from __future__ import annotations

import argparse
import re
import subprocess
import tempfile
import time
from pathlib import Path

from workflow_overhead import REPO, SNAKEMAKE, build_project

# How the Slurm plugin logs a submission; one per Slurm job.
SUBMITTED = r"(?i)slurm jobid (\d+)"
FAST = ["--slurm-init-seconds-before-status-checks", "1", "--seconds-between-status-checks",
        "1", "--latency-wait", "5"]


def timed(root: Path, *args: str) -> float:
    start = time.perf_counter()
    subprocess.run([SNAKEMAKE, "-s", str(REPO / "Snakefile"), "-d", str(root), "--cores", "2",
                    "-q", *args], check=True, stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL)
    return time.perf_counter() - start


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--models", type=int, default=2)
    ap.add_argument("--tasks", type=int, default=6)
    args = ap.parse_args()
    pairs = args.models * args.tasks
    with tempfile.TemporaryDirectory(prefix="wirebench-tp-") as td:
        roots = [Path(td) / "local", Path(td) / "slurm"]
        for root in roots:
            root.mkdir()
            build_project(root, args.models, args.tasks)
        local = timed(roots[0])
        slurm = timed(roots[1], "--workflow-profile", str(REPO / "profiles" / "slurm"), *FAST)
        log = "".join(p.read_text() for p in (roots[1] / ".snakemake" / "log").glob("*.log"))
        submitted = len(set(re.findall(SUBMITTED, log)))
    print(f"{pairs} pairs ({args.models} models x {args.tasks} tasks), 2 cores, one node")
    print(f"local executor: {local:6.1f} s = {pairs / local * 60:6.1f} pairs/min")
    print(f"slurm executor: {slurm:6.1f} s = {pairs / slurm * 60:6.1f} pairs/min, "
          f"{submitted} Slurm jobs")
    print(f"slurm / local throughput: {local / slurm:.2f}x")


if __name__ == "__main__":
    main()
