"""What the families share: the project's libraries, a netlist's pin table as prose,
and the knobs every task.yaml carries."""

from __future__ import annotations

import functools
from pathlib import Path

from wirebench.taskgen.layout import Part, expected_nets, pin_table, resolve_pins

SYMBOLS_DIR = Path(__file__).resolve().parents[4] / "symbols"


@functools.cache
def libraries() -> list[str]:
    """The project's committed libraries: a layout depends on nothing a machine installs."""
    return sorted(str(p) for p in SYMBOLS_DIR.glob("*.kicad_sym"))


def pin_names(part: Part) -> dict[str, str]:
    return {p["number"]: p["name"] for p in pin_table(part.lib_id, libraries())}


def pin_phrase(number: str, name: str) -> str:
    shown = name if name not in ("~", "") else ""
    return f"pin {number} ({shown})" if shown else f"pin {number}"


def part_lines(parts: list[Part]) -> list[str]:
    """`- U1 (MCU32, `Sensor:MCU_32`): pin 1 (VDD) on `+3V3`, ...; pins 31, 32 not
    connected.` One bullet a part, the way a netlist export reads."""
    lines = []
    for part in parts:
        names = pin_names(part)
        nets = resolve_pins(part, pin_table(part.lib_id, libraries()))
        order = sorted(names, key=lambda n: (len(n), n))
        wired = [f"{pin_phrase(n, names[n])} on `{nets[n]}`" for n in order if n in nets]
        unused = [n for n in order if n not in nets]
        value = f"{part.value}, " if part.value else ""
        text = f"- {part.ref} ({value}`{part.lib_id}`): " + ", ".join(wired)
        if unused:
            text += f"; pin{'s' if len(unused) > 1 else ''} {', '.join(unused)} not connected"
        lines.append(text + ".")
    return lines


def values_criterion(parts: list[Part], criterion_id: str = "values") -> dict:
    """A `values` criterion for every part whose value the prompt states (part_lines and
    the prose parts list show each part's value): nets alone let a 4k7 pass for 10k."""
    return {"id": criterion_id, "kind": "values",
            "values": {p.ref: p.value for p in parts if p.value}}


def knobs(parts: list[Part], **extra) -> dict:
    truth = expected_nets(parts, libraries())["nets"]
    return {"parts": len(parts), "nets": len(truth),
            "pins": sum(len(n["members"]) for n in truth), "sheets": 1,
            "edit_ops": 0, "distractors": 0, **extra}


def multi_unit(parts: list[Part]) -> list[str]:
    return sorted({p.ref for p in parts
                   if len({q.get("unit") or 1 for q in pin_table(p.lib_id, libraries())}) > 1})
