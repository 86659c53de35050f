"""A warm worker for step commands, so a Snakemake job does not pay for imports.

Each `wirebench step ...` job is a fresh interpreter. Importing akcli costs 0.18 s, more
than most steps' work, and a matrix has thousands of step jobs. So the first step
starts a worker that has wirebench and akcli imported, and later steps hand it their
argv over a Unix socket. The worker forks one child per request: the child has its own
cwd, stdout and globals, so concurrent steps cannot see each other, and any state akcli
leaves behind dies with the child.

The worker is an optimisation, never a dependency: when there is none, or it does not
answer, the step runs in its own process with the same code. The socket's name is a hash
of the interpreter and of the wirebench and akcli files (sizes and mtimes), so after an
edit or an upgrade steps talk to a fresh worker and the stale one idles out.
Set WIREBENCH_WORKER=0 to run every step in its own process.
"""

from __future__ import annotations

import hashlib
import json
import os
import socket
import struct
import subprocess
import sys
from importlib.util import find_spec
from pathlib import Path

IDLE_SECONDS = 30
# The worker keeps only what akcli and Python need; API keys in the user's shell never
# reach this long-lived process.
KEPT_ENV = ("PATH", "HOME", "LANG", "LC_ALL", "TMPDIR", "PYTHONPATH", "VIRTUAL_ENV")


def _code_stamp() -> str:
    h = hashlib.sha256(sys.executable.encode())
    for pkg in ("wirebench", "akcli"):
        spec = find_spec(pkg)
        root = Path(spec.origin).parent if spec and spec.origin else None
        if root is None:
            continue
        for path in sorted(root.glob("*.py")) + sorted(root.glob("*/*.py")):
            st = path.stat()
            h.update(f"{path}:{st.st_size}:{st.st_mtime_ns}".encode())
    return h.hexdigest()[:16]


def _runtime_dir() -> Path:
    base = os.environ.get("XDG_RUNTIME_DIR") or "/tmp"
    path = Path(base) / f"wirebench-{os.getuid()}"
    path.mkdir(mode=0o700, exist_ok=True)
    return path


def socket_path() -> Path:
    return _runtime_dir() / f"{_code_stamp()}.sock"


def _send(sock: socket.socket, payload: dict) -> None:
    data = json.dumps(payload).encode()
    sock.sendall(struct.pack("!I", len(data)) + data)


def _recv(sock: socket.socket) -> dict | None:
    head = _recv_exact(sock, 4)
    if head is None:
        return None
    body = _recv_exact(sock, struct.unpack("!I", head)[0])
    return None if body is None else json.loads(body)


def _recv_exact(sock: socket.socket, n: int) -> bytes | None:
    chunks, got = [], 0
    while got < n:
        chunk = sock.recv(min(1 << 16, n - got))
        if not chunk:
            return None
        chunks.append(chunk)
        got += len(chunk)
    return b"".join(chunks)


def call(argv: list[str]) -> dict | None:
    """Run a step in the warm worker: {rc, stdout, stderr}, or None to run it locally."""
    if os.environ.get("WIREBENCH_WORKER", "1") == "0":
        return None
    path = socket_path()
    try:
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
            sock.connect(str(path))
            _send(sock, {"argv": argv, "cwd": os.getcwd()})
            return _recv(sock)
    except OSError:
        _spawn(path)
        return None


def _spawn(path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if k in KEPT_ENV}
    subprocess.Popen(
        [sys.executable, "-m", "wirebench.worker", str(path)],
        env=env, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL, start_new_session=True, close_fds=True, cwd="/",
    )


def _serve_one(conn: socket.socket) -> None:
    """In a forked child: run one step and reply. Never returns."""
    import contextlib
    import io

    from .cli import run_step

    rc = 70
    out, err = io.StringIO(), io.StringIO()
    try:
        request = _recv(conn)
        os.chdir(request["cwd"])
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                rc = run_step(request["argv"])
            except SystemExit as exc:
                rc = exc.code if isinstance(exc.code, int) else 2
            except Exception as exc:  # reported to the step's log, like a local crash
                import traceback

                traceback.print_exc()
                print(f"wirebench step crashed: {exc}", file=sys.stderr)
                rc = 70
        _send(conn, {"rc": rc, "stdout": out.getvalue(), "stderr": err.getvalue()})
    finally:
        os._exit(0)


def serve(path: Path) -> None:
    import fcntl
    import select

    # One worker per socket name: the lock is held for the worker's whole life.
    lock = open(str(path) + ".lock", "w")  # noqa: SIM115 - held until exit
    try:
        fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        return
    path.unlink(missing_ok=True)
    # Import now, once: this is what every later step saves.
    import akcli.cli  # noqa: F401

    from . import cli, evaluate, generate  # noqa: F401

    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    server.bind(str(path))
    server.listen(64)
    try:
        while True:
            ready, _, _ = select.select([server], [], [], IDLE_SECONDS)
            _reap()
            if not ready:
                break
            conn, _ = server.accept()
            if os.fork() == 0:
                server.close()
                _serve_one(conn)
            conn.close()
    finally:
        path.unlink(missing_ok=True)
        server.close()


def _reap() -> None:
    try:
        while os.waitpid(-1, os.WNOHANG)[0]:
            pass
    except ChildProcessError:
        pass


if __name__ == "__main__":
    serve(Path(sys.argv[1]))
