"""Only what changed reruns: exact job counts from real Snakemake dry runs.

One real run of 2 models x 3 tasks, then each change is made, dry-run, and undone. The
`reference` model reads no prompt; `base` is the heuristic baseline, a `command` agent
that reads the prompt pack built from its own skills folder.

With a batch of one pair (config `batch: 1`), a batch's job is a pair's step, so the
counts below are pairs. Within larger batches, the step itself redoes only the pairs
whose inputs changed (tests/test_batches.py).
"""

from __future__ import annotations

import os
import re
import shutil
import time
from pathlib import Path

import pytest
from conftest import Project

import wirebench

TASK_IDS = ["01-divider", "02-rc-lowpass", "13-edit-add-status-led"]
REST = {"summary": 1, "report": 1, "manifest": 1, "verdict": 1, "all": 1}  # follow any change
CONFIG = {"run_config": 1}  # the config as run, into results/config.json: any config change


def job_counts(proc) -> dict[str, int]:
    text = proc.stdout + proc.stderr
    if "Nothing to be done" in text:
        return {}
    block = text.split("Job stats:", 1)[1].strip().splitlines()
    counts = {}
    for line in block[2:]:
        m = re.match(r"^(\w+)\s+(\d+)$", line.strip())
        if not m:
            break
        if m.group(1) != "total":  # a batch's rule is named STEP__MODEL__NUMBER
            step = m.group(1).split("__")[0]
            counts[step] = counts.get(step, 0) + int(m.group(2))
    return counts


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    root = tmp_path_factory.mktemp("reruns")
    project = Project(root / "wb").self_contained(TASK_IDS, batch=1)
    # A private copy of the package, first on PYTHONPATH, so a test can edit "the code".
    shutil.copytree(Path(wirebench.__file__).parent, root / "pkg" / "wirebench",
                    ignore=shutil.ignore_patterns("__pycache__"))
    env = {"PYTHONPATH": str(root / "pkg"), "WIREBENCH_WORKER": "0"}
    project.snakemake(env=env)
    return project, root, env


def dry(world, extra_env=None):
    project, _, env = world
    return job_counts(project.snakemake("-n", env={**env, **(extra_env or {})}))


def edit(path: Path, change):
    """Change a file for one dry run, then put its bytes back (with a new mtime)."""
    class Edit:
        def __enter__(self):
            self.old = path.read_bytes()
            path.write_bytes(change(self.old))

        def __exit__(self, *exc):
            path.write_bytes(self.old)
    return Edit()


@pytest.mark.slow
def test_nothing_changed_means_nothing_to_do_even_with_new_file_times(world):
    project, root, _ = world
    later = time.time() + 3600
    for folder in ("tasks", "symbols", "skills", "config"):
        for p in (project.root / folder).rglob("*"):
            os.utime(p, (later, later))
    assert dry(world) == {}


@pytest.mark.slow
def test_expected_nets_edit_reruns_only_that_tasks_score_jobs(world):
    project, _, _ = world
    path = project.root / "tasks" / "02-rc-lowpass" / "expected_nets.json"
    with edit(path, lambda b: b.replace(b'"C1.2"', b'"C1.2", "R9.1"')):
        assert dry(world) == {"score": 2, **REST}


@pytest.mark.slow
def test_task_prompt_edit_reruns_that_task_for_every_model(world):
    project, _, _ = world
    with edit(project.root / "tasks" / "01-divider" / "task.md", lambda b: b + b"\nThanks!\n"):
        assert dry(world) == {"prompt_pack": 1, "generate": 2, "validate": 2, "apply": 2,
                              "nets": 2, "score": 2, **REST}


@pytest.mark.slow
def test_a_model_entry_change_reruns_only_that_model(world):
    project, _, _ = world
    more_turns = b"max_turns: 1\n    timeout: 60"
    with edit(project.config_path, lambda b: b.replace(b"timeout: 60", more_turns)):
        assert dry(world) == {"generate": 3, "validate": 3, "apply": 3, "nets": 3, "score": 3,
                              **CONFIG, **REST}


@pytest.mark.slow
def test_an_operational_knob_reruns_no_agent_call(world):
    """A timeout is how an entry runs, not what it answers (tests/test_journey.py runs it)."""
    project, _, _ = world
    with edit(project.config_path, lambda b: b.replace(b"timeout: 60", b"timeout: 900")):
        assert dry(world) == {**CONFIG, **REST}


@pytest.mark.slow
def test_scoring_code_change_reruns_only_score_jobs(world):
    _, root, _ = world
    with edit(root / "pkg" / "wirebench" / "verify" / "scoring.py", lambda b: b + b"\n# tweak\n"):
        assert dry(world) == {"score": 6, **REST}


@pytest.mark.slow
def test_an_akcli_upgrade_reruns_the_akcli_steps_never_generate(world, tmp_path):
    # A newer akcli-kicad, as importlib.metadata sees it: its dist-info first on the path.
    dist = tmp_path / "akcli_kicad-0.23.0.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: akcli-kicad\nVersion: 0.23.0\n")
    _, root, env = world
    counts = dry(world, {"PYTHONPATH": f"{tmp_path}:{env['PYTHONPATH']}"})
    assert counts == {"validate": 6, "apply": 6, "nets": 6, "score": 6, **REST}


@pytest.mark.slow
def test_a_symbol_library_change_reruns_apply_onward_never_generate(world):
    project, _, _ = world
    lib = project.root / "symbols" / "Device.kicad_sym"
    with edit(lib, lambda b: b.replace(b'(generator "wirebench")', b'(generator "wirebench2")')):
        assert dry(world) == {"apply": 6, "nets": 6, "score": 6, **REST}


@pytest.mark.slow
def test_a_skills_edit_reruns_generate_for_the_models_that_read_it(world):
    project, _, _ = world
    with edit(project.root / "skills" / "akcli-oplists.md", lambda b: b + b"\nBe careful.\n"):
        assert dry(world) == {"prompt_pack": 3, "generate": 3, "validate": 3, "apply": 3,
                              "nets": 3, "score": 3, **REST}
