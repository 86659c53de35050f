"""The real tier (taskgen/real): tasks generated from Debian's installed kicad-demos into a
tmp dir (the demos are GPL and never committed), then through `wirebench tasks check`:
each reference passes, and each repair's unrepaired sheet and fix of the wrong part fail
on the criterion they name."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest
import yaml
from conftest import REPO

DEMOS = Path("/usr/share/kicad/demos")
SMALL = {"value": 1, "wrong-net": 1, "series": 1}  # ecc83: 15 parts, three kinds


@pytest.fixture(scope="module")
def demos() -> Path:
    if not (DEMOS / "ecc83" / "ecc83-pp.kicad_sch").is_file():
        if os.environ.get("CI"):
            pytest.fail("kicad-demos is not installed: .ci/run installs it")
        pytest.skip("Debian's kicad-demos is not installed (apt-get install kicad-demos)")
    return DEMOS


def _tree(folder: Path) -> dict[str, bytes]:
    return {p.relative_to(folder).as_posix(): p.read_bytes()
            for p in sorted(folder.rglob("*")) if p.is_file()}


def test_a_seeded_sample_passes_the_corpus_gate(demos, tmp_path):
    from wirebench.taskgen.real import generate

    made = generate("ci", demos, tmp_path / "real", names=["ecc83"], per_demo=SMALL)
    again = generate("ci", demos, tmp_path / "again", names=["ecc83"], per_demo=SMALL)
    assert [_tree(a) for a in made] == [_tree(b) for b in again], "not deterministic"
    kinds = []
    for task in made:
        meta = yaml.safe_load((task / "task.yaml").read_text())
        kinds.append(meta["brief"].split("(")[1].split(")")[0])
        assert meta["tier"] == "real" and (task / "symbols.kicad_sym").is_file()
        # The whole netlist after the edit: every net of the demo with two pins or more.
        nets = json.loads((task / "expected_nets.json").read_text())["nets"]
        assert len(nets) >= 9 and all(n["members"] for n in nets)
        assert {c["kind"] for c in meta["criteria"]} >= {"nets_exact", "values",
                                                         "max_ops", "max_parts"}
        names = {w["file"] for w in meta["wrong_answers"]}
        if meta["brief"].startswith("Repair"):
            assert names == {"wrong/unrepaired.json", "wrong/wrong-part.json"}
            assert meta["knobs"]["edit_ops"] <= 6
    assert sorted(kinds) == ["series", "value", "wrong-net"]
    proc = subprocess.run(["wirebench", "tasks", "check", str(tmp_path / "real"), "--json"],
                          capture_output=True, text=True, cwd=REPO)
    report = json.loads(proc.stdout)
    bad = {t["id"]: t["problems"] for t in report["tasks"] if t["problems"]}
    assert proc.returncode == 0 and not bad, bad
    assert len(report["tasks"]) == 3


def test_no_demo_is_read_without_kicad_demos(tmp_path):
    from wirebench.taskgen.real import generate

    with pytest.raises(ValueError, match="kicad-demos"):
        generate("x", tmp_path, tmp_path / "out")
