"""A powered bench for the demos whose work a DC operating point shows: what the board
reads with its chips modelled, in each state its user puts it in.

A repair's note was a template of its fault kind that named the place ("probing `N8`
finds a connection missing"). On a bench demo a fault is told instead by what the board
does: ngspice, through akcli's engine, solves the operating point of the faulty board and
of the design in every state of the bench, and the note gives the readings that differ,
as whoever held the meter would, after the kind of fault (`LEADS`). A note is told so
only where one fix of that kind restores the board: no other resistor ten times up or
down (no other diode, LED or transistor turned round) makes the faulty board read as the
design does within the meter's tolerance (`differs`). Elsewhere the template stays.

The models are ours: the small parts' cards from part_models.yaml (LEDs, diodes, the NPN),
a PNP of the same make, and behaviours of the chips from their datasheets' headline
figures (below). Capacitors are open at DC, an inductor is its winding's 0.05 ohm, a
connector, a socket left empty and an open jumper are nothing, and every node has 1 Gohm
to ground, so that the operating point exists where a fault leaves a node floating.
"""

from __future__ import annotations

import functools
import re
import tempfile
from dataclasses import dataclass, replace
from pathlib import Path

from wirebench.taskgen.layout import Part
from wirebench.verify.design_rules import part_value

# A PNP to pair part_models.yaml's NPN: the same junction, the other polarity.
PNP = ".model WB_PNP PNP(IS=2e-14 BF=180 BR=4 NF=1 VAF=80 IKF=0.2 RB=10 RC=1 RE=0.2)"
# A reading differs when it moves by more than this (volts), and by more than REL of itself.
ABS_V, REL = 0.2, 0.05
LIT_A = 0.5e-3          # an LED counts as lit above this current
SUPPLY = "supply"       # the reading of the supply's current (amps)
SOURCE_OHMS = 300       # an RS-232 driver's output resistance, about
TRANSISTORS = ("BC237", "BC547", "BC307", "BC557")   # the demos' small NPNs and PNPs


@dataclass(frozen=True)
class State:
    words: str                      # how the note says it: "with the PC raising VPP_ON"
    high: frozenset[str]            # which of the bench's lines are driven high


@dataclass(frozen=True)
class Bench:
    setting: str                    # what is on the bench, in words
    supply: tuple[str, float]       # the pin a supply drives (against ground), volts
    lines: tuple[str, ...]          # pins a host drives, low or high, through SOURCE_OHMS
    swing: float                    # the host's high level; its low is -swing
    ground: str                     # the pin whose net is the bench's ground
    states: tuple[State, ...]
    probes: tuple[str, ...]         # the nets read with a voltmeter
    trims: tuple[tuple[str, float], ...]  # a trimmer's wiper, from its pin 1 (0 to 1)

    def alike(self, one: dict, two: dict) -> bool:
        """Would the bench tell these readings apart? Not if every voltage and the supply
        current are within the meter's tolerance and every LED looks the same."""
        return not any(differs(key, one.get(key, 0.0), two.get(key, 0.0))
                       for key in one.keys() | two.keys())  # an LED taken off reads 0 A


def differs(key: tuple, a: float, b: float) -> bool:
    """Does a reading move by more than the meter's tolerance? A voltage by 0.2 V and 5%
    of itself, the supply current by 2 mA and 10%; an LED when it goes dark or lights, or
    its current more than halves or doubles (what an eye sees)."""
    what = key[1]
    if what.startswith("lamp:"):
        lit, was = a > LIT_A, b > LIT_A
        return lit != was or (lit and not 0.5 <= a / b <= 2)
    floor, rel = (2e-3, 0.10) if what == SUPPLY else (ABS_V, REL)
    return abs(a - b) > max(floor, rel * max(abs(a), abs(b)))


# The serial-port PIC programmer (pic_programmer, and flat_hierarchy drawn again): a 7805
# makes VCC from an adapter; an LT1373 boosts VCC to VPP, 13 V as RV1 is set; the PC's
# lines through a 74HC125 switch VPP onto VPP-MCLR (Q1, Q2) and VCC onto VCC_PIC (Q3),
# and carry the data and clock to the PIC's pins.
PIC_PROGRAMMER = Bench(
    setting=("a 9 V adapter on P1, JP1 open so that VCC_PIC is switched, the PIC sockets "
             "empty, RV1 set for the design's 13 V at VPP, the PC's serial port on J1 "
             "driving each line at +10 V (high) or -10 V (low)"),
    supply=("P1.2", 9.0), lines=("J1.3", "J1.4", "J1.7"), swing=10.0, ground="J1.5",
    states=(State("at rest, every line of the PC low", frozenset()),
            # a pin only ever says where to find the net named before it
            State("with the PC raising `VPP_ON` (at J1 pin 3)", frozenset({"J1.3"})),
            State("with the PC raising `VPP_ON`, `PC-DATA-OUT` and `PC-CLOCK-OUT` (at J1 "
                  "pins 3, 4 and 7)", frozenset({"J1.3", "J1.4", "J1.7"}))),
    probes=("VCC", "VPP", "VPP-MCLR", "VCC_PIC", "VPP_ON", "PC-DATA-OUT", "PC-CLOCK-OUT",
            "DATA-RB7", "CLOCK-RB6", "PC-DATA-IN"),
    # RV1's wiper where FB reads 1.245 V with VPP at 13.0 V: 62K above, 6.2K below.
    trims=(("RV1", 0.427),),
)
BENCHES = {"pic_programmer": PIC_PROGRAMMER, "flat_hierarchy": PIC_PROGRAMMER}


def for_design(design) -> Bench | None:
    return BENCHES.get(design.demo.name)


# ---- the deck ----------------------------------------------------------------------------

def _card(key: str, value: str | None = None) -> tuple[str, str]:
    """A part's model name and card, as part_models.yaml has it for one of our symbols."""
    from wirebench.verify.part_models import library

    entry = library()[key]
    if value is not None:
        entry = entry["by_value"][value]
    return entry["model_name"], entry["model_card"]


def _symbol(part: Part) -> str:
    return part.lib_id.split(":")[-1].upper()


class _Deck:
    """One board's netlist as SPICE: nets as nodes (ground as 0), parts as elements."""

    def __init__(self, bench: Bench, parts: list[Part], nodes: dict[str, str]):
        self.bench, self.parts, self.nodes = bench, parts, nodes
        self.pin_net = {f"{p.ref}.{k}": n for p in parts for k, n in p.pins.items()}
        ground = self.pin_net.get(bench.ground, "GND")
        for net in sorted({n for p in parts for n in p.pins.values()} - nodes.keys()):
            nodes[net] = "0" if net == ground else f"n{len(nodes) + 1}"
        self.lines: list[str] = []
        self.models: dict[str, str] = {}
        self.lamps: list[str] = []

    def node(self, part: Part, pin: str) -> str:
        net = part.pins.get(pin)
        return self.nodes[net] if net is not None else f"nc_{part.ref}_{pin}"

    def net_node(self, pin_ref: str) -> str:
        net = self.pin_net.get(pin_ref)
        return self.nodes[net] if net is not None else f"nc_{pin_ref.replace('.', '_')}"

    def text(self, state: State, start: dict[str, float]) -> str:
        """The deck in one state, its Newton iteration started from `start` (the
        design's operating point in that state): from cold, ngspice needs source
        stepping, 15 times slower."""
        b = self.bench
        out = ["* wirebench bench", ".options rshunt=1e9",
               f"Vsupply {self.net_node(b.supply[0])} 0 DC {b.supply[1]}"]
        used = set(self.nodes.values())
        guess = [f"v({n})={v:.4g}" for n, v in sorted(start.items()) if n in used]
        out += [f".nodeset {' '.join(guess[i:i + 8])}" for i in range(0, len(guess), 8)]
        for pin in b.lines:
            tag = pin.replace(".", "_")
            level = b.swing if pin in state.high else -b.swing
            out += [f"Vhost_{tag} host_{tag} 0 DC {level}",
                    f"Rhost_{tag} host_{tag} {self.net_node(pin)} {SOURCE_OHMS}"]
        return "\n".join(out + self.lines + sorted(self.models.values()) + [".end", ""])


def _pins_by_name(part: Part, table: list[dict], names: tuple[str, ...]) -> list[str] | None:
    by_name = {p["name"].upper(): p["number"] for p in table}
    if not all(n in by_name for n in names):
        return None
    return [by_name[n] for n in names]


def _element(deck: _Deck, part: Part, table: list[dict]) -> None:
    """The part's SPICE lines, or none: a part the bench does not model is left out."""
    sym, ref, n = _symbol(part), part.ref, functools.partial(deck.node, part)
    ohms = part_value(part.value)
    if sym in ("R", "R_SMALL") and ohms:
        deck.lines.append(f"R{ref} {n('1')} {n('2')} {ohms:g}")
    elif sym == "POT" and ohms:
        wiper = dict(deck.bench.trims).get(ref, 0.5)
        deck.lines += [f"R{ref}a {n('1')} {n('2')} {max(wiper * ohms, 1e-3):g}",
                       f"R{ref}b {n('2')} {n('3')} {max((1 - wiper) * ohms, 1e-3):g}"]
    elif sym in ("L", "INDUCTOR"):
        deck.lines.append(f"R{ref} {n('1')} {n('2')} 0.05")
    elif sym in ("D", "D_SCHOTTKY", "LED"):
        ak = _pins_by_name(part, table, ("A", "K"))
        if ak is None:
            return
        if sym == "LED":
            colour = next((c for c in ("red", "yellow", "green", "blue", "white")
                           if c in (part.value or "").lower()), "red")
            name, card = _card("Device:LED", colour)
        else:
            name, card = _card("Device:D_Schottky" if sym == "D_SCHOTTKY" else "Device:D")
        deck.models[name] = card
        # an ammeter in series: the bench says whether an LED is lit
        deck.lines += [f"Vlamp_{ref} {n(ak[0])} a_{ref} 0", f"D{ref} a_{ref} {n(ak[1])} {name}"]
        if sym == "LED":
            deck.lamps.append(ref)
    elif sym in TRANSISTORS:
        cbe = _pins_by_name(part, table, ("C", "B", "E"))
        if cbe is None:
            return
        npn = sym in ("BC237", "BC547")
        name, card = _card("Device:Q_NPN_BCE") if npn else ("WB_PNP", PNP)
        deck.models[name] = card
        deck.lines.append(f"Q{ref} {' '.join(n(p) for p in cbe)} {name}")
    elif sym in CHIPS:
        deck.lines += CHIPS[sym](deck, part)


def _regulator_7805(deck: _Deck, part: Part) -> list[str]:
    """5.0 V out while its input is 2 V above that (its dropout); what it delivers is
    drawn from its input."""
    vi, gnd, vo, r = deck.node(part, "1"), deck.node(part, "2"), deck.node(part, "3"), part.ref
    return [f"B{r} x_{r} {gnd} V = max(0, min(5, V({vi},{gnd}) - 2))",
            f"V{r}s x_{r} y_{r} 0", f"R{r}o y_{r} {vo} 0.05", f"F{r} {vi} {gnd} V{r}s 1"]


def _buffer_74125(deck: _Deck, part: Part) -> list[str]:
    """Four CMOS buffers, each driving its output to VCC or GND through 50 ohm while its
    enable is low, and letting go of it while high; inputs draw nothing."""
    vcc, gnd = deck.node(part, "14"), deck.node(part, "7")

    def high(pin: str) -> str:  # 0 to 1 as the input crosses half the supply
        return f"0.5*(1+tanh(40*(V({deck.node(part, pin)},{gnd})-V({vcc},{gnd})/2)))"

    out = []
    for oe, a, y in (("1", "2", "3"), ("4", "5", "6"), ("10", "9", "8"), ("13", "12", "11")):
        ny = deck.node(part, y)
        out.append(f"B{part.ref}_{y} {ny} {gnd} I = (V({ny},{gnd}) - V({vcc},{gnd})*{high(a)})"
                   f" * (1 - {high(oe)}) / 50")
    return out


def _boost_lt1373(deck: _Deck, part: Part) -> list[str]:
    """A boost regulator, averaged: through the diode its switch pin feeds, it delivers
    whatever current holds FB at 1.245 V, up to 0.5 A, once VIN passes 2.4 V; its input
    draws that power back at 80% efficiency."""
    vin, fb, gnd, sw = (deck.node(part, p) for p in ("5", "2", "7", "8"))
    sw_net = part.pins.get("8")
    outs = [deck.node(d, "1") for d in deck.parts if _symbol(d) in ("D", "D_SCHOTTKY")
            and sw_net is not None and d.pins.get("2") == sw_net and d.pins.get("1")]
    if not outs:
        return []
    r, out = part.ref, outs[0]
    amps = (f"0.5*(1+tanh(10*(V({vin},{gnd})-2.4))) * "
            f"min(0.5, max(0, 20*(1.245 - V({fb},{gnd}))))")
    return [f"B{r} {gnd} {out} I = {amps}",
            f"B{r}i {vin} {gnd} I = {amps} * V({out},{gnd}) / max(V({vin},{gnd}), 0.5) / 0.8",
            f"R{r}sw {sw} {gnd} 1e6"]


CHIPS = {"7805": _regulator_7805, "74LS125": _buffer_74125, "74HC125": _buffer_74125,
         "LT1373": _boost_lt1373}


# ---- the readings ------------------------------------------------------------------------

def readings(bench: Bench, boards: list[list[Part]], libraries: list[str],
             timeout: float = 600) -> list[dict | None]:
    """Each board's readings, {(state index, probe or 'lamp:REF'): volts or amps}, all
    in one ngspice process; None for a board whose operating point does not solve. The
    first board is the design: every other starts from its operating point."""
    nodes: dict[str, str] = {}
    start = [{} for _ in bench.states]
    log = _run(bench, boards[:1], libraries, nodes, start, timeout, every_node=True)
    for line in _lines(log):  # the design's operating point, node by node
        if (m := re.match(r"\s*@@ 0 (\d+)", line)):
            state = int(m[1])
        elif (m := re.match(r"\s*(n\d+) = (\S+)", line)):
            start[state][m[1]] = float(m[2])
    return _parse(_run(bench, boards, libraries, nodes, start, timeout), bench, boards, nodes)


def _run(bench, boards, libraries, nodes, start, timeout, every_node=False) -> str:
    from wirebench.runtime import akcli_backend
    from wirebench.taskgen.layout import pin_table

    with tempfile.TemporaryDirectory(prefix="wirebench-bench-") as td:
        commands = []
        for i, parts in enumerate(boards):
            deck = _Deck(bench, parts, nodes)
            for part in parts:
                _element(deck, part, pin_table(part.lib_id, libraries))
            vectors = [f"v({nodes[p]})" for p in bench.probes if nodes.get(p, "0") != "0"]
            vectors += [f"i(vlamp_{ref.lower()})" for ref in deck.lamps] + ["i(vsupply)"]
            for s, state in enumerate(bench.states):
                path = Path(td) / f"b{i}s{s}.cir"
                path.write_text(deck.text(state, start[s]), encoding="utf-8")
                # each op leaves a plot behind: kept, they slowed every later command
                # (800 boards took 145 s instead of 4.6)
                commands += [f"echo @@ {i} {s}", f"source {path}", "op",
                             "print all" if every_node else f"print {' '.join(vectors)}",
                             "destroy all", "remcirc"]
        # the engine loads a first deck before its commands: one resistor, then ours
        return akcli_backend.spice("* start\nR0 1 0 1\n.end\n", commands,
                                   Path(td) / "run", timeout)


def _lines(log: str):
    for line in log.splitlines():  # the engine tags each line of ngspice's "stdout"
        yield re.sub(r"^\s*(stdout|stderr)\s", "", line)


def _parse(log: str, bench: Bench, boards: list[list[Part]], nodes) -> list[dict | None]:
    raw: dict[tuple[int, int], dict[str, float]] = {}
    at = None
    for line in _lines(log):
        if m := re.match(r"\s*@@ (\d+) (\d+)", line):
            at = (int(m[1]), int(m[2]))
            raw[at] = {}
        elif at and (m := re.match(r"\s*([vi]\([^)]+\))\s*=\s*(\S+)", line)):
            raw[at][m[1].lower()] = float(m[2])
    out: list[dict | None] = []
    for i, parts in enumerate(boards):
        lamps = [p.ref for p in parts if _symbol(p) == "LED"]
        board: dict | None = {}
        for s in range(len(bench.states)):
            got = raw.get((i, s), {})
            for probe in bench.probes:
                node = nodes.get(probe, "0")
                value = 0.0 if node == "0" else got.get(f"v({node})")
                if value is None:  # the operating point did not solve
                    board = None
                    break
                board[(s, probe)] = value
            if board is None:
                break
            for ref in lamps:
                board[(s, f"lamp:{ref}")] = got.get(f"i(vlamp_{ref.lower()})", 0.0)
            board[(s, SUPPLY)] = -got.get("i(vsupply)", 0.0)  # what the supply delivers
        out.append(board)
    return out


# ---- the note ----------------------------------------------------------------------------

def _lamp_words(parts: list[Part], ref: str) -> str:
    value = next((p.value for p in parts if p.ref == ref), "") or ""
    colour = next((c for c in ("red", "yellow", "green") if c in value.lower()), None)
    return f"the {colour} LED" if colour else f"LED {ref}"


def note(bench: Bench, design: dict, faulty: dict, parts: list[Part]) -> str | None:
    """What the bench shows of the fault: per state, the readings that differ from the
    design's, or None where nothing does."""
    told = []
    for s, state in enumerate(bench.states):
        said = []
        for probe in bench.probes:
            a, b = faulty[(s, probe)], design[(s, probe)]
            if differs((s, probe), a, b):
                said.append(f"`{probe}` reads {a:.1f} V where the design gives {b:.1f} V")
        a, b = faulty[(s, SUPPLY)], design[(s, SUPPLY)]
        if differs((s, SUPPLY), a, b):
            said.append(f"the supply delivers {a * 1e3:.0f} mA where the design draws "
                        f"{b * 1e3:.0f} mA")
        for key in sorted(k for k in design if k[0] == s and k[1].startswith("lamp:")):
            a, b = faulty.get(key, 0.0), design[key]
            if differs(key, a, b):
                look = ("stays dark" if a <= LIT_A else "lights" if b <= LIT_A
                        else "is dim" if a < b else "is bright")
                said.append(f"{_lamp_words(parts, key[1][5:])} {look} "
                            f"({a * 1e3:.1f} mA where the design has {b * 1e3:.1f} mA)")
        told.append(f"{state.words}: " + ("; ".join(said) if said else "as designed"))
    if all(t.endswith(": as designed") for t in told):
        return None
    return (f"On the bench ({bench.setting}), a voltmeter on {_listed(bench.probes)}, "
            "an ammeter in the supply and an eye on each LED find (\"as designed\": every "
            "one of those readings as the design's):\n"
            + "\n".join(f"- {t[0].upper()}{t[1:]}." for t in told))


def _listed(nets) -> str:
    names = [f"`{n}`" for n in nets]
    return ", ".join(names[:-1]) + f" and {names[-1]}"


# What a retold note says of the fault, by kind, and the edits it leaves the reader to
# choose from: the note is given only where one of them, and only one, is the fix.
LEADS = {"value": "One resistor on this board was fitted ten times off its value.",
         "swapped": "One diode, LED or transistor on this board is fitted turned round."}


def variants(parts: list[Part], kind: str) -> list[list[Part]]:
    """The board with each edit a reader of the note could make: for a value slip, any
    resistor ten times up or down; for a part turned round, any diode, LED or
    transistor turned."""
    out = []
    for i, part in enumerate(parts):
        sym, ohms = _symbol(part), part_value(part.value)
        edits: list[Part] = []
        if kind == "value" and sym in ("R", "R_SMALL") and ohms:
            edits += [replace(part, value=f"{ohms * k:g}") for k in (10, 0.1)]
        if kind == "swapped" and sym in ("D", "D_SCHOTTKY", "LED") and {"1", "2"} <= set(part.pins):
            edits.append(replace(part, pins={**part.pins, "1": part.pins["2"],
                                             "2": part.pins["1"]}))
        if kind == "swapped" and sym in TRANSISTORS and {"1", "3"} <= set(part.pins):
            edits.append(replace(part, pins={**part.pins, "1": part.pins["3"],
                                             "3": part.pins["1"]}))
        out += [[*parts[:i], e, *parts[i + 1:]] for e in edits]
    return out


def board(design, faulty: dict) -> list[Part]:
    """The design's parts with a fault's parts in their place (None: never fitted)."""
    return [faulty.get(p.ref, p) for p in design.parts
            if faulty.get(p.ref, p) is not None]


def _same(one: list[Part], two: list[Part]) -> bool:
    """The same board: its parts on the same pins, with the same values (2200 is 2.2K)."""
    def key(parts):
        return sorted((p.ref, _number(p.value), sorted(p.pins.items())) for p in parts)
    return key(one) == key(two)


def _number(value: str | None):
    number = part_value(value)
    return value if number is None else float(f"{number:.6g}")


def retell(design, cases: list[dict], libraries: list[str]) -> int:
    """Give each case whose fault the bench shows the bench's note for its symptom,
    where the note leads to one fix: no other simple edit of the faulty board
    (`variants`) makes it read as designed. Returns how many were retold."""
    bench = for_design(design)
    cases = [c for c in cases if c["kind"] in LEADS]
    if bench is None or not cases:
        return 0
    boards, spans = [design.parts], []
    for case in cases:
        faulty = board(design, case["faulty"])
        fixes = [b for b in variants(faulty, case["kind"]) if not _same(b, design.parts)]
        spans.append((len(boards), len(fixes)))
        boards += [faulty, *fixes]
    got = readings(bench, boards, libraries)
    base = got[0]
    if base is None:
        raise ValueError("the bench cannot solve the design itself")
    told = 0
    for case, (at, n) in zip(cases, spans, strict=True):
        seen = got[at]
        text = seen and note(bench, base, seen, boards[at])
        if text and not any(r is not None and bench.alike(base, r)
                            for r in got[at + 1:at + 1 + n]):
            case["symptom"], case["bench"] = f"{LEADS[case['kind']]} {text}", True
            told += 1
    return told


def told_first(design, cases: list[dict], count: int, libraries: list[str]) -> list[dict]:
    """The cases with those the bench tells first (each retold), in their order: a few
    at a time, until `count` are told or none is left, since a case costs a second or
    two of ngspice."""
    if for_design(design) is None or not any(c["kind"] in LEADS for c in cases):
        return cases
    done = 0
    while done < len(cases) and sum(bool(c.get("bench")) for c in cases[:done]) < count:
        retell(design, cases[done:done + 2 * count], libraries)
        done += 2 * count
    return sorted(cases, key=lambda c: not c.get("bench"))
