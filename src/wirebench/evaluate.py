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


REFUSAL_KINDS = ("stop-condition", "human-review-required")


def read_refusal(doc: dict) -> tuple[dict | None, str | None]:
    """An agent may decline instead of drawing (skills doc, "Declining"):
    {"refusal": {"kind": "stop-condition" | "human-review-required", "reason": "..."}}."""
    refusal = doc.get("refusal")
    if (isinstance(refusal, dict) and refusal.get("kind") in REFUSAL_KINDS
            and isinstance(refusal.get("reason"), str) and refusal["reason"].strip()):
        return {"kind": refusal["kind"], "reason": refusal["reason"].strip()}, None
    return None, ("REFUSAL_MALFORMED: a refusal is {\"refusal\": {\"kind\": one of "
                  f"{list(REFUSAL_KINDS)}, \"reason\": \"...\"}}}}")


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
              "valid": False, "errors": [], "op_count": 0, "ops_written": 0, "ops_used": [],
              "refusal": None}
    if unreadable:
        result["errors"].append(unreadable)
    elif "refusal" in doc:
        refusal, problem = read_refusal(doc)
        result["refusal"] = refusal
        if problem:
            result["errors"].append(problem)
    else:
        ops_list = doc.get("ops") if isinstance(doc.get("ops"), list) else []
        # As the agent wrote them: a macro counts once (akcli's op_count expands it).
        result["ops_written"] = len(ops_list)
        result["ops_used"] = sorted({op.get("op") for op in ops_list
                                     if isinstance(op, dict) and isinstance(op.get("op"), str)})
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
    """Why a draw was refused: per-op errors, akcli's connectivity gate (a dangling bus
    entry ...), or the rail's message and the risky net-diff lines (`! MERGE A + B -> A`)
    akcli printed with it."""
    report = res.json() or {}
    lines = [f"[{op.get('op_index')}] {op.get('op')}: {op.get('error_code')}: {op.get('message')}"
             for op in report.get("ops", []) if op.get("status") not in (None, "ok")]
    lines += [f"{c.get('code')}: {c.get('message')}" for c in report.get("connectivity") or []
              if c.get("severity") == "error"]
    if not lines:
        lines.append(res.error_text())
        lines.extend(f"net diff: {line.strip()}" for line in res.stderr.splitlines()
                     if line.strip().startswith("!"))
    return [f"draw --apply refused (exit {res.rc}): {line}".replace(str(work), "<pair>")
            for line in lines]


def apply(ops: Path, validation: Path, task_dir: Path, symbols: list[str],
          out_sheet: Path, out: Path, out_svg: Path | None = None) -> dict:
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
                result["facts"] = _sheet_facts(task, sheet)
        if out_svg:
            _render(sheet, work, Path(out_svg))
        for child in work.glob("*.kicad_sch"):  # child sheets of a hierarchical design
            if child != sheet:
                shutil.move(str(child), out_sheet.parent / child.name)
        shutil.move(str(sheet), out_sheet)
        write_json(out, result)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return result


def _sheet_facts(task, sheet: Path) -> dict:
    """What the task's criteria need to know about the sheet, read now by akcli so the
    score step stays free of akcli (and reruns in milliseconds)."""
    from . import akcli_backend

    kinds = {c["kind"] for c in task.criteria}
    facts: dict = {}
    if "values" in kinds:
        doc = akcli_backend.run("read", str(sheet)).json() or {}
        facts["values"] = {c["designator"]: c.get("value")
                           for c in doc.get("components", []) if c.get("designator")}
    for kind, flag in (("erc_clean", "--erc"), ("integrity", "--integrity")):
        if kind in kinds:
            doc = akcli_backend.run("check", flag, str(sheet)).json() or {}
            facts[kind] = [f"{f['code']} ({f['severity']}): {f['message']}"
                           for f in doc.get("findings", [])
                           if f.get("severity") in ("warning", "error")]
    return facts


def _render(sheet: Path, work: Path, out_svg: Path) -> None:
    """The sheet as akcli draws it, for people: the report's drill-downs and the
    `subjective` criteria show it."""
    from html import escape

    from . import akcli_backend

    svg = work / "board.svg"
    res = akcli_backend.run("render", str(sheet), "-o", str(svg))
    if res.rc != 0 or not svg.is_file():
        why = escape(res.error_text(200).replace(str(work), "<pair>"))
        svg.write_text('<svg xmlns="http://www.w3.org/2000/svg" width="600" height="40">'
                       f'<text x="8" y="24">not rendered: {why}</text></svg>\n')
    shutil.move(str(svg), out_svg)


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


def outcome(agent: dict | None, validation: dict, drawn: bool) -> str:
    """One word for how the pair ended. An infra_error is the harness's or provider's
    failure, never the model's: pass rates leave those pairs out."""
    if agent and agent.get("status") == "infra_error":
        return "infra_error"
    if validation.get("refusal"):
        return validation["refusal"]["kind"]  # the agent declined, on purpose
    if not validation["valid"]:
        return "invalid"
    return "success" if drawn else "blocked"


def score(validation: Path, applied: Path, netlist: Path, expected: Path, out: Path,
          pair: dict, agent: Path | None = None) -> dict:
    """The pair's outcome against the task's expected one, its named nets against the
    ground truth, and each of the task's criteria; invalid or refused pairs score 0 with
    their reasons."""
    from . import scoring
    from .criteria import evaluate
    from .fingerprint import fingerprint
    from .provenance import task_hash
    from .tasks import load_task

    task = load_task(Path(expected).parent)
    want = task.expected_nets()
    v, a, n = read_json(validation), read_json(applied), read_json(netlist)
    account = read_json(agent) if agent else None
    drawn = a["applied"] and all(c["passed"] for c in a["postchecks"]) and not n["errors"]
    ended = outcome(account, v, drawn)
    outcome_ok = ended in task.expected_outcomes
    exact = (scoring.compare(want, scoring.observed_named_nets(n)) if drawn
             else scoring.not_scored(len(want)))
    equivalent = None
    if drawn:
        from .equivalence import relabel_equivalent

        equivalent = True if exact["passed"] else relabel_equivalent(want, n)
    verdicts = evaluate(task.criteria, outcome=ended, exact=exact, validation=v, applied=a,
                        equivalent=equivalent)
    # A pair that rightly drew is scored by its nets; one that rightly stopped (a blocked
    # edit, a declined injection) scores 1; a wrong outcome, either way, scores 0.
    value = exact["score"] if ended == "success" and outcome_ok else float(outcome_ok)
    passed = outcome_ok and (ended != "success"
                             or all(c["verdict"] != "fail" for c in verdicts))
    inputs = {"validate": validation, "apply": applied, "nets": netlist, "expected": expected}
    agent_errors = []
    if account:
        inputs["agent"] = agent
        if account.get("error"):
            agent_errors.append(f"agent: {account['error']}")
    wrong_outcome = [] if outcome_ok else [
        f"outcome {ended}, expected {' or '.join(task.expected_outcomes)}"]
    result = {
        "schema": SCHEMA["score"], **pair,
        "inputs": _inputs(**inputs),
        # The corpus as this pair saw it: its own task folder. The whole corpus's and the
        # config's hashes are in scorecard.json (a per-pair copy would rerun every pair
        # whenever any task changed).
        "task_sha256": task_hash(task.path),
        # The akcli that drew this pair, as the apply step recorded it.
        "versions": {**_versions(with_akcli=False), "akcli": a["versions"].get("akcli")},
        "scorer": fingerprint("score"),  # the scoring code's hash: compare names a change
        "outcome": ended, "expected_outcome": task.expected_outcomes, "outcome_ok": outcome_ok,
        "refusal": v.get("refusal"),
        "valid": v["valid"], "applied": a["applied"],
        "score": value, "passed": passed,
        "matched": exact["matched"], "expected": exact["expected"],
        "extra_named_nets": exact["extra_named_nets"],
        "relabel_equivalent": equivalent,
        "criteria": verdicts,
        "needs_human": [c["id"] for c in verdicts if c["verdict"] == "needs_human"],
        "errors": [*agent_errors, *v["errors"], *a["errors"], *n["errors"],
                   *exact["mismatches"],
                   # (nets and arrange failures are already explained above)
                   *(f"criterion {c['id']}: {c['detail']}" for c in verdicts
                     if c["verdict"] == "fail" and ended == "success"
                     and c["kind"] not in ("nets_exact", "arrange_survives")),
                   *wrong_outcome],
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
    apply(ops, files["validate"], task_dir, symbols, sheet, files["apply"],
          pair_dir / "board.svg")
    nets(sheet, files["nets"])
    return score(files["validate"], files["apply"], files["nets"],
                 Path(task_dir) / "expected_nets.json", files["score"], pair, agent=agent)
