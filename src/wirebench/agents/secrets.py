"""Secrets come only from the environment variables that model entries name, and must
never reach an artifact. Anything an agent echoes back (stderr, an error message, even its
answer) passes through `redact` before it is written.

`redact` hides the value of every secret that any model entry of the run names (the
workflow lists them all in WIREBENCH_SECRET_NAMES), not only the entry's own: an agent
that got hold of another provider's key must not be able to publish it either. It works on
the whole text, before anything is cut to a tail, and also finds a value in the spellings
that JSON and URLs give it.
"""

from __future__ import annotations

import json
import os
from urllib.parse import quote

MIN_SECRET_LEN = 6  # shorter values ("1", "true") would redact ordinary text
ALL_NAMES_VAR = "WIREBENCH_SECRET_NAMES"


def secret_names(spec: dict) -> list[str]:
    names = list(spec.get("env", []))
    if spec.get("api_key_env"):
        names.append(spec["api_key_env"])
    return names


def _spellings(value: str) -> set[str]:
    return {value, json.dumps(value)[1:-1], json.dumps(value, ensure_ascii=False)[1:-1],
            quote(value, safe="")}


def redact(text: str, spec: dict) -> str:
    names = {*secret_names(spec), *filter(None, os.environ.get(ALL_NAMES_VAR, "").split(","))}
    for name in sorted(names):
        value = os.environ.get(name, "")
        if len(value) < MIN_SECRET_LEN:
            continue
        # Longest spelling first, so a shorter one never splits a longer one.
        for spelling in sorted(_spellings(value), key=len, reverse=True):
            text = text.replace(spelling, f"<${name}>")
    return text
