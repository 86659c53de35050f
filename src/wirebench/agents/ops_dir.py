"""The `ops_dir` agent: answers made elsewhere, read from `<dir>/<task id>.json`.

This is how a batch of answers from a chat UI, another harness or an earlier run is
scored (akcli's own harness calls it --ops-dir). A missing file is a pair with no answer,
not a crash.
"""

from pathlib import Path

from .answer import Answer, TurnContext


def answer_path(spec: dict, task_id: str) -> Path:
    return Path(spec["dir"]) / f"{task_id}.json"


def answer(spec: dict, ctx: TurnContext) -> Answer:
    path = answer_path(spec, ctx.task.id)
    if not path.is_file():
        return Answer(ops=None, status="no_answer", error=f"no answer file {path}")
    return Answer(ops=path.read_bytes())
