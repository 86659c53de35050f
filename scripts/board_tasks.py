"""Write the board and spec tiers' reference answers and known-wrong answers from their
netlists.

A board task's task.md and task.yaml are written by hand. Its op-lists are not: a 40-part
board is 150 ops, and a wrong answer is the reference with one thing changed. So each
board is a netlist here (part, lib_id, value, {pin: net}), and this script lays it out
(labels on pins, the layout that survives akcli's arrange), marks every unused pin
no-connect, and writes
    tasks/<id>/reference_ops.json
    tasks/<id>/wrong/<name>.json     the reference with one change (see WRONG)
A spec task (tasks/p*) is a board's variant stated as requirements (boards.SPECS): the
same machinery writes its files from its own netlist. A review (tasks/rv*, boards.REVIEWS)
is a spec's reference with faults planted, as an edit task; it is written whole, its
task.md and task.yaml too, from the spec's. Run it after editing a board,
then `wirebench tasks check`:

    python scripts/board_tasks.py [--only b01-... p06-...] [--check]

--check writes nothing and exits 1 when a committed file differs from what it would write.
Needs KiCad's libraries (Debian's kicad-symbols) to read pin positions.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import textwrap
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "scripts"))

import yaml  # noqa: E402
from boards import BOARDS, REVIEWS, SPECS, Part  # noqa: E402  (the netlists)

from wirebench.taskgen.layout import dumps, envelope, ops_for  # noqa: E402
from wirebench.taskgen.real import MOVE_PIN  # noqa: E402


def mutate(parts: list[Part], change: dict) -> list[Part]:
    """The reference with one change: drop a part, set a value, move a pin to a net."""
    if "also" in change:  # a change of two parts
        parts = mutate(parts, change["also"])
    out = []
    drop = change.get("drop", [])
    for p in parts:
        if p.ref in ([drop] if isinstance(drop, str) else drop):
            continue
        q = p.copy()
        if p.ref == change.get("ref"):
            if "value" in change:
                q.value = change["value"]
            for pin, net in change.get("pins", {}).items():
                if net is None:
                    q.pins.pop(pin, None)
                else:
                    q.pins[pin] = net
        out.append(q)
    return out + [Part(**extra) for extra in change.get("add", [])]


def edit_ops(edit: dict, libs: list[str], base: list[dict]) -> list[dict]:
    """An edit's op-list: its own ops (set a value ...), then its new parts below the
    base sheet's lowest part."""
    top = max(op["y_mil"] for op in base if op["op"] == "place_component") + 2500
    return list(edit.get("ops", [])) + ops_for(edit.get("parts", []), libs, None, top)


def _changes(change: dict) -> list[dict]:
    """A change and the one it carries for a second part (`also`)."""
    return [change, *(_changes(change["also"]) if "also" in change else [])]


def fix(reference: list[Part], change: dict) -> dict:
    """The edit that undoes `change` on a sheet drawn with it: a value set back, a part
    it dropped placed again, one it rewired deleted with its labels and placed again, one
    it added deleted."""
    by_ref = {p.ref: p for p in reference}
    ops, parts = [], []
    for one in _changes(change):
        drop = one.get("drop", [])
        parts += [by_ref[r] for r in ([drop] if isinstance(drop, str) else drop)]
        if one.get("pins"):
            ops.append({"op": "delete_component", "designator": one["ref"], "cascade": True})
            parts.append(by_ref[one["ref"]])
        elif "value" in one:
            ops.append({"op": "set_component_parameters", "designator": one["ref"],
                        "value": by_ref[one["ref"]].value})
        ops += [{"op": "delete_component", "designator": extra["ref"], "cascade": True}
                for extra in one.get("add", [])]
    return {"ops": ops, "parts": parts}


def _merged(edits) -> dict:
    edits = list(edits)
    return {"ops": [op for e in edits for op in e["ops"]],
            "parts": [p for e in edits for p in e["parts"]]}


def _renumbered(base: list[Part], edit: dict) -> tuple[list[Part], dict]:
    """The base's designators made dense again (a part a fault dropped would leave a gap
    in C1, C2 ... that shows where to look), the edit following them; a part the edit
    adds takes the lowest designator its kind leaves free, as the task tells the agent."""
    def kind(ref: str) -> str:  # C of C12, SW of SW1
        return re.match(r"[A-Z]+", ref).group(0)

    kinds: dict[str, list[str]] = {}
    for p in base:
        kinds.setdefault(kind(p.ref), []).append(p.ref)
    new = {}
    for k, refs in kinds.items():  # in the order a designer placed them
        new |= {old: f"{k}{i}" for i, old in enumerate(refs, start=1)}
    for p in edit["parts"]:
        if p.ref not in new:
            taken = {r for r in new.values() if kind(r) == kind(p.ref)}
            new[p.ref] = next(f"{kind(p.ref)}{i}" for i in range(1, 999)
                              if f"{kind(p.ref)}{i}" not in taken)

    def moved(p: Part) -> Part:
        q = p.copy()
        q.ref = new[p.ref]
        return q
    ops = [{**op, "designator": new[op["designator"]]} for op in edit["ops"]]
    return [moved(p) for p in base], {"ops": ops, "parts": [moved(p) for p in edit["parts"]]}


def review_task(board: dict) -> dict:
    """A review as an edit task: the spec's reference with every fault planted is the
    base; the reference edit fixes them all; each wrong answer leaves one (or all) in."""
    spec, faults = board["review_of"], board["faults"]
    planted = spec["parts"]
    for change, _, _ in faults.values():
        planted = mutate(planted, change)
        for extra in change.get("add", []):  # beside the part it serves, as drawn
            part = next(p for p in planted if p.ref == extra["ref"])
            planted.remove(part)
            at = next(i for i, p in enumerate(planted) if p.ref == change["ref"])
            planted.insert(at + 1, part)
    fixes = {name: fix(spec["parts"], change) for name, (change, _, _) in faults.items()}
    base, edit = _renumbered(planted, _merged(fixes.values()))
    wrong = {"unreviewed": {"ops": [], "parts": []}}
    wrong |= {f"{name}-left": _renumbered(planted, _merged(
        f for n, f in fixes.items() if n != name))[1] for name in faults}
    ref, value, _ = board["overfix"]
    assert ref in kept(base, edit, board["free"]), f"{board['id']}: {ref} is not kept"
    wrong["over-fixed"] = {"ops": [*edit["ops"], {"op": "set_component_parameters",
                                                  "designator": ref, "value": value}],
                           "parts": edit["parts"]}
    edit_task = {k: v for k, v in board.items()
                 if k not in ("review_of", "faults", "overfix", "free")}
    return {**edit_task, "parts": base, "edit": edit, "wrong": wrong}


def kept(base: list[Part], edit: dict, free: tuple[str, ...]) -> dict[str, str]:
    """The base's parts that no fault's fix touches (nor another fair fix, `free`), with
    their values: what is right stays."""
    touched = {op["designator"] for op in edit["ops"]} | {p.ref for p in edit["parts"]}
    return {p.ref: p.value for p in base
            if p.ref not in touched and p.ref not in free and p.value}


def review_meta(board: dict, task: dict, reference_ops: int) -> dict:
    """A review's task.yaml: the spec's rules, every part no fault touches at its value, a
    bound on the edit's size, and the wrong answers, each failing on the rule of the fault
    it leaves in (or on `kept`, a right part changed)."""
    spec = board["review_of"]
    spec_meta = yaml.safe_load((REPO / "tasks" / spec["id"] / "task.yaml").read_text())
    faults = board["faults"]
    first = next(iter(faults.values()))
    bound = reference_ops * 3 // 2 + 10
    return {
        "id": board["id"], "tier": "spec", "family": "review",
        "brief": f"Review a {board['title']} drawn to its requirements, against the "
                 "datasheets, and fix what is wrong.",
        "libraries": spec_meta["libraries"],
        # The fixes move pins between named nets, which akcli's rails refuse.
        "strict_nets": False,
        "criteria": [*spec_meta["criteria"], {
            "id": "kept", "kind": "values",
            "values": kept(task["parts"], task["edit"], board["free"]),
            "why": "what the sheet has right stays as it is: every part no fault touches "
                   "keeps its value"}, {
            "id": "small-edit", "kind": "max_ops", "max": bound,
            "why": f"a review changes what is wrong ({reference_ops} ops fix it all); a "
                   "redraw is not a review"}],
        "wrong_answers": [
            {"file": "wrong/unreviewed.json", "fails": first[1],
             "why": f"the sheet as drawn: {first[2]}"},
            *({"file": f"wrong/{name}-left.json", "fails": rule, "why": why}
              for name, (_, rule, why) in faults.items()),
            {"file": "wrong/over-fixed.json", "fails": "kept", "why": board["overfix"][2]}],
    }


def review_text(board: dict, max_ops: int) -> str:
    """A review's task.md: the spec's requirements as they stand, the sheet as drawn."""
    spec_text = (REPO / "tasks" / board["review_of"]["id"] / "task.md").read_text()
    title, _, body = spec_text.partition("\n")
    requirements = body.strip().split("\n\n", 1)[1]  # after "Design ...": the list
    ask = body.strip().split("\n\n", 1)[0]

    def para(text: str) -> str:
        return textwrap.fill(text, 92)
    return "\n".join([
        f"# Review: {title.lstrip('# ').strip()}", "",
        para("A colleague drew the sheet whose op-list follows, to the requirements below. "
             "It has not been reviewed. Check it against the requirements and the parts' "
             "datasheets, and fix every fault you find with an edit of the sheet. It may "
             "hold more than one; what is right must stay as it is."), "",
        "## The requirements", "", ask, "", requirements.strip(), "",
        "## Your edit", "",
        para("Your op-list is drawn on top of the sheet, without akcli's `--strict-nets` "
             "rails (a fix may move a pin between named nets): what judges it is the "
             f"design it leaves. {MOVE_PIN} A part you add takes the lowest designator its "
             "kind leaves free, and a label on each of its pins. A review changes what is "
             f"wrong and nothing else: at most {max_ops} ops."), ""])


def outputs(board: dict) -> dict[Path, str]:
    folder = REPO / "tasks" / board["id"]
    if "review_of" in board:
        task = review_task(board)
        files = outputs(task)
        fix_ops = json.loads(files[folder / "reference_ops.json"])["ops"]
        meta = review_meta(board, task, len(fix_ops))
        files[folder / "task.yaml"] = yaml.safe_dump(
            meta, sort_keys=False, width=92, allow_unicode=True, default_flow_style=None)
        files[folder / "task.md"] = review_text(board, meta["criteria"][-1]["max"])
        return files
    from wirebench.corpus.libraries import kicad_dir, resolve

    libs = resolve(board["libraries"], kicad_dir())
    if "edit" in board:  # an edit task: the base sheet, and op-lists that change it
        base = ops_for(board["parts"], libs, board["title"])
        files = {folder / "base_ops.json": dumps(envelope(base)),
                 folder / "reference_ops.json": dumps(envelope(
                     edit_ops(board["edit"], libs, base)))}
        for name, edit in board.get("wrong", {}).items():
            files[folder / "wrong" / f"{name}.json"] = dumps(envelope(
                edit_ops(edit, libs, base)))
        return files
    files = {folder / "reference_ops.json":
             dumps(envelope(ops_for(board["parts"], libs, board["title"])))}
    for name, change in board.get("wrong", {}).items():
        files[folder / "wrong" / f"{name}.json"] = dumps(
            envelope(ops_for(mutate(board["parts"], change), libs, board["title"])))
    return files


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--only", nargs="*", help="board or spec ids (default: all)")
    ap.add_argument("--check", action="store_true", help="compare, write nothing")
    args = ap.parse_args(argv)
    every = [*BOARDS, *SPECS, *REVIEWS]
    unknown = sorted(set(args.only or []) - {b["id"] for b in every})
    if unknown:
        print(f"no board or spec with id {', '.join(unknown)}", file=sys.stderr)
        return 2
    stale = checked = 0
    for board in every:
        if args.only and board["id"] not in args.only:
            continue
        for path, text in outputs(board).items():
            checked += 1
            if args.check:
                if not path.is_file() or path.read_text() != text:
                    print(f"stale: {path.relative_to(REPO)}")
                    stale += 1
            else:
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_text(text)
                print(f"wrote {path.relative_to(REPO)}")
    if args.check:  # what was compared: a board left out of the loop is never stale
        print(f"{checked} file(s) checked, {stale} stale")
    return 1 if stale else 0


if __name__ == "__main__":
    sys.exit(main())
