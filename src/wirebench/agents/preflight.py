"""Before the first paid call: can each online entry be called as it is configured?

A wrong model name, an unset key or a dead endpoint otherwise shows pair by pair, each
pair an infra error after its retries, and a wrong model read as a connection error. So
when a run starts (the workflow's onstart hook, which Snakemake runs neither in a dry run
nor in a cluster job), every `openai` entry with a generate job to run is checked once:
its key's variable is set, its endpoint answers, and its model is one the endpoint
lists (`GET {base_url}/models`). If not, the run stops before any job, naming the entry
and the cause.

Only what would fail every call of the entry stops the run: the key's variable unset,
no connection, a key the server refuses (401), or a model list without the model. A
server that does not list its models (a 404, a 403 for a key without the right to list
them, a 5xx, a body that is no model list) is let through with a note: its first call
will tell.

This module shapes no answer: no fingerprint covers it (evidence/fingerprint.py), so
editing it reruns nothing, and nothing it finds reaches a job.
"""

from __future__ import annotations

import http.client
import os
import socket
import ssl
import urllib.error
import urllib.request

# The kinds that call a remote service: the openai kind, with or without its tool loop.
ONLINE_KINDS = frozenset({"openai"})
TIMEOUT_S = 15.0
# How many served models a message names.
LISTED = 20


class _Listing:
    """What one GET /models said: the ids, or a stop (the run cannot go on) or a note."""

    def __init__(self, ids: list[str] | None = None, stop: str | None = None,
                 note: str | None = None):
        self.ids, self.stop, self.note = ids, stop, note


def _why_no_connection(exc: BaseException) -> str:
    reason = getattr(exc, "reason", exc)
    if isinstance(reason, ConnectionRefusedError):
        return "connection refused"
    if isinstance(reason, socket.gaierror):
        return f"its host is not known ({reason.strerror or reason})"
    if isinstance(reason, TimeoutError | socket.timeout):
        return f"no answer in {TIMEOUT_S:g} s"
    if isinstance(reason, ssl.SSLError):
        return f"TLS failed: {reason.reason or reason}"
    if isinstance(reason, http.client.HTTPException | ConnectionError):
        return f"the connection broke without an answer ({type(reason).__name__})"
    return str(getattr(reason, "strerror", None) or reason)


def _server_says(body: bytes) -> str:
    """The server's own message in an error body, or its first bytes."""
    from wirebench.verify.oplist import head, parse_json

    doc, _ = parse_json(body, "reply")
    error = doc.get("error") if isinstance(doc, dict) else None
    message = error.get("message") if isinstance(error, dict) else error
    if isinstance(message, str) and message.strip():
        return message.strip()[:200]
    return f"it begins {head(body)}"


def _list_models(base_url: str, headers: dict) -> _Listing:
    from wirebench.verify.oplist import head, parse_json

    url = base_url.rstrip("/") + "/models"
    try:
        request = urllib.request.Request(url, headers=headers)
    except ValueError as exc:
        return _Listing(stop=f"base_url {base_url!r} is no URL ({exc})")
    try:
        with urllib.request.urlopen(request, timeout=TIMEOUT_S) as response:
            body = response.read(1 << 22)
    except urllib.error.HTTPError as exc:
        said = _server_says(exc.read(1 << 16))
        if exc.code == 401:
            return _Listing(stop=f"{base_url} refused the key (HTTP 401: {said})")
        return _Listing(note=f"could not read the models {base_url} serves (HTTP {exc.code} "
                        f"to GET /models: {said}); its first call will tell")
    except (urllib.error.URLError, OSError, http.client.HTTPException) as exc:
        return _Listing(stop=f"{base_url} does not answer: {_why_no_connection(exc)}")
    doc, unreadable = parse_json(body, "model list")
    data = doc.get("data") if isinstance(doc, dict) else None
    if unreadable or not isinstance(data, list):
        shown = unreadable or f"no `data` list; it begins {head(body)}"
        return _Listing(note=f"{base_url} answered GET /models with what is no model list "
                        f"({shown}); its first call will tell")
    return _Listing(ids=[m["id"] for m in data if isinstance(m, dict)
                         and isinstance(m.get("id"), str)])


def check(name: str, entry: dict, listings: dict | None = None) -> tuple[str | None, str | None]:
    """(why the run must stop, a note), each None or one line naming the entry.
    `listings` caches GET /models by endpoint and headers: entries that share a server
    and key cost one request."""
    where = f"models.{name}"
    key_env = entry.get("api_key_env")
    key = os.environ.get(key_env, "") if key_env else "none"  # as openai_chat sends it
    if key_env and not key:
        return f"{where}: {key_env} is not set (its api_key_env)", None
    from wirebench import __version__

    headers = {"Authorization": f"Bearer {key}", "Accept": "application/json",
               "User-Agent": f"wirebench/{__version__} preflight",
               **{str(k): str(v) for k, v in (entry.get("headers") or {}).items()}}
    cache_key = (entry["base_url"], tuple(sorted(headers.items())))
    listings = {} if listings is None else listings
    if cache_key not in listings:
        listings[cache_key] = _list_models(entry["base_url"], headers)
    found = listings[cache_key]
    if found.stop or found.note:
        return (f"{where}: {found.stop}" if found.stop else None,
                f"{where}: {found.note}" if found.note else None)
    model = entry.get("model")
    if model in found.ids:
        return None, None
    served = ", ".join(found.ids[:LISTED]) or "none"
    more = f" and {len(found.ids) - LISTED} more" if len(found.ids) > LISTED else ""
    return f"{where}: model {model!r} not served by {entry['base_url']}; it serves: " \
           f"{served}{more}", None


def check_all(entries: dict[str, dict]) -> tuple[list[str], list[str]]:
    """Every online entry of `entries`, once: (why the run must stop, notes), redacted (a
    server's error may quote the key it was sent)."""
    from .secrets import redact

    stops, notes, listings = [], [], {}
    for name, entry in sorted(entries.items()):
        if entry.get("kind") not in ONLINE_KINDS:
            continue
        stop, note = check(name, entry, listings)
        stops += [redact(stop, entry)] if stop else []
        notes += [redact(note, entry)] if note else []
    return stops, notes
