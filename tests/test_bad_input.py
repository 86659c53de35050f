"""The bad-input suite (tests/bad_inputs.py holds the cases): one real Snakemake run with
a column for each malformed answer, misbehaving agent and broken server reply, then the
malformed tasks, configs and archives a user can hand the CLI.

Every pair case must end as a verdict on that pair, with its reason named; the run must
finish; nothing may be written outside `results/` and `.snakemake/`; no log may hold a
traceback. Every other case must be refused with a message that names the problem.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from bad_inputs import (
    COMMAND_ENTRY,
    COMMANDS,
    MAX_OPLIST_BYTES,
    MAX_OPS,
    OPLISTS,
    SERVER_REPLIES,
    TASK,
)
from conftest import REPO, SYMBOLS, TASKS, Project
from fake_openai import FakeOpenAI

FILE_CASES = {  # ops_dir answers that are not answer files
    "symlink-out": ("invalid", "leads out of"),
    "a-directory": ("invalid", "no answer file"),
}


def _tree(root: Path) -> dict:
    """Every file outside results/ and .snakemake/, with its size and mtime."""
    seen = {}
    for path in root.rglob("*"):
        rel = path.relative_to(root)
        if rel.parts[0] in ("results", ".snakemake") or not path.is_file():
            continue
        st = path.lstat()
        seen[str(rel)] = (st.st_size, st.st_mtime_ns)
    return seen


def _always(reply):
    return lambda n, body: reply


@pytest.fixture(scope="module")
def bad_run(tmp_path_factory):
    root = tmp_path_factory.mktemp("bad")
    models = {}
    for name, (data, _, _) in OPLISTS.items():
        folder = root / "answers" / name
        folder.mkdir(parents=True)
        (folder / f"{TASK}.json").write_bytes(data)
        models[f"ops-{name}"] = {"kind": "ops_dir", "dir": str(folder)}
    for name in FILE_CASES:
        folder = root / "answers" / name
        folder.mkdir(parents=True)
        models[f"ops-{name}"] = {"kind": "ops_dir", "dir": str(folder)}
    (root / "answers" / "symlink-out" / f"{TASK}.json").symlink_to(
        TASKS / TASK / "reference_ops.json")
    (root / "answers" / "a-directory" / f"{TASK}.json").mkdir()
    for name, (command, _, _) in COMMANDS.items():
        models[f"cmd-{name}"] = {"kind": "command", "command": command, "retries": 0,
                                 "timeout": 30, "max_output_bytes": 1_000_000,
                                 **COMMAND_ENTRY.get(name, {})}
    scripts = {name: _always(reply) for name, (reply, _, _) in SERVER_REPLIES.items()}
    with FakeOpenAI(scripts) as server:
        for name in SERVER_REPLIES:
            models[f"oa-{name}"] = {"kind": "openai", "base_url": server.base_url,
                                    "model": name, "retries": 0, "timeout": 30}
        # Models that are all infra errors on purpose: the run must still end green.
        project = Project(root / "wb").configure(models, tasks=[TASK], max_infra_rate=1.0)
        config = project.root / "config" / "config.yaml"
        import yaml

        doc = yaml.safe_load(config.read_text())
        doc.update(max_oplist_bytes=MAX_OPLIST_BYTES, max_ops=MAX_OPS)
        config.write_text(yaml.safe_dump(doc))
        before = _tree(project.root)
        proc = project.snakemake(check=False)
        yield project, proc, before


def _row(project, model):
    df = project.summary()
    rows = df[df["model"] == model]
    assert len(rows) == 1, f"{model}: no row in the summary"
    return rows.iloc[0]


PAIR_CASES = (
    [(f"ops-{n}", o, p) for n, (_, o, p) in OPLISTS.items()]
    + [(f"ops-{n}", o, p) for n, (o, p) in FILE_CASES.items()]
    + [(f"cmd-{n}", o, p) for n, (_, o, p) in COMMANDS.items()]
    + [(f"oa-{n}", o, p) for n, (_, o, p) in SERVER_REPLIES.items()]
)


def test_the_suite_is_large_enough():
    assert len(PAIR_CASES) + len(REFUSED_CASES) >= 40


@pytest.mark.slow
def test_the_run_finishes_and_scores_every_pair(bad_run):
    project, proc, _ = bad_run
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert len(project.summary()) == len(PAIR_CASES)


@pytest.mark.parametrize(("model", "outcome", "phrase"), PAIR_CASES,
                         ids=[c[0] for c in PAIR_CASES])
@pytest.mark.slow
def test_each_bad_input_is_a_named_verdict_on_its_own_pair(bad_run, model, outcome, phrase):
    project, _, _ = bad_run
    row = _row(project, model)
    assert row.outcome == outcome, row.errors
    assert phrase in row.errors, row.errors
    for log in (project.root / "results" / "logs").rglob("*.log"):
        assert "Traceback" not in log.read_text(errors="replace"), log


@pytest.mark.slow
def test_nothing_is_written_outside_the_results(bad_run):
    project, _, before = bad_run
    assert _tree(project.root) == before
    assert not Path("/tmp/wirebench-pwned").exists()
    # The kernel kills what is left in a sandbox's pid namespace as its first process
    # exits, and that takes a moment to show (one suite run in three saw a `sleep 301`
    # just after the run, and on a loaded machine more than 5 s after it): a grace of
    # seconds, as tests/test_resume.py gives. An orphan that outlives its sandbox would
    # sleep on for minutes.
    deadline = time.monotonic() + 20
    while (left := subprocess.run(["pgrep", "-f", "sleep 30[01]"], capture_output=True,
                                  text=True)).stdout and time.monotonic() < deadline:
        time.sleep(0.1)
    assert left.stdout == "", "an agent's orphan outlived its step"


# --- refused before any pair: configs, tasks, archives -------------------------------------

def _config_case(project: Project, change: dict) -> subprocess.CompletedProcess:
    import yaml

    config = project.root / "config" / "config.yaml"
    doc = yaml.safe_load(config.read_text())
    doc.update(change)
    config.write_text(yaml.safe_dump(doc))
    return project.snakemake("-n", check=False)


REFUSED_CASES = {
    "config-unknown-key": ({"colour": "red"}, "colour"),
    "config-negative-timeout": ({"step_timeout_s": -1}, "step_timeout_s"),
    "config-command-without-command": ({"models": {"x": {"kind": "command"}}}, "command"),
    "config-zero-max-ops": ({"max_ops": 0}, "max_ops"),
    "task-broken-yaml": (None, "task.yaml"),
}


@pytest.mark.parametrize("case", list(REFUSED_CASES))
@pytest.mark.slow
def test_a_bad_config_or_task_stops_the_run_before_any_job_naming_it(tmp_path, case):
    change, phrase = REFUSED_CASES[case]
    project = Project(tmp_path / "wb").self_contained([TASK])
    if change is None:
        (project.root / "tasks" / TASK / "task.yaml").write_text("tier: [unclosed\n")
        proc = project.snakemake("-n", check=False)
    else:
        proc = _config_case(project, change)
    assert proc.returncode != 0
    assert phrase in proc.stderr + proc.stdout
    assert "Traceback" not in proc.stderr
    assert not (project.root / "results").exists()


@pytest.mark.parametrize("content", [b"", b"not a tarball at all", b"\x1f\x8b\x08garbage"],
                         ids=["empty", "text", "broken-gzip"])
@pytest.mark.parametrize("command", ["compare", "replay"])
def test_a_bad_archive_is_a_usage_error_not_a_crash(tmp_path, content, command):
    archive = tmp_path / "run.tar.gz"
    archive.write_bytes(content)
    args = ([archive, archive] if command == "compare"
            else [archive, "--config", REPO / "config" / "config.yaml"])
    proc = subprocess.run([sys.executable, "-m", "wirebench.cli", command, *map(str, args)],
                          capture_output=True, text=True, cwd=tmp_path,
                          env={**os.environ, "WIREBENCH_WORKER": "0"})
    assert proc.returncode == 2, proc.stderr
    assert "run.tar.gz" in proc.stderr and "Traceback" not in proc.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["run.tar.gz"]


def test_the_cases_are_our_own_answers(tmp_path):
    """The reference itself, written by the same helper, passes: a case fails for its
    flaw, not for how the suite writes answers."""
    from bad_inputs import REFERENCE

    ops = tmp_path / "ops.json"
    ops.write_text(json.dumps(REFERENCE))
    proc = subprocess.run(["wirebench", "score", "--task", str(TASKS / TASK), "--ops", str(ops),
                           "--config", str(REPO / "config" / "config.yaml")],
                          capture_output=True, text=True, cwd=REPO)
    assert proc.returncode == 0, proc.stdout + proc.stderr


UNREADABLE = ["huge-integer", "huge-integer-envelope", "infinite-float", "infinity-literal",
              "deep-in-op", "lone-surrogate"]


@pytest.mark.parametrize("case", UNREADABLE)
def test_wirebench_score_gives_the_verdict_on_json_python_cannot_read(tmp_path, case):
    """Issue 30, finding 7: `wirebench score` on a 5,000-digit integer ended in an internal
    error (exit 70). Each such answer is a FAIL (exit 1) with its reason and first bytes."""
    data, _, phrase = OPLISTS[case]
    ops = tmp_path / "ops.json"
    ops.write_bytes(data)
    proc = subprocess.run(["wirebench", "score", "--task", str(TASKS / TASK), "--ops", str(ops),
                           "--config", str(REPO / "config" / "config.yaml")],
                          capture_output=True, text=True, cwd=REPO)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert phrase in proc.stdout and "it begins b'{" in proc.stdout, proc.stdout
    assert "internal error" not in proc.stderr and "Traceback" not in proc.stderr


def test_a_regression_gate_on_a_typo_fails(tmp_path):
    """Issue 14: `compare archive/typo.tar.gz results --fail-on-regression` printed "No
    pairs in common" and exited 0, so a typo passed the gate."""
    (tmp_path / "results" / "runs").mkdir(parents=True)
    for a, b in (("typo.tar.gz", "results"), ("results", "nowhere")):
        proc = subprocess.run([sys.executable, "-m", "wirebench.cli", "compare", a, b,
                               "--fail-on-regression"], capture_output=True, text=True,
                              cwd=tmp_path)
        assert proc.returncode == 2 and "no such results folder" in proc.stderr, proc.stderr
    empty = subprocess.run([sys.executable, "-m", "wirebench.cli", "compare", "results",
                            "results", "--fail-on-regression"], capture_output=True, text=True,
                           cwd=tmp_path)
    assert empty.returncode == 1 and "no scored pairs in common" in empty.stderr


def test_scoring_a_folder_is_a_usage_error(tmp_path):
    """Issue 14: `wirebench score --ops <a directory>` exited 70 with a traceback."""
    proc = subprocess.run([sys.executable, "-m", "wirebench.cli", "score", "--task",
                           str(TASKS / TASK), "--ops", str(tmp_path)], capture_output=True,
                          text=True, cwd=REPO)
    assert proc.returncode == 2 and "--ops must be an op-list file" in proc.stderr
    assert "Traceback" not in proc.stderr


@pytest.mark.slow
def test_a_command_naming_a_file_its_sandbox_hides_is_refused_at_start(tmp_path):
    """Issue 14: `command: python3 my_agents/dumb.py` ran in an empty folder, and every
    pair became an infra error on a run that exited 0. Now the run refuses to start."""
    project = Project(tmp_path / "wb").self_contained([TASK])
    (project.root / "my_agents").mkdir()
    (project.root / "my_agents" / "dumb.py").write_text("print('hi')\n")
    import yaml

    doc = yaml.safe_load(project.config_path.read_text())
    doc["models"]["mine"] = {"kind": "command", "command": "python3 my_agents/dumb.py",
                             "skills": "skills"}
    project.config_path.write_text(yaml.safe_dump(doc))
    proc = project.snakemake("-n", check=False)
    assert proc.returncode != 0
    assert "models.mine.command names ['my_agents/dumb.py']" in proc.stderr + proc.stdout
    doc["models"]["mine"] = {"kind": "command", "expose": [str(project.root / "my_agents")],
                             "skills": "skills",
                             "command": f"python3 {project.root / 'my_agents' / 'dumb.py'}"}
    project.config_path.write_text(yaml.safe_dump(doc))
    assert project.snakemake("-n", check=False).returncode == 0


# Every command that reads a path the user gives, with that path in its place ({} below).
PATH_COMMANDS = [
    ("score", ["--task", "{}", "--ops", str(TASKS / TASK / "reference_ops.json"),
               "--symbols", *SYMBOLS]),
    ("score", ["--task", str(TASKS / TASK), "--ops", "{}", "--symbols", *SYMBOLS]),
    ("tasks", ["check", "{}", "--symbols", *SYMBOLS]),
    ("tasks", ["split", "{}"]),
    ("tasks", ["generate", "prose", "--seed", "1", "--count", "1", "--out", "{}"]),
    ("summary", ["--runs", "{}", "--models", "m", "--tasks", "t", "--samples", "1",
                 "--csv", "out/s.csv", "--scorecard", "out/c.json"]),
    ("verify", ["{}"]),
    ("replay", ["{}", "--config", str(REPO / "config" / "config.yaml")]),
    ("archive", ["--results", "{}", "--config", str(REPO / "config" / "config.yaml"),
                 "--out", "out"]),
    ("compare", ["{}", "{}"]),
    ("history", ["{}", "--out", "out"]),
    ("gate", ["{}"]),
    ("report", ["--summary", "{}", "--scorecard", "{}", "--out", "out/r.md"]),
]


@pytest.mark.parametrize("kind", ["missing", "directory", "empty-file"])
@pytest.mark.slow
def test_every_command_names_a_bad_path_in_one_line_and_exits_2(tmp_path, kind):
    """Issue 14: each `wirebench` command, given a path that is missing, a folder where a
    file belongs or an empty file where a folder (or a real file) belongs, exits 2 with
    one line that names the path, never a traceback and never a success. (`tasks
    generate` writes into a folder, missing or not: only a file in its place is bad. An
    empty folder is a corpus with no tasks, which `tasks check` fails with exit 1. An
    empty op-list file is an answer, which `score` judges invalid: exit 1.)"""
    bad = tmp_path / "bad"
    if kind == "directory":
        bad.mkdir()
    elif kind == "empty-file":
        bad.write_bytes(b"")
    failures = []
    for command, args in PATH_COMMANDS:
        if ((kind != "empty-file" and args[:1] == ["generate"])
                or (kind == "directory" and args[:1] == ["check"])
                or (kind == "empty-file" and args[2:4] == ["--ops", "{}"])):
            continue
        argv = [a.replace("{}", str(bad)) for a in args]
        proc = subprocess.run([sys.executable, "-m", "wirebench.cli", command, *argv],
                              capture_output=True, text=True, cwd=tmp_path,
                              env={**os.environ, "WIREBENCH_WORKER": "0"}, timeout=120)
        lines = proc.stderr.strip().splitlines()
        if (proc.returncode != 2 or len(lines) != 1 or "Traceback" in proc.stderr
                or "bad" not in lines[0]):
            failures.append(f"{command} {' '.join(args)}: exit {proc.returncode}, "
                            f"{proc.stderr.strip()[-300:]!r}")
    assert not failures, "\n".join(failures)
