"""The op-list path guard's messages: every path-like field that would leave the pair's
folder is named with its JSON path; plain relative paths and names pass."""

from __future__ import annotations

import pytest

from wirebench.verify.oplist_guard import path_problems

STAY = "paths in an op-list must stay inside the pair's folder"


@pytest.mark.parametrize("value, why", [
    ("", "is empty or holds a NUL or backslash"),
    ("lib\x00.kicad_sym", "is empty or holds a NUL or backslash"),
    ("..\\lib.kicad_sym", "is empty or holds a NUL or backslash"),
    ("/etc/passwd", "is absolute"),
    ("~/lib.kicad_sym", "is absolute"),
    ("C:/lib.kicad_sym", "is absolute"),
    ("C:", "is absolute"),
    ("libs/../../other/lib.kicad_sym", "climbs out with '..'"),
    ("..", "climbs out with '..'"),
])
def test_a_path_that_leaves_the_pair_is_named_with_its_reason(value, why):
    ops = {"ops": [{"op": "place_component", "symbol_source": value}]}
    assert path_problems(ops) == [
        f"PATH_OUTSIDE_PAIR: $.ops[0].symbol_source = {value!r} {why}; {STAY}"]


@pytest.mark.parametrize("value", ["lib.kicad_sym", "libs/a/b.kicad_sym", "..lib", "a..b/c",
                                   "x", "./sub.kicad_sch"])
def test_plain_relative_paths_pass(value):
    assert path_problems({"ops": [{"op": "add_sheet", "file": value}],
                          "sheets": {"s": {"file": value}}}) == []


def test_nested_fields_are_found_wherever_they_are():
    doc = {"sheets": {"power": {"file": "/tmp/x.kicad_sch"}},
           "ops": [{"op": "a"}, {"op": "b", "params": [{"file": "../y"}]}],
           "file": {"not": "a path"}, "symbol_source": 7}
    assert path_problems(doc) == [
        f"PATH_OUTSIDE_PAIR: $.sheets.power.file = '/tmp/x.kicad_sch' is absolute; {STAY}",
        f"PATH_OUTSIDE_PAIR: $.ops[1].params[0].file = '../y' climbs out with '..'; {STAY}"]


@pytest.mark.parametrize("run_id, ok", [
    ("run-1_a", True), (None, True), ("a/b", False), ("..", False), ("", False),
    ("r\u00fcn", False), (7, False), ("a b", False)])
def test_run_id_must_be_a_plain_ascii_name(run_id, ok):
    problems = path_problems({"run_id": run_id})
    assert problems == ([] if ok else [
        f"PATH_OUTSIDE_PAIR: $.run_id = {run_id!r} must be a plain name (letters, digits, "
        "'-', '_'): akcli makes a folder of it"])


def test_lists_at_the_top_are_walked_too():
    assert path_problems([{"file": "/a"}], "ops") == [
        f"PATH_OUTSIDE_PAIR: ops[0].file = '/a' is absolute; {STAY}"]
