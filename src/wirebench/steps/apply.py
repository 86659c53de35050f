"""The apply step: a fresh sheet, the task's base design, the op-list drawn behind
`--strict-nets`, then the task's post-checks, the facts its criteria need, and a render."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import TYPE_CHECKING

from wirebench.evidence.files import (
    place,
    read_json,
    scratch_dir,
    sha256_file,
    write_bytes_atomic,
    write_json,
)
from wirebench.steps.common import input_hashes, versions, write_candidate
from wirebench.verify.oplist import load_oplist

if TYPE_CHECKING:
    from wirebench.corpus.tasks import Task

SCHEMA = "wirebench.apply/1"


def rails_refused(res) -> bool:
    """Did akcli's --strict-nets rail refuse a split or merge of a named net? Its own
    message says so, with the risky net-diff lines (`! MERGE A + B -> A`). Any other
    failed draw (an unknown symbol, an envelope akcli cannot write, a bad coordinate) is
    no refusal by the rails: the answer is invalid."""
    risky = [line for line in res.stderr.splitlines()
             if line.strip().startswith(("! MERGE", "! SPLIT"))]
    return "touches a named net" in res.error_text(2000) and bool(risky)


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


def apply(ops: Path, validation: Path, task_dir: Path | Task, symbols: list[str],
          out_sheet: Path, out: Path, out_svg: Path | None = None,
          timeout: float | None = None, confine: bool = True) -> dict:
    """`akcli new` (+ the task's base design) + `akcli draw --apply --strict-nets`, then
    the task's post-checks. On an edit task the rails refuse an op-list that would split
    or merge a named net of the base design.

    It runs confined to the pair's folder (steps/confined.py): of the task it may read
    only the base design, never the answer key next to it.
    """
    from wirebench.corpus.tasks import as_task
    from wirebench.steps import confined

    task = as_task(task_dir)
    # Absolute, because the child works in the pair's folder.
    ops, validation, out_sheet, out = (Path(p).absolute() for p in (ops, validation,
                                                                    out_sheet, out))
    out_svg = Path(out_svg).absolute() if out_svg else None
    symbols = [str(Path(s).absolute()) for s in symbols]

    def give_up(reason: str) -> None:
        _blank_sheet(Path(out_sheet), reason, out_svg)
        write_json(out, {**_blank(ops, validation, symbols), "errors": [reason]})

    if not confine:  # the caller is a confined child already (steps/tools.py)
        _apply(ops, validation, task, symbols, out_sheet, out, out_svg)
        return read_json(out)
    reads = [ops, validation, *symbols, *task.draw_inputs]
    # Parsed here, in the warm process, so the forked child finds them parsed.
    from wirebench.runtime import symbol_cache

    symbol_cache.warm(symbols)
    return confined.run(
        "apply", lambda: _apply(ops, validation, task, symbols, out_sheet, out, out_svg),
        out=out, reads=reads, timeout=timeout, give_up=give_up)


def _blank(ops: Path, validation: Path, symbols: list[str]) -> dict:
    return {"schema": SCHEMA, "inputs": input_hashes(ops=ops, validate=validation),
            "versions": versions(), "symbols": {Path(s).name: sha256_file(s) for s in symbols},
            "applied": False, "refused_by": None, "errors": [], "postchecks": []}


def _blank_sheet(out_sheet: Path, reason: str, out_svg: Path | None) -> None:
    """What a draw that never finished leaves: an empty sheet (no agent input reaches it)."""
    from wirebench.runtime import akcli_backend

    work = scratch_dir(out_sheet.parent, "apply")
    try:
        made = akcli_backend.new_sheet(work / "board.kicad_sch")
        if made.rc != 0:
            raise RuntimeError(f"akcli new failed: {made.error_text()}")
        place(work / "board.kicad_sch", out_sheet)
        if out_svg:
            write_bytes_atomic(Path(out_svg), _placeholder_svg(reason))
    finally:
        shutil.rmtree(work, ignore_errors=True)


def _apply(ops: Path, validation: Path, task, symbols: list[str], out_sheet: Path, out: Path,
           out_svg: Path | None) -> None:
    """The draw happens in a scratch folder inside the pair's folder; the sheet is moved into
    place only when everything has run, so a killed job never leaves a half-drawn sheet."""
    from wirebench.runtime import akcli_backend

    verdict = read_json(validation)
    result = _blank(ops, validation, symbols)
    out_sheet = Path(out_sheet)
    work = scratch_dir(out_sheet.parent, "apply")
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
            doc, _ = load_oplist(ops, max_bytes=None, max_ops=None)  # validated
            cand = work / "candidate.json"
            write_candidate(doc, cand)
            res = (akcli_backend.draw(sheet, cand, symbols) if task.strict_nets
                   else _draw_without_rails(sheet, cand, symbols))
            result["applied"] = res.rc == 0
            result["net_diff"] = ((res.json() or {}).get("net_diff") or {}).get("lines", [])
            if res.rc != 0:
                result["errors"].extend(_draw_errors(res, work))
                result["refused_by"] = "rails" if rails_refused(res) else None
            else:
                result["postchecks"] = _postchecks(task, sheet, symbols, work)
                if not all(c["passed"] for c in result["postchecks"]):
                    result["refused_by"] = "postcheck"
                result["errors"].extend(c["detail"] for c in result["postchecks"]
                                        if not c["passed"])
                result["facts"] = _sheet_facts(task, sheet)
        if out_svg:
            _render(sheet, work, Path(out_svg))
        # Child sheets of a hierarchical design, subfolders kept: the parent names them
        # by their path relative to itself.
        for child in sorted(work.rglob("*.kicad_sch")):
            if child != sheet:
                dest = out_sheet.parent / child.relative_to(work)
                dest.parent.mkdir(parents=True, exist_ok=True)
                place(child, dest)
        place(sheet, out_sheet)
        write_json(out, result)
    finally:
        shutil.rmtree(work, ignore_errors=True)


def _draw_without_rails(sheet: Path, ops: Path, symbols: list[str]):
    """The draw of a task that moves pins between named nets (task.yaml `strict_nets:
    false`, the real tier's rewiring repairs): akcli's rails see any such move as a split
    and a merge and refuse it, so the answer is drawn without them and judged by the
    whole netlist it leaves and the size of its edit."""
    from wirebench.runtime import akcli_backend

    return akcli_backend.run("draw", str(sheet), "--ops", str(ops), "--apply", "--no-erc",
                             *akcli_backend.symbol_args(symbols))


def _sheet_facts(task, sheet: Path) -> dict:
    """What the task's criteria need to know about the sheet, read now by akcli so the
    score step stays free of akcli (and reruns in milliseconds)."""
    from wirebench.runtime import akcli_backend
    from wirebench.verify.design_rules import RULE_KINDS

    kinds = {c["kind"] for c in task.criteria}
    facts: dict = {}
    # ERC needs the parts too: akcli_waivers matches its findings by lib_id and pin.
    if kinds & ({"values", "max_parts", "erc_clean"} | RULE_KINDS):
        doc = akcli_backend.run("read", str(sheet)).json() or {}
        parts = [c for c in doc.get("components", []) if c.get("designator")]
        if "values" in kinds:
            facts["values"] = {c["designator"]: c.get("value") for c in parts}
        if "max_parts" in kinds:
            facts["parts"] = sorted({c["designator"] for c in parts
                                     if not c["designator"].startswith("#")})
        if kinds & (RULE_KINDS | {"erc_clean"}):
            facts["board"] = _board_facts(parts)
    for kind, flag in (("erc_clean", "--erc"), ("integrity", "--integrity"),
                       ("layout_clean", "--layout")):
        if kind in kinds:
            doc = akcli_backend.run("check", flag, str(sheet)).json() or {}
            facts[kind] = [f"{f['code']} ({f['severity']}): {f['message']}"
                           for f in doc.get("findings", [])
                           if f.get("severity") in ("warning", "error")]
    return facts


def _board_facts(parts: list[dict]) -> dict:
    """Each real part's lib_id, value and pin names, for the design rules. A multi-unit
    part is read once per unit: its units' pins are merged under one designator."""
    board: dict = {"parts": {}, "pins": {}}
    for c in parts:
        ref = c["designator"]
        if ref.startswith("#"):
            continue
        board["parts"][ref] = {"lib_id": c.get("library_ref"), "value": c.get("value")}
        board["pins"].setdefault(ref, {}).update(
            {str(p["number"]): p.get("name") for p in c.get("pins", []) if p.get("number")})
    return board


def _render(sheet: Path, work: Path, out_svg: Path) -> None:
    """The sheet as akcli draws it, for people: the report's drill-downs and the
    `subjective` criteria show it."""
    from wirebench.runtime import akcli_backend

    svg = work / "board.svg"
    res = akcli_backend.run("render", str(sheet), "-o", str(svg))
    if res.rc != 0 or not svg.is_file():
        svg.write_bytes(_placeholder_svg(res.error_text(200).replace(str(work), "<pair>")))
    place(svg, out_svg)


def _placeholder_svg(why: str) -> bytes:
    from html import escape

    return ('<svg xmlns="http://www.w3.org/2000/svg" width="600" height="40">'
            f'<text x="8" y="24">not rendered: {escape(why)}</text></svg>\n').encode()


def _postchecks(task, sheet: Path, symbols: list[str], work: Path) -> list[dict]:
    from wirebench.runtime import akcli_backend

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
