"""Agents: the columns of the matrix. Each kind turns a task into an answer (op-list bytes).

A kind is a module here with one function, `answer(spec, task, sample) -> Answer`.
The registry below is the single list of kinds; the config schema's enum mirrors it and
a test keeps the two equal.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from importlib import import_module

KINDS = {
    "reference": "wirebench.agents.reference",
    "ops_dir": "wirebench.agents.ops_dir",
}


@dataclass
class Answer:
    """What an agent produced. `ops` is None when it produced nothing usable."""

    ops: bytes | None
    status: str = "ok"  # ok | no_answer | infra_error
    error: str | None = None
    detail: dict = field(default_factory=dict)


class UnknownAgentKind(ValueError):
    pass


def answer(spec: dict, task, sample: int) -> Answer:
    kind = spec.get("kind")
    if kind not in KINDS:
        raise UnknownAgentKind(f"unknown agent kind {kind!r}; known kinds: {sorted(KINDS)}")
    return import_module(KINDS[kind]).answer(spec, task, sample)
