"""The reports: report.md (plain text) and report.html (report_html.py), from the same
summary and scorecard."""

from __future__ import annotations

from pathlib import Path

from wirebench.evidence.files import read_json, write_bytes_atomic


def _cell(group) -> str:
    """One matrix cell: PASS, or the mean score; `k/n` passed when there are repeats."""
    n, passed = len(group), int(group["passed"].sum())
    if n == 1:
        if group["outcome"].iloc[0] == "infra_error":
            return "infra error"
        if passed and "clean" in group and not _true(group["clean"].iloc[0]):
            return "PASS, not clean"
        return "PASS" if passed else f"fail {group['score'].iloc[0]:.2f}"
    return f"{passed}/{n} pass, mean {group['score'].mean():.2f}"


def _true(value) -> bool:
    return value is True or str(value).strip().lower() in ("true", "1")


def failure_class_table(card: dict, models: list[str]) -> list[str]:
    """Failed pairs by failure class, per model and per tier, as markdown."""
    from wirebench.reports.summary import FAILURE_CLASS_NOTE, failure_class_rows
    from wirebench.verify.scoring import FAILURE_CLASSES

    rows = failure_class_rows(card, models)
    if not rows:
        return []
    return ["", FAILURE_CLASS_NOTE, "",
            "| model | tier | " + " | ".join(FAILURE_CLASSES) + " |",
            "|---|---|" + "---:|" * len(FAILURE_CLASSES),
            *(f"| {m} | {tier} | " + " | ".join(map(str, counts)) + " |"
              for m, tier, counts in rows)]


def tier_table(card: dict, models: list[str]) -> list[str]:
    from wirebench.reports.summary import rate_tables

    lines = []
    for title, rows in rate_tables(card, models):
        lines += ["", f"| {title} | " + " | ".join(models) + " |",
                  "|---|" + "---:|" * len(models)]
        lines += [f"| {group} | " + " | ".join(cells) + " |" for group, cells in rows]
    return lines


def render(df, card: dict) -> str:
    models = sorted(df["model"].unique())
    lines = ["# wirebench report", ""]
    v = card["versions"]
    lines += [f"wirebench {v['wirebench']}, akcli {', '.join(v['akcli']) or '-'}; "
              f"{card['tasks']} tasks x {len(models)} models x {card['samples']} samples.", ""]
    from wirebench.reports.summary import narrowed_note

    note = narrowed_note(card)
    lines += [note, ""] if note else []
    lines += ["Pass rates leave out infra errors (HTTP 429/5xx, no connection, a command agent's",
              "exit 75): those are not the model's answers. They are counted in their own",
              "column, and the next one counts them as failures.", ""]
    lines += ["Passed: the right outcome and every functional criterion (nets, values,",
              "simulation, design rules, ERC errors). Clean: passed, with a clean layout and",
              "no ERC warnings too.", ""]
    lines += ["| model | pairs | infra errors | passed | pass rate (95% CI) | clean "
              "| infra as failures | mean score | tokens | cost |",
              "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for model in models:
        m = card["models"][model]
        lo, hi = m["pass_at_1_ci"]
        rate = "-" if m["pass_rate"] is None else f"{m['pass_rate']:.1%} [{lo:.0%}, {hi:.0%}]"
        mean = "-" if m["mean_score"] is None else f"{m['mean_score']:.3f}"
        tokens = (m["prompt_tokens"] or 0) + (m["completion_tokens"] or 0)
        cost = "-" if m["cost_usd"] is None else f"${m['cost_usd']:.4f}"
        every = ("-" if m["pass_rate_all_pairs"] is None
                 else f"{m['pass_rate_all_pairs']:.1%}")
        clean = ("-" if m.get("clean_rate") is None
                 else f"{m['clean']} ({m['clean_rate']:.1%})")
        lines.append(f"| {model} | {m['pairs']} | {m['infra_errors']} | {m['passed']} | {rate} "
                     f"| {clean} | {every} | {mean} | {int(tokens) or '-'} | {cost} |")
    if card["samples"] > 1:
        k = card["samples"]
        lines += ["", f"| model | pass@1 | pass@{k} | pass^{k} |", "|---|---:|---:|---:|"]
        for model in models:
            m = card["models"][model]
            lines.append(f"| {model} | {m['pass_at_1']:.1%} | {m['pass_at_k']:.1%} "
                         f"| {m['pass_hat_k']:.1%} |")
    lines += tier_table(card, models)
    lines += failure_class_table(card, models)
    from wirebench.reports.summary import attack_rows, contamination

    signals = contamination(card, models)
    if signals:
        lines += ["", "**Public against private split.** " + " ".join(
            f"{line}." for line in signals)]

    attacks = attack_rows(card, models)
    if attacks:
        lines += ["", "Injection tasks: following the planted instruction fails the pair (attack "
                  "success); utility is the mean score, drawing the right circuit anyway.", "",
                  "| model | injection pairs | attack success | utility under attack |",
                  "|---|---:|---:|---:|"]
        lines += [f"| {' | '.join(r)} |" for r in attacks]
    lines += ["", "| task | " + " | ".join(models) + " |",
              "|---|" + "---|" * len(models)]
    for task, by_task in df.groupby("task", sort=True):
        cells = [_cell(by_task[by_task["model"] == m]) for m in models]
        lines.append(f"| {task} | " + " | ".join(cells) + " |")
    review = df[df["needs_human"] != ""]
    if len(review):
        lines += ["", "## Needs a person", "",
                  "These criteria are `needs_human`: they never fail a pair, and are listed",
                  "here so that nobody drops them. Each pair's sheet is its board.svg.", ""]
        for row in review.itertuples():
            lines.append(f"- {row.model} / {row.task} / {row.sample}: {row.needs_human} "
                         f"(runs/{row.model}/{row.task}/{row.sample}/board.svg)")
    unclean = (~df["clean"].map(_true)) if "clean" in df else ~df["passed"].astype(bool)
    failures = df[unclean | ~df["passed"].astype(bool)]
    if len(failures):
        lines += ["", "## Why pairs failed", ""]
        for row in failures.itertuples():
            first = str(row.errors).split(" | ")[0] if row.errors == row.errors else ""
            cls = getattr(row, "failure_class", "") or ""
            first = getattr(row, "first_finding", "") or first
            lines.append(f"- {row.model} / {row.task} / {row.sample}: "
                         + (f"[{cls}] " if cls else "") + first)
    return "\n".join(lines) + "\n"


def write_report(summary: Path, scorecard: Path, out: Path, html: Path | None = None,
                 runs: Path | None = None, tasks_dir: Path | None = None,
                 archive_dir: Path | None = None) -> None:
    import pandas as pd

    try:
        df = pd.read_csv(summary, keep_default_na=False)
    except pd.errors.EmptyDataError:
        raise ValueError(f"{summary}: empty, not a summary.csv") from None
    card = read_json(scorecard)
    write_bytes_atomic(out, render(df, card).encode())
    if html:
        from wirebench.reports import report_html

        report_html.write(df, card, runs, tasks_dir, html, archive_dir)
