#!/usr/bin/env python3
"""What a file creation costs right after many deletions, on the results' filesystem and
on tmpfs.

ext4 without a journal (our VMs' root filesystem) will not hand out an inode freed in the
last few seconds, or for as long as its inode table block stays dirty (up to 300 s). Each
creation scans past every such inode, so a run that deletes thousands of scratch files,
or starts right after a previous run's folder was removed, pays for it on every later
creation. This is why wirebench keeps its scratch files on tmpfs (runtime/confine.py),
grows batch records in place (steps/batch.py) and marks a batch job incomplete by one
file (runtime/snakemake_process.py).

Usage: file_churn.py [--where DIR ...] [--files 3000]
Prints, for each folder: ms per creation in a fresh folder, then again 1.5 s after
deleting --files files there, and the ratio.
"""

from __future__ import annotations

import argparse
import os
import shutil
import tempfile
import time


def creations(folder: str, n: int, tag: str) -> float:
    """ms per creation of n empty files."""
    start = time.perf_counter()
    for i in range(n):
        os.close(os.open(os.path.join(folder, f"{tag}{i}"), os.O_CREAT | os.O_WRONLY, 0o644))
    return (time.perf_counter() - start) / n * 1e3


def measure(where: str, files: int) -> tuple[float, float]:
    folder = tempfile.mkdtemp(dir=where, prefix="file-churn-")
    try:
        fresh = creations(folder, files, "a")
        for i in range(files):
            os.unlink(os.path.join(folder, f"a{i}"))
        time.sleep(1.5)  # freed in an earlier second: the window ext4 checks
        after = creations(folder, 300, "b")
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    return fresh, after


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--where", nargs="+", default=[tempfile.gettempdir(), "/dev/shm"],
                    help="folders to measure in (default: the temp folder and /dev/shm)")
    ap.add_argument("--files", type=int, default=3000, help="files made, then deleted")
    a = ap.parse_args()
    for where in a.where:
        if not os.path.isdir(where):
            print(f"{where}: no such folder")
            continue
        fresh, after = measure(where, a.files)
        print(f"{where}: {fresh:.3f} ms a creation in a fresh folder, {after:.3f} ms "
              f"1.5 s after deleting {a.files} files ({after / fresh:.1f}x)")


if __name__ == "__main__":
    main()
