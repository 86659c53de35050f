"""akcli findings that a correct answer cannot avoid, waived by the harness: the one list.

Each entry names the finding's code, the part (lib_id) and the pin (by name) it is waived
on, both globs, and why it is no fault of the answer. A finding is waived only when it
names such a pin (`REF.NUM (NAME)`, as akcli writes it) of such a part; where the entry
says `net_has`, only when the pin's net also holds a part of that lib_id, and where it
says `net_has_pin` (lib_id, pin name), a pin of that name on such a part. Nothing
else is waived here: every other akcli quirk an answer can avoid is taught by the prompt
pack (skills/akcli-oplists.md) and checked by tests/test_guide.py. docs/akcli-upstream.md
lists the same entries as fixes to offer akcli.

A waiver needs the parts' lib_ids (the apply step's `board` facts, gathered for a task
with design rules or an `erc_clean` criterion); without them nothing is waived.
"""

from __future__ import annotations

import re
from fnmatch import fnmatchcase

CRYSTAL = ("the crystal drives this oscillator input; akcli 0.22 counts a crystal's "
           "passive pins as no driver, where KiCad's own ERC accepts a passive pin")
GPIO_PF = ("PF0 and PF1 are the STM32F030's general-purpose I/O when its crystal oscillator "
           "is off (its datasheet's pin table); KiCad's symbol types them input, so "
           "akcli's ERC finds no driver on a net the MCU's output drives")
WAIVERS = [
    {"code": "ERC_POWER_IN_UNDRIVEN", "lib_id": "Driver_Motor:DRV8833PWP", "pin": "VINT",
     "why": "VINT is the output of the DRV8833's own internal regulator (it only takes a "
            "2.2 uF capacitor); KiCad's symbol types it power_in, so akcli's ERC finds no "
            "driver on a net the chip itself drives"},
    {"code": "ERC_FLOATING_INPUT", "lib_id": "MCU_ST_STM32F0:STM32F030F4Px", "pin": "PF0",
     "net_has": "Device:Crystal*", "why": CRYSTAL},
    {"code": "ERC_FLOATING_INPUT", "lib_id": "MCU_ST_STM32F0:STM32F030F4Px", "pin": "PF1",
     "net_has": "Device:Crystal*", "why": CRYSTAL},
    {"code": "ERC_FLOATING_INPUT", "lib_id": "MCU_RaspberryPi:RP2040", "pin": "XIN",
     "net_has": "Device:Crystal*", "why": CRYSTAL},
    # With the crystal off, PF0 and PF1 are general-purpose I/O like every PA pin, which
    # KiCad types bidirectional (and akcli then counts as a driver).
    {"code": "ERC_FLOATING_INPUT", "lib_id": "MCU_ST_STM32F0:STM32F030F4Px", "pin": "PF[01]",
     "why": GPIO_PF},
    {"code": "ERC_FLOATING_INPUT", "lib_id": "*", "pin": "*",
     "net_has_pin": ("MCU_ST_STM32F0:STM32F030F4Px", "PF[01]"), "why": GPIO_PF},
]

_PIN = re.compile(r"([A-Za-z#][A-Za-z0-9_#]*)\.([A-Za-z0-9]+) \(([^)]*)\)")


def waiver_for(finding: str, board) -> dict | None:
    """The entry that waives `finding` (a "CODE (severity): message" line) on `board`
    (design_rules.Board), or None."""
    if board is None:
        return None
    code = finding.split(" ", 1)[0]
    for ref, number, name in _PIN.findall(finding):
        lib_id = (board.parts.get(ref) or {}).get("lib_id")
        net = board.pin_net(ref, number)
        others = [m for m in board.members.get(net, set()) if m.split(".", 1)[0] != ref]
        for w in WAIVERS:
            if w["code"] != code or not fnmatchcase(str(lib_id), w["lib_id"]) or not any(
                    fnmatchcase(str(p), w["pin"]) for p in (name, number)):
                continue
            if "net_has" in w and not any(fnmatchcase(_lib_id(board, m), w["net_has"])
                                          for m in others):
                continue
            if "net_has_pin" in w and not any(
                    fnmatchcase(_lib_id(board, m), w["net_has_pin"][0])
                    and fnmatchcase(_pin_name(board, m), w["net_has_pin"][1])
                    for m in others):
                continue
            return w
    return None


def _lib_id(board, member: str) -> str:
    return str((board.parts.get(member.split(".", 1)[0]) or {}).get("lib_id", ""))


def _pin_name(board, member: str) -> str:
    ref, number = member.split(".", 1)
    return str(board.pin_names.get(ref, {}).get(number, number))
