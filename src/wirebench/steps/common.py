"""What every per-pair step shares: the versions and input hashes it records, and the
op-list akcli sees.

Each step reads the previous step's artifact and writes its own JSON document (atomically,
with a `schema` field and the sha256 of what it read). A bad op-list, a refused draw or a
failed post-check is recorded as data in these documents; a step only exits non-zero when
the harness itself is broken.
"""

from __future__ import annotations

import json
from pathlib import Path

from wirebench.evidence.files import sha256_file, write_bytes_atomic


def versions(with_akcli: bool = True) -> dict:
    from wirebench.evidence.provenance import versions as tool_versions

    found = tool_versions()
    if not with_akcli:
        found.pop("akcli")
    return found


def input_hashes(**paths: Path) -> dict:
    return {name: sha256_file(p) for name, p in sorted(paths.items())}


def write_candidate(doc: dict, path: Path) -> None:
    """The op-list akcli sees: the agent's, with the target file owned by the harness."""
    write_bytes_atomic(path, json.dumps({**doc, "target_file": path.parent.joinpath(
        "board.kicad_sch").name}).encode())
