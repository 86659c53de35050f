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

    return confined.run("nets", lambda: extract(sheet, out), out=out, reads=[sheet],
                        timeout=timeout, give_up=lambda reason: gave_up(sheet, out, reason))


def gave_up(sheet: Path, out: Path, reason: str) -> None:
    """The document of a nets step that never finished."""
    write_json(out, {**_blank(sheet), "errors": [reason]})


def _blank(sheet: Path) -> dict:
    return {"schema": SCHEMA, "inputs": input_hashes(sheet=sheet), "versions": versions(),
            "nets": [], "errors": []}


def extract(sheet: Path, out: Path) -> None:
    """The step's work, unconfined: the caller confines it."""
    from wirebench.runtime import akcli_backend

    res = akcli_backend.nets(sheet)
    report = res.json() or {}
    result = {**_blank(sheet), "nets": report.get("nets", [])}
    if res.rc != 0 or "nets" not in report:
        result["errors"].append(f"akcli nets failed (exit {res.rc}): {res.error_text()}")
    write_json(out, result)
