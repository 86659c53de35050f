"""The strict gate: fail a run when the harness or a model is not good enough.

It fails when any pair of the reference model misses its expected outcome (the corpus or
the harness is broken) or is not clean, or when a listed model's pass rate falls below
its floor. A floor keyed `MODEL` holds its pass rate (`passed`: the outcome and every
functional criterion); one keyed `MODEL:clean` holds its clean rate (passed, and the
layout and ERC warnings too).
`wirebench gate results/` runs it by hand; `snakemake --config strict=true` runs it as a
rule, so the whole run exits non-zero. Either way a failed gate says why in one line
(`reason`): the rule raises it as the job's error, in Snakemake's own process, so the
terminal shows that line rather than the job shell's whole command.
"""

from __future__ import annotations

from pathlib import Path

from wirebench.evidence.files import read_json, write_json

SCHEMA = "wirebench.gate/1"


def check(results: Path, floors: dict[str, float], reference: str = "reference") -> dict:
    results = Path(results)
    problems = []
    for score_path in sorted(results.glob(f"runs/{reference}/*/*/score.json")):
        doc = read_json(score_path)
        clean = doc.get("clean", doc["passed"])
        if not doc["outcome_ok"] or not doc["passed"] or not clean:
            problems.append(f"reference pair {doc['task']}/{doc['sample']} ends {doc['outcome']}"
                            f" (expected {' or '.join(doc['expected_outcome'])}), "
                            f"passed={doc['passed']}"
                            + ("" if clean or not doc["passed"] else ", but not clean"))
    card = read_json(results / "scorecard.json")
    for key, floor in sorted(floors.items()):
        model, _, verdict = key.rpartition(":") if key.endswith(":clean") else (key, "", "")
        stats = card["models"].get(model)
        rate = None if stats is None else stats.get("clean_rate" if verdict else "pass_rate")
        if stats is None:
            problems.append(f"model {model!r} has a floor but is not in the run")
        elif rate is None or rate < floor:
            problems.append(f"model {model!r} {'is clean' if verdict else 'passes'} {rate} "
                            f"< floor {floor}")
    return {"schema": SCHEMA, "passed": not problems, "problems": problems, "floors": floors}


def write(results: Path, floors: dict[str, float], reference: str, out: Path | None) -> dict:
    report = check(results, floors, reference)
    if out and report["passed"]:  # a failed gate leaves no output, so it runs again
        write_json(out, report)
    return report


def reason(report: dict) -> str:
    """The gate's verdict in one line: every problem, in order."""
    if report["passed"]:
        return "gate passed"
    return f"gate FAILED: {'; '.join(report['problems'])}"


def enforce(results: Path, floors: dict[str, float], reference: str, out: Path,
            log: Path) -> str | None:
    """The gate rule's job: gate.json when the gate passes, every problem in the log, and
    the one-line reason when it fails (None when it passes), for the rule to raise."""
    report = write(results, {m: float(r) for m, r in floors.items()}, reference, out)
    Path(log).parent.mkdir(parents=True, exist_ok=True)
    Path(log).write_text("".join(f"GATE  {p}\n" for p in report["problems"])
                         + reason(report) + "\n", encoding="utf-8")
    return None if report["passed"] else reason(report)
