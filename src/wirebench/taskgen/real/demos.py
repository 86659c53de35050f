"""Debian's kicad-demos, read by akcli and redrawn by akcli as a base sheet.

akcli 0.22 cannot edit a KiCad 6 demo in place (INVALID_INSTANCES_PATH: KiCad 6 keeps the
symbol instances at the root sheet), so a task's base sheet is the demo's netlist drawn
again on a fresh sheet: every part with its value, a label on every connected pin (the
layout that survives akcli's arrange), a no-connect on every other pin. Named nets keep
their names; an unnamed net of two pins or more is named `N<k>`, numbered in the order of
its first member, so that every net of the design is compared by name and membership.

The symbols are the demo's own: the `lib_symbols` its sheets embed, copied into one
`.kicad_sym` library (akcli reads a `.kicad_sch` template too, but parses the whole sheet
for every part it places: 91 s for pic_programmer against 5 s from the library).

Nothing here is committed: the demos are GPL, and so is what is derived from them. The
library and the base sheet are written only into the user's task folder.
"""

from __future__ import annotations

import functools
import re
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from wirebench.taskgen.layout import Part, envelope, ops_for, pin_table

DEFAULT_DIR = "/usr/share/kicad/demos"
INSTALL_HINT = "install Debian's kicad-demos (apt-get install kicad-demos)"


@dataclass(frozen=True)
class Demo:
    name: str
    folder: str
    sheets: tuple[str, ...]     # the root first: akcli reads the hierarchy from it
    what: str                   # what the design is, in our own words
    # Text replaced in a scratch copy of the root sheet before akcli reads it: akcli 0.22
    # finds a sub-sheet only by the English field name "Sheet file", and the coldfire
    # kit's root spells it in French, so akcli read 116 of its 276 symbols.
    renames: tuple[tuple[str, str], ...] = ()
    # The volts of the supplies whose names carry no figure (VCC), as the design makes
    # them: a change request on a rail states its voltage (faults.rail_volts).
    volts: tuple[tuple[str, float], ...] = ()


# The demos akcli reads faithfully. Left out: complex_hierarchy (one sheet used twice:
# akcli 0.22 gives both instances the same designators, C3 twice), sonde xilinx (akcli
# puts U1.7 and U1.14 on two nets each), test_xil_95108 (no component list), electric
# (its designators, ER1 or EQ1a101, are none of the kinds the faults plant).
DEMOS = (
    Demo("ecc83", "ecc83", ("ecc83-pp.kicad_sch",),
         "a push-pull audio amplifier built around one ECC83 double triode"),
    Demo("pic_programmer", "pic_programmer", ("pic_programmer.kicad_sch", "pic_sockets.kicad_sch"),
         "a PIC programmer driven from a PC's serial port, with a switch-mode converter "
         "that makes the programming voltage VPP, and sockets for several PIC packages",
         volts=(("VCC", 5.0), ("VCC_PIC", 5.0))),  # a 7805's output; VCC through JP1
    Demo("interf_u", "interf_u", ("interf_u.kicad_sch",),
         "an interface card between a PC's parallel port and an FPGA with its "
         "configuration memory",
         volts=(("VCC", 5.0),)),  # the ISA bus's +5 V
    Demo("electric", "electric", ("electric.kicad_sch",),
         "a single-phase distribution board: a main breaker, residual-current devices and "
         "the branch breakers of a house's circuits"),
    Demo("stickhub", "stickhub", ("StickHub.kicad_sch",),
         "a seven-port USB 2.0 hub on a stick, with its regulators and a status LED per "
         "port"),
    Demo("flat_hierarchy", "flat_hierarchy",
         ("flat_hierarchy.kicad_sch", "pic_programmer.kicad_sch", "pic_sockets.kicad_sch"),
         "the serial-port PIC programmer again, drawn as a flat hierarchy of sheets",
         volts=(("VCC", 5.0), ("VCC_PIC", 5.0))),
    Demo("kit-dev-coldfire-xilinx_5213", "kit-dev-coldfire-xilinx_5213",
         ("kit-dev-coldfire-xilinx_5213.kicad_sch", "in_out_conn.kicad_sch",
          "xilinx.kicad_sch"),
         "a development kit for a ColdFire MCF5213 microcontroller with a Xilinx CPLD: "
         "its supplies, reset and clock, a BDM debug port, serial and CAN transceivers and "
         "their jumpers",
         renames=(('(property "Fichier de feuille"', '(property "Sheet file"'),
                  ('(property "Nom feuille"', '(property "Sheet name"'))),
    Demo("video", "video",
         ("video.kicad_sch", "bus_pci.kicad_sch", "esvideo.kicad_sch", "graphic.kicad_sch",
          "modul.kicad_sch", "muxdata.kicad_sch", "pal-ntsc.kicad_sch", "rams.kicad_sch"),
         "a PCI video card: a PCI bridge chip, video decoder and encoder, a RAMDAC, "
         "FPGAs with their configuration memory, and banks of SIMM memory"),
)
BY_NAME = {d.name: d for d in DEMOS}


@dataclass
class Design:
    demo: Demo
    parts: list[Part]                       # real parts, in designator order
    library: str                            # the .kicad_sym text
    named: set[str] = field(default_factory=set)   # nets named in the demo itself
    symbols_total: int = 0                  # akcli's component count, power ports too
    base_ops: list[dict] = field(default_factory=list)
    layout_left: list[str] = field(default_factory=list)  # akcli's findings on the base
    # A part whose units all carry one pin (a 74xx's supply): it is labelled once, and
    # akcli's rails then see any edit of the sheet as a split of that pin's net.
    shared_pins: bool = False
    drawn_values: dict = field(default_factory=dict)  # each part's value as akcli reads it back

    @functools.cached_property
    def ohmmeter(self):
        """What an ohmmeter reads on the board as designed (taskgen/real/ohmmeter.py)."""
        from wirebench.taskgen.real.ohmmeter import Ohmmeter

        return Ohmmeter(self)

    def part(self, ref: str) -> Part:
        return next(p for p in self.parts if p.ref == ref)

    def nets(self) -> dict[str, list[str]]:
        out: dict[str, list[str]] = {}
        for p in self.parts:
            for pin, net in p.pins.items():
                out.setdefault(net, []).append(f"{p.ref}.{pin}")
        return out


def natural(text: str):
    return [int(t) if t.isdigit() else t for t in re.split(r"(\d+)", text)]


def available(demos_dir: Path) -> list[Demo]:
    return [d for d in DEMOS if all((Path(demos_dir) / d.folder / s).is_file()
                                    for s in d.sheets)]


# ---- the demo's symbols as one library --------------------------------------------------

def _span(text: str, start: int) -> int:
    """The end of the S-expression that opens at `start` (strings and escapes skipped)."""
    depth, i, in_str = 0, start, False
    while i < len(text):
        ch = text[i]
        if in_str:
            if ch == "\\":
                i += 2
                continue
            in_str = ch != '"'
        elif ch == '"':
            in_str = True
        elif ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
            if depth == 0:
                return i + 1
        i += 1
    raise ValueError("unbalanced S-expression")


def lib_symbols(sheet_text: str) -> list[str]:
    """The `(symbol ...)` nodes a sheet's `(lib_symbols ...)` embeds, as text."""
    start = sheet_text.find("(lib_symbols")
    if start < 0:
        return []
    end = _span(sheet_text, start)
    out, i = [], sheet_text.index("(", start + 1)
    while (j := sheet_text.find("(", i, end - 1)) >= 0:
        k = _span(sheet_text, j)
        out.append(sheet_text[j:k])
        i = k
    return out


# A symbol's datasheet link: a task holds no network address (tasks check refuses one),
# so it becomes KiCad's "no datasheet", `~`.
URL = re.compile(r'"[a-z]+://[^"]*"')


def library_text(paths: list[Path]) -> str:
    symbols: dict[str, str] = {}
    for path in paths:
        for node in lib_symbols(path.read_text(encoding="utf-8")):
            m = re.match(r'\(symbol\s+"([^"]+)"', node)
            if m:
                symbols.setdefault(m.group(1), URL.sub('"~"', node))
    return ("(kicad_symbol_lib (version 20211014) (generator wirebench)\n  "
            + "\n  ".join(symbols[k] for k in sorted(symbols)) + "\n)\n")


# ---- the demo's netlist -------------------------------------------------------------------

def hidden_power_pins(paths: list[Path]) -> dict[str, tuple[bool, dict[str, str]]]:
    """{lib_id: (is a power symbol, {pin number: pin name})} for every embedded symbol
    with hidden power-input pins. KiCad joins each such pin to the global net of its
    name; akcli 0.22 does that only for symbols flagged `(power)`, so it leaves a chip's
    hidden VCC and GND pins unconnected (132 of them in video) and splits a net that a
    plain symbol names (pic_programmer's VPP, in three pieces)."""
    out: dict[str, tuple[bool, dict[str, str]]] = {}
    for path in paths:
        for node in lib_symbols(path.read_text(encoding="utf-8")):
            head = re.match(r'\(symbol\s+"([^"]+)"\s*(\(power\))?', node)
            pins: dict[str, str] = {}
            for m in re.finditer(r"\(pin power_in ", node):
                pin = node[m.start():_span(node, m.start())]
                name = re.search(r'\(name "([^"]*)"', pin)
                number = re.search(r'\(number "([^"]*)"', pin)
                if re.search(r"\)\s+hide\s", pin) and name and number and name.group(1):
                    pins[number.group(1)] = name.group(1)
            if head and pins:
                out.setdefault(head.group(1), (bool(head.group(2)), pins))
    return out


def read(demo: Demo, demos_dir: Path) -> Design:
    """The demo's parts, values and nets as akcli reads its root sheet."""
    from wirebench.runtime import akcli_backend

    folder = Path(demos_dir) / demo.folder
    with tempfile.TemporaryDirectory(prefix="wirebench-demo-") as td:
        root = str(folder / demo.sheets[0])
        if demo.renames:
            # The copied root names its sub-sheets by relative path: they go beside it.
            for name in demo.sheets:
                text = (folder / name).read_text(encoding="utf-8")
                for old, new in demo.renames if name == demo.sheets[0] else ():
                    text = text.replace(old, new)
                (Path(td) / name).write_text(text, encoding="utf-8")
            root = str(Path(td) / demo.sheets[0])
        comps = akcli_backend.run("component", root)
        nets = akcli_backend.run("nets", root)
    if comps.rc != 0 or nets.rc != 0:
        raise ValueError(f"{folder / demo.sheets[0]}: akcli cannot read it: "
                         f"{(comps if comps.rc else nets).error_text()}")
    components = comps.json()["components"]
    hidden = hidden_power_pins([folder / s for s in demo.sheets])
    parts: dict[str, Part] = {}
    for c in components:
        ref = c["designator"]
        # Not a part without pins (a mounting hole, a logo): it has no net to draw.
        if not ref.startswith("#") and ref not in parts and c.get("pins") != 0:
            parts[ref] = Part(ref, c["library_ref"], c.get("value"))
    plain = {c["designator"]: hidden[c["library_ref"]][1] for c in components
             if c["designator"].startswith("#") and not hidden.get(c["library_ref"], (1,))[0]}
    named = {n["name"] for n in nets.json()["nets"] if n.get("name")}
    unnamed = []
    for n in nets.json()["nets"]:
        members = sorted((m for m in n["members"] if not m.startswith("#")), key=natural)
        # A plain symbol's hidden power pin names its net, as KiCad has it (VPP).
        alias = [plain[r][p] for r, _, p in (m.partition(".") for m in n["members"])
                 if p in plain.get(r, {})]
        if not members:
            continue
        if alias and not n.get("name"):
            n = {**n, "name": alias[0]}
            named.add(alias[0])
        if n.get("name"):
            for m in members:
                ref, pin = m.split(".", 1)
                parts[ref].pins[pin] = n["name"]
        elif len(members) > 1:  # a pin alone on a net is unconnected: a no-connect
            unnamed.append(members)
    # A chip's hidden power pins, which akcli leaves unconnected, on the nets they name.
    for part in parts.values():
        for number, name in hidden.get(part.lib_id, (True, {}))[1].items():
            if number not in part.pins and not hidden[part.lib_id][0]:
                part.pins[number] = name
                named.add(name)
    k = 0
    for members in sorted(unnamed, key=lambda ms: natural(ms[0])):
        k += 1
        while f"N{k}" in named:
            k += 1
        for m in members:
            ref, pin = m.split(".", 1)
            parts[ref].pins[pin] = f"N{k}"
    design = Design(demo, sorted(parts.values(), key=lambda p: natural(p.ref)),
                    library_text([folder / s for s in demo.sheets]), named,
                    symbols_total=len(components))
    return design


# ---- the base sheet -------------------------------------------------------------------------

def _dedupe(ops: list[dict]) -> list[dict]:
    """One label (or no-connect) per pin: a pin every unit of a part carries (a 74xx's
    supply) is listed by each unit."""
    seen, out = set(), []
    for op in ops:
        key = None
        if op["op"] == "add_net_label" and isinstance(op.get("at"), str):
            key = op["at"]
        elif op["op"] == "add_no_connect":
            key = op["pin"]
        if key is not None:
            if key in seen:
                continue
            seen.add(key)
        out.append(op)
    return out


APART_GAP = 3000  # mil between the rows of parts laid out on their own


def layout(design: Design, libraries: list[str], title: str,
           apart: frozenset[str] = frozenset()) -> list[dict]:
    """The parts packed in rows; those in `apart` (their bodies reach past their pins
    onto a neighbour) each on a row of its own below the rest."""
    # A fault renames a small part's labels on the sheet laid out for the right names: if
    # its room followed its own labels, the spacing would tell the original names' length
    # (a trial agent read a moved part off it). Every part a fault can move gets the room
    # of the longest name any such part carries.
    small = [p for p in design.parts if len(p.pins) <= 3]
    chars = max((len(n) for p in small for n in p.pins.values()), default=0)
    ops = ops_for([p for p in design.parts if p.ref not in apart], libraries, title,
                  min_chars=lambda part: chars if len(part.pins) <= 3 else 0)
    top = max((op["y_mil"] for op in ops if op["op"] == "place_component"),
              default=0) + APART_GAP
    for part in (p for p in design.parts if p.ref in apart):
        ops += ops_for([part], libraries, None, top)
        ys = [pin["y_mil"] for pin in pin_table(part.lib_id, libraries)] or [0]
        top += max(ys) - min(ys) + 2 * APART_GAP
    kept = _dedupe(ops)
    design.shared_pins = len(kept) < len(ops)
    return kept


def _pin_points(ops: list[dict], libraries: list[str]) -> dict[tuple[int, int], str]:
    """Where each placed part's pins land (rotation 0, as the layout places them)."""
    points = {}
    for op in ops:
        if op["op"] != "place_component":
            continue
        for pin in pin_table(op["lib_id"], libraries):
            if (pin.get("unit") or 1) == op.get("unit", pin.get("unit") or 1):
                points[(op["x_mil"] + pin["x_mil"], op["y_mil"] + pin["y_mil"])] = \
                    op["designator"]
    return points


def layout_findings(ops: list[dict], library: Path) -> list[str]:
    """akcli's layout findings on the drawn base; its parts' values and its nets as akcli
    reads them back are kept on the function (.values, .nets)."""
    from wirebench.runtime import akcli_backend

    with tempfile.TemporaryDirectory(prefix="wirebench-real-") as td:
        sheet, doc = Path(td) / "base.kicad_sch", Path(td) / "base_ops.json"
        from wirebench.taskgen.layout import dumps

        doc.write_text(dumps(envelope(ops)), encoding="utf-8")
        akcli_backend.new_sheet(sheet)
        res = akcli_backend.draw(sheet, doc, [str(library)])
        if res.rc != 0:
            raise ValueError(f"{library.parent.name}: the base sheet does not draw: "
                             f"{res.error_text()}")
        check = akcli_backend.run("check", "--layout", str(sheet)).json() or {}
        read = akcli_backend.run("read", str(sheet)).json() or {}
        layout_findings.nets = akcli_backend.nets(sheet).json() or {}
    layout_findings.values = {c["designator"]: c.get("value")
                              for c in read.get("components", []) if c.get("designator")}
    return [f"{f['code']}: {f['message']}" for f in check.get("findings", [])
            if f.get("severity") in ("warning", "error")]


def base_sheet(design: Design, library: Path, rounds: int = 3) -> list[dict]:
    """The base op-list, laid out clean: a part whose labels overlap or run over a body
    gets its labels at the end of short wire stubs instead, and a part whose body
    overlaps another's goes on a row of its own, until akcli finds nothing. What akcli
    still finds then is kept in `design.layout_left` (its tasks are exempt from
    layout_clean, and say why). The drawn base must have the demo's netlist, every net
    by its pins: a base that does not is refused, naming the first difference."""
    libraries = [str(library)]
    title = f"{design.demo.name} (redrawn from KiCad's demo)"
    for p in design.parts:
        if re.search(r"LED", p.lib_id.split(":")[-1], re.I):
            p.stub = True  # its body reaches past the cathode pin (DESIGN.md)
    apart: set[str] = set()
    refs = {p.ref for p in design.parts}
    for i in range(rounds + 1):
        ops = layout(design, libraries, title, frozenset(apart))
        found = layout_findings(ops, library)
        design.base_ops, design.layout_left = ops, found
        design.drawn_values = layout_findings.values
        if not found or i == rounds:
            break
        points = _pin_points(ops, libraries)
        blame, overlap = set(), set()
        for text in found:
            named = {w for w in re.findall(r"[A-Za-z_][A-Za-z0-9_]*", text) if w in refs}
            if text.startswith("LAYOUT_SYMBOL_OVERLAP"):
                overlap |= named
                continue
            for x, y in re.findall(r"\((-?\d+),\s*(-?\d+)\)", text):
                if (int(x), int(y)) in points:
                    blame.add(points[(int(x), int(y))])
            blame |= named
        # Stubs only on small parts: the layout points a stub away from the symbol's
        # origin, which a demo's IC may have at a corner (the coldfire kit's MCF5213),
        # and a stub run along a row of pins joins their nets.
        fresh = [p for p in design.parts if p.ref in blame and not p.stub
                 and len(p.pins) <= 3]
        if not fresh and overlap <= apart:
            break
        for p in fresh:
            p.stub = True
        apart |= overlap
    _same_netlist(design, layout_findings.nets)
    return design.base_ops


def _same_netlist(design: Design, nets_doc: dict) -> None:
    from wirebench.verify.scoring import compare, observed_named_nets, observed_unnamed_nets

    want = {n: frozenset(ms) for n, ms in design.nets().items() if len(ms) > 1}
    got = {n: ms for n, ms in observed_named_nets(nets_doc).items() if len(ms) > 1}
    diff = compare(want, got, observed_unnamed_nets(nets_doc))
    if not diff["passed"]:
        raise ValueError(f"{design.demo.name}: the redrawn base does not have the demo's "
                         f"netlist ({len(diff['mismatches'])} difference(s)): "
                         + "; ".join(m[:200] for m in diff["mismatches"][:3]))
