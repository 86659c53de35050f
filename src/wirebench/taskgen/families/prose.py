"""Prose specifications: a small board described the way an engineer writes it up, net by
net, with the distractors real notes carry: a value an old revision used, a part that is
on the list but not fitted, a remark about a net that no longer exists.

The ground truth is the netlist the notes describe; the distractors must leave no trace.
"""

from __future__ import annotations

from wirebench.taskgen import blocks
from wirebench.taskgen.families.common import knobs, libraries, pin_names, values_criterion
from wirebench.taskgen.layout import (
    Part,
    envelope,
    expected_nets,
    ops_for,
    pin_table,
    resolve_pins,
)
from wirebench.taskgen.spec import GeneratedTask, Wrong

FAMILY = "prose"
SMALL = [blocks.led, blocks.i2c_sensor, blocks.uart_header, blocks.inverters]
KIND = {"R": "resistor", "C": "capacitor", "D": "LED", "Y": "crystal", "J": "connector",
        "U": "IC", "F": "fuse"}
JOIN = ["{net} joins {pins}.", "Net {net} ties together {pins}.", "{pins} all sit on {net}.",
        "On {net}: {pins}.", "{net} runs between {pins}."]


def _pin_ref(part, number: str) -> str:
    name = pin_names(part).get(number, "~")
    shown = f" ({name})" if name not in ("~", "") and not name.startswith("Pin_") else ""
    return f"{part.ref} pin {number}{shown}"


def _listing(items: list[str]) -> str:
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]


def generate(rng, index: int) -> GeneratedTask:
    nl = blocks.Netlist()
    blocks.mcu_core(nl, rng)
    for block in rng.sample(SMALL, rng.randint(1, 3)):
        block(nl, rng)
    parts = nl.parts
    by_net: dict[str, list[str]] = {}
    for part in parts:
        for number, net in resolve_pins(part, pin_table(part.lib_id, libraries())).items():
            by_net.setdefault(net, []).append(_pin_ref(part, number))

    lines = [f"# Bring-up notes, board rev {'BCD'[index % 3]}", "",
             "Here are my notes on the board; please capture it as a schematic with akcli. "
             "Use the designators, values and symbols below, name every net as I do, label "
             "each pin on its net, and add no other nets.", "", "## Parts", ""]
    for part in parts:
        value = f" {part.value}" if part.value else ""
        lines.append(f"- {part.ref}:{value} {KIND.get(part.ref[0], 'part')}, "
                     f"`{part.lib_id}`")
    distractors = 0
    # A part on the list that is not fitted: it must not be drawn.
    dnp = f"R{sum(p.ref.startswith('R') for p in parts) + 1}"
    dnp_net = rng.choice(sorted(n for n in by_net if n != "GND"))
    lines.append(f"- {dnp}: 0R link, `Device:R`, between `{dnp_net}` and "
                 f"`GND`: DNP on this revision (not fitted; leave it off the schematic)")
    distractors += 1
    lines += ["", "## Connections", ""]
    nets = rng.shuffle(sorted(by_net))
    for net in nets:
        lines.append(rng.choice(JOIN).format(net=f"`{net}`",
                                             pins=_listing(rng.shuffle(by_net[net]))))
    # An old revision's value for a part that changed since.
    changed = rng.choice([p for p in parts if p.ref.startswith(("R", "C")) and p.value])
    old = rng.choice([v for v in ("1k", "4k7", "22k", "47n", "10p") if v != changed.value])
    lines += ["", "## History", "",
              f"- Rev A had {changed.ref} at {old}; it is {changed.value} now (the parts "
              "list above is current).",
              f"- The old `TEST_{rng.randint(1, 9)}` net went away with rev A's test header; "
              "nothing connects to it any more."]
    distractors += 2
    truth = expected_nets(parts, libraries())
    title = f"Board rev {'BCD'[index % 3]}"
    fitted = [*(p.copy() for p in parts), Part(dnp, "Device:R", "0R", {"1": dnp_net, "2": "GND"})]
    stale = [p.copy() for p in parts]
    next(p for p in stale if p.ref == changed.ref).value = old
    return GeneratedTask(
        prompt="\n".join(lines),
        meta={"tier": "transcription", "family": FAMILY,
              "brief": f"A {len(parts)}-part board from prose notes with {distractors} "
                       "distractors.",
              "criteria": [values_criterion(parts)],
              "knobs": knobs(parts, distractors=distractors)},
        reference=envelope(ops_for(parts, libraries(), title)),
        expected=truth,
        wrong=[Wrong("fits-the-dnp-part", envelope(ops_for(fitted, libraries(), title)),
                     "nets", f"{dnp} is not fitted, but this draws it onto {dnp_net}"),
               Wrong("rev-a-value", envelope(ops_for(stale, libraries(), title)), "values",
                     f"{changed.ref} at {old} is rev A's value, not the current {changed.value}")])
