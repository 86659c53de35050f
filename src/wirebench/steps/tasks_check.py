"""The corpus gate (`wirebench tasks check`): is every task in a folder sound enough to
score agents with?

A task is sound when its files parse (task.yaml against its schema), its id is unique,
a task.yaml names its id, family and brief, it holds no secret or network reference, and
its own reference answer, run through the same evaluate code as any agent's, reaches the
expected outcome and passes every criterion.
"""

from __future__ import annotations

import re
import tempfile
from pathlib import Path

from wirebench.corpus.tasks import TaskError, discover, load_task
from wirebench.steps.pair import evaluate_pair

# A task is data for untrusted agents: it must not carry a key, and must not send an
# agent (or the harness) to the network.
FORBIDDEN = [
    (re.compile(r"\b(sk|pk|rk)-[A-Za-z0-9_-]{16,}"), "an API-key-like string"),
    (re.compile(r"\bAKIA[0-9A-Z]{16}\b"), "an AWS access key"),
    (re.compile(r"\b(ghp|gho|github_pat)_[A-Za-z0-9_]{20,}"), "a GitHub token"),
    (re.compile(r"\bxox[abprs]-[A-Za-z0-9-]{10,}"), "a Slack token"),
    (re.compile(r"\$\{env\."), "an ${env.} reference"),
    (re.compile(r"https?://"), "a network address"),
]


def hygiene_problems(task_dir: Path) -> list[str]:
    problems = []
    for path in sorted(p for p in task_dir.rglob("*") if p.is_file()):
        text = path.read_text(encoding="utf-8", errors="replace")
        for pattern, what in FORBIDDEN:
            m = pattern.search(text)
            if m:
                line = text.count("\n", 0, m.start()) + 1
                problems.append(f"{path.name}:{line}: {what} ({m.group(0)[:12]}...)")
    return problems


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
                entry["problems"].extend(hygiene_problems(d))
                task = load_task(d)
                if (d / "task.yaml").is_file():
                    entry["problems"].extend(
                        f"task.yaml: {key} is missing or empty" for key in ("id", "family", "brief")
                        if not str(task.meta.get(key, "")).strip())
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
                if not result["outcome_ok"]:
                    entry["problems"].append(
                        f"reference ends {result['outcome']}, but the task expects "
                        f"{' or '.join(result['expected_outcome'])}")
                elif result["score"] != 1.0 or not result["passed"]:
                    entry["problems"].append(
                        f"reference scores {result['score']} and does not pass")
                if entry["problems"] and result["errors"]:
                    entry["problems"].extend(result["errors"])
            except TaskError as exc:
                entry["problems"].append(str(exc))
            report["ok"] += not entry["problems"]
    report["sound"] = not report["problems"] and report["ok"] == len(report["tasks"])
    return report
