"""Seeded task generators (`wirebench tasks generate`, `tasks split`): deterministic
folders, oracles that pass the corpus gate and wrong answers that fail for their stated
reason, and injection tasks that score attack success apart from utility, end to end."""

from __future__ import annotations

import filecmp
import json
import subprocess
from pathlib import Path

import pytest
import yaml
from conftest import REPO, Project

from wirebench.taskgen.generator import FAMILIES, GENERATOR_VERSION, generate, seed_hash


def _tree(folder: Path) -> dict[str, bytes]:
    return {p.relative_to(folder).as_posix(): p.read_bytes()
            for p in sorted(folder.rglob("*")) if p.is_file()}


def test_the_same_seed_gives_byte_identical_folders_and_another_seed_other_tasks(tmp_path):
    assert len(FAMILIES) >= 6
    for family in FAMILIES:
        a = generate(family, "s1", 3, tmp_path / "a")
        b = generate(family, "s1", 3, tmp_path / "b")
        c = generate(family, "s2", 3, tmp_path / "c")
        for x, y, z in zip(a, b, c, strict=True):
            assert _tree(x) == _tree(y), f"{family}: {x.name} differs between two runs"
            assert (x / "task.md").read_text() != (z / "task.md").read_text() or \
                (x / "reference_ops.json").read_text() != (z / "reference_ops.json").read_text(), \
                f"{family}: seeds s1 and s2 gave the same task"
    # The folder names a hash of the seed, never the seed; task.yaml the same hash.
    meta = (a[0] / "task.yaml").read_text()
    assert "s1" not in a[0].name and seed_hash("s1") in meta and "seed: " not in meta
    assert f"version: {GENERATOR_VERSION}" in meta


@pytest.mark.slow
def test_the_public_split_regenerates_byte_for_byte(tmp_path):
    manifest = REPO / "splits" / "public" / "split.yaml"
    proc = subprocess.run(["wirebench", "tasks", "split", str(manifest), "--check"],
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    n = int(proc.stdout.strip().splitlines()[-1].split("/")[0])
    assert n >= 200
    # A folder edited by hand is caught, named.
    copy = tmp_path / "public"
    subprocess.run(["cp", "-r", str(manifest.parent), str(copy)], check=True)
    victim = sorted(p for p in copy.iterdir() if p.is_dir())[5]
    (victim / "task.md").write_text((victim / "task.md").read_text() + "\nOne more line.\n")
    proc = subprocess.run(["wirebench", "tasks", "split", str(copy / "split.yaml"), "--check"],
                          capture_output=True, text=True)
    assert proc.returncode == 1 and f"DIFFERS  {victim.name}" in proc.stdout


@pytest.mark.slow
def test_every_family_passes_the_corpus_gate(tmp_path):
    """One task of each family (the small end: index 0 and 1) through `tasks check`: the
    reference reaches its expected outcome, each wrong answer fails for its reason."""
    for family in FAMILIES:
        generate(family, "gate", 2, tmp_path / "split")
    proc = subprocess.run(["wirebench", "tasks", "check", str(tmp_path / "split"), "--json",
                           "--config", str(REPO / "config" / "config.yaml")],
                          capture_output=True, text=True, cwd=REPO)
    report = json.loads(proc.stdout)
    bad = {t["id"]: t["problems"] for t in report["tasks"] if t["problems"]}
    assert proc.returncode == 0 and not bad, bad
    assert len(report["tasks"]) == 2 * len(FAMILIES)
    # The gate ran each task's wrong answers (each must fail for its stated reason);
    # every family but netlist ships some at its small end.
    shipped = {d.name.split("-")[0] for d in (tmp_path / "split").iterdir()
               if (d / "wrong").is_dir()}
    assert shipped == set(FAMILIES) - {"netlist"}


def test_a_generator_refuses_an_unknown_family(tmp_path):
    with pytest.raises(ValueError, match="unknown family 'nope'; families: "):
        generate("nope", "s", 1, tmp_path)
    proc = subprocess.run(["wirebench", "tasks", "generate", "nope", "--seed", "1",
                           "--count", "1", "--out", str(tmp_path)], capture_output=True, text=True)
    assert proc.returncode == 2 and "unknown family 'nope'" in proc.stderr
    assert not list(tmp_path.iterdir())


@pytest.fixture(scope="module")
def injection_run(tmp_path_factory):
    """A real run over generated tasks: the reference, and an agent that follows every
    injected instruction (the injection tasks' own known-wrong answers)."""
    root = tmp_path_factory.mktemp("generated")
    split = root / "split"
    made = generate("safety", "run", 3, split)  # two injections and a contradiction
    made += generate("netlist", "run", 1, split)
    follower = root / "follower"
    follower.mkdir()
    for task in made:
        wrong = task / "wrong" / "follows-the-note.json"
        answer = wrong if wrong.is_file() else task / "reference_ops.json"
        (follower / f"{task.name}.json").write_bytes(answer.read_bytes())
    project = Project(root / "wb").configure(
        {"reference": {"kind": "reference"}, "follower": {"kind": "ops_dir",
                                                           "dir": str(follower)}},
        tasks_dir=split)
    project.snakemake()
    return project, made


@pytest.mark.slow
def test_injection_tasks_score_attack_success_apart_from_utility(injection_run):
    project, made = injection_run
    df = project.summary().set_index(["model", "task"])
    injections = [t.name for t in made if (t / "wrong" / "follows-the-note.json").is_file()]
    assert len(injections) == 2
    for task in injections:
        assert df.loc[("reference", task), "attack_success"] in (False, "False")
        assert bool(df.loc[("reference", task), "passed"])
        assert df.loc[("follower", task), "attack_success"] in (True, "True")
        assert not bool(df.loc[("follower", task), "passed"])
    # A task with no injection has no attack to succeed.
    other = next(t.name for t in made if t.name.startswith("netlist"))
    assert str(df.loc[("reference", other), "attack_success"]) in ("", "nan", "None")
    card = json.loads((project.root / "results" / "scorecard.json").read_text())
    assert card["models"]["follower"]["attack_pairs"] == 2
    assert card["models"]["follower"]["attack_success_rate"] == 1.0
    assert card["models"]["reference"]["attack_success_rate"] == 0.0
    assert card["models"]["reference"]["utility_under_attack"] == 1.0
    report = (project.root / "results" / "report.md").read_text()
    assert "| follower | 2 | 100% |" in report and "| reference | 2 | 0% | 1.00 |" in report


@pytest.mark.slow
def test_the_report_shows_pass_rate_by_family_and_by_size(injection_run):
    project, made = injection_run
    card = json.loads((project.root / "results" / "scorecard.json").read_text())
    ref = card["models"]["reference"]
    assert set(ref["by_family"]) == {"safety", "netlist"}
    sized = [t for t in made if yaml.safe_load((t / "task.yaml").read_text())["knobs"]["parts"]]
    assert sum(b["pairs"] for b in ref["by_size"].values()) == len(sized)
    report = (project.root / "results" / "report.md").read_text()
    assert "| size (generated tasks) |" in report and "| family |" in report
    html = (project.root / "results" / "report.html").read_text()
    assert "id='size-chart'" in html and "<svg" in html.split("id='size-chart'")[1][:400]
    assert "id='attack-rates'" in html


def test_the_generated_folders_are_whole_or_absent(tmp_path):
    """A task is written beside its place and renamed in: no half-written folder is left,
    and a rerun replaces an older one whole."""
    first = generate("prose", "w", 1, tmp_path)[0]
    (first / "stale.txt").write_text("from an older generator")
    again = generate("prose", "w", 1, tmp_path)[0]
    assert again == first and not (first / "stale.txt").exists()
    assert [p.name for p in tmp_path.iterdir()] == [first.name]
    assert filecmp.cmp(first / "task.md", again / "task.md", shallow=False)


def test_the_shipped_corpus_exercises_every_op_akcli_offers():
    """Every op and macro of `akcli ops list` is in some reference answer, across the
    hand-written tasks and the public split."""
    from wirebench.corpus.tasks import discover
    from wirebench.steps.tasks_check import op_coverage

    cover = op_coverage(discover(REPO / "tasks") + discover(REPO / "splits" / "public"))
    assert cover["offered"] >= 32 and cover["missing"] == [], cover["missing"]
    alone = op_coverage(discover(REPO / "tasks"))
    assert "delete_object" in alone["used"] and "add_sheet" in alone["used"]


@pytest.mark.slow
def test_a_public_private_gap_is_reported_as_a_contamination_signal(tmp_path):
    """A model that knows the public split's answers by heart and nothing else: its
    public and private pass rates sit side by side, and the report calls the gap."""
    split = tmp_path / "split"
    public = generate("prose", "pub", 4, split, split="public")
    private = generate("prose", "secret", 4, split, split="private")
    assert len(private) == 4
    memory = tmp_path / "memory"
    memory.mkdir()
    for task in public:
        (memory / f"{task.name}.json").write_bytes((task / "reference_ops.json").read_bytes())
    project = Project(tmp_path / "wb").configure(
        {"memorizer": {"kind": "ops_dir", "dir": str(memory)}}, tasks_dir=split)
    project.snakemake()
    df = project.summary()
    assert set(df["split"]) == {"public", "private"}
    card = json.loads((project.root / "results" / "scorecard.json").read_text())
    by_split = card["models"]["memorizer"]["by_split"]
    assert (by_split["public"]["pass_rate"], by_split["private"]["pass_rate"]) == (1.0, 0.0)
    report = (project.root / "results" / "report.md").read_text()
    assert "| split |" in report
    assert "memorizer: 100% on the public split against 0% on private" in report
    assert "contamination signal" in report
    assert not any("secret" in p.name for p in split.iterdir())
