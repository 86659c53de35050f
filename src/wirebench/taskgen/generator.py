"""The generators' entry: `wirebench tasks generate FAMILY --seed S --count N --out DIR`.

A family (taskgen/families/) turns a random stream into a task folder: the prompt, the
ground truth or testbench, the reference answer (the task's oracle), its wrong answers,
and its difficulty knobs. The same family, seed and GENERATOR_VERSION give byte-identical
folders on any machine: the random stream is SHA-256 of the seed (rng.py), never Python's
`random`, and the layouts come from the project's committed symbol libraries.

A task's id carries a hash of the seed, never the seed: a private split's folders and
results say which seed made them without telling anyone what it was.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

from wirebench.taskgen.rng import Rng
from wirebench.taskgen.spec import GeneratedTask, write

GENERATOR_VERSION = 3
# The random stream's own version. Version 2 changed what the safety family's
# contradictions expect (human-review-required, as the prompt pack says), and version 3
# the texts (what the op-amp's inputs do and what its supplies are referred to, and that
# a repair is drawn behind the rails, as the hand-written tasks say), not what
# any family draws, so the stream stays at 1: every task keeps its circuit and its id,
# and results on the public split compare across the versions.
STREAM_VERSION = 1


FAMILIES = ("netlist", "prose", "edit", "parametric", "repair", "safety")


def family_modules() -> dict:
    import importlib

    return {name: importlib.import_module(f"wirebench.taskgen.families.{name}")
            for name in FAMILIES}


def seed_hash(seed: str) -> str:
    return hashlib.sha256(f"wirebench-seed:{seed}".encode()).hexdigest()


def generate(family: str, seed: str, count: int, out: Path, start: int = 0,
             split: str = "private") -> list[Path]:
    """Write `count` tasks of `family` into `out`; returns their folders. `split` names
    the split they belong to (a manifest's are public): the report compares a model's
    pass rates across splits."""
    fams = family_modules()
    if family not in fams:
        raise ValueError(f"unknown family {family!r}; families: {', '.join(sorted(fams))}")
    tag = seed_hash(str(seed))
    written = []
    for index in range(start, start + count):
        rng = Rng(family, STREAM_VERSION, str(seed), index)
        task: GeneratedTask = fams[family].generate(rng, index)
        task.id = f"{family}-{tag[:6]}-{index:03d}"
        task.meta["generator"] = {"family": family, "version": GENERATOR_VERSION,
                                  "seed_sha256": tag, "index": index, "split": split}
        written.append(write(task, Path(out)))
    return written


def generate_split(manifest: Path, out: Path | None = None) -> list[Path]:
    """Every family, seed and count a split's manifest lists, into its folder."""
    import yaml

    try:
        doc = yaml.safe_load(Path(manifest).read_text())
    except yaml.YAMLError as exc:
        raise ValueError(f"{manifest}: not valid YAML ({exc})") from None
    if not isinstance(doc, dict) or not isinstance(doc.get("families"), list):
        raise ValueError(f"{manifest}: a split manifest needs `generator_version` and a "
                         "`families` list of {family, seed, count}")
    if doc.get("generator_version") != GENERATOR_VERSION:
        raise ValueError(f"{manifest}: made by generator version "
                         f"{doc.get('generator_version')}, this is {GENERATOR_VERSION}")
    out = Path(out) if out else Path(manifest).parent
    written = []
    for entry in doc["families"]:
        if not isinstance(entry, dict) or not {"family", "seed", "count"} <= set(entry):
            raise ValueError(f"{manifest}: each of `families` needs family, seed and count")
        written += generate(entry["family"], str(entry["seed"]), int(entry["count"]), out,
                            split=doc.get("split", "public"))
    return written
