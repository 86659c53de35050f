"""What each step's output depends on, as one short hash for the rule's `params:`.

Snakemake sees a `shell:` rule's command text but not the Python it runs, so without
this an edit to the scoring code would rerun nothing. Each step lists the modules it
runs; akcli steps add akcli's version. Changing verify/scoring.py reruns only `score` jobs; an
akcli upgrade reruns validate/apply/nets but never a paid `generate` call.
"""

from __future__ import annotations

import hashlib
from functools import cache
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1]  # wirebench/: paths below are relative to it

STEP_CODE = {
    "prompt_pack": ["steps/prompt_pack.py", "runtime/akcli_backend.py", "corpus/tasks.py",
                    "evidence/files.py"],
    # Only what shapes an answer: a refactor of the task loader or of the file writer
    # must not rerun thousands of paid agent calls.
    "generate": ["steps/generate.py", "agents/*.py"],
    "validate": ["steps/validate.py", "steps/common.py", "verify/oplist.py",
                 "verify/oplist_guard.py", "runtime/akcli_backend.py", "evidence/files.py"],
    # Not verify/design_rules.py: apply only asks whether a task has rules (their kinds
    # are in the task schema), so fixing a rule's logic reruns scores, not draws.
    "apply": ["steps/apply.py", "steps/common.py", "verify/oplist.py",
              "runtime/akcli_backend.py", "corpus/tasks.py", "evidence/files.py",
              "schemas/task.schema.yaml"],
    "nets": ["steps/nets.py", "steps/common.py", "runtime/akcli_backend.py",
             "evidence/files.py"],
    "simulate": ["steps/simulate.py", "steps/common.py", "corpus/testbench.py",
                 "verify/part_models.py", "data/part_models.yaml", "runtime/akcli_backend.py",
                 "corpus/tasks.py", "evidence/files.py", "schemas/task.schema.yaml",
                 "verify/oplist_guard.py"],
    "score": ["steps/score.py", "steps/common.py", "verify/scoring.py", "verify/criteria.py",
              "verify/design_rules.py", "corpus/testbench.py", "verify/equivalence.py",
              "verify/akcli_waivers.py", "corpus/tasks.py", "evidence/files.py",
              "evidence/trace.py", "evidence/provenance.py", "schemas/task.schema.yaml"],
    "manifest": ["evidence/manifest.py", "evidence/files.py"],
    "gate": ["reports/gate.py", "evidence/files.py"],
    "verdict": ["reports/verdict.py", "evidence/files.py"],
    "summary": ["reports/summary.py", "reports/stats.py", "evidence/provenance.py",
                "evidence/files.py"],
    "archive": ["evidence/archive.py", "evidence/provenance.py", "evidence/manifest.py",
                "evidence/files.py"],
    # The real tier's tasks, generated when a run starts (taskgen/real/tier.py).
    # The bench's notes read part_models.yaml's cards (and run ngspice: tier.py hashes its
    # identity); a part's value is read by design_rules.part_value.
    "real_tier": ["taskgen/*.py", "taskgen/real/*.py", "runtime/akcli_backend.py",
                  "runtime/symbol_cache.py", "data/part_models.yaml",
                  "verify/design_rules.py"],
    # The report's tables come from summary.py's functions over summary.csv: an edit there
    # that leaves summary.csv's bytes alone must still redraw the report.
    "report": ["reports/report.py", "reports/report_html.py", "reports/summary.py",
               "reports/stats.py", "reports/variants.py", "reports/history.py",
               "verify/scoring.py", "verify/oplist.py", "corpus/tasks.py",
               "schemas/task.schema.yaml", "evidence/files.py", "evidence/provenance.py"],
}
# Modules a step's globs match that shape none of its outputs: the run's preflight
# checks the online entries before any job and hands nothing to one, so editing it must
# rerun no paid generate call.
NOT_HASHED = {"agents/preflight.py"}
# prompt_pack is left out on purpose: an akcli upgrade must never rerun a paid generate
# call. After an upgrade, `snakemake --forcerun prompt_pack` rebuilds the packs (and so
# reruns the agents) when you want agents to read the new akcli's docs.
AKCLI_STEPS = {"validate", "apply", "nets", "simulate"}
# How every akcli step runs: confined, within a time limit (a verdict can depend on both),
# with akcli's settings pinned to data/akcli.toml; and the versions its output records.
for _step in AKCLI_STEPS:
    STEP_CODE[_step] += ["steps/confined.py", "runtime/confine.py", "runtime/landlock.py",
                         "runtime/isolation.py", "runtime/symbol_cache.py", "data/akcli.toml",
                         "evidence/provenance.py"]


@cache
def fingerprint(step: str) -> str:
    h = hashlib.sha256(step.encode())
    for pattern in STEP_CODE[step]:
        for path in sorted(PACKAGE.glob(pattern)):
            if path.relative_to(PACKAGE).as_posix() in NOT_HASHED:
                continue
            h.update(path.relative_to(PACKAGE).as_posix().encode())
            h.update(path.read_bytes())
    if step in AKCLI_STEPS or step == "real_tier":
        from wirebench.evidence.provenance import dist_version

        h.update(f"akcli {dist_version('akcli-kicad')}".encode())
    return h.hexdigest()[:16]
