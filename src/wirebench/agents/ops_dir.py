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
    from wirebench.verify.oplist import MAX_BYTES

    path = answer_path(spec, ctx.task.id)
    if not path.is_file():
        return Answer(ops=None, status="no_answer", error=f"no answer file {path}")
    # A symlink that leads out of the folder would score, and archive, whatever it
    # points at.
    folder = Path(spec["dir"]).resolve()
    if not path.resolve().is_relative_to(folder):
        return Answer(ops=None, status="no_answer",
                      error=f"{path} leads out of {spec['dir']} (a symlink): not read")
    with open(path, "rb") as fh:
        data = fh.read(MAX_BYTES + 1)
    if len(data) > MAX_BYTES:
        return Answer(ops=None, status="no_answer",
                      error=f"{path} is larger than {MAX_BYTES} bytes: not read")
    return Answer(ops=data)
