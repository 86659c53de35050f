"""results/manifest.json: every artifact of a run with its kind, size, producing rule and
sha256; and `wirebench verify`, which recomputes them."""

from __future__ import annotations

import csv
from pathlib import Path

from wirebench.evidence.files import read_json, sha256_file, write_json

SCHEMA = "wirebench.manifest/1"
# Per-pair artifact -> the rule that writes it.
PAIR_ARTIFACTS = {
    "ops.json": "generate", "agent.json": "generate", "validate.json": "validate",
    "board.kicad_sch": "apply", "board.svg": "apply", "apply.json": "apply", "nets.json": "nets",
    "score.json": "score", "trace.json": "score",
}
# Written only for some pairs: sim.json for a design task's pairs.
OPTIONAL_PAIR_ARTIFACTS = {"sim.json": "simulate"}
RUN_ARTIFACTS = {"summary.csv": "summary", "scorecard.json": "summary", "report.md": "report",
                 "report.html": "report", "config.json": "run_config"}


def _entry(results: Path, path: Path, kind: str, rule: str) -> dict:
    return {"path": path.relative_to(results).as_posix(), "kind": kind, "rule": rule,
            "bytes": path.stat().st_size, "sha256": sha256_file(path)}


def _pairs(results: Path) -> list[tuple[str, str, str]]:
    """The pairs of the run as its summary lists them: a narrowed run's summary keeps the
    experiment's earlier pairs, and so must the manifest that vouches for them."""
    with open(results / "summary.csv", newline="") as fh:
        return [(row["model"], row["task"], row["sample"]) for row in csv.DictReader(fh)]


def build(results: Path) -> dict:
    results = Path(results)
    entries = []
    pairs = _pairs(results)
    for model, task, sample in pairs:
        pair = results / "runs" / model / task / sample
        for name, rule in PAIR_ARTIFACTS.items():
            entries.append(_entry(results, pair / name, name.split(".")[0], rule))
        for name, rule in OPTIONAL_PAIR_ARTIFACTS.items():
            if (pair / name).is_file():
                entries.append(_entry(results, pair / name, name.split(".")[0], rule))
        # Child sheets of a hierarchical answer, wherever the answer put them.
        for child in sorted(pair.rglob("*.kicad_sch")):
            if child.name != "board.kicad_sch" or child.parent != pair:
                entries.append(_entry(results, child, "sheet", "apply"))
    tasks = {task for _, task, _ in pairs}
    for pack in sorted((results / "prompts").glob("*/*.md")):
        if pack.stem in tasks:
            entries.append(_entry(results, pack, "prompt", "prompt_pack"))
    for name, rule in RUN_ARTIFACTS.items():
        entries.append(_entry(results, results / name, name.split(".")[0], rule))
    return {"schema": SCHEMA, "artifacts": entries}


def write(results: Path, out: Path) -> None:
    write_json(out, build(results))


def verify(results: Path) -> list[str]:
    """Problems, one line each: a missing artifact, or one whose bytes or hash changed."""
    results = Path(results)
    problems = []
    for entry in read_json(results / "manifest.json")["artifacts"]:
        path = results / entry["path"]
        if not path.is_file():
            problems.append(f"missing: {entry['path']}")
        elif path.stat().st_size != entry["bytes"] or sha256_file(path) != entry["sha256"]:
            problems.append(f"changed: {entry['path']} (sha256 differs from the manifest)")
    return problems
