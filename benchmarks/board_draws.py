"""Apply time of every board reference with KiCad's own libraries, cold and warm.

In one process, the way a warm worker server or the one-process path draws: each board's
first apply parses whatever libraries no earlier board parsed (cold), its second finds
them all in the symbol cache (warm). The apply step is the whole draw: a fresh sheet, an
edit's base sheet, the op-list behind --strict-nets, ERC and layout facts, and the render.

    python benchmarks/board_draws.py [--repeats 3]

Needs KiCad's libraries (apt-get install kicad-symbols). Target: warm <= 3 s per board.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
TARGET_S = 3.0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=3, help="warm applies per board")
    args = ap.parse_args()
    from wirebench.corpus.libraries import kicad_dir, symbols_for
    from wirebench.corpus.tasks import discover, load_task
    from wirebench.steps.apply import apply
    from wirebench.steps.validate import validate

    boards = [load_task(d) for d in discover(REPO / "tasks")]
    boards = [t for t in boards if t.tier == "board"]
    print(f"{len(boards)} board references, KiCad libraries from {kicad_dir()}")
    print(f"{'board':34} {'parts':>5} {'cold s':>7} {'warm s':>7}")
    worst = 0.0
    for task in boards:
        symbols = symbols_for(task, [])
        times = []
        with tempfile.TemporaryDirectory(prefix="wirebench-board-") as td:
            for i in range(1 + args.repeats):
                pair = Path(td) / str(i)
                pair.mkdir()
                validate(task.reference_path, pair / "validate.json")
                started = time.perf_counter()
                doc = apply(task.reference_path, pair / "validate.json", task, symbols,
                            pair / "board.kicad_sch", pair / "apply.json", pair / "board.svg")
                times.append(time.perf_counter() - started)
                if not doc["applied"]:
                    sys.exit(f"{task.id}: {doc['errors']}")
            parts = len(doc["facts"]["board"]["parts"])
        warm = statistics.median(times[1:])
        worst = max(worst, warm)
        print(f"{task.id:34} {parts:5d} {times[0]:7.2f} {warm:7.2f}")
    print(f"slowest warm apply: {worst:.2f} s (target <= {TARGET_S:.0f} s)")
    return 0 if worst <= TARGET_S else 1


if __name__ == "__main__":
    sys.exit(main())
