"""The scoring rule, without akcli: named nets by exact membership, '#' pins dropped."""

from wirebench.verify.scoring import compare, observed_named_nets

EXPECTED = {"VIN": frozenset({"R1.1"}), "VOUT": frozenset({"R1.2", "R2.1"}),
            "GND": frozenset({"R2.2"})}


def nets(*entries):
    return {"nets": [{"name": n, "stable_id": f"s{i}", "members": m}
                     for i, (n, m) in enumerate(entries)]}


def test_exact_match_passes():
    got = observed_named_nets(nets(("VIN", ["R1.1"]), ("VOUT", ["R2.1", "R1.2"]),
                                   ("GND", ["R2.2"]), (None, ["R3.1"])))
    verdict = compare(EXPECTED, got)
    assert verdict == {"matched": 3, "expected": 3, "extra_named_nets": [], "score": 1.0,
                       "passed": True, "mismatches": []}


def test_power_symbol_pins_are_not_members():
    got = observed_named_nets(nets(("VIN", ["R1.1"]), ("VOUT", ["R1.2", "R2.1"]),
                                   ("GND", ["#PWR01.1", "R2.2", "#PWR02.1"])))
    assert compare(EXPECTED, got)["passed"]


def test_a_port_on_nothing_is_no_net():
    got = observed_named_nets(nets(("VIN", ["R1.1"]), ("VOUT", ["R1.2", "R2.1"]),
                                   ("GND", ["R2.2"]), ("+5V", ["#PWR03.1"])))
    assert compare(EXPECTED, got)["extra_named_nets"] == []


def test_missing_wrong_and_extra_nets_are_each_reported():
    got = observed_named_nets(nets(("VIN", ["R1.1"]), ("VOUT", ["R1.2", "R3.1"]),
                                   ("SPARE", ["R2.1"])))
    verdict = compare(EXPECTED, got)
    assert verdict["matched"] == 1
    assert verdict["score"] == round(1 / 3, 4) == 0.3333
    assert not verdict["passed"]
    assert verdict["extra_named_nets"] == ["SPARE"]
    assert verdict["mismatches"] == [
        "net 'GND': missing (expected ['R2.2'])",
        "net 'VOUT': missing ['R2.1']; extra ['R3.1']",
        "net 'SPARE': not in the task (members ['R2.1'])",
    ]


def test_extra_named_net_alone_fails_a_full_match():
    got = observed_named_nets(nets(("VIN", ["R1.1"]), ("VOUT", ["R1.2", "R2.1"]),
                                   ("GND", ["R2.2"]), ("DEBUG", ["R9.1"])))
    verdict = compare(EXPECTED, got)
    assert verdict["score"] == 1.0 and not verdict["passed"]


def test_a_netlist_without_nets_or_members_is_empty_not_an_error():
    assert observed_named_nets({}) == {}
    assert observed_named_nets({"nets": [{"name": "VIN"}]}) == {}
    assert compare(EXPECTED, {})["mismatches"][0] == "net 'GND': missing (expected ['R2.2'])"


def test_a_task_with_no_named_nets_scores_one_and_passes_only_when_nothing_extra():
    assert compare({}, {}) == {"matched": 0, "expected": 0, "extra_named_nets": [],
                               "score": 1.0, "passed": True, "mismatches": []}
    assert not compare({}, {"X": frozenset({"R1.1"})})["passed"]


def test_one_name_on_two_nets_is_merged():
    got = observed_named_nets(nets(("VOUT", ["R1.2"]), ("VOUT", ["R2.1", "#PWR1.1"])))
    assert got == {"VOUT": frozenset({"R1.2", "R2.1"})}


def test_not_scored_is_a_zero_that_fails():
    from wirebench.verify.scoring import not_scored

    assert not_scored(4) == {"matched": 0, "expected": 4, "extra_named_nets": [],
                             "score": 0.0, "passed": False, "mismatches": []}
