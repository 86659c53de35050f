"""Run one akcli step in a forked child that the kernel confines, with a wall-clock limit.

The child inherits the warm process (akcli imported, caches filled), confines itself with
Landlock to the pair's own folder (the only place it may write) plus the read-only
places Python, akcli and ngspice need, runs the step, and exits. The parent waits at most
`timeout` seconds; past that it kills the child and everything the child started.

What the child may read: the system (`/usr`, `/etc`, ...), the Python installation and its
site-packages, the wirebench and akcli packages, the symbol libraries and the few task
files the step names. Never the corpus folder as a whole (`reference_ops.json`,
`expected_nets.json`), `results/`, other pairs or the project.
"""

from __future__ import annotations

import contextlib
import functools
import gc
import io
import os
import select
import shutil
import signal
import sys
import tempfile
import time
from pathlib import Path

from wirebench.evidence.files import scratch_dir, sweep, use_private_folder
from wirebench.runtime import isolation, landlock

# Not /proc: another process's /proc/<pid>/environ (the step's own parent holds the run's
# secrets) stays readable under Landlock; the child gets its own /proc/<pid> only. Of /dev,
# the devices alone: /dev/shm holds the other pairs' private folders.
SYSTEM_READS = ("/usr", "/lib", "/lib64", "/lib32", "/bin", "/sbin", "/etc",
                "/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom",
                "/sys/devices/system/cpu")
# Written by every process that prints nothing useful there; allowing it is harmless.
SYSTEM_WRITES = ("/dev/null",)


class StepTimedOut(Exception):
    def __init__(self, seconds: float):
        super().__init__(f"exceeded {seconds:g} s")
        self.seconds = seconds


class StepCrashed(RuntimeError):
    pass


@functools.cache
def python_reads() -> tuple[str, ...]:
    """Where this interpreter's code lives: the installation, the environment and the two
    packages a step imports (an editable install keeps wirebench in the project's `src`,
    which is all of the project a step may see)."""
    import sysconfig

    import wirebench

    places = {sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix,
              str(Path(wirebench.__file__).parent)}
    for key in ("stdlib", "platstdlib", "purelib", "platlib"):
        places.add(sysconfig.get_paths()[key])
    with contextlib.suppress(ImportError):
        import akcli

        places.add(str(Path(akcli.__file__).parent))
    return tuple(sorted(places))


OPT_OUT_VAR = "WIREBENCH_UNSAFE_NO_SANDBOX"


def sandbox_off() -> bool:
    """The user's explicit opt-out (config `unsafe_no_sandbox: true`, which the workflow
    passes down as this variable)."""
    return os.environ.get(OPT_OUT_VAR) == "1"


def require() -> None:
    """Refuse to go on where the kernel cannot confine the akcli steps, unless the user
    opted out on purpose."""
    if not sandbox_off() and landlock.abi() < landlock.MIN_ABI:
        raise landlock.Unavailable(
            "this kernel has no Landlock, so wirebench cannot confine akcli to the pair's "
            "folder; set `unsafe_no_sandbox: true` (or WIREBENCH_UNSAFE_NO_SANDBOX=1) to "
            "run unconfined on purpose")


# The children's private folders go on tmpfs when it has this much room: a simulator's
# deck must never fail for space there (Docker gives /dev/shm 64 MB).
SHARED_MEMORY = "/dev/shm"
SHARED_MEMORY_ROOM = 1 << 30


@functools.cache
def _memory_root() -> str | None:
    """The user's own folder on tmpfs for the children's private folders, or None (they
    go in the pair's folder). Why tmpfs: a step's scratch is a dozen files made and
    deleted per pair, and on ext4 without a journal (our VMs) every file deleted makes
    each later file creation skip it for seconds to minutes: 0.5 ms a creation instead of
    0.04 after 3,000 deletions (benchmarks/file_churn.py). Folders of processes that died
    (a worker killed with -9) are removed here, once a process."""
    from wirebench.runtime.user_folders import own_folder

    try:
        room = os.statvfs(SHARED_MEMORY)
    except OSError:
        return None
    if room.f_bavail * room.f_frsize < SHARED_MEMORY_ROOM:
        return None
    root = own_folder(SHARED_MEMORY)
    if root is not None:
        # Only folders made in this pid namespace (named pid-namespace-...): from another
        # one (pid namespaces share /dev/shm), a live process's pid names no process, and
        # its folder was removed under its running steps. A name without a namespace is
        # from before they had one.
        here = _pid_namespace()
        for name in os.listdir(root):
            owner, _, rest = name.partition("-")
            space = rest.partition("-")[0]
            if (owner.isdigit() and (space == here or not space.isdigit())
                    and not _alive(int(owner))):
                shutil.rmtree(os.path.join(root, name), ignore_errors=True)
    return root


def _pid_namespace() -> str:
    """This process's pid namespace, by its inode: a pid means a process only there."""
    try:
        return str(os.stat("/proc/self/ns/pid").st_ino)
    except OSError:
        return "0"


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        pass
    return True


def _private_folder(pair: str) -> str:
    """A fresh folder for one child's TMPDIR and scratch, made here in the parent, which
    removes it when the child is gone, whatever became of the child."""
    root = _memory_root()
    if root is None:
        return str(scratch_dir(pair, "tmp"))
    return tempfile.mkdtemp(dir=root, prefix=f"{os.getpid()}-{_pid_namespace()}-")


def run(fn, *, write: Path, read: list = (), timeout: float | None = None) -> None:
    """fn() in a confined child. Raises StepTimedOut past `timeout` seconds, StepCrashed
    when the child failed; what the child printed is printed here."""
    reads = [*SYSTEM_READS, *python_reads(), *(str(Path(p).absolute()) for p in read)]
    pair = str(Path(write).absolute())
    private = _private_folder(pair)
    writes = [*SYSTEM_WRITES, pair, private]
    try:
        out_r, out_w = os.pipe()
        sys.stdout.flush()
        sys.stderr.flush()
        # The child is short-lived: a garbage collection there would touch every object
        # of the warm parent (akcli, the parsed libraries) and copy its pages. Frozen
        # objects are skipped, and the child collects nothing at all.
        gc.freeze()
        pid, init = isolation.fork_as_init()
        if pid == 0:  # the child: never returns
            gc.disable()
            os.close(out_r)
            _child(fn, reads, writes, out_w, init)
        os.close(out_w)
        try:
            printed, finished = _collect(out_r, time.monotonic() + timeout if timeout else None)
        finally:
            os.close(out_r)
        if not finished:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(pid, signal.SIGKILL)
        _, status = os.waitpid(pid, 0)
    finally:
        shutil.rmtree(private, ignore_errors=True)
    text = printed.decode(errors="replace")
    if text:
        print(text, end="", file=sys.stderr)
    if not finished:
        sweep(write)  # the killed child's scratch folders (a pair's steps run one at a time)
        raise StepTimedOut(timeout)
    code = os.waitstatus_to_exitcode(status)
    if code != 0:
        last = text.strip().splitlines()[-1:] or [""]
        raise StepCrashed(f"the confined step failed (exit {code}) {last[0][-300:]}".strip())


def _collect(fd: int, deadline: float | None) -> tuple[bytes, bool]:
    """Read what the child prints until it closes the pipe (it exits) or time is up."""
    chunks = []
    while True:
        left = None if deadline is None else deadline - time.monotonic()
        if left is not None and left <= 0:
            return b"".join(chunks), False
        ready, _, _ = select.select([fd], [], [], left)
        if not ready:
            continue
        chunk = os.read(fd, 1 << 16)
        if not chunk:
            return b"".join(chunks), True
        chunks.append(chunk[: max(0, (1 << 20) - sum(map(len, chunks)))])


def _enter(writes: list[str]) -> None:
    """The child's first steps, before it confines itself: its own process group (a
    timeout kills whatever it started too), death with its parent, the pair's folder as
    its working directory (relative paths in an op-list, such as symbol_source or a
    sheet's file, resolve there, wherever the run was started) and its private folder
    (the last of `writes`) as TMPDIR and for its steps' scratch (akcli's simulator writes
    its decks under TMPDIR, which is otherwise shared by every pair)."""
    os.setpgid(0, 0)
    die_with_parent()
    pair, private = writes[-2:]
    os.chdir(pair)
    _environment_from_nothing()
    os.environ["TMPDIR"] = tempfile.tempdir = private
    use_private_folder(private)


def _environment_from_nothing() -> None:
    """Only what akcli and Python need (the worker's own set), never the run's secrets:
    without a worker, or in a cluster job, the step's process holds all of Snakemake's
    variables, every entry's key among them."""
    from wirebench.runtime.worker_client import kept_env

    kept = {**kept_env(), **({OPT_OUT_VAR: "1"} if sandbox_off() else {})}
    os.environ.clear()
    os.environ.update(kept)


def _confine_self(reads: list[str], writes: list[str]) -> None:
    """Landlock, then no sockets (runtime/isolation.py). Without Landlock, only a user's
    explicit opt-out gets here: the workflow and the CLI refuse to start otherwise."""
    if not sandbox_off() and landlock.abi() >= landlock.MIN_ABI:
        # /proc/self as the host's /proc names it: in a pid namespace getpid() says 1.
        me = os.readlink("/proc/self")
        landlock.restrict([*reads, f"/proc/{me}"], writes)
        isolation.no_sockets()


def _call(fn, *args) -> int:
    """fn(*args) as a step: its exit code, with a traceback printed for a crash."""
    try:
        fn(*args)
        return 0
    except SystemExit as exc:  # as the interpreter reads it: None is success, text says why
        if exc.code is None or isinstance(exc.code, int):
            return exc.code or 0
        print(exc.code, file=sys.stderr)
        return 1
    except BaseException:  # reported through the pipe: the parent decides
        import traceback

        traceback.print_exc()
        return 70


def _write_all(fd: int, data: bytes) -> None:
    with contextlib.suppress(OSError):
        while data:
            data = data[os.write(fd, data):]


def _child(fn, reads: list[str], writes: list[str], out_w: int, init: bool) -> None:
    _enter_or_exit(writes)
    # The step itself runs as pid 1 of its own pid namespace: nothing it starts outlives it.
    isolation.run_as_init(lambda: _step(fn, reads, writes, out_w), close=(out_w,),
                          already=init)


def _enter_or_exit(writes: list[str]) -> None:
    try:
        _enter(writes)
    except BaseException:
        os._exit(70)


def _step(fn, reads: list[str], writes: list[str], out_w: int) -> None:
    code = 70
    buffer = io.StringIO()
    try:
        die_with_parent()  # a fork clears it
        with contextlib.redirect_stdout(buffer), contextlib.redirect_stderr(buffer):
            try:
                _confine_self(reads, writes)
            except BaseException:
                import traceback

                traceback.print_exc()
            else:
                code = _call(fn)
    finally:
        _write_all(out_w, buffer.getvalue().encode(errors="replace"))
        os._exit(code)


# The parent's ends of each live Server's pipes. Every child forked while one lives would
# inherit them, and a child that kept the request end would hold that server's pipe open:
# its child would never see it close, and close() would wait for it (two toolboxes in one
# process, as inspect's concurrent samples have them). Each forked child drops them.
_SERVER_ENDS: set[int] = set()


def _drop_server_ends() -> None:
    for fd in _SERVER_ENDS:
        with contextlib.suppress(OSError):
            os.close(fd)
    _SERVER_ENDS.clear()


os.register_at_fork(after_in_child=_drop_server_ends)


class Server:
    """A confined child that serves many steps for one pair: one fork and one Landlock
    domain for all of a tool-calling agent's calls, where run() pays both for each step
    (measured: most of what a tool call cost on top of akcli's own work).

    The child is forked on the first call and confined to the same places run() allows
    (`write` and `read`); it lives until close(). A step is a module-level function and
    picklable arguments (the child was forked before the step existed, so a closure cannot
    reach it). A step past its limit kills the child and all it started; the next call
    forks a fresh one. A step that raises is a StepCrashed for that call only."""

    def __init__(self, *, write: Path, read: list = ()):
        self.reads = [*SYSTEM_READS, *python_reads(), *(str(Path(p).absolute()) for p in read)]
        self.pair = str(Path(write).absolute())
        self.writes: list[str] = []
        self.pid: int | None = None
        self.served = 0  # steps this server's children ran (the tests look)

    def call(self, fn, *args, timeout: float | None = None) -> None:
        import pickle

        if self.pid is None:
            self._start()
        _write_all(self._req, _frame(pickle.dumps((fn, args))))
        deadline = time.monotonic() + timeout if timeout else None
        reply = _read_frame(self._rep, deadline)
        if reply is None:  # past the limit, or the child died under the step
            # The pipe's end before the limit is the child's death, however soon the
            # kernel lets us reap it: wait for it rather than call it a timeout.
            died = self._stop(kill=deadline is not None and time.monotonic() >= deadline)
            if died is not None:
                raise StepCrashed(f"the confined step server died (exit {died})")
            sweep(self.pair)
            raise StepTimedOut(timeout)
        self.served += 1
        code, printed = pickle.loads(reply)
        if printed:
            print(printed, end="", file=sys.stderr)
        if code != 0:
            raise StepCrashed(f"the confined step failed (exit {code})")

    def close(self) -> None:
        if self.pid is not None:
            self._stop(kill=False)

    def _start(self) -> None:
        self.writes = [*SYSTEM_WRITES, self.pair, _private_folder(self.pair)]
        req_r, self._req = os.pipe()
        self._rep, rep_w = os.pipe()
        sys.stdout.flush()
        sys.stderr.flush()
        gc.freeze()  # as in run(): the child's collections skip the warm parent's objects
        pid, init = isolation.fork_as_init()
        if pid == 0:
            os.close(self._req)
            os.close(self._rep)
            _serve(req_r, rep_w, self.reads, self.writes, init)
        os.close(req_r)
        os.close(rep_w)
        _SERVER_ENDS.update((self._req, self._rep))
        self.pid = pid

    def _stop(self, kill: bool) -> int | None:
        """End the child: its exit code if it ended on its own, None if it was killed."""
        pid, self.pid = self.pid, None
        _SERVER_ENDS.difference_update((self._req, self._rep))
        os.close(self._req)
        os.close(self._rep)
        try:
            done, status = os.waitpid(pid, os.WNOHANG)
            if done:
                return os.waitstatus_to_exitcode(status)
            if kill:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(pid, signal.SIGKILL)
                os.waitpid(pid, 0)
                return None
            # Without kill: it sees its request pipe close and exits (or is exiting).
            return os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1])
        finally:
            shutil.rmtree(self.writes[-1], ignore_errors=True)


def _frame(data: bytes) -> bytes:
    return len(data).to_bytes(8, "big") + data


def _read_frame(fd: int, deadline: float | None) -> bytes | None:
    """One length-prefixed message, or None at end of file or past the deadline."""
    head = _read_exactly(fd, 8, deadline)
    if head is None:
        return None
    return _read_exactly(fd, int.from_bytes(head, "big"), deadline)


def _read_exactly(fd: int, n: int, deadline: float | None) -> bytes | None:
    chunks, got = [], 0
    while got < n:
        left = None if deadline is None else deadline - time.monotonic()
        if left is not None and left <= 0:
            return None
        ready, _, _ = select.select([fd], [], [], left)
        if not ready:
            continue
        chunk = os.read(fd, min(n - got, 1 << 20))
        if not chunk:
            return None
        chunks.append(chunk)
        got += len(chunk)
    return b"".join(chunks)


def _serve(req_r: int, rep_w: int, reads: list[str], writes: list[str], init: bool) -> None:
    """The server child: confine once, then run steps until the request pipe closes."""
    _enter_or_exit(writes)
    # As pid 1 of its own pid namespace, it kills what each step left before the next.
    isolation.run_as_init(lambda: _steps(req_r, rep_w, reads, writes), close=(req_r, rep_w),
                          already=init)


def _steps(req_r: int, rep_w: int, reads: list[str], writes: list[str]) -> None:
    import pickle

    code = 70
    try:
        die_with_parent()  # a fork clears it
        _confine_self(reads, writes)
        while (request := _read_frame(req_r, None)) is not None:
            buffer = io.StringIO()
            with contextlib.redirect_stdout(buffer), contextlib.redirect_stderr(buffer):
                try:
                    fn, args = pickle.loads(request)
                except BaseException:
                    import traceback

                    traceback.print_exc()
                    step_code = 70
                else:
                    step_code = _call(fn, *args)
            isolation.kill_the_rest()
            printed = buffer.getvalue()[-(1 << 20):]
            _write_all(rep_w, _frame(pickle.dumps((step_code, printed))))
        code = 0
    finally:
        os._exit(code)


def die_with_parent() -> None:
    """Linux, in a child: if the process that started it is killed (kill -9 of a run),
    the child goes too, instead of running on, and billing, with nobody to read it."""
    import ctypes

    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
