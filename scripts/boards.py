"""The board tier's netlists: what scripts/board_tasks.py turns into op-lists.

Each board is a reference design written for wirebench from the parts' datasheet rules
(tasks/datasheets/), and a few wrong answers, each the reference with one change that a
design rule of the task must catch. Pins are named by number, or by name when every pin
of that name joins the net (a USB-C receptacle's four GND pins).
"""

from __future__ import annotations

from dataclasses import dataclass, field

STM32 = "MCU_ST_STM32F0:STM32F030F4Px"
RP2040 = "MCU_RaspberryPi:RP2040"
LDO = "Regulator_Linear:AP2112K-3.3"
SWD10 = "Connector:Conn_ARM_JTAG_SWD_10"
USBC = "Connector:USB_C_Receptacle_USB2.0"
ESD = "Power_Protection:USBLC6-2SC6"


@dataclass
class Part:
    ref: str
    lib_id: str
    value: str | None = None
    pins: dict[str, str] = field(default_factory=dict)   # pin name or number -> net
    rotation: int = 0
    stub: bool = False  # labels at the end of a short wire, not on the pins


def R(ref, value, a, b):
    return Part(ref, "Device:R", value, {"1": a, "2": b})


def C(ref, value, a, b="GND"):
    return Part(ref, "Device:C", value, {"1": a, "2": b})


def LED(ref, anode, cathode):
    # On wire stubs: akcli's writer orients a label on Device:LED's cathode pin over the
    # LED's body, however it is rotated (layout_clean then fails).
    return Part(ref, "Device:LED", None, {"A": anode, "K": cathode}, stub=True)


def header(ref, nets):
    return Part(ref, f"Connector_Generic:Conn_01x{len(nets):02d}", None,
                {str(i): n for i, n in enumerate(nets, start=1)})


def ldo_block(ref="U2", cin="C10", cout="C11", vin="+5V", vout="+3V3"):
    """AP2112K-3.3: EN tied to VIN (always on), 1 µF in and out (its datasheet's minimum)."""
    return [Part(ref, LDO, "AP2112K-3.3", {"VIN": vin, "EN": vin, "GND": "GND", "VOUT": vout}),
            C(cin, "1u", vin), C(cout, "1u", vout)]


def stm32_core(io: dict[str, str]):
    """STM32F030F4P6 with what its datasheet asks for: 100 nF on VDD and on VDDA, 4.7 µF
    bulk, BOOT0 strapped low through 10 kΩ, 100 nF on NRST, an 8 MHz crystal (CL 10 pF)
    with 12 pF load capacitors, and the SWD header."""
    pins = {"VDD": "+3V3", "VDDA": "+3V3", "VSS": "GND", "BOOT0": "BOOT0", "NRST": "NRST",
            "PF0": "OSC_IN", "PF1": "OSC_OUT", "PA13": "SWDIO", "PA14": "SWCLK", **io}
    return [
        Part("U1", STM32, "STM32F030F4P6", pins),
        C("C1", "100n", "+3V3"), C("C2", "100n", "+3V3"), C("C3", "4.7u", "+3V3"),
        R("R1", "10k", "BOOT0", "GND"),
        C("C4", "100n", "NRST"),
        Part("SW1", "Switch:SW_Push", None, {"1": "NRST", "2": "GND"}),
        Part("Y1", "Device:Crystal", "8MHz", {"1": "OSC_IN", "2": "OSC_OUT"}),
        C("C5", "12p", "OSC_IN"), C("C6", "12p", "OSC_OUT"),
        Part("J2", SWD10, None, {"VTref": "+3V3", "SWDIO/TMS": "SWDIO", "SWDCLK/TCK": "SWCLK",
                                 "~{RESET}": "NRST", "GND": "GND", "GNDDetect": "GND"}),
    ]


B01 = {
    "id": "b01-stm32f030-minimum",
    "title": "STM32F030 minimum system",
    "libraries": ["Device", "Switch", "Connector", "Connector_Generic", "Regulator_Linear",
                  "MCU_ST_STM32F0"],
    "parts": [
        *stm32_core({"PA9": "UART_TX", "PA10": "UART_RX", "PA4": "LED_STATUS"}),
        header("J1", ["+5V", "GND"]),
        C("C9", "10u", "+5V"),
        *ldo_block(),
        header("J3", ["+3V3", "UART_TX", "UART_RX", "GND"]),
        R("R2", "1k", "LED_STATUS", "LED_A"), LED("D1", "LED_A", "GND"),
        R("R3", "1k", "+3V3", "PWR_A"), LED("D2", "PWR_A", "GND"),
    ],
    "wrong": {
        "no-vdda-capacitor": {"drop": "C2"},
        "boot0-floating": {"drop": "R1"},
        "crystal-22p": {"ref": "C5", "value": "22p"},
        "ldo-enable-floating": {"ref": "U2", "pins": {"EN": None}},
    },
}

BOARDS = [B01]
