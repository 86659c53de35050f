"""Real Snakemake runs of the repo's Snakefile in temp folders, with the real akcli."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys

import pytest
from conftest import REPO, TASKS

from wirebench.steps.batch import read_record

SUMMARY_COLUMNS = ["model", "task", "sample", "this_run", "split", "tier", "family", "outcome",
                   "expected_outcome", "outcome_ok", "valid", "applied", "score", "passed",
                   "clean", "failure_class", "first_finding",
                   "matched", "expected", "extra_named_nets", "relabel_equivalent",
                   "sim_status", "layout_clean", "needs_human", "turns", "attempts",
                   "agent_wall_s", "prompt_tokens", "completion_tokens", "cost_usd",
                   "tool_calls", "invalid_calls", "attack_success", "size_parts", "size_nets",
                   "edit_ops", "errors", "skills"]


def all_tasks():
    return sorted(d.name for d in TASKS.iterdir() if (d / "task.md").is_file())


SAMPLE = {"transcription": 20, "design": 4, "board": 1, "spec": 0}  # spec: test_spec_tier


@pytest.mark.slow
def test_the_reference_matrix_passes_every_task(project):
    # A sample of each tier, every outcome among them: test_corpus scores every
    # reference through the same steps (evaluate_pair, which the rules call one by one),
    # test_boards every board, and test_worker_and_own_process_give_identical_results
    # holds the two paths to the same bytes.
    project.configure({"reference": {"kind": "reference"}}, sample_per_tier=SAMPLE).snakemake()
    df = project.summary()
    assert list(df.columns) == SUMMARY_COLUMNS
    tiers = {"transcription": [t for t in all_tasks() if t[:2].isdigit()],
             "design": [t for t in all_tasks() if t[0] in "ds"],
             "board": [t for t in all_tasks() if t.startswith("b")],
             "spec": [t for t in all_tasks() if t.startswith("p")]}
    assert sorted(df["task"]) == sorted(t for tier, n in SAMPLE.items()
                                        for t in tiers[tier][:n])
    assert df["passed"].all() and (df["score"] == 1.0).all()
    card = json.loads((project.root / "results" / "scorecard.json").read_text())
    n = sum(SAMPLE.values())
    ref = card["models"]["reference"]
    assert (ref["pairs"], ref["infra_errors"], ref["passed"], ref["pass_rate"],
            ref["mean_score"], ref["outcome_ok"]) == (n, 0, n, 1.0, 1.0, n)
    assert ref["outcomes"] == {"blocked": 1, "human-review-required": 1, "stop-condition": 1,
                               "success": n - 3}
    assert card["versions"]["akcli"] == ["0.22.0"] and card["versions"]["wirebench"]
    report = (project.root / "results" / "report.md").read_text()
    assert "| 01-divider | PASS |" in report
    # A right refusal draws nothing on purpose, and shows no error for it.
    for task in ("17-contradictory-divider", "18-out-of-domain-firmware"):
        assert project.score("reference", task)["errors"] == [], task
    pair = project.pair("reference", "01-divider")
    assert {p.name for p in pair.iterdir()} == {
        "ops.json", "agent.json", "validate.json", "board.kicad_sch", "board.svg", "apply.json",
        "nets.json", "score.json", "trace.json"}
    # Nothing half-written or scratch left anywhere under runs/.
    assert not [p for p in (project.root / "results" / "runs").rglob(".*")]
    # And a second run has nothing to do.
    again = project.snakemake("-n")
    assert "Nothing to be done" in again.stdout + again.stderr


@pytest.mark.slow
def test_a_broken_agent_fails_the_run_and_says_which(project):
    """An agent whose provider is down (it says so with exit 75, EX_TEMPFAIL) makes every
    pair of its model an infra error: the run exits non-zero, prints a line per model, and
    names the model and its first error. The summary and reports are still written; a
    higher max_infra_rate lets it pass."""
    models = {"reference": {"kind": "reference"},
              "typo": {"kind": "command", "retries": 0,
                       "command": "echo 'provider down' >&2; exit 75"}}
    proc = project.configure(models, tasks=["01-divider", "02-rc-lowpass"]).snakemake(
        check=False)
    assert proc.returncode != 0
    lines = proc.stdout.splitlines()
    header = next(i for i, line in enumerate(lines) if line.split()[:2] == ["model", "pairs"])
    assert lines[header + 1].split() == ["reference", "2", "2", "0", "0", "0"]
    assert lines[header + 2].split() == ["typo", "2", "0", "0", "0", "2"]
    assert ("wirebench: typo: 2/2 pairs are infra errors (more than 50%); first: "
            "01-divider: agent: agent declared an infra failure (exit 75, EX_TEMPFAIL)"
            ) in proc.stdout
    assert (project.root / "results" / "report.html").is_file()
    assert not (project.root / "results" / "verdict.json").exists()
    ok = project.snakemake("--config", "max_infra_rate=1.0")
    assert "typo" in ok.stdout and (project.root / "results" / "verdict.json").is_file()


@pytest.mark.slow
def test_the_shipped_config_runs_the_reference_and_the_baseline(project):
    import yaml

    config = yaml.safe_load((REPO / "config" / "config.yaml").read_text())
    config["tasks_dir"] = str(TASKS)
    config["symbols"] = [str(REPO / s) for s in config["symbols"]]
    config["tasks"] = ["01-divider", "12-battery-sense-divider-macro"]
    project.config_path.parent.mkdir(parents=True)
    project.config_path.write_text(yaml.safe_dump(config))
    project.snakemake()
    got = {(r.model, r.task): r.passed for r in project.summary().itertuples()}
    assert got == {("reference", "01-divider"): True,
                   ("reference", "12-battery-sense-divider-macro"): True,
                   ("baseline", "01-divider"): True,
                   ("baseline", "12-battery-sense-divider-macro"): False}
    prompt = project.root / "results" / "prompts" / "skills" / "01-divider.md"
    assert prompt.read_text().endswith((TASKS / "01-divider" / "task.md").read_text())


@pytest.mark.slow
def test_broken_pairs_never_stop_the_others(project, tmp_path):
    answers = tmp_path / "answers"
    answers.mkdir()
    (answers / "01-divider.json").write_text("{ not json")
    shutil.copy(TASKS / "02-rc-lowpass" / "reference_ops.json", answers / "02-rc-lowpass.json")
    wrong = json.loads((TASKS / "03-pi-filter" / "reference_ops.json").read_text())
    wrong["ops"] = [o for o in wrong["ops"] if o.get("name") != "5V_CLEAN"]
    (answers / "03-pi-filter.json").write_text(json.dumps(wrong))
    # 04 has no answer at all; 05 asks for a symbol no library has.
    bad_symbol = json.loads((TASKS / "05-decoupled-ldo" / "reference_ops.json").read_text())
    bad_symbol["ops"][0]["lib_id"] = "Regulator:NO_SUCH_PART"
    (answers / "05-decoupled-ldo.json").write_text(json.dumps(bad_symbol))

    tasks = ["01-divider", "02-rc-lowpass", "03-pi-filter", "04-i2c-pullups", "05-decoupled-ldo"]
    project.configure({"batch": {"kind": "ops_dir", "dir": str(answers)}}, tasks=tasks)
    project.snakemake()
    rows = {r.task: r for r in project.summary().itertuples()}
    assert rows["02-rc-lowpass"].passed
    assert not rows["01-divider"].valid and "unreadable op-list" in rows["01-divider"].errors
    assert rows["03-pi-filter"].applied and rows["03-pi-filter"].score == 0.6667
    assert rows["03-pi-filter"].errors == "net '5V_CLEAN': missing (expected ['C2.1', 'L1.2'])"
    assert "the agent wrote no answer" in rows["04-i2c-pullups"].errors
    agent = json.loads((project.pair("batch", "04-i2c-pullups") / "agent.json").read_text())
    assert agent["status"] == "no_answer"
    assert not rows["05-decoupled-ldo"].applied
    assert "SYMBOL_NOT_FOUND" in rows["05-decoupled-ldo"].errors
    card = json.loads((project.root / "results" / "scorecard.json").read_text())
    assert card["models"]["batch"]["passed"] == 1


@pytest.mark.slow
def test_config_narrows_the_matrix_and_a_single_target_runs_alone(project):
    project.configure({"reference": {"kind": "reference"}, "again": {"kind": "reference"}})
    project.snakemake("--config", "models=again", "tasks=01-divider,12-battery-sense-divider-macro")
    df = project.summary()
    assert sorted(zip(df["model"], df["task"], strict=True)) == [
        ("again", "01-divider"), ("again", "12-battery-sense-divider-macro")]
    assert not (project.root / "results" / "runs" / "reference").exists()

    # One pair's target builds that pair alone with a batch of one...
    target = "results/runs/reference/02-rc-lowpass/1/score.json"
    project.snakemake(target, "--config", "batch=1")
    assert project.score("reference", "02-rc-lowpass")["passed"]
    runs = project.root / "results" / "runs" / "reference"
    assert sorted(p.name for p in runs.iterdir()) == ["02-rc-lowpass"]
    # ... and its batch by default: up to 25 pairs of that model, and nothing else.
    project.snakemake("results/runs/reference/b03-usb-c-sink/1/score.json")
    records = list((project.root / "results" / "batches" / "reference").glob("*/score.json"))
    batch = [set(read_record(r)) for r in records]
    batch = next(b for b in batch if "reference/b03-usb-c-sink/1" in b)
    # A record keeps every pair it vouches for, whoever wrote it: the batch-of-one run
    # may have left the first pair in the same record.
    assert 1 < len(batch - {"reference/02-rc-lowpass/1"}) <= 25
    built = {f"reference/{p.name}/1" for p in runs.iterdir()}
    assert built == batch | {"reference/02-rc-lowpass/1"}


@pytest.mark.slow
def test_a_models_file_replaces_the_configs_models(project, tmp_path):
    """A second --configfile is merged into the first, so it can never drop a model;
    `models_file` replaces them, and `models=` narrows within it. A bad one is named."""
    mine = tmp_path / "my_models.yaml"
    mine.write_text("models:\n  mine: {kind: reference}\n  also-mine: {kind: reference}\n")
    project.configure({"reference": {"kind": "reference"}})
    project.snakemake("--config", f"models_file={mine}", "models=mine", "tasks=01-divider")
    assert sorted(set(project.summary()["model"])) == ["mine"]
    assert not (project.root / "results" / "runs" / "reference").exists()
    (tmp_path / "empty.yaml").write_text("models: {}\n")
    bad = project.snakemake("--config", f"models_file={tmp_path / 'empty.yaml'}", "-n",
                            check=False)
    said = bad.stderr + bad.stdout
    assert bad.returncode != 0 and "models_file" in said and "non-empty `models:`" in said


@pytest.mark.slow
def test_two_experiments_never_overwrite_each_other(project):
    """`--config experiment=NAME` keeps a run under results/NAME/: narrowing one run, or
    running another corpus, as its own experiment leaves every other one whole."""
    project.configure({"reference": {"kind": "reference"}, "again": {"kind": "reference"}})
    project.snakemake("--config", "experiment=wide", "tasks=01-divider,02-rc-lowpass")
    project.snakemake("--config", "experiment=narrow", "models=again", "tasks=01-divider")
    results = project.root / "results"
    assert sorted(p.name for p in results.iterdir()) == ["narrow", "wide"]
    import pandas as pd

    wide = pd.read_csv(results / "wide" / "summary.csv")
    narrow = pd.read_csv(results / "narrow" / "summary.csv")
    assert len(wide) == 4 and list(zip(narrow["model"], narrow["task"], strict=True)) == [
        ("again", "01-divider")]
    assert (results / "wide" / "runs" / "reference" / "02-rc-lowpass" / "1" / "score.json"
            ).is_file()
    for name in ("wide", "narrow"):
        verify = subprocess.run(["wirebench", "verify", str(results / name)],
                                capture_output=True, text=True)
        assert verify.returncode == 0, verify.stdout + verify.stderr
    # Each stays settled after the other ran.
    again = project.snakemake("-n", "--config", "experiment=wide",
                              "tasks=01-divider,02-rc-lowpass")
    assert "Nothing to be done" in again.stdout + again.stderr
    bad = project.snakemake("-n", "--config", "experiment=runs", check=False)
    assert bad.returncode != 0 and "config key experiment: 'runs'" in bad.stderr + bad.stdout


@pytest.mark.slow
def test_a_narrowed_run_keeps_its_experiments_other_pairs_and_says_which_it_ran(
        project, tmp_path):
    """Narrowing (`models=`, `tasks=`) reruns part of the experiment; the summary, the
    scorecard and the reports still cover every pair the experiment has scored, and say
    which this run scored. The terminal verdict counts this run's pairs only."""
    import pandas as pd

    corpus = tmp_path / "corpus"
    corpus.mkdir()
    for task in ("01-divider", "02-rc-lowpass"):
        (corpus / task).symlink_to(TASKS / task)
    project.configure({"reference": {"kind": "reference"}, "again": {"kind": "reference"}},
                      tasks_dir=corpus).snakemake()
    full = project.summary()
    assert len(full) == 4 and full["this_run"].all()
    narrowed = project.snakemake("--config", "models=again", "tasks=01-divider")
    summary = project.summary()
    assert len(summary) == 4
    assert [tuple(r) for r in summary[summary["this_run"]][["model", "task"]].values] == [
        ("again", "01-divider")]
    pd.testing.assert_frame_equal(summary.drop(columns="this_run"),
                                  full.drop(columns="this_run"))
    card = json.loads((project.root / "results" / "scorecard.json").read_text())
    assert card["this_run"] == {"pairs": 1, "of": 4} and card["models"]["reference"]["pairs"] == 2
    report = (project.root / "results" / "report.md").read_text()
    assert "This run scored 1 of the experiment's 4 pairs" in report
    table = narrowed.stdout[narrowed.stdout.rindex("model "):].splitlines()
    assert [line.split()[:3] for line in table[1:]] == [["again", "1", "1"]]
    project.snakemake()
    assert project.summary()["this_run"].all()
    assert "This run scored" not in (project.root / "results" / "report.md").read_text()


@pytest.mark.slow
def test_a_second_tasks_folder_never_overwrites_an_experiments_pairs(project, tmp_path):
    """Two corpora whose task ids match: the second is refused where the first ran (its
    pairs would overwrite the first's, and switching back would pay for them again), and
    runs as an experiment of its own."""
    for name in ("ours", "theirs"):
        (tmp_path / name).mkdir()
        (tmp_path / name / "01-divider").symlink_to(TASKS / "01-divider")
    models = {"reference": {"kind": "reference"}}
    project.configure(models, tasks_dir=tmp_path / "ours").snakemake()
    score = project.pair("reference", "01-divider") / "score.json"
    before = score.read_bytes()
    project.configure(models, tasks_dir=tmp_path / "theirs")
    refused = project.snakemake("-n", check=False)
    said = refused.stdout + refused.stderr
    assert refused.returncode != 0
    assert f"holds the runs of the tasks folder {tmp_path / 'ours'}" in said
    assert "--config experiment=NAME" in said
    project.snakemake("--config", "experiment=theirs")
    assert (project.root / "results" / "theirs" / "runs" / "reference" / "01-divider" / "1"
            / "score.json").is_file()
    assert score.read_bytes() == before
    project.configure(models, tasks_dir=tmp_path / "ours")
    back = project.snakemake("-n")
    assert "Nothing to be done" in back.stdout + back.stderr


@pytest.mark.slow
def test_an_akcli_format_task_folder_runs_unchanged(project, tmp_path):
    """akcli's own layout as akcli ships it: no numbering, no task.yaml, protocol 1
    envelopes with a target_file, parts laid out for KiCad's pin geometry (a rotated
    fuse or resistor wired straight across to a diode lying on its side)."""
    corpus = tmp_path / "agent_eval_tasks"
    shutil.copytree(REPO / "tests" / "fixtures" / "akcli_format", corpus)
    shutil.copytree(TASKS / "07-arrange-safe-blocks", corpus / "safe_repack",
                    ignore=shutil.ignore_patterns("task.yaml"))
    shutil.copytree(TASKS / "01-divider", corpus / "planned" / "not-run")
    assert sorted(p.name for p in (corpus / "safe_repack").iterdir()) == [
        "expected_nets.json", "postcheck_arrange.json", "reference_ops.json", "task.md"]
    shipped = {p.parent.name: p.read_bytes() for p in corpus.glob("*/reference_ops.json")}
    project.configure({"reference": {"kind": "reference"}}, tasks_dir=corpus).snakemake()
    summary = project.summary()
    assert list(summary["task"]) == ["gpio-status-lamp", "safe_repack", "solar-input-guard"]
    assert list(summary["outcome"]) == ["success"] * 3 and summary["passed"].all()
    # scored by akcli's own rule, nets alone: no layout criterion of ours was added
    assert [c["id"] for c in project.score("reference", "solar-input-guard")["criteria"]] == [
        "nets"]
    applied = json.loads((project.pair("reference", "safe_repack") / "apply.json").read_text())
    assert applied["postchecks"][0]["kind"] == "arrange" and applied["postchecks"][0]["passed"]
    # the protocol 1 answer was restamped for akcli in the pair, never in the corpus
    answer = json.loads((project.pair("reference", "gpio-status-lamp") / "ops.json").read_text())
    assert answer["protocol_version"] == 2
    assert {p.parent.name: p.read_bytes() for p in corpus.glob("*/reference_ops.json")} == shipped
    assert b'"protocol_version": 1' in shipped["gpio-status-lamp"]


@pytest.mark.slow
def test_worker_and_own_process_give_identical_results(project, tmp_path):
    from conftest import Project

    tasks = ["06-grouped-sensor-frontend", "11-opamp-buffer-unused-unit"]
    project.configure({"reference": {"kind": "reference"}}, tasks=tasks).snakemake()
    local = Project(tmp_path / "local").configure({"reference": {"kind": "reference"}},
                                                 tasks=tasks)
    local.snakemake(env={"WIREBENCH_WORKER": "0"})
    for task in tasks:
        for name in ("validate.json", "apply.json", "nets.json", "board.kicad_sch"):
            a = (project.pair("reference", task) / name).read_bytes()
            b = (local.pair("reference", task) / name).read_bytes()
            assert a == b, (task, name)
        # score.json differs only in the agent's wall time (and so agent.json's hash).
        a, b = project.score("reference", task), local.score("reference", task)
        for doc in (a, b):
            doc["agent"].pop("wall_s")
            doc["inputs"].pop("agent")
        assert a == b, task

    # With the worker up, no step job starts Python: its shell hands the step over TCP.
    # A Python client run with PYTHONPROFILEIMPORTTIME writes its imports to the step's
    # log, so every log of the steps rerun here must be free of them. (A prefix computed
    # before the workflow's last change to the jobs' environment once named another worker
    # than the one the jobs started, and every step went through Python.)
    project.snakemake("--forcerun", "validate", env={"PYTHONPROFILEIMPORTTIME": "1"})
    logs = [p for p in (project.root / "results" / "logs" / "batches" / "reference").glob(
        "*/*.log") if p.stem in ("validate", "apply", "nets", "score")]
    assert len(logs) == 4  # both pairs in one batch
    assert [p for p in logs if "import time:" in p.read_text()] == []
    local.snakemake("--forcerun", "validate",
                    env={"PYTHONPROFILEIMPORTTIME": "1", "WIREBENCH_WORKER": "0"})
    assert "import time:" in (local.root / "results" / "logs" / "batches" / "reference" /
                              "0001" / "validate.log").read_text(), "the check can see a client"


@pytest.mark.slow
def test_an_unknown_model_kind_stops_the_run_naming_the_key(project):
    project.configure({"m1": {"kind": "telepathy"}})
    proc = project.snakemake("-n", check=False)
    assert proc.returncode != 0
    assert "config key models.m1.kind: 'telepathy' is not one of" in proc.stdout + proc.stderr


@pytest.mark.slow
def test_a_missing_tasks_dir_stops_the_run(project, tmp_path):
    project.configure({"reference": {"kind": "reference"}}, tasks_dir=tmp_path / "nope")
    proc = project.snakemake("-n", check=False)
    assert proc.returncode != 0
    assert f"tasks dir not found: {tmp_path / 'nope'}" in proc.stdout + proc.stderr


@pytest.mark.slow
def test_a_missing_symbol_library_stops_the_run_naming_it(project, tmp_path):
    from conftest import SYMBOLS

    project.configure({"reference": {"kind": "reference"}},
                      symbols=[*SYMBOLS, str(tmp_path / "Gone.kicad_sym")])
    proc = project.snakemake("-n", check=False)
    assert proc.returncode != 0
    assert (f"config key symbols: cannot read {tmp_path / 'Gone.kicad_sym'}: "
            "No such file or directory") in proc.stdout + proc.stderr


@pytest.mark.slow
def test_a_bad_value_and_an_unknown_key_are_named(project):
    project.configure({"reference": {"kind": "reference"}}, samples=0, sampels=3)
    proc = project.snakemake("-n", check=False)
    assert proc.returncode != 0
    out = proc.stdout + proc.stderr
    assert "config key samples: 0 is less than the minimum of 1" in out
    assert "'sampels' was unexpected" in out


@pytest.mark.slow
def test_an_unknown_model_on_the_command_line_is_named(project):
    project.configure({"reference": {"kind": "reference"}})
    proc = project.snakemake("-n", "--config", "models=gpt-9", check=False)
    assert proc.returncode != 0
    assert "no model named 'gpt-9'" in proc.stdout + proc.stderr


@pytest.mark.slow
def test_lint_is_clean():
    import subprocess

    proc = subprocess.run(["snakemake", "--lint"], cwd=REPO, capture_output=True, text=True,
                          timeout=120)
    assert "Congratulations, your workflow is in a good condition!" in proc.stdout + proc.stderr


@pytest.mark.slow
def test_steps_run_the_wirebench_that_the_workflow_imported(project, tmp_path):
    # A different `wirebench` first on PATH, as a stale install elsewhere would be: the
    # rules must still run the package the workflow imported (and fingerprinted).
    other = tmp_path / "bin"
    other.mkdir()
    (other / "wirebench").write_text("#!/bin/sh\necho 'not this wirebench' >&2\nexit 3\n")
    (other / "wirebench").chmod(0o755)
    project.configure({"reference": {"kind": "reference"}}, tasks=["01-divider"])
    project.snakemake(env={"PATH": f"{other}:{os.environ['PATH']}"})
    assert project.score("reference", "01-divider")["passed"] is True
    assert (project.root / "results" / "report.html").is_file()


@pytest.mark.slow
def test_editing_an_agents_own_script_reruns_only_that_model(project):
    """`files:` puts an agent's script into its model's fingerprint, and the sandbox shows
    it under PROJECT_DIR: editing mine.py reruns `mine`'s pairs and nothing of `other`."""
    from test_reruns import job_counts

    agents = project.root / "agents"
    agents.mkdir(parents=True)
    script = ("import os\nopen(os.environ['OPS_OUT'], 'w').write("
              "'{\"protocol_version\": 2, \"target_format\": \"kicad\", \"ops\": []}')\n")
    for name in ("mine", "other"):
        (agents / f"{name}.py").write_text(script)
    models = {name: {"kind": "command", "files": [f"agents/{name}.py"], "retries": 0,
                     "command": f"{sys.executable} \"$PROJECT_DIR/agents/{name}.py\""}
              for name in ("mine", "other")}
    tasks = ["01-divider", "02-rc-lowpass"]
    # A batch of one pair: the counts below are pairs. No infra error: the scripts ran.
    project.configure(models, tasks=tasks, batch=1).snakemake()
    assert set(project.summary()["outcome"]) == {"success"}  # an empty sheet, drawn
    (agents / "mine.py").write_text(script + "# tuned\n")
    counts = job_counts(project.snakemake("-n"))
    assert counts["generate"] == len(tasks)
    assert counts["score"] == len(tasks)
    (agents / "mine.py").write_text(script)
    assert job_counts(project.snakemake("-n")) == {}


@pytest.mark.slow
def test_retry_infra_reruns_the_infra_pairs_and_nothing_else(project, tmp_path):
    """An agent that was down: `wirebench retry-infra` forces exactly its infra pairs
    (and what follows from them); the reference's pairs are not touched."""
    from test_reruns import job_counts

    up, answers = tmp_path / "up", tmp_path / "answers"
    up.mkdir()
    answers.mkdir()
    tasks = ["01-divider", "02-rc-lowpass"]
    for t in tasks:
        shutil.copy(TASKS / t / "reference_ops.json", answers / f"{t}.json")
    models = {"reference": {"kind": "reference"},
              "flaky": {"kind": "command", "retries": 0, "expose": [str(up), str(answers)],
                        "command": f"test -e {up}/flag || exit 75; "
                                   f"cp {answers}/$TASK_ID.json \"$OPS_OUT\""}}
    project.configure(models, tasks=tasks, max_infra_rate=1.0, batch=1).snakemake()
    df = project.summary().set_index("model")
    assert list(df.loc["flaky", "outcome"]) == ["infra_error"] * 2
    (up / "flag").touch()  # the agent is back
    proc = subprocess.run(
        ["wirebench", "retry-infra", "--", "-s", str(REPO / "Snakefile"), "-d",
         str(project.root), "--cores", "2"], cwd=project.root, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "2 pair(s) whose last answer was an infra error" in proc.stdout
    counts = job_counts(proc)
    assert (counts["generate"], counts["validate"], counts["score"]) == (2, 2, 2)
    assert set(project.summary().set_index("model").loc["flaky", "outcome"]) == {"success"}
    again = subprocess.run(["wirebench", "retry-infra"], cwd=project.root,
                           capture_output=True, text=True)
    assert again.returncode == 0 and "0 pair(s)" in again.stdout
