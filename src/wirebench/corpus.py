"""The corpus gate: is every task in a tasks folder sound enough to score agents with?

A task is sound when its files parse, its id is unique, and its own reference answer,
run through the same evaluate code as any agent's, scores 1.0.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

from .evaluate import evaluate_pair
from .tasks import TaskError, discover, load_task


def check_corpus(tasks_dir: Path, symbols: list[str]) -> dict:
    report: dict = {"tasks": [], "problems": [], "ok": 0}
    dirs = discover(tasks_dir)
    if not dirs:
        report["problems"].append(f"{tasks_dir}: no tasks (a task is a folder with task.md)")
    seen: dict[str, str] = {}
    with tempfile.TemporaryDirectory(prefix="wirebench-check-") as td:
        for d in dirs:
            entry = {"id": d.name, "problems": []}
            report["tasks"].append(entry)
            try:
                task = load_task(d)
                declared = task.meta.get("id", task.id)
                if declared in seen:
                    entry["problems"].append(f"duplicate id {declared!r} (also {seen[declared]})")
                seen[declared] = d.name
                task.expected_nets()
                task.postcheck_arrange()
                if not task.reference_path.is_file():
                    raise TaskError(f"{task.reference_path}: missing")
                result = evaluate_pair(task.reference_path, task.path, symbols,
                                       Path(td) / d.name,
                                       {"model": "reference", "task": task.id, "sample": 1})
                if result["score"] != 1.0 or not result["passed"]:
                    entry["problems"].append(
                        f"reference scores {result['score']} (passed={result['passed']}), "
                        "not 1.0")
                    entry["problems"].extend(result["errors"])
            except TaskError as exc:
                entry["problems"].append(str(exc))
            report["ok"] += not entry["problems"]
    report["sound"] = not report["problems"] and report["ok"] == len(report["tasks"])
    return report
