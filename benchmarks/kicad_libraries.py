"""Apply time per pair with KiCad's own symbol libraries, cold and warm.

Draws shipped references (the ones whose parts KiCad's `Device` and `power` libraries
hold) through the apply step, in one process, the way a warm worker server or the
one-process path does: the first apply parses the libraries (cold), the later ones find
them in the symbol cache (warm). With --uncached it also times one apply with the cache
off, in a process of its own: what every apply cost before the cache.

    python benchmarks/kicad_libraries.py [--libraries /usr/share/kicad/symbols] [--uncached]

Needs KiCad's libraries: Debian's `kicad-symbols` package (apt-get install kicad-symbols)
puts them in /usr/share/kicad/symbols. Target: warm apply <= 2 s per pair.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
TASKS = ["01-divider", "02-rc-lowpass", "09-npn-led-driver", "03-pi-filter",
         "d01-rc-lowpass-loaded", "d05-npn-led-switch", "d07-zener-reference"]

TIME_APPLIES = """
import json, sys, tempfile, time
from pathlib import Path
from wirebench.steps.apply import apply
from wirebench.steps.validate import validate
symbols, tasks = sys.argv[1:3], sys.argv[3:]
times = []
for task in tasks:
    pair = Path(tempfile.mkdtemp(prefix="wirebench-kicad-"))
    ops = Path(task) / "reference_ops.json"
    validate(ops, pair / "validate.json")
    started = time.perf_counter()
    doc = apply(ops, pair / "validate.json", Path(task), symbols, pair / "board.kicad_sch",
                pair / "apply.json", pair / "board.svg")
    times.append(time.perf_counter() - started)
    assert doc["applied"], (task, doc["errors"])
print(json.dumps(times))
"""


def applies(symbols: list[str], tasks: list[str], cache: bool) -> list[float]:
    import json

    env = {**os.environ, "WIREBENCH_SYMBOL_CACHE": "1" if cache else "0"}
    proc = subprocess.run([sys.executable, "-c", TIME_APPLIES, *symbols,
                           *(str(REPO / "tasks" / t) for t in tasks)],
                          capture_output=True, text=True, env=env, cwd=tempfile.gettempdir())
    if proc.returncode != 0:
        sys.exit(proc.stderr[-2000:])
    return json.loads(proc.stdout.strip().splitlines()[-1])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--libraries", default="/usr/share/kicad/symbols")
    ap.add_argument("--uncached", action="store_true", help="also one apply without the cache")
    args = ap.parse_args()
    symbols = [str(Path(args.libraries) / f"{name}.kicad_sym") for name in ("Device", "power")]
    missing = [s for s in symbols if not Path(s).is_file()]
    if missing:
        sys.exit(f"missing {missing}: apt-get install kicad-symbols, or --libraries DIR")
    sizes = ", ".join(f"{Path(s).name} {Path(s).stat().st_size / 1e6:.1f} MB" for s in symbols)
    print(f"libraries: {sizes}; {len(TASKS)} references, one process")
    started = time.perf_counter()
    times = applies(symbols, TASKS, cache=True)
    print(f"cold apply (parses the libraries): {times[0]:6.2f} s")
    print(f"warm apply, median of {len(times) - 1}:    {statistics.median(times[1:]):6.2f} s"
          f"  (max {max(times[1:]):.2f} s; target <= 2 s)")
    print(f"all {len(TASKS)} applies, with the process: {time.perf_counter() - started:.1f} s")
    if args.uncached:
        plain = applies(symbols, TASKS[:2], cache=False)
        print(f"without the cache, per apply:      {statistics.median(plain):6.2f} s"
              f"  (median of {len(plain)})")


if __name__ == "__main__":
    main()
