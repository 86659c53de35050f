"""The warm worker: same answers as a step in its own process, isolated per request."""

from __future__ import annotations

import json
import os
import subprocess
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from conftest import SYMBOLS, TASKS

from wirebench.runtime import worker_client as worker


def step(*args, cwd, env=None):
    return subprocess.run(["wirebench", "step", *args], cwd=cwd, capture_output=True,
                          text=True, env={**os.environ, **(env or {})})


def wait_for_worker(timeout=20.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if os.path.exists(worker.socket_path()):
            return
        time.sleep(0.1)
    raise AssertionError("the worker never came up")


def test_steps_in_the_worker_match_steps_in_their_own_process(tmp_path):
    ops = TASKS / "09-npn-led-driver" / "reference_ops.json"
    step("validate", "--ops", str(ops), "--out", str(tmp_path / "warmup.json"), cwd=tmp_path)
    wait_for_worker()
    outputs = {}
    for mode in ("1", "0"):
        pair = tmp_path / f"pair-{mode}"
        pair.mkdir()
        env = {"WIREBENCH_WORKER": mode}
        assert step("validate", "--ops", str(ops), "--out", "validate.json", cwd=pair,
                    env=env).returncode == 0
        assert step("apply", "--ops", str(ops), "--validate", "validate.json", "--task",
                    str(TASKS / "09-npn-led-driver"), "--symbols", *SYMBOLS,
                    "--sheet", "board.kicad_sch", "--out", "apply.json", cwd=pair,
                    env=env).returncode == 0
        outputs[mode] = {n: (pair / n).read_bytes() for n in ("validate.json", "apply.json",
                                                               "board.kicad_sch")}
    assert outputs["1"] == outputs["0"]


def test_concurrent_requests_keep_their_own_working_directory(tmp_path):
    ops = TASKS / "01-divider" / "reference_ops.json"
    step("validate", "--ops", str(ops), "--out", str(tmp_path / "warmup.json"), cwd=tmp_path)
    wait_for_worker()
    dirs = [tmp_path / f"d{i}" for i in range(8)]
    for d in dirs:
        d.mkdir()
    with ThreadPoolExecutor(8) as pool:
        procs = list(pool.map(lambda d: step("validate", "--ops", str(ops), "--out", "v.json",
                                             cwd=d), dirs))
    assert all(p.returncode == 0 for p in procs), [p.stderr for p in procs]
    for d in dirs:
        assert json.loads((d / "v.json").read_text())["valid"] is True


def test_a_step_error_in_the_worker_reaches_the_caller(tmp_path):
    ops = TASKS / "01-divider" / "reference_ops.json"
    step("validate", "--ops", str(ops), "--out", str(tmp_path / "warmup.json"), cwd=tmp_path)
    wait_for_worker()
    bad = step("score", "--validate", "x", "--apply", "x", "--nets", "x", "--task-dir",
               str(TASKS / "01-divider"), "--out", "s.json",
               "--model", "m", "--task", "t", "--sample", "1", cwd=tmp_path)
    assert bad.returncode == 70 and "FileNotFoundError" in bad.stderr
    assert not (tmp_path / "s.json").exists()
    local = step("score", "--validate", "x", "--apply", "x", "--nets", "x", "--task-dir",
                 str(TASKS / "01-divider"), "--out", "s.json",
                 "--model", "m", "--task", "t", "--sample", "1", cwd=tmp_path,
                 env={"WIREBENCH_WORKER": "0"})
    assert local.returncode == 70 and "internal error: FileNotFoundError" in local.stderr


def test_servers_are_reused_and_one_that_crashed_is_never_used_again(tmp_path):
    ops = TASKS / "01-divider" / "reference_ops.json"
    step("validate", "--ops", str(ops), "--out", str(tmp_path / "warmup.json"), cwd=tmp_path)
    wait_for_worker()

    def validate(name):
        reply = worker.call(["validate", "--ops", str(ops), "--out", str(tmp_path / name)])
        assert reply is not None and reply["rc"] == 0, reply
        assert json.loads((tmp_path / name).read_text())["valid"] is True
        return reply["server"]

    # One request at a time: a free server takes each, so the servers already forked
    # (one, plus any an earlier burst of requests made) answer all twenty between them.
    # A fork per request would show twenty different processes.
    before = [validate(f"v{i}.json") for i in range(20)]
    assert len(set(before)) < 20, before

    crash = worker.call(["score", "--validate", "x", "--apply", "x", "--nets", "x",
                         "--task-dir", str(TASKS / "01-divider"),
                         "--out", str(tmp_path / "s.json"), "--model", "m", "--task", "t",
                         "--sample", "1"])
    assert crash["rc"] == 70 and "FileNotFoundError" in crash["stderr"]
    after = [validate(f"w{i}.json") for i in range(20)]
    assert crash["server"] not in after


def test_the_socket_folder_must_be_the_users_own(tmp_path, monkeypatch):
    """Review finding 13: /tmp/wirebench-<uid> was accepted whoever owned it. A folder that
    is a symlink, open to others or someone else's means no worker: steps run alone."""
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(tmp_path))
    folder = tmp_path / f"wirebench-{os.getuid()}"
    assert worker.socket_path().startswith(str(folder) + "/")
    assert oct(folder.stat().st_mode & 0o777) == oct(0o700)

    folder.chmod(0o777)
    assert worker.socket_path() is None
    folder.chmod(0o700)
    if os.getuid() == 0:  # only root can hand a folder to another user
        os.chown(folder, 4242, -1)
        assert worker.socket_path() is None
        os.chown(folder, 0, -1)
    folder.rmdir()
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir(mode=0o700)
    folder.symlink_to(elsewhere)
    assert worker.socket_path() is None


def test_a_lock_planted_as_a_symlink_truncates_nothing(tmp_path):
    from wirebench.worker import serve

    victim = tmp_path / "victim.txt"
    victim.write_text("precious")
    sock = tmp_path / "w.sock"
    (tmp_path / "w.sock.lock").symlink_to(victim)
    serve(str(sock))  # refuses the lock and returns at once
    assert victim.read_text() == "precious" and not sock.exists()


def test_a_server_refuses_to_run_an_agent_that_needs_the_environment(tmp_path):
    """A client that asks anyway (a command agent dressed as an offline kind) gets a
    refusal, and the command never runs."""
    ops = TASKS / "01-divider" / "reference_ops.json"
    step("validate", "--ops", str(ops), "--out", str(tmp_path / "warmup.json"), cwd=tmp_path)
    wait_for_worker()
    marker = tmp_path / "ran"
    entry = {"kind": "command", "command": f"touch {marker}"}
    reply = worker.call(["generate", "--model", "m", "--kind", "reference", "--agent",
                         json.dumps(entry), "--task", str(TASKS / "01-divider"),
                         "--sample", "1", "--ops", str(tmp_path / "ops.json"),
                         "--agent-out", str(tmp_path / "agent.json")])
    assert reply["rc"] == 2 and "offline agent kinds only" in reply["stderr"]
    assert not marker.exists() and not (tmp_path / "ops.json").exists()


def test_a_served_step_never_runs_in_the_client(tmp_path):
    """Review: a client that threw the worker's reply away and ran the step itself passed
    every worker test. The client's own imports say where the step ran: a step the worker
    served never imports akcli in the client."""
    import sys

    ops = TASKS / "01-divider" / "reference_ops.json"
    step("validate", "--ops", str(ops), "--out", str(tmp_path / "warmup.json"), cwd=tmp_path)
    wait_for_worker()
    out = tmp_path / "v.json"
    proc = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "wirebench.cli", "step", "validate",
         "--ops", str(ops), "--out", str(out)], cwd=tmp_path, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert json.loads(out.read_text())["valid"] is True
    imported = {line.rsplit("|", 1)[-1].strip() for line in proc.stderr.splitlines()
                if line.startswith("import time:")}
    assert "wirebench.runtime.worker_client" in imported
    assert not {m for m in imported if m.split(".")[0] == "akcli"}, "the client ran the step"

    alone = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "wirebench.cli", "step", "validate",
         "--ops", str(ops), "--out", str(out)], cwd=tmp_path, capture_output=True, text=True,
        env={**os.environ, "WIREBENCH_WORKER": "0"})
    assert "akcli" in {line.rsplit("|", 1)[-1].strip().split(".")[0]
                       for line in alone.stderr.splitlines()}, "the check can see a local run"


# --- the job shell's own client: bash over TCP, with the worker's token ---------------

def job_shell(command: str, cwd, env=None, timeout=None) -> subprocess.CompletedProcess:
    """`command` in a job's shell: bash under the prefix the workflow gives Snakemake
    (its doubled braces undone, as Snakemake's formatting does)."""
    from wirebench.runtime.snakemake_process import job_shell_prefix

    prefix = job_shell_prefix().replace("{{", "{").replace("}}", "}")
    return subprocess.run(["bash", "-c", prefix + command], cwd=cwd, capture_output=True,
                          text=True, env={**os.environ, **(env or {})}, timeout=timeout)


def warm_worker(tmp_path) -> str:
    """A worker that is up, and the file with its port and token."""
    ops = TASKS / "01-divider" / "reference_ops.json"
    step("validate", "--ops", str(ops), "--out", str(tmp_path / "warmup.json"), cwd=tmp_path)
    wait_for_worker()
    announce = worker.tcp_file(worker.socket_path())
    deadline = time.monotonic() + 20
    while not os.path.exists(announce):
        assert time.monotonic() < deadline, "the worker never wrote its port"
        time.sleep(0.1)
    return announce


# Python cannot start at all with this: a step that succeeds under it ran in the worker,
# handed over by bash alone.
NO_PYTHON = {"PYTHONHOME": "/nonexistent-python-home"}


def test_a_job_shell_hands_its_step_to_the_worker_without_starting_python(tmp_path):
    announce = warm_worker(tmp_path)
    ops = TASKS / "01-divider" / "reference_ops.json"
    served = job_shell(f"wirebench step validate --ops {ops} --out v.json", tmp_path,
                       NO_PYTHON)
    assert served.returncode == 0, served.stderr
    assert json.loads((tmp_path / "v.json").read_text())["valid"] is True

    # A failing step's exit code and its stderr come back through bash as they are.
    failed = job_shell(f"wirebench step score --validate x --apply x --nets x --task-dir "
                       f"{TASKS / '01-divider'} --out s.json --model m --task t --sample 1"
                       " 2> score.log || echo rc=$?", tmp_path, NO_PYTHON)
    assert failed.stdout.strip() == "rc=70"
    assert "FileNotFoundError" in (tmp_path / "score.log").read_text()
    assert not (tmp_path / "s.json").exists()

    # Without the worker's port the same job needs Python, and here it cannot start: the
    # check above can tell the two paths apart.
    aside = announce + ".aside"
    os.rename(announce, aside)
    try:
        alone = job_shell(f"wirebench step validate --ops {ops} --out w.json", tmp_path,
                          NO_PYTHON)
    finally:
        os.rename(aside, announce)
    assert alone.returncode != 0 and not (tmp_path / "w.json").exists()


def test_a_job_shell_runs_what_the_worker_declines_through_python(tmp_path):
    """`--help` and agents that need the environment are never served: the worker says
    "local", and the job's Python client runs them."""
    warm_worker(tmp_path)
    helped = job_shell("wirebench step validate --help", tmp_path)
    assert helped.returncode == 0 and "--ops" in helped.stdout
    declined = job_shell("wirebench step validate --help", tmp_path, NO_PYTHON)
    assert declined.returncode != 0 and "--ops" not in declined.stdout


def test_the_workers_port_answers_only_its_token(tmp_path):
    """A port on 127.0.0.1 is open to every local user: a request without the token gets
    no answer and runs nothing. The token file is the user's alone."""
    import socket
    import stat

    announce = warm_worker(tmp_path)
    assert stat.S_IMODE(os.stat(announce).st_mode) == 0o600
    assert stat.S_IMODE(os.stat(os.path.dirname(announce)).st_mode) == 0o700
    port, token, reply_token = Path(announce).read_text().split()
    ops = TASKS / "01-divider" / "reference_ops.json"

    def ask(tok: str, out: str) -> bytes:
        fields = [tok, str(tmp_path), "5", "validate", "--ops", str(ops), "--out", out]
        reply = b""
        with socket.create_connection(("127.0.0.1", int(port)), timeout=30) as conn:
            try:  # a wrong token is dropped at its first wrong byte: maybe mid-send
                conn.sendall(b"".join(f.encode() + b"\0" for f in fields))
                while chunk := conn.recv(65536):
                    reply += chunk
                    if reply.endswith(b"\0ready\0"):
                        conn.sendall(b"go\0")
            except ConnectionResetError:
                pass
        return reply

    assert ask("0" * len(token), "guessed.json") == b""
    assert ask(token[:-1], "short.json") == b""
    assert not (tmp_path / "guessed.json").exists() and not (tmp_path / "short.json").exists()
    assert ask(token, "right.json").split(b"\0")[:3] == [reply_token.encode(), b"ready", b"0"]
    assert json.loads((tmp_path / "right.json").read_text())["valid"] is True


def test_an_agent_in_its_sandbox_cannot_read_the_workers_token(tmp_path):
    from wirebench.runtime import sandbox

    if sandbox.bwrap() is None and not os.environ.get("CI"):
        import pytest

        pytest.skip("no working bubblewrap (apt-get install bubblewrap)")
    announce = warm_worker(tmp_path)
    inputs = tmp_path / "inputs"
    inputs.mkdir()
    line = sandbox.command(["cat", announce], inputs=inputs, expose=[],
                           network=True, size=1 << 20)
    proc = subprocess.run(line, capture_output=True, text=True)
    assert proc.returncode != 0 and proc.stdout == ""
    assert Path(announce).read_text().split()[1] not in proc.stdout + proc.stderr


def test_a_job_shell_never_trusts_a_port_that_does_not_answer_with_the_reply_token(tmp_path):
    """A worker that died leaves its file; another local process may then take its port.
    It receives the dead worker's request token, and answers "done" with it: the job
    shell must not take that for a step that ran."""
    import socket
    import threading

    announce = warm_worker(tmp_path)
    real = Path(announce).read_text()
    squatter = socket.create_server(("127.0.0.1", 0))

    def answer():
        conn, _ = squatter.accept()
        with conn:
            token = conn.recv(65536).split(b"\0")[0]
            conn.sendall(token + b"\0" + b"0\0\0\0")  # echoes what it learnt, claims rc 0

    threading.Thread(target=answer, daemon=True).start()
    port = squatter.getsockname()[1]
    Path(announce).write_text(f"{port} {'a' * 32} {'b' * 32}\n")
    try:
        ops = TASKS / "01-divider" / "reference_ops.json"
        fooled = job_shell(f"wirebench step validate --ops {ops} --out v.json", tmp_path,
                           NO_PYTHON)
    finally:
        Path(announce).write_text(real)
        squatter.close()
    assert fooled.returncode != 0, "the job took the squatter's word for it"
    assert not (tmp_path / "v.json").exists()


def test_connections_that_never_ask_fork_no_more_than_the_cap(tmp_path):
    """Anyone on the machine may open connections to the port and say nothing: the
    worker forks servers up to its cap, never one per connection, and still answers
    once those connections time out."""
    import socket

    from wirebench import worker as server

    announce = warm_worker(tmp_path)
    port = int(Path(announce).read_text().split()[0])
    parent = _worker_pid()
    idle = [socket.create_connection(("127.0.0.1", port)) for _ in range(server.MAX_SERVERS + 8)]
    try:
        time.sleep(2)
        assert len(_children(parent)) <= server.MAX_SERVERS
    finally:
        for conn in idle:
            conn.close()
    ops = TASKS / "01-divider" / "reference_ops.json"
    served = job_shell(f"wirebench step validate --ops {ops} --out v.json", tmp_path,
                       NO_PYTHON)
    assert served.returncode == 0, served.stderr


def _worker_pid() -> int:
    """The warm parent: the process that holds the socket's lock file open."""
    lock = os.path.realpath(worker.socket_path() + ".lock")
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            fds = os.listdir(f"/proc/{pid}/fd")
        except OSError:
            continue
        for fd in fds:
            try:
                if os.readlink(f"/proc/{pid}/fd/{fd}") == lock:
                    return int(pid)
            except OSError:
                continue
    raise AssertionError("no process holds the worker's lock")


def _children(pid: int) -> list[int]:
    kids = []
    for entry in filter(str.isdigit, os.listdir("/proc")):
        try:
            stat = Path(f"/proc/{entry}/stat").read_text()
        except OSError:
            continue
        if int(stat.rsplit(")", 1)[1].split()[1]) == pid:
            kids.append(int(entry))
    return kids


def test_a_process_of_the_same_user_without_the_token_gets_nothing_from_the_socket(tmp_path):
    """Second review, finding 5: from inside the simulate step (the same uid, and Landlock
    does not cover connect() on a Unix socket) the worker ran `generate --kind reference`
    for any task. Every request on the Unix socket must now begin with the token."""
    import marshal
    import socket
    import struct

    token = Path(warm_worker(tmp_path)).read_text().split()[1].encode()
    task = TASKS / "01-divider"
    argv = ["generate", "--model", "m", "--kind", "reference", "--agent",
            json.dumps({"kind": "reference"}), "--task", str(task), "--sample", "1",
            "--ops", str(tmp_path / "stolen.json"), "--agent-out", str(tmp_path / "a.json")]
    data = marshal.dumps({"argv": argv, "cwd": str(tmp_path)})
    for prefix in (b"", b"0" * 32, token[:-1] + b"x"):
        with socket.socket(socket.AF_UNIX) as conn:
            conn.settimeout(10)
            conn.connect(worker.socket_path())
            try:
                conn.sendall(prefix + struct.pack("!I", len(data)) + data)
                assert conn.recv(1 << 16) == b""
            except ConnectionResetError:
                pass
    assert not (tmp_path / "stolen.json").exists(), "the worker ran a request with no token"
    # The step's own client, which reads the token, is still served.
    served = step(*argv, cwd=tmp_path)
    assert served.returncode == 0, served.stderr
    assert (tmp_path / "stolen.json").exists()


def test_connections_held_open_delay_no_step(tmp_path):
    """Second review, finding 8: an agent found the worker's port and trickled a byte
    every 3 s to each server; job shells waited without a deadline, and nothing finished
    while the port was held. Now a request must be whole within seconds, a wrong first
    byte drops it, and a job shell that no server takes runs its step itself."""
    import socket
    import threading

    from wirebench import worker as server

    announce = warm_worker(tmp_path)
    port = int(Path(announce).read_text().split()[0])
    stop = threading.Event()

    def dropped(conn) -> bool:
        try:
            return conn.recv(1, socket.MSG_DONTWAIT) == b""
        except BlockingIOError:
            return False  # still held

    def hold(first: bytes):
        while not stop.is_set():  # reconnect as soon as the worker drops us
            try:
                with socket.create_connection(("127.0.0.1", port), timeout=5) as conn:
                    conn.settimeout(None)  # so that MSG_DONTWAIT never waits
                    while not stop.is_set():
                        if first:
                            conn.sendall(first)
                        if stop.wait(0.5) or dropped(conn):
                            break
            except OSError:
                stop.wait(0.05)

    holders = [threading.Thread(target=hold, args=(b"" if i % 2 else b"0",), daemon=True)
               for i in range(2 * server.MAX_SERVERS)]
    for thread in holders:
        thread.start()
    try:
        time.sleep(1)
        ops = TASKS / "01-divider" / "reference_ops.json"
        for i in range(3):
            started = time.monotonic()
            try:
                served = job_shell(f"wirebench step validate --ops {ops} --out v{i}.json",
                                   tmp_path, timeout=40)
            except subprocess.TimeoutExpired:
                raise AssertionError("a step waited on held connections") from None
            assert served.returncode == 0, served.stderr
            # Bounded by READY_SECONDS and a step run alone, not by how long we hold on.
            assert time.monotonic() - started < 30, "a step waited on held connections"
            assert json.loads((tmp_path / f"v{i}.json").read_text())["valid"] is True
    finally:
        stop.set()
        for thread in holders:
            thread.join(timeout=10)
