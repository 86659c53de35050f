"""How the workflow tunes the Snakemake process that runs it.

Snakemake executes the Snakefile inside its own process, so the workflow can adjust that
process: how job shells start `wirebench`, how often Python's garbage collector walks the
DAG, a scheduler list built only when read, the scheduler timers left at exit, step names
on the command line for their batch rules, which rule makes a file without a regular
expression, a finished job's inputs hashed once, and one incomplete marker for a batch
job. None of it changes what a job computes, so no step's fingerprint covers this module
and editing it reruns nothing.
"""

from __future__ import annotations

import atexit
import gc
import shlex
import sys
import threading
from collections.abc import Sequence

# The longest a job shell waits for a step the worker took (a day: steps have limits of
# their own, far below it).
REPLY_SECONDS = 86400

# A young-generation collection every 10,000 new container objects instead of 700.
COLLECT_EVERY = 10_000


# The job shell's client. `read -d ''` stops at each NUL: the request's fields are the
# token, the cwd, the number of arguments and each argument after `step`; the worker
# answers with the reply token and `ready` (it took the request), and only after the go
# runs the step and sends rc, stdout and stderr. No `ready` in READY_SECONDS (every server
# busy, or held), a reply without the worker's token (not our worker), `local` (a step the
# worker must not run), or a reply cut short (a worker that died) leaves the Python client
# to run the step. The step's reply is awaited REPLY_SECONDS at most, a net under a worker
# that hangs: past it the job fails rather than run the step twice. SIGPIPE is ignored
# around the exchange: a worker that closes first must not kill the job.
WORKER_FUNCTION = r"""wirebench() {
  local p t s fd r state rc out err
  if [ "${1-}" = step ] && { read -r p t s < @TCP_FILE@ &&
      exec {fd}<>"/dev/tcp/127.0.0.1/$p"; } 2>/dev/null; then
    trap '' PIPE
    printf '%s\0' "$t" "$PWD" "$(($# - 1))" "${@:2}" >&"$fd" 2>/dev/null || true
    IFS= read -t @READY@ -r -d '' r <&"$fd" || true
    IFS= read -t @READY@ -r -d '' state <&"$fd" || true
    if [ "$r" = "$s" ] && [ "$state" = ready ] && printf 'go\0' >&"$fd" 2>/dev/null; then
      rc=cut
      IFS= read -t @REPLY@ -r -d '' rc <&"$fd" || { [ $? -le 128 ] || rc=late; }
      IFS= read -t @REPLY@ -r -d '' out <&"$fd" || true
      IFS= read -t @REPLY@ -r -d '' err <&"$fd" || true
      exec {fd}>&-
      trap - PIPE
      case $rc in
        late) echo "wirebench: the warm worker gave no reply in @REPLY@ s" >&2; return 70 ;;
        "" | *[!0-9]*) ;;
        *) printf %s "$out"; printf %s "$err" >&2; return "$rc" ;;
      esac
    else
      exec {fd}>&-
      trap - PIPE
    fi
  fi
  @CLIENT@
}"""


def job_shell_prefix() -> str:
    """A `shell.prefix()` under which `wirebench` is a bash function, not pip's script.

    A step job's own process is a bash shell. When a warm worker is up, the function
    hands the step to it over TCP, from bash itself (`/dev/tcp`, no process started), with
    the token from the worker's 0600 file (wirebench/worker.py): a job then costs 1 ms of
    CPU rather than a Python client's 12. Otherwise, or when that fails or the worker
    declines the step, it starts wirebench.cli with the interpreter running this workflow,
    which starts the worker. The steps so run the very code the fingerprints hash (the
    worker's name is a hash of that code), and pip's `wirebench` script, which imports `re`
    first (12 ms), is never started. -P keeps the project folder from shadowing a module.
    The rules' command text, which Snakemake's code trigger compares, stays as is.
    """
    from wirebench.runtime import worker_client

    main = "import sys; from wirebench.cli import main; sys.exit(main())"
    client = f'{shlex.quote(sys.executable)} -P -c {shlex.quote(main)} "$@"'
    path = worker_client.worker_path()
    if path is None:
        function = f"wirebench() {{ {client}; }}"
    else:
        function = (WORKER_FUNCTION.replace("@TCP_FILE@", shlex.quote(worker_client.tcp_file(path)))
                    .replace("@READY@", str(worker_client.READY_SECONDS))
                    .replace("@REPLY@", str(REPLY_SECONDS))
                    .replace("@CLIENT@", client))
    # shell.prefix() formats its text like a command: braces are doubled to stay braces.
    return "set -euo pipefail; " + function.replace("{", "{{").replace("}", "}}") + "; "


def fresh_bytecode() -> None:
    """Write wirebench's bytecode now if Python will not (PYTHONDONTWRITEBYTECODE=1).

    Every job starts a step client that imports wirebench.cli. With that variable set
    and a source newer than its .pyc (any edit, any checkout), each of thousands of job
    processes compiles the module again: 12 ms a job for cli.py alone, measured here,
    against 1.4 ms from a fresh .pyc. compileall checks each file's stamp first, so with
    nothing stale this costs about 40 ms once a run. A read-only install keeps its own.
    """
    if not sys.flags.dont_write_bytecode:
        return
    import compileall
    import os

    import wirebench

    # A folder it cannot write is skipped, not raised: the jobs then compile as before.
    compileall.compile_dir(os.path.dirname(wirebench.__file__), quiet=2)


def spare_the_collector() -> None:
    """Keep Python's cycle collector from walking Snakemake's DAG over and over.

    A 2,000-pair matrix leaves about 780,000 objects tracked by the collector, and they
    live for the whole run. With the default thresholds a no-op rerun made 2,308 young,
    209 middle and 12 full passes, most of them while Snakemake built the DAG, then one
    more full pass as the interpreter shut down (2 s on its own). Collecting young
    objects less often took that to 388, 35 and 3 passes, about 1.5 s less. Freezing at
    exit hides everything still alive from that last pass, so shutdown only frees memory;
    exit handlers that flush and close files (logging's) still run.
    """
    _, middle, old = gc.get_threshold()
    gc.set_threshold(COLLECT_EVERY, middle, old)
    atexit.register(gc.freeze)


def stop_scheduler_timers() -> None:
    """Cancel the job-rate limiter's leftover timers, so exit does not wait them out.

    They only wake the scheduler (why the profiles stretch their span:
    profiles/default/config.yaml).
    """
    for thread in threading.enumerate():
        if isinstance(thread, threading.Timer):
            thread.cancel()


def defer_remaining_jobs() -> bool:
    """Build Snakemake's list of remaining jobs only when something reads it.

    Every scheduling round hands the job selector `remaining_jobs`: a list over every job
    of the DAG that is still to run. The greedy selector (profiles/default) never reads
    it, but the list is built anyway, so a round costs time in proportion to the whole
    matrix. At 25,000 pairs (132,500 jobs) that was two thirds of the samples of
    Snakemake's main thread (py-spy). Here the property returns a sequence
    that builds the same list the first time it is read, within the same round and under
    the same lock, so the ILP selector and the stall diagnostic see exactly what they saw.
    False, and nothing changed, when this Snakemake has no such property.
    """
    try:
        from snakemake.scheduling.job_scheduler import JobScheduler
    except ImportError:
        return False
    original = JobScheduler.__dict__.get("remaining_jobs")
    if not isinstance(original, property):
        return False
    if getattr(original.fget, "deferring", False):
        return True  # a second include of common.smk in one process

    def deferred(scheduler):
        return Deferred(lambda: original.fget(scheduler))

    deferred.deferring = True  # type: ignore[attr-defined]
    JobScheduler.remaining_jobs = property(deferred, doc=original.__doc__)
    return True


class Deferred(Sequence):
    """A sequence that calls `build` the first time it is read, and keeps the result."""

    def __init__(self, build):
        self._build, self._items = build, None

    def _list(self) -> list:
        if self._items is None:
            self._items = list(self._build())
        return self._items

    def __len__(self) -> int:
        return len(self._list())

    def __getitem__(self, index):
        return self._list()[index]

    def __iter__(self):
        return iter(self._list())


def rule_groups_by_name(groups: dict[str, list[str]]) -> None:
    """Let the command line name a group of rules by one name: `--forcerun apply` for
    every batch's apply rule (the workflow makes a rule per step and batch). Targets,
    --forcerun, --until and --omit-from are rewritten just before the DAG is built: they
    are not known while the Snakefile is read."""
    from snakemake.workflow import Workflow

    original = Workflow._prepare_dag
    if getattr(original, "rule_groups", None) is not None:
        original.rule_groups.update(groups)
        return

    def prepare_dag(self, *args, **kwargs):
        settings = self.dag_settings
        for key in ("targets", "forcerun", "until", "omit_from"):
            names = getattr(settings, key)
            if any(n in prepare_dag.rule_groups for n in names):
                setattr(settings, key, type(names)(
                    r for n in names for r in prepare_dag.rule_groups.get(n, [n])))
        return original(self, *args, **kwargs)

    prepare_dag.rule_groups = dict(groups)
    Workflow._prepare_dag = prepare_dag


def exact_producers() -> None:
    """Answer "does this rule make that file?" for a rule without wildcards by a set
    lookup: Snakemake compiles a regular expression for each output it tries, and the
    batch rules name every pair's files (225,000 at 25,000 pairs: 9 s of a no-op rerun's
    63 under py-spy). Without wildcards that expression is the file's own path, escaped,
    so the answer is the same."""
    from snakemake.rules import Rule

    original = Rule.is_producer
    if getattr(original, "exact", False):
        return

    def is_producer(self, requested_output):
        if self.has_wildcards():
            return original(self, requested_output)
        files = self.__dict__.get("_exact_products")
        if files is None:
            try:
                files = frozenset(str(product.file) for product in self.products())
            except ValueError:  # a product given as a function: Snakemake's own way
                files = False
            self.__dict__["_exact_products"] = files
        if files is False:
            return original(self, requested_output)
        return str(requested_output) in files

    is_producer.exact = True
    Rule.is_producer = is_producer


def checksums_once_per_job() -> None:
    """Hash each input of a finished job once. Snakemake's metadata record of every output
    holds the checksum of every input of its job, and `PersistenceBase.finished` asks for
    them afresh for each output: a batch's 75 outputs opened and hashed its spec and
    records 75 times (5,100 of the 20,800 files Snakemake's process opened at 200 pairs,
    at 0.1 ms an open here). During one `finished` call the inputs do not change, so the
    records hold the same checksums."""
    import contextvars

    from snakemake.io import _IOFile
    from snakemake.persistence import PersistenceBase

    finished = PersistenceBase.finished
    if getattr(finished, "once_per_job", False):
        return
    checksum = _IOFile.checksum
    memo: contextvars.ContextVar = contextvars.ContextVar("wirebench_checksums", default=None)

    async def memo_checksum(self, threshold=None, force=False, algorithm=None):
        seen = memo.get()
        if seen is None:
            return await checksum(self, threshold, force, algorithm)
        key = (str(self), threshold, force, algorithm)
        if key not in seen:
            seen[key] = await checksum(self, threshold, force, algorithm)
        return seen[key]

    async def finished_once(self, job):
        token = memo.set({})
        try:
            return await finished(self, job)
        finally:
            memo.reset(token)

    finished_once.once_per_job = True
    _IOFile.checksum = memo_checksum
    PersistenceBase.finished = finished_once


def one_marker_per_job(rule_outputs: dict[str, str]) -> None:
    """Mark a running job of these rules incomplete by one named output, not by each.

    Snakemake writes a marker file for every output of a job as it starts and deletes
    them all as it ends: in a 200-pair run, 1,846 files made and freed, for the batch
    rules' pair files. A job is incomplete as a whole, and Snakemake treats it so (after
    a kill, the job is run again for any marked output), so one marker on its batch
    record says the same. It matters on ext4 without a journal (our VMs): a freed inode is
    skipped by every file creation for seconds to minutes (while its inode table block is
    dirty), at a cost that grows with the number freed (benchmarks/file_churn.py).
    `rule_outputs` maps a rule's name to the name of the output that carries its marker;
    the rule must write that output first."""
    from snakemake.persistence import PersistenceBase

    started = PersistenceBase.started
    marked = getattr(started, "rule_outputs", None)
    if marked is not None:  # a second include of the rules in one process
        marked.update(rule_outputs)
        return

    def started_once(self, job, external_jobid=None):
        name = started_once.rule_outputs.get(job.rule.name)
        if name is None:
            return started(self, job, external_jobid)
        self._clear_cache()
        self._mark_incomplete(self._get_key(getattr(job.output, name)), external_jobid)

    started_once.rule_outputs = dict(rule_outputs)
    PersistenceBase.started = started_once
