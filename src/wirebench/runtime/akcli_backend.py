"""The only module that talks to akcli.

akcli runs in-process (`akcli.cli.main(argv)` with stdout captured), as akcli's own
harness does: a subprocess per call would pay an interpreter start and the akcli import
every time. Every call pins akcli's config to an empty file so that an akcli.toml found by
walking up from the working directory can never change a result.
"""

from __future__ import annotations

import contextlib
import functools
import io
import json
import os
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

SHEET = "board.kicad_sch"


@dataclass
class AkcliResult:
    argv: list[str]
    rc: int
    stdout: str
    stderr: str

    def json(self) -> dict | None:
        """The --json document akcli printed, or None when it printed none."""
        try:
            doc = json.loads(self.stdout)
        except json.JSONDecodeError:
            return None
        return doc if isinstance(doc, dict) else None

    def error_text(self, limit: int = 600) -> str:
        doc = self.json() or {}
        err = doc.get("error")
        if isinstance(err, dict):
            return f"{err.get('code')}: {err.get('message')}"[:limit]
        if doc.get("status"):  # a JSON report without an error block: say what it says
            return f"status {doc['status']}"
        return (self.stderr or self.stdout).strip()[:limit]


def _config_file() -> str:
    return str(resources.files("wirebench") / "data" / "akcli.toml")


@functools.cache
def _akcli_main():
    """akcli's entry point, with its command tree built once per process.

    akcli's main() builds its whole argparse tree (77 commands) on every call, about 28 ms:
    measured here, a validate step costs 32.6 ms in-process with it and 4.7 ms without.
    The tree does not depend on argv and an argparse parser can parse many times, so
    build_parser is memoized; main() itself, and so what akcli does, is unchanged.
    """
    import akcli.cli  # lazy: 0.18 s, paid only by steps that call akcli

    from wirebench.runtime import symbol_cache

    akcli.cli.build_parser = functools.cache(akcli.cli.build_parser)
    symbol_cache.install()
    # akcli's journal is an audit log of its writes, kept beside the sheet. Every draw
    # here happens in a scratch folder that is deleted: the log would be three files
    # made and freed per draw, which on ext4 without a journal slows every later file
    # creation (steps/batch.py). No step reads it.
    os.environ["AKCLI_JOURNAL"] = "off"
    return akcli.cli.main


# Modules akcli imports only when `sim` first runs (checked with akcli 0.22); a newer
# akcli that moved them costs a child an import, never a wrong answer.
_SIM_MODULES = ("akcli.sim.deck", "akcli.sim.assertions", "akcli.sim.models",
                "akcli.sim.engine", "akcli.calc.registry", "akcli.si_prefix")


@functools.cache
def warm_up() -> None:
    """Run each akcli command a step uses once, on a scratch sheet, so that every module
    akcli imports lazily is loaded in this process. A confined step runs in a forked
    child: what the child imports is gone when it exits, so without this every step would
    pay akcli's lazy imports again (measured: it doubled the one-process loop)."""
    import importlib
    import json
    import shutil
    import tempfile

    _akcli_main()
    td = tempfile.mkdtemp(prefix="wirebench-warm-")
    try:
        sheet, ops, svg = Path(td) / SHEET, Path(td) / "ops.json", Path(td) / "board.svg"
        ops.write_text(json.dumps({"protocol_version": 2, "target_format": "kicad",
                                   "target_file": SHEET, "ops": [
                                       {"op": "add_net_label", "name": "WARM",
                                        "at": [1000, 1000]}]}))
        validate(ops)
        new_sheet(sheet)
        draw(sheet, ops, [])
        arrange_groups(sheet, {}, [])
        nets(sheet)
        run("read", str(sheet))
        for flag in ("--erc", "--integrity", "--layout"):
            run("check", flag, str(sheet))
        run("render", str(sheet), "-o", str(svg))
    finally:
        shutil.rmtree(td, ignore_errors=True)
    for name in _SIM_MODULES:
        with contextlib.suppress(ImportError):
            importlib.import_module(name)


def run(*argv: str, as_json: bool = True) -> AkcliResult:
    main = _akcli_main()
    full = ["-C", _config_file(), *(["--json"] if as_json else []), *argv]
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            rc = main(full)
        except SystemExit as exc:  # argparse errors exit instead of returning
            rc = exc.code if isinstance(exc.code, int) else 2
    return AkcliResult(list(argv), int(rc or 0), out.getvalue(), err.getvalue())


# Where Debian's libngspice0 puts the shared library akcli's simulator loads. akcli finds
# it through AKCLI_NGSPICE; wirebench sets that for akcli when the user has not.
NGSPICE_LIBRARIES = ("/usr/lib/x86_64-linux-gnu/libngspice.so.0",
                     "/usr/lib/aarch64-linux-gnu/libngspice.so.0", "/usr/lib/libngspice.so.0",
                     "/usr/local/lib/libngspice.so.0", "/opt/homebrew/lib/libngspice.dylib")


def ngspice_library() -> str | None:
    chosen = os.environ.get("AKCLI_NGSPICE")
    if chosen:
        return chosen
    return next((p for p in NGSPICE_LIBRARIES if os.path.exists(p)), None)


def use_ngspice() -> None:
    found = ngspice_library()
    if found:
        os.environ["AKCLI_NGSPICE"] = found


def spice(deck: str, commands: list[str], workdir: Path, timeout: float) -> str:
    """ngspice's output for a deck of our own and its control commands, run by akcli's
    simulator engine in a child process it kills after `timeout` (the real tier's bench
    writes its decks itself: its boards are no sheet akcli could simulate)."""
    from akcli.sim import engine

    if ngspice_library() is None:
        raise ValueError("ngspice's shared library is missing (apt-get install libngspice0, "
                         "or set AKCLI_NGSPICE)")
    use_ngspice()
    res = engine.run(deck, commands, timeout=timeout, workdir=workdir)
    if res.error and (not res.log or "timeout" in res.error):
        # a partial output would read as operating points that did not solve
        raise ValueError(f"ngspice did not finish: {res.error}")
    return res.log


@functools.cache
def ngspice_identity() -> str | None:
    """The simulator as a result depends on it: the library file's own hash, so any
    upgrade of ngspice reruns simulate (and only simulate and score)."""
    from wirebench.evidence.files import sha256_file

    found = ngspice_library()
    try:
        return f"{Path(found).resolve().name}:{sha256_file(found)[:16]}" if found else None
    except OSError:
        return None


def version() -> str:
    from wirebench.evidence.provenance import dist_version

    return dist_version("akcli-kicad")


def symbol_args(symbols: list[str]) -> list[str]:
    return [a for s in symbols for a in ("--symbols", str(s))]


def validate(ops_path: Path) -> AkcliResult:
    return run("ops", "validate", str(ops_path))


# `akcli new` gives each blank sheet a random root uuid, and akcli derives every later
# uuid from it, so two draws of one op-list would differ byte for byte. wirebench owns
# the blank sheet, so it pins the root uuid: the same answer then lands the same sheet.
ROOT_UUID = "5a1b0c3e-0000-4000-8000-77697265b3e7"


def new_sheet(sheet: Path) -> AkcliResult:
    import re

    res = run("new", str(sheet), "--force")
    if res.rc == 0:
        text = Path(sheet).read_text(encoding="utf-8")
        Path(sheet).write_text(re.sub(r'\(uuid "[0-9a-fA-F-]+"\)', f'(uuid "{ROOT_UUID}")',
                                      text, count=1), encoding="utf-8")
    return res


def draw(sheet: Path, ops_path: Path, symbols: list[str]) -> AkcliResult:
    """Apply an op-list behind akcli's rails: a split or merge of a named net is refused."""
    return run("draw", str(sheet), "--ops", str(ops_path), "--apply", "--strict-nets",
               "--no-erc", *symbol_args(symbols))


def arrange_groups(sheet: Path, params: dict, symbols: list[str]) -> AkcliResult:
    flags = [a for k, v in sorted(params.items()) for a in (f"--{k.replace('_', '-')}", str(v))]
    return run("arrange", str(sheet), "--groups", "--apply", *flags, *symbol_args(symbols))


def nets(sheet: Path) -> AkcliResult:
    return run("nets", str(sheet))


def ops_list_text() -> str:
    return run("ops", "list", as_json=False).stdout


def ops_schema_text() -> str:
    return run("schema", "ops", as_json=False).stdout


def pins_text(lib_id: str, symbols: list[str]) -> AkcliResult:
    return run("pins", lib_id, *symbol_args(symbols), as_json=False)
