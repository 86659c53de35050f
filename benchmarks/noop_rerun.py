"""How long does a rerun take when nothing changed, at 2,000 pairs?

Builds a generated matrix (MODELS reference-kind models x TASKS tasks cloned from the
shipped corpus), runs it once for real, then times `snakemake --cores 2` again (nothing
to do) and a dry run. Target: a no-op rerun of <= 15 s on 2 cores.

The first run is one `snakemake --cores 2` over the whole matrix, as a user would run it
(this once went one model at a time: before `scheduler-subsample` in profiles/default,
Snakemake's own cost per job grew with the number of ready jobs). The no-op rerun is timed
--repeats times and the median printed.

Snakemake imports every installed executor plugin at start: the `cluster` extra's
Kubernetes and Slurm plugins add about 0.7 s of imports (and Slurm's `scontrol` call waits
9 s when a Slurm controller is installed but down). The script names the plugins it found,
so compare figures from the same environment; the README's default install has none.

    python benchmarks/noop_rerun.py [--models 20] [--tasks 100] [--keep DIR] [--repeats 3]
"""

from __future__ import annotations

import argparse
import importlib.metadata
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

from workflow_overhead import REPO, SNAKEMAKE, build_project


def snakemake(root: Path, *args: str) -> tuple[float, str]:
    start = time.perf_counter()
    proc = subprocess.run([SNAKEMAKE, "-s", str(REPO / "Snakefile"), "-d", str(root),
                           "--cores", "2", *args], capture_output=True, text=True, check=True)
    return time.perf_counter() - start, proc.stdout + proc.stderr


def executor_plugins() -> list[str]:
    return sorted(d.metadata["Name"] for d in importlib.metadata.distributions()
                  if d.metadata["Name"].startswith("snakemake-executor-plugin-"))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--models", type=int, default=20)
    ap.add_argument("--tasks", type=int, default=100)
    ap.add_argument("--keep", type=Path, help="build in DIR and keep it (reuse if built)")
    ap.add_argument("--repeats", type=int, default=3, help="no-op reruns to time")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="wirebench-noop-") as td:
        root = args.keep or Path(td)
        pairs = args.models * args.tasks
        built = root / ".first-run-complete"
        if not built.exists():
            if not (root / "config").exists():  # --keep DIR resumes a half-built matrix
                root.mkdir(parents=True, exist_ok=True)
                build_project(root, args.models, args.tasks)
            full, _ = snakemake(root, "-q")
            built.touch()
            print(f"first run: {pairs} pairs ({args.models} models x {args.tasks} tasks) "
                  f"in {full:.0f} s = {pairs / full * 60:.0f} pairs/min")
        noops = []
        for _ in range(args.repeats):
            seconds, out = snakemake(root)
            assert "Nothing to be done" in out, out[-2000:]
            noops.append(seconds)
        dry, _ = snakemake(root, "-n")
    print(f"executor plugins installed: {', '.join(executor_plugins()) or 'none'}")
    print(f"no-op rerun (nothing to be done): {statistics.median(noops):5.1f} s   "
          f"(median of {' '.join(f'{s:.1f}' for s in noops)}; target <= 15 s)")
    print(f"dry run:                          {dry:5.1f} s")


if __name__ == "__main__":
    main()
