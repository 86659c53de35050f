"""A pair's trace, and replay: is the evaluation of a stored answer reproducible?

The trace lists each evaluate step with the hashes of what it read and of what it wrote,
after removing what legitimately differs between two runs: the agent's wall times (and so
agent.json's hash). Everything else, the drawn sheet included, must be byte-identical:
wirebench pins the sheet's root uuid, the one random value akcli puts in a new sheet.
`wirebench replay` re-runs validate -> apply -> nets -> score for every stored pair in a
scratch folder and compares the trace hashes.
"""

from __future__ import annotations

import copy
import tempfile
from pathlib import Path

from .evidence import dumps, read_json, sha256_bytes, sha256_file, write_json

SCHEMA = "wirebench.trace/1"
STEPS = ("validate", "apply", "nets", "score")


def normalize(step: str, doc: dict) -> dict:
    doc = copy.deepcopy(doc)
    if step == "score":
        doc["inputs"].pop("agent", None)  # agent.json holds wall times
        if doc.get("agent"):
            doc["agent"].pop("wall_s", None)
    return doc


def pair_trace(pair: Path) -> dict:
    pair = Path(pair)
    steps = []
    for step in STEPS:
        doc = read_json(pair / f"{step}.json")
        steps.append({"step": step, "inputs": normalize(step, doc).get("inputs", {}),
                      "result": sha256_bytes(dumps(normalize(step, doc)).encode())})
    steps.append({"step": "sheet", "inputs": {}, "result": sha256_file(pair / "board.kicad_sch")})
    body = {"steps": steps}
    return {"schema": SCHEMA, **body, "trace_sha256": sha256_bytes(dumps(body).encode()),
            "outcome": read_json(pair / "score.json")["outcome"]}


def write(pair: Path, out: Path) -> None:
    write_json(out, pair_trace(pair))


def replay(results: Path, tasks_dir: Path, symbols: list[str]) -> dict:
    """Re-evaluate every stored pair and compare its trace with the stored one."""
    from .evaluate import evaluate_pair

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
                          agent=pair / "agent.json")
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
