"""Every value a task states for a part is checked, so that no future task can forget it.

Nets alone let 01-divider pass with R2 = 4k7 where its text says 10k. So this reads every
task's text for the part values it states and asks that something checks each one:

  transcription, edit   the task names the designators, so a `values` criterion must
                        hold every stated part at its stated value
  repair                the base sheet names the designators: a part the text gives a
                        value (`Amplifier:OpAmp_Single` with value `GP`) is held to it
  design                the agent picks its own designators and values, so there is no
                        part a `values` criterion could name; only a designator the text
                        does fix (`R1 (10k, ...)`) would need one. The model values the
                        text names (`GP`, `red`) are what the simulation is run with.
  board                 the agent picks its designators too: a stated value must lie in
                        the range of a design rule of its part's class (a 10 kΩ pull-up,
                        a strap in [9k, 11k]), or be one of BOARD_EXCEPTIONS, with why
  refusals              a task that expects no drawing has no part to check

What counts as a stated value, and what does not (each rule is there to keep the scan
quiet where no part's value is meant):
  - `REF (VALUE, `lib_id`)`, the netlist-export form every transcription family uses;
    `- REF: VALUE kind, `lib_id`` in a parts list; `REF` followed within a few words by
    a value (`R1, 31.6k`, `C1 = 100n`, `R3 to R6 (10k each`);
  - any value with an SI prefix or the unit of a part (100n, 4k7, 1 kΩ, 10 µF, 4.7 µH),
    anywhere in the text: its number must be one a criterion checks;
  - a crystal's frequency (`8 MHz crystal`); every other frequency is a signal's;
  - never a voltage (a rail, a level, a zener written 3.3 V), a current (a load, a
    budget: a fuse's rating appears in its part's own line), a time, a percentage or a
    bare number (a pin, a coordinate, a count); never text in backquotes (net names and
    lib_ids such as `+3V3` or `Conn_01x04`);
  - not a part marked DNP (not fitted: drawing it fails on its nets), not a prose task's
    History section (it states the values an old revision had), not a crystal's CL or
    the board's stray capacitance (figures to size the load capacitors from).
"""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest
from conftest import REPO, TASKS

from wirebench.corpus.tasks import discover, load_task
from wirebench.verify.criteria import same_value
from wirebench.verify.design_rules import CLASSES, part_value

SPLIT = REPO / "splits" / "public"
REF = r"\b([A-Z]{1,2}\d{1,3})\b"
# A value as a schematic writes it: 4k7, 0R2, 22R; or a number with an SI prefix and/or a
# part's unit. Not preceded by a letter, a digit, a point or a dash (STM32F030, AP2112K-3.3).
_RKM = r"\d+[kKMRrpnuµμ]\d+|\d+R"
_NUM = r"\d+(?:\.\d+)?"
_PREFIX = r"meg|[pnuµμmkKMG]"
_UNIT = r"Ω|ohms?|Hz|F|H|A|V"
TOKEN = re.compile(rf"(?<![\w.−-])(?:(?P<rkm>{_RKM})|(?P<num>{_NUM})\s?(?P<prefix>{_PREFIX})?"
                   rf"(?P<unit>{_UNIT})?)(?!\w|\.\d)")
CRYSTAL = re.compile(rf"(?<![\w.])({_NUM}\s?[kM]Hz)\s+crystal")
NETLIST_LINE = re.compile(REF + r" \(([^,()`]+?), `[^`]+:[^`]+`")
# "R3 to R6 (10k each": every designator of the run.
RUN_OF_PARTS = re.compile(r"\b([A-Z]{1,2})(\d{1,3}) to \1(\d{1,3}) \((\S+) each\b")
PARTS_LIST = re.compile(r"^- " + REF + r": (\S+) [\w ]+, `[^`]+:[^`]+`", re.M)
NOT_FITTED = re.compile(r"\bDNP\b|not fitted", re.I)
CRYSTAL_FIGURES = re.compile(r"\bCL\b|load capacitance CL|stray", re.I)

# Board values no design rule can hold without checking more than the text says, each
# with why. A key is (task id, the value as the text writes it).
LED_SERIES = ("an LED's series resistor may sit on its anode or its cathode side; a rule "
              "names one pin pair, so it would fail the other, equally right, drawing")
CRYSTAL_FREQUENCY = ("no rule reads a crystal's frequency; the load capacitors sized from "
                     "it are checked (xtal-load)")
BOARD_EXCEPTIONS: dict[tuple[str, str], str] = {
    **{(task, value): LED_SERIES for task, value in [
        ("b01-stm32f030-minimum", "1kΩ"), ("b03-usb-c-sink", "2.2kΩ"),
        ("b03-usb-c-sink", "1kΩ"), ("b04-i2c-sensor-board", "1kΩ"),
        ("b05-rs485-node", "1kΩ"), ("b06-motor-driver", "1kΩ"),
        ("b06-motor-driver", "4.7kΩ"), ("b07-li-ion-charger", "1kΩ"),
        ("b08-buck-3v3", "4.7kΩ"), ("b08-buck-3v3", "1kΩ"), ("b11-can-node", "1kΩ"),
        ("b12-usb-uart-bridge", "1kΩ"),
        ("b13-rs485-motor-node", "1kΩ"), ("b14-rs485-motor-sensor-node", "1kΩ"),
        ("b15-usb-climate-logger", "1kΩ"), ("b16-usb-robot-controller", "1kΩ")]},
    ("b01-stm32f030-minimum", "8MHz"): CRYSTAL_FREQUENCY,
    ("b02-rp2040-minimum", "12MHz"): CRYSTAL_FREQUENCY,
    ("b10-edit-fix-boot-and-clock", "8MHz"): CRYSTAL_FREQUENCY,
    ("b15-usb-climate-logger", "8MHz"): CRYSTAL_FREQUENCY,
    ("b16-usb-robot-controller", "12MHz"): CRYSTAL_FREQUENCY,
}
# A rule holds a stated value when its range is the value with a part's tolerance, no
# wider: a datasheet's [1u, 22u] for an LDO's output does not hold the task's 10 µF.
TIGHT = 1.25


def _values_map(task) -> dict[str, str]:
    out: dict[str, str] = {}
    for c in task.criteria:
        if c["kind"] == "values":
            out.update(c["values"])
    return out


def _prose(text: str) -> str:
    """The text a scan reads: no backquoted names, no DNP lines, no History section."""
    text = re.sub(r"^## History\n.*?(?=^#|\Z)", "", text, flags=re.M | re.S)
    text = "\n".join(line for line in text.splitlines() if not NOT_FITTED.search(line))
    return text


def _token_value(m: re.Match) -> str | None:
    """The token as a part value, or None when it is no part's (a voltage, a current, a
    signal's frequency, a bare number)."""
    if m["rkm"]:
        return m["rkm"]
    if m["unit"] in ("V", "A", "Hz") or not (m["prefix"] or m["unit"]):
        return None
    return m.group(0).replace(" ", "")


def part_values(text: str) -> list[tuple[str, str]]:
    """(the value as written, its class R/C/L or '') for every part value in the text."""
    body = _prose(text)
    plain = re.sub(r"`[^`]*`", "``", body)
    found = []
    for m in TOKEN.finditer(plain):
        value = _token_value(m)
        if value is None:
            continue
        before = plain[max(0, m.start() - 60):m.start()].rsplit(".", 1)[-1]
        if CRYSTAL_FIGURES.search(before):
            continue
        unit = m["unit"] or ""
        rkm_ohms = bool(m["rkm"]) and bool(re.search(r"[kKMRr]", m["rkm"]))
        cls = ("R" if rkm_ohms or unit in ("Ω", "ohm", "ohms") else "C" if unit == "F"
               else "L" if unit == "H" else "")
        found.append((value, cls))
    found += [(m[1].replace(" ", ""), "crystal") for m in CRYSTAL.finditer(plain)]
    return found


def designated(text: str) -> list[tuple[str, str]]:
    """(designator, value) for every part the text gives a value by its designator."""
    body = _prose(text)
    pairs = [(m[1], m[2].strip()) for m in NETLIST_LINE.finditer(body)]
    pairs += [(m[1], m[2]) for m in PARTS_LIST.finditer(body)]
    pairs += [(f"{m[1]}{n}", m[4]) for m in RUN_OF_PARTS.finditer(body)
              for n in range(int(m[2]), int(m[3]) + 1)]
    plain = re.sub(r"`[^`]*`", "``", body)
    for m in re.finditer(REF, plain):
        window = re.split(r"[;:\n]|\.\s", plain[m.end():m.end() + 14])[0]
        for t in TOKEN.finditer(window):
            value = _token_value(t)
            if value is not None:
                pairs.append((m[1], value))
                break
    return list(dict.fromkeys(pairs))


def _lib_values(text: str) -> list[tuple[str, str]]:
    """(lib_id, value) where the text says "`lib_id` with value `V`"."""
    return re.findall(r"`([^`]+:[^`]+)` with value `([^`]+)`", text)


def _base_parts(task) -> dict[str, str]:
    """designator -> lib_id of the parts the base sheet places."""
    if task.base_ops_path is None:
        return {}
    ops = json.loads(task.base_ops_path.read_text())["ops"]
    return {op["designator"]: op["lib_id"] for op in ops if op.get("op") == "place_component"}


def _in_rule(value: str, cls: str, rules: list[dict]) -> bool:
    number = part_value(value)
    for rule in rules:
        if "range" not in rule:
            continue
        rule_cls = "C" if rule["kind"] == "decoupled" else rule.get("via", "R")
        low, high = (part_value(v) for v in rule["range"])
        if (rule_cls == cls and low * 0.9999 <= number <= high * 1.0001
                and low * TIGHT >= number * 0.9999 and high <= number * TIGHT * 1.0001):
            return True
    return False


def problems(task) -> list[str]:
    """What the task states and no criterion checks, one line each."""
    if "success" not in task.expected_outcomes:
        return []  # nothing is drawn: there is no part to check
    text = task.prompt_path.read_text(encoding="utf-8")
    checked = _values_map(task)
    out = []
    for ref, value in designated(text):
        if ref not in checked:
            out.append(f"{ref} is stated as {value!r}, but no values criterion names {ref}")
        elif not same_value(checked[ref], value):
            out.append(f"{ref} is stated as {value!r}, but its values criterion says "
                       f"{checked[ref]!r}")
    if task.tier == "transcription":
        for value, _ in part_values(text):
            if not any(same_value(v, value) for v in checked.values()):
                out.append(f"the text states {value!r}, but no values criterion checks "
                           "a part at that value")
    elif task.tier == "repair":
        base = _base_parts(task)
        for lib_id, value in _lib_values(text):
            for ref in (r for r, lib in base.items() if lib == lib_id):
                if not same_value(checked.get(ref), value):
                    out.append(f"{ref} ({lib_id}) is stated as {value!r}, but no values "
                               f"criterion holds {ref} to it")
    elif task.tier == "board":
        for value, cls in part_values(text):
            if (task.id, value) in BOARD_EXCEPTIONS:
                continue
            if cls not in CLASSES or not _in_rule(value, cls, task.criteria):
                out.append(f"the text states {value!r}, but no design rule holds a "
                           f"{cls or 'part'} at that value")
    return out


def _corpus():
    dirs = [*discover(TASKS), *discover(SPLIT)]
    return [d for d in dirs if (d / "task.yaml").is_file()]  # akcli's format keeps its rule


@pytest.mark.parametrize("task_dir", _corpus(), ids=lambda d: d.name)
def test_every_stated_value_is_checked(task_dir):
    task = load_task(task_dir)
    assert not problems(task), "\n".join(problems(task))


def test_every_family_states_its_values_on_a_fresh_seed(tmp_path):
    """Not only the committed split: what each generator writes now, on another seed."""
    from wirebench.taskgen.generator import FAMILIES, generate

    checked = 0
    for family in FAMILIES:
        for d in generate(family, "values-stated", 8, tmp_path):
            task = load_task(d)
            assert not problems(task), f"{d.name}: " + "\n".join(problems(task))
            checked += bool(_values_map(task))
    assert checked >= 20  # netlist, prose, injections, edit additions, op-amp repairs


# The checker itself: each way a task can forget a value is named.
def _copy(tmp_path, task_dir: Path, *, drop: set[str] = frozenset(), edit=None) -> Path:
    import yaml

    d = tmp_path / task_dir.name
    shutil.copytree(task_dir, d)
    meta = yaml.safe_load((d / "task.yaml").read_text())
    meta["criteria"] = [c for c in meta.get("criteria", []) if c["id"] not in drop]
    if edit:
        edit(meta)
    (d / "task.yaml").write_text(yaml.safe_dump(meta, sort_keys=False, allow_unicode=True))
    return d


def test_a_task_without_its_values_criterion_is_named(tmp_path):
    found = problems(load_task(_copy(tmp_path, TASKS / "01-divider", drop={"values"})))
    assert "R1 is stated as '10k', but no values criterion names R1" in found
    assert "R2 is stated as '10k', but no values criterion names R2" in found


def test_a_values_criterion_that_says_another_value_is_named(tmp_path):
    def wrong(meta):
        next(c for c in meta["criteria"] if c["id"] == "values")["values"]["R2"] = "4k7"

    found = problems(load_task(_copy(tmp_path, TASKS / "01-divider", edit=wrong)))
    assert found == ["R2 is stated as '10k', but its values criterion says '4k7'"]


def test_a_value_stated_without_its_designator_nearby_is_named(tmp_path):
    # 24: "Pull SDA and SCL up ... with 2.2k resistors R1 (SDA) and R2 (SCL)".
    found = problems(load_task(_copy(tmp_path, TASKS / "24-i2c-pullup-macro",
                                     drop={"values"})))
    assert found == ["the text states '2.2k', but no values criterion checks a part at "
                     "that value"]


def test_a_generated_task_without_its_values_is_named(tmp_path):
    prose = _copy(tmp_path, sorted(SPLIT.glob("prose-*"))[0], drop={"values"})
    assert len(problems(load_task(prose))) >= 10
    netlist = _copy(tmp_path, sorted(SPLIT.glob("netlist-*"))[0], drop={"values"})
    assert "U1 is stated as 'MCU32', but no values criterion names U1" in problems(
        load_task(netlist))


def test_a_repair_that_may_change_its_opamp_is_named(tmp_path):
    gain = next(d for d in sorted(SPLIT.glob("repair-*"))
                if "with value `GP`" in (d / "task.md").read_text())
    found = problems(load_task(_copy(tmp_path, gain, drop={"values"})))
    assert found == ["U1 (Amplifier:OpAmp_Single) is stated as 'GP', but no values "
                     "criterion holds U1 to it"]


def test_a_board_value_no_tight_rule_holds_is_named(tmp_path):
    # b01 keeps its datasheet rule on the regulator's input, [1u, 10u]: too wide to hold
    # the task's own 10 µF.
    found = problems(load_task(_copy(tmp_path, TASKS / "b01-stm32f030-minimum",
                                     drop={"input-10u"})))
    assert found == ["the text states '10µF', but no design rule holds a C at that value"]


def test_a_design_task_that_fixes_a_designator_needs_its_value_checked(tmp_path):
    d = _copy(tmp_path, TASKS / "d01-rc-lowpass-loaded")
    with (d / "task.md").open("a") as f:
        f.write("\nUse R1 (1.6k, `Device:R`) as the series resistor.\n")
    assert problems(load_task(d)) == [
        "R1 is stated as '1.6k', but no values criterion names R1"]


def test_the_scan_reads_no_value_where_no_part_is_meant():
    text = ("Halve the 3.3 V rail (12 V in); toggle every 500 ms; a corner of about "
            "1.6 kHz; at most 10 mA, 5% of 250 mAh; pin 1 at [1000, 1000] mil on `+3V3` "
            "and `Conn_01x04`; a 4-bit bus; a 3.3 V clamp; CL = 10 pF with 4 pF of stray "
            "capacitance; an STM32F030F4P6 with an AP2112K-3.3.\n\n"
            "- R9: 0R link, `Device:R`, between `VIN` and `GND`: DNP on this revision\n"
            "## History\n\n- Rev A had R2 at 4k7; it is 10k now.\n")
    assert part_values(text) == [] and designated(text) == []
    assert part_values("10 µF, 4.7 nF, 1 kΩ, 0R2, 4k7, 100n, an 8 MHz crystal") == [
        ("10µF", "C"), ("4.7nF", "C"), ("1kΩ", "R"), ("0R2", "R"), ("4k7", "R"),
        ("100n", ""), ("8MHz", "crystal")]


def test_part_values_read_as_a_schematic_writes_them():
    """A fuse's 500mA, a crystal's 8 MHz: the spellings a values criterion compares."""
    for got, want in [("500mA", "0.5A"), ("500 mA", "500mA"), ("8 MHz", "8MHz"),
                      ("8M", "8MHz"), ("100 nF", "100n"), ("4.7 µF 16V", "4u7")]:
        assert same_value(got, want), (got, want)
    assert not same_value("8MHz", "8kHz") and not same_value("500mA", "500MA")
    assert part_value("3V3") is None  # a zener's name, not 3.3 (nor 3)
