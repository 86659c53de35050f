"""The tools a careful engineer uses (issue 34): `simulate` with the agent's own bench,
`check`, `render` and `query`, on the same confined toolbox as the others, in the tool
loop and over MCP.

- in one real Snakemake run, against the scripted server on 127.0.0.1: a model designs
  d01 by drawing, simulating with its own bench, fixing a value from what it measured and
  submitting; another fixes the layout finding `check` told it of (d02); a third finds the
  fault planted in a real KiCad design (kicad-demos' ecc83) through `query` alone;
- the spec guard: everything the agent's bench says reaches ngspice only through a
  grammar; around the guard, the same attacks run shell commands for real;
- `check` waives what the scorer waives; `query` takes no option from the model; `render`
  gives a vision entry a picture (an image_url data URI) and any other a line of text;
- a task's `tool_surface` may be a list of tools: the loop offers only those, and the MCP
  server lists only those to the official client, which calls each tool there is.
"""

from __future__ import annotations

import base64
import json
import os
import re
import sys
from pathlib import Path

import pytest
from conftest import REPO, SYMBOLS, TASKS
from fake_openai import FakeOpenAI, completion, tool_calls

from wirebench.corpus.tasks import load_task
from wirebench.runtime import landlock

DEMOS = Path("/usr/share/kicad/demos")
needs_landlock = pytest.mark.skipif(
    landlock.abi() < landlock.MIN_ABI and not os.environ.get("CI"),
    reason="this kernel has no Landlock")

# The agent's own bench for d01 as task.md states the circuit around it: a 1k source
# resistance behind an AC source on a node of its own, and the 10k load.
D01_BENCH = {"protocol_version": 1, "stimuli": [
    {"name": "VS", "kind": "vsource", "node": "SRC", "value": "DC 0 AC 1"},
    {"name": "RS", "kind": "bsource", "node": "SRC", "node2": "VIN", "quantity": "I",
     "expr": "(v(SRC)-v(VIN))/1k"},
    {"name": "RL", "kind": "bsource", "node": "VOUT", "quantity": "I", "expr": "v(VOUT)/10k"}],
    "analyses": {"ac": "dec 100 1 1meg"},
    "assert": [{"name": "f3db", "analysis": "ac", "when": "vdb(VOUT)=-3", "approx": "1k",
                "tol": 0.1},
               {"name": "gain10", "analysis": "ac", "meas": "FIND vdb(VOUT) AT=10", "ge": -1}]}


def _rc(c: str) -> dict:
    """d01 drawn as a series R and a shunt C, with this capacitor."""
    doc = json.loads((TASKS / "d01-rc-lowpass-loaded" / "reference_ops.json").read_text())
    for op in doc["ops"]:
        if op.get("designator") == "C1":
            op["value"] = c
    return doc


def _results(body) -> list[str]:
    return [m["content"] for m in body["messages"] if m["role"] == "tool"]


def _doc(result: str) -> dict:
    """A tool result's JSON, after its `[status] `."""
    return json.loads(result.split("] ", 1)[1])


def _prompt(body) -> str:
    return next(m["content"] for m in body["messages"] if m["role"] == "user")


def _mine(body, title: str) -> bool:
    return f"# Your task\n\n# {title}" in _prompt(body)


# -- the scripted engineers -----------------------------------------------------------

def designer(n, body):
    """Draws a first guess (100 R, 100 nF), measures its corner with its own bench, and
    scales C by what it measured (only C sets the frequency scale), then checks again."""
    if not _mine(body, "Low-pass filter between a sensor and an ADC input"):
        return completion("not my task")
    seen = _results(body)
    if len(seen) == 0:
        return tool_calls(("draw", {"oplist": _rc("100n")}))
    if len(seen) == 1:
        return tool_calls(("simulate", {"spec": D01_BENCH}))
    first = _doc(seen[1])["measured"].get("f3db") if seen[1].startswith("[ok]") else None
    fixed = _rc(f"{100 * first / 1000:.3g}n") if first else _rc("100n")
    if len(seen) == 2:
        return tool_calls(("draw", {"oplist": fixed}))
    if len(seen) == 3:
        return tool_calls(("simulate", {"spec": D01_BENCH}))
    return tool_calls(("submit", {"oplist": fixed}))


def _d02_draft() -> dict:
    """d02's divider with a guessed label rotation: VOUT's label on R1.2 points back over
    R1 (LAYOUT_LABEL_OVER_SYMBOL), as one-shot boards did."""
    doc = json.loads((TASKS / "d02-divider-into-adc" / "reference_ops.json").read_text())
    for op in doc["ops"]:
        if op["op"] == "add_net_label" and op["at"] == "R1.2":
            op["rotation"] = 90
    return doc


def layouter(n, body):
    """Draws its draft, asks `check` for layout findings, and for each label akcli says
    runs over a symbol, drops that label's rotation (akcli then points it away)."""
    if not _mine(body, "Divider from a 12 V rail into an ADC input"):
        return completion("not my task")
    seen = _results(body)
    draft = _d02_draft()
    if len(seen) == 0:
        return tool_calls(("draw", {"oplist": draft}))
    if len(seen) == 1:
        return tool_calls(("check", {"kind": "layout"}))
    over = set()
    if seen[1].startswith("[ok]"):
        for finding in _doc(seen[1])["layout"]["findings"]:
            m = re.search(r"label '([^']+)' at \S+ runs over (\S+)", finding)
            if m:
                over.add(m.groups())
    for op in draft["ops"]:
        if op["op"] == "add_net_label" and (op["name"], op["at"].split(".")[0]) in over:
            op.pop("rotation", None)
    if len(seen) == 2:
        return tool_calls(("draw", {"oplist": draft}))
    if len(seen) == 3:
        return tool_calls(("check", {"kind": "layout"}))
    return tool_calls(("submit", {"oplist": draft}))


def prober(n, body):
    """Reads the symptom (which net lacks a part, which has one too many), asks `query`
    who is on the overloaded net, takes its passive part, asks `query` where that part
    sits and what its pins are on, and places it again with that pin moved."""
    prompt = _prompt(body)
    at = r"(?:the net )?`([^`]+)`(?: \(at [^)]*\))?"  # a net as a note names it
    missing = re.search(rf"Probing {at} finds a connection missing", prompt)
    extra = re.search(rf"and {at} is loaded by a part it should never see", prompt)
    if not (missing and extra):
        return completion("not my task")
    seen = _results(body)
    if len(seen) == 0:
        return tool_calls(("query", {"net": extra[1]}))
    members = _doc(seen[0])["nets"][0]["members"] if seen[0].startswith("[ok]") else []
    passive = sorted({m.split(".")[0] for m in members
                      if re.match(r"(R|C|L|D)\d+\.", m)}) or ["R1"]
    if len(seen) == 1:
        return tool_calls(("query", {"component": passive[0]}))
    part = _doc(seen[1]) if seen[1].startswith("[ok]") else {}
    ref = part.get("designator", passive[0])
    ops = [{"op": "delete_component", "designator": ref, "cascade": True},
           {"op": "place_component", "lib_id": part.get("library_ref"), "designator": ref,
            "x_mil": round(part.get("x_mil", 0)), "y_mil": round(part.get("y_mil", 0)),
            "value": part.get("value")}]
    if part.get("rotation"):
        ops[1]["rotation"] = part["rotation"]
    for pin, net in sorted(part.get("pin_nets", {}).items()):
        ops.append({"op": "add_net_label", "name": missing[1] if net == extra[1] else net,
                    "at": f"{ref}.{pin}"})
    return tool_calls(("submit", {"oplist": {"protocol_version": 2, "target_format": "kicad",
                                             "ops": ops}}))


def _real_wrong_net(out: Path) -> Path:
    """ecc83's wrong-net repair, generated from Debian's kicad-demos (GPL: made in a tmp
    dir, never committed), as tests/test_real_tier.py makes it."""
    from wirebench.taskgen.real import generate

    if not (DEMOS / "ecc83" / "ecc83-pp.kicad_sch").is_file():
        if os.environ.get("CI"):
            pytest.fail("kicad-demos is not installed: .ci/run installs it")
        pytest.skip("Debian's kicad-demos is not installed (apt-get install kicad-demos)")
    (task,) = generate("ci", DEMOS, out, names=["ecc83"], per_demo={"wrong-net": 1})
    return task


@pytest.fixture(scope="module")
def engineers(tmp_path_factory):
    import shutil

    from conftest import Project

    root = tmp_path_factory.mktemp("engineers")
    tasks = root / "tasks"
    for t in ("d01-rc-lowpass-loaded", "d02-divider-into-adc"):
        shutil.copytree(TASKS / t, tasks / t)
    real = _real_wrong_net(tasks)
    with FakeOpenAI({"designer": designer, "layouter": layouter, "prober": prober}) as server:
        entry = {"kind": "openai", "tools": True, "base_url": server.base_url,
                 "provider": "fake", "backoff_s": 0.1}
        models = {name: {**entry, "model": name} for name in ("designer", "layouter", "prober")}
        project = Project(root / "wb").configure(models, tasks_dir=tasks)
        project.snakemake()
        yield project, server, real.name


def _steps(project, model, task) -> list[dict]:
    agent = json.loads((project.pair(model, task) / "agent.json").read_text())
    return agent["turns"][0]["trajectory"]


@pytest.mark.slow
def test_a_model_designs_by_simulating_its_own_bench_and_fixing_a_value(engineers):
    project, server, _ = engineers
    task = "d01-rc-lowpass-loaded"
    score = project.score("designer", task)
    assert score["passed"], score["errors"]
    steps = _steps(project, "designer", task)
    assert [(s["tool"], s["status"]) for s in steps] == [
        ("draw", "ok"), ("simulate", "ok"), ("draw", "ok"), ("simulate", "ok"), ("submit", "ok")]
    # What it measured: its first guess missed the corner, its fix met it.
    last = next(c["body"] for c in reversed(server.calls["designer"]) if _mine(
        c["body"], "Low-pass filter between a sensor and an ADC input"))
    first, second = (_doc(r) for r in _results(last)[1::2])
    assert first["measured"]["f3db"] > 1100 and not first["ok"]
    assert 950 < second["measured"]["f3db"] < 1050 and second["ok"], second
    # Its own bench only: its two measures, never the task's (gain_10hz, f_3db).
    assert set(first["measured"]) == {"f3db", "gain10"}
    # The first guess, submitted as it was, fails the task's own bench.
    from wirebench.steps.pair import evaluate_pair

    guess = project.root / "guess.json"
    guess.write_text(json.dumps(_rc("100n")))
    alone = evaluate_pair(guess, project.root.parent / "tasks" / task, SYMBOLS,
                          project.root / "guess", {"model": "m", "task": task, "sample": 1})
    assert not alone["passed"]


@pytest.mark.slow
def test_a_model_fixes_the_layout_finding_check_showed_it(engineers):
    project, server, _ = engineers
    task = "d02-divider-into-adc"
    score = project.score("layouter", task)
    assert score["passed"] and score["clean"], score
    steps = _steps(project, "layouter", task)
    assert [s["tool"] for s in steps] == ["draw", "check", "draw", "check", "submit"]
    last = next(c["body"] for c in reversed(server.calls["layouter"])
                if _mine(c["body"], "Divider from a 12 V rail into an ADC input"))
    before, after = (_doc(r)["layout"]["findings"] for r in _results(last)[1::2])
    assert any(f.startswith("LAYOUT_LABEL_OVER_SYMBOL") and "'VOUT'" in f for f in before)
    assert after == []


@pytest.mark.slow
def test_a_model_finds_a_planted_fault_in_a_real_design_through_query_alone(engineers):
    project, _, real = engineers
    score = project.score("prober", real)
    assert score["passed"], score["errors"]
    steps = _steps(project, "prober", real)
    assert [(s["tool"], s["status"]) for s in steps] == [
        ("query", "ok"), ("query", "ok"), ("submit", "ok")]
    # No netlist dump, no picture: the net the symptom names, then the part on it that
    # the task's own reference (which the model never sees) re-places.
    reference = json.loads((project.root.parent / "tasks" / real / "reference_ops.json")
                           .read_text())
    fixed = next(op["designator"] for op in reference["ops"]
                 if op["op"] == "delete_component")
    assert json.loads(steps[0]["args"]) == {"net": "N5"}
    assert json.loads(steps[1]["args"]) == {"component": fixed}


@pytest.mark.slow
def test_the_new_tools_count_in_the_scorecard_and_replay_call_for_call(engineers):
    import subprocess

    project, _, real = engineers
    card = json.loads((project.root / "results" / "scorecard.json").read_text())
    for model in ("designer", "layouter", "prober"):
        assert card["models"][model]["surface_regressions"] == 0, model
    proc = subprocess.run(["wirebench", "replay", str(project.root / "results"), "--json",
                           "--config", str(project.config_path)],
                          capture_output=True, text=True, cwd=project.root)
    report = json.loads(proc.stdout)
    mine = {p["pair"]: p for p in report["pairs"]}
    for pair in ("runs/designer/d01-rc-lowpass-loaded/1",
                 "runs/layouter/d02-divider-into-adc/1", f"runs/prober/{real}/1"):
        assert mine[pair]["same"], mine[pair]


# -- the spec guard ----------------------------------------------------------------------

def _with(**changes) -> dict:
    return {**D01_BENCH, **changes}


SHELL = "shell echo ran > {pwned}"
ATTACKS = {
    # akcli appends extra cards to the deck as they are.
    "extra card": (lambda p: _with(options={"extra_cards": [
        f".control\n{SHELL.format(pwned=p)}\n.endc"]}), "SIM_SPEC_KEY: $.options.extra_cards"),
    # An analysis's arguments are a deck line and an interactive command.
    "analysis line": (lambda p: _with(analyses={"ac": f"dec 100 1 1meg\n.control\n"
                                                      f"{SHELL.format(pwned=p)}\n.endc"}),
                      "CONTROL_CHARACTER: $.analyses.ac"),
    # An analysis's name is the interactive command itself.
    "analysis name": (lambda p: _with(analyses={"ac": "dec 100 1 1meg",
                                                "shell": f"echo ran > {p}"}),
                      "SIM_SPEC_KEY: $.analyses.shell"),
    # A measure is sent as `meas ac NAME <text>`.
    "measure": (lambda p: _with(**{"assert": [{"name": "f3db", "analysis": "ac", "when":
                                               f"vdb(VOUT)=-3\n{SHELL.format(pwned=p)}",
                                               "gt": 0}]}),
                "CONTROL_CHARACTER: $.assert[0].when"),
    # A part model of the agent's own, with a control block in its card.
    "model card": (lambda p: _with(models={"Device:R": {
        "device": "R", "model_name": "X", "model_card":
            f".model X R\n.control\n{SHELL.format(pwned=p)}\n.endc"}}),
        "SIM_MODEL_REFUSED: $.models.Device:R"),
}


@pytest.mark.parametrize("attack", list(ATTACKS))
def test_the_spec_guard_names_what_would_reach_ngspice(attack):
    from wirebench.verify.sim_spec_guard import problems

    make, code = ATTACKS[attack]
    found = problems(make("/tmp/x"))
    assert any(f.startswith(code) for f in found), found


@pytest.mark.parametrize("spec, code", [
    (_with(stimuli=[{"name": "VS", "kind": "vsource", "node": "VIN",
                     "value": "DC 0 AC 1 .include /etc/passwd"}]),
     "SIM_SPEC_GRAMMAR: $.stimuli[0].value"),
    (_with(stimuli=[{"name": "VS", "kind": "vsource", "node": "VIN", "value": "PWL file=x"}]),
     "SIM_SPEC_GRAMMAR: $.stimuli[0].value"),
    (_with(stimuli=[{"name": "B1", "kind": "bsource", "node": "VIN", "expr": "v(VIN)*{x}"}]),
     "SIM_SPEC_GRAMMAR: $.stimuli[0].expr"),
    (_with(stimuli=[{"name": "VS", "kind": "vsource", "node": "VIN x", "value": "DC 1"}]),
     "SIM_SPEC_GRAMMAR: $.stimuli[0].node"),
    (_with(**{"assert": [{"name": "x", "analysis": "ac", "meas": "par('v(a)*2')", "gt": 0}]}),
     "SIM_SPEC_GRAMMAR: $.assert[0].meas"),
    (_with(analyses={"dc": "vnope 0 5 1"}), "SIM_SPEC_GRAMMAR: $.analyses.dc"),
    (_with(analyses={"tran": "1u 1m 0 1u uic extra"}), "SIM_SPEC_GRAMMAR: $.analyses.tran"),
    (_with(options={"rshunt": "1e12; .include x"}), "SIM_SPEC_GRAMMAR: $.options.rshunt"),
    (_with(sweep="R1=1k"), "SIM_SPEC_KEY: $.sweep"),
])
def test_the_spec_guard_holds_every_field_to_its_grammar(spec, code):
    from wirebench.verify.sim_spec_guard import problems

    found = problems(spec)
    assert any(f.startswith(code) for f in found), found


def test_the_corpus_own_benches_are_inside_the_grammar():
    """Every design task's bench, compiled to akcli's spec as the simulate step does (less
    the harness's part models and its plot option), is a bench an agent could write."""
    from wirebench.corpus.testbench import compile_spec
    from wirebench.verify.sim_spec_guard import problems

    benches = [load_task(p.parent) for p in sorted(TASKS.glob("*/task.yaml"))]
    benches = [t for t in benches if t.meta.get("testbench")]
    assert len(benches) >= 16
    for task in benches:
        spec = compile_spec(task.testbench, {})
        spec.pop("models")
        spec["options"].pop("wave_vectors", None)
        assert problems(spec) == [], (task.id, problems(spec))


def _toolbox(tmp_path, task="d01-rc-lowpass-loaded", **kw):
    from wirebench.steps.tools import Toolbox

    pair = tmp_path / "pair"
    pair.mkdir(parents=True, exist_ok=True)
    loaded = load_task(task if isinstance(task, Path) else TASKS / task)
    return Toolbox(loaded, SYMBOLS, pair, **kw)


@needs_landlock
@pytest.mark.parametrize("attack", ["extra card", "analysis line", "analysis name",
                                    "measure"])
def test_a_bench_that_would_run_a_shell_is_denied_and_around_the_guard_it_runs(
        tmp_path, monkeypatch, attack):
    """Through the tool, each attack is a denial that names the field, and nothing ran.
    Around the guard (what the tool would do without it) the same spec runs its shell
    command for real, in the scratch folder the confined child may write; outside the
    pair it writes nothing even then (Landlock)."""
    from wirebench.verify import sim_spec_guard

    make = ATTACKS[attack][0]
    box = _toolbox(tmp_path)
    try:
        assert box.call("draw", {"oplist": _rc("100n")}).status == "ok"
        inside = box.scratch / "PWNED"
        denied = box.call("simulate", {"spec": make(inside)})
        assert denied.status == "denied" and ATTACKS[attack][1] in denied.text, denied.text
        assert not inside.exists()
    finally:
        box.close()
    outside = tmp_path / "OUTSIDE"
    monkeypatch.setattr(sim_spec_guard, "problems", lambda spec, allowed=None: [])
    box = _toolbox(tmp_path)  # a fresh child: forked with the guard gone
    try:
        box.call("draw", {"oplist": _rc("100n")})
        inside = box.scratch / "PWNED"
        box.call("simulate", {"spec": make(inside)})
        assert inside.exists(), "around the guard the attack runs: the guard is what stops it"
        box.call("simulate", {"spec": make(outside)})
        assert not outside.exists(), "a confined child wrote outside the pair"
    finally:
        box.close()


@needs_landlock
def test_simulate_runs_the_agents_bench_on_its_last_draw_only(tmp_path):
    box = _toolbox(tmp_path)
    try:
        early = box.call("simulate", {"spec": D01_BENCH})
        assert early.status == "invalid" and "nothing drawn yet" in early.text
        box.call("draw", {"oplist": _rc("100n")})
        quiet = box.call("simulate", {"spec": {**D01_BENCH, "assert": []}})
        # No assertion of its own, no measure at all: the task's bench never runs.
        assert quiet.status == "ok" and json.loads(quiet.text)["measured"] == {}
        assert "f_3db" not in quiet.text and "gain_10hz" not in quiet.text
        first = json.loads(box.call("simulate", {"spec": D01_BENCH}).text)["measured"]["f3db"]
        box.call("draw", {"oplist": _rc("50n")})
        second = json.loads(box.call("simulate", {"spec": D01_BENCH}).text)["measured"]["f3db"]
        assert second == pytest.approx(2 * first, rel=0.02), "the last draw is simulated"
        # A broken draw leaves the last good one as the sheet.
        bad = box.call("draw", {"oplist": {**_rc("1n"), "ops": [{"op": "nope"}]}})
        assert bad.status == "ok" and '"applied": false' in bad.text
        again = json.loads(box.call("simulate", {"spec": D01_BENCH}).text)["measured"]["f3db"]
        assert again == second
    finally:
        box.close()


# -- check, query, render ----------------------------------------------------------------

@needs_landlock
def test_check_shows_the_findings_the_scorer_judges_less_its_waivers(tmp_path):
    """Task 10's reference draws the crystal macro's label overlaps, which its layout
    criterion waives: `check` shows none of them (and counts them), as the scorer passes
    that criterion. A guessed rotation that runs a label over a symbol is shown."""
    from wirebench.steps.pair import evaluate_pair

    task = TASKS / "10-mcu-crystal-macro"
    ops = json.loads((task / "reference_ops.json").read_text())
    box = _toolbox(tmp_path, task)
    try:
        assert box.call("draw", {"oplist": ops}).status == "ok"
        shown = json.loads(box.call("check", {}).text)
        assert set(shown) == {"erc", "layout", "integrity"}
        assert shown["layout"]["findings"] == [] and shown["layout"]["waived"] >= 1, shown
        only = json.loads(box.call("check", {"kind": "layout"}).text)
        assert only == {"layout": shown["layout"]}
        assert box.call("check", {"kind": "spice"}).status == "invalid"
    finally:
        box.close()
    (tmp_path / "ref.json").write_text(json.dumps(ops))
    score = evaluate_pair(tmp_path / "ref.json", task, SYMBOLS, tmp_path / "scored",
                          {"model": "m", "task": task.name, "sample": 1})
    layout = next(c for c in score["criteria"] if c["id"] == "layout")
    assert layout["verdict"] == "pass"
    box = _toolbox(tmp_path / "d02", "d02-divider-into-adc")
    try:
        box.call("draw", {"oplist": _d02_draft()})
        found = json.loads(box.call("check", {"kind": "layout"}).text)["layout"]["findings"]
        assert any(f.startswith("LAYOUT_LABEL_OVER_SYMBOL (warning): label 'VOUT'")
                   for f in found), found
    finally:
        box.close()


@needs_landlock
def test_query_answers_for_one_net_pin_or_part_and_takes_no_option(tmp_path):
    box = _toolbox(tmp_path)
    try:
        # Before any draw: the starting sheet (d01 starts blank).
        assert box.call("query", {"net": "VOUT"}).status == "failed"
        box.call("draw", {"oplist": _rc("100n")})
        net = json.loads(box.call("query", {"net": "VOUT"}).text)
        assert net["nets"][0]["members"] == ["C1.1", "R1.2"]
        pin = json.loads(box.call("query", {"pin": "C1.2"}).text)
        assert pin["net"]["name"] == "GND" and "attachment" in pin
        part = json.loads(box.call("query", {"component": "R1"}).text)
        assert part["value"] == "100" and part["pin_nets"] == {"1": "VIN", "2": "VOUT"}
        assert "source" not in part and "<scratch>" not in json.dumps(part)
        # A net named like an option is a name: akcli looks it up and finds none.
        for name in ("--help", "-o/etc/x", "--json"):
            asked = box.call("query", {"net": name})
            assert asked.status == "failed" and "no net named" in asked.text, asked.text
        for args, why in [({"pin": "R1.1 --out x"}, "must be REF.NUMBER"),
                          ({"component": "--help"}, "must be a designator"),
                          ({"net": "VOUT", "pin": "R1.1"}, "exactly one"),
                          ({"net": "VOUT\n.control"}, "one line"),
                          ({}, "exactly one")]:
            got = box.call("query", args)
            assert got.status == "invalid" and why in got.text, (args, got.text)
    finally:
        box.close()


def _dark_share(png: bytes) -> float:
    import io

    from PIL import Image

    image = Image.open(io.BytesIO(png)).convert("L")
    hist = image.histogram()
    return sum(hist[:128]) / sum(hist)


@needs_landlock
def test_render_is_a_picture_for_a_vision_entry_and_a_line_for_the_rest(tmp_path):
    box = _toolbox(tmp_path, vision=True)
    try:
        box.call("draw", {"oplist": _rc("100n")})
        shown = box.call("render", {})
        assert shown.status == "ok" and shown.image[:8] == b"\x89PNG\r\n\x1a\n"
        assert "1568x" in shown.text and "PNG" in shown.text
        # The sheet, drawn: the parts' outlines and text are there, on white.
        assert 0.002 < _dark_share(shown.image) < 0.3
        record = box.record(1, "render", "{}", shown, 0.0)
        assert record["image_bytes"] == len(shown.image)
    finally:
        box.close()
    blind = _toolbox(tmp_path / "blind")
    try:
        said = blind.call("render", {})
        assert said.status == "ok" and said.image is None
        assert said.text.startswith("render is not available")
        assert blind._server is None, "nothing ran for it"
    finally:
        blind.close()


@needs_landlock
def test_the_loop_shows_a_vision_model_the_picture_as_an_image_input(tmp_path):
    """The chat API's way: the tool message says what came back, and a user message after
    the reply's tool results carries the PNG as an image_url data URI. An entry without
    `vision` gets the line of text and no image."""
    from wirebench.agents import tool_loop
    from wirebench.agents.answer import TurnContext

    ops = _rc("100n")

    def script(n, body):
        if n == 1:
            return tool_calls(("draw", {"oplist": ops}), ("render", {}), ("nets", {}))
        return tool_calls(("submit", {"oplist": ops}))

    prompt = tmp_path / "prompt.md"
    prompt.write_text("# Your task\n\nDraw the filter.\n")
    asked = {}
    for vision in (True, False):
        box = _toolbox(tmp_path / str(vision))
        try:
            with FakeOpenAI({"m": script}) as server:
                spec = {"kind": "openai", "tools": True, "base_url": server.base_url,
                        "model": "m", "vision": vision}
                ctx = TurnContext("m", box.task, 1, 1, prompt, None, tools=box,
                                  symbols=SYMBOLS)
                ans = tool_loop.answer(spec, ctx)
                asked[vision] = server.calls["m"][1]["body"]["messages"]
        finally:
            box.close()
        assert ans.status == "ok" and json.loads(ans.ops) == ops
    roles = [m["role"] for m in asked[True]]
    assert roles[-5:] == ["assistant", "tool", "tool", "tool", "user"]
    image = asked[True][-1]["content"][1]["image_url"]["url"]
    assert image.startswith("data:image/png;base64,")
    png = base64.b64decode(image.split(",", 1)[1])
    assert png[:4] == b"\x89PNG" and _dark_share(png) > 0.002
    assert "render" in asked[True][-1]["content"][0]["text"]
    assert [m["role"] for m in asked[False]][-4:] == ["assistant", "tool", "tool", "tool"]
    assert "render is not available" in asked[False][-2]["content"]


# -- the surface ----------------------------------------------------------------------------

def _surfaced(tmp_path: Path, surface: list[str], source="d01-rc-lowpass-loaded") -> Path:
    import shutil

    task = tmp_path / "tasks" / source
    shutil.copytree(TASKS / source, task)
    meta = task / "task.yaml"
    meta.write_text(meta.read_text() + f"tool_surface: {json.dumps(surface)}\n")
    assert load_task(task).meta["tool_surface"] == surface
    return task


@needs_landlock
def test_a_task_may_offer_a_list_of_tools_and_refuses_the_rest(tmp_path):
    from wirebench.agents import tool_loop
    from wirebench.agents.answer import TurnContext
    from wirebench.config import schema_problems

    task = _surfaced(tmp_path, ["query", "check", "submit"])
    meta = load_task(task).meta
    assert schema_problems("task", meta) == []
    assert schema_problems("task", {**meta, "tool_surface": ["query", "shell"]})
    ops = _rc("100n")

    def script(n, body):
        if n == 1:
            return tool_calls(("simulate", {"spec": D01_BENCH}), ("query", {"net": "VIN"}))
        return tool_calls(("submit", {"oplist": ops}))

    prompt = tmp_path / "prompt.md"
    prompt.write_text("# Your task\n\nDraw the filter.\n")
    box = _toolbox(tmp_path, task)
    try:
        with FakeOpenAI({"m": script}) as server:
            spec = {"kind": "openai", "tools": True, "base_url": server.base_url, "model": "m"}
            ans = tool_loop.answer(spec, TurnContext("m", box.task, 1, 1, prompt, None,
                                                     tools=box, symbols=SYMBOLS))
            offered = [t["function"]["name"] for t in server.calls["m"][0]["body"]["tools"]]
    finally:
        box.close()
    assert offered == ["query", "check", "submit"]
    steps = [(s["tool"], s["status"]) for s in ans.detail["trajectory"]]
    assert steps == [("simulate", "invalid"), ("query", "failed"), ("submit", "ok")]
    assert ans.detail["invalid_calls"] == 1


def _mcp(params, session):
    import anyio
    from mcp.client.session import ClientSession
    from mcp.client.stdio import stdio_client

    async def run():
        async with stdio_client(params) as (read, write), ClientSession(read, write) as s:
            await s.initialize()
            return await session(s)

    return anyio.run(run)


@needs_landlock
def test_the_mcp_server_serves_every_tool_to_the_official_client(tmp_path):
    """`wirebench mcp` on d01: the client lists the eleven tools and calls each; render
    answers with an image content block; simulate with the agent's measures; a denied
    bench is a tool error. A task whose surface is a list lists only those."""
    from mcp.client.stdio import StdioServerParameters

    task = TASKS / "d01-rc-lowpass-loaded"
    ops = _rc("120n")
    out = tmp_path / "ops_out.json"

    def params(task_dir, pair):
        return StdioServerParameters(command=sys.executable, args=[
            "-m", "wirebench.cli", "mcp", "--task", str(task_dir), "--pair", str(pair),
            "--submit", str(out), "--symbols", *SYMBOLS], env=dict(os.environ))

    async def every_tool(s):
        names = [t.name for t in (await s.list_tools()).tools]
        got = {}
        for name, args in [
                ("list_ops", {}), ("op_schema", {"op": "add_net_label"}),
                ("pins", {"lib_id": "Device:R"}), ("validate", {"oplist": ops}),
                ("draw", {"oplist": ops}), ("nets", {}), ("query", {"pin": "C1.1"}),
                ("check", {"kind": "all"}), ("render", {}),
                ("simulate", {"spec": D01_BENCH}),
                ("simulate", {"spec": _with(analyses={"shell": "id"})}),
                ("submit", {"oplist": ops})]:
            got.setdefault(name, []).append(await s.call_tool(name, args))
        return names, got

    names, got = _mcp(params(task, tmp_path / "pair"), every_tool)
    assert sorted(names) == sorted(["list_ops", "op_schema", "pins", "nets", "query", "check",
                                    "render", "validate", "draw", "simulate", "submit"])
    assert not any(r.is_error for name, rs in got.items() for r in rs[:1]), {
        n: rs[0].content[0].text[:200] for n, rs in got.items() if rs[0].is_error}
    text = {name: rs[0].content[0].text for name, rs in got.items()}
    assert "place_component" in text["list_ops"]
    assert '"name": "VOUT"' in text["query"] and "attachment" in text["query"]
    assert set(json.loads(text["check"])) == {"erc", "layout", "integrity"}
    picture = got["render"][0].content
    assert [c.type for c in picture] == ["text", "image"]
    assert picture[1].mime_type == "image/png"
    assert base64.b64decode(picture[1].data)[:4] == b"\x89PNG"
    measured = json.loads(text["simulate"])["measured"]
    assert 900 < measured["f3db"] < 1100, measured  # 120n: the reference's 1.05 kHz
    denied = got["simulate"][1]
    assert denied.is_error and "[denied] SIM_SPEC_KEY: $.analyses.shell" in denied.content[0].text
    assert json.loads(out.read_text()) == ops

    listed = _surfaced(tmp_path / "listed", ["query", "render", "submit"])

    async def surface(s):
        names = [t.name for t in (await s.list_tools()).tools]
        return names, await s.call_tool("simulate", {"spec": D01_BENCH})

    names, unlisted = _mcp(params(listed, tmp_path / "pair2"), surface)
    assert sorted(names) == ["query", "render", "submit"]
    assert unlisted.is_error


def test_the_tools_are_documented_where_users_read_them():
    guide = (REPO / "docs" / "user-guide.md").read_text()
    for name in ("query", "check", "render", "simulate"):
        assert f"`{name}(" in guide, name
    assert "vision: true" in guide
    assert "sim_spec_guard" in (REPO / "docs" / "threat-model.md").read_text()


# -- akcli at full speed for command agents ------------------------------------------------

KICAD = Path("/usr/share/kicad/symbols")
needs_kicad = pytest.mark.skipif(
    not (KICAD / "Device.kicad_sym").is_file() and not os.environ.get("CI"),
    reason="KiCad's libraries are not installed (apt-get install kicad-symbols)")


def test_a_trimmed_library_keeps_the_named_symbols_and_their_parents_byte_for_byte():
    from wirebench.corpus.libraries import trim

    lib = ('(kicad_symbol_lib (version 20211014) (generator kicad_symbol_editor)\n'
           '  (symbol "A" (property "Value" "A (x)" (id 1)) (property "Note" "a \\" ) (" (id 2)))\n'
           '  (symbol "B" (extends "A") (property "Value" "B" (id 1)))\n'
           '  (symbol "C" (property "Value" "C" (id 1)))\n'
           ')\n')
    assert trim(lib, {"B"}) == lib.replace('  (symbol "C" (property "Value" "C" (id 1)))\n', "")
    assert trim(lib, {"C"}) == ('(kicad_symbol_lib (version 20211014) (generator '
                                'kicad_symbol_editor)\n  (symbol "C" (property "Value" "C" '
                                '(id 1)))\n)\n')
    assert trim(lib, {"Z"}) == ('(kicad_symbol_lib (version 20211014) (generator '
                                'kicad_symbol_editor)\n)\n')


@needs_kicad
@pytest.mark.slow
def test_the_copies_a_command_agent_gets_give_akcli_the_same_pins(tmp_path):
    """b01's libraries, trimmed to the symbols its prompt names: one copy per library,
    named as it is, each symbol's text as in KiCad's, and akcli reads the same pin tables
    from them as from the full libraries. `power`, whose symbols akcli's macros place
    (the pack teaches them), is copied whole."""
    from wirebench.corpus.libraries import ALWAYS, symbols_for, trimmed_copies
    from wirebench.runtime import akcli_backend

    task = load_task(TASKS / "b01-stm32f030-minimum")
    libraries, named = symbols_for(task, []), task.named_lib_ids()
    made = trimmed_copies(libraries, named, tmp_path)
    assert sorted(p.name for p in made) == sorted(
        {f"{lib_id.split(':')[0]}.kicad_sym" for lib_id in named} | {f"{n}.kicad_sym"
                                                                     for n in ALWAYS})
    assert (tmp_path / "Device.kicad_sym").stat().st_size < (
        KICAD / "Device.kicad_sym").stat().st_size / 100
    for lib_id in named:
        ours = akcli_backend.pins_text(lib_id, [str(p) for p in made])
        theirs = akcli_backend.pins_text(lib_id, libraries)
        assert ours.rc == theirs.rc == 0 and ours.stdout == theirs.stdout, lib_id


@needs_kicad
@needs_landlock
@pytest.mark.slow
def test_a_command_agents_own_akcli_draws_a_board_in_seconds():
    """benchmarks/agent_akcli_speed.py: a real command agent, in its bubblewrap sandbox,
    runs `akcli` from its PATH on b01's reference with the libraries in SYMBOLS_DIR. The
    run's own PATH holds no akcli: the agent's is the one wirebench puts first."""
    import subprocess
    import sysconfig

    proc = subprocess.run([sys.executable, str(REPO / "benchmarks" / "agent_akcli_speed.py"),
                           "--repeats", "1"], capture_output=True, text=True, timeout=300,
                          env={**os.environ, "PATH": "/usr/bin:/bin"})
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert f"(akcli: {sysconfig.get_path('scripts')}/akcli)" in proc.stdout
    result = json.loads(proc.stdout.strip().splitlines()[-1])
    assert result["median_s"]["SYMBOLS_DIR"] < 10
    assert "rc=0" in proc.stdout and " 0 new nets" not in proc.stdout
    assert "Device.kicad_sym(" in proc.stdout and "MCU_ST_STM32F0.kicad_sym(" in proc.stdout
