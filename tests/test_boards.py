"""The board tier: real KiCad parts, datasheet rules checked on the drawn netlist.

Every board's reference meets every rule (with ERC and layout clean), and every shipped
wrong answer fails on the rule it breaks, through the same code that scores agents.
KiCad's libraries come from Debian's kicad-symbols (CI installs it)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import REPO, TASKS

KICAD = Path("/usr/share/kicad/symbols")
pytestmark = pytest.mark.skipif(
    not (KICAD / "Device.kicad_sym").is_file() and not os.environ.get("CI"),
    reason="KiCad's libraries are not installed (apt-get install kicad-symbols)")
BOARDS = sorted(p.name for p in TASKS.iterdir() if p.name.startswith("b") and
                (p / "task.yaml").is_file())


def _corpus(tmp_path: Path, names: list[str]) -> Path:
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    for name in [*names, "datasheets"]:
        (corpus / name).symlink_to(TASKS / name)
    return corpus


@pytest.mark.slow
def test_every_board_is_sound_and_every_wrong_answer_fails_on_its_rule(tmp_path):
    from wirebench.corpus.tasks import load_task
    from wirebench.steps.tasks_check import check_corpus

    tasks = [load_task(TASKS / b) for b in BOARDS]
    assert len(tasks) >= 12 and {t.tier for t in tasks} == {"board"}
    for task in tasks:
        kinds = {c["kind"] for c in task.criteria}
        assert {"erc_clean", "layout_clean"} <= kinds, task.id
        assert len(task.meta["wrong_answers"]) >= 3, task.id
        # 20 to 120 parts on the finished board (an edit: the base sheet and the edit);
        # b16, a whole product, has 94.
        ops = [op for p in (task.base_ops_path, task.reference_path) if p
               for op in json.loads(p.read_text())["ops"]]
        parts = sum(op["op"] == "place_component" for op in ops)
        assert 20 <= parts <= 120, (task.id, parts)
    report = check_corpus(_corpus(tmp_path, BOARDS), [])
    problems = {t["id"]: t["problems"] for t in report["tasks"] if t["problems"]}
    assert not problems and report["ok"] == len(BOARDS)


def test_a_wrong_answer_fails_with_a_reason_a_person_can_act_on(tmp_path):
    from wirebench.steps.pair import evaluate_pair

    task = TASKS / "b03-usb-c-sink"
    result = evaluate_pair(task / "wrong/one-cc-resistor.json", task, [], tmp_path,
                           {"model": "m", "task": task.name, "sample": 1})
    verdicts = {c["id"]: c for c in result["criteria"]}
    assert result["outcome"] == "success" and not result["passed"]
    assert verdicts["cc"]["verdict"] == "fail"
    assert "CC1 (pin A5) and J1 CC2 (pin B5) share CC1" in verdicts["cc"]["detail"]
    # Everything else on the board is right, so its score is the share of rules met.
    failed = [c["id"] for c in result["criteria"] if c["verdict"] == "fail"]
    assert failed == ["cc"]
    assert result["score"] == round(1 - 1 / len(result["criteria"]), 4)


def test_the_prompt_pack_shows_pins_datasheet_notes_and_the_sheet_an_edit_starts_from():
    from wirebench.corpus.libraries import kicad_dir, resolve
    from wirebench.corpus.tasks import load_task
    from wirebench.steps.prompt_pack import build

    task = load_task(TASKS / "b10-edit-fix-boot-and-clock")
    pack = build(task.path, REPO / "skills",
                 resolve(task.libraries, kicad_dir()))
    assert "STM32F030F4P6 (ST, Arm Cortex-M0" in pack          # our datasheet note
    assert "C1 = C2 = 2 × (CL − Cstray)" in pack
    assert "BOOT0      input" in pack                           # akcli's pin table
    # the task last, after the sheet it edits, where a long pack's reader ends
    assert pack.index("# The sheet you start from") < pack.index("# Your task")
    assert pack.rstrip().endswith(task.prompt_path.read_text().rstrip())
    assert '"designator": "C5"' in pack and '"value": "22p"' in pack
    # The answer key never reaches the agent.
    assert task.reference_path.read_text() not in pack


@pytest.mark.slow
def test_the_workflow_runs_a_board_and_reports_each_rule_kind(project):
    import shutil

    task = "b10-edit-fix-boot-and-clock"
    project.self_contained([task])
    shutil.copytree(TASKS / "datasheets", project.root / "tasks" / "datasheets")
    project.snakemake()
    df = project.summary()
    assert set(df["tier"]) == {"board"}
    assert df.set_index("model")["passed"].to_dict() == {"reference": True, "base": False}
    card = json.loads((project.root / "results" / "scorecard.json").read_text())
    rules = card["models"]["reference"]["by_rule"]
    assert {"decoupled", "strap", "connected", "erc_clean", "layout_clean", "max_ops"} <= set(rules)
    assert all(r["pass_rate"] == 1.0 for r in rules.values())
    assert card["models"]["base"]["by_tier"]["board"]["passed"] == 0
    report = (project.root / "results" / "report.md").read_text()
    strap = rules["strap"]
    assert "| design rule (board tier) | reference | base |" in report  # best first
    assert "| strap | " in report and f"{strap['passed']}/{strap['pairs']} (100%) |" in report
    # The agent read our datasheet note and the sheet it edits, in its prompt pack.
    pack = (project.root / "results" / "prompts" / "skills" / f"{task}.md").read_text()
    assert "C1 = C2 = 2 × (CL − Cstray)" in pack and "# The sheet you start from" in pack


def test_a_missing_kicad_library_names_the_task_and_the_fix(tmp_path):
    from wirebench.corpus.libraries import symbols_for
    from wirebench.corpus.tasks import TaskError, load_task

    task = load_task(TASKS / "b01-stm32f030-minimum")
    with pytest.raises(TaskError, match="KiCad library 'Device' not found in .*kicad-symbols"):
        symbols_for(task, [], str(tmp_path))


@pytest.mark.slow
def test_the_committed_op_lists_are_what_the_netlists_give():
    res = subprocess.run([sys.executable, str(REPO / "scripts" / "board_tasks.py"), "--check"],
                         capture_output=True, text=True)
    assert res.returncode == 0, res.stdout + res.stderr


@pytest.mark.parametrize("text, value", [
    ("100n", 100e-9), ("0.1uF", 100e-9), ("100nF 16V", 100e-9), ("4k7", 4.7e3),
    ("5.1k", 5.1e3), ("5k1", 5.1e3), ("1M", 1e6), ("22R", 22.0), ("4R7", 4.7),
    ("0R2", 0.2), ("12p", 12e-12), ("10µF", 10e-6), ("60.4", 60.4), ("LED", None),
    (None, None),
    # a decimal comma, as European schematics write it (the demos' 4,7K and 2,2uH);
    # a comma before a space still ends the value
    ("4,7K", 4.7e3), ("2,2uH", 2.2e-6), ("3,3", 3.3), ("10uF, 16V", 10e-6),
    ("33k,1%", 33e3)])
def test_values_are_read_as_schematics_write_them(text, value):
    from wirebench.verify.design_rules import part_value

    got = part_value(text)
    assert got == pytest.approx(value) if value is not None else got is None


def test_every_kept_rule_is_the_base_sheet_less_what_the_fix_touches():
    """A `kept` rule (an edit that must change what is wrong and nothing else) holds each
    part of the base sheet at the base's value; none the reference edit touches; and, on
    a board's own fix (which names no other fair fix), every valued part it leaves."""
    import yaml

    found = 0
    for meta_path in sorted(TASKS.glob("*/task.yaml")):
        meta = yaml.safe_load(meta_path.read_text())
        kept = next((c["values"] for c in meta.get("criteria", []) if c["id"] == "kept"),
                    None)
        if kept is None:
            continue
        found += 1
        folder = meta_path.parent
        base = {op["designator"]: op.get("value") for op in json.loads(
            (folder / "base_ops.json").read_text())["ops"] if op["op"] == "place_component"}
        touched = {op["designator"] for op in json.loads(
            (folder / "reference_ops.json").read_text())["ops"] if "designator" in op}
        assert all(base.get(ref) == value for ref, value in kept.items()), folder.name
        assert not touched & set(kept), folder.name
        if meta.get("family") != "review":
            assert kept == {r: v for r, v in base.items() if v and r not in touched}, folder.name
        assert any(w["fails"] == "kept" for w in meta["wrong_answers"]), folder.name
    assert found >= 4
