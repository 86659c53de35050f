"""How the workflow tunes Snakemake's own process: the scheduler's deferred job list."""

from __future__ import annotations

from types import SimpleNamespace

import pytest
from snakemake.scheduling.job_scheduler import JobScheduler

from wirebench.runtime.snakemake_process import Deferred, defer_remaining_jobs


def _scheduler(jobs, running, finished, failed, reads):
    """A JobScheduler, not started, with just what its `remaining_jobs` reads."""

    def needrun_jobs():
        reads.append(1)
        return iter(jobs)

    scheduler = object.__new__(JobScheduler)
    scheduler.workflow = SimpleNamespace(dag=SimpleNamespace(
        needrun_jobs=needrun_jobs, finished=lambda job: job in finished))
    scheduler.running, scheduler.failed = set(running), set(failed)
    return scheduler


def test_snakemakes_remaining_jobs_are_built_only_when_read_and_are_the_same(monkeypatch):
    original = JobScheduler.__dict__["remaining_jobs"]
    monkeypatch.setattr(JobScheduler, "remaining_jobs", original)  # restored afterwards
    jobs = [f"job{i}" for i in range(10)]
    reads: list = []
    scheduler = _scheduler(jobs, {"job1"}, {"job2", "job3"}, {"job4"}, reads)
    expected = original.fget(scheduler)
    assert expected == ["job0", "job5", "job6", "job7", "job8", "job9"]
    reads.clear()

    assert defer_remaining_jobs() is True
    assert defer_remaining_jobs() is True  # a second include patches nothing twice
    remaining = scheduler.remaining_jobs
    assert isinstance(remaining, Deferred) and reads == [], "built before anyone read it"
    # What the ILP selector and the stall diagnostic do with it: the same jobs, once.
    assert bool(remaining) and len(remaining) == 6 and list(remaining) == expected
    assert remaining[0] == "job0" and "job9" in remaining and reads == [1]
    # Nothing left: falsy, as the empty list was (the scheduler's stall check).
    assert not _scheduler(["a"], set(), {"a"}, set(), []).remaining_jobs


def test_a_snakemake_without_the_property_is_left_alone(monkeypatch):
    monkeypatch.setattr(JobScheduler, "remaining_jobs", ["not", "a", "property"])
    assert defer_remaining_jobs() is False
    assert JobScheduler.remaining_jobs == ["not", "a", "property"]


SNAKEFILE = """
from wirebench.runtime import snakemake_process as tuning

tuning.defer_remaining_jobs()
BUILT = []
_build = tuning.Deferred._list


def _counted(self):
    if self._items is None:
        BUILT.append(1)
    return _build(self)


tuning.Deferred._list = _counted


rule all:
    input: expand("out/{i}.txt", i=range(12))


rule one:
    output: "out/{i}.txt"
    shell: "echo {wildcards.i} > {output}"


onsuccess:
    print(f"remaining_jobs built {len(BUILT)} times")
"""


def _built(tmp_path, scheduler: str) -> int:
    import re
    import subprocess

    tmp_path.mkdir()
    (tmp_path / "Snakefile").write_text(SNAKEFILE)
    proc = subprocess.run(["snakemake", "--cores", "2", "--scheduler", scheduler],
                          cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert len(list((tmp_path / "out").glob("*.txt"))) == 12
    return int(re.search(r"remaining_jobs built (\d+) times", proc.stdout + proc.stderr)[1])


@pytest.mark.slow
def test_a_real_run_builds_the_list_only_for_a_selector_that_reads_it(tmp_path):
    """Greedy (our profile's) never reads it: at most the end-of-run stall check does.
    The ILP selector reads it every round, and still runs every job."""
    assert _built(tmp_path / "greedy", "greedy") <= 1
    assert _built(tmp_path / "ilp", "ilp") >= 2


def test_exact_producers_answer_as_snakemakes_own_regular_expressions(tmp_path, monkeypatch):
    """Every rule of the real workflow (batch rules without wildcards, wildcard rules),
    asked about every file they make and some they do not: the same answers as
    Snakemake's own `is_producer`."""
    from conftest import REPO, Project
    from snakemake.api import SnakemakeApi
    from snakemake.rules import Rule
    from snakemake.settings.types import ConfigSettings, ResourceSettings

    from wirebench.runtime.snakemake_process import exact_producers

    original = Rule.__dict__["is_producer"]
    monkeypatch.setattr(Rule, "is_producer", original)  # restored afterwards
    project = Project(tmp_path / "wb").configure(
        {"reference": {"kind": "reference"},
         "base": {"kind": "command", "command": "wirebench-baseline"}},
        tasks=["01-divider", "02-rc-lowpass", "03-pi-filter"], batch=2)
    monkeypatch.chdir(project.root)
    with SnakemakeApi() as api:
        workflow = api.workflow(
            snakefile=REPO / "Snakefile", workdir=project.root,
            resource_settings=ResourceSettings(cores=1),
            config_settings=ConfigSettings(configfiles=[project.config_path]))._workflow
        rules = list(workflow.rules)
        made = sorted({str(p.file) for r in rules if not r.has_wildcards() for p in r.products()})
        asked = made + [f + "x" for f in made] + [f[:-1] for f in made] + [
            "results/runs/base/01-divider/1/ops.json", "results/summary.csv", "elsewhere"]
        expected = {(r.name, f): original(r, f) for r in rules for f in asked}
        exact_producers()
        exact_producers()  # a second include patches nothing twice
        got = {(r.name, f): r.is_producer(f) for r in rules for f in asked}
    assert sum(expected.values()) > len(made) > 50
    assert got == expected


CHECKSUM_SNAKEFILE = """
from snakemake.io import _IOFile

from wirebench.runtime import snakemake_process as tuning

HASHED = []
_checksum = _IOFile.checksum


async def _counted(self, *args, **kwargs):
    HASHED.append(str(self))
    return await _checksum(self, *args, **kwargs)


_IOFile.checksum = _counted
if config.get("once"):  # the memo goes around the counter: it counts real hashing
    tuning.checksums_once_per_job()


rule all:
    input: "out/b.txt"


rule one:
    input: "in/x.txt", "in/y.txt"
    output: [f"out/a{i}.txt" for i in range(6)]
    shell: "for f in {output}; do echo a > $f; done"


rule two:
    input: "out/a0.txt"
    output: "out/b.txt"
    shell: "cat {input} > {output}"


onsuccess:
    print(f"hashed {len(HASHED)} times")
"""


def _records(root, once: bool) -> tuple[dict, int]:
    import json
    import re
    import subprocess

    root.mkdir()
    (root / "Snakefile").write_text(CHECKSUM_SNAKEFILE)
    (root / "in").mkdir()
    (root / "in" / "x.txt").write_text("x")
    (root / "in" / "y.txt").write_text("y" * 5000)
    proc = subprocess.run(["snakemake", "--cores", "1", "--config", f"once={once}"],
                          cwd=root, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    records: dict = {}
    for path in (root / ".snakemake" / "metadata").iterdir():
        doc = json.loads(path.read_text())
        key = (doc["rule"], tuple(sorted(doc["input_checksums"].items())))
        records[key] = records.get(key, 0) + 1
    return records, int(re.search(r"hashed (\d+) times", proc.stdout + proc.stderr)[1])


@pytest.mark.slow
def test_each_input_of_a_finished_job_is_hashed_once_for_the_same_records(tmp_path):
    plain, plain_hashed = _records(tmp_path / "plain", False)
    once, once_hashed = _records(tmp_path / "once", True)
    assert once == plain and plain[next(k for k in plain if k[0] == "one")] == 6
    assert plain_hashed == 6 * 2 + 1 and once_hashed == 2 + 1


MARKER_SNAKEFILE = r"""
from wirebench.runtime import snakemake_process as tuning

if config.get("one"):
    tuning.one_marker_per_job({"batch": "record"})


rule batch:
    output: a="out/a.txt", b="out/b.txt", record="out/record.txt"
    shell:
        "echo run >> runs.txt; for f in {output}; do echo x > $f; done; "
        # The first run dies with every output written, its job still marked incomplete.
        # Snakemake marks a local job just after launching it, so the kill waits for the
        # first marker (and then for the rest of that one synchronous write).
        "if [ ! -e killed ]; then touch killed; "
        "for i in $(seq 300); do [ -n \"$(find .snakemake/incomplete -type f)\" ] && break; "
        "sleep 0.1; done; sleep 0.5; kill -9 $PPID; sleep 2; fi"
"""


def _marked_run(root, one: bool) -> tuple[int, int, list]:
    import subprocess

    root.mkdir()
    (root / "Snakefile").write_text(MARKER_SNAKEFILE)
    run = ["snakemake", "--cores", "1", "--rerun-incomplete", "--config", f"one={one}"]
    first = subprocess.run(run, cwd=root, capture_output=True, text=True, timeout=300)
    assert first.returncode != 0 and (root / "killed").exists(), first.stderr[-2000:]
    seen = sum(p.is_file() for p in (root / ".snakemake" / "incomplete").rglob("*"))
    subprocess.run(["snakemake", "--unlock"], cwd=root, capture_output=True, timeout=300)
    second = subprocess.run(run, cwd=root, capture_output=True, text=True, timeout=300)
    assert second.returncode == 0, second.stderr[-2000:]
    runs = len((root / "runs.txt").read_text().split())
    left = [p for p in (root / ".snakemake" / "incomplete").rglob("*") if p.is_file()]
    return seen, runs, left


@pytest.mark.slow
def test_a_batch_job_is_marked_incomplete_by_its_record_alone_and_still_redone(tmp_path):
    # Snakemake's own way: a marker per output while the job runs.
    assert _marked_run(tmp_path / "plain", False) == (3, 2, [])
    # One marker, on the record: after a kill with every output written, the job is
    # still found incomplete and run again, and no marker is left behind.
    assert _marked_run(tmp_path / "one", True) == (1, 2, [])
