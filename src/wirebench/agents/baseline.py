"""A heuristic, non-LLM baseline agent (`wirebench-baseline`), run through the `command` kind.

It reads TASK_FILE and writes OPS_OUT: one place_component per part that the prompt
spells out as `REF (value, `Lib:Symbol`)`, and one label per `pin N ... on `NET``
phrase that follows it. That solves the tasks written as plain part-and-pin lists, and
honestly fails the ones that need a macro, groups, a wire, a second unit or reading
prose. It is the floor a real model must beat, and it makes the default run show a
spread of scores.
"""

from __future__ import annotations

import json
import os
import re
import sys

PART = re.compile(r"\b([A-Z]{1,3}\d+)\s*\(([^()]*`[^`]+:[^`]+`[^()]*)\)")
PIN = re.compile(r"pin (\w+)\)?(?: \([^)]*\))? on (?:net )?`([^`]+)`")
BULLET = re.compile(r"^- ([A-Z]{1,3}\d+)\b(.*)$")


def _bullets(text: str) -> list[str]:
    """Markdown bullets with their indented continuation lines joined."""
    items: list[str] = []
    for line in text.splitlines():
        if line.startswith("- "):
            items.append(line)
        elif items and line.startswith("  ") and line.strip():
            items[-1] += " " + line.strip()
        else:
            items.append("")
    return [b for b in items if b]


def oplist(text: str) -> dict:
    parts: dict[str, dict] = {}
    for ref, inside in PART.findall(text):
        lib_id = re.search(r"`([^`]+:[^`]+)`", inside).group(1)
        value = next((v.strip() for v in inside.split(",") if v.strip() and "`" not in v), None)
        parts.setdefault(ref, {"lib_id": lib_id, "value": value})
    ops, labels = [], []
    placed: list[str] = []
    for bullet in _bullets(text):
        m = BULLET.match(bullet)
        if not m or m.group(1) not in parts:
            continue
        ref = m.group(1)
        pins = PIN.findall(m.group(2))
        if not pins:
            continue
        if ref not in placed:
            i = len(placed)
            op = {"op": "place_component", "lib_id": parts[ref]["lib_id"], "designator": ref,
                  "x_mil": 1000 + (i % 5) * 800, "y_mil": 1000 + (i // 5) * 1000}
            if parts[ref]["value"]:
                op["value"] = parts[ref]["value"]
            ops.append(op)
            placed.append(ref)
        labels.extend({"op": "add_net_label", "name": net, "at": f"{ref}.{pin}"}
                      for pin, net in pins)
    return {"protocol_version": 2, "target_format": "kicad", "ops": ops + labels}


def main() -> int:
    with open(os.environ["TASK_FILE"], encoding="utf-8") as fh:
        doc = oplist(fh.read())
    if not doc["ops"]:
        print("baseline: found no parts with pins to draw", file=sys.stderr)
    with open(os.environ["OPS_OUT"], "w", encoding="utf-8") as fh:
        json.dump(doc, fh, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
