"""The real tier's powered bench (taskgen/real/bench.py): ngspice reads the PIC
programmer demo as its designer meant it to work, a repair's note is told by the bench
only where one fix restores the board, and the note is what the sheet the agent is
given actually does, drawn by akcli and read back."""

from __future__ import annotations

import json
import os
import re
from dataclasses import replace
from pathlib import Path

import pytest
from test_real_tier import demos  # noqa: F401  (the fixture: kicad-demos or skip)

from wirebench.taskgen.layout import Part


@pytest.fixture(scope="module")
def programmer(demos, tmp_path_factory):  # noqa: F811
    from wirebench.runtime.akcli_backend import ngspice_library
    from wirebench.taskgen.real import demos as demo_mod

    if ngspice_library() is None:
        if os.environ.get("CI"):
            pytest.fail("ngspice's shared library is missing: .ci/run installs libngspice0")
        pytest.skip("ngspice's shared library is not installed (apt-get install libngspice0)")
    design = demo_mod.read(demo_mod.BY_NAME["pic_programmer"], demos)
    library = tmp_path_factory.mktemp("bench") / "symbols.kicad_sym"
    library.write_text(design.library, encoding="utf-8")
    return design, [str(library)]


def _value(design, ref: str, times: float) -> dict:
    from wirebench.verify.design_rules import part_value

    part = design.part(ref)
    return {"kind": "value", "ref": ref, "symptom": "template",
            "faulty": {ref: replace(part, value=f"{part_value(part.value) * times:g}")}}


def test_the_bench_reads_the_programmer_as_designed(programmer):
    """At rest VPP is up (13 V as RV1 is set) but switched off VPP-MCLR, VCC_PIC is off
    and only the green LED is lit; VPP_ON switches both rails on and lights the red and
    yellow LEDs; the data and clock lines pass through the 74HC125 to the PIC's pins
    and back to the PC."""
    from wirebench.taskgen.real import bench

    design, libraries = programmer
    got, = bench.readings(bench.for_design(design), [design.parts], libraries)
    lit = {key: amps > bench.LIT_A for key, amps in got.items() if key[1].startswith("lamp:")}
    assert got[(0, "VCC")] == pytest.approx(5.0, abs=0.05)
    assert got[(0, "VPP")] == pytest.approx(13.0, abs=0.1)
    assert got[(0, "VPP-MCLR")] < 0.1 and got[(0, "VCC_PIC")] < 0.1
    assert lit == {(s, f"lamp:{d}"): on for s in range(3) for d, on in
                   (("D9", True), ("D8", s > 0), ("D12", s > 0))}
    assert 12.5 < got[(1, "VPP-MCLR")] < 13.1 and 4.8 < got[(1, "VCC_PIC")] <= 5.0
    assert got[(1, "DATA-RB7")] < 0.1 and got[(1, "PC-DATA-IN")] < 0.1
    assert all(got[(2, n)] == pytest.approx(5.0, abs=0.1)
               for n in ("DATA-RB7", "CLOCK-RB6", "PC-DATA-IN"))
    assert got[(0, bench.SUPPLY)] < got[(1, bench.SUPPLY)]  # two more LEDs and the rails


def test_a_bench_that_runs_out_of_time_says_so(programmer):
    """The engine returns what ngspice printed before its time ran out; read as it is,
    the boards after that point would look unsolved, and their notes silently stay
    templates (a batch of 57 faults once lost 9 of its told notes that way)."""
    from wirebench.taskgen.real import bench

    design, libraries = programmer
    with pytest.raises(ValueError, match="did not finish: timeout"):
        bench.readings(bench.for_design(design), [design.parts] * 1000, libraries,
                       timeout=0.5)  # 3,000 operating points take 6 s or so


def test_a_note_is_told_only_where_one_fix_restores_the_board(programmer):
    """R9 ten times up dims the red LED, and only R9 brought back restores it: told.
    R15 ten times up sends VPP far up, and R16 ten times up would bring it back as well
    (they set VPP's divider), a fix the reader could take: not told. R8 ten times up
    changes nothing a meter sees: not told. A turned Q2 is told by VPP-MCLR, in the state
    that switches it."""
    from wirebench.taskgen.real import bench

    design, libraries = programmer
    q2 = design.part("Q2")
    turned = {"kind": "swapped", "ref": "Q2", "symptom": "template",
              "faulty": {"Q2": replace(q2, pins={**q2.pins, "1": q2.pins["3"],
                                                  "3": q2.pins["1"]})}}
    cases = [_value(design, "R9", 10), _value(design, "R15", 10), _value(design, "R8", 10),
             turned]
    assert bench.retell(design, cases, libraries) == 2
    r9, r15, r8, q2 = cases
    assert r9["symptom"].startswith(bench.LEADS["value"])
    assert "the red LED is dim (0.5 mA where the design has 5.0 mA)" in r9["symptom"]
    assert "At rest, every line of the PC low: as designed." in r9["symptom"]
    assert r15["symptom"] == r8["symptom"] == "template"
    assert bench.note(bench.for_design(design), *bench.readings(  # R15's slip shows
        bench.for_design(design), [design.parts, bench.board(design, r15["faulty"])],
        libraries), design.parts)
    assert re.search(r"raising `VPP_ON` \(at J1 pin 3\): `VPP-MCLR` reads [\d.]+ V where the "
                     r"design gives 13\.0 V", q2["symptom"]), q2["symptom"]


def _drawn(task: Path, libraries: list[str]) -> list[Part]:
    """The task's base sheet as akcli draws it and reads it back: what the agent gets."""
    from wirebench.taskgen.real.demos import layout_findings

    ops = json.loads((task / "base_ops.json").read_text())["ops"]
    layout_findings(ops, Path(libraries[0]))
    placed = {op["designator"]: op for op in ops if op["op"] == "place_component"}
    parts = {ref: Part(ref, op["lib_id"], op.get("value")) for ref, op in placed.items()}
    for net in layout_findings.nets["nets"]:
        for member in net["members"]:
            ref, pin = member.split(".", 1)
            if net.get("name") and ref in parts:
                parts[ref].pins[pin] = net["name"]
    return list(parts.values())


def test_a_told_note_is_what_the_sheet_given_does(demos, programmer, tmp_path):  # noqa: F811
    """The generator tells a repair by the bench, and the note is the bench's reading
    of the faulty sheet as akcli draws it from base_ops.json, not of a model of it."""
    from wirebench.taskgen.real import bench, generate

    design, libraries = programmer
    tasks = generate("bench", demos, tmp_path / "real", names=["pic_programmer"],
                     per_demo={"value": 1, "swapped": 1})
    told = [t for t in tasks if "On the bench" in (t / "task.md").read_text()]
    assert len(told) == 2, [t.name for t in tasks]
    the_bench = bench.for_design(design)
    for task in told:
        text = (task / "task.md").read_text()
        quoted = "\n".join(line[2:] for line in text.splitlines() if line.startswith("> "))
        design_reads, sheet_reads = bench.readings(
            the_bench, [design.parts, _drawn(task, libraries)], libraries)
        said = bench.note(the_bench, design_reads, sheet_reads, _drawn(task, libraries))
        assert said and quoted.endswith(said), (task.name, quoted, said)
