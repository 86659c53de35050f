"""The run's verdict: one line per model on the terminal, and a failed run when a model's
answers are mostly infra errors.

A broken setup (a command that is not on PATH, a dead endpoint, a missing key) makes
every pair of its model an infra_error. Pass rates leave those out, so without this the
run would end green with nothing to show for that model. The verdict fails the run when
any model's infra-error share is above `max_infra_rate` (default 0.5), and names the
model and its first error.

It also says why pairs failed, where a newcomer looks: the terminal. A failed pair's
cause is the first failed criterion of a pair that drew, or else its first error (the
agent's own, such as a command's exit and its last line of stderr, or the first
validation error), and, when the agent itself failed, the last lines of its stderr.
The score batch prints it for each pair as the pair is scored (steps/batch.py); the
run's closing verdict prints each distinct cause once per model, with its pairs. Both
are redacted again here, with every secret the run's entries name.
"""

from __future__ import annotations

import csv
import json
from pathlib import Path

DEFAULT_MAX_INFRA_RATE = 0.5
COLUMNS = ("pairs", "passed", "invalid", "blocked", "infra")
# What a cause shows: its line cut to CAUSE_CHARS, and the last TAIL_LINES lines of a
# failed agent's stderr, each cut to TAIL_CHARS (agent.json keeps the last 4 KiB).
CAUSE_CHARS = 300
TAIL_LINES = 3
TAIL_CHARS = 200
# How many distinct causes the closing verdict shows a model, and pairs a cause.
CAUSES_SHOWN = 3
PAIRS_SHOWN = 3


def this_run(summary: Path) -> list[dict]:
    """summary.csv's rows of the pairs this run scored (a narrowed run's summary also
    holds the experiment's earlier pairs: they are not this run's doing)."""
    with open(summary, newline="", encoding="utf-8") as fh:
        return [row for row in csv.DictReader(fh) if row.get("this_run", "True") == "True"]


def rows(summary: Path) -> dict[str, dict]:
    out: dict[str, dict] = {}
    for row in this_run(summary):
        counts = out.setdefault(row["model"], dict.fromkeys(COLUMNS, 0))
        counts["pairs"] += 1
        counts["passed"] += row["passed"] == "True"
        outcome = {"infra_error": "infra"}.get(row["outcome"], row["outcome"])
        if outcome in ("invalid", "blocked", "infra"):
            counts[outcome] += 1
    return dict(sorted(out.items()))


def first_errors(summary: Path) -> dict[str, str]:
    """Each model's first infra error, as its row in summary.csv says it."""
    found: dict[str, str] = {}
    for row in this_run(summary):
        if row["outcome"] == "infra_error" and row["model"] not in found:
            found[row["model"]] = f"{row['task']}: {row['errors'][:200]}"
    return found


def table(counts: dict[str, dict]) -> str:
    width = max([len("model"), *map(len, counts)])
    lines = ["model".ljust(width) + "".join(f"{c:>9}" for c in COLUMNS)]
    lines += [name.ljust(width) + "".join(f"{r[c]:>9}" for c in COLUMNS)
              for name, r in counts.items()]
    return "\n".join(lines)


def verdict(summary: Path, max_infra_rate: float = DEFAULT_MAX_INFRA_RATE) -> tuple[str, list[str]]:
    """The table, and one line per model whose infra-error share is too high."""
    counts = rows(summary)
    errors = first_errors(summary)
    failed = [f"{name}: {r['infra']}/{r['pairs']} pairs are infra errors (more than "
              f"{max_infra_rate:.0%}); first: {errors.get(name, '?')}"
              for name, r in counts.items()
              if r["pairs"] and r["infra"] / r["pairs"] > max_infra_rate]
    return table(counts), failed


def cause(score: dict, agent: dict | None = None) -> tuple[str, list[str]]:
    """Why a pair failed: one line, and the last lines of its agent's stderr when the
    agent itself failed (they are often a traceback whose last line alone says little).
    Both redacted."""
    from wirebench.agents.secrets import redact

    errors = score.get("errors") or []
    if score.get("failure_class") == "function" and score.get("first_finding"):
        line = score["first_finding"]
    else:
        line = errors[0] if errors else f"outcome {score.get('outcome')}"
    line = " ".join(redact(str(line), {}).split())
    tail: list[str] = []
    if agent and agent.get("status") != "ok" and agent.get("stderr_tail"):
        # Python's ^^^ markers under a traceback's line say nothing here.
        lines = [t.rstrip() for t in redact(agent["stderr_tail"], {}).splitlines()
                 if t.strip() and not set(t.strip()) <= set("^~")]
        if lines and lines[-1].strip() in line:  # already the cause's own words
            lines.pop()
        tail = [t[:TAIL_CHARS] for t in lines[-TAIL_LINES:]]
    return (line if len(line) <= CAUSE_CHARS else line[:CAUSE_CHARS - 3] + "..."), tail


def _read(path: Path) -> dict | None:
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return doc if isinstance(doc, dict) else None


def pair_lines(score_path: Path) -> list[str]:
    """A scored pair's lines for the terminal: none when it passed, else its id, its
    failure class and its cause, then its agent's last lines of stderr, if any."""
    score = _read(Path(score_path))
    if score is None or score.get("passed"):
        return []
    line, tail = cause(score, _read(Path(score_path).parent / "agent.json"))
    pair = f"{score.get('model')}/{score.get('task')}/{score.get('sample')}"
    return [f"wirebench: {pair} failed ({score.get('failure_class') or score.get('outcome')}): "
            f"{line}", *(f"    | {t}" for t in tail)]


def why_failed(summary: Path) -> list[str]:
    """The closing verdict's causes: for each model, this run's failed pairs grouped by
    cause, the commonest first, each cause once with how many pairs it took and which."""
    runs = Path(summary).parent / "runs"
    groups: dict[str, dict[tuple, list[str]]] = {}
    for row in this_run(summary):
        if row["passed"] == "True":
            continue
        pair = runs / row["model"] / row["task"] / row["sample"]
        score = _read(pair / "score.json")
        if score is None:  # the summary's row still says what the pair's file said
            score = {"errors": [e for e in row["errors"].split(" | ") if e],
                     "failure_class": row.get("failure_class"),
                     "first_finding": row.get("first_finding"), "outcome": row["outcome"]}
        line, tail = cause(score, _read(pair / "agent.json"))
        key = (score.get("failure_class") or row["outcome"], line, tuple(tail))
        groups.setdefault(row["model"], {}).setdefault(key, []).append(
            f"{row['task']}/{row['sample']}")
    if not groups:
        return []
    out = [f"why pairs failed ({Path(summary).parent / 'report.md'} lists every pair):"]
    for model in sorted(groups):
        ranked = sorted(groups[model].items(), key=lambda kv: -len(kv[1]))  # stable
        for (klass, line, tail), pairs in ranked[:CAUSES_SHOWN]:
            shown = ", ".join(pairs[:PAIRS_SHOWN]) + (
                f" and {len(pairs) - PAIRS_SHOWN} more" if len(pairs) > PAIRS_SHOWN else "")
            out.append(f"  {model}: {len(pairs)} pair{'s' * (len(pairs) != 1)} ({shown}) "
                       f"failed ({klass}): {line}")
            out += [f"      | {t}" for t in tail]
        if len(ranked) > CAUSES_SHOWN:
            rest = sum(len(p) for _, p in ranked[CAUSES_SHOWN:])
            out.append(f"  {model}: {len(ranked) - CAUSES_SHOWN} more cause(s), over "
                       f"{rest} pair(s)")
    return out
