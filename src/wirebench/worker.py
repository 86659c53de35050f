"""A warm worker for step commands, so a Snakemake job does not pay for imports.

Each `wirebench step ...` job is a fresh interpreter. Importing akcli costs 0.18 s, more
than most steps' work, and a matrix has thousands of step jobs. So the first step
starts a worker that has wirebench and akcli imported, and later steps hand it their
argv over a Unix socket. The warm parent forks servers that take requests one at a time
and forks another whenever none is free, so concurrent steps run in separate processes
and never see each other. A server runs many steps in turn, each with its own cwd and
captured output; one that crashed, or has run REQUESTS_PER_SERVER, makes way for a
fresh fork.

The worker is an optimisation, never a dependency: when there is none, or it does not
answer, the step runs in its own process with the same code. The client half (the socket's
name, `call`, starting a worker) is wirebench/runtime/worker_client.py.
"""

from __future__ import annotations

import os
import struct
import sys

from wirebench.runtime.worker_client import recv, send

IDLE_SECONDS = 30
# A server makes way for a fresh one after this many steps, so that whatever a step
# leaves behind (none measured: RSS stayed at 43 MB over 864 steps) cannot pile up.
REQUESTS_PER_SERVER = 1000
# Servers tell the parent when they take a request, are free again, or leave; the
# parent forks another server whenever none is free. 8-byte records: a pipe write of that
# size is atomic, so reports from many servers never interleave.
REPORT = struct.Struct("!ii")
IDLE, BUSY, GONE = 0, 1, 2
def serve(path: str) -> None:
    """The warm parent: it keeps one idle server ready at all times, and quits after
    IDLE_SECONDS with no request and no step running."""
    import fcntl
    import select
    import socket as sockets

    # One worker per socket name: the lock is held for the worker's whole life.
    # O_NOFOLLOW: a lock planted as a symlink must never make us open (and truncate) its
    # target.
    try:
        fd = os.open(path + ".lock", os.O_WRONLY | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC,
                     0o600)
    except OSError:
        return
    lock = os.fdopen(fd, "w")
    try:
        fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        return
    _unlink(path)
    # Listening before the warm-up: a step that connects meanwhile waits in the backlog
    # for the first server, rather than running on its own and parsing every library
    # again beside us (a crash here closes the socket: the step then runs on its own).
    listener = sockets.socket(sockets.AF_UNIX, sockets.SOCK_STREAM)
    listener.bind(path)
    listener.listen(128)
    _warm_up()
    listener.settimeout(IDLE_SECONDS)  # idle servers leave by themselves
    reports, report_to = os.pipe()
    servers: dict[int, int] = {}  # pid -> IDLE or BUSY, as each server last reported
    try:
        while True:
            if IDLE not in servers.values():
                pid = os.fork()
                if pid == 0:
                    lock.close()  # a server must never keep the next worker from starting
                    os.close(reports)
                    _run_server(listener, report_to)
                servers[pid] = IDLE
            ready, _, _ = select.select([reports], [], [], IDLE_SECONDS)
            if ready:  # whole records only: each write is atomic, 4096 a multiple of 8
                for pid, state in REPORT.iter_unpack(os.read(reports, 4096)):
                    if state == GONE:
                        servers.pop(pid, None)
                    elif pid in servers:
                        servers[pid] = state
            for pid in _reap():  # also servers that died without a word
                servers.pop(pid, None)
            if not ready and BUSY not in servers.values():
                break
    finally:
        _unlink(path)
        listener.close()


def _run_server(listener, report_to: int) -> None:
    """In a forked server: run requests one after another. Never returns.

    A fork per step ran the same steps 1.7x slower than one forked process that runs
    them in turn (216 validate/apply/nets steps: 18-21 s of CPU against 11-12 s).
    Each step still gets its own cwd and captured stdout and stderr; akcli is built to be
    called in-process again and again (its own harness does that); and a step that
    crashed retires its server, so no broken state reaches the next step.
    """
    me = os.getpid()
    try:
        for _ in range(REQUESTS_PER_SERVER):
            try:
                conn, _ = listener.accept()
            except TimeoutError:
                break
            os.write(report_to, REPORT.pack(me, BUSY))
            try:
                clean = _serve_one(conn)
            finally:
                conn.close()
            if not clean:
                break
            os.write(report_to, REPORT.pack(me, IDLE))
    finally:  # also when a report fails because the parent is gone
        try:
            os.write(report_to, REPORT.pack(me, GONE))
        finally:
            os._exit(0)


def _serve_one(conn) -> bool:
    """Run one request's step and reply. False when the step crashed or the reply failed:
    the server then retires rather than run more steps after an unknown failure."""
    import contextlib
    import io

    from wirebench.steps.dispatch import run_step

    clean = True
    out, err = io.StringIO(), io.StringIO()
    try:
        if _peer_uid(conn) != os.getuid():
            return True  # another user's process: no answer at all
        request = recv(conn)
        if request is None:
            return True  # the client went away before it asked anything
        refused = _refusal(request["argv"])
        if refused:
            send(conn, {"rc": 2, "stdout": "", "stderr": f"wirebench worker: {refused}\n",
                        "server": os.getpid()})
            return True
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
                rc, clean = 70, False
        send(conn, {"rc": rc, "stdout": out.getvalue(), "stderr": err.getvalue(),
                     "server": os.getpid()})
        return clean
    except Exception:
        return False


def _peer_uid(conn) -> int:
    import socket as sockets

    creds = conn.getsockopt(sockets.SOL_SOCKET, sockets.SO_PEERCRED, struct.calcsize("3i"))
    return struct.unpack("3i", creds)[1]


def _refusal(argv: list) -> str | None:
    """Why this server must not run the step, or None. Agents that are not offline need
    the caller's environment and run in a sandbox of their own; they never run here, even
    if a client asks (the --kind flag and the entry itself must both be offline)."""
    import json

    from wirebench.agents import OFFLINE_KINDS
    from wirebench.runtime.worker_client import may_serve

    if not may_serve(argv):
        return f"the worker does not run `{' '.join(argv[:1])}` steps of this kind"
    if argv[:1] == ["generate"]:
        try:
            entry = json.loads(argv[argv.index("--agent") + 1])
        except (ValueError, IndexError):
            return "generate without a readable --agent entry"
        if not isinstance(entry, dict) or entry.get("kind") not in OFFLINE_KINDS:
            return "the worker runs offline agent kinds only"
    return None


def _unlink(path: str) -> None:
    import contextlib

    with contextlib.suppress(FileNotFoundError):
        os.unlink(path)


def _warm_up() -> None:
    """Load, here in the parent, what every step needs, so that no server imports it
    again: wirebench's own modules and caches, and akcli with every module it imports
    lazily (akcli_backend.warm_up)."""
    from wirebench.config import validator
    from wirebench.evidence import provenance, trace  # noqa: F401
    from wirebench.evidence.fingerprint import fingerprint
    from wirebench.runtime import akcli_backend
    from wirebench.steps import apply, dispatch, generate, nets, score, validate  # noqa: F401
    from wirebench.verify import criteria, equivalence  # noqa: F401

    provenance.versions()  # cached: importlib.metadata scans every installed package
    validator("task")      # yaml + jsonschema + the task schema, for every task.yaml
    fingerprint("score")   # the scorer's hash, which every score.json records
    import networkx  # noqa: F401  (relabel equivalence, on every pair that missed)
    akcli_backend.warm_up()
    from wirebench.runtime import symbol_cache

    symbol_cache.warm_from_env()


def _reap() -> list[int]:
    """The servers that have exited."""
    gone = []
    try:
        while pid := os.waitpid(-1, os.WNOHANG)[0]:
            gone.append(pid)
    except ChildProcessError:
        pass
    return gone


if __name__ == "__main__":
    serve(sys.argv[1])
