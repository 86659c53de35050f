"""How fast the task generators are: N tasks over every family, on every core.

    python benchmarks/generate_speed.py [--tasks 1000] [--jobs 2]

Each job generates its share of every family into a temporary folder (a job is a
process: the layouts ask akcli for pin tables, once per symbol per process). Target:
1,000 tasks in at most 60 s on 2 cores.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path


def _share(args: tuple[str, int, int, str]) -> tuple[str, int, float]:
    from wirebench.taskgen.generator import generate

    family, start, count, out = args
    t0 = time.monotonic()
    generate(family, "bench", count, Path(out), start=start)
    return family, count, time.monotonic() - t0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tasks", type=int, default=1000)
    ap.add_argument("--jobs", type=int, default=2)
    args = ap.parse_args()
    from wirebench.taskgen.generator import FAMILIES

    per = args.tasks // len(FAMILIES)
    extra = args.tasks - per * len(FAMILIES)
    with tempfile.TemporaryDirectory(prefix="wirebench-gen-") as td:
        work = []
        for i, family in enumerate(FAMILIES):
            count = per + (1 if i < extra else 0)
            half = count // args.jobs
            for j in range(args.jobs):  # each family split over the jobs
                n = half if j < args.jobs - 1 else count - half * (args.jobs - 1)
                work.append((family, j * half, n, td))
        started = time.monotonic()
        with ProcessPoolExecutor(max_workers=args.jobs) as pool:
            done = list(pool.map(_share, work))
        wall = time.monotonic() - started
        made = sum(1 for p in Path(td).iterdir() if (p / "task.md").is_file())
    by_family: dict[str, list[float]] = {}
    for family, count, seconds in done:
        by_family.setdefault(family, [0, 0.0])
        by_family[family][0] += count
        by_family[family][1] += seconds
    for family, (count, seconds) in by_family.items():
        print(f"  {family:<11} {count:5d} tasks  {1000 * seconds / max(count, 1):6.1f} ms a task")
    print(f"{made} tasks in {wall:.1f} s on {args.jobs} jobs (target: 1,000 in <= 60 s)")
    return 0 if made == args.tasks and (args.tasks < 1000 or wall <= 60) else 1


if __name__ == "__main__":
    sys.exit(main())
