"""The `real` tier: repairs and change requests inside Debian's kicad-demos designs.

`wirebench tasks generate real --seed S --demos DIR --out FOLDER` reads the installed
demos and writes tasks into the user's folder. The demos are GPL: neither they nor
anything derived from them (the base sheets, the symbol libraries, the tasks) is ever
committed; only this generator and its texts are ours.

Per task: the base sheet (base_ops.json), akcli's redraw of one demo's netlist with the
demo's own symbols (symbols.kicad_sym); the fault planted in it or the change asked of
it; the reference edit; the whole netlist after the edit (expected_nets.json: every net,
the demo's unnamed ones under `N<k>` names); every part's value; and the wrong answers.
The criteria: the nets, exact by pin membership (nets_exact), the values (nothing outside
the fault may move), the part count, and the edit's size: a redraw is no repair. A change
request keeps its base's nets (nets_kept) and meets rules on the pins it involves.
See docs/real-tier.md.
"""

from __future__ import annotations

import itertools
import sys
import tempfile
from pathlib import Path

from wirebench.taskgen.layout import dumps, envelope, expected_nets
from wirebench.taskgen.real import bench, faults
from wirebench.taskgen.real import demos as demo_mod
from wirebench.taskgen.rng import Rng
from wirebench.taskgen.spec import write_folder

FAMILY = "real"
STREAM_VERSION = 1
LIBRARY = "symbols.kicad_sym"
# Kinds whose answer moves a pin between named nets: akcli's rails refuse any such move,
# so they are drawn without them (task.yaml strict_nets: false).
# A design with a pin every unit of a part carries is drawn without them too: its one
# label makes the rails see any edit as a split of that net (demos.Design.shared_pins).
REWIRES = {"wrong-net", "swapped", "rail", "series"}
# How many tasks of each kind one demo gives, at most.
PER_DEMO = {"value": 3, "value-swap": 2, "wrong-net": 3, "swapped": 2, "missing": 2, "rail": 2,
            "power-led": 1, "series": 1, "rework": 2}


def _expected(parts, libraries) -> dict:
    return expected_nets(parts, libraries)


def _values(parts, drawn: dict) -> dict:
    """Every part's value, but those akcli reads back as none from the base sheet."""
    return {p.ref: p.value for p in parts if p.value and drawn.get(p.ref, p.value)}


def _yaml(meta: dict) -> str:
    import yaml

    class Whole(yaml.SafeDumper):  # each rule written out in full, never as an alias
        def ignore_aliases(self, data):
            return True

    return yaml.dump(meta, Dumper=Whole, sort_keys=False, width=96, allow_unicode=True)


def strict(design, case) -> bool:
    """Is this task's answer drawn behind akcli's `--strict-nets` rails?"""
    return not _rewires(case) and not design.shared_pins


def _rewires(case) -> bool:
    """Does the fix move a pin between named nets (a rework's, if any of its faults')?"""
    return any(c["kind"] in REWIRES for c in [case, *case.get("faults", [])])


def _rails(design, case) -> str:
    """What the prompt says of the rails: only what is true of this task (task.yaml
    `strict_nets`, which the apply step follows)."""
    if strict(design, case):
        return ("Your op-list is applied on top of it under akcli's `--strict-nets` rails: "
                "an edit that splits or merges one of its named nets is refused and draws "
                "nothing.")
    why = ("the fix moves a pin between named nets, which the rails refuse"
           if _rewires(case) else
           "on this design the rails see any edit as a split of a net that every unit of "
           "a multi-unit part carries")
    return (f"Your op-list is applied on top of it without akcli's `--strict-nets` rails "
            f"({why}): what judges it is the netlist it leaves, every net by its pins.")


MOVE_PIN = ("A pin moves to another net with its label: delete the part with its labels "
            "(`delete_component` with `cascade`) and place it again where it was, with "
            "its labels.")


def _sheet_parts(case) -> int:
    """The parts on the sheet the agent is given: a part never fitted is not among them
    (the demo's own count would give it away). A part of several units is placed once a
    unit, and counted once."""
    return len({op["designator"] for op in case["base"] if op.get("op") == "place_component"})


def _given(demo, case) -> str:
    """What every task says first: the sheet the agent is given."""
    return (f"The sheet you are given is {demo.what} ({_sheet_parts(case)} parts; its "
            "op-list is in your prompt, drawn from a real KiCad design).")


def _prompt_repair(design, case) -> str:
    d = design.demo
    return "\n".join([
        f"# Repair: {d.name}", "",
        f"{_given(d, case)} It was drawn with one fault, and the bench shows it:", "",
        *[f"> {line}" for line in case["symptom"].splitlines()], "",
        "Find the fault and fix it with the smallest edit of the existing sheet, at most "
        f"{faults.MAX_EDIT_OPS} ops. {_rails(design, case)} Do not redraw the design: "
        "every other part, value and net must stay as it is.", "",
        f"{MOVE_PIN} A part you add takes the lowest designator its kind leaves free, and "
        "a label on each of its pins."])


def _prompt_rework(design, case) -> str:
    d = design.demo
    n = len(case["faults"])
    return "\n".join([
        f"# Repair: {d.name}, back from assembly", "",
        f"{_given(d, case)} It was drawn with {n} faults, each in a different place, and "
        "the bench notes say what each one shows:", "",
        *[f"{i}. {s}" for i, s in enumerate(case["symptoms"], start=1)], "",
        f"Find every fault and fix each with the smallest edit, at most {case['max_ops']} "
        f"ops in all. {_rails(design, case)} Do not redraw the design: every other part, "
        "value and net must stay as it is.", "",
        f"{MOVE_PIN} A part you add takes the lowest designator its kind leaves free, and "
        "a label on each of its pins."])


def _prompt_change(design, case) -> str:
    d = design.demo
    return "\n".join([
        f"# Change request: {d.name}", "",
        f"{_given(d, case)} Its maintainer asks for a change:", "",
        *[f"> {line}" for line in case["ask"]], "",
        f"{_rails(design, case)} {MOVE_PIN} Every other part, value and net must stay as "
        "it is."])


def _task(design, case, libraries, tag: str, index: int, split: str) -> dict[str, str]:
    repair = "symptom" in case or "symptoms" in case
    after = case["parts"]
    meta = {
        "id": f"{FAMILY}-{tag[:6]}-{index:03d}",
        "family": FAMILY,
        "brief": (f"{'Repair' if repair else 'Change'} ({case['kind']}) in the "
                  f"{design.demo.name} demo, {_sheet_parts(case)} parts."),
        "tier": "real",
        "symbol_files": [LIBRARY],
    }
    if not strict(design, case):
        meta["strict_nets"] = False
    if design.layout_left:
        meta["layout_exempt"] = (
            "the base sheet is akcli's redraw of a real design, and akcli's layout check "
            f"finds {len(design.layout_left)} label overlap(s) in it that no edit is asked "
            "to move")
    # unnamed: an unnamed net the answer makes (a wire between two unused pins) fails too.
    # A change is held to its base's nets instead: what it adds is the agent's to name,
    # and its rules judge it (faults.led_change, faults.series_change).
    held = ({"id": "nets", "kind": "nets_kept", **case["kept"]} if "kept" in case
            else {"id": "nets", "kind": "nets_exact", "unnamed": True})
    kept = design.parts if "kept" in case else after
    criteria = [held,
                {"id": "values", "kind": "values", "values": _values(kept, design.drawn_values)},
                {"id": "parts", "kind": "max_parts", "max": len({p.ref for p in after})},
                {"id": "edit_size", "kind": "max_ops",
                 "max": case.get("max_ops", faults.MAX_EDIT_OPS) if repair
                 else len(case["fix"]) + 4}]
    criteria += case.get("rules", [])
    meta["criteria"] = criteria
    wrong = [("unrepaired" if repair else "does-nothing", envelope([]), case["fails"],
              "the sheet left as it is" if repair else "nothing added"),
             ("wrong-part" if repair else "near-miss", envelope(case["wrong_fix"]),
              case.get("wrong_fails", case["fails"]), case["wrong_why"])]
    if "partial" in case:
        wrong.insert(1, ("partial", envelope(case["partial"]), case["partial_fails"],
                         case["partial_why"]))
    wrong += [(n, envelope(edit), f, w) for n, edit, f, w in case.get("more_wrong", [])]
    meta["wrong_answers"] = [{"file": f"wrong/{n}.json", "fails": f, "why": w}
                             for n, _, f, w in wrong]
    nets = design.nets()
    meta["knobs"] = {"parts": len(design.parts), "nets": len(nets),
                     "pins": sum(len(m) for m in nets.values()),
                     "sheets": len(design.demo.sheets), "edit_ops": len(case["fix"]),
                     "distractors": 0, "symbols": design.symbols_total}
    meta["generator"] = {"family": FAMILY, "version": 1, "seed_sha256": tag,
                         "index": index, "split": split}
    files = {
        "task.md": (_prompt_rework if "symptoms" in case else _prompt_repair if repair
                    else _prompt_change)(design, case) + "\n",
        "task.yaml": _yaml(meta),
        "base_ops.json": dumps(envelope(case["base"])),
        "reference_ops.json": dumps(envelope(case["fix"])),
        "expected_nets.json": __import__("json").dumps(_expected(kept, libraries),
                                                       indent=1) + "\n",
        LIBRARY: design.library,
    }
    for name, doc, _, _ in wrong:
        files[f"wrong/{name}.json"] = dumps(doc)
    return files


def cases(design, libraries: list[str], rng: Rng, per_demo: dict | None = None) -> list[dict]:
    """The demo's tasks: up to PER_DEMO of each kind, chosen by the seed, in turns of
    one of each kind (so that the first few ids, a run's sample, hold several kinds)."""
    ops = design.base_ops
    places = faults.Places(design, libraries)
    picks = []
    for kind, count in (per_demo or PER_DEMO).items():
        if kind == "rework":
            found = faults.rework_faults(design, ops, places, rng)
        elif kind in faults.FAULTS:
            found = faults.FAULTS[kind](design, ops, places)
        else:
            found = faults.CHANGES[kind](design, ops, places, libraries)
        seen, pick = set(), []
        order = rng.shuffle(found)
        if kind in faults.FAULTS:  # a repair of one fault: told by the bench where it can be
            order = bench.told_first(design, order, count, libraries)
        for case in order:
            if not seen & set(faults.refs_of(case)) and len(pick) < count:
                pick.append(case)
                seen |= set(faults.refs_of(case))
        picks.append(pick)
    return [c for turn in itertools.zip_longest(*picks) for c in turn if c is not None]


def generate(seed: str, demos_dir: Path, out: Path, count: int | None = None,
             split: str = "private", names: list[str] | None = None,
             per_demo: dict | None = None) -> list[Path]:
    """Write the real tier's tasks for every installed demo (or `names`) into `out`."""
    from wirebench.taskgen.generator import seed_hash

    demos_dir = Path(demos_dir)
    chosen = [d for d in demo_mod.available(demos_dir) if names is None or d.name in names]
    if not chosen:
        raise ValueError(f"{demos_dir}: none of the real tier's demos is there "
                         f"({', '.join(d.name for d in demo_mod.DEMOS)}); "
                         f"{demo_mod.INSTALL_HINT}")
    tag = seed_hash(str(seed))
    written: list[Path] = []
    index = 0
    with tempfile.TemporaryDirectory(prefix="wirebench-real-") as td:
        for demo in chosen:
            try:
                design = demo_mod.read(demo, demos_dir)
                library = Path(td) / demo.name / LIBRARY
                library.parent.mkdir(parents=True)
                library.write_text(design.library, encoding="utf-8")
                demo_mod.base_sheet(design, library)
                rng = Rng(FAMILY, STREAM_VERSION, str(seed), demo.name)
                found = cases(design, [str(library)], rng, per_demo)
            except ValueError as exc:  # this demo, not the others: said, and skipped
                print(f"wirebench: demo {demo.name} left out: {exc}", file=sys.stderr)
                continue
            for case in found:
                if count is not None and len(written) >= count:
                    return written
                files = _task(design, case, [str(library)], tag, index, split)
                written.append(write_folder(Path(out) / f"{FAMILY}-{tag[:6]}-{index:03d}", files))
                index += 1
    return written
