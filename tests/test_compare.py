"""`wirebench compare` on a default-like run: every tier (transcription, refusal, design,
board) in one real Snakemake run, compared model against model, and against an archive
of itself. A design pair records no expected nets and a board pair no simulator: compare
once ended in `KeyError: 'expected'` on them (exit 70)."""

from __future__ import annotations

import json
import subprocess

import pytest
from conftest import Project

from wirebench.runtime import akcli_backend

pytestmark = pytest.mark.skipif(akcli_backend.ngspice_library() is None,
                                reason="needs Debian's libngspice0 (or AKCLI_NGSPICE)")

# One task a tier: a transcription, a contradictory one (the right answer is to ask a
# human), a design task (simulated) and a board (KiCad's own libraries).
TASK_IDS = ["01-divider", "17-contradictory-divider", "d01-rc-lowpass-loaded",
            "b01-stm32f030-minimum"]
# The heuristic baseline passes the transcription and fails the other three.
FAILED_BY_BASE = ["17-contradictory-divider/1", "b01-stm32f030-minimum/1",
                  "d01-rc-lowpass-loaded/1"]


@pytest.fixture(scope="module")
def world(tmp_path_factory) -> Project:
    project = Project(tmp_path_factory.mktemp("compare") / "wb").self_contained(TASK_IDS)
    project.snakemake()
    return project


def compare(project: Project, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(["wirebench", "compare", *args], capture_output=True, text=True,
                          cwd=project.root)


@pytest.mark.slow
def test_two_models_of_one_run_compare_on_every_tier(world):
    assert {world.score("reference", t)["tier"] for t in TASK_IDS} == {
        "transcription", "design", "board"}
    assert "expected" not in world.score("reference", "d01-rc-lowpass-loaded")["inputs"]
    proc = compare(world, "results", "--models", "reference", "base", "--json")
    assert proc.returncode == 0, proc.stderr
    report = json.loads(proc.stdout)
    assert report["pairs"] == 4 and report["fixes"] == []
    assert [r["pair"] for r in report["regressions"]] == FAILED_BY_BASE
    for regression in report["regressions"]:  # the answers differ, nothing else
        assert regression["what_changed"] == ["answer (ops hash)"], regression
    text = compare(world, "results", "--models", "reference", "base")
    assert text.returncode == 0 and "3 regression(s), 0 fix(es)" in text.stdout


@pytest.mark.slow
def test_an_archive_compares_with_its_run_and_within_itself(world):
    world.snakemake("archive")
    (archive,) = (world.root / "archive").glob("*.tar.gz")
    proc = compare(world, str(archive), "results", "--json")
    assert proc.returncode == 0, proc.stderr
    same = json.loads(proc.stdout)
    assert (same["pairs"], same["regressions"], same["fixes"]) == (8, [], [])
    within = json.loads(compare(world, str(archive), "--models", "reference", "base",
                                "--json").stdout)
    assert [r["pair"] for r in within["regressions"]] == FAILED_BY_BASE
