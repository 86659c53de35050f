"""What a result was computed from: versions, the corpus, the config, the git commit."""

from __future__ import annotations

import platform
import subprocess
from functools import cache
from pathlib import Path

from wirebench.evidence.files import dumps, sha256_bytes, sha256_file


@cache
def dist_version(name: str) -> str | None:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version(name)
    except PackageNotFoundError:
        return None


def versions() -> dict:
    from wirebench import __version__

    return {"wirebench": __version__, "akcli": dist_version("akcli-kicad"),
            "python": platform.python_version(), "snakemake": dist_version("snakemake")}


def task_hash(task_dir: Path) -> str:
    """One hash over a task folder's files (names and bytes)."""
    task_dir = Path(task_dir)
    parts = [f"{p.relative_to(task_dir).as_posix()}:{sha256_bytes(p.read_bytes())}"
             for p in sorted(task_dir.rglob("*")) if p.is_file()]
    return sha256_bytes("\n".join(parts).encode())


def corpus_hash(tasks_dir: Path, tasks: list[str], folders: dict | None = None) -> str:
    """`folders`: a task's folder when it is not in tasks_dir (a generated tier's)."""
    folders = folders or {}
    return sha256_bytes("\n".join(f"{t}:{task_hash(folders.get(t) or Path(tasks_dir) / t)}"
                                  for t in sorted(tasks)).encode())


def libraries_hash(paths: list[str]) -> str:
    """One hash over the symbol libraries: each one's file name (akcli's nickname for
    it) and bytes. Not their folders or mtimes: a clone or a touch changes nothing."""
    parts = sorted(f"{Path(p).name}:{sha256_file(p)}" for p in paths)
    return sha256_bytes("\n".join(parts).encode())


def config_hash(config: dict) -> str:
    """The config holds no secrets (only the names of variables that do)."""
    return sha256_bytes(dumps(config).encode())


def git_commit(path: Path) -> dict:
    def git(*args):
        return subprocess.run(["git", "-C", str(path), *args], capture_output=True,
                              text=True, timeout=10)

    head = git("rev-parse", "HEAD")
    if head.returncode != 0:
        return {"commit": None, "dirty": None}
    # The whole checkout, not only `path`: an edited config, skill or symbol library
    # changes a run as much as an edited task (results/ and archive/ are ignored).
    dirty = git("status", "--porcelain").stdout.strip() != ""
    return {"commit": head.stdout.strip(), "dirty": dirty}
