"""What each step's output depends on, as one short hash for the rule's `params:`.

Snakemake sees a `shell:` rule's command text but not the Python it runs, so without
this an edit to the scoring code would rerun nothing. Each step lists the modules it
runs; akcli steps add akcli's version. Changing scoring.py reruns only `score` jobs; an
akcli upgrade reruns validate/apply/nets but never a paid `generate` call.
"""

from __future__ import annotations

import hashlib
from functools import cache
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent

STEP_CODE = {
    "prompt_pack": ["prompt_pack.py", "akcli_backend.py", "tasks.py", "evidence.py"],
    # Only what shapes an answer: a refactor of the task loader or of the file writer
    # must not rerun thousands of paid agent calls.
    "generate": ["generate.py", "agents/*.py", "baseline.py", "secrets.py"],
    "validate": ["evaluate.py", "akcli_backend.py", "oplist_guard.py", "evidence.py"],
    "apply": ["evaluate.py", "akcli_backend.py", "tasks.py", "evidence.py", "data/akcli.toml",
              "schemas/task.schema.yaml"],
    "nets": ["evaluate.py", "akcli_backend.py", "evidence.py"],
    "score": ["evaluate.py", "scoring.py", "criteria.py", "equivalence.py", "tasks.py",
              "evidence.py", "trace.py", "provenance.py", "schemas/task.schema.yaml"],
    "manifest": ["manifest.py", "evidence.py"],
    "gate": ["gate.py", "evidence.py"],
    "summary": ["summary.py", "provenance.py"],
    "archive": ["archive.py", "provenance.py", "manifest.py"],
    "report": ["report.py", "report_html.py", "scoring.py", "tasks.py"],
}
# prompt_pack is left out on purpose: an akcli upgrade must never rerun a paid generate
# call. After an upgrade, `snakemake --forcerun prompt_pack` rebuilds the packs (and so
# reruns the agents) when you want agents to read the new akcli's docs.
AKCLI_STEPS = {"validate", "apply", "nets"}


@cache
def fingerprint(step: str) -> str:
    h = hashlib.sha256(step.encode())
    for pattern in STEP_CODE[step]:
        for path in sorted(PACKAGE.glob(pattern)):
            h.update(path.relative_to(PACKAGE).as_posix().encode())
            h.update(path.read_bytes())
    if step in AKCLI_STEPS:
        from .akcli_backend import version

        h.update(f"akcli {version()}".encode())
    return h.hexdigest()[:16]
