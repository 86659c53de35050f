"""Reading an agent's answer: an op-list, or a refusal to draw one.

Every JSON text an agent controls (an answer file, a reply, a tool call's arguments) is
read here, by `parse_json`, and nowhere else: whatever the text holds, reading it ends in
a document or in a reason, never in an exception of ours.
"""

from __future__ import annotations

import json
import math
import re
from pathlib import Path

# Deeper than any op-list akcli takes (an op's fields nest four or five levels), and far
# short of the recursion that would turn a model's text into a crash of the step.
MAX_DEPTH = 32
# An op-list past these is no answer anyone can draw in a pair's time: refused at once,
# with the limit named, before akcli spends minutes on it (2,000 resistors took 103 s).
MAX_BYTES = 4 << 20
MAX_OPS = 5000
# Python refuses to read an integer longer than this (sys.get_int_max_str_digits, whose
# default it is); a fixed figure, so that a verdict does not hang on how Python was set.
MAX_DIGITS = 4300
# How much of an unreadable answer its reason shows.
HEAD_BYTES = 60


class Unreadable(ValueError):
    """JSON that parses but is no document: NaN, an infinite or an over-long number."""


def _int(text: str) -> int:
    digits = len(text.lstrip("-"))
    if digits > MAX_DIGITS:
        raise Unreadable(f"an integer of {digits} digits (at most {MAX_DIGITS} are read)")
    return int(text)


def _float(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        shown = text if len(text) <= 40 else f"{text[:20]}...{text[-10:]}"
        raise Unreadable(f"the number {shown} is out of range (it reads as infinity)")
    return value


def _constant(name: str):
    raise Unreadable(f"{name} is not a JSON number (JSON has no NaN or Infinity)")


STRICT = {"parse_int": _int, "parse_float": _float, "parse_constant": _constant}
# For finding where a JSON object sits in a reply (agents/extract.py), not for reading it:
# numbers stay text, so an answer with a bad number is still found, and then refused here
# with its reason.
SHAPE = json.JSONDecoder(parse_int=str, parse_float=str, parse_constant=str)


# A lone surrogate comes from an escape, from the bytes UTF-8 would give one (json reads
# them, "surrogatepass"), or, in a str, from the text itself: text with none of these needs
# no closer look.
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")
_SURROGATE_BYTES = re.compile(rb"\\u[dD][89a-fA-F]|\xed[\xa0-\xbf]")


def _utf8(text: str) -> bool:
    try:
        text.encode()
    except UnicodeEncodeError:
        return False
    return True


def _flaw(doc, raw: bytes | str, max_depth: int) -> str | None:
    """What makes a parsed document no document: nesting past max_depth (counted level by
    level, without recursion), or a string holding a lone surrogate (`"\\ud800"`), which
    no UTF-8 file can hold, so that writing any verdict that quotes it would fail."""
    frontier, level = [doc] if isinstance(doc, dict | list) else [], 1
    while frontier:
        if level > max_depth:
            return f"nested too deeply (at most {max_depth} levels)"
        frontier = [v for node in frontier
                    for v in (node.values() if isinstance(node, dict) else node)
                    if isinstance(v, dict | list)]
        level += 1
    if (_SURROGATE_BYTES.search(raw) if isinstance(raw, bytes)
            else _SURROGATE_ESCAPE.search(raw) or not _utf8(raw)):
        try:
            json.dumps(doc, ensure_ascii=False).encode()
        except UnicodeEncodeError as exc:
            return (f"a string holds a lone surrogate ({exc.object[exc.start:exc.end]!r}), "
                    "which is not Unicode text")
    return None


def head(raw: bytes | str) -> str:
    """The first bytes of an answer, as a reason quotes them."""
    data = raw.encode(errors="surrogatepass") if isinstance(raw, str) else raw
    return repr(data[:HEAD_BYTES]) + ("..." if len(data) > HEAD_BYTES else "")


def parse_json(raw: bytes | str, what: str = "op-list",
               max_depth: int = MAX_DEPTH) -> tuple[object, str | None]:
    """(document, None), or (None, "unreadable <what>: <the problem>; it begins <bytes>").

    Strict: NaN and Infinity, a number that reads as infinity, an integer past
    MAX_DIGITS, nesting past max_depth, a lone surrogate, text that is not UTF-8 or not
    JSON: each is a reason, never an exception."""
    try:
        doc = json.loads(raw, **STRICT)
        problem = _flaw(doc, raw, max_depth)
    except RecursionError:
        problem = f"nested too deeply (at most {max_depth} levels)"
    except ValueError as exc:  # JSONDecodeError, UnicodeDecodeError, Unreadable, int limit
        problem = str(exc)
    if problem is None:
        return doc, None
    return None, f"unreadable {what}: {problem}; it begins {head(raw)}"


def load_oplist(ops: Path, max_bytes: int | None = MAX_BYTES,
                max_ops: int | None = MAX_OPS) -> tuple[dict | None, str | None]:
    """(op-list, None) or (None, why it is unreadable or over a limit). None for a limit:
    the validate step has enforced it already."""
    with open(ops, "rb") as fh:
        raw = fh.read(-1 if max_bytes is None else max_bytes + 1)
    if max_bytes is not None and len(raw) > max_bytes:
        return None, f"OPLIST_TOO_LARGE: the op-list is over {max_bytes} bytes (max_oplist_bytes)"
    if not raw.strip():
        return None, "unreadable op-list: the agent wrote no answer"
    doc, unreadable = parse_json(raw)
    if unreadable:
        return None, unreadable
    if not isinstance(doc, dict):
        return None, f"unreadable op-list: top level is {type(doc).__name__}, not an object"
    if max_ops is not None and isinstance(doc.get("ops"), list) and len(doc["ops"]) > max_ops:
        return None, (f"OPLIST_TOO_LARGE: {len(doc['ops'])} ops, over the limit of {max_ops} "
                      "(max_ops)")
    return doc, None


REFUSAL_KINDS = ("stop-condition", "human-review-required")


def read_refusal(doc: dict) -> tuple[dict | None, str | None]:
    """An agent may decline instead of drawing (skills doc, "Declining"):
    {"refusal": {"kind": "stop-condition" | "human-review-required", "reason": "..."}}."""
    refusal = doc.get("refusal")
    if (isinstance(refusal, dict) and refusal.get("kind") in REFUSAL_KINDS
            and isinstance(refusal.get("reason"), str) and refusal["reason"].strip()):
        return {"kind": refusal["kind"], "reason": refusal["reason"].strip()}, None
    return None, ("REFUSAL_MALFORMED: a refusal is {\"refusal\": {\"kind\": one of "
                  f"{list(REFUSAL_KINDS)}, \"reason\": \"...\"}}}}")
