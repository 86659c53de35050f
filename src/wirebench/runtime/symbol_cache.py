"""Parse each symbol library once per process, under akcli's own reader.

akcli reads every `--symbols` library again for every part it places: with KiCad's own
`Device` library (2.2 MB) that is about 2 s a placement, and 55% of a server's time with
our small libraries. This cache sits under `akcli.readers.kicad_lib.read`, the one
function every akcli path reads a `.kicad_sym` through, and returns the Library it parsed
before when the file's bytes are the same.

Why no copy: akcli treats a parsed Library as read-only (its writer deep-clones a symbol's
S-expression before it edits it), and a deep copy of KiCad's `Device` library costs 7x the
parse. tests/test_symbol_cache.py draws every shipped reference with and without the cache
and compares the artifacts byte for byte, and checks that no cached library changed.

The key is the path as given (a Library records it) and the sha256 of the bytes, so an
edited library is read again. A file's hash is remembered by its inode, size and mtime,
so an unchanged library is not hashed again either. WIREBENCH_SYMBOL_CACHE=0 turns the
cache off.
"""

from __future__ import annotations

import hashlib
import os
from collections import OrderedDict

MAX_LIBRARIES = 64  # KiCad ships 209; a run names a handful
# The libraries a run draws with, as absolute paths joined by os.pathsep: the workflow
# sets it, and the warm worker's parent parses them before it forks its servers.
WARM_VAR = "WIREBENCH_WARM_SYMBOLS"
_parsed: OrderedDict[tuple[str, str], object] = OrderedDict()
_hashes: dict[tuple, str] = {}
stats = {"hits": 0, "misses": 0}


def enabled() -> bool:
    return os.environ.get("WIREBENCH_SYMBOL_CACHE", "1") != "0"


def _digest(path: str) -> str | None:
    try:
        st = os.stat(path)
    except OSError:
        return None
    stamp = (path, st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns)
    digest = _hashes.get(stamp)
    if digest is None:
        try:
            with open(path, "rb") as fh:
                digest = hashlib.file_digest(fh, "sha256").hexdigest()
        except OSError:
            return None
        _hashes[stamp] = digest
    return digest


def install() -> None:
    """Put the cache under akcli's library reader, once per process."""
    from akcli.readers import kicad_lib

    if not enabled() or getattr(kicad_lib.read, "wirebench_cache", False):
        return
    original = kicad_lib.read

    def read(path):
        digest = _digest(os.fspath(path))
        if digest is None:  # akcli's own reader reports the problem
            return original(path)
        key = (str(path), digest)
        found = _parsed.get(key)
        if found is not None:
            stats["hits"] += 1
            _parsed.move_to_end(key)
            return found
        stats["misses"] += 1
        found = _parsed[key] = original(path)
        while len(_parsed) > MAX_LIBRARIES:
            _parsed.popitem(last=False)
        return found

    read.wirebench_cache = True
    read.original = original
    read.__doc__ = original.__doc__
    kicad_lib.read = read


def warm_from_env() -> None:
    """The run's libraries (WARM_VAR), parsed here: every process forked after this finds
    them parsed. Each worker server would otherwise parse KiCad's own libraries again
    (measured: 2 board pairs added 26 s to the default run)."""
    warm([p for p in os.environ.get(WARM_VAR, "").split(os.pathsep) if p])


def warm(paths) -> None:
    """Parse these libraries now, in this process: a confined step's forked child then
    finds them parsed (what a child parses itself is gone when it exits)."""
    if not enabled():
        return
    install()
    from akcli.readers import kicad_lib

    for path in paths:
        try:
            kicad_lib.read(str(path))
        except Exception:  # noqa: BLE001 - the draw itself reports a bad library
            continue
