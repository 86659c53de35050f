"""bubblewrap as sandbox.command() builds it, run for real and looked at from inside:
the namespaces, capabilities, system folders, /tmp and its cap, expose:, death with the
step; and what a run checks before it starts (the command's files, a working bwrap).
Each test costs a bwrap start, so that every mutant of runtime/sandbox.py meets them all
(benchmarks/mutation_score.py --config isolation).
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


# --- bubblewrap: the command line sandbox.command() builds, run for real --------------------

INSIDE = r"""
import json, os, sys

def attempt(action):
    try:
        got = action()
        return "allowed" if got is None else got
    except PermissionError:
        return "denied"
    except OSError as exc:
        return f"error {exc.errno}"

def write(path, data=b"x"):
    with open(path, "wb") as fh:
        fh.write(data)

def kind(path):
    if os.path.islink(path):
        return ["link", os.readlink(path)]
    return ["dir"] if os.path.isdir(path) else None

status = dict(line.split(":\t", 1) for line in open("/proc/self/status").read().splitlines()
              if ":\t" in line)
spec = json.loads(sys.argv[1])
seen = {
    "namespaces": {ns: os.readlink(f"/proc/self/ns/{ns}")
                   for ns in ("pid", "ipc", "uts", "net", "cgroup", "mnt")},
    "session": os.getsid(0),
    "caps": {k: status[k].strip() for k in ("CapEff", "CapPrm")},
    "system": {p: kind(p) for p in spec["system"]},
    "cwd": os.getcwd(),
    "tmp mode": oct(os.stat("/tmp").st_mode),
    "work mode": oct(os.stat("/tmp/work").st_mode),
    "tmp bytes": os.statvfs("/tmp").f_blocks * os.statvfs("/tmp").f_frsize,
    "proc": os.path.exists("/proc/self/status"),
    "interfaces": sorted(line.split(":")[0].strip()
                         for line in open("/proc/net/dev").read().splitlines()[2:]),
    "read input": attempt(lambda: open("/tmp/inputs/task.md").read()),
    "write input": attempt(lambda: write("/tmp/inputs/task.md")),
    "write root": attempt(lambda: write("/planted")),
    "write dev": attempt(lambda: write("/dev/planted")),
    "write /dev/null": attempt(lambda: write("/dev/null")),
    "listed": {p: attempt(lambda p=p: sorted(os.listdir(p))) for p in spec["list"]},
    "read": {p: attempt(lambda p=p: open(p).read()) for p in spec["read"]},
}
pid = os.fork()
if pid == 0:  # the agent's user, as the launcher makes it
    os.setgroups([])
    os.setgid(65534)
    os.setuid(65534)
    as_nobody = {
        "write work": attempt(lambda: write("/tmp/work/a")),
        "write tmp": attempt(lambda: write("/tmp/a")),
        "read": {p: attempt(lambda p=p: open(p).read()) for p in spec["read"]},
        "fill the cap": attempt(lambda: write("/tmp/work/full", b"x" * spec["size"])),
    }
    os.unlink("/tmp/work/full")
    as_nobody["past the cap"] = attempt(
        lambda: write("/tmp/work/over", b"x" * (spec["size"] + 300_000)))
    os.unlink("/tmp/work/over")
    with open("/tmp/nobody.json", "w") as fh:
        json.dump(as_nobody, fh)
    os._exit(0)
os.waitpid(pid, 0)
seen["as nobody"] = json.load(open("/tmp/nobody.json"))
print(json.dumps(seen))
"""
HOST_SYSTEM = ["/usr", "/bin", "/sbin", "/lib", "/lib64", "/lib32", "/libx32", "/etc"]


def _host_kind(path: str):
    if os.path.islink(path):
        return ["link", os.readlink(path)]
    return ["dir"] if os.path.isdir(path) else None


def _inside(tmp_path: Path, *, network: bool = False, expose: list = (), size: int = 1 << 20,
            read: list = (), listed: list = ()) -> dict:
    inputs = tmp_path / "inputs"
    inputs.mkdir(exist_ok=True)
    (inputs / "task.md").write_text("the task")
    spec = {"system": HOST_SYSTEM, "size": size, "read": [str(p) for p in read],
            "list": [str(p) for p in listed]}
    argv = sandbox.command([sys.executable, "-I", "-c", INSIDE, json.dumps(spec)],
                           inputs=inputs, expose=list(expose), network=network, size=size)
    proc = subprocess.run(argv, capture_output=True, text=True, timeout=60, env={
        "PATH": "/usr/bin:/bin"})
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


def _own_namespaces() -> dict:
    return {ns: os.readlink(f"/proc/self/ns/{ns}")
            for ns in ("pid", "ipc", "uts", "net", "cgroup", "mnt")}


@needs_bwrap
@pytest.mark.parametrize("network", [False, True])
def test_a_sandbox_is_its_own_world_of_processes_hosts_and_mounts(tmp_path, network):
    """Its own pid, IPC, UTS, cgroup and mount namespaces; its own network namespace
    (loopback alone) unless the entry keeps `network`; a session of its own (no
    terminal to type into); only CAP_SETUID and CAP_SETGID when run by root, so that the
    launcher can become nobody; /proc of its own; the agent starts in /tmp/work."""
    seen = _inside(tmp_path, network=network)
    host = _own_namespaces()
    for ns in ("pid", "ipc", "uts", "cgroup", "mnt"):
        assert seen["namespaces"][ns] != host[ns], ns
    if network:
        assert seen["namespaces"]["net"] == host["net"]
    else:
        assert seen["namespaces"]["net"] != host["net"]
        assert seen["interfaces"] == ["lo"]
    assert seen["session"] != 0, "its session leader is outside the sandbox"
    caps = f"{(1 << 6) | (1 << 7):016x}" if os.geteuid() == 0 else "0" * 16
    assert seen["caps"] == {"CapEff": caps, "CapPrm": caps}
    assert seen["proc"] is True
    assert seen["cwd"] == "/tmp/work"


@needs_bwrap
def test_a_sandbox_holds_the_hosts_system_folders_as_the_host_has_them(tmp_path):
    """Every program and library folder of the host and /etc, each as the host has it (a
    merged-/usr system's /bin is a link to usr/bin, and so it is inside), and those the
    host lacks, lacking. Read-only, as are / and /dev; /dev/null still takes writes."""
    seen = _inside(tmp_path)
    assert seen["system"] == {p: _host_kind(p) for p in HOST_SYSTEM}
    assert seen["write root"] == "error 30" and seen["write dev"] == "error 30"  # EROFS
    assert seen["write /dev/null"] == "allowed"


@needs_bwrap
def test_the_agents_user_writes_tmp_and_its_work_folder_up_to_the_cap(tmp_path):
    """/tmp is a fresh tmpfs the size of the cap (and a little room for the file
    system's own blocks), world-writable with the sticky bit, and so is /tmp/work: the
    agent's user (nobody) can write a file of exactly max_output_bytes, not 300 kB more.
    Its inputs are at /tmp/inputs, read-only."""
    size = 1 << 20
    seen = _inside(tmp_path, size=size)
    assert seen["tmp mode"] == oct(0o41777) and seen["work mode"] == oct(0o41777)
    assert size < seen["tmp bytes"] <= size + (256 << 10) + 4096
    assert seen["as nobody"]["write work"] == "allowed"
    assert seen["as nobody"]["write tmp"] == "allowed"
    assert seen["as nobody"]["fill the cap"] == "allowed"
    assert seen["as nobody"]["past the cap"] == "error 28"  # ENOSPC
    assert seen["read input"] == "the task"
    assert seen["write input"] == "error 30"


@needs_bwrap
def test_expose_shows_folders_read_only_to_the_agents_user_and_never_the_whole_host(tmp_path):
    """An exposed folder under folders only root may enter (pytest's 0700 temp folders)
    is readable by the agent's user; a folder inside another exposed one, a path that
    does not exist, a link (its target is shown) and "/" or "/tmp" are fine to list: "/"
    never shows the host, and what is not exposed stays unseen."""
    lib = tmp_path / "private" / "lib"
    (lib / "sub").mkdir(parents=True)
    (lib / "sym.kicad_sym").write_text("symbols")
    (lib / "sub" / "deep.txt").write_text("deep")
    (tmp_path / "private" / "secret.txt").write_text("secret")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "x.txt").write_text("linked")
    link = tmp_path / "link"
    link.symlink_to(elsewhere)
    seen = _inside(tmp_path, expose=[lib / "sub", lib, tmp_path / "missing", "/", "/tmp", link],
                   read=[lib / "sym.kicad_sym", lib / "sub" / "deep.txt",
                         elsewhere / "x.txt", tmp_path / "private" / "secret.txt"],
                   listed=["/", str(tmp_path)])
    assert seen["as nobody"]["read"] == {
        str(lib / "sym.kicad_sym"): "symbols", str(lib / "sub" / "deep.txt"): "deep",
        str(elsewhere / "x.txt"): "linked",
        str(tmp_path / "private" / "secret.txt"): "error 2"}
    assert sorted(seen["listed"][str(tmp_path)]) == ["elsewhere", "private"]
    # Folders made on the way to an exposed one leave /tmp as it was: the agent's to write.
    assert seen["tmp mode"] == oct(0o41777) and seen["as nobody"]["write tmp"] == "allowed"
    from wirebench.runtime.confine import python_reads

    allowed = {Path(p).name for p in HOST_SYSTEM} | {"proc", "dev", "tmp"} | {
        Path(p).parts[1] for p in python_reads()}
    assert set(seen["listed"]["/"]) <= allowed
    assert "var" not in seen["listed"]["/"] and "home" not in seen["listed"]["/"]


@needs_bwrap
def test_a_sandbox_dies_with_the_process_that_started_it(tmp_path):
    """kill -9 of the step that started an agent: the agent goes too, not on, billing."""
    inputs = tmp_path / "inputs"
    inputs.mkdir()
    marker = f"{70 + os.getpid() % 1000}.5"
    argv = sandbox.command(["sleep", marker], inputs=inputs, expose=[], network=False,
                           size=1 << 20)
    parent = subprocess.Popen([sys.executable, "-c",
                               "import subprocess, sys, time\n"
                               "subprocess.Popen(sys.argv[1:])\n"
                               "time.sleep(60)\n", *argv])
    try:
        deadline = time.monotonic() + 10
        while not _running("sleep " + marker) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert _running("sleep " + marker)
    finally:
        parent.kill()
        parent.wait()
    deadline = time.monotonic() + 5
    while _running("sleep " + marker) and time.monotonic() < deadline:
        time.sleep(0.05)
    left = _running("sleep " + marker)
    if left:
        subprocess.run(["pkill", "-f", "sleep " + marker])
    assert not left, "the agent outlived the step that started it"


def _running(command: str) -> bool:
    return subprocess.run(["pgrep", "-f", f"^{command}$"], capture_output=True).returncode == 0


# --- what a run checks before it starts: the command's files, a working bwrap --------------

def test_a_command_naming_code_its_sandbox_hides_is_refused_before_the_run(tmp_path,
                                                                          monkeypatch):
    """A script or program the command names that the sandbox will not show would make
    every pair of the entry an infra error: the run refuses it first, naming it and the
    fix (`files:` for the project's own, `expose:` for a folder elsewhere). Data files,
    paths that do not exist, system programs and an exposed folder's scripts pass."""
    from wirebench.agents.setup import prepare_jobs

    hidden = tmp_path / "hidden"
    hidden.mkdir()
    (hidden / "agent.py").write_text("print('{}')")
    (hidden / "agent.sh").write_text("echo '{}'")
    (hidden / "run-agent").write_text("#!/bin/sh\necho '{}'\n")
    (hidden / "run-agent").chmod(0o755)
    (hidden / "data.json").write_text("{}")
    link = tmp_path / "exposed-link"
    link.symlink_to(hidden)
    monkeypatch.chdir(hidden)
    for name in ("WIREBENCH_SECRET_NAMES", confine.OPT_OUT_VAR):
        monkeypatch.setenv(name, "")

    def refusal(command: str, **entry) -> str | None:
        try:
            prepare_jobs({"m": {"kind": "command", "command": command, **entry}}, False)
        except sandbox.Unavailable as exc:
            return str(exc)
        return None

    for command in (f"python3 {hidden}/agent.py --fast", f"sh {hidden}/agent.sh",
                    f"{hidden}/run-agent"):
        why = refusal(command)
        assert why is not None and why.startswith(f"models.m.command names ['{hidden}/"), \
            command
        assert "List it (or its folder) under `expose:` (models.m.expose)" in why
        assert refusal(command, expose=[str(hidden)]) is None, command
        assert refusal(command, expose=[str(link)]) is None, command
    why = refusal("python3 agent.py")
    assert why == ("models.m.command names ['agent.py'], which its sandbox will not show: "
                   "the agent starts in an empty folder of its own, with the project hidden. "
                   "List it under `files:` (models.m.files: [agent.py]) and name it as "
                   '"$PROJECT_DIR/agent.py" in the command')
    assert refusal(f"python3 {hidden}/agent.py", expose=[str(tmp_path / "other")]) is not None
    # /dev/shm is the host's: the sandbox has a /dev of its own, without it.
    shm = Path(tempfile.mkdtemp(dir="/dev/shm"))
    try:
        (shm / "agent.sh").write_text("echo '{}'")
        assert refusal(f"sh {shm}/agent.sh") is not None
    finally:
        shutil.rmtree(shm)
    for fine in (f"cat {hidden}/data.json", f"python3 {hidden}/missing.py",
                 f"python3 {os.__file__}", "/usr/bin/env true", 'echo "unterminated',
                 "wirebench-baseline"):
        assert refusal(fine) is None, fine


def test_a_bwrap_that_cannot_make_a_sandbox_is_no_bwrap(tmp_path, monkeypatch, capfd):
    """A bwrap that fails its probe (no user namespaces for this user, say) is refused as
    if absent, with the fix named; one that works is found on PATH."""
    fake = tmp_path / "bin"
    fake.mkdir()
    (fake / "bwrap").write_text("#!/bin/sh\necho 'bwrap: No permissions to create new "
                                "namespace' >&2\nexit 1\n")
    (fake / "bwrap").chmod(0o755)
    monkeypatch.setenv("PATH", str(fake))
    sandbox.bwrap.cache_clear()
    try:
        assert sandbox.bwrap() is None
        assert capfd.readouterr() == ("", ""), "the probe's own words stay out of the run's"
        with pytest.raises(sandbox.Unavailable) as refused:
            sandbox.require()
        assert str(refused.value) == (
            "command agents run inside bubblewrap, and no working `bwrap` was found "
            "(Debian/Ubuntu: apt-get install bubblewrap; it also needs unprivileged user "
            "namespaces, or root). Set `unsafe_no_sandbox: true` to run agents unconfined "
            "on purpose")
        real = shutil.which("bwrap", path="/usr/bin:/bin")
        if real:
            monkeypatch.setenv("PATH", f"{Path(real).parent}:{fake}")
            sandbox.bwrap.cache_clear()
            assert sandbox.require() == real
    finally:
        sandbox.bwrap.cache_clear()


@needs_bwrap
@pytest.mark.skipif(os.geteuid() != 0, reason="run by root, the agent becomes nobody")
def test_run_by_root_a_command_agent_is_the_hosts_nobody(tmp_path):
    """Not some unused uid: the host's own `nobody`, whom no file of the host belongs to."""
    import pwd

    from conftest import REPO, TASKS

    from wirebench.agents.answer import TurnContext
    from wirebench.agents.command import answer
    from wirebench.corpus.tasks import load_task

    ctx = TurnContext("m", load_task(TASKS / "01-divider"), 1, 1, REPO / "README.md",
                      REPO / "skills")
    ans = answer({"command": 'id -u > "$OPS_OUT"', "timeout": 30}, ctx)
    assert ans.ops.decode().strip() == str(pwd.getpwnam("nobody").pw_uid)
