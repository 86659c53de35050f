"""bubblewrap around a command agent: it sees its inputs and nothing of ours.

Inside the sandbox the whole system is read-only, and these are hidden behind empty
folders: the home folders, the project, the corpus, `results/`, the host's `/tmp` and
the user's runtime folder (where the warm worker's socket lives). The Python installation
is shown again read-only, so agents written in Python run, and so are the paths the model
entry lists under `expose:`.

The agent's only writable place is `/tmp`, a fresh tmpfs no larger than the entry's
`max_output_bytes` (plus room for the file system's own blocks), so the cap is a total that
the kernel enforces. Its inputs are mounted read-only at `/tmp/inputs`, it works in
`/tmp/work`. It runs in its own pid namespace: when the command exits, or the step that
started it dies, every process it left behind dies with it.
"""

from __future__ import annotations

import functools
import os
import shutil
import subprocess
from pathlib import Path

INPUTS, WORK = "/tmp/inputs", "/tmp/work"
HIDDEN = ("/home", "/root", "/run/user", "/mnt", "/media", "/srv", "/var/tmp")
# tmpfs blocks and inodes cost a little over the bytes written.
SLACK_BYTES = 256 << 10


class Unavailable(OSError):
    """No working bubblewrap here."""


@functools.cache
def bwrap() -> str | None:
    """The bwrap binary, if it can make a sandbox on this machine (unprivileged user
    namespaces, or root)."""
    found = shutil.which("bwrap")
    if not found:
        return None
    probe = subprocess.run([found, "--ro-bind", "/", "/", "--unshare-pid", "--dev", "/dev",
                            "--proc", "/proc", "true"], capture_output=True, timeout=30)
    return found if probe.returncode == 0 else None


def require() -> str:
    found = bwrap()
    if not found:
        raise Unavailable(
            "command agents run inside bubblewrap, and no working `bwrap` was found "
            "(Debian/Ubuntu: apt-get install bubblewrap; it also needs unprivileged user "
            "namespaces, or root). Set `unsafe_no_sandbox: true` to run agents unconfined "
            "on purpose")
    return found


def command(argv: list[str], *, inputs: Path, hide: list, expose: list, network: bool,
            size: int) -> list[str]:
    """The bwrap command line that runs argv confined (cwd /tmp/work)."""
    from wirebench.runtime.confine import python_reads

    line = [require(), "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc",
            "--unshare-pid", "--unshare-ipc", "--unshare-uts", "--unshare-cgroup-try",
            "--die-with-parent", "--new-session"]
    if not network:
        line.append("--unshare-net")
    # Mounts stack in order: cover first, then show again what may be seen.
    line += ["--size", str(size + SLACK_BYTES), "--tmpfs", "/tmp"]
    for path in _hidden(hide):
        line += ["--tmpfs", path]
    for path in sorted({*python_reads(), *map(str, expose)}):
        if os.path.exists(path):
            line += ["--ro-bind", path, path]
    line += ["--ro-bind", str(inputs), INPUTS, "--dir", WORK, "--chdir", WORK]
    return [*line, "--", *argv]


def _hidden(extra: list) -> list[str]:
    """Folders to cover, outermost first (a folder inside one already covered is covered)."""
    places = [*HIDDEN, *(str(Path(p).resolve()) for p in extra)]
    runtime = os.environ.get("XDG_RUNTIME_DIR")
    if runtime:
        places.append(runtime)
    kept: list[str] = []
    for place in sorted(set(places), key=lambda p: (p.count("/"), p)):
        if place in ("/", "/tmp") or not os.path.isdir(place):
            continue
        if not any(place == k or place.startswith(k.rstrip("/") + "/") for k in kept):
            kept.append(place)
    return kept



def unseen_paths(command: str, expose: list) -> list[str]:
    """Files a command names that its sandbox will not show: a relative path (the agent
    starts in an empty folder of its own) or one under a hidden folder that `expose:` does
    not list. Each would make every pair of the entry an infra error."""
    import shlex

    try:
        words = shlex.split(command)
    except ValueError:
        return []
    shown = [Path(p).resolve() for p in expose]
    unseen = []
    for word in words:
        if not ("/" in word or word.endswith((".py", ".sh"))) or not os.path.exists(word):
            continue
        path = Path(word).resolve()
        exposed = any(path == s or s in path.parents for s in shown)
        if not os.path.isabs(word) or (not exposed and _is_hidden(path)):
            unseen.append(word)
    return unseen


def _is_hidden(path: Path) -> bool:
    from wirebench.runtime.confine import python_reads

    shown = [Path(p) for p in python_reads()]
    if any(path == s or s in path.parents for s in shown):
        return False
    covered = [Path(p) for p in _hidden([Path.cwd()])]
    return any(path == c or c in path.parents for c in covered)
