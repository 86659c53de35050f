"""Review tasks (tasks/rv*): a spec board as a colleague drew it, with faults that pass
for ordinary choices, to be found from the requirements and the datasheets alone.

scripts/board_tasks.py writes them from boards.REVIEWS: the spec's reference with every
fault planted is the base sheet, the reference edit fixes them all, and each wrong answer
leaves one fault in (or all of them: the sheet as drawn). The text is the spec's
requirements; nothing says what is wrong or how much.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import pytest
import yaml
from conftest import REPO, TASKS
from test_spec_tier import kicad, lint

REVIEWS = sorted(p.name for p in TASKS.iterdir() if p.name.startswith("rv") and
                 (p / "task.yaml").is_file())

def _meta(task: str) -> dict:
    return yaml.safe_load((TASKS / task / "task.yaml").read_text())


def _review(task: str) -> dict:
    sys.path.insert(0, str(REPO / "scripts"))
    from boards import REVIEWS as BOARDS

    return next(b for b in BOARDS if b["id"] == task)


def test_there_are_reviews_and_each_is_a_spec_task_with_its_specs_rules():
    assert len(REVIEWS) >= 2
    for task in REVIEWS:
        meta, spec = _meta(task), _review(task)["review_of"]
        spec_meta = _meta(spec["id"])
        assert meta["tier"] == "spec" and meta["strict_nets"] is False, task
        # Every rule of the spec, unchanged, what is right kept, and a bound on the edit.
        assert meta["criteria"][:-2] == spec_meta["criteria"], task
        assert [c["kind"] for c in meta["criteria"][-2:]] == ["values", "max_ops"], task
        # The sheet as drawn, each fault left in alone, and a right part "improved". That
        # each fails on its rule and the reference passes is the corpus check's
        # (test_corpus: every task that is not a board's or a spec's own).
        assert len(meta["wrong_answers"]) == 2 + len(_review(task)["faults"]), task
        assert meta["wrong_answers"][-1]["fails"] == "kept", task


@pytest.mark.parametrize("task", REVIEWS)
def test_a_review_keeps_every_part_no_fix_touches_and_only_those(task):
    """`kept` holds every valued part of the base that neither the reference fix nor a
    fair other fix (`free`) touches, at the base's value; a part a fault was planted on
    is never among them (a trial reviewer changed rv08's correct TVS, and no rule saw it)."""
    meta, board = _meta(task), _review(task)
    kept = next(c for c in meta["criteria"] if c["id"] == "kept")["values"]
    base = {op["designator"]: op.get("value") for op in json.loads(
        (TASKS / task / "base_ops.json").read_text())["ops"] if op["op"] == "place_component"}
    fix = json.loads((TASKS / task / "reference_ops.json").read_text())["ops"]
    touched = {op["designator"] for op in fix if "designator" in op} | set(board["free"])
    assert kept == {ref: value for ref, value in base.items()
                    if value and ref not in touched}
    assert board["overfix"][0] in kept and board["overfix"][1] != kept[board["overfix"][0]]


@pytest.mark.parametrize("task", REVIEWS)
def test_a_review_gives_nothing_away(task):
    """The spec's requirements and no value or pin; no word of what a fault is."""
    text = (TASKS / task / "task.md").read_text()
    assert lint(text) == []
    spec_text = (TASKS / _review(task)["review_of"]["id"] / "task.md").read_text()
    assert spec_text.split("\n\n", 1)[1].split("\n\nName the rails")[0].strip() in text
    for name in _review(task)["faults"]:
        for word in name.split("-"):
            if len(word) > 3:  # "crystal", "bridge", "inductor", "uvlo" ...
                assert not re.search(rf"\b{re.escape(word)}", text, re.IGNORECASE) or \
                    re.search(rf"\b{re.escape(word)}", spec_text, re.IGNORECASE), (task, word)


@pytest.mark.parametrize("task", REVIEWS)
def test_a_reviews_sheet_numbers_its_parts_without_a_gap(task):
    """A part a fault drops would leave C11 and C12 missing between C10 and C13, which
    shows where to look: the sheet numbers each kind 1, 2, 3 ... as a designer would."""
    ops = json.loads((TASKS / task / "base_ops.json").read_text())["ops"]
    kinds: dict[str, list[int]] = {}
    for op in ops:
        if op["op"] == "place_component":
            kind, number = re.fullmatch(r"([A-Z]+)(\d+)", op["designator"]).groups()
            kinds.setdefault(kind, []).append(int(number))
    for kind, numbers in kinds.items():
        assert sorted(numbers) == list(range(1, len(numbers) + 1)), (task, kind, numbers)


@kicad
@pytest.mark.slow
@pytest.mark.parametrize("task", REVIEWS)
def test_the_sheet_as_drawn_breaks_every_faults_rule_and_the_reference_none(task, tmp_path):
    """Scored as a run scores it (validate, draw without the rails, nets, design rules):
    the sheet as drawn fails exactly the rules its faults break one by one (each fault
    left in alone fails its own rule), so every fault shows and nothing else is wrong;
    the reference edit passes every rule, within the edit's bound."""
    from wirebench.steps.pair import evaluate_pair

    def failed(answer: Path) -> set[str]:
        result = evaluate_pair(answer, TASKS / task, [], tmp_path / answer.stem,
                               {"model": answer.stem, "task": task, "sample": 1})
        assert result["criteria"], result
        return {c["id"] for c in result["criteria"] if c["verdict"] != "pass"}

    each = {name: failed(TASKS / task / "wrong" / f"{name}-left.json")
            for name in _review(task)["faults"]}
    for name, (_, rule, _) in _review(task)["faults"].items():
        assert rule in each[name], (name, each[name])
    assert failed(TASKS / task / "wrong" / "unreviewed.json") == set().union(*each.values())
    assert failed(TASKS / task / "reference_ops.json") == set()
