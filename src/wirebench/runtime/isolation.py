"""What Landlock leaves open to a confined akcli step, closed by two more kernel features.

Landlock confines files and TCP. It does not stop a step from:
- leaving a process behind: a child that calls setsid() escapes the step's process group,
  outlives the step and can rewrite the pair's files after the step was scored;
- opening a socket: connect() on a Unix socket (the warm worker's) is not a file access,
  and UDP is not TCP.

So each step runs as the first process of a pid namespace of its own (when it exits, the
kernel kills everything else in the namespace, whatever it did to its session or process
group), and under a seccomp filter that refuses socket() in every family, and io_uring,
which could open one without the socket() call. Both need no exec and cost a fork and a
few system calls. Run by root the namespace needs nothing more; otherwise it is made
inside a user namespace that maps the user to itself.
"""

from __future__ import annotations

import ctypes
import os
import platform
import struct

CLONE_NEWUSER, CLONE_NEWPID = 0x10000000, 0x20000000

# seccomp's classic BPF, as linux/filter.h and linux/seccomp.h define it.
_LD_W_ABS, _JEQ_K, _JGE_K, _RET_K = 0x20, 0x15, 0x35, 0x06
# x86_64's x32 calls carry this bit in their number: refused, not read as native calls.
_X32_BIT = 0x40000000
_SECCOMP_RET_ALLOW, _SECCOMP_RET_ERRNO = 0x7FFF0000, 0x00050000
_PR_SET_SECCOMP, _SECCOMP_MODE_FILTER = 22, 2
_EACCES = 13
# (audit arch, socket, io_uring_setup) by machine; offsets 0 and 4 of seccomp_data are
# the syscall number and the architecture.
_SYSCALLS = {"x86_64": (0xC000003E, 41, 425), "aarch64": (0xC00000B7, 198, 425)}


def _libc():
    return ctypes.CDLL(None, use_errno=True)


def fork_as_init() -> tuple[int, bool]:
    """os.fork(), the child being pid 1 of a new pid namespace where this process may make
    one for a child without entering it (root): (pid, True). Elsewhere a plain fork,
    (pid, False), and the child makes its namespace itself (run_as_init), at the cost of
    one more fork. The caller's own namespace for later children is put back at once."""
    global _OWN_PID_NS
    libc = _libc()
    if _OWN_PID_NS is None:
        _OWN_PID_NS = os.open("/proc/self/ns/pid", os.O_RDONLY | os.O_CLOEXEC)
    if libc.unshare(CLONE_NEWPID) != 0:
        return os.fork(), False
    pid = -1
    try:
        pid = os.fork()
    finally:
        # Here in the parent only: the child stays in its namespace (and could not leave
        # it for an ancestor anyway).
        if pid != 0 and libc.setns(_OWN_PID_NS, CLONE_NEWPID) != 0:
            raise OSError(ctypes.get_errno(), "setns back to this process's pid namespace")
    return pid, True


_OWN_PID_NS: int | None = None


def new_pid_namespace() -> bool:
    """Make the calling process's next child the first process of a new pid namespace.
    False where the kernel refuses (no privilege, no user namespaces)."""
    libc = _libc()
    if libc.unshare(CLONE_NEWPID) == 0:
        return True
    uid, gid = os.getuid(), os.getgid()
    if libc.unshare(CLONE_NEWUSER | CLONE_NEWPID) != 0:
        return False
    try:  # the user is itself inside, so the files it writes stay its own
        for name, text in (("setgroups", "deny"), ("uid_map", f"{uid} {uid} 1"),
                           ("gid_map", f"{gid} {gid} 1")):
            with open(f"/proc/self/{name}", "w") as fh:
                fh.write(text)
    except OSError:
        return False
    return True


def run_as_init(body, close: tuple[int, ...] = (), already: bool = False) -> None:
    """Run body() as pid 1 of a new pid namespace, when one can be made; never returns,
    and body() must not either. `already`: this process is that pid 1 (fork_as_init).
    Otherwise the caller (a forked child) waits for it, closes `close` (so that a pipe's
    reader sees its end when the namespace is gone) and exits with its status. When body's
    process ends, every process it left in the namespace is killed."""
    if already or not new_pid_namespace():
        body()  # no namespace here: the step's process group is all the timeout kills
    pid = os.fork()
    if pid == 0:
        body()
    for fd in close:
        os.close(fd)
    _, status = os.waitpid(pid, 0)
    os._exit(os.waitstatus_to_exitcode(status) & 0xFF if os.WIFEXITED(status) else 70)


def kill_the_rest() -> None:
    """In pid 1 of a namespace: kill every other process in it (what a step left)."""
    import contextlib
    import signal

    if os.getpid() != 1:
        return
    with contextlib.suppress(ProcessLookupError):
        os.kill(-1, signal.SIGKILL)
    with contextlib.suppress(ChildProcessError):
        while os.waitpid(-1, 0)[0]:
            pass


def no_sockets() -> None:
    """From now on socket() and io_uring_setup() fail with EACCES in this process and
    its children. Needs no_new_privs (Landlock's restrict sets it first)."""
    arch = _SYSCALLS.get(platform.machine())
    if arch is None:
        raise OSError(f"no seccomp filter for {platform.machine()}")
    audit, socket_nr, uring_nr = arch
    deny = _SECCOMP_RET_ERRNO | _EACCES
    program = [
        (_LD_W_ABS, 0, 0, 4),                 # the architecture
        (_JEQ_K, 1, 0, audit),                # ours: go on; another: refuse it all
        (_RET_K, 0, 0, deny),
        (_LD_W_ABS, 0, 0, 0),                 # the syscall number
        (_JGE_K, 3, 0, _X32_BIT),
        (_JEQ_K, 2, 0, socket_nr),
        (_JEQ_K, 1, 0, uring_nr),
        (_RET_K, 0, 0, _SECCOMP_RET_ALLOW),
        (_RET_K, 0, 0, deny),
    ]
    code = b"".join(struct.pack("HBBI", *insn) for insn in program)
    filters = ctypes.create_string_buffer(code, len(code))
    fprog = struct.pack("HxxxxxxP", len(program), ctypes.addressof(filters))
    prog = ctypes.create_string_buffer(fprog, len(fprog))
    if _libc().prctl(_PR_SET_SECCOMP, _SECCOMP_MODE_FILTER, prog, 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "prctl(PR_SET_SECCOMP)")
