"""How much does running the matrix through Snakemake cost over a plain in-process loop?

Builds a generated matrix (MODELS reference-kind models x TASKS tasks cloned from the
shipped corpus) in a temp dir, then times
  1. `snakemake --cores CORES` over the whole workflow (generate ... summary, report), and
  2. one Python process that runs the same pairs through the same step functions,
and prints both wall times and their ratio. Target: <= 1.2x at 200 pairs on 2 cores.

    python benchmarks/workflow_overhead.py [--models 10] [--tasks 20] [--cores 2]
    python benchmarks/workflow_overhead.py --repeats 3   # alternate both, report medians
    python benchmarks/workflow_overhead.py --no-worker   # every step its own process
    python benchmarks/workflow_overhead.py --sandbox-cost --command-models 2 --repeats 3

--sandbox-cost times the workflow twice per repeat instead, with the sandbox (bubblewrap
around command agents, Landlock around akcli steps) and with `unsafe_no_sandbox: true`,
and prints their ratio. Target: <= 1.10x at 200 pairs. --command-models adds entries of
the `command` kind (the heuristic baseline), so that bubblewrap's start is in the figure.

A shared 2-core VM is noisy (one loop took 51 s, the next 65 s), so --repeats runs the
two alternately in fresh folders and prints each ratio and their median.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
# The snakemake of the interpreter running this script, whatever PATH says.
SNAKEMAKE = str(Path(sys.executable).with_name("snakemake"))


def build_project(root: Path, models: int, tasks: int, command_models: int = 0,
                  unsafe: bool = False, samples: int = 1, pattern: str = "*") -> list[str]:
    """A working directory for the repo's Snakefile: a config and a corpus cloned from
    the shipped tasks whose folder names match `pattern`."""
    shipped = sorted(d for d in (REPO / "tasks").glob(pattern) if (d / "task.md").is_file())
    task_ids = []
    for i in range(tasks):
        src = shipped[i % len(shipped)]
        tid = f"{i + 1:03d}-{src.name.split('-', 1)[1]}"
        shutil.copytree(src, root / "tasks" / tid)
        task_ids.append(tid)
    symbols = "\n".join(f"  - {p}" for p in sorted((REPO / "symbols").glob("*.kicad_sym")))
    model_lines = "\n".join(f"  m{i:02d}:\n    kind: reference" for i in range(models))
    model_lines += "".join(f"\n  c{i:02d}:\n    kind: command\n    command: wirebench-baseline"
                           for i in range(command_models))
    (root / "config").mkdir(exist_ok=True)
    (root / "config" / "config.yaml").write_text(
        f"tasks_dir: tasks\nsamples: {samples}\nunsafe_no_sandbox: {str(unsafe).lower()}\n"
        f"symbols:\n{symbols}\nmodels:\n{model_lines}\n")
    return task_ids


def run_workflow(root: Path, cores: int, env: dict) -> float:
    start = time.perf_counter()
    subprocess.run([SNAKEMAKE, "-s", str(REPO / "Snakefile"), "-d", str(root),
                    "--cores", str(cores), "-q"], env=env, check=True,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.perf_counter() - start


def run_loop(root: Path, models: int, task_ids: list[str]) -> float:
    """The same pairs and step functions, one process, no Snakemake."""
    code = (
        "import sys, time; from pathlib import Path\n"
        "start = time.perf_counter()\n"
        "from wirebench.steps.generate import generate\n"
        "from wirebench.steps.pair import evaluate_pair\n"
        "root = Path(sys.argv[1]); models = int(sys.argv[2]); tasks = sys.argv[3:]\n"
        f"symbols = sorted(str(p) for p in Path({str(REPO)!r}, 'symbols').glob('*.kicad_sym'))\n"
        "for m in range(models):\n"
        "    for t in tasks:\n"
        "        pair = root / 'loop' / f'm{m:02d}' / t / '1'\n"
        "        generate(f'm{m:02d}', {'kind': 'reference'}, root / 'tasks' / t, 1,\n"
        "                 pair / 'ops.json', pair / 'agent.json')\n"
        "        evaluate_pair(pair / 'ops.json', root / 'tasks' / t, symbols, pair,\n"
        "                      {'model': f'm{m:02d}', 'task': t, 'sample': 1})\n"
        "print(time.perf_counter() - start)\n"
    )
    start = time.perf_counter()
    subprocess.run([sys.executable, "-c", code, str(root), str(models), *task_ids], check=True,
                   stdout=subprocess.DEVNULL)
    return time.perf_counter() - start


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--models", type=int, default=10)
    ap.add_argument("--tasks", type=int, default=20)
    ap.add_argument("--cores", type=int, default=2)
    ap.add_argument("--repeats", type=int, default=1)
    ap.add_argument("--no-worker", action="store_true", help="set WIREBENCH_WORKER=0")
    ap.add_argument("--sandbox-cost", action="store_true",
                    help="time the workflow with and without the sandbox")
    ap.add_argument("--command-models", type=int, default=0,
                    help="also this many command-kind entries (the baseline)")
    args = ap.parse_args()
    if args.sandbox_cost:
        return sandbox_cost(args)
    env = dict(os.environ)
    if args.no_worker:
        env["WIREBENCH_WORKER"] = "0"
    pairs = args.models * args.tasks
    print(f"pairs: {pairs} ({args.models} models x {args.tasks} tasks), "
          f"{pairs * 5 + 2} Snakemake jobs, --cores {args.cores}, "
          f"worker {'off' if args.no_worker else 'on'}")
    loops, flows = [], []
    for i in range(args.repeats):
        with tempfile.TemporaryDirectory(prefix="wirebench-bench-") as td:
            root = Path(td)
            task_ids = build_project(root, args.models, args.tasks)
            loops.append(run_loop(root, args.models, task_ids))
            flows.append(run_workflow(root, args.cores, env))
        print(f"run {i + 1}: loop {loops[-1]:6.1f} s, snakemake {flows[-1]:6.1f} s, "
              f"ratio {flows[-1] / loops[-1]:.2f}x")
    loop, flow = statistics.median(loops), statistics.median(flows)
    ratio = statistics.median(f / lp for f, lp in zip(flows, loops, strict=True))
    print(f"in-process loop: {loop:7.1f} s  ({loop / pairs * 1000:.0f} ms/pair, median)")
    print(f"snakemake:       {flow:7.1f} s  ({flow / pairs * 1000:.0f} ms/pair, median)")
    print(f"ratio:           {ratio:7.2f}x  (median of {args.repeats}; target <= 1.2x)")


def sandbox_cost(args) -> None:
    pairs = (args.models + args.command_models) * args.tasks
    print(f"pairs: {pairs} ({args.models} reference + {args.command_models} command models x "
          f"{args.tasks} tasks), --cores {args.cores}: sandbox on against unsafe_no_sandbox")
    on, off = [], []
    for i in range(args.repeats):
        for unsafe, times in ((False, on), (True, off)):
            with tempfile.TemporaryDirectory(prefix="wirebench-bench-") as td:
                root = Path(td)
                build_project(root, args.models, args.tasks, args.command_models, unsafe)
                times.append(run_workflow(root, args.cores, dict(os.environ)))
        print(f"run {i + 1}: sandboxed {on[-1]:6.1f} s, unsandboxed {off[-1]:6.1f} s, "
              f"ratio {on[-1] / off[-1]:.3f}x")
    ratio = statistics.median(a / b for a, b in zip(on, off, strict=True))
    print(f"sandboxed:   {statistics.median(on):7.1f} s (median)")
    print(f"unsandboxed: {statistics.median(off):7.1f} s (median)")
    print(f"ratio:       {ratio:7.3f}x  (median of {args.repeats}; target <= 1.10x)")


if __name__ == "__main__":
    main()
