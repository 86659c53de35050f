"""Agents that drive akcli through tool calls: `kind: openai` with `tools: true`, against
the scripted OpenAI-compatible server on 127.0.0.1, in one real Snakemake run.

- `tools-good` looks up pins, validates a broken draft, reads the error, draws the fixed
  answer and submits: it passes a transcription, a design and a board task.
- `tools-bad` calls a tool that does not exist, sends malformed arguments, and draws an
  op-list whose symbol_source leaves the pair: each gets a clear tool error, the loop
  goes on, and it still submits the right answer.
- `tools-loop` calls list_ops until max_tool_calls ends it: no answer, its own failure.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from conftest import TASKS
from fake_openai import FakeOpenAI, task_of, tool_calls

TASK_IDS = ["01-divider", "d01-rc-lowpass-loaded", "b08-buck-3v3"]
pytestmark = pytest.mark.skipif(
    not Path("/usr/share/kicad/symbols/Device.kicad_sym").is_file() and not os.environ.get("CI"),
    reason="the board task needs KiCad's libraries (apt-get install kicad-symbols)")


def _answers() -> dict[str, dict]:
    out = {}
    for t in TASK_IDS:
        title = (TASKS / t / "task.md").read_text().splitlines()[0].lstrip("# ").strip()
        out[title] = json.loads((TASKS / t / "reference_ops.json").read_text())
    return out


def _tool_results(body) -> list[str]:
    return [m["content"] for m in body["messages"] if m["role"] == "tool"]


def good(answers):
    def script(n, body):
        ops, seen = task_of(body, answers), _tool_results(body)
        broken = {**ops, "ops": [{k: v for k, v in op.items() if k != "designator"}
                                 if op["op"] == "place_component" else op for op in ops["ops"]]}
        step = len(seen)
        if step == 0:
            return tool_calls(("pins", {"lib_id": "Device:R"}))
        if step == 1:
            return tool_calls(("validate", {"oplist": broken}))
        if step == 2:  # it read the validator's complaint; now the fixed draft
            assert '"valid": false' in seen[-1], seen[-1]
            return tool_calls(("draw", {"oplist": ops}))
        assert '"applied": true' in seen[-1], seen[-1]
        return tool_calls(("submit", {"oplist": ops}))
    return script


def bad(answers):
    def script(n, body):
        ops, seen = task_of(body, answers), _tool_results(body)
        escape = {**ops, "ops": [{**ops["ops"][0], "symbol_source": "../../../../etc/passwd"},
                                 *ops["ops"][1:]]}
        step = len(seen)
        if step == 0:  # two bad calls in one reply
            return tool_calls(("read_file", {"path": "/etc/passwd"}), ("draw", "{not json"))
        if step == 2:
            return tool_calls(("draw", {"oplist": escape}))
        return tool_calls(("submit", {"oplist": ops}))
    return script


def looping(n, body):
    return tool_calls(("list_ops", {}))


@pytest.fixture(scope="module")
def tools_run(tmp_path_factory):
    from conftest import Project

    root = tmp_path_factory.mktemp("tools")
    answers = _answers()
    scripts = {"good": good(answers), "bad": bad(answers), "loop": looping}
    with FakeOpenAI(scripts) as server:
        entry = {"kind": "openai", "tools": True, "base_url": server.base_url,
                 "provider": "fake", "backoff_s": 0.1}
        models = {"tools-good": {**entry, "model": "good"},
                  "tools-bad": {**entry, "model": "bad"},
                  "tools-loop": {**entry, "model": "loop", "max_tool_calls": 5}}
        project = Project(root / "wb").configure(models, tasks=TASK_IDS)
        project.snakemake()
        yield project, server


def _agent(project, model, task) -> dict:
    return json.loads((project.pair(model, task) / "agent.json").read_text())


@pytest.mark.slow
def test_a_model_that_checks_its_work_with_the_tools_passes_three_families(tools_run):
    project, _ = tools_run
    df = project.summary().set_index(["model", "task"])
    for task in TASK_IDS:
        assert bool(df.loc[("tools-good", task), "passed"]), task
        assert df.loc[("tools-good", task), "tool_calls"] == 4
        assert df.loc[("tools-good", task), "invalid_calls"] == 0
        steps = _agent(project, "tools-good", task)["turns"][0]["trajectory"]
        assert [s["tool"] for s in steps] == ["pins", "validate", "draw", "submit"]
        assert all(s["status"] == "ok" and s["args_bytes"] > 0 and len(s["args_sha256"]) == 16
                   and s["result_bytes"] > 0 and s["latency_s"] >= 0 for s in steps)
    assert set(df.xs("tools-good")["tier"]) == {"transcription", "design", "board"}
    # The report's drill-down shows each pair's calls as a timeline.
    html = (project.root / "results" / "report.html").read_text()
    timeline = html.split("id='pair-tools-good-01-divider-1'")[1].split("</details>")[0]
    assert timeline.count("<li class='pass'><code>") == 4
    assert timeline.index("<code>pins</code>") < timeline.index("<code>submit</code>")
    # The scratch folder of the tool calls is gone; the pair holds its artifacts only.
    assert not list(project.pair("tools-good", "b08-buck-3v3").glob(".tools-*"))


@pytest.mark.slow
def test_bad_calls_get_tool_errors_and_the_loop_goes_on(tools_run):
    project, server = tools_run
    for task in TASK_IDS:
        agent = _agent(project, "tools-bad", task)
        steps = agent["turns"][0]["trajectory"]
        assert [(s["tool"], s["status"]) for s in steps] == [
            ("read_file", "invalid"), ("draw", "invalid"), ("draw", "denied"),
            ("submit", "ok")]
        assert (agent["invalid_calls"], agent["denials"], agent["unexpected_denials"]) == (2, 1, 1)
        row = project.summary().set_index(["model", "task"]).loc[("tools-bad", task)]
        assert bool(row["passed"]) and row["invalid_calls"] == 2
    # What the model read back names each problem.
    replies = [m["content"] for c in server.calls["bad"] for m in c["body"]["messages"]
               if m["role"] == "tool"]
    assert any("unknown tool 'read_file'" in r for r in replies)
    assert any("the arguments are not JSON" in r for r in replies)
    assert any("[denied]" in r and "PATH_OUTSIDE_PAIR" in r for r in replies)
    card = json.loads((project.root / "results" / "scorecard.json").read_text())
    assert card["models"]["tools-bad"]["surface_regressions"] == 3 * len(TASK_IDS)
    # Three replies of 550 tokens a pair (fake_openai's counts), and every pair passed.
    assert card["models"]["tools-bad"]["tokens_per_pass"] == 3 * 550.0
    assert card["models"]["tools-good"]["surface_regressions"] == 0
    assert not Path("/etc/passwd.kicad_sch").exists()


@pytest.mark.slow
def test_a_model_that_never_submits_is_stopped_by_its_budget(tools_run):
    project, server = tools_run
    for task in TASK_IDS:
        agent = _agent(project, "tools-loop", task)
        assert agent["status"] == "no_answer" and agent["budget"] == "max_tool_calls"
        assert agent["tool_calls"] == 5
        assert "budget max_tool_calls ran out" in agent["error"]
    df = project.summary().set_index(["model", "task"])
    assert set(df.xs("tools-loop")["outcome"]) == {"invalid"}  # its failure, not infra
    html = (project.root / "results" / "report.html").read_text()
    assert "The <code>max_tool_calls</code> budget ran out." in html


@pytest.mark.slow
def test_the_trajectories_replay_call_for_call(tools_run, tmp_path):
    """`wirebench replay` makes every stored tool call again on a fresh toolbox: the same
    statuses and result bytes come back, with no host path in them. A stored result that
    differs is named by its call."""
    import shutil
    import subprocess

    project, _ = tools_run

    def replay(results):
        proc = subprocess.run(["wirebench", "replay", str(results), "--json", "--config",
                               str(project.root / "config" / "config.yaml")],
                              capture_output=True, text=True, cwd=project.root)
        return proc.returncode, json.loads(proc.stdout)

    code, report = replay(project.root / "results")
    assert code == 0 and report["equivalent"] == report["total"] == 3 * len(TASK_IDS)
    steps = _agent(project, "tools-bad", "01-divider")["turns"][0]["trajectory"]
    assert json.loads(steps[2]["args"])["oplist"]["ops"][0]["symbol_source"].endswith("passwd")
    assert str(project.root) not in json.dumps(steps)

    copy = tmp_path / "results"
    shutil.copytree(project.root / "results", copy)
    agent_path = copy / "runs" / "tools-good" / "b08-buck-3v3" / "1" / "agent.json"
    agent = json.loads(agent_path.read_text())
    agent["turns"][0]["trajectory"][2]["result_sha256"] = "0" * 16  # the draw's result
    agent_path.write_text(json.dumps(agent))
    code, report = replay(copy)
    (bad,) = [p for p in report["pairs"] if not p["same"]]
    assert code == 1 and bad["pair"] == "runs/tools-good/b08-buck-3v3/1"
    assert bad["differs"] == ["trajectory (call 3)"]


def test_a_denial_is_expected_only_where_the_task_wants_no_drawing():
    from wirebench.corpus.tasks import load_task
    from wirebench.steps.generate import _denials

    assert _denials(2, load_task(TASKS / "01-divider")) == {
        "expected_denials": 0, "unexpected_denials": 2}
    for task in ("16-injected-datasheet-note", "18-out-of-domain-firmware"):
        assert _denials(2, load_task(TASKS / task)) == {
            "expected_denials": 2, "unexpected_denials": 0}


def test_the_mcp_server_serves_the_tools_to_the_official_client(tmp_path):
    """`wirebench mcp` driven by the `mcp` package's own stdio client: the design surface
    is listed, a path escape is a tool error, and submit writes the answer."""
    import sys

    import anyio
    from conftest import SYMBOLS
    from mcp.client.session import ClientSession
    from mcp.client.stdio import StdioServerParameters, stdio_client

    task = TASKS / "01-divider"
    ops = json.loads((task / "reference_ops.json").read_text())
    escape = {**ops, "ops": [{**ops["ops"][0], "symbol_source": "/etc/passwd"}, *ops["ops"][1:]]}
    out = tmp_path / "ops_out.json"
    params = StdioServerParameters(command=sys.executable, args=[
        "-m", "wirebench.cli", "mcp", "--task", str(task), "--pair", str(tmp_path / "pair"),
        "--submit", str(out), "--symbols", *SYMBOLS])

    async def session():
        async with stdio_client(params) as (read, write), ClientSession(read, write) as s:
            await s.initialize()
            names = sorted(t.name for t in (await s.list_tools()).tools)
            escaped = await s.call_tool("draw", {"oplist": escape})
            unknown = await s.call_tool("pins", {"lib_id": "Secret:Thing"})
            drawn = await s.call_tool("draw", {"oplist": ops})
            submitted = await s.call_tool("submit", {"oplist": ops})
            return names, escaped, unknown, drawn, submitted

    names, escaped, unknown, drawn, submitted = anyio.run(session)
    assert names == sorted(["list_ops", "op_schema", "pins", "nets", "query", "check",
                            "render", "validate", "draw", "simulate", "submit"])
    assert escaped.is_error and "[denied]" in escaped.content[0].text
    assert "PATH_OUTSIDE_PAIR" in escaped.content[0].text
    assert unknown.is_error and "not one this task draws with" in unknown.content[0].text
    assert not drawn.is_error and '"applied": true' in drawn.content[0].text
    assert not submitted.is_error and json.loads(out.read_text()) == ops
    # The tools' scratch is gone with the server; nothing was written outside the pair.
    assert not list((tmp_path / "pair").glob(".tools-*"))


MCP_AGENT = """
import asyncio, json, os, sys
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

server = json.load(open(os.environ["MCP_CONFIG"]))["mcpServers"]["wirebench"]
answer = json.load(open(sys.argv[1] + "/" + os.environ["TASK_ID"] + ".json"))

async def main():
    params = StdioServerParameters(command=server["command"], args=server["args"],
                                    env=server.get("env"))
    async with stdio_client(params) as (read, write), ClientSession(read, write) as s:
        await s.initialize()
        peek = await s.call_tool("draw", {"oplist": {**answer, "ops": [
            {**answer["ops"][0], "symbol_source": sys.argv[2]}, *answer["ops"][1:]]}})
        print("peek:", peek.is_error, peek.content[0].text[:200], file=sys.stderr)
        drawn = await s.call_tool("draw", {"oplist": answer})
        assert not drawn.is_error and '"applied": true' in drawn.content[0].text, drawn
        await s.call_tool("submit", {"oplist": answer})

asyncio.run(main())
"""


@pytest.mark.slow
def test_a_command_agent_drives_the_tools_through_mcp_config_in_its_sandbox(tmp_path):
    """A `command` entry with `mcp: true`: the agent (here a script using the mcp client)
    starts the server MCP_CONFIG names, inside its sandbox, draws, and submits to
    OPS_OUT. A draw that points at the answer key is a tool error; the pair passes."""
    import sys

    from conftest import Project

    task = "b08-buck-3v3"
    answers = tmp_path / "answers"
    answers.mkdir()
    (answers / f"{task}.json").write_text((TASKS / task / "reference_ops.json").read_text())
    script = tmp_path / "agent.py"
    script.write_text(MCP_AGENT)
    key = str(TASKS / task / "reference_ops.json")
    entry = {"kind": "command", "mcp": True, "provider": "local", "timeout": 300,
             "retries": 0, "expose": [str(answers), str(script)],
             "command": f"{sys.executable} {script} {answers} {key}"}
    project = Project(tmp_path / "wb").configure({"mcp-agent": entry}, tasks=[task])
    project.snakemake()
    score = project.score("mcp-agent", task)
    assert score["passed"], score["errors"]
    agent = json.loads((project.pair("mcp-agent", task) / "agent.json").read_text())
    tail = agent["stderr_tail"]
    assert "peek: True" in tail and "PATH_OUTSIDE_PAIR" in tail
