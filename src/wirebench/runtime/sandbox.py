"""bubblewrap around a command agent: it sees an allow-list of the host and nothing else.

The sandbox is built up from an empty root, never as "the host minus a list": the
system's program and library folders and `/etc`, read-only; the Python installation, so
that agents written in Python run; the paths the model entry lists under `expose:` (and
its `files:`); the agent's own inputs at `/tmp/inputs`. Nothing else of the host exists
in it: no home folder, project, corpus, `results/`, other checkout or private split,
wherever those lie (a list of places to hide always forgets one).

The only writable place is `/tmp`, a fresh tmpfs no larger than the entry's
`max_output_bytes` (plus room for the file system's own blocks), so the cap is a total
that the kernel enforces; the root and `/dev` are remounted read-only. The agent works in
`/tmp/work`. It runs with no capabilities: run by root, the launcher keeps only
CAP_SETUID/CAP_SETGID to start the agent's command as AGENT_UID (nobody), so that root's
ownership of the host's files means nothing inside either. It has its own
pid namespace: when the command exits, or the step that started it dies, every process it
left behind dies with it.
"""

from __future__ import annotations

import functools
import os
import shutil
import subprocess
from pathlib import Path

INPUTS, WORK = "/tmp/inputs", "/tmp/work"
# What every program needs from the host: its binaries, libraries and configuration. On a
# merged-/usr system the top-level folders are symlinks, and are made again as such.
SYSTEM = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/etc")
# Who a command agent runs as when wirebench runs as root (nobody on Debian).
AGENT_UID = 65534
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


def command(argv: list[str], *, inputs: Path, expose: list, network: bool,
            size: int) -> list[str]:
    """The bwrap command line that runs argv confined (cwd /tmp/work). Run by root, argv
    must drop to AGENT_UID itself (the command agent's launcher does): it starts with
    CAP_SETUID and CAP_SETGID only."""
    line = [require(), "--unshare-pid", "--unshare-ipc", "--unshare-uts",
            "--unshare-cgroup-try", "--die-with-parent", "--new-session",
            "--cap-drop", "ALL"]
    if os.geteuid() == 0:
        line += ["--cap-add", "CAP_SETUID", "--cap-add", "CAP_SETGID"]
    if not network:
        line.append("--unshare-net")
    for path in SYSTEM:
        if os.path.islink(path):
            line += ["--symlink", os.readlink(path), path]
        elif os.path.isdir(path):
            line += ["--ro-bind", path, path]
    line += ["--proc", "/proc", "--dev", "/dev",
             # The one writable place, and all of it counts against the output cap.
             "--perms", "01777", "--size", str(size + SLACK_BYTES), "--tmpfs", "/tmp"]
    made: set[str] = {"/", "/tmp"}
    for path in shown(expose, network=network):
        # bwrap would copy the host's modes onto the folders it makes on the way (a 0700
        # /root, pytest's 0700 temp folders), which the agent's uid could not enter.
        for parent in reversed(Path(path).parents):
            if str(parent) not in made:
                made.add(str(parent))
                line += ["--perms", "0755", "--dir", str(parent)]
        line += ["--ro-bind", path, path]
    line += ["--ro-bind", str(inputs), INPUTS, "--perms", "01777", "--dir", WORK,
             "--remount-ro", "/", "--remount-ro", "/dev", "--chdir", WORK]
    return [*line, "--", *argv]


def shown(expose: list, *, network: bool = False) -> list[str]:
    """The host paths shown read-only besides the system folders, outermost first, none
    inside another (bwrap could not make a mount point inside a read-only bind)."""
    from wirebench.runtime.confine import python_reads

    wanted = {*python_reads(), *(str(Path(p).resolve()) for p in expose)}
    resolver = "/etc/resolv.conf"
    if network and os.path.islink(resolver):  # often a link into /run
        wanted.add(os.path.realpath(resolver))
    kept: list[str] = []
    for path in sorted(wanted, key=lambda p: (p.count("/"), p)):
        if not os.path.exists(path) or path in ("/", "/tmp"):
            continue
        if not any(_under(Path(path), Path(k)) for k in (*_system_real(), *kept)):
            kept.append(path)
    return kept


def _system_real() -> list[str]:
    return [os.path.realpath(p) for p in SYSTEM if os.path.exists(p)]


def _under(path: Path, folder: Path) -> bool:
    return path == folder or folder in path.parents


def unseen_paths(command: str, expose: list) -> list[str]:
    """Files a command names that its sandbox will not show: a relative path (the agent
    starts in an empty folder of its own) or one under a hidden folder that `expose:` does
    not list. Each would make every pair of the entry an infra error."""
    import shlex

    try:
        words = shlex.split(command)
    except ValueError:
        return []
    exposed_paths = [Path(p).resolve() for p in expose]
    unseen = []
    for word in words:
        # Code the command runs: a script, or an executable named by its path. Other files
        # it names (data, or an answer key it should never see) are its own business.
        program = word.endswith((".py", ".sh")) or (
            "/" in word and os.path.isfile(word) and os.access(word, os.X_OK))
        if not program or not os.path.exists(word):
            continue
        path = Path(word).resolve()
        exposed = any(_under(path, s) for s in exposed_paths)
        if not os.path.isabs(word) or (not exposed and _is_hidden(path)):
            unseen.append(word)
    return unseen


def _is_hidden(path: Path) -> bool:
    """Not shown in the sandbox: outside the system folders and the Python installation.
    /dev and /proc count as hidden: the sandbox has its own, without the host's files
    (a script in /dev/shm is not there)."""
    return not any(_under(path, Path(p)) for p in (*_system_real(), *shown([])))
