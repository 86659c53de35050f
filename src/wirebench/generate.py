"""The generate stage: one agent answers one task, once per sample.

It writes the agent's answer verbatim to ops.json (empty when there is none: validation
then scores it as unreadable) and what happened to agent.json.
"""

from __future__ import annotations

import time
from pathlib import Path

from . import __version__
from .agents import answer
from .agents.answer import Answer
from .evidence import sha256_bytes, write_bytes_atomic, write_json
from .tasks import load_task

SCHEMA = "wirebench.agent/1"


def generate(model: str, spec: dict, task_dir: Path, sample: int, out_ops: Path,
             out_agent: Path) -> dict:
    task = load_task(task_dir)
    started = time.monotonic()
    try:
        result = answer(spec, task, sample)
    except Exception as exc:  # an agent that crashes is a result, never a crashed run
        result = Answer(ops=None, status="infra_error", error=f"{type(exc).__name__}: {exc}")
    ops = result.ops or b""
    write_bytes_atomic(out_ops, ops)
    doc = {
        "schema": SCHEMA, "model": model, "task": task.id, "sample": sample,
        "kind": spec.get("kind"), "status": result.status, "error": result.error,
        "wall_s": round(time.monotonic() - started, 3),
        "ops_sha256": sha256_bytes(ops), "versions": {"wirebench": __version__},
        **result.detail,
    }
    write_json(out_agent, doc)
    return doc
