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

from wirebench.evidence.files import read_json

DEFAULT_MAX_INFRA_RATE = 0.5
COLUMNS = ("pairs", "passed", "invalid", "blocked", "infra")


def rows(scorecard: Path) -> dict[str, dict]:
    card = read_json(scorecard)
    out = {}
    for model, m in sorted(card["models"].items()):
        outcomes = m.get("outcomes", {})
        out[model] = {"pairs": m["pairs"], "passed": m["passed"],
                      "invalid": outcomes.get("invalid", 0),
                      "blocked": outcomes.get("blocked", 0),
                      "infra": m["infra_errors"]}
    return out


def first_errors(summary: Path) -> dict[str, str]:
    """Each model's first infra error, as its row in summary.csv says it."""
    found: dict[str, str] = {}
    with open(summary, newline="", encoding="utf-8") as fh:
        for row in csv.DictReader(fh):
            if row["outcome"] == "infra_error" and row["model"] not in found:
                found[row["model"]] = f"{row['task']}: {row['errors'][:200]}"
    return found


def table(counts: dict[str, dict]) -> str:
    width = max([len("model"), *map(len, counts)])
    lines = ["model".ljust(width) + "".join(f"{c:>9}" for c in COLUMNS)]
    lines += [name.ljust(width) + "".join(f"{r[c]:>9}" for c in COLUMNS)
              for name, r in counts.items()]
    return "\n".join(lines)


def verdict(scorecard: Path, summary: Path,
            max_infra_rate: float = DEFAULT_MAX_INFRA_RATE) -> tuple[str, list[str]]:
    """The table, and one line per model whose infra-error share is too high."""
    counts = rows(scorecard)
    errors = first_errors(summary)
    failed = [f"{name}: {r['infra']}/{r['pairs']} pairs are infra errors (more than "
              f"{max_infra_rate:.0%}); first: {errors.get(name, '?')}"
              for name, r in counts.items()
              if r["pairs"] and r["infra"] / r["pairs"] > max_infra_rate]
    return table(counts), failed
