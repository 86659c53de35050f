"""An agent's op-list is untrusted input: keep every path in it inside the pair's own folder.

akcli resolves `symbol_source` (place_component), `file` (add_sheet, the `sheets` map)
and `target_file` against the file system. An op-list that names `/etc/...` or
`../../other-pair/...` there would make akcli, running for wirebench, read or write
outside the pair. `target_file` is owned by the harness (it is overwritten, as akcli's
own harness does); the other path fields must be plain relative paths that stay inside.
`run_id` names a folder akcli writes backups under, so it must be a plain name.

This guard is for clear messages only. The guarantee is the kernel's: the akcli steps run
confined to the pair's folder (runtime/confine.py), whatever field akcli adds next.
"""

from __future__ import annotations

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
