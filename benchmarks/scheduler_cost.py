"""What does Snakemake's scheduler cost per job as the matrix grows, with and without
`defer_remaining_jobs` (src/wirebench/runtime/snakemake_process.py)?

Builds a matrix of the light tasks (transcription and edit: no simulation, no board),
MODELS x TASKS x SAMPLES reference pairs, and times its first run twice in fresh folders:
once as the workflow runs it, and once with `defer_remaining_jobs` switched off (a
wrapper replaces it before Snakemake reads the Snakefile), so every scheduling round
builds the list of all remaining jobs again. Prints the wall time and the CPU seconds of
Snakemake's own process and its job shells for each, and the ratio of the walls.

    python benchmarks/scheduler_cost.py [--models 1] [--tasks 500] [--samples 5]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from workflow_overhead import REPO, build_project

# Snakemake started from Python, so that the patch lands before the Snakefile imports it.
LAUNCH = """
import sys
if sys.argv.pop(1) == "off":
    import wirebench.runtime.snakemake_process as tuning
    tuning.defer_remaining_jobs = lambda: False
from snakemake.cli import main
sys.argv[0] = "snakemake"
main()
"""


def first_run(root: Path, defer: bool) -> tuple[float, float]:
    """Wall seconds and Snakemake's own CPU seconds (from wait4, so not the worker's)."""
    start = time.perf_counter()
    proc = subprocess.Popen([sys.executable, "-c", LAUNCH, "on" if defer else "off",
                             "-s", str(REPO / "Snakefile"), "-d", str(root), "--cores", "2",
                             "-q"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _, status, usage = os.wait4(proc.pid, 0)
    if os.waitstatus_to_exitcode(status):
        raise SystemExit(f"snakemake failed in {root}")
    # The job shells are its children too, but each costs about 1 ms (bash).
    return time.perf_counter() - start, usage.ru_utime + usage.ru_stime


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--models", type=int, default=1)
    ap.add_argument("--tasks", type=int, default=500)
    ap.add_argument("--samples", type=int, default=5)
    args = ap.parse_args()
    pairs = args.models * args.tasks * args.samples
    print(f"{pairs} pairs ({args.models} models x {args.tasks} light tasks x "
          f"{args.samples} samples), first run, --cores 2", flush=True)
    figures = {}
    for defer in (True, False):
        with tempfile.TemporaryDirectory(prefix="wirebench-sched-") as td:
            build_project(Path(td), args.models, args.tasks, samples=args.samples,
                          pattern="[0-9]*")
            figures[defer] = first_run(Path(td), defer)
        wall, cpu = figures[defer]
        print(f"remaining_jobs {'deferred' if defer else 'built every round'}: "
              f"{wall:6.1f} s wall, Snakemake's own process and job shells {cpu:6.1f} s CPU",
              flush=True)
    print(f"wall without the deferral / with it: {figures[False][0] / figures[True][0]:.2f}x")


if __name__ == "__main__":
    main()
