"""Hashed artifacts, manifest and verify, traces and replay, archive and provenance."""

from __future__ import annotations

import csv
import json
import subprocess
import tarfile

import pytest
from conftest import Project

TASK_IDS = ["01-divider", "07-arrange-safe-blocks", "13-edit-add-status-led"]


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    project = Project(tmp_path_factory.mktemp("evidence") / "wb").configure(
        {"reference": {"kind": "reference"},
         "base": {"kind": "command", "command": "wirebench-baseline"}}, tasks=TASK_IDS)
    project.snakemake()
    return project


def wirebench(*args, cwd):
    return subprocess.run(["wirebench", *args, "--config", str(cwd / "config" / "config.yaml")]
                          if args[0] in ("replay", "archive") else ["wirebench", *args],
                          capture_output=True, text=True, cwd=cwd)


@pytest.mark.slow
def test_the_manifest_lists_every_artifact_with_its_rule_and_hash(run):
    manifest = json.loads((run.root / "results" / "manifest.json").read_text())
    paths = {a["path"]: a for a in manifest["artifacts"]}
    pair = "runs/reference/01-divider/1"
    assert {paths[f"{pair}/{n}"]["rule"] for n in ("ops.json", "agent.json")} == {"generate"}
    assert paths[f"{pair}/board.kicad_sch"]["rule"] == "apply"
    assert paths["prompts/skills/01-divider.md"]["rule"] == "prompt_pack"
    assert paths["summary.csv"]["rule"] == "summary"
    assert paths["config.json"]["rule"] == "run_config"  # the config as run
    assert len(paths) == 2 * len(TASK_IDS) * 9 + len(TASK_IDS) + 5
    assert wirebench("verify", "results", cwd=run.root).returncode == 0


@pytest.mark.slow
def test_verify_catches_a_changed_artifact(run, tmp_path):
    import shutil

    copy = tmp_path / "results"
    shutil.copytree(run.root / "results", copy)
    score = copy / "runs" / "base" / "01-divider" / "1" / "score.json"
    score.write_text(score.read_text().replace('"passed": true', '"passed": false'))
    proc = wirebench("verify", str(copy), cwd=run.root)
    assert proc.returncode == 1
    assert "changed: runs/base/01-divider/1/score.json" in proc.stdout


@pytest.mark.slow
def test_every_score_says_what_produced_it(run):
    score = run.score("reference", "01-divider")
    assert set(score["versions"]) == {"wirebench", "akcli", "python", "snakemake"}
    assert len(score["task_sha256"]) == 64
    assert set(score["inputs"]) == {"agent", "validate", "apply", "nets", "expected"}
    card = json.loads((run.root / "results" / "scorecard.json").read_text())
    assert len(card["corpus_sha256"]) == len(card["config_sha256"]) == 64
    assert card["versions"]["snakemake"] and card["versions"]["python"]


@pytest.mark.slow
def test_replay_of_the_run_is_fully_equivalent(run):
    proc = wirebench("replay", "results", "--json", cwd=run.root)
    report = json.loads(proc.stdout)
    assert proc.returncode == 0
    assert (report["equivalent"], report["total"], report["percent"]) == (6, 6, 100.0)


@pytest.mark.slow
def test_replay_reports_a_planted_difference(run, tmp_path):
    import shutil

    copy = tmp_path / "results"
    shutil.copytree(run.root / "results", copy)
    nets = copy / "runs" / "reference" / "13-edit-add-status-led" / "1" / "nets.json"
    doc = json.loads(nets.read_text())
    doc["nets"][0]["members"].append("R99.1")
    nets.write_text(json.dumps(doc))
    proc = wirebench("replay", str(copy), "--json", cwd=run.root)
    report = json.loads(proc.stdout)
    assert proc.returncode == 1 and report["equivalent"] == 5
    (bad,) = [p for p in report["pairs"] if not p["same"]]
    assert bad["pair"] == "runs/reference/13-edit-add-status-led/1" and bad["differs"] == ["nets"]


@pytest.mark.slow
def test_archive_freezes_the_run_and_can_be_replayed_without_the_agent(run):
    proc = run.snakemake("archive")
    assert proc.returncode == 0
    with open(run.root / "archive" / "index.csv", newline="") as fh:
        index = list(csv.DictReader(fh))
    assert len(index) == 1 and index[0]["models"] == "base;reference"
    tarball = run.root / "archive" / index[0]["archive"]
    with tarfile.open(tarball) as tar:
        names = tar.getnames()
        run_id = index[0]["run_id"]
        provenance = json.load(tar.extractfile(f"{run_id}/provenance.json"))
    assert f"{run_id}/runs/base/07-arrange-safe-blocks/1/board.kicad_sch" in names
    assert f"{run_id}/manifest.json" in names
    assert provenance["versions"]["akcli"] == "0.22.0"
    # The config as the run recorded it (results/config.json), models resolved.
    assert sorted(json.loads(provenance["config"])["models"]) == ["base", "reference"]
    replayed = wirebench("replay", str(tarball), cwd=run.root)
    assert replayed.returncode == 0 and "6/6 pairs equivalent" in replayed.stdout
    # The run has not changed: archiving it again keeps its id, its tarball and one row.
    before = tarball.read_bytes()
    again = wirebench("archive", "--results", "results", "--out", "archive", cwd=run.root)
    assert again.returncode == 0 and f"unchanged since {run_id}" in again.stdout, again.stderr
    with open(run.root / "archive" / "index.csv", newline="") as fh:
        assert [r["run_id"] for r in csv.DictReader(fh)] == [run_id]
    assert tarball.read_bytes() == before
    # And the run is settled: the archive's new row reruns neither report nor manifest.
    again = run.snakemake("-n")
    assert "Nothing to be done" in again.stdout + again.stderr


@pytest.mark.slow
def test_git_dirty_covers_the_whole_checkout_not_only_the_tasks(tmp_path):
    """An uncommitted config edit changes a run as much as a task edit: git_dirty says so."""
    from wirebench.evidence.provenance import git_commit

    def git(*args):
        subprocess.run(["git", "-C", str(tmp_path), *args], check=True, capture_output=True)

    (tmp_path / "tasks").mkdir()
    (tmp_path / "tasks" / "task.md").write_text("# a task\n")
    (tmp_path / "config.yaml").write_text("samples: 1\n")
    git("init", "-q")
    git("add", ".")
    git("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "x")
    assert git_commit(tmp_path / "tasks")["dirty"] is False
    (tmp_path / "config.yaml").write_text("samples: 2\n")
    assert git_commit(tmp_path / "tasks")["dirty"] is True
