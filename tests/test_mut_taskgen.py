"""The generators as a user of a split relies on them: the committed public split is
byte for byte what the generators make from its manifest (so results on it compare
across machines and releases), another seed makes other tasks, a task's id carries the
seed's hash and never the seed, and a bad manifest or family is refused by name. All
in-process, in seconds, so that every mutant of taskgen/ meets them
(benchmarks/mutation_score.py --config taskgen). Whether each generated task's reference
passes and its wrong answers fail is tests/test_generate.py's corpus gate (slow).
"""

from __future__ import annotations

import filecmp
from pathlib import Path

import pytest
import yaml
from conftest import REPO

from wirebench.taskgen.generator import (
    FAMILIES,
    GENERATOR_VERSION,
    generate,
    generate_split,
    seed_hash,
)
from wirebench.taskgen.rng import Rng

PUBLIC = REPO / "splits" / "public"


def _files(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes()
            for p in sorted(root.rglob("*")) if p.is_file()}


def test_the_public_split_is_what_the_generators_make_of_its_manifest(tmp_path):
    out = tmp_path / "public"
    written = generate_split(PUBLIC / "split.yaml", out)
    committed = {p.name for p in PUBLIC.iterdir() if p.is_dir()}
    assert {p.name for p in written} == committed
    assert len(written) == sum(e["count"] for e in yaml.safe_load(
        (PUBLIC / "split.yaml").read_text())["families"])
    differs = []
    for name in sorted(committed):
        cmp = filecmp.dircmp(PUBLIC / name, out / name)
        if _files(PUBLIC / name) != _files(out / name):
            differs.append((name, cmp.diff_files, cmp.left_only, cmp.right_only))
    assert differs == [], f"{len(differs)} task folders differ, first: {differs[:1]}"


def test_another_seed_makes_other_tasks_named_by_the_seeds_hash(tmp_path):
    for family in FAMILIES:
        a = generate(family, "seed-a", 2, tmp_path / "a")
        b = generate(family, "seed-b", 2, tmp_path / "b")
        again = generate(family, "seed-a", 2, tmp_path / "again")
        assert [p.name for p in a] == [f"{family}-{seed_hash('seed-a')[:6]}-{i:03d}"
                                       for i in range(2)]
        assert _files(a[0]) == _files(again[0]) and _files(a[1]) == _files(again[1])
        assert _files(a[0]) != _files(b[0]), f"{family}: another seed, the same task"
        assert _files(a[0]) != _files(a[1]), f"{family}: two tasks of one seed are one"
        meta = yaml.safe_load((a[1] / "task.yaml").read_text())
        assert meta["id"] == a[1].name
        assert meta["generator"] == {"family": family, "version": GENERATOR_VERSION,
                                     "seed_sha256": seed_hash("seed-a"), "index": 1,
                                     "split": "private"}
        assert "seed-a" not in "".join(v.decode(errors="ignore") for v in _files(a[1]).values())
    (later,) = generate("netlist", "seed-a", 1, tmp_path / "later", start=1, split="mine")
    assert later.name == f"netlist-{seed_hash('seed-a')[:6]}-001"
    got = yaml.safe_load((later / "task.yaml").read_text())["generator"]
    assert (got["index"], got["split"]) == (1, "mine")
    first = generate("netlist", "seed-a", 2, tmp_path / "first")[1]
    assert (later / "task.md").read_bytes() == (first / "task.md").read_bytes()


def test_a_seed_is_hashed_with_the_projects_own_prefix():
    import hashlib

    assert seed_hash("7") == hashlib.sha256(b"wirebench-seed:7").hexdigest()


def test_an_unknown_family_is_refused_with_the_families_listed(tmp_path):
    with pytest.raises(ValueError) as refused:
        generate("nonsense", "1", 1, tmp_path)
    assert str(refused.value) == ("unknown family 'nonsense'; families: edit, netlist, "
                                  "parametric, prose, repair, safety")
    assert not tmp_path.joinpath("nonsense").exists()


@pytest.mark.parametrize("text, why", [
    ("families: [", "not valid YAML"),
    ("- a list", "a split manifest needs `generator_version` and a `families` list"),
    ("generator_version: 3\nfamilies: 3", "a split manifest needs `generator_version`"),
    ("generator_version: 1\nfamilies: []", "made by generator version 1, this is 3"),
    ("families: []", "made by generator version None, this is 3"),
    ("generator_version: 3\nfamilies: [{family: netlist, seed: 1}]",
     "each of `families` needs family, seed and count"),
    ("generator_version: 3\nfamilies: [netlist]",
     "each of `families` needs family, seed and count"),
])
def test_a_bad_manifest_is_refused_naming_the_file(tmp_path, text, why):
    manifest = tmp_path / "split.yaml"
    manifest.write_text(text)
    with pytest.raises(ValueError) as refused:
        generate_split(manifest)
    assert str(refused.value).startswith(f"{manifest}: ") and why in str(refused.value)


def test_a_manifest_writes_beside_itself_with_its_split_name(tmp_path):
    manifest = tmp_path / "split.yaml"
    manifest.write_text(f"generator_version: {GENERATOR_VERSION}\nsplit: holdout\n"
                        "families: [{family: prose, seed: x, count: 2}]\n")
    written = generate_split(manifest)
    assert [p.parent for p in written] == [tmp_path, tmp_path]
    meta = yaml.safe_load((written[0] / "task.yaml").read_text())
    assert meta["generator"]["split"] == "holdout"
    manifest.write_text(f"generator_version: {GENERATOR_VERSION}\n"
                        "families: [{family: prose, seed: x, count: 1}]\n")
    (one,) = generate_split(manifest, tmp_path / "other")
    assert yaml.safe_load((one / "task.yaml").read_text())["generator"]["split"] == "public"


@pytest.mark.parametrize("n", [(1 << 63) + 1, 3 << 62])
def test_below_rejects_the_draws_past_the_last_whole_multiple_of_n(n):
    """No modulo bias: a 64-bit draw at or past the last whole multiple of n is drawn
    again. With n this large a quarter to a half of the draws are, so a limit set anywhere
    else changes the stream at once; worked out here from the raw draws of a twin
    stream."""
    limit = (1 << 64) - (1 << 64) % n
    got, raw = Rng("bias", 1), Rng("bias", 1)
    redrawn = 0
    for _ in range(64):
        while (x := raw._bits()) >= limit:
            redrawn += 1
        assert got.below(n) == x % n
    assert redrawn > 10, "no draw was redrawn: the test proves nothing"


def test_chance_is_a_draw_below_the_percent():
    a, b = Rng("pct"), Rng("pct")
    assert [a.chance(37) for _ in range(3000)] == [b.below(100) < 37 for _ in range(3000)]


def test_the_random_stream_is_fixed_uniform_and_in_range():
    a, b = Rng("f", 1, "s", 0), Rng("f", 1, "s", 0)
    draws = [a.below(10) for _ in range(2000)]
    assert draws == [b.below(10) for _ in range(2000)]
    assert set(draws) == set(range(10))
    counts = [draws.count(v) for v in range(10)]
    assert min(counts) > 150 and max(counts) < 250
    assert [Rng("f", 1, "s", 1).below(1000) for _ in range(3)] != \
        [Rng("f", 1, "s", 0).below(1000) for _ in range(3)]
    assert Rng("a", "b").below(10**12) != Rng("ab").below(10**12), "the key's parts apart"
    r = Rng("x")
    assert all(3 <= r.randint(3, 5) <= 5 for _ in range(200))
    assert {r.randint(3, 5) for _ in range(200)} == {3, 4, 5}
    assert r.below(1) == 0
    for n in (0, -1):
        with pytest.raises(ValueError, match=r"^below\(\) needs n > 0$"):
            r.below(n)
    items = list(range(20))
    shuffled = Rng("y").shuffle(list(items))
    assert sorted(shuffled) == items and shuffled != items
    assert Rng("y").shuffle(list(items)) == shuffled
    picked = Rng("z").sample("abcdef", 3)
    assert len(set(picked)) == 3 and set(picked) <= set("abcdef")
    assert Rng("z").choice("q") == "q"
    assert not any(Rng("c", i).chance(0) for i in range(50))
    assert all(Rng("c", i).chance(100) for i in range(50))
    assert 10 < sum(Rng("c", i).chance(50) for i in range(60)) < 50


def test_a_task_folder_is_written_whole_beside_its_place_then_renamed_in(tmp_path,
                                                                          monkeypatch):
    """write_folder: parents made, nested files, the folder built beside its place (one
    filesystem, so the rename is atomic) under a hidden name, readable by the sandbox's
    agent user (0755), an old folder of the name replaced, and UTF-8 whatever the
    locale."""
    import os
    import stat

    from wirebench.taskgen import spec

    renamed = []
    real_replace = os.replace
    monkeypatch.setattr(spec.os, "replace",
                        lambda a, b: (renamed.append(Path(a)), real_replace(a, b))[1])
    dest = tmp_path / "not" / "yet" / "t1"
    spec.write_folder(dest, {"task.md": "Ω 4k7\n", "wrong/deep/x.json": "{}\n"})
    assert (dest / "task.md").read_bytes() == "Ω 4k7\n".encode()
    assert (dest / "wrong" / "deep" / "x.json").read_text() == "{}\n"
    assert stat.S_IMODE(dest.stat().st_mode) == 0o755
    assert renamed[0].parent == dest.parent and renamed[0].name.startswith(".t1.")
    spec.write_folder(dest, {"task.md": "again\n"})
    assert sorted(p.name for p in dest.iterdir()) == ["task.md"], "the old folder stays"
    assert sorted(p.name for p in dest.parent.iterdir()) == ["t1"]


def test_a_task_folder_that_fails_to_write_leaves_nothing(tmp_path):
    """A write that fails midway leaves neither a half folder nor its scratch copy."""
    from wirebench.taskgen import spec

    with pytest.raises(UnicodeEncodeError):
        spec.write_folder(tmp_path / "t2", {"a.md": "ok\n", "b.md": "\udcff\n"})
    assert list(tmp_path.iterdir()) == []


def test_a_written_file_is_utf8_under_any_locale(tmp_path):
    import subprocess
    import sys

    code = ("import sys; from pathlib import Path; from wirebench.taskgen.spec import "
            "write_folder; write_folder(Path(sys.argv[1]), {'t.md': 'R = 4.7 k\\u03a9\\n'})")
    env = {k: v for k, v in __import__("os").environ.items() if not k.startswith("LC_")}
    proc = subprocess.run([sys.executable, "-c", code, str(tmp_path / "t3")],
                          env={**env, "LANG": "C", "LC_ALL": "C", "PYTHONUTF8": "0"},
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    assert (tmp_path / "t3" / "t.md").read_bytes() == "R = 4.7 kΩ\n".encode()


def test_a_prompt_keeps_its_leading_text_and_ends_with_one_newline():
    from wirebench.taskgen.spec import GeneratedTask, files

    out = files(GeneratedTask(prompt="    indented first line\nbody\n\n\n", meta={},
                              reference={"ops": []}, id="x"))
    assert out["task.md"] == "    indented first line\nbody\n"


def _placed(ops: list[dict], ref: str) -> tuple[int, int]:
    op = next(o for o in ops if o["op"] == "place_component" and o["designator"] == ref)
    return op["x_mil"], op["y_mil"]


def test_a_stubbed_pin_gets_a_wire_away_from_the_part_and_its_label_at_the_end():
    """layout.ops_for, the stub branch (the board tier's and the real tier's parts whose
    labels would overlap): a wire along the pin's own axis, away from the body, long enough
    for the label (60 mil a character and 150, at least 200, on the grid), and the label
    at its end turned to run away from the part (0 right, 90 up, 180 left, 270 down)."""
    from wirebench.taskgen.families.common import libraries
    from wirebench.taskgen.layout import Part, ops_for

    part = Part("R1", "Device:R", "10k", {"1": "SIG_LONG", "2": "GND"}, stub=True)
    ops = ops_for([part], libraries(), None)
    ox, oy = _placed(ops, "R1")
    # Device:R's pin 1 is 150 mil above its origin, pin 2 150 mil below.
    assert [o for o in ops if o["op"] != "place_component"] == [
        {"op": "add_wire", "vertices": [[ox, oy - 150], [ox, oy - 150 - 600]]},
        {"op": "add_net_label", "name": "SIG_LONG", "at": [ox, oy - 750], "rotation": 90},
        {"op": "add_wire", "vertices": [[ox, oy + 150], [ox, oy + 150 + 300]]},
        {"op": "add_net_label", "name": "GND", "at": [ox, oy + 450], "rotation": 270}]


def test_a_stubbed_led_takes_its_cathode_label_on_a_300_mil_wire_and_its_anode_on_the_pin():
    from wirebench.taskgen.families.common import libraries
    from wirebench.taskgen.layout import Part, ops_for

    ops = ops_for([Part("D1", "Device:LED", None, {"1": "K_NET", "2": "A_NET"}, stub=True)],
                  libraries(), None)
    ox, oy = _placed(ops, "D1")
    # Device:LED's cathode (pin 1) is 150 mil left of its origin
    assert [o for o in ops if o["op"] != "place_component"] == [
        {"op": "add_wire", "vertices": [[ox - 150, oy], [ox - 450, oy]]},
        {"op": "add_net_label", "name": "K_NET", "at": [ox - 450, oy]},
        {"op": "add_net_label", "name": "A_NET", "at": "D1.2"}]


def test_a_flagged_supply_pin_gets_its_power_flag_on_the_wire_between_pin_and_label():
    from wirebench.taskgen.families.common import libraries
    from wirebench.taskgen.layout import Part, ops_for

    ops = ops_for([Part("R2", "Device:R", "1k", {"1": "VM", "2": "GND"}, flags=("1",)),
                   Part("R3", "Device:R", "1k", {"1": "VM", "2": "GND"}, rotation=90)],
                  libraries(), None)
    ox, oy = _placed(ops, "R2")
    wire = next(o for o in ops if o["op"] == "add_wire")
    assert wire["vertices"] == [[ox, oy - 150], [ox, oy - 450]]
    (flag,) = [o for o in ops if o["op"] == "place_pwr_flag"]
    fx, fy = flag["at"]
    assert fx == ox and oy - 450 < fy < oy - 150, flag  # on the wire, not at its ends
    assert {"op": "add_net_label", "name": "GND", "at": "R2.2"} in ops
    assert next(o for o in ops if o.get("designator") == "R3")["rotation"] == 90
    assert {"op": "add_net_label", "name": "VM", "at": "R3.1"} in ops, "unflagged: on the pin"


def test_a_part_copy_is_the_same_part_with_its_own_pins():
    from wirebench.taskgen.layout import Part

    part = Part("U1", "Driver:X", "v", {"1": "A"}, rotation=180, stub=True, flags=("VM",))
    twin = part.copy()
    assert twin == part and twin.pins is not part.pins


def test_an_unknown_symbol_is_refused_naming_it():
    from wirebench.taskgen.families.common import libraries
    from wirebench.taskgen.layout import envelope, pin_table

    with pytest.raises(ValueError, match="^Device:NoSuchPart: "):
        pin_table("Device:NoSuchPart", libraries())
    assert envelope([]) == {"protocol_version": 2, "target_format": "kicad", "ops": []}


def test_a_nets_members_are_in_natural_order_named_pins_first():
    from wirebench.taskgen.layout import _pin_order

    members = ["U10.1", "U2.10", "U2.2", "U2.A1", "R1.1", "U2.1"]
    assert sorted(members, key=_pin_order) == ["R1.1", "U2.A1", "U2.1", "U2.2", "U2.10",
                                               "U10.1"]


def test_a_stub_on_a_pin_that_points_sideways_runs_sideways_and_turns_its_label():
    """A flagged LED's pins (left and right of its origin) take the stub branch: each wire
    runs out sideways and its label reads away from the part (180 to the left, 0 to the
    right), with a flag on each wire."""
    from wirebench.taskgen.families.common import libraries
    from wirebench.taskgen.layout import Part, ops_for

    ops = ops_for([Part("D2", "Device:LED", None, {"1": "VM", "2": "VINT"}, flags=("1", "2"))],
                  libraries(), None)
    ox, oy = _placed(ops, "D2")
    labels = [o for o in ops if o["op"] == "add_net_label"]
    assert labels == [
        {"op": "add_net_label", "name": "VM", "at": [ox - 450, oy], "rotation": 180},
        {"op": "add_net_label", "name": "VINT", "at": [ox + 150 + 400, oy], "rotation": 0}]
    assert len([o for o in ops if o["op"] == "place_pwr_flag"]) == 2
