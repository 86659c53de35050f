"""The reports: report.md (plain text) and report.html (report_html.py), from the same
summary and scorecard. Both list the models best first (summary.ranked), and both take
their rows from summary.py, so that the two never tell a different story.

report.md is a list of sections, each a function of (df, card, models) that returns its
lines (an empty list leaves it out): a new table is one more function in SECTIONS."""

from __future__ import annotations

from pathlib import Path

from wirebench.evidence.files import read_json, write_bytes_atomic
from wirebench.reports.summary import (
    FAILURE_CLASS_NOTE,
    GAPS_NOTE,
    RANK_NOTE,
    attack_rows,
    contamination,
    failure_class_rows,
    failure_rows,
    narrowed_note,
    ranked,
    rate_tables,
    skills_line,
    true,
    verdict,
    verdict_text,
)
from wirebench.verify.scoring import FAILURE_CLASSES


def md_table(head: list[str], rows: list[list], right: int | list[bool] = 0) -> list[str]:
    """A markdown table; the last `right` columns (or those flagged) right-aligned."""
    flags = right if isinstance(right, list) else [i >= len(head) - right
                                                   for i in range(len(head))]
    align = ["---:" if f else "---" for f in flags]
    return ["| " + " | ".join(head) + " |", "|" + "|".join(align) + "|",
            *("| " + " | ".join(str(c) for c in row) + " |" for row in rows)]


def _cell(group) -> str:
    """One matrix cell in words (report.md has no colours): a pair's verdict, every
    failure starting "fail"; `k/n pass` when there are repeats."""
    rows = group.to_dict("records")
    if not rows:
        return "-"
    if len(rows) > 1:
        return (f"{sum(true(r['passed']) for r in rows)}/{len(rows)} pass, mean "
                f"{group['score'].mean():.2f}")
    row = rows[0]
    v, text = verdict(row), verdict_text(row)
    if v == "infra":
        return text
    if v == "pass":
        return "PASS" + text[len("pass"):]
    if v == "refused":
        return f"PASS ({text})"
    if v == "invalid":
        return f"fail: {text}"
    return f"{text}, score {float(row['score']):.2f}"


def header(df, card: dict, models: list[str]) -> list[str]:
    v = card["versions"]
    lines = ["# wirebench report", "",
             f"wirebench {v['wirebench']}, akcli {', '.join(v['akcli']) or '-'}; "
             f"{card['tasks']} tasks x {len(models)} models x {card['samples']} samples.", ""]
    note = narrowed_note(card)
    lines += [note, ""] if note else []
    skills = skills_line(card, models)
    lines += [skills, ""] if skills else []
    return lines + [
        "Pass rates leave out infra errors (HTTP 429/5xx, no connection, a command agent's",
        "exit 75): those are not the model's answers. They are counted in their own",
        "column, and the next one counts them as failures.", "",
        "Passed: the right outcome and every functional criterion (nets, values,",
        "simulation, design rules, ERC errors). Clean: passed, with a clean layout and",
        "no ERC warnings too. A refusal or block the task asks for is a pass.", "",
        RANK_NOTE]


def model_table(df, card: dict, models: list[str]) -> list[str]:
    """The models, best first. The skills folder is the last column: the ones before it
    keep their places for whoever reads the table by position."""
    rows = []
    for model in models:
        m = card["models"][model]
        lo, hi = m["pass_at_1_ci"]
        rate = "-" if m["pass_rate"] is None else f"{m['pass_rate']:.1%} [{lo:.0%}, {hi:.0%}]"
        tokens = (m["prompt_tokens"] or 0) + (m["completion_tokens"] or 0)
        rows.append([
            model, m["pairs"], m["infra_errors"], m["passed"], rate,
            "-" if m.get("clean_rate") is None else f"{m['clean']} ({m['clean_rate']:.1%})",
            "-" if m["pass_rate_all_pairs"] is None else f"{m['pass_rate_all_pairs']:.1%}",
            "-" if m["mean_score"] is None else f"{m['mean_score']:.3f}",
            int(tokens) or "-", "-" if m["cost_usd"] is None else f"${m['cost_usd']:.4f}",
            m.get("skills") or "-"])
    head = ["model", "pairs", "infra errors", "passed", "pass rate (95% CI)", "clean",
            "infra as failures", "mean score", "tokens", "cost", "skills folder"]
    return ["", *md_table(head, rows, [False] + [True] * 9 + [False])]


def gaps_table(df, card: dict, models: list[str]) -> list[str]:
    """Each model against the next in rank: told apart, or not."""
    gaps = card.get("rank_gaps") or []
    if not gaps:
        return []
    rows = [[g["above"], g["below"], g["shared"], g["above_alone"], g["below_alone"],
             f"{g['mcnemar_p']:.3g}", "yes" if g["told_apart"] else "no"] for g in gaps]
    head = ["above", "below", "pairs both answered", "above alone", "below alone",
            "McNemar p", "told apart"]
    return ["", f"**Next in rank.** {GAPS_NOTE}", "",
            *md_table(head, rows, [False, False, True, True, True, True, False])]


def repeats_table(df, card: dict, models: list[str]) -> list[str]:
    k = card["samples"]
    if k < 2:
        return []
    rows = [[m, *(f"{card['models'][m][key]:.1%}" for key in
                  ("pass_at_1", "pass_at_k", "pass_hat_k"))] for m in models]
    return ["", *md_table(["model", "pass@1", f"pass@{k}", f"pass^{k}"], rows, right=3)]


def tier_table(df, card: dict, models: list[str]) -> list[str]:
    lines = []
    for title, rows in rate_tables(card, models):
        lines += ["", *md_table([title, *models], [[g, *cells] for g, cells in rows],
                                right=len(models))]
    return lines


def failure_class_table(df, card: dict, models: list[str]) -> list[str]:
    """Failed pairs by failure class, per model and per tier."""
    rows = failure_class_rows(card, models)
    if not rows:
        return []
    return ["", FAILURE_CLASS_NOTE, "",
            *md_table(["model", "tier", *FAILURE_CLASSES],
                      [[m, tier, *counts] for m, tier, counts in rows],
                      right=len(FAILURE_CLASSES))]


def signals(df, card: dict, models: list[str]) -> list[str]:
    found = contamination(card, models)
    return ["", "**Public against private split.** " + " ".join(
        f"{line}." for line in found)] if found else []


def attack_table(df, card: dict, models: list[str]) -> list[str]:
    rows = attack_rows(card, models)
    if not rows:
        return []
    return ["", "Injection tasks: following the planted instruction fails the pair (attack "
            "success); utility is the mean score, drawing the right circuit anyway.", "",
            *md_table(["model", "injection pairs", "attack success", "utility under attack"],
                      [list(r) for r in rows], right=3)]


def matrix(df, card: dict, models: list[str]) -> list[str]:
    rows = [[task, *(_cell(by_task[by_task["model"] == m]) for m in models)]
            for task, by_task in df.groupby("task", sort=True)]
    return ["", *md_table(["task", *models], rows)]


def review_list(df, card: dict, models: list[str]) -> list[str]:
    review = df[df["needs_human"] != ""]
    if not len(review):
        return []
    return ["", "## Needs a person", "",
            "These criteria are `needs_human`: they never fail a pair, and are listed",
            "here so that nobody drops them. Each pair's sheet is its board.svg.", "",
            *(f"- {row.model} / {row.task} / {row.sample}: {row.needs_human} "
              f"(runs/{row.model}/{row.task}/{row.sample}/board.svg)"
              for row in review.itertuples())]


def why_failed(df, card: dict, models: list[str]) -> list[str]:
    rows = failure_rows(df, models)
    if not rows:
        return []
    return ["", "## Why pairs failed", "",
            *(f"- {r['model']} / {r['task']} / {r['sample']}: "
              + (f"[{r['failure_class']}] " if r["failure_class"] else "") + r["reason"]
              for r in rows)]


SECTIONS = (header, model_table, gaps_table, repeats_table, tier_table, failure_class_table,
            signals, attack_table, matrix, review_list, why_failed)


def render(df, card: dict, tasks_dir: Path | None = None) -> str:
    from wirebench.reports import variants

    models = ranked(card, sorted(df["model"].unique()))
    lines = []
    for section in SECTIONS:
        lines += section(df, card, models)
        if section is tier_table:  # each board beside its spec variant: reads task.yaml
            lines += variants.markdown(df, tasks_dir)
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
    write_bytes_atomic(out, render(df, card, tasks_dir).encode())
    if html:
        from wirebench.reports import report_html

        report_html.write(df, card, runs, tasks_dir, html, archive_dir)
