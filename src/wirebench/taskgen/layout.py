"""From a netlist to an op-list a person can read: parts packed in rows, a net label on
every connected pin, a no-connect on every other.

Used by the task generators (taskgen/families) and by scripts/board_tasks.py, which writes
the board tier's hand-written netlists. The pin positions come from akcli's own `pins`
command on the libraries the task draws with, so a layout is as deterministic as those
libraries: the generated split draws with the project's committed symbols.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Callable
from dataclasses import dataclass, field

GRID = 100
PAGE_WIDTH = 15000
STUB = 200  # a wire stub's length
LED_STUB = 300  # the LED cathode's stub, as the prompt pack teaches it
CHAR_MIL = 60  # a label's text, per character, at KiCad's default size


@dataclass
class Part:
    ref: str
    lib_id: str
    value: str | None = None
    pins: dict[str, str] = field(default_factory=dict)   # pin name or number -> net
    rotation: int = 0
    stub: bool = False  # labels at the end of a short wire, not on the pins
    # Pins whose net gets a PWR_FLAG: a supply that akcli's ERC does not know by name
    # (VM), or one the chip makes itself (VINT).
    flags: tuple[str, ...] = ()

    def copy(self) -> Part:
        return Part(self.ref, self.lib_id, self.value, dict(self.pins), self.rotation,
                    self.stub, self.flags)


@functools.cache
def _pin_table(lib_id: str, libraries: tuple[str, ...]) -> tuple[dict, ...]:
    from wirebench.runtime import akcli_backend

    res = akcli_backend.run("pins", lib_id, *akcli_backend.symbol_args(list(libraries)))
    doc = res.json()
    if res.rc != 0 or not doc:
        raise ValueError(f"{lib_id}: {res.error_text()}")
    return tuple(doc["pins"])


def pin_table(lib_id: str, libraries: list[str]) -> list[dict]:
    """The symbol's pins as akcli reads them: number, name, type, unit, position."""
    return list(_pin_table(lib_id, tuple(libraries)))


def resolve_pins(part: Part, table: list[dict]) -> dict[str, str]:
    """{pin number: net}. A key is a pin number, or a pin name meaning every pin of that
    name (stacked GND pins)."""
    numbers = {p["number"] for p in table}
    out: dict[str, str] = {}
    for key, net in part.pins.items():
        hits = [key] if key in numbers else [p["number"] for p in table if p["name"] == key]
        if not hits:
            raise ValueError(f"{part.ref} ({part.lib_id}) has no pin {key!r}")
        for n in hits:
            out[n] = net
    return out


def _snap(v: float) -> int:
    return int(round(v / GRID) * GRID)


def ops_for(parts: list[Part], libraries: list[str], title: str | None,
            top: int = 1500, min_chars: Callable[[Part], int] | None = None) -> list[dict]:
    """Parts packed in rows from `top` down, a label on every connected pin, a no-connect
    on every other. A part of several units is placed once per unit. An edit's parts
    (title None) go below the sheet they are added to. A part is given room for its
    longest label, or for `min_chars(part)` characters if that is more."""
    ops: list[dict] = [{"op": "set_title_block", "title": title, "rev": "A"}] if title else []
    x, y, row_h = 1000, top, 0
    placed, wiring = [], []
    for part in parts:
        full = pin_table(part.lib_id, libraries)
        nets = resolve_pins(part, full)
        units = sorted({p.get("unit") or 1 for p in full})
        for unit in units:
            table = [p for p in full if (p.get("unit") or 1) == unit]
            room = max([len(nets[p["number"]]) for p in table if p["number"] in nets]
                       + [min_chars(part) if min_chars else 0]) * CHAR_MIL + 300
            xs = [p["x_mil"] for p in table] or [0]
            ys = [p["y_mil"] for p in table] or [0]
            width = max(xs) - min(xs) + 2 * room
            height = max(ys) - min(ys) + 2 * room
            if x + width > PAGE_WIDTH and x > 1000:
                x, y, row_h = 1000, y + row_h, 0
            ox, oy = _snap(x + room - min(xs)), _snap(y + room - min(ys))
            op = {"op": "place_component", "lib_id": part.lib_id, "designator": part.ref}
            if len(units) > 1:
                op["unit"] = unit
            op.update({"x_mil": ox, "y_mil": oy})
            if part.rotation:
                op["rotation"] = part.rotation
            if part.value is not None:
                op["value"] = part.value
            placed.append(op)
            wiring.extend(_wiring(part, table, nets, ox, oy))
            x += width
            row_h = max(row_h, height)
    return ops + placed + wiring


def _wiring(part: Part, table: list[dict], nets: dict[str, str], ox: int, oy: int):
    seen_at: set[tuple] = set()
    for pin in sorted(table, key=lambda p: (len(p["number"]), p["number"])):
        at = (pin["x_mil"], pin["y_mil"])
        if at in seen_at:  # stacked pins share one point: one label joins them all
            continue
        seen_at.add(at)
        ref_pin = f"{part.ref}.{pin['number']}"
        flagged = pin["name"] in part.flags or pin["number"] in part.flags
        # The prompt pack's one stub: KiCad's LED reaches past its cathode (pin 1), so that
        # label goes at the end of a 300-mil wire, unrotated; its anode takes a pin label.
        cathode = part.lib_id == "Device:LED" and not flagged
        if cathode and part.stub and pin["number"] in nets:
            px, py = ox + pin["x_mil"], oy + pin["y_mil"]
            if pin["number"] != "1":
                yield {"op": "add_net_label", "name": nets[pin["number"]], "at": ref_pin}
                continue
            dx = LED_STUB * (1 if pin["x_mil"] > 0 else -1)
            yield {"op": "add_wire", "vertices": [[px, py], [px + dx, py]]}
            yield {"op": "add_net_label", "name": nets[pin["number"]], "at": [px + dx, py]}
        elif pin["number"] in nets and (part.stub or flagged):
            # Long enough for the label's text, which runs back toward the part.
            stub = max(STUB, _snap(len(nets[pin["number"]]) * CHAR_MIL + 150))
            px, py = ox + pin["x_mil"], oy + pin["y_mil"]
            horizontal = abs(pin["x_mil"]) >= abs(pin["y_mil"])
            dx = stub * (1 if pin["x_mil"] > 0 else -1) if horizontal else 0
            dy = 0 if horizontal else stub * (1 if pin["y_mil"] > 0 else -1)
            yield {"op": "add_wire", "vertices": [[px, py], [px + dx, py + dy]]}
            # The text runs away from the part: right 0, up 90, left 180, down 270.
            turn = {(1, 0): 0, (0, -1): 90, (-1, 0): 180, (0, 1): 270}[
                ((dx > 0) - (dx < 0), (dy > 0) - (dy < 0))]
            yield {"op": "add_net_label", "name": nets[pin["number"]],
                   "at": [px + dx, py + dy], "rotation": turn}
            if flagged:  # mid-wire, where akcli's layout check wants a flag
                yield {"op": "place_pwr_flag", "at": [px + _snap(dx / 2), py + _snap(dy / 2)]}
        elif pin["number"] in nets:
            yield {"op": "add_net_label", "name": nets[pin["number"]], "at": ref_pin}
        else:
            yield {"op": "add_no_connect", "pin": ref_pin}


def expected_nets(parts: list[Part], libraries: list[str]) -> dict:
    """The ground truth of a netlist: every named net and its members, REF.PIN."""
    members: dict[str, list[str]] = {}
    for part in parts:
        for number, net in resolve_pins(part, pin_table(part.lib_id, libraries)).items():
            members.setdefault(net, []).append(f"{part.ref}.{number}")
    return {"nets": [{"name": n, "members": sorted(m, key=_pin_order)}
                     for n, m in members.items()]}


def _pin_order(member: str):
    ref, pin = member.split(".")
    head = ref.rstrip("0123456789")
    return (head, int(ref[len(head):] or 0), int(pin) if pin.isdigit() else 0, pin)


def envelope(ops: list[dict]) -> dict:
    return {"protocol_version": 2, "target_format": "kicad", "ops": ops}


def dumps(doc: dict) -> str:
    """An op-list as committed: one op a line, so a diff shows which op changed."""
    lines = ",\n".join("    " + json.dumps(op) for op in doc["ops"])
    extra = "".join(f"  {json.dumps(k)}: {json.dumps(v)},\n" for k, v in doc.items()
                    if k not in ("protocol_version", "target_format", "ops"))
    return ('{\n  "protocol_version": 2,\n  "target_format": "kicad",\n' + extra
            + '  "ops": [\n' + lines + "\n  ]\n}\n")
