"""Batches: one Snakemake job runs one step for many pairs of one model.

Snakemake costs about 10 ms of its own CPU a job (its scheduler, metadata records, the
job shell), more than a whole step of a small pair. So the workflow hands a job a batch
of pairs (config `batch`), and each pair keeps its own files as Snakemake's targets.

A batch's spec lists, for each pair, the argv of its step (`wirebench step ...` without
the leading words), its input and output files and what else decides its result (the
`salt`: library hashes, the simulator's identity). The job's record keeps a stamp per
pair, a hash of all of that and of its inputs' bytes. The outputs are update()-flagged:
Snakemake leaves them in place, and this runner redoes only the pairs whose stamp
changed or whose outputs are missing. So a rerun after one answer changed redraws that
pair alone, and a batch cut short keeps every pair it finished.

The record is JSON Lines: a header, then a line per finished pair, appended as each pair
ends. A record rewritten after every pair replaced a file per pair and step, and on a
filesystem that skips recently freed inodes (ext4 without a journal, as on our VMs)
every freed inode made each later file creation slower: 0.5 ms a creation instead of
0.04 after 3,000 deletions (benchmarks/file_churn.py).
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from wirebench.evidence.files import (
    dumps,
    read_json,
    sha256_file,
    write_bytes_atomic,
)

RECORD_SCHEMA = "wirebench.batch/2"


@dataclass
class Batch:
    """One model's pairs that share a job for every step."""

    model: str
    number: int
    pairs: list[tuple[str, int]] = field(default_factory=list)  # (task, sample)

    @property
    def id(self) -> str:
        return f"{_rule_word(self.model)}__{self.number:04d}"

    def rule(self, step: str) -> str:
        return f"{step}__{self.id}"


def _rule_word(model: str) -> str:
    # Rule names are words: a model's `.` and `-` become `_` (the workflow refuses two
    # models that collide this way).
    return "".join(c if c.isalnum() or c == "_" else "_" for c in model)


def partition(models: list[str], tasks: list[str], samples: list[int],
              size: int) -> list[Batch]:
    """Each model's pairs, task by task and sample by sample, in runs of `size`. A task's
    samples sit together, and so stay together when tasks are added."""
    if size < 1:
        raise ValueError(f"batch size must be at least 1, not {size}")
    batches = []
    for model in models:
        pairs = [(t, s) for t in tasks for s in samples]
        for n, start in enumerate(range(0, len(pairs), size), 1):
            batches.append(Batch(model, n, pairs[start:start + size]))
    return batches


def write_spec(folder: str | os.PathLike, spec: dict) -> str:
    """The spec, stored under its own hash: its path, an input of the batch's job, changes
    exactly when its content does, and writing it again is free. Returns the path."""
    data = dumps(spec).encode()
    path = Path(folder) / f"{hashlib.sha256(data).hexdigest()[:24]}.json"
    if not path.is_file():
        write_bytes_atomic(path, data)
    return str(path)


def stamp(fingerprint: str, pair: dict) -> str:
    """What decides a pair's result: the step's code, its argv and salt, its inputs' bytes."""
    h = hashlib.sha256(json.dumps([fingerprint, pair["argv"], pair.get("salt")],
                                  sort_keys=True).encode())
    for name in pair["inputs"]:
        try:
            h.update(b"\0" + sha256_file(name).encode())
        except FileNotFoundError:
            h.update(b"\0missing")
    return h.hexdigest()


def read_record(path: str | os.PathLike) -> dict:
    """The pairs a record vouches for: id -> {"stamp", "outputs"}. Reading stops at a line
    a kill cut short; a record of another schema, or none, vouches for nothing."""
    try:
        with open(path, "rb") as fh:
            lines = fh.read().split(b"\n")
        head = json.loads(lines[0])
    except (OSError, ValueError):
        return {}
    if not isinstance(head, dict) or head.get("schema") != RECORD_SCHEMA:
        return {}
    pairs: dict = {}
    for line in lines[1:]:
        try:
            entry = json.loads(line)
            pair_id, key = entry["id"], entry["stamp"]
        except (ValueError, TypeError, KeyError):
            break  # the end, or a line cut short
        if key is None:
            pairs.pop(pair_id, None)
        else:
            pairs[pair_id] = {"stamp": key, "outputs": entry.get("outputs")}
    return pairs


class _Record:
    """A batch's record as its pairs finish: a line appended per change, so a kill keeps
    every finished pair and no pair replaces the file. close() leaves it in its one
    spelling (the header, then the pairs in task and sample order), so equal batches give
    equal bytes: later steps' jobs take the record as an input."""

    def __init__(self, path: Path, spec: dict, done: dict):
        self.path, self.spec = path, spec
        self._fd = None
        self._settle(done)  # from here on, appended lines follow whole ones

    def _header(self) -> bytes:
        return _line({"schema": RECORD_SCHEMA, "step": self.spec["step"]})

    def _spelling(self, done: dict) -> bytes:
        return self._header() + b"".join(
            _line({"id": pair_id, **done[pair_id]}) for pair_id in sorted(done, key=_order))

    def append(self, pair_id: str, entry: dict | None) -> None:
        """The pair's new stamp, or None: its old one no longer holds."""
        if self._fd is None:
            self._fd = os.open(self.path, os.O_WRONLY | os.O_APPEND)
        line = {"id": pair_id, "stamp": None} if entry is None else {"id": pair_id, **entry}
        os.write(self._fd, _line(line))

    def close(self, done: dict) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None
        self._settle(done)

    def _settle(self, done: dict) -> None:
        """The record in its one spelling, written only when it is not already."""
        want = self._spelling(done)
        try:
            with open(self.path, "rb") as fh:
                if fh.read() == want:
                    return
        except OSError:
            pass
        write_bytes_atomic(self.path, want)


def _order(pair_id: str) -> tuple:
    """A pair's place in a record: by task, then sample as a number. That is the spec's own
    order (tasks sorted by id, then samples), and it holds for pairs no spec names, so a
    narrowed run's record spells its batch's other pairs as the full run did."""
    model, task, sample = pair_id.rsplit("/", 2)
    return (model, task, int(sample) if sample.isdigit() else 0, sample)


def _line(doc: dict) -> bytes:
    return (json.dumps(doc, sort_keys=True, ensure_ascii=False) + "\n").encode()


def run_batch(spec_path: str | os.PathLike, record: str | os.PathLike,
              run_step: Callable[[list[str]], int]) -> int:
    """Every pair of the batch whose stamp changed, through `run_step` (the dispatcher's).
    A pair that crashes is named in the log and the others go on; the job fails at the
    end (exit 70) so Snakemake reports it. Each pair's stamp is added to the record as the
    pair ends, so a kill keeps the stamps of the pairs that finished."""
    spec = read_json(spec_path)
    # Every pair the record vouches for, in this spec or not: a narrowed run's batch holds
    # a few of the full run's pairs, and dropping the others' stamps would make the next
    # full run redo them. A stamp only ever vouches for the inputs it was made from.
    done = read_record(record)
    journal = _Record(Path(record), spec, done)
    failed, kept = [], set()
    try:
        for pair in spec["pairs"]:
            key = stamp(spec["fingerprint"], pair)
            if _current(done.get(pair["id"], {}), key, pair):
                kept.add(pair["id"])
                continue
            if done.pop(pair["id"], None):  # its outputs are about to change: no stale stamp
                journal.append(pair["id"], None)
            print(f"== {pair['id']}", file=sys.stderr, flush=True)
            start = time.perf_counter()
            try:
                rc = run_step(pair["argv"])
            except (Exception, SystemExit) as exc:  # one pair's crash: the others still run
                import traceback

                traceback.print_exc()
                print(f"wirebench: {pair['id']}: the {spec['step']} step crashed: {exc}",
                      file=sys.stderr)
                rc = 70
            if rc:
                failed.append(pair["id"])
                continue
            done[pair["id"]] = {"stamp": key, "outputs": _digest(pair["outputs"])}
            print(f"   {time.perf_counter() - start:.3f} s", file=sys.stderr, flush=True)
            journal.append(pair["id"], done[pair["id"]])
            if spec["step"] == "score":
                _say_why(pair["outputs"])
    finally:
        journal.close(done)
    ran = len(spec["pairs"]) - len(failed) - len(kept)
    print(f"wirebench: {spec['step']}: {ran} pair(s) run, {len(kept)} current, "
          f"{len(failed)} failed", file=sys.stderr)
    if failed:
        print(f"wirebench: the {spec['step']} step failed for {len(failed)} pair(s): "
              + ", ".join(failed), file=sys.stderr)
        return 70
    return 0


def _say_why(outputs: list[str]) -> None:
    """A scored pair that failed gets its cause on the terminal: on stdout, since a job's
    stderr is its log, and the job shell passes stdout on to Snakemake's (the worker's
    too). reports/verdict.py says what a cause is; the run's closing verdict groups them."""
    from wirebench.reports.verdict import pair_lines

    for path in outputs:
        if os.path.basename(path) == "score.json":
            lines = pair_lines(Path(path))
            if lines:
                print("\n".join(lines), flush=True)


def _current(recorded: dict, key: str, pair: dict) -> bool:
    """Did the pair's last run have these inputs, and are its outputs still the ones it
    wrote? (Snakemake touches every output of the job afterwards, so file times say
    nothing here.)"""
    return recorded.get("stamp") == key and recorded.get("outputs") == _digest(pair["outputs"])


def _digest(paths: list[str]) -> str | None:
    """The outputs' bytes, in the record: a later step's batch reads this step's files
    through the record, so the record changes exactly when they do."""
    h = hashlib.sha256()
    for path in paths:
        try:
            h.update(sha256_file(path).encode())
        except FileNotFoundError:
            return None
    return h.hexdigest()
