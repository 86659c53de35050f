"""A pair's trace, and replay: is the evaluation of a stored answer reproducible?

The trace lists each evaluate step with the hashes of what it read and of what it wrote,
after removing what legitimately differs between two runs: the agent's wall times (and so
agent.json's hash). Everything else, the drawn sheet included, must be byte-identical:
wirebench pins the sheet's root uuid, the one random value akcli puts in a new sheet.
`wirebench replay` (wirebench/steps/replay.py) re-runs the steps of every stored pair and
compares these hashes.
"""

from __future__ import annotations

import copy
from pathlib import Path

from wirebench.evidence.files import dumps, read_json, sha256_bytes, sha256_file, write_json

SCHEMA = "wirebench.trace/1"
STEPS = ("validate", "apply", "nets", "sim", "score")  # sim: design tasks only


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
        if step == "sim" and not (pair / "sim.json").is_file():
            continue
        doc = read_json(pair / f"{step}.json")
        steps.append({"step": step, "inputs": normalize(step, doc).get("inputs", {}),
                      "result": sha256_bytes(dumps(normalize(step, doc)).encode())})
    steps.append({"step": "sheet", "inputs": {}, "result": sha256_file(pair / "board.kicad_sch")})
    body = {"steps": steps}
    return {"schema": SCHEMA, **body, "trace_sha256": sha256_bytes(dumps(body).encode()),
            "outcome": read_json(pair / "score.json")["outcome"]}


def write(pair: Path, out: Path) -> None:
    write_json(out, pair_trace(pair))
