"""Secrets come only from the environment variables a model entry names, and must never
reach an artifact. Anything an agent echoes back (stderr, an error message, even its
answer) passes through `redact` before it is written."""

from __future__ import annotations

import os

MIN_SECRET_LEN = 6  # shorter values ("1", "true") would redact ordinary text


def secret_names(spec: dict) -> list[str]:
    names = list(spec.get("env", []))
    if spec.get("api_key_env"):
        names.append(spec["api_key_env"])
    return names


def redact(text: str, spec: dict) -> str:
    for name in secret_names(spec):
        value = os.environ.get(name, "")
        if len(value) >= MIN_SECRET_LEN:
            text = text.replace(value, f"<${name}>")
    return text
