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

It listens twice. The Unix socket serves the Python client, and checks the caller's uid.
A TCP port on 127.0.0.1 serves the job shell itself (`job_shell_prefix`): bash can open a
TCP connection with no process of its own, where a Python client costs 12 ms of CPU a
job. On both, each request must begin with a random token, and each reply with a second
one: a process that took over the port of a worker that died learns the dead worker's
request token, and still cannot answer as a worker. The uid check alone is not enough: a
confined step runs as the same user, and Landlock does not cover connect() on a Unix
socket. The tokens live only in the worker's memory and in a 0600 file in the worker's
0700 folder, which no sandbox shows and no confined step may read (and confined steps
cannot open a socket at all: runtime/isolation.py).

Nobody can hold a server: a request must arrive whole within REQUEST_SECONDS of the
connection, and a connection whose first bytes are not the token is dropped at once. A
server that has read a request says `ready` and waits for the client's go: a client that
got no `ready` within its own deadline (every server held or busy) runs the step itself,
and its request, left unanswered in the socket, can then never run as well.
"""

from __future__ import annotations

import os
import struct
import sys

from wirebench.runtime.worker_client import send, tcp_file

IDLE_SECONDS = 30
# A server makes way for a fresh one after this many steps, so that whatever a step
# leaves behind (none measured: RSS stayed at 43 MB over 864 steps) cannot pile up.
REQUESTS_PER_SERVER = 1000
# Servers tell the parent when they take a request, are free again, or leave; the
# parent forks another server whenever none is free. 8-byte records: a pipe write of that
# size is atomic, so reports from many servers never interleave.
REPORT = struct.Struct("!ii")
IDLE, BUSY, GONE = 0, 1, 2
# A job shell's request is a few paths and flags; a client that sends more, or takes
# longer than this in all to send it (a step's own client needs a few ms), is not ours.
MAX_REQUEST_BYTES = 1 << 20
REQUEST_SECONDS = 2
# Any local user can open connections to the TCP port and hold them, unanswered, for
# REQUEST_SECONDS. A server is forked whenever none is free, so without a cap that would
# fork without end. Snakemake runs at most --cores steps at once; past this many, steps
# wait in the listen backlog for a free server rather than fail.
MAX_SERVERS = 4 * (os.cpu_count() or 1) + 4


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
    # The tokens first: a client reads them before it connects to either socket.
    tcp = _tcp_listener(tcp_file(path))
    # Listening before the warm-up: a step that connects meanwhile waits in the backlog
    # for the first server, rather than running on its own and parsing every library
    # again beside us (a crash here closes the socket: the step then runs on its own).
    listener = sockets.socket(sockets.AF_UNIX, sockets.SOCK_STREAM)
    listener.bind(path)
    listener.listen(128)
    listeners = [listener, tcp]
    _warm_up()
    for sock in listeners:  # servers wait on both at once, and race to accept
        sock.setblocking(False)
    reports, report_to = os.pipe()
    servers: dict[int, int] = {}  # pid -> IDLE or BUSY, as each server last reported
    try:
        while True:
            if IDLE not in servers.values() and len(servers) < MAX_SERVERS:
                pid = os.fork()
                if pid == 0:
                    lock.close()  # a server must never keep the next worker from starting
                    os.close(reports)
                    _run_server(listeners, report_to)
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
        _unlink(tcp_file(path))
        _unlink(path)
        for sock in listeners:
            sock.close()


# The TCP listener's: what a request must begin with, and what each reply begins with.
TOKEN = REPLY_TOKEN = b""


def _tcp_listener(announce: str):
    """A socket on 127.0.0.1 for job shells, and the file that tells them its port and
    tokens (written whole, 0600, then renamed into place)."""
    import secrets
    import socket as sockets

    global TOKEN, REPLY_TOKEN
    TOKEN, REPLY_TOKEN = secrets.token_hex(16).encode(), secrets.token_hex(16).encode()
    tcp = sockets.socket(sockets.AF_INET, sockets.SOCK_STREAM)
    tcp.bind(("127.0.0.1", 0))
    tcp.listen(128)
    partial = f"{announce}.{os.getpid()}"
    fd = os.open(partial, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
    with os.fdopen(fd, "w") as out:
        out.write(f"{tcp.getsockname()[1]} {TOKEN.decode()} {REPLY_TOKEN.decode()}\n")
    os.replace(partial, announce)
    return tcp


def _run_server(listeners: list, report_to: int) -> None:
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
            conn = _accept(listeners)
            if conn is None:
                break  # idle servers leave by themselves
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


def _accept(listeners: list):
    """The next connection on either socket, or None after IDLE_SECONDS without one."""
    import select
    import time

    deadline = time.monotonic() + IDLE_SECONDS
    while (left := deadline - time.monotonic()) > 0:
        ready, _, _ = select.select(listeners, [], [], left)
        for sock in ready:
            try:
                conn, _ = sock.accept()
            except BlockingIOError:
                continue  # another server took it
            conn.setblocking(True)
            return conn
    return None


def _serve_one(conn) -> bool:
    """Run one request's step and reply. False when the step crashed or the reply failed:
    the server then retires rather than run more steps after an unknown failure."""
    import socket as sockets
    import time

    deadline = time.monotonic() + REQUEST_SECONDS
    try:
        if conn.family == sockets.AF_UNIX:
            if _peer_uid(conn) != os.getuid():
                return True  # another user's process: no answer at all
            request = _read_client_request(conn, deadline)
            if request is None:
                return True  # no token, too slow, or gone before it asked: no answer
            refused = _refusal(request["argv"], request["cwd"])
            if refused:
                send(conn, {"rc": 2, "stdout": "", "stderr": f"wirebench worker: {refused}\n",
                            "server": os.getpid()})
                return True
            send(conn, {"ready": True})
            if not _go(conn, b"g"):
                return True
            reply, clean = _run(request)
            send(conn, {**reply, "server": os.getpid()})
            return clean
        request = _read_shell_request(conn, deadline)
        if request is None:
            return True  # a wrong token, or not our protocol: no answer at all
        if _refusal(request["argv"], request["cwd"]):
            # Not an error: the job shell runs such steps through the Python client.
            conn.sendall(REPLY_TOKEN + b"\0local\0")
            return True
        conn.sendall(REPLY_TOKEN + b"\0ready\0")
        if not _go(conn, b"go\0"):
            return True
        reply, clean = _run(request)
        # bash cannot hold a NUL, and the reply's fields end at one.
        conn.sendall(b"".join(
            str(reply[k]).replace("\0", "").encode() + b"\0" for k in ("rc", "stdout", "stderr")))
        return clean
    except OSError:
        return True  # the client went away, or held its connection past the deadline
    except Exception:
        return False


def _recv_by(conn, deadline: float, n: int) -> bytes:
    """Up to n bytes, or b"" at end of file; socket.timeout once the deadline passes."""
    import time

    left = deadline - time.monotonic()
    if left <= 0:
        raise TimeoutError("the request's deadline passed")
    conn.settimeout(left)
    return conn.recv(n)


def _token_first(conn, deadline: float, sep: bytes = b"") -> bytes | None:
    """Read the request token, byte by byte as it comes, dropping the connection at the
    first byte that is not the token's; what was read past it is returned."""
    import hmac

    data = b""
    want = TOKEN + sep
    while len(data) < len(want):
        chunk = _recv_by(conn, deadline, len(want) - len(data))
        if not chunk:
            return None
        data += chunk
        if not hmac.compare_digest(data, want[:len(data)]):
            return None
    return data[len(want):]


def _read_client_request(conn, deadline: float) -> dict | None:
    """The Python client's request: the token, then a marshal frame (which is read only
    once the token matched: marshal is not safe against data made to attack it)."""
    import marshal

    if _token_first(conn, deadline) is None:
        return None
    head = _read_exactly(conn, deadline, 4)
    if head is None or struct.unpack("!I", head)[0] > MAX_REQUEST_BYTES:
        return None
    body = _read_exactly(conn, deadline, struct.unpack("!I", head)[0])
    if body is None:
        return None
    request = marshal.loads(body)
    if not (isinstance(request, dict) and isinstance(request.get("argv"), list)
            and isinstance(request.get("cwd"), str)):
        return None
    return request


def _read_exactly(conn, deadline: float, n: int) -> bytes | None:
    data = b""
    while len(data) < n:
        chunk = _recv_by(conn, deadline, n - len(data))
        if not chunk:
            return None
        data += chunk
    return data


def _go(conn, word: bytes) -> bool:
    """The client's go after `ready`: a client that gave up waiting sends none, and its
    step must not run here as well as where it runs now."""
    import time

    got = _read_exactly(conn, time.monotonic() + REQUEST_SECONDS, len(word))
    conn.settimeout(None)
    return got == word


def _read_shell_request(conn, deadline: float) -> dict | None:
    """A job shell's request: NUL-terminated fields, the token, the cwd, the number of
    arguments, then each argument. None unless the token matches and it is all there."""
    data = _token_first(conn, deadline, b"\0")
    if data is None:
        return None
    fields: list[bytes] = []
    while len(fields) < 2 or len(fields) < 2 + int(fields[1]):
        fields = data.split(b"\0")[:-1]  # the fields whose terminator has arrived
        if len(fields) >= 2 and not fields[1].isdigit():
            return None
        if len(fields) >= 2 and len(fields) >= 2 + int(fields[1]):
            break
        chunk = _recv_by(conn, deadline, 1 << 16)
        if not chunk or len(data) + len(chunk) > MAX_REQUEST_BYTES:
            return None
        data += chunk
    conn.settimeout(None)
    return {"cwd": fields[0].decode(), "argv": [f.decode() for f in fields[2:2 + int(fields[1])]]}


def _run(request: dict) -> tuple[dict, bool]:
    """The step, in the request's cwd, with its output captured: the reply, and whether
    it ended cleanly."""
    import contextlib
    import io

    from wirebench.steps.dispatch import run_step

    clean = True
    out, err = io.StringIO(), io.StringIO()
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
    return {"rc": rc, "stdout": out.getvalue(), "stderr": err.getvalue()}, clean


def _peer_uid(conn) -> int:
    import socket as sockets

    creds = conn.getsockopt(sockets.SOL_SOCKET, sockets.SO_PEERCRED, struct.calcsize("3i"))
    return struct.unpack("3i", creds)[1]


def _refusal(argv: list, cwd: str = ".") -> str | None:
    """Why this server must not run the step, or None. Agents that are not offline need
    the caller's environment and run in a sandbox of their own; they never run here, even
    if a client asks (the --kind flag and the entry itself must both be offline)."""
    import json

    from wirebench.agents import OFFLINE_KINDS
    from wirebench.runtime.worker_client import may_serve

    if not may_serve(argv, cwd):
        return f"the worker does not run `{' '.join(argv[:1])}` steps of this kind"
    if argv[:1] == ["batch"] and "--spec" in argv[:-1]:  # each pair's step, one by one
        from wirebench.runtime.worker_client import batch_steps

        steps = batch_steps(os.path.join(cwd, argv[argv.index("--spec") + 1]))
        if steps is None:
            return "a batch whose spec cannot be read"
        return next(filter(None, (_refusal(step, cwd) for step in steps)), None)
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
