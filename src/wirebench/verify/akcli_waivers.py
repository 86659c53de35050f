"""akcli findings that a correct answer cannot avoid, waived by the harness: the one list.

Each entry names the finding's code, the part (lib_id) and the pin (by name) it is waived
on, and why it is no fault of the answer. A finding is waived only when it names that
pin (`REF.NUM (NAME)`, as akcli writes it) of a part of that lib_id, and, where the entry
says `net_has`, only when the pin's net also holds a part of that lib_id (glob). Nothing
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
        for w in WAIVERS:
            if w["code"] != code or w["lib_id"] != lib_id or w["pin"] not in (name, number):
                continue
            if "net_has" in w:
                net = board.pin_net(ref, number)
                others = {m.split(".", 1)[0] for m in board.members.get(net, set())}
                if not any(fnmatchcase(str((board.parts.get(o) or {}).get("lib_id", "")),
                                       w["net_has"]) for o in others - {ref}):
                    continue
            return w
    return None
