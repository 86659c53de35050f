"""What an agent hands back to the harness."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class Answer:
    """An agent's answer. `ops` is None when it produced nothing usable.

    status: ok | no_answer (the agent ran but wrote nothing) | infra_error (it could not
    run: a crash, a timeout, an unreachable endpoint; not the model's fault).
    """

    ops: bytes | None
    status: str = "ok"
    error: str | None = None
    detail: dict = field(default_factory=dict)
