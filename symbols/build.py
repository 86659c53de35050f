"""Write wirebench's own symbol libraries (symbols/*.kicad_sym) from the pin tables below.

The libraries are deliberately tiny: akcli parses every library it is given on every draw,
and KiCad's whole Device library costs 34 s a draw here against ~0.2 s for these.
Library and symbol names follow KiCad's conventions (Device:R, power:GND, ...) because
akcli's macros (place_divider, place_led_indicator, ...) reference those lib_ids. Where
KiCad has a symbol of the same lib_id, its pins sit where KiCad's do, so an op-list
written against KiCad's libraries (akcli's own corpus is) draws the same wires here.

Run `python symbols/build.py` after editing a table, then
`akcli library lint-symbols symbols/<lib>.kicad_sym` for each library, and
`python symbols/build.py --check-kicad [DIR]` to compare the pins with KiCad's libraries
(DIR defaults to Debian's kicad-symbols folder): exit 1 if any shared lib_id differs.
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

MM_PER_MIL = 0.0254
PIN_LEN = 100  # mil
HERE = Path(__file__).resolve().parent

# A pin: (number, name, electrical type, x_mil, y_mil, side). x/y is the connection
# point in symbol coordinates (y up, KiCad's library convention); side is the body edge
# the pin sticks out of, which fixes the pin's direction.
FLAGS = " (exclude_from_sim no) (in_bom yes) (on_board yes)"
SIDE_ANGLE = {"left": 0, "right": 180, "top": 270, "bottom": 90}


def two_pin(name, prefix, n1, n2, kind="passive", names=("~", "~"), across=False):
    """A two-terminal part with KiCad's pin geometry: pins 150 mil either side of the
    centre, 50 mil long. Pin 1 on top, pin 2 at the bottom; `across` lays it on its side
    with pin 1 on the left, as KiCad draws diodes, LEDs and crystals. Matching KiCad's
    connection points lets an op-list written against KiCad's own libraries draw
    against these unchanged (scripts/compare_symbols.py checks every shared lib_id).
    """
    if across:
        body, ends = (-100, 50, 100, -50), ((-150, 0, "left"), (150, 0, "right"))
    else:
        body, ends = (-40, 100, 40, -100), ((0, 150, "top"), (0, -150, "bottom"))
    return {
        "name": name,
        "prefix": prefix,
        "body": body,
        "pin_len": 50,
        "units": [[(n1, names[0], kind, *ends[0]), (n2, names[1], kind, *ends[1])]],
    }


DEVICE = [
    two_pin("R", "R", "1", "2"),
    two_pin("C", "C", "1", "2"),
    two_pin("C_Polarized", "C", "1", "2", names=("+", "-")),
    two_pin("L", "L", "1", "2"),
    two_pin("Ferrite_Bead", "FB", "1", "2"),
    two_pin("Fuse", "F", "1", "2"),
    two_pin("Crystal", "Y", "1", "2", across=True),
    # Diodes: pin 1 is the cathode, pin 2 the anode, as in KiCad's Device library.
    two_pin("D", "D", "1", "2", names=("K", "A"), across=True),
    two_pin("D_Schottky", "D", "1", "2", names=("K", "A"), across=True),
    two_pin("D_Zener", "D", "1", "2", names=("K", "A"), across=True),
    two_pin("LED", "D", "1", "2", names=("K", "A"), across=True),
    {
        "name": "Q_NPN_BCE",
        "prefix": "Q",
        "body": (-100, 100, 100, -100),
        "units": [[
            ("1", "B", "input", -200, 0, "left"),
            ("2", "C", "passive", 100, 200, "top"),
            ("3", "E", "passive", 100, -200, "bottom"),
        ]],
    },
    {
        "name": "Q_NMOS_GSD",
        "prefix": "Q",
        "body": (-100, 100, 100, -100),
        "units": [[
            ("1", "G", "input", -200, 0, "left"),
            ("2", "S", "passive", 100, -200, "bottom"),
            ("3", "D", "passive", 100, 200, "top"),
        ]],
    },
    {
        "name": "Q_PMOS_GSD",
        "prefix": "Q",
        "body": (-100, 100, 100, -100),
        "units": [[
            ("1", "G", "input", -200, 0, "left"),
            ("2", "S", "passive", 100, -200, "bottom"),
            ("3", "D", "passive", 100, 200, "top"),
        ]],
    },
]

CONNECTOR = [
    {
        "name": f"Conn_01x{n:02d}",
        "prefix": "J",
        "body": (-100, 100, 0, 100 - 100 * (n + 1)),
        "units": [[(str(i), f"Pin_{i}", "passive", -200, -100 * (i - 1), "left")
                   for i in range(1, n + 1)]],
    }
    for n in (2, 3, 4, 6, 8, 10, 12, 16, 20, 24)
] + [
    # A two-row header, KiCad's odd/even numbering: odd pins on the left, even on the right.
    {
        "name": f"Conn_02x{n:02d}_Odd_Even",
        "prefix": "J",
        "body": (-100, 100, 100, 100 - 100 * (n + 1)),
        "units": [[(str(i), f"Pin_{i}", "passive", -200 if i % 2 else 200,
                    -100 * ((i - 1) // 2), "left" if i % 2 else "right")
                   for i in range(1, 2 * n + 1)]],
    }
    for n in (5, 10, 20)
]

# A dual op-amp split the way KiCad splits one: unit 1 = amplifier A, unit 2 =
# amplifier B, unit 3 = the shared supply pins.
def _amp(out, minus, plus):
    return [
        (plus, "+", "input", -300, 100, "left"),
        (minus, "-", "input", -300, -100, "left"),
        (out, "~", "output", 300, 0, "right"),
    ]


AMPLIFIER = [
    # A single op-amp in the classic 8-pin single pinout (2 -, 3 +, 6 out, 7 V+, 4 V-).
    {
        "name": "OpAmp_Single",
        "prefix": "U",
        "body": (-200, 200, 200, -200),
        "units": [[
            ("3", "+", "input", -300, 100, "left"),
            ("2", "-", "input", -300, -100, "left"),
            ("6", "~", "output", 300, 0, "right"),
            ("7", "V+", "power_in", 0, 300, "top"),
            ("4", "V-", "power_in", 0, -300, "bottom"),
        ]],
    },
    {
        "name": "OpAmp_Dual",
        "prefix": "U",
        "body": (-200, 200, 200, -200),
        "units": [
            _amp("1", "2", "3"),
            _amp("7", "6", "5"),
            [("8", "V+", "power_in", 0, 300, "top"), ("4", "V-", "power_in", 0, -300, "bottom")],
        ],
    },
]

# A quad op-amp in the LM324 pinout: units 1 to 4 the amplifiers, unit 5 the supply.
QUAD = [_amp("1", "2", "3"), _amp("7", "6", "5"), _amp("8", "9", "10"), _amp("14", "13", "12"),
        [("4", "V+", "power_in", 0, 300, "top"), ("11", "V-", "power_in", 0, -300, "bottom")]]
AMPLIFIER.append({"name": "OpAmp_Quad", "prefix": "U", "body": (-200, 200, 200, -200),
                  "units": QUAD})

LOGIC = [
    # Six Schmitt-trigger inverters in the 74HC14 pinout, unit 7 the supply.
    {
        "name": "Inverter_Hex",
        "prefix": "U",
        "body": (-200, 200, 200, -200),
        "units": [*[[(a, "~", "input", -300, 0, "left"), (y, "~", "output", 300, 0, "right")]
                    for a, y in (("1", "2"), ("3", "4"), ("5", "6"), ("9", "8"),
                                 ("11", "10"), ("13", "12"))],
                  [("14", "VCC", "power_in", 0, 300, "top"),
                   ("7", "GND", "power_in", 0, -300, "bottom")]],
    },
]

REGULATOR = [
    {
        "name": "LDO_3P3",
        "prefix": "U",
        "body": (-200, 100, 200, -100),
        "units": [[
            ("1", "VIN", "power_in", -300, 0, "left"),
            ("2", "GND", "power_in", 0, -200, "bottom"),
            ("3", "VOUT", "power_out", 300, 0, "right"),
        ]],
    },
    {
        # A peak-current-mode buck controller with its switch inside (d11's): SW drives
        # the inductor, FB and COMP are its error amplifier's input and output.
        "name": "BUCK_CM",
        "prefix": "U",
        "body": (-300, 200, 300, -200),
        "units": [[
            ("1", "VIN", "power_in", -400, 100, "left"),
            ("2", "GND", "power_in", 0, -300, "bottom"),
            ("3", "SW", "power_out", 400, 100, "right"),
            ("4", "FB", "input", 400, -100, "right"),
            ("5", "COMP", "output", -400, -100, "left"),
        ]],
    },
]

SENSOR = [
    {
        "name": "TempSensor_I2C",
        "prefix": "U",
        "body": (-300, 200, 300, -200),
        "units": [[
            ("1", "VDD", "power_in", -400, 100, "left"),
            ("2", "GND", "power_in", -400, -100, "left"),
            ("3", "SDA", "bidirectional", 400, 100, "right"),
            ("4", "SCL", "input", 400, -100, "right"),
        ]],
    },
    {
        "name": "MCU_8",
        "prefix": "U",
        "body": (-300, 300, 300, -200),
        "units": [[
            ("1", "VDD", "power_in", -400, 100, "left"),
            ("2", "GND", "power_in", -400, -100, "left"),
            ("3", "PA0", "bidirectional", 400, 200, "right"),
            ("4", "PA1", "bidirectional", 400, 100, "right"),
            ("5", "PA2", "bidirectional", 400, 0, "right"),
            ("6", "PA3", "bidirectional", 400, -100, "right"),
            ("7", "XIN", "input", 0, -300, "bottom"),
            ("8", "XOUT", "output", 100, -300, "bottom"),
        ]],
    },
]

# A 32-pin microcontroller, 16 pins a side.
_MCU_LEFT = ["VDD", "GND", "VDDA", "VSSA", "NRST", "BOOT0", "XIN", "XOUT",
             "PA0", "PA1", "PA2", "PA3", "PA4", "PA5", "PA6", "PA7"]
_MCU_RIGHT = ["PB0", "PB1", "PB2", "PB3", "PB4", "PB5", "PB6", "PB7",
              "SDA", "SCL", "TX", "RX", "SWDIO", "SWCLK", "PC0", "PC1"]
SENSOR.append({
    "name": "MCU_32",
    "prefix": "U",
    "body": (-400, 100, 400, -1600),
    "units": [[(str(i + 1), name, "power_in" if name in ("VDD", "GND", "VDDA", "VSSA")
                else "bidirectional", -500, -100 * i, "left")
               for i, name in enumerate(_MCU_LEFT)]
              + [(str(i + 17), name, "bidirectional", 500, -100 * i, "right")
                 for i, name in enumerate(_MCU_RIGHT)]],
})

POWER = ["GND", "VCC", "+3V3", "+5V", "+12V", "VBUS", "VIN", "PWR_FLAG"]


def mm(mil: float) -> str:
    value = round(mil * MM_PER_MIL, 4)
    return f"{value:g}"


def font(hide: bool = False) -> str:
    return "(effects (font (size 1.27 1.27))" + (" (hide yes)" if hide else "") + ")"


def prop(key: str, value: str, y_mil: float, hide: bool = False) -> str:
    return f'\t\t(property "{key}" "{value}" (at 0 {mm(y_mil)} 0) {font(hide)})'


def pin(number, name, kind, x, y, side, hide=False, length=PIN_LEN) -> str:
    hidden = " (hide yes)" if hide else ""
    length = 0 if hide else length
    return (
        f"\t\t\t(pin {kind} line (at {mm(x)} {mm(y)} {SIDE_ANGLE[side]})"
        f" (length {mm(length)}){hidden}"
        f' (name "{name}" {font()}) (number "{number}" {font()}))'
    )


def symbol(spec: dict) -> str:
    name = spec["name"]
    x1, y1, x2, y2 = spec["body"]
    lines = [
        f'\t(symbol "{name}" (pin_names (offset 0.508))' + FLAGS,
        prop("Reference", spec["prefix"], y1 + 100),
        prop("Value", name, y2 - 100),
        prop("Footprint", "", 0, hide=True),
        prop("Datasheet", "", 0, hide=True),
        f'\t\t(symbol "{name}_0_1" (rectangle (start {mm(x1)} {mm(y1)}) (end {mm(x2)} {mm(y2)})'
        " (stroke (width 0.254) (type default)) (fill (type background))))",
    ]
    for unit_no, pins in enumerate(spec["units"], start=1):
        lines.append(f'\t\t(symbol "{name}_{unit_no}_1"')
        lines.extend(pin(*p, length=spec.get("pin_len", PIN_LEN)) for p in pins)
        lines.append("\t\t)")
    lines.append("\t)")
    return "\n".join(lines)


def power_symbol(name: str) -> str:
    # A power symbol is one hidden power_in pin whose net takes the symbol's value.
    # PWR_FLAG is the exception KiCad makes: a power_out that marks a rail as driven.
    kind = "power_out" if name == "PWR_FLAG" else "power_in"
    prefix = "#FLG" if name == "PWR_FLAG" else "#PWR"
    return "\n".join([
        f'\t(symbol "{name}" (power) (pin_names (offset 0))' + FLAGS,
        prop("Reference", prefix, -250, hide=True),
        prop("Value", name, -150),
        prop("Footprint", "", 0, hide=True),
        prop("Datasheet", "", 0, hide=True),
        f'\t\t(symbol "{name}_0_1" (polyline (pts (xy 0 0) (xy 0 {mm(-50)})'
        f" (xy {mm(-50)} {mm(-50)}) (xy 0 {mm(-100)}) (xy {mm(50)} {mm(-50)}) (xy 0 {mm(-50)}))"
        " (stroke (width 0) (type default)) (fill (type none))))",
        f'\t\t(symbol "{name}_1_1"',
        pin("1", "~", kind, 0, 0, "top", hide=True),
        "\t\t)",
        "\t)",
    ])


def library(bodies: list[str]) -> str:
    head = '(kicad_symbol_lib (version 20231120) (generator "wirebench") (generator_version "8.0")'
    return "\n".join([head, *bodies, ")"]) + "\n"


def pin_places(lib_id: str, library: Path) -> dict[tuple[int, str], tuple[int, int]]:
    """{(unit, pin number): connection point in mil} as akcli reads the symbol."""
    from wirebench.taskgen.layout import pin_table

    return {(p["unit"], p["number"]): (p["x_mil"], p["y_mil"])
            for p in pin_table(lib_id, [str(library)])}


def check_kicad(kicad: Path) -> int:
    """Compare every lib_id of ours that KiCad's library of the same name also holds."""
    differ = same = own = 0
    for ours in sorted(HERE.glob("*.kicad_sym")):
        theirs = kicad / ours.name
        for name in re.findall(r'^\t\(symbol "([^"]+)"', ours.read_text(), re.M):
            lib_id = f"{ours.stem}:{name}"
            try:
                want = pin_places(lib_id, theirs) if theirs.is_file() else None
            except ValueError:  # akcli: SYMBOL_NOT_FOUND
                want = None
            if want is None:
                own += 1
                continue
            got = pin_places(lib_id, ours)
            if got == want:
                same += 1
                continue
            differ += 1
            moved = sorted(k for k in want.keys() | got.keys() if want.get(k) != got.get(k))
            print(f"{lib_id}: " + "; ".join(
                f"pin {n} (unit {u}) at {got.get((u, n))}, KiCad {want.get((u, n))}"
                for u, n in moved))
    print(f"{same} lib_id(s) match KiCad's pins, {differ} differ; {own} are wirebench's own")
    return 1 if differ else 0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check-kicad", nargs="?", const="/usr/share/kicad/symbols",
                        metavar="DIR", help="compare pins with KiCad's libraries; write nothing")
    args = parser.parse_args()
    if args.check_kicad:
        sys.exit(check_kicad(Path(args.check_kicad)))
    libs = {
        "Device": [symbol(s) for s in DEVICE],
        "Connector": [symbol(s) for s in CONNECTOR],
        "Amplifier": [symbol(s) for s in AMPLIFIER],
        "Regulator": [symbol(s) for s in REGULATOR],
        "Sensor": [symbol(s) for s in SENSOR],
        "Logic": [symbol(s) for s in LOGIC],
        "power": [power_symbol(n) for n in POWER],
    }
    for lib, bodies in libs.items():
        path = HERE / f"{lib}.kicad_sym"
        path.write_text(library(bodies))
        print(f"wrote {path.relative_to(HERE.parent)} ({len(bodies)} symbols)")


if __name__ == "__main__":
    main()
