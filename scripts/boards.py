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


def usb_c_sink(vbus="VBUS"):
    """A USB 2.0 Type-C receptacle as a sink: 5.1 kΩ from each CC pin to ground, both
    D+ pins and both D- pins joined, the shield to ground through 1 MΩ || 4.7 nF."""
    return [
        Part("J1", USBC, None, {"VBUS": vbus, "GND": "GND", "CC1": "CC1", "CC2": "CC2",
                                "A6": "USB_DP", "B6": "USB_DP", "A7": "USB_DM",
                                "B7": "USB_DM", "SHIELD": "SHIELD"}),
        R("R1", "5.1k", "CC1", "GND"), R("R2", "5.1k", "CC2", "GND"),
        R("R3", "1M", "SHIELD", "GND"), C("C1", "4.7n", "SHIELD"),
    ]


RP2040_CORE = [
    Part("U1", RP2040, "RP2040", {
        "IOVDD": "+3V3", "DVDD": "+1V1", "VREG_VOUT": "+1V1", "VREG_IN": "+3V3",
        "ADC_AVDD": "+3V3", "USB_VDD": "+3V3", "GND": "GND", "TESTEN": "GND",
        "XIN": "XIN", "XOUT": "XOUT", "RUN": "RUN", "SWCLK": "SWCLK", "SWD": "SWDIO",
        "QSPI_SS": "QSPI_SS", "QSPI_SCLK": "QSPI_SCLK", "QSPI_SD0": "QSPI_SD0",
        "QSPI_SD1": "QSPI_SD1", "QSPI_SD2": "QSPI_SD2", "QSPI_SD3": "QSPI_SD3",
        "GPIO0": "UART_TX", "GPIO1": "UART_RX", "GPIO25": "LED_STATUS"}),
    *(C(f"C{i}", "100n", "+3V3") for i in range(1, 7)),          # one per IOVDD pin
    C("C7", "100n", "+1V1"), C("C8", "100n", "+1V1"),               # one per DVDD pin
    C("C9", "1u", "+3V3"), C("C10", "1u", "+1V1"),                  # VREG in and out
    C("C11", "100n", "+3V3"), C("C12", "100n", "+3V3"),             # ADC_AVDD, USB_VDD
    Part("Y1", "Device:Crystal", "12MHz", {"1": "XIN", "2": "XTAL_OUT"}),
    R("R1", "1k", "XOUT", "XTAL_OUT"),
    C("C13", "15p", "XIN"), C("C14", "15p", "XTAL_OUT"),
    Part("U2", "Memory_Flash:W25Q32JVSS", "W25Q32JV", {
        "~{CS}": "QSPI_SS", "CLK": "QSPI_SCLK", "DI(IO0)": "QSPI_SD0", "DO(IO1)": "QSPI_SD1",
        "IO2": "QSPI_SD2", "IO3": "QSPI_SD3", "VCC": "+3V3", "GND": "GND"}),
    C("C15", "100n", "+3V3"),
    R("R2", "10k", "RUN", "+3V3"),
    Part("SW1", "Switch:SW_Push", None, {"1": "RUN", "2": "GND"}),
    R("R3", "1k", "QSPI_SS", "BOOTSEL"),
    Part("SW2", "Switch:SW_Push", None, {"1": "BOOTSEL", "2": "GND"}),
    header("J2", ["SWCLK", "GND", "SWDIO"]),
]

B02 = {
    "id": "b02-rp2040-minimum",
    "title": "RP2040 minimum system",
    "libraries": ["Device", "Switch", "Connector_Generic", "Regulator_Linear",
                  "MCU_RaspberryPi", "Memory_Flash"],
    "parts": [
        *RP2040_CORE,
        header("J1", ["+5V", "GND"]), C("C16", "10u", "+5V"),
        *ldo_block("U3", "C17", "C18"),
        header("J3", ["+3V3", "UART_TX", "UART_RX", "GND"]),
        R("R4", "1k", "LED_STATUS", "LED_A"), LED("D1", "LED_A", "GND"),
    ],
    "wrong": {
        "two-supply-capacitors-short": {"drop": ["C5", "C6"]},
        "no-xout-resistor": {"drop": "R1", "add": [
            {"ref": "R1", "lib_id": "Device:R", "value": "0", "pins": {"1": "XOUT", "2": "XTAL_OUT"}}]},
        "testen-floating": {"ref": "U1", "pins": {"TESTEN": None}},
        "dvdd-unpowered": {"ref": "U1", "pins": {"VREG_VOUT": "VREG_OUT"}},
    },
}

B03 = {
    "id": "b03-usb-c-sink",
    "title": "USB-C 5 V sink with 3.3 V LDO",
    "libraries": ["Device", "Connector", "Connector_Generic", "Regulator_Linear",
                  "Power_Protection"],
    "parts": [
        *usb_c_sink("VBUS_IN"),
        Part("F1", "Device:Polyfuse", "500mA", {"1": "VBUS_IN", "2": "VBUS"}),
        Part("D1", "Device:D_TVS", "SMAJ5.0A", {"A1": "VBUS", "A2": "GND"}),
        Part("U1", ESD, "USBLC6-2SC6", {"I/O1": "USB_DP", "I/O2": "USB_DM", "VBUS": "VBUS",
                                        "GND": "GND"}),
        C("C2", "100n", "VBUS"), C("C3", "10u", "VBUS"),
        *ldo_block("U2", "C4", "C5", vin="VBUS"),
        C("C6", "100n", "+3V3"), C("C7", "10u", "+3V3"),
        header("J2", ["VBUS", "+3V3", "USB_DP", "USB_DM", "GND"]),
        R("R4", "2.2k", "VBUS", "VBUS_LED"), LED("D2", "VBUS_LED", "GND"),
        R("R5", "1k", "+3V3", "PWR_LED"), LED("D3", "PWR_LED", "GND"),
    ],
    "wrong": {
        "one-cc-resistor": {"drop": "R2", "add": [], "ref": "J1", "pins": {"CC2": "CC1"}},
        "cc-10k": {"ref": "R1", "value": "10k"},
        "no-esd": {"drop": "U1"},
        "b-side-data-open": {"ref": "J1", "pins": {"B6": None, "B7": None}},
    },
}

BOARDS = [B01, B02, B03]
