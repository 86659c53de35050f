"""KiCad's own symbol libraries, for the tasks that draw with real parts.

A board task names the libraries it needs (task.yaml `libraries: [Device, power,
MCU_ST_STM32F0]`); they come from a KiCad install, never from this repository (they are
CC-BY-SA 4.0 with KiCad's library exception, and 100 MB). The folder is the config's
`kicad_symbols`, else KiCad's own variables (KICAD9_SYMBOL_DIR ... KICAD6_SYMBOL_DIR,
KICAD_SYMBOL_DIR), else Debian's `kicad-symbols` package at /usr/share/kicad/symbols.

A task that names no libraries draws with the run's `symbols` list, as before.
"""

from __future__ import annotations

import os
from pathlib import Path

from wirebench.corpus.tasks import Task, TaskError

DEBIAN_DIR = "/usr/share/kicad/symbols"
ENV_VARS = ("KICAD9_SYMBOL_DIR", "KICAD8_SYMBOL_DIR", "KICAD7_SYMBOL_DIR",
            "KICAD6_SYMBOL_DIR", "KICAD_SYMBOL_DIR")
INSTALL_HINT = ("install KiCad's libraries (Debian: apt-get install kicad-symbols), or point "
                "the config's kicad_symbols (or KICAD6_SYMBOL_DIR) at a KiCad 6+ symbols folder")


def kicad_dir(configured: str | None = None) -> Path:
    if configured:
        return Path(configured)
    for var in ENV_VARS:
        if os.environ.get(var):
            return Path(os.environ[var])
    return Path(DEBIAN_DIR)


def resolve(names: list[str], folder: Path) -> list[str]:
    """Each library's file, or a TaskError that names the first one missing."""
    paths = []
    for name in names:
        path = folder / f"{name}.kicad_sym"
        if not path.is_file():
            raise TaskError(f"KiCad library {name!r} not found in {folder}: {INSTALL_HINT}")
        paths.append(str(path))
    return paths


def symbols_for(task: Task, default: list[str], configured: str | None = None) -> list[str]:
    """The libraries a task's pairs draw with: the ones in its folder, its own KiCad
    ones, or the run's."""
    if task.symbol_files:
        missing = [p for p in task.symbol_files if not p.is_file()]
        if missing:
            raise TaskError(f"{missing[0]}: missing (task.yaml symbol_files)")
        return [str(p) for p in task.symbol_files]
    return resolve(task.libraries, kicad_dir(configured)) if task.libraries else list(default)
