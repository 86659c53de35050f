"""wirebench from inspect_ai (`pip install -e '.[inspect]'`): the corpus as an inspect
`Task`, the pair's akcli toolbox as inspect tools, and wirebench's own scoring as its
scorer, so any of inspect's model providers, agents and its log viewer can be used.

    inspect eval src/wirebench/inspect_task.py --model openai/gpt-4o-mini \\
        -T tasks=01-divider,d01-rc-lowpass-loaded
    inspect eval wirebench/wirebench --model ...   # the same task, by its entry point
    inspect view                                  # the transcripts

Nothing here judges or draws by itself; it binds wirebench's pieces to inspect's:
- the dataset: one Sample a selected task, its input the prompt pack that the workflow's
  prompt_pack step writes (steps/prompt_pack.py);
- `toolbox()`, the task's setup (it stays when `--solver` replaces the agent): the pair's
  steps/tools.py Toolbox, one a sample, confined as in the tool loop, and each tool of the
  task's `tool_surface` offered from the toolbox's own table (SPECS), so a tool added
  there appears here unchanged;
- `tool_loop()`, the default agent: the openai kind's tool loop (agents/tool_loop.py)
  over inspect's model API: the same system guide, one reply at a time, its tool calls run
  in order until `submit`, a plain reply (its op-list is the answer) or max_tool_calls
  (the last draft is). inspect's own limits (--token-limit, --time-limit) stand in for
  the entry's max_tokens_total and timeout; a limit that stops the agent leaves the last
  draft as the answer, as the tool loop's budgets do (answer_of);
- `verdict()`, the scorer: the answer through steps/pair.py's evaluate_pair, the chain
  `wirebench score` and the Snakemake rules run (validate, apply, nets, simulate for a
  design task, score); its value is {passed, score}, its metadata the failure class as
  summary.csv has it, the outcome and each criterion's verdict.

Why this module is not named `inspect.py`: whatever runs a file with its folder first on
sys.path (`python src/wirebench/inspect.py`, a debugger, an IDE's run button) would then
import that file for the standard library's `inspect`, which inspect_ai, pydantic and
most of Python's tooling import. `inspect eval FILE` appends the folder instead, so it
would work there; `inspect_task` is safe everywhere, and says what the module holds.

Relative paths (tasks_dir, skills, config and the config's own `symbols`) are read from
`root`: by default where inspect runs, or for the file form (inspect runs the file in its
own folder) the checkout the file sits in.

The toolbox's calls and the scoring of concurrent samples run one at a time, in a worker
thread, so that inspect's event loop (the other samples' model calls, its display) goes on
while akcli works: each forks a confined child from this process, whose caches (akcli
imported, libraries parsed) are not meant to be filled from two threads at once.
"""

from __future__ import annotations

import functools
import json
import shutil
import tempfile
import threading
from pathlib import Path
from typing import Any

from inspect_ai import Task, task
from inspect_ai.dataset import Sample
from inspect_ai.model import ChatMessageSystem, execute_tools
from inspect_ai.scorer import Score, Target, accuracy, mean, scorer, stderr
from inspect_ai.solver import Generate, Solver, TaskState, solver
from inspect_ai.tool import ContentImage, ContentText, ToolDef, ToolParams
from inspect_ai.util import store

# What a sample's tools leave for its scorer, in its inspect Store (the log keeps it).
SUBMITTED = "wirebench:submitted"    # the op-list `submit` was given
LAST_DRAFT = "wirebench:last_draft"  # the last op-list validated or drawn
ENDED = "wirebench:ended"            # how tool_loop ended: submit | reply | max_tool_calls
COUNTS = "wirebench:counts"          # tool_calls, invalid_calls, denials, runtime_failures
TRAJECTORY = "wirebench:trajectory"  # each call as agent.json's trajectory keeps it
BUCKETS = {"invalid": "invalid_calls", "denied": "denials", "failed": "runtime_failures"}

_ONE_AT_A_TIME = threading.Lock()
_TOOLBOXES: dict[str, tuple[Any, Path]] = {}  # a running sample's (Toolbox, pair folder)


async def _blocking(fn, *args):
    """fn(*args) in a worker thread, one such call at a time (see the module's doc)."""
    import anyio

    def locked():
        with _ONE_AT_A_TIME:
            return fn(*args)

    return await anyio.to_thread.run_sync(locked)


def _root(root: str | None) -> Path:
    """Where relative paths are read from."""
    if root:
        return Path(root).absolute()
    here = Path(__file__).absolute().parent
    if Path.cwd() == here:  # `inspect eval FILE` runs the file in its own folder
        checkout = here.parents[1]
        if (checkout / "Snakefile").is_file():
            return checkout
    return Path.cwd()


def _under(root: Path, path: str | Path) -> Path:
    return Path(path) if Path(path).is_absolute() else root / path


def _libraries(root: Path, config: str) -> tuple[list[str], str | None]:
    """The config's symbol libraries and KiCad folder (board tasks read theirs there)."""
    from wirebench.config import load_config

    found = load_config(_under(root, config))
    symbols = [str(_under(root, s)) for s in found["symbols"]]
    missing = [s for s in symbols if not Path(s).is_file()]
    if missing:
        raise ValueError(f"symbol library not found: {missing[0]} (the config's paths are "
                         f"read from {root}; give -T root=... to read them elsewhere)")
    kicad = found.get("kicad_symbols")
    return symbols, (str(_under(root, kicad)) if kicad else None)


def select(tasks_dir: Path, tasks=None, tiers=None, config: dict | None = None) -> list:
    """The tasks to run: the ids named, else every task of the tiers named, else the
    workflow's default run (the config's sample_per_tier, config.py)."""
    from wirebench.config import _names, sample_tiers, select_tasks
    from wirebench.corpus.tasks import discover_all, load_task

    folders = discover_all([tasks_dir])
    chosen = select_tasks({"tasks": tasks, "tasks_dir": str(tasks_dir)}, list(folders))
    loaded = {t: load_task(folders[t]) for t in chosen}
    if _names(tiers):
        wanted = set(_names(tiers))
        unknown = wanted - {t.tier for t in loaded.values()}
        if unknown:
            raise ValueError(f"tiers: no task of tier(s) {sorted(unknown)} in {tasks_dir}")
        return [t for t in loaded.values() if t.tier in wanted]
    kept = sample_tiers({**(config or {}), "tasks": tasks},
                        {t: task.tier for t, task in loaded.items()})
    return [loaded[t] for t in kept]


@task
def wirebench(tasks_dir: str = "tasks", tasks: str | list[str] | None = None,
              tiers: str | list[str] | None = None, skills: str = "skills",
              config: str = "config/config.yaml", root: str | None = None,
              vision: bool = False, max_tool_calls: int = 30) -> Task:
    """wirebench's corpus as an inspect Task.

    Args:
      tasks_dir: the tasks folder (splits/public for the generated split).
      tasks: task ids (a list, or comma-separated); default: the workflow's default run.
      tiers: every task of these tiers (transcription, design, board, spec, ...).
      skills: the skills folder whose guide opens each prompt pack.
      config: the wirebench config whose `symbols` and `kicad_symbols` the tasks draw with
        (and whose `sample_per_tier` picks the default run).
      root: where relative paths are read from (see the module's doc).
      vision: show the model render's picture (an openai entry's `vision: true`).
      max_tool_calls: the tool loop's budget of tool calls (an entry's max_tool_calls).
    """
    from wirebench.config import load_config
    from wirebench.corpus.libraries import symbols_for
    from wirebench.runtime.confine import require
    from wirebench.steps import prompt_pack

    require()  # as a run does: no toolbox or step runs where akcli cannot be confined
    base = _root(root)
    symbols, kicad = _libraries(base, config)
    chosen = select(_under(base, tasks_dir), tasks, tiers, load_config(_under(base, config)))
    skills_dir = _under(base, skills)
    samples = []
    for t in chosen:
        libraries = symbols_for(t, symbols, kicad)
        samples.append(Sample(
            id=t.id, input=prompt_pack.build(t.path, skills_dir, libraries),
            metadata={"task_dir": str(t.path), "tier": t.tier,
                      "family": t.meta.get("family"), "symbols": libraries}))
    return Task(dataset=samples, setup=toolbox(symbols, kicad, vision),
                solver=tool_loop(max_tool_calls), cleanup=_close,
                scorer=verdict(symbols, kicad), name="wirebench",
                metadata={"tasks_dir": str(_under(base, tasks_dir)),
                          "skills": str(skills_dir)})


# -- the tools -------------------------------------------------------------------------

def inspect_tools(box) -> list[ToolDef]:
    """Each tool on the toolbox's surface as an inspect tool, from steps/tools.py's own
    table: its name, description and argument schema; calling it is Toolbox.call, and the
    model reads back what the tool loop shows it (`[status] text`)."""
    from wirebench.steps.tools import SPECS

    return [_inspect_tool(box, name, *SPECS[name]) for name in box.names]


def _inspect_tool(box, name: str, description: str, schema: dict) -> ToolDef:
    import time

    async def execute(**kwargs: Any):
        # The toolbox judges the arguments itself (a call it refuses is `invalid`, as in
        # the tool loop); inspect has only checked them against the same schema.
        started = time.monotonic()
        result = await _blocking(box.call, name, kwargs)
        kept = store()
        counts = kept.get(COUNTS) or {"tool_calls": 0, **dict.fromkeys(BUCKETS.values(), 0)}
        counts["tool_calls"] += 1
        if result.status in BUCKETS:
            counts[BUCKETS[result.status]] += 1
        trajectory = kept.get(TRAJECTORY) or []
        trajectory.append(box.record(len(trajectory) + 1, name, json.dumps(kwargs), result,
                                     started))
        kept.set(COUNTS, counts)
        kept.set(TRAJECTORY, trajectory)
        if box.last_draft is not None:
            kept.set(LAST_DRAFT, box.last_draft.decode(errors="surrogateescape"))
        if result.submitted is not None:
            kept.set(SUBMITTED, result.submitted.decode(errors="surrogateescape"))
        text = f"[{result.status}] {result.text}"
        if result.image is not None and box.vision:
            import base64

            uri = "data:image/png;base64," + base64.b64encode(result.image).decode()
            return [ContentText(text=text), ContentImage(image=uri)]
        return text

    params = ToolParams(**(schema or {}))
    for key, prop in params.properties.items():
        # inspect wants every argument described; the table describes some in the tool's
        # own description only.
        prop.description = prop.description or f"{key}: see the tool's description"
    return ToolDef(execute, name=name, description=description, parameters=params)


@solver
def toolbox(symbols: list[str], kicad: str | None = None, vision: bool = False) -> Solver:
    """The sample's Toolbox (steps/tools.py) in a pair folder of its own, and its tools
    as the sample's tools. Closed, with its folder, by the task's cleanup."""

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        from wirebench.corpus.libraries import symbols_for
        from wirebench.corpus.tasks import load_task
        from wirebench.steps.tools import Toolbox

        await _close(state)  # a sample run again (--retry-on-error) starts afresh
        t = load_task(state.metadata["task_dir"])
        pair = Path(tempfile.mkdtemp(prefix=f"wirebench-inspect-{t.id}-"))
        box = Toolbox(t, symbols_for(t, symbols, kicad), pair, vision=vision)
        _TOOLBOXES[state.uuid] = (box, pair)
        state.tools = [d.as_tool() for d in inspect_tools(box)]
        return state

    return solve


async def _close(state: TaskState) -> None:
    box, pair = _TOOLBOXES.pop(state.uuid, (None, None))
    if box is not None:
        await _blocking(box.close)
        shutil.rmtree(pair, ignore_errors=True)


@solver
def tool_loop(max_tool_calls: int = 30) -> Solver:
    """agents/tool_loop.py's loop on inspect's model API (see the module's doc)."""
    from wirebench.agents.tool_loop import GUIDE

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        kept = store()
        state.messages.insert(0, ChatMessageSystem(content=GUIDE))
        used = 0
        while True:
            state = await generate(state, tool_calls="none")
            message = state.output.message
            calls = list(message.tool_calls or [])
            if not calls:  # a plain reply: its op-list, if any, is the answer
                kept.set(ENDED, "reply")
                return state
            # The tool loop runs a reply's calls in order and stops at submit, or at the
            # call past the budget: the rest of the reply is never run.
            allowed = calls[:max(0, max_tool_calls - used)]
            ran = next((allowed[:i + 1] for i, c in enumerate(allowed)
                        if c.function == "submit"), allowed)
            if ran:
                message.tool_calls = ran
                done = await execute_tools(state.messages, state.tools)
                state.messages.extend(done.messages)
                used += len(ran)
            if kept.get(SUBMITTED) is not None:
                kept.set(ENDED, "submit")
                return state
            if len(ran) < len(calls):
                kept.set(ENDED, "max_tool_calls")
                return state

    return solve


# -- the scorer ------------------------------------------------------------------------

def answer_of(state: TaskState) -> bytes | None:
    """The sample's answer, as the tool loop picks it: the op-list submitted; after a
    plain reply, that reply's op-list (agents/openai_chat.text_answer); past
    max_tool_calls, the last draft. When the loop did not end by itself (one of inspect's
    limits stopped it, or `--solver` ran another agent), the final reply's op-list if it
    holds one, else the last draft. None: no answer."""
    from types import SimpleNamespace

    from wirebench.agents.extract import extract_oplist
    from wirebench.agents.openai_chat import text_answer

    kept = state.store
    draft = kept.get(LAST_DRAFT)
    if kept.get(SUBMITTED) is not None:
        return kept.get(SUBMITTED).encode(errors="surrogateescape")
    ended, text = kept.get(ENDED), state.output.completion
    if ended == "max_tool_calls" or (ended is None and draft is not None
                                     and extract_oplist(text or "") is None):
        return draft.encode(errors="surrogateescape") if draft is not None else None
    return text_answer(SimpleNamespace(content=text), {}).ops


def score_answer(ops: bytes | None, task_dir: str, symbols: list[str], kicad: str | None,
                 pair: dict) -> dict:
    """An answer through validate, apply, nets, simulate and score (steps/pair.py), in a
    scratch pair folder; no answer is an empty ops.json, as generate writes it."""
    from wirebench.steps.pair import evaluate_pair

    with tempfile.TemporaryDirectory(prefix="wirebench-inspect-score-") as td:
        path = Path(td) / "ops.json"
        path.write_bytes(ops or b"")
        return evaluate_pair(path, Path(task_dir), symbols, Path(td) / "pair", pair,
                             kicad=kicad)


@scorer(metrics={"passed": [accuracy(), stderr()], "score": [mean(), stderr()]})
def verdict(symbols: list[str], kicad: str | None = None):
    """wirebench's verdict on the sample's answer (see the module's doc)."""

    async def score(state: TaskState, target: Target) -> Score:
        ops = answer_of(state)
        pair = {"model": str(state.model), "task": str(state.sample_id),
                "sample": state.epoch}
        doc = await _blocking(functools.partial(
            score_answer, ops, state.metadata["task_dir"], symbols, kicad, pair))
        cls = doc.get("failure_class") or ""
        explanation = ("PASS" if doc["passed"] else f"FAIL ({cls})") + "".join(
            f"\n{line}" for line in doc["errors"])
        return Score(
            value={"passed": float(doc["passed"]), "score": float(doc["score"])},
            answer=(ops or b"").decode(errors="replace"), explanation=explanation,
            metadata={"failure_class": cls, "clean": doc["clean"], "outcome": doc["outcome"],
                      "first_finding": doc.get("first_finding") or "",
                      "sim_status": doc.get("sim_status"), "tier": doc["tier"],
                      "criteria": [{k: c.get(k) for k in ("id", "kind", "verdict", "detail")}
                                   for c in doc["criteria"]],
                      "errors": doc["errors"], **(state.store.get(COUNTS) or {})})

    return score
