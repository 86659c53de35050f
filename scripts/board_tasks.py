"""Write the board tier's reference answers and known-wrong answers from their netlists.

A board task's task.md and task.yaml are written by hand. Its op-lists are not: a 40-part
board is 150 ops, and a wrong answer is the reference with one thing changed. So each
board is a netlist here (part, lib_id, value, {pin: net}), and this script lays it out
(labels on pins, the layout that survives akcli's arrange), marks every unused pin
no-connect, and writes
    tasks/<id>/reference_ops.json
    tasks/<id>/wrong/<name>.json     the reference with one change (see WRONG)
Run it after editing a board, then `wirebench tasks check`:

    python scripts/board_tasks.py [--only b01-...] [--check]

--check writes nothing and exits 1 when a committed file differs from what it would write.
Needs KiCad's libraries (Debian's kicad-symbols) to read pin positions.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "scripts"))

from boards import BOARDS, Part  # noqa: E402  (the netlists)

GRID = 100
PAGE_WIDTH = 15000
STUB = 200  # a wire stub's length
CHAR_MIL = 60  # a label's text, per character, at KiCad's default size


def pin_table(lib_id: str, libraries: list[str]) -> list[dict]:
    from wirebench.runtime import akcli_backend

    res = akcli_backend.run("pins", lib_id, *akcli_backend.symbol_args(libraries))
    doc = res.json()
    if res.rc != 0 or not doc:
        raise SystemExit(f"{lib_id}: {res.error_text()}")
    return doc["pins"]


def resolve_pins(part: Part, table: list[dict]) -> dict[str, str]:
    """{pin number: net}. A key is a pin number, or a pin name meaning every pin of that
    name (stacked GND pins)."""
    numbers = {p["number"] for p in table}
    out: dict[str, str] = {}
    for key, net in part.pins.items():
        hits = [key] if key in numbers else [p["number"] for p in table if p["name"] == key]
        if not hits:
            raise SystemExit(f"{part.ref} ({part.lib_id}) has no pin {key!r}")
        for n in hits:
            out[n] = net
    return out


def _snap(v: float) -> int:
    return int(round(v / GRID) * GRID)


def ops_for(parts: list[Part], libraries: list[str], title: str | None,
            top: int = 1500) -> list[dict]:
    """Parts packed in rows from `top` down, a label on every connected pin, a no-connect
    on every other. An edit's parts (title None) go below the sheet they are added to."""
    ops: list[dict] = [{"op": "set_title_block", "title": title, "rev": "A"}] if title else []
    tables = {p.lib_id: pin_table(p.lib_id, libraries) for p in parts}
    x, y, row_h = 1000, top, 0
    placed, wiring = [], []
    for part in parts:
        table = tables[part.lib_id]
        nets = resolve_pins(part, table)
        room = max((len(n) for n in nets.values()), default=0) * CHAR_MIL + 300
        xs = [p["x_mil"] for p in table] or [0]
        ys = [p["y_mil"] for p in table] or [0]
        width = max(xs) - min(xs) + 2 * room
        height = max(ys) - min(ys) + 2 * room
        if x + width > PAGE_WIDTH and x > 1000:
            x, y, row_h = 1000, y + row_h, 0
        ox, oy = _snap(x + room - min(xs)), _snap(y + room - min(ys))
        op = {"op": "place_component", "lib_id": part.lib_id, "designator": part.ref,
              "x_mil": ox, "y_mil": oy}
        if part.rotation:
            op["rotation"] = part.rotation
        if part.value is not None:
            op["value"] = part.value
        placed.append(op)
        seen_at: set[tuple] = set()
        for pin in sorted(table, key=lambda p: (len(p["number"]), p["number"])):
            at = (pin["x_mil"], pin["y_mil"])
            if at in seen_at:  # stacked pins share one point: one label joins them all
                continue
            seen_at.add(at)
            ref_pin = f"{part.ref}.{pin['number']}"
            flagged = pin["name"] in part.flags or pin["number"] in part.flags
            if pin["number"] in nets and (part.stub or flagged):
                # Long enough for the label's text, which runs back toward the part.
                stub = max(STUB, _snap(len(nets[pin["number"]]) * CHAR_MIL + 150))
                px, py = ox + pin["x_mil"], oy + pin["y_mil"]
                horizontal = abs(pin["x_mil"]) >= abs(pin["y_mil"])
                dx = stub * (1 if pin["x_mil"] > 0 else -1) if horizontal else 0
                dy = 0 if horizontal else stub * (1 if pin["y_mil"] > 0 else -1)
                wiring.append({"op": "add_wire", "vertices": [[px, py], [px + dx, py + dy]]})
                # The text runs away from the part: right 0, up 90, left 180, down 270.
                turn = {(1, 0): 0, (0, -1): 90, (-1, 0): 180, (0, 1): 270}[
                    ((dx > 0) - (dx < 0), (dy > 0) - (dy < 0))]
                wiring.append({"op": "add_net_label", "name": nets[pin["number"]],
                               "at": [px + dx, py + dy], "rotation": turn})
                if flagged:  # mid-wire, where akcli's layout check wants a flag
                    wiring.append({"op": "place_pwr_flag",
                                   "at": [px + _snap(dx / 2), py + _snap(dy / 2)]})
            elif pin["number"] in nets:
                wiring.append({"op": "add_net_label", "name": nets[pin["number"]],
                               "at": ref_pin})
            else:
                wiring.append({"op": "add_no_connect", "pin": ref_pin})
        x += width
        row_h = max(row_h, height)
    return ops + placed + wiring


def envelope(ops: list[dict]) -> dict:
    return {"protocol_version": 2, "target_format": "kicad", "ops": ops}


def dumps(doc: dict) -> str:
    lines = ",\n".join("    " + json.dumps(op) for op in doc["ops"])
    return ('{\n  "protocol_version": 2,\n  "target_format": "kicad",\n  "ops": [\n'
            + lines + "\n  ]\n}\n")


def mutate(parts: list[Part], change: dict) -> list[Part]:
    """The reference with one change: drop a part, set a value, move a pin to a net."""
    if "also" in change:  # a change of two parts
        parts = mutate(parts, change["also"])
    out = []
    drop = change.get("drop", [])
    for p in parts:
        if p.ref in ([drop] if isinstance(drop, str) else drop):
            continue
        q = Part(p.ref, p.lib_id, p.value, dict(p.pins), p.rotation, p.stub, p.flags)
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
    ap.add_argument("--only", nargs="*", help="board ids (default: all)")
    ap.add_argument("--check", action="store_true", help="compare, write nothing")
    args = ap.parse_args(argv)
    stale = 0
    for board in BOARDS:
        if args.only and board["id"] not in args.only:
            continue
        for path, text in outputs(board).items():
            if args.check:
                if not path.is_file() or path.read_text() != text:
                    print(f"stale: {path.relative_to(REPO)}")
                    stale += 1
            else:
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_text(text)
                print(f"wrote {path.relative_to(REPO)}")
    return 1 if stale else 0


if __name__ == "__main__":
    sys.exit(main())
