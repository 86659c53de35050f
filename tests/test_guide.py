"""The guide agents read (skills/akcli-oplists.md) against akcli itself: each statement
that an agent found wrong once is checked here, so that the next akcli release that
changes the behaviour turns this red before it misleads an agent again."""

from __future__ import annotations

import json
import re
import subprocess

from conftest import REPO, SYMBOLS, TASKS

GUIDE = (REPO / "skills" / "akcli-oplists.md").read_text()


def akcli(*args, cwd=None):
    return subprocess.run(["akcli", *args], capture_output=True, text=True, cwd=cwd)


def _validate(tmp_path, ops: list[dict]):
    path = tmp_path / "ops.json"
    path.write_text(json.dumps({"protocol_version": 2, "target_format": "kicad", "ops": ops}))
    return akcli("ops", "validate", str(path))


def test_a_label_takes_rotation_but_connect_and_label_still_takes_orientation(tmp_path):
    label = _validate(tmp_path, [{"op": "add_net_label", "name": "X", "at": [1000, 1000],
                                  "orientation": 90}])
    assert label.returncode != 0 and "renamed to 'rotation'" in label.stdout + label.stderr
    template = json.loads(akcli("ops", "template", "connect_and_label").stdout)
    assert "orientation" in template["ops"][0]
    macro = _validate(tmp_path, [
        {"op": "place_component", "lib_id": "Device:R", "designator": "R1",
         "x_mil": 1000, "y_mil": 1000},
        {"op": "place_component", "lib_id": "Device:R", "designator": "R2",
         "x_mil": 2000, "y_mil": 1000},
        {"op": "connect_and_label", "from": "R1.1", "to": "R2.1", "net": "N",
         "orientation": 0}])
    assert macro.returncode == 0, macro.stdout + macro.stderr
    assert "connect_and_label` macro is the exception: it still\n  takes `orientation`" in GUIDE


def test_the_templates_carry_a_target_file_the_guide_says_to_drop():
    template = json.loads(akcli("ops", "template", "add_net_label").stdout)
    assert "target_file" in template
    assert "`akcli ops template OP` prints\n  one" in GUIDE


def test_arrange_repacks_the_parts_inside_a_group(tmp_path):
    """Two resistors stacked in one group come out of `arrange --groups --apply` no longer
    stacked: the guide must not call a group a rigid block."""
    ops = {"protocol_version": 2, "target_format": "kicad",
           "groups": {"A": {"origin": [1000, 1000], "title": "A"},
                      "B": {"origin": [4000, 1000], "title": "B"}},
           "ops": [
               {"op": "place_component", "group": "A", "lib_id": "Device:R",
                "designator": "R1", "x_mil": 0, "y_mil": 0, "value": "1k"},
               {"op": "place_component", "group": "A", "lib_id": "Device:R",
                "designator": "R2", "x_mil": 0, "y_mil": 800, "value": "1k"},
               {"op": "add_net_label", "group": "A", "name": "TOP", "at": "R1.1"},
               {"op": "add_net_label", "group": "A", "name": "MID", "at": "R1.2"},
               {"op": "add_net_label", "group": "A", "name": "MID", "at": "R2.1"},
               {"op": "add_net_label", "group": "A", "name": "GND", "at": "R2.2"},
               {"op": "place_component", "group": "B", "lib_id": "Device:C",
                "designator": "C1", "x_mil": 0, "y_mil": 0, "value": "1u"},
               {"op": "add_net_label", "group": "B", "name": "MID", "at": "C1.1"},
               {"op": "add_net_label", "group": "B", "name": "GND", "at": "C1.2"}]}
    (tmp_path / "ops.json").write_text(json.dumps(ops))
    symbols = [a for s in SYMBOLS for a in ("--symbols", s)]
    assert akcli("new", "s.kicad_sch", cwd=tmp_path).returncode == 0
    drawn = akcli("draw", "s.kicad_sch", "--ops", "ops.json", "--apply", "--no-erc", *symbols,
                  cwd=tmp_path)
    assert drawn.returncode == 0, drawn.stderr

    def offset():
        doc = json.loads(akcli("read", "s.kicad_sch", "--json", cwd=tmp_path).stdout)
        at = {c["designator"]: c["x_mil"] for c in doc["components"]}
        return at["R2"] - at["R1"]

    before = offset()
    arranged = akcli("arrange", "s.kicad_sch", "--groups", "--apply", *symbols, cwd=tmp_path)
    assert arranged.returncode == 0, arranged.stdout + arranged.stderr
    assert offset() != before, "arrange kept the group rigid: revisit the guide"
    nets = json.loads(akcli("nets", "s.kicad_sch", "--json", cwd=tmp_path).stdout)["nets"]
    assert {n["name"]: sorted(n["members"]) for n in nets}["MID"] == ["C1.1", "R1.2", "R2.1"]
    assert "*and the parts inside each group*" in GUIDE


# --- The quirks a correct answer meets, as the guide teaches them (akcli 0.22) --------
# Each test draws what the guide says with real akcli and KiCad's own symbols (copied,
# one symbol at a time, out of Debian's kicad-symbols into the test's folder, so a draw
# takes a second), and draws the wrong way too: if akcli changes, one of the two flips.

from pathlib import Path  # noqa: E402

import pytest  # noqa: E402

KICAD = Path("/usr/share/kicad/symbols")
needs_kicad = pytest.mark.skipif(not (KICAD / "Device.kicad_sym").is_file(),
                                 reason="KiCad's libraries are not installed (kicad-symbols)")


def _sexpr_end(text: str, start: int) -> int:
    depth, i = 0, start
    while True:
        c = text[i]
        if c == '"':
            i += 1
            while text[i] != '"':
                i += 2 if text[i] == "\\" else 1
        elif c == "(":
            depth += 1
        elif c == ")":
            depth -= 1
            if depth == 0:
                return i + 1
        i += 1


def kicad_symbols(folder: Path, *lib_ids: str) -> list[str]:
    """Small libraries holding just these KiCad symbols (and the ones they extend)."""
    by_lib: dict[str, list[str]] = {}
    for lib_id in lib_ids:
        lib, name = lib_id.split(":")
        by_lib.setdefault(lib, []).append(name)
    paths = []
    for lib, names in by_lib.items():
        text = (KICAD / f"{lib}.kicad_sym").read_text()
        blocks: dict[str, str] = {}
        todo = list(names)
        while todo:
            name = todo.pop()
            if name in blocks:
                continue
            start = text.index(f'\n  (symbol "{name}"') + 3
            blocks[name] = text[start:_sexpr_end(text, start)]
            todo += re.findall(r'\(extends "([^"]+)"\)', blocks[name])
        order = sorted(blocks, key=lambda n: "(extends" in blocks[n])  # bases first
        path = folder / f"{lib}.kicad_sym"
        path.write_text("(kicad_symbol_lib (version 20211014) (generator wirebench-test)\n"
                        + "\n".join("  " + blocks[n] for n in order) + "\n)\n")
        paths.append(str(path))
    return paths


def draw(folder: Path, ops: list[dict], symbols: list[str]) -> dict:
    """Draw `ops` on a fresh sheet; its named nets and its ERC and layout findings."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "ops.json").write_text(json.dumps(
        {"protocol_version": 2, "target_format": "kicad", "ops": ops}))
    assert akcli("new", "s.kicad_sch", cwd=folder).returncode == 0
    flags = [a for s in symbols for a in ("--symbols", s)]
    drawn = akcli("draw", "s.kicad_sch", "--ops", "ops.json", "--apply", "--no-erc", *flags,
                  cwd=folder)
    assert drawn.returncode == 0, drawn.stdout[-800:] + drawn.stderr[-800:]
    nets = json.loads(akcli("nets", "s.kicad_sch", "--json", cwd=folder).stdout)["nets"]
    out = {"nets": {n["name"]: sorted(n["members"]) for n in nets if n.get("name")}}
    for flag in ("--erc", "--layout"):
        doc = json.loads(akcli("check", flag, "s.kicad_sch", "--json", cwd=folder).stdout)
        out[flag[2:]] = [f"{f['code']} ({f['severity']}): {f['message']}"
                         for f in doc["findings"] if f["severity"] in ("warning", "error")]
    return out


def codes(findings: list[str]) -> set[str]:
    return {f.split(" ", 1)[0] for f in findings}


def place(lib_id, ref, x, y, **kw):
    return {"op": "place_component", "lib_id": lib_id, "designator": ref,
            "x_mil": x, "y_mil": y, **kw}


def label(name, at, **kw):
    return {"op": "add_net_label", "name": name, "at": at, **kw}


def test_value_spellings_the_guide_lists_mean_what_it_says(tmp_path):
    """akcli's simulator reads 4k7, 0R2, 2u2, 1M (mega), 1Meg, µ and m (milli) as the
    guide says: the deck akcli builds shows the numbers."""
    from wirebench.verify.criteria import same_value

    spelled = {"4k7": "4.7k", "0R2": "200m", "2u2": "2.2u", "1M": "1MEG", "1Meg": "1MEG",
               "2.2µ": "2.2u", "1m": "1m", "27p": "27p"}
    ops, node = [], "VIN"
    for i, value in enumerate(spelled, start=1):
        ops += [place("Device:R", f"R{i}", 1000 + 600 * i, 1000, value=value),
                label(node, f"R{i}.1"), label(f"N{i}", f"R{i}.2")]
        node = f"N{i}"
    ops += [place("Device:R", "R99", 1000, 2000, value="1k"), label(node, "R99.1"),
            label("GND", "R99.2")]
    draw(tmp_path, ops, SYMBOLS)
    (tmp_path / "sim.json").write_text(json.dumps(
        {"protocol_version": 1, "analyses": {"op": ""},
         "stimuli": [{"name": "VS", "kind": "vsource", "node": "VIN", "node2": "GND",
                      "value": "DC 1"}]}))
    deck = akcli("sim", "s.kicad_sch", "--sim", "sim.json", "--deck-only", cwd=tmp_path)
    lines = {ln.split()[0]: ln.split()[-1] for ln in deck.stdout.splitlines()
             if ln.startswith("R")}
    for i, (value, spice) in enumerate(spelled.items(), start=1):
        assert lines[f"R{i}"] == spice, (value, lines[f"R{i}"])
        assert same_value(value, spice.replace("MEG", "Meg")), value
    assert "`M` is mega (`1M` and `1Meg` are both 1 MΩ) and `m` is milli" in GUIDE


@needs_kicad
@pytest.mark.slow
def test_a_pin_label_without_rotation_points_away_and_a_guessed_one_can_collide(tmp_path):
    """Labels on a connector's pins (100 mil apart, on its left side): left out, the
    writer points them away; 180 runs left (clean), 0 runs right into the part, 90 and
    270 run vertically into each other."""
    libs = kicad_symbols(tmp_path, "Connector_Generic:Conn_01x04")
    found = {}
    for rotation in (None, 0, 90, 180, 270):
        extra = {} if rotation is None else {"rotation": rotation}
        ops = [place("Connector_Generic:Conn_01x04", "J1", 1000, 1000)]
        ops += [label(f"SIG_{i}", f"J1.{i}", **extra) for i in range(1, 5)]
        found[rotation] = codes(draw(tmp_path / f"r{rotation}", ops, libs)["layout"])
    assert found == {None: set(), 180: set(), 0: {"LAYOUT_LABEL_OVER_SYMBOL"},
                     90: {"LAYOUT_LABEL_OVERLAP"}, 270: {"LAYOUT_LABEL_OVERLAP"}}
    assert "On a pin, **leave `rotation` out**" in GUIDE
    assert "0 to the right, 180 to the left,\n  90 and 270 vertically" in GUIDE


def test_two_facing_labels_need_the_sum_of_their_lengths_between_them(tmp_path):
    """Two resistors side by side, their facing pins 500 mil apart, each labelled without
    `rotation` (so each label points at the other): by the guide's figures, two names of
    ten letters in all fit (486 mil) and eleven do not (531); so do the same names with
    the pins 400 mil apart."""
    m = re.search(r"run (\d+) mil a character plus (\d+) mil from its anchor", GUIDE)
    assert m and "at least the sum of\n  their lengths apart" in GUIDE
    per_char, lead = int(m[1]), int(m[2])

    def length(name):
        return per_char * len(name) + lead

    found = {}
    for left, right, apart in (("SIG_A", "SIG_B", 500), ("SIG_AA", "SIG_B", 500),
                               ("SIG_A", "SIG_B", 400)):
        # Device:R turned 90: pins 150 mil either side of the part's point.
        ops = [place("Device:R", "R1", 1000, 1000, rotation=90),
               place("Device:R", "R2", 1300 + apart, 1000, rotation=90),
               label("END_1", "R1.1"), label(left, "R1.2"),
               label(right, "R2.1"), label("END_2", "R2.2")]
        layout = draw(tmp_path / f"{left}-{apart}", ops, SYMBOLS)["layout"]
        found[left, apart] = codes(layout)
        fits = length(left) + length(right) <= apart
        assert found[left, apart] == (set() if fits else {"LAYOUT_LABEL_OVERLAP"}), layout
    assert found == {("SIG_A", 500): set(), ("SIG_AA", 500): {"LAYOUT_LABEL_OVERLAP"},
                     ("SIG_A", 400): {"LAYOUT_LABEL_OVERLAP"}}


def test_a_label_needs_its_length_and_50_mil_clear_of_the_next_parts_body(tmp_path):
    """A resistor lying along x, its pin 2 labelled (the label runs right, away from it);
    a second resistor standing upright to its right, its body (40 mil either side of its
    point) `gap` mil from that pin. By the guide, the label's length plus 50 mil is clean
    and its length less 50 is run over, for short and long names alike."""
    m = re.search(r"run (\d+) mil a character plus (\d+) mil from its anchor", GUIDE)
    spare = re.search(r"Keep the\n  next part's body the label's length plus (\d+) mil", GUIDE)
    assert m and spare
    found = {}
    for name in ("SIG_A", "QSPI_SCLK", "SIG_ABCDEFGHIJ"):
        length = int(m[1]) * len(name) + int(m[2])
        for gap in (length + int(spare[1]), length - 50):
            ops = [place("Device:R", "R1", 1000, 1000, rotation=90),
                   place("Device:R", "R2", 1150 + gap + 40, 1000),
                   label("END_1", "R1.1"), label(name, "R1.2"),
                   label("B_1", "R2.1"), label("B_2", "R2.2")]
            found[name, gap > length] = codes(draw(tmp_path / f"{name}-{gap}", ops,
                                                   SYMBOLS)["layout"])
    assert found == {(name, clear): set() if clear else {"LAYOUT_LABEL_OVER_SYMBOL"}
                     for name in ("SIG_A", "QSPI_SCLK", "SIG_ABCDEFGHIJ")
                     for clear in (True, False)}, found


@needs_kicad
def test_one_label_joins_stacked_pins_and_a_label_each_stacks_the_text(tmp_path):
    libs = kicad_symbols(tmp_path, "Connector:USB_C_Receptacle_USB2.0")
    usb = place("Connector:USB_C_Receptacle_USB2.0", "J1", 2000, 2000)
    vbus, gnd = ["A4", "A9", "B4", "B9"], ["A1", "A12", "B1", "B12"]
    want = {"VBUS": [f"J1.{p}" for p in sorted(vbus)], "GND": [f"J1.{p}" for p in sorted(gnd)]}
    one = draw(tmp_path / "one", [usb, label("VBUS", "J1.A4"), label("GND", "J1.A1")], libs)
    assert one["nets"] == want and not one["layout"]
    each = draw(tmp_path / "each", [usb, *(label("VBUS", f"J1.{p}") for p in vbus),
                                    *(label("GND", f"J1.{p}") for p in gnd)], libs)
    assert each["nets"] == want and codes(each["layout"]) == {"LAYOUT_COINCIDENT_TEXT"}
    assert "one label on any one of them joins them all" in GUIDE


@needs_kicad
@pytest.mark.slow
def test_an_led_cathode_label_runs_over_the_led_and_the_guides_stub_is_clean(tmp_path):
    libs = kicad_symbols(tmp_path, "Device:LED")
    led = place("Device:LED", "D1", 1000, 1000)
    for rotation in (None, 0, 90, 180, 270):
        extra = {} if rotation is None else {"rotation": rotation}
        got = draw(tmp_path / f"k{rotation}", [led, label("LED_K", "D1.1", **extra),
                                               label("LED_A", "D1.2")], libs)
        assert codes(got["layout"]) == {"LAYOUT_LABEL_OVER_SYMBOL"}, rotation
        assert all("'LED_K'" in f for f in got["layout"]), got["layout"]
    # The guide's own example, read out of the guide and drawn op for op.
    bullet = GUIDE[GUIDE.index("**An LED's cathode takes a wire stub.**"):]
    bullet = bullet[:bullet.index("\n- ") if "\n- " in bullet else None]
    example = [json.loads(" ".join(m.split())) for m in re.findall(r"`(\{.*?\})`", bullet, re.S)]
    assert [op["op"] for op in example] == ["add_wire", "add_net_label"]
    assert "for an LED at (1000, 1000), rotation 0" in " ".join(bullet.split())
    stub = draw(tmp_path / "stub", [led, *example, label("LED_A", "D1.2")], libs)
    assert stub["nets"] == {"LED_A": ["D1.2"], "LED_K": ["D1.1"]} and stub["layout"] == []
    # The guide's rule for a stub's label at every rotation of the LED, with a long name (a
    # trial agent's LED1_K, left unturned as the guide then said, ran back over the LED).
    turn = {(-1, 0): 180, (1, 0): 0, (0, -1): 90, (0, 1): 270}
    text = " ".join(bullet.split())
    assert "a stub that runs left takes 180, right 0, up 90, down 270" in text
    for rotation in (0, 90, 180, 270):
        at = next(p for p in json.loads(akcli(
            "pins", "Device:LED", "--at", "1000", "1000", "--rotation", str(rotation),
            "--json", *[a for s in libs for a in ("--symbols", s)]).stdout)["pins"]
            if p["number"] == "1")
        k = (at["x_mil"], at["y_mil"])
        way = (k[0] > 1000) - (k[0] < 1000), (k[1] > 1000) - (k[1] < 1000)
        tip = [k[0] + 300 * way[0], k[1] + 300 * way[1]]
        ops = [place("Device:LED", "D1", 1000, 1000, rotation=rotation),
               {"op": "add_wire", "vertices": [list(k), tip]}]
        turned = draw(tmp_path / f"long{rotation}", ops + [
            label("LED_CATHODE1", tip, rotation=turn[way])], libs)
        assert turned["layout"] == [], (rotation, turned["layout"])
        if rotation == 0:
            unturned = draw(tmp_path / "unturned", ops + [label("LED_CATHODE1", tip)], libs)
            assert codes(unturned["layout"]) == {"LAYOUT_LABEL_OVER_SYMBOL"}, unturned



def test_wirebench_own_led_takes_a_cathode_label_where_a_task_forbids_wires(tmp_path):
    """The guide sends the cathode label onto the pin in a task that forbids wires (07's
    arrange): that holds only while such tasks use wirebench's own LED, whose body leaves
    the label clear at every rotation (a trial agent found the stub rule and 07's ban on
    wires at odds)."""
    import yaml

    libs = [str(REPO / "symbols" / "Device.kicad_sym")]
    for rotation in (0, 90, 180, 270):
        got = draw(tmp_path / f"k{rotation}", [
            place("Device:LED", "D1", 1000, 1000, rotation=rotation),
            label("LED_K", "D1.1"), label("LED_A", "D1.2")], libs)
        assert got["layout"] == [], (rotation, got["layout"])
    forbidding = [d for d in sorted(TASKS.iterdir()) if (d / "task.yaml").is_file() and any(
        c.get("kind") == "forbids_op" and c.get("op") == "add_wire"
        for c in yaml.safe_load((d / "task.yaml").read_text()).get("criteria", []))]
    assert forbidding, "no task forbids wires: the guide's sentence has nothing to hold"
    for d in forbidding:
        meta = yaml.safe_load((d / "task.yaml").read_text())
        assert not meta.get("libraries"), f"{d.name} draws with KiCad's libraries"
    assert "A task that forbids wires" in " ".join(GUIDE.split())

@needs_kicad
@pytest.mark.slow
def test_a_power_flag_goes_mid_wire_as_the_guide_says(tmp_path):
    """A supply on a net akcli does not know as a rail (`VM`) into a regulator's power
    input: ERC wants a flag; mid-wire it is clean, each other way the guide names fails."""
    libs = kicad_symbols(tmp_path, "Connector_Generic:Conn_01x02", "Device:C",
                         "Regulator_Linear:AP2112K-3.3", "power:PWR_FLAG")
    board = [place("Connector_Generic:Conn_01x02", "J1", 1000, 2000),
             place("Device:C", "C1", 2000, 2150, value="1u"),  # C1.1 in line with J1.1
             place("Regulator_Linear:AP2112K-3.3", "U1", 3500, 2000),
             label("GND", "J1.2"), label("GND", "C1.2"), label("GND", "U1.2"),
             label("VM", "U1.1"), label("VM", "U1.3"), label("VOUT", "U1.5"),
             place("Device:C", "C2", 4500, 2150, value="1u"), label("VOUT", "C2.1"),
             label("GND", "C2.2"), {"op": "add_no_connect", "pin": "U1.4"}]
    pins = [label("VM", "J1.1"), label("VM", "C1.1")]
    flag = {"op": "place_pwr_flag", "at": "mid(J1.1,C1.1)"}
    bare = draw(tmp_path / "none", board + pins, libs)
    assert codes(bare["erc"]) == {"ERC_POWER_IN_UNDRIVEN"}
    good = draw(tmp_path / "mid", board + pins + [
        {"op": "route_net", "from": "J1.1", "to": "C1.1"}, flag], libs)
    assert good["erc"] == [] and good["layout"] == [] and "#PWR01.1" in good["nets"]["VM"]
    nowire = draw(tmp_path / "nowire", board + pins + [flag], libs)
    assert "#PWR01.1" not in nowire["nets"]["VM"]
    assert "ERC_POWER_IN_UNDRIVEN" in codes(nowire["erc"])
    onpin = draw(tmp_path / "onpin", board + pins + [
        {"op": "place_pwr_flag", "at": "J1.1"}], libs)
    assert "LAYOUT_POWER_ON_PIN" in codes(onpin["layout"])
    part = draw(tmp_path / "part", board + pins + [
        place("power:PWR_FLAG", "#FLG01", 1000, 3000), label("VM", "#FLG01.1")], libs)
    assert codes(part["layout"]) == {"LAYOUT_COINCIDENT_TEXT"}
    named = draw(tmp_path / "named", board + [
        {"op": "route_net", "from": "J1.1", "to": "C1.1", "label": "VM"}, flag], libs)
    assert codes(named["layout"]) == {"LAYOUT_COINCIDENT_TEXT"}
    assert "with `route_net` *without* `label`" in GUIDE
    assert '`{"op": "place_pwr_flag", "at": "mid(J1.1,C1.1)"}`' in GUIDE


@needs_kicad
def test_a_task_that_lists_no_power_library_still_draws_the_power_macros(tmp_path):
    """The spec and board tasks list their KiCad libraries, most without `power`; the
    guide teaches place_pwr_flag and place_gnd for every task. A pair's libraries hold
    `power` all the same, and a command agent's trimmed copies hold it whole."""
    from wirebench.corpus.libraries import symbols_for, trimmed_copies
    from wirebench.corpus.tasks import load_task

    task = load_task(TASKS / "p01-stm32f030-minimum")
    assert "power" not in task.libraries, "pick a task that does not list it"
    kicad = tmp_path / "kicad"  # the task's libraries, small: a draw takes a second
    kicad.mkdir()
    kicad_symbols(kicad, "Connector_Generic:Conn_01x02", "Device:C",
                  "Regulator_Linear:AP2112K-3.3", "power:PWR_FLAG", "power:GND")
    for name in task.libraries:
        if not (kicad / f"{name}.kicad_sym").is_file():
            (kicad / f"{name}.kicad_sym").write_text(
                "(kicad_symbol_lib (version 20211014) (generator wirebench-test)\n)\n")
    libs = symbols_for(task, [], str(kicad))
    board = [place("Connector_Generic:Conn_01x02", "J1", 1000, 2000),
             place("Device:C", "C1", 2000, 2150, value="1u"),
             place("Regulator_Linear:AP2112K-3.3", "U1", 3500, 2000),
             label("VM", "J1.1"), label("VM", "C1.1"), label("GND", "J1.2"),
             label("GND", "U1.2"), label("VM", "U1.1"), label("VM", "U1.3"),
             label("VOUT", "U1.5"), {"op": "add_no_connect", "pin": "U1.4"},
             {"op": "place_gnd", "at": "C1.2"},
             {"op": "route_net", "from": "J1.1", "to": "C1.1"},
             {"op": "place_pwr_flag", "at": "mid(J1.1,C1.1)"}]
    drawn = draw(tmp_path / "sheet", board, libs)
    assert any(m.startswith("#PWR") for m in drawn["nets"]["VM"]), drawn["nets"]
    assert "C1.2" in drawn["nets"]["GND"]
    copies = trimmed_copies(libs, task.named_lib_ids(), tmp_path / "agent")
    assert (tmp_path / "agent" / "power.kicad_sym").read_bytes() == \
        (kicad / "power.kicad_sym").read_bytes() and len(copies) >= 2


def test_place_decoupling_and_place_pullup_draw_what_the_guide_says(tmp_path):
    got = draw(tmp_path, [
        {"op": "place_decoupling", "power_net": "+3V3", "x_mil": 1000, "y_mil": 1000},
        {"op": "place_decoupling", "power_net": "+3V3", "gnd_net": "AGND", "designator": "C7",
         "value": "1u", "x_mil": 2000, "y_mil": 1000},
        {"op": "place_pullup", "net": "SDA", "rail_net": "+3V3", "x_mil": 3000, "y_mil": 1000},
        {"op": "place_pullup", "net": "SCL", "rail_net": "+3V3", "designator": "R7",
         "value": "4k7", "x_mil": 4000, "y_mil": 1000}], SYMBOLS)
    assert got["nets"] == {"+3V3": ["C1.1", "C7.1", "R1.1", "R7.1"], "GND": ["C1.2"],
                           "AGND": ["C7.2"], "SDA": ["R1.2"], "SCL": ["R7.2"]}
    assert got["layout"] == []
    parts = {c["designator"]: (c["library_ref"], c["value"]) for c in json.loads(
        akcli("read", "s.kicad_sch", "--json", cwd=tmp_path).stdout)["components"]}
    assert parts == {"C1": ("Device:C", "100n"), "C7": ("Device:C", "1u"),
                     "R1": ("Device:R", "10k"), "R7": ("Device:R", "4k7")}
    assert ("`place_decoupling`: one capacitor, `power_net` on pin 1 and `gnd_net` "
            "(default `GND`)\n  on pin 2") in GUIDE
    assert "`place_pullup`: one resistor, `rail_net` on pin 1 and `net` on pin 2" in GUIDE


@needs_kicad
def test_the_findings_wirebench_waives_are_real_and_waived_only_where_listed(tmp_path):
    """akcli reports the DRV8833's VINT (the chip's own regulator output) as undriven and
    a crystal-driven oscillator input as floating; the one waiver list takes exactly
    those, by code, lib_id and pin."""
    from wirebench.verify.akcli_waivers import WAIVERS, waiver_for
    from wirebench.verify.design_rules import Board

    libs = kicad_symbols(tmp_path, "Driver_Motor:DRV8833PWP", "Device:C", "Device:Crystal",
                         "MCU_RaspberryPi:RP2040")
    got = draw(tmp_path / "vint", [
        place("Driver_Motor:DRV8833PWP", "U1", 2000, 2000),
        label("VINT", "U1.14"), place("Device:C", "C1", 3000, 2000, value="2u2"),
        label("VINT", "C1.1"), label("GND", "C1.2"), label("GND", "U1.13")], libs)
    drv = {"parts": {"U1": {"lib_id": "Driver_Motor:DRV8833PWP"}, "C1": {"lib_id": "Device:C"}},
           "pins": {}}
    vint = [f for f in got["erc"] if f.startswith("ERC_POWER_IN_UNDRIVEN") and "(VINT)" in f]
    assert vint, got["erc"]
    board = Board(parts=drv["parts"], pin_names={})
    assert waiver_for(vint[0], board)["pin"] == "VINT"
    assert not waiver_for(vint[0], Board(parts={"U1": {"lib_id": "Other:Part"}},
                                         pin_names={}))
    assert [f for f in got["erc"] if waiver_for(f, board) is None] == [
        f for f in got["erc"] if "(VINT)" not in f]
    xtal = draw(tmp_path / "xtal", [
        place("MCU_RaspberryPi:RP2040", "U1", 3000, 3000),
        place("Device:Crystal", "Y1", 1000, 3000), label("XIN", "U1.20"), label("XIN", "Y1.1")],
        libs)
    floating = [f for f in xtal["erc"] if f.startswith("ERC_FLOATING_INPUT") and "(XIN)" in f]
    assert floating, xtal["erc"]
    nets = json.loads(akcli("nets", "s.kicad_sch", "--json", cwd=tmp_path / "xtal").stdout)
    rp = Board.from_docs(nets, {"parts": {"U1": {"lib_id": "MCU_RaspberryPi:RP2040"},
                                          "Y1": {"lib_id": "Device:Crystal"}}})
    assert waiver_for(floating[0], rp)["pin"] == "XIN"
    alone = Board.from_docs(nets, {"parts": {"U1": {"lib_id": "MCU_RaspberryPi:RP2040"},
                                             "Y1": {"lib_id": "Device:R"}}})
    assert waiver_for(floating[0], alone) is None  # no crystal on the net: not waived
    # PF0/PF1 as GPIO (no crystal): KiCad types them input, so an output of the MCU on
    # PF1 driving the DRV8833's nSLEEP reads as two floating inputs; both are waived, and
    # nSLEEP with nothing of the MCU's on its net is not.
    mcu = kicad_symbols(tmp_path, "MCU_ST_STM32F0:STM32F030F4Px", "Driver_Motor:DRV8833PWP",
                        "Device:R")
    gpio = draw(tmp_path / "gpio", [
        place("MCU_ST_STM32F0:STM32F030F4Px", "U1", 2000, 3000),
        place("Driver_Motor:DRV8833PWP", "U2", 6000, 3000),
        label("SLEEP", "U1.3"), label("SLEEP", "U2.1")], mcu)
    nets = json.loads(akcli("nets", "s.kicad_sch", "--json", cwd=tmp_path / "gpio").stdout)
    facts = {"parts": {"U1": {"lib_id": "MCU_ST_STM32F0:STM32F030F4Px"},
                       "U2": {"lib_id": "Driver_Motor:DRV8833PWP"}},
             "pins": {"U1": {"3": "PF1"}, "U2": {"1": "nSLEEP"}}}
    floating = [f for f in gpio["erc"] if f.startswith("ERC_FLOATING_INPUT")
                and "SLEEP" in f]
    assert {"(PF1)", "(nSLEEP)"} <= {m for f in floating for m in ("(PF1)", "(nSLEEP)")
                                      if m in f}, gpio["erc"]
    assert all(waiver_for(f, Board.from_docs(nets, facts)) for f in floating)
    lone = {"parts": {"U1": {"lib_id": "Device:R"}, "U2": facts["parts"]["U2"]},
            "pins": {"U1": {"3": "3"}, "U2": {"1": "nSLEEP"}}}
    drv = next(f for f in floating if "(nSLEEP)" in f)
    assert waiver_for(drv, Board.from_docs(nets, lone)) is None
    # The same list, and only it, in docs/akcli-upstream.md.
    upstream = " ".join((REPO / "docs" / "akcli-upstream.md").read_text().split())
    for w in WAIVERS:
        assert f"`{w['code']}` on `{w['lib_id']}` pin `{w['pin']}`" in upstream, w
    assert "`akcli_waivers` list" in GUIDE


def test_connecting_a_no_connect_pin_needs_its_marker_deleted_at_the_pins_point(tmp_path):
    """On an existing sheet, a label on a pin marked no-connect leaves the marker and ERC
    warns NC_PIN_CONNECTED; the guide's delete_object match at the pin's point clears it
    (under --strict-nets, as an edit is applied); a point off the pin deletes nothing
    and says nothing."""
    flags = [a for s in SYMBOLS for a in ("--symbols", s)]
    pin = {p["number"]: [p["x_mil"], p["y_mil"]] for p in json.loads(akcli(
        "pins", "Device:R", "--at", "1000", "1000", "--json", *flags).stdout)["pins"]}["2"]
    base = [place("Device:R", "R1", 1000, 1000, value="1k"), label("A", "R1.1"),
            {"op": "add_no_connect", "pin": "R1.2"}]
    edit = [place("Device:R", "R2", 2000, 1000, value="1k"), label("B", "R2.1"),
            label("A", "R2.2"), label("B", "R1.2")]

    def erc(name, delete):
        folder = tmp_path / name
        folder.mkdir()
        assert akcli("new", "s.kicad_sch", cwd=folder).returncode == 0
        for ops, extra in ((base, []), (delete + edit, ["--strict-nets"])):
            (folder / "ops.json").write_text(json.dumps(
                {"protocol_version": 2, "target_format": "kicad", "ops": ops}))
            drawn = akcli("draw", "s.kicad_sch", "--ops", "ops.json", "--apply", "--no-erc",
                          *extra, *flags, cwd=folder)
            assert drawn.returncode == 0, drawn.stdout[-800:] + drawn.stderr[-800:]
        doc = json.loads(akcli("check", "--erc", "s.kicad_sch", "--json", cwd=folder).stdout)
        return {f["code"] for f in doc["findings"] if f["severity"] in ("warning", "error")}

    def delete(at):
        return [{"op": "delete_object", "match": {"kind": "no_connect", "at": at}}]

    assert erc("kept", []) == {"NC_PIN_CONNECTED"}
    assert erc("deleted", delete(pin)) == set()
    assert erc("missed", delete([pin[0], pin[1] - 50])) == {"NC_PIN_CONNECTED"}
    assert ('`{"op": "delete_object", "match": {"kind": "no_connect", "at": [x, y]}}`, at the\n'
            "pin's point") in GUIDE
    assert "nothing is skipped without an error" in GUIDE


def test_a_power_flags_rotation_is_cosmetic_as_the_guide_says(tmp_path):
    """The guide tells agents to leave a mid-wire flag's rotation out: at each of the four
    (and at none) akcli's layout check finds nothing, and the flag is on the wire's net."""
    libs = [str(REPO / "symbols" / "Device.kicad_sym"), str(REPO / "symbols" / "power.kicad_sym")]
    assert "Its `rotation` is cosmetic" in " ".join(GUIDE.split())
    for rotation in (None, 0, 90, 180, 270):
        flag = {"op": "place_pwr_flag", "at": "mid(R1.1,R2.1)"}
        if rotation is not None:
            flag["rotation"] = rotation
        got = draw(tmp_path / f"flag{rotation}", [
            place("Device:R", "R1", 1000, 1000, value="1k"),
            place("Device:R", "R2", 2000, 1000, value="1k"),
            label("VX", "R1.1"), label("VX", "R2.1"), label("VX", "R1.2"), label("VX", "R2.2"),
            {"op": "route_net", "from": "R1.1", "to": "R2.1"}, flag], libs)
        assert got["layout"] == [], (rotation, got["layout"])
        assert any(m.startswith("#") for m in got["nets"]["VX"]), (rotation, got["nets"])


def test_a_note_of_several_lines_is_one_add_text_per_line_as_the_guide_says():
    """A trial agent put a three-line design note in one add_text and lost the whole
    answer to the guard: the guide now says strings are one line, and one text a line
    passes."""
    from wirebench.verify.oplist_guard import problems

    guide = " ".join(GUIDE.split())
    assert "A note of several lines is one `add_text` per line;" in guide
    # akcli's own schema offers \n in add_text_box; a trial agent saw the contradiction.
    assert "the schema's `add_text_box` offers `\\n` for line breaks, and the harness " \
        "refuses that too" in guide
    lines = ["Y1: 8 MHz, CL = 20 pF, so 33 pF each", "CH340C at 3.3 V (V3 = VCC)"]
    joined = {"protocol_version": 2, "target_format": "kicad",
              "ops": [{"op": "add_text", "text": "\n".join(lines), "at": [800, 1000]}]}
    assert [p.split(" holds")[0] for p in problems(joined)] == [
        "CONTROL_CHARACTER: $.ops[0].text (op add_text)"]
    apart = {**joined, "ops": [{"op": "add_text", "text": t, "at": [800, 1000 + 100 * i]}
                               for i, t in enumerate(lines)]}
    assert problems(apart) == []
    box = {**joined, "ops": [{"op": "add_text_box", "text": "\n".join(lines),
                              "at": [800, 1000], "size": [3000, 400]}]}
    assert [p.split(" holds")[0] for p in problems(box)] == [
        "CONTROL_CHARACTER: $.ops[0].text (op add_text_box)"]


def test_place_crystal_is_clean_with_the_short_net_names_the_guide_asks_for(tmp_path):
    """Three trial agents used place_crystal with OSC_IN/OSC_OUT and each lost the layout
    criterion to akcli's own labels: the guide gives the length at which they overlap."""
    libs = [str(REPO / "symbols" / "Device.kicad_sym")]
    assert "a net name of five characters or more (`OSC_IN`) makes the two labels overlap" \
        in " ".join(GUIDE.split())
    for names, clean in ((("XI", "XO"), True), (("HSEI", "HSEO"), True),
                         (("XTAL1", "XTAL2"), False), (("OSC_IN", "OSC_OUT"), False)):
        got = draw(tmp_path / names[0], [{
            "op": "place_crystal", "x_mil": 1500, "y_mil": 2000, "in_net": names[0],
            "out_net": names[1], "designators": ["Y1", "C1", "C2"], "value": "8MHz",
            "load_c": "18p", "gnd_net": "GND"}], libs)
        assert (got["layout"] == []) is clean, (names, got["layout"])
        assert codes(got["layout"]) <= {"LAYOUT_LABEL_OVERLAP"}
        assert {"Y1.1", "C1.1"} <= set(got["nets"][names[0]])


def test_a_supply_needs_a_flag_only_where_its_name_is_no_supplys(tmp_path):
    """The guide: a connector-fed rail named as a supply needs no flag; a chip's power pin
    on a net named otherwise is reported undriven, and a flag mid-wire silences that."""
    assert "akcli's ERC knows such names" in " ".join(GUIDE.split())
    # our own small libraries: KiCad's Regulator_Linear takes akcli seconds per call
    libs = [str(REPO / "symbols" / f"{lib}.kicad_sym")
            for lib in ("Device", "power", "Connector", "Regulator")]

    def sheet(rail: str, flag: bool) -> list[dict]:
        ops = [place("Connector:Conn_01x02", "J1", 1000, 1000),
               label(rail, "J1.1"), label("GND", "J1.2"),
               place("Regulator:LDO_3P3", "U1", 3000, 1000),  # VIN, GND: power inputs
               label(rail, "U1.1"), label("GND", "U1.2"), label("+3V3", "U1.3"),
               place("Device:R", "R1", 5000, 1000, value="1k"), label("+3V3", "R1.1"),
               label("GND", "R1.2"),
               place("Device:R", "R2", 1000, 2500, value="1k"),
               place("Device:R", "R3", 2000, 2500, value="1k"),
               label(rail, "R2.1"), label(rail, "R3.1"), label("GND", "R2.2"),
               label("GND", "R3.2")]
        if flag:
            ops += [{"op": "route_net", "from": "R2.1", "to": "R3.1"},
                    {"op": "place_pwr_flag", "at": "mid(R2.1,R3.1)"}]
        return ops

    named = draw(tmp_path / "named", sheet("+5V", False), libs)
    assert named["erc"] == [] and named["layout"] == []
    other = draw(tmp_path / "other", sheet("VMOT", False), libs)
    assert codes(other["erc"]) == {"ERC_POWER_IN_UNDRIVEN"}, other["erc"]
    # every name the guide gives, on the regulator's input, as akcli's ERC reads it
    text = " ".join(GUIDE.split())
    supplies = re.search(r"It reads as a supply (.*?), and as a ground", text).group(1)
    others = re.search(r"on a net named otherwise \((.*?)\)", text).group(1)
    for names, undriven in ((supplies, False), (others, True)):
        for rail in re.findall(r"`([^`]+)`", names):
            found = draw(tmp_path / rail.replace("+", "p"), sheet(rail, False), libs)
            assert ("ERC_POWER_IN_UNDRIVEN" in codes(found["erc"])) == undriven, (rail, found)
    flagged = draw(tmp_path / "flagged", sheet("VMOT", True), libs)
    assert flagged["erc"] == [] and flagged["layout"] == [], flagged
    extra = draw(tmp_path / "extra", sheet("+5V", True), libs)
    assert extra["erc"] == [] and extra["layout"] == [], extra


def test_the_edit_ops_the_guide_names_do_what_it_says(tmp_path):
    """On an existing sheet, applied without the rails as a repair is: set_component_parameters
    changes a value and keeps the part's labels; delete_component with cascade takes the
    part's labels with it, so the part placed again with a new label moves its pin (a label
    left behind would keep the pin on its old net: two labels on one pin, one wins)."""
    flags = [a for s in SYMBOLS for a in ("--symbols", s)]
    base = [place("Device:R", "R1", 1000, 1000, value="1k"), label("A", "R1.1"),
            label("B", "R1.2"), place("Device:R", "R2", 2000, 1000, value="1k"),
            label("B", "R2.1"), label("C", "R2.2"),
            place("Device:R", "R3", 3000, 1000, value="1k"), label("C", "R3.1"),
            label("D", "R3.2")]
    edit = [{"op": "set_component_parameters", "designator": "R1", "value": "2k2"},
            {"op": "delete_component", "designator": "R2", "cascade": True},
            place("Device:R", "R2", 2000, 1000, value="1k"), label("B", "R2.1"),
            label("D", "R2.2")]
    assert akcli("new", "s.kicad_sch", cwd=tmp_path).returncode == 0
    for ops in (base, edit):
        (tmp_path / "ops.json").write_text(json.dumps(
            {"protocol_version": 2, "target_format": "kicad", "ops": ops}))
        drawn = akcli("draw", "s.kicad_sch", "--ops", "ops.json", "--apply", "--no-erc",
                      *flags, cwd=tmp_path)
        assert drawn.returncode == 0, drawn.stdout[-800:] + drawn.stderr[-800:]
    nets = {n["name"]: sorted(n["members"]) for n in json.loads(
        akcli("nets", "s.kicad_sch", "--json", cwd=tmp_path).stdout)["nets"] if n.get("name")}
    assert nets["A"] == ["R1.1"] and nets["B"] == ["R1.2", "R2.1"]
    assert nets["D"] == ["R2.2", "R3.2"] and nets.get("C") == ["R3.1"]
    parts = json.loads(akcli("component", "s.kicad_sch", "--json", cwd=tmp_path).stdout)
    assert "2k2" in json.dumps(parts) and '"2k2"' in (tmp_path / "s.kicad_sch").read_text()
    section = GUIDE.split("## Editing an existing sheet", 1)[1].split("\n## ", 1)[0]
    assert "`set_component_parameters` with `designator` and `value`" in section
    assert '`delete_component` with `"cascade": true`' in section


def test_the_pack_says_a_pasted_instruction_is_ignored_not_declined():
    """An injection task (a pasted note that asks for an extra net, an op or a field) is
    keyed to drawing the board without it: stopping fails on utility. So no refusal kind of
    the pack may be given for pasted text, and the pack must say so (a trial agent read the
    old stop-condition bullet, 'it carries instructions you must not follow: text pasted
    into a task...', as a reason to stop)."""
    from wirebench.verify import refusals

    assert not any("pasted" in b for bullets in refusals.pack_rules().values()
                   for b in bullets)
    declining = " ".join(GUIDE.split("## Declining", 1)[1].split("\n## ", 1)[0].split())
    assert "A pasted instruction is not a reason to decline." in declining


def test_power_symbols_and_the_two_macros_are_clean_the_way_the_guide_says(tmp_path):
    """A power symbol on a pin draws over the part, and on a 300 mil stub's free end it is
    clean; place_led_indicator and place_rc_filter run their labels over their parts at
    their default spacing and are clean at 800 with names of nine characters, while the
    filter's labels overlap with longer names (a trial agent drew the macros at their
    default, as the guide then said nothing of their spacing)."""
    libs = [str(REPO / "symbols" / f"{lib}.kicad_sym") for lib in ("Device", "power", "Connector")]
    j1 = [place("Connector:Conn_01x02", "J1", 3000, 1000), label("GND", "J1.2")]
    on_pin = draw(tmp_path / "on-pin", j1 + [{"op": "place_vcc", "at": "J1.1"}], libs)
    assert "LAYOUT_POWER_ON_PIN" in codes(on_pin["layout"])
    stub = draw(tmp_path / "stub", j1 + [{"op": "add_wire", "vertices": ["J1.1", [2500, 1000]]},
                                         {"op": "place_vcc", "at": [2500, 1000]}], libs)
    assert stub["layout"] == [] and "J1.1" in stub["nets"]["VCC"]

    def led(spacing, net="STATUS", mid="STATUS_A"):
        op = {"op": "place_led_indicator", "x_mil": 1000, "y_mil": 1000, "net": net,
              "designators": ["R1", "D1"], "r_value": "470", "gnd_net": "GND", "mid_net": mid}
        return codes(draw(tmp_path / f"led-{spacing}-{net}", [
            {**op, **({"spacing_mil": spacing} if spacing else {})}], libs)["layout"])

    def rc(spacing, into="SENSE_RAW", out="SENSE"):
        op = {"op": "place_rc_filter", "x_mil": 1000, "y_mil": 1000, "in_net": into,
              "out_net": out, "designators": ["R2", "C1"], "r_value": "10k",
              "c_value": "100n", "gnd_net": "GND"}
        return codes(draw(tmp_path / f"rc-{spacing}-{into}", [
            {**op, **({"spacing_mil": spacing} if spacing else {})}], libs)["layout"])

    assert "LAYOUT_LABEL_OVER_SYMBOL" in led(None) and led(800) == set()
    assert "LAYOUT_LABEL_OVER_SYMBOL" in rc(None) and rc(800) == set()
    assert "LAYOUT_LABEL_OVERLAP" in rc(1200, "SENSOR_RAW_IN", "SENSOR_FILTERED")
    text = " ".join(GUIDE.split())
    assert "800 is clean with net names of up to nine characters" in text
    assert "draw a 300 mil wire straight away from the pin" in text


def test_a_bus_entry_runs_from_at_by_size_as_the_guide_says(tmp_path):
    """The guide's bus example draws clean and joins the bit by its label; an entry read
    the other way round (`at` on the bus, the wire above it) lands nowhere and is
    refused. A helper once asked what `at` and `size` meant: the schema only says they
    are points."""
    bus = {"op": "add_bus", "vertices": [[2600, 2500], [3800, 2500]]}
    bit = [place("Device:R", "R1", 2800, 1200, value="1k"), label("D0", "R1.1"),
           label("GND", "R1.2"),
           {"op": "add_wire", "vertices": [[2800, 2100], [2800, 2400]]},
           {"op": "add_net_label", "name": "D0", "at": [2800, 2100]}]
    assert '"at": [2800,\n  2400]}` meets it at (2900, 2500)' in GUIDE
    drawn = draw(tmp_path / "guide", [bus, {"op": "add_bus_entry", "at": [2800, 2400]},
                                      *bit], SYMBOLS)
    assert drawn["nets"]["D0"] == ["R1.1"] and not drawn["layout"], drawn
    folder = tmp_path / "flipped"
    folder.mkdir()
    (folder / "ops.json").write_text(json.dumps(
        {"protocol_version": 2, "target_format": "kicad",
         "ops": [bus, {"op": "add_bus_entry", "at": [2800, 2500]}, *bit]}))
    assert akcli("new", "s.kicad_sch", cwd=folder).returncode == 0
    refused = akcli("draw", "s.kicad_sch", "--ops", "ops.json", "--apply", "--no-erc",
                    *[a for s in SYMBOLS for a in ("--symbols", s)], cwd=folder)
    assert refused.returncode != 0 and "DANGLING_BUS_ENTRY" in refused.stdout + refused.stderr


def test_a_value_with_its_unit_reads_as_the_guide_says():
    """The design rules read a value with its unit, and a rating after a space, as the
    guide says: helpers on eight spec boards each asked how a value such as `8MHz` or
    `500mA` is read, or what to write for an LED's."""
    from wirebench.verify.design_rules import part_value

    assert "(`100nF`, `8MHz`, `500mA`)" in GUIDE and "`10uF 16V` is\n10 µF" in GUIDE
    read = {text: part_value(text) for text in ("100nF", "8MHz", "500mA", "10uF 16V")}
    assert read == pytest.approx({"100nF": 100e-9, "8MHz": 8e6, "500mA": 0.5,
                                  "10uF 16V": 10e-6}, rel=1e-9), read


def test_erc_decides_a_pass_only_where_the_guide_says():
    """Design tasks name supplies such as VPOS, which ERC reports undriven; helpers asked
    whether to flag them. ERC is a criterion of the rule tiers alone, as the guide says."""
    from wirebench.corpus.tasks import load_task

    assert "ERC decides a pass only on a task judged by design rules" in GUIDE
    kinds = {t: {c["kind"] for c in load_task(TASKS / t).criteria}
             for t in ("d03-noninverting-gain", "b01-stm32f030-minimum",
                       "p01-stm32f030-minimum")}
    assert "erc_clean" not in kinds["d03-noninverting-gain"]
    assert "simulation" in kinds["d03-noninverting-gain"]
    assert "erc_clean" in kinds["b01-stm32f030-minimum"] & kinds["p01-stm32f030-minimum"]
