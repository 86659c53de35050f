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
    from wirebench.evidence.provenance import dist_version

    h = hashlib.sha256(f"{sys.version} {dist_version('akcli-kicad')} {TRACER}".encode())
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
    project = Project(root / "wb").configure({"reference": {"kind": "reference"}},
                                             tasks=[DESIGN, TRANSCRIPTION])
    path = os.pathsep.join(p for p in (str(tracer), os.environ.get("PYTHONPATH")) if p)
    env = {"PYTHONPATH": path, "WIREBENCH_WORKER": "0", "WB_TRACE_PACKAGE": str(PACKAGE),
           "WB_TRACE_DIR": str(trace)}
    project.snakemake(env=env)
    project.snakemake("archive", env=env)
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
def finished_run() -> dict:
    """{"reads": step -> the package files it read, "results": a finished results
    folder (a test copies it before it changes anything)}."""
    cache = Path(tempfile.gettempdir()) / f"wirebench-test-run-{_key()}"
    if not (cache / "processes.json").is_file():
        building = Path(tempfile.mkdtemp(prefix="wirebench-test-building-"))
        kept = _traced_run(building)
        if os.environ.get("MUTANT_UNDER_TEST"):  # a run made under a mutant is no reference
            cache = kept
        else:
            with contextlib.suppress(OSError):  # another session kept one first: as good
                kept.rename(cache)
            shutil.rmtree(building, ignore_errors=True)
            _forget_old_runs(cache)
    reads: dict[str, set[str]] = {}
    for process in json.loads((cache / "processes.json").read_text()):
        step = _step_of(process["argv"], cache / "specs")
        if step is not None:
            reads.setdefault(step, set()).update(map(_relative, process["files"]))
    return {"reads": {k: sorted(v) for k, v in reads.items()},
            "results": cache / "results"}


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
    # A failed pair's cause, printed on the terminal; score.json does not hold it.
    "score": lambda f: f == "reports/verdict.py",
    **{step: lambda f: f in ("corpus/tasks.py", "runtime/landlock.py")
       for step in RUN_STEPS},  # the CLI's checks before a run-level command
}


def _edits(tmp_path: Path) -> dict[str, list[str]]:
    """file of the package -> the steps whose fingerprint an edit of it changes, in a copy
    of the package (the code under test, mutants and all)."""
    copy = tmp_path / "pkg"
    shutil.copytree(PACKAGE, copy / "wirebench", ignore=shutil.ignore_patterns("__pycache__"))
    proc = subprocess.run([sys.executable, "-c", FINGERPRINTS], capture_output=True,
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
    # Every step with a process of its own (the gate runs in Snakemake's; the reference
    # reads no prompt pack).
    assert set(finished_run["reads"]) == {"generate", "validate", "apply", "nets", "simulate",
                                          "score", "summary", "report", "manifest", "verdict",
                                          "archive"}
