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
same machinery writes its files from its own netlist. Run it after editing a board,
then `wirebench tasks check`:

    python scripts/board_tasks.py [--only b01-... p06-...] [--check]

--check writes nothing and exits 1 when a committed file differs from what it would write.
Needs KiCad's libraries (Debian's kicad-symbols) to read pin positions.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "scripts"))

from boards import BOARDS, SPECS, Part  # noqa: E402  (the netlists)

from wirebench.taskgen.layout import dumps, envelope, ops_for  # noqa: E402


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


def outputs(board: dict) -> dict[Path, str]:
    folder = REPO / "tasks" / board["id"]
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
    every = [*BOARDS, *SPECS]
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
