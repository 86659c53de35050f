"""Batches: a job runs one step for many pairs, and still only what changed is redone.

Real Snakemake runs in temp folders, real akcli steps; the unit checks use the real
runner on real step argvs.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from conftest import TASKS, Project, write_ops

from wirebench.steps.batch import partition, read_record, run_batch, write_spec
from wirebench.steps.dispatch import run_step

FOUR = ["01-divider", "02-rc-lowpass", "03-pi-filter", "04-i2c-pullups"]


def test_partition_keeps_each_models_pairs_in_order_and_in_runs_of_the_size():
    batches = partition(["m.a", "m-b"], ["t1", "t2", "t3"], [1, 2], 4)
    assert [(b.model, b.number, b.pairs) for b in batches] == [
        ("m.a", 1, [("t1", 1), ("t1", 2), ("t2", 1), ("t2", 2)]),
        ("m.a", 2, [("t3", 1), ("t3", 2)]),
        ("m-b", 1, [("t1", 1), ("t1", 2), ("t2", 1), ("t2", 2)]),
        ("m-b", 2, [("t3", 1), ("t3", 2)])]
    assert batches[1].rule("apply") == "apply__m_a__0002"


def _files(project: Project, tasks: list[str]) -> dict[Path, bytes]:
    # Bytes only: Snakemake touches every output of a job that ran, kept pairs' too.
    return {path: path.read_bytes() for t in tasks for path in (
        project.pair("answers", t) / name for name in (
            "validate.json", "board.kicad_sch", "apply.json", "nets.json", "score.json"))}


def _ran(project: Project, step: str) -> list[str]:
    """The pairs a step's batch ran last time, as its log names them."""
    log = project.root / "results" / "logs" / "batches" / "answers" / "0001" / f"{step}.log"
    return [line[3:].split("/")[1] for line in log.read_text().splitlines()
            if line.startswith("== ")]


@pytest.mark.slow
def test_one_changed_answer_redraws_that_pair_alone_within_its_batch(project, tmp_path):
    answers = tmp_path / "answers"
    answers.mkdir()
    for t in FOUR:
        shutil.copy(TASKS / t / "reference_ops.json", answers / f"{t}.json")
    project.configure({"answers": {"kind": "ops_dir", "dir": str(answers)}}, tasks=FOUR)
    project.snakemake()
    assert _ran(project, "apply") == FOUR  # one job drew all four
    before = _files(project, FOUR)

    # 03 loses a net: only its pair is drawn again; the three others are not touched.
    wrong = json.loads((answers / "03-pi-filter.json").read_text())
    wrong["ops"] = [o for o in wrong["ops"] if o.get("name") != "5V_CLEAN"]
    (answers / "03-pi-filter.json").write_text(json.dumps(wrong))
    project.snakemake()
    for step in ("generate", "validate", "apply", "nets", "score"):
        assert _ran(project, step) == ["03-pi-filter"], step
    after = _files(project, FOUR)
    for path, was in before.items():
        if "03-pi-filter" in path.parts:
            assert after[path] != was, path
        else:
            assert after[path] == was, path
    assert not project.score("answers", "03-pi-filter")["passed"]
    assert project.score("answers", "01-divider")["passed"]
    # And then nothing is left to do.
    dry = project.snakemake("-n")
    assert "Nothing to be done" in dry.stdout + dry.stderr


@pytest.mark.slow
def test_a_deleted_pair_file_asked_for_by_name_is_redone_alone(project, tmp_path):
    project.configure({"reference": {"kind": "reference"}}, tasks=FOUR[:3])
    project.snakemake()
    sheet = project.pair("reference", "02-rc-lowpass") / "board.kicad_sch"
    sheet.unlink()
    # Later steps read the sheets through apply's record, so a plain run does not miss
    # one; asked for by name, its batch runs and draws that pair alone.
    project.snakemake(str(sheet.relative_to(project.root)))
    log = project.root / "results/logs/batches/reference/0001/apply.log"
    assert [ln for ln in log.read_text().splitlines() if ln.startswith("== ")] == [
        "== reference/02-rc-lowpass/1"]
    assert sheet.is_file() and project.score("reference", "02-rc-lowpass")["passed"]


def _validate_pair(tmp_path: Path, name: str, ops: list[dict] | None) -> dict:
    pair = tmp_path / name
    pair.mkdir()
    if ops is not None:
        write_ops(pair / "ops.json", ops)
    return {"id": f"m/{name}/1", "inputs": [str(pair / "ops.json")],
            "outputs": [str(pair / "validate.json")],
            "argv": ["validate", "--ops", str(pair / "ops.json"),
                     "--out", str(pair / "validate.json")]}


def test_a_pair_that_crashes_is_named_and_the_others_are_kept(tmp_path, capsys):
    ops = json.loads((TASKS / "01-divider" / "reference_ops.json").read_text())["ops"]
    good, bad, other = (_validate_pair(tmp_path, n, ops) for n in ("a", "b", "c"))
    bad["argv"] = ["validate", "--no-such-flag"]  # the step itself cannot run
    spec = write_spec(tmp_path / "specs", {"step": "validate", "fingerprint": "f",
                                            "pairs": [good, bad, other]})
    record = tmp_path / "record.json"
    assert run_batch(spec, record, run_step) == 70
    err = capsys.readouterr().err
    assert "failed for 1 pair(s): m/b/1" in err
    assert sorted(read_record(record)) == ["m/a/1", "m/c/1"]
    assert json.loads((tmp_path / "a" / "validate.json").read_text())["valid"]
    # A second run redoes only the pair that failed.
    assert run_batch(spec, record, run_step) == 70
    assert [ln for ln in capsys.readouterr().err.splitlines() if ln.startswith("== ")] == [
        "== m/b/1"]


def test_the_record_grows_in_place_and_a_cut_line_costs_only_its_pair(tmp_path, capsys):
    ops = json.loads((TASKS / "01-divider" / "reference_ops.json").read_text())["ops"]
    pairs = [_validate_pair(tmp_path, n, ops) for n in ("a", "b", "c")]
    spec = write_spec(tmp_path / "specs", {"step": "validate", "fingerprint": "f",
                                            "pairs": pairs})
    record = tmp_path / "record.json"
    inodes = []

    def step(argv):  # the record's file as each pair starts
        inodes.append(record.stat().st_ino)
        return run_step(argv)

    assert run_batch(spec, record, step) == 0
    # One file for the whole batch: each pair's stamp is added to it, none replaces it.
    assert len(inodes) == 3 and len(set(inodes)) == 1
    assert record.stat().st_ino == inodes[0]
    lines = record.read_bytes().splitlines()
    assert json.loads(lines[0])["step"] == "validate"
    assert [json.loads(ln)["id"] for ln in lines[1:]] == ["m/a/1", "m/b/1", "m/c/1"]
    whole = record.read_bytes()

    # A kill in the middle of writing the last line: that pair alone is redone, and the
    # record ends as it would have.
    record.write_bytes(whole[: whole.rindex(b"{") + 20])
    assert sorted(read_record(record)) == ["m/a/1", "m/b/1"]
    capsys.readouterr()
    assert run_batch(spec, record, run_step) == 0
    assert [ln for ln in capsys.readouterr().err.splitlines() if ln.startswith("== ")] == [
        "== m/c/1"]
    assert record.read_bytes() == whole

    # A changed answer: its stale stamp is struck before the pair is redone, and the
    # record is written once more at the end, in the spec's order.
    write_ops(tmp_path / "b" / "ops.json", ops[:-1])
    assert run_batch(spec, record, run_step) == 0
    assert [json.loads(ln)["id"] for ln in record.read_bytes().splitlines()[1:]] == [
        "m/a/1", "m/b/1", "m/c/1"]
    assert read_record(record)["m/b/1"]["stamp"] != json.loads(whole.splitlines()[2])["stamp"]
    assert read_record(tmp_path / "nothing.json") == {}


def test_the_worker_refuses_a_batch_that_holds_an_online_agent(tmp_path):
    from wirebench.runtime.worker_client import may_serve
    from wirebench.worker import _refusal

    def spec(kind: str) -> str:
        entry = json.dumps({"kind": kind, "command": "true"})
        argv = ["generate", "--model", "m", "--kind", kind, "--agent", entry, "--task", "t",
                "--sample", "1", "--ops", "o", "--agent-out", "a"]
        return write_spec(tmp_path, {"step": "generate", "fingerprint": "f",
                                     "pairs": [{"id": "m/t/1", "argv": argv, "inputs": [],
                                                "outputs": []}]})

    online, offline = spec("command"), spec("reference")
    assert not may_serve(["batch", "--spec", online, "--record", "r"])
    assert "offline" in _refusal(["batch", "--spec", online, "--record", "r"]) \
        or "does not run" in _refusal(["batch", "--spec", online, "--record", "r"])
    assert may_serve(["batch", "--spec", offline, "--record", "r"])
    assert _refusal(["batch", "--spec", offline, "--record", "r"]) is None
