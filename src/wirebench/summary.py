"""The summary stage: every pair's score.json into summary.csv and scorecard.json.

The only per-run step that imports pandas (1.1 s here): it runs once per run, not per pair.
"""

from __future__ import annotations

import io
from pathlib import Path

from . import __version__
from .evidence import read_json, write_bytes_atomic, write_json

SCHEMA = "wirebench.scorecard/1"
COLUMNS = ["model", "task", "sample", "valid", "applied", "score", "passed", "matched",
           "expected", "extra_named_nets", "errors"]


def load_rows(runs: Path, models: list[str], tasks: list[str], samples: int) -> list[dict]:
    rows = []
    for model in models:
        for task in tasks:
            for sample in range(1, samples + 1):
                doc = read_json(Path(runs) / model / task / str(sample) / "score.json")
                rows.append({
                    **{k: doc[k] for k in COLUMNS if k not in ("extra_named_nets", "errors")},
                    "extra_named_nets": ";".join(doc["extra_named_nets"]),
                    "errors": " | ".join(doc["errors"]),
                    "akcli": doc["versions"].get("akcli"),
                })
    return rows


def scorecard(df) -> dict:
    per_model = {}
    for model, group in df.groupby("model", sort=True):
        per_model[model] = {
            "pairs": int(len(group)),
            "passed": int(group["passed"].sum()),
            "pass_rate": round(float(group["passed"].mean()), 4),
            "mean_score": round(float(group["score"].mean()), 4),
        }
    return {
        "schema": SCHEMA,
        "models": per_model,
        "tasks": int(df["task"].nunique()),
        "samples": int(df["sample"].max()),
        "versions": {"wirebench": __version__,
                     "akcli": sorted(v for v in df["akcli"].dropna().unique())},
    }


def write_summary(runs: Path, models: list[str], tasks: list[str], samples: int,
                  csv_out: Path, scorecard_out: Path) -> None:
    import pandas as pd

    df = pd.DataFrame(load_rows(runs, models, tasks, samples))
    buf = io.StringIO()
    df[COLUMNS].to_csv(buf, index=False)
    write_bytes_atomic(csv_out, buf.getvalue().encode())
    write_json(scorecard_out, scorecard(df))
