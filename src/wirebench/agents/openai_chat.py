"""The `openai` agent: any OpenAI-compatible chat endpoint (vLLM, Ollama, llama.cpp,
LiteLLM, the hosted APIs), through the official `openai` package (`pip install
'wirebench[openai]'`).

Turn 1 sends the prompt pack as the user message. A repair turn replays the conversation
and adds the harness's errors as a follow-up message. The op-list is taken out of the
reply even when it is wrapped in prose or a code fence.

The key is read from the variable the entry's `api_key_env` names, at call time; it is
never written anywhere. The client's own retries are off: the harness retries (and counts
the attempts) so that every attempt is accounted for.
"""

from __future__ import annotations

import json
import os

from wirebench.verify.oplist import head

from .answer import Answer, TurnContext
from .extract import extract_oplist

RETRY_STATUSES = {408, 409, 429}


def sendable(text):
    """The model's own text, fit to send back to it: a lone surrogate it wrote ("\\ud800"
    read from its JSON) cannot be encoded into a request body, so it goes as U+FFFD."""
    if not isinstance(text, str):
        return text
    try:
        text.encode()
    except UnicodeEncodeError:
        return text.encode(errors="surrogatepass").decode(errors="replace")
    return text


def _messages(ctx: TurnContext) -> list[dict]:
    messages = [{"role": "user", "content": ctx.prompt_path.read_text(encoding="utf-8")}]
    for reply, errors in ctx.history:
        messages.append({"role": "assistant", "content": sendable(reply)})
        messages.append({"role": "user", "content": (
            "akcli rejected that op-list:\n" + errors
            + "\n\nReply with the whole corrected op-list as one JSON object.")})
    return messages


def _retry_after(exc) -> float | None:
    """The server's Retry-After in seconds, or None when it sent none we can use: a
    negative, infinite or NaN value is ignored (the usual backoff applies)."""
    import math

    response = getattr(exc, "response", None)
    value = response.headers.get("retry-after") if response is not None else None
    try:
        seconds = float(value) if value is not None else None
    except ValueError:
        return None
    return seconds if seconds is not None and math.isfinite(seconds) and seconds >= 0 else None


def _count(usage, field: str, notes: list[str]) -> int | None:
    """A token count from the server's usage block; anything but a count is noted and
    ignored, never a crash of the step."""
    value = getattr(usage, field, None)
    if value is None or (isinstance(value, int) and not isinstance(value, bool) and value >= 0):
        return value
    notes.append(f"usage.{field} {value!r} is not a token count: ignored")
    return None


def cost(spec: dict, prompt_tokens: int | None, completion_tokens: int | None) -> float | None:
    prices = spec.get("price_per_mtok")
    if not prices or prompt_tokens is None or completion_tokens is None:
        return None
    return round((prompt_tokens * prices.get("prompt", 0)
                  + completion_tokens * prices.get("completion", 0)) / 1e6, 6)


def client_for(spec: dict, timeout: float | None = None):
    """The entry's client, or an infra_error Answer when its key is not set."""
    import openai  # lazy: 0.6 s, and an optional extra

    key_env = spec.get("api_key_env")
    key = os.environ.get(key_env, "") if key_env else "none"
    if key_env and not key:
        return Answer(None, "infra_error", f"environment variable {key_env} is not set",
                      retryable=False)
    return openai.OpenAI(base_url=spec["base_url"], api_key=key, max_retries=0,
                         timeout=float(timeout or spec.get("timeout", 600)),
                         default_headers=spec.get("headers") or None)


def request(client, spec: dict, messages: list[dict], **extra):
    """One chat completion: (message, detail), or an Answer that says why there is none
    (the server's fault is an infra_error, never the model's)."""
    import openai
    from openai.types.chat import ChatCompletion

    params = {k: spec[k] for k in ("temperature", "seed", "max_tokens") if k in spec}
    timeout = extra.pop("timeout", None)
    try:
        # The client's post, not chat.completions.create: create() re-walks the whole
        # conversation through its typed transforms on every request (about 40 ms a
        # request once a tool loop has a few dozen messages); the body is plain JSON here.
        resp = client.post("/chat/completions", cast_to=ChatCompletion,
                           body={"model": spec["model"], "messages": messages, **params,
                                 **extra},
                           options={"timeout": timeout} if timeout is not None else {})
    except openai.APITimeoutError:
        return Answer(None, "infra_error", f"request timed out after {spec.get('timeout', 600)} s",
                      detail={"http_status": None})
    except openai.APIConnectionError as exc:
        return Answer(None, "infra_error", f"connection error: {exc}", detail={"http_status": None})
    except (ValueError, RecursionError) as exc:  # a body that is not JSON: the server's fault
        body = getattr(exc, "doc", None)  # a JSONDecodeError keeps the text it read
        return Answer(None, "infra_error", f"the server's reply is not a chat completion: "
                      f"{type(exc).__name__}: {str(exc)[:200]}"
                      + (f"; it begins {head(body)}" if isinstance(body, str) else ""),
                      detail={"http_status": None})
    except openai.APIStatusError as exc:
        status = exc.status_code
        retryable = status >= 500 or status in RETRY_STATUSES
        # A body that is no JSON error (a proxy's HTML page) is shown by its first bytes.
        shown = "" if isinstance(exc.body, dict | list) or exc.response is None else \
            f"; it begins {head(exc.response.content)}"
        return Answer(None, "infra_error", f"HTTP {status}: {str(exc)[:300]}{shown}",
                      retry_after=_retry_after(exc), retryable=retryable,
                      detail={"http_status": status})
    if not isinstance(resp, ChatCompletion):  # a 200 that is text, or JSON of another shape
        raw = resp if isinstance(resp, str | bytes) else json.dumps(resp, default=str)
        return Answer(None, "infra_error", "the server's reply is not a chat completion "
                      f"but {type(resp).__name__}; it begins {head(raw)}",
                      detail={"http_status": 200})
    try:  # a 200 whose body is no chat completion is the server's fault, not the model's
        choices, usage, notes = resp.choices, resp.usage, []
        if not isinstance(choices, list):
            raise TypeError(f"choices is {type(choices).__name__}, not a list")
        message = choices[0].message if choices else None
        if choices and message is None:
            raise AttributeError("choices[0] has no message")
    except (AttributeError, TypeError, IndexError, KeyError) as exc:
        return Answer(None, "infra_error", f"the server's reply is not a chat completion: {exc}",
                      detail={"http_status": 200})
    prompt_tokens = _count(usage, "prompt_tokens", notes)
    completion_tokens = _count(usage, "completion_tokens", notes)
    detail = {"http_status": 200, "prompt_tokens": prompt_tokens,
              "completion_tokens": completion_tokens,
              "cost_usd": cost(spec, prompt_tokens, completion_tokens)}
    if notes:
        detail["server_notes"] = notes
    return message, detail


def text_answer(message, detail: dict) -> Answer:
    """A reply's text as an answer: the op-list in it, wherever it sits."""
    text = getattr(message, "content", None) or ""
    if not isinstance(text, str):
        return Answer(None, "no_answer", f"the model's reply is not text but "
                      f"{type(text).__name__}", detail=detail, reply=str(text))
    if not text.strip():
        return Answer(None, "no_answer", "the model replied with no text", detail=detail,
                      reply=text)
    found = extract_oplist(text)
    # A lone surrogate ("\ud800" in the reply) stays in the bytes, where validate names it.
    return Answer((found if found is not None else text).encode(errors="surrogatepass"),
                  detail=detail, reply=text)


def answer(spec: dict, ctx: TurnContext) -> Answer:
    client = client_for(spec)
    if isinstance(client, Answer):
        return client
    got = request(client, spec, _messages(ctx))
    if isinstance(got, Answer):
        return got
    return text_answer(*got)
