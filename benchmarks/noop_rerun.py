"""How long does a rerun take when nothing changed, at 2,000 pairs, or at 25,000?

Builds a generated matrix (MODELS reference-kind models x TASKS tasks cloned from the
shipped corpus, SAMPLES each), times a dry run of it from scratch (the DAG build), runs it
once for real, then times `snakemake --cores 2` again (nothing to do), a dry run, and a
rerun narrowed to one model (`--config models=m00`: one Snakemake run per model, whose
summary and reports still cover the whole experiment, so it redoes those). Each prints
its wall time and the peak memory of Snakemake's process. Targets: a no-op rerun of
<= 15 s at 2,000 pairs; <= 60 s and <= 4 GB at 25,000 (`--models 10 --tasks 500
--samples 5`).

The first run is one `snakemake --cores 2` over the whole matrix, as a user would run it
(this once went one model at a time: before `scheduler-subsample` in profiles/default,
Snakemake's own cost per job grew with the number of ready jobs). The no-op rerun is timed
--repeats times and the median printed.

Snakemake imports every installed executor plugin at start: the `cluster` extra's
Kubernetes and Slurm plugins add about 0.7 s of imports (and Slurm's `scontrol` call waits
9 s when a Slurm controller is installed but down). The script names the plugins it found,
so compare figures from the same environment; the README's default install has none.

    python benchmarks/noop_rerun.py [--models 20] [--tasks 100] [--keep DIR] [--repeats 3]
    python benchmarks/noop_rerun.py --models 10 --tasks 500 --samples 5 --light --per-model
"""

from __future__ import annotations

import argparse
import importlib.metadata
import os
import re
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

from workflow_overhead import REPO, SNAKEMAKE, build_project


def snakemake(root: Path, *args: str) -> tuple[float, float, str]:
    """Wall seconds, Snakemake's peak RSS in MB (its own, from wait4: the warm worker is
    not its child), and its output."""
    with tempfile.TemporaryFile("w+") as log:
        start = time.perf_counter()
        proc = subprocess.Popen([SNAKEMAKE, "-s", str(REPO / "Snakefile"), "-d", str(root),
                                 "--cores", "2", *args], stdout=log, stderr=subprocess.STDOUT)
        _, status, usage = os.wait4(proc.pid, 0)
        seconds = time.perf_counter() - start
        proc.returncode = os.waitstatus_to_exitcode(status)
        log.seek(0)
        out = log.read()
    if proc.returncode:
        raise SystemExit(f"snakemake {' '.join(args)} failed ({proc.returncode}):\n{out[-3000:]}")
    return seconds, usage.ru_maxrss / 1024, out


def executor_plugins() -> list[str]:
    return sorted(d.metadata["Name"] for d in importlib.metadata.distributions()
                  if d.metadata["Name"].startswith("snakemake-executor-plugin-"))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--models", type=int, default=20)
    ap.add_argument("--tasks", type=int, default=100)
    ap.add_argument("--samples", type=int, default=1)
    ap.add_argument("--keep", type=Path, help="build in DIR and keep it (reuse if built)")
    ap.add_argument("--repeats", type=int, default=3, help="no-op reruns to time")
    ap.add_argument("--per-model", action="store_true",
                    help="make the first run one Snakemake run per model (--config "
                         "models=mXX), as the README advises past a few thousand pairs")
    ap.add_argument("--light", action="store_true",
                    help="clone only the transcription and edit tasks (no simulation, no "
                         "board): a first run bound by Snakemake rather than by the work")
    args = ap.parse_args()
    pairs = args.models * args.tasks * args.samples
    print(f"{pairs} pairs ({args.models} models x {args.tasks} tasks x {args.samples} "
          f"samples{', light tasks' if args.light else ''}); executor plugins installed: "
          f"{', '.join(executor_plugins()) or 'none'}", flush=True)
    with tempfile.TemporaryDirectory(prefix="wirebench-noop-") as td:
        root = args.keep or Path(td)
        built = root / ".first-run-complete"
        if not built.exists():
            if not (root / "config").exists():  # --keep DIR resumes a half-built matrix
                root.mkdir(parents=True, exist_ok=True)
                build_project(root, args.models, args.tasks, samples=args.samples,
                              pattern="[0-9]*" if args.light else "*")
                seconds, mb, _ = snakemake(root, "-n", "-q")
                print(f"dry run from scratch (the DAG build): {seconds:6.1f} s, {mb:5.0f} MB",
                      flush=True)
            if args.per_model:
                seconds, mb = 0.0, 0.0
                for m in range(args.models):
                    shard, m_mb, _ = snakemake(root, "-q", "--config", f"models=m{m:02d}")
                    print(f"  first run of m{m:02d}: {shard:.0f} s, {m_mb:.0f} MB", flush=True)
                    seconds, mb = seconds + shard, max(mb, m_mb)
            else:
                seconds, mb, _ = snakemake(root, "-q")
            print(f"first run{' (one model at a time)' if args.per_model else ''}: "
                  f"{seconds:.0f} s = {pairs / seconds * 60:.0f} pairs/min, {mb:.0f} MB",
                  flush=True)
            if args.per_model:
                # The last run's summary named one model; the whole matrix's run redoes
                # the summary and reports once (no pair's step), and is a no-op after.
                seconds, mb, out = snakemake(root, "-q")
                assert not re.search(r"rule (generate|validate|apply|nets|simulate|score):",
                                     out), out
                print(f"the whole matrix once (its summary and reports redone): "
                      f"{seconds:.0f} s, {mb:.0f} MB", flush=True)
            built.touch()
        noops, peak = [], 0.0
        for _ in range(args.repeats):
            seconds, mb, out = snakemake(root)
            assert "Nothing to be done" in out, out[-2000:]
            noops.append(seconds)
            peak = max(peak, mb)
        dry, dry_mb, _ = snakemake(root, "-n")
        if args.models > 1:
            # A narrowed run redoes the summary and reports over the whole experiment
            # (they say which pairs this run scored), but no pair's step.
            one, one_mb, out = snakemake(root, "--config", "models=m00")
            assert not re.search(r"rule (generate|validate|apply|nets|simulate|score):",
                                 out), out
    print(f"no-op rerun (nothing to be done): {statistics.median(noops):6.1f} s, {peak:5.0f} MB "
          f"(median of {' '.join(f'{s:.1f}' for s in noops)}; target <= 15 s at 2,000 pairs, "
          "<= 60 s and 4 GB at 25,000)")
    print(f"dry run:                          {dry:6.1f} s, {dry_mb:5.0f} MB")
    if args.models > 1:
        print(f"rerun of one model (m00):         {one:6.1f} s, {one_mb:5.0f} MB "
              f"({pairs // args.models} pairs, no step to run; the summary and reports "
              "redone)")


if __name__ == "__main__":
    main()
