"""`wirebench score`: one op-list against one task, the same code path as the rules; and
`wirebench tasks pack`: the prompt pack a pair of a task gets."""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

from conftest import REPO, TASKS, write_ops


def wirebench(*args, cwd=REPO):
    return subprocess.run(["wirebench", *args], capture_output=True, text=True, cwd=cwd)


def test_score_passes_a_reference_with_exit_zero():
    proc = wirebench("score", "--task", str(TASKS / "04-i2c-pullups"),
                     "--ops", str(TASKS / "04-i2c-pullups" / "reference_ops.json"))
    assert proc.returncode == 0
    assert proc.stdout.startswith("PASS  04-i2c-pullups  score=1.0  matched=4/4")


def test_score_json_reports_a_failure_with_exit_one(tmp_path):
    ops = write_ops(tmp_path / "ops.json", [
        {"op": "place_component", "lib_id": "Device:R", "designator": "R1", "x_mil": 1000,
         "y_mil": 1000},
        {"op": "add_net_label", "name": "VIN", "at": "R1.1"}])
    proc = wirebench("score", "--task", str(TASKS / "01-divider"), "--ops", str(ops), "--json")
    assert proc.returncode == 1
    doc = json.loads(proc.stdout)
    assert (doc["schema"], doc["matched"], doc["expected"], doc["score"]) == (
        "wirebench.score/1", 1, 3, 0.3333)


def test_score_with_a_missing_task_is_a_usage_error(tmp_path):
    proc = wirebench("score", "--task", str(tmp_path / "nope"), "--ops", str(tmp_path / "x"))
    assert proc.returncode == 2
    assert "not a task (no task.md)" in proc.stderr


def test_tasks_pack_is_the_pack_a_pair_gets_with_the_tasks_own_libraries(tmp_path):
    """A board task draws with KiCad's libraries, not the run's `symbols`: its pack must
    hold the pin tables of its ICs from them (a pack built with the run's libraries alone
    lists only the generic parts, and an agent must then guess every pin's place)."""
    import os

    import pytest

    if not Path("/usr/share/kicad/symbols/MCU_ST_STM32F0.kicad_sym").is_file() and not \
            os.environ.get("CI"):
        pytest.skip("KiCad's libraries are not installed (apt-get install kicad-symbols)")
    task = TASKS / "b13-rs485-motor-node"
    proc = wirebench("tasks", "pack", str(task))
    assert proc.returncode == 0, proc.stderr
    tables = proc.stdout.split("# Reference: pin tables (`akcli pins`)")[1].split(
        "# Reference: datasheet notes")[0]
    for lib_id in ("MCU_ST_STM32F0:STM32F030F4Px", "Interface_UART:MAX3485",
                   "Driver_Motor:DRV8833PWP", "Connector:Conn_ARM_JTAG_SWD_10"):
        assert f"{lib_id}  @(0,0)" in tables, lib_id
    assert re.search(r"^\s+7\s+PA1\s+bidirectional", tables, re.M)
    assert (task / "task.md").read_text().strip() in proc.stdout
    out = tmp_path / "pack.md"
    assert wirebench("tasks", "pack", str(task), "--out", str(out)).returncode == 0
    assert out.read_text() == proc.stdout
    missing = wirebench("tasks", "pack", str(tmp_path / "nope"))
    assert missing.returncode == 2 and "not a task (no task.md)" in missing.stderr
