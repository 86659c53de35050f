"""The evaluate stage: validate -> apply -> nets -> score for one model x task x sample pair.

Each step reads the previous step's artifact and writes its own JSON document (atomically,
with a `schema` field and the sha256 of what it read). A bad op-list, a refused draw or a
failed post-check is recorded as data in these documents; a step only exits non-zero when
the harness itself is broken.
"""

from __future__ import annotations

import json
import shutil
import tempfile
from pathlib import Path

from .evidence import read_json, sha256_file, write_bytes_atomic, write_json

SCHEMA = {
    "validate": "wirebench.validate/1",
    "apply": "wirebench.apply/1",
    "nets": "wirebench.nets/1",
    "score": "wirebench.score/1",
}


def _versions(with_akcli: bool = True) -> dict:
    from .provenance import versions

    found = versions()
    if not with_akcli:
        found.pop("akcli")
    return found


def _inputs(**paths: Path) -> dict:
    return {name: sha256_file(p) for name, p in sorted(paths.items())}


def load_oplist(ops: Path) -> tuple[dict | None, str | None]:
    """(op-list, None) or (None, why it is unreadable)."""
    raw = Path(ops).read_bytes()
    if not raw.strip():
        return None, "unreadable op-list: the agent wrote no answer"
    try:
        doc = json.loads(raw)
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        return None, f"unreadable op-list: {exc}"
    if not isinstance(doc, dict):
        return None, f"unreadable op-list: top level is {type(doc).__name__}, not an object"
    return doc, None


def write_candidate(doc: dict, path: Path) -> None:
    """The op-list akcli sees: the agent's, with the target file owned by the harness."""
    write_bytes_atomic(path, json.dumps({**doc, "target_file": path.parent.joinpath(
        "board.kicad_sch").name}).encode())


def validate(ops: Path, out: Path) -> dict:
    """`akcli ops validate`, plus wirebench's own guard on path-like fields."""
    from . import akcli_backend
    from .oplist_guard import path_problems

    doc, unreadable = load_oplist(ops)
    result = {"schema": SCHEMA["validate"], "inputs": _inputs(ops=ops), "versions": _versions(),
              "valid": False, "errors": [], "op_count": 0}
    if unreadable:
        result["errors"].append(unreadable)
    else:
        with tempfile.TemporaryDirectory(dir=Path(out).parent, prefix=".validate-") as td:
            cand = Path(td) / "candidate.json"
            write_candidate(doc, cand)
            res = akcli_backend.validate(cand)
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
        guard = path_problems(doc)
        result["errors"].extend(guard)
        result["valid"] = result["valid"] and not guard
    write_json(out, result)
    return result


def _draw_errors(res, work: Path) -> list[str]:
    """Why a draw was refused: per-op errors, or the rail's message and the risky net-diff
    lines (`! MERGE A + B -> A`) akcli printed with it."""
    report = res.json() or {}
    lines = [f"[{op.get('op_index')}] {op.get('op')}: {op.get('error_code')}: {op.get('message')}"
             for op in report.get("ops", []) if op.get("status") not in (None, "ok")]
    if not lines:
        lines.append(res.error_text())
        lines.extend(f"net diff: {line.strip()}" for line in res.stderr.splitlines()
                     if line.strip().startswith("!"))
    return [f"draw --apply refused (exit {res.rc}): {line}".replace(str(work), "<pair>")
            for line in lines]


def apply(ops: Path, validation: Path, task_dir: Path, symbols: list[str],
          out_sheet: Path, out: Path) -> dict:
    """`akcli new` (+ the task's base design) + `akcli draw --apply --strict-nets`, then
    the task's post-checks. On an edit task the rails refuse an op-list that would split
    or merge a named net of the base design.

    The draw happens in a scratch folder inside the pair's folder; the sheet is moved into
    place only when everything has run, so a killed job never leaves a half-drawn sheet.
    """
    from . import akcli_backend
    from .tasks import load_task

    task = load_task(task_dir)
    verdict = read_json(validation)
    result = {"schema": SCHEMA["apply"], "inputs": _inputs(ops=ops, validate=validation),
              "versions": _versions(), "symbols": {Path(s).name: sha256_file(s) for s in symbols},
              "applied": False, "errors": [], "postchecks": []}
    out_sheet = Path(out_sheet)
    work = Path(tempfile.mkdtemp(dir=out_sheet.parent, prefix=".apply-"))
    try:
        sheet = work / "board.kicad_sch"
        made = akcli_backend.new_sheet(sheet)
        if made.rc != 0:
            raise RuntimeError(f"akcli new failed: {made.error_text()}")
        if task.base_ops_path:  # an edit task: the existing design comes first
            base = akcli_backend.draw(sheet, task.base_ops_path, symbols)
            if base.rc != 0:
                raise RuntimeError(f"{task.base_ops_path}: the task's base design does not "
                                   f"draw: {base.error_text()}")
        if not verdict["valid"]:
            result["errors"].append("not drawn: the op-list did not validate")
        else:
            doc, _ = load_oplist(ops)
            cand = work / "candidate.json"
            write_candidate(doc, cand)
            res = akcli_backend.draw(sheet, cand, symbols)
            result["applied"] = res.rc == 0
            result["net_diff"] = ((res.json() or {}).get("net_diff") or {}).get("lines", [])
            if res.rc != 0:
                result["errors"].extend(_draw_errors(res, work))
            else:
                result["postchecks"] = _postchecks(task, sheet, symbols, work)
                result["errors"].extend(c["detail"] for c in result["postchecks"]
                                        if not c["passed"])
        shutil.move(str(sheet), out_sheet)
        write_json(out, result)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return result


def _postchecks(task, sheet: Path, symbols: list[str], work: Path) -> list[dict]:
    from . import akcli_backend

    checks = []
    params = task.postcheck_arrange()
    if params is not None:
        res = akcli_backend.arrange_groups(sheet, params, symbols)
        detail = "arrange --groups --apply kept every net" if res.rc == 0 else (
            f"postcheck arrange --groups failed (exit {res.rc}): the re-pack must be "
            f"net-preserving: {res.error_text(400)}".replace(str(work), "<pair>"))
        checks.append({"kind": "arrange", "params": params, "passed": res.rc == 0,
                       "detail": detail})
    return checks


def nets(sheet: Path, out: Path) -> dict:
    """`akcli nets --json` of the sheet as it landed (after post-checks)."""
    from . import akcli_backend

    res = akcli_backend.nets(sheet)
    report = res.json() or {}
    result = {"schema": SCHEMA["nets"], "inputs": _inputs(sheet=sheet), "versions": _versions(),
              "nets": report.get("nets", []), "errors": []}
    if res.rc != 0 or "nets" not in report:
        result["errors"].append(f"akcli nets failed (exit {res.rc}): {res.error_text()}")
    write_json(out, result)
    return result


AGENT_FIELDS = ("status", "turns_used", "attempts", "wall_s", "prompt_tokens",
                "completion_tokens", "cost_usd", "exit_code", "http_status")


def outcome(agent: dict | None, valid: bool, drawn: bool) -> str:
    """One word for how the pair ended. An infra_error is the harness's or provider's
    failure, never the model's: pass rates leave those pairs out."""
    if agent and agent.get("status") == "infra_error":
        return "infra_error"
    if not valid:
        return "invalid"
    return "success" if drawn else "blocked"


def score(validation: Path, applied: Path, netlist: Path, expected: Path, out: Path,
          pair: dict, agent: Path | None = None) -> dict:
    """Named nets vs ground truth; invalid or refused pairs score 0 with their reasons."""
    from . import scoring
    from .tasks import load_expected

    want = load_expected(expected)
    v, a, n = read_json(validation), read_json(applied), read_json(netlist)
    account = read_json(agent) if agent else None
    drawn = a["applied"] and all(c["passed"] for c in a["postchecks"]) and not n["errors"]
    verdict = (scoring.compare(want, scoring.observed_named_nets(n)) if drawn
               else scoring.not_scored(len(want)))
    inputs = {"validate": validation, "apply": applied, "nets": netlist, "expected": expected}
    agent_errors = []
    if account:
        inputs["agent"] = agent
        if account.get("error"):
            agent_errors.append(f"agent: {account['error']}")
    from .provenance import task_hash

    result = {
        "schema": SCHEMA["score"], **pair,
        "inputs": _inputs(**inputs),
        # The corpus as this pair saw it: its own task folder. The whole corpus's and the
        # config's hashes are in scorecard.json (a per-pair copy would rerun every pair
        # whenever any task changed).
        "task_sha256": task_hash(Path(expected).parent),
        # The akcli that drew this pair, as the apply step recorded it.
        "versions": {**_versions(with_akcli=False), "akcli": a["versions"].get("akcli")},
        "outcome": outcome(account, v["valid"], drawn),
        "valid": v["valid"], "applied": a["applied"],
        "score": verdict["score"], "passed": verdict["passed"] and drawn,
        "matched": verdict["matched"], "expected": verdict["expected"],
        "extra_named_nets": verdict["extra_named_nets"],
        "errors": [*agent_errors, *v["errors"], *a["errors"], *n["errors"],
                   *verdict["mismatches"]],
        "agent": {k: account.get(k) for k in AGENT_FIELDS} if account else None,
    }
    write_json(out, result)
    return result


def evaluate_pair(ops: Path, task_dir: Path, symbols: list[str], pair_dir: Path,
                  pair: dict, agent: Path | None = None) -> dict:
    """All four steps in one process: what `wirebench score` and `tasks check` run.

    The Snakemake rules call the very same functions one step at a time.
    """
    pair_dir = Path(pair_dir)
    pair_dir.mkdir(parents=True, exist_ok=True)
    files = {k: pair_dir / f"{k}.json" for k in ("validate", "apply", "nets", "score")}
    sheet = pair_dir / "board.kicad_sch"
    validate(ops, files["validate"])
    apply(ops, files["validate"], task_dir, symbols, sheet, files["apply"])
    nets(sheet, files["nets"])
    return score(files["validate"], files["apply"], files["nets"],
                 Path(task_dir) / "expected_nets.json", files["score"], pair, agent=agent)
