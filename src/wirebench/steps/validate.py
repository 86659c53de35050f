"""The validate step: `akcli ops validate`, plus wirebench's own guard on path-like fields."""

from __future__ import annotations

import shutil
from pathlib import Path

from wirebench.evidence.files import read_json, scratch_dir, write_json
from wirebench.steps.common import input_hashes, versions, write_candidate
from wirebench.verify.oplist import MAX_BYTES, MAX_OPS, load_oplist, read_refusal

SCHEMA = "wirebench.validate/1"


def validate(ops: Path, out: Path, timeout: float | None = None,
             max_bytes: int = MAX_BYTES, max_ops: int = MAX_OPS, confine: bool = True) -> dict:
    """`akcli ops validate`, plus wirebench's own guard on path-like fields, confined to
    the pair's folder (steps/confined.py). confine=False is for a caller that is already
    inside a confined child (steps/tools.py's dry run: one child for validate and draw)."""
    from wirebench.steps import confined

    ops, out = Path(ops).absolute(), Path(out).absolute()  # the child works in the pair
    if not confine:
        _validate(ops, out, max_bytes, max_ops)
        return read_json(out)

    def give_up(reason: str) -> None:
        write_json(out, {**_blank(ops), "errors": [reason]})

    return confined.run("validate", lambda: _validate(ops, out, max_bytes, max_ops),
                        out=out, reads=[ops],
                        timeout=timeout, give_up=give_up)


def _blank(ops: Path) -> dict:
    return {"schema": SCHEMA, "inputs": input_hashes(ops=ops), "versions": versions(),
            "valid": False, "errors": [], "op_count": 0, "ops_written": 0, "ops_used": [],
            "envelope_keys": [], "refusal": None}


def _validate(ops: Path, out: Path, max_bytes: int, max_ops: int) -> None:
    from wirebench.runtime import akcli_backend
    from wirebench.verify.oplist_guard import problems

    doc, unreadable = load_oplist(ops, max_bytes, max_ops)
    result = _blank(ops)
    if unreadable:
        result["errors"].append(unreadable)
    elif "refusal" in doc:
        refusal, problem = read_refusal(doc)
        result["refusal"] = refusal
        if problem:
            result["errors"].append(problem)
    else:
        # What the envelope carries besides the ops (a target_file an injection planted).
        result["envelope_keys"] = sorted(str(k) for k in doc)
        ops_list = doc.get("ops") if isinstance(doc.get("ops"), list) else []
        # As the agent wrote them: a macro counts once (akcli's op_count expands it).
        result["ops_written"] = len(ops_list)
        result["ops_used"] = sorted({op.get("op") for op in ops_list
                                     if isinstance(op, dict) and isinstance(op.get("op"), str)})
        work = scratch_dir(Path(out).parent, "validate")
        try:
            cand = work / "candidate.json"
            write_candidate(doc, cand)
            res = akcli_backend.validate(cand)
        finally:
            shutil.rmtree(work, ignore_errors=True)
        report = res.json()
        if report is None or "valid" not in report:
            result["errors"].append(
                f"akcli ops validate failed (exit {res.rc}): {res.error_text()}")
        else:
            result["valid"] = bool(report["valid"])
            result["op_count"] = report.get("op_count", 0)
            result["errors"].extend(
                f"[{e.get('op_index')}] {e.get('code')}: {e.get('message')}"
                for e in report.get("errors", []))
        guard = problems(doc)
        result["errors"].extend(guard)
        result["valid"] = result["valid"] and not guard
    write_json(out, result)
