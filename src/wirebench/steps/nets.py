"""The nets step: the netlist that landed, as akcli extracts it."""

from __future__ import annotations

from pathlib import Path

from wirebench.evidence.files import write_json
from wirebench.steps.common import input_hashes, versions

SCHEMA = "wirebench.nets/1"


def nets(sheet: Path, out: Path) -> dict:
    """`akcli nets --json` of the sheet as it landed (after post-checks)."""
    from wirebench.runtime import akcli_backend

    res = akcli_backend.nets(sheet)
    report = res.json() or {}
    result = {"schema": SCHEMA, "inputs": input_hashes(sheet=sheet), "versions": versions(),
              "nets": report.get("nets", []), "errors": []}
    if res.rc != 0 or "nets" not in report:
        result["errors"].append(f"akcli nets failed (exit {res.rc}): {res.error_text()}")
    write_json(out, result)
    return result
