"""The real tier's tasks on one demo: planted faults (repairs) and change requests.

A fault is planted by editing the base op-list, never by a fresh layout, so the faulty
sheet is the clean base with one thing wrong: a label's net name (a pin on the wrong net,
two pins swapped, a rail swapped), a value ten times off, two resistors' values
exchanged, or a part's ops gone (a missing pull-up or bypass). The repair restores the
demo's netlist exactly; a part on the wrong net is fixed the way akcli allows under its
rails: the part deleted with its labels and placed again where it was, with its labels
right (four ops for a two-pin part).

A rework plants two or three such faults at once, of different kinds, on parts that share
no signal net, with a bench note each. A resistor's decade slip may be told as an
ohmmeter's reading of the board (ohmmeter.py); two resistors' values exchanged always are,
by a reading that no other exchange in that piece of the board would give.

Each repair ships two wrong answers: the sheet left as it is (the empty edit), and a fix of
the wrong part (a neighbour on the same nets changed instead); a rework adds its partial
fix (the last note's fault left as it was). A change request is asked as a maintainer
would (the rail and the light, the connector and the resistors' value), leaves the agent
the designators and the new nets' names, and is judged by rules on the pins it involves;
it ships the empty edit, a near miss and an answer that names a new net after one the
design already has.
"""

from __future__ import annotations

import copy
import dataclasses
import itertools
import math
import re

from wirebench.taskgen.layout import Part, ops_for, pin_table
from wirebench.taskgen.real.demos import natural

GROUND = re.compile(r"^(GND|VSS|0V|AGND|DGND|GNDA|GNDD|GNDPWR)$", re.I)
RAIL = re.compile(r"^([+-]\d.*|VCC.*|VDD.*|VEE|VIN|VBUS|V\+|V-|HT|\+.*|-V.*)$", re.I)
MAX_EDIT_OPS = 6
TWO_PIN = re.compile(r"^(R|C|CP|L|D|LED|INDUCTOR|D_Schottky|C_Polarized|CP1|R_Small|C_Small"
                     r"|LED_Small)$")


def symbol(part: Part) -> str:
    return part.lib_id.split(":")[-1]


def prefix(ref: str) -> str:
    return re.match(r"[A-Za-z_]+", ref).group(0)


def number(ref: str) -> int:
    m = re.search(r"(\d+)$", ref)
    return int(m.group(1)) if m else 0


# ---- the base op-list, by part ------------------------------------------------------------

def part_ops(ops: list[dict], ref: str) -> list[dict]:
    """A part's place ops and the labels and no-connects on its pins (REF.PIN)."""
    out = []
    for op in ops:
        if op["op"] == "place_component" and op["designator"] == ref:
            out.append(op)
        elif op["op"] in ("add_net_label", "add_no_connect"):
            at = op.get("at") if op["op"] == "add_net_label" else op.get("pin")
            if isinstance(at, str) and at.split(".", 1)[0] == ref:
                out.append(op)
    return out


def labelled_on_pins(ops: list[dict], part: Part) -> bool:
    """Every net of the part is a label on its pin (no stub wires): it can be deleted
    with its labels and placed again in four ops."""
    labels = {op["at"] for op in part_ops(ops, part.ref) if op["op"] == "add_net_label"}
    return all(f"{part.ref}.{pin}" in labels for pin in part.pins)


def relabel(ops: list[dict], ref: str, nets: dict[str, str]) -> list[dict]:
    """The base ops with the labels on `ref`'s pins named as `nets` says."""
    out = copy.deepcopy(ops)
    for op in out:
        if op["op"] == "add_net_label" and isinstance(op.get("at"), str):
            r, pin = op["at"].split(".", 1)
            if r == ref and pin in nets:
                op["name"] = nets[pin]
    return out


def replace(ops: list[dict], ref: str, nets: dict[str, str]) -> list[dict]:
    """The edit that deletes `ref` with its labels and places it again where it was, its
    pins on `nets`."""
    edit = [{"op": "delete_component", "designator": ref, "cascade": True}]
    for op in part_ops(ops, ref):
        if op["op"] == "place_component":
            edit.append(copy.deepcopy(op))
    for op in part_ops(ops, ref):
        if op["op"] == "add_net_label":
            pin = op["at"].split(".", 1)[1]
            edit.append({**op, "name": nets.get(pin, op["name"])})
        elif op["op"] == "add_no_connect":
            edit.append(dict(op))
    return edit


def without(ops: list[dict], ref: str) -> list[dict]:
    gone = {id(op) for op in part_ops(ops, ref)}
    return [copy.deepcopy(op) for op in ops if id(op) not in gone]


def set_value(ops: list[dict], ref: str, value: str) -> list[dict]:
    out = copy.deepcopy(ops)
    for op in out:
        if op["op"] == "place_component" and op["designator"] == ref:
            op["value"] = value
    return out


# ---- values --------------------------------------------------------------------------------

def decade(value: str, up: bool) -> str | None:
    """The value ten times bigger or smaller, spelled the way the design spells it:
    1.5K -> 15K, 680nF -> 68nF, 100K -> 1M is left alone (a prefix change)."""
    m = re.fullmatch(r"(\d+(?:\.\d+)?)([A-Za-zµ]*)", value.strip())
    if not m:
        return None
    x = float(m.group(1)) * (10 if up else 0.1)
    if not 1 <= x < 1000:
        return None
    text = f"{x:.3g}"
    return text + m.group(2)


# ---- how the symptom names a place ----------------------------------------------------------

class Places:
    def __init__(self, design, libraries: list[str]):
        self.design, self.libraries = design, libraries
        self.members = design.nets()

    def pin_name(self, part: Part, pin: str) -> str:
        for p in pin_table(part.lib_id, self.libraries):
            if p["number"] == pin and p["name"] not in ("~", "", pin):
                return p["name"]
        return ""

    def where(self, net: str, avoid: tuple[str, ...] = ()) -> str:
        """A net as a person at the bench finds it: by its name when the design names
        it, else by a pin of a chip or connector on it, never one of `avoid` (the part at
        fault: on the faulty sheet its pins may sit elsewhere, and its name would give the
        fault away)."""
        if net in self.design.named:
            return f"`{net}`"
        best = None
        for m in self.members.get(net, []):
            ref, pin = m.split(".", 1)
            if ref in avoid:
                continue
            rank = 0 if prefix(ref) in ("U", "IC") else 1 if prefix(ref) in (
                "P", "J", "K", "Q", "T", "CN", "X") else 2
            if best is None or rank < best[0]:
                best = (rank, ref, pin)
        if best is None:
            return f"the net `{net}`"
        part = self.design.part(best[1])
        name = self.pin_name(part, best[2])
        # the net first, the pin only as where to find it: "the electrolytic on C213 pin 1
        # (net `N18`)" was read as calling C213 the electrolytic
        return f"the net `{net}` (at {best[1]} pin {best[2]}" + (f", {name}" if name else "") + ")"


def ohms(value: str) -> str:
    """A resistor's value as said aloud: a bare number (video's `10`) takes its unit."""
    return f"{value} Ω" if re.fullmatch(r"[\d.,]+", value) else value


def upper_first(text: str) -> str:
    return text[:1].upper() + text[1:]


def is_ground(net: str) -> bool:
    return bool(GROUND.match(net))


def is_rail(net: str) -> bool:
    return bool(RAIL.match(net)) and not is_ground(net)


# ---- the faults ------------------------------------------------------------------------------

def _neighbours(design, part: Part, kind: str | None = None) -> list[Part]:
    """Other parts of the same kind that share a net with `part`."""
    nets = set(part.pins.values())
    return [p for p in design.parts if p.ref != part.ref and set(p.pins.values()) & nets
            and (kind is None or prefix(p.ref) == kind)]


def value_faults(design, ops, places) -> list[dict]:
    out = []
    from wirebench.verify.design_rules import part_value

    for part in design.parts:
        if prefix(part.ref) not in ("R", "C") or not part.value or part_value(part.value) is None:
            continue
        for up in (True, False):
            bad = decade(part.value, up)
            if not bad or part_value(bad) is None:
                continue
            others = [p for p in _neighbours(design, part, prefix(part.ref))
                      if p.value and decade(p.value, up)]
            if not others:
                continue
            other = others[0]
            own = (part.ref,)  # a note never names the part at fault
            # the signal side first: a pull-up ten times off moves its signal's level,
            # never its rail's (a note once sent a reader to `+3.3V` for IRQ-7's pull-up)
            nets = sorted(set(part.pins.values()),
                          key=lambda n: (is_ground(n), is_rail(n), n))
            kind = "resistor" if prefix(part.ref) == "R" else "capacitor"
            measured = kind == "resistor" and _reading(design, places, part, bad, nets)
            # Without a reading the note names a net and the kind of part: it singles the
            # part out only where no other of its kind is on that net. (A capacitor's note
            # once fitted its RC's resistor ten times off as well, and a helper guessed.)
            if not measured and any(prefix(p.ref) == prefix(part.ref) and p.ref != part.ref
                                    and nets[0] in p.pins.values() for p in design.parts):
                continue
            slipped = (f"One {kind} on this board was fitted ten times off its value"
                       f" ({'too big' if up else 'too small'}).")
            if measured:
                symptom = measured
            elif kind == "resistor":
                symptom = (f"{slipped} With the board powered, the level at "
                           f"{places.where(nets[0], own)} sits far from its design value, "
                           "and the circuit behind it misbehaves accordingly.")
            else:
                symptom = (f"{slipped} The time constant at {places.where(nets[0], own)} is "
                           f"ten times {'longer' if up else 'shorter'} than the design "
                           "expects: what it filters, couples or times is off by an order "
                           "of magnitude.")
            out.append({
                "kind": "value", "ref": part.ref,
                "base": set_value(ops, part.ref, bad),
                "fix": [{"op": "set_component_parameters", "designator": part.ref,
                         "value": part.value}],
                "wrong_fix": [{"op": "set_component_parameters", "designator": other.ref,
                               "value": decade(other.value, up)}],
                "fails": "values",
                "wrong_why": f"{other.ref} changed instead of {part.ref}, which stays "
                             f"{bad} (the design has {part.value})",
                "symptom": symptom, "parts": design.parts, "measured": bool(measured),
                "faulty": {part.ref: dataclasses.replace(part, value=bad)},
            })
            break
    return out


# What an ohmmeter's note says of the board it reads (ohmmeter.py's model of it).
CONDUCT = "only its resistors, chokes and fuses conduct"
# A reading tells the slip apart when every other single decade slip on the faulty board
# reads at least this far from the design's figure.
APART = 0.05


def _reading(design, places, part: Part, bad: str, nets: list[str]) -> str | None:
    """The bench note of a resistor's decade slip as an ohmmeter finds it: from the part's
    signal side to a ground or rail (or across the part), the faulty board's reading and
    the design's. None when no reading moves enough, or when some other resistor ten
    times off would restore the design's figure as well (the note would not single it
    out)."""
    from wirebench.taskgen.real.ohmmeter import Ohmmeter, ohms_text
    from wirebench.verify.design_rules import part_value

    meter, faulty = design.ohmmeter, None
    a = nets[0]
    # From the part's signal side to ground or a rail, the way a bench probes a board; a
    # reading through more than the part itself first (the note then names no part's value).
    ends = [n for n in meter.index if (is_ground(n) or is_rail(n)) and n != a
            and meter.conducts(a, n)] + [n for n in nets if n != a]
    readings = []
    for b in dict.fromkeys(ends):
        design_ohms = meter.reading(a, b)
        faulty = faulty or Ohmmeter(design, {part.ref: bad})
        board = faulty.reading(a, b)
        if not math.isfinite(board) or abs(board / design_ohms - 1) < 0.1:
            continue
        if any(abs(faulty.reading(a, b, ref, factor) / design_ohms - 1) < APART
               for ref in faulty.resistors() if ref != part.ref
               and faulty.reaches(a, ref) for factor in (10, 0.1)):
            continue
        alone = abs(board / part_value(bad) - 1) < APART
        readings.append((alone, b, board, design_ohms))
    if not readings:
        return None
    _, b, board, design_ohms = min(readings, key=lambda r: r[0])
    return ("One resistor on this board was fitted ten times off its value. Unpowered, "
            f"with its chips out of circuit ({CONDUCT}), an ohmmeter from "
            f"{places.where(a, (part.ref,))} to {places.where(b, (part.ref,))} reads "
            f"{ohms_text(board)}; the "
            f"design gives {ohms_text(design_ohms)}.")


# Two resistors fitted in each other's places: each value is one the design uses, so
# neither looks wrong; only a reading tells which two. Their values at most this far apart
# (a 1K and a 4.7K are easily confused on a reel; a 100 and a 1M are not).
SWAP_RATIO = 5


def _signature(design, part: Part, members) -> tuple:
    """What a part is connected to, as a reader comparing like parts sees it: each net by
    its name if it is a rail or ground, else by the symbols on it. Two resistors with one
    signature are peers (two channels' grid resistors), and a value that differs between
    them shows."""
    sides = []
    for net in part.pins.values():
        if is_rail(net) or is_ground(net):
            sides.append(net)
        else:
            sides.append(tuple(sorted(symbol(design.part(m.split(".", 1)[0]))
                                      for m in members[net]
                                      if m.split(".", 1)[0] != part.ref)))
    return tuple(sorted(sides, key=repr))


def _peered(design, part: Part, members, by_sig) -> bool:
    """Has the part a peer fitted with its own value, which a swap would set it apart
    from?"""
    return any(q.ref != part.ref and q.value == part.value
               for q in by_sig[_signature(design, part, members)])


def swap_faults(design, ops, places) -> list[dict]:
    """Two resistors of one piece of the board with their values exchanged, told by one or
    two ohmmeter readings that no other exchange of two of that piece's resistors gives."""
    from wirebench.taskgen.real.ohmmeter import Ohmmeter, ohms_text
    from wirebench.verify.design_rules import part_value

    meter, members = design.ohmmeter, design.nets()
    resistors = [design.part(r) for r in meter.resistors()]
    by_sig: dict[tuple, list[Part]] = {}
    for r in resistors:
        by_sig.setdefault(_signature(design, r, members), []).append(r)
    out = []
    for one, two in itertools.combinations(resistors, 2):
        v1, v2 = part_value(one.value), part_value(two.value)
        if not (v1 and v2) or not 1.2 <= max(v1, v2) / min(v1, v2) <= SWAP_RATIO:
            continue
        nets = sorted(set(one.pins.values()) | set(two.pins.values()),
                      key=lambda n: (is_ground(n) or is_rail(n), n))
        if len({meter.piece(n) for n in nets}) != 1:
            continue  # the two are not in one piece of the board
        if _peered(design, one, members, by_sig) or _peered(design, two, members, by_sig):
            continue
        faulty = Ohmmeter(design, {one.ref: two.value, two.ref: one.value})
        found = _swap_readings(meter, faulty, nets, one.ref, two.ref)
        if found is None:
            continue
        readings, decoy = found
        hide = (one.ref, two.ref)  # a net is not named by a pin of a suspect
        probes = "; ".join(f"from {places.where(a, hide)} to {places.where(b, hide)} it reads "
                           f"{ohms_text(board)} where the design gives {ohms_text(want)}"
                           for a, b, want, board in readings)
        out.append({
            "kind": "value-swap", "ref": f"{one.ref}+{two.ref}", "refs": [one.ref, two.ref],
            "base": set_value(set_value(ops, one.ref, two.value), two.ref, one.value),
            "fix": [{"op": "set_component_parameters", "designator": one.ref,
                     "value": one.value},
                    {"op": "set_component_parameters", "designator": two.ref,
                     "value": two.value}],
            # one of the two traded back with the exchange the readings come closest to
            "wrong_fix": [{"op": "set_component_parameters", "designator": one.ref,
                           "value": design.part(decoy).value},
                          {"op": "set_component_parameters", "designator": decoy,
                           "value": two.value}],
            "fails": "values",
            "wrong_why": f"{one.ref} traded values with {decoy} instead of {two.ref}",
            "symptom": ("Two resistors on this board carry each other's values (their "
                        "reels were swapped at assembly; the wiring is as designed). "
                        f"Unpowered, with its chips out of circuit ({CONDUCT}), an "
                        f"ohmmeter finds it: {probes}."),
            "parts": design.parts, "measured": True,
            "faulty": {one.ref: dataclasses.replace(one, value=two.value),
                       two.ref: dataclasses.replace(two, value=one.value)},
        })
    return out


def _swap_readings(meter, faulty, nets: list[str], one: str, two: str):
    """The readings that tell the exchange of `one` and `two` apart, and the nearest other
    exchange of `one`: one reading if it alone singles the pair out, else two; None if no
    two do. A reading is between two of the pair's nets, or from one of them to a ground
    or rail, and must be the network's figure, not one resistor's value (which would name
    that resistor's value outright)."""
    import numpy as np

    piece = [r for r in faulty.resistors() if faulty.reaches(nets[0], r)]
    held = [faulty.edges[r][2] for r in piece]
    # An exchange with a resistor off this piece reads as the piece's one refitted with
    # that resistor's value.
    elsewhere = sorted({ohms for r, (_, _, ohms) in faulty.edges.items()
                        if r not in piece and r in faulty.resistors()})
    ends = nets + [n for n in meter.index if (is_ground(n) or is_rail(n))
                   and n not in nets and meter.conducts(nets[0], n)]
    k, true = piece.index(one), piece.index(two)
    probes = []  # (a, b, design's figure, board's figure, error of every exchange)
    for a, b in itertools.combinations(ends, 2):
        want, board = meter.reading(a, b), faulty.reading(a, b)
        if not (math.isfinite(want) and math.isfinite(board)) or abs(board / want - 1) < 0.1 or any(
                abs(f / h - 1) < APART for f in (want, board) for h in held):
            continue
        # every exchange of two of the piece's resistors, made on the faulty board
        error = np.abs(faulty.swapped(a, b, piece) / want - 1)
        off = (np.abs(faulty.refitted(a, b, piece, elsewhere) / want - 1) if elsewhere
               else np.full((len(piece), 1), np.inf))
        probes.append((a, b, want, board, np.nan_to_num(error, nan=np.inf), off))
    for chosen in [*([p] for p in probes), *itertools.combinations(probes, 2)]:
        worst = np.maximum.reduce([p[4] for p in chosen])
        worst = np.minimum(worst, worst.T)  # a pair either way round
        if np.count_nonzero(worst < APART) != 2:  # (one, two) and (two, one)
            continue
        if (np.maximum.reduce([p[5] for p in chosen]) < APART).any():
            continue
        row = worst[k].copy()
        row[true] = np.inf
        if not np.isfinite(row.min()):
            continue
        return [p[:4] for p in chosen], piece[int(row.argmin())]
    return None


def _twinned(design, part: Part, pins: dict[str, str], turned: bool = False) -> bool:
    """Whether another part of the same value sits on the nets the faulty part reaches
    (`pins`; for a turned part, pin for pin, as one of an antiparallel pair): then mending
    either mends the board, and a note cannot say which one the design had there (three
    100nF on `VCC_PIC`, one of them the fault's)."""
    return any(q.ref != part.ref and q.value == part.value
               and (q.pins == pins if turned else set(q.pins.values()) == set(pins.values()))
               for q in design.parts)


def _movable(design, ops, part: Part) -> bool:
    return (len(part.pins) in (2, 3) and labelled_on_pins(ops, part)
            and len(part_ops(ops, part.ref)) <= 5)


def wrong_net_faults(design, ops, places) -> list[dict]:
    """A two-pin part's pin on the net of the chip pin next to the one it belongs on."""
    out = []
    members = design.nets()
    for part in design.parts:
        if len(part.pins) != 2 or not _movable(design, ops, part) or not TWO_PIN.match(
                symbol(part)):
            continue
        for pin, net in sorted(part.pins.items()):
            if len(members[net]) < 3:  # the net must stay a net without it
                continue
            chips = [m for m in members[net] if prefix(m.split(".")[0]) in ("U", "IC")]
            if not chips:
                continue
            ref, cpin = chips[0].split(".", 1)
            chip = design.part(ref)
            if not cpin.isdigit():
                continue
            nxt = chip.pins.get(str(int(cpin) + 1)) or chip.pins.get(str(int(cpin) - 1))
            if not nxt or nxt == net or nxt in part.pins.values():
                continue
            bad = {**part.pins, pin: nxt}
            if _twinned(design, part, bad):
                continue
            wrongs = [p for p in _neighbours(design, part) if _movable(design, ops, p)
                      and prefix(p.ref) in ("R", "C", "D", "L")
                      and net in p.pins.values()]
            if not wrongs:
                continue
            other = wrongs[0]
            opin = next(k for k, v in other.pins.items() if v == net)
            own = (part.ref,)
            okeep = next(k for k, v in other.pins.items() if k != opin)
            out.append({
                "kind": "wrong-net", "ref": part.ref,
                "base": relabel(ops, part.ref, bad),
                "fix": replace(ops, part.ref, part.pins),
                # the neighbour's other pin moved onto the net the faulty pin reaches
                "wrong_fix": replace(ops, other.ref, {opin: net, okeep: nxt}),
                "fails": "nets",
                "wrong_why": f"{other.ref} rewired instead of {part.ref}, whose pin {pin} "
                             f"stays on {nxt}",
                "symptom": (f"Probing {places.where(net, own)} finds a connection missing that "
                            f"the design relies on, and {places.where(nxt, own)} is loaded by a "
                            "part it should never see."),
                "parts": design.parts, "faulty": {part.ref: dataclasses.replace(part, pins=bad)},
            })
            break
    return out


def turned_faults(design, ops, places) -> list[dict]:
    """A polarised part or a transistor drawn with two pins the wrong way round."""
    out = []
    for part in design.parts:
        sym = symbol(part).upper()
        polar = re.search(r"^(D|LED|CP|D_SCHOTTKY|ZENER|C_POLARIZED|CP1)$", sym)
        transistor = prefix(part.ref) == "Q" and len(part.pins) == 3
        if not (polar or transistor) or not _movable(design, ops, part):
            continue
        pins = sorted(part.pins)
        a, b = (pins[0], pins[1]) if polar else (pins[0], pins[2])
        if part.pins[a] == part.pins[b]:
            continue
        bad = {**part.pins, a: part.pins[b], b: part.pins[a]}
        if _twinned(design, part, bad, turned=True):
            continue
        others = [p for p in design.parts if p.ref != part.ref and symbol(p) == symbol(part)
                  and _movable(design, ops, p) and a in p.pins and b in p.pins
                  and p.pins[a] != p.pins[b]]
        if not others:
            continue
        other = others[0]
        what = ("diode" if "D" in sym and "CP" not in sym else
                "electrolytic capacitor" if polar else "transistor")
        n1, n2, own = part.pins[a], part.pins[b], (part.ref,)
        symptom = {
            "diode": f"Between {places.where(n1, own)} and {places.where(n2, own)} a diode "
                     "conducts when it should block and blocks when it should conduct.",
            "electrolytic capacitor": f"The electrolytic on {places.where(n1, own)} runs warm "
                                      "and its rail droops: it sits reverse-biased.",
            "transistor": f"The transistor stage on {places.where(part.pins[pins[1]], own)} "
                          "never switches as designed: it leaks or stays off whatever its "
                          "base is driven with.",
        }[what]
        out.append({
            "kind": "swapped", "ref": part.ref,
            "base": relabel(ops, part.ref, bad),
            "fix": replace(ops, part.ref, part.pins),
            "wrong_fix": replace(ops, other.ref, {**other.pins, a: other.pins[b],
                                                  b: other.pins[a]}),
            "fails": "nets",
            "wrong_why": f"{other.ref} turned round instead of {part.ref}",
            "symptom": symptom, "parts": design.parts,
            "faulty": {part.ref: dataclasses.replace(part, pins=bad)},
        })
    return out


def _lowest_free(design, ref: str) -> bool:
    taken = {number(p.ref) for p in design.parts if prefix(p.ref) == prefix(ref)
             and p.ref != ref}
    return min(n for n in range(1, 10000) if n not in taken) == number(ref)


def missing_faults(design, ops, places) -> list[dict]:
    """A pull-up (a resistor from a chip's signal to a rail) or a bypass capacitor (a
    rail to ground) never fitted."""
    out = []
    members = design.nets()
    for part in design.parts:
        if len(part.pins) != 2 or not labelled_on_pins(ops, part) or not TWO_PIN.match(
                symbol(part)):
            continue
        n1, n2 = part.pins.get("1"), part.pins.get("2")
        if None in (n1, n2) or min(len(members[n1]), len(members[n2])) < 3:
            continue
        if not _lowest_free(design, part.ref):
            continue
        kind = None
        if prefix(part.ref) == "R" and (is_rail(n1) != is_rail(n2)) and not (
                is_ground(n1) or is_ground(n2)):
            signal = n2 if is_rail(n1) else n1
            rail = n1 if is_rail(n1) else n2
            if any(prefix(m.split(".")[0]) in ("U", "IC") for m in members[signal]):
                kind = "pull-up"
        elif prefix(part.ref) == "C" and ({is_rail(n1), is_rail(n2)} == {True, False}
                                          and (is_ground(n1) or is_ground(n2))):
            kind = "bypass"
            rail = n1 if is_rail(n1) else n2
            signal = rail
        if kind is None:
            continue
        place = [op for op in part_ops(ops, part.ref) if op["op"] == "place_component"]
        own = (part.ref,)  # never fitted: the sheet has no such part to name
        fix = [copy.deepcopy(op) for op in place] + [
            {"op": "add_net_label", "name": part.pins[p], "at": f"{part.ref}.{p}"}
            for p in sorted(part.pins)]
        if kind == "pull-up":
            grounds = [n for n in members if is_ground(n)]
            if not grounds:
                continue
            wrong = [copy.deepcopy(op) for op in place] + [
                {"op": "add_net_label", "name": signal if part.pins[p] == signal
                 else grounds[0], "at": f"{part.ref}.{p}"} for p in sorted(part.pins)]
            why = f"{part.ref} fitted to {grounds[0]} instead of {rail}: a pull-down"
            # the value is said: where no peer shows it, nothing on the sheet could
            symptom = (f"{upper_first(places.where(signal, own))} floats: the design holds it "
                       f"at `{rail}` through {ohms(part.value)} when no one drives it, and nothing "
                       "does on this board, so it reads at random.")
        else:
            rails = [n for n in members if is_rail(n) and n != rail]
            if not rails:
                continue
            wrong = [copy.deepcopy(op) for op in place] + [
                {"op": "add_net_label", "name": rails[0] if part.pins[p] == rail
                 else part.pins[p], "at": f"{part.ref}.{p}"} for p in sorted(part.pins)]
            why = f"{part.ref} fitted on {rails[0]} instead of {rail}"
            symptom = (f"Under load, `{rail}` shows fast spikes at the chips' supply pins "
                       "and they misbehave at random: the rail is short of a "
                       f"{part.value} capacitor the design has.")
        out.append({
            "kind": kind, "ref": part.ref, "base": without(ops, part.ref), "fix": fix,
            "wrong_fix": wrong, "fails": "nets", "wrong_why": why, "symptom": symptom,
            "parts": design.parts, "faulty": {part.ref: None},
        })
    return out


def rail_faults(design, ops, places) -> list[dict]:
    """A two-pin part's rail pin on another of the design's rails."""
    out = []
    members = design.nets()
    rails = sorted(n for n in members if is_rail(n))
    if len(rails) < 2:
        return out
    for part in design.parts:
        if len(part.pins) != 2 or not _movable(design, ops, part):
            continue
        for pin, net in sorted(part.pins.items()):
            if net not in rails or len(members[net]) < 3:
                continue
            other_rail = next(r for r in rails if r != net)
            if other_rail in part.pins.values() or _twinned(
                    design, part, {**part.pins, pin: other_rail}):
                continue
            peers = [p for p in design.parts if p.ref != part.ref and _movable(design, ops, p)
                     and len(p.pins) == 2 and net in p.pins.values()
                     and other_rail not in p.pins.values()]
            if not peers:
                continue
            peer = peers[0]
            ppin = next(k for k, v in peer.pins.items() if v == net)
            far, own = next(v for k, v in part.pins.items() if k != pin), (part.ref,)
            # a part to ground is found by its rail alone: "the circuit around GND" says
            # nothing
            keep = ("a part between it and ground" if is_ground(far)
                    else f"the circuit around {places.where(far, own)}")
            out.append({
                "kind": "rail", "ref": part.ref,
                "base": relabel(ops, part.ref, {pin: other_rail}),
                "fix": replace(ops, part.ref, part.pins),
                "wrong_fix": replace(ops, peer.ref, {**peer.pins, ppin: other_rail}),
                "fails": "nets",
                "wrong_why": f"{peer.ref} moved to {other_rail} instead of {part.ref} "
                             f"back to {net}",
                "symptom": (f"`{other_rail}` feeds something that belongs on `{net}`: "
                            f"{keep} works only while `{net}` and `{other_rail}` happen to "
                            "agree."),
                "parts": design.parts,
                "faulty": {part.ref: dataclasses.replace(part, pins={**part.pins,
                                                                     pin: other_rail})},
            })
            break
    return out


FAULTS = {"value": value_faults, "wrong-net": wrong_net_faults, "swapped": turned_faults,
          "missing": missing_faults, "rail": rail_faults, "value-swap": swap_faults}


# ---- several faults on one sheet -------------------------------------------------------------

REWORK_FAULTS = 3


def refs_of(case: dict) -> list[str]:
    """The parts a fault is planted on: one, or two for values exchanged."""
    return case.get("refs", [case["ref"]])


def _signal_nets(case: dict, design) -> set[str]:
    nets = {n for r in refs_of(case) for n in design.part(r).pins.values()}
    return {n for n in nets if not (is_rail(n) or is_ground(n))}


def _edited(edit: list[dict]) -> set[str]:
    return {op["designator"] for op in edit if "designator" in op}


def combine(ops: list[dict], found: list[dict]) -> list[dict]:
    """The base with every fault of `found` planted at once. A fault touches only its own
    part's ops (a label's name, the value, or the part gone), so each of the part's ops is
    taken from that fault's sheet, one for one, or dropped with the part."""
    owner = {id(op): ref for case in found for ref in refs_of(case)
             for op in part_ops(ops, ref)}
    faulty = {ref: iter(part_ops(case["base"], ref)) for case in found
              for ref in refs_of(case)}
    out = []
    for op in ops:
        ref = owner.get(id(op))
        if ref is None:
            out.append(copy.deepcopy(op))
        else:  # a part never fitted has no ops on the faulty sheet: its own are dropped
            out.extend(copy.deepcopy(o) for o in itertools.islice(faulty[ref], 1))
    return out


def _fits(case: dict, chosen: list[dict], design) -> bool:
    """May this fault join those chosen for one sheet? Its own part, no signal net shared
    (each note points at one place), no wrong answer touching a faulty part, and no
    ohmmeter note that another fault would make wrong."""
    refs = {r for c in chosen for r in refs_of(c)}
    if set(refs_of(case)) & refs or any(
            _signal_nets(case, design) & _signal_nets(c, design) for c in chosen):
        return False
    refs |= set(refs_of(case))
    touched = set().union(*(_edited(c["wrong_fix"]) for c in [*chosen, case]))
    return not touched & refs and not _misreads(case, chosen, design)


def _misreads(case: dict, chosen: list[dict], design) -> bool:
    """Would an ohmmeter's note be wrong on this sheet? It is worked out with that fault
    alone, so no other fault may be on a part that conducts at DC (a part never fitted
    conducts on the design's board, where the reading was worked out)."""
    conducts = design.ohmmeter.edges
    return any((case.get("measured") and set(refs_of(c)) & conducts.keys())
               or (c.get("measured") and set(refs_of(case)) & conducts.keys())
               for c in chosen)


def rework_faults(design, ops, places, rng) -> list[dict]:
    """A board back from assembly with several faults of different kinds, on parts that
    share no signal net (so that each symptom points at one place), each with its own
    symptom: every one must be found, and fixed without touching the others."""
    by_kind = {kind: rng.shuffle(find(design, ops, places)) for kind, find in FAULTS.items()}
    out, used = [], set()
    for start in range(len(by_kind)):
        kinds = list(by_kind)[start:] + list(by_kind)[:start]
        chosen: list[dict] = []
        for kind in kinds:
            case = next((c for c in by_kind[kind] if not set(refs_of(c)) & used
                         and _fits(c, chosen, design)), None)
            if case is not None:
                chosen.append(case)
            if len(chosen) == REWORK_FAULTS:
                break
        if len(chosen) < 2:
            continue
        used |= {r for c in chosen for r in refs_of(c)}
        order = rng.shuffle(chosen)  # the bench notes in no order the kinds would give
        last = order[-1]
        fix = [op for c in order for op in c["fix"]]
        out.append({
            "kind": "rework", "ref": "+".join(c["ref"] for c in order), "faults": order,
            "base": combine(ops, order), "fix": fix,
            "symptoms": [c["symptom"] for c in order],
            # one fault left as it was, and one fixed on the wrong part
            "partial": [op for c in order[:-1] for op in c["fix"]],
            "partial_fails": last["fails"],
            "partial_why": f"{last['ref']} left as it was: {len(order) - 1} of "
                           f"{len(order)} faults fixed",
            "wrong_fix": [op for c in order[:-1] for op in c["fix"]] + last["wrong_fix"],
            "fails": "nets" if any(c["fails"] == "nets" for c in order) else "values",
            "wrong_fails": last["fails"], "wrong_why": last["wrong_why"],
            "max_ops": MAX_EDIT_OPS * len(order), "parts": design.parts,
        })
    return out


# ---- change requests -------------------------------------------------------------------------

def _next(design, pre: str, n: int = 1) -> list[str]:
    top = max((number(p.ref) for p in design.parts if prefix(p.ref) == pre), default=0)
    start = (top // 100 + 1) * 100 + 1
    return [f"{pre}{start + i}" for i in range(n)]


def _bottom(ops: list[dict]) -> int:
    return max(op["y_mil"] for op in ops if op["op"] == "place_component") + 2500


def _lib(design, names: tuple[str, ...]) -> str | None:
    have = {p.lib_id.split(":")[-1]: p.lib_id for p in design.parts}
    for n in names:
        if n in have:
            return have[n]
    return None


# An indicator's current and the forward drop of a red or green LED: the window of its
# resistor follows from the rail's volts (a maintainer asks for the light, not the part).
LED_MA = (1, 10)
LED_VF = (1.8, 2.2)
FREE_NAMES = ("Name the new parts and nets as you like: a new part takes a designator the "
              "design does not use, a new net a name of its own.")


def rail_volts(design, net: str) -> float | None:
    """A supply's volts: from its name (`+5V`, `+3,3V`, `+1V8`), else as the demo's own
    text gives them (demos.Demo.volts); None when neither does."""
    m = re.match(r"^\+?(\d+)(?:[.,V](\d+))?V?$", net)
    if m and net.startswith("+"):
        return float(f"{m.group(1)}.{m.group(2) or 0}")
    return dict(design.demo.volts).get(net)


def _renamed(edit: list[dict], old: str, new: str) -> list[dict]:
    """The edit with every label of net `old` named `new` instead."""
    out = copy.deepcopy(edit)
    for op in out:
        if op["op"] == "add_net_label" and op["name"] == old:
            op["name"] = new
    return out


def _reused(design) -> str:
    """A net name of the design's own, not a rail: the name a change must not reuse."""
    members = design.nets()
    return next(n for n in sorted(members, key=natural)
                if not is_rail(n) and not is_ground(n))


def led_change(design, ops, places, libraries) -> list[dict]:
    """A power-on LED on a rail: what is asked is the light (its rail, its current), and
    rules on the new LED's pins judge it, either way round its resistor goes."""
    from wirebench.taskgen.families.parametric import fmt
    from wirebench.verify.design_rules import part_value

    led, res = _lib(design, ("LED", "LED_Small")), _lib(design, ("R", "R_Small"))
    members = design.nets()
    grounds = [n for n in members if is_ground(n)]
    rails = sorted((n for n in members if is_rail(n)), key=lambda n: -len(members[n]))
    if not (led and res and grounds and rails):
        return []
    table = pin_table(led, libraries)
    anode = next((p["number"] for p in table if p["name"].upper() in ("A", "ANODE")), None)
    cathode = next((p["number"] for p in table if p["name"].upper() in ("K", "C",
                                                                           "CATHODE")), None)
    if not (anode and cathode):
        return []
    ground = grounds[0]
    theirs = sorted((p.ref for p in design.parts if p.lib_id == led), key=natural)
    pick = {"part": led, **({"except": theirs} if theirs else {})}
    out = []
    for rail in rails[:2]:
        volts = rail_volts(design, rail)
        if volts is None or volts - LED_VF[1] < 0.5:
            continue
        window = [(volts - LED_VF[0]) / (LED_MA[1] / 1000),
                  (volts - LED_VF[1]) / (LED_MA[0] / 1000)]
        value = next((v for v in ("1k", "2.2k", "470", "4.7k", "220", "10k")
                      if window[0] <= part_value(v) <= window[1]), None)
        if value is None:
            continue
        r, d = _next(design, "R")[0], _next(design, "D")[0]
        net = "PWR_LED"
        drawn, turned = (ops_for([Part(r, res, value, {"1": rail, "2": net}),
                                  Part(d, led, "LED", {anode: a, cathode: k}, stub=True)],
                                 libraries, None, _bottom(ops))
                         for a, k in ((net, ground), (ground, net)))
        bounds = [fmt(window[0]), fmt(window[1])]
        way = [[{"id": "anode_resistor", "kind": "series", **pick, "pin": anode, "to": rail,
                 "via": "R", "range": bounds},
                {"id": "cathode_ground", "kind": "connected", **pick, "pin": cathode,
                 "to": ground}],
               [{"id": "anode_rail", "kind": "connected", **pick, "pin": anode, "to": rail},
                {"id": "cathode_resistor", "kind": "series", **pick, "pin": cathode,
                 "to": ground, "via": "R", "range": bounds}]]
        reused = _reused(design)
        after = design.parts + [Part(r, res, value, {"1": rail, "2": net}),
                                Part(d, led, "LED", {anode: net, cathode: ground})]
        out.append({
            "kind": "power-led", "ref": d, "base": ops, "fix": drawn,
            "wrong_fix": turned, "fails": "one_led", "wrong_fails": "led",
            "wrong_why": f"{d} fitted the wrong way round: it never lights",
            "more_wrong": [("reused-name", _renamed(drawn, net, reused), "nets",
                            f"the LED's net named `{reused}`, a net the design already has: "
                            "the two are joined")],
            "ask": [f"Add a power-on indicator on `{rail}` ({volts:g} V): an LED lit from "
                    f"`{rail}` through a resistor at {LED_MA[0]} to {LED_MA[1]} mA (take its "
                    f"forward drop as {LED_VF[0]} to {LED_VF[1]} V), using the design's own "
                    f"symbols (`{res}` and `{led}`). Place them below the design.",
                    FREE_NAMES],
            "parts": after, "kept": {"moved": [], "joins": [rail, ground]},
            "rules": [{"id": "one_led", "kind": "part", **pick, "min": 1, "max": 1},
                      {"id": "led", "kind": "either", "of": way,
                       "why": f"lit at {LED_MA[0]} to {LED_MA[1]} mA from {volts:g} V "
                              f"through a drop of {LED_VF[0]} to {LED_VF[1]} V"}],
        })
    return out


CONNECTOR = re.compile(r"^(DB9|DB25|DB\d+.*|CONN_.*|Conn_.*|USB.*)$", re.I)
# "100 ohm series resistors": the E12 values next to it will do.
SERIES_OHMS = ["82", "120"]


def series_change(design, ops, places, libraries) -> list[dict]:
    """Series resistors on a connector's signal lines: each line's pin leaves its net for
    one of the change's own, and reaches the net it left through its resistor."""
    res = _lib(design, ("R", "R_Small"))
    if not res:
        return []
    members = design.nets()
    out = []
    for part in design.parts:
        if not CONNECTOR.match(symbol(part)) or not labelled_on_pins(ops, part):
            continue
        lines = sorted((p for p, n in part.pins.items() if not is_ground(n) and not is_rail(n)
                        and len(members[n]) >= 2), key=lambda p: (len(p), p))
        if not 2 <= len(lines) <= 6:
            continue
        refs = _next(design, "R", len(lines))
        new = {p: f"{part.ref}_{p}" for p in lines}
        added = [Part(ref, res, "100", {"1": new[p], "2": part.pins[p]})
                 for ref, p in zip(refs, lines, strict=True)]
        edit = replace(ops, part.ref, new) + ops_for(added, libraries, None, _bottom(ops))
        short = replace(ops, part.ref, {p: new[p] for p in lines[:-1]}) + ops_for(
            added[:-1], libraries, None, _bottom(ops))
        after = [q for q in design.parts if q.ref != part.ref] + [
            Part(part.ref, part.lib_id, part.value, {**part.pins, **new})] + added
        reused = _reused(design)
        out.append({
            "kind": "series", "ref": part.ref, "base": ops, "fix": edit,
            "wrong_fix": short, "fails": f"series_{lines[0]}",
            "wrong_fails": f"series_{lines[-1]}",
            "wrong_why": f"pin {lines[-1]} of {part.ref} left without its resistor",
            "more_wrong": [("reused-name", _renamed(edit, new[lines[0]], reused), "nets",
                            f"the net between {part.ref} pin {lines[0]} and its resistor "
                            f"named `{reused}`, a net the design already has: the two are "
                            "joined")],
            "ask": [f"Protect the signal lines of connector {part.ref} ({part.value}) with "
                    "100 ohm series resistors, using the design's own resistor symbol "
                    f"(`{res}`): every pin of {part.ref} that carries a signal (not a "
                    "ground, not a supply rail) gets one, between the pin and the net it "
                    "is on today. Place the resistors below the design.", FREE_NAMES],
            "parts": after,
            "kept": {"moved": [f"{part.ref}.{p}" for p in lines],
                     "joins": sorted({part.pins[p] for p in lines}, key=natural)},
            "rules": [{"id": f"series_{p}", "kind": "series", "part": part.lib_id,
                       "refs": [part.ref], "pin": p, "to": part.pins[p], "via": "R",
                       "range": SERIES_OHMS, "alone": True} for p in lines],
        })
    return out


CHANGES = {"power-led": led_change, "series": series_change}
