"""Landlock on its own, against the real kernel, in a forked child: the folders it may
read, write and run from, TCP, abstract sockets, a single file's rule, an unprivileged
user, and each way the kernel can refuse (a kernel without Landlock, a syscall refused,
no file descriptor left). Each test costs a fork, so that every mutant of
runtime/landlock.py meets them all (benchmarks/mutation_score.py --config isolation).
"""

from __future__ import annotations

import contextlib
import ctypes
import json
import os
import shutil
import socket
import subprocess
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


def _landlocked(read, write, probes: dict, *, before=None) -> dict:
    """Each probe tried in a forked child after landlock.restrict(read, write): what the
    kernel let it do ("allowed", "denied", "error N"), or {"restrict": [exception type,
    errno, message]} when the child could not confine itself. `before` runs in the child
    first (drop to another user, make a syscall fail)."""
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child
        out = {}
        try:
            os.close(r)
            if before is not None:
                before()
            try:
                landlock.restrict([str(p) for p in read], [str(p) for p in write])
            except BaseException as exc:
                out = {"restrict": [type(exc).__name__, getattr(exc, "errno", None),
                                    str(exc)]}
            else:
                out = {name: _try(action) for name, action in probes.items()}
        except BaseException as exc:
            out = {"child": repr(exc)}
        finally:
            os.write(w, json.dumps(out).encode())
            os._exit(0)
    os.close(w)
    with os.fdopen(r, "rb") as pipe:
        said = pipe.read()
    os.waitpid(pid, 0)
    return json.loads(said)


def _as_nobody() -> None:
    os.setgroups([])
    os.setgid(sandbox.AGENT_UID)
    os.setuid(sandbox.AGENT_UID)


# A syscall made to fail in the child only, with seccomp: the kernel's own refusal, as a
# kernel without Landlock (or one that runs out of something) gives it.
_SYSCALL = {"landlock_create_ruleset": 444, "landlock_add_rule": 445,
            "landlock_restrict_self": 446, "prctl": 157}


def _refuse(name: str, errno: int):
    """A `before` that makes syscall `name` fail with `errno` from then on."""
    import struct

    def install() -> None:
        nr = _SYSCALL[name]
        deny, allow = 0x00050000 | errno, 0x7FFF0000
        program = [(0x20, 0, 0, 0), (0x15, 0, 1, nr), (0x06, 0, 0, deny), (0x06, 0, 0, allow)]
        code = b"".join(struct.pack("HBBI", *insn) for insn in program)
        filters = ctypes.create_string_buffer(code, len(code))
        fprog = struct.pack("HxxxxxxP", len(program), ctypes.addressof(filters))
        prog = ctypes.create_string_buffer(fprog, len(fprog))
        libc = ctypes.CDLL(None, use_errno=True)
        if os.geteuid() != 0:
            libc.prctl(38, 1, 0, 0, 0)
        if libc.prctl(22, 2, prog, 0, 0) != 0:
            raise OSError(ctypes.get_errno(), "seccomp")
        landlock.abi.cache_clear()  # ask the kernel again, as a fresh process would
        ctypes.set_errno(0)  # the errno restrict() reports must be its own call's

    return install


@pytest.fixture
def folders(tmp_path):
    """ro/ (given to read), rw/ and rw2/ (given to write), out/ (given to neither), each
    with a file."""
    for name in ("ro", "rw", "rw2", "out"):
        (tmp_path / name).mkdir()
        (tmp_path / name / "f.txt").write_text(name)
    return tmp_path


# --- Landlock -----------------------------------------------------------------------------

@needs_landlock
def test_landlock_reads_writes_and_runs_only_where_it_was_told(folders):
    t = folders
    shutil.copy("/usr/bin/true", t / "rw" / "true")
    shutil.copy("/usr/bin/true", t / "out" / "true")
    run = lambda path: subprocess.run([str(path)], check=True)  # noqa: E731
    got = _landlocked([*SYSTEM, t / "ro", t / "no-such-folder"], [t / "rw", t / "rw2"], {
        "read ro": lambda: (t / "ro" / "f.txt").read_text(),
        "list ro": lambda: os.listdir(t / "ro"),
        "write ro": lambda: (t / "ro" / "f.txt").write_text("x"),
        "create in ro": lambda: (t / "ro" / "new").write_text("x"),
        "read rw": lambda: (t / "rw" / "f.txt").read_text(),
        "list rw": lambda: os.listdir(t / "rw"),
        "write rw": lambda: (t / "rw" / "f.txt").write_text("x"),
        "truncate rw": lambda: os.truncate(t / "rw" / "f.txt", 0),
        "create in rw": lambda: (t / "rw" / "new").write_text("x"),
        "mkdir in rw": lambda: (t / "rw" / "sub").mkdir(),
        "remove in rw": lambda: (t / "rw" / "new").unlink(),
        "rename within rw": lambda: (t / "rw" / "f.txt").rename(t / "rw" / "sub" / "g.txt"),
        "link rw to rw2": lambda: os.link(t / "rw" / "sub" / "g.txt", t / "rw2" / "h.txt"),
        "read out": lambda: (t / "out" / "f.txt").read_text(),
        "list out": lambda: os.listdir(t / "out"),
        "write out": lambda: (t / "out" / "f.txt").write_text("x"),
        "move rw to out": lambda: (t / "rw2" / "f.txt").rename(t / "out" / "moved"),
        "run a system program": lambda: run("/usr/bin/true"),
        "run a program in rw": lambda: run(t / "rw" / "true"),
        "run a program in out": lambda: run(t / "out" / "true"),
    })
    assert got == {
        "read ro": "allowed", "list ro": "allowed", "write ro": "denied",
        "create in ro": "denied", "read rw": "allowed", "list rw": "allowed",
        "write rw": "allowed", "truncate rw": "allowed", "create in rw": "allowed",
        "mkdir in rw": "allowed", "remove in rw": "allowed", "rename within rw": "allowed",
        "link rw to rw2": "allowed", "read out": "denied", "list out": "denied",
        "write out": "denied", "move rw to out": "denied", "run a system program": "allowed",
        "run a program in rw": "allowed", "run a program in out": "denied"}
    assert (t / "out" / "f.txt").read_text() == "out"
    assert (t / "ro" / "f.txt").read_text() == "ro"


@needs_landlock
def test_landlock_on_a_single_file_grants_that_file_alone(folders):
    """A rule may name a file, as the steps name a task's files and /dev/null: that file
    is readable (or writable) and its siblings are not."""
    t = folders
    (t / "ro" / "sibling.txt").write_text("no")
    (t / "rw" / "sibling.txt").write_text("no")
    got = _landlocked([*SYSTEM, t / "ro" / "f.txt"], [t / "rw" / "f.txt"], {
        "read the file": lambda: (t / "ro" / "f.txt").read_text(),
        "write the read file": lambda: (t / "ro" / "f.txt").write_text("x"),
        "read its sibling": lambda: (t / "ro" / "sibling.txt").read_text(),
        "write the written file": lambda: (t / "rw" / "f.txt").write_text("x"),
        "truncate the written file": lambda: os.truncate(t / "rw" / "f.txt", 0),
        "read the written file": lambda: (t / "rw" / "f.txt").read_text(),
        "write its sibling": lambda: (t / "rw" / "sibling.txt").write_text("x"),
        "write /dev/null, not given": lambda: Path("/dev/null").write_text("x"),
    })
    assert got == {"read the file": "allowed", "write the read file": "denied",
                   "read its sibling": "denied", "write the written file": "allowed",
                   "truncate the written file": "allowed", "read the written file": "allowed",
                   "write its sibling": "denied", "write /dev/null, not given": "denied"}


@needs_landlock
def test_landlock_opens_no_tcp_connection_nor_listens(folders):
    listener = socket.create_server(("127.0.0.1", 0))
    port = listener.getsockname()[1]
    try:
        got = _landlocked(SYSTEM, [folders / "rw"], {
            "connect": lambda: socket.create_connection(("127.0.0.1", port), timeout=2),
            "bind": lambda: socket.create_server(("127.0.0.1", 0)),
        })
    finally:
        listener.close()
    assert got == {"connect": "denied", "bind": "denied"}


@pytest.mark.skipif(landlock.abi() < 6, reason="Landlock scopes abstract sockets from ABI 6")
def test_landlock_reaches_no_abstract_unix_socket_outside_its_domain(folders):
    name = f"\0wirebench-test-{os.getpid()}"
    listener = socket.socket(socket.AF_UNIX)
    listener.bind(name)
    listener.listen()
    try:
        got = _landlocked(SYSTEM, [], {
            "connect": lambda: socket.socket(socket.AF_UNIX).connect(name)})
    finally:
        listener.close()
    assert got == {"connect": "denied"}


@needs_landlock
def test_landlock_confines_a_process_without_privileges(folders):
    """Run by an ordinary user (here nobody), restrict() needs no capability: it sets
    no_new_privs itself, so no program it starts can gain privileges back."""
    got = _landlocked(SYSTEM, [], {
        "read /etc/hostname": lambda: Path("/etc/hostname").read_text(),
        "read the tests": lambda: Path(__file__).read_text(),
        "no_new_privs": lambda: None if ctypes.CDLL(None).prctl(39, 0, 0, 0, 0) == 1
        else (_ for _ in ()).throw(OSError(0, "no_new_privs is off")),
    }, before=_as_nobody)
    assert got == {"read /etc/hostname": "allowed", "read the tests": "denied",
                   "no_new_privs": "allowed"}


@pytest.mark.parametrize("version, fs_rights, net, scoped", [
    (1, 13, 0, 0), (2, 14, 0, 0), (3, 15, 0, 0), (4, 15, 2, 0), (5, 16, 2, 0),
    (6, 16, 2, 2), (7, 16, 2, 2), (8, 16, 2, 2)])
def test_landlock_handles_every_right_each_kernel_version_knows(version, fs_rights, net,
                                                                  scoped):
    """The kernel's documentation (userspace-api/landlock): ABI 1 knows 13 filesystem
    rights, 2 adds REFER, 3 TRUNCATE, 5 IOCTL_DEV; 4 adds TCP bind and connect; 6 scopes
    abstract Unix sockets and signals. A right left unhandled is a hole; a bit the kernel
    does not know makes it refuse the whole ruleset. An unknown later version gets every
    right known here."""
    fs, net_bits, scoped_bits = landlock._handled(version)
    assert fs == (1 << fs_rights) - 1
    assert (net_bits, scoped_bits) == ((1 << net) - 1, (1 << scoped) - 1)


@needs_landlock
def test_every_right_this_kernel_knows_is_handled():
    """This kernel accepts the ruleset restrict() asks for (no unknown bit) and refuses
    one more right than it knows."""
    version = landlock.abi()
    fs, net, scoped = landlock._handled(version)
    libc = ctypes.CDLL(None, use_errno=True)

    def create(*masks) -> int:
        attr = b"".join(m.to_bytes(8, "little") for m in masks)
        fd = libc.syscall(444, ctypes.create_string_buffer(attr, len(attr)),
                          ctypes.c_size_t(len(attr)), ctypes.c_uint32(0))
        if fd >= 0:
            os.close(fd)
        return fd

    assert create(fs, net, scoped) >= 0
    assert create((fs << 1) | 1, net, scoped) < 0


needs_x86 = pytest.mark.skipif(os.uname().machine != "x86_64",
                               reason="the seccomp filter here knows x86_64's numbers")


@needs_x86
def test_a_kernel_without_landlock_is_refused_by_name(folders):
    """Where the kernel has no Landlock (the syscall fails with ENOSYS), restrict() says
    so, and so does the confined step's check, unless the user opted out on purpose."""
    import errno

    def probe():
        got = {"abi": landlock.abi()}
        for opted_out in ("", "1"):
            os.environ[confine.OPT_OUT_VAR] = opted_out
            try:
                confine.require()
                got[f"require {opted_out or 'not opted out'}"] = "ok"
            except landlock.Unavailable as exc:
                got[f"require {opted_out or 'not opted out'}"] = str(exc)
        return got

    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child
        try:
            os.close(r)
            _refuse("landlock_create_ruleset", errno.ENOSYS)()
            got = probe()
            try:
                landlock.restrict(SYSTEM, [str(folders / "rw")])
                got["restrict"] = "confined"
            except landlock.Unavailable as exc:
                got["restrict"] = str(exc)
            os.write(w, json.dumps(got).encode())
        finally:
            os._exit(0)
    os.close(w)
    with os.fdopen(r, "rb") as pipe:
        got = json.loads(pipe.read())
    os.waitpid(pid, 0)
    assert got["abi"] == 0
    assert got["restrict"] == ("this kernel has no Landlock (Linux 5.13+ with landlock "
                               "in lsm=)")
    assert got["require not opted out"] == (
        "this kernel has no Landlock, so wirebench cannot confine akcli to the pair's "
        "folder; set `unsafe_no_sandbox: true` (or WIREBENCH_UNSAFE_NO_SANDBOX=1) to run "
        "unconfined on purpose")
    assert got["require 1"] == "ok"


@needs_landlock
@needs_x86
@pytest.mark.parametrize("call, text", [
    ("landlock_add_rule", "landlock_add_rule {ro}"),
    ("prctl", "prctl(PR_SET_NO_NEW_PRIVS)"),
    ("landlock_restrict_self", "landlock_restrict_self"),
])
def test_a_refusal_of_the_kernel_stops_the_confinement_and_names_the_call(folders, call,
                                                                          text):
    """Confinement is all or nothing: when the kernel refuses any of its calls, restrict()
    raises with the call's name and the kernel's errno, and the step never runs
    unconfined."""
    import errno

    got = _landlocked([folders / "ro"], [], {}, before=_refuse(call, errno.EPERM))
    assert got == {"restrict": ["PermissionError", errno.EPERM,
                                f"[Errno {errno.EPERM}] {text.format(ro=folders / 'ro')}"]}


@needs_landlock
def test_a_process_out_of_file_descriptors_is_not_left_unconfined(folders):
    """The ruleset is a file descriptor: with none left, restrict() fails by name."""
    import resource

    def exhaust() -> None:
        resource.setrlimit(resource.RLIMIT_NOFILE, (64, 64))
        with contextlib.suppress(OSError):
            while True:
                os.open("/dev/null", os.O_RDONLY)

    got = _landlocked([folders / "ro"], [], {}, before=exhaust)
    assert got == {"restrict": ["Unavailable", None,
                                "landlock_create_ruleset: Too many open files"]}


@needs_landlock
def test_a_process_with_stdin_closed_confines_itself_all_the_same(folders):
    """A daemon's child often has no stdin: the ruleset then gets descriptor 0."""
    got = _landlocked([*SYSTEM, folders / "ro"], [folders / "rw"], {
        "read ro": lambda: (folders / "ro" / "f.txt").read_text(),
        "read out": lambda: (folders / "out" / "f.txt").read_text(),
    }, before=lambda: os.close(0))
    assert got == {"read ro": "allowed", "read out": "denied"}


@needs_landlock
def test_a_folder_the_user_may_only_traverse_can_be_given_to_read(tmp_path):
    """A library folder the user can enter but not list (mode 0711, as many homes are):
    the rule is made all the same, and a file whose name is known is readable."""
    import tempfile

    folder = Path(tempfile.mkdtemp(prefix="wirebench-traverse-"))
    try:
        (folder / "lib.kicad_sym").write_text("(kicad_symbol_lib)")
        (folder / "lib.kicad_sym").chmod(0o644)
        folder.chmod(0o711)
        got = _landlocked([*SYSTEM, folder], [], {
            "read the file": lambda: (folder / "lib.kicad_sym").read_text(),
            "list the folder": lambda: os.listdir(folder),
        }, before=_as_nobody)
    finally:
        shutil.rmtree(folder)
    assert got == {"read the file": "allowed", "list the folder": "denied"}


@needs_landlock
def test_a_device_given_to_write_answers_its_own_ioctls(folders):
    """/dev/null is given to every step as a single-file rule: a program that asks it a
    terminal question (isatty, a window size) gets the device's own answer, ENOTTY, not
    Landlock's refusal; a device not given is refused outright."""
    import fcntl
    import termios

    def ask(path: str):
        with open(path, "wb") as fh:
            fcntl.ioctl(fh.fileno(), termios.TIOCGWINSZ, b"\0" * 8)

    got = _landlocked(SYSTEM, [folders / "rw", "/dev/null"], {
        "ask /dev/null": lambda: ask("/dev/null"),
        "write /dev/full": lambda: Path("/dev/full").write_bytes(b"x"),
    })
    assert got == {"ask /dev/null": "error 25", "write /dev/full": "denied"}
