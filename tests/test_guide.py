"""The guide agents read (skills/akcli-oplists.md) against akcli itself: each statement
that an agent found wrong once is checked here, so that the next akcli release that
changes the behaviour turns this red before it misleads an agent again."""

from __future__ import annotations

import json
import subprocess

from conftest import REPO, SYMBOLS

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
