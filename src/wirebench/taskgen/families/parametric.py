"""Parametric design tasks: the targets come from the seed, the circuit from the agent,
and ngspice judges it (the functional-task contract: testbench, measures, corners).

Kinds, by the `blocks` knob:
  1  divider   a DC level into a load, within a supply-current budget, at 1% corners
  1  lowpass   a -3 dB corner that must account for the source and the load
  1  gain      a non-inverting op-amp stage: gain, and a start-up that must not latch
  2  chain     a divider feeding a low-pass: each stage loads the other, DC and AC

The generator solves each for standard values (E24/E96) and checks its own answer
against the window before it writes the task; the wrong answers are the classic slips
(the load forgotten, the ratio inverted, the inputs swapped, a high-pass).
"""

from __future__ import annotations

import math

from wirebench.taskgen.layout import envelope
from wirebench.taskgen.spec import GeneratedTask, Wrong

FAMILY = "parametric"
E24 = [1.0, 1.1, 1.2, 1.3, 1.5, 1.6, 1.8, 2.0, 2.2, 2.4, 2.7, 3.0, 3.3, 3.6, 3.9, 4.3, 4.7,
       5.1, 5.6, 6.2, 6.8, 7.5, 8.2, 9.1]
E96 = [round(10 ** (i / 96), 2) for i in range(96)]
OPAMP = "Amplifier:OpAmp_Single"
# What the prompt says about the op-amp: the figures part_models.yaml's GP model has.
OPAMP_NOTE = ("The op-amp is `Amplifier:OpAmp_Single` with value `GP` (pins: 3 `+`, 2 `-`, "
              "6 output, 7 `V+`, 4 `V-`): gain-bandwidth 1 MHz; its output reaches from "
              "`V-` + 0.05 V to `V+` - 1.5 V; its inputs work anywhere between its supply "
              "pins, with no offset or bias current worth counting.")


def fmt(value: float) -> str:
    """Engineering notation as a schematic writes it: 4.7k, 100n, 1.5meg."""
    for scale, suffix in ((1e6, "meg"), (1e3, "k"), (1, ""), (1e-3, "m"), (1e-6, "u"),
                          (1e-9, "n"), (1e-12, "p")):
        if abs(value) >= scale * 0.9999:
            text = f"{value / scale:.3g}"
            return text + suffix
    return f"{value:.3g}"


def parse(text: str) -> float:
    """A value as fmt() writes it, back to a number."""
    from wirebench.verify.design_rules import part_value

    return part_value(text)


def nearest(value: float, series=E96) -> float:
    decade = 10 ** math.floor(math.log10(value))
    options = [m * decade * k for m in series for k in (0.1, 1, 10)]
    return min(options, key=lambda v: abs(math.log(v / value)))


def par(a: float, b: float) -> float:
    return a * b / (a + b)


# -- the op-list ---------------------------------------------------------------------------
def oplist(parts: list[tuple], nets: dict[str, list[str]]) -> dict:
    """parts: (ref, lib_id, value); nets: {name: ["R1.1", ...]}: a grid, a label a pin
    (the layout the hand-written design tasks use)."""
    ops = []
    for i, (ref, lib_id, value) in enumerate(parts):
        ops.append({"op": "place_component", "lib_id": lib_id, "designator": ref,
                    "x_mil": 1000 + 1200 * (i % 4), "y_mil": 1000 + 1000 * (i // 4),
                    "value": value})
    for name, pins in nets.items():
        ops.extend({"op": "add_net_label", "name": name, "at": pin} for pin in pins)
    return envelope(ops)


# -- the kinds -------------------------------------------------------------------------------
def divider(rng) -> dict:
    supply = rng.choice([5, 9, 12, 15, 24])
    target = rng.choice([v for v in (1.2, 1.8, 2.5, 3.0, 3.3, 4.0) if v < supply / 1.5])
    load = rng.choice([4.7e3, 10e3, 22e3])
    k = target / supply
    best = None
    for r1 in sorted({nearest(m * 1e3, E24) for m in (1, 2, 5, 10, 20, 50)}):
        rp = k * r1 / (1 - k)
        if rp >= load * 0.9:
            continue
        r2 = nearest(1 / (1 / rp - 1 / load))
        got = supply * par(r2, load) / (r1 + par(r2, load))
        naive = nearest(rp)  # the load forgotten: it must miss the window by far
        missed = supply * par(naive, load) / (r1 + par(naive, load))
        if (abs(got / target - 1) <= 0.005 and abs(missed / target - 1) > 0.07
                and (best is None or r1 > best[0])):
            best = (r1, r2, supply / (r1 + par(r2, load)), naive)
    if best is None:  # this load barely loads any divider: draw another
        return divider(rng)
    r1, r2, current, naive = best
    budget = math.ceil(current * 1.6e4) / 1e4  # 60% headroom, in 0.1 mA steps
    stiff = (nearest(r1 / 8, E24), nearest(k * (r1 / 8) / (1 - k)))
    stiff = (stiff[0], nearest(1 / (1 / (k * stiff[0] / (1 - k)) - 1 / load)))
    return {
        "title": "Divider into a loaded input",
        "ask": [f"Derive {target:g} V on net `VOUT` from the {supply} V rail on net `VIN`.",
                f"`VOUT` drives an input of {fmt(load)}Ω to `GND`.",
                f"The divider may draw at most {budget * 1e3:g} mA from `VIN`.",
                "Resistors are 1% parts: the level must hold at every tolerance corner."],
        "must": [f"`VOUT` at {target:g} V ± 3% with the load connected, at 1% corners;",
                 f"at most {budget * 1e3:g} mA from the rail."],
        "interface": ["VIN", "VOUT", "GND"], "symbols": ["Device:R"], "max_parts": 2,
        "testbench": {
            "sources": [{"name": "VSUP", "node": "VIN", "value": f"DC {supply}"}],
            "loads": [{"node": "VOUT", "resistance": fmt(load)}],
            "analyses": {"dc": f"vsup {supply - 1} {supply + 1} 1"},
            "measures": [
                {"name": "vout", "analysis": "dc", "meas": f"FIND v(VOUT) AT={supply}",
                 "target": target, "tol": 0.03, "why": f"the loaded level, {target:g} V ± 3%"},
                {"name": "supply_current", "analysis": "dc",
                 "meas": f"FIND i(vsup) AT={supply}", "min": f"-{fmt(budget)}",
                 "why": "the rail's budget (a source's current reads negative)"}],
            "corners": {"tolerance": {"R": 0.01}}},
        "reference": _div(r1, r2),
        "wrong": [("ignores-load", _div(r1, naive), "sim:vout",
                   f"{fmt(r1)} over {fmt(naive)} is {target:g} V unloaded; the "
                   f"{fmt(load)}Ω input pulls it low"),
                  ("too-stiff", _div(*stiff), "sim:supply_current",
                   f"{fmt(stiff[0])} over {fmt(stiff[1])} holds the level but draws more "
                   f"than {budget * 1e3:g} mA")],
    }


def _div(r1: float, r2: float):
    return ([("R1", "Device:R", fmt(r1)), ("R2", "Device:R", fmt(r2))],
            {"VIN": ["R1.1"], "VOUT": ["R1.2", "R2.1"], "GND": ["R2.2"]})


def _corner(source_r: float, r: float, c: float, load: float) -> float:
    """Where |VOUT/EMF| is 3 dB below 1 for an RC low-pass between a source and a load."""
    g0 = load / (source_r + r + load)
    fp = 1 / (2 * math.pi * c * par(source_r + r, load))
    return fp * math.sqrt(g0 * g0 / 10 ** (-0.3) - 1)


def lowpass(rng) -> dict:
    source = rng.choice([220, 330, 470, 680, 1e3, 1.5e3])
    load = rng.choice([22e3, 47e3, 100e3])
    target = rng.choice([100, 200, 500, 1e3, 2e3, 5e3, 10e3])
    best = None
    for m in E24:
        for dec in (100, 1e3):
            r = m * dec
            if (source + r) > 0.1 * load or r < source * 0.5:
                continue
            g0 = load / (source + r + load)
            x = math.sqrt(g0 * g0 / 10 ** (-0.3) - 1)
            c = nearest(x / (2 * math.pi * target * par(source + r, load)), E24)
            err = abs(_corner(source, r, c, load) / target - 1)
            if best is None or err < best[0]:
                best = (err, r, c)
    if best is None:  # this source and load leave no room for a resistor: draw again
        return lowpass(rng)
    _, r, c = best
    naive_c = nearest(1 / (2 * math.pi * target * r), E24)  # source and load forgotten
    return {
        "title": "Low-pass between a sensor and a load",
        "ask": [f"The sensor on `VIN` has {fmt(source)}Ω of source resistance (the testbench "
                "includes it); `VOUT` drives a load of " f"{fmt(load)}Ω to `GND`.",
                "Filter it with a first-order RC low-pass."],
        "must": [f"`VOUT` 3 dB below the sensor's EMF at {fmt(target)}Hz ± 10%;",
                 "at most 1 dB of loss at a hundredth of that frequency."],
        "interface": ["VIN", "VOUT", "GND"], "symbols": ["Device:R", "Device:C"],
        "max_parts": 3,
        "testbench": {
            "sources": [{"name": "VSENS", "node": "VIN", "value": "DC 0 AC 1",
                         "resistance": fmt(source)}],
            "loads": [{"node": "VOUT", "resistance": fmt(load)}],
            "analyses": {"ac": "dec 100 1 1meg"},
            "measures": [
                {"name": "passband", "analysis": "ac",
                 "meas": f"FIND vdb(VOUT) AT={fmt(target / 100)}", "min": -1,
                 "why": "the passband loses at most 1 dB"},
                {"name": "f_3db", "analysis": "ac", "when": "vdb(VOUT)=-3",
                 "target": fmt(target), "tol": 0.1, "why": "the corner, 3 dB below the EMF"}]},
        "reference": _rc(r, c),
        "wrong": [("ignores-source-and-load", _rc(r, naive_c), "sim:f_3db",
                   f"{fmt(r)} and {fmt(naive_c)} give {fmt(target)}Hz alone; with the "
                   "source and load the corner moves"),
                  ("high-pass", _rc(r, c, high=True), "sim:passband",
                   "the capacitor in series blocks the low frequencies")],
    }


def _rc(r: float, c: float, high: bool = False):
    parts = [("R1", "Device:R", fmt(r)), ("C1", "Device:C", fmt(c))]
    if high:
        return parts, {"VIN": ["C1.1"], "VOUT": ["C1.2", "R1.1"], "GND": ["R1.2"]}
    return parts, {"VIN": ["R1.1"], "VOUT": ["R1.2", "C1.1"], "GND": ["C1.2"]}


def gain(rng) -> dict:
    g = rng.choice([2, 3, 4.7, 5, 6.8, 10, 11, 15, 20])
    level = round(min(0.2, 2.5 / g), 3)
    rg = rng.choice([1e3, 2.2e3, 4.7e3, 10e3])
    rf = nearest(rg * (g - 1))
    bw = 0.5 * 1e6 / g
    return {
        "title": "Non-inverting gain stage",
        "ask": [f"Amplify the signal on `VIN` by +{g:g} onto `VOUT`.", OPAMP_NOTE,
                "`VPOS` is +5 V and `VNEG` is -5 V, both referred to `GND`; both ramp up "
                "from 0 V in 1 ms at power-on.",
                f"`VIN` carries a DC level of {level:g} V plus the signal."],
        "must": [f"a gain of +{g:g} ± 2% at 1 kHz;",
                 f"a -3 dB bandwidth of at least {fmt(bw)}Hz;",
                 f"after power-up, `VOUT` settles at {level * g:.3g} V ± 3%."],
        "interface": ["VIN", "VOUT", "GND", "VPOS", "VNEG"],
        "symbols": [OPAMP, "Device:R"], "max_parts": 3,
        "testbench": {
            "sources": [{"name": "VSIG", "node": "VIN", "value": f"DC {level:g} AC 1"},
                        {"name": "VP", "node": "VPOS", "value": "DC 5 PULSE(0 5 0 1m 1m 1 2)"},
                        {"name": "VN", "node": "VNEG",
                         "value": "DC -5 PULSE(0 -5 0 1m 1m 1 2)"}],
            "analyses": {"ac": "dec 50 10 10meg", "tran": "10u 5m"},
            "measures": [
                {"name": "gain_1k", "analysis": "ac", "meas": "FIND vm(VOUT) AT=1k",
                 "target": g, "tol": 0.02, "why": "the closed-loop gain"},
                {"name": "bandwidth", "analysis": "ac",
                 "when": f"vdb(VOUT)={20 * math.log10(g) - 3:.2f} FALL=1", "min": fmt(bw),
                 "why": "where the gain is 3 dB down"},
                {"name": "startup", "analysis": "tran", "meas": "FIND v(VOUT) AT=5m",
                 "target": round(level * g, 4), "tol": 0.03,
                 "why": "after the supplies ramp, the output follows; positive feedback "
                        "latches at a rail"}]},
        "reference": _amp(rf, rg),
        "wrong": [("inputs-swapped", _amp(rf, rg, swapped=True), "sim:startup",
                   "with + and - swapped the stage latches at a rail at power-up"),
                  ("ratio-is-gain", _amp(nearest(rg * g), rg), "sim:gain_1k",
                   f"Rf/Rg = {g:g} gives a gain of {g + 1:g}, not {g:g}")],
    }


def _amp(rf: float, rg: float, swapped: bool = False):
    plus, minus = ("U1.2", "U1.3") if swapped else ("U1.3", "U1.2")
    return ([("U1", OPAMP, "GP"), ("R1", "Device:R", fmt(rf)), ("R2", "Device:R", fmt(rg))],
            {"VIN": [plus], "FB": [minus, "R1.2", "R2.1"], "VOUT": ["U1.6", "R1.1"],
             "GND": ["R2.2"], "VPOS": ["U1.7"], "VNEG": ["U1.4"]})


def chain(rng) -> dict:
    """A divider that sets a DC level, then an RC low-pass: the filter's resistor and
    the load draw on the divider, and the divider's resistance adds to the filter's."""
    supply = rng.choice([5, 12])
    target = rng.choice([1.0, 1.5, 2.0])
    load = rng.choice([47e3, 100e3])
    fc = rng.choice([50, 100, 200, 500])
    k_total = target / supply
    best = None
    for r3 in (1e3, 2.2e3, 4.7e3, 10e3):
        for r1 in (10e3, 22e3, 47e3, 100e3):
            # VOUT = VDIV * load / (r3 + load); VDIV from r1 over r2 || (r3 + load)
            k_div = k_total * (r3 + load) / load
            rp = k_div * r1 / (1 - k_div)
            if rp >= (r3 + load) * 0.9:
                continue
            r2 = nearest(1 / (1 / rp - 1 / (r3 + load)))
            vdiv = supply * par(r2, r3 + load) / (r1 + par(r2, r3 + load))
            got = vdiv * load / (r3 + load)
            if abs(got / target - 1) > 0.006:
                continue
            naive_r2 = nearest(k_total * r1 / (1 - k_total))  # every load forgotten
            vnaive = supply * par(naive_r2, r3 + load) / (r1 + par(naive_r2, r3 + load))
            if abs(vnaive * load / (r3 + load) / target - 1) < 0.07:
                continue
            rth = par(r1, r2)
            c = nearest(1 / (2 * math.pi * fc * par(rth + r3, load)), E24)
            f = 1 / (2 * math.pi * c * par(rth + r3, load))
            naive_c = nearest(1 / (2 * math.pi * fc * r3), E24)  # the divider forgotten
            f_naive = 1 / (2 * math.pi * naive_c * par(rth + r3, load))
            err = abs(f / fc - 1)
            if abs(f_naive / fc - 1) > 0.3 and (best is None or err < best[0]):
                best = (err, r1, r2, r3, c, naive_r2, naive_c)
    if best is None:
        return chain(rng)
    _, r1, r2, r3, c, naive_r2, naive_c = best
    level_db = 20 * math.log10(target / supply)
    return {
        "title": "Bias level with a low-pass",
        "ask": [f"Make a quiet {target:g} V bias on net `VOUT` from the {supply} V rail on "
                "`VIN` (which also carries ripple): a resistive divider, then a first-order "
                "RC low-pass.", f"`VOUT` drives a {fmt(load)}Ω load to `GND`."],
        "must": [f"`VOUT` at {target:g} V ± 3% with the load connected;",
                 f"ripple on `VIN` 3 dB below its DC transfer at {fmt(fc)}Hz ± 15%."],
        "interface": ["VIN", "VOUT", "GND"], "symbols": ["Device:R", "Device:C"],
        "max_parts": 4,
        "testbench": {
            "sources": [{"name": "VSUP", "node": "VIN", "value": f"DC {supply} AC 1"}],
            "loads": [{"node": "VOUT", "resistance": fmt(load)}],
            "analyses": {"dc": f"vsup {supply - 1} {supply + 1} 1", "ac": "dec 100 1 100k"},
            "measures": [
                {"name": "vout", "analysis": "dc", "meas": f"FIND v(VOUT) AT={supply}",
                 "target": target, "tol": 0.03, "why": "the loaded bias level"},
                {"name": "f_3db", "analysis": "ac",
                 "when": f"vdb(VOUT)={level_db - 3:.2f}", "target": fmt(fc), "tol": 0.15,
                 "why": "the corner, 3 dB below the DC transfer"}]},
        "reference": _chain(r1, r2, r3, c),
        "wrong": [("filter-ignores-divider", _chain(r1, r2, r3, naive_c), "sim:f_3db",
                   f"{fmt(r3)} with {fmt(naive_c)} is {fmt(fc)}Hz alone; the divider's "
                   f"{fmt(par(r1, r2))}Ω adds to it"),
                  ("divider-ignores-loads", _chain(r1, naive_r2, r3, c), "sim:vout",
                   "the ratio set as if nothing drew on the divider")],
        "blocks": 2,
    }


def _chain(r1, r2, r3, c):
    return ([("R1", "Device:R", fmt(r1)), ("R2", "Device:R", fmt(r2)),
             ("R3", "Device:R", fmt(r3)), ("C1", "Device:C", fmt(c))],
            {"VIN": ["R1.1"], "VDIV": ["R1.2", "R2.1", "R3.1"], "GND": ["R2.2", "C1.2"],
             "VOUT": ["R3.2", "C1.1"]})


KINDS = [divider, lowpass, gain, chain]


def design(rng, index: int) -> dict:
    return KINDS[index % len(KINDS)](rng)


def task_from(spec: dict, family: str, brief: str | None = None) -> GeneratedTask:
    """The design contract's folder: prompt, testbench and criteria, oracle, wrong ones."""
    lines = [f"# {spec['title']}", "", *[f"{line}" for line in spec["ask"]], "",
             "What it must do:", *[f"- {m}" for m in spec["must"]], "",
             f"Use {', '.join(f'`{s}`' for s in spec['symbols'])}, at most "
             f"{spec['max_parts']} parts in all. The nets "
             f"{', '.join(f'`{n}`' for n in spec['interface'])} must exist."]
    parts, nets = spec["reference"]
    return GeneratedTask(
        prompt="\n".join(lines),
        meta={"tier": "design", "family": family,
              "brief": brief or spec["title"] + ", checked by simulation.",
              "interface": spec["interface"], "symbols": spec["symbols"],
              "testbench": spec["testbench"],
              "criteria": [{"id": "parts", "kind": "max_parts", "max": spec["max_parts"]}],
              "knobs": {"parts": len(parts), "nets": len(nets),
                        "pins": sum(len(v) for v in nets.values()), "sheets": 1,
                        "edit_ops": 0, "distractors": 0, "blocks": spec.get("blocks", 1),
                        "measures": len(spec["testbench"]["measures"])}},
        reference=oplist(parts, nets),
        wrong=[Wrong(name, oplist(*answer), fails, why)
               for name, answer, fails, why in spec["wrong"]])


def generate(rng, index: int) -> GeneratedTask:
    return task_from(design(rng, index), FAMILY)
