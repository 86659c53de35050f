"""The real tier (taskgen/real): tasks generated from Debian's installed kicad-demos into a
tmp dir (the demos are GPL and never committed), then through `wirebench tasks check`:
each reference passes, and each repair's unrepaired sheet and fix of the wrong part fail
on the criterion they name."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from conftest import REPO, TASKS, write_ops

DEMOS = Path("/usr/share/kicad/demos")
SMALL = {"value": 1, "wrong-net": 1, "series": 1, "rework": 1}  # ecc83: 15 parts


@pytest.fixture(scope="module")
def demos() -> Path:
    if not (DEMOS / "ecc83" / "ecc83-pp.kicad_sch").is_file():
        if os.environ.get("CI"):
            pytest.fail("kicad-demos is not installed: .ci/run installs it")
        pytest.skip("Debian's kicad-demos is not installed (apt-get install kicad-demos)")
    return DEMOS


def _tree(folder: Path) -> dict[str, bytes]:
    return {p.relative_to(folder).as_posix(): p.read_bytes()
            for p in sorted(folder.rglob("*")) if p.is_file()}


@pytest.fixture(scope="module")
def sample(demos, tmp_path_factory) -> list[Path]:
    from wirebench.taskgen.real import generate

    return generate("ci", demos, tmp_path_factory.mktemp("real") / "real", names=["ecc83"],
                    per_demo=SMALL)


def test_a_seeded_sample_passes_the_corpus_gate(demos, sample, tmp_path):
    from wirebench.taskgen.real import generate

    made = sample
    again = generate("ci", demos, tmp_path / "again", names=["ecc83"], per_demo=SMALL)
    assert [_tree(a) for a in made] == [_tree(b) for b in again], "not deterministic"
    kinds = []
    for task in made:
        meta = yaml.safe_load((task / "task.yaml").read_text())
        kinds.append(meta["brief"].split("(")[1].split(")")[0])
        assert meta["tier"] == "real" and (task / "symbols.kicad_sym").is_file()
        # The whole netlist after the edit: every net of the demo with two pins or more.
        nets = json.loads((task / "expected_nets.json").read_text())["nets"]
        assert len(nets) >= 9 and all(n["members"] for n in nets)
        # a repair is held to the whole netlist; a change to its base's nets and its rules
        held = "nets_exact" if meta["brief"].startswith("Repair") else "nets_kept"
        assert {c["kind"] for c in meta["criteria"]} >= {held, "values", "max_ops",
                                                         "max_parts"}
        names = {w["file"] for w in meta["wrong_answers"]}
        if "(rework)" in meta["brief"]:
            assert names == {"wrong/unrepaired.json", "wrong/partial.json",
                             "wrong/wrong-part.json"}
        elif meta["brief"].startswith("Repair"):
            assert names == {"wrong/unrepaired.json", "wrong/wrong-part.json"}
            assert meta["knobs"]["edit_ops"] <= 6
    assert sorted(kinds) == ["rework", "series", "value", "wrong-net"]
    proc = subprocess.run(["wirebench", "tasks", "check", str(made[0].parent), "--json"],
                          capture_output=True, text=True, cwd=REPO)
    report = json.loads(proc.stdout)
    bad = {t["id"]: t["problems"] for t in report["tasks"] if t["problems"]}
    assert proc.returncode == 0 and not bad, bad
    assert len(report["tasks"]) == 4


def test_no_demo_is_read_without_kicad_demos(tmp_path):
    from wirebench.taskgen.real import generate

    with pytest.raises(ValueError, match="kicad-demos"):
        generate("x", tmp_path, tmp_path / "out")


def _task(sample: list[Path], kind: str) -> Path:
    return next(t for t in sample if f"({kind})" in
                yaml.safe_load((t / "task.yaml").read_text())["brief"])


def _evaluate(task: Path, ops: list[dict], pair: Path) -> dict:
    from wirebench.steps.pair import evaluate_pair

    answer = write_ops(pair.parent / f"{pair.name}.json", ops)
    return evaluate_pair(answer, task, [], pair, {"model": "m", "task": task.name, "sample": 1})


def _nets(result: dict) -> dict:
    return next(c for c in result["criteria"] if c["id"] == "nets")


def test_a_pin_moved_between_two_of_the_demos_unnamed_nets_fails(sample, tmp_path):
    """The demo's unnamed nets are compared by their pins like any other: the reference
    fix of a wrong-net fault with its other pin on a neighbouring unnamed net fails on the
    nets alone (a four-op edit, every value kept)."""
    task = _task(sample, "wrong-net")
    fix = json.loads((task / "reference_ops.json").read_text())["ops"]
    expected = {n["name"]: set(n["members"]) for n in
                json.loads((task / "expected_nets.json").read_text())["nets"]}
    moved = next(op for op in fix if op["op"] == "add_net_label"
                 and expected[op["name"]] != {op["at"]})
    assert moved["name"].startswith("N"), "the demo left this net unnamed: N<k> is ours"
    other = next(n for n in sorted(expected) if n.startswith("N") and n != moved["name"]
                 and n not in {op.get("name") for op in fix})
    wrong = [dict(op, name=other) if op is moved else op for op in fix]
    assert _evaluate(task, fix, tmp_path / "ref")["passed"]
    result = _evaluate(task, wrong, tmp_path / "wrong")
    verdicts = {c["id"]: c["verdict"] for c in result["criteria"]}
    assert not result["passed"] and verdicts == {**verdicts, "nets": "fail", "values": "pass",
                                                 "edit_size": "pass"}, verdicts
    assert f"net {moved['name']!r}: missing [{moved['at']!r}]" in "\n".join(result["errors"])


def test_a_new_unnamed_net_fails(sample, tmp_path):
    """A wire between two pins the design leaves unconnected makes a net with no name;
    nets_exact with `unnamed: true` fails it (without, no named net would change)."""
    task = _task(sample, "value")
    fix = json.loads((task / "reference_ops.json").read_text())["ops"]
    base = json.loads((task / "base_ops.json").read_text())["ops"]
    a, b = [op["pin"] for op in base if op["op"] == "add_no_connect"][:2]
    result = _evaluate(task, [*fix, {"op": "route_net", "from": a, "to": b}], tmp_path / "w")
    assert result["outcome"] == "success" and not result["passed"]
    assert _nets(result)["verdict"] == "fail"
    assert f"an unnamed net: not in the task (members {sorted([a, b])})" in result["errors"]


def _renamed(ops: list[dict], names: dict[str, str]) -> list[dict]:
    """An answer with other designators and net names: each string `names` holds, put
    for another wherever it stands whole (a designator, a net, a pin `R101.2`)."""
    def swap(value):
        if isinstance(value, str):
            ref, dot, pin = value.partition(".")
            return names.get(value, names.get(ref, ref) + dot + pin)
        return [swap(v) for v in value] if isinstance(value, list) else value
    return [{k: swap(v) for k, v in op.items()} for op in ops]


def test_a_change_request_leaves_its_names_to_the_agent(sample, tmp_path):
    """The issue asks for changes checked by rules on the pins involved. The ask names
    no designator and no new net; an answer with its own passes, one whose resistor is
    out of the asked value fails on that line's rule, and one that moves a pin the
    change does not involve fails on the base's nets."""
    task = _task(sample, "series")
    ask = (task / "task.md").read_text()
    fix = json.loads((task / "reference_ops.json").read_text())["ops"]
    refs = sorted({op["designator"] for op in fix if op["op"] == "place_component"
                   and op["designator"].startswith("R")})
    nets = sorted({op["name"] for op in fix if op["op"] == "add_net_label"
                   and op["name"].startswith("P4_")})
    assert refs == ["R101", "R102"] and nets == ["P4_1", "P4_2"]
    assert not any(name in ask for name in [*refs, *nets]), "the ask dictates a name"
    theirs = _renamed(fix, {"R101": "R7", "R102": "R8", "P4_1": "IN_L", "P4_2": "IN_R"})
    ok = _evaluate(task, theirs, tmp_path / "theirs")
    assert ok["passed"], ok["errors"]
    big = [dict(op, value="1k") if op.get("designator") == "R8" else op for op in theirs]
    result = _evaluate(task, big, tmp_path / "big")
    verdicts = {c["id"]: c["verdict"] for c in result["criteria"]}
    assert not result["passed"] and verdicts["series_2"] == "fail", verdicts
    assert verdicts["nets"] == "pass" and "R8=1k is out of range" in "\n".join(result["errors"])
    # a pin the change does not involve, moved onto its own net: the base loses it
    from wirebench.taskgen.real.faults import replace

    base = json.loads((task / "base_ops.json").read_text())["ops"]
    ref, pin = next(op["at"] for op in base if op["op"] == "add_net_label"
                    and op["name"] == "GND" and str(op["at"]).startswith("C")).split(".")
    moved = [*theirs, *replace(base, ref, {pin: "GND2"})]
    result = _evaluate(task, moved, tmp_path / "moved")
    assert _nets(result)["verdict"] == "fail", result["criteria"]
    assert f"net 'GND': missing ['{ref}.{pin}']" in "\n".join(result["errors"])
    # Up to renaming, only the base would match a change's expected nets: the check is
    # not made (it once held a gate for half an hour proving video's base was itself).
    nothing = _evaluate(task, [], tmp_path / "nothing")
    assert not nothing["passed"] and nothing["relabel_equivalent"] is None


def _lowered(op: dict, mil: int) -> dict:
    """An op placed `mil` lower on the sheet."""
    down = dict(op)
    if "y_mil" in op:
        down["y_mil"] = op["y_mil"] + mil
    if isinstance(op.get("at"), list):
        down["at"] = [op["at"][0], op["at"][1] + mil]
    if "vertices" in op:
        down["vertices"] = [[x, y + mil] for x, y in op["vertices"]]
    return down


def test_a_power_led_is_judged_on_its_pins_either_way_round_its_resistor(demos, tmp_path):
    """interf_u has LEDs of its own (D1, D2): the rules pick the new one (`except`). Its
    resistor may sit on either side; it fails turned round, with a resistor that gives
    more than the asked current, or with a second new LED."""
    from wirebench.taskgen.real import generate

    task, = generate("ci", demos, tmp_path / "real", names=["interf_u"],
                     per_demo={"power-led": 1})
    ask = (task / "task.md").read_text()
    assert "`VCC` (5 V)" in ask and "1 to 10 mA" in ask and "D101" not in ask
    fix = json.loads((task / "reference_ops.json").read_text())["ops"]
    # the resistor on the cathode side instead: VCC - D3 - LED_K - R6 - GND
    theirs = _renamed(fix, {"R101": "R6", "D101": "D3", "PWR_LED": "LED_K"})
    for op in theirs:
        if op["op"] == "add_net_label":
            op["name"] = {"VCC": "GND", "GND": "LED_K", "LED_K": "VCC"}[op["name"]]
        if op.get("designator") == "R6":
            op["value"] = "470"
    theirs_k = [op for op in theirs if op.get("at") != "R6.2"] + [
        {"op": "add_net_label", "name": "LED_K", "at": "R6.2"}]
    result = _evaluate(task, theirs_k, tmp_path / "theirs")
    assert result["passed"], result["errors"]
    led = next(c for c in result["criteria"] if c["id"] == "led")
    assert led["detail"].startswith("anode_rail:"), led
    bright = [dict(op, value="150") if op.get("designator") == "R6" else op for op in theirs_k]
    result = _evaluate(task, bright, tmp_path / "bright")
    assert not result["passed"] and "R6=150 is out of range" in "\n".join(result["errors"])
    lower = [_lowered(op, 1500) for op in fix]
    twice = theirs_k + _renamed(lower, {"R101": "R7", "D101": "D4", "PWR_LED": "LED_2"})
    result = _evaluate(task, twice, tmp_path / "twice")
    one = next(c for c in result["criteria"] if c["id"] == "one_led")
    assert one["verdict"] == "fail" and one["detail"].startswith("2 "), one


def test_a_rule_may_name_a_library_whose_nickname_has_a_dash():
    """The coldfire kit's symbols are `kit-coldfire_schlib:...`: its power-LED change's
    rules were refused by the task schema, and its pack could not be built."""
    from wirebench.config import schema_problems

    meta = yaml.safe_load((TASKS / "b06-motor-driver" / "task.yaml").read_text())
    rule = {"id": "one_led", "kind": "part", "part": "kit-coldfire_schlib:LED",
            "except": ["D1"], "min": 1, "max": 1}
    assert schema_problems("task", {**meta, "criteria": [rule]}) == []
    bad = {**rule, "part": "kit coldfire:LED"}
    assert schema_problems("task", {**meta, "criteria": [bad]})


def test_a_rails_volts_come_from_its_name_or_the_demos_own_text():
    """A power-LED change states its rail's volts, and its resistor's window follows from
    them: `+3,3V` is the coldfire kit's 3.3 V, `+1V8` is 1.8 V (too low for a red LED's
    drop: no change is asked there), and a `VCC` whose name gives no figure takes the
    demo's own (pic_programmer's is a 7805's 5 V), or none."""
    from types import SimpleNamespace

    from wirebench.taskgen.real.demos import BY_NAME
    from wirebench.taskgen.real.faults import rail_volts

    pic = SimpleNamespace(demo=BY_NAME["pic_programmer"])
    video = SimpleNamespace(demo=BY_NAME["video"])
    assert [rail_volts(video, n) for n in ("+5V", "+3,3V", "+3.3V", "+1V8", "+12V")] == [
        5.0, 3.3, 3.3, 1.8, 12.0]
    assert rail_volts(pic, "VCC_PIC") == 5.0 and rail_volts(video, "VCC") is None
    assert rail_volts(video, "VAA") is None and rail_volts(video, "-12V") is None


def test_a_change_keeps_its_base_by_pins_not_by_names():
    """compare_kept: the base's nets by their base pins; new parts only on the nets the
    change may join; a moved pin off its net and onto none of the base's."""
    from wirebench.verify.scoring import compare_kept

    base = {"A": frozenset({"J1.1", "U1.3"}), "GND": frozenset({"J1.2", "U1.4"}),
            "B": frozenset({"U1.5", "C1.1"})}
    ok = {"A": frozenset({"U1.3", "R9.2"}), "MINE": frozenset({"J1.1", "R9.1"}),
          "GND": frozenset({"J1.2", "U1.4"}), "B": frozenset({"U1.5", "C1.1"})}
    assert compare_kept(base, ok, (), ["J1.1"], ["A"])["passed"]
    stayed = {**ok, "A": frozenset({"U1.3", "R9.2", "J1.1"}), "MINE": frozenset({"R9.1"})}
    assert "must leave it" in compare_kept(base, stayed, (), ["J1.1"], ["A"])["mismatches"][0]
    touched = {**ok, "B": frozenset({"U1.5", "C1.1", "R9.2"}), "A": frozenset({"U1.3"})}
    assert not compare_kept(base, touched, (), ["J1.1"], ["A"])["passed"]
    landed = {**ok, "GND": frozenset({"J1.2", "U1.4", "J1.1"}), "MINE": frozenset({"R9.1"})}
    assert "moved onto it" in " ".join(compare_kept(base, landed, (), ["J1.1"], ["A"])[
        "mismatches"])
    loose = {**ok, "B": frozenset({"C1.1"})}
    result = compare_kept(base, loose, [frozenset({"U1.5", "R9.3"})], ["J1.1"], ["A"])
    assert not result["passed"] and any("unnamed" in m for m in result["mismatches"])


def test_the_unnamed_nets_are_compared_only_when_the_task_says_so():
    from wirebench.verify import scoring

    doc = {"nets": [{"name": "VCC", "members": ["R1.1", "#PWR1.1"]},
                    {"name": None, "members": ["R1.2", "C1.1"]},
                    {"name": None, "members": ["C1.2", "#PWR2.1"]},
                    {"name": None, "members": ["U1.3"]}]}
    want = {"VCC": frozenset({"R1.1"})}
    unnamed = scoring.observed_unnamed_nets(doc)
    assert unnamed == [frozenset({"R1.2", "C1.1"})]  # power ports and lone pins are no net
    assert scoring.compare(want, scoring.observed_named_nets(doc))["passed"]
    got = scoring.compare(want, scoring.observed_named_nets(doc), unnamed)
    assert not got["passed"] and got["score"] == 1.0
    assert got["mismatches"] == ["an unnamed net: not in the task (members ['C1.1', 'R1.2'])"]


def test_what_a_run_generates():
    from wirebench.taskgen.real.tier import wanted

    on = {"real_tier": {"seed": 7}}
    assert wanted({}) == 0  # no real_tier key: the tier is off
    assert wanted({**on, "sample_per_tier": {"real": 3, "board": 2}}) == 3
    assert wanted({**on, "sample_per_tier": {"board": 2}}) is None  # no quota: all
    assert wanted({**on, "sample_per_tier": "all"}) is None
    assert wanted({**on, "tasks": "01-divider,02-rc-lowpass"}) == 0
    assert wanted({**on, "tasks": ["01-divider", "real-214347-004"]}) is None


@pytest.mark.slow
def test_the_default_run_generates_a_sample_and_all_runs_them_all(demos, project, tmp_path):
    """A run whose config asks for the real tier generates it when it starts, into the
    cache folder, and runs it beside the tasks folder's tasks: the first N with
    `real: N`, every one with `sample_per_tier=all` (here the demos folder holds ecc83
    alone, so that all is seven tasks). A rerun generates nothing and runs nothing; without
    kicad-demos the run goes on and says that the tier was left out."""
    only = tmp_path / "demos"
    only.mkdir()
    (only / "ecc83").symlink_to(demos / "ecc83")
    corpus = tmp_path / "tasks"  # one task of ours: `all` must not run the whole corpus
    shutil.copytree(TASKS / "01-divider", corpus / "01-divider")
    project.configure({"reference": {"kind": "reference"}}, tasks_dir=corpus,
                      sample_per_tier={"real": 2}, real_tier={"seed": "ci", "demos": str(only)})
    project.snakemake()
    stamps = list((project.root / ".snakemake" / "wirebench" / "real").glob("*/tier.json"))
    assert len(stamps) == 1
    stamp = json.loads(stamps[0].read_text())
    assert stamp["count"] == 2 and len(stamp["tasks"]) == 2
    rows = project.summary()
    real = rows[rows["tier"] == "real"]
    assert sorted(real["task"]) == stamp["tasks"] and real["passed"].all()
    assert len(rows) == 3
    assert "real-" in (project.root / "results" / "report.md").read_text()

    made = stamps[0].stat().st_mtime_ns
    again = project.snakemake()
    assert "Nothing to be done" in again.stdout + again.stderr
    assert stamps[0].stat().st_mtime_ns == made, "generated again"

    project.snakemake("--config", "sample_per_tier=all")
    stamp = json.loads(stamps[0].read_text())
    assert stamp["count"] is None and len(stamp["tasks"]) > 2
    rows = project.summary()
    real = rows[rows["tier"] == "real"]
    assert sorted(real["task"]) == sorted(stamp["tasks"]) and real["passed"].all()

    project.configure({"reference": {"kind": "reference"}}, tasks_dir=corpus,
                      sample_per_tier={"real": 2},
                      real_tier={"seed": "ci", "demos": str(tmp_path / "none")})
    left = project.snakemake()
    assert f"the real tier is left out: no kicad-demos in {tmp_path / 'none'}" in left.stderr
    assert list(project.summary()["task"]) == ["01-divider"]


PROVE_APART = """
import sys
from pathlib import Path
from wirebench.taskgen.real import demos
from wirebench.verify.equivalence import relabel_equivalent

design = demos.read(demos.BY_NAME["flat_hierarchy"], Path(sys.argv[1]))
nets = design.nets()
swap = {"D11.1": "D11.2", "D11.2": "D11.1"}  # the Schottky diode turned round
doc = {"nets": [{"name": n, "members": [swap.get(m, m) for m in ms]} for n, ms in nets.items()]}
print(relabel_equivalent({n: frozenset(ms) for n, ms in nets.items()}, doc))
"""


def test_a_demo_with_one_diode_turned_round_is_told_apart_at_once(demos):
    """relabel_equivalent on a 58-part demo whose unrepaired sheet has one diode the wrong
    way round: networkx's matcher alone searched for more than 16 minutes to prove the
    two netlists apart (and stalled `tasks check` on that task); with a hash of each
    graph first, it is settled in well under the limit here."""
    proc = subprocess.run([sys.executable, "-c", PROVE_APART, str(demos)],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "False"


def test_a_symbols_datasheet_link_is_no_network_address(tmp_path):
    """tasks check refuses a task that holds a network address; interf_u's ISA symbol
    names its datasheet by URL. The library keeps KiCad's "no datasheet" instead."""
    from wirebench.taskgen.real.demos import library_text

    sheet = tmp_path / "s.kicad_sch"
    sheet.write_text('(kicad_sch (lib_symbols (symbol "lib:BUS" (property "Datasheet" '
                     '"https://example.org/isa.pdf" (id 3) (at 0 0 0))'
                     ' (property "Value" "BUS" (id 1) (at 0 0 0)))))')
    text = library_text([sheet])
    assert "://" not in text and '(property "Datasheet" "~"' in text
    assert '(property "Value" "BUS"' in text


def test_a_base_that_does_not_draw_the_demos_netlist_is_refused():
    """The generator's own oracle: the drawn base must have the demo's netlist. A stub
    laid along a row of pins once joined GND and CLKIN/EXTAL on the coldfire kit, and
    every reference then failed; such a demo is now refused by name."""
    from wirebench.taskgen.layout import Part
    from wirebench.taskgen.real.demos import DEMOS, Design, _same_netlist

    design = Design(DEMOS[0], [Part("R1", "l:R", "1k", {"1": "GND", "2": "N1"}),
                               Part("C1", "l:C", "1n", {"1": "N1", "2": "GND"})], "")
    good = {"nets": [{"name": "GND", "members": ["R1.1", "C1.2"]},
                     {"name": "N1", "members": ["R1.2", "C1.1"]}]}
    _same_netlist(design, good)
    merged = {"nets": [{"name": "GND", "members": ["R1.1", "C1.2", "R1.2", "C1.1"]},
                       {"name": "N1", "members": ["R1.2"]}]}
    with pytest.raises(ValueError, match="does not have the demo's netlist.*'GND'"):
        _same_netlist(design, merged)
    stray = {"nets": [*good["nets"], {"name": None, "members": ["R1.2", "U1.1"]}]}
    with pytest.raises(ValueError, match="unnamed net"):
        _same_netlist(design, stray)


def test_hidden_power_pins_join_the_nets_they_name_as_kicad_has_them(demos, tmp_path):
    """KiCad joins a hidden power-input pin to the net of its name; akcli 0.22 does so
    only for `(power)` symbols. Read as akcli reads it, pic_programmer's VPP fell into
    three pieces (the converter's output, Q2's emitter, R7 and C9), so the switch that
    feeds VPP-MCLR could never work, and video's chips had their supply pins as
    no-connects. The base must carry them, drawn: a label on a hidden pin connects."""
    from wirebench.taskgen.real import demos as demo_mod

    pic = demo_mod.read(demo_mod.BY_NAME["pic_programmer"], demos)
    vpp = set(pic.nets()["VPP"])
    assert {"Q2.3", "R7.1", "C9.1", "C3.1", "D10.1", "R16.2"} <= vpp, sorted(vpp)
    assert "VPP" in pic.named
    video = demo_mod.read(demo_mod.BY_NAME["video"], demos)
    assert video.part("U11").pins["11"] == "VCC" and video.part("U11").pins["10"] == "VSS"
    library = tmp_path / "symbols.kicad_sym"
    library.write_text(pic.library, encoding="utf-8")
    demo_mod.base_sheet(pic, library)  # refuses a base whose netlist differs
    drawn = {n.get("name"): set(n["members"])
             for n in demo_mod.layout_findings.nets["nets"]}
    assert vpp <= drawn["VPP"]


def test_every_part_the_values_hold_is_drawn(demos, tmp_path):
    """pic_programmer's mounting holes (P101-P106) have no pins: the layout places no
    such part, so the values criterion must not hold them either (every reference
    failed on `P101=None` before)."""
    from wirebench.taskgen.real import generate

    task, = generate("ci", demos, tmp_path / "pic", names=["pic_programmer"],
                     per_demo={"value": 1})
    meta = yaml.safe_load((task / "task.yaml").read_text())
    held = next(c for c in meta["criteria"] if c["kind"] == "values")["values"]
    placed = {op["designator"] for op in json.loads((task / "base_ops.json").read_text())["ops"]
              if op["op"] == "place_component"}
    assert held and set(held) <= placed, sorted(set(held) - placed)
    assert "P101" not in held


def test_the_pack_shows_a_pin_table_for_every_symbol_the_sheet_uses(sample, tmp_path):
    """A demo's library nickname may hold `-` (the coldfire kit's `kit-coldfire_schlib`):
    its pack once showed no pin table at all, and a change request had to guess where an
    LED's anode is. Here the ecc83 tasks' nickname is given a `-` and a `.`."""
    from wirebench.steps.prompt_pack import build

    for original in sample:
        task = tmp_path / original.name
        shutil.copytree(original, task)
        for name in ("base_ops.json", "task.md"):
            path = task / name
            path.write_text(path.read_text().replace("ecc83_schlib:", "ecc83-pp.v1_schlib:"))
        used = {op["lib_id"] for op in json.loads((task / "base_ops.json").read_text())["ops"]
                if op.get("lib_id")}
        assert used and all(u.startswith("ecc83-pp.v1_schlib:") for u in used)
        pack = build(task, REPO / "skills", [str(task / "symbols.kicad_sym")])
        tables = pack.split("# Reference: pin tables (`akcli pins`)", 1)
        assert len(tables) == 2, f"{task.name}: no pin tables"
        shown = {line.split()[0] for line in tables[1].splitlines() if "@(0,0)" in line}
        assert used <= shown, sorted(used - shown)


def test_a_repair_states_the_part_count_of_the_sheet_it_gives(demos, tmp_path):
    """A part never fitted (a bypass capacitor) is not on the given sheet: a count taken
    from the demo (189 where the sheet has 188) pointed at the gap."""
    from wirebench.taskgen.real import generate

    task, = generate("ci", demos, tmp_path / "pic", names=["pic_programmer"],
                     per_demo={"missing": 1})
    meta = yaml.safe_load((task / "task.yaml").read_text())
    assert meta["brief"].startswith(("Repair (bypass)", "Repair (pull-up)"))
    placed = len({op["designator"] for op in json.loads((task / "base_ops.json").read_text())
                  ["ops"] if op["op"] == "place_component"})
    assert meta["knobs"]["parts"] == placed + 1, "the part not fitted is the one missing"
    assert f"({placed} parts;" in (task / "task.md").read_text()
    assert meta["brief"].endswith(f", {placed} parts.")


def test_a_rework_plants_every_fault_it_lists_and_each_must_be_fixed(sample, tmp_path):
    """A board back from assembly: several faults, one bench note each. The faulty sheet
    differs from the clean one in exactly the listed parts, and the reference minus any one
    fault's fix fails (the gate checks only the last one left out)."""
    task = _task(sample, "rework")
    text = (task / "task.md").read_text()
    notes = [line for line in text.splitlines() if line[:3] in ("1. ", "2. ", "3. ")]
    fix = json.loads((task / "reference_ops.json").read_text())["ops"]
    refs = list(dict.fromkeys(op["designator"] for op in fix if "designator" in op))
    assert len(notes) == len(refs) >= 2, (notes, refs)
    meta = yaml.safe_load((task / "task.yaml").read_text())
    assert next(c for c in meta["criteria"] if c["id"] == "edit_size")["max"] == 6 * len(refs)
    assert _evaluate(task, fix, tmp_path / "ref")["passed"]
    for ref in refs:
        rest = [op for op in fix if op.get("designator") != ref
                and not str(op.get("at", "")).startswith(f"{ref}.")]
        result = _evaluate(task, rest, tmp_path / f"without-{ref}")
        assert not result["passed"], f"{ref}'s fault left in, and the sheet passes"


def test_the_base_layout_does_not_tell_a_small_parts_original_net_names(demos, tmp_path):
    """A fault renames a small part's labels on the sheet laid out for the right names, so
    the spacing must not follow a small part's own label lengths: give one resistor a
    long net name of the design instead of a short one, and no part moves."""
    from wirebench.taskgen.real import demos as demo_mod

    demo = next(d for d in demo_mod.DEMOS if d.name == "pic_programmer")
    design = demo_mod.read(demo, demos)
    library = tmp_path / "symbols.kicad_sym"
    library.write_text(design.library, encoding="utf-8")

    def places():
        ops = demo_mod.layout(design, [str(library)], "t")
        return {(op["designator"], op.get("unit")): (op["x_mil"], op["y_mil"])
                for op in ops if op["op"] == "place_component"}

    longest = max((n for p in design.parts if len(p.pins) <= 3 for n in p.pins.values()),
                  key=len)
    part = next(p for p in design.parts if p.ref.startswith("R") and len(p.pins) == 2
                and all(len(n) < len(longest) - 3 for n in p.pins.values()))
    before = places()
    part.pins["1"] = longest
    assert places() == before


def _resistance(nets: dict[str, set[str]], values: dict[str, str], a: str, b: str) -> float:
    """The ohmmeter reading worked out apart from the generator: one amp into `a`, `b` held
    at 0 V, the node voltages solved over the resistors (inductors a milliohm) of the
    netlist, with the values given."""
    import numpy as np

    from wirebench.verify.design_rules import part_value

    ends: dict[str, dict[str, str]] = {}
    for net, members in nets.items():
        for m in members:
            ref, pin = m.split(".", 1)
            ends.setdefault(ref, {})[pin] = net
    index = {n: i for i, n in enumerate(sorted(nets))}
    g = np.zeros((len(index), len(index)))
    for ref, on in ends.items():
        kind = re.sub(r"\d+$", "", ref)
        if kind == "RR" and "1" in on:  # an array: pin 1 common, "8x10K"
            ohms = part_value(values[ref].split("x")[-1])
            links = [(on["1"], net) for pin, net in on.items() if pin != "1"]
        else:
            ohms = (part_value(values.get(ref)) if kind in ("R", "RCAN")
                    else 1e-3 if kind in ("L", "FB", "F") else None)
            links = [tuple(on.values())] if len(on) == 2 else []
        for one, two in links:
            if one == two or not ohms:
                continue
            i, j = index[one], index[two]
            g[i, i] += 1 / ohms
            g[j, j] += 1 / ohms
            g[i, j] -= 1 / ohms
            g[j, i] -= 1 / ohms
    # nets that no resistor reaches would make the matrix singular: each gets a leak to
    # 0 V far weaker than any resistor
    g += np.eye(len(index)) * 1e-12
    keep = [i for n, i in index.items() if n != b]
    current = np.zeros(len(keep))
    current[keep.index(index[a])] = 1.0
    volts = np.linalg.solve(g[np.ix_(keep, keep)], current)
    return float(volts[keep.index(index[a])])


def test_an_ohmmeters_note_is_what_the_circuit_reads(demos, tmp_path):
    """A resistor's decade slip is told as an ohmmeter reading, and both figures follow
    from the circuit: the design's from the expected netlist and values, the board's from
    the faulty sheet's value; worked out here with a nodal solve, not the generator's
    code."""
    import re

    from wirebench.taskgen.real import generate

    made = generate("7", demos, tmp_path / "real", names=["ecc83", "pic_programmer"],
                    per_demo={"value": 3})
    checked = 0
    for task in made:
        m = re.search(r"ohmmeter from (.+?) to (.+?) reads ([\d.]+) (k|M|)Ω; the design "
                      r"gives ([\d.]+) (k|M|)Ω", (task / "task.md").read_text())
        if not m:
            continue
        net = [re.search(r"`([^`]+)`", m.group(i)).group(1) for i in (1, 2)]
        scale = {"": 1, "k": 1e3, "M": 1e6}
        board, want = (float(m.group(i)) * scale[m.group(i + 1)] for i in (3, 5))
        nets = {n["name"]: set(n["members"]) for n in
                json.loads((task / "expected_nets.json").read_text())["nets"]}
        values = next(c for c in yaml.safe_load((task / "task.yaml").read_text())["criteria"]
                      if c["id"] == "values")["values"]
        drawn = {op["designator"]: op["value"] for op in
                 json.loads((task / "base_ops.json").read_text())["ops"]
                 if op["op"] == "place_component" and "value" in op}
        assert _resistance(nets, values, *net) == pytest.approx(want, rel=0.005)
        assert _resistance(nets, {**values, **drawn}, *net) == pytest.approx(board, rel=0.005)
        checked += 1
    assert checked >= 2


def test_a_value_slip_another_slip_would_mimic_keeps_the_plain_note():
    """The reading must single the fault out: where another resistor ten times off would
    restore the design's figure as well, the note is not an ohmmeter's."""
    from wirebench.taskgen.layout import Part
    from wirebench.taskgen.real import faults

    class Sheet:
        named = {"VIN"}

        def __init__(self, parts):
            self.parts = parts
            from wirebench.taskgen.real.ohmmeter import Ohmmeter

            self.ohmmeter = Ohmmeter(self)

    class Places:
        def where(self, net, avoid=()):
            return f"`{net}`"

    def R(ref, a, b, value):
        return Part(ref, "Device:R", value, {"1": a, "2": b})

    # R1 fitted at 10K beside R2 at 10K, both across VIN: R2 at 1K would read alike.
    twins = Sheet([R("R1", "VIN", "GND", "1K"), R("R2", "VIN", "GND", "10K")])
    assert faults._reading(twins, Places(), twins.parts[0], "10K", ["VIN", "GND"]) is None
    # beside 4.7K, only R1 back at 1K gives the design's 825 ohms
    apart = Sheet([R("R1", "VIN", "GND", "1K"), R("R2", "VIN", "GND", "4.7K")])
    note = faults._reading(apart, Places(), apart.parts[0], "10K", ["VIN", "GND"])
    assert note and "from `VIN` to `GND` reads 3.2 kΩ; the design gives 825 Ω" in note


def _candidates(name: str, demos: Path, folder: Path):
    """A demo as the fault finders see it: its design, its base op-list (the layout
    without akcli's rounds of checks: the faults need only its labels) and its Places."""
    from wirebench.taskgen.real import demos as demo_mod
    from wirebench.taskgen.real import faults

    design = demo_mod.read(next(d for d in demo_mod.DEMOS if d.name == name), demos)
    library = folder / f"{name}.kicad_sym"
    library.write_text(design.library, encoding="utf-8")
    ops = demo_mod.layout(design, [str(library)], name, frozenset())
    return design, ops, faults.Places(design, [str(library)])


def test_a_pull_ups_slip_is_told_at_its_signal_not_its_rail(demos, tmp_path):
    """A resistor ten times off between a rail and a signal moves the signal's level,
    never the rail's, so its note sends the reader to the signal. The coldfire kit's
    IRQ pull-ups once read "the level at `+3.3V` sits far from its design value", and a
    trial helper looked for the fault around the regulator."""
    from wirebench.taskgen.real import faults

    design, ops, places = _candidates("kit-dev-coldfire-xilinx_5213", demos, tmp_path)
    told = 0
    for case in faults.value_faults(design, ops, places):
        part = design.part(case["ref"])
        nets = set(part.pins.values())
        signal = [n for n in nets if not faults.is_rail(n) and not faults.is_ground(n)]
        if faults.prefix(part.ref) != "R" or len(signal) != 1 or len(nets) != 2:
            continue
        first = re.search(r"`([^`]+)`", case["symptom"]).group(1)
        assert first == signal[0], (case["ref"], part.pins, case["symptom"])
        told += 1
    assert told >= 8, "too few pull-ups' slips: the check proves little"


def test_a_missing_parts_note_says_its_value(demos, tmp_path):
    """A part never fitted is judged by its value too, and a lone one (video's 2,2K SCL
    pull-up, a rail's only bulk capacitor) has no peer on the sheet to show it: a trial
    helper had to guess. The note says it."""
    from wirebench.taskgen.real import faults

    told = 0
    for name in ("pic_programmer", "video"):
        design, ops, places = _candidates(name, demos, tmp_path)
        for case in faults.missing_faults(design, ops, places):
            value = design.part(case["ref"]).value
            assert re.search(rf"(?<![\w,.]){re.escape(value)}(?![\w,.])", case["symptom"]), (
                case["ref"], value, case["symptom"])
            told += 1
    assert told >= 2


def test_every_fault_names_one_part_a_reader_could_mend(demos, tmp_path):
    """A fault is fair only where its note and the sheet single out the part: no twin of
    the same value on the nets the faulty part reaches (three 100nF on `VCC_PIC`, one of
    them moved from `VCC`; a trial helper picked one "from a vague memory of the demo"),
    no twin drawn the way a turned part now is, and a slip told without a reading names a
    net where no other part of its kind sits (a capacitor's "time constant ten times
    longer" fitted its RC's resistor as well)."""
    from wirebench.taskgen.real import faults

    seen = {"value": 0, "wrong-net": 0, "swapped": 0, "rail": 0}
    for name in ("pic_programmer", "flat_hierarchy", "kit-dev-coldfire-xilinx_5213"):
        design, ops, places = _candidates(name, demos, tmp_path)
        for kind in seen:
            for case in faults.FAULTS[kind](design, ops, places):
                part = design.part(case["ref"])
                seen[kind] += 1
                if kind == "value":
                    if "ohmmeter" in case["symptom"]:
                        continue
                    net = re.search(r"`([^`]+)`", case["symptom"]).group(1)
                    assert not [q.ref for q in design.parts if q.ref != part.ref
                                and faults.prefix(q.ref) == faults.prefix(part.ref)
                                and net in q.pins.values()], (name, case["symptom"])
                    continue
                pins = {op["at"].split(".", 1)[1]: op["name"] for op in case["base"]
                        if op["op"] == "add_net_label"
                        and str(op.get("at", "")).startswith(f"{part.ref}.")}
                assert pins != part.pins, (name, part.ref)
                twins = [q.ref for q in design.parts if q.ref != part.ref
                         and q.value == part.value
                         and (q.pins == pins if kind == "swapped"
                              else set(q.pins.values()) == set(pins.values()))]
                assert not twins, (name, kind, part.ref, pins, twins)
    assert min(seen.values()) >= 3, seen


def test_no_diode_of_an_antiparallel_pair_is_turned():
    """Turned round, one diode of an antiparallel pair matches its twin: the sheet would
    hold two alike, and no note could say which to turn back. (No installed demo has such
    a pair, so a sheet of our own.)"""
    from wirebench.taskgen.layout import Part
    from wirebench.taskgen.real import faults

    class Sheet:
        def __init__(self, parts):
            self.parts = parts

        def nets(self):
            out = {}
            for part in self.parts:
                for pin, net in part.pins.items():
                    out.setdefault(net, []).append(f"{part.ref}.{pin}")
            return out

    class Places:
        def where(self, net, avoid=()):
            return f"`{net}`"

    diodes = [Part("D1", "Device:D", "1N4148", {"1": "A", "2": "B"}),
              Part("D2", "Device:D", "1N4148", {"1": "B", "2": "A"}),
              Part("D3", "Device:D", "1N4148", {"1": "C", "2": "E"})]
    ops = [op for i, d in enumerate(diodes) for op in (
        {"op": "place_component", "lib_id": d.lib_id, "designator": d.ref,
         "x_mil": 1000 * (i + 1), "y_mil": 1000, "value": d.value},
        *({"op": "add_net_label", "name": n, "at": f"{d.ref}.{p}"}
          for p, n in d.pins.items()))]
    turned = faults.turned_faults(Sheet(diodes), ops, Places())
    assert [case["ref"] for case in turned] == ["D3"]


def test_a_value_changed_reads_as_on_a_board_built_with_it(demos):
    """The generator asks, for every resistor, what the meter would read were it ten times
    off (a rank-one update of one solve): each answer must be the reading of a board
    built with that value."""
    from wirebench.taskgen.real import demos as demo_mod
    from wirebench.taskgen.real.ohmmeter import Ohmmeter

    design = demo_mod.read(next(d for d in demo_mod.DEMOS if d.name == "pic_programmer"),
                           demos)
    meter = design.ohmmeter
    resistors = meter.resistors()
    moved = 0
    for probe in resistors[:6]:
        a, b = (design.part(probe).pins[p] for p in ("1", "2"))
        for ref in resistors:
            for factor in (10, 0.1):
                ohms = meter.edges[ref][2] * factor
                built = Ohmmeter(design, {ref: f"{ohms:.9g}"}).reading(a, b)
                assert meter.reading(a, b, ref, factor) == pytest.approx(built, rel=1e-6)
                moved += abs(built / meter.reading(a, b) - 1) > 0.01
    assert moved >= 12, "too few readings that a change moves: the check proves little"


READ = re.compile(r"from (.+?) to (.+?) it reads ([\d.]+) (k|M|)Ω where the design gives "
                  r"([\d.]+) (k|M|)Ω")


def _ohms(figure: str, prefix: str) -> float:
    return float(figure) * {"": 1, "k": 1e3, "M": 1e6}[prefix]


def test_two_resistors_exchanged_are_told_by_readings_no_other_exchange_gives(demos,
                                                                               tmp_path):
    """Two resistors fitted in each other's places: each value is one the design uses, so
    only the note's readings tell which two. Worked out here apart from the generator (a
    nodal solve per board): the figures are what the boards read, and of every exchange of
    two resistors on the faulty board, only the reference's gives back every design
    figure. Then the gate: the reference passes, the sheet as given and the near miss
    fail on the values."""
    import itertools

    from wirebench.taskgen.real import generate
    from wirebench.verify.design_rules import part_value

    made = generate("7", demos, tmp_path / "real", names=["pic_programmer"],
                    per_demo={"value-swap": 2})
    assert made, "pic_programmer gives no exchange to tell"
    for task in made:
        readings = [(re.search(r"`([^`]+)`", a).group(1),
                     re.search(r"`([^`]+)`", b).group(1), _ohms(bf, bp), _ohms(wf, wp))
                    for a, b, bf, bp, wf, wp in READ.findall((task / "task.md").read_text())]
        assert readings and "carry each other's values" in (task / "task.md").read_text()
        nets = {n["name"]: set(n["members"]) for n in
                json.loads((task / "expected_nets.json").read_text())["nets"]}
        values = next(c for c in yaml.safe_load((task / "task.yaml").read_text())["criteria"]
                      if c["id"] == "values")["values"]
        board = {**values, **{op["designator"]: op["value"] for op in json.loads(
            (task / "base_ops.json").read_text())["ops"] if op["op"] == "place_component"
            and "value" in op}}
        fixed = {op["designator"] for op in
                 json.loads((task / "reference_ops.json").read_text())["ops"]}
        assert len(fixed) == 2 and {board[r] for r in fixed} == {values[r] for r in fixed}
        for a, b, on_board, designed in readings:
            assert _resistance(nets, values, a, b) == pytest.approx(designed, rel=0.005)
            assert _resistance(nets, board, a, b) == pytest.approx(on_board, rel=0.005)
            assert abs(on_board / designed - 1) >= 0.1
        resistors = [r for r in board if re.fullmatch(r"R\d+", r) and part_value(board[r])]
        restore = []
        for r, s in itertools.combinations(resistors, 2):
            if board[r] == board[s]:
                continue
            back = {**board, r: board[s], s: board[r]}
            if all(abs(_resistance(nets, back, a, b) / want - 1) < 0.05
                   for a, b, _, want in readings):
                restore.append({r, s})
        assert restore == [fixed], f"{task.name}: {restore} restore the figures"
    proc = subprocess.run(["wirebench", "tasks", "check", str(tmp_path / "real"), "--json"],
                          capture_output=True, text=True, cwd=REPO)
    report = json.loads(proc.stdout)
    bad = {t["id"]: t["problems"] for t in report["tasks"] if t["problems"]}
    assert proc.returncode == 0 and not bad, bad
    for task in made:
        fails = {w["fails"] for w in yaml.safe_load((task / "task.yaml").read_text())
                 ["wrong_answers"]}
        assert fails == {"values"}


def test_an_exchange_reads_as_on_a_board_built_with_it(demos):
    """The generator asks what the meter reads for every exchange of two resistors of a
    piece (a rank-two update) and for every one refitted with another value (rank one):
    each answer must be the reading of a board built that way."""
    import numpy as np

    from wirebench.taskgen.layout import Part
    from wirebench.taskgen.real import demos as demo_mod
    from wirebench.taskgen.real.ohmmeter import Ohmmeter

    class Mesh:  # a bridge: every exchange moves the reading through two paths at once
        parts = [Part(ref, "Device:R", v, {"1": a, "2": b}) for ref, a, b, v in (
            ("R1", "A", "B", "1K"), ("R2", "B", "C", "4.7K"), ("R3", "B", "GND", "10K"),
            ("R4", "C", "GND", "2.2K"), ("R5", "A", "C", "3.3K"))]

    demo = demo_mod.read(demo_mod.BY_NAME["pic_programmer"], demos)
    # the demo's pieces are trees, probed from a resistor's net to a ground or rail
    probes = [(demo, demo.part(r).pins["1"], end) for r in demo.ohmmeter.resistors()[:6]
              for end in ("GND", "VCC", "VPP") if end in demo.ohmmeter.index
              and demo.ohmmeter.conducts(demo.part(r).pins["1"], end)
              and demo.part(r).pins["1"] != end]
    mesh = Mesh()
    mesh.ohmmeter = Ohmmeter(mesh)
    probes += [(mesh, "A", "GND"), (mesh, "B", "C")]
    checked = 0
    for design, a, b in probes:
        meter = design.ohmmeter
        piece = [r for r in meter.resistors() if meter.reaches(a, r)]
        exchanged = meter.swapped(a, b, piece)
        refitted = meter.refitted(a, b, piece, [330.0, 47e3])
        for k, one in enumerate(piece):
            for u, ohms in enumerate((330.0, 47e3)):
                built = Ohmmeter(design, {one: f"{ohms:.9g}"}).reading(a, b)
                assert refitted[k, u] == pytest.approx(built, rel=1e-6)
            for m, two in enumerate(piece):
                v1, v2 = meter.edges[one][2], meter.edges[two][2]
                if one == two or v1 == v2:
                    assert np.isnan(exchanged[k, m])
                    continue
                built = Ohmmeter(design, {one: f"{v2:.9g}", two: f"{v1:.9g}"}).reading(a, b)
                assert exchanged[k, m] == pytest.approx(built, rel=1e-6)
                checked += abs(built / meter.reading(a, b) - 1) > 0.01
    assert checked >= 10, "too few exchanges that move a reading: the check proves little"


def test_no_reading_is_given_where_a_part_of_unknown_state_closes_a_loop():
    """A trimmer, a jumper or a toggle conducts in a state the schematic does not give:
    where one joins two nets of a piece of the board (directly, or through other pieces),
    what the piece reads is unknown, and the meter says so (NaN). One that leads to a
    dead end, or back to the net it left, changes nothing and the reading stands."""
    import math

    from wirebench.taskgen.layout import Part
    from wirebench.taskgen.real.ohmmeter import Ohmmeter

    def R(ref, a, b, v="1K"):
        return Part(ref, "Device:R", v, {"1": a, "2": b})

    def jumper(ref, a, b):
        return Part(ref, "lib:JUMPER", None, {"1": a, "2": b})

    class Board:
        def __init__(self, *parts):
            self.parts = list(parts)

    chain = [R("R1", "A", "B"), R("R2", "B", "GND")]
    dead_end = Ohmmeter(Board(*chain, jumper("JP1", "B", "X")))
    assert dead_end.sure("A") and dead_end.reading("A", "GND") == pytest.approx(2000)
    two_ends = Ohmmeter(Board(*chain, jumper("JP1", "A", "X"), jumper("JP2", "B", "X2"),
                              R("R9", "X", "X3")))
    assert two_ends.reading("A", "GND") == pytest.approx(2000)
    # back to the net it left through a pull-up of another piece: still no loop in A..GND
    pull = [R("R3", "V", "Y"), jumper("JP1", "GND", "Y"), jumper("JP2", "GND", "V")]
    assert Ohmmeter(Board(*chain, *pull)).reading("A", "GND") == pytest.approx(2000)
    across = Ohmmeter(Board(*chain, jumper("JP1", "A", "B")))
    assert not across.sure("A") and math.isnan(across.reading("A", "GND"))
    # through another piece: A to Z by one jumper, Z to GND by another, Z..Z' a resistor
    around = Ohmmeter(Board(*chain, jumper("JP1", "A", "Z"), R("R4", "Z", "Z2"),
                            jumper("JP2", "Z2", "GND")))
    assert math.isnan(around.reading("A", "GND"))
    # a trimmer with its wiper on one end, across two nets of the piece
    pot = Part("RV1", "lib:POT", "10K", {"1": "A", "2": "GND", "3": "GND"})
    assert math.isnan(Ohmmeter(Board(*chain, pot)).reading("B", "GND"))
    # an array's resistors conduct, each from the common pin; a fuse is a short
    array = Part("RR1", "lib:RR8", "8x10K", {"1": "V", "2": "A", "3": "GND"})
    fuse = Part("F1", "lib:FUSE", "FUSE", {"1": "A", "2": "Q"})
    meter = Ohmmeter(Board(array, fuse, R("R5", "Q", "GND", "10K")))
    assert meter.reading("A", "GND") == pytest.approx(1 / (1 / 20e3 + 1 / 10e3), rel=1e-6)


def test_a_command_agent_gets_the_real_tasks_own_library_and_draws_the_base_with_it(sample,
                                                                                    tmp_path):
    """A real task draws with its own symbols.kicad_sym, whose symbols carry whole lib_ids
    (`ecc83_schlib:R`): a command agent's SYMBOLS_DIR holds it, and the agent's own akcli
    draws the base sheet from it with the demo's nets (it once got no library at all, so
    every `akcli draw` of its own failed)."""
    from wirebench.corpus.libraries import symbols_for, trimmed_copies
    from wirebench.corpus.tasks import load_task

    task = load_task(sample[0])
    made = trimmed_copies(symbols_for(task, []), task.shown_lib_ids(), tmp_path / "symbols")
    assert [p.name for p in made] == ["symbols.kicad_sym"]
    assert made[0].read_bytes() == (sample[0] / "symbols.kicad_sym").read_bytes()
    flags = [a for p in made for a in ("--symbols", str(p))]
    assert subprocess.run(["akcli", "new", "s.kicad_sch"], cwd=tmp_path,
                          capture_output=True).returncode == 0
    drawn = subprocess.run(["akcli", "draw", "s.kicad_sch", "--ops",
                            str(sample[0] / "base_ops.json"), "--apply", "--no-erc", *flags],
                           cwd=tmp_path, capture_output=True, text=True)
    assert drawn.returncode == 0, drawn.stdout[-600:] + drawn.stderr[-600:]
    nets = json.loads(subprocess.run(["akcli", "nets", "s.kicad_sch", "--json"], cwd=tmp_path,
                                     capture_output=True, text=True).stdout)["nets"]
    parts = {m.split(".")[0] for n in nets for m in n["members"] if not m.startswith("#")}
    placed = {op["designator"] for op in json.loads(
        (sample[0] / "base_ops.json").read_text())["ops"] if op["op"] == "place_component"}
    assert placed and placed <= parts | {r for r in placed if r.startswith("#")}


def test_the_guides_check_of_an_edit_runs_on_a_real_task(sample, tmp_path):
    """The guide's way to check an edit: draw BASE_OPS on a new sheet, then dry-run the
    edit on it. On a real repair the dry run of the reference passes and reports the
    repair in its net diff, and writes nothing."""
    import yaml as _yaml

    guide = " ".join((REPO / "skills" / "akcli-oplists.md").read_text().split())
    assert ("`akcli draw board.kicad_sch --ops \"$BASE_OPS\" --apply --no-erc`" in guide)
    task = next(t for t in sample if "(wrong-net)" in _yaml.safe_load(
        (t / "task.yaml").read_text())["brief"])
    flags = ["--symbols", str(task / "symbols.kicad_sym")]

    def akcli(*args):
        return subprocess.run(["akcli", *args], cwd=tmp_path, capture_output=True, text=True)

    assert akcli("new", "board.kicad_sch").returncode == 0
    assert akcli("draw", "board.kicad_sch", "--ops", str(task / "base_ops.json"), "--apply",
                 "--no-erc", *flags).returncode == 0
    before = (tmp_path / "board.kicad_sch").read_bytes()
    dry = akcli("draw", "board.kicad_sch", "--ops", str(task / "reference_ops.json"), "--json",
                *flags)
    assert dry.returncode == 0, dry.stdout[-600:] + dry.stderr[-600:]
    assert (tmp_path / "board.kicad_sch").read_bytes() == before
    assert json.loads(dry.stdout).get("net_diff"), dry.stdout[:600]


def test_no_bench_note_names_the_part_at_fault(demos, tmp_path):
    """A note finds a net by a pin of another part: on the faulty sheet the part at fault
    may not be on that net at all (a turned electrolytic's pin 1 sits on GND), and its
    name gives the fault away. Before `where` was told to avoid it, 2 of pic_programmer's
    17 tasks named it (a value slip's ohmmeter note, a turned capacitor). And the net comes
    first, the pin only as where to find it."""
    from wirebench.taskgen.real import generate

    made = generate("ci", demos, tmp_path / "real", names=["pic_programmer"])
    repairs = 0
    for task in made:
        text = (task / "task.md").read_text()
        if not text.startswith("# Repair"):
            continue
        repairs += 1
        notes = " ".join(line for line in text.splitlines()
                         if line.startswith("> ") or re.match(r"\d+\. ", line))
        fixed = {op["designator"] for op in json.loads(
            (task / "reference_ops.json").read_text())["ops"] if "designator" in op}
        assert not [r for r in fixed if re.search(rf"\b{re.escape(r)}\b", notes)], task.name
        # a pin is only ever where to find the net named before it: "the electrolytic on
        # C213 pin 1 (net `N18`)" was read as calling C213 the electrolytic
        assert not re.findall(r"(?<!\(at )\b[A-Z]{1,3}\d+ pin \d", notes), (task.name, notes)
    assert repairs >= 10
