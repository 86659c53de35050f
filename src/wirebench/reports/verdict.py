"""The run's verdict: one line per model on the terminal, and a failed run when a model's
answers are mostly infra errors.

A broken setup (a command that is not on PATH, a dead endpoint, a missing key) makes
every pair of its model an infra_error. Pass rates leave those out, so without this the
run would end green with nothing to show for that model. The verdict fails the run when
any model's infra-error share is above `max_infra_rate` (default 0.5), and names the
model and its first error.
"""

from __future__ import annotations

import csv
from pathlib import Path

DEFAULT_MAX_INFRA_RATE = 0.5
COLUMNS = ("pairs", "passed", "invalid", "blocked", "infra")


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
