"""The spec tier's datasheets (tasks/datasheets/full/): one write-up per IC a board names,
in a real datasheet's shape, with every pin of the KiCad symbol akcli draws, and, for each
design rule of a board or spec task, the figure the rule checks written where a datasheet
puts it: in a passage (a table row, a bullet, a paragraph) that names the pin.

Why a figure and not the rule's words: the spec tier gives the agent a datasheet, not a
checklist, so the test only asks that a reader can find the number (100 nF next to VDD,
2.2 µF next to VINT). Where a rule's window follows from the task's requirements (R_SENSE
from the motor current, R_PROG from the cell), the write-up cannot hold the answer; it must
hold the equation's constant, which DERIVED names.
"""

from __future__ import annotations

import re
import shutil
import sys
import tempfile
from fnmatch import fnmatchcase
from functools import cache
from pathlib import Path

import pytest
import yaml

from wirebench.corpus.libraries import kicad_dir
from wirebench.verify.design_rules import part_value

REPO = Path(__file__).resolve().parents[1]
TASKS = REPO / "tasks"
NOTES = TASKS / "datasheets"
FULL = NOTES / "full"
TIERS = ("board", "spec")

# The headings a datasheet has, in its order; each write-up carries them all.
SECTIONS = ("Features", "Description", "Pin configuration and functions",
            "Absolute maximum ratings", "Recommended operating conditions",
            "Electrical characteristics", "Detailed description", "Application information",
            "Typical application", "Design procedure", "Typical components", "Layout")
MIN_LINES, MAX_LINES = 120, 300

# Parts that are not ICs and get no write-up: passives, switches, headers, the debug
# connector. A rule on one of them is judged against the IC it connects to.
GENERIC_LIBRARIES = {"Device", "Switch", "Connector_Generic", "power"}
GENERIC_PARTS = {"Connector:Conn_ARM_JTAG_SWD_10"}

# Windows that follow from a task's requirements: (symbol, pin glob, other end) -> patterns
# the write-up must hold in passages naming the pin. The other end is "GND", "*" for any
# other net, or SYMBOL.PIN for another part's pin.
DERIVED = {
    # I_TRIP = 200 mV / R_SENSE, from the motor current
    ("DRV8833PWP", "AISEN", "GND"): (r"200 mV", r"R_SENSE"),
    ("DRV8833PWP", "BISEN", "GND"): (r"200 mV", r"R_SENSE"),
    # nSLEEP held high against its internal pull-down, from the host's logic supply
    ("DRV8833PWP", "nSLEEP", "*"): (r"500 kΩ",),
    # I_REG = 1000 V / R_PROG, from the cell's capacity and charge rate
    ("MCP73831-2-OT", "PROG", "GND"): (r"1000 V", r"R_PROG"),
    # L from the ripple current; the EN divider from the turn-on voltage and its current
    ("AP63203WU", "SW", "*"): (r"ΔI_L", r"f_SW"),
    ("AP63203WU", "EN", "*"): (r"1\.18 V", r"I_DIV"),
    ("AP63203WU", "EN", "GND"): (r"1\.18 V", r"I_DIV"),
    # I2C pull-ups from the bus speed and capacitance
    ("BME280", "SDI", "*"): (r"0\.8473", r"I_OL"),
    ("BME280", "SCK", "*"): (r"0\.8473", r"I_OL"),
    # RS-485: the terminator equals the cable's impedance; the bias from the 200 mV threshold
    ("MAX3485", "A", "MAX3485.B"): (r"Z_0",),
    ("MAX3485", "A", "*"): (r"200 mV", r"R_BIAS"),
    ("MAX3485", "B", "GND"): (r"200 mV", r"R_BIAS"),
    # The crystal's load capacitors: judged in the MCU's write-up, which must give the
    # formula and a figure for the stray capacitance it assumes.
    ("Crystal", "*", "GND"): (r"2 × \(C_L − C_stray\)", r"C_stray[^|\n]{0,60}?\d+(\.\d+)? pF"),
}

# Nets whose capacitor or resistor a datasheet specifies: the split termination's middle.
NET_OWNERS = {"CAN_SPLIT": "TJA1051T-3"}

PREFIX = {"p": 1e-12, "n": 1e-9, "u": 1e-6, "µ": 1e-6, "μ": 1e-6, "m": 1e-3, "": 1.0,
          "k": 1e3, "M": 1e6}
QUANTITY = re.compile(r"(?<![\w.])(\d+(?:\.\d+)?)[ \u00a0\u2009]?([pnuµμmkM]?)(F|Ω|H)(?!\w)")
UNIT_OF_CLASS = {"R": "Ω", "C": "F", "L": "H"}


def symbol_of(lib_id: str) -> str:
    return lib_id.split(":", 1)[1]


def is_generic(lib_id: str) -> bool:
    return lib_id.split(":", 1)[0] in GENERIC_LIBRARIES or lib_id in GENERIC_PARTS


def symbol_block(text: str, name: str) -> str:
    """One top-level `(symbol "NAME" ...)` of a .kicad_sym, parentheses balanced (quoted
    strings such as "GND(PPAD)" skipped)."""
    start = text.find(f'\n  (symbol "{name}"')
    if start < 0:
        raise KeyError(name)
    begin = start + 3  # past the newline and the indent
    depth, i, quoted = 0, begin, False
    while True:
        ch = text[i]
        if quoted:
            quoted = not (ch == '"' and text[i - 1] != "\\")
        elif ch == '"':
            quoted = True
        elif ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
            if depth == 0:
                return text[begin:i + 1]
        i += 1


@cache
def symbol_pins(lib_id: str) -> tuple[tuple[str, str], ...]:
    """(number, name) of every pin, as `akcli pins` reads KiCad's library. akcli is handed
    a library of this one symbol (and the one it extends): parsing all of Connector.kicad_sym
    (3 MB) took 15 s on a loaded machine, this takes a fraction of one."""
    from wirebench.taskgen.layout import pin_table

    lib, name = lib_id.split(":", 1)
    text = (kicad_dir() / f"{lib}.kicad_sym").read_text(encoding="utf-8")
    blocks = [symbol_block(text, name)]
    parent = re.match(r'\(symbol "[^"]+" \(extends "([^"]+)"\)', blocks[0])
    if parent:
        blocks.insert(0, symbol_block(text, parent[1]))
    folder = Path(tempfile.mkdtemp(prefix="wirebench-pins-"))
    try:
        small = folder / f"{lib}.kicad_sym"
        small.write_text(text[:text.index("\n")] + "\n  " + "\n  ".join(blocks) + "\n)\n",
                         encoding="utf-8")
        table = pin_table(lib_id, [str(small)])
    finally:
        shutil.rmtree(folder)
    return tuple((p["number"], p["name"]) for p in table)


def board_tasks() -> list[dict]:
    metas = []
    for path in sorted(TASKS.glob("*/task.yaml")):
        meta = yaml.safe_load(path.read_text(encoding="utf-8"))
        if meta.get("tier") in TIERS:
            metas.append(meta)
    return metas


def named_ics() -> dict[str, str]:
    """symbol name -> lib_id of every non-generic part a board or spec rule names."""
    found = {}
    for meta in board_tasks():
        for rule in meta.get("criteria", []):
            for lib_id in rule_parts(rule):
                if not is_generic(lib_id):
                    found[symbol_of(lib_id)] = lib_id
    return found


def rule_parts(rule: dict) -> list[str]:
    parts = [rule["part"]] if rule.get("part") else []
    if isinstance(rule.get("to"), dict) and rule["to"].get("part"):
        parts.append(rule["to"]["part"])
    return parts


# ---- reading a write-up ---------------------------------------------------------------

def sections(text: str) -> dict[str, str]:
    """Heading text -> its body (up to the next heading of any level)."""
    out, name, body = {}, None, []
    for line in text.splitlines():
        m = re.match(r"#{1,4}\s+(.*)", line)
        if m:
            if name is not None:
                out[name] = "\n".join(body)
            name, body = m[1].strip(), []
        else:
            body.append(line)
    if name is not None:
        out[name] = "\n".join(body)
    return out


def section(text: str, start: str) -> str:
    """The body of the first section whose heading starts with `start`, with its
    subsections."""
    lines = text.splitlines()
    for i, line in enumerate(lines):
        m = re.match(r"(#{1,4})\s+(.*)", line)
        if m and m[2].strip().lower().startswith(start.lower()):
            level, body = len(m[1]), []
            for nxt in lines[i + 1:]:
                h = re.match(r"(#{1,4})\s", nxt)
                if h and len(h[1]) <= level:
                    break
                body.append(nxt)
            return "\n".join(body)
    return ""


def table_pins(text: str) -> set[tuple[str, str]]:
    """(number, name) of each pin the pin-function table lists. A row's first cell holds
    one or more numbers (`1, 10, 22`), its second the KiCad name in backquotes."""
    found = set()
    for line in section(text, "Pin configuration and functions").splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if not line.startswith("|") or len(cells) < 3 or not cells[1].startswith("`"):
            continue
        name = cells[1].strip("`")
        for number in re.split(r"[,\s]+", cells[0]):
            if number:
                found.add((number, name))
    return found


def passages(text: str) -> list[str]:
    """Table rows, bullets and paragraphs: the places a reader finds one fact."""
    out, current = [], []

    def flush():
        if current:
            out.append(" ".join(current))
            current.clear()

    for line in text.splitlines():
        stripped = line.strip()
        if not stripped or stripped.startswith("#"):
            flush()
        elif stripped.startswith("|"):
            flush()
            out.append(stripped)
        elif re.match(r"([-*]|\d+\.)\s", stripped):
            flush()
            current.append(stripped)
        else:
            current.append(stripped)
    flush()
    return out


def pin_pattern(name: str) -> re.Pattern:
    """A pin as prose writes it: its KiCad name, or the name inside ~{...} (INT, CS)."""
    forms = {name, re.sub(r"~\{([^}]*)\}", r"\1", name)}
    alts = "|".join(re.escape(f) for f in sorted(forms, key=len, reverse=True))
    return re.compile(rf"(?<![\w~{{/]){'(?:' + alts + ')'}(?![\w}}])")


def quantities(passage: str, unit: str) -> list[float]:
    return [float(n) * PREFIX[p] for n, p, u in QUANTITY.findall(passage) if u == unit]


def in_window(value: float, bounds) -> bool:
    low, high = (part_value(b) for b in bounds)
    return low * 0.9999 <= value <= high * 1.0001


# ---- which rules a write-up answers for ----------------------------------------------

def rule_unit(rule: dict) -> str:
    if rule["kind"] == "decoupled":
        return "F"
    return UNIT_OF_CLASS[rule.get("via", "R")]


def from_datasheet(rule: dict) -> bool:
    """A rule whose figure a datasheet gives. A value the task itself states (its `why`
    starts "the task:", such as 10 µF on the input rail) is the task's, not the part's; a
    rule on a net alone is a datasheet's only where NET_OWNERS says whose."""
    if "range" not in rule or str(rule.get("why", "")).startswith("the task"):
        return False
    return bool(rule.get("part")) or rule.get("net") in NET_OWNERS


def rule_cases() -> list[tuple[str, dict, dict]]:
    return [(meta["id"], meta, rule) for meta in board_tasks()
            for rule in meta.get("criteria", []) if from_datasheet(rule)]


def owners(meta: dict, rule: dict) -> tuple[list[str], list[str] | None]:
    """The write-ups that must carry the rule's figure, and the pins a passage must name
    (None: anywhere in the write-up). A rule on an IC: that IC's write-up, at its pins. A
    rule on a generic part (a crystal): the ICs the task's rules connect that part to. A
    rule on a net: the IC NET_OWNERS names."""
    part = rule.get("part")
    if part is None:
        return [NET_OWNERS[rule["net"]]], None
    if not is_generic(part):
        glob = str(rule.get("pins", rule.get("pin")))
        names = sorted({n for num, n in symbol_pins(part)
                        if num == glob or fnmatchcase(n, glob)})
        return [symbol_of(part)], names
    ics = [symbol_of(p) for other in meta["criteria"] if part in rule_parts(other)
           for p in rule_parts(other) if not is_generic(p)]
    return sorted(set(ics)), None


def derived_key(rule: dict) -> tuple[str, str, str] | None:
    if not rule.get("part"):
        return None
    to = rule.get("to")
    end = (f"{symbol_of(to['part'])}.{to.get('pin')}" if isinstance(to, dict)
           else "GND" if to == "GND" else "*")
    key = (symbol_of(rule["part"]), str(rule.get("pins", rule.get("pin"))), end)
    return key if key in DERIVED else None


def findings(meta: dict, rule: dict) -> list[str]:
    """What the write-ups lack for this rule; empty when a reader finds it."""
    docs, pins = owners(meta, rule)
    if not docs:
        return [f"no IC of {meta['id']} to carry {rule['id']}"]
    texts = {d: (FULL / f"{d}.md").read_text(encoding="utf-8")
             for d in docs if (FULL / f"{d}.md").is_file()}
    if not texts:
        return [f"no write-up among {docs}"]
    key = derived_key(rule)

    def found(text: str, pin: str | None) -> bool:
        spots = passages(text)
        if pin is not None:
            rx = pin_pattern(pin)
            spots = [s for s in spots if rx.search(s)]
        if key:
            return all(any(re.search(a, s) for s in spots) for a in DERIVED[key])
        return any(in_window(v, rule["range"]) for s in spots
                   for v in quantities(s, rule_unit(rule)))

    want = " and ".join(DERIVED[key]) if key else f"a value in {rule['range']} {rule_unit(rule)}"
    if pins is None:
        return [] if any(found(t, None) for t in texts.values()) else [
            f"{rule['id']}: {want} in none of {sorted(texts)}"]
    (doc, text), = texts.items()
    return [f"{rule['id']}: {doc}.md has no passage naming {pin} with {want}"
            for pin in pins if not found(text, pin)]


# ---- the tests ----------------------------------------------------------------------

def test_every_named_ic_has_a_full_write_up():
    ics = named_ics()
    assert {"DRV8833PWP", "RP2040", "TJA1051T-3"} <= set(ics)  # the tasks were read
    missing = sorted(s for s in ics if not (FULL / f"{s}.md").is_file())
    assert not missing, f"no tasks/datasheets/full/ write-up for {missing}"
    # The board tier's notes and the spec tier's write-ups cover the same parts.
    notes = {p.stem for p in NOTES.glob("*.md")}
    assert notes <= {p.stem for p in FULL.glob("*.md")}, notes - {p.stem for p in FULL.glob("*.md")}


@pytest.mark.parametrize("symbol", sorted(named_ics()))
def test_write_up_has_a_datasheets_shape(symbol):
    path = FULL / f"{symbol}.md"
    text = path.read_text(encoding="utf-8")
    lines = text.count("\n")
    assert MIN_LINES <= lines <= MAX_LINES, f"{path.name}: {lines} lines"
    headings = [h.lower() for h in sections(text)]
    at = -1
    for want in SECTIONS:
        hits = [i for i, h in enumerate(headings) if h.startswith(want.lower())]
        assert hits, f"{path.name}: no section {want!r}"
        assert hits[0] > at, f"{path.name}: {want!r} out of a datasheet's order"
        at = hits[0]
    for want in ("Absolute maximum ratings", "Recommended operating conditions",
                 "Electrical characteristics"):
        body = section(text, want)
        assert "|" in body and re.search(r"\|\s*Min", body, re.I), f"{path.name}: {want} table"
    # A datasheet, not a checklist: no schematic notes, no bold warnings.
    assert "**" not in text and "notes for the schematic" not in text.lower(), path.name


@pytest.mark.parametrize("symbol", sorted(named_ics()))
def test_pin_table_lists_every_pin_of_the_kicad_symbol(symbol):
    lib_id = named_ics()[symbol]
    text = (FULL / f"{symbol}.md").read_text(encoding="utf-8")
    want, got = set(symbol_pins(lib_id)), table_pins(text)
    assert want, f"{lib_id}: akcli read no pins"
    assert not want - got, f"{symbol}.md: pins missing from the table: {sorted(want - got)}"
    assert not got - want, f"{symbol}.md: pins not in {lib_id}: {sorted(got - want)}"


@pytest.mark.parametrize("task,meta,rule", rule_cases(),
                         ids=[f"{t}:{r['id']}" for t, _, r in rule_cases()])
def test_each_rules_figure_is_in_the_write_up(task, meta, rule):
    assert not findings(meta, rule)


def test_a_figure_dropped_from_a_write_up_is_found(tmp_path, monkeypatch):
    """The checker sees a missing figure: VINT's 2.2 µF taken out of every passage."""
    meta = next(m for m in board_tasks() if m["id"] == "b06-motor-driver")
    rule = next(r for r in meta["criteria"] if r["id"] == "vint")
    assert not findings(meta, rule)
    for path in FULL.glob("*.md"):
        text = path.read_text(encoding="utf-8")
        if path.stem == "DRV8833PWP":
            text = text.replace("2.2 µF", "a").replace("2.2-µF", "a")
        (tmp_path / path.name).write_text(text, encoding="utf-8")
    monkeypatch.setattr(sys.modules[__name__], "FULL", tmp_path)
    assert findings(meta, rule) == [
        "vint: DRV8833PWP.md has no passage naming VINT with a value in ['2u', '2.5u'] F"]


def test_one_symbol_cut_out_reads_as_the_whole_library():
    """symbol_pins hands akcli one symbol and its base: the same pins as KiCad's file
    (AP2112K-3.3 extends AP2204K-1.5, so this covers the base too)."""
    from wirebench.taskgen.layout import pin_table

    lib_id = "Regulator_Linear:AP2112K-3.3"
    whole = pin_table(lib_id, [str(kicad_dir() / "Regulator_Linear.kicad_sym")])
    assert symbol_pins(lib_id) == tuple((p["number"], p["name"]) for p in whole)
