"""A generated task before it is a folder, and how it becomes one."""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from wirebench.taskgen.layout import dumps
from wirebench.verify.oplist import REFUSAL_KINDS  # the refusals an answer can give


@dataclass
class Wrong:
    """An answer wrong in a known way: the criterion (or `sim:<measure>`) it must fail."""
    name: str
    oplist: dict
    fails: str
    why: str


@dataclass
class GeneratedTask:
    prompt: str
    meta: dict                      # task.yaml, without id and generator (added later)
    reference: dict                 # the oracle: an op-list, or a refusal
    expected: dict | None = None    # expected_nets.json of a transcription task
    base: dict | None = None        # base_ops.json of an edit
    wrong: list[Wrong] = field(default_factory=list)
    id: str = ""


def refusal(kind: str, reason: str) -> dict:
    assert kind in REFUSAL_KINDS
    return {"refusal": {"kind": kind, "reason": reason}}


def _oplist_text(doc: dict) -> str:
    return dumps(doc) if "ops" in doc else json.dumps(doc, indent=2) + "\n"


def _yaml(meta: dict) -> str:
    import yaml

    return yaml.safe_dump(meta, sort_keys=False, width=96, allow_unicode=True)


def files(task: GeneratedTask) -> dict[str, str]:
    meta = {"id": task.id, **task.meta}
    if task.wrong:
        meta["wrong_answers"] = [{"file": f"wrong/{w.name}.json", "fails": w.fails,
                                  "why": w.why} for w in task.wrong]
    out = {"task.md": task.prompt.rstrip() + "\n", "task.yaml": _yaml(meta),
           "reference_ops.json": _oplist_text(task.reference)}
    expected = task.expected
    if expected is None and "refusal" in task.reference:
        expected = {"nets": []}  # nothing to draw: an empty ground truth
    if expected is not None:
        out["expected_nets.json"] = json.dumps(expected, indent=1) + "\n"
    if task.base is not None:
        out["base_ops.json"] = dumps(task.base)
    for w in task.wrong:
        out[f"wrong/{w.name}.json"] = _oplist_text(w.oplist)
    return out


def write(task: GeneratedTask, out: Path) -> Path:
    """The task's folder under `out`, whole or not at all (write_folder)."""
    return write_folder(out / task.id, files(task))


def write_folder(dest: Path, texts: dict[str, str]) -> Path:
    """A folder of these files, whole or not at all: written beside it, then renamed into
    place (an existing folder of the same name is replaced)."""
    dest.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{dest.name}.", dir=dest.parent))
    try:
        for rel, text in texts.items():
            path = tmp / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8")
        os.chmod(tmp, 0o755)
        if dest.exists():
            shutil.rmtree(dest)
        os.replace(tmp, dest)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return dest
