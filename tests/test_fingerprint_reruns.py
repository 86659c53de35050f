"""A file a fingerprint covers, edited in a real run: the pairs that rerun and those that
must not are counted from the second run itself (its batch logs and the pair's files),
not from a dry run's job counts.

`data/part_models.yaml` is in simulate's fingerprint (evidence/fingerprint.py): the README
promises that a change to a part model reruns simulate, and so the scores, of every design
pair, and nothing an agent answered.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from conftest import Project

import wirebench

DESIGN, TRANSCRIPTION = "d05-npn-led-switch", "01-divider"
STEPS = ("generate", "validate", "apply", "nets", "simulate", "score")
PAIR_FILES = ("ops.json", "agent.json", "validate.json", "apply.json", "board.kicad_sch",
              "nets.json", "sim.json", "score.json")


def _logs(project: Project) -> dict[str, tuple[int, list[str]]]:
    """step -> (mtime of its batch log, the pairs that log says the step ran)."""
    out = {}
    for step in STEPS:
        log = project.root / "results" / "logs" / "batches" / "reference" / "0001" / f"{step}.log"
        if log.is_file():
            ran = [line[3:].split("/")[1] for line in log.read_text().splitlines()
                   if line.startswith("== ")]
            out[step] = (log.stat().st_mtime_ns, ran)
    return out


def _files(project: Project) -> dict[tuple[str, str], bytes]:
    # Bytes only: Snakemake touches every output of a batch job that ran, kept pairs' too.
    return {(t, name): (project.pair("reference", t) / name).read_bytes()
            for t in (DESIGN, TRANSCRIPTION) for name in PAIR_FILES
            if (project.pair("reference", t) / name).is_file()}


@pytest.mark.slow
def test_a_part_model_edit_resimulates_the_design_pairs_and_nothing_else(tmp_path):
    project = Project(tmp_path / "wb").self_contained([DESIGN, TRANSCRIPTION])
    symbols = sorted(f"symbols/{p.name}" for p in (project.root / "symbols").glob("*.kicad_sym"))
    project.configure({"reference": {"kind": "reference"}}, tasks=[DESIGN, TRANSCRIPTION],
                      tasks_dir="tasks", symbols=symbols)
    # A private copy of the package, first on PYTHONPATH: "the code" this run runs.
    pkg = tmp_path / "pkg"
    shutil.copytree(Path(wirebench.__file__).parent, pkg / "wirebench",
                    ignore=shutil.ignore_patterns("__pycache__"))
    env = {"PYTHONPATH": str(pkg), "WIREBENCH_WORKER": "0"}
    project.snakemake(env=env)
    assert project.score("reference", DESIGN)["passed"]
    logs, files = _logs(project), _files(project)
    assert logs["simulate"][1] == [DESIGN], "only the design pair is simulated"
    sim_before = json.loads(project.pair("reference", DESIGN).joinpath("sim.json").read_text())

    # The red LED's series resistance, 2 -> 3 ohm: its forward drop at 10 mA rises.
    models = pkg / "wirebench" / "data" / "part_models.yaml"
    text = models.read_text()
    old = ".model WB_LED_RED D(IS=6.26e-19 N=2 RS=2 "
    assert text.count(old) == 1
    models.write_text(text.replace(old, ".model WB_LED_RED D(IS=6.26e-19 N=2 RS=3 "))
    project.snakemake(env=env)

    after_logs, after = _logs(project), _files(project)
    reran = {step for step in STEPS if after_logs[step][0] != logs[step][0]}
    assert reran == {"simulate", "score"}, f"steps whose batch ran again: {sorted(reran)}"
    assert after_logs["simulate"][1] == [DESIGN]
    assert after_logs["score"][1] == [DESIGN], "the transcription pair's score is kept"
    changed = {key for key, data in after.items() if data != files[key]}
    assert ("d05-npn-led-switch", "sim.json") in changed
    assert changed <= {(DESIGN, "sim.json"), (DESIGN, "score.json")}, sorted(changed)
    for name in ("ops.json", "agent.json", "validate.json", "apply.json", "nets.json"):
        assert after[(DESIGN, name)] == files[(DESIGN, name)], f"{name} was rewritten"
    for name in PAIR_FILES:
        key = (TRANSCRIPTION, name)
        if key in files:
            assert after[key] == files[key], f"{TRANSCRIPTION}'s {name} was rewritten"
    # The new model is what the design pair was simulated with.
    sim_after = json.loads(project.pair("reference", DESIGN).joinpath("sim.json").read_text())
    assert sim_after != sim_before
    # And then nothing is left to do.
    dry = project.snakemake("-n", env=env)
    assert "Nothing to be done" in dry.stdout + dry.stderr
