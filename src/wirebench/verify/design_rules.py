"""Design rules checked on the drawn netlist: the board tier's criteria.

A board task is judged the way a reviewer reads a schematic against a datasheet: does
every supply pin have its own capacitor, is BOOT0 strapped, do the CC pins carry their
5.1 kΩ. Each rule is one typed entry of task.yaml's `criteria`, and ends in a verdict
with one readable line. The agent chooses its own designators and net names, so a rule
names parts by lib_id (every placed part of that lib_id is held to it) and pins by name
(a glob such as `VDD*`) or number; only the rails a task spells out are named nets.

  decoupled   every matching pin has its own capacitor in `range` to net `to`
              (stacked pins on one net need one capacitor each; `min_count` asks
              for more, such as a buck's two output capacitors)
  strap       a pin reaches `to` (a net, or another part's pin) through a part of
              class `via` (default R) in `range`; pins matched by one glob (CC?)
              need a net and a strap each
  pulled      the same check, for a pull-up or pull-down on a pin or a named net
  series      the same check between two pins: a series resistor, an inductor
              (`alone`: and no other part of the class on the pin's net)
  connected   a pin is on net `to`, or on the same net as another part's pin
  no_connect  the pins a datasheet says to leave open touch nothing else
  part        between `min` and `max` parts of a lib_id are placed (default 1..)
  divider     the resistors from a pin to `top` and to `bottom` put `top` in `range`
              when the pin sits at `ref` (a threshold, or its [min, max] spread):
              ref × (1 + R_top / R_bottom), such as a converter's turn-on voltage
  assigned    pins of one part on pins of another that a pin table allows, each its own
  either      ways a datasheet allows alike, each a list of rules that must all hold
              (a bridge run from 3.3 V, or its 5 V output divided down): one will do
  capacitance the capacitors from the named `nets` to `to`, summed, in `range` (what a
              USB device may present across VBUS at attach: 10 µF at most)

Endpoints: `part` (a lib_id) with `pin`, or `net` (a name). `to` is a net name, a
mapping {part, pin}, or a list of those: alternatives that a datasheet allows alike (a
USART's TX on PA9 or on its alternate PA2), any one of which will do. Values are read
as schematics write them: 100n, 0.1uF, 4k7, 5.1k, 1M (mega, as on a schematic), 22R.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from fnmatch import fnmatchcase

RULE_KINDS = frozenset({"decoupled", "strap", "pulled", "series", "connected", "no_connect",
                        "part", "divider", "assigned", "either",
                        "capacitance"})
# Two-terminal parts by class: the lib_id's symbol name, as KiCad's Device library names
# them (R, R_Small, R_US; C, C_Small, C_Polarized, CP; L, L_Small; D, D_Schottky ...).
CLASSES = {"R": re.compile(r"^R(_|$)"), "C": re.compile(r"^(C|CP)(_|$)"),
           "L": re.compile(r"^L(_|$)"), "D": re.compile(r"^D(_|$)"),
           "FB": re.compile(r"^(Ferrite|FerriteBead)")}
_UNIT = re.compile(r"(ohms?|Ω|Hz|[fFhHAV])$")
# "8 MHz", "100 nF": a number and its unit written apart are one word.
_SPACED = re.compile(r"^(\d+(?:\.\d+)?)\s+"
                     r"(?=(?:meg|[fpnumkKMG])?(?:ohms?|Ω|Hz|[FHAV])?(?:[\s/,]|$))")


def part_value(text) -> float | None:
    """A schematic's value as a number: `100n`, `0.1uF`, `4k7`, `5.1k`, `22R`, `4R7`,
    `1M` (mega: on a schematic M is never milli), `10uF 16V` (the first word), a fuse's
    `500mA`, a crystal's `8 MHz`, a decimal comma (`4,7K`, as the KiCad demos write it)."""
    from wirebench.corpus.testbench import eng_value

    if text is None:
        return None
    text = _SPACED.sub(r"\1", str(text).strip().replace("µ", "u").replace("μ", "u"))
    # a comma between digits is a decimal comma (4,7K); any other ends the value (33k,1%)
    word = re.split(r"[\s/]|(?<!\d),|,(?!\d)", text)[0].replace(",", ".")
    word = _UNIT.sub("", word)
    if re.fullmatch(r"\d+[Rr]\d*", word):  # 4R7, 22R: R marks the decimal point
        word = word.replace("R", ".").replace("r", ".").rstrip(".")
    word = re.sub(r"M(?=\d*$)", "meg", word)
    m = re.fullmatch(r"(\d+)(meg|[fpnumkgtKG])(\d+)", word)  # 4k7 is 4.7k
    if m:
        word = f"{m[1]}.{m[3]}{m[2]}"
    return eng_value(word)


def describe_range(bounds) -> str:
    low, high = bounds
    return f"{low}–{high}"


@dataclass
class Board:
    """The drawn netlist with what a rule needs: each pin's net, each part's lib_id,
    value and pin names. Built from nets.json and the apply step's `board` facts."""

    parts: dict[str, dict]                      # ref -> {lib_id, value}
    pin_names: dict[str, dict[str, str]]        # ref -> {number: name}
    net_of: dict[str, str] = field(default_factory=dict)  # "REF.PIN" -> net id
    members: dict[str, set[str]] = field(default_factory=dict)
    names: dict[str, str | None] = field(default_factory=dict)

    @classmethod
    def from_docs(cls, nets_doc: dict, facts: dict) -> Board:
        board = cls(parts=dict(facts.get("parts", {})), pin_names=dict(facts.get("pins", {})))
        for i, net in enumerate(nets_doc.get("nets", [])):
            key = net.get("stable_id") or f"net{i}"
            real = {m for m in net.get("members", []) if not m.startswith("#")}
            board.members[key] = real
            board.names[key] = net.get("name")
            for m in real:
                board.net_of[m] = key
        return board

    def label(self, net: str | None) -> str:
        if net is None:
            return "no net"
        return self.names.get(net) or "an unnamed net"

    def refs_of(self, lib_id: str) -> list[str]:
        return sorted((r for r, p in self.parts.items() if p.get("lib_id") == lib_id),
                      key=_natural)

    def pins(self, ref: str, pattern: str) -> list[str]:
        """Pin numbers of `ref` whose name matches the glob, or whose number is it."""
        names = self.pin_names.get(ref, {})
        return sorted((n for n, name in names.items()
                       if n == pattern or fnmatchcase(name or "", pattern)), key=_natural)

    def nets_named(self, name: str) -> set[str]:
        return {k for k, v in self.names.items() if v == name}

    def pin_net(self, ref: str, number: str) -> str | None:
        return self.net_of.get(f"{ref}.{number}")

    def two_terminal(self, cls: str) -> list[tuple[str, str, str]]:
        """(ref, net of pin 1, net of pin 2) for each part of the class."""
        rx = CLASSES[cls]
        out = []
        for ref, part in self.parts.items():
            symbol = str(part.get("lib_id", "")).split(":")[-1]
            if rx.search(symbol):
                out.append((ref, self.pin_net(ref, "1"), self.pin_net(ref, "2")))
        return out

    def bridges(self, a: set[str], b: set[str], cls: str, bounds) -> tuple[list, list]:
        """Parts of `cls` with one pin on a net of `a` and the other on `b`: those whose
        value is in bounds, and those (ref, value) that join the nets with another value."""
        low, high = (part_value(v) for v in bounds)
        good, off = [], []
        for ref, n1, n2 in self.two_terminal(cls):
            if None in (n1, n2) or not ((n1 in a and n2 in b) or (n1 in b and n2 in a)):
                continue
            value = part_value(self.parts[ref].get("value"))
            (good if value is not None and low * 0.9999 <= value <= high * 1.0001
             else off).append((ref, self.parts[ref].get("value")))
        return good, off


def _natural(text: str):
    return [int(t) if t.isdigit() else t for t in re.split(r"(\d+)", text)]


class RuleError(Exception):
    """A rule that cannot be judged on this sheet, with the reason as its verdict line."""


def _refs(board: Board, spec: dict) -> list[str]:
    """The parts a rule is about: every one of its lib_id, or only those of `refs`, and
    none of `except` (a change to a real design is about its new LED, not the design's
    own LEDs of the same symbol)."""
    return [r for r in board.refs_of(spec["part"]) if r not in spec.get("except", ())
            and ("refs" not in spec or r in spec["refs"])]


def _pin_nets(board: Board, spec: dict, pin_key: str = "pin") -> list[tuple[str, str, str | None]]:
    """(ref, pin number, net) for every pin the endpoint names on every matching part."""
    refs = _refs(board, spec)
    if not refs:
        besides = f" besides {', '.join(spec['except'])}" if spec.get("except") else ""
        raise RuleError(f"no {spec['part']} is placed{besides}")
    found = []
    for ref in refs:
        numbers = board.pins(ref, str(spec[pin_key]))
        if not numbers:
            raise RuleError(f"{ref} ({spec['part']}) has no pin {spec[pin_key]!r}")
        found.extend((ref, n, board.pin_net(ref, n)) for n in numbers)
    return found


def _pin_text(board: Board, ref: str, number: str) -> str:
    name = board.pin_names.get(ref, {}).get(number)
    return f"{ref} {name} (pin {number})" if name and name != number else f"{ref} pin {number}"


def _target(board: Board, to) -> tuple[set[str], str]:
    """The nets an endpoint `to` names, and how to say it."""
    if isinstance(to, list):  # alternatives: any of them
        found = [_target(board, one) for one in to]
        return set().union(*(nets for nets, _ in found)), " or ".join(t for _, t in found)
    if isinstance(to, str):
        return board.nets_named(to), to
    pins = _pin_nets(board, to)
    return {n for _, _, n in pins if n}, " / ".join(_pin_text(board, r, p) for r, p, _ in pins)


def _decoupled(rule: dict, board: Board) -> tuple[bool, str]:
    ground, ground_text = _target(board, rule.get("to", "GND"))
    bounds = rule["range"]
    by_net: dict[str | None, list[tuple[str, str]]] = {}
    for ref, number, net in _pin_nets(board, rule, "pins"):
        by_net.setdefault(net, []).append((ref, number))
    short = []
    for net, pins in sorted(by_net.items(), key=lambda kv: _natural(str(kv[1][0]))):
        names = ", ".join(_pin_text(board, r, p) for r, p in pins)
        if net is None or net in ground:
            short.append(f"{names} {'is not connected' if net is None else 'is on ' + ground_text}")
            continue
        good, off = board.bridges({net}, ground, "C", bounds)
        need = max(len(pins) if rule.get("each", True) else 1, rule.get("min_count", 1))
        if len(good) < need:
            extra = f"; {', '.join(f'{r}={v}' for r, v in off)} out of range" if off else ""
            short.append(f"{names} on {board.label(net)}: {len(good)} capacitor(s) of "
                         f"{describe_range(bounds)} to {ground_text}, needs {need}{extra}")
    total = sum(len(p) for p in by_net.values())
    return not short, "; ".join(short) or (
        f"{total} pin(s) each with a {describe_range(bounds)} capacitor to {ground_text}")


def _bridged(rule: dict, board: Board) -> tuple[bool, str]:
    """strap, pulled, series: a part of class `via` in `range` from an endpoint to `to`."""
    cls, bounds = rule.get("via", "R"), rule["range"]
    target, target_text = _target(board, rule["to"])
    if "net" in rule:
        sources = [(rule["net"], board.nets_named(rule["net"]))]
    else:
        sources = [(_pin_text(board, r, p), {n} if n else set())
                   for r, p, n in _pin_nets(board, rule)]
    wrong = []
    if "net" not in rule:
        # Each pin its own strap: CC1 and CC2 tied to one 5.1 kΩ are one 2.55 kΩ pull-down.
        shared: dict[str, list[str]] = {}
        for text, nets in sources:
            for net in nets:
                shared.setdefault(net, []).append(text)
        wrong += [f"{' and '.join(texts)} share {board.label(net)}; each needs its own"
                  for net, texts in shared.items() if len(texts) > 1]
    for text, nets in sources:
        if not nets:
            wrong.append(f"{text} is not connected")
        elif not target:
            wrong.append(f"there is no {target_text}")
        elif nets & target:
            wrong.append(f"{text} is tied straight to {target_text}")
        else:
            good, off = board.bridges(nets, target, cls, bounds)
            if not good:
                extra = (f" ({', '.join(f'{r}={v}' for r, v in off)} is out of range)"
                         if off else "")
                wrong.append(f"{text} does not reach {target_text} through a {cls} of "
                             f"{describe_range(bounds)}{extra}")
            elif rule.get("alone"):
                ours = {r for r, _ in good}
                others = sorted((r for r, n1, n2 in board.two_terminal(cls)
                                 if r not in ours and {n1, n2} & nets), key=_natural)
                if others:
                    wrong.append(f"{text} also has {', '.join(others)} on it; its {cls} to "
                                 f"{target_text} must be the only one")
    return not wrong, "; ".join(wrong) or (
        f"{', '.join(t for t, _ in sources)} reach {target_text} through a {cls} of "
        f"{describe_range(bounds)}")


def _connected(rule: dict, board: Board) -> tuple[bool, str]:
    target, target_text = _target(board, rule["to"])
    wrong = [f"{_pin_text(board, r, p)} is on {board.label(n)}, not {target_text}"
             for r, p, n in _pin_nets(board, rule) if n is None or n not in target]
    return not wrong, "; ".join(wrong) or f"{rule['pin']} of {rule['part']} on {target_text}"


def _no_connect(rule: dict, board: Board) -> tuple[bool, str]:
    wrong = []
    for pin in rule["pins"]:
        for ref, number, net in _pin_nets(board, {"part": rule["part"], "pin": pin}):
            others = board.members.get(net, set()) - {f"{ref}.{number}"} if net else set()
            if others:
                wrong.append(f"{_pin_text(board, ref, number)} must be left open, but is on "
                             f"{board.label(net)} with {', '.join(sorted(others)[:3])}")
    return not wrong, "; ".join(wrong) or f"{len(rule['pins'])} pin(s) left open"


def _part(rule: dict, board: Board) -> tuple[bool, str]:
    n = len(_refs(board, rule))
    low, high = rule.get("min", 1), rule.get("max")
    ok = n >= low and (high is None or n <= high)
    want = f"{low}..{high}" if high is not None else f"at least {low}"
    return ok, f"{n} {rule['part']} placed (wants {want})"


def _resistance(board: Board, a: str, b: set[str]) -> tuple[float | None, list[str]]:
    """The resistors between net `a` and the nets `b`, in parallel, and their refs
    (None when there are none, or one has no value a schematic would read)."""
    refs = [ref for ref, n1, n2 in board.two_terminal("R")
            if (n1 == a and n2 in b) or (n2 == a and n1 in b)]
    values = [part_value(board.parts[r].get("value")) for r in refs]
    if not refs or any(not v for v in values):
        return None, refs
    return 1 / sum(1 / v for v in values), refs


def _ohms(value: float) -> str:
    for scale, prefix in ((1e6, "M"), (1e3, "k")):
        if value >= scale:
            return f"{value / scale:.4g}{prefix}"
    return f"{value:.4g}"


def _farads(value: float) -> str:
    for scale, prefix in ((1e-6, "µ"), (1e-9, "n"), (1e-12, "p")):
        if value >= scale * 0.9999:  # a sum of floats may land a hair under 1 µF
            return f"{value / scale:.4g} {prefix}F"
    return f"{value:.4g} F"


def _capacitance(rule: dict, board: Board) -> tuple[bool, str]:
    """capacitance: the whole capacitance a set of rails presents, however it is split
    between parts (a regulator's input capacitor on VBUS counts as much as the bulk)."""
    target, target_text = _target(board, rule.get("to", "GND"))
    nets = set().union(*(board.nets_named(n) for n in rule["nets"]))
    names = " and ".join(rule["nets"])
    if not nets:
        return False, f"there is no net named {' or '.join(rule['nets'])}"
    caps = sorted(((r, board.parts[r].get("value")) for r, n1, n2 in board.two_terminal("C")
                   if {n1, n2} & nets and {n1, n2} & target), key=lambda rv: _natural(rv[0]))
    unread = [f"{r}={v}" for r, v in caps if part_value(v) is None]
    if unread:
        return False, f"{', '.join(unread)} on {names}: no value a schematic would read"
    total = sum(part_value(v) for _, v in caps)
    low, high = (part_value(v) for v in rule["range"])
    parts = ", ".join(f"{r}={v}" for r, v in caps) or "no capacitor"
    ok = low * 0.9999 <= total <= high * 1.0001
    return ok, (f"{_farads(total)} from {names} to {target_text} "
                f"({parts}){'' if ok else ', needs ' + describe_range(rule['range'])}")


def _divider(rule: dict, board: Board) -> tuple[bool, str]:
    """divider: the pin's resistors to `top` and to `bottom` set the voltage on `top` at
    which the pin reaches `ref`; every value of ref's spread must put it in `range`."""
    top, top_text = _target(board, rule["top"])
    bottom, bottom_text = _target(board, rule.get("bottom", "GND"))
    ref = rule["ref"] if isinstance(rule["ref"], list) else [rule["ref"]]
    thresholds = [part_value(v) for v in ref]
    low, high = (part_value(v) for v in rule["range"])
    wrong, right = [], []
    for part_ref, number, net in _pin_nets(board, rule):
        text = _pin_text(board, part_ref, number)
        if net is None:
            wrong.append(f"{text} is not connected")
            continue
        ends = []
        for nets, end_text in ((top, top_text), (bottom, bottom_text)):
            if not nets:
                wrong.append(f"there is no {end_text}")
                break
            if net in nets:
                wrong.append(f"{text} is tied straight to {end_text}")
                break
            value, refs = _resistance(board, net, nets)
            if value is None:
                wrong.append(f"{text} has no resistor to {end_text}" if not refs else
                             f"{text}: {', '.join(refs)} to {end_text} without a value")
                break
            ends.append(value)
        if len(ends) < 2:
            continue
        at = [t * (1 + ends[0] / ends[1]) for t in thresholds]
        spread = describe_range(ref) if len(ref) > 1 else str(ref[0])
        span = f"{min(at):.3g}–{max(at):.3g}" if len(ref) > 1 else f"{at[0]:.3g}"
        said = (f"{text} reaches {spread} with {top_text} at {span} "
                f"({_ohms(ends[0])} to {top_text}, {_ohms(ends[1])} to {bottom_text})")
        if low * 0.9999 <= min(at) and max(at) <= high * 1.0001:
            right.append(said)
        else:
            wrong.append(f"{said}; needs {describe_range(rule['range'])}")
    return not wrong, "; ".join(wrong) or "; ".join(right)


def _assigned(rule: dict, board: Board) -> tuple[bool, str]:
    """assigned: each of `pins` (of `part`) reaches one pin of `to_part` among `choices`
    ({pin name: [the functions it can give]}), each its own, and the pins chosen can give
    every one a different function (two PWM inputs on one timer channel cannot be set
    apart). A pin multiplexer's assignment, as a datasheet's pin table allows it."""
    choices = {name: set(funcs) for name, funcs in rule["choices"].items()}
    targets = board.refs_of(rule["to_part"])
    if not targets:
        raise RuleError(f"no {rule['to_part']} is placed")
    wrong, chosen = [], []
    found = [f for pin in rule["pins"]
             for f in _pin_nets(board, {"part": rule["part"], "pin": pin})]
    for ref, number, net in found:
        text = _pin_text(board, ref, number)
        on = sorted((board.pin_names.get(t, {}).get(m.split(".", 1)[1], ""), t)
                    for m in (board.members.get(net, set()) if net else set())
                    for t in targets if m.split(".", 1)[0] == t)
        if not on:
            wrong.append(f"{text} reaches no pin of {rule['to_part']}")
            continue
        fit = [name for name, _ in on if name in choices]
        if len(on) > 1:
            wrong.append(f"{text} is on {', '.join(n for n, _ in on)} at once")
        elif not fit:
            wrong.append(f"{text} is on {on[0][0]}, which gives none of "
                         f"{rule.get('function', 'the functions asked')}")
        else:
            chosen.append((text, fit[0]))
    if wrong:
        return False, "; ".join(wrong)
    names = [name for _, name in chosen]
    if len(set(names)) < len(names):
        twice = sorted({n for n in names if names.count(n) > 1})
        return False, f"{', '.join(twice)} carries two of {', '.join(rule['pins'])}"
    if not _distinct(names, choices):
        return False, (f"{', '.join(names)} cannot each give "
                       f"{rule.get('function', 'a function')} of its own: "
                       + "; ".join(f"{n} gives only {', '.join(sorted(choices[n]))}"
                                   for n in names))
    return True, "; ".join(f"{t} on {n}" for t, n in chosen)


def _distinct(names: list[str], choices: dict[str, set[str]]) -> bool:
    """Can each pin be given a function of its own (a matching, tried by augmenting
    paths)?"""
    owner: dict[str, str] = {}

    def place(name: str, seen: set[str]) -> bool:
        for func in sorted(choices[name]):
            if func not in seen:
                seen.add(func)
                if func not in owner or place(owner[func], seen):
                    owner[func] = name
                    return True
        return False

    return all(place(name, set()) for name in names)


def _either(rule: dict, board: Board) -> tuple[bool, str]:
    """either: the first way whose rules all hold, or, when none does, the first rule
    each way breaks (the verdict a reviewer needs to pick one and finish it)."""
    broken = []
    for way in rule["of"]:
        verdicts = [(sub["id"], *check(sub, board)) for sub in way]
        bad = [(sid, why) for sid, ok, why in verdicts if not ok]
        if not bad:
            return True, "; ".join(f"{sid}: {why}" for sid, _, why in verdicts)
        broken.append(f"{bad[0][0]}: {bad[0][1]}")
    return False, "no way holds: " + " | ".join(broken)


CHECKS = {"decoupled": _decoupled, "strap": _bridged, "pulled": _bridged,
          "series": _bridged, "connected": _connected, "no_connect": _no_connect,
          "part": _part, "divider": _divider, "assigned": _assigned, "either": _either,
          "capacitance": _capacitance}


def check(rule: dict, board: Board) -> tuple[bool, str]:
    """One rule's verdict on the board, and its reason."""
    if rule["kind"] not in CHECKS:  # inside an `either`, where the schema allows any kind
        return False, f"{rule['kind']} is not a design rule"
    try:
        return CHECKS[rule["kind"]](rule, board)
    except RuleError as exc:
        return False, str(exc)
