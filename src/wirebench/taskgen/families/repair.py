"""Repair: a design that was drawn with one fault, known only by its symptom.

The base sheet is a parametric design (families/parametric.py) with one planted fault:
the load forgotten when the divider was sized, a filter capacitor sized without its
source or without the divider ahead of it, a feedback resistor that makes the gain one
too high, a gain resistor never fitted. The task states what the bench shows, never the
cause. The agent edits the sheet (set_component_parameters, or a part and its labels)
under the rails; the simulation judges the result, and `max_ops` the size of the edit: a
redraw of the whole sheet is not a repair.

Each task's wrong answers: the redraw, and a fix of the wrong part (the neighbour of the
faulty one, changed in the direction that makes the symptom worse).
"""

from __future__ import annotations

from wirebench.taskgen.families import parametric as design
from wirebench.taskgen.layout import envelope
from wirebench.taskgen.spec import GeneratedTask, Wrong

FAMILY = "repair"
MAX_EDIT_OPS = 4
# design title -> (the wrong answer planted as the fault, the faulty part, its neighbour,
# does scaling the neighbour by good/bad make it worse, the measure that shows it, symptom)
FAULTS = {
    "Divider into a loaded input": (
        "ignores-load", "R2", "R1", True, "vout",
        "On the bench `VOUT` reads well below its target once the input it drives is "
        "connected; with the input unplugged it is right."),
    "Low-pass between a sensor and a load": (
        "ignores-source-and-load", "C1", "R1", False, "f_3db",
        "With the real sensor and load connected, the filter's corner measures well away from "
        "its target frequency."),
    "Non-inverting gain stage": (
        "ratio-is-gain", "R1", "R2", True, "gain_1k",
        "The stage's gain measures too high: about one more than specified."),
    "Bias level with a low-pass": (
        "filter-ignores-divider", "C1", "R3", False, "f_3db",
        "The bias level is right, but more ripple gets through than it should: the "
        "low-pass corner measures well away from its target."),
}


def _value(parts, ref: str) -> str:
    return next(v for r, _, v in parts if r == ref)


def _set(ref: str, value: str) -> dict:
    return {"op": "set_component_parameters", "designator": ref, "value": value}


def _unfitted_gain_resistor(spec: dict) -> dict:
    """The gain stage with R2 never fitted: a follower."""
    parts, nets = spec["reference"]
    place = {"op": "place_component", "lib_id": "Device:R", "designator": "R2",
             "x_mil": 1000, "y_mil": 2200, "value": _value(parts, "R2")}
    return {
        "base": ([p for p in parts if p[0] != "R2"],
                 {k: [m for m in v if not m.startswith("R2.")] for k, v in nets.items()
                  if [m for m in v if not m.startswith("R2.")]}),
        "fix": [place, {"op": "add_net_label", "name": "FB", "at": "R2.1"},
                {"op": "add_net_label", "name": "GND", "at": "R2.2"}],
        "wrong_fix": [place, {"op": "add_net_label", "name": "VIN", "at": "R2.1"},
                      {"op": "add_net_label", "name": "GND", "at": "R2.2"}],
        "measure": "gain_1k",
        "symptom": "The stage has no gain at all: `VOUT` follows `VIN` one to one.",
        "wrong_why": "R2 fitted from VIN to GND instead of from FB: still a follower",
    }


def fault(spec: dict, rng) -> dict:
    """The base circuit, the fix, a wrong fix, the measure that shows the fault."""
    if spec["title"] == "Non-inverting gain stage" and rng.chance(50):
        return _unfitted_gain_resistor(spec)
    planted, ref, other, worse_up, measure, symptom = FAULTS[spec["title"]]
    good_parts, nets = spec["reference"]
    bad_parts = next(a for n, a, _, _ in spec["wrong"] if n == planted)[0]
    good, bad = _value(good_parts, ref), _value(bad_parts, ref)
    factor = design.parse(good) / design.parse(bad)
    neighbour = design.parse(_value(good_parts, other))
    moved = design.nearest(neighbour * (factor if worse_up else 1 / factor))
    return {"base": (bad_parts, nets), "fix": [_set(ref, good)],
            "wrong_fix": [_set(other, design.fmt(moved))], "measure": measure,
            "symptom": symptom,
            "wrong_why": f"{other} changed instead of {ref}: the symptom gets worse"}


def _redraw(spec: dict) -> dict:
    """The whole circuit drawn again under fresh designators, beside the faulty one."""
    doc = design.oplist(*spec["reference"])
    for op in doc["ops"]:
        if op["op"] == "place_component":
            op["designator"] = op["designator"][0] + str(10 + int(op["designator"][1:]))
            op["y_mil"] += 3000
        else:
            ref, pin = op["at"].split(".")
            op["at"] = f"{ref[0]}{10 + int(ref[1:])}.{pin}"
    return doc


def generate(rng, index: int) -> GeneratedTask:
    spec = design.design(rng, index)
    planted = fault(spec, rng)
    task = design.task_from(spec, FAMILY, brief=f"Repair: {spec['title'].lower()} with one "
                            "planted fault, known by its symptom.")
    task.prompt = "\n".join([
        f"# Repair: {spec['title'].lower()}",
        "",
        "The sheet you are given was drawn to the specification below, but the bench "
        "disagrees with it:",
        "",
        f"> {planted['symptom']}",
        "",
        "Find the fault and fix it with the smallest edit of the existing sheet: your "
        "op-list is applied on top of it under akcli's `--strict-nets` rails, at most "
        f"{MAX_EDIT_OPS} ops. Do not redraw it.",
        "",
        "The specification:",
        *[f"- {line}" for line in spec["ask"]],
        "",
        "What it must do:",
        *[f"- {m}" for m in spec["must"]],
    ])
    task.meta["tier"] = "repair"
    task.base = design.oplist(*planted["base"])
    task.reference = envelope(planted["fix"])
    task.meta["criteria"] = [{"id": "edit_size", "kind": "max_ops", "max": MAX_EDIT_OPS}]
    # The prompt states the op-amp's value (parametric.OPAMP_NOTE) and the base sheet names
    # it, so a repair must keep it. (A design task's agent picks its own designators: there
    # no values criterion can name the part.)
    stated = {ref: value for ref, lib_id, value in planted["base"][0] if lib_id == design.OPAMP}
    if stated:
        task.meta["criteria"].append({"id": "values", "kind": "values", "values": stated})
    task.meta["knobs"].update({"edit_ops": len(planted["fix"]),
                               "parts": len(planted["base"][0])})
    redraw = _redraw(spec)
    task.wrong = [
        Wrong("redraw", redraw, "edit_size",
              f"the whole circuit drawn again ({len(redraw['ops'])} ops) is no repair"),
        Wrong("wrong-part", envelope(planted["wrong_fix"]), f"sim:{planted['measure']}",
              planted["wrong_why"]),
    ]
    return task
