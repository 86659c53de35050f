"""Write the design tier's op-lists (reference and known-wrong answers) from compact
netlists: which parts, where, and which net each pin is on.

The op-lists are the committed artifacts (tasks/d*/reference_ops.json, wrong/*.json);
this script is how they were written, so a reviewer can see at a glance how each wrong
answer differs from its reference. Run it from the repository root after an edit:
`python scripts/write_design_tasks.py`, then `wirebench tasks check tasks`.

Every pin gets a net label, and parts sit on a grid far enough apart that no label or
pin touches another part (so the sheets pass `akcli check --layout`).
"""

from __future__ import annotations

import json
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1] / "tasks"
PITCH_X, PITCH_Y, ORIGIN = 1200, 1000, (1000, 1000)


def oplist(parts: list[tuple], nets: dict[str, list[str]], columns: int = 4) -> dict:
    """parts: (designator, lib_id, value[, unit]); nets: {name: ["R1.1", ...]}.
    Parts are laid out left to right, `columns` a row."""
    ops = []
    for i, part in enumerate(parts):
        ref, lib_id, value, *unit = part
        x = ORIGIN[0] + PITCH_X * (i % columns)
        y = ORIGIN[1] + PITCH_Y * (i // columns)
        op = {"op": "place_component", "lib_id": lib_id, "designator": ref, "x_mil": x,
              "y_mil": y, "value": value}
        if unit:
            op["unit"] = unit[0]
        ops.append(op)
    for name, pins in nets.items():
        for pin in pins:
            ops.append({"op": "add_net_label", "name": name, "at": pin})
    return {"protocol_version": 2, "target_format": "kicad", "ops": ops}


def write(task: str, name: str, doc: dict) -> None:
    path = ROOT / task / name
    path.parent.mkdir(parents=True, exist_ok=True)
    lines = ",\n".join("    " + json.dumps(op) for op in doc["ops"])
    path.write_text('{\n  "protocol_version": 2,\n  "target_format": "kicad",\n  "ops": [\n'
                    f"{lines}\n  ]\n}}\n")


TASKS: dict[str, dict[str, tuple]] = {}


def task(name):
    def register(fn):
        TASKS[name] = fn()
        return fn
    return register


@task("d01-rc-lowpass-loaded")
def _():
    def rc(r, c, highpass=False):
        parts = [("R1", "Device:R", r), ("C1", "Device:C", c)]
        if highpass:
            return parts, {"VIN": ["C1.1"], "VOUT": ["C1.2", "R1.1"], "GND": ["R1.2"]}
        return parts, {"VIN": ["R1.1"], "VOUT": ["R1.2", "C1.1"], "GND": ["C1.2"]}
    return {"reference": rc("100", "120n"),
            "wrong/ignores-source-and-load": rc("1.6k", "100n"),
            "wrong/high-pass": rc("100", "120n", highpass=True)}


@task("d02-divider-into-adc")
def _():
    def div(top, bottom):
        return ([("R1", "Device:R", top), ("R2", "Device:R", bottom)],
                {"VIN": ["R1.1"], "VOUT": ["R1.2", "R2.1"], "GND": ["R2.2"]})
    return {"reference": div("20k", "20k"),
            "wrong/ignores-load": div("30k", "10k"),
            "wrong/too-stiff": div("2.7k", "1k"),
            "wrong/only-at-nominal": div("19.6k", "20k")}


def main() -> None:
    for name, answers in TASKS.items():
        for key, (parts, nets) in answers.items():
            filename = "reference_ops.json" if key == "reference" else f"{key}.json"
            write(name, filename, oplist(parts, nets))
            print(f"wrote tasks/{name}/{filename}")


if __name__ == "__main__":
    main()
