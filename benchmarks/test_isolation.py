"""Does every test stand on its own? The suite shuffled, then each test file alone.

A test that passes only after another one (an archive an earlier test wrote, a fixture
left warm) hides its own breakage and breaks when someone runs it alone. This script runs
the whole suite in a random order with pytest-randomly (the seed is printed, so a failure
can be replayed with `--seed`), then each `tests/test_*.py` in a fresh pytest process,
and prints one line per run. Exit status 1 if any run failed.

    pip install -e '.[audit]'
    python benchmarks/test_isolation.py                 # both: about 45 min on 2 cores
    python benchmarks/test_isolation.py --only files    # one file at a time
    python benchmarks/test_isolation.py --only shuffled --seed 20261201

It runs the real suite (Snakemake, akcli, ngspice, bubblewrap), so set CI=1 to make a
missing tool fail rather than skip.
"""

from __future__ import annotations

import argparse
import random
import re
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def pytest(args: list[str]) -> tuple[bool, str, float]:
    started = time.monotonic()
    proc = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                           *args], cwd=REPO, text=True, capture_output=True)
    tail = proc.stdout.strip().splitlines()[-1] if proc.stdout.strip() else proc.stderr
    if proc.returncode != 0:  # keep what failed, so the line says which test
        failed = re.findall(r"^(?:FAILED|ERROR) (\S+)", proc.stdout, re.M)
        tail += "".join(f"\n      {name}" for name in failed)
    return proc.returncode == 0, tail, time.monotonic() - started


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", choices=["shuffled", "files"])
    parser.add_argument("--seed", type=int, help="pytest-randomly's seed (default: random)")
    args = parser.parse_args()
    ok = True
    if args.only in (None, "shuffled"):
        seed = args.seed if args.seed is not None else random.SystemRandom().randrange(10**9)
        passed, tail, wall = pytest(["-p", "randomly", f"--randomly-seed={seed}", "tests"])
        ok &= passed
        print(f"shuffled (seed {seed}): {'ok' if passed else 'FAILED'} in {wall:.0f} s: "
              f"{tail}", flush=True)
    if args.only in (None, "files"):
        for path in sorted((REPO / "tests").glob("test_*.py")):
            passed, tail, wall = pytest(["-p", "no:randomly", str(path.relative_to(REPO))])
            ok &= passed
            print(f"{path.name:28} {'ok' if passed else 'FAILED'} {wall:6.0f} s  {tail}",
                  flush=True)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
