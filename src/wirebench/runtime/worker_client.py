"""The step client's half of the warm worker (wirebench/worker.py is the server).

A `wirebench step` job hands its argv to the worker over a Unix socket and prints the
reply; when no worker answers, it starts one and runs the step itself. The socket's name
is a hash of the interpreter and of the wirebench and akcli files (sizes and mtimes), so
after an edit or an upgrade steps talk to a fresh worker and the stale one idles out.
Set WIREBENCH_WORKER=0 to run every step in its own process.
"""

from __future__ import annotations

import marshal
import os
import struct
import sys
import zlib
from _socket import AF_UNIX, SOCK_STREAM, socket

# This module is on every step's start-up path, so it imports only what is nearly free:
# the C `_socket` (the `socket` module pulls in enum and selectors, 7 ms), no pathlib
# (15 ms here), no json, hashlib or contextlib. Requests travel as marshal data between
# two processes of the same interpreter, over a socket in a 0700 folder.

# The worker keeps only what akcli and Python need; API keys in the user's shell never
# reach this long-lived process. The variables that change akcli's answers (KiCad's config
# and library folders, akcli's own switches) are kept too, and are part of the socket's
# name: a step never talks to a worker that would answer differently than it would alone.
KEPT_ENV = ("PATH", "HOME", "LANG", "LC_ALL", "TMPDIR", "PYTHONPATH", "VIRTUAL_ENV",
            "XDG_CONFIG_HOME", "XDG_CACHE_HOME", "WIREBENCH_SYMBOL_CACHE",
            "WIREBENCH_WARM_SYMBOLS")  # the libraries to parse before forking (symbol_cache)
KEPT_PREFIXES = ("AKCLI_", "KICAD")


def kept_env() -> dict:
    return {k: v for k, v in os.environ.items() if k in KEPT_ENV or k.startswith(KEPT_PREFIXES)}


def _code_stamp() -> str:
    """Every wirebench module, and akcli's __init__ (an upgrade rewrites it)."""
    files = []
    package = os.path.dirname(os.path.dirname(__file__))  # all of wirebench, not runtime/
    for folder, subfolders, names in os.walk(package):
        # Code, schemas and data files alike: each can change a step's answer.
        subfolders[:] = [d for d in subfolders if d != "__pycache__"]
        files.extend(os.path.join(folder, n) for n in names if not n.endswith(".pyc"))
    # The first akcli package on sys.path is the one an import finds; importlib.util
    # would cost this path 6 ms more (it imports contextlib).
    for entry in sys.path:
        init = os.path.join(entry or ".", "akcli", "__init__.py")
        if os.path.isfile(init):
            files.append(init)
            break
    stamp = sys.prefix.encode()  # the environment: a venv has its own akcli
    # The simulator a worker loads: a step must not answer with another ngspice than the
    # one the run hashed into simulate's params.
    stamp += repr(sorted((k, v) for k, v in kept_env().items()
                         if k.startswith((*KEPT_PREFIXES, "XDG_", "WIREBENCH_")))).encode()
    for path in sorted(files):
        st = os.stat(path)
        stamp += f"|{path}:{st.st_size}:{st.st_mtime_ns}".encode()
    # A cache key, not a security boundary: two 32-bit checksums are plenty.
    return f"{zlib.crc32(stamp):08x}{zlib.adler32(stamp):08x}"


def socket_path() -> str | None:
    """The worker's socket, in a folder that only this user can enter; None (no worker:
    steps run in their own process) when that folder is someone else's, or a symlink, or
    open to others: on a shared /tmp another user could plant it to swallow steps."""
    from wirebench.runtime.user_folders import own_folder

    folder = own_folder(os.environ.get("XDG_RUNTIME_DIR") or "/tmp")
    return None if folder is None else os.path.join(folder, f"{_code_stamp()}.sock")


def tcp_file(path: str) -> str:
    """Where the worker on socket `path` writes its TCP port and token, for job shells."""
    return path + ".tcp"


def may_serve(argv: list[str], cwd: str = ".") -> bool:
    """Steps the worker may run: all but agents that need the environment (API keys), or
    may run for minutes. The server checks this again, on the agent entry itself."""
    if "-h" in argv or "--help" in argv:
        return False
    if argv[:1] == ["batch"] and "--spec" in argv[:-1]:
        steps = batch_steps(os.path.join(cwd, argv[argv.index("--spec") + 1]))
        return steps is not None and all(may_serve(a) for a in steps)
    if argv[:1] == ["generate"]:
        from wirebench.agents import OFFLINE_KINDS

        kind = argv[argv.index("--kind") + 1] if "--kind" in argv[:-1] else None
        return kind in OFFLINE_KINDS
    return True


def batch_steps(spec_path: str) -> list[list[str]] | None:
    """The argvs a batch's spec would run (steps/batch.py), each one the worker must be
    allowed to run as if it came alone; None if the spec cannot be read."""
    import json

    try:
        with open(spec_path, encoding="utf-8") as fh:
            return [pair["argv"] for pair in json.load(fh)["pairs"]]
    except (OSError, ValueError, KeyError, TypeError):
        return None  # the step reports it, in a process of its own


def send(sock: socket, payload: dict) -> None:
    data = marshal.dumps(payload)
    sock.sendall(struct.pack("!I", len(data)) + data)


def recv(sock: socket) -> dict | None:
    head = _recv_exact(sock, 4)
    if head is None:
        return None
    body = _recv_exact(sock, struct.unpack("!I", head)[0])
    return None if body is None else marshal.loads(body)


def _recv_exact(sock: socket, n: int) -> bytes | None:
    chunks, got = [], 0
    while got < n:
        chunk = sock.recv(min(1 << 16, n - got))
        if not chunk:
            return None
        chunks.append(chunk)
        got += len(chunk)
    return b"".join(chunks)


def worker_path() -> str | None:
    """The socket of the worker steps should use, or None: no worker (WIREBENCH_WORKER=0,
    or no safe folder for one)."""
    if os.environ.get("WIREBENCH_WORKER", "1") == "0":
        return None
    return socket_path()


# How long a step waits for a server to take its request: past this (every server busy,
# or held by someone else's connections), it runs on its own, as without a worker.
READY_SECONDS = 5


def request_token(path: str) -> bytes | None:
    """The token every request to the worker on socket `path` begins with, from the
    worker's 0600 file (worker.py), or None when there is no worker to ask."""
    try:
        with open(tcp_file(path), "rb") as fh:
            fields = fh.read(200).split()
    except OSError:
        return None
    return fields[1] if len(fields) == 3 else None


def call(argv: list[str]) -> dict | None:
    """Run a step in the warm worker: {rc, stdout, stderr}, or None to run it locally."""
    path = worker_path()
    if path is None:
        return None
    token = request_token(path)
    if token is None:
        _spawn(path)
        return None
    try:
        sock = socket(AF_UNIX, SOCK_STREAM)  # the C type: no context manager
        try:
            sock.connect(path)
            data = marshal.dumps({"argv": argv, "cwd": os.getcwd()})
            sock.sendall(token + struct.pack("!I", len(data)) + data)
            sock.settimeout(READY_SECONDS)
            first = recv(sock)
            if first is None or not first.get("ready"):
                return first  # a refusal is a reply; nothing means: run it here
            sock.sendall(b"g")
            sock.settimeout(None)  # the step's own limits bound it from here
            return recv(sock)
        finally:
            sock.close()
    except TimeoutError:
        return None  # a worker that is there but took no request: never start another
    except OSError:
        _spawn(path)
        return None


def _spawn(path: str) -> None:
    import subprocess

    env = kept_env()
    subprocess.Popen(
        [sys.executable, "-m", "wirebench.worker", path],
        env=env, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL, start_new_session=True, close_fds=True, cwd="/",
    )
