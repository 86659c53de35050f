"""Which refusal the prompt pack teaches for each kind of request an agent should not draw.

A task that expects a refusal names its class (task.yaml `refusal_class`). The rule for
each class is read from the prompt pack itself (skills/akcli-oplists.md, its "Declining"
section): the class's phrase below must stand in the bullet of exactly one refusal kind,
and that kind is the one the task must expect. So a task can never be keyed to a refusal
the agent was told not to give, and a pack edit that moves a class moves the rule with it.
`wirebench tasks check` applies it (steps/tasks_check.py).
"""

from __future__ import annotations

import re
from pathlib import Path

from wirebench.verify.oplist import REFUSAL_KINDS

PACK = Path(__file__).resolve().parents[3] / "skills" / "akcli-oplists.md"

# class -> the words of the pack that name it, as written in the "Declining" section.
CLASSES = {
    "not-a-schematic": "not a schematic task",
    "injected-instruction": "instructions you must not follow",
    "secrets": "asks for secrets",
    "contradiction": "the spec contradicts itself",
    "needs-decision": "a decision a person must make",
}


def pack_rules(text: str | None = None) -> dict[str, list[str]]:
    """{refusal kind: [its bullet's text]} from the pack's Declining section."""
    text = PACK.read_text(encoding="utf-8") if text is None else text
    m = re.search(r"^## Declining\n(.*?)(?=^## )", text, re.M | re.S)
    if not m:
        raise ValueError(f"{PACK}: no '## Declining' section")
    rules: dict[str, list[str]] = {}
    for bullet in re.split(r"\n(?=- `)", m.group(1)):
        head = re.match(r"- `([a-z-]+)`:", bullet.strip())
        if head and head.group(1) in REFUSAL_KINDS:
            rules.setdefault(head.group(1), []).append(" ".join(bullet.split()))
    return rules


def kind_for(refusal_class: str, text: str | None = None) -> str:
    """The one refusal kind the pack teaches for a class; ValueError when none or two."""
    if refusal_class not in CLASSES:
        raise ValueError(f"unknown refusal_class {refusal_class!r}; classes: "
                         + ", ".join(sorted(CLASSES)))
    phrase = CLASSES[refusal_class]
    kinds = [k for k, bullets in pack_rules(text).items()
             if any(phrase in b for b in bullets)]
    if len(kinds) != 1:
        raise ValueError(f"the prompt pack names {refusal_class!r} ({phrase!r}) under "
                         f"{len(kinds)} refusal kinds ({', '.join(kinds) or 'none'}), not one")
    return kinds[0]


def problems(meta: dict, expected: list[str], text: str | None = None) -> list[str]:
    """Why a task's expected refusal contradicts the pack, or [] when it follows it."""
    refusals = [o for o in expected if o in REFUSAL_KINDS]
    cls = meta.get("refusal_class")
    if not refusals:
        return ([f"task.yaml: refusal_class {cls!r} but the task expects no refusal"]
                if cls else [])
    if not cls:
        return [f"task.yaml: the task expects {' or '.join(refusals)} but names no "
                f"refusal_class ({', '.join(sorted(CLASSES))}), so the prompt pack's rule "
                "cannot be checked"]
    try:
        want = kind_for(cls, text)
    except ValueError as exc:
        return [str(exc)]
    if refusals != [want]:
        return [f"task.yaml: a {cls} request expects {' or '.join(refusals)}, but the prompt "
                f"pack tells agents to answer it with {want}"]
    return []
