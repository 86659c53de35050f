"""The confined step (confine.run and confine.Server) as a step sees it and as its parent
does: exit codes and output, the folder and variables it starts with, time limits, death
with its parent, the server's calls. Each test costs a fork, so that every mutant of
runtime/confine.py meets them all (benchmarks/mutation_score.py --config isolation).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

from wirebench.runtime import confine, landlock, sandbox

needs_landlock = pytest.mark.skipif(
    landlock.abi() < landlock.MIN_ABI and not os.environ.get("CI"),
    reason="this kernel has no Landlock")
needs_bwrap = pytest.mark.skipif(sandbox.bwrap() is None and not os.environ.get("CI"),
                                 reason="no working bubblewrap (apt-get install bubblewrap)")
SYSTEM = list(confine.SYSTEM_READS)


def _try(action) -> str:
    try:
        action()
        return "allowed"
    except PermissionError:
        return "denied"
    except OSError as exc:
        return f"error {exc.errno}"


# --- the confined step: confine.run and confine.Server -------------------------------------

def _exit_with(code):
    sys.exit(code)


def _boom():
    raise ValueError("boom")


def _print(text: str):
    print(text, end="")


def _where(pair: Path) -> None:
    import tempfile

    (pair / "where.json").write_text(json.dumps({
        "cwd": os.getcwd(), "env": sorted(os.environ), "TMPDIR": os.environ.get("TMPDIR"),
        "tempdir": tempfile.gettempdir(),
        "reads outside": _try(lambda: Path(__file__).read_text())}))


@needs_landlock
def test_a_confined_steps_exit_and_what_it_printed_reach_the_parent(tmp_path, capfd):
    """Success is silence; a step's exit code and its last line name its failure; what it
    printed reaches the parent's stderr, cut at 1 MiB."""
    pair = tmp_path / "pair"
    pair.mkdir()
    confine.run(lambda: _print("said in the step\n"), write=pair, timeout=30)
    assert capfd.readouterr().err == "said in the step\n"
    with pytest.raises(confine.StepCrashed) as crashed:
        confine.run(lambda: _exit_with(3), write=pair, timeout=30)
    assert str(crashed.value) == "the confined step failed (exit 3)"
    with pytest.raises(confine.StepCrashed) as crashed:
        confine.run(lambda: _exit_with("no way"), write=pair, timeout=30)
    assert str(crashed.value) == "the confined step failed (exit 1) no way"
    confine.run(lambda: _exit_with(None), write=pair, timeout=30)  # sys.exit(): success
    with pytest.raises(confine.StepCrashed) as crashed:
        confine.run(_boom, write=pair, timeout=30)
    assert str(crashed.value) == "the confined step failed (exit 70) ValueError: boom"
    assert "Traceback" in capfd.readouterr().err
    confine.run(lambda: _print("y" * (3 << 20)), write=pair, timeout=30)
    assert capfd.readouterr().err == "y" * (1 << 20)
    # Cut at 1 MiB inside a character: the character's bytes that came read as one U+FFFD.
    confine.run(lambda: _print("€" * 400_000), write=pair, timeout=30)
    assert capfd.readouterr().err == "€" * ((1 << 20) // 3) + "\ufffd"
    with pytest.raises(confine.StepCrashed) as crashed:
        confine.run(lambda: _exit_with("x" * 200 + "y" * 300), write=pair)  # no limit
    assert str(crashed.value) == "the confined step failed (exit 1) " + "y" * 300


@needs_landlock
def test_a_confined_step_starts_in_its_pair_with_none_of_the_runs_variables(tmp_path,
                                                                            monkeypatch):
    """In the pair's folder (relative paths of an op-list land there), with its own
    TMPDIR, and none of the run's secrets; the user's opt-out, and only it, runs the step
    unconfined, and tells the step so."""
    pair = tmp_path / "pair"
    pair.mkdir()
    monkeypatch.setenv("WB_PROVIDER_KEY", "sk-0123456789")
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv(confine.OPT_OUT_VAR, raising=False)
    confine.run(lambda: _where(pair), write=pair, timeout=30)
    seen = json.loads((pair / "where.json").read_text())
    assert seen["cwd"] == str(pair)
    assert "WB_PROVIDER_KEY" not in seen["env"] and confine.OPT_OUT_VAR not in seen["env"]
    assert seen["TMPDIR"] == seen["tempdir"] and seen["TMPDIR"] not in ("/tmp", None)
    room = os.statvfs(confine.SHARED_MEMORY)
    if room.f_bavail * room.f_frsize >= confine.SHARED_MEMORY_ROOM:  # as on our VMs
        assert seen["TMPDIR"].startswith(confine.SHARED_MEMORY + "/")
        assert Path(seen["TMPDIR"]).name.startswith(f"{os.getpid()}-"), "named by its maker"
    assert not Path(seen["TMPDIR"]).exists(), "the private folder goes with the step"
    assert seen["reads outside"] == "denied"
    monkeypatch.setenv(confine.OPT_OUT_VAR, "1")
    confine.run(lambda: _where(pair), write=pair, timeout=30)
    seen = json.loads((pair / "where.json").read_text())
    assert confine.OPT_OUT_VAR in seen["env"] and seen["reads outside"] == "allowed"


def _start_and_wait(marker: str, wait: float) -> None:
    subprocess.Popen(["setsid", "sleep", marker])
    time.sleep(wait)


@needs_landlock
def test_a_step_past_its_limit_is_killed_with_all_it_started(tmp_path):
    pair = tmp_path / "pair"
    pair.mkdir()
    marker = f"{80 + os.getpid() % 1000}.5"
    started = time.monotonic()
    with pytest.raises(confine.StepTimedOut) as late:
        confine.run(lambda: _start_and_wait(marker, 30), write=pair, timeout=0.5)
    assert time.monotonic() - started < 10
    assert str(late.value) == "exceeded 0.5 s" and late.value.seconds == 0.5
    time.sleep(0.3)
    assert not _running("sleep " + marker), "a process of the step outlived it"
    # Within its limit, a step that leaves a process behind leaves nothing either.
    confine.run(lambda: _start_and_wait(marker, 0.2), write=pair, timeout=30)
    time.sleep(0.3)
    assert not _running("sleep " + marker)
    assert list(pair.iterdir()) == []


@needs_landlock
def test_a_confined_step_dies_with_the_process_that_started_it(tmp_path):
    """kill -9 of a worker mid-step: its confined child goes too, and what it started."""
    pair = tmp_path / "pair"
    pair.mkdir()
    marker = f"{90 + os.getpid() % 1000}.5"
    code = ("import sys, time\n"
            "from pathlib import Path\n"
            "from wirebench.runtime import confine\n"
            "sys.path.insert(0, sys.argv[3])\n"
            "import test_mut_confine as t\n"
            "confine.run(lambda: t._start_and_wait(sys.argv[2], 60), write=Path(sys.argv[1]),"
            " timeout=60)\n")
    worker = subprocess.Popen([sys.executable, "-c", code, str(pair), marker,
                               str(Path(__file__).parent)])
    try:
        deadline = time.monotonic() + 20
        while not _running("sleep " + marker) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert _running("sleep " + marker)
    finally:
        worker.kill()
        worker.wait()
    deadline = time.monotonic() + 5
    while _running("sleep " + marker) and time.monotonic() < deadline:
        time.sleep(0.05)
    left = _running("sleep " + marker)
    if left:
        subprocess.run(["pkill", "-f", "sleep " + marker])
    assert not left, "the step outlived the worker that started it"
    # The killed worker's private folder is left behind; the next process that needs one
    # removes it (and keeps a live process's).
    from wirebench.runtime.user_folders import own_folder

    root = own_folder(confine.SHARED_MEMORY)
    if root is not None:
        theirs = [n for n in os.listdir(root) if n.startswith(f"{worker.pid}-")]
        mine = Path(tempfile.mkdtemp(dir=root, prefix=f"{os.getpid()}-"))
        try:
            confine._memory_root.cache_clear()  # as a fresh process would
            assert confine._memory_root() == root
            assert not [n for n in os.listdir(root) if n.startswith(f"{worker.pid}-")], theirs
            assert mine.is_dir()
        finally:
            mine.rmdir()


def _leave_behind(marker: str) -> None:
    subprocess.Popen(["setsid", "sleep", marker])


@needs_landlock
def test_the_step_server_reports_each_step_and_carries_big_arguments(tmp_path, capfd):
    """Each call's exit code and output, as run() gives them, the server living on; an
    argument larger than a pipe holds; what a step left running killed before the next
    step; close() ends the child and removes its private folder."""
    pair = tmp_path / "pair"
    pair.mkdir()
    marker = f"{95 + os.getpid() % 1000}.5"
    server = confine.Server(write=pair)
    try:
        server.call(_print, "served\n", timeout=30)
        assert capfd.readouterr().err == "served\n"
        first = server.pid
        with pytest.raises(confine.StepCrashed) as crashed:
            server.call(_exit_with, 4, timeout=30)
        assert str(crashed.value) == "the confined step failed (exit 4)"
        with pytest.raises(confine.StepCrashed) as crashed:
            server.call(_exit_with, "why", timeout=30)
        assert str(crashed.value) == "the confined step failed (exit 1)"
        assert capfd.readouterr().err == "why\n"
        server.call(_exit_with, None, timeout=30)
        big = os.urandom(3 << 20)
        server.call(Path.write_bytes, pair / "big.bin", big, timeout=30)
        assert (pair / "big.bin").read_bytes() == big
        server.call(_print, "z" * (2 << 20), timeout=30)
        assert capfd.readouterr().err == "z" * (1 << 20)
        server.call(_leave_behind, marker, timeout=30)
        server.call(time.sleep, 0.2, timeout=30)
        assert not _running("sleep " + marker), "what a step left ran on past it"
        assert server.pid == first and server.served == 8
        private = server.writes[-1]
        assert Path(private).is_dir()
    finally:
        server.close()
    assert not Path(private).exists()
    assert not _alive(first)


@needs_landlock
def test_a_step_that_ends_the_server_is_a_crash_and_the_next_call_gets_a_new_one(tmp_path):
    pair = tmp_path / "pair"
    pair.mkdir()
    server = confine.Server(write=pair)
    try:
        server.call(_print, "", timeout=30)
        first = server.pid
        with pytest.raises(confine.StepCrashed) as crashed:
            server.call(os._exit, 9, timeout=30)
        assert str(crashed.value) == "the confined step server died (exit 9)"
        assert server.pid is None
        server.call(Path.write_text, pair / "after.txt", "x", timeout=30)
        assert server.pid not in (None, first)
    finally:
        server.close()


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def _running(command: str) -> bool:
    return subprocess.run(["pgrep", "-f", f"^{command}$"], capture_output=True).returncode == 0




@needs_landlock
def test_a_step_whose_pair_folder_is_gone_fails_as_a_crash(tmp_path):
    """The child cannot enter its pair's folder: it exits 70 before it runs anything."""
    gone = tmp_path / "gone"
    if confine._memory_root() is None:
        pytest.skip("the private folder would be made in the pair's folder")
    with pytest.raises(confine.StepCrashed) as crashed:
        confine.run(lambda: _print("ran"), write=gone, timeout=30)
    assert str(crashed.value) == "the confined step failed (exit 70)"


@needs_landlock
def test_a_step_server_closes_while_another_lives(tmp_path):
    """Each server's pipes stay its own: a second server's child (or a step's) holds none
    of the first's, so closing the first ends its child at once."""
    import threading

    first, second = tmp_path / "a", tmp_path / "b"
    first.mkdir()
    second.mkdir()
    a, b = confine.Server(write=first), confine.Server(write=second)
    try:
        a.call(_print, "", timeout=30)
        b.call(_print, "", timeout=30)
        confine.run(lambda: _print(""), write=second, timeout=30)
        child = a.pid
        closing = threading.Thread(target=a.close, daemon=True)
        closing.start()
        closing.join(10)
        assert not closing.is_alive(), "closing the first server waited on the second's child"
        assert not _alive(child)
        b.call(Path.write_text, second / "still.txt", "served", timeout=30)
    finally:
        b.close()
    assert (second / "still.txt").read_text() == "served"


def _what_programs_read(pair: Path) -> None:
    import pwd
    import zoneinfo

    seen = {"user": pwd.getpwuid(os.getuid()).pw_name,
            "own status": Path("/proc/self/status").read_text().startswith("Name:"),
            "zone": str(zoneinfo.ZoneInfo("Europe/Paris").utcoffset(
                __import__("datetime").datetime(2026, 1, 1)))}
    for device in ("/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom"):
        seen[device] = _try(lambda d=device: Path(d).open("rb").close())
    seen["write /dev/null"] = _try(lambda: Path("/dev/null").write_bytes(b"x"))
    seen["write /dev/zero"] = _try(lambda: Path("/dev/zero").write_bytes(b"x"))
    (pair / "seen.json").write_text(json.dumps(seen))


@needs_landlock
def test_a_confined_step_has_what_every_program_reads(tmp_path):
    """Its user's name (/etc/passwd), its own /proc entry, the time zones
    (/usr/share/zoneinfo), the devices programs open for nothing, zeros and randomness
    (read-only, but /dev/null), whatever the host's layout of /usr."""
    pair = tmp_path / "pair"
    pair.mkdir()
    confine.run(lambda: _what_programs_read(pair), write=pair, timeout=30)
    seen = json.loads((pair / "seen.json").read_text())
    import pwd

    assert seen == {"user": pwd.getpwuid(os.getuid()).pw_name, "own status": True,
                    "zone": "1:00:00", "/dev/null": "allowed",
                    "/dev/zero": "allowed", "/dev/full": "allowed", "/dev/random": "allowed",
                    "/dev/urandom": "allowed", "write /dev/null": "allowed",
                    "write /dev/zero": "denied"}


@needs_landlock
def test_a_server_step_past_its_limit_ends_at_the_limit(tmp_path):
    pair = tmp_path / "pair"
    pair.mkdir()
    server = confine.Server(write=pair)
    try:
        started = time.monotonic()
        with pytest.raises(confine.StepTimedOut):
            server.call(time.sleep, 20, timeout=0.5)
        assert time.monotonic() - started < 5
    finally:
        server.close()


def _surrogate():
    print("half a pair: \ud800", file=sys.stderr)


def _lose_scratch():
    import tempfile as scratch

    shutil.rmtree(scratch.gettempdir())


@needs_landlock
def test_a_steps_odd_output_and_lost_scratch_are_its_own_business(tmp_path, capfd,
                                                                   monkeypatch):
    """A step printing text that is no UTF-8 (a lone surrogate) still ends well, its words
    passed on. Unconfined on purpose (the user's opt-out), a step may remove its own
    private folder: it ends well too."""
    pair = tmp_path / "pair"
    pair.mkdir()
    confine.run(_surrogate, write=pair, timeout=30)
    assert capfd.readouterr().err == "half a pair: ?\n"
    monkeypatch.setenv(confine.OPT_OUT_VAR, "1")
    confine.run(_lose_scratch, write=pair, timeout=30)
    assert list(pair.iterdir()) == []


@needs_landlock
def test_a_server_request_its_child_cannot_read_fails_that_call_alone(tmp_path, capfd):
    """A step the child never knew (a function made after it was forked): that call fails
    with its traceback, and the server serves the next."""
    import types

    pair = tmp_path / "pair"
    pair.mkdir()
    server = confine.Server(write=pair)
    try:
        server.call(_print, "", timeout=30)
        late = types.ModuleType("wirebench_late_step")
        exec("def step():\n    pass\n", late.__dict__)
        sys.modules["wirebench_late_step"] = late
        try:
            with pytest.raises(confine.StepCrashed) as crashed:
                server.call(late.step, timeout=30)
        finally:
            del sys.modules["wirebench_late_step"]
        assert str(crashed.value) == "the confined step failed (exit 70)"
        assert "ModuleNotFoundError" in capfd.readouterr().err
        server.call(Path.write_text, pair / "next.txt", "served", timeout=30)
    finally:
        server.close()
    assert (pair / "next.txt").read_text() == "served"


@needs_landlock
def test_a_step_that_cannot_be_confined_never_runs(tmp_path):
    """A read path the kernel cannot take (a NUL byte in its name): the child stops before
    the step, and says why."""
    pair = tmp_path / "pair"
    pair.mkdir()
    with pytest.raises(confine.StepCrashed) as crashed:
        confine.run(lambda: (pair / "ran.txt").write_text("x"), write=pair,
                    read=["/tmp/a\0b"], timeout=30)
    assert str(crashed.value) == ("the confined step failed (exit 70) ValueError: "
                                  "embedded null byte")
    assert not (pair / "ran.txt").exists()


@needs_landlock
def test_the_folders_of_another_pid_namespaces_processes_are_left_alone(tmp_path):
    """/dev/shm is shared by every pid namespace of the machine: a pid from another one
    names no process here, so its folder is kept; a dead process of ours, or one from
    before folders named their namespace, has its folder removed."""
    from wirebench.runtime.user_folders import own_folder

    root = own_folder(confine.SHARED_MEMORY)
    if root is None or confine._memory_root() is None:
        pytest.skip("no private folders on tmpfs here")
    here = confine._pid_namespace()
    other = str(int(here) + 1)
    dead = str(_dead_pid())
    made = {name: Path(root) / f"{dead}-{name}" for name in (
        f"{here}-ours", f"{other}-theirs", "legacy")}
    for folder in made.values():
        folder.mkdir()
    try:
        confine._memory_root.cache_clear()
        confine._memory_root()
        assert {k: v.exists() for k, v in made.items()} == {
            f"{here}-ours": False, f"{other}-theirs": True, "legacy": False}
    finally:
        for folder in made.values():
            shutil.rmtree(folder, ignore_errors=True)


def _dead_pid() -> int:
    proc = subprocess.Popen(["true"])
    proc.wait()
    return proc.pid


def _lose_server_scratch():
    import tempfile as scratch

    shutil.rmtree(scratch.gettempdir())


@needs_landlock
def test_a_killed_server_child_is_reaped_and_an_unconfined_one_may_lose_its_scratch(
        tmp_path, monkeypatch):
    pair = tmp_path / "pair"
    pair.mkdir()
    server = confine.Server(write=pair)
    try:
        server.call(_print, "", timeout=30)
        first = server.pid
        with pytest.raises(confine.StepTimedOut):
            server.call(time.sleep, 20, timeout=0.5)
        assert not _alive(first), "the killed child is reaped, not left a zombie"
    finally:
        server.close()
    monkeypatch.setenv(confine.OPT_OUT_VAR, "1")
    loose = confine.Server(write=pair)
    try:
        loose.call(_lose_server_scratch, timeout=30)
    finally:
        loose.close()
