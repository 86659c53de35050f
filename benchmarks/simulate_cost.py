"""What does the simulate step cost a pair? Draws every design task's reference once,
then times `simulate` (akcli sim on ngspice, corners included) on each, in process.

    python benchmarks/simulate_cost.py [--repeats 3] [--jobs 2]

Prints each task's median wall time (and how many akcli sim runs its corners took),
the mean over single-run tasks and over corner tasks, and the throughput with --jobs
processes side by side: wall time divided by pairs, which is what a pair costs a
2-core run. Target: at most 0.3 s a pair on 2 cores.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
SYMBOLS = sorted(str(p) for p in (REPO / "symbols").glob("*.kicad_sym"))


def design_tasks() -> list[Path]:
    from wirebench.corpus.tasks import discover, load_task

    return [d for d in discover(REPO / "tasks") if load_task(d).testbench is not None]


def draw(task: Path, root: Path) -> Path:
    """validate, apply and nets of the reference: the inputs of simulate."""
    from wirebench.steps.apply import apply
    from wirebench.steps.nets import nets
    from wirebench.steps.validate import validate

    pair = root / task.name
    pair.mkdir(parents=True)
    ops = task / "reference_ops.json"
    validate(ops, pair / "validate.json")
    apply(ops, pair / "validate.json", task, SYMBOLS, pair / "board.kicad_sch",
          pair / "apply.json")
    nets(pair / "board.kicad_sch", pair / "nets.json")
    return pair


def time_simulate(args: tuple[Path, Path]) -> tuple[str, float, int, str]:
    from wirebench.steps.simulate import simulate

    task, pair = args
    start = time.perf_counter()
    doc = simulate(pair / "board.kicad_sch", pair / "apply.json", pair / "nets.json", task,
                   pair / "sim.json")
    runs = 1 + len(doc["corners"])
    return task.name, time.perf_counter() - start, runs, doc["status"]


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--jobs", type=int, default=2)
    args = p.parse_args()
    tasks = design_tasks()
    with tempfile.TemporaryDirectory(prefix="wirebench-simcost-") as td:
        pairs = [(t, draw(t, Path(td))) for t in tasks]
        times: dict[str, list[float]] = {t.name: [] for t in tasks}
        runs: dict[str, int] = {}
        for _ in range(args.repeats):
            for pair in pairs:
                name, wall, n, status = time_simulate(pair)
                if status != "pass":
                    print(f"{name}: the reference did not pass ({status})", file=sys.stderr)
                    return 1
                times[name].append(wall)
                runs[name] = n
        print(f"{'task':32} {'median s':>9} {'corner runs':>12}")
        single, cornered = [], []
        for t in tasks:
            median = statistics.median(times[t.name])
            has_corners = bool(t.joinpath("task.yaml").read_text().count("corners:"))
            (cornered if has_corners else single).append(median)
            print(f"{t.name:32} {median:9.3f} {runs[t.name] - 1 if has_corners else '-':>12}")
        print(f"\nmean, tasks without corners ({len(single)}): {statistics.mean(single):.3f} s")
        print(f"mean, tasks with corners ({len(cornered)}):    {statistics.mean(cornered):.3f} s")
        batch = pairs * args.repeats
        start = time.perf_counter()
        with ProcessPoolExecutor(args.jobs) as pool:
            list(pool.map(time_simulate, batch))
        wall = time.perf_counter() - start
        print(f"\n{len(batch)} simulate steps in {args.jobs} processes: {wall:.1f} s, "
              f"{wall / len(batch):.3f} s a pair (target 0.3 s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
