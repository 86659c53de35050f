"""What the checklist gives away: each board's pass rate beside its spec variant's.

A spec task (tier `spec`) is a board restated as requirements, with the ICs' full
datasheets instead of our notes, which list what the board's rules check; its task.yaml
names the board (`variant_of`). The same model passing the board and failing its spec
measures how much of the board tier was the checklist. Both reports show the table
(report.md and report.html), one row per board and model.
"""

from __future__ import annotations

from html import escape
from pathlib import Path

TITLE = "What the checklist gives away"
NOTE = ("Each board beside its spec variant: the same design rules, stated as requirements "
        "with the parts' full datasheets instead of the notes that list what the rules "
        "check. Pass rates leave out infra errors.")


def variants(df, tasks_dir: Path | None) -> list[tuple[str, str]]:
    """(board, spec) for each spec task the summary holds whose task.yaml names its
    board; none without the tasks folder (an archived summary read on its own)."""
    from wirebench.corpus.tasks import TaskError, load_task, task_folder

    if tasks_dir is None or "tier" not in df:
        return []
    out = []
    for task in sorted(set(df.loc[df["tier"] == "spec", "task"])):
        try:
            board = load_task(task_folder(tasks_dir, task)).variant_of
        except TaskError:
            continue  # the folder is gone or broken: tasks check names that, not a report
        if board:
            out.append((board, task))
    return out


def _rate(group) -> tuple[int, int] | None:
    """(passed, scored) over the pairs that are not infra errors, or None for none."""
    scored = group[group["outcome"] != "infra_error"]
    if not len(scored):
        return None
    return int(scored["passed"].astype(bool).sum()), len(scored)


def _cell(rate: tuple[int, int] | None) -> str:
    if rate is None:
        return "not run"
    passed, n = rate
    return f"{passed}/{n} ({passed / n:.0%})"


def rows(df, tasks_dir: Path | None) -> list[list[str]]:
    """[board, spec, model, board pass rate, spec pass rate]: one row per board and model,
    then one per model over all the boards shown (`all`)."""
    pairs = variants(df, tasks_dir)
    if not pairs:
        return []
    out, totals = [], {}
    for model in sorted(df["model"].unique()):
        mine = df[df["model"] == model]
        for board, spec in pairs:
            rates = [_rate(mine[mine["task"] == t]) for t in (board, spec)]
            out.append([board, spec, model, *map(_cell, rates)])
            for i, r in enumerate(rates):
                if r is not None:
                    got = totals.setdefault(model, [[0, 0], [0, 0]])[i]
                    got[0] += r[0]
                    got[1] += r[1]
    for model, (b, s) in totals.items():
        out.append(["all", "all", model, *(_cell(tuple(t) if t[1] else None) for t in (b, s))])
    return out


HEAD = ["board", "spec", "model", "board pass", "spec pass"]


def markdown(df, tasks_dir: Path | None) -> list[str]:
    """The table as report.md lines, or none when the run has no spec task."""
    body = rows(df, tasks_dir)
    if not body:
        return []
    return ["", f"**{TITLE}.** {NOTE}", "", "| " + " | ".join(HEAD) + " |",
            "|---|---|---|---:|---:|", *("| " + " | ".join(r) + " |" for r in body)]


def html(df, tasks_dir: Path | None) -> str:
    """The table as a report.html section, or "" when the run has no spec task."""
    body = rows(df, tasks_dir)
    if not body:
        return ""
    head = "".join(f"<th>{escape(h)}</th>" for h in HEAD)
    cells = "".join("<tr>" + "".join(f"<td>{escape(c)}</td>" for c in r) + "</tr>"
                    for r in body)
    return (f"<h2>{escape(TITLE)}</h2><p class='muted'>{escape(NOTE)}</p>"
            f"<table id='variant-rates'><tr>{head}</tr>{cells}</table>")
