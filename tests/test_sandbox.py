"""The review's escapes, each tried for real: an agent in bubblewrap, akcli steps under
Landlock, a stale attempt after kill -9, a step past its time limit.

Each test attacks the way an untrusted agent would, and checks what the kernel did, not
what a field check said: several go around wirebench's own guard on purpose.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import REPO, SYMBOLS, TASKS, write_ops

from wirebench.agents.answer import TurnContext
from wirebench.corpus.tasks import load_task
from wirebench.runtime import confine, landlock, sandbox

needs_landlock = pytest.mark.skipif(
    landlock.abi() < landlock.MIN_ABI and not os.environ.get("CI"),
    reason="this kernel has no Landlock")
needs_bwrap = pytest.mark.skipif(sandbox.bwrap() is None and not os.environ.get("CI"),
                                 reason="no working bubblewrap (apt-get install bubblewrap)")
ANSWER_KEY = TASKS / "13-edit-add-status-led" / "reference_ops.json"


# --- akcli steps: Landlock ---------------------------------------------------------------

def _attempts(folder: Path, other: Path | None = None, parent: int | None = None,
              unix: str | None = None) -> dict:
    """In the confined child: try what an op-list field could make akcli do. `other`: a
    file in another pair's private folder; `parent`: the process that started the step;
    `unix`: a Unix socket that listens (as the warm worker's does)."""
    import socket
    import tempfile

    tried = {}
    for name, action in {
        "write_private": lambda: Path(tempfile.mkstemp()[1]).write_text("x"),
        **({"read_other_private": lambda: other.read_bytes(),
            "list_private_folders": lambda: os.listdir(other.parent.parent)} if other else {}),
        "read_answer_key": lambda: ANSWER_KEY.read_bytes(),
        "list_corpus": lambda: os.listdir(TASKS),
        "read_project": lambda: (REPO / "README.md").read_bytes(),
        "read_parent_environ": lambda: Path(f"/proc/{parent or os.getppid()}/environ"
                                            ).read_bytes(),
        "write_outside": lambda: (folder.parent / "escaped.txt").write_text("x"),
        "write_inside": lambda: (folder / "inside.txt").write_text("x"),
        "read_symbols": lambda: Path(SYMBOLS[0]).read_bytes()[:10],
        "tcp_connect": lambda: socket.create_connection(("127.0.0.1", 9), timeout=1),
        # Second review, findings 2 and 5: data out over UDP, and the worker's socket.
        "udp_send": lambda: socket.socket(socket.AF_INET, socket.SOCK_DGRAM).sendto(
            b"secret", ("127.0.0.1", 9)),
        **({"unix_connect": lambda: socket.socket(socket.AF_UNIX).connect(unix)}
           if unix else {}),
    }.items():
        try:
            action()
            tried[name] = "allowed"
        except PermissionError:
            tried[name] = "denied"
        except OSError as exc:  # a refused TCP connect is no denial: the kernel let it out
            tried[name] = f"error {exc.errno}"
    (folder / "tried.json").write_text(json.dumps(tried))
    return tried


@pytest.fixture(params=["tmpfs", "no room"])
def room(request, monkeypatch):
    """The children's private folders on tmpfs (when it has room here), or, as in a
    container's 64 MB /dev/shm, in their pairs' folders."""
    if request.param == "no room":
        monkeypatch.setattr(confine, "SHARED_MEMORY_ROOM", 1 << 60)
    monkeypatch.setattr(confine, "_memory_root", confine._memory_root.__wrapped__)
    return request.param


@needs_landlock
def test_a_confined_step_reaches_its_folder_and_nothing_of_ours(tmp_path, room):
    import shutil

    pair = tmp_path / "pair"
    pair.mkdir()
    # Another pair's step, running at the same time: its private folder (on tmpfs when
    # there is room, as here) holds its draft sheet.
    (tmp_path / "other").mkdir()
    other = Path(confine._private_folder(str(tmp_path / "other")))
    (other / "board.kicad_sch").write_text("another pair's draft")
    before = set(Path(confine.SHARED_MEMORY).rglob("*"))
    import socket

    listener = socket.socket(socket.AF_UNIX)
    listener.bind(str(tmp_path / "worker.sock"))
    listener.listen(1)
    me = os.getpid()
    try:
        confine.run(lambda: _attempts(pair, other / "board.kicad_sch", me,
                                      str(tmp_path / "worker.sock")), write=pair,
                    read=[SYMBOLS[0]], timeout=30)
    finally:
        listener.close()
        shutil.rmtree(other)
    tried = json.loads((pair / "tried.json").read_text())
    assert tried == {
        "write_private": "allowed", "read_other_private": "denied",
        "list_private_folders": "denied",
        "read_answer_key": "denied", "list_corpus": "denied", "read_project": "denied",
        "read_parent_environ": "denied", "write_outside": "denied", "write_inside": "allowed",
        "read_symbols": "allowed", "tcp_connect": "denied", "udp_send": "denied",
        "unix_connect": "denied"}
    assert not (tmp_path / "escaped.txt").exists()
    assert [p.name for p in pair.iterdir() if p.name.startswith(".")] == [], \
        "the child's private TMPDIR is gone"
    # Ours only: the folders are named by the pid that made them, and other runs on this
    # machine may be making theirs meanwhile.
    left = {p for p in set(Path(confine.SHARED_MEMORY).rglob("*")) - before
            if p.name.startswith(f"{os.getpid()}-")}
    assert not left, f"a private folder is left: {left}"


def _read_each(pair: Path, paths: list[str]) -> None:
    tried = {}
    for path in paths:
        try:
            Path(path).read_bytes()
            tried[path] = "allowed"
        except PermissionError:
            tried[path] = "denied"
    (pair / "tried.json").write_text(json.dumps(tried))


@needs_landlock
def test_a_confined_step_reads_an_allow_list_wherever_a_copy_of_the_corpus_lies(tmp_path):
    """Second review, finding 11, for the akcli steps: a copy of the answer key outside the
    project (in /opt, /var/lib, /srv) is as unreadable as the one in the project."""
    import shutil

    pair = tmp_path / "pair"
    pair.mkdir()
    copies = [Path(f"{root}/wirebench-canary-{os.getpid()}/reference_ops.json")
              for root in ("/opt", "/var/lib", "/srv")]
    try:
        for copy in copies:
            copy.parent.mkdir(parents=True)
            copy.write_text('{"ops": []}')
        confine.run(lambda: _read_each(pair, [str(c) for c in copies]), write=pair,
                    timeout=30)
        tried = json.loads((pair / "tried.json").read_text())
        assert tried == {str(c): "denied" for c in copies}
    finally:
        for copy in copies:
            shutil.rmtree(copy.parent, ignore_errors=True)


@needs_landlock
def test_a_childs_private_folder_is_on_tmpfs_or_in_its_pair_and_gone_after(tmp_path, room):
    """Scratch files on tmpfs spare the results' filesystem (ext4 without a journal slows
    every file creation after a deletion); without room there, the pair's folder."""
    import tempfile

    root = confine._memory_root()
    if root is not None:  # what a worker killed with -9 left, and what a live one holds
        gone = Path(tempfile.mkdtemp(dir=root, prefix=f"{_dead_pid()}-"))
        held = Path(tempfile.mkdtemp(dir=root, prefix=f"{os.getpid()}-"))
        try:
            assert confine._memory_root() == root
            assert not gone.exists() and held.exists()
        finally:
            held.rmdir()
    pair = tmp_path / "pair"
    pair.mkdir()
    confine.run(lambda: (pair / "tmp.txt").write_text(tempfile.gettempdir()), write=pair,
                timeout=30)
    private = Path((pair / "tmp.txt").read_text())
    # Without 1 GB free on tmpfs (a container's 64 MB /dev/shm), the pair's own folder.
    expected = Path(confine.SHARED_MEMORY) if root is not None else pair
    assert expected in private.parents and not private.exists()
    assert [p.name for p in pair.iterdir()] == ["tmp.txt"]
    if room == "no room":
        assert root is None


def _dead_pid() -> int:
    proc = subprocess.Popen(["true"])
    proc.wait()
    return proc.pid


@needs_landlock
def test_the_step_server_confines_every_step_it_serves(tmp_path):
    """A tool-calling pair's steps run in one confined child (confine.Server): it reaches
    no more than a one-shot step, serves step after step, survives a step that raises, and
    a step past its limit kills it (the next call gets a fresh child)."""
    pair = tmp_path / "pair"
    pair.mkdir()
    server = confine.Server(write=pair, read=[SYMBOLS[0]])
    try:
        for _ in range(2):
            server.call(_attempts, pair, timeout=30)
            tried = json.loads((pair / "tried.json").read_text())
            assert {k: v for k, v in tried.items() if v == "allowed"} == {
                "write_private": "allowed", "write_inside": "allowed",
                "read_symbols": "allowed"}, tried
        first = server.pid
        with pytest.raises(confine.StepCrashed):
            server.call(Path.read_bytes, ANSWER_KEY, timeout=30)  # PermissionError
        server.call(Path.write_text, pair / "after.txt", "served", timeout=30)
        assert server.pid == first and server.served == 4
        with pytest.raises(confine.StepTimedOut):
            server.call(time.sleep, 30, timeout=0.5)
        assert server.pid is None  # killed with everything it started
        server.call(Path.write_text, pair / "again.txt", "x", timeout=30)
        assert server.pid not in (None, first)
    finally:
        server.close()
    assert (pair / "after.txt").read_text() == "served" and (pair / "again.txt").exists()
    assert not (tmp_path / "escaped.txt").exists()
    assert [p.name for p in pair.iterdir() if p.name.startswith(".")] == []


def _valid(folder: Path) -> Path:
    """A validate.json that says yes: the op-list goes past the field guard to akcli."""
    path = folder / "validate.json"
    path.write_text(json.dumps({"schema": "wirebench.validate/1", "valid": True, "errors": []}))
    return path


@needs_landlock
@pytest.mark.parametrize("field", ["run_id", "symbol_source"])
def test_an_oplist_field_cannot_reach_past_the_pair_even_around_the_guard(tmp_path, field):
    """Review findings 4 and 5: akcli writes a transaction's backups under `run_id`, and
    reads a symbol from `symbol_source`, wherever they point. The guard names both fields
    (first half); the kernel stops them even when the guard is bypassed (second half)."""
    from wirebench.steps.apply import apply
    from wirebench.steps.validate import validate

    task = "19-hierarchical-frontend"
    doc = json.loads((TASKS / task / "reference_ops.json").read_text())
    outside = tmp_path / "outside"
    outside.mkdir()
    if field == "run_id":
        doc["run_id"] = str(outside / "pwned")  # akcli joins it to its backups folder
    else:
        place = next(op for op in doc["ops"] if op.get("op") == "place_component")
        place["symbol_source"] = str(ANSWER_KEY)
    pair = tmp_path / "pair"
    pair.mkdir()
    ops = pair / "ops.json"
    ops.write_text(json.dumps(doc))

    verdict = validate(ops, pair / "validate.json")
    assert not verdict["valid"]
    assert any(f"$.{field}" in e or f".{field}" in e for e in verdict["errors"]), \
        verdict["errors"]

    result = apply(ops, _valid(pair), TASKS / task, SYMBOLS, pair / "board.kicad_sch",
                   pair / "apply.json")
    assert not result["applied"]
    assert "Permission denied" in " ".join(result["errors"]), result["errors"]
    assert list(outside.iterdir()) == []
    assert "protocol_version" not in " ".join(result["errors"]), "no byte of the key leaks"


@needs_landlock
def test_a_step_past_its_time_limit_is_a_verdict_on_the_pair(tmp_path):
    """Review finding 15: a valid op-list of 2,000 resistors took 103 s in apply, with no
    limit. Past the limit the pair is invalid, named so, and scored."""
    from wirebench.steps.apply import apply
    from wirebench.steps.nets import nets
    from wirebench.steps.score import score

    pair = tmp_path / "pair"
    pair.mkdir()
    ops = write_ops(pair / "ops.json", [
        {"op": "place_component", "lib_id": "Device:R", "designator": f"R{i}",
         "x_mil": 1000 + 400 * (i % 40), "y_mil": 1000 + 400 * (i // 40), "value": "1k"}
        for i in range(1, 2001)])
    started = time.monotonic()
    result = apply(ops, _valid(pair), TASKS / "01-divider", SYMBOLS, pair / "board.kicad_sch",
                   pair / "apply.json", pair / "board.svg", timeout=1.5)
    assert time.monotonic() - started < 20
    assert result["errors"] == ["apply exceeded 1.5 s"] and not result["applied"]
    assert "exceeded 1.5 s" in (pair / "board.svg").read_text()
    assert [p.name for p in pair.iterdir() if p.name.startswith(".")] == [], "scratch swept"
    nets(pair / "board.kicad_sch", pair / "nets.json")
    scored = score(pair / "validate.json", pair / "apply.json", pair / "nets.json",
                   TASKS / "01-divider", pair / "score.json",
                   {"model": "m", "task": "01-divider", "sample": 1})
    assert (scored["outcome"], scored["passed"]) == ("invalid", False)
    assert "apply exceeded 1.5 s" in scored["errors"]


# --- command agents: bubblewrap ------------------------------------------------------------

def _agent(command: str, task: str = "13-edit-add-status-led", **entry):
    from wirebench.agents.command import answer

    ctx = TurnContext("m", load_task(TASKS / task), 1, 1, REPO / "README.md", REPO / "skills")
    return answer({"command": command, "timeout": 20, **entry}, ctx)


@needs_bwrap
def test_a_command_agent_cannot_reach_the_answer_key(tmp_path):
    """Review finding 1: `cp "$(dirname "$TASK_FILE")/reference_ops.json" "$OPS_OUT"`
    scored 1.0. Now TASK_FILE is a copy, and the corpus is not in the sandbox at all."""
    ans = _agent(f'cp "$(dirname "$TASK_FILE")/reference_ops.json" "$OPS_OUT" || '
                 f'cp {ANSWER_KEY} "$OPS_OUT" || cp {REPO}/tasks/*/reference_ops.json "$OPS_OUT"')
    assert ans.status == "no_answer" and ans.ops is None  # a failed cp is the agent's failure
    assert "No such file" in ans.detail["stderr_tail"]
    listing = _agent('ls -a "$(dirname "$TASK_FILE")" > "$OPS_OUT"; ls /tmp/inputs/skills >&2')
    assert listing.ops.split() == [b".", b"..", b"base_ops.json", b"prompt.md", b"skills",
                                   b"task.md"]


@needs_bwrap
def test_a_command_agent_imports_the_package_the_harness_runs(tmp_path):
    """A harness run from a copy of the package (a checkout on PYTHONPATH, a breakage
    copy) shows that copy to the sandbox: wirebench's own agents inside must import it,
    not the installed one the sandbox hides (every baseline pair failed on that)."""
    import shutil

    import wirebench

    copy = tmp_path / "pkg"
    shutil.copytree(Path(wirebench.__file__).parent, copy / "wirebench",
                    ignore=shutil.ignore_patterns("__pycache__"))
    driver = (
        "import sys\nfrom pathlib import Path\n"
        "from wirebench.agents.answer import TurnContext\n"
        "from wirebench.agents.command import answer\n"
        "from wirebench.corpus.tasks import load_task\n"
        f"ctx = TurnContext('m', load_task(Path({str(TASKS / '01-divider')!r})), 1, 1,"
        f" Path({str(REPO / 'README.md')!r}), Path({str(REPO / 'skills')!r}))\n"
        "cmd = 'python3 -c \"import wirebench; print(wirebench.__file__)\" > \"$OPS_OUT\"'\n"
        "ans = answer({'command': cmd, 'timeout': 20}, ctx)\n"
        "sys.stdout.write((ans.ops or b'').decode() + '|' + ans.detail.get('stderr_tail', ''))\n")
    proc = subprocess.run([sys.executable, "-c", driver], capture_output=True, text=True,
                          env={**os.environ, "PYTHONPATH": str(copy)}, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split("|")[0].strip() == str(copy / "wirebench" / "__init__.py"), \
        proc.stdout


@needs_bwrap
def test_a_command_agent_sees_no_secret_but_its_own(tmp_path, monkeypatch):
    """Review finding 7: /proc/$PPID/environ held Snakemake's whole environment, every
    provider's key. The sandbox has its own pid namespace and an environment built from
    nothing; the agent's own key is there only because its entry names it."""
    monkeypatch.setenv("WB_MINE", "sk-mine-0123456789")
    monkeypatch.setenv("WB_OTHER", "sk-other-9876543210")
    ans = _agent('cat /proc/[0-9]*/environ | tr "\\0" "\\n" > "$OPS_OUT"; '
                 f'cat /proc/{os.getpid()}/environ >> "$OPS_OUT" 2>/dev/null; '
                 'ls /proc | grep -c "^[0-9]" >&2', env=["WB_MINE"])
    assert b"sk-mine-0123456789" in ans.ops
    assert b"sk-other" not in ans.ops
    host = sum(name.isdigit() for name in os.listdir("/proc"))
    assert int(ans.detail["stderr_tail"].split()[-1]) <= 8 < host, "only the sandbox's processes"


@needs_bwrap
def test_everything_an_agent_started_dies_with_it(tmp_path):
    """Review finding 10: a process left running after a normal exit, or a `setsid` child,
    outlived its step."""
    marker = f"sleep 6{os.getpid() % 1000}.5"  # a command line no other process has
    ans = _agent(f'{marker} & setsid {marker} & (setsid {marker} &) ; '
                 'echo "{}" > "$OPS_OUT"')
    assert ans.status == "ok"
    time.sleep(0.3)
    left = subprocess.run(["pgrep", "-f", marker], capture_output=True, text=True).stdout
    assert left == "", f"still running: {left}"


@needs_bwrap
def test_the_output_cap_is_a_total_over_the_agents_files(tmp_path):
    """Review finding 11: 40 files of 1 MB were accepted under a 1 MB cap."""
    ans = _agent('for i in $(seq 40); do head -c 100000 /dev/zero > f$i; done; '
                 'echo "{}" > "$OPS_OUT"', max_output_bytes=1_000_000)
    assert (ans.status, ans.ops) == ("no_answer", None)
    assert "more than max_output_bytes (1000000)" in ans.error
    small = _agent('head -c 1000 /dev/zero > f; echo "{}" > "$OPS_OUT"',
                   max_output_bytes=1_000_000)
    assert small.status == "ok"


@needs_bwrap
def test_an_agent_cannot_write_outside_its_sandbox(tmp_path):
    target = tmp_path / "planted.txt"
    name = f"planted-{os.getpid()}.txt"
    try:
        ans = _agent(f'echo x > {target}; echo x > {REPO}/{name}; '
                     f'echo x > /tmp/{name}; echo "{{}}" > "$OPS_OUT"')
        assert ans.status == "ok"
        assert not target.exists() and not (REPO / name).exists()
        assert not Path(f"/tmp/{name}").exists()
    finally:  # a broken sandbox must not leave them behind either
        (REPO / name).unlink(missing_ok=True)
        Path(f"/tmp/{name}").unlink(missing_ok=True)


@needs_bwrap
def test_a_command_agent_has_no_capabilities_and_is_never_root(tmp_path):
    """Second review, finding 4: run by root, the agent kept every capability (CapEff
    000001fffeffffff), unmounted what hid the host, and remounted / read-write. Now it has
    none, and is nobody: root's ownership of the host's files means nothing to it."""
    ans = _agent('{ grep CapEff /proc/self/status; id -u; umount /tmp && echo UMOUNTED; '
                 'mount -o remount,rw / && echo REMOUNTED; cat /etc/shadow; } >&2 2>/dev/null; '
                 'echo "{}" > "$OPS_OUT"')
    lines = ans.detail["stderr_tail"].splitlines()
    assert lines[0].split() == ["CapEff:", "0000000000000000"]
    assert lines[1] != "0" and (os.geteuid() != 0 or lines[1] == str(sandbox.AGENT_UID))
    assert "UMOUNTED" not in lines and "REMOUNTED" not in lines
    assert len(lines) == 2, f"read what only root may read: {lines[2:3]}"


@needs_bwrap
def test_a_command_agent_sees_an_allow_list_not_the_host_minus_a_list(tmp_path):
    """Second review, finding 11: `find / -path "*tasks/$TASK_ID/reference_ops.json"`
    found a second checkout of the corpus outside every hidden folder. Now the sandbox
    holds the system folders, Python and the agent's inputs, and nothing else."""
    canary = Path(f"/var/lib/wirebench-canary-{os.getpid()}")
    key = canary / "tasks" / "01-divider" / "reference_ops.json"
    try:
        key.parent.mkdir(parents=True)
        key.write_text('{"ops": []}')
        ans = _agent('echo searched > "$OPS_OUT"; '
                     'find / -name reference_ops.json 2>/dev/null >> "$OPS_OUT"; '
                     'ls / >&2; ls /var/lib >> "$OPS_OUT" 2>/dev/null; true')
        assert ans.ops is not None and str(canary) not in ans.ops.decode()
        assert b"reference_ops" not in ans.ops
        top = set(ans.detail["stderr_tail"].split())
        from wirebench.runtime.confine import python_reads

        allowed = {Path(p).name for p in sandbox.SYSTEM} | {"proc", "dev", "tmp"} | {
            Path(p).parts[1] for p in python_reads()}
        assert top <= allowed, f"host folders shown: {top - allowed}"
    finally:
        import shutil

        shutil.rmtree(canary, ignore_errors=True)


@needs_bwrap
def test_every_place_an_agent_can_write_counts_against_its_cap(tmp_path):
    """Second review, finding 9: the tmpfs mounts that covered /home, /root, /mnt, /srv,
    /media, /var/tmp, the project and /dev were writable, each sized at half the RAM:
    320 MB written under a 1 MiB cap was scored normally. Now /tmp is the one writable
    place, and it is the cap."""
    tries = " ".join(["/home", "/root", "/mnt", "/srv", "/media", "/var/tmp", "/dev",
                      "/dev/shm", "/", str(REPO), "/tmp"])
    ans = _agent(f'for d in {tries}; do (head -c 300000 /dev/zero > "$d/w$$") 2>/dev/null '
                 '&& echo "$d" >&2; done; '
                 'find / \\( -path /proc -o -path /sys \\) -prune -o -type d -writable -print '
                 '2>/dev/null > "$OPS_OUT"; true', max_output_bytes=1_000_000)
    assert ans.status == "ok", ans.error
    assert ans.detail["stderr_tail"].split() == ["/tmp"]
    writable = ans.ops.decode().split()
    assert writable and all(d == "/tmp" or d.startswith("/tmp/") for d in writable), writable


# --- generate: a stale attempt after kill -9 -----------------------------------------------

@needs_bwrap
def test_a_stale_attempt_can_never_overwrite_the_current_answer(tmp_path):
    """Review finding 9: after kill -9 of Snakemake the old generate step and its agent
    lived on, and the old agent later overwrote the finished pair's ops.json. Now the
    newer attempt stops the older one, and the older could not have written anyway."""
    pair = tmp_path / "results" / "runs" / "m" / "01-divider" / "1"
    answers = tmp_path / "answers"
    answers.mkdir()
    (answers / "new.json").write_text(json.dumps({"ops": [], "who": "new"}))
    (answers / "old.json").write_text(json.dumps({"ops": [], "who": "old"}))

    def step(which: str, delay: float) -> subprocess.Popen:
        entry = {"kind": "command", "retries": 0, "expose": [str(answers)],
                 "command": f'sleep {delay}; cp {answers}/{which}.json "$OPS_OUT"'}
        return subprocess.Popen(
            [sys.executable, "-m", "wirebench.cli", "step", "generate", "--model", "m",
             "--kind", "command", "--agent", json.dumps(entry), "--task",
             str(TASKS / "01-divider"), "--sample", "1", "--ops", str(pair / "ops.json"),
             "--agent-out", str(pair / "agent.json")],
            env={**os.environ, "WIREBENCH_WORKER": "0"}, stderr=subprocess.PIPE, text=True)

    old = step("old", 4)
    deadline = time.monotonic() + 30
    while not (pair / ".generate.owner").exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    new = step("new", 0.1)
    assert new.wait(timeout=60) == 0, new.stderr.read()
    # Stopped at once, by the newer attempt: its agent had seconds left to run.
    assert old.wait(timeout=1) == -signal.SIGKILL, "the older attempt was stopped"
    assert json.loads((pair / "ops.json").read_text())["who"] == "new"
    time.sleep(4.5)  # past the time the old agent would have answered
    assert json.loads((pair / "ops.json").read_text())["who"] == "new"
    assert sorted(p.name for p in pair.iterdir()) == ["agent.json", "ops.json"]


def test_a_superseded_attempt_drops_its_answer(tmp_path):
    from wirebench.steps.attempt import Superseded, claim, still_current

    first = claim(tmp_path)
    second = claim(tmp_path)
    with pytest.raises(Superseded), still_current(tmp_path, first):
        pass
    with still_current(tmp_path, second):
        (tmp_path / "ops.json").write_text("{}")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["ops.json"]


# --- secrets -------------------------------------------------------------------------------

def test_redaction_finds_a_key_at_the_tail_cut_and_in_json_spelling(tmp_path, monkeypatch):
    """Review finding 8: a key cut at the 4 KiB tail boundary, or changed by JSON
    escaping, survived redaction."""
    from wirebench.steps.generate import _tail

    key = 'sk-"quoted"\\key-0123456789'
    monkeypatch.setenv("WB_KEY", key)
    monkeypatch.setenv("WB_OTHERS_KEY", "sk-others-5555555555")
    monkeypatch.setenv("WIREBENCH_SECRET_NAMES", "WB_KEY,WB_OTHERS_KEY")
    spec = {"env": []}  # neither key is this entry's own
    text = "x" * 100 + key + "y" * 4090
    tail = _tail(text, spec)
    assert len(tail) == 4096
    for n in range(6, len(key)):
        assert key[-n:] not in tail
    from wirebench.agents.secrets import redact

    dumped = json.dumps({"err": f"{key} and sk-others-5555555555"})
    assert "0123456789" not in redact(dumped, spec)
    assert "5555555555" not in redact(dumped, spec)


def test_no_sandbox_means_a_clear_refusal_unless_the_user_opts_out(monkeypatch):
    monkeypatch.setenv("PATH", "/nonexistent")  # a machine without bwrap
    sandbox.bwrap.cache_clear()
    try:
        with pytest.raises(sandbox.Unavailable, match="unsafe_no_sandbox"):
            sandbox.require()
    finally:
        sandbox.bwrap.cache_clear()


@needs_landlock
def test_a_relative_symbol_source_means_the_pairs_folder_wherever_the_run_starts(
        tmp_path, monkeypatch):
    """Review finding 5: `symbol_source` resolved against the process's working folder,
    so a score depended on where the run started, and errors told the agent which of our
    files exist. The guard lets a plain relative path through; it now resolves in the
    pair's folder, and the project's own library next to the run is not found."""
    from wirebench.steps.apply import apply

    doc = json.loads((TASKS / "01-divider" / "reference_ops.json").read_text())
    for op in doc["ops"]:
        if op.get("op") == "place_component":
            op["symbol_source"] = "symbols/Device.kicad_sym"
    verdicts = []
    for cwd in (REPO, tmp_path):
        monkeypatch.chdir(cwd)
        pair = tmp_path / f"pair-{len(verdicts)}"
        pair.mkdir()
        (pair / "ops.json").write_text(json.dumps(doc))
        result = apply(pair / "ops.json", _valid(pair), TASKS / "01-divider", SYMBOLS,
                       pair / "board.kicad_sch", pair / "apply.json")
        verdicts.append((result["applied"], [e.replace(str(pair), "<pair>")
                                             for e in result["errors"]]))
    assert verdicts[0] == verdicts[1], "the same answer, the same verdict, from any folder"
    assert verdicts[0][0] is False and str(REPO) not in " ".join(verdicts[0][1])
