"""What the real tier's powered bench costs (taskgen/real/bench.py): the PIC programmer
read on the bench N times over in one ngspice process, and its demo's tasks generated
with the bench's notes. Prints wall seconds and milliseconds an operating point.

    python benchmarks/real_bench_cost.py [--boards 800] [--demo pic_programmer]

Needs Debian's kicad-demos and libngspice0. The tasks go to a temporary folder and are
deleted (they derive from GPL designs).
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path


def main() -> int:
    from wirebench.taskgen import real
    from wirebench.taskgen.real import bench
    from wirebench.taskgen.real import demos as demo_mod

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--boards", type=int, default=800)
    ap.add_argument("--demo", default="pic_programmer", choices=sorted(bench.BENCHES))
    ap.add_argument("--demos", type=Path, default=Path("/usr/share/kicad/demos"))
    args = ap.parse_args()
    design = demo_mod.read(demo_mod.BY_NAME[args.demo], args.demos)
    the_bench = bench.for_design(design)
    with tempfile.TemporaryDirectory(prefix="wirebench-bench-cost-") as td:
        library = Path(td) / "symbols.kicad_sym"
        library.write_text(design.library, encoding="utf-8")
        bench.readings(the_bench, [design.parts], [str(library)])  # pin tables cached
        wall = time.time()
        got = bench.readings(the_bench, [design.parts] * args.boards, [str(library)])
        took = time.time() - wall
        points = args.boards * len(the_bench.states)
        print(f"{args.boards} boards x {len(the_bench.states)} states: {took:.1f} s wall, "
              f"{1e3 * took / points:.1f} ms an operating point, "
              f"{sum(g is None for g in got)} unsolved")
        wall = time.time()
        made = real.generate("7", args.demos, Path(td) / "tasks", names=[args.demo])
        told = sum("On the bench" in (t / "task.md").read_text() for t in made)
        print(f"generate {args.demo} (seed 7): {time.time() - wall:.1f} s wall, "
              f"{len(made)} tasks, {told} told by the bench")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
