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
import re
import shutil
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


# akcli's power macros (place_pwr_flag, place_gnd, place_vcc) and place_power_port take
# their symbols from KiCad's `power` library, and the skills teach them for every task: a
# task that lists its KiCad libraries draws with this one too, listed or not, or an answer
# written as the pack teaches would be refused (SYMBOL_NOT_FOUND 'power:PWR_FLAG').
ALWAYS = ("power",)


def library_names(task: Task) -> list[str]:
    """The KiCad libraries a task that lists them draws with: its own, then ALWAYS."""
    return [*task.libraries, *(n for n in ALWAYS if n not in task.libraries)]


def symbols_for(task: Task, default: list[str], configured: str | None = None) -> list[str]:
    """The libraries a task's pairs draw with: the ones in its folder, its own KiCad
    ones, or the run's."""
    if task.symbol_files:
        missing = [p for p in task.symbol_files if not p.is_file()]
        if missing:
            raise TaskError(f"{missing[0]}: missing (task.yaml symbol_files)")
        return [str(p) for p in task.symbol_files]
    if task.libraries:
        return resolve(library_names(task), kicad_dir(configured))
    return list(default)


_SYMBOL_NAME = re.compile(r'\(symbol\s+"((?:[^"\\]|\\.)*)"')
_EXTENDS = re.compile(r'\(extends\s+"((?:[^"\\]|\\.)*)"')
_SYNTAX = re.compile(r'[()"\\]')


def _children(text: str) -> tuple[list[tuple[int, int]], int]:
    """The spans of the library's top-level entries (version, generator, each symbol),
    and where its closing parenthesis is. Strings are skipped: a quoted ')' is text."""
    start = text.index("(kicad_symbol_lib")
    spans, depth, opened, in_string, skip = [], 0, 0, False, -1
    for m in _SYNTAX.finditer(text, start):  # only the characters that matter
        i, ch = m.start(), m[0]
        if i == skip:  # the character after a backslash in a string
            continue
        if in_string:
            if ch == "\\":
                skip = i + 1
            elif ch == '"':
                in_string = False
            continue
        if ch == '"':
            in_string = True
        elif ch == "(":
            depth += 1
            if depth == 2:
                opened = i
        elif ch == ")":
            if depth == 2:
                spans.append((opened, i + 1))
            depth -= 1
            if depth == 0:
                return spans, i
    raise ValueError("the library's parentheses do not close")


def trim(text: str, names: set[str]) -> str:
    """A copy of a `.kicad_sym` library's text with only the named symbols (and the ones
    they extend), each symbol's text byte for byte as it is in the library, so akcli
    draws the same parts from it. akcli parses a whole library for every part it places:
    an agent's own draw of a board with KiCad's full libraries ran for more than 13
    minutes here, and in seconds with copies like these (benchmarks/agent_akcli_speed.py)."""
    spans, close = _children(text)
    symbols = {}
    for span in spans:
        m = _SYMBOL_NAME.match(text, span[0])
        if m:
            symbols[m[1]] = span
    wanted, todo = set(), [n for n in names if n in symbols]
    while todo:  # a derived symbol is drawn from its parent's text
        name = todo.pop()
        if name not in wanted:
            wanted.add(name)
            parent = _EXTENDS.search(text, *symbols[name])
            if parent and parent[1] in symbols:
                todo.append(parent[1])
    if not symbols:
        return text
    first = min(s for s, _ in symbols.values())
    last = max(e for _, e in symbols.values())
    # Each kept symbol with the line break and indent before it, as in the library.
    kept = "".join(text[len(text[:s].rstrip()):e] for name, (s, e) in symbols.items()
                   if name in wanted)
    return text[:first].rstrip() + kept + text[last:]


def trimmed_copies(libraries: list[str], lib_ids: list[str], folder: Path) -> list[Path]:
    """For each library a lib_id names, a copy in `folder` holding only those symbols,
    named as the library is (Device.kicad_sym): what a command agent's own akcli reads
    (SYMBOLS_DIR). A task's own library (the real tier's symbols.kicad_sym, whose symbols
    carry their whole lib_ids, `video_schlib:R`) is copied whole: it holds only the
    task's symbols already. Libraries no lib_id names are left out."""
    by_library: dict[str, set[str]] = {}
    for lib_id in lib_ids:
        library, _, name = lib_id.partition(":")
        by_library.setdefault(library, set()).add(name)
    folder.mkdir(parents=True, exist_ok=True)
    made = []
    for path in map(Path, libraries):
        if path.suffix != ".kicad_sym":
            continue
        out = folder / path.name
        if path.stem in ALWAYS:  # the macros' symbols: which ones an answer uses is its own
            shutil.copyfile(path, out)
        elif path.stem in by_library:
            out.write_text(trim(path.read_text(encoding="utf-8"), by_library[path.stem]),
                           encoding="utf-8")
        elif _holds_whole_ids(path, by_library):
            shutil.copyfile(path, out)
        else:
            continue
        made.append(out)
    return made


def _holds_whole_ids(path: Path, by_library: dict[str, set[str]]) -> bool:
    """Does the file name its symbols by whole lib_id (`(symbol "video_schlib:R"`), as a
    task's own library does, for any of the libraries asked for?"""
    text = path.read_text(encoding="utf-8")
    return any(f'(symbol "{library}:' in text for library in by_library)
