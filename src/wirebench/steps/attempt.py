"""Which attempt at a pair's answer is the current one.

Snakemake killed with -9 leaves its jobs running: the old generate step, and its agent,
would later overwrite the answer that the rerun wrote and scored. So each generate step
claims its pair when it starts, under a lock in the pair's folder, and stops the attempt
it replaces; and it renames its answer into place only while it still holds the claim.
"""

from __future__ import annotations

import contextlib
from pathlib import Path

from wirebench.evidence.files import write_bytes_atomic


class Superseded(RuntimeError):
    """A newer attempt at this pair started after this one: this one's answer is dropped."""


def _owner_file(folder: Path) -> Path:
    return folder / ".generate.owner"


def _process_start(pid: int) -> str | None:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[19]
    except (OSError, IndexError):
        return None


@contextlib.contextmanager
def _pair_lock(folder: Path):
    """The pair's folder itself, locked: no lock file to make and delete per pair."""
    import fcntl
    import os

    folder.mkdir(parents=True, exist_ok=True)
    fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)


def claim(folder: Path) -> str:
    """Make this attempt the pair's current one. An earlier attempt still running (its
    Snakemake was killed with -9, and it lived on) is stopped, agent and all: it could
    only bill, and its answer would be dropped anyway."""
    import json
    import os
    import signal
    import uuid

    token = uuid.uuid4().hex
    with _pair_lock(folder):
        with contextlib.suppress(OSError, ValueError, KeyError, TypeError):
            old = json.loads(_owner_file(folder).read_text())
            if old["pid"] != os.getpid() and _process_start(old["pid"]) == old["start"]:
                os.kill(old["pid"], signal.SIGKILL)
        write_bytes_atomic(_owner_file(folder), json.dumps(
            {"token": token, "pid": os.getpid(), "start": _process_start(os.getpid())}).encode())
    return token


@contextlib.contextmanager
def still_current(folder: Path, token: str):
    """Hold the pair while this attempt writes its results, if it is still the current one."""
    import json

    with _pair_lock(folder):
        try:
            current = json.loads(_owner_file(folder).read_text()).get("token")
        except (OSError, ValueError):
            current = None
        if current != token:
            raise Superseded(f"{folder}: a newer attempt at this pair took over; this "
                             "attempt's answer is dropped")
        yield
        # Done: the pair's folder holds its results and nothing of the bookkeeping.
        _owner_file(folder).unlink(missing_ok=True)
