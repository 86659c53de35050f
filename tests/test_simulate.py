"""The design tier: real akcli sim on real ngspice, part models against their stated
figures, the deck akcli builds, corners, and bad input as verdicts."""

from __future__ import annotations

import json
import math
import shutil
from pathlib import Path

import pytest
import yaml
from conftest import REPO, SYMBOLS, TASKS, write_ops

from wirebench.corpus.tasks import load_task
from wirebench.corpus.testbench import compile_spec, eng_value
from wirebench.runtime import akcli_backend
from wirebench.steps.pair import evaluate_pair
from wirebench.steps.tasks_check import check_corpus
from wirebench.verify.part_models import models_for

pytestmark = pytest.mark.skipif(akcli_backend.ngspice_library() is None,
                                reason="needs Debian's libngspice0 (or AKCLI_NGSPICE)")


def labelled(parts: list[tuple], nets: dict[str, list[str]]) -> list[dict]:
    """Parts on a wide grid, a label on every pin: the op-list of a test circuit."""
    ops = [{"op": "place_component", "lib_id": lib, "designator": ref, "value": value,
            "x_mil": 1000 + 1200 * i, "y_mil": 1000}
           for i, (ref, lib, value) in enumerate(parts)]
    ops += [{"op": "add_net_label", "name": n, "at": pin} for n, pins in nets.items()
            for pin in pins]
    return ops


def bench(tmp_path: Path, testbench: dict, interface: list[str], name: str = "t") -> Path:
    """A design task of one testbench, in a folder of its own."""
    task = tmp_path / name
    task.mkdir()
    (task / "task.md").write_text("# a test circuit\n")
    (task / "task.yaml").write_text(yaml.safe_dump({
        "id": name, "tier": "design", "family": "test", "brief": "a test circuit",
        "interface": interface, "testbench": testbench,
        "criteria": [{"id": "layout", "kind": "layout_clean"}]}))
    return task


def simulate(tmp_path: Path, task: Path, ops: list[dict], pair: str = "pair") -> tuple[dict, dict]:
    answer = write_ops(tmp_path / f"{pair}.json", ops)
    out = tmp_path / pair
    score = evaluate_pair(answer, task, SYMBOLS, out, {"model": "m", "task": task.name,
                                                       "sample": 1})
    return score, json.loads((out / "sim.json").read_text())


def measured(sim: dict) -> dict[str, float]:
    return {m["name"]: m["value"] for m in sim["measures"]}


# --- the part models against the figures the tasks state ------------------------------

@pytest.mark.parametrize("colour, drop", [("red", 1.95), ("green", 2.15), ("blue", 3.05)])
def test_an_led_model_drops_what_its_task_says_and_falls_2mv_per_degree(tmp_path, colour,
                                                                        drop):
    task = bench(tmp_path, {
        "loads": [{"node": "A", "current": "-10m"}],  # 10 mA pushed into the anode
        "analyses": {"tran": "1u 10u"},
        "measures": [{"name": "vf", "analysis": "tran", "meas": "FIND v(A) AT=5u",
                      "min": 0, "max": 10}],
        "corners": {"temperature": [77]}}, ["A", "GND"])
    _, sim = simulate(tmp_path, task, labelled([("D1", "Device:LED", colour)],
                                               {"A": ["D1.2"], "GND": ["D1.1"]}))
    vf = measured(sim)["vf"]
    assert vf == pytest.approx(drop, abs=0.02)
    warm = sim["corners"][0]["measured"]["vf"]
    assert -2.6e-3 < (warm - vf) / 50 < -1.4e-3


def test_op_amp_classes_have_their_gain_bandwidth_and_output_swing(tmp_path):
    """A follower: its -3 dB point is the gain-bandwidth; swept past the rails, its
    output stops where the class's swing says."""
    figures = {}
    for value in ("GP", "RRO"):
        task = bench(tmp_path, {
            "sources": [{"name": "VS", "node": "VIN", "value": "DC 1 AC 1"},
                        {"name": "VP", "node": "V5", "value": "DC 5"}],
            "analyses": {"ac": "dec 50 1k 100meg", "dc": "vs -1 6 0.05"},
            "measures": [
                {"name": "gbw", "analysis": "ac", "when": "vdb(VOUT)=-3", "min": 1},
                {"name": "high", "analysis": "dc", "meas": "FIND v(VOUT) AT=5.9", "min": -9},
                {"name": "low", "analysis": "dc", "meas": "FIND v(VOUT) AT=-0.9", "min": -9}]},
            ["VIN", "VOUT", "V5", "GND"], name=value)
        ops = labelled([("U1", "Amplifier:OpAmp_Single", value)],
                       {"VIN": ["U1.3"], "VOUT": ["U1.2", "U1.6"], "V5": ["U1.7"],
                        "GND": ["U1.4"]})
        figures[value] = measured(simulate(tmp_path, task, ops, pair=value)[1])
    assert figures["GP"]["gbw"] == pytest.approx(1e6, rel=0.25)
    assert figures["RRO"]["gbw"] == pytest.approx(5e6, rel=0.25)
    assert figures["GP"]["high"] == pytest.approx(3.5, abs=0.05)      # V+ - 1.5 V
    assert figures["RRO"]["high"] == pytest.approx(4.95, abs=0.05)    # V+ - 0.05 V
    assert figures["GP"]["low"] == pytest.approx(0.05, abs=0.05)
    assert figures["RRO"]["low"] == pytest.approx(0.05, abs=0.05)


def test_op_amp_inputs_work_rail_to_rail_with_no_offset_or_bias_current(tmp_path):
    """What the design tasks say of both classes' inputs (trial agents asked): a follower
    fed through 1 MΩ (a bias current of 1 nA would show as 1 mV) follows within 1 mV,
    near either rail, as far as the class's output can go."""
    for value, near_top in (("GP", 3.4), ("RRO", 4.9)):
        task = bench(tmp_path, {
            "sources": [{"name": "VS", "node": "VIN", "value": "DC 1"},
                        {"name": "VP", "node": "V5", "value": "DC 5"}],
            "analyses": {"dc": "vs 0 5 0.1"},
            "measures": [{"name": f"at{i}", "analysis": "dc",
                          "meas": f"FIND v(VOUT) AT={v}", "min": -9}
                         for i, v in enumerate((0.1, 1, near_top))]},
            ["VIN", "VOUT", "V5", "GND"], name=f"in-{value}")
        ops = labelled([("U1", "Amplifier:OpAmp_Single", value), ("R1", "Device:R", "1meg")],
                       {"VIN": ["R1.1"], "P": ["R1.2", "U1.3"], "VOUT": ["U1.2", "U1.6"],
                        "V5": ["U1.7"], "GND": ["U1.4"]})
        got = measured(simulate(tmp_path, task, ops, pair=f"in-{value}")[1])
        for i, v in enumerate((0.1, 1, near_top)):
            assert got[f"at{i}"] == pytest.approx(v, abs=1e-3), (value, v, got)


def test_the_ldo_regulates_drops_out_and_gives_nothing_from_a_reversed_input(tmp_path):
    task = bench(tmp_path, {
        "sources": [{"name": "VS", "node": "VIN", "value": "DC 5"}],
        "loads": [{"node": "VOUT", "resistance": 165}],                 # 20 mA
        "analyses": {"dc": "vs -3 6 0.05"},
        "measures": [
            {"name": "reg", "analysis": "dc", "meas": "FIND v(VOUT) AT=5", "min": -9},
            {"name": "dropout", "analysis": "dc", "meas": "FIND v(VOUT) AT=3.4", "min": -9},
            {"name": "reversed", "analysis": "dc", "meas": "FIND v(VOUT) AT=-3", "min": -9},
            {"name": "iin", "analysis": "dc", "meas": "FIND i(vs) AT=5", "min": -9}]},
        ["VIN", "VOUT", "GND"])
    ops = labelled([("U1", "Regulator:LDO_3P3", "LDO_3P3")],
                   {"VIN": ["U1.1"], "GND": ["U1.2"], "VOUT": ["U1.3"]})
    got = measured(simulate(tmp_path, task, ops)[1])
    assert got["reg"] == pytest.approx(3.3, abs=0.01)
    assert got["dropout"] == pytest.approx(3.4 - 0.25, abs=0.03)
    assert got["reversed"] == pytest.approx(0.0, abs=0.05)
    assert got["iin"] == pytest.approx(-(3.3 / 165 + 50e-6), rel=0.01)  # load + quiescent


BUCK = [("U1", "Regulator:BUCK_CM", "BUCK_CM"), ("L1", "Device:L", "4.7u")]


def test_the_buck_regulators_current_loop_has_the_gain_limit_and_bandwidth_d11_states(
        tmp_path):
    """COMP held by a source: the inductor's current is 5 A/V x (COMP - 0.6 V), read as
    the drop on a 1 ohm load (2 A at 1.0 V), near 4 A at 3 V (its limit), and it follows
    COMP through a second-order low-pass at 250 kHz with a Q of 1 (at 250 kHz: the DC
    gain again, Q x 1, and 90 degrees behind; at 1 A, where the gain is still 5 A/V)."""
    task = bench(tmp_path, {
        "sources": [{"name": "VS", "node": "VIN", "value": "DC 12"},
                    {"name": "VC", "node": "COMP", "value": "DC 0.8 AC 1"}],
        "loads": [{"node": "VOUT", "resistance": 1}],
        "analyses": {"dc": "vc 0.6 3.05 0.05", "ac": "lin 3 1k 250k 499k"},
        "measures": [
            {"name": "at1", "analysis": "dc", "meas": "FIND v(VOUT) AT=1.0", "min": -9},
            {"name": "at3", "analysis": "dc", "meas": "FIND v(VOUT) AT=3.0", "min": -9},
            {"name": "low", "analysis": "ac", "meas": "FIND vm(VOUT) AT=1k", "min": -9},
            {"name": "f0", "analysis": "ac", "meas": "FIND vm(VOUT) AT=250k", "min": -9},
            {"name": "f0_phase", "analysis": "ac", "meas": "FIND vp(VOUT) AT=250k",
             "min": -9}]},
        ["VIN", "VOUT", "COMP", "GND"])
    ops = labelled(BUCK, {"VIN": ["U1.1"], "GND": ["U1.2", "U1.4"], "SW": ["U1.3", "L1.1"],
                          "VOUT": ["L1.2"], "COMP": ["U1.5"]})
    got = measured(simulate(tmp_path, task, ops)[1])
    assert got["at1"] == pytest.approx(2.0, rel=0.002)
    assert got["at3"] == pytest.approx(4.0, rel=0.01)
    assert got["low"] == pytest.approx(5.0, rel=0.002)
    assert got["f0"] == pytest.approx(5.0, rel=0.02)
    assert got["f0_phase"] == pytest.approx(-math.pi / 2, abs=0.02)


def test_the_buck_regulators_error_amplifier_has_its_reference_and_transconductance(
        tmp_path):
    """FB held 10 mV below the 0.8 V reference: 500 uS pushes 5 uA into COMP, read across
    a 10 kohm load from COMP to a 1 V net (1.05 V, less the 5 Mohm's share). With FB at
    1 V, the amplifier would pull COMP to 0 V and is held near its 0.4 V floor; with FB at
    0 V it would push COMP to 5 V and is held near 2.4 V."""
    task = bench(tmp_path, {
        "sources": [{"name": "VS", "node": "VIN", "value": "DC 12"},
                    {"name": "VF", "node": "FB", "value": "DC 0.79"},
                    {"name": "VONE", "node": "ONE", "value": "DC 1"}],
        "loads": [{"node": "COMP", "resistance": "10k", "to": "ONE"},
                  {"node": "VOUT", "resistance": 1}],
        "analyses": {"dc": "vf 0 1.01 0.01"},
        "measures": [
            {"name": "ea_out", "analysis": "dc", "meas": "FIND v(COMP) AT=0.79", "min": -9},
            {"name": "low_clamp", "analysis": "dc", "meas": "FIND v(COMP) AT=1.0", "min": -9},
            {"name": "high_clamp", "analysis": "dc", "meas": "FIND v(COMP) AT=0", "min": -9}]},
        ["VIN", "VOUT", "FB", "COMP", "ONE", "GND"])
    # R9 only puts the 1 V net on the sheet.
    ops = labelled([*BUCK, ("R9", "Device:R", "1G")],
                   {"VIN": ["U1.1"], "GND": ["U1.2", "R9.2"], "SW": ["U1.3", "L1.1"],
                    "VOUT": ["L1.2"], "FB": ["U1.4"], "COMP": ["U1.5"], "ONE": ["R9.1"]})
    got = measured(simulate(tmp_path, task, ops)[1])
    # 5 uA into COMP, less what the amplifier's own 5 Mohm takes to ground
    assert got["ea_out"] == pytest.approx((1 + 10e3 * 5e-6) / (1 + 10e3 / 5e6), abs=2e-4)
    assert got["low_clamp"] == pytest.approx(0.4, abs=0.05)
    assert got["high_clamp"] == pytest.approx(2.4, abs=0.1)


def test_a_load_current_steps_with_its_waveform_and_a_bad_one_is_refused_by_name(tmp_path):
    """A load's `waveform` steps its current in a transient (2 mA to 5 mA through 1 kohm
    of source resistance); a waveform that is no PULSE or PWL (a second line) is refused
    when the task loads, with the key named."""
    from wirebench.corpus.tasks import TaskError

    stepped = {"node": "OUT", "current": "2m", "waveform": "PULSE(2m 5m 1m 1u 1u 1m 3m)"}
    testbench = {
        "sources": [{"name": "VS", "node": "OUT", "value": "DC 10", "resistance": "1k"}],
        "loads": [stepped],
        "analyses": {"tran": "10u 1.5m"},
        "measures": [
            {"name": "before", "analysis": "tran", "meas": "FIND v(OUT) AT=0.5m", "min": -9},
            {"name": "after", "analysis": "tran", "meas": "FIND v(OUT) AT=1.5m", "min": -9}]}
    task = bench(tmp_path, testbench, ["OUT", "GND"])
    ops = labelled([("R1", "Device:R", "1G")], {"OUT": ["R1.1"], "GND": ["R1.2"]})
    got = measured(simulate(tmp_path, task, ops)[1])
    assert got["before"] == pytest.approx(10 - 2, abs=0.01)
    assert got["after"] == pytest.approx(10 - 5, abs=0.01)
    stepped["waveform"] = "PULSE(2m 5m 1m 1u 1u 1m 3m)\n.control"
    with pytest.raises(TaskError, match="waveform"):
        load_task(bench(tmp_path, testbench, ["OUT", "GND"], name="bad"))


def test_a_measure_that_shadows_a_net_a_later_measure_reads_is_refused(tmp_path):
    """ngspice keeps a measure's result under its name: a measure `comp` before a
    `FIND v(COMP)` made that one fail to measure (found writing d11's model tests). The
    task is refused when it loads, with the measure named; a measure named like a net
    that no later measure of its analysis reads (d02's `vout`; a generated task's `vout`
    before an AC measure of `vdb(VOUT)`) is harmless, and stays allowed."""
    from wirebench.corpus.tasks import TaskError

    def measure(name, at):
        return {"name": name, "analysis": "dc", "meas": f"FIND v(IN) AT={at}", "min": 0}

    testbench = {"sources": [{"name": "VS", "node": "IN", "value": "DC 1"}],
                 "analyses": {"dc": "vs 0 1 0.5"},
                 "measures": [measure("In", 1), measure("half", 0.5)]}
    with pytest.raises(TaskError, match="measure 'In' shadows the net"):
        load_task(bench(tmp_path, testbench, ["IN", "GND"]))
    testbench["measures"].reverse()
    assert load_task(bench(tmp_path, testbench, ["IN", "GND"], name="ok")).id == "ok"
    testbench["analyses"]["ac"] = "dec 10 1 1k"
    testbench["measures"] = [measure("In", 1), {"name": "gain", "analysis": "ac",
                                                "meas": "FIND vm(IN) AT=10", "min": 0}]
    assert load_task(bench(tmp_path, testbench, ["IN", "GND"], name="ac")).id == "ac"


def test_a_zener_holds_its_voltage_at_its_test_current(tmp_path):
    task = bench(tmp_path, {
        "loads": [{"node": "K", "current": "-5m"}],
        "analyses": {"tran": "1u 10u"},
        "measures": [{"name": "vz", "analysis": "tran", "meas": "FIND v(K) AT=5u",
                      "min": 0, "max": 10}]}, ["K", "GND"])
    ops = labelled([("D1", "Device:D_Zener", "3V3")], {"K": ["D1.1"], "GND": ["D1.2"]})
    assert measured(simulate(tmp_path, task, ops)[1])["vz"] == pytest.approx(3.3, abs=0.05)


@pytest.mark.parametrize("lib_id, drop", [("Device:D", 0.72), ("Device:D_Schottky", 0.35)])
def test_a_diode_drops_what_its_datasheet_figure_says(tmp_path, lib_id, drop):
    task = bench(tmp_path, {
        "loads": [{"node": "A", "current": "-10m"}],
        "analyses": {"tran": "1u 10u"},
        "measures": [{"name": "vf", "analysis": "tran", "meas": "FIND v(A) AT=5u",
                      "min": 0, "max": 10}]}, ["A", "GND"])
    ops = labelled([("D1", lib_id, "D")], {"A": ["D1.2"], "GND": ["D1.1"]})
    assert measured(simulate(tmp_path, task, ops)[1])["vf"] == pytest.approx(drop, abs=0.03)


def test_the_transistors_have_their_stated_gain_and_on_resistance(tmp_path):
    """The NPN's hFE at 10 µA of base current; each FET's resistance at 3.3 V of drive."""
    npn = bench(tmp_path, {
        "sources": [{"name": "VC", "node": "C", "value": "DC 5"}],
        "loads": [{"node": "B", "current": "-10u"}],
        "analyses": {"tran": "1u 10u"},
        "measures": [{"name": "ic", "analysis": "tran", "meas": "FIND i(vc) AT=5u",
                      "min": -1, "max": 1}]}, ["B", "C", "GND"], name="npn")
    ops = labelled([("Q1", "Device:Q_NPN_BCE", "NPN")],
                   {"B": ["Q1.1"], "C": ["Q1.2"], "GND": ["Q1.3"]})
    hfe = -measured(simulate(tmp_path, npn, ops, pair="npn")[1])["ic"] / 10e-6
    assert 150 < hfe < 220
    nfet = bench(tmp_path, {
        "sources": [{"name": "VG", "node": "G", "value": "DC 3.3"}],
        "loads": [{"node": "D", "current": "-10m"}],
        "analyses": {"tran": "1u 10u"},
        "measures": [{"name": "vds", "analysis": "tran", "meas": "FIND v(D) AT=5u",
                      "min": -1, "max": 1}]}, ["G", "D", "GND"], name="nfet")
    ops = labelled([("Q1", "Device:Q_NMOS_GSD", "NMOS")],
                   {"G": ["Q1.1"], "GND": ["Q1.2"], "D": ["Q1.3"]})
    assert measured(simulate(tmp_path, nfet, ops, pair="nfet")[1])["vds"] / 10e-3 == \
        pytest.approx(1.0, rel=0.3)
    pfet = bench(tmp_path, {
        "sources": [{"name": "VS", "node": "S", "value": "DC 5"},
                    {"name": "VG", "node": "G", "value": "DC 1.7"}],
        "loads": [{"node": "D", "current": "10m"}],
        "analyses": {"tran": "1u 10u"},
        "measures": [{"name": "vd", "analysis": "tran", "meas": "FIND v(D) AT=5u",
                      "min": -9, "max": 9}]}, ["G", "S", "D", "GND"], name="pfet")
    ops = labelled([("Q1", "Device:Q_PMOS_GSD", "PMOS"), ("C1", "Device:C", "1n")],
                   {"G": ["Q1.1"], "S": ["Q1.2"], "D": ["Q1.3", "C1.1"], "GND": ["C1.2"]})
    vd = measured(simulate(tmp_path, pfet, ops, pair="pfet")[1])["vd"]
    assert (5 - vd) / 10e-3 == pytest.approx(1.5, rel=0.3)


# --- the deck akcli builds is the circuit the task describes --------------------------

def deck_of(task_id: str, tmp_path: Path) -> list[str]:
    task = load_task(TASKS / task_id)
    pair = tmp_path / task_id
    evaluate_pair(task.reference_path, task.path, SYMBOLS, pair,
                  {"model": "r", "task": task_id, "sample": 1})
    comps = akcli_backend.run("read", str(pair / "board.kicad_sch")).json()["components"]
    models, missing = models_for(comps)
    assert missing == []
    spec = pair / "spec.json"
    spec.write_text(json.dumps(compile_spec(task.testbench, models)))
    res = akcli_backend.run("sim", str(pair / "board.kicad_sch"), "--sim", str(spec),
                            "--deck-only", as_json=False)
    assert res.rc == 0, res.stderr
    return [line.strip() for line in res.stdout.splitlines()]


def test_the_rc_deck_holds_the_parts_nodes_values_source_and_load(tmp_path):
    deck = deck_of("d01-rc-lowpass-loaded", tmp_path)
    assert "R1 VIN VOUT 100" in deck
    assert "C1 VOUT 0 120n" in deck
    assert "VSENS VSENS_INT 0 DC 0 AC 1" in deck                  # the source ...
    assert "BVSENS_RS VSENS_INT VIN I=(v(VSENS_INT)-v(VIN))/1000.0" in deck  # ... behind 1k
    assert "BLOAD1 VOUT 0 I=v(VOUT)/10000.0" in deck             # the ADC's 10 kΩ


def test_the_led_switch_deck_orders_anode_cathode_and_collector_base_emitter(tmp_path):
    deck = deck_of("d05-npn-led-switch", tmp_path)
    assert "D1 LED_A LED_K WB_LED_RED" in deck
    assert "Q1 LED_K BASE 0 WB_NPN" in deck
    assert "R1 VCC LED_A 300" in deck and "R2 GPIO BASE 4.7k" in deck


def test_the_op_amp_deck_wires_plus_minus_out_and_both_rails(tmp_path):
    deck = deck_of("d03-noninverting-gain", tmp_path)
    assert "XU1 VIN FB VOUT VPOS VNEG WB_OPAMP_GP" in deck
    assert any(line.startswith(".subckt WB_OPAMP_GP") for line in deck)


# --- corners ---------------------------------------------------------------------------

def test_the_worst_corner_moves_each_part_the_way_that_hurts(tmp_path):
    """The divider's output rises with R2 and falls with R1, so its high corner is
    R1 low and R2 high; the answer that is fine at nominal fails exactly there."""
    task = TASKS / "d02-divider-into-adc"
    score, sim = simulate(tmp_path, task, json.loads(
        (task / "wrong" / "only-at-nominal.json").read_text())["ops"])
    vout = next(m for m in sim["measures"] if m["name"] == "vout")
    assert vout["ok_nominal"] and not vout["ok_corners"]
    assert sim["worst_corner"]["params"] == {"R1": "19404", "R2": "20200"}
    assert sim["worst_corner"]["measured"]["vout"] > 3.06
    assert not score["passed"] and score["score"] == 0.5


# --- bad input is a verdict on the pair ------------------------------------------------

def rc_task(tmp_path: Path, **extra) -> Path:
    testbench = {"sources": [{"name": "VS", "node": "VIN", "value": "DC 0 AC 1"}],
                 "analyses": {"ac": "dec 20 10 100k"},
                 "measures": [{"name": "f3db", "analysis": "ac", "when": "vdb(VOUT)=-3",
                               "target": "1.6k", "tol": 0.1}], **extra}
    return bench(tmp_path, testbench, ["VIN", "VOUT", "GND"])


RC = {"VIN": ["R1.1"], "VOUT": ["R1.2", "C1.1"], "GND": ["C1.2"]}


def test_a_part_with_no_model_needs_a_person_and_never_passes(tmp_path):
    ops = labelled([("R1", "Device:R", "1k"), ("C1", "Device:C", "100n"),
                    ("U1", "Sensor:TempSensor_I2C", "TMP")],
                   {**RC, "VOUT": [*RC["VOUT"], "U1.3"], "GND": [*RC["GND"], "U1.2"]})
    score, sim = simulate(tmp_path, rc_task(tmp_path), ops)
    assert sim["status"] == "needs_human"
    assert "U1 (Sensor:TempSensor_I2C) has no simulation model" in sim["reason"]
    assert "sim" in score["needs_human"] and not score["passed"] and score["score"] == 0


def test_a_value_akcli_cannot_read_is_an_error_verdict(tmp_path):
    ops = labelled([("R1", "Device:R", "banana"), ("C1", "Device:C", "100n")], RC)
    score, sim = simulate(tmp_path, rc_task(tmp_path), ops)
    assert sim["status"] == "error" and "banana" in sim["reason"]
    assert not score["passed"]


def test_a_simulation_past_its_timeout_is_an_error_verdict(tmp_path):
    ops = labelled([("R1", "Device:R", "1k"), ("C1", "Device:C", "100n")], RC)
    task = rc_task(tmp_path, analyses={"tran": "1n 1"}, timeout_s=0.5,
                   measures=[{"name": "v", "analysis": "tran", "meas": "FIND v(VOUT) AT=1",
                              "min": 0}])
    score, sim = simulate(tmp_path, task, ops)
    assert sim["status"] == "error" and "timeout" in sim["reason"]
    assert not score["passed"]


def test_a_missing_interface_net_or_nothing_drawn_scores_zero_with_the_reason(tmp_path):
    task = rc_task(tmp_path)
    no_vout = labelled([("R1", "Device:R", "1k"), ("C1", "Device:C", "100n")],
                       {"VIN": ["R1.1"], "OUT": ["R1.2", "C1.1"], "GND": ["C1.2"]})
    score, sim = simulate(tmp_path, task, no_vout, pair="a")
    assert sim["status"] == "interface_missing" and "VOUT" in sim["reason"]
    assert score["score"] == 0 and not score["passed"]
    score, sim = simulate(tmp_path, task, [{"op": "no_such_op"}], pair="b")
    assert sim["status"] == "not_drawn" and score["outcome"] == "invalid"


def test_the_right_answer_passes_and_nothing_lands_outside_the_pair(tmp_path):
    task = rc_task(tmp_path)
    before = set(tmp_path.iterdir())
    score, sim = simulate(tmp_path, task, labelled(
        [("R1", "Device:R", "1k"), ("C1", "Device:C", "100n")], RC))
    assert sim["status"] == "pass" and score["passed"] and score["score"] == 1.0
    assert measured(sim)["f3db"] == pytest.approx(1592, rel=0.02)
    assert set(tmp_path.iterdir()) - before == {tmp_path / "pair.json", tmp_path / "pair"}
    assert sorted(p.name for p in (tmp_path / "pair").iterdir()) == [
        "apply.json", "board.kicad_sch", "board.svg", "nets.json", "score.json", "sim.json",
        "validate.json"]


# --- the corpus gate holds design tasks to their wrong answers -------------------------

def test_the_gate_fails_a_wrong_answer_that_passes_or_fails_for_another_reason(tmp_path):
    root = tmp_path / "tasks"
    shutil.copytree(TASKS / "d07-zener-reference", root / "d07-zener-reference")
    task = root / "d07-zener-reference"
    shutil.copy(task / "reference_ops.json", task / "wrong" / "starved-at-low-input.json")
    meta = yaml.safe_load((task / "task.yaml").read_text())
    meta["wrong_answers"][1]["fails"] = "sim:input_current"
    (task / "task.yaml").write_text(yaml.safe_dump(meta))
    problems = check_corpus(root, SYMBOLS)["tasks"][0]["problems"]
    assert any("starved-at-low-input.json passes; it should fail on sim:vref_low_input" in p
               for p in problems), problems
    assert any("zener-reversed.json fails, but not on sim:input_current" in p
               for p in problems), problems


def test_engineering_values_read_as_akcli_reads_them():
    assert eng_value("4k7") == pytest.approx(4700)
    assert eng_value("100n") == pytest.approx(1e-7)
    assert eng_value("1meg") == pytest.approx(1e6)
    assert eng_value("-1m") == pytest.approx(-1e-3)
    assert eng_value("2.2e-6") == pytest.approx(2.2e-6)
    assert eng_value("banana") is None and eng_value("4.7k7") is None


def test_a_circuit_with_nothing_on_gnd_cannot_be_simulated_as_the_guide_warns(tmp_path):
    """d09's level shifter needs nothing on GND, and the task says GND must exist: drawn
    bare it is `interface_missing` (akcli's simulator takes GND as its reference), and a
    rail decoupled to GND, as the guide says, makes it simulate and pass."""
    task = TASKS / "d09-level-shifter"
    ops = json.loads((task / "reference_ops.json").read_text())["ops"]

    def without(*refs):
        return [o for o in ops if o.get("designator") not in refs
                and str(o.get("at", "")).split(".")[0] not in refs]

    bare, _ = simulate(tmp_path, task, without("C1", "C2"), pair="bare")
    assert not bare["passed"] and bare["sim_status"] == "interface_missing"
    one, _ = simulate(tmp_path, task, without("C2"), pair="one")
    assert one["passed"], one["first_finding"]
    guide = " ".join((REPO / "skills" / "akcli-oplists.md").read_text().split())
    assert "`GND` must reach a pin even where your circuit needs nothing there" in guide
