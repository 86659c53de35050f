"""Reruns that keep their promise, on real Snakemake runs with real akcli: what reran is
read from the job logs (a generate job per pair rewrites its log; a batch's log names
each pair it ran), not from a dry run's job counts.

The world: 3 models x 3 tasks, one batch a model: `reference`, `mine` a script of the
project listed under `files:`, `ext` a script outside the project, with a module it
imports, listed under `expose:`. Each test starts from a
settled run and leaves one.
"""

from __future__ import annotations

import csv
import json
import shutil
import tarfile
from pathlib import Path

import pytest
import yaml
from conftest import TASKS, Project

import wirebench

TASK_IDS = ["01-divider", "02-rc-lowpass", "13-edit-add-status-led"]
STEPS = ("validate", "apply", "nets", "score")
MODELS = ("reference", "mine", "ext")
# An agent of one's own: a script that answers every task with 01-divider's reference.
SCRIPT = ("import os\nwith open(os.environ['OPS_OUT'], 'w') as fh:\n"
          f"    fh.write({(TASKS / '01-divider' / 'reference_ops.json').read_text()!r})\n")


class Private(Project):
    """A project whose every run uses the test's own copy of the package."""

    env: dict = {}

    def snakemake(self, *args, **kwargs):
        return super().snakemake(*args, env=self.env, **kwargs)


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    root = tmp_path_factory.mktemp("promises")
    project = Private(root / "wb").self_contained(TASK_IDS)
    # A private copy of the package, first on PYTHONPATH: the steps' fingerprints hash
    # its code, which an edit in the checkout during the test must not change.
    shutil.copytree(Path(wirebench.__file__).parent, root / "pkg" / "wirebench",
                    ignore=shutil.ignore_patterns("__pycache__"))
    project.env = {"PYTHONPATH": str(root / "pkg"), "WIREBENCH_WORKER": "0"}
    (project.root / "my_agent.py").write_text("# mine, version 1\n" + SCRIPT)
    tools = root / "tools"  # outside the project: shown only through `expose:`
    tools.mkdir()
    (tools / "agent.py").write_text("import helper\n")
    (tools / "helper.py").write_text("# version 1\n" + SCRIPT)
    config = yaml.safe_load(project.config_path.read_text())
    del config["models"]["base"]
    config["models"]["mine"] = {"kind": "command", "command": "python3 my_agent.py",
                                "timeout": 60, "skills": "skills"}
    project.config_path.write_text(yaml.safe_dump(config))
    # The message a relative path gets names the key that fixes it, and the fix...
    refused = project.snakemake("-n", check=False)
    assert refused.returncode != 0
    assert ("List it under `files:` (models.mine.files: [my_agent.py]) and name it as "
            '"$PROJECT_DIR/my_agent.py"') in refused.stdout + refused.stderr
    # ...done as it says, runs.
    config["models"]["mine"].update(command='python3 "$PROJECT_DIR/my_agent.py"',
                                    files=["my_agent.py"])
    config["models"]["ext"] = {"kind": "command", "command": f"python3 {tools}/agent.py",
                               "expose": [str(tools)], "timeout": 60, "skills": "skills"}
    project.config_path.write_text(yaml.safe_dump(config))
    project.snakemake()
    for model in ("mine", "ext"):
        assert project.score(model, "01-divider")["passed"], model
    return project, tools


def _logs(project: Project) -> dict[Path, int]:
    return {p: p.stat().st_mtime_ns for p in (project.root / "results" / "logs").rglob("*.log")}


def _run(project: Project, *args: str) -> dict[str, set[str]]:
    """A real run; step -> the pairs it ran."""
    before = _logs(project)
    project.snakemake(*args)
    ran: dict[str, set[str]] = {}
    for log, mtime in _logs(project).items():
        if before.get(log) == mtime:
            continue  # its job did not run
        parts = log.relative_to(project.root / "results" / "logs").parts
        if parts[0] == "batches":  # batches/MODEL/NNNN/STEP.log
            pairs = {line[3:] for line in log.read_text().splitlines()
                     if line.startswith("== ")}
            if pairs:
                ran.setdefault(log.stem, set()).update(pairs)
        elif len(parts) == 4:  # MODEL/TASK/SAMPLE/generate.log
            ran.setdefault(log.stem, set()).add("/".join(parts[:3]))
    return ran


def _pairs(model: str, tasks=TASK_IDS) -> set[str]:
    return {f"{model}/{t}/1" for t in tasks}


def _answered_again(model: str) -> dict[str, set[str]]:
    """The model's every pair answered again: the same answer (so no akcli step redraws
    it), scored again since agent.json records the new call."""
    return {"generate": _pairs(model), "score": _pairs(model)}


@pytest.mark.slow
def test_editing_a_files_script_reruns_that_model_alone(world):
    project, _ = world
    (project.root / "my_agent.py").write_text("# mine, version 2\n" + SCRIPT)
    assert _run(project) == _answered_again("mine")


@pytest.mark.slow
def test_editing_an_exposed_script_or_a_module_it_imports_reruns_that_model_alone(world):
    project, tools = world
    (tools / "helper.py").write_text("# version 2\n" + SCRIPT)
    assert _run(project) == _answered_again("ext")


@pytest.mark.slow
def test_operational_knobs_rerun_no_agent_call(world):
    project, _ = world
    config = yaml.safe_load(project.config_path.read_text())
    config["models"]["mine"].update(timeout=900, retries=5, backoff_s=2.5)
    config["models"]["ext"]["max_output_bytes"] = 1 << 22
    project.config_path.write_text(yaml.safe_dump(config))
    assert _run(project) == {}
    # The agents got the new knobs: the entry reaches the step whole.
    config["models"]["mine"]["max_turns"] = 2  # and a key that shapes answers reruns
    project.config_path.write_text(yaml.safe_dump(config))
    assert _run(project) == _answered_again("mine")


@pytest.mark.slow
def test_a_narrowed_run_leaves_the_next_full_run_nothing_to_redo(world):
    """The narrowed run's batches hold one pair of each model's batch of three. Their
    records must still vouch for the two others, or the full run redoes them."""
    project, _ = world
    with open(project.root / "tasks" / "01-divider" / "task.md", "a") as fh:
        fh.write("\nThe divider feeds an ADC input.\n")
    narrowed = _run(project, "--config", "tasks=01-divider")
    assert narrowed["generate"] == {f"{m}/01-divider/1" for m in MODELS}
    assert _run(project) == {}
    for model in MODELS:
        for step in STEPS:
            log = project.root / "results" / "logs" / "batches" / model / "0001" / f"{step}.log"
            assert f"{step}: 0 pair(s) run, 3 current" in log.read_text(), (model, step)


@pytest.mark.slow
def test_archive_freezes_the_run_as_it_was_configured(world):
    """After a run with `--config models_file=...`, a bare `snakemake archive` archives
    that run: its models, its config, and no job but the archive's."""
    project, _ = world
    config = yaml.safe_load(project.config_path.read_text())
    mine = {"models": {m: config["models"][m] for m in ("reference", "mine")}}
    (project.root / "my_models.yaml").write_text(yaml.safe_dump(mine))
    assert _run(project, "--config", "models_file=my_models.yaml") == {}
    proc = project.snakemake("archive")
    jobs = proc.stdout + proc.stderr
    assert "localrule archive:" in jobs and "rule summary" not in jobs and "rule score" not in jobs
    with open(project.root / "archive" / "index.csv", newline="") as fh:
        (row,) = csv.DictReader(fh)
    assert row["models"] == "mine;reference"
    with tarfile.open(project.root / "archive" / row["archive"]) as tar:
        names = tar.getnames()
        provenance = json.load(tar.extractfile(f"{row['run_id']}/provenance.json"))
    assert sorted(json.loads(provenance["config"])["models"]) == ["mine", "reference"]
    assert f"{row['run_id']}/runs/mine/01-divider/1/score.json" in names
    assert not any("/runs/ext/" in n for n in names)
