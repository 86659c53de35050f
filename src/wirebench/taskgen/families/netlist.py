"""Large netlists: an MCU board of 20 to 150 parts, spelled out part by part.

What makes it hard is size and bookkeeping, not design: multi-unit ICs (a quad op-amp,
a hex inverter, each unit placed on its own), connectors of up to 40 pins, unused pins,
and a sheet that must stay readable (layout_clean) at 150 parts.
"""

from __future__ import annotations

from wirebench.taskgen import blocks
from wirebench.taskgen.families.common import (
    knobs,
    libraries,
    multi_unit,
    part_lines,
    values_criterion,
)
from wirebench.taskgen.layout import envelope, expected_nets, ops_for
from wirebench.taskgen.spec import GeneratedTask

FAMILY = "netlist"
SIZES = [20, 30, 45, 60, 80, 100, 120, 135]


def generate(rng, index: int) -> GeneratedTask:
    target = SIZES[index % len(SIZES)] + rng.randint(0, 9)
    nl = blocks.board(rng, target)
    title = f"Controller board {index:03d}"
    units = multi_unit(nl.parts)
    prompt = [
        f"# {title}: {nl.size} parts",
        "",
        "Draw this board's schematic from its netlist export. Use exactly these "
        "designators, values and symbols. Connect every listed pin to its net with a net "
        "label, and use no other net names.",
    ]
    if units:
        prompt.append(f"{', '.join(units)} {'has' if len(units) == 1 else 'have'} several "
                      "units: place every unit whose pins are listed.")
    prompt += ["", *part_lines(nl.parts)]
    truth = expected_nets(nl.parts, libraries())
    return GeneratedTask(
        prompt="\n".join(prompt),
        meta={"tier": "transcription", "family": FAMILY,
              "brief": f"A {nl.size}-part MCU board transcribed from its netlist.",
              "criteria": [values_criterion(nl.parts)],
              "knobs": knobs(nl.parts, multi_unit=len(units))},
        reference=envelope(ops_for(nl.parts, libraries(), title)),
        expected=truth)
