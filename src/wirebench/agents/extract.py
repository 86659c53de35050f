"""Find the op-list in an agent's reply: bare JSON, a ```json fence, or JSON in prose."""

from __future__ import annotations

import re

from wirebench.verify.oplist import SHAPE

FENCE = re.compile(r"```(?:json|JSON)?\s*\n(.*?)```", re.DOTALL)
# A reply is the model's text, whatever it holds: however deep or long, reading it must
# end in an answer or in none, never in an error of ours. The scan for a JSON object in
# prose tries this many opening braces at most. Here the JSON is only found (verify/oplist.py's
# SHAPE reads numbers as text): an op-list with a bad number in it is still the answer, and
# the validate step refuses it with its reason.
MAX_STARTS = 200


def _is_oplist(doc) -> bool:
    return isinstance(doc, dict) and isinstance(doc.get("ops"), list)


def extract_oplist(text: str) -> str | None:
    """The op-list's JSON text, or None when the reply holds none.

    Tried in order: the whole reply, each fenced block, then the first balanced {...}
    that parses and has an `ops` list. Prose around it is dropped.
    """
    stripped = text.strip()
    candidates = [stripped, *(m.group(1).strip() for m in FENCE.finditer(text))]
    for cand in candidates:
        try:
            if _is_oplist(SHAPE.decode(cand)):
                return cand
        except (ValueError, RecursionError):
            continue
    starts = (i for i, ch in enumerate(text) if ch == "{")
    for _, start in zip(range(MAX_STARTS), starts, strict=False):
        try:
            doc, end = SHAPE.raw_decode(text, start)
        except (ValueError, RecursionError):
            continue
        if _is_oplist(doc):
            return text[start:end]
    return None
