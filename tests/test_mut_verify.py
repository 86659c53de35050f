"""The board tier's design rules, each kind against right answers and answers wrong on
each of its bounds; values read as schematics write them; the part models and the test
bench as akcli and ngspice take them. The rules judge a drawn netlist (nets.json and the
apply step's facts), so most boards here are written as those files are; the testbench
and part models run real akcli sim on real ngspice. So that every mutant of
verify/design_rules.py, verify/part_models.py, corpus/testbench.py and steps/simulate.py
meets them (benchmarks/mutation_score.py --config verify).
"""

from __future__ import annotations

import pytest

from wirebench.verify.design_rules import Board, check, describe_range, part_value

MCU, CAP, RES = "MCU_Test:Chip", "Device:C", "Device:R"


def board(parts: dict, nets: dict[str | None, list[str]]) -> Board:
    """parts: ref -> (lib_id, value, {pin number: name}); nets: name (None: unnamed) ->
    members, as akcli's nets.json lists them. Power symbols' members (#PWR) are left out
    by the rules, as they are no part."""
    facts = {"parts": {r: {"lib_id": lib, "value": v} for r, (lib, v, _) in parts.items()},
             "pins": {r: pins for r, (_, _, pins) in parts.items()}}
    doc = {"nets": [{"name": name if not str(name).startswith("~") else None,
                     "stable_id": f"net_{i}", "members": members}
                    for i, (name, members) in enumerate(nets.items())]}
    return Board.from_docs(doc, facts)


def two(lib=CAP, value="100n"):
    return (lib, value, {"1": "~", "2": "~"})


CHIP = (MCU, None, {"1": "VDD", "2": "VDD", "3": "GND", "4": "BOOT0", "5": "NC1",
                    "6": "NC2", "7": "CC1", "8": "CC2", "10": "VDDA", "11": "RST"})


# --- values ---------------------------------------------------------------------------------

@pytest.mark.parametrize("text, value", [
    ("100n", 100e-9), ("0.1uF", 0.1e-6), ("4k7", 4700), ("5.1k", 5100), ("1M", 1e6),
    ("1M5", 1.5e6), ("22R", 22), ("4R7", 4.7), ("0R", 0), ("4r7", 4.7), ("22r", 22),
    ("10uF 16V", 10e-6),
    ("500mA", 0.5), ("8 MHz", 8e6), ("100 nF", 100e-9), ("2.2µF", 2.2e-6), ("4.7μF", 4.7e-6),
    ("1meg", 1e6), ("47Ω", 47), ("10 ohms", 10), ("1ohm", 1), ("12pF/50V", 12e-12),
    ("33k,1%", 33e3), ("  220  ", 220), ("1G", 1e9), ("3.3V", 3.3), ("10H", 10),
    ("2A", 2), (6800, 6800), ("4n7", 4.7e-9), ("100", 100)])
def test_a_value_is_read_as_a_schematic_writes_it(text, value):
    assert part_value(text) == pytest.approx(value, rel=1e-9, abs=1e-15)


@pytest.mark.parametrize("text", [None, "", "DNP", "R", "4k7k", "1.5k2", "abc", "k"])
def test_a_value_that_is_no_number_reads_as_none(text):
    assert part_value(text) is None


def test_a_range_reads_low_to_high():
    assert describe_range(["90n", "110n"]) == "90n–110n"


# --- decoupled ------------------------------------------------------------------------------

def _supply(caps: dict, nets_extra=None, chip=CHIP):
    nets = {"+3V3": ["U1.1", "U1.2", *[f"{r}.1" for r in caps]],
            "GND": ["U1.3", *[f"{r}.2" for r in caps], "#PWR01.1"]}
    nets.update(nets_extra or {})
    return board({"U1": chip, **{r: two(CAP, v) for r, v in caps.items()}}, nets)


RULE = {"kind": "decoupled", "part": MCU, "pins": "VDD", "range": ["90n", "110n"]}


def test_stacked_supply_pins_need_a_capacitor_each_within_the_range():
    ok, why = check(RULE, _supply({"C1": "100n", "C2": "0.1u"}))
    assert (ok, why) == (True, "2 pin(s) each with a 90n–110n capacitor to GND")
    ok, why = check(RULE, _supply({"C1": "100n"}))
    assert (ok, why) == (False, "U1 VDD (pin 1), U1 VDD (pin 2) on +3V3: 1 capacitor(s) of "
                                "90n–110n to GND, needs 2")
    ok, why = check(RULE, _supply({"C1": "100n", "C2": "10u", "C3": "1n"}))
    assert (ok, why) == (False, "U1 VDD (pin 1), U1 VDD (pin 2) on +3V3: 1 capacitor(s) of "
                                "90n–110n to GND, needs 2; C2=10u, C3=1n out of range")


@pytest.mark.parametrize("value, ok", [("90n", True), ("110n", True), ("89n", False),
                                       ("111n", False), ("DNP", False)])
def test_a_capacitor_on_each_bound_of_the_range_is_in_and_past_it_is_out(value, ok):
    assert check({**RULE, "each": False}, _supply({"C1": value}))[0] is ok


def test_each_false_asks_one_capacitor_and_min_count_more():
    assert check({**RULE, "each": False}, _supply({"C1": "100n"}))[0] is True
    two_caps = {**RULE, "each": False, "min_count": 2}
    assert check(two_caps, _supply({"C1": "100n"}))[1].endswith("needs 2")
    assert check(two_caps, _supply({"C1": "100n", "C2": "100n"}))[0] is True
    three = {**RULE, "min_count": 3}
    assert check(three, _supply({"C1": "100n", "C2": "100n"}))[1].endswith("needs 3")


def test_a_supply_pin_on_ground_or_on_nothing_is_named():
    grounded = board({"U1": CHIP, "C1": two()}, {"GND": ["U1.1", "U1.2", "U1.3", "C1.2"],
                                                 "+3V3": ["C1.1"]})
    assert check(RULE, grounded) == (False, "U1 VDD (pin 1), U1 VDD (pin 2) is on GND")
    loose = board({"U1": CHIP, "C1": two()}, {"GND": ["U1.3", "C1.2"], "+3V3": ["C1.1"]})
    assert check(RULE, loose) == (False, "U1 VDD (pin 1), U1 VDD (pin 2) is not connected")


def test_a_capacitor_must_reach_the_rules_own_return_net():
    """`to` names the return (default GND); a capacitor to another net does not count,
    and `to` may be another part's pin."""
    caps = _supply({"C1": "100n", "C2": "100n"}, {"AGND": []})
    assert check({**RULE, "to": "AGND"}, caps) == (
        False, "U1 VDD (pin 1), U1 VDD (pin 2) on +3V3: 0 capacitor(s) of 90n–110n to AGND, "
               "needs 2")
    to_pin = {**RULE, "to": {"part": MCU, "pin": "GND"}}
    assert check(to_pin, caps) == (True, "2 pin(s) each with a 90n–110n capacitor to "
                                         "U1 GND (pin 3)")


def test_pins_on_separate_nets_are_judged_net_by_net_in_pin_order():
    chip = (MCU, None, {"2": "VDD", "10": "VDD", "3": "GND"})
    b = board({"U1": chip, "C1": two()}, {"V1": ["U1.10", "C1.1"], "V2": ["U1.2"],
                                          "GND": ["U1.3", "C1.2"]})
    ok, why = check(RULE, b)
    assert not ok
    assert why == "U1 VDD (pin 2) on V2: 0 capacitor(s) of 90n–110n to GND, needs 1"


def test_every_placed_part_of_the_lib_id_is_held_to_the_rule():
    b = board({"U1": CHIP, "U2": CHIP, "C1": two(), "C2": two()},
              {"+3V3": ["U1.1", "U1.2", "C1.1", "C2.1"], "V2": ["U2.1", "U2.2"],
               "GND": ["U1.3", "U2.3", "C1.2", "C2.2"]})
    ok, why = check(RULE, b)
    assert not ok and why == ("U2 VDD (pin 1), U2 VDD (pin 2) on V2: 0 capacitor(s) of "
                              "90n–110n to GND, needs 2")


# --- strap, pulled, series --------------------------------------------------------------------

STRAP = {"kind": "strap", "part": MCU, "pin": "BOOT0", "to": "GND", "range": ["9k", "11k"]}


def _strapped(value="10k", lib=RES, to_net="GND", extra=None):
    nets = {"BOOT": ["U1.4", "R1.1"], to_net: ["R1.2", "U1.3"]}
    nets.update(extra or {})
    return board({"U1": CHIP, "R1": two(lib, value)}, nets)


def test_a_strap_reaches_its_net_through_a_resistor_in_range():
    assert check(STRAP, _strapped()) == (True, "U1 BOOT0 (pin 4) reach GND through a R of "
                                               "9k–11k")
    assert check(STRAP, _strapped("47k")) == (
        False, "U1 BOOT0 (pin 4) does not reach GND through a R of 9k–11k (R1=47k is out "
               "of range)")
    assert check(STRAP, _strapped(lib="Device:R_Small"))[0] is True
    assert check(STRAP, _strapped(lib="Device:R_US"))[0] is True
    assert check(STRAP, _strapped(lib="Device:RC_Filter"))[1].endswith("through a R of 9k–11k")


@pytest.mark.parametrize("value, ok", [("9k", True), ("11k", True), ("8.9k", False),
                                       ("11.1k", False)])
def test_a_strap_on_each_bound_of_its_range(value, ok):
    assert check(STRAP, _strapped(value))[0] is ok


def test_a_strap_tied_straight_or_to_a_missing_net_or_loose_is_named():
    straight = board({"U1": CHIP}, {"GND": ["U1.4", "U1.3"]})
    assert check(STRAP, straight) == (False, "U1 BOOT0 (pin 4) is tied straight to GND")
    assert check({**STRAP, "to": "VBAT"}, _strapped()) == (False, "there is no VBAT")
    loose = board({"U1": CHIP, "R1": two(RES, "10k")}, {"GND": ["R1.2"]})
    assert check(STRAP, loose) == (False, "U1 BOOT0 (pin 4) is not connected")


def test_two_pins_on_one_strap_are_one_strap_for_both():
    """CC1 and CC2 tied to one 5.1 kΩ are one 2.55 kΩ pull-down: each needs its own."""
    rule = {"kind": "pulled", "part": MCU, "pin": "CC?", "to": "GND", "range": ["5k", "5.2k"]}
    shared = board({"U1": CHIP, "R1": two(RES, "5.1k")},
                   {"CC": ["U1.7", "U1.8", "R1.1"], "GND": ["R1.2", "U1.3"]})
    assert check(rule, shared) == (False, "U1 CC1 (pin 7) and U1 CC2 (pin 8) share CC; each "
                                          "needs its own")
    own = board({"U1": CHIP, "R1": two(RES, "5.1k"), "R2": two(RES, "5.1k")},
                {"CC1": ["U1.7", "R1.1"], "CC2": ["U1.8", "R2.1"],
                 "GND": ["R1.2", "R2.2", "U1.3"]})
    assert check(rule, own) == (True, "U1 CC1 (pin 7), U1 CC2 (pin 8) reach GND through a R "
                                      "of 5k–5.2k")


def test_a_pull_up_on_a_named_net_and_a_series_inductor():
    pulled = {"kind": "pulled", "net": "NRST", "to": "+3V3", "range": ["10k", "10k"]}
    b = board({"U1": CHIP, "R1": two(RES, "10k"), "L1": two("Device:L", "10u")},
              {"NRST": ["U1.11", "R1.1"], "+3V3": ["R1.2", "L1.1"], "SW": ["L1.2"]})
    assert check(pulled, b) == (True, "NRST reach +3V3 through a R of 10k–10k")
    assert check({**pulled, "net": "BOOT"}, b) == (False, "BOOT is not connected")
    series = {"kind": "series", "net": "SW", "to": "+3V3", "via": "L", "range": ["4.7u", "22u"]}
    assert check(series, b) == (True, "SW reach +3V3 through a L of 4.7u–22u")
    assert check({**series, "via": "R"}, b)[0] is False
    assert check({**series, "via": "FB"}, b)[1] == ("SW does not reach +3V3 through a FB of "
                                                    "4.7u–22u")


def test_a_strap_to_another_parts_pin():
    rule = {**STRAP, "to": {"part": "Device:Crystal", "pin": "1"}}
    b = board({"U1": CHIP, "R1": two(RES, "10k"), "Y1": ("Device:Crystal", "8M",
                                                          {"1": "1", "2": "2"})},
              {"BOOT": ["U1.4", "R1.1"], "XIN": ["R1.2", "Y1.1"]})
    assert check(rule, b) == (True, "U1 BOOT0 (pin 4) reach Y1 pin 1 through a R of 9k–11k")


@pytest.mark.parametrize("lib, cls", [("Device:C_Polarized", "C"), ("Device:CP", "C"),
                                      ("Device:C_Small", "C"), ("Device:D_Schottky", "D"),
                                      ("Device:Ferrite_Bead", "FB"), ("Device:L_Small", "L"),
                                      ("Device:FerriteBead_Small", "FB")])
def test_a_part_class_is_read_from_its_symbol_name(lib, cls):
    rule = {"kind": "series", "net": "A", "to": "B", "via": cls, "range": ["1", "1"]}
    b = board({"X1": (lib, "1", {"1": "~", "2": "~"})}, {"A": ["X1.2"], "B": ["X1.1"]})
    assert check(rule, b)[0] is True
    other = {"C": "L", "D": "C", "FB": "R", "L": "C"}[cls]
    assert check({**rule, "via": other}, b)[0] is False


# --- connected, no_connect, part ----------------------------------------------------------------

def test_a_pin_is_on_its_net_or_named_where_it_is():
    rule = {"kind": "connected", "part": MCU, "pin": "VDDA", "to": "+3V3"}
    on = board({"U1": CHIP}, {"+3V3": ["U1.10"]})
    assert check(rule, on) == (True, "VDDA of MCU_Test:Chip on +3V3")
    elsewhere = board({"U1": CHIP}, {"~1": ["U1.10", "U1.1"]})
    assert check(rule, elsewhere) == (False, "U1 VDDA (pin 10) is on an unnamed net, not +3V3")
    named = board({"U1": CHIP}, {"+5V": ["U1.10"]})
    assert check(rule, named) == (False, "U1 VDDA (pin 10) is on +5V, not +3V3")
    assert check(rule, board({"U1": CHIP}, {})) == (
        False, "U1 VDDA (pin 10) is on no net, not +3V3")
    same = {"kind": "connected", "part": MCU, "pin": "VDDA", "to": {"part": MCU, "pin": "1"}}
    assert check(same, elsewhere) == (True, "VDDA of MCU_Test:Chip on U1 VDD (pin 1)")


def test_a_pin_may_be_on_any_of_the_alternatives_a_datasheet_allows():
    """A USART's TX on its own pin or its alternate: either will do, and neither is
    said in the verdict when the pin is somewhere else."""
    rule = {"kind": "connected", "part": MCU, "pin": "VDDA",
            "to": [{"part": MCU, "pin": "1"}, "+5V"]}
    assert check(rule, board({"U1": CHIP}, {"~1": ["U1.10", "U1.1"]}))[0]
    assert check(rule, board({"U1": CHIP}, {"+5V": ["U1.10"]})) == (
        True, "VDDA of MCU_Test:Chip on U1 VDD (pin 1) or +5V")
    assert check(rule, board({"U1": CHIP}, {"+3V3": ["U1.10"], "~1": ["U1.1"]})) == (
        False, "U1 VDDA (pin 10) is on +3V3, not U1 VDD (pin 1) or +5V")


def test_pins_to_leave_open_touch_nothing():
    rule = {"kind": "no_connect", "part": MCU, "pins": ["NC1", "NC2"]}
    assert check(rule, board({"U1": CHIP}, {"~a": ["U1.5"]})) == (True, "2 pin(s) left open")
    touching = board({"U1": CHIP, "R1": two(RES), "R2": two(RES), "R3": two(RES),
                      "R4": two(RES)},
                     {"X": ["U1.6", "R4.1", "R3.1", "R2.1", "R1.1", "#PWR1.1"]})
    assert check(rule, touching) == (False, "U1 NC2 (pin 6) must be left open, but is on X "
                                            "with R1.1, R2.1, R3.1")


@pytest.mark.parametrize("count, rule, ok, why", [
    (0, {}, False, "0 Device:LED placed (wants at least 1)"),
    (1, {}, True, "1 Device:LED placed (wants at least 1)"),
    (1, {"min": 2}, False, "1 Device:LED placed (wants at least 2)"),
    (2, {"min": 2, "max": 3}, True, "2 Device:LED placed (wants 2..3)"),
    (3, {"min": 2, "max": 3}, True, "3 Device:LED placed (wants 2..3)"),
    (4, {"min": 2, "max": 3}, False, "4 Device:LED placed (wants 2..3)"),
    (1, {"min": 2, "max": 3}, False, "1 Device:LED placed (wants 2..3)"),
    (0, {"min": 0, "max": 0}, True, "0 Device:LED placed (wants 0..0)"),
    (1, {"max": 1}, True, "1 Device:LED placed (wants 1..1)"),
    (2, {"max": 1}, False, "2 Device:LED placed (wants 1..1)"),
])
def test_a_part_count_on_each_of_its_bounds(count, rule, ok, why):
    b = board({f"D{i}": ("Device:LED", "red", {}) for i in range(1, count + 1)} |
              {"R1": two(RES)}, {})
    assert check({"kind": "part", "part": "Device:LED", **rule}, b) == (ok, why)


def test_a_rule_that_cannot_be_judged_says_why():
    rule = {"kind": "connected", "part": "MCU_Other:Chip", "pin": "VDD", "to": "+3V3"}
    assert check(rule, board({"U1": CHIP}, {})) == (False, "no MCU_Other:Chip is placed")
    rule = {"kind": "connected", "part": MCU, "pin": "VBAT", "to": "+3V3"}
    assert check(rule, board({"U1": CHIP}, {})) == (False, "U1 (MCU_Test:Chip) has no pin "
                                                           "'VBAT'")
    assert check({**RULE, "pins": "9"}, _supply({}))[1] == "U1 (MCU_Test:Chip) has no pin '9'"


def test_a_pin_is_found_by_its_number_and_named_by_it_when_it_has_no_name():
    chip = (MCU, None, {"1": "1", "2": None, "3": "GND"})
    rule = {"kind": "connected", "part": MCU, "pin": "1", "to": "GND"}
    b = board({"U1": chip}, {"X": ["U1.1"], "Y": ["U1.2"]})
    assert check(rule, b) == (False, "U1 pin 1 is on X, not GND")
    assert check({**rule, "pin": "2"}, b) == (False, "U1 pin 2 is on Y, not GND")


def test_parts_and_pins_are_taken_in_natural_order():
    chip = (MCU, None, {"10": "VDD", "9": "VDD", "3": "GND"})
    b = board({"U10": chip, "U9": chip}, {"GND": ["U9.3", "U10.3"]})
    ok, why = check({**RULE, "each": False}, b)
    assert why == ("U9 VDD (pin 9), U9 VDD (pin 10), U10 VDD (pin 9), U10 VDD (pin 10) is "
                   "not connected")


def test_a_netlist_without_stable_ids_and_with_power_symbols_still_reads():
    doc = {"nets": [{"name": "GND", "members": ["U1.3", "#PWR01.1"]},
                    {"name": "+3V3", "members": ["U1.10"]}]}
    b = Board.from_docs(doc, {"parts": {"U1": {"lib_id": MCU}}, "pins": {"U1": CHIP[2]}})
    assert check({"kind": "connected", "part": MCU, "pin": "VDDA", "to": "+3V3"}, b)[0]
    assert check({"kind": "connected", "part": MCU, "pin": "GND", "to": "+3V3"}, b) == (
        False, "U1 GND (pin 3) is on GND, not +3V3")
    nc = {"kind": "no_connect", "part": MCU, "pins": ["GND"]}
    assert check(nc, b)[0] is True, "a power symbol is no connection"


# --- divider ----------------------------------------------------------------------------------

REG = ("Regulator:Buck", None, {"1": "VIN", "2": "GND", "9": "EN", "10": "FB"})
UVLO = {"kind": "divider", "part": "Regulator:Buck", "pin": "EN", "top": "+24V",
        "ref": "1.2", "range": ["11", "13"]}


def _divided(top="90k", bottom=("10k",), extra_nets=None):
    parts = {"U1": REG, "R1": two(RES, top)}
    nets = {"+24V": ["R1.1", "U1.1"], "EN": ["U1.9", "R1.2"], "GND": ["U1.2"]}
    for i, value in enumerate(bottom, start=2):
        parts[f"R{i}"] = two(RES, value)
        nets["EN"].append(f"R{i}.1")
        nets["GND"].append(f"R{i}.2")
    nets.update(extra_nets or {})
    return board(parts, nets)


def test_a_divider_sets_its_net_where_the_pin_reaches_its_threshold():
    """1.2 V × (1 + 90k / 10k) = 12 V: the converter turns on at 12 V."""
    assert check(UVLO, _divided()) == (
        True, "U1 EN (pin 9) reaches 1.2 with +24V at 12 (90k to +24V, 10k to GND)")
    assert check({**UVLO, "range": ["20", "25"]}, _divided()) == (
        False, "U1 EN (pin 9) reaches 1.2 with +24V at 12 (90k to +24V, 10k to GND); "
               "needs 20–25")
    # Two resistors to ground in parallel: 20k || 20k is 10k.
    assert check(UVLO, _divided(bottom=("20k", "20k")))[0] is True
    assert check(UVLO, _divided(top="1.5M", bottom=("100k",)))[1].startswith(
        "U1 EN (pin 9) reaches 1.2 with +24V at 19.2 (1.5M to +24V, 100k to GND)")


@pytest.mark.parametrize("window, ok", [(["12", "12"], True), (["12.01", "13"], False),
                                        (["11", "11.99"], False), (["11", "12"], True),
                                        (["12", "13"], True)])
def test_a_divider_on_each_bound_of_its_range(window, ok):
    assert check({**UVLO, "range": window}, _divided())[0] is ok


def test_a_threshold_spread_must_land_inside_the_range_at_both_ends():
    spread = {**UVLO, "ref": ["1.1", "1.3"]}
    assert check({**spread, "range": ["11", "13"]}, _divided()) == (
        True, "U1 EN (pin 9) reaches 1.1–1.3 with +24V at 11–13 (90k to +24V, 10k to GND)")
    assert check({**spread, "range": ["11.5", "13"]}, _divided())[0] is False
    assert check({**spread, "range": ["11", "12.5"]}, _divided())[0] is False


def test_a_divider_that_cannot_be_reckoned_says_why():
    no_bottom = board({"U1": REG, "R1": two(RES, "90k")},
                      {"+24V": ["R1.1"], "EN": ["U1.9", "R1.2"], "GND": ["U1.2"]})
    assert check(UVLO, no_bottom) == (False, "U1 EN (pin 9) has no resistor to GND")
    blank = _divided(bottom=("DNP",))
    assert check(UVLO, blank) == (False, "U1 EN (pin 9): R2 to GND without a value")
    tied = board({"U1": REG}, {"+24V": ["U1.9", "U1.1"], "GND": ["U1.2"]})
    assert check(UVLO, tied) == (False, "U1 EN (pin 9) is tied straight to +24V")
    grounded = board({"U1": REG, "R1": two(RES, "90k")},
                     {"+24V": ["R1.1"], "GND": ["U1.9", "R1.2", "U1.2"]})
    assert check(UVLO, grounded) == (False, "U1 EN (pin 9) is tied straight to GND")
    assert check({**UVLO, "top": "+12V"}, _divided()) == (False, "there is no +12V")
    assert check({**UVLO, "bottom": "AGND"}, _divided()) == (False, "there is no AGND")
    loose = board({"U1": REG}, {"GND": ["U1.2"]})
    assert check(UVLO, loose) == (False, "U1 EN (pin 9) is not connected")
    # A resistor to a third net is none of the divider's.
    stray = _divided(extra_nets={"X": ["R9.1"]})
    assert check(UVLO, stray)[0] is True


def test_a_dividers_bottom_may_be_a_pin_and_defaults_to_ground():
    rule = {**UVLO, "bottom": {"part": "Regulator:Buck", "pin": "GND"}}
    assert check(rule, _divided()) == (
        True, "U1 EN (pin 9) reaches 1.2 with +24V at 12 (90k to +24V, 10k to U1 GND (pin 2))")


@pytest.mark.parametrize("ohms, text", [(470, "470"), (999, "999"), (1000, "1k"),
                                        (4700, "4.7k"), (999_999, "1000k"),
                                        (1_000_000, "1M"), (1_500_000, "1.5M")])
def test_a_resistance_is_said_as_a_schematic_says_it(ohms, text):
    from wirebench.verify.design_rules import _ohms

    assert _ohms(ohms) == text


# --- several findings at once ---------------------------------------------------------------

def test_every_wrong_pin_of_a_rule_is_named_in_one_line():
    chip = (MCU, None, {"1": "VDD", "2": "VDD", "3": "GND", "5": "NC1", "6": "NC2",
                        "10": "VDDA"})
    b = board({"U1": chip, "R1": two(RES)}, {"A": ["U1.1", "U1.10"], "B": ["U1.2"],
                                              "X": ["U1.5", "R1.1"], "Y": ["U1.6", "R1.2"],
                                              "GND": ["U1.3"]})
    assert check({"kind": "connected", "part": MCU, "pin": "VDD*", "to": "+3V3"}, b) == (
        False, "U1 VDD (pin 1) is on A, not +3V3; U1 VDD (pin 2) is on B, not +3V3; "
               "U1 VDDA (pin 10) is on A, not +3V3")
    assert check({"kind": "no_connect", "part": MCU, "pins": ["NC1", "NC2"]}, b) == (
        False, "U1 NC1 (pin 5) must be left open, but is on X with R1.1; U1 NC2 (pin 6) "
               "must be left open, but is on Y with R1.2")
    assert check({**RULE, "pins": "VDD*"}, b) == (
        False, "U1 VDD (pin 1), U1 VDDA (pin 10) on A: 0 capacitor(s) of 90n–110n to GND, "
               "needs 2; U1 VDD (pin 2) on B: 0 capacitor(s) of 90n–110n to GND, needs 1")
    both = {"kind": "connected", "part": MCU, "pin": "VDDA",
            "to": {"part": MCU, "pin": "VDD"}}
    assert check(both, b) == (True, "VDDA of MCU_Test:Chip on U1 VDD (pin 1) / "
                                    "U1 VDD (pin 2)")


# --- assigned: a pin multiplexer's choices --------------------------------------------------

DRV = ("Driver_Test:Bridge", None, {"1": "IN1", "2": "IN2", "3": "IN3"})
MUX = ("MCU_Test:Mux", None, {"10": "PA4", "11": "PA6", "12": "PA7", "13": "PA5", "14": "PB1"})
PWM = {"kind": "assigned", "part": "Driver_Test:Bridge", "pins": ["IN1", "IN2"],
       "to_part": "MCU_Test:Mux", "function": "a timer channel",
       "choices": {"PA4": ["TIM14_CH1"], "PA6": ["TIM3_CH1"], "PA7": ["TIM3_CH2", "TIM14_CH1"],
                   "PB1": ["TIM14_CH1"]}}


def test_each_pin_reaches_a_choice_of_its_own():
    ok = board({"U1": DRV, "U2": MUX}, {"~a": ["U1.1", "U2.10"], "~b": ["U1.2", "U2.11"]})
    assert check(PWM, ok) == (True, "U1 IN1 (pin 1) on PA4; U1 IN2 (pin 2) on PA6")
    no_timer = board({"U1": DRV, "U2": MUX}, {"~a": ["U1.1", "U2.13"], "~b": ["U1.2", "U2.11"]})
    assert check(PWM, no_timer) == (
        False, "U1 IN1 (pin 1) is on PA5, which gives none of a timer channel")
    loose = board({"U1": DRV, "U2": MUX}, {"~a": ["U1.1"], "~b": ["U1.2", "U2.11"]})
    assert check(PWM, loose) == (False, "U1 IN1 (pin 1) reaches no pin of MCU_Test:Mux")
    shared = board({"U1": DRV, "U2": MUX}, {"~a": ["U1.1", "U1.2", "U2.10"]})
    assert check(PWM, shared) == (False, "PA4 carries two of IN1, IN2")
    both = board({"U1": DRV, "U2": MUX}, {"~a": ["U1.1", "U2.10", "U2.11"],
                                          "~b": ["U1.2", "U2.12"]})
    assert check(PWM, both) == (False, "U1 IN1 (pin 1) is on PA4, PA6 at once")
    assert check(PWM, board({"U1": DRV}, {}))[1] == "no MCU_Test:Mux is placed"


def test_pins_whose_only_functions_collide_cannot_be_set_apart():
    """PA4 and PB1 each give only TIM14_CH1: one channel cannot drive two inputs apart.
    PA4 with PA7 can (PA7 takes TIM3_CH2), whichever order the pins come in."""
    collide = board({"U1": DRV, "U2": MUX}, {"~a": ["U1.1", "U2.10"], "~b": ["U1.2", "U2.14"]})
    assert check(PWM, collide) == (
        False, "PA4, PB1 cannot each give a timer channel of its own: PA4 gives only "
               "TIM14_CH1; PB1 gives only TIM14_CH1")
    for first, second in (("12", "10"), ("10", "12")):
        apart = board({"U1": DRV, "U2": MUX}, {"~a": ["U1.1", f"U2.{first}"],
                                               "~b": ["U1.2", f"U2.{second}"]})
        assert check(PWM, apart)[0], (first, second)
    # three pins: PA7 must give way (augmenting path) for PA4 and PB1 ... which collide
    three = {**PWM, "pins": ["IN1", "IN2", "IN3"]}
    chain = board({"U1": DRV, "U2": MUX}, {"~a": ["U1.1", "U2.12"], "~b": ["U1.2", "U2.10"],
                                           "~c": ["U1.3", "U2.11"]})
    assert check(three, chain)[0]


def test_an_assignment_without_a_function_name_says_what_it_lacks_plainly():
    rule = {k: v for k, v in PWM.items() if k != "function"}
    no_timer = board({"U1": DRV, "U2": MUX}, {"~a": ["U1.1", "U2.13"], "~b": ["U1.2", "U2.11"]})
    assert check(rule, no_timer)[1] == (
        "U1 IN1 (pin 1) is on PA5, which gives none of the functions asked")
    collide = board({"U1": DRV, "U2": MUX}, {"~a": ["U1.1", "U2.10"], "~b": ["U1.2", "U2.14"]})
    assert check(rule, collide)[1].startswith("PA4, PB1 cannot each give a function of its own")


# --- either: ways a datasheet allows alike ---------------------------------------------------

BRIDGE = ("Interface_Test:Bridge", None, {"1": "VCC", "2": "V3", "3": "TXD"})
LEVELS = {"kind": "either", "of": [
    [{"id": "at-3v3", "kind": "connected", "part": "Interface_Test:Bridge", "pin": "VCC",
      "to": "+3V3"},
     {"id": "v3-tied", "kind": "connected", "part": "Interface_Test:Bridge", "pin": "V3",
      "to": "+3V3"}],
    [{"id": "divided", "kind": "divider", "part": MCU, "pin": "RX",
      "top": {"part": "Interface_Test:Bridge", "pin": "TXD"}, "ref": 3.3,
      "range": [4.6, 7.4]}]]}
LEVEL_CHIP = (MCU, None, {"3": "GND", "7": "RX"})


def test_either_passes_on_any_way_whose_rules_all_hold():
    at_3v3 = board({"U1": LEVEL_CHIP, "U2": BRIDGE},
                   {"+3V3": ["U2.1", "U2.2"], "~rx": ["U2.3", "U1.7"], "GND": ["U1.3"]})
    assert check(LEVELS, at_3v3) == (
        True, "at-3v3: VCC of Interface_Test:Bridge on +3V3; v3-tied: V3 of "
              "Interface_Test:Bridge on +3V3")
    divided = board({"U1": LEVEL_CHIP, "U2": BRIDGE, "R1": ("Device:R", "1k", {}),
                     "R2": ("Device:R", "2k", {})},
                    {"+5V": ["U2.1"], "~v3": ["U2.2"], "~tx": ["U2.3", "R1.1"],
                     "~rx": ["U1.7", "R1.2", "R2.1"], "GND": ["U1.3", "R2.2"]})
    ok, why = check(LEVELS, divided)
    assert ok and why.startswith("divided: U1 RX (pin 7) reaches 3.3 with U2 TXD (pin 3) at 4.95")


def test_either_fails_naming_the_first_rule_each_way_breaks():
    at_5v = board({"U1": LEVEL_CHIP, "U2": BRIDGE},
                  {"+5V": ["U2.1"], "~v3": ["U2.2"], "~rx": ["U2.3", "U1.7"], "GND": ["U1.3"]})
    assert check(LEVELS, at_5v) == (
        False, "no way holds: at-3v3: U2 VCC (pin 1) is on +5V, not +3V3 | divided: U1 RX "
               "(pin 7) is tied straight to U2 TXD (pin 3)")
    half = board({"U1": LEVEL_CHIP, "U2": BRIDGE},
                 {"+3V3": ["U2.1"], "~v3": ["U2.2"], "~rx": ["U2.3", "U1.7"], "GND": ["U1.3"]})
    assert check(LEVELS, half)[1].startswith(
        "no way holds: v3-tied: U2 V3 (pin 2) is on an unnamed net, not +3V3 | divided: ")
    alien = {"kind": "either", "of": [[{"id": "x", "kind": "values", "values": {}}]]}
    assert check(alien, half) == (False, "no way holds: x: values is not a design rule")


def test_a_lone_series_resistor_is_not_the_top_of_a_divider():
    rule = {"kind": "series", "part": MCU, "pin": "RX", "alone": True, "range": [300, "47k"],
            "to": {"part": "Interface_Test:Bridge", "pin": "TXD"}}
    nets = {"+5V": ["U2.1"], "~tx": ["U2.3", "R1.1"], "~rx": ["U1.7", "R1.2"], "GND": ["U1.3"]}
    parts = {"U1": LEVEL_CHIP, "U2": BRIDGE, "R1": ("Device:R", "1k", {})}
    assert check(rule, board(parts, nets)) == (
        True, "U1 RX (pin 7) reach U2 TXD (pin 3) through a R of 300–47k")
    nets = {**nets, "~rx": ["U1.7", "R1.2", "R2.1"], "GND": ["U1.3", "R2.2"]}
    assert check(rule, board({**parts, "R2": ("Device:R", "1k", {})}, nets)) == (
        False, "U1 RX (pin 7) also has R2 on it; its R to U2 TXD (pin 3) must be the only one")
    assert check({**rule, "alone": False}, board({**parts, "R2": ("Device:R", "1k", {})},
                                                 nets))[0]


VBUS_RULE = {"kind": "capacitance", "nets": ["VBUS", "+5V"], "to": "GND",
             "range": ["1u", "10u"]}


def test_capacitance_sums_every_capacitor_the_rails_present():
    """USB 2.0's 10 µF at attach is the sum over VBUS and the fused rail: a 10 µF bulk
    passes alone and fails with the regulator's 1 µF beside it, on the other rail."""
    parts = {"C1": two(value="4.7u"), "C2": two(value="100n"), "C3": two(value="1u"),
             "C4": two(value="22u"), "F1": ("Device:Polyfuse", "500mA", {})}
    nets = {"VBUS": ["C1.1", "F1.1"], "+5V": ["F1.2", "C2.1", "C3.1"],
            "+3V3": ["C4.1"], "GND": ["C1.2", "C2.2", "C3.2", "C4.2"]}
    assert check(VBUS_RULE, board(parts, nets)) == (
        True, "5.8 µF from VBUS and +5V to GND (C1=4.7u, C2=100n, C3=1u)")
    parts["C1"] = two(value="10u")
    assert check(VBUS_RULE, board(parts, nets)) == (
        False, "11.1 µF from VBUS and +5V to GND (C1=10u, C2=100n, C3=1u), needs 1u–10u")
    del parts["C2"], parts["C3"]
    nets["+5V"] = ["F1.2"]
    assert check(VBUS_RULE, board(parts, nets)) == (  # the bound itself passes
        True, "10 µF from VBUS and +5V to GND (C1=10u)")
    low = {"VBUS": ["C1.1"], "GND": ["C1.2"]}
    assert check(VBUS_RULE, board({"C1": two(value="1u")}, low)) == (  # and the low one
        True, "1 µF from VBUS and +5V to GND (C1=1u)")
    assert check(VBUS_RULE, board({"C1": two(value="100n")}, low)) == (
        False, "100 nF from VBUS and +5V to GND (C1=100n), needs 1u–10u")
    analog = {**VBUS_RULE, "to": "AGND"}  # `to` is the other side, not always GND
    assert check(analog, board({"C1": two(value="4.7u")}, {"VBUS": ["C1.1"],
                                                            "AGND": ["C1.2"]})) == (
        True, "4.7 µF from VBUS and +5V to AGND (C1=4.7u)")
    nets = {"VBUS": ["F1.1"], "GND": []}
    assert check(VBUS_RULE, board({"F1": parts["F1"]}, nets)) == (
        False, "0 F from VBUS and +5V to GND (no capacitor), needs 1u–10u")
    assert check(VBUS_RULE, board({}, {"GND": []})) == (
        False, "there is no net named VBUS or +5V")
    unread = {"C1": two(value="big"), "F1": parts["F1"]}
    assert check(VBUS_RULE, board(unread, {"VBUS": ["C1.1"], "GND": ["C1.2"]})) == (
        False, "C1=big on VBUS and +5V: no value a schematic would read")


def test_a_strap_names_every_pin_it_finds_wrong_and_a_board_may_have_no_nets():
    rule = {"kind": "strap", "part": MCU, "pin": "CC?", "to": "GND", "range": ["4.6k", "5.6k"]}
    open_cc = board({"U1": CHIP}, {"GND": ["U1.3"]})
    assert check(rule, open_cc) == (
        False, "U1 CC1 (pin 7) is not connected; U1 CC2 (pin 8) is not connected")
    empty = Board.from_docs({}, {"parts": {}, "pins": {}})  # akcli found no net at all
    assert empty.members == {} and empty.net_of == {}
