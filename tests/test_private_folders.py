"""A confined step's private folder on tmpfs (runtime/confine.py) is removed by the next
process only when its maker is dead, and only by a process of the maker's own pid
namespace: /dev/shm is shared across pid namespaces, where a live process's pid names
no process, and a sweep from there once removed the folders of running steps under them
(a tasks check stopped with `No such file or directory: /dev/shm/wirebench-0/<pid>-...`)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from wirebench.runtime import confine

SWEEP = "from wirebench.runtime import confine; print(confine._memory_root())"


def test_a_sweep_from_another_pid_namespace_keeps_a_live_processs_folder(tmp_path):
    if not shutil.which("unshare") or os.geteuid() != 0:
        pytest.skip("needs unshare(1) as root for a pid namespace of its own")
    if confine._memory_root() is None:
        pytest.skip("no room on /dev/shm: private folders go in the pair's folder")
    mine = Path(confine._private_folder(str(tmp_path)))
    try:
        # A fresh process sweeps when it first needs the root: here one that is pid 1
        # of a new pid namespace, where this test's pid is no process.
        proc = subprocess.run(["unshare", "--pid", "--fork", sys.executable, "-c", SWEEP],
                              capture_output=True, text=True, timeout=60)
        assert proc.returncode == 0, proc.stderr
        assert proc.stdout.strip() == str(mine.parent)
        assert mine.is_dir(), "a live process's private folder was removed"
    finally:
        shutil.rmtree(mine, ignore_errors=True)


def test_a_dead_processs_folder_is_swept_in_its_own_namespace(tmp_path):
    root = confine._memory_root()
    if root is None:
        pytest.skip("no room on /dev/shm: private folders go in the pair's folder")
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                          capture_output=True, text=True, check=True).stdout.strip()
    left = Path(root) / f"{dead}-{confine._pid_namespace()}-left"
    other = Path(root) / f"{dead}-1-elsewhere"  # another namespace's: not ours to judge
    left.mkdir()
    other.mkdir()
    try:
        subprocess.run([sys.executable, "-c", SWEEP], check=True, capture_output=True)
        assert not left.exists() and other.is_dir()
    finally:
        shutil.rmtree(left, ignore_errors=True)
        shutil.rmtree(other, ignore_errors=True)
