"""The simulate step, its test bench and its part models, on one real drawn circuit and
real ngspice: the NPN LED switch a real run drew (the reference of d05), put through
testbenches that pass, fail at nominal, fail only at a corner, name a missing interface
net, cannot run, or load and drive its nets in each way a testbench can. One akcli sim a
test or so, so that every mutant of steps/simulate.py, corpus/testbench.py and
verify/part_models.py meets them (benchmarks/mutation_score.py --config verify).
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
import yaml
from test_mut_evidence import DESIGN, finished_run  # noqa: F401 - a fixture
from test_simulate import bench

from wirebench.corpus.testbench import compile_spec, describe_window, eng_value, window
from wirebench.runtime import akcli_backend
from wirebench.steps.simulate import WAVE_POINTS, simulate
from wirebench.verify.part_models import library, models_for

pytestmark = pytest.mark.skipif(akcli_backend.ngspice_library() is None,
                                reason="needs Debian's libngspice0 (or AKCLI_NGSPICE)")
THE_TASK = yaml.safe_load((Path(__file__).parents[1] / "tasks" / DESIGN / "task.yaml")
                          .read_text())
TESTBENCH = THE_TASK["testbench"]
INTERFACE = THE_TASK["interface"]


@pytest.fixture
def drawn(finished_run, tmp_path):  # noqa: F811 - the fixture imported above
    """The switch as the reference drew it in a real run: its sheet, apply.json and
    nets.json in a pair folder of this test's own."""
    pair = tmp_path / "pair"
    pair.mkdir()
    source = Path(finished_run["results"]) / "runs" / "reference" / DESIGN / "1"
    for name in ("board.kicad_sch", "apply.json", "nets.json"):
        shutil.copy(source / name, pair / name)
    return pair


def run(pair: Path, testbench: dict, interface=INTERFACE, name="t") -> dict:
    """The simulate step on the drawn pair with this testbench; sim.json as written."""
    task = bench(pair.parent, testbench, interface, name=name)
    out = pair / f"{name}.sim.json"
    returned = simulate(pair / "board.kicad_sch", pair / "apply.json", pair / "nets.json",
                        task, out)
    written = json.loads(out.read_text())
    assert returned is None or returned == written
    return written


def measures(sim: dict) -> dict:
    return {m["name"]: m for m in sim["measures"]}


def nominal_only(**changes) -> dict:
    tb = {k: v for k, v in TESTBENCH.items() if k not in ("corners", "plot")}
    return {**tb, **changes}


# --- values, windows and specs, and part models ------------------------------------------

@pytest.mark.parametrize("text, value", [
    ("4.7k", 4700), ("4k7", 4700), ("100n", 1e-7), ("1meg", 1e6), ("2.2e-6", 2.2e-6),
    ("-1m", -1e-3), ("1.5", 1.5), (".5", 0.5), ("10K", 1e4), ("3MEG", 3e6), ("1g", 1e9),
    ("2t", 2e12), ("5f", 5e-15), ("7p", 7e-12), ("3u", 3e-6), (" 12 ", 12), (1e-3, 1e-3)])
def test_an_engineering_value_reads_as_akcli_reads_it(text, value):
    assert eng_value(text) == pytest.approx(value)


@pytest.mark.parametrize("text", ["4.7k7", "k", "1x", "", "1e", "abc", "1 k", "1.2.3"])
def test_what_is_no_engineering_value_reads_as_none(text):
    assert eng_value(text) is None


def test_a_window_reads_as_akcli_and_as_a_person_read_it():
    assert window({"target": "1k", "tol": 0.1}) == {"approx": "1000.0", "tol": 0.1}
    assert window({"target": "-1m"}) == {"approx": "-0.001", "tol": 0.05}
    assert window({"min": "2.9", "max": "3.1"}) == {"ge": "2.9", "le": "3.1"}
    assert window({"max": "VDD"}) == {"le": "VDD"}
    assert describe_window({"target": "1k", "tol": 0.1}) == "1k ± 10%"
    assert describe_window({"target": "1k"}) == "1k ± 5%"
    assert describe_window({"min": 2.9}) == ">= 2.9"
    assert describe_window({"max": "5"}) == "<= 5"
    assert describe_window({"min": "0.45", "max": "0.55"}) == "0.45 .. 0.55"


def test_a_compiled_spec_is_one_akcli_accepts():
    """akcli's own schema for its sim spec (akcli/schemas/sim.schema.json) takes every
    testbench of the corpus's design tasks, compiled."""
    import importlib.resources

    import jsonschema

    schema = json.loads((importlib.resources.files("akcli") / "schemas" / "sim.schema.json")
                        .read_text())
    tasks = Path(__file__).parents[1] / "tasks"
    seen = 0
    for path in sorted(tasks.glob("d*/task.yaml")):
        tb = yaml.safe_load(path.read_text())["testbench"]
        spec = compile_spec(tb, {})
        jsonschema.validate(spec, schema)
        assert spec["options"]["rshunt"] == "auto"
        assert ("wave_vectors" in spec["options"]) == bool(tb.get("plot"))
        assert [a["name"] for a in spec["assert"]] == [m["name"] for m in tb["measures"]]
        seen += 1
    assert seen >= 6


def test_each_part_gets_its_model_by_lib_id_and_value_and_the_rest_are_named():
    comps = [
        {"designator": "D1", "library_ref": "Device:LED", "value": "Red"},
        {"designator": "Q1", "library_ref": "Device:Q_NPN_BCE", "value": "anything"},
        {"designator": "U1", "library_ref": "Amplifier:OpAmp_Dual", "value": " gp "},
        {"designator": "U1", "library_ref": "Amplifier:OpAmp_Dual", "value": "GP"},  # unit B
        {"designator": "R1", "library_ref": "Device:R", "value": "1k"},
        {"designator": "C1", "library_ref": "Device:C", "value": "?"},
        {"designator": "L1", "library_ref": "Device:L", "value": "1u"},
        {"designator": "RV1", "library_ref": "Device:R_Potentiometer", "value": "10k"},
        {"designator": "J1", "library_ref": "Connector:Conn_01x02", "value": ""},
        {"designator": "TP1", "library_ref": "Connector:TestPoint", "value": ""},
        {"designator": "#PWR01", "library_ref": "power:GND", "value": "GND"},
        {"designator": "D9", "library_ref": "Device:LED", "value": "red", "dnp": True},
        {"designator": "D2", "library_ref": "Device:LED", "value": "purple"},
        {"designator": "D3", "library_ref": "Device:LED", "value": "purple"},
        {"designator": "U2", "library_ref": "MCU:Something", "value": "x"},
        {"designator": "R2", "library_ref": "Other:R", "value": "1k"},
    ]
    models, missing = models_for(comps)
    assert sorted(models) == ["D1", "Q1", "U1"]
    led = library()["Device:LED"]
    assert models["D1"] == {"device": "D", "pin_order": ["2", "1"],
                            "model_name": led["by_value"]["red"]["model_name"],
                            "model_card": led["by_value"]["red"]["model_card"]}
    # A BCE symbol's pins 1, 2, 3 are base, collector, emitter: SPICE wants C, B, E.
    assert models["Q1"] == {"device": "NPN", "pin_order": ["2", "1", "3"],
                            "model_name": "WB_NPN",
                            "model_card": library()["Device:Q_NPN_BCE"]["model_card"]}
    # A dual op-amp includes the single's subcircuit before its own.
    single = library()["Amplifier:OpAmp_Single"]["by_value"]["gp"]["model_card"]
    assert models["U1"]["model_card"].startswith(single + "\n")
    assert models["U1"]["model_card"] != single
    assert missing == [
        "RV1 (Device:R_Potentiometer) has no simulation model",
        "D2 (Device:LED) value 'purple' names no model; values with a model: "
        "red, yellow, green, blue, white",
        "D3 (Device:LED) value 'purple' names no model; values with a model: "
        "red, yellow, green, blue, white",
        "U2 (MCU:Something) has no simulation model",
        "R2 (Other:R) has no simulation model"]
    assert models_for([{"designator": "D1", "library_ref": "Device:LED"}])[1] == [
        "D1 (Device:LED) value None names no model; values with a model: "
        "red, yellow, green, blue, white"]
    assert models_for([{}, {"designator": None, "library_ref": None}]) == (
        {}, [" () has no simulation model"])


# --- the step's verdicts ------------------------------------------------------------------------

def test_the_right_circuit_passes_at_nominal_and_at_every_corner(drawn):
    sim = run(drawn, TESTBENCH)
    assert sim["schema"] == "wirebench.sim/1" and sim["status"] == "pass", sim["reason"]
    assert set(sim) == {"schema", "inputs", "versions", "status", "reason", "deck_sha256",
                        "measures", "corners", "worst_corner", "findings", "parts_skipped",
                        "wave"}
    assert sim["parts_skipped"] == []
    corners = sim["corners"]
    assert sim["reason"] == f"3 measure(s) in their windows at {len(corners)} corner(s)"
    got = measures(sim)
    assert set(got) == {"led_on", "led_off", "gpio_current"}
    on = got["led_on"]
    assert -11.5e-3 <= on["value"] <= -8.5e-3
    assert on["window"] == "-11.5m .. -8.5m" and on["why"].startswith("10 mA ± 15%")
    assert got["led_off"]["window"] == ">= -10u"
    assert on["ok"] and on["ok_nominal"] and on["ok_corners"]
    assert on["min_over_corners"] < on["value"] < on["max_over_corners"]
    # Every tolerance corner of R1 and R2 at each temperature; the worst is none.
    assert sim["worst_corner"] is None
    assert {c["params"].get("temp") for c in corners} == {"-20", "70"}
    assert all(set(c["params"]) == {"R1", "R2", "temp"} and not c["failed"] for c in corners)
    assert len({(c["params"]["R1"], c["params"]["R2"]) for c in corners}) >= 2
    assert len(sim["deck_sha256"]) == 64
    assert sim["versions"]["ngspice"] and sim["versions"]["akcli"]
    assert set(sim["inputs"]) == {"sheet", "apply", "nets"}
    # The source behind its resistance makes a node of its own: no finding about it.
    assert not any("VIO_INT" in f for f in sim["findings"])
    # The plot: v(GPIO) over the transient, thinned to at most WAVE_POINTS rows.
    wave = sim["wave"]
    assert set(wave["columns"]) == {wave["x"], "v(GPIO)"}
    xs = wave["columns"][wave["x"]]
    assert len(xs) <= WAVE_POINTS + 1 and xs[0] == 0 and xs[-1] == pytest.approx(4e-3)
    assert max(wave["columns"]["v(GPIO)"]) == pytest.approx(3.3, abs=0.2)
    assert len(xs) == len(wave["columns"]["v(GPIO)"]) > 100


def test_the_same_circuit_gives_the_same_deck_hash_each_run(drawn):
    first = run(drawn, nominal_only(), name="a")
    again = run(drawn, nominal_only(), name="b")
    assert first["deck_sha256"] == again["deck_sha256"]
    assert first["corners"] == [] and first["worst_corner"] is None and "wave" not in first
    assert first["reason"] == "3 measure(s) in their windows"
    on = measures(first)["led_on"]
    assert on["min_over_corners"] is None and on["max_over_corners"] is None


def test_a_measure_outside_its_window_at_nominal_fails_by_name(drawn):
    tb = nominal_only(measures=[
        {"name": "led_on", "analysis": "tran", "meas": "FIND i(vcc5) AT=2m",
         "min": "-20m", "max": "-15m"},
        {"name": "led_off", "analysis": "tran", "meas": "FIND i(vcc5) AT=0.5m",
         "min": "-10u"}])
    sim = run(drawn, tb)
    on = measures(sim)["led_on"]
    assert sim["status"] == "fail"
    assert sim["reason"] == f"led_on = {on['value']} at nominal, outside -20m .. -15m"
    assert (on["ok"], on["ok_nominal"], on["ok_corners"]) == (False, False, True)
    assert measures(sim)["led_off"]["ok"] is True


def test_a_design_right_only_at_nominal_fails_at_the_corner_that_hurts(drawn):
    value = measures(run(drawn, nominal_only(), name="n"))["led_on"]["value"]
    tight = [{"name": "led_on", "analysis": "tran", "meas": "FIND i(vcc5) AT=2m",
              "target": f"{value:.6g}", "tol": 0.02}]
    sim = run(drawn, {**nominal_only(measures=tight), "corners": {"tolerance": {"R": 0.05}}})
    on = measures(sim)["led_on"]
    assert sim["status"] == "fail"
    assert (on["ok"], on["ok_nominal"], on["ok_corners"]) == (False, True, False)
    worst = sim["worst_corner"]
    assert worst is not None and worst["failed"] == ["led_on"]
    assert set(worst["params"]) == {"R1", "R2"}
    assert sim["reason"].startswith("led_on = ") and " at the corner R1=" in sim["reason"]
    assert sim["reason"].endswith(f", outside {value:.6g} ± 2% (nominal {on['value']})")
    # The corner named is the failing one farthest from nominal.
    far = max((c for c in sim["corners"] if "led_on" in c["failed"]),
              key=lambda c: abs(c["measured"]["led_on"] - value))
    assert f"led_on = {far['measured']['led_on']} at the corner " in sim["reason"]
    # Each part went to the end of its tolerance that pushes the current up, and down.
    r1 = {c["params"]["R1"] for c in sim["corners"]}
    nominal_r1 = float(next(iter(r1)))
    assert len(r1) == 2 and nominal_r1 > 0


def test_corners_of_temperature_alone_run_without_tolerances(drawn):
    sim = run(drawn, {**nominal_only(), "corners": {"temperature": [-40, 85]}})
    assert sim["status"] == "pass"
    assert sorted(c["params"]["temp"] for c in sim["corners"]) == ["-40", "85"]
    assert sim["reason"] == "3 measure(s) in their windows at 2 corner(s)"


@pytest.mark.parametrize("change, status, reason", [
    ({"apply.json": {"applied": False}}, "not_drawn", "nothing landed to simulate"),
    ({"apply.json": {"postchecks": [{"passed": False}]}}, "not_drawn",
     "nothing landed to simulate"),
    ({"nets.json": {"errors": ["NETS_FAILED"]}}, "not_drawn", "nothing landed to simulate"),
])
def test_nothing_drawn_is_its_own_verdict(drawn, change, status, reason):
    (file, edit), = change.items()
    doc = {**json.loads((drawn / file).read_text()), **edit}
    (drawn / file).write_text(json.dumps(doc))
    sim = run(drawn, nominal_only(), name="changed")
    assert (sim["status"], sim["reason"]) == (status, reason)
    assert sim["measures"] == [] and sim["deck_sha256"] is None


def test_a_missing_interface_net_is_named(drawn):
    sim = run(drawn, nominal_only(), interface=["GPIO", "VCC", "GND", "VREF", "EN"])
    assert (sim["status"], sim["reason"]) == (
        "interface_missing", "interface net(s) ['VREF', 'EN'] are not on the sheet")


def test_a_testbench_the_engine_cannot_run_is_an_error_with_the_reason(drawn):
    bad = nominal_only(sources=[{"name": "VCC5", "node": "VCC", "value": "DC five"}])
    sim = run(drawn, bad, name="bad")
    assert sim["status"] == "error" and sim["reason"].startswith("simulation failed: ")
    slow = nominal_only(analyses={"tran": "1n 200m"}, timeout_s=0.5)
    sim = run(drawn, slow, name="slow")
    assert sim["status"] == "error" and sim["reason"].startswith("simulation failed: ")


# --- what a testbench does to the circuit, measured -------------------------------------------

def _off_current(drawn, *, loads=(), sources=None, name="t") -> float:
    """i(vcc5) with GPIO low (the LED off): what the testbench's loads draw from VCC."""
    tb = nominal_only(loads=list(loads), measures=[
        {"name": "off", "analysis": "tran", "meas": "FIND i(vcc5) AT=0.5m", "min": -1,
         "max": 1},
        {"name": "vgpio", "analysis": "tran", "meas": "FIND v(GPIO) AT=2m", "min": -10,
         "max": 10}])
    if sources is not None:
        tb["sources"] = sources
    sim = run(drawn, tb, name=name)
    assert sim["status"] == "pass", sim["reason"]
    return {m["name"]: m["value"] for m in sim["measures"]}


def test_a_load_draws_its_current_or_its_resistance_from_its_net(drawn):
    base = _off_current(drawn, name="base")["off"]
    assert abs(base) < 1e-6
    assert _off_current(drawn, loads=[{"node": "VCC", "resistance": "1k"}],
                        name="r")["off"] == pytest.approx(-5e-3, rel=0.01)
    assert _off_current(drawn, loads=[{"node": "VCC", "current": "2m"}],
                        name="i")["off"] == pytest.approx(-2e-3, rel=0.01)
    # To another net: 1 kΩ from VCC to GPIO, which the source holds at 0 V behind its
    # 50 Ω: 5 V across 1050 Ω; and GPIO rises to what the 50 Ω drops.
    between = _off_current(drawn, loads=[{"node": "VCC", "resistance": "1k", "to": "GPIO"}],
                           name="to")
    assert between["off"] == pytest.approx(-5 / 1050, rel=0.01)


def test_a_source_behind_a_resistance_sags_under_its_load(drawn):
    """GPIO's 3.3 V behind 50 Ω, loaded with 50 Ω: half of it; behind 1 kΩ, much less;
    with no resistance, all of it."""
    def vio(**extra):
        return {"name": "VIO", "node": "GPIO", "value": "PULSE(0 3.3 1m 1u 1u 2m 5m)",
                **extra}

    load = [{"node": "GPIO", "resistance": "50"}]
    vcc = {"name": "VCC5", "node": "VCC", "value": "DC 5"}
    half = _off_current(drawn, loads=load, sources=[vcc, vio(resistance="50")], name="h")
    assert half["vgpio"] == pytest.approx(1.65, abs=0.1)
    weak = _off_current(drawn, loads=load, sources=[vcc, vio(resistance="1k")], name="w")
    assert weak["vgpio"] < 0.3
    stiff = _off_current(drawn, loads=load, sources=[vcc, vio()], name="s")
    assert stiff["vgpio"] == pytest.approx(3.3, abs=0.01)
    # node2: a source between two nets. VIO from GPIO to VCC: GPIO sits 3.3 V above VCC.
    floating = _off_current(drawn, sources=[vcc, vio(node2="VCC")], name="f")
    assert floating["vgpio"] == pytest.approx(8.3, abs=0.05)


def test_a_measure_window_may_be_written_with_when_and_engineering_values(drawn):
    tb = nominal_only(measures=[
        {"name": "rise", "analysis": "tran", "when": "v(GPIO)=1.65", "min": "0.9m",
         "max": "1.1m"},
        {"name": "on", "analysis": "tran", "meas": "FIND i(vcc5) AT=2m", "target": "-10m",
         "tol": 0.15}])
    sim = run(drawn, tb)
    assert sim["status"] == "pass", sim["reason"]
    assert measures(sim)["rise"]["value"] == pytest.approx(1e-3, rel=0.01)
    assert measures(sim)["on"]["window"] == "-10m ± 15%"


def test_a_testbench_of_loads_alone_drives_the_circuit(drawn):
    """No source at all: a current pushed into VCC is what drives it."""
    tb = {"loads": [{"node": "VCC", "current": "-1m"}, {"node": "VCC", "resistance": "1k"}],
          "analyses": {"tran": "10u 1m"},
          "measures": [{"name": "vcc", "analysis": "tran", "meas": "FIND v(VCC) AT=0.5m",
                        "min": -100, "max": 100}]}
    sim = run(drawn, tb)
    assert sim["status"] == "pass", sim["reason"]
    assert measures(sim)["vcc"]["value"] == pytest.approx(1.0, abs=0.05)


def test_each_part_goes_to_the_end_of_its_tolerance_that_pushes_the_measure(drawn):
    """The collector's voltage with the LED on rises as R1 falls (more collector current)
    and as R2 rises (less base drive): its worst corners move the two resistors in
    opposite directions, which moving them together would miss."""
    tb = {**nominal_only(measures=[{"name": "vk", "analysis": "tran",
                                    "meas": "FIND v(LED_K) AT=2m", "min": -10, "max": 10}]),
          "corners": {"tolerance": {"R": 0.05}}}
    sim = run(drawn, tb)
    deck = {c["params"]["R1"]: c["params"]["R2"] for c in sim["corners"]}
    r1 = sorted(deck, key=float)
    assert len(r1) == 2, sim["corners"]
    low_r1, high_r1 = r1
    assert float(deck[low_r1]) > float(deck[high_r1]), "R2 moves against R1"
    vk = measures(sim)["vk"]
    assert vk["min_over_corners"] < vk["value"] < vk["max_over_corners"]


def test_akcli_findings_are_kept_as_code_severity_and_message(drawn):
    tb = nominal_only(sources=[*TESTBENCH["sources"],
                               {"name": "VX", "node": "VCCX", "value": "DC 1"}])
    sim = run(drawn, tb)
    assert sim["findings"][0] == (
        "SIM_UNKNOWN_STIMULUS_NODE (warning): stimulus VX: node 'VCCX' matches no net — a "
        "new dangling node was created (did you mean VCC?)")


def test_the_deck_hash_tells_two_benches_apart(drawn):
    five = run(drawn, nominal_only(), name="five")
    six = run(drawn, nominal_only(sources=[{"name": "VCC5", "node": "VCC", "value": "DC 6"},
                                           TESTBENCH["sources"][1]]), name="six")
    assert five["deck_sha256"] != six["deck_sha256"]


def test_a_simulation_past_the_steps_limit_is_an_error_verdict_on_the_pair(drawn):
    slow = nominal_only(analyses={"tran": "1n 300m"}, timeout_s=60)
    task = bench(drawn.parent, slow, INTERFACE, name="slow")
    out = drawn / "slow.sim.json"
    simulate(drawn / "board.kicad_sch", drawn / "apply.json", drawn / "nets.json", task, out,
             timeout=1.0)
    sim = json.loads(out.read_text())
    assert (sim["status"], sim["reason"]) == ("error", "simulate exceeded 1 s")
    assert sim["schema"] == "wirebench.sim/1" and sim["measures"] == []
    assert set(sim["inputs"]) == {"sheet", "apply", "nets"}
