"""The README's first command, timed: a fresh clone of this repository, then the default
matrix with `snakemake --cores 2`.

    python benchmarks/default_run.py [--repeats 2]

Each round clones HEAD into a temporary folder (no results, no .snakemake) and stops any
warm worker first, so every round starts cold. Target: at most 60 s on 2 cores.
"""

from __future__ import annotations

import argparse
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=2)
    args = ap.parse_args()
    walls = []
    for i in range(args.repeats):
        subprocess.run(["pkill", "-f", "wirebench.worker"], check=False)
        with tempfile.TemporaryDirectory(prefix="wirebench-default-") as td:
            clone = Path(td) / "wirebench"
            subprocess.run(["git", "clone", "-q", str(REPO), str(clone)], check=True)
            started = time.monotonic()
            proc = subprocess.run(["snakemake", "--cores", "2", "-q"], cwd=clone,
                                  capture_output=True, text=True)
            wall = time.monotonic() - started
            if proc.returncode != 0:
                print(proc.stdout[-2000:], proc.stderr[-2000:], file=sys.stderr)
                return 1
            own = re.search(r"Elapsed time: (\d+):(\d+):([\d.]+)", proc.stdout + proc.stderr)
            counted = (int(own[1]) * 3600 + int(own[2]) * 60 + float(own[3])) if own else None
            table = [line for line in (proc.stdout + proc.stderr).splitlines()
                     if re.match(r"^(model|\S+ +\d+ +\d+)", line)]
            print(f"round {i + 1}: {wall:.1f} s wall"
                  + (f", Snakemake counts {counted:.1f} s" if counted else ""))
            for line in table:
                print("  " + line)
            walls.append(wall)
    median = statistics.median(walls)
    print(f"default run from a fresh clone: median {median:.1f} s of {args.repeats} "
          "(target <= 60 s)")
    return 0 if median <= 60 else 1


if __name__ == "__main__":
    sys.exit(main())
