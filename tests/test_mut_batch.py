"""A batch job's reruns, counted from the job itself: which pairs a batch ran again after
each kind of change, its record after a crash, a kill and a narrowed run, and its words
on the terminal. The pairs' step is a real function over real files (what the dispatcher
hands run_batch is any such function); each test takes milliseconds, so that every
mutant of steps/batch.py meets them all (benchmarks/mutation_score.py --config evidence).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from wirebench.steps.batch import (
    RECORD_SCHEMA,
    Batch,
    partition,
    read_record,
    run_batch,
    stamp,
    write_spec,
)


class World:
    """Three pairs of model m whose step turns in/<task>.txt into out/<task>.txt (upper
    case), with a batch spec and its record."""

    def __init__(self, root: Path, tasks=("t1", "t2", "t3"), step="apply"):
        self.root, self.ran, self.crash, self.fail = root, [], set(), set()
        (root / "in").mkdir(parents=True, exist_ok=True)
        (root / "out").mkdir(exist_ok=True)
        for t in tasks:
            (root / "in" / f"{t}.txt").write_text(f"answer of {t}")
        self.spec = {"step": step, "fingerprint": "code-1", "pairs": [self.pair(t) for t in tasks]}
        self.record = root / "record.json"

    def pair(self, task: str, salt=None) -> dict:
        src, out = self.root / "in" / f"{task}.txt", self.root / "out" / f"{task}.txt"
        return {"id": f"m/{task}/1", "argv": ["copy", str(src), str(out)],
                "inputs": [str(src)], "outputs": [str(out)], "salt": salt}

    def step(self, argv: list[str]) -> int:
        _, src, out = argv
        task = Path(src).stem
        self.ran.append(task)
        if task in self.crash:
            raise RuntimeError(f"boom in {task}")
        if task in self.fail:
            return 3
        Path(out).write_text(Path(src).read_text().upper())
        return 0

    def run(self, spec: dict | None = None) -> int:
        self.ran = []
        path = write_spec(self.root / "specs", spec or self.spec)
        return run_batch(path, self.record, self.step)


@pytest.fixture
def world(tmp_path):
    (tmp_path / "specs").mkdir()
    return World(tmp_path)


def test_a_batch_reruns_exactly_the_pairs_whose_stamp_changed(world, capfd):
    assert world.run() == 0 and world.ran == ["t1", "t2", "t3"]
    assert (world.root / "out" / "t2.txt").read_text() == "ANSWER OF T2"
    err = capfd.readouterr().err
    lines = err.splitlines()
    timed = [lines[i + 1] for i, line in enumerate(lines) if line.startswith("== m/")]
    assert len(timed) == 3 and all(0 <= float(t.split()[0]) < 10 and t.endswith(" s")
                                   for t in timed), timed
    assert world.run() == 0 and world.ran == []
    assert "apply: 0 pair(s) run, 3 current, 0 failed" in capfd.readouterr().err
    (world.root / "in" / "t2.txt").write_text("a new answer")  # an input's bytes
    assert world.run() == 0 and world.ran == ["t2"]
    err = capfd.readouterr().err
    assert "== m/t2/1" in err and "== m/t1/1" not in err
    assert "apply: 1 pair(s) run, 2 current, 0 failed" in err
    (world.root / "in" / "t2.txt").write_text("a new answer")  # touched, same bytes
    assert world.run() == 0 and world.ran == []
    world.spec["pairs"][0]["salt"] = "library-hash-2"  # what else decides a result
    assert world.run() == 0 and world.ran == ["t1"]
    world.spec["pairs"][2]["argv"] = [*world.spec["pairs"][2]["argv"]]  # same argv
    assert world.run() == 0 and world.ran == []
    world.spec["pairs"][2]["argv"][0] = "copy-again"  # the step's argv
    assert world.run() == 0 and world.ran == ["t3"]
    world.spec["fingerprint"] = "code-2"  # the step's code
    assert world.run() == 0 and world.ran == ["t1", "t2", "t3"]


def test_a_batch_redoes_a_pair_whose_output_is_gone_or_not_its_own(world):
    assert world.run() == 0
    (world.root / "out" / "t1.txt").unlink()
    (world.root / "out" / "t3.txt").write_text("edited by hand")
    assert world.run() == 0 and world.ran == ["t1", "t3"]
    assert (world.root / "out" / "t3.txt").read_text() == "ANSWER OF T3"


def test_a_pair_whose_input_appears_later_is_run_then(world):
    """A pair run with an input missing is stamped as such: once the input exists, the
    pair's stamp no longer holds."""
    world.spec["pairs"][0]["inputs"].append(str(world.root / "in" / "late.txt"))
    assert world.run() == 0
    assert world.run() == 0 and world.ran == []
    (world.root / "in" / "late.txt").write_text("here now")
    assert world.run() == 0 and world.ran == ["t1"]


def test_one_pairs_crash_or_failure_is_that_pairs_alone(world, capfd):
    """The others run; the job fails at the end (exit 70) naming the pairs; the next run
    retries those pairs alone."""
    world.crash, world.fail = {"t2"}, {"t3"}
    assert world.run() == 70 and world.ran == ["t1", "t2", "t3"]
    err = capfd.readouterr().err
    assert "wirebench: m/t2/1: the apply step crashed: boom in t2" in err
    assert "RuntimeError: boom in t2" in err  # its traceback, in the log
    assert "apply: 1 pair(s) run, 0 current, 2 failed" in err
    assert "the apply step failed for 2 pair(s): m/t2/1, m/t3/1" in err
    assert set(read_record(world.record)) == {"m/t1/1"}
    world.crash, world.fail = set(), set()
    assert world.run() == 0 and world.ran == ["t2", "t3"]


def test_a_pair_that_fails_after_its_input_changed_keeps_no_stale_stamp(world):
    """Its outputs may be half rewritten: even with the old input back, it runs again."""
    assert world.run() == 0
    original = (world.root / "in" / "t1.txt").read_text()
    (world.root / "in" / "t1.txt").write_text("changed")
    world.fail = {"t1"}
    assert world.run() == 70
    world.fail = set()
    (world.root / "in" / "t1.txt").write_text(original)
    assert world.run() == 0 and world.ran == ["t1"]


def test_a_step_that_exits_is_one_pairs_crash_too(world):
    """sys.exit in a step (a step's own usage error) fails that pair, not the batch."""
    def exits(argv):
        if "t1" in argv[1]:
            sys.exit(4)
        return world.step(argv)

    path = write_spec(world.root / "specs", world.spec)
    assert run_batch(path, world.record, exits) == 70
    assert set(read_record(world.record)) == {"m/t2/1", "m/t3/1"}


KILLED = r"""
import os, signal, sys
from pathlib import Path
from wirebench.steps.batch import run_batch

kill, fail = sys.argv[3], sys.argv[4]

def step(argv):
    _, src, out = argv
    if Path(src).stem == kill:
        os.kill(os.getpid(), signal.SIGKILL)
    if Path(src).stem == fail:
        return 3
    Path(out).write_text(Path(src).read_text().upper())
    return 0

run_batch(sys.argv[1], sys.argv[2], step)
"""


def _killed_at(world, spec, kill: str, fail: str = "-") -> None:
    path = write_spec(world.root / "specs", spec)
    proc = subprocess.run([sys.executable, "-c", KILLED, path, str(world.record), kill, fail],
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == -signal.SIGKILL, proc.stderr


def test_a_batch_killed_mid_way_keeps_the_pairs_it_finished(world):
    """kill -9 during the third pair: the record vouches for the first two, and the next
    run does only the third (and the one after it)."""
    world.spec["pairs"].append(world.pair("t4"))
    (world.root / "in" / "t4.txt").write_text("answer of t4")
    _killed_at(world, world.spec, "t3")
    assert set(read_record(world.record)) == {"m/t1/1", "m/t2/1"}
    assert world.run() == 0 and world.ran == ["t3", "t4"]


def test_a_killed_batch_keeps_what_it_redid_after_a_pair_it_gave_up(world):
    """t1, t2 and t4 changed; t1 fails, t2 is redone, t3 is current, and the job is killed
    in t4: the record withdraws t1's and t4's old stamps and holds t2's new one, so the
    next run redoes t1 and t4 alone."""
    world.spec["pairs"].append(world.pair("t4"))
    (world.root / "in" / "t4.txt").write_text("answer of t4")
    assert world.run() == 0
    for t in ("t1", "t2", "t4"):
        (world.root / "in" / f"{t}.txt").write_text(f"new answer of {t}")
    _killed_at(world, world.spec, kill="t4", fail="t1")
    assert set(read_record(world.record)) == {"m/t2/1", "m/t3/1"}
    assert world.run() == 0 and world.ran == ["t1", "t4"]


def test_a_narrowed_run_keeps_the_stamps_of_the_pairs_it_left_out(world):
    """A run of one task keeps the batch's other pairs' stamps: the next full run redoes
    none of them. And the record is spelt the same whatever order its lines came in."""
    assert world.run() == 0
    full = world.record.read_bytes()
    (world.root / "in" / "t2.txt").write_text("a new answer")
    narrowed = {**world.spec, "pairs": [world.pair("t2")]}
    assert world.run(narrowed) == 0 and world.ran == ["t2"]
    assert world.run() == 0 and world.ran == []
    (world.root / "in" / "t2.txt").write_text("answer of t2")
    assert world.run() == 0 and world.ran == ["t2"]
    assert world.record.read_bytes() == full, "equal batches give equal bytes"
    lines = full.decode().splitlines()
    assert json.loads(lines[0]) == {"schema": RECORD_SCHEMA, "step": "apply"}
    assert [json.loads(line)["id"] for line in lines[1:]] == ["m/t1/1", "m/t2/1", "m/t3/1"]
    assert full.endswith(b"\n")


def test_a_record_reads_until_a_line_cut_short_and_trusts_no_other_schema(world):
    assert world.run() == 0
    text = world.record.read_text()
    head, *pairs = text.splitlines()
    world.record.write_text("\n".join([head, pairs[0], pairs[1][:20]]))  # a kill mid-line
    assert set(read_record(world.record)) == {"m/t1/1"}
    world.record.write_text(text.replace(RECORD_SCHEMA, "wirebench.batch/1"))
    assert read_record(world.record) == {}
    world.record.write_text("not json\n")
    assert read_record(world.record) == {}
    assert read_record(world.root / "no-such-record.json") == {}
    world.record.write_text(text + json.dumps({"id": "m/t2/1", "stamp": None}) + "\n")
    assert set(read_record(world.record)) == {"m/t1/1", "m/t3/1"}, "a withdrawn stamp"
    got = read_record(world.record)["m/t1/1"]
    assert set(got) == {"stamp", "outputs"} and len(got["stamp"]) == 64


def test_a_pair_in_a_record_sorts_by_task_then_sample_as_a_number(tmp_path):
    w = World(tmp_path, tasks=("b", "a"))
    w.spec["pairs"] = [dict(w.pair("b"), id=f"m/b/{n}") for n in (10, 9, 2)] + [
        dict(w.pair("a"), id="m/a/1")]
    (tmp_path / "specs").mkdir()
    assert w.run() == 0
    ids = [json.loads(line)["id"] for line in w.record.read_text().splitlines()[1:]]
    assert ids == ["m/a/1", "m/b/2", "m/b/9", "m/b/10"]


def test_a_stamp_covers_the_code_the_argv_the_salt_and_each_inputs_bytes(tmp_path):
    a, b = tmp_path / "a", tmp_path / "b"
    a.write_text("1")
    b.write_text("2")
    pair = {"argv": ["x"], "inputs": [str(a), str(b)], "salt": "s"}
    base = stamp("f", pair)
    assert stamp("f", dict(pair)) == base
    assert len({base, stamp("g", pair), stamp("f", {**pair, "argv": ["y"]}),
                stamp("f", {**pair, "salt": "t"}), stamp("f", {**pair, "inputs": [str(b), str(a)]}),
                stamp("f", {**pair, "inputs": [str(a)]})}) == 6
    assert stamp("f", {"argv": ["x"], "inputs": []}) == stamp("f", {"argv": ["x"], "inputs": [],
                                                                   "salt": None})


def test_a_spec_is_stored_under_its_own_hash_and_written_once(tmp_path):
    first = write_spec(tmp_path, {"step": "nets", "pairs": []})
    assert Path(first).parent == tmp_path and len(Path(first).stem) == 24
    before = os.stat(first).st_mtime_ns
    assert write_spec(tmp_path, {"pairs": [], "step": "nets"}) == first
    assert os.stat(first).st_mtime_ns == before
    other = write_spec(tmp_path, {"step": "nets", "pairs": [1]})
    assert other != first and json.loads(Path(other).read_text())["pairs"] == [1]


def test_pairs_are_cut_into_batches_model_by_model_a_tasks_samples_together():
    batches = partition(["m.a", "m-b"], ["t1", "t2", "t3"], [1, 2], 4)
    assert [(b.model, b.number, b.pairs) for b in batches] == [
        ("m.a", 1, [("t1", 1), ("t1", 2), ("t2", 1), ("t2", 2)]),
        ("m.a", 2, [("t3", 1), ("t3", 2)]),
        ("m-b", 1, [("t1", 1), ("t1", 2), ("t2", 1), ("t2", 2)]),
        ("m-b", 2, [("t3", 1), ("t3", 2)])]
    assert [len(b.pairs) for b in partition(["m"], ["t1", "t2"], [1], 1)] == [1, 1]
    assert [len(b.pairs) for b in partition(["m"], ["t1", "t2"], [1], 2)] == [2]
    assert batches[0].id == "m_a__0001" and batches[3].rule("score") == "score__m_b__0002"
    assert Batch("m", 12).id == "m__0012"
    for size in (0, -1):
        with pytest.raises(ValueError, match=f"batch size must be at least 1, not {size}"):
            partition(["m"], ["t"], [1], size)


def test_a_score_batch_names_each_failed_pair_on_the_terminal(tmp_path, capfd):
    """A failed pair's cause on stdout (the job's log is its stderr), as the pair ends;
    a passed pair's nothing; and no other step's batch says it."""
    (tmp_path / "specs").mkdir()
    for step in ("score", "apply"):
        w = World(tmp_path / step, tasks=("t1", "t2"), step=step)
        (tmp_path / step / "specs").mkdir()
        for p in w.spec["pairs"]:
            out = Path(p["outputs"][0])
            p["outputs"] = [str(out.parent / out.stem / "score.json")]

        def scored(argv):
            task, out = Path(argv[1]).stem, Path(argv[2])
            (out.parent / task).mkdir(exist_ok=True)
            (out.parent / task / "score.json").write_text(json.dumps({
                "model": "m", "task": task, "sample": 1, "passed": task == "t2",
                "outcome": "scored", "failure_class": "wrong_nets",
                "errors": ["net VOUT is missing"]}))
            return 0

        path = write_spec(tmp_path / step / "specs", w.spec)
        assert run_batch(path, w.record, scored) == 0
        out = capfd.readouterr().out
        if step == "score":
            assert out.startswith("wirebench: m/t1/1 failed (wrong_nets): ")
            assert "m/t2/1" not in out
        else:
            assert out == ""
