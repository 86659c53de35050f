"""The corpus gate (`wirebench tasks check`): is every task in a folder sound enough to
score agents with?

A task is sound when its files parse (task.yaml against its schema), its id is unique,
a task.yaml names its id, family and brief, it holds no secret or network reference, and
its own reference answer, run through the same evaluate code as any agent's, reaches the
expected outcome and passes every criterion, and a task that expects a refusal expects
the one the prompt pack teaches for its kind of request (verify/refusals.py).
"""

from __future__ import annotations

import re
import tempfile
from pathlib import Path

from wirebench.corpus.tasks import TaskError, discover, load_task
from wirebench.steps.pair import evaluate_pair
from wirebench.verify import refusals

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


MIN_WRONG_ANSWERS = 2


def design_problems(task) -> list[str]:
    """A design task must show that its verifier discriminates, and read well."""
    if task.testbench is None:
        return []
    problems = []
    if len(task.meta.get("wrong_answers", [])) < MIN_WRONG_ANSWERS:
        problems.append(f"a design task ships at least {MIN_WRONG_ANSWERS} wrong answers "
                        "(task.yaml wrong_answers)")
    if not any(c["kind"] == "layout_clean" for c in task.criteria):
        problems.append("a design task holds its answers to layout_clean")
    if not task.meta.get("interface"):
        problems.append("a design task names its interface nets (task.yaml interface)")
    return problems


def failed_for(result: dict, sim: dict | None, target: str) -> bool:
    """Did the pair fail on `target`: a criterion id, or `sim:<measure>`?"""
    if target.startswith("sim:"):
        name = target[4:]
        return any(m["name"] == name and not m["ok"] for m in (sim or {}).get("measures", []))
    return any(c["id"] == target and c["verdict"] == "fail" for c in result["criteria"])


def _functional_target(result: dict, target: str) -> bool:
    """Is `target` (a criterion id or `sim:<measure>`) a functional criterion in this
    pair's verdicts (an ERC verdict is one when an error is left)?"""
    return target.startswith("sim:") or any(
        c["id"] == target and c.get("class", "function") == "function"
        for c in result["criteria"])


def wrong_answer_problems(task, symbols: list[str], scratch: Path,
                          kicad: str | None = None) -> list[str]:
    """Each known-wrong answer must fail, and for the reason the task states."""
    from wirebench.evidence.files import read_json

    problems = []
    for i, wrong in enumerate(task.meta.get("wrong_answers", []), start=1):
        path = task.path / wrong["file"]
        if not path.is_file():
            problems.append(f"wrong answer {wrong['file']}: missing")
            continue
        pair = scratch / f"wrong-{i}"
        result = evaluate_pair(path, task.path, symbols, pair,
                               {"model": "wrong", "task": task.id, "sample": i}, kicad=kicad)
        sim = read_json(pair / "sim.json") if (pair / "sim.json").is_file() else None
        # A wrong answer kept for a quality criterion (its layout) passes on function;
        # it must still not be clean.
        if result["passed"] if _functional_target(result, wrong["fails"]) else result["clean"]:
            problems.append(f"wrong answer {wrong['file']} passes; it should fail on "
                            f"{wrong['fails']} ({wrong['why']})")
        elif not failed_for(result, sim, wrong["fails"]):
            problems.append(f"wrong answer {wrong['file']} fails, but not on "
                            f"{wrong['fails']}: {'; '.join(result['errors'][:3])}")
    return problems


def check_corpus(tasks_dir: Path, symbols: list[str], kicad: str | None = None) -> dict:
    report: dict = {"tasks": [], "problems": [], "ok": 0}
    # one task's own folder is checked alone, as a user checking an edit would expect
    alone = (Path(tasks_dir) / "task.md").is_file()
    dirs = [Path(tasks_dir)] if alone else discover(tasks_dir)
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
                reference = Path(td) / f"{d.name}.reference_ops.json"
                reference.write_bytes(task.reference_ops())
                result = evaluate_pair(reference, task.path, symbols,
                                       Path(td) / d.name,
                                       {"model": "reference", "task": task.id, "sample": 1},
                                       kicad=kicad)
                if not result["outcome_ok"]:
                    entry["problems"].append(
                        f"reference ends {result['outcome']}, but the task expects "
                        f"{' or '.join(result['expected_outcome'])}")
                elif result["score"] != 1.0 or not result["passed"]:
                    entry["problems"].append(
                        f"reference scores {result['score']} and does not pass")
                elif not result["clean"]:
                    entry["problems"].append(
                        f"reference passes but is not clean ({result['first_finding']})")
                if entry["problems"] and result["errors"]:
                    entry["problems"].extend(result["errors"])
                entry["problems"].extend(design_problems(task))
                if not task.akcli_format:
                    entry["problems"].extend(refusals.problems(task.meta,
                                                               task.expected_outcomes))
                entry["problems"].extend(
                    wrong_answer_problems(task, symbols, Path(td) / d.name, kicad))
                entry["tier"] = task.tier
            except TaskError as exc:
                entry["problems"].append(str(exc))
            report["ok"] += not entry["problems"]
    report["op_coverage"] = op_coverage(dirs)
    report["sound"] = not report["problems"] and report["ok"] == len(report["tasks"])
    return report


def op_coverage(dirs: list[Path]) -> dict:
    """Which of akcli's ops (and macros) the corpus's reference answers use: an op no
    reference uses is one no task can tell an agent's mastery of."""
    import json

    from wirebench.runtime import akcli_backend

    offered = [line.split()[0] for line in akcli_backend.ops_list_text().splitlines()
               if line.strip() and not line.startswith("--")]
    used: set[str] = set()
    for d in dirs:
        try:
            doc = json.loads((d / "reference_ops.json").read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue  # that task's own problem, reported above
        ops = doc.get("ops") if isinstance(doc, dict) else None
        used |= {op.get("op") for op in ops or [] if isinstance(op, dict)}
    return {"offered": len(offered), "used": sorted(used & set(offered)),
            "missing": [op for op in offered if op not in used]}
