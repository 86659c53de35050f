"""Linux Landlock: confine the calling process to an allow-list of folders, for good.

The akcli steps run an agent's op-list, and akcli keeps gaining fields that name files
(`file`, `symbol_source`, `run_id`, ...). A field guard gives clear messages, but the
guarantee has to come from the kernel: after `restrict`, this process and everything it
starts can read only the folders it was given, write only the ones it was given, open no
TCP connection, and signal or reach no process outside its own domain (that also closes
`/proc/<pid>/environ` of the parent). It needs no privileges and no exec, so a warm
worker's forked child can confine itself in well under a millisecond.

The syscall numbers and flag values are the kernel's uapi (linux/landlock.h); they are
the same on x86_64 and aarch64.
"""

from __future__ import annotations

import ctypes
import functools
import os
import struct

_CREATE_RULESET, _ADD_RULE, _RESTRICT_SELF = 444, 445, 446
_VERSION_FLAG = 1
_RULE_PATH_BENEATH = 1
_PR_SET_NO_NEW_PRIVS = 38

EXECUTE, WRITE_FILE, READ_FILE, READ_DIR = 1 << 0, 1 << 1, 1 << 2, 1 << 3
# What a rule on a single file (not a folder) may grant.
_FILE_RIGHTS = EXECUTE | WRITE_FILE | READ_FILE | (1 << 14) | (1 << 15)
READ = EXECUTE | READ_FILE | READ_DIR
# The filesystem rights each ABI version knows: 13 bits in v1, REFER in v2, TRUNCATE in
# v3, IOCTL_DEV in v5. A right the kernel does not know cannot be handled.
_FS_BITS = {1: 13, 2: 14, 3: 15, 4: 15, 5: 16}
MIN_ABI = 1


class Unavailable(OSError):
    """This kernel cannot confine a process with Landlock."""


@functools.cache
def _libc():
    return ctypes.CDLL(None, use_errno=True)


@functools.cache
def abi() -> int:
    """The kernel's Landlock ABI version, 0 when it has none (or is not Linux)."""
    try:
        version = _libc().syscall(_CREATE_RULESET, None, ctypes.c_size_t(0),
                                  ctypes.c_uint32(_VERSION_FLAG))
    except (OSError, AttributeError):
        return 0
    return max(int(version), 0)


def _handled(version: int) -> tuple[int, int, int]:
    fs = (1 << _FS_BITS.get(version, 16)) - 1
    net = 0b11 if version >= 4 else 0      # bind and connect on TCP
    scoped = 0b11 if version >= 6 else 0   # abstract unix sockets, signals
    return fs, net, scoped


def restrict(read: list[str], write: list[str]) -> None:
    """From now on this process reads only under `read` and `write`, writes only under
    `write`, opens no TCP socket, and reaches no process outside its domain. Paths that do
    not exist are skipped. Irreversible: call it in a child made for the purpose."""
    version = abi()
    if version < MIN_ABI:
        raise Unavailable("this kernel has no Landlock (Linux 5.13+ with landlock in lsm=)")
    fs, net, scoped = _handled(version)
    attr = struct.pack("QQQ", fs, net, scoped) if version >= 6 else (
        struct.pack("QQ", fs, net) if version >= 4 else struct.pack("Q", fs))
    libc = _libc()
    buf = ctypes.create_string_buffer(attr, len(attr))
    ruleset = libc.syscall(_CREATE_RULESET, buf, ctypes.c_size_t(len(attr)), ctypes.c_uint32(0))
    if ruleset < 0:
        raise Unavailable(f"landlock_create_ruleset: {os.strerror(ctypes.get_errno())}")
    try:
        for paths, rights in ((read, READ), (write, fs)):
            for path in paths:
                _allow(ruleset, str(path), rights)
        if libc.prctl(_PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
            raise OSError(ctypes.get_errno(), "prctl(PR_SET_NO_NEW_PRIVS)")
        if libc.syscall(_RESTRICT_SELF, ruleset, ctypes.c_uint32(0)) != 0:
            raise OSError(ctypes.get_errno(), "landlock_restrict_self")
    finally:
        os.close(ruleset)


def _allow(ruleset: int, path: str, rights: int) -> None:
    try:
        fd = os.open(path, os.O_PATH | os.O_CLOEXEC)
    except FileNotFoundError:
        return
    try:
        if not os.path.isdir(path):
            rights &= _FILE_RIGHTS
        rule = ctypes.create_string_buffer(struct.pack("=Qi", rights, fd), 12)
        if _libc().syscall(_ADD_RULE, ruleset, _RULE_PATH_BENEATH, rule, ctypes.c_uint32(0)):
            raise OSError(ctypes.get_errno(), f"landlock_add_rule {path}")
    finally:
        os.close(fd)
