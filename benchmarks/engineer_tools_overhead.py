"""What each of the tools of issue 34 (query, check, render, simulate) costs on top of the
work it asks of akcli, per call.

A pair's Toolbox draws d01's reference once, then makes N calls of one tool; the same
work is then done N times in this process without the toolbox: the akcli commands the
tool runs (and, for render, the rasterizing). CPU is this process's and its children's
(the toolbox's confined child is one), the median of interleaved rounds.

    python benchmarks/engineer_tools_overhead.py [--calls 20] [--repeats 3]

Target: at most 20 ms of CPU per call over the work itself (as for draw,
benchmarks/tool_loop_overhead.py, which adds the loop's own cost).
"""

from __future__ import annotations

import argparse
import json
import resource
import statistics
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
TASK = REPO / "tasks" / "d01-rc-lowpass-loaded"
BENCH = {"protocol_version": 1, "stimuli": [
    {"name": "VS", "kind": "vsource", "node": "VIN", "value": "DC 0 AC 1"},
    {"name": "RL", "kind": "bsource", "node": "VOUT", "quantity": "I", "expr": "v(VOUT)/10k"}],
    "analyses": {"ac": "dec 20 10 100k"},
    "assert": [{"name": "f3db", "analysis": "ac", "when": "vdb(VOUT)=-3", "gt": 1}]}
CALLS = {"query": {"component": "R1"}, "check": {"kind": "all"}, "render": {},
         "simulate": {"spec": BENCH}}


def cpu() -> float:
    me = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return me.ru_utime + me.ru_stime + kids.ru_utime + kids.ru_stime


def own_work(tool: str, sheet: Path, work: Path) -> None:
    """What the tool asks of akcli (and librsvg), done directly."""
    from wirebench.runtime import akcli_backend, raster

    if tool == "query":
        akcli_backend.run("component", str(sheet), "R1")
    elif tool == "check":
        akcli_backend.run("read", str(sheet))
        for flag in ("--erc", "--layout", "--integrity"):
            akcli_backend.run("check", flag, str(sheet))
        akcli_backend.nets(sheet)
    elif tool == "render":
        akcli_backend.run("render", str(sheet), "-o", str(work / "b.svg"))
        raster.svg_to_png((work / "b.svg").read_bytes(), str(work / "b.png"))
    else:
        akcli_backend.run("read", str(sheet))
        spec = work / "spec.json"
        spec.write_text(json.dumps({**BENCH, "models": {}}))
        akcli_backend.use_ngspice()
        akcli_backend.run("sim", str(sheet), "--sim", str(spec), "--exit-zero")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--calls", type=int, default=20)
    ap.add_argument("--repeats", type=int, default=3)
    args = ap.parse_args()
    from wirebench.corpus.tasks import load_task
    from wirebench.runtime import akcli_backend
    from wirebench.steps.tools import Toolbox

    task = load_task(TASK)
    symbols = sorted(str(p) for p in (REPO / "symbols").glob("*.kicad_sym"))
    ops = json.loads(task.reference_path.read_text())
    n, worst = args.calls, 0.0
    print(f"{n} calls of each tool on {task.id}'s reference, CPU ms per call "
          f"(median of {args.repeats} rounds):")
    with tempfile.TemporaryDirectory(prefix="wirebench-tools-") as td:
        td = Path(td)
        warm = Toolbox(task, symbols, td, vision=True)  # akcli imported, libraries parsed
        warm.call("draw", {"oplist": ops})
        sheet = td / "board.kicad_sch"
        akcli_backend.new_sheet(sheet)
        cand = td / "cand.json"
        cand.write_text(json.dumps({**ops, "target_file": "board.kicad_sch"}))
        akcli_backend.draw(sheet, cand, symbols)
        for tool, call in CALLS.items():
            warm.call(tool, call)
            own_work(tool, sheet, td)  # each path warm once before it is timed
        warm.close()
        for tool, call in CALLS.items():
            rounds: dict[str, list[float]] = {"own": [], "toolbox": []}
            for _ in range(args.repeats):
                toolbox = Toolbox(task, symbols, td, vision=True)
                toolbox.call("draw", {"oplist": ops})
                start = cpu()
                for _ in range(n):
                    result = toolbox.call(tool, call)
                    assert result.status == "ok", (tool, result.text)
                toolbox.close()  # its confined child is reaped: its CPU is counted
                rounds["toolbox"].append(cpu() - start)
                start = cpu()
                for _ in range(n):
                    own_work(tool, sheet, td)
                rounds["own"].append(cpu() - start)
            own, boxed = (1000 * statistics.median(rounds[k]) / n for k in ("own", "toolbox"))
            worst = max(worst, boxed - own)
            print(f"  {tool:9s} own {own:7.1f}   through the Toolbox {boxed:7.1f}  "
                  f"(+{boxed - own:.1f})", flush=True)
    print(f"the most wirebench adds per call: {worst:.1f} ms (target <= 20 ms)")
    return 0 if worst <= 20 else 1


if __name__ == "__main__":
    sys.exit(main())
