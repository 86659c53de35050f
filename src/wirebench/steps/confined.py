"""How the akcli steps (validate, apply, nets, simulate) run: each in a forked child that
the kernel confines to the pair's folder (runtime/confine.py), within a wall-clock limit.

A step past its limit, or one that crashed on what the agent wrote, is a verdict on that
pair, never a stopped run: the step's own `give_up` writes its document with the reason
("apply exceeded 60 s", "apply crashed: ... ValueError: ..."), and the pair is scored on
that, while the other pairs of its batch go on. Both the Snakemake rules (through
steps/dispatch.py) and the one-process path (steps/pair.py) come through here.
"""

from __future__ import annotations

from pathlib import Path

from wirebench.evidence.files import read_json

DEFAULT_TIMEOUT_S = 120.0


def run(step: str, work, *, out: Path, reads=(), timeout: float | None = None,
        give_up) -> dict:
    """work() confined, writing only in out's folder; give_up(reason) past the limit."""
    from wirebench.runtime import akcli_backend, confine

    akcli_backend.warm_up()  # once a process: the child inherits akcli fully loaded
    try:
        confine.run(work, write=Path(out).parent, read=list(reads),
                    timeout=DEFAULT_TIMEOUT_S if timeout is None else timeout)
    except confine.StepTimedOut as exc:
        give_up(f"{step} {exc}")
    except confine.StepCrashed as exc:
        give_up(f"{step} crashed: {exc}")
    return read_json(out)
