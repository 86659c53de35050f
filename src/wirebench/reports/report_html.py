"""results/report.html: one self-contained page (no network, no external files).

- a model x task heatmap of score and outcome, and each model's pass rate with its 95%
  Wilson interval (matplotlib, inlined as SVG);
- pass@1, pass@k and pass^k per model when there are repeats;
- the `needs_human` items, each with its rendered sheet;
- pass rates by tier and by family;
- a drill-down for every pair: the sheet akcli rendered, expected vs observed nets as a
  diff (or, for a design task, each measure against its window, the worst corner and a
  plot of the simulation), the validation and rail errors, the agent's turns, latency
  and tokens, and each criterion's verdict.
"""

from __future__ import annotations

import base64
import io
import json
from html import escape
from pathlib import Path

from wirebench.evidence.files import read_json, write_bytes_atomic
from wirebench.verify.scoring import observed_named_nets

OUTCOME_MARK = {"success": "", "invalid": "I", "blocked": "B", "infra_error": "X",
                "stop-condition": "S", "human-review-required": "H"}
STYLE = """
body{font:14px/1.45 system-ui,sans-serif;margin:24px;color:#1d2330;max-width:1200px}
h1{font-size:22px}h2{font-size:18px;margin-top:32px;border-bottom:1px solid #dde}
table{border-collapse:collapse;margin:8px 0}td,th{border:1px solid #dde;padding:3px 8px;
text-align:left;vertical-align:top}th{background:#f3f4f8}
details{border:1px solid #dde;border-radius:6px;margin:6px 0;padding:4px 10px}
summary{cursor:pointer}.pass{color:#116b2f;font-weight:600}.fail{color:#a3161a;font-weight:600}
.needs_human{color:#8a5a00;font-weight:600}.sheet{max-width:100%;max-height:420px;
border:1px solid #eee;background:#fff}.muted{color:#667}code{background:#f3f4f8;padding:0 3px}
#failed-only:checked~#pairs details.pair[data-passed='1']{display:none}
pre.answer{max-height:480px;overflow:auto;background:#f7f7fa;padding:6px;font-size:12px}
"""


def _svg(fig) -> str:
    buf = io.StringIO()
    fig.savefig(buf, format="svg", bbox_inches="tight")
    text = buf.getvalue()
    return text[text.index("<svg"):]


def heatmap(df, models: list[str], tasks: list[str]) -> str:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np
    from matplotlib.colors import ListedColormap

    # The colour says pass or fail (a pair can fail with a score of 1.00: a criterion
    # failed); the score is the cell's text. Over samples, the share that passed.
    scored = df[df["outcome"] != "infra_error"]
    grid = scored.groupby(["task", "model"])["score"].mean().unstack("model").reindex(
        index=tasks, columns=models)
    passed = scored.groupby(["task", "model"])["passed"].mean().unstack("model").reindex(
        index=tasks, columns=models)
    marks = df.groupby(["task", "model"])["outcome"].agg(
        lambda s: "".join(sorted({OUTCOME_MARK.get(o, "?") for o in s}))).unstack("model")
    fig, ax = plt.subplots(figsize=(1.4 + 1.1 * len(models), 0.8 + 0.28 * len(tasks)))
    shades = ListedColormap(["#e8a3a5", "#f3d9a4", "#a8d8b2"])  # failed, some passed, passed
    share = passed.to_numpy(dtype=float)
    levels = np.where(np.isnan(share), np.nan, (share > 0) * 1.0 + (share >= 1) * 1.0)
    cmap = shades.with_extremes(bad="#d5d7de")  # infra errors only: no verdict
    ax.imshow(levels, cmap=cmap, vmin=-0.5, vmax=2.5, aspect="auto")
    ax.set_xticks(range(len(models)), models, rotation=30, ha="right")
    ax.set_yticks(range(len(tasks)), tasks, fontsize=8)
    for i, task in enumerate(tasks):
        for j, model in enumerate(models):
            mark = marks.loc[task, model] if model in marks.columns else ""
            value = grid.loc[task, model]
            text = f"{value:.2f}{mark}" if value == value else mark  # NaN: infra only
            ax.text(j, i, text, ha="center", va="center", fontsize=7)
    ax.set_title("pass (green) / fail (red) / some samples (amber) / infra only (grey);\n"
                 "text: mean score (I invalid, B blocked, S/H declined, X infra)", fontsize=9)
    svg = _svg(fig)
    plt.close(fig)
    return svg


def pass_rate_chart(card: dict, models: list[str]) -> str:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rates = [card["models"][m]["pass_at_1"] or 0.0 for m in models]
    lo = [r - card["models"][m]["pass_at_1_ci"][0] for r, m in zip(rates, models, strict=True)]
    hi = [card["models"][m]["pass_at_1_ci"][1] - r for r, m in zip(rates, models, strict=True)]
    fig, ax = plt.subplots(figsize=(6, 0.6 + 0.45 * len(models)))
    ax.barh(models, rates, xerr=[lo, hi], color="#4a7bd0", capsize=4)
    ax.set_xlim(0, 1)
    ax.set_xlabel("pass rate (95% Wilson interval; infra errors left out)")
    svg = _svg(fig)
    plt.close(fig)
    return svg


def _fmt(value, pct: bool = False) -> str:
    if value is None or value != value:
        return "-"
    return f"{value:.1%}" if pct else str(value)


def _ci(pair) -> str:
    return "-" if not pair else f"[{pair[0]:.1%}, {pair[1]:.1%}]"


def model_table(card: dict, models: list[str]) -> str:
    k = card["samples"]
    rows = []
    for m in models:
        s = card["models"][m]
        tokens = (s["prompt_tokens"] or 0) + (s["completion_tokens"] or 0)
        repeats = (f"<td>{_fmt(s['pass_at_k'], True)} {_ci(s['pass_at_k_ci'])}</td>"
                   f"<td>{_fmt(s['pass_hat_k'], True)} {_ci(s['pass_hat_k_ci'])}</td>"
                   if k > 1 else "")
        rows.append(
            f"<tr><td>{escape(m)}</td><td>{s['pairs']}</td><td>{s['infra_errors']}</td>"
            f"<td>{s['passed']}</td><td>{_fmt(s['pass_at_1'], True)} {_ci(s['pass_at_1_ci'])}</td>"
            f"{repeats}<td>{_fmt(s['mean_score'])}</td><td>{s['relabel_equivalent']}</td>"
            f"<td>{int(tokens) or '-'}</td><td>{_fmt(s['cost_usd'])}</td></tr>")
    head = f"<th>pass@{k} (95% CI)</th><th>pass^{k} (95% CI)</th>" if k > 1 else ""
    return ("<table id='models'><tr><th>model</th><th>pairs</th><th>infra errors</th>"
            f"<th>passed</th><th>pass@1 (95% CI)</th>{head}"
            "<th>mean score</th><th>relabel-equivalent</th><th>tokens</th><th>cost $</th></tr>"
            + "".join(rows) + "</table>")


def _sheet_img(pair: Path, css: str = "sheet") -> str:
    svg = pair / "board.svg"
    if not svg.is_file():
        return "<p class='muted'>no rendered sheet</p>"
    data = base64.b64encode(svg.read_bytes()).decode()
    return f"<img class='{css}' alt='rendered sheet' src='data:image/svg+xml;base64,{data}'>"


def nets_diff(expected: dict, nets_doc: dict) -> str:
    observed = observed_named_nets(nets_doc)
    rows = []
    for name in sorted(expected):
        want, got = expected[name], observed.get(name, frozenset())
        status = "match" if want == got else ("missing net" if not got else "differs")
        rows.append(f"<tr><td>{escape(name)}</td><td>{status}</td>"
                    f"<td>{escape(', '.join(sorted(want - got)))}</td>"
                    f"<td>{escape(', '.join(sorted(got - want)))}</td></tr>")
    for name in sorted(set(observed) - set(expected)):
        rows.append(f"<tr><td>{escape(name)}</td><td>extra named net</td><td></td>"
                    f"<td>{escape(', '.join(sorted(observed[name])))}</td></tr>")
    return ("<table class='nets'><tr><th>net</th><th>status</th><th>missing members</th>"
            "<th>extra members</th></tr>" + "".join(rows) + "</table>")


def _turns(agent: dict) -> str:
    rows = []
    for turn in agent.get("turns", []):
        for i, a in enumerate(turn["attempts"], start=1):
            tokens = "/".join(str(a.get(k, "-")) for k in ("prompt_tokens", "completion_tokens"))
            code = a.get("http_status", a.get("exit_code", "-"))
            rows.append(f"<tr><td>{turn['turn']}.{i}</td><td>{escape(a['status'])}</td>"
                        f"<td>{a['wall_s']}</td><td>{code}</td><td>{tokens}</td>"
                        f"<td>{escape(a.get('error') or '')}</td></tr>")
    return ("<table class='turns'><tr><th>turn.attempt</th><th>status</th><th>wall s</th>"
            "<th>exit / HTTP</th><th>tokens in/out</th><th>error</th></tr>"
            + "".join(rows) + "</table>")


def _trajectory(agent: dict) -> str:
    """A tool-calling agent's steps as a timeline: which tool, how it went, how much went
    in and came back, and how long it took."""
    steps = [s for turn in agent.get("turns", []) for s in turn.get("trajectory", [])]
    if not steps:
        return ""
    items = "".join(
        f"<li class='{'pass' if s['status'] == 'ok' else 'fail'}'><code>{escape(s['tool'])}"
        f"</code> {escape(s['status'])}: {s['args_bytes']} B in, {s['result_bytes']} B back, "
        f"{s['latency_s']:.2f} s</li>" for s in steps)
    budget = (f"<p>The <code>{escape(agent['budget'])}</code> budget ran out.</p>"
              if agent.get("budget") else "")
    return f"<h4>Tool calls</h4><ol class='trajectory'>{items}</ol>{budget}"


def sim_plot(wave: dict) -> str:
    """The simulation's kept vectors against time (or frequency, on a log axis)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    columns = wave.get("columns") or {}
    x_name = wave.get("x")
    if x_name not in columns:
        return ""
    fig, ax = plt.subplots(figsize=(6, 2.6))
    for name, values in columns.items():
        if name != x_name:
            ax.plot(columns[x_name], values, label=name)
    if x_name == "frequency":
        ax.set_xscale("log")
    ax.set_xlabel(x_name)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    svg = _svg(fig)
    plt.close(fig)
    return f"<div class='sim-plot'>{svg}</div>"


def measures_table(sim: dict) -> str:
    """Each measure against its window: nominal, the range over the corners, verdict."""
    rows = []
    for m in sim.get("measures", []):
        spread = ("-" if m["min_over_corners"] is None else
                  f"{m['min_over_corners']:.4g} .. {m['max_over_corners']:.4g}")
        value = "-" if m["value"] is None else f"{m['value']:.4g}"
        mark = "pass" if m["ok"] else "fail"
        rows.append(f"<tr><td>{escape(m['name'])}</td><td>{escape(m['window'])}</td>"
                    f"<td>{value}</td><td>{spread}</td><td class='{mark}'>{mark}</td>"
                    f"<td>{escape(m.get('why', ''))}</td></tr>")
    worst = sim.get("worst_corner")
    corner = ("" if not worst else "<p>worst corner: <code>" + escape(", ".join(
        f"{k}={v}" for k, v in sorted(worst["params"].items()))) + "</code> fails "
        + escape(", ".join(worst["failed"])) + "</p>")
    return (f"<p>simulation: <b>{escape(sim['status'])}</b>: {escape(sim['reason'])}</p>"
            "<table class='measures'><tr><th>measure</th><th>window</th><th>nominal</th>"
            "<th>over corners</th><th>verdict</th><th>why</th></tr>" + "".join(rows)
            + f"</table>{corner}{sim_plot(sim.get('wave') or {})}")


def drilldown(pair: Path, score: dict, expected: dict) -> str:
    key = f"{score['model']}/{score['task']}/{score['sample']}"
    mark = "pass" if score["passed"] else "fail"
    verdicts = "".join(
        f"<tr><td>{escape(c['id'])}</td><td>{c['kind']}</td>"
        f"<td class='{c['verdict']}'>{c['verdict']}</td><td>{escape(c['detail'])}</td></tr>"
        for c in score["criteria"])
    errors = "".join(f"<li><code>{escape(e)}</code></li>" for e in score["errors"])
    agent = read_json(pair / "agent.json") if (pair / "agent.json").is_file() else {}
    return (
        f"<details class='pair' id='pair-{escape(key.replace('/', '-'))}' "
        f"data-passed='{int(score['passed'])}'><summary>"
        f"<span class='{mark}'>{mark.upper()}</span> {escape(key)}: outcome "
        f"{score['outcome']} (expected {' or '.join(score['expected_outcome'])}), score "
        f"{score['score']}</summary>"
        f"{_sheet_img(pair)}{_function(pair, expected)}"
        f"<h4>Criteria</h4><table><tr><th>id</th><th>kind</th><th>verdict</th><th>detail</th>"
        f"</tr>{verdicts}</table>"
        f"<h4>Errors (validation, rails, post-checks)</h4><ul>{errors or '<li>none</li>'}</ul>"
        f"<h4>Agent</h4>{_turns(agent)}{_trajectory(agent)}{_answer(pair)}</details>")


ANSWER_SHOWN = 64 * 1024


def _answer(pair: Path) -> str:
    """The agent's op-list as it wrote it, pretty-printed when it is JSON, collapsed."""
    path = pair / "ops.json"
    if not path.is_file():
        return ""
    raw = path.read_bytes()[:ANSWER_SHOWN].decode(errors="replace")
    try:
        text = json.dumps(json.loads(raw), indent=2)
    except (ValueError, RecursionError):  # not JSON, or nested past what json can read
        text = raw
    cut = " (first 64 KiB)" if path.stat().st_size > ANSWER_SHOWN else ""
    return (f"<details class='answer'><summary>The answer (ops.json){cut}</summary>"
            f"<pre class='answer'>{escape(text)}</pre></details>")


def _function(pair: Path, expected: dict) -> str:
    """What the pair is judged on: its simulation (design tasks) or its named nets."""
    if (pair / "sim.json").is_file():
        return f"<h4>Simulation</h4>{measures_table(read_json(pair / 'sim.json'))}"
    return (f"<h4>Nets: expected vs observed</h4>"
            f"{nets_diff(expected, read_json(pair / 'nets.json'))}")


def size_chart(card: dict, models: list[str]) -> str:
    """Pass rate against the size of the generated tasks, one line per model."""
    from wirebench.reports.summary import SIZE_ORDER

    buckets = sorted({b for m in models for b in card["models"][m].get("by_size", {})},
                     key=SIZE_ORDER.__getitem__)
    if not buckets:
        return ""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6, 3))
    for m in models:
        got = card["models"][m].get("by_size", {})
        xs = [i for i, b in enumerate(buckets) if b in got]
        ax.plot(xs, [got[buckets[i]]["pass_rate"] for i in xs], marker="o", label=m)
    ax.set_xticks(range(len(buckets)), buckets)
    ax.set_ylim(-0.05, 1.05)
    ax.set_ylabel("pass rate")
    ax.set_xlabel("size of the generated task")
    ax.legend(fontsize=8)
    svg = _svg(fig)
    plt.close(fig)
    return f"<h2>Pass rate against size</h2><div id='size-chart'>{svg}</div>"


def contamination_section(card: dict, models: list[str]) -> str:
    from wirebench.reports.summary import contamination

    signals = contamination(card, models)
    if not signals:
        return ""
    return ("<h2>Public against private split</h2><ul id='contamination'>"
            + "".join(f"<li>{escape(line)}</li>" for line in signals) + "</ul>")


def attack_section(card: dict, models: list[str]) -> str:
    from wirebench.reports.summary import attack_rows

    rows = attack_rows(card, models)
    if not rows:
        return ""
    return ("<h2>Injection tasks</h2><p>Following the planted instruction fails the pair "
            "(attack success); utility is the mean score.</p><table id='attack-rates'><tr>"
            "<th>model</th><th>injection pairs</th><th>attack success</th>"
            "<th>utility under attack</th></tr>"
            + "".join("<tr>" + "".join(f"<td>{escape(c)}</td>" for c in r) + "</tr>"
                      for r in rows) + "</table>")


def tier_section(card: dict, models: list[str]) -> str:
    """Pass rates by tier, by family and by design rule (report.rate_tables), one table
    each."""
    from wirebench.reports.summary import rate_tables

    head = "".join(f"<th>{escape(m)}</th>" for m in models)
    parts = [f"<table id='{title.split()[0]}-rates'><tr><th>{escape(title)}</th>{head}</tr>"
             + "".join(f"<tr><td>{escape(group)}</td>"
                       + "".join(f"<td>{c}</td>" for c in cells) + "</tr>"
                       for group, cells in rows) + "</table>"
             for title, rows in rate_tables(card, models)]
    return "<h2>By tier, family and rule</h2>" + "".join(parts) if parts else ""


def history_section(archive_dir: Path | None) -> str:
    """Pass rates over the archived runs, when there are any (see history.py)."""
    if archive_dir is None or not (Path(archive_dir) / "index.csv").is_file():
        return ""
    from wirebench.reports.history import chart, load

    rows = load(archive_dir)
    return f"<h2>History</h2><div id='history'>{chart(rows)}</div>" if rows else ""


def render(df, card: dict, runs: Path, tasks_dir: Path, archive_dir: Path | None = None) -> str:
    from wirebench.corpus.tasks import load_task
    from wirebench.reports.summary import narrowed_note

    models = sorted(df["model"].unique())
    tasks = sorted(df["task"].unique())
    expected = {t: load_task(Path(tasks_dir) / t).expected_nets() for t in tasks}
    note = narrowed_note(card)
    v = card["versions"]
    parts = [
        "<!doctype html><html><head><meta charset='utf-8'><title>wirebench report</title>",
        f"<style>{STYLE}</style></head><body><h1>wirebench report</h1>",
        f"<p class='muted'>wirebench {v['wirebench']}, akcli {', '.join(v['akcli'])}, "
        f"Python {v.get('python')}, Snakemake {v.get('snakemake')}; {len(tasks)} tasks x "
        f"{len(models)} models x {card['samples']} samples. Pass rates leave out infra "
        "errors.</p>",
        f"<p id='narrowed'>{escape(note)}</p>" if note else "",
        "<h2>Models</h2>", model_table(card, models),
        f"<div id='pass-rates'>{pass_rate_chart(card, models)}</div>",
        tier_section(card, models),
        size_chart(card, models),
        attack_section(card, models),
        contamination_section(card, models),
        f"<h2>Heatmap</h2><div id='heatmap'>{heatmap(df, models, tasks)}</div>",
        history_section(archive_dir),
    ]
    review = df[df["needs_human"] != ""]
    items = []
    for row in review.itertuples():
        pair = Path(runs) / row.model / row.task / str(row.sample)
        score = read_json(pair / "score.json")
        details = "; ".join(escape(c["detail"]) for c in score["criteria"]
                            if c["verdict"] == "needs_human")
        items.append(f"<li><b>{escape(row.model)} / {escape(row.task)} / {row.sample}</b>: "
                     f"{details}<br>{_sheet_img(pair)}</li>")
    parts.append("<h2>Needs a person</h2><ul id='needs-human'>"
                 + ("".join(items) or "<li>nothing to review</li>") + "</ul>")
    # Failed pairs first. The checkbox and #pairs are siblings: the style hides the passed
    # pairs while it is ticked (no script: the page works offline and as a file).
    parts.append("<h2>Every pair</h2><p class='muted'>Failed pairs first.</p>"
                 "<input type='checkbox' id='failed-only'><label for='failed-only'> show "
                 "failed pairs only</label><div id='pairs'>")
    for row in df.sort_values(["passed", "task", "model", "sample"]).itertuples():
        pair = Path(runs) / row.model / row.task / str(row.sample)
        parts.append(drilldown(pair, read_json(pair / "score.json"), expected[row.task]))
    parts.append("</div></body></html>\n")
    return "".join(parts)


def write(df, card: dict, runs: Path, tasks_dir: Path, out: Path,
          archive_dir: Path | None = None) -> None:
    write_bytes_atomic(out, render(df, card, runs, tasks_dir, archive_dir).encode())
