"""The summary stage: every pair's score.json into summary.csv and scorecard.json.

The only per-run step that imports pandas (1.1 s here): it runs once per run, not per pair.
"""

from __future__ import annotations

import io
from pathlib import Path

from .evidence import read_json, write_bytes_atomic, write_json
from .provenance import versions

SCHEMA = "wirebench.scorecard/1"
COLUMNS = ["model", "task", "sample", "outcome", "expected_outcome", "outcome_ok", "valid",
           "applied", "score", "passed", "matched", "expected", "extra_named_nets",
           "relabel_equivalent", "needs_human", "turns", "attempts", "agent_wall_s",
           "prompt_tokens", "completion_tokens", "cost_usd", "errors"]
SCORED = {"model", "task", "sample", "outcome", "outcome_ok", "valid", "applied", "score",
          "passed", "matched", "expected", "relabel_equivalent"}


def load_rows(runs: Path, models: list[str], tasks: list[str], samples: int) -> list[dict]:
    rows = []
    for model in models:
        for task in tasks:
            for sample in range(1, samples + 1):
                doc = read_json(Path(runs) / model / task / str(sample) / "score.json")
                agent = doc.get("agent") or {}
                rows.append({
                    **{k: doc[k] for k in SCORED},
                    "expected_outcome": "|".join(doc["expected_outcome"]),
                    "extra_named_nets": ";".join(doc["extra_named_nets"]),
                    "needs_human": ";".join(doc["needs_human"]),
                    "turns": agent.get("turns_used"),
                    "attempts": agent.get("attempts"),
                    "agent_wall_s": agent.get("wall_s"),
                    "prompt_tokens": agent.get("prompt_tokens"),
                    "completion_tokens": agent.get("completion_tokens"),
                    "cost_usd": agent.get("cost_usd"),
                    "errors": " | ".join(doc["errors"]),
                    "akcli": doc["versions"].get("akcli"),
                })
    return rows


def _mean(col):
    col = col.dropna()
    return round(float(col.mean()), 3) if len(col) else None


def _total(col):
    col = col.dropna()
    return round(float(col.sum()), 6) if len(col) else None


def scorecard(df, provenance: dict | None = None) -> dict:
    per_model = {}
    for model, group in df.groupby("model", sort=True):
        # An infra_error is not the model's answer: it is reported, not scored.
        scored = group[group["outcome"] != "infra_error"]
        per_model[model] = {
            "pairs": int(len(group)),
            "infra_errors": int(len(group) - len(scored)),
            "scored_pairs": int(len(scored)),
            "passed": int(scored["passed"].sum()),
            "pass_rate": round(float(scored["passed"].mean()), 4) if len(scored) else None,
            "mean_score": round(float(scored["score"].mean()), 4) if len(scored) else None,
            "outcome_ok": int(group["outcome_ok"].sum()),
            "relabel_equivalent": int(group["relabel_equivalent"].fillna(False).astype(bool).sum()),
            "needs_human": int((group["needs_human"] != "").sum()),
            "outcomes": {k: int(v) for k, v in
                         group["outcome"].value_counts().sort_index().items()},
            "mean_turns": _mean(group["turns"]),
            "mean_agent_wall_s": _mean(group["agent_wall_s"]),
            "prompt_tokens": _total(group["prompt_tokens"]),
            "completion_tokens": _total(group["completion_tokens"]),
            "cost_usd": _total(group["cost_usd"]),
        }
    return {
        "schema": SCHEMA,
        "models": per_model,
        "tasks": int(df["task"].nunique()),
        "samples": int(df["sample"].max()),
        # akcli as the pairs recorded it (a list: a run can mix pairs of two versions).
        "versions": {**versions(), "akcli": sorted(v for v in df["akcli"].dropna().unique())},
        "corpus_sha256": (provenance or {}).get("corpus_sha256"),
        "config_sha256": (provenance or {}).get("config_sha256"),
    }


def write_summary(runs: Path, models: list[str], tasks: list[str], samples: int,
                  csv_out: Path, scorecard_out: Path, provenance: dict | None = None) -> None:
    import pandas as pd

    df = pd.DataFrame(load_rows(runs, models, tasks, samples))
    buf = io.StringIO()
    df[COLUMNS].to_csv(buf, index=False)
    write_bytes_atomic(csv_out, buf.getvalue().encode())
    write_json(scorecard_out, scorecard(df, provenance))
