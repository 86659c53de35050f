"""The warm worker: same answers as a step in its own process, isolated per request."""

from __future__ import annotations

import json
import os
import subprocess
import time
from concurrent.futures import ThreadPoolExecutor

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
