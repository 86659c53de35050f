"""Behaviour the audit of issue 35 found no test for, each tried for real.

- every sandbox option a model entry can set (`network`, `max_output_bytes`, `env`,
  `expose`), from inside a real bubblewrap sandbox;
- a confined akcli step cannot signal a process outside it (a real `sleep`, real
  Landlock and pid namespace);
- every budget of the tool loop, reached against the scripted server with a real
  toolbox (real akcli, confined);
- the MCP server lists only the tools of the task's `tool_surface`, to the official client;
- a board design rule's upper bound (`part` with `max`) fails a wrong answer drawn by akcli.

Each test was seen to fail with its feature broken in a scratch copy of the package
(the report of issue 35 lists the breakages).
"""

from __future__ import annotations

import json
import os
import select
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import REPO, SYMBOLS, TASKS

from wirebench.agents.answer import TurnContext
from wirebench.corpus.tasks import load_task
from wirebench.runtime import confine, landlock, sandbox

needs_landlock = pytest.mark.skipif(
    landlock.abi() < landlock.MIN_ABI and not os.environ.get("CI"),
    reason="this kernel has no Landlock")
needs_bwrap = pytest.mark.skipif(sandbox.bwrap() is None and not os.environ.get("CI"),
                                 reason="no working bubblewrap (apt-get install bubblewrap)")
PY = sys.executable


def _agent(command: str, task: str = "01-divider", **entry):
    from wirebench.agents.command import answer

    ctx = TurnContext("m", load_task(TASKS / task), 1, 1, REPO / "README.md", REPO / "skills")
    return answer({"command": command, "timeout": 30, **entry}, ctx)


# --- sandbox options of a command entry -----------------------------------------------------

CONNECT = ("import socket, sys\n"
           "try:\n"
           "    socket.create_connection(('127.0.0.1', int(sys.argv[1])), timeout=3).close()\n"
           "    print('connected')\n"
           "except OSError as exc:\n"
           "    print('refused', exc.errno)\n")


def _connects(listener: socket.socket) -> bool:
    """Whether a connection reached the listener (it sits in the accept queue)."""
    ready, _, _ = select.select([listener], [], [], 0.5)
    if not ready:
        return False
    listener.accept()[0].close()
    return True


@needs_bwrap
@pytest.mark.parametrize("network", [False, True])
def test_network_false_means_no_connection_even_to_loopback(tmp_path, network):
    """`network: false`: the agent's sandbox has no network at all, not even 127.0.0.1,
    where the warm worker and any local service listen. `network: true` (the default)
    reaches it."""
    script = tmp_path / "connect.py"
    script.write_text(CONNECT)
    listener = socket.create_server(("127.0.0.1", 0))
    port = listener.getsockname()[1]
    try:
        ans = _agent(f'{PY} {script} {port} > "$OPS_OUT"', network=network,
                     expose=[str(script)])
        reached = _connects(listener)
    finally:
        listener.close()
    assert ans.status == "ok", ans.error
    said = ans.ops.decode().split()
    if network:
        assert said == ["connected"] and reached
    else:
        assert said[0] == "refused" and not reached, said


@needs_bwrap
def test_max_output_bytes_is_the_entrys_own_cap_on_stdout_files_and_the_answer(tmp_path):
    """The entry's `max_output_bytes`, not a default: 60 kB passes under a 200 kB cap and
    fails under a 50 kB one, whether written to stdout, to a file or as the answer."""
    writers = {
        "stdout": 'head -c 60000 /dev/zero; echo "{}" > "$OPS_OUT"',
        "file": 'head -c 60000 /dev/zero > big; echo "{}" > "$OPS_OUT"',
        "answer": 'printf "{\\"ops\\": []}" > "$OPS_OUT"; head -c 60000 /dev/zero | '
                  'tr "\\0" " " >> "$OPS_OUT"',
    }
    for where, command in writers.items():
        tight = _agent(command, max_output_bytes=50_000)
        assert (tight.status, tight.ops) == ("no_answer", None), (where, tight.error)
        assert "more than max_output_bytes (50000)" in tight.error, (where, tight.error)
        roomy = _agent(command, max_output_bytes=200_000)
        assert roomy.status == "ok", (where, roomy.error)


@needs_bwrap
def test_env_passes_exactly_the_named_variables(monkeypatch):
    """`env:` names the host variables an agent gets; every other one stays outside.
    The agent's environment is the contract's variables and those, nothing more."""
    monkeypatch.setenv("WB_NAMED", "named-value-1")
    monkeypatch.setenv("WB_UNNAMED", "unnamed-value-2")
    monkeypatch.setenv("WB_ALSO_UNNAMED", "unnamed-value-3")
    ans = _agent(f"{PY} -I -c 'import json, os; "
                 'open(os.environ["OPS_OUT"], "w").write(json.dumps(dict(os.environ)))\'',
                 env=["WB_NAMED", "WB_NOT_SET_ANYWHERE"])
    assert ans.status == "ok", ans.error
    seen = json.loads(ans.ops)
    assert seen["WB_NAMED"] == "named-value-1"
    assert "WB_NOT_SET_ANYWHERE" not in seen
    contract = {"PATH", "LC_ALL", "VIRTUAL_ENV", "HOME", "TMPDIR", "LANG", "OPS_OUT",
                "TASK_ID", "MODEL", "SAMPLE", "TURN", "PROJECT_DIR", "TASK_FILE",
                "PROMPT_FILE", "SKILLS_DIR", "BASE_OPS", "FEEDBACK_FILE", "MCP_CONFIG",
                "SYMBOLS_DIR",
                # The package the harness runs, first: wirebench's own agents import it.
                "PYTHONPATH"}
    import wirebench

    assert seen["PYTHONPATH"].split(os.pathsep)[0] == str(Path(wirebench.__file__).parent.parent)
    # What the shell and Python add on their own (PWD, SHLVL, _) is no host variable.
    extra = set(seen) - contract - {"WB_NAMED", "PWD", "SHLVL", "_"}
    assert extra == set(), f"host variables the entry did not name: {sorted(extra)}"
    assert "unnamed-value" not in ans.ops.decode()


@needs_bwrap
def test_expose_shows_the_named_folder_read_only_and_nothing_beside_it(tmp_path):
    """`expose:` shows a host folder inside the sandbox, read-only (the folder is
    writable by all on the host: only the mount stops the agent); a folder next to it
    that the entry does not name does not exist there."""
    shown, hidden = tmp_path / "shown", tmp_path / "hidden"
    shown.mkdir()
    hidden.mkdir()
    (shown / "data.txt").write_text("exposed-data")
    (hidden / "data.txt").write_text("hidden-data")
    os.chmod(tmp_path, 0o755)
    for folder in (shown, hidden):
        os.chmod(folder, 0o777)
        os.chmod(folder / "data.txt", 0o644)
    command = (f'cat {shown}/data.txt > "$OPS_OUT"; '
               f'cat {hidden}/data.txt >> "$OPS_OUT" 2>/dev/null; '
               f'(echo x > {shown}/planted) 2>/dev/null && echo WROTE >> "$OPS_OUT"; '
               f'ls {tmp_path} >&2; true')
    with_it = _agent(command, expose=[str(shown)])
    assert with_it.status == "ok", with_it.error
    assert with_it.ops.decode().split() == ["exposed-data"]
    assert with_it.detail["stderr_tail"].split() == ["shown"]
    assert not (shown / "planted").exists()
    without = _agent(command)
    assert (without.status, without.ops) == ("no_answer", None), without.error
    assert "No such file" in without.detail["stderr_tail"]


# --- a confined step signals no process outside it ------------------------------------------

def _try_kill(pid: int, folder: Path) -> None:
    """In the confined child: what a field of an op-list could make akcli's Python do."""
    tried = {}
    for name, sig in (("SIGTERM", signal.SIGTERM), ("SIGKILL", signal.SIGKILL),
                      ("probe", 0)):
        try:
            os.kill(pid, sig)
            tried[name] = "allowed"
        except PermissionError:
            tried[name] = "denied"
        except ProcessLookupError:  # not in this step's world at all
            tried[name] = "unseen"
    (folder / "killed.json").write_text(json.dumps(tried))


@pytest.fixture
def victim():
    """A process of the step's own user, outside the step: the warm worker, Snakemake."""
    marker = f"{60 + os.getpid() % 1000}.25"
    proc = subprocess.Popen(["sleep", marker])
    try:
        yield proc
    finally:
        proc.kill()
        proc.wait()


@needs_landlock
def test_a_confined_step_cannot_signal_a_process_outside_it(tmp_path, victim):
    pair = tmp_path / "pair"
    pair.mkdir()
    confine.run(lambda: _try_kill(victim.pid, pair), write=pair, timeout=30)
    tried = json.loads((pair / "killed.json").read_text())
    assert set(tried.values()) <= {"denied", "unseen"}, tried
    time.sleep(0.2)
    assert victim.poll() is None, "the step killed a process outside it"


@needs_landlock
def test_the_step_server_of_a_tool_loop_cannot_signal_outside_it_either(tmp_path, victim):
    pair = tmp_path / "pair"
    pair.mkdir()
    server = confine.Server(write=pair)
    try:
        server.call(_try_kill, victim.pid, pair, timeout=30)
        with pytest.raises(confine.StepCrashed):  # the kill raises, the call fails
            server.call(os.kill, victim.pid, signal.SIGKILL, timeout=30)
    finally:
        server.close()
    tried = json.loads((pair / "killed.json").read_text())
    assert set(tried.values()) <= {"denied", "unseen"}, tried
    time.sleep(0.2)
    assert victim.poll() is None


@pytest.mark.skipif(landlock.abi() < 6, reason="Landlock scopes signals from ABI 6 on")
def test_landlock_alone_denies_a_signal_out_of_its_domain(victim):
    """Each layer on its own: without the pid namespace (which hides the host's pids),
    Landlock's signal scope still refuses the kill with EPERM."""
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child
        code = 1
        try:
            os.close(r)
            landlock.restrict(list(confine.SYSTEM_READS), [])
            try:
                os.kill(victim.pid, signal.SIGKILL)
                os.write(w, b"allowed")
            except PermissionError:
                os.write(w, b"denied")
            except OSError as exc:
                os.write(w, f"error {exc.errno}".encode())
            code = 0
        finally:
            os._exit(code)
    os.close(w)
    with os.fdopen(r, "rb") as pipe:
        said = pipe.read().decode()
    os.waitpid(pid, 0)
    assert said == "denied"
    time.sleep(0.2)
    assert victim.poll() is None


# --- the tool loop's budgets, reached for real ------------------------------------------------

def _loop(tmp_path, script, task: str = "01-divider", **entry):
    """One tool-calling turn against the scripted server, with a real toolbox."""
    from fake_openai import FakeOpenAI

    from wirebench.agents import tool_loop
    from wirebench.steps.tools import Toolbox

    pair = tmp_path / "pair"
    pair.mkdir(exist_ok=True)
    loaded = load_task(TASKS / task) if isinstance(task, str) else load_task(task)
    toolbox = Toolbox(loaded, SYMBOLS, pair)
    prompt = tmp_path / "prompt.md"
    prompt.write_text("# Your task\n\nDraw the divider.\n")
    try:
        with FakeOpenAI({"m": script}) as server:
            spec = {"kind": "openai", "tools": True, "base_url": server.base_url,
                    "model": "m", **entry}
            ctx = TurnContext("m", loaded, 1, 1, prompt, None, tools=toolbox,
                              symbols=SYMBOLS)
            ans = tool_loop.answer(spec, ctx)
            return ans, server.calls.get("m", [])
    finally:
        toolbox.close()


def test_max_tokens_total_counts_prompt_and_completion_tokens(tmp_path):
    """Each reply costs 100 prompt and 60 completion tokens; the budget is 300. Counting
    both, the loop ends after the second reply (320). Counting prompt tokens only would
    end it after the fourth (400), completion tokens only after the sixth (360)."""
    from fake_openai import tool_calls

    def script(n, body):
        return tool_calls(("list_ops", {}), prompt_tokens=100, completion_tokens=60)

    ans, calls = _loop(tmp_path, script, max_tokens_total=300)
    assert len(calls) == 2
    assert (ans.status, ans.detail["budget"]) == ("no_answer", "max_tokens_total")
    assert "budget max_tokens_total ran out before any op-list" in ans.error
    assert (ans.detail["prompt_tokens"], ans.detail["completion_tokens"]) == (200, 120)


def test_a_loop_within_its_token_budget_is_not_cut(tmp_path):
    """At exactly the budget the loop goes on: only a total past it ends the loop."""
    from fake_openai import tool_calls

    ops = json.loads((TASKS / "01-divider" / "reference_ops.json").read_text())

    def script(n, body):
        if n < 3:
            return tool_calls(("list_ops", {}), prompt_tokens=100, completion_tokens=60)
        return tool_calls(("submit", {"oplist": ops}), prompt_tokens=100, completion_tokens=60)

    ans, calls = _loop(tmp_path, script, max_tokens_total=320)
    # 160, 320 (not past it), then the third reply's submit is the answer.
    assert len(calls) == 3 and ans.status == "ok" and "budget" not in ans.detail
    assert json.loads(ans.ops) == ops


def test_max_tool_calls_counts_calls_not_replies_and_keeps_the_last_draft(tmp_path):
    """Three calls in one reply count three. When the budget runs out, the op-list the
    model last drew is its answer (status ok), and agent.json names the budget."""
    from fake_openai import tool_calls

    ops = json.loads((TASKS / "01-divider" / "reference_ops.json").read_text())

    def script(n, body):
        if n == 1:
            return tool_calls(("draw", {"oplist": ops}))
        return tool_calls(("list_ops", {}), ("pins", {"lib_id": "Device:R"}),
                          ("list_ops", {}))

    ans, calls = _loop(tmp_path, script, max_tool_calls=3)
    assert len(calls) == 2, "the 4th call, in the second reply, is past the budget"
    assert (ans.status, ans.detail["budget"], ans.detail["tool_calls"]) == (
        "ok", "max_tool_calls", 3)
    assert "the last draft is the answer" in ans.error
    assert json.loads(ans.ops) == ops
    assert [s["tool"] for s in ans.detail["trajectory"]] == ["draw", "list_ops", "pins"]


def test_the_loops_timeout_ends_it_between_requests_as_the_models_failure(tmp_path):
    """The loop has 1 s; the model's first reply draws a 600-resistor board, which takes
    akcli longer than that (2.2 s warm here; 300 took 0.75 s, under the budget once the
    suite had warmed akcli up). The loop ends on its budget before a second request, with
    the draft as the answer: the model's result, never an infra error (which would be
    retried and left out of the pass rate)."""
    from fake_openai import tool_calls

    big = {"protocol_version": 2, "target_format": "kicad", "ops": [
        {"op": "place_component", "lib_id": "Device:R", "designator": f"R{i}",
         "x_mil": 1000 + 400 * (i % 20), "y_mil": 1000 + 400 * (i // 20), "value": "1k"}
        for i in range(1, 601)]}

    def script(n, body):
        return tool_calls(("draw", {"oplist": big}))

    started = time.monotonic()
    ans, calls = _loop(tmp_path, script, timeout=1.0)
    assert time.monotonic() - started < 120
    assert ans.status != "infra_error", ans.error
    assert (ans.status, ans.detail.get("budget")) == ("ok", "timeout"), ans.error
    assert len(calls) == 1 and json.loads(ans.ops) == big


def test_a_slow_reply_past_the_loops_timeout_is_the_models_failure(tmp_path):
    """A request still in flight when the loop's timeout runs out: the model spent its
    budget (a verdict on the pair naming it), not an infra error the step would retry."""
    from fake_openai import tool_calls

    def script(n, body):
        if n == 1:
            return tool_calls(("list_ops", {}))
        time.sleep(3)  # past the budget, mid-request
        return tool_calls(("list_ops", {}))

    ans, _ = _loop(tmp_path, script, timeout=1.5)
    assert (ans.status, ans.detail.get("budget")) == ("no_answer", "timeout"), ans.error
    assert "timeout" in ans.error


def test_an_inspect_task_offers_the_loop_only_the_inspect_tools(tmp_path):
    """A task with `tool_surface: inspect`: the chat request's `tools` lists the seven
    inspect tools, and a call to `draw` anyway is refused before it runs."""
    from fake_openai import completion, tool_calls

    task = _inspect_task(tmp_path)
    ops = json.loads((task / "reference_ops.json").read_text())

    def script(n, body):
        if n == 1:
            return tool_calls(("draw", {"oplist": ops}))
        return completion("```json\n" + json.dumps(ops) + "\n```")

    ans, calls = _loop(tmp_path, script, task=task)
    offered = sorted(t["function"]["name"] for t in calls[0]["body"]["tools"])
    assert offered == ["check", "list_ops", "nets", "op_schema", "pins", "query", "render"]
    (step,) = ans.detail["trajectory"]
    assert (step["tool"], step["status"]) == ("draw", "invalid")
    assert not list((tmp_path / "pair").rglob("*.kicad_sch")), "nothing was drawn"


def _inspect_task(tmp_path: Path, source: str = "01-divider") -> Path:
    """A copy of a task whose tool surface is `inspect`."""
    import shutil

    task = tmp_path / "tasks" / source
    shutil.copytree(TASKS / source, task)
    meta = task / "task.yaml"
    meta.write_text(meta.read_text() + "tool_surface: inspect\n")
    assert load_task(task).meta["tool_surface"] == "inspect"
    return task


# --- the MCP server honours tool_surface -------------------------------------------------------

def test_the_mcp_server_lists_only_the_tasks_surface(tmp_path):
    """An inspect task's `wirebench mcp` lists list_ops, op_schema, pins, nets, query,
    check and render to the official client; validate, draw, simulate and submit are not
    tools of that server at all."""
    import anyio
    from mcp.client.session import ClientSession
    from mcp.client.stdio import StdioServerParameters, stdio_client

    task = _inspect_task(tmp_path)
    ops = json.loads((task / "reference_ops.json").read_text())
    out = tmp_path / "ops_out.json"
    params = StdioServerParameters(command=sys.executable, args=[
        "-m", "wirebench.cli", "mcp", "--task", str(task), "--pair", str(tmp_path / "pair"),
        "--submit", str(out), "--symbols", *SYMBOLS],
        # The test's own environment: a scratch copy of the package on PYTHONPATH is the
        # server that runs.
        env=dict(os.environ))

    async def session():
        async with stdio_client(params) as (read, write), ClientSession(read, write) as s:
            await s.initialize()
            names = sorted(t.name for t in (await s.list_tools()).tools)
            submitted = await s.call_tool("submit", {"oplist": ops})
            listed = await s.call_tool("list_ops", {})
            return names, submitted, listed

    names, submitted, listed = anyio.run(session)
    assert names == ["check", "list_ops", "nets", "op_schema", "pins", "query", "render"]
    assert submitted.is_error and not out.exists()
    assert not listed.is_error and "place_component" in listed.content[0].text


# --- a board design rule's upper bound ----------------------------------------------------------

KICAD = Path("/usr/share/kicad/symbols")


@pytest.mark.skipif(not (KICAD / "Device.kicad_sym").is_file() and not os.environ.get("CI"),
                    reason="KiCad's libraries are not installed (apt-get install kicad-symbols)")
@pytest.mark.slow
def test_a_part_rules_upper_bound_fails_a_board_with_one_part_too_many(tmp_path):
    """b03's `fuse` rule wants exactly one Device:Polyfuse (min 1, max 1). The reference
    with a second polyfuse is drawn by akcli and fails that rule, naming the count."""
    from wirebench.steps.pair import evaluate_pair

    task = TASKS / "b03-usb-c-sink"
    doc = json.loads((task / "reference_ops.json").read_text())
    fuse = next(op for op in doc["ops"] if op.get("lib_id") == "Device:Polyfuse")
    doc["ops"].insert(doc["ops"].index(fuse) + 1, {
        **fuse, "designator": "F2", "x_mil": fuse["x_mil"], "y_mil": fuse["y_mil"] + 1500})
    wrong = tmp_path / "two-fuses.json"
    wrong.write_text(json.dumps(doc))
    result = evaluate_pair(wrong, task, [], tmp_path / "pair",
                           {"model": "m", "task": task.name, "sample": 1})
    verdicts = {c["id"]: c for c in result["criteria"]}
    assert result["outcome"] == "success" and not result["passed"]
    assert verdicts["fuse"]["verdict"] == "fail", verdicts["fuse"]
    assert "2 Device:Polyfuse placed (wants 1..1)" in verdicts["fuse"]["detail"]
    # The other part rule, with no upper bound, is met as before.
    assert verdicts["tvs"]["verdict"] == "pass"
