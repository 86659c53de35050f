"""Freeze a finished run: archive/<run-id>.tar.gz plus a row in archive/index.csv.

The tarball holds everything needed to score the run again or compare it later without
any agent: summary, scorecard, report, manifest, every pair's artifacts, the prompt
packs, and provenance.json (date, versions, git commit of the corpus, the config as run,
from the results themselves, which by construction holds no secrets, only the names of
variables that do).
"""

from __future__ import annotations

import csv
import io
import tarfile
import time
from pathlib import Path

from wirebench.evidence.files import dumps, read_json, sha256_file, write_bytes_atomic
from wirebench.evidence.manifest import verify
from wirebench.evidence.provenance import git_commit, versions

INDEX_COLUMNS = ["run_id", "date", "git_commit", "git_dirty", "wirebench", "akcli",
                 "models", "tasks", "samples", "pass_rates", "archive"]


def run_config(results: Path, config_file: Path | None = None) -> tuple[str, dict]:
    """The config a run was scored with, as its text and as read: results/config.json,
    which the run itself wrote; for results from before it did, `config_file`."""
    import yaml

    recorded = Path(results) / "config.json"
    path = recorded if recorded.is_file() or config_file is None else Path(config_file)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ValueError(f"{results}: no config.json: the run has not finished "
                         "(run snakemake first)") from None
    return text, yaml.safe_load(text) or {}


def create(results: Path, out_dir: Path, config_file: Path | None = None) -> dict:
    """Freeze `results` as they are, checked against their manifest, with the config they
    were scored with (run_config), whatever the caller's own config says."""
    results, out_dir = Path(results), Path(out_dir)
    if not (results / "manifest.json").is_file():
        raise ValueError(f"{results}: no manifest.json: the run has not finished "
                         "(run snakemake first)")
    problems = verify(results)
    if problems:
        raise ValueError("results do not match their manifest; refusing to archive:\n  "
                         + "\n  ".join(problems[:10]))
    card = read_json(results / "scorecard.json")
    date = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    digest = sha256_file(results / "manifest.json")[:10]
    # A run archived before, unchanged (the same manifest): the same id, and no second
    # point in the history.
    for row in _index_rows(out_dir / "index.csv"):
        if row["run_id"].endswith(f"-{digest}") and (out_dir / row["archive"]).is_file():
            return {"run_id": row["run_id"], "archive": str(out_dir / row["archive"]),
                    "unchanged": True}
    run_id = f"{date[:10]}-{digest}"
    config_text, config = run_config(results, config_file)
    git = git_commit(Path(config.get("tasks_dir") or "."))
    provenance = {
        "schema": "wirebench.provenance/1", "run_id": run_id, "date": date,
        "versions": versions(), "git": git, "corpus_sha256": card.get("corpus_sha256"),
        "config_sha256": card.get("config_sha256"),
        "config": config_text,
    }
    members = [results / n for n in ("summary.csv", "scorecard.json", "report.md",
                                     "manifest.json")]
    for entry in read_json(results / "manifest.json")["artifacts"]:
        path = results / entry["path"]
        if path not in members:
            members.append(path)
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tar:
        for path in members:
            tar.add(path, arcname=f"{run_id}/{path.relative_to(results).as_posix()}")
        data = dumps(provenance).encode()
        info = tarfile.TarInfo(f"{run_id}/provenance.json")
        info.size, info.mtime = len(data), int(time.time())
        tar.addfile(info, io.BytesIO(data))
    target = out_dir / f"{run_id}.tar.gz"
    write_bytes_atomic(target, buf.getvalue())
    _add_index_row(out_dir / "index.csv", {
        "run_id": run_id, "date": date, "git_commit": git["commit"] or "",
        "git_dirty": git["dirty"], "wirebench": provenance["versions"]["wirebench"],
        "akcli": ";".join(card["versions"]["akcli"]), "models": ";".join(card["models"]),
        "tasks": card["tasks"], "samples": card["samples"],
        "pass_rates": ";".join(f"{m}={v['pass_rate']}" for m, v in card["models"].items()),
        "archive": target.name,
    })
    return {"run_id": run_id, "archive": str(target)}


def _index_rows(index: Path) -> list[dict]:
    if not index.is_file():
        return []
    with open(index, newline="") as fh:
        return list(csv.DictReader(fh))


def _add_index_row(index: Path, row: dict) -> None:
    """Rewritten whole and atomically, so a crash never leaves half a row."""
    rows = [r for r in _index_rows(index) if r["run_id"] != row["run_id"]]
    rows.append(row)
    buf = io.StringIO()
    writer = csv.DictWriter(buf, fieldnames=INDEX_COLUMNS)
    writer.writeheader()
    writer.writerows(rows)
    write_bytes_atomic(index, buf.getvalue().encode())


class BadArchive(ValueError):
    """Not an archived run: a usage error that names the file, never a traceback."""


def unpack(archive: Path, into: Path) -> Path:
    """Extract an archived run; returns its results folder. The `data` filter refuses
    members that would land outside `into` (absolute paths, `..`, links out)."""
    try:
        with tarfile.open(archive) as tar:
            tar.extractall(into, filter="data")
    except (tarfile.TarError, EOFError, OSError) as exc:
        why = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise BadArchive(f"{archive}: not an archived run ({why})") from None
    roots = [p for p in Path(into).iterdir() if p.is_dir()]
    if len(roots) != 1:
        raise BadArchive(f"{archive}: not an archived run (it should hold one run folder, "
                         f"it holds {len(roots)})")
    return roots[0]
