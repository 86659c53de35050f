"""An agent's op-list is untrusted input: keep every path in it inside the pair's own folder.

akcli resolves `symbol_source` (place_component), `file` (add_sheet, the `sheets` map)
and `target_file` against the file system. An op-list that names `/etc/...` or
`../../other-pair/...` there would make akcli, running for wirebench, read or write
outside the pair. `target_file` is owned by the harness (it is overwritten, as akcli's
own harness does); the other path fields must be plain relative paths that stay inside.
`run_id` names a folder akcli writes backups under, so it must be a plain name.

Strings are one line of text. akcli copies them into the sheet and, from there, into the
simulator's deck, one element a line: a line break (or any control character) in a value
would add lines of the agent's choosing to the deck (a `.control` block that prints fake
measures, or runs `shell`). A designator is copied into its element's line verbatim, so it
must be one plain token: `R1 VOUT 0 1` would be an element of the agent's choosing. And the
harness owns simulation models: akcli lets a part's `Sim.*` fields win over the task's
models, so an op-list may not set them.

The path guard is for clear messages only; the guarantee is the kernel's: the akcli steps
run confined to the pair's folder (runtime/confine.py), whatever field akcli adds next.
"""

from __future__ import annotations

import re
import unicodedata
from pathlib import PurePosixPath

PATH_KEYS = ("file", "symbol_source")
NAME_KEYS = ("run_id",)


def _escapes(value: str) -> str | None:
    if not value or "\x00" in value or "\\" in value:
        return "is empty or holds a NUL or backslash"
    if value.startswith(("/", "~")) or (len(value) > 1 and value[1] == ":"):
        return "is absolute"
    if ".." in PurePosixPath(value).parts:
        return "climbs out with '..'"
    return None


def path_problems(doc: object, where: str = "$") -> list[str]:
    """Readable problems, one per path-like field that would leave the pair's folder."""
    problems: list[str] = []
    if isinstance(doc, dict):
        for key, value in doc.items():
            here = f"{where}.{key}"
            if key in NAME_KEYS and value is not None:
                if not (isinstance(value, str) and value.replace("-", "").replace(
                        "_", "").isalnum() and value.isascii()):
                    problems.append(f"PATH_OUTSIDE_PAIR: {here} = {value!r} must be a plain "
                                    "name (letters, digits, '-', '_'): akcli makes a folder "
                                    "of it")
            elif key in PATH_KEYS and isinstance(value, str):
                why = _escapes(value)
                if why:
                    problems.append(f"PATH_OUTSIDE_PAIR: {here} = {value!r} {why}; "
                                    "paths in an op-list must stay inside the pair's folder")
            else:
                problems.extend(path_problems(value, here))
    elif isinstance(doc, list):
        for i, item in enumerate(doc):
            problems.extend(path_problems(item, f"{where}[{i}]"))
    return problems


DESIGNATOR_KEYS = ("designator", "new_designator", "designator_prefix")
DESIGNATOR = re.compile(r"[A-Za-z#][A-Za-z0-9_#+-]*\Z")
# Unicode's line and paragraph separators end a line for str.splitlines() too.
_BREAKS = ("Cc", "Zl", "Zp")


def problems(doc: object) -> list[str]:
    """Everything wirebench itself refuses in an op-list, each with its JSON path."""
    return [*path_problems(doc), *text_problems(doc)]


def text_problems(doc: object, where: str = "$", op: str | None = None) -> list[str]:
    """Control characters in any key or string, and any `Sim.*` field, each named with
    its JSON path and op."""
    found: list[str] = []
    at = f" (op {op})" if op else ""
    if isinstance(doc, dict):
        op = doc.get("op") if isinstance(doc.get("op"), str) else op
        at = f" (op {op})" if op else ""
        for key, value in doc.items():
            here = f"{where}.{key}"
            if key in DESIGNATOR_KEYS and isinstance(value, str) and not DESIGNATOR.match(value):
                found.append(f"BAD_DESIGNATOR: {here}{at} = {value!r}: a designator is one "
                             "token of letters, digits, '_', '#', '+' or '-', starting with "
                             "a letter or '#' (akcli copies it into the simulator's deck)")
            if isinstance(key, str):
                found.extend(_control(key, f"{where} key {key!r}", at))
                if key.strip().lower().startswith("sim."):
                    found.append(
                        f"SIM_FIELD_REFUSED: {here}{at}: an op-list may not set Sim.* "
                        "fields; the harness gives every part its simulation model")
            found.extend(text_problems(value, here, op))
    elif isinstance(doc, list):
        for i, item in enumerate(doc):
            found.extend(text_problems(item, f"{where}[{i}]", op))
    elif isinstance(doc, str):
        found.extend(_control(doc, where, at))
    return found


def _control(text: str, where: str, at: str) -> list[str]:
    bad = next((c for c in text if unicodedata.category(c) in _BREAKS), None)
    if bad is None:
        return []
    return [f"CONTROL_CHARACTER: {where}{at} holds U+{ord(bad):04X}; strings in an "
            "op-list are one line of printable text (akcli copies them into the sheet "
            "and the simulator's deck)"]
