"""`kind: openai` with `tools: true`: the model drives akcli through tool calls.

The chat-completions tool loop: the model gets the prompt pack and the task's tool
surface (steps/tools.py), calls tools, reads their results, and ends by calling
`submit`, or by replying with an op-list in its text. The harness builds the pair's
Toolbox (generate) and hands it over in the turn's context, so this module never runs
akcli itself.

`render` returns a picture: for an entry with `vision: true` it goes to the model as an
image input (an `image_url` data URI in a user message after the reply's tool results,
where the chat API allows images); without it, the tool says it is not available.

Budgets, per pair, from the model entry:
  max_tool_calls    default 30
  max_tokens_total  prompt + completion tokens over the whole loop
  timeout           seconds for the whole loop (each request gets what is left)
When one runs out, the loop ends: the last op-list the model validated or drew is its
answer, or it has none. Either way it is the model's failure, never an infra error, and
agent.json names the budget.
"""

from __future__ import annotations

import base64
import time

from .answer import Answer, TurnContext
from .openai_chat import client_for, request, sendable, text_answer

MAX_TOOL_CALLS = 30
GUIDE = ("You can drive akcli through the tools you are given: look up ops and pins, "
         "validate a draft, dry-run the draw and read its net diff, query one net, pin or "
         "part of the sheet, check it for ERC and layout findings, look at it (render), "
         "simulate your last draw with a test bench of your own, then call `submit` "
         "with your final op-list (or a refusal object, when the task should not be "
         "drawn). Calling `submit` ends your turn.")


def _as_dict(call) -> dict:
    return {"id": call.id, "type": "function",
            "function": {"name": sendable(call.function.name),
                         "arguments": sendable(call.function.arguments)}}


def picture(call_id: str, tool: str, png: bytes) -> dict:
    """A tool's picture as the chat API takes an image: a user message (a tool message
    holds text only) with a data URI."""
    uri = "data:image/png;base64," + base64.b64encode(png).decode()
    return {"role": "user", "content": [
        {"type": "text", "text": f"The picture {tool} returned (call {call_id}):"},
        {"type": "image_url", "image_url": {"url": uri}}]}


def answer(spec: dict, ctx: TurnContext) -> Answer:
    tools = ctx.tools  # steps/tools.py's Toolbox: this module imports no step code
    if tools is None:
        return Answer(None, "infra_error", "tools: true, but the harness gave no toolbox",
                      retryable=False)
    # The harness builds the toolbox per pair for this entry: whether render's picture
    # reaches the model is the entry's to say.
    tools.vision = bool(spec.get("vision"))
    max_calls = int(spec.get("max_tool_calls", MAX_TOOL_CALLS))
    max_tokens = spec.get("max_tokens_total")
    deadline = time.monotonic() + float(spec.get("timeout", 600))
    messages = [{"role": "system", "content": GUIDE},
                {"role": "user", "content": ctx.prompt_path.read_text(encoding="utf-8")}]
    offered = tools.schemas()
    trajectory: list[dict] = []
    counts = {"tool_calls": 0, "invalid_calls": 0, "denials": 0, "runtime_failures": 0}
    tokens = {"prompt_tokens": 0, "completion_tokens": 0, "cost_usd": None}

    def detail(**extra) -> dict:
        return {"http_status": 200, **tokens, **counts, "trajectory": trajectory, **extra}

    def out_of(budget: str) -> Answer:
        why = f"budget {budget} ran out"
        if tools.last_draft is not None:
            return Answer(tools.last_draft, "ok", f"{why}: the last draft is the answer",
                          detail=detail(budget=budget))
        return Answer(None, "no_answer", f"{why} before any op-list",
                      detail=detail(budget=budget))

    # One client for the loop: a client per request would load the CA bundle each time.
    client = client_for(spec)
    if isinstance(client, Answer):
        return client
    while True:
        left = deadline - time.monotonic()
        if left <= 0:
            return out_of("timeout")
        got = request(client, spec, messages, tools=offered, timeout=left)
        if isinstance(got, Answer) and time.monotonic() >= deadline:
            # The request was given what was left of the loop's time and used it up: the
            # model's budget ran out mid-request, which is its failure, not the server's.
            return out_of("timeout")
        if isinstance(got, Answer):  # the server's failure: the step may retry the turn
            got.detail.update({k: v for k, v in detail().items() if k != "http_status"})
            return got
        message, meta = got
        for key in ("prompt_tokens", "completion_tokens"):
            tokens[key] += meta.get(key) or 0
        if meta.get("cost_usd") is not None:
            tokens["cost_usd"] = round((tokens["cost_usd"] or 0) + meta["cost_usd"], 6)
        calls = getattr(message, "tool_calls", None) or []
        if not calls:  # a plain reply: its op-list, if any, is the submission
            return text_answer(message, detail())
        messages.append({"role": "assistant", "content": sendable(message.content or ""),
                         "tool_calls": [_as_dict(c) for c in calls]})
        pictures = []  # after all of this reply's tool results, as the API wants them
        for call in calls:
            if counts["tool_calls"] >= max_calls:
                return out_of("max_tool_calls")
            started = time.monotonic()
            counts["tool_calls"] += 1
            name, raw = call.function.name, call.function.arguments or ""
            result = tools.call(name, tools.parse_args(raw))
            bucket = {"invalid": "invalid_calls", "denied": "denials",
                      "failed": "runtime_failures"}.get(result.status)
            if bucket:
                counts[bucket] += 1
            trajectory.append(tools.record(len(trajectory) + 1, name, raw, result, started))
            messages.append({"role": "tool", "tool_call_id": call.id,
                             "content": f"[{result.status}] {result.text}"})
            if result.image is not None and tools.vision:
                pictures.append(picture(call.id, name, result.image))
            if result.submitted is not None:
                return Answer(result.submitted, detail=detail(), reply=result.text)
        messages.extend(pictures)
        if max_tokens and tokens["prompt_tokens"] + tokens["completion_tokens"] > max_tokens:
            return out_of("max_tokens_total")
