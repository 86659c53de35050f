"""What the harness hands an agent for one turn, and what the agent hands back."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path


@dataclass
class TurnContext:
    """One turn of one pair. `history` holds the earlier turns of this pair as
    (answer text, the errors the harness found in it), oldest first."""

    model: str
    task: object  # wirebench.tasks.Task
    sample: int
    turn: int
    prompt_path: Path | None
    skills_dir: Path | None
    history: list[tuple[str, str]] = field(default_factory=list)
    # The pair's tools (steps/tools.py's Toolbox) for an entry with `tools: true`.
    tools: object | None = None
    # The symbol libraries the task draws with (a command entry's MCP server needs them).
    symbols: list[str] = field(default_factory=list)

    @property
    def feedback(self) -> str | None:
        return self.history[-1][1] if self.history else None


@dataclass
class Answer:
    """One attempt's result. `ops` is None when it produced nothing usable.

    status: ok | no_answer (the agent ran but gave no answer) | infra_error (it could not
    run: crash, timeout, rate limit, server error, no connection; not the model's fault).
    `retry_after` is the server's Retry-After hint in seconds, when it gave one;
    `retryable` is False for an infra_error that a retry cannot fix (a rejected API key).
    `reply` is the raw text the model answered with, for the next turn's conversation.
    """

    ops: bytes | None
    status: str = "ok"
    error: str | None = None
    retry_after: float | None = None
    retryable: bool = True
    reply: str | None = None
    detail: dict = field(default_factory=dict)
