"""What the real tier costs: generating it, drawing its biggest base sheet, and one
reference pair on that base, each as wirebench does it (in one process, each library
parsed once by the symbol cache). Prints wall and CPU seconds.

    python benchmarks/real_tier_cost.py [--seed 7] [--demo video] [--demos DIR]

Needs Debian's kicad-demos. The tasks are generated into a temporary folder and deleted
(they derive from GPL designs).
"""

from __future__ import annotations

import argparse
import resource
import sys
import tempfile
import time
from pathlib import Path


def cpu() -> float:
    own, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(
        resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime


def timed(what: str, fn):
    wall, used = time.time(), cpu()
    out = fn()
    print(f"{what}: {time.time() - wall:.1f} s wall, {cpu() - used:.1f} s CPU", flush=True)
    return out


def main() -> int:
    import yaml

    from wirebench.runtime import akcli_backend
    from wirebench.steps.pair import evaluate_pair
    from wirebench.taskgen import real

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seed", default="7")
    ap.add_argument("--demo", default="video", help="whose base sheet to draw")
    ap.add_argument("--demos", type=Path, default=Path("/usr/share/kicad/demos"))
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="wirebench-real-cost-") as td:
        made = timed(f"generate {args.demo}", lambda: real.generate(
            args.seed, args.demos, Path(td) / "tasks", names=[args.demo]))
        task = next(t for t in made if "value" in yaml.safe_load(
            (t / "task.yaml").read_text())["brief"])
        library = [str(task / real.LIBRARY)]
        for i in (1, 2):
            sheet = Path(td) / f"base{i}.kicad_sch"
            akcli_backend.new_sheet(sheet)
            res = timed(f"draw {args.demo}'s base (round {i})",
                        lambda s=sheet: akcli_backend.draw(s, task / "base_ops.json", library))
            if res.rc != 0:
                print(f"the base does not draw: {res.error_text()}", file=sys.stderr)
                return 1
        print(f"  {sheet.stat().st_size // 1024} KB, "
              f"{len(akcli_backend.nets(sheet).json()['nets'])} nets")
        result = timed(f"a reference pair of {task.name} (validate, apply, nets, score)",
                       lambda: evaluate_pair(task / "reference_ops.json", task, [],
                                             Path(td) / "pair", {"model": "reference",
                                                                 "task": task.name,
                                                                 "sample": 1}))
        print(f"  passed: {result['passed']}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
