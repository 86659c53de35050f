"""The spec tier: each board again, stated as requirements, with full datasheets.

A spec task (tasks/p*) restates a board (`variant_of`) without the checklist: its text
gives the interfaces, supplies, loads and limits and names the main ICs, never a passive's
value or a pin-by-pin wiring; its prompt pack holds the ICs' full datasheet write-ups
(tasks/datasheets/full/) and never the notes that list what the rules check; its rules are
the board's, with the windows its own requirements give; every wrong answer fails on its
rule; and the report sets each board's pass rate beside its spec's.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import sys
from pathlib import Path

import pytest
import yaml
from conftest import REPO, TASKS

KICAD = Path("/usr/share/kicad/symbols")
SPECS = sorted(p.name for p in TASKS.iterdir() if p.name.startswith("p") and
               (p / "task.yaml").is_file())
BOARDS = sorted(p.name for p in TASKS.iterdir() if p.name.startswith("b") and
                (p / "task.yaml").is_file())
NOTES = TASKS / "datasheets"

# What a spec's text may not hold. A value with the unit of a resistor, capacitor or
# inductor (`4.7 kΩ`, `100 nF`, `3.3 µH`) or a schematic's shorthand (`10k`, `4k7`,
# `0R2`), unless its sentence is about something outside the schematic's passives: a
# crystal's load capacitance, the layout's stray capacitance, a bus's capacitance, a
# cable's impedance. A pin by number (`pin 12`, `pins 2 to 5`, `(pin A5)`). A pointer to
# the notes or to what a reviewer checks.
PASSIVE = re.compile(r"\d+(?:\.\d+)?\s*(?:[kKM]?(?:Ω|ohms?)|[pnuµm]F\b|[nuµm]H\b)"
                     r"|\b\d+[kKMR]\d*\b")
OUTSIDE = re.compile(r"load capacitance|stray capacitance|bus capacitance|impedance")
PIN_NUMBER = re.compile(r"\bpins?\s+[A-B]?\d+", re.IGNORECASE)
CHECKLIST = re.compile(r"datasheet notes|reviewer|follow the", re.IGNORECASE)


def lint(text: str) -> list[str]:
    """What in a spec's task.md gives the design away: one line per finding."""
    found = []
    # A sentence ends at a full stop, a semicolon or a new list item.
    for sentence in re.split(r"(?<=[.;])\s+|\n\s*-\s+|\n\n", text):
        flat = " ".join(sentence.split())
        if not OUTSIDE.search(flat):
            found += [f"a passive value {m.group(0)!r}: {flat}" for m in PASSIVE.finditer(flat)]
        found += [f"a pin number {m.group(0)!r}: {flat}" for m in PIN_NUMBER.finditer(flat)]
        found += [f"the checklist {m.group(0)!r}: {flat}" for m in CHECKLIST.finditer(flat)]
    return found


def _meta(task: str) -> dict:
    return yaml.safe_load((TASKS / task / "task.yaml").read_text())


def test_there_is_a_spec_task_for_every_board():
    boards = {_meta(s)["variant_of"] for s in SPECS}
    assert len(SPECS) == len(BOARDS) >= 13 and boards == set(BOARDS)
    for spec in SPECS:  # p06-... restates b06-...
        assert _meta(spec)["variant_of"] == "b" + spec[1:], spec


@pytest.mark.parametrize("spec", SPECS)
def test_a_spec_states_no_passive_value_and_no_pin_number(spec):
    assert lint((TASKS / spec / "task.md").read_text()) == []


@pytest.mark.parametrize("board", BOARDS)
def test_the_lint_finds_the_checklist_in_every_board_text(board):
    """The lint can fail: each board's text gives values, pins or the notes away."""
    assert lint((TASKS / board / "task.md").read_text()), board


@pytest.mark.parametrize("text, finding", [
    ("Pull it up to 3.3 V with 10 kΩ.", "a passive value '10 kΩ'"),
    ("Put 100 nF on it.", "a passive value '100 nF'"),
    ("A 4.7 µH inductor.", "a passive value '4.7 µH'"),
    ("Write 0.2 Ω as `0R2`.", "a passive value '0R2'"),
    ("Strap it with 4k7.", "a passive value '4k7'"),
    ("VM (pin 12) is the supply.", "a pin number 'pin 12'"),
    ("CC1 (pin A5) goes to ground", "a pin number 'pin A5'"),
    ("pins 2 to 5 carry AIN1 to BIN2", "a pin number 'pins 2'"),
    ("Follow the datasheet notes below.", "the checklist 'datasheet notes'"),
])
def test_the_lint_names_what_it_finds(text, finding):
    assert any(f.startswith(finding) for f in lint(text)), lint(text)


def test_the_lint_lets_requirements_through():
    text = ("Drive two 6 V, 0.8 A motors at 400 kHz from a 400 mAh cell at 0.5 C; the "
            "crystal is specified for a load capacitance of 12.5 pF, the cable's "
            "impedance is 100 Ω. USART1 on PA9 and PA10; TCA9534 at 0x24.")
    assert lint(text) == []


def _design_rules(meta: dict) -> dict[str, dict]:
    return {c["id"]: c for c in meta.get("criteria", [])}


@pytest.mark.parametrize("spec", SPECS)
def test_a_spec_holds_its_board_to_the_same_rules_and_ships_wrong_answers(spec):
    from wirebench.corpus.tasks import load_task

    task = load_task(TASKS / spec)
    assert task.tier == "spec" and task.functional
    board = load_task(TASKS / task.variant_of)
    assert board.tier == "board" and board.meta["family"] == task.meta["family"]
    mine, theirs = _design_rules(task.meta), _design_rules(board.meta)
    # The board's rules by id; those that check a value only the board's text gives
    # ("the task: 10 µF on the 5 V input") have nothing to follow from here.
    stated = {i for i, c in theirs.items() if str(c.get("why", "")).startswith("the task")}
    assert set(theirs) - stated <= set(mine), (spec, set(theirs) - stated - set(mine))
    for i, rule in mine.items():  # the same rule; only its window may move
        if i in theirs:
            assert {k: v for k, v in rule.items() if k not in ("range", "why", "to")} == \
                {k: v for k, v in theirs[i].items() if k not in ("range", "why", "to")}, i
    # A rule the spec's own requirements call for (the board's text stated it, or the
    # board has none: nSLEEP awake unless pulled low, a shield that carries no ground
    # current, the EN divider over the threshold's spread) says why from them, and a
    # wrong answer fails on it.
    own = set(mine) - (set(theirs) - stated)
    for i in own:
        why = str(mine[i].get("why", ""))
        assert why and not why.startswith("the task"), (spec, i)
    assert own <= {w["fails"] for w in task.meta["wrong_answers"]}, spec
    # A rule's parts are found by lib_id: the text (or the sheet it edits) names them.
    named = set(task.named_lib_ids())
    for rule in mine.values():
        for end in (rule, rule.get("to")):
            if isinstance(end, dict) and "part" in end:
                assert end["part"] in named, (spec, rule["id"], end["part"])
    assert set(board.libraries) <= set(task.libraries)
    wrong = task.meta["wrong_answers"]
    assert len(wrong) >= 3 and {w["fails"] for w in wrong} <= set(mine)
    assert all((task.path / w["file"]).is_file() for w in wrong)


def test_a_value_a_requirement_moves_moves_in_the_reference():
    """0.8 A motors: R_SENSE = 0.2 V / 0.8 A = 0.25 Ω, in the window and in the reference."""
    from wirebench.verify.design_rules import part_value

    rules = _design_rules(_meta("p06-motor-driver"))
    assert rules["sense-a"]["range"] == [0.23, 0.27]
    ops = json.loads((TASKS / "p06-motor-driver" / "reference_ops.json").read_text())["ops"]
    sense = [op for op in ops if op["op"] == "place_component"
             and op["designator"] in ("R1", "R2")]
    assert [part_value(op["value"]) for op in sense] == [0.25, 0.25]
    board = json.loads((TASKS / "b06-motor-driver" / "reference_ops.json").read_text())
    assert '"0R2"' in json.dumps(board) and '"0R2"' not in json.dumps(ops)


def _board_of(parts):
    """A drawn board as the design rules see it, straight from a netlist of
    scripts/boards.py (each pin named as the netlist names it), without akcli."""
    from wirebench.verify.design_rules import Board

    board = Board(parts={p.ref: {"lib_id": p.lib_id, "value": p.value} for p in parts},
                  pin_names={p.ref: {pin: pin for pin in p.pins} for p in parts})
    for p in parts:
        for pin, net in p.pins.items():
            board.net_of[f"{p.ref}.{pin}"] = net
            board.members.setdefault(net, set()).add(f"{p.ref}.{pin}")
            board.names[net] = net
    return board


def _spec_netlist(sid: str, change: dict | None = None):
    sys.path.insert(0, str(REPO / "scripts"))
    from board_tasks import mutate
    from boards import SPECS

    parts = next(s for s in SPECS if s["id"] == sid)["parts"]
    return mutate(parts, change) if change else parts


def _bridge_at_5v(*resistors: tuple[str, str]) -> dict:
    """p15's CH340C moved to +5V (V3 on its own 100 nF), its TXD reaching PA3 through the
    first resistor, and the second, if any, from PA3 to ground."""
    add = [{"ref": "C15", "lib_id": "Device:C", "value": "100n", "pins": {"1": "V3", "2": "GND"}}]
    ends = (("TXD_5V", "UART_RX"), ("UART_RX", "GND"))[:len(resistors)]
    for (ref, value), (a, b) in zip(resistors, ends, strict=True):
        add.append({"ref": ref, "lib_id": "Device:R", "value": value, "pins": {"1": a, "2": b}})
    return {"ref": "U3", "pins": {"VCC": "+5V", "V3": "V3", "TXD": "TXD_5V"}, "add": add}


# What a one-shot agent drew from the packs, and what each rule must make of it: the
# pack allows a 3.3 kΩ nFAULT pull-up (V_PU / 1 mA) and 5.1 kΩ on PROG (196 mA); an EN
# divider of 182k over 11.8k turns on at 18.1 V even at EN's lowest 1.10 V, while 160k
# over 12.4k turns on at 16.4 V at its typical one.
AGENT_VARIANTS = [
    ("p06-motor-driver", "fault", {"ref": "R3", "value": "3.3k"}, True),
    ("p06-motor-driver", "fault", {"ref": "R3", "value": "2.2k"}, False),
    ("p06-motor-driver", "nsleep-pull-up", {"ref": "R4", "value": "47k"}, True),
    ("p06-motor-driver", "nsleep-pull-up", {"drop": "R4"}, False),
    ("p07-li-ion-charger", "prog", {"ref": "R4", "value": "5.1k"}, True),
    ("p07-li-ion-charger", "prog", {"ref": "R4", "value": "4.99k"}, True),
    ("p07-li-ion-charger", "prog", {"ref": "R4", "value": "4.7k"}, False),
    ("p07-li-ion-charger", "shield", {"ref": "J1", "pins": {"SHIELD": "GND"}}, False),
    ("p08-buck-3v3", "uvlo", {"ref": "R3", "value": "182k"}, True),
    ("p08-buck-3v3", "uvlo", {"ref": "R3", "value": "160k",
                              "also": {"ref": "R4", "value": "12.4k"}}, False),
    ("p11-can-node", "dominant-led", {}, True),
    ("p11-can-node", "dominant-led", {"drop": ["D4", "R5"]}, False),
    # p15's bridge drives PA3 (4.0 V at most): from 3.3 V with V3 tied to VCC (the
    # reference), or from 5 V through a divider or a series resistor, each as the
    # write-ups allow; never 5 V straight in, a divider too deep, or a clamp past 5 mA.
    ("p15-usb-climate-logger", "uart-levels", _bridge_at_5v(("R9", "1k"), ("R10", "2k")), True),
    ("p15-usb-climate-logger", "uart-levels", _bridge_at_5v(("R9", "4.7k"), ("R10", "10k")),
     True),
    ("p15-usb-climate-logger", "uart-levels", _bridge_at_5v(("R9", "1k"), ("R10", "1k")), False),
    ("p15-usb-climate-logger", "uart-levels", _bridge_at_5v(("R9", "1k")), True),
    ("p15-usb-climate-logger", "uart-levels", _bridge_at_5v(("R9", "100")), False),
    ("p15-usb-climate-logger", "uart-levels", {"ref": "U3", "pins": {"V3": "V3"}, "add": [
        {"ref": "C15", "lib_id": "Device:C", "value": "100n", "pins": {"1": "V3", "2": "GND"}}]},
     False),
    # its clock: a crystal with its load, or a resonator (capacitors inside)
    ("p15-usb-climate-logger", "clock", {"drop": ["Y1", "C11", "C12"], "add": [
        {"ref": "Y2", "lib_id": "Device:Resonator", "value": "8MHz",
         "pins": {"1": "OSC_IN", "2": "GND", "3": "OSC_OUT"}}]}, True),
    ("p15-usb-climate-logger", "clock", {"drop": ["C11", "C12"]}, False),
]


@pytest.mark.parametrize("sid, rule_id, change, passes", AGENT_VARIANTS)
def test_a_spec_rule_takes_what_its_pack_allows_and_refuses_what_its_text_forbids(
        sid, rule_id, change, passes):
    from wirebench.verify.design_rules import check

    rule = _design_rules(_meta(sid))[rule_id]
    ok, why = check(rule, _board_of(_spec_netlist(sid, change)))
    assert ok is passes, why


def _divider_board(top: list[str], bottom: list[str], en="EN"):
    """An AP63203 whose EN has these resistors to +24V and to GND."""
    from wirebench.taskgen.layout import Part

    parts = [Part("U1", "Regulator_Switching:AP63203WU", "AP63203WU",
                  {"IN": "+24V", "GND": "GND", **({"EN": en} if en else {})})]
    parts += [Part(f"R{i}", "Device:R", v, {"1": "+24V", "2": "EN"})
              for i, v in enumerate(top, start=1)]
    parts += [Part(f"R{i}", "Device:R", v, {"1": "EN", "2": "GND"})
              for i, v in enumerate(bottom, start=len(top) + 1)]
    board = _board_of(parts)
    board.pin_names["U1"]["EN"] = "EN"  # the pin is there, on a net or not
    return board


DIVIDER = {"kind": "divider", "part": "Regulator_Switching:AP63203WU", "pin": "EN",
           "top": "+24V", "bottom": "GND", "ref": [1.10, 1.26], "range": [18, 24]}


def test_a_divider_rule_holds_the_turn_on_over_the_thresholds_spread():
    """ref × (1 + R_top / R_bottom) for every ref of the spread, within the window; each
    bound turns a divider away, and the verdict says where the rail lands."""
    from wirebench.verify.design_rules import check

    assert check(DIVIDER, _divider_board(["196k"], ["11.8k"])) == (
        True, "U1 pin EN reaches 1.1–1.26 with +24V at 19.4–22.2 (196k to +24V, 11.8k to GND)")
    low = check(DIVIDER, _divider_board(["169k"], ["11.8k"]))
    assert low == (False, "U1 pin EN reaches 1.1–1.26 with +24V at 16.9–19.3 (169k to +24V, "
                          "11.8k to GND); needs 18–24")
    high = check(DIVIDER, _divider_board(["221k"], ["11.8k"]))
    assert not high[0] and "at 21.7–24.9" in high[1]
    # Resistors side by side count as one; a single threshold is one point.
    assert check(DIVIDER, _divider_board(["392k", "392k"], ["11.8k"]))[0]
    typical = {**DIVIDER, "ref": 1.18}
    assert check(typical, _divider_board(["169k"], ["11.8k"])) == (
        True, "U1 pin EN reaches 1.18 with +24V at 18.1 (169k to +24V, 11.8k to GND)")
    assert not check({**typical, "range": [18.5, 24]}, _divider_board(["169k"], ["11.8k"]))[0]


@pytest.mark.parametrize("board, reason", [
    (lambda: _divider_board(["196k"], []), "U1 pin EN has no resistor to GND"),
    (lambda: _divider_board([], ["11.8k"]), "U1 pin EN has no resistor to +24V"),
    (lambda: _divider_board(["196k"], ["11.8k"], en=None), "U1 pin EN is not connected"),
    (lambda: _divider_board(["196k"], ["11.8k"], en="+24V"),
     "U1 pin EN is tied straight to +24V"),
    (lambda: _divider_board(["196k"], ["LED"]), "U1 pin EN: R2 to GND without a value"),
])
def test_a_divider_rule_names_what_is_missing(board, reason):
    from wirebench.verify.design_rules import check

    assert check(DIVIDER, board()) == (False, reason)


def test_a_divider_rule_names_a_rail_the_sheet_lacks_and_the_schema_holds_its_fields():
    from wirebench.config import schema_problems
    from wirebench.verify.design_rules import check

    assert check({**DIVIDER, "top": "+12V"}, _divider_board(["196k"], ["11.8k"])) == (
        False, "there is no +12V")
    meta = {"id": "x", "family": "power", "brief": "b",
            "criteria": [{"id": "uvlo", **DIVIDER}]}
    assert schema_problems("task", meta) == []
    for key in ("top", "ref", "range"):
        broken = {k: v for k, v in DIVIDER.items() if k != key}
        assert schema_problems("task", {**meta, "criteria": [{"id": "uvlo", **broken}]}), key


def _main_ics(task) -> list[str]:
    """The symbols of the parts a task names that we keep a datasheet on."""
    return [lib_id.split(":", 1)[1] for lib_id in task.named_lib_ids()
            if (NOTES / f"{lib_id.split(':', 1)[1]}.md").is_file()]


def _pack(task_dir: Path) -> str:
    from wirebench.steps.prompt_pack import build

    # No symbol libraries: the pin tables are left out, the datasheets are what is read.
    return build(task_dir, REPO / "skills", [])


def _notes_lines(symbol: str) -> list[str]:
    """The lines of a notes file that say something (its bullets), to look for in a pack."""
    text = (NOTES / f"{symbol}.md").read_text()
    return [line.strip() for line in text.splitlines() if len(line.strip()) > 30]


def test_a_spec_pack_holds_each_ics_full_write_up_and_never_its_notes(tmp_path):
    """In a corpus of our own, with a full write-up for every main IC: a spec task's pack
    holds each whole, under its own heading, and no line of any notes file; its board's
    pack holds the notes."""
    from wirebench.corpus.tasks import load_task

    corpus = tmp_path / "corpus"
    for name in ("p06-motor-driver", "b06-motor-driver", "p10-edit-fix-boot-and-clock"):
        shutil.copytree(TASKS / name, corpus / name)
    shutil.copytree(NOTES, corpus / "datasheets", ignore=shutil.ignore_patterns("full"))
    full = corpus / "datasheets" / "full"
    full.mkdir()
    for name in ("p06-motor-driver", "p10-edit-fix-boot-and-clock"):
        for symbol in _main_ics(load_task(corpus / name)):
            (full / f"{symbol}.md").write_text(
                f"# {symbol}: the whole datasheet\n\nPin configuration, absolute maximum "
                f"ratings and an application section for {symbol}.\n")
    for name in ("p06-motor-driver", "p10-edit-fix-boot-and-clock"):
        task = load_task(corpus / name)
        pack = _pack(task.path)
        symbols = _main_ics(task)
        assert symbols, name
        assert "# Reference: datasheets\n" in pack and "datasheet notes" not in pack
        for symbol in symbols:
            assert (full / f"{symbol}.md").read_text().rstrip() in pack, symbol
        for notes in NOTES.glob("*.md"):
            assert not [line for line in _notes_lines(notes.stem) if line in pack], notes
    board = _pack(corpus / "b06-motor-driver")
    assert "# Reference: datasheet notes" in board
    assert (NOTES / "DRV8833PWP.md").read_text().rstrip() in board


@pytest.mark.parametrize("spec", SPECS)
def test_the_shipped_spec_packs_hold_every_main_ics_full_write_up(spec):
    """In the corpus: every main IC has its full write-up, it is in the pack, and no
    line of its notes is."""
    from wirebench.corpus.tasks import load_task

    task = load_task(TASKS / spec)
    pack = _pack(task.path)
    assert _main_ics(task)
    for symbol in _main_ics(task):
        assert (NOTES / "full" / f"{symbol}.md").read_text().rstrip() in pack, symbol
    for symbol in _main_ics(task):
        assert not [line for line in _notes_lines(symbol) if line in pack], symbol


def test_the_workflow_reads_a_spec_packs_full_write_ups(tmp_path):
    """The prompt pack's rule lists the full write-ups as its inputs: editing one reruns
    the spec's pack, not the board's."""
    from wirebench.corpus.tasks import load_task

    task = load_task(TASKS / "p06-motor-driver")
    assert all(p.parent == NOTES / "full" for p in task.datasheet_paths)
    assert all(p.parent == NOTES for p in load_task(TASKS / "b06-motor-driver").datasheet_paths)
    common = (REPO / "workflow" / "rules" / "common.smk").read_text()
    assert "p.relative_to(task.path.parent)" in common


kicad = pytest.mark.skipif(
    not (KICAD / "Device.kicad_sym").is_file() and not os.environ.get("CI"),
    reason="KiCad's libraries are not installed (apt-get install kicad-symbols)")


@kicad
@pytest.mark.slow
def test_every_spec_task_is_sound_and_every_wrong_answer_fails_on_its_rule(tmp_path):
    from wirebench.steps.tasks_check import check_corpus

    corpus = tmp_path / "corpus"
    corpus.mkdir()
    for name in [*SPECS, "datasheets"]:
        (corpus / name).symlink_to(TASKS / name)
    report = check_corpus(corpus, [])
    problems = {t["id"]: t["problems"] for t in report["tasks"] if t["problems"]}
    assert not problems and report["ok"] == len(SPECS) >= 13
    assert {t["tier"] for t in report["tasks"]} == {"spec"}


@kicad
@pytest.mark.slow
def test_the_report_sets_each_board_beside_its_spec(project, tmp_path):
    """A real run of b06 and p06 by the reference and by an agent that meets the board's
    rules and sizes the spec's sense resistors for the board's 1 A: the table shows it."""
    from test_reports import browse

    pair = ["b06-motor-driver", "p06-motor-driver"]
    project.self_contained(pair)
    shutil.copytree(NOTES, project.root / "tasks" / "datasheets")
    answers = project.root / "answers"
    answers.mkdir()
    shutil.copy(TASKS / pair[0] / "reference_ops.json", answers / f"{pair[0]}.json")
    shutil.copy(TASKS / pair[1] / "wrong" / "sense-for-1a.json", answers / f"{pair[1]}.json")
    config = yaml.safe_load(project.config_path.read_text())
    # The reference, the baseline (a command agent: it reads the prompt pack) and the
    # agent that follows the board's checklist.
    config["models"]["checklist"] = {"kind": "ops_dir", "dir": str(answers)}
    project.config_path.write_text(yaml.safe_dump(config))
    project.snakemake()
    df = project.summary()
    assert dict(zip(df["task"] + "/" + df["model"], df["tier"], strict=True)) == {
        f"{t}/{m}": tier for t, tier in zip(pair, ("board", "spec"), strict=True)
        for m in ("reference", "base", "checklist")}
    report = (project.root / "results" / "report.md").read_text()
    assert "**What the checklist gives away.**" in report
    assert "| b06-motor-driver | p06-motor-driver | checklist | 1/1 (100%) | 0/1 (0%) |" in report
    assert "| b06-motor-driver | p06-motor-driver | reference | 1/1 (100%) | 1/1 (100%) |" in report
    assert "| all | all | checklist | 1/1 (100%) | 0/1 (0%) |" in report
    assert "| b06-motor-driver | p06-motor-driver | base | 0/1 (0%) | 0/1 (0%) |" in report
    # The baseline's pack of the spec held the full write-ups, never the notes.
    pack = (project.root / "results" / "prompts" / "skills" / f"{pair[1]}.md").read_text()
    assert "# Reference: datasheets" in pack and "datasheet notes" not in pack
    assert (NOTES / "full" / "DRV8833PWP.md").read_text().rstrip() in pack
    assert (NOTES / "DRV8833PWP.md").read_text().rstrip() not in pack
    dom = browse(project.root / "results" / "report.html", tmp_path, "--dump-dom").stdout
    table = dom[dom.index('<table id="variant-rates">'):]
    table = table[:table.index("</table>")]
    assert re.search(r"<td>b06-motor-driver</td><td>p06-motor-driver</td><td>checklist</td>"
                     r"<td>1/1 \(100%\)</td><td>0/1 \(0%\)</td>", table), table


@kicad
@pytest.mark.slow
def test_the_spec_op_lists_are_what_their_netlists_give():
    """board_tasks.py writes a spec's files from boards.SPECS, and --check compares them
    (test_boards runs the whole check; this one spec, and names what it compared)."""
    import subprocess

    script = [sys.executable, str(REPO / "scripts" / "board_tasks.py"), "--check", "--only"]
    res = subprocess.run([*script, "p06-motor-driver"], capture_output=True, text=True)
    wrong = len(_meta("p06-motor-driver")["wrong_answers"])
    assert res.returncode == 0 and res.stdout.strip() == \
        f"{1 + wrong} file(s) checked, 0 stale", res.stdout + res.stderr
    res = subprocess.run([*script, "p99-nothing"], capture_output=True, text=True)
    assert res.returncode == 2 and "no board or spec with id p99-nothing" in res.stderr


@kicad
@pytest.mark.slow
@pytest.mark.parametrize("sid", ["p12-usb-uart-bridge", "p15-usb-climate-logger"])
def test_a_data_pair_routed_through_the_esd_arrays_paths_passes(sid, tmp_path):
    """The USBLC6 write-up's typical application: D+ into pin 1 and out of pin 6, D− into
    pin 3 and out of pin 4, so the receptacle's side and the bridge's are two nets each,
    joined inside the array. A trial agent drew it so, and the rules took it for a break."""
    import subprocess

    sys.path.insert(0, str(REPO / "scripts"))
    from board_tasks import mutate
    from boards import SPECS

    from wirebench.corpus.libraries import kicad_dir, resolve
    from wirebench.taskgen.layout import dumps, envelope, ops_for

    board = next(s for s in SPECS if s["id"] == sid)
    through = {"ref": "U1", "pins": {"I/O1": None, "I/O2": None, "1": "DP_CONN",
                                     "6": "USB_DP", "3": "DM_CONN", "4": "USB_DM"},
               "also": {"ref": "J1", "pins": {"A6": "DP_CONN", "B6": "DP_CONN",
                                              "A7": "DM_CONN", "B7": "DM_CONN"}}}
    parts = mutate(board["parts"], through)
    ops = tmp_path / "through.json"
    ops.write_text(dumps(envelope(ops_for(parts, resolve(board["libraries"], kicad_dir()),
                                          board["title"]))))
    res = subprocess.run(["wirebench", "score", "--task", str(TASKS / sid), "--ops", str(ops),
                          "--json"], capture_output=True, text=True)
    doc = json.loads(res.stdout)
    failed = {v["id"]: v["detail"] for v in doc["criteria"] if v["verdict"] != "pass"}
    assert res.returncode == 0 and not failed, failed
    assert doc["passed"] and {"dp", "dm", "esd"} <= {v["id"] for v in doc["criteria"]}


@kicad
def test_a_spec_pack_shows_the_small_parts_its_text_leaves_to_the_agent():
    """p15 needs a crystal its text never names: its pack has Device:Crystal's pin table
    all the same, and so has every spec pack, while a board's pack (its text names every
    part) shows only what it names."""
    from wirebench.corpus.libraries import symbols_for
    from wirebench.corpus.tasks import COMMON_PARTS, load_task
    from wirebench.steps.prompt_pack import build

    def tables(name: str) -> set[str]:
        task = load_task(TASKS / name)
        pack = build(task.path, REPO / "skills", symbols_for(task, []))
        block = pack.split("# Reference: pin tables (`akcli pins`)", 1)[1].split("\n# ", 1)[0]
        return set(re.findall(r"^(\S+:\S+)  @", block, re.M))

    spec = load_task(TASKS / "p15-usb-climate-logger")
    assert "Device:Crystal" not in spec.named_lib_ids()
    assert "Device:Crystal" in tables("p15-usb-climate-logger")
    assert set(COMMON_PARTS) <= tables("p13-rs485-motor-node")
    board = tables("b13-rs485-motor-node")
    assert "Device:Crystal" not in board
    assert board == set(load_task(TASKS / "b13-rs485-motor-node").named_lib_ids())
