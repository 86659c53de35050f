"""wirebench from inspect_ai (issue 34): src/wirebench/inspect_task.py.

- the same answers (the references, known-wrong answers, an invalid one and one that
  draws the right circuit badly) through inspect's own eval(), by a scripted model that
  draws then submits each through the inspect tools, and through a real Snakemake run:
  passed, clean, score and failure_class (as summary.csv has it) agree pair by pair;
- `inspect eval` itself, the file from the checkout and the entry point from elsewhere,
  against an OpenAI-compatible server on 127.0.0.1: its log holds the scores and the
  tool calls `inspect view` shows;
- a task's `tool_surface`: only its tools are offered, and a call to another runs nothing;
- max_tool_calls: the call past the budget is not run, and the last draft is the answer;
- two toolboxes alive in one process (inspect's concurrent samples) close in any order.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import threading
from pathlib import Path

import pytest
import yaml
from conftest import REPO, TASKS, Project
from fake_openai import FakeOpenAI, reference_model
from inspect_ai import eval as inspect_eval
from inspect_ai.log import read_eval_log
from inspect_ai.model import ModelOutput, ModelUsage, get_model

from wirebench.runtime import landlock

needs_landlock = pytest.mark.skipif(
    landlock.abi() < landlock.MIN_ABI and not os.environ.get("CI"),
    reason="this kernel has no Landlock")
DIVIDER, RC = "01-divider", "d01-rc-lowpass-loaded"


def _ops(task: str, name: str = "reference_ops.json") -> dict:
    return json.loads((TASKS / task / name).read_text())


def _answers() -> dict[str, dict[str, dict]]:
    """model -> task -> op-list: the reference; the known-wrong answers the tasks ship
    (R2 at 4k7: values; a high-pass: the 10 Hz measure); an op-list akcli refuses (an
    add_text with no `at`), and d01 drawn right with C1 on top of R1 (layout: quality)."""
    invalid = _ops(DIVIDER)
    invalid["ops"].append({"op": "add_text", "text": "note", "x_mil": 0, "y_mil": 0})
    overlapping = _ops(RC)
    overlapping["ops"][1].update(x_mil=1000, y_mil=1100)
    return {"reference": {DIVIDER: _ops(DIVIDER), RC: _ops(RC)},
            "wrong": {DIVIDER: _ops(DIVIDER, "wrong/r2-4k7.json"),
                      RC: _ops(RC, "wrong/high-pass.json")},
            "broken": {DIVIDER: invalid, RC: overlapping}}


def _task_of(prompt: str) -> str:
    """The task a prompt pack is for, by the title under `# Your task`."""
    title = prompt.split("# Your task\n\n", 1)[1].splitlines()[0].lstrip("# ").strip()
    return next(t for t in (DIVIDER, RC)
                if (TASKS / t / "task.md").read_text().startswith(f"# {title}\n"))


def _reply(call: str, args: dict) -> ModelOutput:
    out = ModelOutput.for_tool_call("mockllm/model", call, args)
    # A usage of its own: without one, mockllm counts tokens with tiktoken, which fetches
    # its tables from the network.
    out.usage = ModelUsage(input_tokens=100, output_tokens=10, total_tokens=110)
    return out


def drafter(answers: dict[str, dict], seen: list | None = None):
    """A scripted model: it draws its answer for the task, then submits it."""
    def generate(messages, tools, tool_choice, config):
        if seen is not None:
            seen.append([t.name for t in tools])
        task = _task_of(next(m.text for m in messages if m.role == "user"))
        ran = sum(m.role == "tool" for m in messages)
        return _reply("draw" if ran == 0 else "submit", {"oplist": answers[task]})
    return generate


def _scores(log) -> dict[str, dict]:
    """task -> what the inspect scorer said."""
    assert log.status == "success", log.error
    found = {}
    for sample in log.samples:
        score = sample.scores["verdict"]
        found[sample.id] = {"passed": bool(score.value["passed"]), "score": score.value["score"],
                            "clean": score.metadata["clean"],
                            "failure_class": score.metadata["failure_class"],
                            "answer": json.loads(score.answer)}
    return found


def _project_task(tmp: Path, tasks: list[str], **meta) -> Project:
    project = Project(tmp / "wb").self_contained(tasks)
    for t in tasks:
        path = project.root / "tasks" / t / "task.yaml"
        path.write_text(yaml.safe_dump({**yaml.safe_load(path.read_text()), **meta}))
    return project


def _task(project: Project, **args):
    from wirebench.inspect_task import wirebench

    return wirebench(root=str(project.root), **args)


@needs_landlock
@pytest.mark.slow
def test_inspect_and_the_workflow_give_the_same_verdicts(tmp_path):
    answers = _answers()
    project = Project(tmp_path / "wb").self_contained([DIVIDER, RC])
    # The workflow: the same op-lists as answer files (ops_dir), the reference as itself.
    models = {"reference": {"kind": "reference"}}
    for model in ("wrong", "broken"):
        folder = project.root / "answers" / model
        folder.mkdir(parents=True)
        for task, ops in answers[model].items():
            (folder / f"{task}.json").write_text(json.dumps(ops))
        models[model] = {"kind": "ops_dir", "dir": f"answers/{model}"}
    config = yaml.safe_load(project.config_path.read_text())
    project.config_path.write_text(yaml.safe_dump({**config, "models": models}))
    project.snakemake()
    rows = project.summary()
    workflow = {(r.model, r.task): {"passed": bool(r.passed), "score": float(r.score),
                                    "clean": bool(r.clean), "failure_class": r.failure_class}
                for r in rows.fillna({"failure_class": ""}).itertuples()}

    # inspect: each answer drawn, then submitted, through the inspect tools.
    logs = inspect_eval(
        _task(project), display="none", log_dir=str(tmp_path / "logs"),
        model=[get_model(f"mockllm/{m}", custom_outputs=drafter(answers[m]))
               for m in answers])
    by_model = {log.eval.model.split("/", 1)[1]: _scores(log) for log in logs}

    for model in answers:
        for task in (DIVIDER, RC):
            got = by_model[model][task]
            assert got.pop("answer") == answers[model][task], (model, task)
            assert got == workflow[(model, task)], (model, task)
    # And the answers are what they were written to be: nothing agrees by failing alike.
    classes = {(m, t): workflow[(m, t)]["failure_class"] for m in answers for t in (DIVIDER, RC)}
    assert classes == {("reference", DIVIDER): "", ("reference", RC): "",
                       ("wrong", DIVIDER): "function", ("wrong", RC): "function",
                       ("broken", DIVIDER): "invalid", ("broken", RC): "quality"}
    assert workflow[("broken", RC)]["passed"] and not workflow[("broken", RC)]["clean"]
    # The transcript inspect view shows: each sample's draw and submit as tool events.
    sample = read_eval_log(logs[0].location).samples[0]
    tools = [e.function for e in sample.events if e.event == "tool"]
    assert tools == ["draw", "submit"]
    drawn = next(e for e in sample.events if e.event == "tool" and e.function == "draw")
    assert drawn.result.startswith("[ok] ") and '"applied": true' in drawn.result


@needs_landlock
@pytest.mark.parametrize("form", ["file", "entry point"])
def test_inspect_eval_runs_the_task(tmp_path, form):
    """`inspect eval` as the guide writes it, with inspect's OpenAI-compatible provider
    against the scripted server: the file from the checkout (relative paths are the
    checkout's: inspect runs the file in its folder), or the entry point from elsewhere."""
    answers = {(TASKS / t / "task.md").read_text().splitlines()[0].lstrip("# ").strip():
               _ops(t) for t in (DIVIDER, RC)}
    where, spec = ((REPO, ["src/wirebench/inspect_task.py"]) if form == "file" else
                   (tmp_path, ["wirebench/wirebench", "-T", f"root={REPO}"]))
    with FakeOpenAI({"reference": reference_model(answers)}) as server:
        proc = subprocess.run(
            [str(Path(sys.executable).parent / "inspect"), "eval", *spec,
             "--model", "openai-api/fake/reference",
             "-T", f"tasks={DIVIDER},{RC}", "--log-dir", str(tmp_path / "logs"),
             "--display", "plain"],
            cwd=where, capture_output=True, text=True, timeout=600,
            env={**os.environ, "FAKE_BASE_URL": server.base_url, "FAKE_API_KEY": "test"})
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    [path] = (tmp_path / "logs").glob("*.eval")
    log = read_eval_log(str(path))
    scores = _scores(log)
    assert {t: (s["passed"], s["score"]) for t, s in scores.items()} == {
        DIVIDER: (True, 1.0), RC: (True, 1.0)}
    # The server was asked with the tools and the pack, and both samples drew, then
    # submitted: what inspect view shows as the transcript.
    bodies = [c["body"] for c in server.calls["reference"]]
    assert len(bodies) == 4 and all(b["tools"] for b in bodies)
    for sample in log.samples:
        assert [e.function for e in sample.events if e.event == "tool"] == ["draw", "submit"]


@needs_landlock
def test_only_the_tasks_surface_is_offered(tmp_path):
    from wirebench.steps.tools import DESIGN, SPECS

    project = _project_task(tmp_path, [DIVIDER], tool_surface=["list_ops", "pins", "submit"])
    offered: list[list[str]] = []
    answer = _ops(DIVIDER)

    def generate(messages, tools, tool_choice, config):
        offered.append([t.name for t in tools])
        ran = sum(m.role == "tool" for m in messages)
        # First a tool the surface leaves out, then the answer.
        return _reply("draw" if ran == 0 else "submit", {"oplist": answer})

    [log] = inspect_eval(_task(project), display="none", log_dir=str(tmp_path / "logs"),
                         model=get_model("mockllm/model", custom_outputs=generate))
    assert offered == [["list_ops", "pins", "submit"]] * 2
    sample = log.samples[0]
    [refused, submitted] = [e for e in sample.events if e.event == "tool"]
    assert refused.function == "draw" and refused.error is not None
    # Nothing ran for it: the toolbox saw only the submit.
    assert [s["tool"] for s in sample.store["wirebench:trajectory"]] == ["submit"]
    assert submitted.result == "[ok] submitted"
    assert _scores(log)[DIVIDER]["passed"]

    # The default surface: every tool of the toolbox's own table, as it describes it.
    from wirebench.corpus.tasks import load_task
    from wirebench.inspect_task import inspect_tools
    from wirebench.steps.tools import Toolbox

    box = Toolbox(load_task(TASKS / RC), [], tmp_path)
    try:
        tools = inspect_tools(box)
    finally:
        box.close()
    assert [t.name for t in tools] == list(DESIGN)
    for t in tools:
        described, schema = SPECS[t.name]
        assert t.description == described
        assert t.parameters.model_dump(exclude_none=True)["properties"].keys() == \
            (schema or {}).get("properties", {}).keys()


@needs_landlock
@pytest.mark.parametrize("budget", [{"max_tool_calls": 1}, {"message_limit": 4}])
def test_past_a_budget_the_last_draft_is_the_answer(tmp_path, budget):
    """As the tool loop's budgets: the call past max_tool_calls, or the reply past one of
    inspect's own limits (system, pack, draw, its result: 4 messages), is not run, and
    the op-list drawn last is the answer, not the one the model went on to submit."""
    project = _project_task(tmp_path, [DIVIDER])
    wrong = _ops(DIVIDER, "wrong/r2-4k7.json")

    def generate(messages, tools, tool_choice, config):
        ran = sum(m.role == "tool" for m in messages)
        return (_reply("draw", {"oplist": _ops(DIVIDER)}) if ran == 0 else
                _reply("submit", {"oplist": wrong}))

    limit = budget.get("message_limit")
    [log] = inspect_eval(_task(project, max_tool_calls=budget.get("max_tool_calls", 30)),
                         display="none", log_dir=str(tmp_path / "logs"), message_limit=limit,
                         model=get_model("mockllm/model", custom_outputs=generate))
    sample = log.samples[0]
    assert [s["tool"] for s in sample.store["wirebench:trajectory"]] == ["draw"]
    assert sample.store.get("wirebench:ended") == (None if limit else "max_tool_calls")
    assert (sample.limit is not None) == bool(limit)
    got = _scores(log)[DIVIDER]
    assert got["answer"] == _ops(DIVIDER) and got["passed"]


def test_the_selection_follows_the_workflows(tmp_path):
    from wirebench.config import load_config
    from wirebench.corpus.tasks import discover, load_task
    from wirebench.inspect_task import select

    config = load_config(REPO / "config" / "config.yaml")
    design = [t.id for t in select(TASKS, tiers="design", config=config)]
    assert design == [d.name for d in discover(TASKS) if load_task(d).tier == "design"]
    assert len(design) > config["sample_per_tier"]["design"]  # the whole tier, not a sample
    assert [t.id for t in select(TASKS, tasks=f"{RC},{DIVIDER}")] == [DIVIDER, RC]
    # No ids and no tiers: the default run's tasks, as the config samples them.
    tiers = {}
    for t in select(TASKS, config=config):
        tiers[t.tier] = tiers.get(t.tier, 0) + 1
    assert {k: v for k, v in tiers.items() if k in config["sample_per_tier"]} == {
        k: v for k, v in config["sample_per_tier"].items() if k in tiers}
    with pytest.raises(Exception, match="nope"):
        select(TASKS, tasks="nope")
    with pytest.raises(ValueError, match="tier"):
        select(TASKS, tiers="no-such-tier")


@needs_landlock
def test_two_step_servers_close_in_any_order(tmp_path):
    """Concurrent samples keep two toolboxes, so two confined step servers, alive in one
    process: the first closes while the second still serves."""
    import time

    from wirebench.runtime.confine import Server

    first, second = (Server(write=tmp_path / n) for n in ("a", "b"))
    for n, server in (("a", first), ("b", second)):
        (tmp_path / n).mkdir()
        server.call(time.sleep, 0, timeout=30)
    closing = threading.Thread(target=first.close, daemon=True)
    closing.start()
    closing.join(10)
    try:
        assert not closing.is_alive(), "the first server's close waited on the second"
    finally:
        second.close()
        closing.join(10)
    shutil.rmtree(tmp_path / "a", ignore_errors=True)


@needs_landlock
@pytest.mark.parametrize("vision", [True, False])
def test_render_shows_a_vision_model_the_picture(tmp_path, vision):
    """`-T vision=true`, as an entry's `vision: true`: render's PNG reaches the model as
    an image (inspect moves it from the tool's result into a message after it, as the
    tool loop does); without it, the line saying it is not available."""
    import base64

    project = _project_task(tmp_path, [RC])
    seen = []

    def generate(messages, tools, tool_choice, config):
        seen[:] = messages
        ran = sum(m.role == "tool" for m in messages)
        return _reply(("draw", "render", "submit")[min(ran, 2)], {} if ran == 1 else
                      {"oplist": _ops(RC)})

    [log] = inspect_eval(_task(project, vision=vision), display="none",
                         log_dir=str(tmp_path / "logs"),
                         model=get_model("mockllm/model", custom_outputs=generate))
    assert _scores(log)[RC]["passed"]
    at = next(i for i, m in enumerate(seen) if m.role == "tool" and m.function == "render")
    images = [c.image for m in seen[at:] if isinstance(m.content, list)
              for c in m.content if c.type == "image"]
    if vision:
        assert seen[at].text.startswith("[ok] the sheet as a ")
        [image] = images
        assert image.startswith("data:image/png;base64,")
        assert base64.b64decode(image.split(",", 1)[1])[:8] == b"\x89PNG\r\n\x1a\n"
    else:
        assert images == [] and "render is not available" in seen[at].text
