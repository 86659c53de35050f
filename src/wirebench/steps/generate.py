"""The generate stage: one agent answers one task, once per sample.

A pair's answer may take several turns (the repair loop, `max_turns`): when a turn's
op-list fails validation or the draw, the errors go back to the agent and it tries again.
Each turn may take several attempts: an infra_error (HTTP 429/5xx, no connection, a
request timeout, a command agent's exit 75) is retried with exponential backoff, honouring
Retry-After. A command agent's other failures are the model's (agents/command.py).

It writes the final answer verbatim to ops.json (empty when there is none: validation
then scores it as unreadable) and the whole account to agent.json.
"""

from __future__ import annotations

import tempfile
import time
from pathlib import Path

from wirebench import __version__
from wirebench.agents import answer
from wirebench.agents.answer import Answer, TurnContext
from wirebench.agents.secrets import redact
from wirebench.corpus.tasks import load_task
from wirebench.evidence.files import dumps, sha256_bytes, write_bytes_atomic
from wirebench.steps.attempt import claim, still_current

SCHEMA = "wirebench.agent/1"
BACKOFF_CAP_S = 60.0
ACCOUNTED = ("exit_code", "http_status", "prompt_tokens", "completion_tokens", "cost_usd",
             "server_notes", "budget", *(TOOL_COUNTS := ("tool_calls", "invalid_calls",
                                                         "denials", "runtime_failures")))


def _attempts(spec: dict, ctx: TurnContext, sleep=time.sleep) -> tuple[Answer, list[dict]]:
    """One turn: call the agent, retrying infra errors with backoff."""
    retries = int(spec.get("retries", 2))
    base = float(spec.get("backoff_s", 1.0))
    log = []
    for attempt in range(retries + 1):
        started = time.monotonic()
        try:
            ans = answer(spec, ctx)
        except Exception as exc:  # an agent module that raises is an infra failure
            ans = Answer(None, "infra_error", f"{type(exc).__name__}: {exc}", retryable=False)
        log.append({"status": ans.status, "error": ans.error,
                    "wall_s": round(time.monotonic() - started, 3),
                    **{k: ans.detail[k] for k in ACCOUNTED if k in ans.detail}})
        if ans.status != "infra_error" or not ans.retryable or attempt == retries:
            return ans, log
        delay = ans.retry_after if ans.retry_after is not None else base * 2 ** attempt
        log[-1]["retry_in_s"] = min(delay, BACKOFF_CAP_S)
        sleep(min(delay, BACKOFF_CAP_S))
    raise AssertionError("unreachable")


def precheck(ops: bytes, task, symbols: list[str]) -> list[str]:
    """The errors this answer would get from validate and apply, found in a scratch
    folder: what the repair loop sends back. Empty when it validates and draws."""
    from wirebench.steps.apply import apply
    from wirebench.steps.validate import validate

    with tempfile.TemporaryDirectory(prefix="wirebench-precheck-") as td:
        scratch = Path(td)
        (scratch / "ops.json").write_bytes(ops)
        v = validate(scratch / "ops.json", scratch / "validate.json")
        if not v["valid"]:
            return v["errors"]
        a = apply(scratch / "ops.json", scratch / "validate.json", task.path, symbols,
                  scratch / "board.kicad_sch", scratch / "apply.json")
        return a["errors"]


def _denials(denials: int, task) -> dict:
    """A denial on a task that should be drawn is the tool surface failing the model, or
    the model probing it: unexpected, and worth a look. On an injection task, or one whose
    right answer is a refusal (an out-of-domain request), the guard saying no is the point."""
    if "success" in task.expected_outcomes and not task.meta.get("attack"):
        return {"expected_denials": 0, "unexpected_denials": denials}
    return {"expected_denials": denials, "unexpected_denials": 0}


def _tail(text: str | None, spec: dict) -> str | None:
    """Redact the whole of what the agent printed, then cut it to its tail: cut first, and
    a key split at the cut would survive in part."""
    from wirebench.agents.command import STDERR_TAIL

    if text is None:
        return None
    kept = redact(text, spec)[-STDERR_TAIL:]
    return kept.encode(errors="surrogateescape").decode(errors="replace")


def _sum(turns: list[dict], key: str):
    values = [a.get(key) for t in turns for a in t["attempts"]]
    values = [v for v in values if v is not None]
    return round(sum(values), 6) if values else None


def generate(model: str, spec: dict, task_dir: Path, sample: int, out_ops: Path,
             out_agent: Path, prompt: Path | None = None, skills: Path | None = None,
             symbols: list[str] = ()) -> dict:
    task = load_task(task_dir)
    token = claim(Path(out_ops).parent)
    max_turns = int(spec.get("max_turns", 1))
    started = time.monotonic()
    history: list[tuple[str, str]] = []
    turns: list[dict] = []
    toolbox = None
    if spec.get("tools"):
        from wirebench.steps.tools import Toolbox

        toolbox = Toolbox(task, list(symbols), Path(out_ops).parent)
    try:
        for turn in range(1, max_turns + 1):
            ctx = TurnContext(model, task, sample, turn, prompt, skills, list(history),
                              tools=toolbox, symbols=[str(Path(s).absolute()) for s in symbols])
            final, attempts = _attempts(spec, ctx)
            record = {"turn": turn, "status": final.status, "error": final.error,
                      "attempts": attempts,
                      "wall_s": round(sum(a["wall_s"] for a in attempts), 3),
                      "stderr_tail": _tail(final.detail.get("stderr_tail"), spec)}
            if "trajectory" in final.detail:
                record["trajectory"] = final.detail["trajectory"]
            turns.append(record)
            if final.status != "ok" or turn == max_turns:
                break
            problems = precheck(final.ops, task, list(symbols))
            record["precheck"] = problems
            if not problems:
                break
            history.append((final.reply or final.ops.decode(errors="replace"),
                            "\n".join(problems)))
    finally:
        if toolbox is not None:
            toolbox.close()
    ops = redact((final.ops or b"").decode(errors="surrogateescape"), spec).encode(
        errors="surrogateescape")
    last = turns[-1]["attempts"][-1]
    doc = {
        "schema": SCHEMA, "model": model, "task": task.id, "sample": sample,
        "kind": spec.get("kind"), "status": final.status, "error": final.error,
        "turns_used": len(turns), "max_turns": max_turns,
        "attempts": sum(len(t["attempts"]) for t in turns),
        "wall_s": round(time.monotonic() - started, 3),
        "exit_code": last.get("exit_code"), "http_status": last.get("http_status"),
        "prompt_tokens": _sum(turns, "prompt_tokens"),
        "completion_tokens": _sum(turns, "completion_tokens"),
        "cost_usd": _sum(turns, "cost_usd"),
        "stderr_tail": turns[-1]["stderr_tail"],
        **({"tools": True, **{k: _sum(turns, k) or 0 for k in TOOL_COUNTS},
            **_denials(_sum(turns, "denials") or 0, task),
            "budget": last.get("budget")} if toolbox is not None else {}),
        "turns": turns,
        "ops_sha256": sha256_bytes(ops), "versions": {"wirebench": __version__},
    }
    with still_current(Path(out_ops).parent, token):
        write_bytes_atomic(out_ops, ops)
        # What the model sent (a tool call's text) may hold a lone surrogate: shown as "?".
        write_bytes_atomic(out_agent, redact(dumps(doc), spec).encode(errors="replace"))
    return doc
