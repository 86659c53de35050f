"""Artifacts on disk: atomic writes, hashes and the JSON documents every step leaves behind.

Every per-pair artifact is written to a temporary file in the same directory and then
renamed into place, so a killed job can leave a stray temp file but never a truncated
artifact under its real name.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from pathlib import Path


def sha256_bytes(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def sha256_file(path: str | os.PathLike) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 16), b""):
            h.update(chunk)
    return h.hexdigest()


def write_bytes_atomic(path: str | os.PathLike, data: bytes) -> None:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
        os.chmod(tmp, 0o644)  # mkstemp makes 0600; artifacts are for everyone to read
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


# Steps that work in a scratch folder inside the pair's folder, named `.<step>-<random>`.
# "tmp": the private TMPDIR of a confined step (runtime/confine.py); "tools": an agent's
# tool calls (steps/tools.py).
SCRATCH_STEPS = ("validate", "apply", "simulate", "tmp", "tools")


# In a confined child, its private folder (set by runtime/confine.py): the steps it runs
# make their scratch folders there, and the parent removes it, whatever became of them.
_private: Path | None = None


def use_private_folder(folder: str | os.PathLike) -> None:
    global _private
    _private = Path(folder)


def scratch_dir(parent: str | os.PathLike, step: str) -> Path:
    """A fresh scratch folder for `step`: in the confined child's private folder, else in
    the pair's folder (sweep knows its name)."""
    if step not in SCRATCH_STEPS:
        raise ValueError(f"no scratch folder for step {step!r}")
    return Path(tempfile.mkdtemp(dir=_private or parent, prefix=f".{step}-"))


def place(src: str | os.PathLike, dest: str | os.PathLike) -> None:
    """Put a finished file from a scratch folder at `dest`, whole: a rename, or, from a
    private folder on another filesystem, a copy beside `dest` renamed over it."""
    import errno

    try:
        os.replace(src, dest)
    except OSError as exc:
        if exc.errno != errno.EXDEV:
            raise
        write_bytes_atomic(dest, Path(src).read_bytes())


def _ours(leftover: Path) -> bool:
    """A name wirebench made: a step's scratch folder, or an atomic write's temp file."""
    if leftover.is_dir():
        return leftover.name.startswith(tuple(f".{s}-" for s in SCRATCH_STEPS))
    return leftover.name.startswith(".") and leftover.name.endswith(".tmp")


def sweep(folder: str | os.PathLike) -> None:
    """Remove what a killed step left in a pair's folder: temp files of atomic writes and
    step scratch folders, and nothing else (a `.git` or `.venv` that happens to sit next
    to an output is not ours). A pair's steps run one after another, so none is in use."""
    import shutil

    folder = Path(folder)
    if not folder.is_dir():
        return
    for leftover in folder.glob(".*"):
        if not _ours(leftover):
            continue
        if leftover.is_dir():
            shutil.rmtree(leftover, ignore_errors=True)
        else:
            leftover.unlink(missing_ok=True)


def dumps(doc: object) -> str:
    """The one JSON spelling of wirebench documents: sorted keys, so equal docs hash equal."""
    return json.dumps(doc, indent=2, sort_keys=True, ensure_ascii=False) + "\n"


def write_json(path: str | os.PathLike, doc: dict) -> None:
    if "schema" not in doc:
        raise ValueError(f"refusing to write {path}: a wirebench document needs a 'schema' field")
    write_bytes_atomic(path, dumps(doc).encode())


def read_json(path: str | os.PathLike) -> dict:
    with open(path, encoding="utf-8") as fh:
        return json.load(fh)
