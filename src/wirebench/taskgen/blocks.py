"""Circuit blocks the netlist families compose: a microcontroller's core, its LEDs, an
I2C sensor, a UART header, connector breakouts, op-amp buffers, inverters, an LDO.

Each block adds parts to a Netlist, on nets it names, in the way a board would be drawn:
decoupling at every supply pin, pull-ups where the bus needs them, unused inverter
inputs tied low, and unused pins left unconnected (marked so by the layout).
"""

from __future__ import annotations

from wirebench.taskgen.layout import Part

MCU = "Sensor:MCU_32"
GPIO = [f"PA{i}" for i in range(8)] + [f"PB{i}" for i in range(8)] + ["PC0", "PC1"]
R_SERIES = ["22", "33", "47", "100"]
R_PULL = ["2k2", "4k7", "10k"]
R_LED = ["330", "470", "680", "1k", "1k5"]
R_DIV = ["1k", "2k2", "3k3", "4k7", "6k8", "10k", "15k", "22k", "33k", "47k", "68k", "100k"]
C_DEC = ["100n", "1u"]


class Netlist:
    """Parts with designators handed out in order, per prefix."""

    def __init__(self):
        self.parts: list[Part] = []
        self._next: dict[str, int] = {}
        self.gpio: list[str] = []  # the MCU's pins not used yet
        self.names: set[str] = set()

    def add(self, prefix: str, lib_id: str, value: str | None, pins: dict) -> Part:
        n = self._next.get(prefix, 0) + 1
        self._next[prefix] = n
        part = Part(f"{prefix}{n}", lib_id, value, dict(pins))
        self.parts.append(part)
        return part

    def net(self, stem: str) -> str:
        """A net name not used yet: LED_CTRL, LED_CTRL2, ..."""
        name, k = stem, 1
        while name in self.names:
            k += 1
            name = f"{stem}{k}"
        self.names.add(name)
        return name

    def take_gpio(self, stem: str) -> tuple[str, str] | None:
        """An MCU pin and the new net it drives, or None when none is left."""
        if not self.gpio:
            return None
        pin = self.gpio.pop(0)
        net = self.net(stem)
        self.parts[0].pins[pin] = net
        return pin, net

    @property
    def size(self) -> int:
        return len(self.parts)


def R(nl, value, a, b):
    return nl.add("R", "Device:R", value, {"1": a, "2": b})


def C(nl, value, a, b):
    return nl.add("C", "Device:C", value, {"1": a, "2": b})


def mcu_core(nl: Netlist, rng) -> None:
    """The MCU first (it is U1), with what every board gives it."""
    nl.names |= {"+3V3", "GND", "NRST", "BOOT0", "XIN", "XOUT", "SWDIO", "SWCLK"}
    nl.add("U", MCU, rng.choice(["MCU32", "CTRL"]), {
        "VDD": "+3V3", "VDDA": "+3V3", "GND": "GND", "VSSA": "GND", "NRST": "NRST",
        "BOOT0": "BOOT0", "XIN": "XIN", "XOUT": "XOUT", "SWDIO": "SWDIO", "SWCLK": "SWCLK"})
    nl.gpio = rng.shuffle(list(GPIO))
    C(nl, "100n", "+3V3", "GND")
    C(nl, "1u", "+3V3", "GND")
    R(nl, "10k", "+3V3", "NRST")
    C(nl, "100n", "NRST", "GND")
    R(nl, "10k", "BOOT0", "GND")
    nl.add("Y", "Device:Crystal", rng.choice(["8MHz", "12MHz", "16MHz"]),
           {"1": "XIN", "2": "XOUT"})
    load = rng.choice(["12p", "18p", "22p"])
    C(nl, load, "XIN", "GND")
    C(nl, load, "XOUT", "GND")
    nl.add("J", "Connector:Conn_01x04", "SWD", {"1": "+3V3", "2": "SWDIO", "3": "SWCLK",
                                                 "4": "GND"})


def led(nl: Netlist, rng) -> bool:
    got = nl.take_gpio(rng.choice(["LED", "STATUS", "FAULT", "ACT"]))
    if not got:
        return False
    anode = nl.net(f"{got[1]}_A")
    R(nl, rng.choice(R_LED), got[1], anode)
    nl.add("D", "Device:LED", rng.choice(["green", "red", "amber"]), {"2": anode, "1": "GND"})
    return True


def i2c_sensor(nl: Netlist, rng) -> bool:
    if "SDA" not in nl.parts[0].pins:
        nl.parts[0].pins.update({"SDA": "I2C_SDA", "SCL": "I2C_SCL"})
        nl.names |= {"I2C_SDA", "I2C_SCL"}
        pull = rng.choice(R_PULL)
        R(nl, pull, "+3V3", "I2C_SDA")
        R(nl, pull, "+3V3", "I2C_SCL")
    nl.add("U", "Sensor:TempSensor_I2C", rng.choice(["TMP102", "SHT30"]),
           {"VDD": "+3V3", "GND": "GND", "SDA": "I2C_SDA", "SCL": "I2C_SCL"})
    C(nl, "100n", "+3V3", "GND")
    return True


def uart_header(nl: Netlist, rng) -> bool:
    if "TX" in nl.parts[0].pins:
        return False
    nl.names |= {"UART_TX", "UART_RX", "TX_OUT", "RX_IN"}
    nl.parts[0].pins.update({"TX": "UART_TX", "RX": "UART_RX"})
    series = rng.choice(R_SERIES)
    R(nl, series, "UART_TX", "TX_OUT")
    R(nl, series, "UART_RX", "RX_IN")
    nl.add("J", "Connector:Conn_01x03", "UART", {"1": "TX_OUT", "2": "RX_IN", "3": "GND"})
    return True


def breakout(nl: Netlist, rng) -> bool:
    """A connector that brings MCU pins out through series resistors; the pins it does
    not need stay unconnected."""
    size = rng.choice([8, 10, 12, 16, 20, 24])
    signals = min(len(nl.gpio), rng.randint(3, max(3, size // 2)))
    if signals < 2:
        return False
    pins = {"1": "+3V3", "2": "GND"}
    series = rng.choice(R_SERIES)
    for k in range(signals):
        _, net = nl.take_gpio(rng.choice(["IO", "EXT", "GPIO"]))
        out = nl.net(f"{net}_J")
        R(nl, series, net, out)
        pins[str(3 + k)] = out
    nl.add("J", f"Connector:Conn_01x{size:02d}", f"EXP{size}", pins)
    return True


def header(nl: Netlist, rng) -> bool:
    """A two-row header of buffered analog channels: a quad op-amp whose four followers
    each buffer a divider of a sense input."""
    nl.names |= {"+5V"}
    unit_pins = [("3", "2", "1"), ("5", "6", "7"), ("10", "9", "8"), ("12", "13", "14")]
    pins = {"V+": "+5V", "V-": "GND"}
    amp = nl.add("U", "Amplifier:OpAmp_Quad", "LM324", {})
    outs = []
    for plus, minus, out in unit_pins:
        sense, div, buf = nl.net("SENSE"), nl.net("DIV"), nl.net("BUF")
        top = rng.choice(R_DIV)
        R(nl, top, sense, div)
        R(nl, rng.choice(R_DIV), div, "GND")
        pins.update({plus: div, minus: buf, out: buf})
        outs.append((sense, buf))
    amp.pins = {"4": "+5V", "11": "GND", **{k: v for k, v in pins.items()
                                             if k not in ("V+", "V-")}}
    C(nl, "100n", "+5V", "GND")
    rows = rng.choice([5, 10])
    hdr = {"1": "+5V", "2": "GND"}
    for k, (sense, buf) in enumerate(outs):
        hdr[str(3 + 2 * k)] = sense
        hdr[str(4 + 2 * k)] = buf
    nl.add("J", f"Connector:Conn_02x{rows:02d}_Odd_Even", "ANALOG", hdr)
    return True


def inverters(nl: Netlist, rng) -> bool:
    """A hex inverter driving LEDs from MCU pins; its unused inputs are tied low (a
    floating CMOS input oscillates) and their outputs left open."""
    used = min(len(nl.gpio), rng.randint(2, 6))
    if used < 2:
        return False
    gates = [("1", "2"), ("3", "4"), ("5", "6"), ("9", "8"), ("11", "10"), ("13", "12")]
    pins = {"14": "+3V3", "7": "GND"}
    for k, (a, y) in enumerate(gates):
        if k < used:
            _, net = nl.take_gpio("DRV")
            lit = nl.net(f"{net}_N")
            pins[a], pins[y] = net, lit
            anode = nl.net(f"{lit}_A")
            R(nl, rng.choice(R_LED), "+3V3", anode)
            nl.add("D", "Device:LED", "red", {"2": anode, "1": lit})
        else:
            pins[a] = "GND"
    nl.add("U", "Logic:Inverter_Hex", "74HC14", pins)
    C(nl, "100n", "+3V3", "GND")
    return True


def ldo(nl: Netlist, rng) -> bool:
    if "+5V_IN" in nl.names:
        return False
    nl.names |= {"+5V_IN"}
    nl.add("J", "Connector:Conn_01x02", "PWR", {"1": "+5V_IN", "2": "GND"})
    nl.add("F", "Device:Fuse", rng.choice(["500mA", "1A"]), {"1": "+5V_IN", "2": "+5V"})
    nl.names.add("+5V")
    C(nl, rng.choice(["1u", "10u"]), "+5V", "GND")
    nl.add("U", "Regulator:LDO_3P3", "LDO33", {"VIN": "+5V", "GND": "GND", "VOUT": "+3V3"})
    C(nl, rng.choice(["1u", "10u"]), "+3V3", "GND")
    return True


PERIPHERALS = [led, i2c_sensor, uart_header, breakout, header, inverters, led]


def board(rng, target_parts: int) -> Netlist:
    """An MCU board of about `target_parts` parts: the core, then peripherals drawn at
    random until it is big enough (analog headers once the MCU's pins run out)."""
    nl = Netlist()
    mcu_core(nl, rng)
    ldo(nl, rng)
    while nl.size < target_parts:
        block = rng.choice(PERIPHERALS) if nl.gpio else header
        block(nl, rng)
    return nl
