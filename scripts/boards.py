"""The board tier's netlists: what scripts/board_tasks.py turns into op-lists.

Each board is a reference design written for wirebench from the parts' datasheet rules
(tasks/datasheets/), and a few wrong answers, each the reference with one change that a
design rule of the task must catch. Pins are named by number, or by name when every pin
of that name joins the net (a USB-C receptacle's four GND pins).
"""

from __future__ import annotations

from wirebench.taskgen.layout import Part

STM32 = "MCU_ST_STM32F0:STM32F030F4Px"
RP2040 = "MCU_RaspberryPi:RP2040"
LDO = "Regulator_Linear:AP2112K-3.3"
SWD10 = "Connector:Conn_ARM_JTAG_SWD_10"
USBC = "Connector:USB_C_Receptacle_USB2.0"
ESD = "Power_Protection:USBLC6-2SC6"


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


def mutate_parts(parts, drop=None, values=None, pins=None, nets=None):
    """A board's parts less one, with some values changed (a base sheet with faults, or
    a spec variant whose requirement moves a value), some pins moved ({ref: {pin: net}})
    and some nets renamed ({old: new}: a 6 V motor rail where the board has 5 V)."""
    values, pins, nets = values or {}, pins or {}, nets or {}
    return [Part(p.ref, p.lib_id, values.get(p.ref, p.value),
                 {k: nets.get(v, v) for k, v in {**p.pins, **pins.get(p.ref, {})}.items()},
                 p.rotation, p.stub, p.flags) for p in parts if p.ref != drop]


def both(a: str, b: str, **change) -> dict:
    """The same change to two parts (both load capacitors, both sense resistors)."""
    return {"ref": a, **change, "also": {"ref": b, **change}}


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
            {"ref": "R1", "lib_id": "Device:R", "value": "0",
             "pins": {"1": "XOUT", "2": "XTAL_OUT"}}]},
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
        C("C2", "100n", "VBUS"), C("C3", "4.7u", "VBUS"),
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

BME = "Sensor:BME280"
EEPROM = "Memory_EEPROM:24LC32"
EXPANDER = "Interface_Expansion:TCA9534"

B04 = {
    "id": "b04-i2c-sensor-board",
    "title": "I2C sensor board",
    "libraries": ["Device", "Connector_Generic", "Sensor", "Memory_EEPROM",
                  "Interface_Expansion"],
    "parts": [
        header("J1", ["+3V3", "SDA", "SCL", "INT", "GND"]),
        R("R1", "4.7k", "SDA", "+3V3"), R("R2", "4.7k", "SCL", "+3V3"),
        C("C1", "10u", "+3V3"),
        Part("U1", BME, "BME280", {"VDD": "+3V3", "VDDIO": "+3V3", "GND": "GND",
                                   "CSB": "+3V3", "SDI": "SDA", "SCK": "SCL", "SDO": "GND"}),
        C("C2", "100n", "+3V3"), C("C3", "100n", "+3V3"),
        Part("U2", EEPROM, "24LC32", {"A0": "GND", "A1": "GND", "A2": "GND", "GND": "GND",
                                      "SDA": "SDA", "SCL": "SCL", "WP": "GND", "VCC": "+3V3"}),
        C("C4", "100n", "+3V3"),
        Part("U3", EXPANDER, "TCA9534", {"A0": "+3V3", "A1": "GND", "A2": "GND", "GND": "GND",
                                         "SDA": "SDA", "SCL": "SCL", "~{INT}": "INT",
                                         "VDD": "+3V3", "P0": "LED0", "P1": "LED1",
                                         "P2": "LED2", "P3": "LED3"}),
        C("C5", "100n", "+3V3"),
        R("R3", "10k", "INT", "+3V3"),
        *(x for i in range(4) for x in (
            R(f"R{4 + i}", "1k", "+3V3", f"LED{i}_A"), LED(f"D{1 + i}", f"LED{i}_A", f"LED{i}"))),
    ],
    "wrong": {
        "no-scl-pull-up": {"drop": "R2"},
        "weak-pull-ups": {"ref": "R1", "value": "100k"},
        "bme280-csb-floating": {"ref": "U1", "pins": {"CSB": None}},
        "expander-at-0x20": {"ref": "U3", "pins": {"A0": "GND"}},
    },
}

TRANSCEIVER = "Interface_UART:MAX3485"

B05 = {
    "id": "b05-rs485-node",
    "title": "RS-485 node",
    "libraries": ["Device", "Connector_Generic", "Regulator_Linear", "Interface_UART"],
    "parts": [
        header("J1", ["+5V", "GND", "RXD", "TXD", "DE"]),
        C("C1", "10u", "+5V"),
        *ldo_block("U2", "C2", "C3"),
        Part("U1", TRANSCEIVER, "MAX3485", {"VCC": "+3V3", "GND": "GND", "RO": "RXD",
                                            "~{RE}": "DE", "DE": "DE", "DI": "TXD",
                                            "A": "BUS_A", "B": "BUS_B"}),
        C("C4", "100n", "+3V3"),
        R("R1", "10k", "RXD", "+3V3"), R("R2", "10k", "DE", "GND"),
        R("R3", "120", "BUS_A", "BUS_B"),
        R("R4", "680", "BUS_A", "+3V3"), R("R5", "680", "BUS_B", "GND"),
        Part("D1", "Device:D_TVS", "SM712", {"A1": "BUS_A", "A2": "GND"}),
        Part("D2", "Device:D_TVS", "SM712", {"A1": "BUS_B", "A2": "GND"}),
        header("J2", ["BUS_A", "BUS_B", "GND"]),
        R("R6", "1k", "+3V3", "PWR_LED"), LED("D3", "PWR_LED", "GND"),
        R("R7", "1k", "DE", "TX_LED"), LED("D4", "TX_LED", "GND"),
        C("C5", "100n", "+5V"),
    ],
    "wrong": {
        "no-termination": {"drop": "R3"},
        "bias-swapped": {"ref": "R4", "pins": {"2": "GND"}, "add": [],
                         "also": {"ref": "R5", "pins": {"2": "+3V3"}}},
        "receiver-enable-floating": {"ref": "U1", "pins": {"~{RE}": None}},
        "termination-1k": {"ref": "R3", "value": "1k"},
    },
}

DRIVER = "Driver_Motor:DRV8833PWP"

B06 = {
    "id": "b06-motor-driver",
    "title": "Dual H-bridge motor driver",
    "libraries": ["Device", "power", "Connector_Generic", "Regulator_Linear", "Driver_Motor"],
    "parts": [
        header("J1", ["+5V_MOTOR", "GND"]),
        Part("C1", "Device:C_Polarized", "47u", {"1": "+5V_MOTOR", "2": "GND"}),
        C("C2", "100n", "+5V_MOTOR"),
        Part("U1", DRIVER, "DRV8833PWP", {
            "VM": "+5V_MOTOR", "GND": "GND", "GND(PPAD)": "GND", "VINT": "VINT",
            "VCP": "VCP",
            "nSLEEP": "nSLEEP", "nFAULT": "nFAULT", "AIN1": "AIN1", "AIN2": "AIN2",
            "BIN1": "BIN1", "BIN2": "BIN2", "AOUT1": "MA1", "AOUT2": "MA2", "BOUT1": "MB1",
            "BOUT2": "MB2", "AISEN": "AISEN", "BISEN": "BISEN"}),
        C("C3", "2.2u", "VINT"), C("C4", "10n", "VCP", "+5V_MOTOR"),
        R("R1", "0R2", "AISEN", "GND"), R("R2", "0R2", "BISEN", "GND"),
        R("R3", "10k", "nFAULT", "+3V3"), R("R4", "10k", "nSLEEP", "+3V3"),
        header("J2", ["MA1", "MA2"]), header("J3", ["MB1", "MB2"]),
        header("J4", ["+5V", "AIN1", "AIN2", "BIN1", "BIN2", "nSLEEP", "nFAULT", "GND"]),
        *ldo_block("U2", "C5", "C6"),
        R("R5", "1k", "+3V3", "PWR_LED"), LED("D1", "PWR_LED", "GND"),
        R("R6", "4.7k", "+5V_MOTOR", "MOTOR_LED"), LED("D2", "MOTOR_LED", "GND"),
    ],
    "wrong": {
        "vcp-capacitor-to-ground": {"ref": "C4", "pins": {"2": "GND"}},
        "no-bulk-capacitor": {"drop": "C1"},
        "no-vint-capacitor": {"drop": "C3"},
        "sense-1-ohm": {"ref": "R1", "value": "1"},
    },
}

CHARGER = "Battery_Management:MCP73831-2-OT"

B07 = {
    "id": "b07-li-ion-charger",
    "title": "USB-C Li-ion charger",
    "libraries": ["Device", "Connector", "Connector_Generic", "Regulator_Linear",
                  "Battery_Management"],
    "parts": [
        *usb_c_sink("VBUS"),
        C("C2", "4.7u", "VBUS"),
        Part("U1", CHARGER, "MCP73831-2", {"VDD": "VBUS", "VSS": "GND", "VBAT": "VBAT",
                                            "PROG": "PROG", "STAT": "STAT"}),
        R("R4", "4.02k", "PROG", "GND"),
        C("C3", "4.7u", "VBAT"),
        R("R5", "1k", "VBUS", "CHG_A"), LED("D1", "CHG_A", "STAT"),
        header("J2", ["VBAT", "GND"]),
        *ldo_block("U2", "C4", "C5", vin="VBAT"),
        header("J3", ["+3V3", "VBAT", "STAT", "GND"]),
        R("R6", "1k", "+3V3", "PWR_LED"), LED("D2", "PWR_LED", "GND"),
        C("C6", "100n", "+3V3"), C("C7", "100n", "VBUS"),
    ],
    "wrong": {
        "prog-500ma": {"ref": "R4", "value": "2k"},
        "no-battery-capacitor": {"drop": "C3"},
        "status-led-reversed": {"ref": "D1", "pins": {"A": "STAT", "K": "CHG_A"}},
        "one-cc-resistor": {"drop": "R2", "ref": "J1", "pins": {"CC2": "CC1"}},
    },
}

BUCK = "Regulator_Switching:AP63203WU"

B08 = {
    "id": "b08-buck-3v3",
    "title": "12 V to 3.3 V buck regulator",
    "libraries": ["Device", "Connector_Generic", "Regulator_Switching"],
    "parts": [
        header("J1", ["VIN", "GND"]),
        Part("D1", "Device:D_Schottky", "SS34", {"A": "VIN", "K": "+12V"}),
        Part("D2", "Device:D_TVS", "SMAJ15A", {"A1": "+12V", "A2": "GND"}),
        C("C1", "10u", "+12V"), C("C2", "10u", "+12V"), C("C3", "100n", "+12V"),
        Part("U1", BUCK, "AP63203WU", {"IN": "+12V", "EN": "EN", "GND": "GND",
                                       "SW": "SW", "BST": "BST", "FB": "+3V3"}),
        R("R3", "100k", "+12V", "EN"), R("R4", "15k", "EN", "GND"),
        C("C4", "100n", "BST", "SW"),
        Part("L1", "Device:L", "4.7u", {"1": "SW", "2": "+3V3"}),
        C("C5", "22u", "+3V3"), C("C6", "22u", "+3V3"), C("C7", "100n", "+3V3"),
        header("J2", ["+3V3", "GND"]),
        R("R1", "4.7k", "+12V", "IN_LED"), LED("D3", "IN_LED", "GND"),
        R("R2", "1k", "+3V3", "OUT_LED"), LED("D4", "OUT_LED", "GND"),
        header("J3", ["+12V", "+3V3", "GND"]),
    ],
    "wrong": {
        "inductor-22u": {"ref": "L1", "value": "22u"},
        "no-bootstrap-capacitor": {"drop": "C4"},
        "bootstrap-to-ground": {"ref": "C4", "pins": {"2": "GND"}},
        "one-output-capacitor": {"drop": "C6"},
    },
}

CAN = "Interface_CAN_LIN:TJA1051T-3"

B11 = {
    "id": "b11-can-node",
    "title": "CAN node",
    "libraries": ["Device", "Connector_Generic", "Regulator_Linear", "Interface_CAN_LIN"],
    "parts": [
        header("J1", ["+5V", "GND", "TXD", "RXD", "SILENT"]),
        C("C1", "10u", "+5V"), C("C7", "100n", "+5V"),
        Part("U1", CAN, "TJA1051T/3", {"VCC": "+5V", "GND": "GND", "VIO": "+3V3", "TXD": "TXD",
                                       "RXD": "RXD", "S": "SILENT", "CANH": "CANH",
                                       "CANL": "CANL"}),
        C("C2", "100n", "+5V"), C("C3", "100n", "+3V3"),
        R("R1", "10k", "SILENT", "GND"),
        R("R2", "60.4", "CANH", "CAN_SPLIT"), R("R3", "60.4", "CANL", "CAN_SPLIT"),
        C("C4", "4.7n", "CAN_SPLIT"),
        Part("D1", "Device:D_TVS", "PESD2CAN", {"A1": "CANH", "A2": "GND"}),
        Part("D2", "Device:D_TVS", "PESD2CAN", {"A1": "CANL", "A2": "GND"}),
        header("J2", ["CANH", "CANL", "GND"]),
        *ldo_block("U2", "C5", "C6"),
        R("R4", "1k", "+3V3", "PWR_LED"), LED("D3", "PWR_LED", "GND"),
        R("R5", "1k", "+3V3", "RX_LED"), LED("D4", "RX_LED", "RXD"),
    ],
    "wrong": {
        "single-120-ohm": {"drop": ["R2", "R3", "C4"], "add": [
            {"ref": "R2", "lib_id": "Device:R", "value": "120",
             "pins": {"1": "CANH", "2": "CANL"}}]},
        "vio-open": {"ref": "U1", "pins": {"VIO": None}},
        "transceiver-on-3v3": {"ref": "U1", "pins": {"VCC": "+3V3"}},
        "split-capacitor-100n": {"ref": "C4", "value": "100n"},
    },
}

BRIDGE = "Interface_USB:CH340C"

B12 = {
    "id": "b12-usb-uart-bridge",
    "title": "USB to UART bridge",
    "libraries": ["Device", "Connector", "Connector_Generic", "Power_Protection",
                  "Interface_USB"],
    "parts": [
        *usb_c_sink("VBUS"),
        Part("F1", "Device:Polyfuse", "500mA", {"1": "VBUS", "2": "+5V"}),
        Part("D1", "Device:D_TVS", "SMAJ5.0A", {"A1": "+5V", "A2": "GND"}),
        C("C2", "4.7u", "+5V"), C("C3", "100n", "+5V"),
        Part("U1", ESD, "USBLC6-2SC6", {"I/O1": "USB_DP", "I/O2": "USB_DM", "VBUS": "+5V",
                                        "GND": "GND"}),
        Part("U2", BRIDGE, "CH340C", {"VCC": "+5V", "GND": "GND", "V3": "V3", "UD+": "USB_DP",
                                      "UD-": "USB_DM", "TXD": "TXD", "RXD": "RXD",
                                      "~{DTR}": "DTR", "~{RTS}": "RTS"}),
        C("C4", "100n", "V3"), C("C5", "100n", "+5V"),
        header("J2", ["+5V", "GND", "TXD", "RXD", "DTR", "RTS"]),
        R("R4", "1k", "+5V", "PWR_LED"), LED("D2", "PWR_LED", "GND"),
        R("R5", "1k", "+5V", "TX_LED"), LED("D3", "TX_LED", "TXD"),
        R("R6", "1k", "+5V", "RX_LED"), LED("D4", "RX_LED", "RXD"),
    ],
    "wrong": {
        "no-v3-capacitor": {"drop": "C4"},
        "data-swapped": {"ref": "U2", "pins": {"UD+": "USB_DM", "UD-": "USB_DP"}},
        "no-esd": {"drop": "U1"},
        "one-cc-resistor": {"drop": "R2", "ref": "J1", "pins": {"CC2": "CC1"}},
    },
}

# Edits of an existing board: `parts` is the base sheet; `edit` and each wrong answer are
# op-lists that change it (new parts, and raw ops such as set_component_parameters).

RS485_ON_USART = [
    Part("U3", TRANSCEIVER, "MAX3485", {"VCC": "+3V3", "GND": "GND", "RO": "UART_RX",
                                        "~{RE}": "RS485_DE", "DE": "RS485_DE",
                                        "DI": "UART_TX", "A": "BUS_A", "B": "BUS_B"}),
    C("C12", "100n", "+3V3"),
    R("R4", "10k", "UART_RX", "+3V3"), R("R5", "10k", "RS485_DE", "GND"),
    R("R6", "120", "BUS_A", "BUS_B"),
    R("R7", "680", "BUS_A", "+3V3"), R("R8", "680", "BUS_B", "GND"),
    header("J4", ["BUS_A", "BUS_B", "GND"]),
]


# The base breaks PA1 (USART1_DE) out to a spare header, so the edit can use it by name.
B09_BASE = [Part("U1", STM32, "STM32F030F4P6", {**B01["parts"][0].pins, "PA1": "PA1"}),
            *B01["parts"][1:], header("J5", ["PA1", "GND"])]
RS485_DE = [Part(p.ref, p.lib_id, p.value, {**p.pins, "~{RE}": "PA1", "DE": "PA1"}
                 if p.ref == "U3" else {k: ("PA1" if v == "RS485_DE" else v)
                                        for k, v in p.pins.items()})
            for p in RS485_ON_USART]

B09 = {
    "id": "b09-edit-add-rs485",
    "title": "STM32F030 minimum system",
    "libraries": [*B01["libraries"], "Interface_UART"],
    "parts": B09_BASE,
    "edit": {"parts": RS485_DE},
    "wrong": {
        "no-termination": {"parts": [p for p in RS485_DE if p.ref != "R6"]},
        "direction-not-driven": {"parts": RS485_ON_USART},
        "no-failsafe-bias": {"parts": [p for p in RS485_DE if p.ref not in ("R7", "R8")]},
        "transmit-on-rx": {"parts": [
            Part(p.ref, p.lib_id, p.value, {**p.pins, "RO": "UART_TX", "DI": "UART_RX"})
            if p.ref == "U3" else p for p in RS485_DE]},
        # the link added, and the status LED's resistor "improved" on the way
        "over-fixed": {"ops": [{"op": "set_component_parameters", "designator": "R2",
                                "value": "470"}], "parts": RS485_DE},
    },
}

B10 = {
    "id": "b10-edit-fix-boot-and-clock",
    "title": "STM32F030 minimum system",
    "libraries": B01["libraries"],
    "parts": mutate_parts(B01["parts"], drop="R1", values={"C5": "22p", "C6": "22p"}),
    "edit": {"ops": [{"op": "set_component_parameters", "designator": "C5", "value": "12p"},
                     {"op": "set_component_parameters", "designator": "C6", "value": "12p"}],
             "parts": [R("R1", "10k", "BOOT0", "GND")]},
    "wrong": {
        "capacitors-only": {"ops": [
            {"op": "set_component_parameters", "designator": "C5", "value": "12p"},
            {"op": "set_component_parameters", "designator": "C6", "value": "12p"}]},
        "boot0-pulled-up": {"ops": [
            {"op": "set_component_parameters", "designator": "C5", "value": "12p"},
            {"op": "set_component_parameters", "designator": "C6", "value": "12p"}],
            "parts": [R("R1", "10k", "BOOT0", "+3V3")]},
        "load-capacitors-equal-cl": {"ops": [
            {"op": "set_component_parameters", "designator": "C5", "value": "10p"},
            {"op": "set_component_parameters", "designator": "C6", "value": "10p"}],
            "parts": [R("R1", "10k", "BOOT0", "GND")]},
        # both faults fixed, and the power LED's resistor "improved" too
        "over-fixed": {"ops": [
            {"op": "set_component_parameters", "designator": "C5", "value": "12p"},
            {"op": "set_component_parameters", "designator": "C6", "value": "12p"},
            {"op": "set_component_parameters", "designator": "R3", "value": "470"}],
            "parts": [R("R1", "10k", "BOOT0", "GND")]},
    },
}

# A whole node: an MCU, an RS-485 link and a motor driver on one board. What it adds to
# the single-chip boards is the pin multiplexer: the USART's own driver-enable, four PWM
# inputs on timer channels that can be set apart, and the sense resistors on ADC inputs.
MOTOR_NODE_MCU = {
    "VDD": "+3V3", "VDDA": "+3V3", "VSS": "GND", "BOOT0": "BOOT0", "NRST": "NRST",
    "PA13": "SWDIO", "PA14": "SWCLK", "PA9": "UART_TX", "PA10": "UART_RX",
    "PA1": "RS485_DE", "PA4": "AIN1", "PA6": "AIN2", "PA7": "BIN1", "PB1": "BIN2",
    "PA0": "AISEN", "PA5": "BISEN", "PF0": "nFAULT", "PF1": "nSLEEP"}

B13 = {
    "id": "b13-rs485-motor-node",
    "title": "RS-485 motor node",
    "libraries": ["Device", "power", "Switch", "Connector", "Connector_Generic",
                  "Regulator_Linear", "MCU_ST_STM32F0", "Interface_UART", "Driver_Motor"],
    "parts": [
        header("J1", ["+6V_MOTOR", "GND"]),
        header("J2", ["+5V", "BUS_A", "BUS_B", "GND"]),
        *ldo_block("U2", "C10", "C11"),
        Part("U1", STM32, "STM32F030F4P6", MOTOR_NODE_MCU),
        C("C1", "100n", "+3V3"), C("C2", "100n", "+3V3"), C("C3", "4.7u", "+3V3"),
        R("R1", "10k", "BOOT0", "GND"), C("C4", "100n", "NRST"),
        Part("SW1", "Switch:SW_Push", None, {"1": "NRST", "2": "GND"}),
        Part("J3", SWD10, None, {"VTref": "+3V3", "SWDIO/TMS": "SWDIO", "SWDCLK/TCK": "SWCLK",
                                 "~{RESET}": "NRST", "GND": "GND", "GNDDetect": "GND"}),
        Part("U3", TRANSCEIVER, "MAX3485", {"VCC": "+3V3", "GND": "GND", "RO": "UART_RX",
                                            "~{RE}": "RS485_DE", "DE": "RS485_DE",
                                            "DI": "UART_TX", "A": "BUS_A", "B": "BUS_B"}),
        C("C5", "100n", "+3V3"),
        R("R2", "10k", "UART_RX", "+3V3"), R("R3", "10k", "RS485_DE", "GND"),
        R("R4", "120", "BUS_A", "BUS_B"),
        Part("D1", "Device:D_TVS", "SM712", {"A1": "BUS_A", "A2": "GND"}),
        Part("D2", "Device:D_TVS", "SM712", {"A1": "BUS_B", "A2": "GND"}),
        Part("C6", "Device:C_Polarized", "47u", {"1": "+6V_MOTOR", "2": "GND"}),
        C("C7", "100n", "+6V_MOTOR"),
        Part("U4", DRIVER, "DRV8833PWP", {
            "VM": "+6V_MOTOR", "GND": "GND", "GND(PPAD)": "GND", "VINT": "VINT", "VCP": "VCP",
            "nSLEEP": "nSLEEP", "nFAULT": "nFAULT", "AIN1": "AIN1", "AIN2": "AIN2",
            "BIN1": "BIN1", "BIN2": "BIN2", "AOUT1": "MA1", "AOUT2": "MA2", "BOUT1": "MB1",
            "BOUT2": "MB2", "AISEN": "AISEN", "BISEN": "BISEN"}),
        C("C8", "2.2u", "VINT"), C("C9", "10n", "VCP", "+6V_MOTOR"),
        R("R5", "0R33", "AISEN", "GND"), R("R6", "0R33", "BISEN", "GND"),
        R("R7", "10k", "nFAULT", "+3V3"),
        header("J4", ["MA1", "MA2"]), header("J5", ["MB1", "MB2"]),
        R("R8", "1k", "+3V3", "PWR_LED"), LED("D3", "PWR_LED", "GND"),
    ],
    "wrong": {
        # the direction on a plain GPIO: PA1 left open, DE on PA2
        "direction-on-gpio": {"ref": "U1", "pins": {"PA1": None, "PA2": "RS485_DE"}},
        # BIN2 on PA3, which has no timer
        "pwm-without-timer": {"ref": "U1", "pins": {"PB1": None, "PA3": "BIN2"}},
        # AISEN on PF0 (no ADC), nFAULT on PA0
        "sense-on-digital-pin": {"ref": "U1", "pins": {"PA0": "nFAULT", "PF0": "AISEN"}},
        "sense-for-1a": both("R5", "R6", value="0R2"),
        "receiver-on-tx": {"ref": "U3", "pins": {"RO": "UART_TX", "DI": "UART_RX"}},
    },
}

# The node with a sensor on I2C1 as well. I2C1 exists only on PA9/PA10, so the USART
# moves to its alternates PA2/PA3, and every one of the package's 15 I/O pins is then
# forced: the four timer pins drive the bridges, the two ADC pins left read the sense
# resistors, and PF0/PF1 take nFAULT and nSLEEP.
SENSOR_NODE_MCU = {**MOTOR_NODE_MCU, "PA9": "I2C_SCL", "PA10": "I2C_SDA",
                   "PA2": "UART_TX", "PA3": "UART_RX"}

B14 = {
    "id": "b14-rs485-motor-sensor-node",
    "title": "RS-485 motor and sensor node",
    "libraries": [*B13["libraries"], "Sensor"],
    "parts": [
        *[Part(p.ref, p.lib_id, p.value, SENSOR_NODE_MCU) if p.ref == "U1" else p
          for p in B13["parts"]],
        Part("U5", BME, "BME280", {"VDD": "+3V3", "VDDIO": "+3V3", "GND": "GND",
                                   "CSB": "+3V3", "SDI": "I2C_SDA", "SCK": "I2C_SCL",
                                   "SDO": "+3V3"}),
        C("C12", "100n", "+3V3"), C("C13", "100n", "+3V3"),
        R("R9", "2.2k", "I2C_SDA", "+3V3"), R("R10", "2.2k", "I2C_SCL", "+3V3"),
    ],
    "wrong": {
        # the USART kept on its main pins, the sensor on PA2/PA3
        "i2c-on-usart-alternates": {"ref": "U1", "pins": {
            "PA9": "UART_TX", "PA10": "UART_RX", "PA2": "I2C_SCL", "PA3": "I2C_SDA"}},
        "direction-on-gpio": {"ref": "U1", "pins": {"PA1": "nSLEEP", "PF1": "RS485_DE"}},
        "pull-ups-10k": both("R9", "R10", value="10k"),
        "bme280-at-0x76": {"ref": "U5", "pins": {"SDO": "GND"}},
        "sense-for-1a": both("R5", "R6", value="0R2"),
    },
}

# A USB climate logger: the PC talks to the MCU through a CH340C, and the BME280 takes
# I2C1, which exists only on PA9/PA10, so the USART moves to PA2/PA3. Those are TTa pins
# (4.0 V at most): a bridge run from the USB's 5 V would drive PA3 to 5 V, so it runs
# from 3.3 V, V3 tied to VCC. The HSI drifts −2.75% to +3% over temperature, past the
# 1.7% a UART link to the bridge allows, so the MCU runs from a crystal.
LOGGER_MCU = {"VDD": "+3V3", "VDDA": "+3V3", "VSS": "GND", "BOOT0": "BOOT0", "NRST": "NRST",
              "PF0": "OSC_IN", "PF1": "OSC_OUT", "PA13": "SWDIO", "PA14": "SWCLK",
              "PA2": "UART_TX", "PA3": "UART_RX", "PA9": "I2C_SCL", "PA10": "I2C_SDA"}

B15 = {
    "id": "b15-usb-climate-logger",
    "title": "USB climate logger",
    "libraries": ["Device", "Switch", "Connector", "Power_Protection", "Regulator_Linear",
                  "MCU_ST_STM32F0", "Interface_USB", "Sensor"],
    "parts": [
        *usb_c_sink("VBUS"),
        Part("F1", "Device:Polyfuse", "500mA", {"1": "VBUS", "2": "+5V"}),
        C("C2", "4.7u", "+5V"), C("C3", "100n", "+5V"),
        Part("U1", ESD, "USBLC6-2SC6", {"I/O1": "USB_DP", "I/O2": "USB_DM", "VBUS": "+5V",
                                        "GND": "GND"}),
        *ldo_block("U2", "C4", "C5"),
        Part("U3", BRIDGE, "CH340C", {"VCC": "+3V3", "V3": "+3V3", "GND": "GND",
                                      "UD+": "USB_DP", "UD-": "USB_DM", "TXD": "UART_RX",
                                      "RXD": "UART_TX"}),
        C("C6", "100n", "+3V3"),
        Part("U4", STM32, "STM32F030F4P6", LOGGER_MCU),
        C("C7", "100n", "+3V3"), C("C8", "100n", "+3V3"), C("C9", "4.7u", "+3V3"),
        R("R4", "10k", "BOOT0", "GND"), C("C10", "100n", "NRST"),
        Part("SW1", "Switch:SW_Push", None, {"1": "NRST", "2": "GND"}),
        Part("Y1", "Device:Crystal", "8MHz", {"1": "OSC_IN", "2": "OSC_OUT"}),
        C("C11", "18p", "OSC_IN"), C("C12", "18p", "OSC_OUT"),
        Part("J2", SWD10, None, {"VTref": "+3V3", "SWDIO/TMS": "SWDIO", "SWDCLK/TCK": "SWCLK",
                                 "~{RESET}": "NRST", "GND": "GND", "GNDDetect": "GND"}),
        Part("U5", BME, "BME280", {"VDD": "+3V3", "VDDIO": "+3V3", "GND": "GND",
                                   "CSB": "+3V3", "SDI": "I2C_SDA", "SCK": "I2C_SCL",
                                   "SDO": "GND"}),
        C("C13", "100n", "+3V3"), C("C14", "100n", "+3V3"),
        R("R5", "2.2k", "I2C_SDA", "+3V3"), R("R6", "2.2k", "I2C_SCL", "+3V3"),
        R("R7", "1k", "+3V3", "PWR_LED"), LED("D1", "PWR_LED", "GND"),
    ],
    "wrong": {
        # the bridge on the USB's 5 V as a stand-alone adapter has it: 5 V into PA3
        "bridge-at-5v": {"ref": "U3", "pins": {"VCC": "+5V", "V3": "V3"},
                         "add": [{"ref": "C15", "lib_id": "Device:C", "value": "100n",
                                  "pins": {"1": "V3", "2": "GND"}}]},
        # no crystal: the MCU on its HSI, PF0/PF1 left open
        "no-crystal": {"drop": ["Y1", "C11", "C12"], "ref": "U4",
                       "pins": {"PF0": None, "PF1": None}},
        # the USART kept on PA9/PA10 and the sensor on PA2/PA3, which have no I2C
        "i2c-on-usart-pins": {"ref": "U4", "pins": {
            "PA9": "UART_TX", "PA10": "UART_RX", "PA2": "I2C_SCL", "PA3": "I2C_SDA"}},
        "bme280-at-0x77": {"ref": "U5", "pins": {"SDO": "+3V3"}},
        "one-cc-resistor": {"drop": "R2", "ref": "J1", "pins": {"CC2": "CC1"}},
    },
}

# A whole product on one board, at the scale of the designs HWE-Bench draws from: a
# robot's controller of 94 parts and eleven ICs, charged and programmed over USB-C. What
# it adds to the nodes above is the number of decisions that must all be right at once,
# and the RP2040's pin table: four ADC inputs for four sense resistors (GPIO26 to 29, no
# other pin has one), eight PWM inputs each on a channel of its own (GPIO n and n + 16 share
# one), a UART's and an I2C block's pins taken as pairs of one block.
ROBOT_MCU = {
    **{k: v for k, v in RP2040_CORE[0].pins.items() if not k.startswith("GPIO")},
    "USB_DP": "USB_DP", "USB_DM": "USB_DM",
    "GPIO4": "TETHER_TX", "GPIO5": "TETHER_RX", "GPIO6": "TETHER_DE",
    "GPIO8": "I2C_SDA", "GPIO9": "I2C_SCL", "GPIO10": "EXP_INT",
    "GPIO12": "M1_IN1", "GPIO13": "M1_IN2", "GPIO14": "M2_IN1", "GPIO15": "M2_IN2",
    "GPIO16": "M3_IN1", "GPIO17": "M3_IN2", "GPIO18": "M4_IN1", "GPIO19": "M4_IN2",
    "GPIO20": "DRV1_nSLEEP", "GPIO21": "DRV2_nSLEEP", "GPIO22": "DRV1_nFAULT",
    "GPIO23": "DRV2_nFAULT",
    "GPIO26_ADC0": "M1_SENSE", "GPIO27_ADC1": "M2_SENSE", "GPIO28_ADC2": "M3_SENSE",
    "GPIO29_ADC3": "M4_SENSE"}


def motor_driver(ref: str, n: int, caps: list[str], sense: list[str], pull: str) -> list[Part]:
    """A DRV8833 on the cell driving motors n and n + 1, as b06 has one: bulk and 100 nF
    on VM, 2.2 µF on VINT, 10 nF from VCP to VM, a sense resistor per bridge, nFAULT
    pulled up; nSLEEP driven by the MCU (its own pull-down holds the bridges off in
    reset)."""
    d = n // 2 + 1
    return [
        Part(ref, DRIVER, "DRV8833PWP", {
            "VM": "VBAT", "GND": "GND", "GND(PPAD)": "GND", "VINT": f"DRV{d}_VINT",
            "VCP": f"DRV{d}_VCP", "nSLEEP": f"DRV{d}_nSLEEP", "nFAULT": f"DRV{d}_nFAULT",
            "AIN1": f"M{n}_IN1", "AIN2": f"M{n}_IN2", "BIN1": f"M{n + 1}_IN1",
            "BIN2": f"M{n + 1}_IN2", "AOUT1": f"M{n}_A", "AOUT2": f"M{n}_B",
            "BOUT1": f"M{n + 1}_A", "BOUT2": f"M{n + 1}_B", "AISEN": f"M{n}_SENSE",
            "BISEN": f"M{n + 1}_SENSE"}),
        Part(caps[0], "Device:C_Polarized", "47u", {"1": "VBAT", "2": "GND"}),
        C(caps[1], "100n", "VBAT"), C(caps[2], "2.2u", f"DRV{d}_VINT"),
        C(caps[3], "10n", f"DRV{d}_VCP", "VBAT"),
        R(sense[0], "0R39", f"M{n}_SENSE", "GND"), R(sense[1], "0R39", f"M{n + 1}_SENSE", "GND"),
        R(pull, "10k", f"DRV{d}_nFAULT", "+3V3"),
    ]


B16 = {
    "id": "b16-usb-robot-controller",
    "title": "USB robot controller",
    "libraries": ["Device", "Switch", "Connector", "Connector_Generic", "Power_Protection",
                  "Regulator_Linear", "Battery_Management", "MCU_RaspberryPi", "Memory_Flash",
                  "Driver_Motor", "Sensor", "Memory_EEPROM", "Interface_Expansion",
                  "Interface_UART"],
    "parts": [
        Part("U1", RP2040, "RP2040", ROBOT_MCU),
        # p02's crystal: CL 8 pF with 2 pF of stray, 2 × (8 − 2) = 12 pF
        *mutate_parts(RP2040_CORE[1:], values={"C13": "12p", "C14": "12p"}),
        # USB-C: a sink's Rd on each CC pin, the shield drained, D+ and D- through the ESD
        # array and 27 Ω each to the RP2040, VBUS fused onto +5V
        Part("J1", USBC, None, {"VBUS": "VBUS", "GND": "GND", "CC1": "CC1", "CC2": "CC2",
                                "A6": "USB_CONN_DP", "B6": "USB_CONN_DP",
                                "A7": "USB_CONN_DM", "B7": "USB_CONN_DM",
                                "SHIELD": "SHIELD"}),
        R("R4", "5.1k", "CC1", "GND"), R("R5", "5.1k", "CC2", "GND"),
        R("R6", "1M", "SHIELD", "GND"), C("C16", "4.7n", "SHIELD"),
        Part("F1", "Device:Polyfuse", "500mA", {"1": "VBUS", "2": "+5V"}),
        Part("U3", ESD, "USBLC6-2SC6", {"I/O1": "USB_CONN_DP", "I/O2": "USB_CONN_DM",
                                        "VBUS": "+5V", "GND": "GND"}),
        R("R7", "27", "USB_CONN_DP", "USB_DP"), R("R8", "27", "USB_CONN_DM", "USB_DM"),
        # the cell's charger: 800 mAh at 0.5 C is 400 mA, R_PROG = 1000 V / 400 mA = 2.49k
        Part("U4", CHARGER, "MCP73831-2", {"VDD": "+5V", "VSS": "GND", "VBAT": "VBAT",
                                            "PROG": "PROG", "STAT": "STAT"}),
        C("C17", "4.7u", "+5V"), C("C18", "100n", "+5V"),
        R("R9", "2.49k", "PROG", "GND"), C("C19", "4.7u", "VBAT"),
        R("R10", "1k", "+5V", "CHG_A"), LED("D1", "CHG_A", "STAT"),
        header("J3", ["VBAT", "GND"]),
        *ldo_block("U5", "C20", "C21", vin="VBAT"),
        R("R11", "1k", "+3V3", "PWR_LED"), LED("D2", "PWR_LED", "GND"),
        # four motors from the cell, each bridge held to 0.5 A: 0.2 V / 0.5 A = 0.4 Ω
        *motor_driver("U6", 1, ["C22", "C24", "C26", "C28"], ["R12", "R13"], "R16"),
        *motor_driver("U7", 3, ["C23", "C25", "C27", "C29"], ["R14", "R15"], "R29"),
        *(header(f"J{3 + m}", [f"M{m}_A", f"M{m}_B"]) for m in range(1, 5)),
        # the I2C cluster of b04/p04: BME280 at 0x77, EEPROM at 0x50, expander at 0x24
        Part("U8", BME, "BME280", {"VDD": "+3V3", "VDDIO": "+3V3", "GND": "GND",
                                   "CSB": "+3V3", "SDI": "I2C_SDA", "SCK": "I2C_SCL",
                                   "SDO": "+3V3"}),
        C("C30", "100n", "+3V3"), C("C31", "100n", "+3V3"),
        Part("U9", EEPROM, "24LC32", {"A0": "GND", "A1": "GND", "A2": "GND", "GND": "GND",
                                      "SDA": "I2C_SDA", "SCL": "I2C_SCL", "WP": "GND",
                                      "VCC": "+3V3"}),
        C("C32", "100n", "+3V3"),
        Part("U10", EXPANDER, "TCA9534", {"A0": "GND", "A1": "GND", "A2": "+3V3", "GND": "GND",
                                          "SDA": "I2C_SDA", "SCL": "I2C_SCL",
                                          "~{INT}": "EXP_INT", "VDD": "+3V3", "P0": "LED0",
                                          "P1": "LED1", "P2": "LED2", "P3": "LED3"}),
        C("C33", "100n", "+3V3"),
        R("R17", "2.2k", "I2C_SDA", "+3V3"), R("R18", "2.2k", "I2C_SCL", "+3V3"),
        R("R19", "10k", "EXP_INT", "+3V3"),
        *(x for i in range(4) for x in (
            R(f"R{20 + i}", "1k", "+3V3", f"LED{i}_A"), LED(f"D{3 + i}", f"LED{i}_A", f"LED{i}"))),
        # the tether: RS-485 on UART1, its direction on a GPIO, this end terminated and
        # biased (a 120 Ω pair: R_bias ≤ (3.3 V × 120 / 0.2 V − 120) / 2 = 930 Ω)
        Part("U11", TRANSCEIVER, "MAX3485", {"VCC": "+3V3", "GND": "GND", "RO": "TETHER_RX",
                                             "~{RE}": "TETHER_DE", "DE": "TETHER_DE",
                                             "DI": "TETHER_TX", "A": "BUS_A", "B": "BUS_B"}),
        C("C34", "100n", "+3V3"),
        R("R24", "10k", "TETHER_DE", "GND"), R("R25", "10k", "TETHER_RX", "+3V3"),
        R("R26", "120", "BUS_A", "BUS_B"),
        R("R27", "680", "BUS_A", "+3V3"), R("R28", "680", "BUS_B", "GND"),
        Part("D7", "Device:D_TVS", "SM712", {"A1": "BUS_A", "A2": "GND"}),
        Part("D8", "Device:D_TVS", "SM712", {"A1": "BUS_B", "A2": "GND"}),
        header("J8", ["BUS_A", "BUS_B", "GND"]),
    ],
    "wrong": {
        # driver 1 on GPIO0 to GPIO3: PWM0 A to PWM1 B, the channels of driver 2's GPIO16
        # to GPIO19 (GPIO n and n + 16 share one)
        "pwm-channel-twice": {"ref": "U1", "pins": {
            "GPIO12": None, "GPIO13": None, "GPIO14": None, "GPIO15": None,
            "GPIO0": "M1_IN1", "GPIO1": "M1_IN2", "GPIO2": "M2_IN1", "GPIO3": "M2_IN2"}},
        # motor 4's sense on GPIO24, which has no ADC
        "sense-on-digital-pin": {"ref": "U1", "pins": {"GPIO29_ADC3": None,
                                                       "GPIO24": "M4_SENSE"}},
        # the RP2040's USB pins straight on the connector's lines
        "usb-without-series-resistors": {"drop": ["R7", "R8"], "ref": "U1", "pins": {
            "USB_DP": "USB_CONN_DP", "USB_DM": "USB_CONN_DM"}},
        "charge-at-500ma": {"ref": "R9", "value": "2k"},
        # SCL on GPIO11, I2C1's, with SDA on I2C0's GPIO8
        "i2c-blocks-mixed": {"ref": "U1", "pins": {"GPIO9": None, "GPIO11": "I2C_SCL"}},
        "termination-100": {"ref": "R26", "value": "100"},
        "crystal-15p": both("C13", "C14", value="15p"),
    },
}

BOARDS = [B01, B02, B03, B04, B05, B06, B07, B08, B09, B10, B11, B12, B13, B14, B15, B16]


# The spec tier: each board again, stated as requirements (tasks/p*/task.md) with the
# ICs' full datasheets instead of the notes. Where a spec's requirement moves a value
# (0.8 A motors: R_SENSE = 0.2 V / 0.8 A = 0.25 Ω), its reference follows it; each wrong
# answer is that reference with one change, as for the boards.


def spec(board: dict, sid: str, parts=None, wrong=None, edit=None) -> dict:
    """The spec variant `sid` of `board`: its own parts and wrong answers where the
    requirements move a value, the board's otherwise."""
    out = {**board, "id": sid, "variant_of": board["id"],
           "parts": board["parts"] if parts is None else parts,
           "wrong": board["wrong"] if wrong is None else wrong}
    if edit is not None:
        out["edit"] = edit
    return out


# A crystal for CL = 12.5 pF with 3.5 pF of stray capacitance in it: 2 × (12.5 − 3.5) = 18 pF.
P01_PARTS = mutate_parts(B01["parts"], values={"C5": "18p", "C6": "18p"})
P01 = spec(B01, "p01-stm32f030-minimum", P01_PARTS, {
    "no-vdda-capacitor": {"drop": "C2"},
    "boot0-floating": {"drop": "R1"},
    "load-capacitors-equal-cl": both("C5", "C6", value="12p"),
    "ldo-enable-floating": {"ref": "U2", "pins": {"EN": None}},
})

# CL = 8 pF, 2 pF stray: 2 × (8 − 2) = 12 pF.
P02 = spec(B02, "p02-rp2040-minimum",
           mutate_parts(B02["parts"], values={"C13": "12p", "C14": "12p"}),
           {**B02["wrong"], "board-load-capacitors": both("C13", "C14", value="15p")})

# USB 2.0 allows 10 µF across VBUS at attach: a 22 µF bulk is the common slip.
P03 = spec(B03, "p03-usb-c-sink", wrong={**B03["wrong"],
                                         "vbus-22u": {"ref": "C3", "value": "22u"}})

# The BME280 at 0x77 (SDO high), the expander at 0x24 (A2 high); 400 kHz with 100 pF
# of bus: R_pull-up between (3.3 − 0.4) V / 3 mA = 0.97 kΩ and 300 ns / (0.8473 × 100 pF)
# = 3.5 kΩ.
P04 = spec(B04, "p04-i2c-sensor-board",
           mutate_parts(B04["parts"], values={"R1": "2.2k", "R2": "2.2k"},
                        pins={"U1": {"SDO": "+3V3"}, "U3": {"A0": "GND", "A2": "+3V3"}}), {
    "no-scl-pull-up": {"drop": "R2"},
    "pull-ups-10k": {"ref": "R1", "value": "10k"},
    "bme280-csb-floating": {"ref": "U1", "pins": {"CSB": None}},
    "bme280-at-0x76": {"ref": "U1", "pins": {"SDO": "GND"}},
    "expander-at-0x20": {"ref": "U3", "pins": {"A2": "GND"}},
})

# A 100 Ω cable: 100 Ω termination; 680 Ω of bias each side holds an idle bus at
# 3.3 V × 100 / (100 + 1360) = 226 mV.
P05 = spec(B05, "p05-rs485-node", mutate_parts(B05["parts"], values={"R3": "100"}), {
    "no-termination": {"drop": "R3"},
    "bias-swapped": B05["wrong"]["bias-swapped"],
    "receiver-enable-floating": {"ref": "U1", "pins": {"~{RE}": None}},
    "termination-120": {"ref": "R3", "value": "120"},
    "bias-1k": {"ref": "R4", "value": "1k"},
})

# 6 V motors at 0.8 A: R_SENSE = 0.2 V / 0.8 A = 0.25 Ω.
P06 = spec(B06, "p06-motor-driver",
           mutate_parts(B06["parts"], values={"R1": "0R25", "R2": "0R25"},
                        nets={"+5V_MOTOR": "+6V_MOTOR"}), {
    "vcp-capacitor-to-ground": {"ref": "C4", "pins": {"2": "GND"}},
    "no-bulk-capacitor": {"drop": "C1"},
    "no-vint-capacitor": {"drop": "C3"},
    "sense-for-1a": both("R1", "R2", value="0R2"),
    "nsleep-floating": {"drop": "R4"},
    "fault-pull-up-2k2": {"ref": "R3", "value": "2.2k"},
})

# A 400 mAh cell at 0.5 C: 200 mA, R_PROG = 1000 V / 200 mA = 5 kΩ (4.99k).
P07 = spec(B07, "p07-li-ion-charger", mutate_parts(B07["parts"], values={"R4": "4.99k"}), {
    "prog-250ma": {"ref": "R4", "value": "4.02k"},
    "prog-4k7": {"ref": "R4", "value": "4.7k"},  # 213 mA: 0.53 C
    "no-battery-capacitor": {"drop": "C3"},
    "status-led-reversed": B07["wrong"]["status-led-reversed"],
    "one-cc-resistor": B07["wrong"]["one-cc-resistor"],
    "shield-tied-to-ground": {"ref": "J1", "pins": {"SHIELD": "GND"}, "drop": ["R3", "C1"]},
    "no-shield-capacitor": {"drop": "C1"},
})

# 24 V in, 2 A out, 30% ripple: L = 3.3 × 20.7 / (24 × 0.6 A × 1.1 MHz) = 4.3 µH (4.7 µH);
# 100 µA in the divider with EN at its typical 1.18 V: R_BOT = 11.8 kΩ; not on below 18 V
# at EN's lowest 1.10 V and on at 24 V at its highest 1.26 V: 1 + R_TOP / R_BOT between
# 18 / 1.10 = 16.4 and 24 / 1.26 = 19.0, so R_TOP = 196k (17.6: 19.4 V to 22.2 V); a TVS
# that stands off 24 V.
P08 = spec(B08, "p08-buck-3v3",
           mutate_parts(B08["parts"], values={"R3": "196k", "R4": "11.8k", "D2": "SMAJ28A",
                                              "R1": "10k"},
                        nets={"+12V": "+24V"}), {
    "inductor-3u3": {"ref": "L1", "value": "3.3u"},
    "no-bootstrap-capacitor": {"drop": "C4"},
    "bootstrap-to-ground": {"ref": "C4", "pins": {"2": "GND"}},
    "one-output-capacitor": {"drop": "C6"},
    "uvlo-at-9v": {"ref": "R3", "value": "100k", "also": {"ref": "R4", "value": "15k"}},
    # 18 V with the typical threshold, 16.9 V with the lowest; 24.9 V with the highest.
    "uvlo-at-typical-threshold": {"ref": "R3", "value": "169k"},
    "uvlo-never-starts": {"ref": "R3", "value": "221k"},
})

# The same base board; the bus is a 100 Ω cable.
P09_EDIT = mutate_parts(RS485_DE, values={"R6": "100"})
P09 = spec(B09, "p09-edit-add-rs485", edit={"parts": P09_EDIT}, wrong={
    "no-termination": {"parts": [p for p in P09_EDIT if p.ref != "R6"]},
    "direction-not-driven": {"parts": mutate_parts(RS485_ON_USART, values={"R6": "100"})},
    "no-failsafe-bias": {"parts": [p for p in P09_EDIT if p.ref not in ("R7", "R8")]},
    "termination-120": {"parts": RS485_DE},
    "over-fixed": {"ops": [{"op": "set_component_parameters", "designator": "R2",
                            "value": "470"}], "parts": P09_EDIT},
})

# P01's board with BOOT0 floating and 27 pF load capacitors where 18 pF are right.
P10_FIX = [{"op": "set_component_parameters", "designator": c, "value": "18p"}
           for c in ("C5", "C6")]
P10 = spec(B10, "p10-edit-fix-boot-and-clock",
           mutate_parts(P01_PARTS, drop="R1", values={"C5": "27p", "C6": "27p"}),
           edit={"ops": P10_FIX, "parts": [R("R1", "10k", "BOOT0", "GND")]}, wrong={
    "capacitors-only": {"ops": P10_FIX},
    "boot0-pulled-up": {"ops": P10_FIX, "parts": [R("R1", "10k", "BOOT0", "+3V3")]},
    "load-capacitors-equal-cl": {"ops": [
        {"op": "set_component_parameters", "designator": c, "value": "12p"}
        for c in ("C5", "C6")], "parts": [R("R1", "10k", "BOOT0", "GND")]},
    "over-fixed": {"ops": [*P10_FIX, {"op": "set_component_parameters", "designator": "R3",
                                      "value": "470"}],
                   "parts": [R("R1", "10k", "BOOT0", "GND")]},
})

# The dominant-bit LED: from 3.3 V through its resistor into RXD, which is low while the
# bus is dominant.
P11 = spec(B11, "p11-can-node", wrong={
    **B11["wrong"],
    "no-dominant-led": {"drop": ["D4", "R5"]},
    # From RXD through its resistor to ground: lit while RXD is high, on recessive bits.
    "led-lit-on-recessive": {"ref": "R5", "pins": {"1": "RXD"},
                             "also": {"ref": "D4", "pins": {"K": "GND"}}},
})
P12 = spec(B12, "p12-usb-uart-bridge", wrong={**B12["wrong"],
                                               "vbus-22u": {"ref": "C2", "value": "22u"}})

P13 = spec(B13, "p13-rs485-motor-node")
P14 = spec(B14, "p14-rs485-motor-sensor-node")
P15 = spec(B15, "p15-usb-climate-logger", wrong={**B15["wrong"],
                                                  "vbus-22u": {"ref": "C2", "value": "22u"}})

P16 = spec(B16, "p16-usb-robot-controller")

SPECS = [P01, P02, P03, P04, P05, P06, P07, P08, P09, P10, P11, P12, P13, P14, P15,
         P16]


# The review tier: a spec board as a colleague drew it, from the same requirements, with
# faults of the kind that pass for ordinary choices (a bridge on the USB's 5 V, as
# stand-alone adapters run it; the 4.7 kΩ pull-ups most I2C buses carry; the MCU on its
# own RC oscillator; an inductor from the datasheet's 12 V table). The agent gets the
# requirements, the datasheets and the drawn sheet, and is told neither what is wrong nor
# how much. Each fault: (the change to the spec's reference, the rule it breaks, why).
def review(spec_board: dict, rid: str, faults: dict[str, tuple[dict, str, str]],
           overfix: tuple[str, str, str], free: tuple[str, ...] = ()) -> dict:
    """`overfix`: a part the sheet has right, as the base numbers it, the value a reviewer
    who "improves" it gives it, and why that is no fix (a wrong answer: every fault fixed
    and this part changed too). Every part no fault's fix touches must keep its value,
    but those in `free`: parts another fair fix of a fault may change instead (a second
    output capacitor made of the 100 nF beside the first, where the fix adds one)."""
    return {"id": rid, "title": spec_board["title"], "libraries": spec_board["libraries"],
            "review_of": spec_board, "faults": faults, "overfix": overfix, "free": free}


RV15 = review(P15, "rv15-review-usb-climate-logger", {
    "bridge-at-5v": (B15["wrong"]["bridge-at-5v"], "uart-levels",
                     "the CH340C on the USB's 5 V drives PA3, a TTa pin rated to 4.0 V, "
                     "to 5 V"),
    "pull-ups-4k7": (both("R5", "R6", value="4.7k"), "sda-pull-up",
                     "4.7 kΩ on 100 pF rises in 0.8473 × 4.7 kΩ × 100 pF = 398 ns, past "
                     "fast mode's 300 ns"),
    "no-crystal": (B15["wrong"]["no-crystal"], "clock",
                   "the HSI's −2.75% to +3% over temperature breaks the link's budget"),
}, ("R7", "2.2k", "the power LED's 1 kΩ was right: a review changes what is wrong and "
                  "nothing else"))

RV08 = review(P08, "rv08-review-buck-3v3", {
    "inductor-3u3": (P08["wrong"]["inductor-3u3"], "inductor",
                     "3.3 µH suits a 12 V input; from 24 V its ripple is 0.78 A, 39% of "
                     "the load"),
    "uvlo-at-typical-threshold": (P08["wrong"]["uvlo-at-typical-threshold"], "uvlo",
                                  "169 kΩ over 11.8 kΩ turns on at 18.1 V with EN at its "
                                  "typical 1.18 V, but at 16.9 V at its lowest 1.10 V"),
    "one-output-capacitor": (P08["wrong"]["one-output-capacitor"], "output-capacitors",
                             "one 22 µF fails the datasheet's minimum of two"),
}, ("D2", "SMAJ24A", "the SMAJ28A stands off at least 24 V, as the requirements ask: a "
                     "review changes what is wrong and nothing else"),
    free=("C5", "C6", "R2"))  # the output's capacitors; the divider's other resistor

REVIEWS = [RV15, RV08]
