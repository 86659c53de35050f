"""Each model's pass rate over the archived runs: a CSV and a chart.

It reads archive/index.csv and each archived run's scorecard.json (straight out of the
tarball), so it needs no agent and no unpacking.
"""

from __future__ import annotations

import csv
import io
import json
import tarfile
from pathlib import Path

from wirebench.evidence.files import write_bytes_atomic

COLUMNS = ["run_id", "date", "model", "pairs", "passed", "pass_rate", "ci_low", "ci_high",
           "akcli", "wirebench"]


def load(archive_dir: Path) -> list[dict]:
    archive_dir = Path(archive_dir)
    index = archive_dir / "index.csv"
    if not index.is_file():
        raise FileNotFoundError(f"{index}: no archived runs (run `snakemake archive` first)")
    rows = []
    with open(index, newline="") as fh:
        runs = list(csv.DictReader(fh))
    for run in sorted(runs, key=lambda r: (r["date"], r["run_id"])):
        with tarfile.open(archive_dir / run["archive"]) as tar:
            card = json.load(tar.extractfile(f"{run['run_id']}/scorecard.json"))
        for model, m in sorted(card["models"].items()):
            lo, hi = m.get("pass_at_1_ci") or (None, None)
            rows.append({"run_id": run["run_id"], "date": run["date"], "model": model,
                         "pairs": m["pairs"], "passed": m["passed"], "pass_rate": m["pass_rate"],
                         "ci_low": lo, "ci_high": hi, "akcli": run["akcli"],
                         "wirebench": run["wirebench"]})
    return rows


def chart(rows: list[dict]) -> str:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    runs = list(dict.fromkeys(r["run_id"] for r in rows))
    fig, ax = plt.subplots(figsize=(7, 3.5))
    for model in sorted({r["model"] for r in rows}):
        mine = [r for r in rows if r["model"] == model]
        x = [runs.index(r["run_id"]) for r in mine]
        ax.plot(x, [r["pass_rate"] for r in mine], marker="o", label=model)
        if all(r["ci_low"] is not None for r in mine):
            ax.fill_between(x, [r["ci_low"] for r in mine], [r["ci_high"] for r in mine],
                            alpha=0.15)
    ax.set_xticks(range(len(runs)), runs, rotation=30, ha="right", fontsize=7)
    ax.set_ylim(0, 1)
    ax.set_ylabel("pass rate (95% CI)")
    ax.legend(fontsize=8)
    ax.set_title("pass rate over archived runs")
    buf = io.StringIO()
    fig.savefig(buf, format="svg", bbox_inches="tight")
    plt.close(fig)
    text = buf.getvalue()
    return text[text.index("<svg"):]


def write(archive_dir: Path, out_dir: Path) -> list[dict]:
    rows = load(archive_dir)
    buf = io.StringIO()
    writer = csv.DictWriter(buf, fieldnames=COLUMNS)
    writer.writeheader()
    writer.writerows(rows)
    write_bytes_atomic(Path(out_dir) / "history.csv", buf.getvalue().encode())
    write_bytes_atomic(Path(out_dir) / "history.svg", chart(rows).encode())
    return rows
