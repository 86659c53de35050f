"""The symbol-library cache: every shipped reference draws to the same bytes with and
without it, no cached library is changed by a draw, and an edited library is read again."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import REPO, SYMBOLS, TASKS

DRAW_ALL = """
import json, pickle, sys
from pathlib import Path
from wirebench.corpus.tasks import discover, load_task
from wirebench.steps.pair import evaluate_pair
from wirebench.runtime import symbol_cache
out, symbols = Path(sys.argv[1]), sys.argv[2:]
# The run's own libraries: a board task draws with KiCad's (100 MB), which without the
# cache takes minutes a board; test_boards draws those, cached.
for task in (t for t in discover(%(tasks)r) if not load_task(t).libraries):
    evaluate_pair(task / "reference_ops.json", task, symbols, out / task.name,
                  {"model": "reference", "task": task.name, "sample": 1})
unchanged = None
if symbol_cache.enabled():
    from akcli.readers import kicad_lib
    original = kicad_lib.read.original  # akcli's own reader, under the cache
    unchanged = all(pickle.dumps(lib) == pickle.dumps(original(path))
                    for (path, _), lib in symbol_cache._parsed.items())
print(json.dumps({"stats": symbol_cache.stats, "unchanged": unchanged}))
"""


def _draw_all(out: Path, cache: bool) -> dict:
    proc = subprocess.run(
        [sys.executable, "-c", DRAW_ALL % {"tasks": str(TASKS)}, str(out), *SYMBOLS],
        capture_output=True, text=True, cwd=REPO,
        env={**os.environ, "WIREBENCH_SYMBOL_CACHE": "1" if cache else "0"})
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


@pytest.mark.slow
def test_every_reference_draws_to_the_same_bytes_with_and_without_the_cache(tmp_path):
    cached = _draw_all(tmp_path / "cached", cache=True)
    plain = _draw_all(tmp_path / "plain", cache=False)
    assert cached["stats"]["hits"] > 10 * cached["stats"]["misses"] > 0
    assert plain["stats"] == {"hits": 0, "misses": 0}
    assert cached["unchanged"] is True, "a draw changed a cached library"
    files = sorted(p.relative_to(tmp_path / "plain")
                   for p in (tmp_path / "plain").rglob("*") if p.is_file())
    assert len(files) > 40 * 5
    different = [str(f) for f in files
                 if (tmp_path / "plain" / f).read_bytes() != (tmp_path / "cached" / f).read_bytes()]
    assert different == []
    assert sorted(p.relative_to(tmp_path / "cached") for p in (tmp_path / "cached").rglob("*")
                  if p.is_file()) == files


def test_an_edited_library_is_read_again(tmp_path):
    from akcli.readers import kicad_lib

    from wirebench.runtime import symbol_cache

    symbol_cache.install()
    lib = tmp_path / "Device.kicad_sym"
    lib.write_text(Path(SYMBOLS[[Path(s).name for s in SYMBOLS].index("Device.kicad_sym")])
                   .read_text())
    before = dict(symbol_cache.stats)
    first = kicad_lib.read(str(lib))
    assert kicad_lib.read(str(lib)) is first
    text = lib.read_text()
    lib.write_text(text.replace('(symbol "R"', '(symbol "R_edited"', 1))
    edited = kicad_lib.read(str(lib))
    assert edited is not first
    assert "R_edited" in {s.name for s in edited.symbols}
    assert "R_edited" not in {s.name for s in first.symbols}
    assert symbol_cache.stats["misses"] - before["misses"] == 2
    assert symbol_cache.stats["hits"] - before["hits"] == 1


KICAD = Path("/usr/share/kicad/symbols")


@pytest.mark.skipif(not (KICAD / "Device.kicad_sym").is_file() and not os.environ.get("CI"),
                    reason="KiCad's libraries are not installed (apt-get install kicad-symbols)")
@pytest.mark.parametrize("task", ["01-divider", "09-npn-led-driver", "d05-npn-led-switch"])
def test_references_draw_with_kicads_own_libraries(tmp_path, task):
    """KiCad's Device (2.3 MB) and power libraries, as Debian's kicad-symbols installs
    them: the draw lands the task's nets (or its measures), warm in well under a second.
    Layout criteria are left out: KiCad's symbols are drawn larger than ours."""
    from wirebench.steps.pair import evaluate_pair

    symbols = [str(KICAD / "Device.kicad_sym"), str(KICAD / "power.kicad_sym")]
    result = evaluate_pair(TASKS / task / "reference_ops.json", TASKS / task, symbols,
                           tmp_path, {"model": "reference", "task": task, "sample": 1})
    assert result["outcome"] == "success", result["errors"]
    if result["sim_status"]:
        assert result["sim_status"] == "pass", result["errors"]
    else:
        assert result["matched"] == result["expected"] > 0, result["errors"]
    assert not [e for e in result["errors"] if not e.startswith("criterion layout")]
