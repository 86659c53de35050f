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


OPAMP = "Amplifier:OpAmp_Single"  # pins: 3 +, 2 -, 6 out, 7 V+, 4 V-


@task("d03-noninverting-gain")
def _():
    def stage(r_gnd, r_fb, swapped=False):
        plus, minus = ("U1.2", "U1.3") if swapped else ("U1.3", "U1.2")
        return ([("U1", OPAMP, "GP"), ("R1", "Device:R", r_gnd), ("R2", "Device:R", r_fb)],
                {"VIN": [plus], "FB": [minus, "R1.1", "R2.1"], "VOUT": ["U1.6", "R2.2"],
                 "GND": ["R1.2"], "VPOS": ["U1.7"], "VNEG": ["U1.4"]})
    return {"reference": stage("1k", "10k"),
            "wrong/inputs-swapped": stage("1k", "10k", swapped=True),
            "wrong/gain-inverted-ratio": stage("10k", "1k")}


@task("d04-inverting-gain")
def _():
    def stage(r_in, r_fb, swapped=False):
        plus, minus = ("U1.2", "U1.3") if swapped else ("U1.3", "U1.2")
        return ([("U1", OPAMP, "GP"), ("R1", "Device:R", r_in), ("R2", "Device:R", r_fb)],
                {"VIN": ["R1.1"], "SUM": [minus, "R1.2", "R2.1"], "VOUT": ["U1.6", "R2.2"],
                 "GND": [plus], "VPOS": ["U1.7"], "VNEG": ["U1.4"]})
    return {"reference": stage("9.09k", "47.5k"),
            "wrong/ignores-source-resistance": stage("10k", "47k"),
            "wrong/inputs-swapped": stage("9.09k", "47.5k", swapped=True),
            "wrong/only-at-nominal": stage("9.09k", "48.7k")}


@task("d05-npn-led-switch")
def _():
    def switch(r_led, r_base, base_direct=False):
        parts = [("Q1", "Device:Q_NPN_BCE", "NPN"), ("D1", "Device:LED", "red"),
                 ("R1", "Device:R", r_led)]
        nets = {"VCC": ["R1.1"], "LED_A": ["R1.2", "D1.2"], "LED_K": ["D1.1", "Q1.2"],
                "GND": ["Q1.3"]}
        if base_direct:
            nets["GPIO"] = ["Q1.1"]
        else:
            parts.append(("R2", "Device:R", r_base))
            nets["GPIO"] = ["R2.1"]
            nets["BASE"] = ["R2.2", "Q1.1"]
        return parts, nets
    return {"reference": switch("300", "4.7k"),
            "wrong/ignores-led-drop": switch("470", "4.7k"),
            "wrong/no-base-resistor": switch("300", None, base_direct=True),
            "wrong/only-at-nominal": switch("340", "4.7k")}


@task("d06-reset-delay")
def _():
    def rc(r, c):
        return ([("R1", "Device:R", r), ("C1", "Device:C", c)],
                {"VDD": ["R1.1"], "RESET": ["R1.2", "C1.1"], "GND": ["C1.2"]})
    return {"reference": rc("15k", "1u"),
            "wrong/ignores-internal-pullup": rc("100k", "100n"),
            "wrong/only-at-nominal": rc("18k", "1u")}


@task("d07-zener-reference")
def _():
    def shunt(r, reversed_zener=False):
        k, a = ("D1.2", "D1.1") if reversed_zener else ("D1.1", "D1.2")
        return ([("R1", "Device:R", r), ("D1", "Device:D_Zener", "3V3")],
                {"VIN": ["R1.1"], "VREF": ["R1.2", k], "GND": [a]})
    return {"reference": shunt("1.1k"),
            "wrong/starved-at-low-input": shunt("4.7k"),
            "wrong/zener-reversed": shunt("1.1k", reversed_zener=True)}


@task("d08-sallen-key-lowpass")
def _():
    def sk(r, c_fb, c_gnd):
        return ([("U1", OPAMP, "GP"), ("R1", "Device:R", r), ("R2", "Device:R", r),
                 ("C1", "Device:C", c_fb), ("C2", "Device:C", c_gnd)],
                {"VIN": ["R1.1"], "N1": ["R1.2", "R2.1", "C1.1"],
                 "N2": ["R2.2", "C2.1", "U1.3"], "VOUT": ["U1.6", "U1.2", "C1.2"],
                 "GND": ["C2.2"], "VPOS": ["U1.7"], "VNEG": ["U1.4"]})

    def first_order():
        return ([("U1", OPAMP, "GP"), ("R1", "Device:R", "15k"), ("C1", "Device:C", "10n")],
                {"VIN": ["R1.1"], "N1": ["R1.2", "C1.1", "U1.3"], "VOUT": ["U1.6", "U1.2"],
                 "GND": ["C1.2"], "VPOS": ["U1.7"], "VNEG": ["U1.4"]})
    return {"reference": sk("10.7k", "22n", "10n"),
            "wrong/equal-capacitors": sk("10.7k", "15n", "15n"),
            "wrong/first-order": first_order()}


@task("d09-level-shifter")
def _():
    def shifter(hv_pullup_to="V5", hv_pullup=True):
        # Each rail decoupled to GND, as on any board.
        parts = [("Q1", "Device:Q_NMOS_GSD", "NMOS"), ("R1", "Device:R", "10k"),
                 ("C1", "Device:C", "100n"), ("C2", "Device:C", "100n")]
        nets = {"V3V3": ["Q1.1", "R1.1", "C1.1"], "SDA_LV": ["Q1.2", "R1.2"],
                "SDA_HV": ["Q1.3"], "V5": ["C2.1"], "GND": ["C1.2", "C2.2"]}
        if hv_pullup:
            parts.append(("R2", "Device:R", "10k"))
            nets["SDA_HV"].append("R2.2")
            nets[hv_pullup_to].append("R2.1")
        return parts, nets
    return {"reference": shifter(),
            "wrong/hv-pullup-to-3v3": shifter(hv_pullup_to="V3V3"),
            "wrong/no-hv-pullup": shifter(hv_pullup=False)}


@task("d10-nmos-led-string")
def _():
    def string(r, leds=3):
        parts = [("Q1", "Device:Q_NMOS_GSD", "NMOS"), ("R1", "Device:R", r),
                 ("R2", "Device:R", "100"), ("R3", "Device:R", "100k")]
        nets = {"V12": ["R1.1"], "GPIO": ["R2.1"], "GATE": ["R2.2", "R3.1", "Q1.1"],
                "GND": ["R3.2", "Q1.2"]}
        chain = "R1.2"
        for i in range(1, leds + 1):
            parts.append((f"D{i}", "Device:LED", "white"))
            nets[f"S{i}"] = [chain, f"D{i}.2"]
            chain = f"D{i}.1"
        nets["DRAIN"] = [chain, "Q1.3"]
        return parts, nets
    return {"reference": string("180"),
            "wrong/one-led-drop-only": string("590"),
            "wrong/no-headroom": string("47"),
            "wrong/only-at-nominal": string("200")}


# Units: 1 (3 +, 2 -, 1 out), 2 (5 +, 6 -, 7 out), 3 (8 V+, 4 V-).
DUAL = RRO_DUAL = "Amplifier:OpAmp_Dual"


@task("s01-sensor-channel")
def _():
    def channel(r_filter="590", swapped=False):
        plus, minus = ("U1.2", "U1.3") if swapped else ("U1.3", "U1.2")
        parts = [("U1", DUAL, "GP", 1), ("U1", DUAL, "GP", 2), ("U1", DUAL, "GP", 3),
                 ("R1", "Device:R", r_filter), ("C1", "Device:C", "1u"),
                 ("R2", "Device:R", "1k"), ("R3", "Device:R", "24k"),
                 ("R4", "Device:R", "10k"), ("R5", "Device:R", "10k"),
                 ("C2", "Device:C", "100n"), ("C3", "Device:C", "1u"),
                 ("R6", "Device:R", "100"), ("C4", "Device:C", "1n"),
                 ("C5", "Device:C", "100n"), ("C6", "Device:C", "10u"),
                 ("R7", "Device:R", "1.5k"), ("D1", "Device:LED", "green")]
        nets = {"SENSOR": ["R1.1"], "FILT": ["R1.2", "C1.1", plus],
                "FB": [minus, "R2.1", "R3.1"], "AMP_OUT": ["U1.1", "R3.2", "R6.1"],
                "ADC_IN": ["R6.2", "C4.1"], "REF_DIV": ["R4.2", "R5.1", "C2.1"],
                "V5": ["U1.8", "R4.1", "C5.1", "C6.1", "R7.1"], "LED_A": ["R7.2", "D1.2"],
                "GND": ["C1.2", "R2.2", "R5.2", "C2.2", "C4.2", "C5.2", "C6.2", "U1.4",
                        "D1.1", "C3.2"]}
        nets["REF_DIV"].append("U1.5")
        nets["ADC_REF"] = ["U1.7", "U1.6", "C3.1"]
        return parts, nets

    def unbuffered():
        """The divider straight into the ADC's reference pin; unit B left as a follower
        of nothing."""
        parts, nets = channel()
        nets.pop("REF_DIV")
        nets["ADC_REF"] = ["R4.2", "R5.1", "C2.1", "C3.1"]
        nets["IDLE"] = ["U1.5", "U1.6", "U1.7"]
        return parts, nets
    return {"reference": channel(),
            "wrong/ignores-source-resistance": channel(r_filter="1.6k"),
            "wrong/unbuffered-reference": unbuffered(),
            "wrong/inputs-swapped": channel(swapped=True),
            "wrong/only-at-nominal": channel(r_filter="390")}


@task("s02-fourth-order-filter")
def _():
    def sk_stage(unit_pins, prefix, n_in, n_out, r1, r2, c_fb, c_gnd):
        """One unity-gain Sallen-Key stage on one unit of the dual op-amp."""
        plus, minus, out = unit_pins
        (ra, rb), (ca, cb) = prefix
        parts = [(ra, "Device:R", r1), (rb, "Device:R", r2), (ca, "Device:C", c_fb),
                 (cb, "Device:C", c_gnd)]
        mid, node = f"{n_out}_M", f"{n_out}_P"
        nets = {n_in: [f"{ra}.1"], mid: [f"{ra}.2", f"{rb}.1", f"{ca}.1"],
                node: [f"{rb}.2", f"{cb}.1", plus], n_out: [out, minus, f"{ca}.2"],
                "GND": [f"{cb}.2"]}
        return parts, nets

    def merge(*blocks):
        parts, nets = [], {}
        for p, n in blocks:
            parts += p
            for name, pins in n.items():
                nets.setdefault(name, []).extend(pins)
        return parts, nets

    def filt(a=("14k", "14.7k", "12n", "10n"), b=("6.04k", "6.04k", "68n", "10n"),
             stages=2, bias_to="VMID"):
        head = ([("U1", RRO_DUAL, "RRO", 1), ("U1", RRO_DUAL, "RRO", 2),
                 ("U1", RRO_DUAL, "RRO", 3), ("C1", "Device:C", "1u"),
                 ("R1", "Device:R", "22k"), ("R2", "Device:R", "10k"),
                 ("R3", "Device:R", "10k"), ("C2", "Device:C", "1u"),
                 ("C3", "Device:C", "100n"), ("C4", "Device:C", "10u")],
                {"VIN": ["C1.1"], "IN_B": ["C1.2", "R1.1"], "V5": ["U1.8", "R2.1", "C3.1", "C4.1"],
                 "VMID": ["R2.2", "R3.1", "C2.1"],
                 "GND": ["R3.2", "C2.2", "C3.2", "C4.2", "U1.4"]})
        head[1][bias_to].append("R1.2")
        first_out = "VOUT" if stages == 1 else "STAGE1"
        blocks = [head, sk_stage(("U1.3", "U1.2", "U1.1"), (("R4", "R5"), ("C5", "C6")),
                                 "IN_B", first_out, *a)]
        if stages == 2:
            blocks.append(sk_stage(("U1.5", "U1.6", "U1.7"), (("R6", "R7"), ("C7", "C8")),
                                   "STAGE1", "VOUT", *b))
        else:
            blocks.append(([], {"IDLE": ["U1.5", "U1.6", "U1.7"]}))
        return merge(*blocks)
    return {"reference": filt(),
            "wrong/two-butterworth-pairs": filt(a=("10.7k", "10.7k", "22n", "10n"),
                                                b=("10.7k", "10.7k", "22n", "10n")),
            "wrong/second-order-only": filt(a=("10.7k", "10.7k", "22n", "10n"), stages=1),
            "wrong/bias-to-ground": filt(bias_to="GND"),
            "wrong/only-at-nominal": filt(a=("13.2k", "13.8k", "12n", "10n"),
                                          b=("5.68k", "5.68k", "68n", "10n"))}


@task("s03-indicator-panel")
def _():
    def panel(rails=("V3V3", "V3V3", "VBUS"), r_led=("270", "220", "390")):
        parts = [("U1", "Regulator:LDO_3P3", "LDO_3P3"), ("C1", "Device:C", "1u"),
                 ("C2", "Device:C", "10u"), ("C3", "Device:C", "100n")]
        nets = {"VBUS": ["U1.1", "C1.1", "C3.1"], "V3V3": ["U1.3", "C2.1"],
                "GND": ["U1.2", "C1.2", "C2.2", "C3.2"]}
        for i, (colour, gpio, rail, r) in enumerate(zip(
                ("red", "green", "blue"), ("GPIO_R", "GPIO_G", "GPIO_B"), rails, r_led,
                strict=True), start=1):
            q, rb, rl, d = f"Q{i}", f"R{i}", f"R{i + 3}", f"D{i}"
            parts += [(q, "Device:Q_NPN_BCE", "NPN"), (rb, "Device:R", "4.7k"),
                      (rl, "Device:R", r), (d, "Device:LED", colour)]
            nets[gpio] = [f"{rb}.1"]
            nets[f"B{i}"] = [f"{rb}.2", f"{q}.1"]
            nets[rail].append(f"{rl}.1")
            nets[f"A{i}"] = [f"{rl}.2", f"{d}.2"]
            nets[f"K{i}"] = [f"{d}.1", f"{q}.2"]
            nets["GND"].append(f"{q}.3")
        return parts, nets
    return {"reference": panel(),
            "wrong/blue-from-3v3": panel(rails=("V3V3", "V3V3", "V3V3"),
                                         r_led=("270", "220", "51")),
            "wrong/all-from-vbus": panel(rails=("VBUS", "VBUS", "VBUS"))}


@task("s04-differential-sensor")
def _():
    def amp(r_in="9k", buffered_ref=True, ref_leg_to="REF", r_fb="100k"):
        parts = [("U1", DUAL, "RRO", 1), ("U1", DUAL, "RRO", 2), ("U1", DUAL, "RRO", 3),
                 ("R1", "Device:R", r_in), ("R2", "Device:R", r_fb),
                 ("R3", "Device:R", r_in), ("R4", "Device:R", r_fb),
                 ("R5", "Device:R", "30k"), ("R6", "Device:R", "10k"),
                 ("C1", "Device:C", "10n"), ("C2", "Device:C", "100n"),
                 ("C3", "Device:C", "10u"), ("C4", "Device:C", "100n"),
                 ("R7", "Device:R", "100"), ("C5", "Device:C", "1n"),
                 ("C6", "Device:C", "1n"), ("C7", "Device:C", "1n")]
        nets = {"SENS_N": ["R1.1", "C7.1"], "SENS_P": ["R3.1", "C6.1"],
                "INN": ["R1.2", "R2.1", "U1.2"], "INP": ["R3.2", "R4.1", "U1.3"],
                "AMP_OUT": ["U1.1", "R2.2", "R7.1"], "VOUT": ["R7.2", "C5.1"],
                "V5": ["U1.8", "R5.1", "C2.1", "C3.1"], "REF_DIV": ["R5.2", "R6.1", "C1.1"],
                "REF": ["C4.1"],
                "GND": ["R6.2", "C1.2", "C2.2", "C3.2", "C4.2", "C5.2", "C6.2", "C7.2",
                        "U1.4"]}
        if buffered_ref:
            nets["REF_DIV"].append("U1.5")
            nets["REF"] += ["U1.7", "U1.6"]
        else:  # the divider is the reference; unit 2 idles
            nets["REF"] += nets.pop("REF_DIV")
            nets["IDLE"] = ["U1.5", "U1.6", "U1.7"]
        nets[ref_leg_to].append("R4.2")
        return parts, nets
    return {"reference": amp(),
            "wrong/ignores-source-resistance": amp(r_in="10k"),
            "wrong/unbuffered-reference": amp(buffered_ref=False),
            "wrong/reference-leg-to-ground": amp(ref_leg_to="GND"),
            "wrong/only-at-nominal": amp(r_fb="104.2k")}


@task("s05-battery-supply")
def _():
    def supply(guard="pmos", clamp_on="VSYS", r_reset="15k"):
        parts = [("R1", "Device:R", "10k"), ("D1", "Device:D_Zener", "5V1"),
                 ("C1", "Device:C", "10u"), ("U1", "Regulator:LDO_3P3", "LDO_3P3"),
                 ("C2", "Device:C", "1u"), ("C3", "Device:C", "10u"),
                 ("R2", "Device:R", "130k"), ("R3", "Device:R", "300k"),
                 ("C4", "Device:C", "100n"), ("R4", "Device:R", "1.3k"),
                 ("D2", "Device:LED", "green"), ("R5", "Device:R", r_reset),
                 ("C5", "Device:C", "1u"), ("C6", "Device:C", "100n")]
        nets = {"VBAT": [], "VSYS": ["C1.1", "U1.1", "C2.1", "R2.1"],
                "V3V3": ["U1.3", "C3.1", "R4.1", "R5.1", "C6.1"],
                "ADC_BAT": ["R2.2", "R3.1", "C4.1"], "LED_A": ["R4.2", "D2.2"],
                "RESET": ["R5.2", "C5.1"],
                "GND": ["R1.2", "C1.2", "U1.2", "C2.2", "C3.2", "R3.2", "C4.2", "D2.1",
                        "C5.2", "C6.2"]}
        nets[clamp_on].append("D1.1")
        nets["GND"].append("D1.2")
        if guard == "schottky":
            parts.insert(0, ("D3", "Device:D_Schottky", "SCHOTTKY"))
            nets["VBAT"].append("D3.2")
            nets["VSYS"].append("D3.1")
            parts = [p for p in parts if p[0] != "R1"]
            nets["GND"].remove("R1.2")
        else:
            parts.insert(0, ("Q1", "Device:Q_PMOS_GSD", "PMOS"))
            battery_pin, system_pin = ("Q1.3", "Q1.2") if guard == "pmos" else ("Q1.2", "Q1.3")
            nets["VBAT"].append(battery_pin)
            nets["VSYS"].append(system_pin)
            nets["GATE"] = ["Q1.1", "R1.1"]
        return parts, nets
    return {"reference": supply(),
            "wrong/schottky-drop": supply(guard="schottky"),
            "wrong/clamp-before-the-guard": supply(clamp_on="VBAT"),
            "wrong/pmos-backwards": supply(guard="pmos-backwards"),
            "wrong/only-at-nominal": supply(r_reset="24k")}


@task("s06-constant-current-leds")
def _():
    def channel(i, gpio, leds, colour, r_sense, limiter=True, r_series="330"):
        """One LED string fed from VPROT, its current set by a two-transistor limiter
        (or, in a wrong answer, by a plain resistor), enabled from a GPIO."""
        q1, q2, rs, rb = f"Q{2 * i - 1}", f"Q{2 * i}", f"R{2 * i - 1}", f"R{2 * i}"
        parts, nets = [], {"VPROT": [], gpio: [], "GND": []}
        pins = []
        for k in range(leds):
            d = f"D{10 * i + k}"
            parts.append((d, "Device:LED", colour))
            pins.append((d, f"{d}.2", f"{d}.1"))
        first_anode = pins[0][1]
        nets["VPROT"].append(first_anode)
        for (_, _, cathode), (_, anode, _) in zip(pins, pins[1:], strict=False):
            nets[f"S{i}_{cathode.replace('.', '_')}"] = [cathode, anode]
        last_cathode = pins[-1][2]
        if limiter:
            parts += [(q1, "Device:Q_NPN_BCE", "NPN"), (q2, "Device:Q_NPN_BCE", "NPN"),
                      (rs, "Device:R", r_sense), (rb, "Device:R", "2.2k")]
            nets[f"K{i}"] = [last_cathode, f"{q1}.2"]
            nets[f"E{i}"] = [f"{q1}.3", f"{rs}.1", f"{q2}.1"]
            nets[f"B{i}"] = [f"{rb}.2", f"{q1}.1", f"{q2}.2"]
            nets[gpio].append(f"{rb}.1")
            nets["GND"] += [f"{rs}.2", f"{q2}.3"]
        else:
            parts += [(q1, "Device:Q_NPN_BCE", "NPN"), (rs, "Device:R", r_series),
                      (rb, "Device:R", "4.7k")]
            nets[f"K{i}"] = [last_cathode, f"{rs}.1"]
            nets[f"C{i}"] = [f"{rs}.2", f"{q1}.2"]
            nets[f"B{i}"] = [f"{rb}.2", f"{q1}.1"]
            nets[gpio].append(f"{rb}.1")
            nets["GND"].append(f"{q1}.3")
        return parts, nets

    def board(r_sense=("33", "33"), limiter=True):
        parts = [("D1", "Device:D", "SIGNAL"), ("C1", "Device:C", "1u"),
                 ("C2", "Device:C", "100n")]
        nets = {"VIN": ["D1.2"], "VPROT": ["D1.1", "C1.1", "C2.1"],
                "GND": ["C1.2", "C2.2"]}
        for i, (gpio, leds, colour, r) in enumerate(
                (("GPIO_A", 2, "white", r_sense[0]), ("GPIO_B", 3, "red", r_sense[1])),
                start=1):
            p, n = channel(i, gpio, leds, colour, r, limiter=limiter,
                           r_series=("270", "270")[i - 1])
            parts += p
            for name, pins in n.items():
                nets.setdefault(name, []).extend(pins)
        return parts, nets
    return {"reference": board(),
            "wrong/resistor-only": board(limiter=False),
            "wrong/sense-ignores-vbe": board(r_sense=("150", "150")),
            "wrong/only-at-nominal": board(r_sense=("35.7", "35.7"))}


def main() -> None:
    for name, answers in TASKS.items():
        for key, (parts, nets) in answers.items():
            filename = "reference_ops.json" if key == "reference" else f"{key}.json"
            write(name, filename, oplist(parts, nets))
            print(f"wrote tasks/{name}/{filename}")


if __name__ == "__main__":
    main()
