"""Real agents in the matrix: scripted OpenAI-compatible endpoints on 127.0.0.1 and real
subprocess agents, through a real Snakemake run. Each ends in the right outcome and the
run goes on."""

from __future__ import annotations

import itertools
import json
import subprocess
import sys

import pytest
from conftest import REPO, TASKS
from fake_openai import FakeOpenAI, completion, error, tool_calls

TASK = "01-divider"
REFERENCE = (TASKS / TASK / "reference_ops.json").read_text()
WRONG = json.dumps({**json.loads(REFERENCE), "protocol_version": 1})
CANARY = "sk-canary-7f3a9c1e5b2d4680"
# A second entry's key, with characters JSON escapes: redaction must find it in any spelling.
SNOOP_CANARY = 'sk-snoop-"q"\\x-4242424242'


def scripts():
    return {
        "correct": lambda n, body: completion(REFERENCE),
        "prose": lambda n, body: completion(
            "Sure! Here is the op-list for the divider:\n\n```json\n" + REFERENCE
            + "\n```\n\nIt labels every pin."),
        "repair": lambda n, body: completion(WRONG if n == 1 else REFERENCE),
        "ratelimit": lambda n, body: (error(429, "slow down", {"Retry-After": "1"}) if n == 1
                                      else completion(REFERENCE)),
        "hang": lambda n, body: ("hang", {}, 5),
        "down": lambda n, body: error(503, "overloaded"),
        "wrong": lambda n, body: completion(WRONG),
        # Malformed fields a server may send: recorded and ignored, never a crash.
        "badretry": lambda n, body: (error(429, "slow", {"Retry-After": "-1"}) if n == 1
                                     else completion(REFERENCE)),
        "nanretry": lambda n, body: (error(429, "slow", {"Retry-After": "nan"}) if n == 1
                                     else completion(REFERENCE)),
        "strtokens": lambda n, body: completion(REFERENCE, prompt_tokens="12",
                                                completion_tokens="many"),
        "unreadable-args": unreadable_args,
    }


def unreadable_args(n, body):
    """Tool calls whose arguments Python cannot read as a document (issue 30, finding 7):
    each is an invalid call that names its problem, and the loop goes on to a submit."""
    if not any(m["role"] == "tool" for m in body["messages"]):
        return tool_calls(
            ("validate", '{"oplist": {"ops": [' + "9" * 5000 + "]}}"),
            ("draw", '{"oplist": ' + "[" * 5000 + "]" * 5000 + "}"),
            ("validate", '{"oplist": {"ops": [], "note": "\ud800"}}'),
            ("validate", '{"oplist": {"ops": [], "x": NaN}}'))
    return tool_calls(("submit", {"oplist": json.loads(REFERENCE)}))


def openai_entry(server, model, **extra):
    return {"kind": "openai", "base_url": server.base_url, "model": model,
            "api_key_env": "WB_TEST_KEY", "provider": "fake", "backoff_s": 0.1, **extra}


def command_entry(command, **extra):
    return {"kind": "command", "command": command, "provider": "local", "retries": 0,
            "backoff_s": 0.1, **extra}


@pytest.fixture(scope="module")
def agent_run(tmp_path_factory):
    """One Snakemake run with every kind of agent misbehaviour in it."""
    from conftest import Project

    root = tmp_path_factory.mktemp("agents")
    py = sys.executable
    # The agent knows the answer from a folder of its own, which its entry exposes: the
    # corpus next to the task is out of its reach (see test_sandbox).
    answers = root / "answers"
    answers.mkdir()
    (answers / f"{TASK}.json").write_text(REFERENCE)
    writer = (f"{py} -c \"import os,shutil; shutil.copy('{answers}/' + os.environ['TASK_ID']"
              f" + '.json', os.environ['OPS_OUT'])\"")
    with FakeOpenAI(scripts()) as server:
        models = {
            "oa-correct": openai_entry(server, "correct",
                                       price_per_mtok={"prompt": 3.0, "completion": 15.0}),
            "oa-prose": openai_entry(server, "prose"),
            "oa-repair": openai_entry(server, "repair", max_turns=2),
            "oa-ratelimit": openai_entry(server, "ratelimit"),
            "oa-hang": openai_entry(server, "hang", timeout=1, retries=1),
            "oa-down": openai_entry(server, "down", retries=2),
            "oa-wrong": openai_entry(server, "wrong"),
            "oa-badretry": openai_entry(server, "badretry"),
            "oa-nanretry": openai_entry(server, "nanretry"),
            "oa-strtokens": openai_entry(server, "strtokens",
                                         price_per_mtok={"prompt": 3.0, "completion": 15.0}),
            "oa-tools-unreadable": openai_entry(server, "unreadable-args", tools=True),
            "cmd-good": command_entry(writer, expose=[str(answers)]),
            "cmd-crash": command_entry("echo boom >&2; exit 3"),
            "cmd-hang": command_entry("sleep 30", timeout=1),
            # Exit 75 is the one way a command declares an infra failure: retried, then
            # left out of the pass rate, and counted as a failure in the other one.
            "cmd-tempfail": command_entry("echo 'provider down' >&2; exit 75", retries=1),
            "cmd-flood": command_entry("head -c 100000000 /dev/zero > \"$OPS_OUT\"",
                                       max_output_bytes=1_000_000),
            "cmd-silent": command_entry("true"),
            "cmd-repair": command_entry(
                f"if [ -n \"$FEEDBACK_FILE\" ]; then grep -q protocol \"$FEEDBACK_FILE\" && "
                f"{writer}; else echo '{WRONG}' > \"$OPS_OUT\"; fi", max_turns=2,
                expose=[str(answers)]),
            # Echoes its own key where a 4 KiB tail cut would split it, hunts for the other
            # entries' keys in every /proc/*/environ, and puts its key in its answer.
            "cmd-snoop": command_entry(
                "cat /proc/[0-9]*/environ 2>/dev/null | tr '\\0' '\\n' | grep -a sk- >&2; "
                "printf '%s' \"$WB_SNOOP_KEY\" >&2; head -c 4090 /dev/zero | tr '\\0' x >&2; "
                "printf '{\"ops\": [], \"note\": \"%s\"}' \"$WB_SNOOP_KEY\" > \"$OPS_OUT\"",
                env=["WB_SNOOP_KEY"]),
            "cmd-leaky": command_entry(
                f"echo \"key=$WB_TEST_KEY\" >&2; {writer}", env=["WB_TEST_KEY"],
                expose=[str(answers)]),
        }
        # Models that are all infra errors on purpose: the run must still end green.
        project = Project(root / "wb").configure(models, tasks=[TASK], max_infra_rate=1.0)
        proc = project.snakemake(env={"WB_TEST_KEY": CANARY, "WB_SNOOP_KEY": SNOOP_CANARY,
                                      "WB_HIDDEN": "must-not-leak"})
        yield project, server, proc


def row(project, model):
    df = project.summary()
    return df[df["model"] == model].iloc[0]


def agent(project, model):
    return json.loads((project.pair(model, TASK) / "agent.json").read_text())


@pytest.mark.slow
def test_a_correct_answer_passes_with_tokens_and_cost(agent_run):
    project, server, _ = agent_run
    r = row(project, "oa-correct")
    assert (r.outcome, r.passed, r.turns, r.attempts) == ("success", True, 1, 1)
    assert (r.prompt_tokens, r.completion_tokens, r.cost_usd) == (1000, 200, 0.006)
    call = server.calls["correct"][0]
    assert call["auth"] == f"Bearer {CANARY}"
    prompt = call["body"]["messages"][0]["content"]
    assert "# Writing akcli op-lists" in prompt and "# Your task" in prompt
    assert "Device:R  @(0,0)" in prompt, "the pin table of the task's symbol"


@pytest.mark.slow
def test_prose_around_json_is_extracted(agent_run):
    project, _, _ = agent_run
    assert row(project, "oa-prose").passed
    ops = json.loads((project.pair("oa-prose", TASK) / "ops.json").read_text())
    assert ops == json.loads(REFERENCE)


@pytest.mark.slow
def test_a_wrong_answer_is_fixed_on_turn_two_from_the_feedback(agent_run):
    project, server, _ = agent_run
    r = row(project, "oa-repair")
    assert (r.outcome, r.passed, r.turns) == ("success", True, 2)
    second = server.calls["repair"][1]["body"]["messages"]
    assert [m["role"] for m in second] == ["user", "assistant", "user"]
    assert "akcli rejected that op-list" in second[2]["content"]
    assert "protocol" in second[2]["content"].lower()
    first_turn = agent(project, "oa-repair")["turns"][0]
    assert first_turn["precheck"] and first_turn["status"] == "ok"


@pytest.mark.slow
def test_a_429_is_retried_after_retry_after(agent_run):
    project, _, _ = agent_run
    r = row(project, "oa-ratelimit")
    assert (r.outcome, r.passed, r.attempts) == ("success", True, 2)
    attempts = agent(project, "oa-ratelimit")["turns"][0]["attempts"]
    assert attempts[0]["http_status"] == 429 and attempts[0]["retry_in_s"] == 1.0
    # ... and the wait happened: the pair took the server's second, not just noted it.
    assert agent(project, "oa-ratelimit")["wall_s"] >= 1.0


@pytest.mark.parametrize("model", ["oa-badretry", "oa-nanretry"])
@pytest.mark.slow
def test_a_retry_after_that_is_no_delay_is_ignored_for_the_usual_backoff(agent_run, model):
    """Review finding 16: `Retry-After: -1` or `nan` crashed generate (exit 70)."""
    project, _, _ = agent_run
    r = row(project, model)
    assert (r.outcome, r.passed, r.attempts) == ("success", True, 2)
    first = agent(project, model)["turns"][0]["attempts"][0]
    assert first["http_status"] == 429 and first["retry_in_s"] == 0.1  # backoff_s, not -1


@pytest.mark.slow
def test_token_counts_that_are_not_counts_are_noted_and_ignored(agent_run):
    """Review finding 16: token counts sent as strings crashed generate."""
    project, _, _ = agent_run
    r = row(project, "oa-strtokens")
    assert (r.outcome, r.passed) == ("success", True)
    attempt = agent(project, "oa-strtokens")["turns"][0]["attempts"][0]
    assert attempt["prompt_tokens"] is None and attempt["cost_usd"] is None
    assert attempt["server_notes"] == [
        "usage.prompt_tokens '12' is not a token count: ignored",
        "usage.completion_tokens 'many' is not a token count: ignored"]


@pytest.mark.slow
def test_a_hang_past_the_timeout_is_an_infra_error(agent_run):
    project, _, _ = agent_run
    r = row(project, "oa-hang")
    assert (r.outcome, r.passed, r.attempts) == ("infra_error", False, 2)
    assert "timed out" in r.errors


@pytest.mark.slow
def test_a_server_that_stays_down_is_an_infra_error_after_retries(agent_run):
    project, server, _ = agent_run
    r = row(project, "oa-down")
    assert (r.outcome, r.attempts) == ("infra_error", 3)
    assert len(server.calls["down"]) == 3
    assert agent(project, "oa-down")["http_status"] == 503


@pytest.mark.slow
def test_a_wrong_answer_is_the_models_failure_not_infra(agent_run):
    project, _, _ = agent_run
    r = row(project, "oa-wrong")
    assert (r.outcome, r.passed, r.valid) == ("invalid", False, False)


@pytest.mark.slow
def test_command_agents_get_the_contract_and_end_right(agent_run):
    project, _, _ = agent_run
    assert row(project, "cmd-good").passed
    # Issue 30, finding 10: a command that fails is the model's failure, scored, with its
    # exit and its last words; only exit 75 declares an infra failure.
    crash = row(project, "cmd-crash")
    assert (crash.outcome, crash.passed) == ("invalid", False)
    assert "agent failed (exit 3; only exit 75 declares an infra failure): boom" in crash.errors
    assert agent(project, "cmd-crash")["stderr_tail"] == "boom\n"
    hang = row(project, "cmd-hang")
    assert hang.outcome == "invalid" and "agent timed out after 1 s" in hang.errors
    tempfail = row(project, "cmd-tempfail")
    assert (tempfail.outcome, tempfail.attempts) == ("infra_error", 2)
    assert "declared an infra failure (exit 75, EX_TEMPFAIL): provider down" in tempfail.errors
    flood = row(project, "cmd-flood")
    assert flood.outcome == "invalid" and "more than max_output_bytes" in flood.errors
    assert (project.pair("cmd-flood", TASK) / "ops.json").stat().st_size == 0
    repaired = row(project, "cmd-repair")
    assert (repaired.passed, repaired.turns) == (True, 2), repaired.errors
    silent = row(project, "cmd-silent")
    assert silent.outcome == "invalid" and "wrote nothing to OPS_OUT" in silent.errors


@pytest.mark.slow
def test_infra_errors_are_left_out_of_pass_rates(agent_run):
    project, _, _ = agent_run
    card = json.loads((project.root / "results" / "scorecard.json").read_text())
    hang = card["models"]["oa-hang"]
    assert (hang["infra_errors"], hang["scored_pairs"], hang["pass_rate"]) == (1, 0, None)
    # Next to it, the rate that counts infra errors as failures (issue 30, finding 10).
    assert (hang["pass_rate_all_pairs"], hang["pass_rate_all_pairs_ci"]) == (0.0, [0.0, 0.7935])
    assert card["models"]["cmd-tempfail"]["pass_rate"] is None
    assert card["models"]["cmd-tempfail"]["pass_rate_all_pairs"] == 0.0
    assert card["models"]["oa-correct"]["pass_rate_all_pairs"] == 1.0
    assert card["models"]["oa-wrong"]["pass_rate"] == 0.0
    report = (project.root / "results" / "report.md").read_text()
    # The matrix's cells, not the header's prose: oa-hang's cell says infra error.
    header = next(line for line in report.splitlines() if line.startswith("| task |"))
    row = next(line for line in report.splitlines() if line.startswith("| 01-divider |"))
    cells = dict(zip([c.strip() for c in header.split("|")[2:-1]],
                     [c.strip() for c in row.split("|")[2:-1]], strict=True))
    assert cells["oa-hang"] == "infra error"
    models = next(i for i, line in enumerate(report.splitlines())
                  if line.startswith("| model | pairs |"))
    columns = [c.strip() for c in report.splitlines()[models].split("|")[1:-1]]
    table = itertools.takewhile(lambda line: line.startswith("| "),
                                report.splitlines()[models + 2:])
    rows = {line.split("|")[1].strip(): [c.strip() for c in line.split("|")[1:-1]]
            for line in table}
    every = columns.index("infra as failures")
    assert (rows["oa-hang"][every], rows["oa-correct"][every]) == ("0.0%", "100.0%")
    html = (project.root / "results" / "report.html").read_text()
    assert "<th>infra as failures (95% CI)</th>" in html
    assert cells["oa-correct"] == "PASS" and cells["oa-wrong"].startswith("fail")
    # pass@1's interval in the scorecard is Wilson's at 95%: 1 of 1 gives [0.2065, 1].
    assert card["models"]["oa-correct"]["pass_at_1_ci"] == [0.2065, 1.0]
    assert card["models"]["oa-wrong"]["pass_at_1_ci"] == [0.0, 0.7935]


@pytest.mark.slow
def test_no_secret_reaches_results_metadata_logs_or_the_archive(agent_run):
    """Review findings 7 and 8: two entries' canary keys, one of them hunted for in
    /proc and echoed at the tail's cut, never land in results/, .snakemake/ or the
    archive, in any spelling."""
    import tarfile

    project, _, proc = agent_run
    assert agent(project, "cmd-leaky")["stderr_tail"] == "key=<$WB_TEST_KEY>\n"
    snoop = agent(project, "cmd-snoop")
    # Redaction would hide it anyway: its placeholder shows whether the key was reachable.
    assert "<$WB_TEST_KEY>" not in snoop["stderr_tail"], "another entry's key was reachable"
    assert snoop["stderr_tail"].endswith("x" * 4090)
    assert (project.pair("cmd-snoop", TASK) / "ops.json").read_text() == \
        '{"ops": [], "note": "<$WB_SNOOP_KEY>"}'
    project.snakemake("archive")
    archives = list((project.root / "archive").glob("*.tar.gz"))
    assert archives
    fragments = [CANARY, SNOOP_CANARY, json.dumps(SNOOP_CANARY)[1:-1], "4242424242"]
    for fragment in fragments:
        hits = subprocess.run(["grep", "-rlF", fragment, str(project.root)],
                              capture_output=True, text=True)
        assert hits.stdout == "", f"{fragment!r} leaked into: {hits.stdout}"
        assert fragment not in proc.stdout + proc.stderr
        for path in archives:
            with tarfile.open(path) as tar:
                for member in tar.getmembers():
                    data = tar.extractfile(member).read() if member.isfile() else b""
                    assert fragment.encode() not in data, f"{member.name} in {path.name}"


def test_the_environment_is_scrubbed(tmp_path, monkeypatch):
    from wirebench.agents.answer import TurnContext
    from wirebench.agents.command import answer
    from wirebench.corpus.tasks import load_task

    monkeypatch.setenv("WB_ALLOWED", "yes")
    monkeypatch.setenv("WB_HIDDEN", "no")
    script = ("import json, os; json.dump({'protocol_version': 2, 'target_format': 'kicad', "
              "'ops': [], 'env': sorted(k for k in os.environ if k.startswith(('WB_', "
              "'TASK', 'OPS', 'MODEL', 'SAMPLE', 'TURN', 'PROMPT', 'SKILLS'))), "
              "'cwd': sorted(os.listdir('.'))}, open(os.environ['OPS_OUT'], 'w'))")
    ctx = TurnContext("m", load_task(TASKS / TASK), 1, 1, REPO / "README.md", REPO / "skills")
    ans = answer({"command": f"{sys.executable} -c \"{script}\"", "env": ["WB_ALLOWED"]}, ctx)
    doc = json.loads(ans.ops)
    assert doc["env"] == ["MODEL", "OPS_OUT", "PROMPT_FILE", "SAMPLE", "SKILLS_DIR", "TASK_FILE",
                          "TASK_ID", "TURN", "WB_ALLOWED"]
    assert doc["cwd"] == [], "the command starts in an empty folder"


@pytest.mark.slow
def test_tool_arguments_python_cannot_read_are_invalid_calls_and_the_loop_goes_on(agent_run):
    """Issue 30, finding 7, in the tool loop: a 5,000-digit integer, 5,000 levels of
    nesting, a lone surrogate and NaN in a call's arguments are each an invalid call
    naming its problem (never an infra error of the pair); the model then submits."""
    project, server, _ = agent_run
    r = row(project, "oa-tools-unreadable")
    assert (r.outcome, r.passed) == ("success", True), r.errors
    steps = agent(project, "oa-tools-unreadable")["turns"][0]["trajectory"]
    assert [s["status"] for s in steps] == ["invalid"] * 4 + ["ok"]
    replies = [m["content"] for c in server.calls["unreadable-args"]
               for m in c["body"]["messages"] if m["role"] == "tool"]
    for phrase in ("an integer of 5000 digits", "nested too deeply", "lone surrogate",
                   "NaN is not a JSON number"):
        assert any(phrase in reply for reply in replies), (phrase, replies)
