"""Replay: is the evaluation of a stored answer reproducible?

It re-runs validate -> apply -> nets -> score for every stored pair in a scratch folder and
compares each step's trace hash (wirebench/evidence/trace.py) with the stored one.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

from wirebench.evidence.files import read_json
from wirebench.evidence.trace import pair_trace
from wirebench.steps.pair import evaluate_pair


def replay(results: Path, tasks_dir: Path, symbols: list[str],
           kicad: str | None = None) -> dict:
    """Re-evaluate every stored pair and compare its trace with the stored one."""
    report = {"pairs": [], "equivalent": 0}
    for score_path in sorted(Path(results).glob("runs/*/*/*/score.json")):
        pair = score_path.parent
        stored = read_json(pair / "trace.json") if (pair / "trace.json").is_file() \
            else pair_trace(pair)
        now_stored = pair_trace(pair)  # the artifacts as they are on disk now
        doc = read_json(score_path)
        with tempfile.TemporaryDirectory(prefix="wirebench-replay-") as td:
            scratch = Path(td)
            (scratch / "ops.json").write_bytes((pair / "ops.json").read_bytes())
            evaluate_pair(scratch / "ops.json", Path(tasks_dir) / doc["task"], symbols, scratch,
                          {k: doc[k] for k in ("model", "task", "sample")},
                          agent=pair / "agent.json", kicad=kicad)
            fresh = pair_trace(scratch)
        differs = [a["step"] for a, b, c in zip(stored["steps"], now_stored["steps"],
                                                 fresh["steps"], strict=True)
                   if not a["result"] == b["result"] == c["result"]]
        same = not differs and stored["outcome"] == fresh["outcome"]
        report["pairs"].append({"pair": pair.relative_to(results).as_posix(), "same": same,
                                "differs": differs, "outcome": stored["outcome"],
                                "replayed_outcome": fresh["outcome"]})
        report["equivalent"] += same
    n = len(report["pairs"])
    report["total"] = n
    report["percent"] = round(100 * report["equivalent"] / n, 2) if n else None
    return report
