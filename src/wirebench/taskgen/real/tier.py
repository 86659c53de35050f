"""The real tier in a run: generated from the installed kicad-demos into a cache folder
when the workflow starts, and joined to the tasks folder's tasks.

Why at the start and not in a rule: the matrix (every batch rule and its pairs) is fixed
when the Snakefile is read, and the real tier's task ids are known only once its
generator has read the demos. A rule's output could be read only by a checkpoint, and
the batches are no checkpoint's. So the workflow asks `ensure` for the folder; it is
generated once per seed (about 10 s for the five smaller demos, a minute for all seven,
on an idle 2-core machine) and kept while the generator, akcli and the demos are the
ones that made it (`tier.json` holds their hash).

The config says `real_tier: {seed: S, demos: DIR, dir: FOLDER}` (config/README.md). A run
generates only what it keeps: the first N tasks by id when `sample_per_tier` has
`real: N`, all of them otherwise. Without kicad-demos the run goes on without the tier
and says so. The tasks derive from GPL designs: the cache folder is never committed
(`.snakemake/` is git-ignored).
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from pathlib import Path

from wirebench.taskgen.real import demos as demo_mod

DEFAULT_DIR = ".snakemake/wirebench/real"
STAMP = "tier.json"
PREFIX = "real-"  # every id the generator writes starts so (real-<seed tag>-<index>)


def _names(value) -> list[str]:
    if not value:
        return []
    return [v for v in (value.split(",") if isinstance(value, str) else value) if v]


def wanted(config: dict) -> int | None:
    """How many of the tier's tasks this run keeps: 0 (the tier is off, or the run's
    `tasks:` names none of it), N (`sample_per_tier: {real: N}`) or None (all)."""
    if not config.get("real_tier"):
        return 0
    tasks = _names(config.get("tasks"))
    if tasks:
        return None if any(t.startswith(PREFIX) for t in tasks) else 0
    quota = config.get("sample_per_tier")
    if isinstance(quota, dict) and isinstance(quota.get("real"), int):
        return quota["real"]
    return None


def folder(config: dict) -> Path:
    """Where the tier of this config's seed is kept (generated or not)."""
    from wirebench.taskgen.generator import seed_hash

    spec = config.get("real_tier") or {}
    return Path(spec.get("dir", DEFAULT_DIR)) / seed_hash(str(spec.get("seed", "")))[:12]


def _key(spec: dict, demos_dir: Path) -> str:
    """What the generated tasks depend on: the seed, the generator's code and akcli's
    version (fingerprint `real_tier`), ngspice (the bench's notes), and the installed
    demos (each sheet's size and mtime: a package upgrade changes them)."""
    import hashlib

    from wirebench.evidence.fingerprint import fingerprint
    from wirebench.runtime.akcli_backend import ngspice_identity

    h = hashlib.sha256(f"{spec.get('seed')}\n{fingerprint('real_tier')}\n"
                       f"{ngspice_identity()}\n".encode())
    for demo in demo_mod.available(demos_dir):
        for sheet in demo.sheets:
            st = (demos_dir / demo.folder / sheet).stat()
            h.update(f"{demo.folder}/{sheet}:{st.st_size}:{st.st_mtime_ns}\n".encode())
    return h.hexdigest()[:16]


def _stamp(path: Path) -> dict:
    try:
        doc = json.loads((path / STAMP).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return doc if isinstance(doc, dict) else {}


def ensure(config: dict) -> tuple[Path | None, str]:
    """The folder that holds the tasks this run needs, generating them when it does not
    yet; or None and why the tier is left out. Never raises on a demo akcli cannot read
    or a missing package: the run goes on without the tier, and says so."""
    need = wanted(config)
    if need == 0:
        # A run narrowed to other tasks generates nothing, but the tier an earlier run of
        # this seed generated stays in its experiment: the summary and the manifest then
        # keep those pairs, as they keep every other tier's.
        out = folder(config) if config.get("real_tier") else None
        return (out if out is not None and _stamp(out) else None), ""
    spec = config["real_tier"]
    demos_dir = Path(spec.get("demos", demo_mod.DEFAULT_DIR))
    if not demo_mod.available(demos_dir):
        return None, (f"the real tier is left out: no kicad-demos in {demos_dir}; "
                      f"{demo_mod.INSTALL_HINT}")
    out = folder(config)
    key = _key(spec, demos_dir)
    have = _stamp(out)
    if have.get("key") == key and (have.get("count") is None
                                   or need is not None and have["count"] >= need):
        return out, ""
    from wirebench.taskgen import real

    # Generated beside the folder and renamed into place: a run stopped halfway, or
    # another run reading the old folder meanwhile, never sees half a tier.
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{out.name}.", dir=out.parent))
    try:
        # A seed the config names is no secret: its tasks are a public split.
        made = real.generate(str(spec["seed"]), demos_dir, tmp / "tasks", count=need,
                             split="public")
        count = None if need is None or len(made) < need else need
        (tmp / "tasks" / STAMP).write_text(json.dumps(
            {"schema": "wirebench.real_tier/1", "key": key, "count": count,
             "tasks": [p.name for p in made]}, indent=1) + "\n", encoding="utf-8")
        old = out.with_name(f".{out.name}.old")
        shutil.rmtree(old, ignore_errors=True)
        if out.exists():
            os.replace(out, old)
        os.replace(tmp / "tasks", out)
        shutil.rmtree(old, ignore_errors=True)
    except Exception as exc:  # a demo akcli cannot read, a full disk: said, not raised
        return None, f"the real tier is left out: {type(exc).__name__}: {exc}"
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return out, ""
