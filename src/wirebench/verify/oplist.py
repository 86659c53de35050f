"""Reading an agent's answer: an op-list, or a refusal to draw one."""

from __future__ import annotations

import json
from pathlib import Path

# Deeper than any op-list akcli takes (an op's fields nest four or five levels), and far
# short of the recursion that would turn a model's text into a crash of the step.
MAX_DEPTH = 32
# An op-list past these is no answer anyone can draw in a pair's time: refused at once,
# with the limit named, before akcli spends minutes on it (2,000 resistors took 103 s).
MAX_BYTES = 4 << 20
MAX_OPS = 5000


def _depth(doc) -> int:
    """How deeply lists and objects nest, counted without recursion."""
    deepest, stack = 0, [(doc, 1)]
    while stack:
        node, level = stack.pop()
        if isinstance(node, dict | list):
            deepest = max(deepest, level)
            stack.extend((v, level + 1) for v in (node.values() if isinstance(node, dict)
                                                  else node))
    return deepest


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
    try:
        doc = json.loads(raw)
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        return None, f"unreadable op-list: {exc}"
    except RecursionError:
        return None, f"unreadable op-list: nested too deeply (at most {MAX_DEPTH} levels)"
    if not isinstance(doc, dict):
        return None, f"unreadable op-list: top level is {type(doc).__name__}, not an object"
    if _depth(doc) > MAX_DEPTH:
        return None, f"unreadable op-list: nested too deeply (at most {MAX_DEPTH} levels)"
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
