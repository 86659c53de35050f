"""The second review's forgeries, each tried for real: a wrong design made to pass through
the simulator's deck, or with its own part model; code run in the simulate step; a
process that outlives its step; secrets in a confined step's environment.

Each attack is tried twice where it can be: as an agent would send it (wirebench's
validate refuses it, naming the op and the field), and around that guard on purpose (the
sheet is drawn anyway), where the simulate step and the kernel must still hold.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import pytest
from conftest import SYMBOLS, TASKS

from wirebench.runtime import confine, landlock
from wirebench.steps.pair import evaluate_pair
from wirebench.verify import oplist_guard

needs_landlock = pytest.mark.skipif(
    landlock.abi() < landlock.MIN_ABI and not os.environ.get("CI"),
    reason="this kernel has no Landlock")


def _ops(task: str, answer: str) -> dict:
    folder = TASKS / task
    path = folder / "reference_ops.json" if answer == "reference" else folder / "wrong" / answer
    return json.loads(path.read_text())


def _score(tmp_path: Path, task: str, doc: dict, name: str = "pair") -> tuple[dict, Path]:
    answer = tmp_path / f"{name}.json"
    answer.write_text(json.dumps(doc))
    pair = tmp_path / name
    score = evaluate_pair(answer, TASKS / task, SYMBOLS, pair,
                          {"model": "m", "task": task, "sample": 1})
    return score, pair


def _around_the_guard(monkeypatch) -> None:
    """What an op-list could do if wirebench's validate missed a field: the sheet is drawn
    as the agent wrote it."""
    monkeypatch.setattr(oplist_guard, "problems", lambda doc: [], raising=False)


def _with(doc: dict, *ops: dict) -> dict:
    return {**doc, "ops": [*doc["ops"], *ops]}


OWN_MODEL = {"op": "set_component_parameters", "designator": "D1",
             "parameters": {"Sim.Device": "D", "Sim.Params": "IS=1e-6 N=0.6"}}


@needs_landlock
def test_an_answer_that_brings_its_own_part_model_fails_its_task(tmp_path, monkeypatch):
    """Finding 3: d05's answer that ignores the LED's drop, plus a Sim.* model of its own
    for the LED, printed PASS (akcli's Sim.* fields win over the task's models)."""
    wrong = _ops("d05-npn-led-switch", "ignores-led-drop.json")
    alone, _ = _score(tmp_path, "d05-npn-led-switch", wrong, "alone")
    assert not alone["passed"], "the wrong answer fails on its own"
    score, pair = _score(tmp_path, "d05-npn-led-switch", _with(wrong, OWN_MODEL))
    assert not score["passed"]
    assert any(e.startswith("SIM_FIELD_REFUSED: $.ops[13].parameters.Sim.Device (op "
                            "set_component_parameters)") for e in score["errors"]), score["errors"]
    _around_the_guard(monkeypatch)
    score, pair = _score(tmp_path, "d05-npn-led-switch", _with(wrong, OWN_MODEL), "around")
    sim = json.loads((pair / "sim.json").read_text())
    assert sim["status"] == "error" and "SIM_FIELD_REFUSED" in sim["reason"], sim["reason"]
    assert not score["passed"]


@needs_landlock
@pytest.mark.parametrize("where", ["value", "parameter", "label"])
@pytest.mark.parametrize("brk", ["\n", "\r", "\x0b", "\u2028", "\x85"])
def test_a_line_break_in_any_string_is_refused_naming_the_op_and_field(tmp_path, where, brk):
    """Finding 1: a newline in a string that reaches the deck added a `.control` block
    that echoed fake measures and quit, and d01's high-pass answer passed. Every line
    break Python's splitlines() knows is refused, wherever it is."""
    doc = _ops("d01-rc-lowpass-loaded", "high-pass.json")
    block = f"1{brk}.control{brk}echo f3db = 1.0e3{brk}quit{brk}.endc"
    if where == "value":
        doc["ops"][0]["value"] = "100" + block
        field = "$.ops[0].value (op place_component)"
    elif where == "parameter":
        doc = _with(doc, {"op": "set_component_parameters", "designator": "R1",
                          "parameters": {"MPN": block}})
        field = "$.ops[6].parameters.MPN (op set_component_parameters)"
    else:
        doc["ops"][3]["name"] = "VOUT" + block
        field = "$.ops[3].name (op add_net_label)"
    score, pair = _score(tmp_path, "d01-rc-lowpass-loaded", doc)
    assert not score["passed"] and score["outcome"] == "invalid"
    assert f"CONTROL_CHARACTER: {field} holds U+{ord(brk):04X}" in " ".join(score["errors"])
    assert not (pair / "sim.json").exists() or json.loads(
        (pair / "sim.json").read_text())["status"] != "pass"


@needs_landlock
def test_an_injected_shell_command_never_runs_and_nothing_changes_after_the_run(
        tmp_path, monkeypatch):
    """Finding 2: ngspice's `shell` in an injected `.control` block ran commands in the
    simulate step; a detached child rewrote sim.json and score.json after the run. Around
    the guard, the simulate step refuses the sheet, and no file of the pair changes once
    the pair is scored."""
    wrong = _ops("d05-npn-led-switch", "ignores-led-drop.json")
    pwned = tmp_path / "around" / "PWNED"
    script = (f"IS=1e-14\n.control\nshell (sleep 2; echo late > {pwned}) &\n"
              f"shell echo now > {pwned}\n.endc")
    injected = _with(wrong, {"op": "set_component_parameters", "designator": "D1",
                             "parameters": {"Sim.Device": "D", "Sim.Params": script}})
    refused, _ = _score(tmp_path, "d05-npn-led-switch", injected, "refused")
    assert not refused["passed"]
    _around_the_guard(monkeypatch)
    score, pair = _score(tmp_path, "d05-npn-led-switch", injected, "around")
    assert not score["passed"]
    before = {p.name: p.read_bytes() for p in pair.iterdir() if p.is_file()}
    time.sleep(2.5)
    assert not pwned.exists(), "the injected shell command ran"
    assert {p.name: p.read_bytes() for p in pair.iterdir() if p.is_file()} == before


def _leave_a_writer_behind(pair: Path) -> None:
    """In a confined step: a detached grandchild, in a session of its own, that writes
    into the pair's folder a second after the step has ended."""
    if os.fork() == 0:
        os.setsid()
        if os.fork() == 0:
            time.sleep(1)
            (pair / "late.json").write_text('{"passed": true}')
        os._exit(0)


@needs_landlock
@pytest.mark.parametrize("how", ["run", "server"])
def test_nothing_a_confined_step_started_outlives_it(tmp_path, how):
    """Finding 2: a detached child outlived the simulate step and rewrote the pair's files
    afterwards. Each step is pid 1 of its own pid namespace: its end is theirs."""
    pair = tmp_path / "pair"
    pair.mkdir()
    if how == "run":
        confine.run(lambda: _leave_a_writer_behind(pair), write=pair, timeout=30)
    else:
        server = confine.Server(write=pair)
        try:
            server.call(_leave_a_writer_behind, pair, timeout=30)
            time.sleep(1.5)  # the server lives on: the step's leftovers must not
            assert not (pair / "late.json").exists()
        finally:
            server.close()
    time.sleep(1.5)
    assert not (pair / "late.json").exists(), "a process of the step wrote after it ended"


def _dump_environment(pair: Path) -> None:
    (pair / "env.json").write_text(json.dumps(dict(os.environ)))


@needs_landlock
def test_a_confined_step_holds_no_secret_whoever_started_it(tmp_path, monkeypatch):
    """Finding 6: with no worker (or in a cluster job) the confined step's environment held
    every variable of the Snakemake process, other entries' keys included."""
    monkeypatch.setenv("OPENAI_API_KEY", "sk-canary-0123456789")
    monkeypatch.setenv("WB_OTHER_ENTRY_KEY", "sk-canary-9876543210")
    pair = tmp_path / "pair"
    pair.mkdir()
    confine.run(lambda: _dump_environment(pair), write=pair, timeout=30)
    env = json.loads((pair / "env.json").read_text())
    assert "sk-canary" not in json.dumps(env)
    assert env["PATH"] == os.environ["PATH"]


@needs_landlock
def test_a_designator_that_would_write_its_own_element_line_is_refused(tmp_path, monkeypatch):
    """A variation on finding 1 without a line break: akcli copies a designator into its
    element's line verbatim, so `R9 VOUT GND 1` would be a 1-ohm resistor of the agent's
    own. Refused in the op-list, and on the sheet around the guard."""
    doc = _with(_ops("d01-rc-lowpass-loaded", "reference"),
                {"op": "place_component", "lib_id": "Device:R", "designator": "R9 VOUT GND 1",
                 "x_mil": 3000, "y_mil": 3000, "value": "1k"})
    score, _ = _score(tmp_path, "d01-rc-lowpass-loaded", doc)
    assert not score["passed"]
    assert any(e.startswith("BAD_DESIGNATOR: $.ops[") and "'R9 VOUT GND 1'" in e
               for e in score["errors"]), score["errors"]
    _around_the_guard(monkeypatch)
    score, pair = _score(tmp_path, "d01-rc-lowpass-loaded", doc, "around")
    sim = json.loads((pair / "sim.json").read_text())
    assert sim["status"] == "error" and "BAD_DESIGNATOR" in sim["reason"], sim["reason"]
    assert not score["passed"]


def _snapshot(folder: Path) -> dict:
    return {str(p): (p.read_bytes(), p.stat().st_mtime_ns)
            for p in sorted(folder.rglob("*")) if p.is_file()}


@needs_landlock
@pytest.mark.slow
def test_a_whole_run_scores_the_forgeries_as_failures_and_nothing_changes_after_it(tmp_path):
    """The done-when of the review: wrong design answers with an injected `.control`
    block, with `shell`, and with their own Sim.* model fail their tasks in a real run,
    and no file in results/ changes after the run ends."""
    from conftest import Project

    results = tmp_path / "wb" / "results"
    late = f"(sleep 2; echo late > {results}/PWNED; echo '{{}}' > {results}/runs/x.json) &"
    answers = tmp_path / "answers"
    answers.mkdir()
    high_pass = _ops("d01-rc-lowpass-loaded", "high-pass.json")
    (answers / "d01-rc-lowpass-loaded.json").write_text(json.dumps(_with(high_pass, {
        "op": "set_component_parameters", "designator": "C1",
        "parameters": {"Note": f"1\n.control\nshell {late}\necho f3db = 1.0e3\nquit\n.endc"}})))
    led = _ops("d05-npn-led-switch", "ignores-led-drop.json")
    params = {**OWN_MODEL["parameters"],
              "Sim.Params": f"IS=1e-6 N=0.6\n.control\nshell {late}\n.endc"}
    (answers / "d05-npn-led-switch.json").write_text(json.dumps(_with(led, {
        **OWN_MODEL, "parameters": params})))
    tasks = ["d01-rc-lowpass-loaded", "d05-npn-led-switch"]
    project = Project(tmp_path / "wb").configure(
        {"reference": {"kind": "reference"}, "forger": {"kind": "ops_dir", "dir": str(answers)}},
        tasks=tasks)
    project.snakemake()
    for task in tasks:
        assert project.score("reference", task)["passed"]
        forged = project.score("forger", task)
        assert not forged["passed"] and forged["outcome"] == "invalid", forged["errors"]
    before = _snapshot(results)
    time.sleep(3)
    assert not (results / "PWNED").exists()
    assert _snapshot(results) == before, "a file in results/ changed after the run"


@needs_landlock
def test_a_step_that_crashes_on_one_answer_is_that_pairs_verdict(tmp_path, monkeypatch):
    """An answer that makes a confined akcli step crash (here akcli's draw, made to raise)
    is an invalid verdict on that pair with the crash's last line, never an internal
    error that stops its batch."""
    from wirebench.runtime import akcli_backend

    akcli_backend.warm_up()  # which draws once, here in the parent
    real, parent = akcli_backend.draw, os.getpid()

    def crash(*args, **kwargs):
        if os.getpid() == parent:
            return real(*args, **kwargs)
        raise ValueError("akcli choked on this answer")

    monkeypatch.setattr(akcli_backend, "draw", crash)
    score, pair = _score(tmp_path, "d01-rc-lowpass-loaded", _ops("d01-rc-lowpass-loaded",
                                                                  "reference"))
    assert (score["outcome"], score["passed"]) == ("invalid", False)
    crashed = [e for e in score["errors"] if e.startswith("apply crashed:")]
    assert crashed and "akcli choked on this answer" in crashed[0], score["errors"]
