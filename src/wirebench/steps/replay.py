"""Replay: is the evaluation of a stored answer reproducible?

It re-runs validate -> apply -> nets -> score for every stored pair in a scratch folder and
compares each step's trace hash (wirebench/evidence/trace.py) with the stored one. A pair
whose agent drove akcli through tool calls also has its trajectory replayed: every stored
call is made again on a fresh toolbox, and each result must come back with the same status
and the same bytes (latencies, the only volatile field, are not compared; the toolbox
writes no host path into a result).
"""

from __future__ import annotations

import tempfile
from pathlib import Path

from wirebench.corpus.tasks import task_folder
from wirebench.evidence.files import read_json
from wirebench.evidence.trace import pair_trace
from wirebench.steps.pair import evaluate_pair


def replay(results: Path, tasks_dir: Path | list[Path], symbols: list[str],
           kicad: str | None = None) -> dict:
    """Re-evaluate every stored pair and compare its trace with the stored one."""
    report = {"pairs": [], "equivalent": 0}
    stored = sorted(Path(results).glob("runs/*/*/*/score.json"))
    if not stored:  # a typo must never replay as "0/0 equivalent", a success
        raise ValueError(f"{results}: not a run (no runs/<model>/<task>/<sample>/score.json)")
    for score_path in stored:
        pair = score_path.parent
        stored = read_json(pair / "trace.json") if (pair / "trace.json").is_file() \
            else pair_trace(pair)
        now_stored = pair_trace(pair)  # the artifacts as they are on disk now
        doc = read_json(score_path)
        with tempfile.TemporaryDirectory(prefix="wirebench-replay-") as td:
            scratch = Path(td)
            (scratch / "ops.json").write_bytes((pair / "ops.json").read_bytes())
            evaluate_pair(scratch / "ops.json", task_folder(tasks_dir, doc["task"]), symbols,
                          scratch,
                          {k: doc[k] for k in ("model", "task", "sample")},
                          agent=pair / "agent.json", kicad=kicad)
            fresh = pair_trace(scratch)
            agent = read_json(pair / "agent.json") if (pair / "agent.json").is_file() else {}
            trajectory = replay_trajectory(agent, task_folder(tasks_dir, doc["task"]), symbols,
                                           scratch / "tools", kicad)
        differs = [a["step"] for a, b, c in zip(stored["steps"], now_stored["steps"],
                                                 fresh["steps"], strict=True)
                   if not a["result"] == b["result"] == c["result"]]
        if trajectory and not trajectory["same"]:
            differs.append(f"trajectory (call {trajectory['first_divergence']})")
        same = not differs and stored["outcome"] == fresh["outcome"]
        report["pairs"].append({"pair": pair.relative_to(results).as_posix(), "same": same,
                                "differs": differs, "outcome": stored["outcome"],
                                "replayed_outcome": fresh["outcome"]})
        report["equivalent"] += same
    n = len(report["pairs"])
    report["total"] = n
    report["percent"] = round(100 * report["equivalent"] / n, 2) if n else None
    return report


def replay_trajectory(agent: dict, task_dir: Path, symbols: list[str], scratch: Path,
                      kicad: str | None = None) -> dict | None:
    """Make a tool-calling agent's stored calls again, in order, on a fresh toolbox.
    None when the pair made no tool calls."""
    from wirebench.corpus.libraries import symbols_for
    from wirebench.corpus.tasks import load_task
    from wirebench.steps.tools import Toolbox, parse_args

    steps = [s for turn in agent.get("turns", []) for s in turn.get("trajectory", [])]
    if not steps:
        return None
    task = load_task(task_dir)
    scratch.mkdir(parents=True, exist_ok=True)
    # A step that showed the model a picture was made by an entry with `vision: true`.
    toolbox = Toolbox(task, symbols_for(task, symbols, kicad), scratch,
                      vision=any("image_bytes" in s for s in steps))
    first = None
    try:
        for step in steps:
            if "args" not in step or "result_sha256" not in step:  # too large, or older
                first = first or step["i"]
                break
            result = toolbox.call(step["tool"], parse_args(step["args"]))
            again = Toolbox.record(step["i"], step["tool"], step["args"], result, 0.0)
            if (again["status"], again["result_sha256"]) != (step["status"],
                                                             step["result_sha256"]):
                first = step["i"]
                break
    finally:
        toolbox.close()
    return {"steps": len(steps), "same": first is None, "first_divergence": first}
