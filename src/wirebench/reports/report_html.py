"""results/report.html: one self-contained page (no network, no external files).

- the models best first (summary.ranked), each with the skills folder it read, its pass
  rate with its 95% Wilson interval (inline SVG), and why its pairs failed: a count per
  failure class and tier, then every failed pair with its reason;
- a model x task matrix whose cells are coloured by the verdict they show (pass,
  expected refusal, fail, invalid, infra error), with its legend;
- pass@1, pass@k and pass^k per model when there are repeats;
- the `needs_human` items, each with its rendered sheet;
- pass rates by tier and by family;
- a drill-down for every pair: the sheet akcli rendered, expected vs observed nets as a
  diff (or, for a design task, each measure against its window, the worst corner and a
  plot of the simulation), the validation and rail errors, the agent's turns, latency
  and tokens, and each criterion's verdict. Collapsed, a pair's row shows its verdict
  and, for a pair that failed, its reason.

The page is a list of sections (`sections`), each a string of HTML: one more table is
one more entry, and `html_table` draws it.
"""

from __future__ import annotations

import base64
import io
import json
from html import escape
from pathlib import Path

from wirebench.evidence.files import read_json, write_bytes_atomic
from wirebench.reports.summary import (
    FAILURE_CLASS_NOTE,
    GAPS_NOTE,
    RANK_NOTE,
    SIZE_ORDER,
    VERDICTS,
    attack_rows,
    contamination,
    failure_class_rows,
    failure_rows,
    narrowed_note,
    ranked,
    rate_tables,
    reason,
    skills_line,
    true,
    verdict,
    verdict_text,
)
from wirebench.verify.scoring import FAILURE_CLASSES, observed_named_nets

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
.v{display:inline-block;padding:0 6px;border-radius:3px;color:#1d2330;white-space:nowrap}
td.v{display:table-cell;border-radius:0}
.v-pass,.v-refused{background:#a8d8b2}.v-fail{background:#e8a3a5}
.v-invalid{background:#d9b8e8}.v-infra{background:#d5d7de}.v-some{background:#f3d9a4}
.v-none{background:#fff}
ul.legend{list-style:none;padding:0;margin:6px 0}ul.legend li{display:inline-block;
margin:2px 14px 2px 0}.reason{color:#4a2a2a}.skills{font-weight:400;font-size:12px;color:#556}
.ci{font-size:11px;color:#667;white-space:nowrap}
table.matrix td{font-size:12px;padding:2px 6px;vertical-align:middle}
"""


def _svg(fig) -> str:
    buf = io.StringIO()
    fig.savefig(buf, format="svg", bbox_inches="tight")
    text = buf.getvalue()
    return text[text.index("<svg"):]


# The pass rates are drawn as SVG here rather than by matplotlib, and the matrix is a
# table: at 200 pairs matplotlib took about 1.5 s of the report's 2 (its import, and an
# artist a cell).


def _text(x: float, y: float, text: str, size: int = 11, anchor: str = "middle",
          extra: str = "") -> str:
    return (f"<text x='{x:.1f}' y='{y:.1f}' font-size='{size}' text-anchor='{anchor}' "
            f"dominant-baseline='middle'{extra}>{escape(text)}</text>")


def html_table(table_id: str, head: list[str], rows: list[list[str]],
               css: str = "") -> str:
    """A table; `head` is text (escaped here), the cells are HTML already."""
    cls = f" class='{css}'" if css else ""
    return (f"<table id='{table_id}'{cls}><tr>" + "".join(f"<th>{escape(h)}</th>" for h in head)
            + "</tr>" + "".join("<tr>" + "".join(f"<td>{c}</td>" for c in row) + "</tr>"
                                for row in rows) + "</table>")


def legend(multi_sample: bool) -> str:
    """What each cell colour means; the badges are the cells' own classes."""
    shown = [v for v in VERDICTS if v != "some" or multi_sample]
    return ("<ul class='legend' id='legend'>" + "".join(
        f"<li><span class='v v-{v}'>{escape(VERDICTS[v][0])}</span> "
        f"{escape(VERDICTS[v][1])}</li>" for v in shown) + "</ul>")


def matrix_cell(rows: list[dict]) -> tuple[str, str, str]:
    """(verdict, text, tooltip) of one model x task cell. One sample: that pair's verdict,
    in words; several: `k/n pass`, coloured by their shared verdict, else `some` when
    some passed, else `fail`."""
    if not rows:
        return "none", "-", "no pair"
    if len(rows) == 1:
        row = rows[0]
        tip = reason(row) or f"score {float(row['score']):.2f}"
        return verdict(row), verdict_text(row), tip
    verdicts = {verdict(r) for r in rows}
    passes = sum(true(r["passed"]) for r in rows)
    shared = verdicts.pop() if len(verdicts) == 1 else (
        "some" if passes else "infra" if verdicts == {"infra"} else "fail")
    tip = "; ".join(f"{r['sample']}: {verdict_text(r)}" for r in rows)
    return shared, f"{passes}/{len(rows)} pass", tip


def heatmap(df, models: list[str], tasks: list[str], card: dict | None = None) -> str:
    """The model x task matrix: each cell coloured by the verdict it shows and saying it
    (a pair can fail with a score of 1.00: the text says why), each column headed by its
    model and the skills folder it read."""
    by = {}
    for row in df.to_dict("records"):
        by.setdefault((row["task"], row["model"]), []).append(row)
    heads = []
    for m in models:
        folder = ((card or {}).get("models", {}).get(m) or {}).get("skills")
        heads.append(f"<th>{escape(m)}"
                     + (f"<br><span class='skills'>{escape(folder)}</span>" if folder else "")
                     + "</th>")
    body = []
    for task in tasks:
        cells = []
        for m in models:
            v, text, tip = matrix_cell(by.get((task, m), []))
            cells.append(f"<td class='v v-{v}' data-verdict='{v}' title='{escape(tip)}'>"
                         f"{escape(text)}</td>")
        body.append(f"<tr><th>{escape(task)}</th>{''.join(cells)}</tr>")
    return ("<table class='matrix' id='matrix'><tr><th>task</th>" + "".join(heads) + "</tr>"
            + "".join(body) + "</table>")


def pass_rate_chart(card: dict, models: list[str]) -> str:
    """Each model's pass rate as a bar, its 95% Wilson interval as a whisker."""
    left = 16 + 6.5 * max((len(m) for m in models), default=0)
    bar_w, row_h = 360, 26
    width, height = left + bar_w + 24, 16 + row_h * len(models) + 40
    parts = [f"<svg xmlns='http://www.w3.org/2000/svg' width='{width:.0f}' "
             f"height='{height:.0f}' font-family='system-ui,sans-serif'>"]
    base = 16 + row_h * len(models)
    for tick in (0, 0.25, 0.5, 0.75, 1):
        x = left + bar_w * tick
        parts.append(f"<line x1='{x:.1f}' y1='10' x2='{x:.1f}' y2='{base:.1f}' "
                     "stroke='#dde'/>")
        parts.append(_text(x, base + 10, f"{tick:g}", 10))
    parts.append(_text(left + bar_w / 2, base + 28,
                       "pass rate (95% Wilson interval; infra errors left out)", 11))
    for i, model in enumerate(models):
        stats = card["models"][model]
        rate, (lo, hi) = stats["pass_at_1"] or 0.0, stats["pass_at_1_ci"] or (0.0, 0.0)
        y = 16 + row_h * i
        parts.append(_text(left - 6, y + row_h / 2, model, 11, "end"))
        parts.append(f"<rect x='{left:.1f}' y='{y + 4:.1f}' width='{bar_w * rate:.1f}' "
                     f"height='{row_h - 8}' fill='#4a7bd0'><title>{escape(model)}: "
                     f"{rate:.1%} [{lo:.1%}, {hi:.1%}]</title></rect>")
        mid = y + row_h / 2
        parts.append(f"<path d='M{left + bar_w * lo:.1f} {mid:.1f}H{left + bar_w * hi:.1f}"
                     f"M{left + bar_w * lo:.1f} {mid - 5:.1f}v10M{left + bar_w * hi:.1f} "
                     f"{mid - 5:.1f}v10' stroke='#1d2330' fill='none'/>")
    return "".join(parts) + "</svg>"


def _fmt(value, pct: bool = False) -> str:
    if value is None or value != value:
        return "-"
    return f"{value:.1%}" if pct else str(value)


def _ci(pair) -> str:
    return "" if not pair else f"<br><span class='ci'>[{pair[0]:.1%}, {pair[1]:.1%}]</span>"


def _classes_cell(counts: dict) -> str:
    """A model's failed pairs by class, in verify/scoring.py's order: "function 3, ..."."""
    return ", ".join(f"{c} {counts[c]}" for c in FAILURE_CLASSES if counts.get(c)) or "none"


def model_table(card: dict, models: list[str]) -> str:
    """The models in the order given (best first), each with the skills folder it read
    and its failed pairs by class."""
    k = card["samples"]
    rows = []
    for rank, m in enumerate(models, start=1):
        s = card["models"][m]
        tokens = (s["prompt_tokens"] or 0) + (s["completion_tokens"] or 0)
        repeats = ([f"{_fmt(s['pass_at_k'], True)} {_ci(s['pass_at_k_ci'])}",
                    f"{_fmt(s['pass_hat_k'], True)} {_ci(s['pass_hat_k_ci'])}"]
                   if k > 1 else [])
        rows.append([
            str(rank), f"<b>{escape(m)}</b>",
            escape(s.get("skills") or "-"),
            str(s["pairs"]), str(s["infra_errors"]), str(s["passed"]),
            f"{_fmt(s['pass_at_1'], True)} {_ci(s['pass_at_1_ci'])}",
            _fmt(s.get("clean_rate"), True),
            f"{_fmt(s['pass_rate_all_pairs'], True)} {_ci(s['pass_rate_all_pairs_ci'])}",
            *repeats, escape(_classes_cell(s.get("failure_classes") or {})),
            _fmt(s["mean_score"]), str(s["relabel_equivalent"]), str(int(tokens) or "-"),
            _fmt(s["cost_usd"])])
    head = ["rank", "model", "skills folder", "pairs", "infra errors", "passed",
            "pass@1 (95% CI)", "clean", "infra as failures (95% CI)",
            *([f"pass@{k} (95% CI)", f"pass^{k} (95% CI)"] if k > 1 else []),
            "failed, by class", "mean score", "relabel-equivalent", "tokens", "cost $"]
    return html_table("models", head, rows)


def gaps_section(card: dict) -> str:
    """Each model against the next in rank: told apart, or not."""
    gaps = card.get("rank_gaps") or []
    if not gaps:
        return ""
    rows = [[escape(g["above"]), escape(g["below"]), str(g["shared"]), str(g["above_alone"]),
             str(g["below_alone"]), f"{g['mcnemar_p']:.3g}",
             "yes" if g["told_apart"] else "<b>no</b>"] for g in gaps]
    head = ["above", "below", "pairs both answered", "above alone", "below alone",
            "McNemar p", "told apart"]
    return (f"<h3>Next in rank</h3><p>{escape(GAPS_NOTE)}</p>"
            + html_table("rank-gaps", head, rows))


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


def pair_id(model: str, task: str, sample) -> str:
    return f"pair-{model}-{task}-{sample}"


def drilldown(pair: Path, score: dict, expected: dict, row: dict) -> str:
    """One pair, collapsed: its verdict (coloured as its matrix cell) and, unless it is a
    clean pass, its reason, both on the row itself; open, everything behind them. `row`
    is the pair's summary row, which the verdict and reason are read from."""
    key = f"{score['model']}/{score['task']}/{score['sample']}"
    v, why = verdict(row), reason(row)
    verdicts = "".join(
        f"<tr><td>{escape(c['id'])}</td><td>{c['kind']}</td>"
        f"<td class='{c['verdict']}'>{c['verdict']}</td><td>{escape(c['detail'])}</td></tr>"
        for c in score["criteria"])
    errors = "".join(f"<li><code>{escape(e)}</code></li>" for e in score["errors"])
    agent = read_json(pair / "agent.json") if (pair / "agent.json").is_file() else {}
    return (
        f"<details class='pair' id='{escape(pair_id(*key.split('/')))}' "
        f"data-passed='{int(score['passed'])}' data-verdict='{v}'><summary>"
        f"<span class='v v-{v}'>{escape(verdict_text(row))}</span> <b>{escape(key)}</b>"
        + (f" <span class='reason'>{escape(why)}</span>" if why else "")
        # The outcome against the expected one, unless the reason already says it.
        + " <span class='muted'>" + ("" if why.startswith("outcome ") else
                                     f"outcome {score['outcome']} (expected "
                                     f"{' or '.join(score['expected_outcome'])}), ")
        + f"score {score['score']}</span></summary>"
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
    from wirebench.verify.oplist import parse_json

    raw = path.read_bytes()[:ANSWER_SHOWN].decode(errors="replace")
    doc, unreadable = parse_json(raw)  # not JSON, or not a document: shown as it is
    text = raw if unreadable else json.dumps(doc, indent=2)
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
    signals = contamination(card, models)
    if not signals:
        return ""
    return ("<h2>Public against private split</h2><ul id='contamination'>"
            + "".join(f"<li>{escape(line)}</li>" for line in signals) + "</ul>")


def attack_section(card: dict, models: list[str]) -> str:
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
    head = "".join(f"<th>{escape(m)}</th>" for m in models)
    parts = [f"<table id='{title.split()[0]}-rates'><tr><th>{escape(title)}</th>{head}</tr>"
             + "".join(f"<tr><td>{escape(group)}</td>"
                       + "".join(f"<td>{c}</td>" for c in cells) + "</tr>"
                       for group, cells in rows) + "</table>"
             for title, rows in rate_tables(card, models)]
    return "<h2>By tier, family and rule</h2>" + "".join(parts) if parts else ""


def failure_class_section(card: dict, models: list[str]) -> str:
    """Why pairs failed: a count per failure class, per model and tier
    (summary.failure_class_rows)."""
    counts = failure_class_rows(card, models)
    if not counts:
        return ""
    return ("<h2 id='why'>Why pairs failed</h2>"
            f"<p class='muted'>{escape(FAILURE_CLASS_NOTE)}</p>" + html_table(
                "failure-classes", ["model", "tier", *FAILURE_CLASSES],
                [[escape(m), escape(tier), *map(str, n)] for m, tier, n in counts]))


def failed_pairs_section(df, models: list[str]) -> str:
    """Every pair that is not a clean pass with its class and reason
    (summary.failure_rows), each linked to its drill-down."""
    failed = failure_rows(df, models)
    if not failed:
        return ""
    return ("<h2>Failed pairs, one by one</h2><p class='muted'>Each pair that is not a clean "
            "pass, best model first, with the first reason found; its row under Every pair "
            "has the rest.</p>" + html_table(
                "failed-pairs", ["model", "task", "sample", "class", "reason"],
                [[escape(r["model"]),
                  f"<a href='#{escape(pair_id(r['model'], r['task'], r['sample']))}'>"
                  f"{escape(r['task'])}</a>", str(r["sample"]),
                  f"<span class='v v-{r['verdict']}'>{escape(r['failure_class'] or '-')}</span>",
                  f"<span class='reason'>{escape(r['reason'])}</span>"] for r in failed]))


def history_section(archive_dir: Path | None) -> str:
    """Pass rates over the archived runs, when there are any (see history.py)."""
    if archive_dir is None or not (Path(archive_dir) / "index.csv").is_file():
        return ""
    from wirebench.reports.history import chart, load

    rows = load(archive_dir)
    return f"<h2>History</h2><div id='history'>{chart(rows)}</div>" if rows else ""


def header(df, card: dict, models: list[str], tasks: list[str]) -> str:
    note, skills = narrowed_note(card), skills_line(card, models)
    v = card["versions"]
    return (
        f"<p class='muted'>wirebench {v['wirebench']}, akcli {', '.join(v['akcli'])}, "
        f"Python {v.get('python')}, Snakemake {v.get('snakemake')}; {len(tasks)} tasks x "
        f"{len(models)} models x {card['samples']} samples. Pass rates leave out infra "
        "errors; the column <i>infra as failures</i> counts them as failed. A refusal or "
        f"block the task asks for is a pass.</p><p class='muted' id='ranking'>"
        f"{escape(RANK_NOTE)}</p>"
        + (f"<p id='skills'>{escape(skills)}</p>" if skills else "")
        + (f"<p id='narrowed'>{escape(note)}</p>" if note else ""))


def review_section(df, runs: Path) -> str:
    items = []
    for row in df[df["needs_human"] != ""].itertuples():
        pair = Path(runs) / row.model / row.task / str(row.sample)
        score = read_json(pair / "score.json")
        details = "; ".join(escape(c["detail"]) for c in score["criteria"]
                            if c["verdict"] == "needs_human")
        items.append(f"<li><b>{escape(row.model)} / {escape(row.task)} / {row.sample}</b>: "
                     f"{details}<br>{_sheet_img(pair)}</li>")
    return ("<h2>Needs a person</h2><ul id='needs-human'>"
            + ("".join(items) or "<li>nothing to review</li>") + "</ul>")


def pairs_section(df, runs: Path, expected: dict) -> str:
    # Failed pairs first. The checkbox and #pairs are siblings: the style hides the passed
    # pairs while it is ticked (no script: the page works offline and as a file).
    parts = ["<h2>Every pair</h2><p class='muted'>Failed pairs first, each with its reason; "
             "open one for its sheet, nets or simulation, criteria, errors and agent "
             "turns.</p><input type='checkbox' id='failed-only'><label for='failed-only'> "
             "show failed pairs only</label><div id='pairs'>"]
    for row in df.sort_values(["passed", "task", "model", "sample"]).to_dict("records"):
        pair = Path(runs) / row["model"] / row["task"] / str(row["sample"])
        parts.append(drilldown(pair, read_json(pair / "score.json"), expected[row["task"]],
                               row))
    return "".join(parts) + "</div>"


def sections(df, card: dict, runs: Path, expected: dict, models: list[str],
             tasks: list[str], archive_dir: Path | None,
             tasks_dir: Path | None = None) -> list[str]:
    """The page's parts, top to bottom; an empty string leaves a part out."""
    from wirebench.reports import variants

    return [
        header(df, card, models, tasks),
        "<h2>Models, best first</h2>", model_table(card, models), gaps_section(card),
        f"<div id='pass-rates'>{pass_rate_chart(card, models)}</div>",
        failure_class_section(card, models),
        "<h2>Every task, every model</h2>" + legend(card["samples"] > 1)
        + f"<div id='heatmap'>{heatmap(df, models, tasks, card)}</div>",
        failed_pairs_section(df, models),
        tier_section(card, models),
        variants.html(df, tasks_dir),
        size_chart(card, models),
        attack_section(card, models),
        contamination_section(card, models),
        history_section(archive_dir),
        review_section(df, runs),
        pairs_section(df, runs, expected),
    ]


def render(df, card: dict, runs: Path, tasks_dir: Path, archive_dir: Path | None = None) -> str:
    from wirebench.corpus.tasks import load_task, task_folder

    models = ranked(card, sorted(df["model"].unique()))
    tasks = sorted(df["task"].unique())
    expected = {t: load_task(task_folder(tasks_dir, t)).expected_nets() for t in tasks}
    return ("<!doctype html><html><head><meta charset='utf-8'><title>wirebench report</title>"
            f"<style>{STYLE}</style></head><body><h1>wirebench report</h1>"
            + "".join(sections(df, card, runs, expected, models, tasks, archive_dir,
                               tasks_dir))
            + "</body></html>\n")


def write(df, card: dict, runs: Path, tasks_dir: Path, out: Path,
          archive_dir: Path | None = None) -> None:
    write_bytes_atomic(out, render(df, card, runs, tasks_dir, archive_dir).encode())
