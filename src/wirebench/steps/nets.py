"""The nets step: the netlist that landed, as akcli extracts it."""

from __future__ import annotations

from pathlib import Path

from wirebench.evidence.files import write_json
from wirebench.steps.common import input_hashes, versions

SCHEMA = "wirebench.nets/1"


def nets(sheet: Path, out: Path, timeout: float | None = None) -> dict:
    """`akcli nets --json` of the sheet as it landed (after post-checks), confined to the
    pair's folder: a sheet can name child sheets, and akcli follows them."""
    from wirebench.steps import confined

    sheet, out = Path(sheet).absolute(), Path(out).absolute()  # the child works in the pair

    def give_up(reason: str) -> None:
        write_json(out, {**_blank(sheet), "errors": [reason]})

    return confined.run("nets", lambda: _nets(sheet, out), out=out, reads=[sheet],
                        timeout=timeout, give_up=give_up)


def _blank(sheet: Path) -> dict:
    return {"schema": SCHEMA, "inputs": input_hashes(sheet=sheet), "versions": versions(),
            "nets": [], "errors": []}


def _nets(sheet: Path, out: Path) -> None:
    from wirebench.runtime import akcli_backend

    res = akcli_backend.nets(sheet)
    report = res.json() or {}
    result = {**_blank(sheet), "nets": report.get("nets", [])}
    if res.rc != 0 or "nets" not in report:
        result["errors"].append(f"akcli nets failed (exit {res.rc}): {res.error_text()}")
    write_json(out, result)
