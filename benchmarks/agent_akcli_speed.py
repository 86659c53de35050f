"""How long a command agent's own `akcli draw` of a board takes inside its sandbox.

A `command` agent (agents/command.py, real bubblewrap) runs `akcli new` and a dry-run
`akcli draw` of a board task's reference, timed inside the sandbox, with the libraries in
SYMBOLS_DIR (a copy of each library the task uses holding only its symbols) and, with
`--full`, with KiCad's full libraries from /usr/share/kicad/symbols, cut off at
`--full-cap` seconds (uncut it ran for more than 13 minutes here).

    python benchmarks/agent_akcli_speed.py [--task tasks/b01-stm32f030-minimum] [--repeats 3]
        [--full] [--full-cap 120]

Target: under 10 s with SYMBOLS_DIR.
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
# The agent: a fresh sheet and a dry-run draw, each library passed as akcli takes them,
# timed with the shell's clock; the answer it draws is the reference, which the sandbox
# shows it here (a benchmark of akcli's speed, not of a model).
SCRIPT = r"""
set -u
libs="$1"; answer="$2"; cap="$3"
[ "$libs" = trimmed ] && libs=$(ls "$SYMBOLS_DIR"/*.kicad_sym)
start=$(date +%s%N)
akcli new /tmp/b.kicad_sch >/dev/null 2>&1
timeout "$cap" akcli draw /tmp/b.kicad_sch --ops "$answer" $(printf -- '--symbols %s ' $libs) \
    > /tmp/draw.txt 2>&1
rc=$?
end=$(date +%s%N)
echo "draw rc=$rc ms=$(( (end - start) / 1000000 )) new_nets=$(grep -c 'NEW' /tmp/draw.txt)" >&2
sizes=$(for f in $libs; do printf '%s(%s) ' "$(basename "$f")" "$(wc -c < "$f")"; done)
echo "libraries: $sizes" >&2
echo "akcli: $(command -v akcli)" >&2
cp "$answer" "$OPS_OUT"
"""

def run_once(task_dir: Path, libs: str, cap: float, work: Path) -> dict:
    from wirebench.agents import command
    from wirebench.agents.answer import TurnContext
    from wirebench.corpus.libraries import symbols_for
    from wirebench.corpus.tasks import load_task

    task = load_task(task_dir)
    answer = work / "answer.json"
    answer.write_text((task_dir / "reference_ops.json").read_text())
    script = work / "agent.sh"
    script.write_text(SCRIPT)
    for path in (work, answer, script):  # the agent runs as nobody when run by root
        path.chmod(0o755 if path.is_dir() else 0o644)
    spec = {"kind": "command", "timeout": cap + 60, "expose": [str(work)],
            "command": f"sh {script} '{libs}' {answer} {cap:g}"}
    ctx = TurnContext("bench", task, 1, 1, task.prompt_path, None,
                      symbols=symbols_for(task, []))
    got = command.answer(spec, ctx)
    tail = got.detail.get("stderr_tail") or ""
    m = re.search(r"draw rc=(\d+) ms=(\d+) new_nets=(\d+)", tail)
    if not m:
        raise SystemExit(f"the agent said nothing measurable: {got.status} {got.error} {tail}")
    return {"rc": int(m[1]), "seconds": int(m[2]) / 1000, "new_nets": int(m[3]),
            "libraries": re.search(r"libraries: (.*)", tail)[1],
            "akcli": re.search(r"akcli: (.*)", tail)[1]}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--task", type=Path, default=REPO / "tasks" / "b01-stm32f030-minimum")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--full", action="store_true", help="also time KiCad's full libraries")
    ap.add_argument("--full-cap", type=float, default=120.0)
    args = ap.parse_args()
    from wirebench.corpus.libraries import symbols_for
    from wirebench.corpus.tasks import load_task

    task = load_task(args.task)
    libraries = symbols_for(task, [])
    rows = {"SYMBOLS_DIR": "trimmed"}
    if args.full:
        rows["full libraries"] = " ".join(libraries)
    print(f"{task.id}: {len(task.named_lib_ids())} symbols from {len(libraries)} libraries, "
          f"akcli draw inside the agent's sandbox")
    out, failed = {}, False
    for label, libs in rows.items():
        cap = args.full_cap if label != "SYMBOLS_DIR" else 600.0
        times = []
        for _ in range(args.repeats if label == "SYMBOLS_DIR" else 1):
            with tempfile.TemporaryDirectory(prefix="wirebench-bench-") as td:
                got = run_once(args.task, libs, cap, Path(td))
            times.append(got["seconds"])
            cut = got["rc"] == 124
            failed |= label == "SYMBOLS_DIR" and got["rc"] != 0
            print(f"  {label:16s} {got['seconds']:7.2f} s  rc={got['rc']}"
                  f"{' (cut off at the cap)' if cut else ''}  {got['new_nets']} new nets"
                  f"  {got['libraries']}", flush=True)
        print(f"  (akcli: {got['akcli']})")
        out[label] = statistics.median(times)
    print(json.dumps({"task": task.id, "median_s": out}))
    return 0 if out["SYMBOLS_DIR"] < 10 and not failed else 1


if __name__ == "__main__":
    sys.exit(main())
