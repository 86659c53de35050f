"""Compare two runs, or two models (or skills variants) within one run, pair by pair.

A and B are result folders or archived runs (archive/<run-id>.tar.gz). Pairs are matched
by model, task and sample (or, for two models of one run, by task and sample). The
report lists regressions (A passed, B failed) and fixes, the pass-rate delta with an
exact McNemar test on the discordant pairs, and, for each pair whose verdict changed,
what changed under it: the answer (ops hash), the akcli version, the expected nets, the
task's files, the simulator and the scorer. Infra errors on either side are left out
of the test and counted apart. Any tier compares: a design pair records no expected nets
and a board pair no simulator, and each side's missing record is None.
"""

from __future__ import annotations

import contextlib
import tempfile
from pathlib import Path

from wirebench.evidence.files import read_json
from wirebench.reports.stats import mcnemar_exact

SCHEMA = "wirebench.compare/1"


@contextlib.contextmanager
def opened(path: Path):
    """A results folder, as is, or an archived run, unpacked for the duration."""
    path = Path(path)
    if not path.exists():  # a typo must never compare as "no pairs in common"
        raise FileNotFoundError(f"{path}: no such results folder or archived run")
    if path.is_dir() and not (path / "runs").is_dir():
        raise FileNotFoundError(f"{path}: not a results folder (it has no runs/)")
    if path.is_file():
        from wirebench.evidence.archive import unpack

        with tempfile.TemporaryDirectory(prefix="wirebench-compare-") as td:
            yield unpack(path, Path(td))
    else:
        yield path


def load_pairs(results: Path, model: str | None = None) -> dict[tuple, dict]:
    pairs = {}
    for score_path in sorted(Path(results).glob("runs/*/*/*/score.json")):
        doc = read_json(score_path)
        if model is not None and doc["model"] != model:
            continue
        key = (doc["task"], doc["sample"]) if model else (doc["model"], doc["task"],
                                                          doc["sample"])
        pairs[key] = {"passed": bool(doc["passed"]), "outcome": doc["outcome"],
                      "score": doc["score"], **_under(doc, score_path.parent)}
    return pairs


def _under(doc: dict, pair: Path) -> dict:
    """What a pair's verdict rests on, as far as its files record it. Each tier records
    its own part: a transcription pair its expected nets, a design pair its simulator
    (sim.json), a board pair neither; a missing record is None on that side, never a
    crash."""
    sim = _read(pair / "sim.json")
    return {"ops": _read(pair / "validate.json").get("inputs", {}).get("ops"),
            "akcli": doc.get("versions", {}).get("akcli"),
            "expected": doc.get("inputs", {}).get("expected"),
            "task": doc.get("task_sha256"),
            "simulator": sim.get("versions", {}).get("ngspice"),
            "scorer": doc.get("scorer")}


def _read(path: Path) -> dict:
    try:
        return read_json(path)
    except FileNotFoundError:
        return {}


WHAT = {"ops": "answer (ops hash)", "akcli": "akcli version", "expected": "expected nets",
        "task": "task files", "simulator": "simulator (ngspice)", "scorer": "scorer"}


def compare(a: dict[tuple, dict], b: dict[tuple, dict], label_a: str, label_b: str) -> dict:
    common = sorted(set(a) & set(b))
    infra = [k for k in common if "infra_error" in (a[k]["outcome"], b[k]["outcome"])]
    scored = [k for k in common if k not in infra]
    changed = []
    for key in scored:
        if a[key]["passed"] != b[key]["passed"]:
            changed.append({
                "pair": "/".join(map(str, key)),
                "change": "regression" if a[key]["passed"] else "fix",
                "a": {k: a[key][k] for k in ("outcome", "score")},
                "b": {k: b[key][k] for k in ("outcome", "score")},
                "what_changed": [WHAT[f] for f in WHAT if a[key][f] != b[key][f]]
                or ["nothing recorded"],
            })
    regressions = [c for c in changed if c["change"] == "regression"]
    fixes = [c for c in changed if c["change"] == "fix"]
    n = len(scored)
    rate_a = sum(a[k]["passed"] for k in scored) / n if n else None
    rate_b = sum(b[k]["passed"] for k in scored) / n if n else None
    return {
        "schema": SCHEMA, "a": label_a, "b": label_b, "pairs": n,
        "only_in_a": len(set(a) - set(b)), "only_in_b": len(set(b) - set(a)),
        "infra_errors": len(infra),
        "pass_rate_a": None if rate_a is None else round(rate_a, 4),
        "pass_rate_b": None if rate_b is None else round(rate_b, 4),
        "delta": None if n == 0 else round(rate_b - rate_a, 4),
        "regressions": regressions, "fixes": fixes,
        "mcnemar_p": round(mcnemar_exact(len(regressions), len(fixes)), 6),
    }


def markdown(report: dict) -> str:
    lines = [f"# wirebench compare: {report['a']} -> {report['b']}", ""]
    if report["pairs"]:
        lines.append(f"{report['pairs']} paired pairs: pass rate {report['pass_rate_a']:.1%} -> "
                     f"{report['pass_rate_b']:.1%} ({report['delta']:+.1%}); "
                     f"{len(report['regressions'])} regression(s), {len(report['fixes'])} "
                     f"fix(es); exact McNemar p = {report['mcnemar_p']:.4g}.")
    else:
        lines.append("No pairs in common.")
    lines.append(f"Left out: {report['infra_errors']} pair(s) with an infra error; "
                 f"{report['only_in_a']} only in A, {report['only_in_b']} only in B.")
    for title, items in (("Regressions", report["regressions"]), ("Fixes", report["fixes"])):
        lines += ["", f"## {title}", ""]
        if not items:
            lines.append("none")
        for c in items:
            lines.append(f"- {c['pair']}: {c['a']['outcome']} {c['a']['score']} -> "
                         f"{c['b']['outcome']} {c['b']['score']} (changed: "
                         f"{', '.join(c['what_changed'])})")
    return "\n".join(lines) + "\n"


def run(a: Path, b: Path | None, models: list[str] | None) -> dict:
    if models:
        with opened(a) as results:
            return compare(load_pairs(results, models[0]), load_pairs(results, models[1]),
                           f"{a}:{models[0]}", f"{a}:{models[1]}")
    with opened(a) as ra, opened(b) as rb:
        return compare(load_pairs(ra), load_pairs(rb), str(a), str(b))
