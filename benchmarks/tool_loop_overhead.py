"""What the tool-calling loop costs on top of akcli's own work, per tool call.

A scripted model (tests/fake_openai.py, in a process of its own, so its CPU is not
counted) calls `draw` with a task's reference N times, then submits. The same N draws
are then timed twice more in this process: as akcli's own calls (validate, a fresh
sheet, the draw, the layout check the task's criteria ask for), and through the pair's
Toolbox without the loop. CPU is this process's and its children's (the confined steps
are forked children).

    python benchmarks/tool_loop_overhead.py [--calls 30] [--repeats 3] [--task tasks/01-divider]

Target: the loop (HTTP client, messages, trajectory) plus the toolbox (confinement,
documents) adds at most 20 ms of CPU per call over akcli's own. What a pair pays once
whatever its number of calls (importing the `openai` package) is printed on its own line.
"""

from __future__ import annotations

import argparse
import json
import resource
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
SERVER = """
import json, sys
sys.path.insert(0, sys.argv[1])
from fake_openai import FakeOpenAI, tool_calls
ops, n = json.loads(open(sys.argv[2]).read()), int(sys.argv[3])
def script(k, body):
    done = sum(m["role"] == "tool" for m in body["messages"])
    return tool_calls(("draw", {"oplist": ops}) if done < n else ("submit", {"oplist": ops}))
server = FakeOpenAI({"drawer": script})
print(server.base_url, flush=True)
with server:
    sys.stdin.read()
"""


def cpu() -> float:
    me = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return me.ru_utime + me.ru_stime + kids.ru_utime + kids.ru_stime


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--calls", type=int, default=30)
    ap.add_argument("--task", type=Path, default=REPO / "tasks" / "01-divider")
    ap.add_argument("--repeats", type=int, default=3)
    args = ap.parse_args()
    from wirebench.agents import tool_loop
    from wirebench.agents.answer import TurnContext
    from wirebench.corpus.libraries import symbols_for
    from wirebench.corpus.tasks import load_task
    from wirebench.runtime import akcli_backend
    from wirebench.steps.prompt_pack import build
    from wirebench.steps.tools import Toolbox

    task = load_task(args.task)
    symbols = symbols_for(task, sorted(str(p) for p in (REPO / "symbols").glob("*.kicad_sym")))
    ops = json.loads(task.reference_path.read_text())
    n = args.calls
    rounds: dict[str, list[float]] = {"own": [], "toolbox": [], "loop": []}
    server = subprocess.Popen([sys.executable, "-c", SERVER, str(REPO / "tests"),
                               str(task.reference_path), str(n)],
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    base_url = server.stdout.readline().strip()
    try:
        with tempfile.TemporaryDirectory(prefix="wirebench-loop-") as td:
            td = Path(td)
            prompt = td / "prompt.md"
            prompt.write_text(build(task.path, REPO / "skills", symbols))
            warm = Toolbox(task, symbols, td)  # akcli imported, libraries parsed, once
            warm.call("draw", {"oplist": ops})
            warm.close()
            # Once a pair, not once a call: the generate step imports the client.
            started = cpu()
            import openai  # noqa: F401
            once = cpu() - started
            # Interleaved rounds, the median of each: the VM's CPU figures drift.
            for _ in range(args.repeats):
                spec = {"kind": "openai", "tools": True, "base_url": base_url,
                        "model": "drawer", "max_tool_calls": n + 1}
                toolbox = Toolbox(task, symbols, td)
                ctx = TurnContext("bench", task, 1, 1, prompt, None, tools=toolbox)
                start = cpu()
                answer = tool_loop.answer(spec, ctx)
                toolbox.close()  # its confined child is reaped: its CPU is counted
                rounds["loop"].append(cpu() - start)
                assert answer.status == "ok" and answer.detail["tool_calls"] == n + 1, answer

                toolbox = Toolbox(task, symbols, td)
                start = cpu()
                for _ in range(n):
                    toolbox.call("draw", {"oplist": ops})
                toolbox.close()
                rounds["toolbox"].append(cpu() - start)

                cand = td / "cand.json"
                cand.write_text(json.dumps({**ops, "target_file": "board.kicad_sch"}))
                start = cpu()
                for _ in range(n):
                    akcli_backend.validate(cand)
                    sheet = td / "board.kicad_sch"
                    akcli_backend.new_sheet(sheet)
                    akcli_backend.draw(sheet, cand, symbols)
                    akcli_backend.run("check", "--layout", str(sheet))
                rounds["own"].append(cpu() - start)
    finally:
        server.stdin.close()
        server.wait(timeout=10)
    own, direct, loop = (statistics.median(rounds[k]) for k in ("own", "toolbox", "loop"))
    per = lambda total: 1000 * total / n  # noqa: E731
    print(f"{n} draw calls of {task.id}, CPU ms per call (median of {args.repeats} rounds):")
    print(f"  akcli's own work            {per(own):7.1f}")
    print(f"  through the Toolbox         {per(direct):7.1f}  (+{per(direct - own):.1f})")
    print(f"  through the tool loop       {per(loop):7.1f}  (+{per(loop - own):.1f})")
    added = per(loop - own)
    print(f"once a pair: importing the openai client, {1000 * once:.0f} ms")
    print(f"wirebench adds {added:.1f} ms of CPU per tool call (target <= 20 ms)")
    return 0 if added <= 20 else 1


if __name__ == "__main__":
    sys.exit(main())
