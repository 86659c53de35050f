"""Causes on the terminal (issue 32): a newcomer sees why pairs failed without opening a
file. A failed pair's line and the run's closing verdict name its cause (a failed
agent's last lines of stderr, redacted; the first validation error; the first failed
criterion); a tripped gate says why in one line; an online entry that cannot be called
stops the run before any job; an answer that is no JSON is shown by its first bytes,
whatever kind of agent wrote it."""

from __future__ import annotations

import shutil
import socket

import pytest
from conftest import TASKS, Project
from fake_openai import FakeOpenAI, completion, error, tool_calls

from wirebench.agents.openai_chat import client_for, request

TASK = "01-divider"
REFERENCE = (TASKS / TASK / "reference_ops.json").read_text()
KEY = "sk-causes-5e1f0a9c7b3d"
# The job shell's function, which a failed shell job's error used to print whole.
SHELL_FUNCTION = ("wirebench() {", "read -r p t s")


def check_all(entries):
    # Imported when called: each test here fails on its own assertion where the feature
    # is missing, rather than the whole file failing to import.
    from wirebench.agents.preflight import check_all

    return check_all(entries)


def cause(*args):
    from wirebench.reports.verdict import cause

    return cause(*args)


def _entry(server_url, model, **extra):
    return {"kind": "openai", "base_url": server_url, "model": model, "retries": 0, **extra}


def _closed_port() -> int:
    """A port nothing listens on: bound, then let go."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


# --- the preflight, against a real HTTP server ---------------------------------------

def test_preflight_names_a_model_the_server_does_not_serve():
    with FakeOpenAI({"a": None, "b": None}) as server:
        stops, notes = check_all({"oa": _entry(server.base_url, "gpt-x")})
    assert stops == [f"models.oa: model 'gpt-x' not served by {server.base_url}; "
                     "it serves: a, b"] and notes == []
    assert server.calls == {}, "a preflight is no chat completion"


def test_preflight_names_an_unset_key_without_asking_the_server(monkeypatch):
    monkeypatch.delenv("WB_CAUSES_UNSET", raising=False)
    with FakeOpenAI({"a": None}) as server:
        stops, _ = check_all({"oa": _entry(server.base_url, "a", api_key_env="WB_CAUSES_UNSET")})
    assert stops == ["models.oa: WB_CAUSES_UNSET is not set (its api_key_env)"]
    assert server.listings == []


def test_preflight_names_an_endpoint_that_does_not_answer():
    url = f"http://127.0.0.1:{_closed_port()}/v1"
    stops, _ = check_all({"oa": _entry(url, "a")})
    assert stops == [f"models.oa: {url} does not answer: connection refused"]


def test_preflight_names_a_refused_key_and_never_prints_it(monkeypatch):
    monkeypatch.setenv("WB_CAUSES_KEY", KEY)
    refused = error(401, f"Incorrect API key provided: {KEY}")
    with FakeOpenAI({"a": None}, models=refused) as server:
        stops, _ = check_all({"oa": _entry(server.base_url, "a", api_key_env="WB_CAUSES_KEY")})
    assert server.listings[0]["auth"] == f"Bearer {KEY}"
    assert stops == [f"models.oa: {server.base_url} refused the key (HTTP 401: Incorrect API "
                     "key provided: <$WB_CAUSES_KEY>)"]


@pytest.mark.parametrize(("listing", "said"), [
    (error(404, "no such route"), "HTTP 404 to GET /models: no such route"),
    (error(403, "this key may not list models"), "HTTP 403"),
    ((200, {"Content-Type": "text/html"}, b"<html>a portal</html>"), "it begins b'<html>a portal"),
])
def test_preflight_lets_a_server_that_lists_no_models_through_with_a_note(listing, said):
    """Only what fails every call stops a run: a server that cannot say what it serves
    may still serve the model, and its first call will tell."""
    with FakeOpenAI({"a": None}, models=listing) as server:
        stops, notes = check_all({"oa": _entry(server.base_url, "gpt-x")})
    assert stops == [] and len(notes) == 1 and said in notes[0]
    assert notes[0].startswith("models.oa: ")


def test_preflight_checks_a_server_once_for_the_entries_that_share_it():
    with FakeOpenAI({"a": None, "b": None}) as server:
        stops, _ = check_all({"one": _entry(server.base_url, "a"),
                              "two": _entry(server.base_url, "b", tools=True),
                              "cmd": {"kind": "command", "command": "true"}})
    assert stops == [] and len(server.listings) == 1
    assert server.listings[0]["path"] == "/v1/models"


# --- what a pair's call says ----------------------------------------------------------

def test_a_wrong_model_is_the_servers_404_not_a_connection_error():
    with FakeOpenAI({"a": lambda n, body: completion(REFERENCE)}) as server:
        spec = _entry(server.base_url, "gpt-x")
        got = request(client_for(spec), spec, [{"role": "user", "content": "hi"}])
    assert got.status == "infra_error" and not got.retryable
    assert got.error.startswith("HTTP 404") and "The model `gpt-x` does not exist" in got.error
    assert "connection" not in got.error.lower()


@pytest.mark.parametrize(("reply", "begins"), [
    ((200, {"Content-Type": "application/json"}, b"<html>oops</html>"), "b'<html>oops</html>'"),
    ((200, {"Content-Type": "text/plain"}, b"upstream says hello"), "b'upstream says hello'"),
    ((200, {}, [1, 2]), "b'[1, 2]'"),
    ((502, {"Content-Type": "text/html"}, b"<html>Bad gateway</html>"),
     "b'<html>Bad gateway</html>'"),
], ids=["html-as-json", "text", "a-list", "html-502"])
def test_a_server_reply_that_is_no_json_shows_its_first_bytes(reply, begins):
    with FakeOpenAI({"m": lambda n, body: reply}) as server:
        spec = _entry(server.base_url, "m")
        got = request(client_for(spec), spec, [{"role": "user", "content": "hi"}])
    assert got.status == "infra_error" and f"it begins {begins}" in got.error


# --- what a cause is ------------------------------------------------------------------

def test_a_cause_is_the_first_failed_criterion_of_a_drawn_pair_else_the_first_error():
    drawn = {"failure_class": "function", "first_finding": "nets: 1 of 3 nets wrong",
             "errors": ["missing net VOUT", "outcome success"]}
    assert cause(drawn) == ("nets: 1 of 3 nets wrong", [])
    invalid = {"failure_class": "invalid", "first_finding": None,
               "errors": ["validate: op 2 has no field 'ref'", "not drawn"]}
    assert cause(invalid) == ("validate: op 2 has no field 'ref'", [])
    assert cause({"failure_class": "invalid", "errors": [], "outcome": "invalid"}) == (
        "outcome invalid", [])


def test_a_failed_agents_last_lines_of_stderr_are_shown_redacted(monkeypatch):
    monkeypatch.setenv("WB_CAUSES_KEY", KEY)
    monkeypatch.setenv("WIREBENCH_SECRET_NAMES", "WB_CAUSES_KEY")
    score = {"failure_class": "invalid", "errors": ["agent: agent failed (exit 1): "
                                                    "ValueError: bad key " + KEY]}
    tail = ("noise\nTraceback (most recent call last):\n  File \"agent.py\", line 3\n"
            f"    call({KEY!r})\n    ^^^^^^^^^^\nValueError: bad key {KEY}\n")
    line, lines = cause(score, {"status": "no_answer", "stderr_tail": tail})
    assert line == "agent: agent failed (exit 1): ValueError: bad key <$WB_CAUSES_KEY>"
    # Python's ^^^ markers are dropped, and so is the last line: the cause says it already.
    assert lines == ["Traceback (most recent call last):", "  File \"agent.py\", line 3",
                     "    call('<$WB_CAUSES_KEY>')"]
    # An agent that answered has no say in why its answer failed.
    assert cause(score, {"status": "ok", "stderr_tail": tail})[1] == []


def test_a_gates_reason_is_one_line():
    from wirebench.reports.gate import reason

    report = {"passed": False, "problems": ["reference pair 01/1 ends invalid",
                                            "model 'm' passes 0.2 < floor 0.5"]}
    assert reason(report) == ("gate FAILED: reference pair 01/1 ends invalid; "
                              "model 'm' passes 0.2 < floor 0.5")
    assert reason({"passed": True, "problems": []}) == "gate passed"


def test_the_preflight_is_in_no_fingerprint(tmp_path, monkeypatch):
    """A preflight must never rerun a paid call: editing it leaves generate's fingerprint
    as it was, while editing the agent code beside it does not."""
    from wirebench.evidence import fingerprint as fp

    package = tmp_path / "wirebench"
    shutil.copytree(fp.PACKAGE, package, ignore=shutil.ignore_patterns("__pycache__"))
    monkeypatch.setattr(fp, "PACKAGE", package)

    def generate():
        return fp.fingerprint.__wrapped__("generate")

    before = generate()
    (package / "agents" / "preflight.py").write_text("# edited\n")
    assert generate() == before
    (package / "agents" / "preflight.py").unlink()
    assert generate() == before, "with or without the module, the same fingerprint"
    with open(package / "agents" / "openai_chat.py", "a") as fh:
        fh.write("# edited\n")
    assert generate() != before, "the check above can see an edit"


# --- real runs ------------------------------------------------------------------------

def _junk_reference(root):
    """A corpus of one task whose reference answer is no JSON: the reference kind's own
    path to an unreadable answer."""
    tasks = root / "tasks"
    shutil.copytree(TASKS / TASK, tasks / TASK)
    (tasks / TASK / "reference_ops.json").write_text("REFERENCE? not today\n")
    return tasks


def _wrong_nets() -> str:
    """The reference with one net renamed: it draws, and fails on its nets."""
    return REFERENCE.replace('"ADC_IN"', '"VMID"')


def _tool_script(n, body):
    if not any(m["role"] == "tool" for m in body["messages"]):
        return tool_calls(("submit", {"oplist": "ops? here they are"}))
    return completion("I give up on JSON today.")


@pytest.fixture(scope="module")
def failing_run(tmp_path_factory):
    """One real run in which every kind of agent fails, each for a cause of its own."""
    root = tmp_path_factory.mktemp("causes")
    answers = {name: root / "answers" / name for name in ("junk", "wrong")}
    for folder in answers.values():
        folder.mkdir(parents=True)
    (answers["junk"] / f"{TASK}.json").write_text("<<not an op-list>>")
    assert _wrong_nets() != REFERENCE
    (answers["wrong"] / f"{TASK}.json").write_text(_wrong_nets())
    scripts = {"prose": lambda n, body: completion("Sorry, I cannot draw schematics."),
               "html": lambda n, body: (200, {"Content-Type": "application/json"},
                                        b"<html>proxy login</html>"),
               "tools": _tool_script}
    with FakeOpenAI(scripts) as server:
        models = {
            "reference": {"kind": "reference"},
            "missing": {"kind": "command", "command": "my-agent-cli --task \"$TASK_FILE\""},
            "crash": {"kind": "command", "command":
                      "python3 -c \"import json; json.loads(open('$TASK_FILE').read())\""},
            "leaky": {"kind": "command", "env": ["WB_CAUSES_KEY"], "command":
                      "echo \"calling with $WB_CAUSES_KEY\" >&2; "
                      "echo \"HTTPError: 401 for key $WB_CAUSES_KEY\" >&2; exit 2"},
            "cmd-junk": {"kind": "command", "command": "echo 'here you go: ops!' > \"$OPS_OUT\""},
            "ops-junk": {"kind": "ops_dir", "dir": str(answers["junk"])},
            "ops-wrong": {"kind": "ops_dir", "dir": str(answers["wrong"])},
            "oa-prose": _entry(server.base_url, "prose"),
            "oa-html": _entry(server.base_url, "html"),
            "oa-tools": _entry(server.base_url, "tools", tools=True),
        }
        project = Project(root / "wb").configure(
            models, tasks=[TASK], tasks_dir=_junk_reference(root), max_infra_rate=1.0)
        proc = project.snakemake(env={"WB_CAUSES_KEY": KEY})
        yield project, proc, server


def _lines(text: str, start: str) -> list[str]:
    return [line for line in text.splitlines() if line.startswith(start)]


CAUSES = {
    "missing": "my-agent-cli: not found",
    "crash": "json.decoder.JSONDecodeError: Expecting value",
    "leaky": "HTTPError: 401 for key <$WB_CAUSES_KEY>",
    "cmd-junk": "unreadable op-list: Expecting value: line 1 column 1 (char 0); "
                "it begins b'here you go: ops!\\n'",
    "ops-junk": "it begins b'<<not an op-list>>'",
    "reference": "it begins b'REFERENCE? not today\\n'",
    "ops-wrong": "nets:",
    "oa-prose": "it begins b'Sorry, I cannot draw schematics.'",
    "oa-html": "it begins b'<html>proxy login</html>'",
    "oa-tools": "it begins b'I give up on JSON today.'",
}


@pytest.mark.slow
@pytest.mark.parametrize("model", sorted(CAUSES))
def test_a_failed_pairs_line_and_the_closing_verdict_name_its_cause(failing_run, model):
    _, proc, _ = failing_run
    terminal = proc.stdout + proc.stderr
    pair = _lines(terminal, f"wirebench: {model}/{TASK}/1 failed (")
    assert len(pair) == 1 and CAUSES[model] in pair[0], terminal[-3000:]
    closing = terminal[terminal.rindex("why pairs failed"):]
    said = _lines(closing, f"  {model}: 1 pair ({TASK}/1) failed (")
    assert len(said) == 1 and CAUSES[model] in said[0]


@pytest.mark.slow
def test_a_traceback_shows_its_last_lines_and_no_secret_reaches_the_terminal(failing_run):
    _, proc, _ = failing_run
    terminal = proc.stdout + proc.stderr
    closing = terminal[terminal.rindex("why pairs failed"):].splitlines()
    at = next(i for i, line in enumerate(closing) if line.startswith("  crash: "))
    tail = [line for line in closing[at + 1:at + 4] if line.startswith("      | ")]
    assert tail and any("File " in line for line in tail), closing[at:at + 4]
    leaky = next(i for i, line in enumerate(closing) if line.startswith("  leaky: "))
    assert closing[leaky + 1] == "      | calling with <$WB_CAUSES_KEY>"
    assert KEY not in terminal


@pytest.mark.slow
def test_every_agent_kinds_unreadable_answer_is_shown_by_its_first_bytes(failing_run):
    project, _, server = failing_run
    for model in ("cmd-junk", "ops-junk", "reference", "oa-prose", "oa-tools", "oa-html"):
        score = project.score(model, TASK)
        assert score["outcome"] == ("infra_error" if model == "oa-html" else "invalid")
        assert CAUSES[model] in score["errors"][0], (model, score["errors"])
    # The tool loop's own read of a submitted op-list: what the model was told.
    told = [m["content"] for m in server.calls["tools"][-1]["body"]["messages"]
            if m["role"] == "tool"]
    assert told and "it begins b'ops? here they are'" in told[0]


@pytest.mark.slow
def test_a_tripped_gate_says_why_in_one_line(failing_run):
    project, _, _ = failing_run
    proc = project.snakemake("--config", "strict=true", "floors={ops-wrong: 0.5}",
                             env={"WB_CAUSES_KEY": KEY}, check=False)
    terminal = proc.stdout + proc.stderr
    assert proc.returncode != 0
    gate = [line for line in terminal.splitlines() if "gate FAILED: " in line]
    assert len(gate) == 1, terminal[-3000:]
    assert gate[0].startswith("gate FAILED: reference pair 01-divider/1 ends invalid")
    assert gate[0].endswith("model 'ops-wrong' passes 0.0 < floor 0.5")
    assert not any(part in terminal for part in SHELL_FUNCTION), terminal[-3000:]
    assert not (project.root / "results" / "gate.json").exists()


# --- the preflight in a real run ------------------------------------------------------

def _online_run(root, entries, env=None, *args):
    project = Project(root / "wb").configure({"reference": {"kind": "reference"}, **entries},
                                             tasks=[TASK])
    return project, project.snakemake(*args, env=env, check=False)


@pytest.mark.slow
@pytest.mark.parametrize("case", ["wrong-model", "unset-key", "refused"])
def test_an_online_entry_that_cannot_be_called_stops_the_run_before_any_job(tmp_path, case):
    with FakeOpenAI({"a": lambda n, body: completion(REFERENCE), "b": None}) as server:
        entry, said = {
            "wrong-model": (_entry(server.base_url, "gpt-x"),
                            f"models.oa: model 'gpt-x' not served by {server.base_url}; "
                            "it serves: a, b"),
            "unset-key": (_entry(server.base_url, "a", api_key_env="WB_CAUSES_UNSET"),
                          "models.oa: WB_CAUSES_UNSET is not set (its api_key_env)"),
            "refused": (_entry(f"http://127.0.0.1:{(port := _closed_port())}/v1", "a"),
                        f"models.oa: http://127.0.0.1:{port}/v1 does not answer: "
                        "connection refused"),
        }[case]
        project, proc = _online_run(tmp_path, {"oa": entry})
    assert proc.returncode != 0
    assert said in proc.stderr, proc.stderr[-3000:]
    assert server.calls == {}, "a chat completion was asked for"
    assert not (project.root / "results" / "runs").exists(), "a job ran"
    assert "Finished jobid" not in proc.stderr


@pytest.mark.slow
def test_the_preflight_asks_once_only_before_paid_calls_and_reruns_nothing(tmp_path):
    scripts = {"a": lambda n, body: completion(REFERENCE),
               "b": lambda n, body: completion(REFERENCE)}
    with FakeOpenAI(scripts) as server:
        entries = {"oa": _entry(server.base_url, "a"), "ob": _entry(server.base_url, "b")}
        _, dry = _online_run(tmp_path, entries, None, "-n")
        assert dry.returncode == 0 and server.listings == [], "a dry run went online"
        project, proc = _online_run(tmp_path, entries)
        assert proc.returncode == 0, proc.stderr[-3000:]
        assert len(server.listings) == 1, "two entries on one server: one request"
        assert {m: len(c) for m, c in server.calls.items()} == {"a": 1, "b": 1}
        # Nothing to call, nothing to check; and the check left every job current.
        again = project.snakemake()
        assert "Nothing to be done" in again.stdout + again.stderr
        assert len(server.listings) == 1
        # A forced answer is a paid call again: it is checked first, and only its entry.
        ops = project.pair("oa", TASK) / "ops.json"
        project.snakemake("--force", str(ops.relative_to(project.root)), "all")
        assert len(server.listings) == 2 and len(server.calls["a"]) == 2
        assert len(server.calls["b"]) == 1
    # With the endpoint gone, a run that makes no paid call (scores again) checks nothing.
    rescored = project.snakemake("--forcerun", "score")
    assert "score__oa__0001" in rescored.stderr and "does not answer" not in rescored.stderr
