"""`wirebench mcp` to the official MCP client: each tool as its typed function, each
refusal as an MCP tool error with its kind and reason, submit with and without --submit,
render's picture beside its text, the surface a task names. One server a test, with the
test's own environment (so that a scratch copy of the package is the server that runs:
benchmarks/mutation_score.py --config tools).
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import anyio
import yaml
from conftest import SYMBOLS, TASKS

DIVIDER = TASKS / "01-divider"


def _session(task: Path, pair: Path, calls: list[tuple[str, dict]], submit: Path | None):
    """The server's tools (name -> (description, input schema)) and each call's result."""
    from mcp.client.session import ClientSession
    from mcp.client.stdio import StdioServerParameters, stdio_client

    params = StdioServerParameters(command=sys.executable, args=[
        "-m", "wirebench.cli", "mcp", "--task", str(task), "--pair", str(pair),
        *(["--submit", str(submit)] if submit else []), "--symbols", *SYMBOLS],
        env=dict(os.environ))

    async def run():
        async with stdio_client(params) as (read, write), ClientSession(read, write) as s:
            init = await s.initialize()
            tools = {t.name: (t.description, t.input_schema)
                     for t in (await s.list_tools()).tools}
            results = [await s.call_tool(name, args) for name, args in calls]
            return init, tools, results

    return anyio.run(run)


def test_each_tool_answers_as_the_toolbox_does_and_refusals_are_tool_errors(tmp_path):
    from wirebench.steps.tools import DESIGN, SPECS

    ops = json.loads((DIVIDER / "reference_ops.json").read_text())
    out = tmp_path / "ops_out.json"
    init, tools, results = _session(DIVIDER, tmp_path / "pair", [
        ("op_schema", {"op": "nope"}),
        ("pins", {"lib_id": "Device:R"}),
        ("validate", {"oplist": ops}),
        ("draw", {"oplist": ops}),
        ("nets", {}),
        ("query", {"net": "ADC_IN"}),
        ("query", {"pin": "R1.2", "net": "ADC_IN"}),
        ("check", {}),
        ("check", {"kind": "erc"}),
        ("render", {}),
        ("simulate", {"spec": {"analyses": {"op": ""},
                               "control": ".control\nshell rm -rf /\n.endc"}}),
        ("submit", {"oplist": ops}),
    ], out)
    assert init.server_info.name == "wirebench"
    assert init.instructions == (
        "akcli's tools for task 01-divider: inspect ops and pins, validate and dry-run a "
        "draw, query, check, render and simulate it, then submit the final op-list.")
    assert sorted(tools) == sorted(DESIGN)
    assert all(tools[n][0] == SPECS[n][0] for n in tools), "the toolbox's own words"
    assert not tools["query"][1].get("required"), "query's three are each optional"
    assert set(tools["query"][1]["properties"]) == {"net", "pin", "component"}
    assert tools["pins"][1]["required"] == ["lib_id"]
    assert tools["draw"][1]["required"] == ["oplist"]
    assert tools["check"][1]["properties"]["kind"]["default"] == "all"
    (bad_op, pins, valid, drawn, nets, net, two, checked, erc, picture, sim,
     submitted) = results
    assert bad_op.is_error and bad_op.content[0].text == (
        "Error executing tool op_schema: [invalid] unknown op 'nope'; see list_ops")
    assert not pins.is_error and "1" in pins.content[0].text
    assert not valid.is_error and json.loads(valid.content[0].text) == {"valid": True,
                                                                       "errors": []}
    assert not drawn.is_error and json.loads(drawn.content[0].text)["applied"] is True
    assert "ADC_IN" in nets.content[0].text and "R1.2" in net.content[0].text
    assert two.is_error and two.content[0].text == (
        "Error executing tool query: [invalid] give exactly one of net, pin or component")
    assert set(json.loads(checked.content[0].text)) == {"erc", "layout", "integrity"}
    assert set(json.loads(erc.content[0].text)) == {"erc"}
    assert not picture.is_error
    text, image = picture.content
    assert text.text.endswith("the picture follows")
    assert image.type == "image" and image.mime_type == "image/png" and image.data
    assert sim.is_error and sim.content[0].text.startswith(
        "Error executing tool simulate: [denied] ")
    assert not submitted.is_error and submitted.content[0].text == "submitted to ops_out.json"
    assert json.loads(out.read_text()) == ops
    assert not list((tmp_path / "pair").glob(".tools-*")), "the scratch goes with the server"


def test_without_submit_the_answer_is_said_not_written(tmp_path):
    ops = json.loads((DIVIDER / "reference_ops.json").read_text())
    pair = tmp_path / "deep" / "down" / "pair"  # made, with the folders on the way
    _, _, (said,) = _session(DIVIDER, pair, [("submit", {"oplist": ops})], None)
    assert not said.is_error and said.content[0].text == "submitted"
    assert [p.name for p in pair.iterdir()] == []
    # A pair folder that is there already is used as it is.
    (pair / "kept.txt").write_text("mine")
    _, _, (again,) = _session(DIVIDER, pair, [("nets", {})], None)
    assert not again.is_error and (pair / "kept.txt").read_text() == "mine"


def test_a_surface_named_as_a_list_is_what_the_server_lists(tmp_path):
    import shutil

    task = tmp_path / "task"
    shutil.copytree(DIVIDER, task)
    meta = yaml.safe_load((task / "task.yaml").read_text())
    meta["tool_surface"] = ["nets", "submit", "pins"]
    (task / "task.yaml").write_text(yaml.safe_dump(meta))
    _, tools, (draw,) = _session(task, tmp_path / "pair", [("draw", {"oplist": {}})], None)
    assert sorted(tools) == ["nets", "pins", "submit"]
    assert draw.is_error


def test_the_server_ends_well_when_its_client_goes(tmp_path):
    import subprocess

    proc = subprocess.run([sys.executable, "-m", "wirebench.cli", "mcp", "--task",
                           str(DIVIDER), "--pair", str(tmp_path / "pair"), "--symbols",
                           *SYMBOLS], input=b"", capture_output=True, timeout=60,
                          env=dict(os.environ))
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert not list((tmp_path / "pair").glob(".tools-*"))
