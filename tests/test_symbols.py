"""wirebench's own symbol libraries: built from build.py's tables, and wherever KiCad has
the same lib_id, with KiCad's pin positions (so op-lists written against KiCad's
libraries, akcli's own corpus among them, draw the same wires against ours)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import REPO

KICAD = Path("/usr/share/kicad/symbols")


@pytest.mark.skipif(not (KICAD / "Device.kicad_sym").is_file() and not os.environ.get("CI"),
                    reason="KiCad's libraries are not installed (apt-get install kicad-symbols)")
@pytest.mark.slow
def test_every_lib_id_kicad_also_has_puts_its_pins_where_kicad_does():
    proc = subprocess.run([sys.executable, str(REPO / "symbols" / "build.py"), "--check-kicad",
                           str(KICAD)], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    last = proc.stdout.strip().splitlines()[-1]
    matched = int(last.split()[0])
    # R, C, L, fuse, the diodes, LED, crystal, transistors and the power ports at least
    assert matched >= 20 and " 0 differ" in last, last


def test_the_committed_libraries_are_what_build_py_writes(tmp_path):
    copy = tmp_path / "symbols"
    shutil.copytree(REPO / "symbols", copy, ignore=shutil.ignore_patterns("__pycache__"))
    for lib in copy.glob("*.kicad_sym"):
        lib.write_text("stale")
    subprocess.run([sys.executable, str(copy / "build.py")], check=True, capture_output=True)
    for lib in sorted((REPO / "symbols").glob("*.kicad_sym")):
        assert (copy / lib.name).read_bytes() == lib.read_bytes(), lib.name
