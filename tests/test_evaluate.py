"""Broken answers, through the real akcli, score as akcli's own harness scores them."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import SYMBOLS, TASKS, reference_ops, write_ops

from wirebench.steps.pair import evaluate_pair

DIVIDER = TASKS / "01-divider"


def run(tmp_path: Path, ops_path: Path, task: Path = DIVIDER) -> dict:
    return evaluate_pair(ops_path, task, SYMBOLS, tmp_path / "pair",
                         {"model": "t", "task": task.name, "sample": 1})


def divider_with(tmp_path: Path, drop=(), add=()) -> Path:
    ops = [o for o in reference_ops("01-divider")
           if not (o["op"] == "add_net_label" and (o["name"], o["at"]) in drop)]
    return write_ops(tmp_path / "ops.json", ops + list(add))


def test_reference_scores_one_and_leaves_every_artifact(tmp_path):
    result = run(tmp_path, DIVIDER / "reference_ops.json")
    assert (result["score"], result["passed"], result["matched"]) == (1.0, True, 3)
    pair = tmp_path / "pair"
    for name in ("validate.json", "apply.json", "nets.json", "score.json", "board.kicad_sch"):
        assert (pair / name).stat().st_size > 0, name
    assert not [p for p in pair.iterdir() if p.name.startswith(".")], "scratch left behind"
    assert json.loads((pair / "score.json").read_text())["schema"] == "wirebench.score/1"


def test_the_rendered_sheet_shows_the_parts_and_nets(tmp_path):
    """Review: a render broken into the "not rendered" placeholder passed every test."""
    import re

    run(tmp_path, DIVIDER / "reference_ops.json")
    svg = (tmp_path / "pair" / "board.svg").read_text()
    assert "not rendered" not in svg
    texts = set(re.findall(r">([^<]+)</text>", svg))
    assert {"R1", "R2", "10k", "VIN", "ADC_IN", "GND"} <= texts, texts


def test_invalid_json_is_unreadable_and_scores_zero(tmp_path):
    bad = tmp_path / "ops.json"
    bad.write_text('{"protocol_version": 2, "ops": [')
    result = run(tmp_path, bad)
    assert (result["valid"], result["applied"], result["score"]) == (False, False, 0.0)
    assert result["errors"][0].startswith("unreadable op-list:")
    assert result["matched"] == 0 and result["expected"] == 3


def test_an_empty_answer_is_unreadable(tmp_path):
    empty = tmp_path / "ops.json"
    empty.write_bytes(b"")
    result = run(tmp_path, empty)
    assert result["errors"][0] == "unreadable op-list: the agent wrote no answer"


def test_validation_error_names_the_op_and_code(tmp_path):
    # The docs-drift case real agents hit: protocol 1 and `orientation` on a label.
    ops = json.loads((DIVIDER / "reference_ops.json").read_text())
    ops["protocol_version"] = 1
    path = tmp_path / "ops.json"
    path.write_text(json.dumps(ops))
    result = run(tmp_path, path)
    assert not result["valid"] and result["score"] == 0.0
    assert any("protocol" in e.lower() for e in result["errors"]), result["errors"]


def test_a_refused_draw_scores_zero_with_the_reason(tmp_path):
    path = divider_with(tmp_path, add=[{"op": "place_component", "lib_id": "Device:R_NOPE",
                                        "designator": "R9", "x_mil": 3000, "y_mil": 1000}])
    result = run(tmp_path, path)
    assert result["valid"] and not result["applied"]
    assert result["score"] == 0.0 and not result["passed"]
    assert any("SYMBOL_NOT_FOUND" in e for e in result["errors"]), result["errors"]


def test_the_strict_nets_rail_refuses_a_merge_of_existing_named_nets(tmp_path):
    task = TASKS / "13-edit-add-status-led"
    path = write_ops(tmp_path / "ops.json", reference_ops(task.name) + [
        {"op": "add_wire", "vertices": ["U1.3", "U1.4"]}])
    result = run(tmp_path, path, task)
    assert result["valid"] and not result["applied"] and result["score"] == 0.0
    assert any("MERGE BTN_IN + LED_CTRL" in e for e in result["errors"]), result["errors"]


def test_a_missing_net(tmp_path):
    result = run(tmp_path, divider_with(tmp_path, drop={("GND", "R2.2")}))
    assert (result["matched"], result["score"], result["passed"]) == (2, 0.6667, False)
    assert "net 'GND': missing (expected ['R2.2'])" in result["errors"]


def test_a_wrong_member(tmp_path):
    path = divider_with(tmp_path, drop={("ADC_IN", "R2.1"), ("GND", "R2.2")}, add=[
        {"op": "add_net_label", "name": "ADC_IN", "at": "R2.2"},
        {"op": "add_net_label", "name": "GND", "at": "R2.1"}])
    result = run(tmp_path, path)
    assert (result["matched"], result["score"]) == (1, 0.3333)
    assert "net 'ADC_IN': missing ['R2.1']; extra ['R2.2']" in result["errors"]


def test_an_extra_named_net_fails_a_full_match(tmp_path):
    path = divider_with(tmp_path, add=[
        {"op": "place_component", "lib_id": "Device:R", "designator": "R3", "x_mil": 3000,
         "y_mil": 1000},
        {"op": "add_net_label", "name": "TEST_POINT", "at": "R3.1"}])
    result = run(tmp_path, path)
    assert result["score"] == 1.0 and not result["passed"]
    assert result["extra_named_nets"] == ["TEST_POINT"]


def test_a_gnd_power_port_on_the_right_pin_passes(tmp_path):
    path = divider_with(tmp_path, drop={("GND", "R2.2")},
                        add=[{"op": "place_gnd", "at": "R2.2"}])
    result = run(tmp_path, path)
    assert result["passed"], result["errors"]
    nets = json.loads((tmp_path / "pair" / "nets.json").read_text())["nets"]
    gnd = next(n for n in nets if n["name"] == "GND")
    assert any(m.startswith("#PWR") for m in gnd["members"]), "akcli adds the port's pin"


def test_a_power_port_that_renames_a_net_fails(tmp_path):
    # place_vcc names its net VCC: VIN never lands and VCC is extra.
    path = divider_with(tmp_path, drop={("VIN", "R1.1")}, add=[{"op": "place_vcc", "at": "R1.1"}])
    result = run(tmp_path, path)
    assert (result["matched"], result["extra_named_nets"]) == (2, ["VCC"])
    assert not result["passed"]


def test_a_second_label_on_a_pin_merges_nets_without_a_refusal(tmp_path):
    # akcli accepts this on a fresh sheet (no named nets exist yet for the rail to
    # protect): VIN and ADC_IN become one net under one name, and the score catches it.
    path = divider_with(tmp_path, add=[{"op": "add_net_label", "name": "ADC_IN", "at": "R1.1"}])
    result = run(tmp_path, path)
    assert result["applied"] and not result["passed"]
    assert result["matched"] == 1, result["errors"]


def test_an_alias_label_on_the_right_net_is_not_a_named_net(tmp_path):
    # A second name on one net is an alias in akcli's netlist, not a net: akcli's harness
    # ignores it, and so does wirebench.
    path = divider_with(tmp_path, add=[{"op": "add_net_label", "name": "VREF", "at": "R1.1"}])
    result = run(tmp_path, path)
    nets = json.loads((tmp_path / "pair" / "nets.json").read_text())["nets"]
    assert next(n for n in nets if n["name"] == "VIN")["aliases"] == ["VREF"]
    verdict = {c["id"]: c["verdict"] for c in result["criteria"]}
    assert verdict["nets"] == "pass" and result["extra_named_nets"] == []
    # Both labels sit on one pin, so they print over each other: the layout catches it.
    assert verdict["layout"] == "fail" and "LAYOUT_COINCIDENT_TEXT" in str(result["errors"])


@pytest.mark.parametrize("field", [
    {"symbol_source": "/etc/passwd"},
    {"symbol_source": "../../other/Device.kicad_sym"},
])
def test_paths_in_an_op_list_must_stay_in_the_pair(tmp_path, field):
    ops = reference_ops("01-divider")
    ops[0] = {**ops[0], **field}
    result = run(tmp_path, write_ops(tmp_path / "ops.json", ops))
    assert not result["valid"] and not result["applied"]
    assert any(e.startswith("PATH_OUTSIDE_PAIR: $.ops[0].symbol_source") for e in result["errors"])


def test_a_sheets_map_that_climbs_out_is_refused(tmp_path):
    path = write_ops(tmp_path / "ops.json", reference_ops("01-divider"),
                     sheets={"child": {"file": "../../../elsewhere.kicad_sch"}})
    result = run(tmp_path, path)
    assert any("$.sheets.child.file" in e for e in result["errors"])


def test_arrange_postcheck_refuses_a_wire_across_groups(tmp_path):
    task = TASKS / "07-arrange-safe-blocks"
    ops = [o for o in reference_ops(task.name)
           if not (o["op"] == "add_net_label" and o["name"] == "GND" and o["at"] == "C1.2")]
    ops.append({"op": "route_net", "from": "D1.1", "to": "C1.2"})
    result = run(tmp_path, write_ops(tmp_path / "ops.json", ops,
                                     groups=json.loads((task / "reference_ops.json").read_text())
                                     ["groups"]), task)
    assert result["applied"] and result["score"] == 0.0 and not result["passed"]
    assert any(e.startswith("postcheck arrange --groups failed") for e in result["errors"])


def test_akcli_calls_in_one_process_match_the_akcli_command(tmp_path):
    """wirebench builds akcli's parser once per process; each call must still parse
    afresh, after a bad call too, and answer as the `akcli` command does."""
    import subprocess

    from wirebench.runtime import akcli_backend

    sheet = tmp_path / "board.kicad_sch"
    akcli_backend.new_sheet(sheet)
    good = str(DIVIDER / "reference_ops.json")
    bad = str(write_ops(tmp_path / "bad.json", [{"op": "add_wire", "from": [0, 0]}]))
    symbols = akcli_backend.symbol_args(SYMBOLS)
    calls = [("ops", "validate", bad), ("ops", "validate", good),
             ("draw", str(sheet), "--no-such-flag"),
             ("draw", str(sheet), "--ops", good, "--no-erc", *symbols),  # a dry run
             ("nets", str(sheet))]
    for argv in calls:
        here = akcli_backend.run(*argv)
        there = subprocess.run(["akcli", "-C", akcli_backend._config_file(), "--json", *argv],
                               capture_output=True, text=True)
        assert (here.rc, here.json()) == (there.returncode, json.loads(there.stdout)), argv
    assert akcli_backend.run("ops", "validate", bad).rc != 0
