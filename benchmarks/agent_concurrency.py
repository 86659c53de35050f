"""Do I/O-bound agent calls run side by side, and does the provider cap hold?

16 tasks, one `command` agent that sleeps SLEEP seconds and then answers. Each call logs
its start and end; the script prints the span of all calls and the most that ever ran at
once, first with `--cores 16`, then with `--cores 16 --resources provider_sleepy=4`.
Expect ~SLEEP s and 16 at once, then ~4 x SLEEP s and never more than 4. The prompt
packs are built before the timed run, so every call is ready at the same moment.

    python benchmarks/agent_concurrency.py [--agents 16] [--sleep 2] [--cap 4]
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from workflow_overhead import REPO, SNAKEMAKE

AGENT = """
import os, shutil, sys, time
log = sys.argv[1]
with open(log, "a") as fh:
    fh.write(f"start {time.time()}\\n")
time.sleep(float(sys.argv[2]))
shutil.copy(os.environ["TASK_FILE"].replace("task.md", "reference_ops.json"), os.environ["OPS_OUT"])
with open(log, "a") as fh:
    fh.write(f"end {time.time()}\\n")
"""


def build(root: Path, agents: int, sleep: float) -> Path:
    for i in range(agents):
        shutil.copytree(REPO / "tasks" / "01-divider", root / "tasks" / f"t{i:02d}")
    (root / "agent.py").write_text(AGENT)
    log = root / "calls.log"
    symbols = "".join(f"\n  - {p}" for p in sorted((REPO / "symbols").glob("*.kicad_sym")))
    (root / "config").mkdir()
    (root / "config" / "config.yaml").write_text(
        f"tasks_dir: tasks\nsymbols:{symbols}\nmodels:\n  sleepy:\n    kind: command\n"
        f"    provider: sleepy\n    command: {sys.executable} {root / 'agent.py'} {log} {sleep}\n")
    return log


def measure(log: Path) -> tuple[float, int]:
    events = []
    for line in log.read_text().splitlines():
        kind, t = line.split()
        events.append((float(t), 1 if kind == "start" else -1))
    events.sort(key=lambda e: (e[0], e[1]))
    running = peak = 0
    for _, delta in events:
        running += delta
        peak = max(peak, running)
    return events[-1][0] - events[0][0], peak


def run(agents: int, sleep: float, extra: list[str]) -> tuple[float, int, float]:
    with tempfile.TemporaryDirectory(prefix="wirebench-conc-") as td:
        root = Path(td)
        log = build(root, agents, sleep)
        base = [SNAKEMAKE, "-s", str(REPO / "Snakefile"), "-d", str(root), "--cores", "16",
                "-q"]
        # The prompt packs first (akcli work, CPU-bound, 2 at a time), so that every agent
        # call is ready at once and the span measures the calls, not the packs.
        subprocess.run([*base, "--until", "prompt_pack"], check=True,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        start = time.perf_counter()
        subprocess.run([*base, *extra], check=True,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        wall = time.perf_counter() - start
        span, peak = measure(log)
    return span, peak, wall


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--agents", type=int, default=16)
    ap.add_argument("--sleep", type=float, default=2.0)
    ap.add_argument("--cap", type=int, default=4)
    args = ap.parse_args()
    print(f"{args.agents} agents, each sleeping {args.sleep:g} s, snakemake --cores 16")
    for label, extra in (("no cap", []),
                         (f"provider_sleepy={args.cap}", ["--resources",
                                                          f"provider_sleepy={args.cap}"])):
        span, peak, wall = run(args.agents, args.sleep, extra)
        print(f"{label:>20}: agent calls span {span:5.1f} s, at most {peak:2d} at once "
              f"(whole run {wall:5.1f} s)")


if __name__ == "__main__":
    main()
