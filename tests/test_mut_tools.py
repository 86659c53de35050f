"""The toolbox an agent drives akcli with, tool by tool, on a real pair: real akcli in the
pair's confined child, every refusal by its kind (invalid, denied, failed) and reason;
and the tool loop's bookkeeping against the scripted server: what it counts, records,
sends back and ends with. So that every mutant of steps/tools.py and agents/tool_loop.py
meets them (benchmarks/mutation_score.py --config tools).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import SYMBOLS, TASKS, reference_ops

from wirebench.corpus.tasks import load_task
from wirebench.steps.tools import (
    DESIGN,
    INSPECT,
    KEPT_ARGS,
    RESULT_CAP,
    Toolbox,
    ToolResult,
    parse_args,
    schemas,
    surface_tools,
)

DIVIDER = "01-divider"


def _oplist(task: str = DIVIDER) -> dict:
    return json.loads((TASKS / task / "reference_ops.json").read_text())


@pytest.fixture
def box(tmp_path):
    pair = tmp_path / "pair"
    pair.mkdir()
    toolbox = Toolbox(load_task(TASKS / DIVIDER), SYMBOLS, pair)
    yield toolbox
    scratch = toolbox.scratch
    toolbox.close()
    assert not scratch.exists(), "close() removes the tools' scratch folder"


def test_a_call_the_toolbox_cannot_take_is_invalid_and_says_why(box):
    assert box.call("rm_rf", {}) == ToolResult(
        "invalid", f"unknown tool 'rm_rf'; tools: {', '.join(DESIGN)}")
    assert box.call("list_ops", ValueError("Expecting value")) == ToolResult(
        "invalid", "the arguments are not JSON: Expecting value")
    assert box.call("list_ops", ["not", "an", "object"]) == ToolResult(
        "invalid", "the arguments must be a JSON object")
    inspect = load_task(TASKS / DIVIDER)
    inspect.meta["tool_surface"] = "inspect"
    narrow = Toolbox(inspect, SYMBOLS, box.scratch.parent)
    try:
        assert narrow.call("draw", {"oplist": _oplist()}) == ToolResult(
            "invalid", f"tool 'draw' is not on this task's surface ({', '.join(INSPECT)})")
        assert narrow.last_draft is None
    finally:
        narrow.close()


def test_arguments_are_read_as_the_model_wrote_them():
    assert parse_args("") == {} and parse_args("   ") == {}
    assert parse_args('{"op": "add_wire"}') == {"op": "add_wire"}
    for raw, why in ((None, "the arguments are NoneType, not JSON text"),
                     (b"{}", "the arguments are bytes, not JSON text")):
        got = parse_args(raw)
        assert isinstance(got, ValueError) and str(got) == why
    bad = parse_args("{nope")
    assert isinstance(bad, ValueError) and str(bad).startswith("unreadable arguments: ")
    deep = "[" * 200 + "]" * 200
    assert isinstance(parse_args(deep), ValueError)
    assert parse_args('{"oplist": ' + "[" * 10 + "]" * 10 + "}") == {"oplist": [[[[[[[[[[]]]]]]]]]]}


def test_a_surface_is_a_named_set_or_a_list_in_design_order():
    assert surface_tools("design") == DESIGN and surface_tools("inspect") == INSPECT
    assert surface_tools(["submit", "pins", "bogus"]) == ("pins", "submit")
    offered = schemas(["nets", "draw"])
    assert [t["function"]["name"] for t in offered] == ["nets", "draw"]
    from wirebench.steps.tools import SPECS

    assert offered[0] == {"type": "function", "function": {
        "name": "nets", "description": SPECS["nets"][0],
        "parameters": {"type": "object", "properties": {}}}}
    assert offered[1]["function"]["description"] == SPECS["draw"][0]
    assert offered[1]["function"]["parameters"]["required"] == ["oplist"]
    with pytest.raises(KeyError):
        surface_tools("everything")


def test_the_inspect_tools_answer_from_akcli(box):
    ops = box.call("list_ops", {})
    assert ops.status == "ok" and "place_component" in ops.text and "add_net_label" in ops.text
    template = box.call("op_schema", {"op": "add_net_label"})
    assert template.status == "ok" and '"op": "add_net_label"' in template.text
    assert box.call("op_schema", {"op": "--help"}) == ToolResult(
        "invalid", "unknown op '--help'; see list_ops")
    assert box.call("op_schema", {}) == ToolResult("invalid", "unknown op None; see list_ops")
    pins = box.call("pins", {"lib_id": "Device:R"})
    assert pins.status == "ok" and '"number": "1"' in pins.text.replace(" ", "") or \
        "1" in pins.text
    assert box.call("pins", {"lib_id": "R"}) == ToolResult(
        "invalid", "lib_id must be LIBRARY:SYMBOL, such as Device:R")
    assert box.call("pins", {"lib_id": 7}).status == "invalid"
    libraries = ", ".join(sorted(Path(s).stem for s in SYMBOLS))
    assert box.call("pins", {"lib_id": "/etc/passwd:R"}) == ToolResult(
        "denied", f"library '/etc/passwd' is not one this task draws with ({libraries})")
    missing = box.call("pins", {"lib_id": "Device:NoSuchPart"})
    assert missing.status == "failed" and missing.text


def test_draw_then_inspect_the_drawn_sheet(box):
    before = box.call("nets", {})
    assert before == ToolResult("ok", json.dumps({"nets": []})), "the starting sheet is blank"
    ops = _oplist()
    drawn = box.call("draw", {"oplist": ops})
    doc = json.loads(drawn.text)
    assert drawn.status == "ok" and doc["applied"] is True and doc["errors"] == []
    assert box.last_draft == json.dumps(ops).encode()
    nets = json.loads(box.call("nets", {}).text)["nets"]
    named = {n["name"]: sorted(n["members"]) for n in nets if n["name"]}
    assert named["ADC_IN"] == ["R1.2", "R2.1"]
    assert all(n["name"] or len(n["members"]) > 1 for n in nets)
    net = box.call("query", {"net": "ADC_IN"})
    assert net.status == "ok" and "R1.2" in net.text and "source" not in json.loads(net.text)
    pin = box.call("query", {"pin": "R1.2"})
    assert pin.status == "ok" and "ADC_IN" in pin.text
    part = box.call("query", {"component": "R2"})
    assert part.status == "ok" and "10k" in part.text
    unknown = box.call("query", {"net": "NO_SUCH_NET"})
    assert unknown.status == "failed"
    found = json.loads(box.call("check", {"kind": "erc"}).text)
    assert set(found) == {"erc"} and set(found["erc"]) == {"findings", "waived"}
    everything = json.loads(box.call("check", {}).text)
    assert set(everything) == {"erc", "layout", "integrity"}
    assert box.call("render", {}).text.startswith("render is not available: this model "
                                                  "takes no images")


@pytest.mark.parametrize("args, why", [
    ({}, "give exactly one of net, pin or component"),
    ({"net": "A", "pin": "R1.1"}, "give exactly one of net, pin or component"),
    ({"net": "A", "extra": 1}, "give exactly one of net, pin or component"),
    ({"net": ""}, "net must be one line of text"),
    ({"net": 5}, "net must be one line of text"),
    ({"net": "A\nB"}, "net must be one line of text"),
    ({"net": "N" * 201}, "net must be one line of text"),
    ({"pin": "R1"}, "pin 'R1' must be REF.NUMBER, such as U1.3"),
    ({"pin": "--why.1x"}, "pin '--why.1x' must be REF.NUMBER, such as U1.3"),
    ({"component": "--all"}, "component '--all' must be a designator"),
    ({"kind_of": "x"}, "give exactly one of net, pin or component"),
])
def test_a_query_that_is_not_one_plain_name_is_refused(box, args, why):
    assert box.call("query", args) == ToolResult("invalid", why)


def test_a_check_of_an_unknown_kind_is_refused(box):
    assert box.call("check", {"kind": "drc"}) == ToolResult(
        "invalid", "kind is all or one of erc, layout, integrity")


def test_the_design_tools_validate_draw_and_submit(box):
    ops = _oplist()
    ok = box.call("validate", {"oplist": ops})
    assert ok == ToolResult("ok", json.dumps({"valid": True, "errors": []}))
    broken = {**ops, "ops": [{k: v for k, v in op.items() if k != "designator"}
                             for op in ops["ops"]]}
    said = json.loads(box.call("validate", {"oplist": broken}).text)
    assert said["valid"] is False and said["errors"]
    assert box.last_draft == json.dumps(broken).encode()
    bad_draw = json.loads(box.call("draw", {"oplist": broken}).text)
    assert bad_draw["applied"] is False and bad_draw["errors"]
    assert box.call("nets", {}).text == json.dumps({"nets": []}), "a failed draw is no sheet"
    # A path the guard refuses is a denial, not the answer's own error.
    outside = {**ops, "ops": [dict(op, symbol_source="/etc/passwd")
                              if op["op"] == "place_component" else op for op in ops["ops"]]}
    assert box.call("validate", {"oplist": outside}).status == "denied"
    assert box.call("draw", {"oplist": outside}).status == "denied"
    sent = box.call("submit", {"oplist": json.dumps(ops)})  # a JSON string is taken too
    assert sent == ToolResult("ok", "submitted", submitted=json.dumps(ops).encode())


@pytest.mark.parametrize("oplist, why", [
    ("{not json", "oplist is a string that is not JSON: "),
    ([1, 2], "oplist must be a JSON object"),
    (None, "oplist must be a JSON object"),
    ({"ops": ["x" * (4 << 20)]}, f"oplist is {(4 << 20) + 13} bytes (at most {4 << 20})"),
])
def test_an_oplist_that_is_no_object_or_too_big_is_refused(box, oplist, why):
    for tool in ("validate", "draw", "submit"):
        got = box.call(tool, {"oplist": oplist})
        assert got.status == "invalid" and got.text.startswith(why), (tool, got)
        assert got.submitted is None
    assert box.last_draft is None


def test_simulate_runs_the_agents_own_bench_on_the_last_draw_only(tmp_path):
    pair = tmp_path / "pair"
    pair.mkdir()
    box = Toolbox(load_task(TASKS / "d01-rc-lowpass-loaded"), SYMBOLS, pair)
    spec = {"stimuli": [{"name": "VS", "kind": "vsource", "node": "VIN", "value": "DC 1"}],
            "analyses": {"op": ""}, "assert": [
                {"name": "vout", "analysis": "op", "meas": "FIND v(VOUT) AT=0", "ge": 0}]}
    try:
        assert box.call("simulate", {"spec": spec}) == ToolResult(
            "invalid", "nothing drawn yet: simulate runs on the last successful draw")
        assert box.call("simulate", {"spec": "{x"}).text.startswith(
            "spec is a string that is not JSON: unreadable spec: ")
        assert box.call("simulate", {"spec": [1]}) == ToolResult(
            "invalid", "spec must be a JSON object (akcli's sim spec)")
        assert box.call("simulate", {"spec": {"x": "y" * (4 << 20)}}) == ToolResult(
            "invalid", f"spec is over {4 << 20} bytes")
        assert box.call("draw", {"oplist": _oplist("d01-rc-lowpass-loaded")}).status == "ok"
        shell = {**spec, "analyses": {"op": ""}, "control": ".control\nshell rm -rf /\n.endc"}
        assert box.call("simulate", {"spec": shell}).status == "denied"
        tran = {**spec, "analyses": {"tran": "1u 1m"}, "assert": [
            {"name": "vout", "analysis": "tran", "meas": "FIND v(VOUT) AT=1m", "ge": 0}]}
        got = box.call("simulate", {"spec": json.dumps(tran)})
        assert got.status == "ok", got.text
        result = json.loads(got.text)
        assert set(result) >= {"ok", "measured", "findings", "parts_skipped"}
        assert 0 < result["measured"]["vout"] <= 1.0
    finally:
        box.close()


def test_what_goes_back_is_capped_and_names_no_host_path(box):
    big = box.call("pins", {"lib_id": "Device:NoSuchPart" + "x" * 20_000})
    assert len(big.text.encode()) <= RESULT_CAP + 40
    ops = _oplist()
    for op in ops["ops"]:
        if op["op"] == "place_component":
            op["lib_id"] = "Device:NoSuchPart"
    got = box.call("draw", {"oplist": ops})
    assert str(box.scratch) not in got.text and str(box.scratch.parent) not in got.text


def test_a_tool_result_beyond_the_cap_says_how_big_it_was(box):
    """Three hundred broken ops: akcli names each, far past what goes back to the model."""
    broken = {"protocol_version": 2, "target_format": "kicad",
              "ops": [{"op": "place_component", "lib_id": "Device:R"}] * 300}
    got = box.call("validate", {"oplist": broken})
    head, _, tail = got.text.rpartition("\n[cut: ")
    assert got.status == "ok" and tail.endswith(" bytes in all]")
    size = int(tail.split()[0])
    assert size > 4 * RESULT_CAP and len(head.encode()) <= RESULT_CAP
    assert head.startswith('{"valid": false, "errors": [')


def test_a_trajectory_step_keeps_the_call_its_result_and_its_time():
    import hashlib
    import time

    result = ToolResult("denied", "no")
    step = Toolbox.record(3, "draw", '{"oplist": 1}', result, time.monotonic() - 0.25)
    assert step == {"i": 3, "tool": "draw", "args_bytes": 13,
                    "args_sha256": hashlib.sha256(b'{"oplist": 1}').hexdigest()[:16],
                    "status": "denied", "result_bytes": 2,
                    "result_sha256": hashlib.sha256(b"no").hexdigest()[:16],
                    "latency_s": step["latency_s"], "args": '{"oplist": 1}'}
    assert 0.25 <= step["latency_s"] < 2
    huge = "x" * (KEPT_ARGS + 1)
    kept = Toolbox.record(1, "submit", huge, ToolResult("ok", "", image=b"png"), time.monotonic())
    assert "args" not in kept and kept["args_bytes"] == KEPT_ARGS + 1
    assert kept["image_bytes"] == 3
    edge = Toolbox.record(1, "submit", "x" * KEPT_ARGS, result, time.monotonic())
    assert edge["args"] == "x" * KEPT_ARGS
    lone = Toolbox.record(1, "pins", '"\ud800"', result, time.monotonic())
    assert lone["args_bytes"] == 5


# --- the loop's bookkeeping, against the scripted server -------------------------------------

def test_the_loop_counts_each_kind_of_refused_call_and_keeps_the_trajectory(tmp_path):
    from fake_openai import completion, tool_calls
    from test_behaviour import _loop

    ops = reference_ops(DIVIDER)
    doc = {"protocol_version": 2, "target_format": "kicad", "ops": ops}
    outside = {**doc, "ops": [dict(op, symbol_source="/etc/passwd")
                              if op["op"] == "place_component" else op for op in ops]}

    def script(n, body):
        if n == 1:
            return tool_calls(("nope", {}), ("validate", {"oplist": outside}),
                              ("pins", {"lib_id": "Device:NoSuchPart"}))
        if n == 2:
            tools = [m for m in body["messages"] if m["role"] == "tool"]
            assert [t["content"].split("]")[0] for t in tools] == ["[invalid", "[denied",
                                                                   "[failed"]
            return tool_calls(("validate", {"oplist": doc}))
        return completion("here it is:\n```json\n" + json.dumps(doc) + "\n```")

    ans, calls = _loop(tmp_path, script, price_per_mtok={"prompt": 1.0, "completion": 2.0})
    assert ans.status == "ok" and json.loads(ans.ops) == doc
    d = ans.detail
    assert (d["tool_calls"], d["invalid_calls"], d["denials"], d["runtime_failures"]) == (
        4, 1, 1, 1)
    assert [s["tool"] for s in d["trajectory"]] == ["nope", "validate", "pins", "validate"]
    assert [s["i"] for s in d["trajectory"]] == [1, 2, 3, 4]
    assert [s["status"] for s in d["trajectory"]] == ["invalid", "denied", "failed", "ok"]
    assert d["prompt_tokens"] > 0 and d["completion_tokens"] > 0
    assert d["cost_usd"] == pytest.approx(
        (d["prompt_tokens"] * 1.0 + d["completion_tokens"] * 2.0) / 1e6, abs=1e-6)
    assert d["http_status"] == 200 and len(calls) == 3
    # Every request offers the task's tools; the first holds the guide and the pack.
    first = calls[0]["body"]
    assert first["messages"][0]["role"] == "system" and "submit" in first["messages"][0][
        "content"]
    assert first["messages"][1] == {"role": "user", "content": "# Your task\n\nDraw the "
                                                               "divider.\n"}
    assert [t["function"]["name"] for t in first["tools"]] == list(DESIGN)
    # The assistant's calls are replayed to the model as it made them.
    second = calls[1]["body"]["messages"]
    assert second[2]["role"] == "assistant" and len(second[2]["tool_calls"]) == 3
    assert second[2]["tool_calls"][0]["function"]["name"] == "nope"


def test_a_server_failure_mid_loop_is_infra_with_the_loops_counts(tmp_path):
    from fake_openai import error, tool_calls
    from test_behaviour import _loop

    def script(n, body):
        if n == 1:
            return tool_calls(("list_ops", {}))
        return error(500, "boom")

    ans, _ = _loop(tmp_path, script, timeout=30)
    assert ans.status == "infra_error" and "HTTP 500" in ans.error
    assert ans.detail["tool_calls"] == 1 and len(ans.detail["trajectory"]) == 1
    assert ans.detail["http_status"] == 500


def test_a_loop_without_a_toolbox_is_the_harnesss_failure(tmp_path):
    from wirebench.agents import tool_loop
    from wirebench.agents.answer import TurnContext

    ctx = TurnContext("m", load_task(TASKS / DIVIDER), 1, 1, tmp_path / "p.md", None)
    ans = tool_loop.answer({"kind": "openai", "tools": True}, ctx)
    assert (ans.status, ans.error, ans.retryable) == (
        "infra_error", "tools: true, but the harness gave no toolbox", False)


def test_a_picture_reaches_a_model_with_vision_only(tmp_path):
    from fake_openai import completion, tool_calls
    from test_behaviour import _loop

    from wirebench.agents.tool_loop import picture

    doc = {"protocol_version": 2, "target_format": "kicad", "ops": reference_ops(DIVIDER)}

    def script(n, body):
        if n == 1:
            return tool_calls(("draw", {"oplist": doc}))
        if n == 2:
            return tool_calls(("render", {}), ("nets", {}))
        return completion(json.dumps(doc))

    for vision in (True, False):
        (tmp_path / str(vision)).mkdir()
        ans, calls = _loop(tmp_path / str(vision), script, vision=vision)
        assert ans.status == "ok"
        last = calls[-1]["body"]["messages"]
        images = [m for m in last if m["role"] == "user" and isinstance(m["content"], list)]
        render = next(s for s in ans.detail["trajectory"] if s["tool"] == "render")
        if vision:
            assert len(images) == 1 and last[-1] is images[0] or last[-1] == images[0], \
                "after all of the reply's tool results"
            text, image = images[0]["content"]
            assert text["text"] == "The picture render returned (call call_1):"
            assert image["image_url"]["url"].startswith("data:image/png;base64,iVBOR")
            assert render["image_bytes"] > 1000
        else:
            assert images == [] and "image_bytes" not in render
    one = picture("c1", "render", b"\x89PNG")
    assert one == {"role": "user", "content": [
        {"type": "text", "text": "The picture render returned (call c1):"},
        {"type": "image_url", "image_url": {"url": "data:image/png;base64,iVBORw=="}}]}


def test_a_loop_that_never_stops_calling_ends_at_thirty_calls_by_default(tmp_path):
    from fake_openai import tool_calls
    from test_behaviour import _loop

    ans, calls = _loop(tmp_path, lambda n, body: tool_calls(("list_ops", {})))
    assert (ans.status, ans.detail["budget"], ans.detail["tool_calls"]) == (
        "no_answer", "max_tool_calls", 30)
    assert ans.error == "budget max_tool_calls ran out before any op-list"
    assert len(calls) == 31 and len(ans.detail["trajectory"]) == 30


def test_the_loop_sends_the_guide_replays_calls_as_made_and_submits(tmp_path):
    from fake_openai import tool_calls
    from test_behaviour import _loop

    from wirebench.agents.tool_loop import GUIDE

    doc = {"protocol_version": 2, "target_format": "kicad", "ops": reference_ops(DIVIDER)}

    def script(n, body):
        if n == 1:
            return tool_calls(("pins", '{"lib_id": "Device:R"}'))
        return tool_calls(("submit", {"oplist": doc}))

    ans, calls = _loop(tmp_path, script)
    assert ans.status == "ok" and json.loads(ans.ops) == doc and ans.reply == "submitted"
    first, second = (c["body"]["messages"] for c in calls)
    assert first[0] == {"role": "system", "content": GUIDE}
    replayed = second[2]
    assert replayed["role"] == "assistant" and replayed["content"] == ""
    (call,) = replayed["tool_calls"]
    assert call["type"] == "function" and call["id"]
    assert call["function"] == {"name": "pins", "arguments": '{"lib_id": "Device:R"}'}
    result = second[3]
    assert result["role"] == "tool" and result["tool_call_id"] == call["id"]
    assert result["content"].startswith("[ok] ")
    assert ans.detail["cost_usd"] is None, "no price, no cost"


def test_an_unset_key_is_the_harnesss_failure_before_any_request(tmp_path, monkeypatch):
    from fake_openai import completion
    from test_behaviour import _loop

    monkeypatch.delenv("WB_NO_SUCH_KEY", raising=False)
    ans, calls = _loop(tmp_path, lambda n, body: completion("{}"),
                       api_key_env="WB_NO_SUCH_KEY")
    assert (ans.status, ans.error) == ("infra_error",
                                       "environment variable WB_NO_SUCH_KEY is not set")
    assert calls == []


def test_a_draw_past_the_pairs_limit_says_so_and_the_toolbox_goes_on(tmp_path):
    pair = tmp_path / "pair"
    pair.mkdir()
    box = Toolbox(load_task(TASKS / DIVIDER), SYMBOLS, pair, timeout=0.5)
    many = {"protocol_version": 2, "target_format": "kicad", "ops": [
        {"op": "place_component", "lib_id": "Device:R", "designator": f"R{i}",
         "x_mil": 1000 + 400 * (i % 40), "y_mil": 1000 + 400 * (i // 40), "value": "1k"}
        for i in range(1, 2001)]}
    try:
        got = box.call("draw", {"oplist": many})
        assert got == ToolResult("ok", json.dumps({"applied": False,
                                                   "errors": ["draw exceeded 0.5 s"],
                                                   "net_diff": []}))
        assert box.call("pins", {"lib_id": "Device:R"}).status == "ok"
    finally:
        box.close()


def test_an_edit_tasks_starting_sheet_is_its_base_design(tmp_path):
    pair = tmp_path / "pair"
    pair.mkdir()
    box = Toolbox(load_task(TASKS / "13-edit-add-status-led"), SYMBOLS, pair)
    try:
        nets = json.loads(box.call("nets", {}).text)["nets"]
        assert {n["name"]: n["members"] for n in nets} == {
            "+3V3": ["U1.1"], "BTN_IN": ["U1.4"], "GND": ["U1.2"], "LED_CTRL": ["U1.3"]}
        assert box.call("query", {"component": "U1"}).status == "ok"
        assert box.call("query", {"component": "R1"}) == ToolResult(
            "failed", "no component 'R1'")
    finally:
        box.close()


def test_a_reply_that_counts_no_tokens_adds_none(tmp_path):
    from fake_openai import completion, tool_calls
    from test_behaviour import _loop

    doc = {"protocol_version": 2, "target_format": "kicad", "ops": reference_ops(DIVIDER)}

    def script(n, body):
        if n == 1:
            return tool_calls(("list_ops", {}), prompt_tokens=0, completion_tokens=0)
        return completion(json.dumps(doc), prompt_tokens=100, completion_tokens=10)

    ans, _ = _loop(tmp_path, script)
    assert (ans.detail["prompt_tokens"], ans.detail["completion_tokens"]) == (100, 10)


def test_each_tool_past_the_pairs_limit_fails_by_name_and_the_next_call_runs(tmp_path):
    """A limit no akcli call can meet (a microsecond): each tool says which ran out."""
    pair = tmp_path / "pair"
    pair.mkdir()
    box = Toolbox(load_task(TASKS / "d01-rc-lowpass-loaded"), SYMBOLS, pair, vision=True)
    spec = {"stimuli": [{"name": "VS", "kind": "vsource", "node": "VIN", "value": "DC 1"}],
            "analyses": {"tran": "1u 1m"}, "assert": [
                {"name": "vout", "analysis": "tran", "meas": "FIND v(VOUT) AT=1m", "ge": 0}]}
    try:
        assert box.call("draw", {"oplist": _oplist("d01-rc-lowpass-loaded")}).status == "ok"
        box.timeout = 1e-6
        for name, args in (("pins", {"lib_id": "Device:R"}), ("query", {"net": "VIN"}),
                           ("check", {}), ("render", {}), ("simulate", {"spec": spec})):
            assert box.call(name, args) == ToolResult("failed", f"{name} exceeded 1e-06 s")
        said = json.loads(box.call("validate", {"oplist": _oplist()}).text)
        assert said == {"valid": False, "errors": ["validate exceeded 1e-06 s"]}
        box.timeout = None
        assert box.call("nets", {}).status == "ok"
    finally:
        box.close()
    box.close()  # a second close is harmless


def test_the_agents_own_bench_reports_findings_and_parts_without_a_model(tmp_path):
    pair = tmp_path / "pair"
    pair.mkdir()
    box = Toolbox(load_task(TASKS / "d01-rc-lowpass-loaded"), SYMBOLS, pair, vision=True)
    answer = _oplist("d01-rc-lowpass-loaded")
    answer["ops"] += [{"op": "place_component", "lib_id": "Device:LED", "designator": "D9",
                       "value": "purple", "x_mil": 6000, "y_mil": 1000},
                      {"op": "add_net_label", "name": "VOUT", "at": "D9.2"},
                      {"op": "add_net_label", "name": "GND", "at": "D9.1"}]
    spec = {"stimuli": [{"name": "VS", "kind": "vsource", "node": "VIN", "value": "DC 1"},
                        {"name": "VX", "kind": "vsource", "node": "NOPE", "value": "DC 1"}],
            "analyses": {"tran": "1u 1m"}, "assert": [
                {"name": "vout", "analysis": "tran", "meas": "FIND v(VOUT) AT=1m", "ge": 0}]}
    try:
        assert json.loads(box.call("draw", {"oplist": answer}).text)["applied"] is True
        got = json.loads(box.call("simulate", {"spec": spec}).text)
        assert any(f.startswith("SIM_UNKNOWN_STIMULUS_NODE (warning): stimulus VX: node "
                                "'NOPE' matches no net") for f in got["findings"])
        assert any(f.startswith("SIM_PART_SKIPPED (error): D9 is not in the deck")
                   for f in got["findings"])
        assert got["unmodeled"] == [
            "D9 (Device:LED) value 'purple' names no model; values with a model: red, "
            "yellow, green, blue, white"]
        assert "vout" in got["measured"] and "D9" in json.dumps(got["parts_skipped"])
        import re

        shown = box.call("render", {})
        assert re.fullmatch(r"the sheet as a \d+x\d+ PNG \(akcli render, svg sha256 "
                            r"[0-9a-f]{16}\); the picture follows", shown.text), shown.text
        assert shown.image.startswith(b"\x89PNG")
    finally:
        box.close()


def test_an_unnamed_net_of_two_pins_is_listed_and_a_failed_draw_keeps_the_last_sheet(
        tmp_path):
    pair = tmp_path / "pair"
    pair.mkdir()
    box = Toolbox(load_task(TASKS / DIVIDER), SYMBOLS, pair)
    wired = _oplist()
    wired["ops"] = [op for op in wired["ops"]
                    if not (op["op"] == "add_net_label" and op["name"] == "ADC_IN")]
    wired["ops"].append({"op": "add_wire", "vertices": ["R1.2", "R2.1"]})
    broken = _oplist()
    for op in broken["ops"]:
        if op["op"] == "place_component":
            op["lib_id"] = "Device:NoSuchPart"
    try:
        assert json.loads(box.call("draw", {"oplist": wired}).text)["applied"] is True
        want = {"nets": [{"name": "GND", "members": ["R2.2"]},
                         {"name": "VIN", "members": ["R1.1"]},
                         {"name": None, "members": ["R1.2", "R2.1"]}]}
        assert json.loads(box.call("nets", {}).text) == want
        assert json.loads(box.call("draw", {"oplist": broken}).text)["applied"] is False
        assert json.loads(box.call("nets", {}).text) == want, "the last good draw"
        calls = sorted(p.name for p in box.scratch.iterdir())
        assert calls == ["001", "002", "003", "004"], "a folder of its own per call"
    finally:
        box.close()
