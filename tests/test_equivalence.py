"""Relabel-tolerant equivalence on hand-written netlists: renaming nets or renumbering
parts keeps the circuit; a moved pin, a swapped part type or an extra wire does not."""

from __future__ import annotations

from wirebench.verify.equivalence import part_type, relabel_equivalent

# A divider with a bypass capacitor: VIN - R1 - VOUT - R2 - GND, C1 across R2.
EXPECTED = {"VIN": frozenset({"R1.1"}), "VOUT": frozenset({"R1.2", "R2.1", "C1.1"}),
            "GND": frozenset({"R2.2", "C1.2"})}


def doc(*nets):
    return {"nets": [{"name": f"N{i}", "members": list(m)} for i, m in enumerate(nets)]}


def test_part_type_is_the_designators_letters():
    assert [part_type(r) for r in ("R12", "u3", "SW1", "#PWR01", "1X")] == [
        "R", "U", "SW", "#PWR01", "1X"]


def test_renamed_nets_and_renumbered_parts_are_the_same_circuit():
    # R1 and R2 swap numbers, C1 becomes C7, and the nets lose their names
    assert relabel_equivalent(EXPECTED, doc(["R2.1"], ["R2.2", "R1.1", "C7.1"],
                                            ["R1.2", "C7.2", "#PWR1.1"]))


def test_one_pin_nets_and_power_pins_say_nothing_about_connectivity():
    assert relabel_equivalent(EXPECTED, doc(["R1.2", "R2.1", "C1.1"], ["R2.2", "C1.2"],
                                            ["R1.1", "#PWR2.1"], ["R5.1"], []))


def test_a_moved_pin_a_swapped_type_or_an_extra_wire_is_another_circuit():
    reversed_cap = doc(["R1.2", "R2.1", "C1.2"], ["R2.2", "C1.1"])
    as_resistor = doc(["R1.2", "R2.1", "R3.1"], ["R2.2", "R3.2"])
    shorted = doc(["R1.2", "R2.1", "C1.1", "R2.2", "C1.2"])
    extra = doc(["R1.2", "R2.1", "C1.1"], ["R2.2", "C1.2"], ["R1.1", "R9.1"])
    for wrong in (reversed_cap, as_resistor, shorted, extra):
        assert not relabel_equivalent(EXPECTED, wrong)


def test_pin_sets_on_a_net_must_match_not_just_the_part():
    """U1 with pins 1 and 2 on one net is not U1 with pins 1 and 3 there."""
    want = {"A": frozenset({"U1.1", "U1.2", "R1.1"}), "B": frozenset({"U1.3", "R1.2"})}
    assert relabel_equivalent(want, doc(["U4.2", "U4.1", "R6.1"], ["R6.2", "U4.3"]))
    assert not relabel_equivalent(want, doc(["U1.1", "U1.3", "R1.1"], ["R1.2", "U1.2"]))


def test_an_empty_or_missing_netlist_matches_only_an_empty_task():
    assert relabel_equivalent({}, {})
    assert not relabel_equivalent(EXPECTED, {})
    assert not relabel_equivalent(EXPECTED, {"nets": [{"name": "X"}]})


def test_a_pin_number_may_hold_a_dot():
    """KiCad pin numbers are any text; a designator never holds a dot, so the first dot
    splits: U1.P.2 is pin P.2 of U1, the same part as U1.1."""
    want = {"A": frozenset({"U1.1", "R1.1"}), "B": frozenset({"U1.P.2", "R1.2"})}
    assert relabel_equivalent(want, doc(["U5.1", "R3.1"], ["U5.P.2", "R3.2"]))
    assert not relabel_equivalent(want, doc(["U7.1", "R1.1"], ["U9.P.2", "R1.2"]))
