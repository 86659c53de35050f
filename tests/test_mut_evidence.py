"""Evidence and reruns, each tried for real: what each step's fingerprint covers against
what the step read in a real run; a batch's record and reruns, with a real step
function and real files; the archive of a real finished run.

A real run takes most of a minute, and every mutant of evidence/fingerprint.py or
evidence/archive.py needs one (benchmarks/mutation_score.py --config evidence): the run
is made once and kept under the system's temp folder, named by a hash of everything it
depends on (the package, the workflow, the tasks, Python and akcli), so that a changed
byte anywhere makes a new one. A run made while a mutant is active is never kept.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
from conftest import REPO, Project

import wirebench
from wirebench.evidence.fingerprint import STEP_CODE

PACKAGE = Path(wirebench.__file__).parent
DESIGN, TRANSCRIPTION = "d05-npn-led-switch", "01-divider"

# Installed first on the path of every process of the traced run: it notes each file of
# the package the process opens (imports included), through an inherited descriptor, so
# that a confined child that may write nowhere else notes its reads too.
TRACER = r"""
import os, sys
_pkg, _out = os.environ.get("WB_TRACE_PACKAGE"), os.environ.get("WB_TRACE_DIR")
if _pkg and _out:
    _fd = os.open(os.path.join(_out, f"{os.getpid()}.txt"),
                  os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
    os.set_inheritable(_fd, True)
    os.write(_fd, ("argv " + "\0".join(sys.argv) + "\n").encode())
    _seen = set()

    def _hook(event, args):
        if event == "open" and isinstance(args[0], str) and args[0].startswith(_pkg) \
                and args[0] not in _seen:
            _seen.add(args[0])
            os.write(_fd, (args[0] + "\n").encode())

    sys.addaudithook(_hook)
"""
RUN_STEPS = {"summary", "report", "manifest", "verdict", "gate", "archive"}


def _key() -> str:
    """Everything a run's results and reads depend on."""
    import inspect

    from wirebench.evidence.provenance import dist_version

    # The run itself as this file makes it: another model or task is another run.
    # And where the checkout is: the reads it records are absolute paths into it.
    h = hashlib.sha256(f"{REPO} {sys.version} {dist_version('akcli-kicad')} {TRACER} "
                       f"{inspect.getsource(_traced_run)}".encode())
    for root in (PACKAGE, REPO / "workflow", REPO / "Snakefile", REPO / "tasks" / DESIGN,
                 REPO / "tasks" / TRANSCRIPTION, REPO / "symbols"):
        files = [root] if root.is_file() else sorted(
            p for p in root.rglob("*") if p.is_file() and "__pycache__" not in p.parts)
        for path in files:
            h.update(str(path.relative_to(REPO if REPO in path.parents else root.parent))
                     .encode())
            h.update(path.read_bytes())
    return h.hexdigest()[:20]


def _relative(path: str) -> str | None:
    """A file of the package by its path in it; a compiled module as its source."""
    rel = Path(path).relative_to(PACKAGE)
    if rel.parts[-2:-1] == ("__pycache__",):
        rel = rel.parent.parent / (rel.name.split(".")[0] + ".py")
    return rel.as_posix()


def _step_of(argv: list[str], specs: Path) -> str | None:
    """The fingerprinted step a process ran, from its command line (`wirebench ...`, or
    the workflow's launcher, `python -c ... step ...`)."""
    words = argv[1:] if argv[0] == "-c" or Path(argv[0]).name == "wirebench" else []
    if not words:
        return None
    if words[0] in RUN_STEPS:
        return words[0]
    if words[0] != "step" or len(words) < 2:
        return None
    if words[1] == "batch":
        spec = specs / Path(words[words.index("--spec") + 1]).name
        return json.loads(spec.read_text())["step"]
    return {"prompt": "prompt_pack"}.get(words[1], words[1])


def _traced_run(root: Path) -> Path:
    """A real run of a design and a transcription task (the reference), each process
    traced. Returns the folder that keeps what a test needs: results/, the batch specs,
    and processes.json (each process's command line and the package files it read)."""
    tracer, trace = root / "tracer", root / "trace"
    tracer.mkdir(parents=True)
    trace.mkdir()
    (tracer / "sitecustomize.py").write_text(TRACER)
    # The baseline reads a prompt pack, so that the prompt step runs too.
    project = Project(root / "wb").configure(
        {"reference": {"kind": "reference"},
         "base": {"kind": "command", "command": "wirebench-baseline", "timeout": 60,
                  "skills": str(REPO / "skills")}}, tasks=[DESIGN, TRANSCRIPTION])
    path = os.pathsep.join(p for p in (str(tracer), os.environ.get("PYTHONPATH")) if p)
    env = {"PYTHONPATH": path, "WIREBENCH_WORKER": "0", "WB_TRACE_PACKAGE": str(PACKAGE),
           "WB_TRACE_DIR": str(trace)}
    project.snakemake(env=env)
    project.snakemake("archive", env=env)
    # The report again, now that there is an archive: it draws the history too.
    project.snakemake("--forcerun", "report", env=env)
    kept = root / "kept"
    shutil.copytree(project.root / "results", kept / "results", symlinks=True)
    shutil.copytree(project.root / ".snakemake" / "wirebench" / "batches", kept / "specs")
    processes = []
    for log in sorted(trace.glob("*.txt")):
        lines = log.read_text().splitlines()
        if lines and lines[0].startswith("argv "):
            processes.append({"argv": lines[0][len("argv "):].split("\0"),
                              "files": lines[1:]})
    (kept / "processes.json").write_text(json.dumps(processes))
    return kept


def _forget_old_runs(current: Path) -> None:
    """Runs kept for code that has changed since, untouched for a day: nobody needs them."""
    import time

    for old in current.parent.glob("wirebench-test-run-*"):
        if old != current and time.time() - old.stat().st_mtime > 86400:
            shutil.rmtree(old, ignore_errors=True)


@pytest.fixture(scope="module")
def finished_run():
    """{"reads": step -> the package files it read, "results": a finished results
    folder (a test copies it before it changes anything)}."""
    cache = Path(tempfile.gettempdir()) / f"wirebench-test-run-{_key()}"
    building = None
    if not (cache / "processes.json").is_file():
        building = Path(tempfile.mkdtemp(prefix="wirebench-test-building-"))
        kept = _traced_run(building)
        if os.environ.get("MUTANT_UNDER_TEST"):  # a run made under a mutant is no reference
            cache = kept
        else:
            with contextlib.suppress(OSError):  # another session kept one first: as good
                kept.rename(cache)
            shutil.rmtree(building, ignore_errors=True)
            building = None
            _forget_old_runs(cache)
    reads: dict[str, set[str]] = {}
    for process in json.loads((cache / "processes.json").read_text()):
        step = _step_of(process["argv"], cache / "specs")
        if step is not None:
            reads.setdefault(step, set()).update(map(_relative, process["files"]))
    yield {"reads": {k: sorted(v) for k, v in reads.items()}, "results": cache / "results"}
    if building is not None:
        shutil.rmtree(building, ignore_errors=True)


# --- fingerprints ---------------------------------------------------------------------------

FINGERPRINTS = r"""
import json, sys
from pathlib import Path
from wirebench.evidence import fingerprint as fp

package = Path(fp.__file__).resolve().parents[1]
steps = sorted(fp.STEP_CODE)
before = {s: fp.fingerprint(s) for s in steps}
moved = {}
for path in sorted(p for p in package.rglob("*") if p.is_file() and
                   "__pycache__" not in p.parts):
    original = path.read_bytes()
    path.write_bytes(original + b"\n")
    fp.fingerprint.cache_clear()
    moved[path.relative_to(package).as_posix()] = [s for s in steps if fp.fingerprint(s)
                                                   != before[s]]
    path.write_bytes(original)
    fp.fingerprint.cache_clear()
# An akcli upgrade: another version of akcli-kicad's metadata first on the path.
from wirebench.evidence import provenance

upgrade = Path(sys.argv[1])
(upgrade / "akcli_kicad-99.0.0.dist-info").mkdir(parents=True)
(upgrade / "akcli_kicad-99.0.0.dist-info" / "METADATA").write_text(
    "Metadata-Version: 2.1\nName: akcli-kicad\nVersion: 99.0.0\n")
sys.path.insert(0, str(upgrade))
provenance.dist_version.cache_clear()
assert provenance.dist_version("akcli-kicad") == "99.0.0"
moved["akcli upgrade"] = [s for s in steps if fp.fingerprint(s) != before[s]]
print(json.dumps(moved))
"""
# What a step reads and yet must not rerun it, and why (the policy, not a second table).
# How every step is launched shapes no step's output: the CLI and its checks before any
# command (the config, the sandbox's and the tasks' loaders), the batch runner and the
# dispatcher (which pairs run, not what they give), the worker's client (the variables a
# step keeps) and private folders, and the fingerprints themselves.
PLUMBING = {"cli.py", "config.py", "steps/batch.py", "steps/dispatch.py",
            "runtime/worker_client.py", "runtime/user_folders.py", "evidence/fingerprint.py"}
NOT_A_RERUN = {
    # Only what shapes an answer reruns a paid agent call: a refactor of the task loader,
    # the file writer or the akcli backend must not rerun thousands of them.
    "generate": lambda f: not (f == "steps/generate.py" or f.startswith("agents/")),
    # apply asks only whether a task has rules: fixing a rule's logic rescores, no redraw.
    "apply": lambda f: f == "verify/design_rules.py",
    # A failed pair's cause, printed on the terminal (redacted); score.json holds neither.
    "score": lambda f: f in ("reports/verdict.py", "agents/secrets.py"),
    # A prompt pack feeds every paid agent call: akcli's pinned settings, the library cache
    # and the task schema change no pack's text, and must not rerun them (as an akcli
    # upgrade does not: `snakemake --forcerun prompt_pack` when one should).
    "prompt_pack": lambda f: f in ("data/akcli.toml", "runtime/symbol_cache.py",
                                   "schemas/task.schema.yaml"),
    # The CLI's checks before a run-level command (the report loads the tasks itself).
    **{step: (lambda f: f == "runtime/landlock.py") if step == "report" else
       (lambda f: f in ("corpus/tasks.py", "runtime/landlock.py")) for step in RUN_STEPS},
}


def _edits(tmp_path: Path) -> dict[str, list[str]]:
    """file of the package -> the steps whose fingerprint an edit of it changes, in a copy
    of the package (the code under test, mutants and all)."""
    copy = tmp_path / "pkg"
    shutil.copytree(PACKAGE, copy / "wirebench", ignore=shutil.ignore_patterns("__pycache__"))
    proc = subprocess.run([sys.executable, "-c", FINGERPRINTS, str(tmp_path / "upgrade")],
                          capture_output=True,
                          text=True, env={**os.environ, "PYTHONPATH": str(copy)}, timeout=120)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


def test_every_file_a_step_reads_is_in_its_fingerprint(finished_run, tmp_path):
    """Each step of a real run read some files of the package (its modules, the task
    schema, the part models, akcli's settings): an edit of any of them changes that
    step's fingerprint, and so reruns it, unless the policy above says why not."""
    edits = _edits(tmp_path)
    missed = {}
    for step, files in finished_run["reads"].items():
        if step not in STEP_CODE:
            continue
        skip = NOT_A_RERUN.get(step, lambda f: False)
        lost = [f for f in files if step not in edits.get(f, []) and not skip(f)
                and f not in PLUMBING and f != "." and not f.endswith("__init__.py")]
        if lost:
            missed[step] = lost
    assert missed == {}, "an edit of these would rerun nothing"
    # An akcli upgrade reruns what akcli computes, never a paid agent call.
    assert sorted(edits["akcli upgrade"]) == ["apply", "nets", "real_tier", "simulate",
                                              "validate"]
    # Every step with a process of its own (the gate runs in Snakemake's; the reference
    # reads no prompt pack).
    assert set(finished_run["reads"]) == {"prompt_pack", "generate", "validate", "apply",
                                          "nets", "simulate", "score", "summary", "report",
                                          "manifest", "verdict", "archive"}


# --- the archive of a finished run ------------------------------------------------------------

@pytest.fixture
def results(finished_run, tmp_path) -> Path:
    """A copy of a real finished run's results, for a test to archive or spoil."""
    copy = tmp_path / "results"
    shutil.copytree(finished_run["results"], copy, symlinks=True)
    return copy


def _index(out: Path) -> list[dict]:
    import csv

    with open(out / "index.csv", newline="") as fh:
        return list(csv.DictReader(fh))


def test_an_archive_holds_the_run_its_provenance_and_a_row_of_the_index(results, tmp_path):
    import tarfile
    import time

    from wirebench.evidence.archive import INDEX_COLUMNS, create
    from wirebench.evidence.files import sha256_file
    from wirebench.evidence.provenance import dist_version

    out = tmp_path / "archive"
    day = time.strftime("%Y-%m-%d", time.gmtime())
    made = create(results, out)
    run_id = f"{day}-{sha256_file(results / 'manifest.json')[:10]}"
    assert made == {"run_id": run_id, "archive": str(out / f"{run_id}.tar.gz")}
    manifest = json.loads((results / "manifest.json").read_text())
    with tarfile.open(made["archive"]) as tar:
        names = set(tar.getnames())
        provenance = json.load(tar.extractfile(f"{run_id}/provenance.json"))
        kept = {a["path"]: tar.extractfile(f"{run_id}/{a['path']}").read()
                for a in manifest["artifacts"]}
    want = {f"{run_id}/{a['path']}" for a in manifest["artifacts"]} | {
        f"{run_id}/{n}" for n in ("summary.csv", "scorecard.json", "report.md",
                                  "manifest.json", "provenance.json")}
    assert names == want
    assert all(kept[p] == (results / p).read_bytes() for p in kept), "the run's own bytes"
    card = json.loads((results / "scorecard.json").read_text())
    assert provenance["schema"] == "wirebench.provenance/1" and provenance["run_id"] == run_id
    assert provenance["date"].startswith(day) and provenance["date"].endswith("Z")
    assert provenance["versions"]["akcli"] == dist_version("akcli-kicad")
    assert (provenance["corpus_sha256"], provenance["config_sha256"]) == (
        card["corpus_sha256"], card["config_sha256"])
    assert provenance["config"] == (results / "config.json").read_text()
    assert set(provenance["git"]) >= {"commit", "dirty"}
    (row,) = _index(out)
    assert list(row) == INDEX_COLUMNS
    assert row["run_id"] == run_id and row["archive"] == f"{run_id}.tar.gz"
    assert (row["models"], row["tasks"], row["samples"]) == ("base;reference", "2", "1")
    assert row["pass_rates"] == ";".join(f"{m}={card['models'][m]['pass_rate']}"
                                         for m in ("base", "reference"))
    assert "reference=1.0" in row["pass_rates"]
    assert row["akcli"] == ";".join(card["versions"]["akcli"])
    assert row["wirebench"] == provenance["versions"]["wirebench"]
    assert row["date"] == provenance["date"]
    assert row["git_commit"] == (provenance["git"]["commit"] or "")
    dirty = provenance["git"]["dirty"]  # None outside a git checkout: an empty cell
    assert row["git_dirty"] == ("" if dirty is None else str(dirty))


def test_archiving_the_same_run_twice_keeps_one_archive_and_one_row(results, tmp_path):
    from wirebench.evidence.archive import create
    from wirebench.evidence.manifest import write

    out = tmp_path / "archive"
    first = create(results, out)
    before = Path(first["archive"]).read_bytes()
    again = create(results, out)
    assert again == {**first, "unchanged": True}
    assert Path(first["archive"]).read_bytes() == before and len(_index(out)) == 1
    # A changed run (its summary rewritten, the manifest made again) is a second point.
    summary = results / "summary.csv"
    summary.write_text(summary.read_text() + "\n")
    write(results, results / "manifest.json")
    second = create(results, out)
    assert second["run_id"] != first["run_id"] and "unchanged" not in second
    assert [r["run_id"] for r in _index(out)] == [first["run_id"], second["run_id"]]
    # A row whose tarball is gone does not stand for the run: it is made again, one row.
    Path(second["archive"]).unlink()
    third = create(results, out)
    assert third["run_id"] == second["run_id"] and "unchanged" not in third
    assert [r["run_id"] for r in _index(out)] == [first["run_id"], second["run_id"]]


def test_an_unfinished_or_changed_run_is_refused_by_name(results, tmp_path):
    from wirebench.evidence.archive import create

    out = tmp_path / "archive"
    for name in ("summary.csv", "scorecard.json"):
        (results / name).write_text((results / name).read_text() + " ")
    (results / "runs" / "reference" / "01-divider" / "1" / "nets.json").unlink()
    with pytest.raises(ValueError) as refused:
        create(results, out)
    lines = str(refused.value).splitlines()
    assert lines[0] == "results do not match their manifest; refusing to archive:"
    assert set(lines[1:]) == {
        "  changed: summary.csv (sha256 differs from the manifest)",
        "  changed: scorecard.json (sha256 differs from the manifest)",
        "  missing: runs/reference/01-divider/1/nets.json"}
    (results / "manifest.json").unlink()
    with pytest.raises(ValueError, match="no manifest.json: the run has not finished "
                                         r"\(run snakemake first\)"):
        create(results, out)
    assert not out.exists()


def test_a_changed_run_lists_at_most_ten_of_its_problems(results, tmp_path):
    from wirebench.evidence.archive import create

    runs = sorted((results / "runs").rglob("*.json"))
    assert len(runs) > 10
    for path in runs:
        path.write_text(path.read_text() + " ")
    with pytest.raises(ValueError) as refused:
        create(results, tmp_path / "archive")
    assert len(str(refused.value).splitlines()) == 11


def test_the_config_archived_is_the_one_the_run_recorded(results, tmp_path):
    """results/config.json, whatever config the caller names; for results from before a
    run wrote one, the caller's; with neither, a refusal naming the run."""
    from wirebench.evidence.archive import run_config

    other = tmp_path / "config.yaml"
    other.write_text("samples: 7\n")
    recorded = (results / "config.json").read_text()
    assert run_config(results, other) == (recorded, json.loads(recorded))
    (results / "config.json").unlink()
    assert run_config(results, other) == ("samples: 7\n", {"samples": 7})
    empty = tmp_path / "empty.yaml"
    empty.write_text("")
    assert run_config(results, empty) == ("", {})
    with pytest.raises(ValueError, match=r"no config.json: the run has not finished"):
        run_config(results)


def test_an_archive_unpacks_to_its_run_and_a_bad_one_is_named(results, tmp_path):
    import io
    import tarfile

    from wirebench.evidence.archive import BadArchive, create, unpack

    made = create(results, tmp_path / "archive")
    folder = unpack(Path(made["archive"]), tmp_path / "into")
    assert folder == tmp_path / "into" / made["run_id"]
    assert (folder / "summary.csv").read_bytes() == (results / "summary.csv").read_bytes()

    def tarball(name: str, members: dict) -> Path:
        path = tmp_path / name
        with tarfile.open(path, "w:gz") as tar:
            for arcname, data in members.items():
                info = tarfile.TarInfo(arcname)
                info.size = len(data)
                tar.addfile(info, io.BytesIO(data))
        return path

    two = tarball("two.tar.gz", {"a/x": b"1", "b/y": b"2"})
    with pytest.raises(BadArchive) as bad:
        unpack(two, tmp_path / "two")
    assert str(bad.value) == (f"{two}: not an archived run (it should hold one run folder, "
                              "it holds 2)")
    out = tarball("out.tar.gz", {"run/x": b"1", "../escaped": b"2"})
    with pytest.raises(BadArchive) as bad:
        unpack(out, tmp_path / "sub" / "out")
    assert str(bad.value).startswith(f"{out}: not an archived run (")
    assert not (tmp_path / "sub" / "escaped").exists()
    junk = tmp_path / "junk.tar.gz"
    junk.write_bytes(b"not a tarball")
    with pytest.raises(BadArchive) as bad:
        unpack(junk, tmp_path / "junk")
    assert str(bad.value).startswith(f"{junk}: not an archived run (") and \
        str(bad.value).endswith(")")
    empty = tmp_path / "empty.tar.gz"
    empty.write_bytes(b"")
    with pytest.raises(BadArchive, match=r"not an archived run \(.+\)"):
        unpack(empty, tmp_path / "empty")
