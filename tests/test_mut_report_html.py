"""report.html as a reader finds it: the page rendered over score files as a run writes
them (real ones, with the fields a case needs changed; tests/test_mut_reports.py), read
back through the standard library's HTML parser: each section, table and cell, each
pair's drill-down and its verdict, reason and evidence. The page in a real browser is
tests/test_reports.py's (slow); this is the fast reading, so that every mutant of
reports/report_html.py meets it (benchmarks/mutation_score.py --config reports).
"""

from __future__ import annotations

import json
import shutil
from html.parser import HTMLParser
from pathlib import Path

import pytest
from conftest import TASKS
from test_mut_evidence import DESIGN, finished_run  # noqa: F401 - a fixture
from test_mut_reports import FAIL, INFRA, Runs

from wirebench.reports import report_html as H

# Elements whose words belong in a child (a cell, an item, a paragraph), never loose.
BARE = {"document", "html", "head", "body", "div", "table", "tr", "ul", "ol", "details",
        "svg", "g"}


class Page(HTMLParser):
    """Elements by id, every table's rows of cell texts, and each element's attributes."""

    def __init__(self, html: str):
        super().__init__()
        self.ids: dict[str, str] = {}
        self.tables: dict[str, list[list[str]]] = {}
        self.attrs: list[tuple[str, dict]] = []
        self.text_parts: list[str] = []
        self._open: list[tuple[str, str | None, list[str]]] = []
        self._tables: list[tuple[str | None, list[list[str]]]] = []
        self._cell: list[str] | None = None
        self.comments: list[str] = []
        self.html = html
        self.bare: list[tuple[str, str]] = []  # (parent tag, text) of words outside text
        self.feed(html)

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        self.attrs.append((tag, a))
        if tag in ("br", "img", "input", "meta", "line", "rect", "path"):
            return
        self._open.append((tag, a.get("id"), []))
        if tag == "table":
            self._tables.append((a.get("id"), []))
        elif tag == "tr" and self._tables:
            self._tables[-1][1].append([])
        elif tag in ("td", "th"):
            self._cell = []

    def handle_endtag(self, tag):
        if tag in ("td", "th") and self._cell is not None and self._tables:
            self._tables[-1][1][-1].append("".join(self._cell).strip())
            self._cell = None
        if tag == "table" and self._tables:
            tid, rows = self._tables.pop()
            if tid:
                self.tables[tid] = rows
        while self._open:
            name, eid, parts = self._open.pop()
            if eid:
                self.ids[eid] = "".join(parts)
            if self._open:
                self._open[-1][2].extend(parts)
            if name == tag:
                break

    def handle_comment(self, data):
        self.comments.append(data.strip())

    def handle_data(self, data):
        self.text_parts.append(data)
        parent = self._open[-1][0] if self._open else "document"
        if data.strip() and parent in BARE:
            self.bare.append((parent, data.strip()))
        if self._cell is not None:
            self._cell.append(data)
        if self._open:
            self._open[-1][2].append(data)

    @property
    def text(self) -> str:
        return " ".join("".join(self.text_parts).split())

    def having(self, tag: str, **want) -> list[dict]:
        return [a for t, a in self.attrs if t == tag and all(a.get(k) == v
                                                             for k, v in want.items())]


@pytest.fixture(scope="module")
def world(tmp_path_factory, finished_run):  # noqa: F811 - the fixture imported above
    """Two models on a transcription and a design task: `good` passes both, `poor` fails
    the divider on its nets, is an infra error on the design task. Each pair folder holds
    the real run's files for its task (sheet, nets, sim, agent, answer)."""
    tmp_path = tmp_path_factory.mktemp("report")
    source = Path(finished_run["results"]) / "runs" / "reference"
    real_score = json.loads((source / "01-divider" / "1" / "score.json").read_text())
    runs = Runs(tmp_path, real_score)
    design = json.loads((source / DESIGN / "1" / "score.json").read_text())
    for model in ("good", "poor"):
        for task in ("01-divider", DESIGN):
            changes = {} if model == "good" else FAIL if task == "01-divider" else INFRA
            base = design if task == DESIGN else real_score
            runs.base = base
            runs.pair(model, task, **changes)
            folder = runs.root / model / task / "1"
            for name in ("board.svg", "nets.json", "sim.json", "agent.json", "ops.json"):
                if (source / task / "1" / name).is_file():
                    shutil.copy(source / task / "1" / name, folder / name)
    runs.base = real_score
    rows, card = runs.summary(["good", "poor"], ["01-divider", DESIGN],
                              skills={"good": "skills", "poor": "skills"})
    import pandas as pd

    df = pd.read_csv(tmp_path / "summary.csv", keep_default_na=False)
    html = H.render(df, card, runs.root, TASKS)
    return Page(html), card, df, runs.root


def test_the_page_holds_every_section_of_the_run(world):
    page, card, _, _ = world
    assert page.html.startswith("<!doctype html><html><head><meta charset='utf-8'>"
                                "<title>wirebench report</title>")
    assert page.bare == [], "every word sits in a heading, paragraph, list item or cell"
    for part in ("ranking", "skills", "models", "pass-rates", "failure-classes", "legend",
                 "heatmap", "matrix", "failed-pairs", "tier-rates", "needs-human", "pairs"):
        assert part in page.ids or part in page.tables, part
    assert "narrowed" not in page.ids
    assert page.ids["skills"].startswith("Skills folders")
    assert "2 tasks x 2 models x 1 samples" in page.text
    assert f"akcli {card['versions']['akcli'][0]}" in page.text


def test_the_models_table_ranks_and_counts_each_model(world):
    page, card, _, _ = world
    head, good, poor = page.tables["models"]
    assert head[:9] == ["rank", "model", "skills folder", "pairs", "infra errors", "passed",
                        "pass@1 (95% CI)", "clean", "infra as failures (95% CI)"]
    assert not any(h.startswith(("pass^", "pass@k")) for h in head), "one sample: no pass@k"
    assert good[:6] == ["1", "good", "skills", "2", "0", "2"]
    assert poor[:6] == ["2", "poor", "skills", "2", "1", "0"]
    assert good[6].startswith("100.0%") and "[" in good[6]
    assert poor[head.index("failed, by class")] == "infra 1, function 1"
    assert good[head.index("failed, by class")] == "none"
    assert poor[head.index("infra as failures (95% CI)")].startswith("0.0%")
    assert good[head.index("tokens")] == "-" and good[head.index("cost $")] == "-"


def test_the_matrix_says_each_cells_verdict_and_why(world):
    page, _, _, _ = world
    head, *rows = page.tables["matrix"]
    assert head == ["task", "goodskills", "poorskills"]
    cells = {(r[0], m): c for r in rows for m, c in zip(("good", "poor"), r[1:], strict=True)}
    assert cells[("01-divider", "good")] == "pass"
    assert cells[("01-divider", "poor")] == "fail: function"
    assert cells[(DESIGN, "poor")] == "infra error"
    tds = page.having("td", **{"data-verdict": "fail"})
    assert len(tds) == 1 and tds[0]["title"] == "nets: ADC_IN is missing"
    assert page.having("td", **{"data-verdict": "pass"})[0]["title"] == "score 1.00"


@pytest.mark.parametrize("rows, want", [
    ([], ("none", "-", "no pair")),
    ([{"outcome": "success", "passed": "True", "clean": "True", "score": 1, "sample": 1},
      {"outcome": "success", "passed": "True", "clean": "True", "score": 1, "sample": 2}],
     ("pass", "2/2 pass", "1: pass; 2: pass")),
    ([{"outcome": "success", "passed": "True", "clean": "True", "score": 1, "sample": 1},
      {"outcome": "success", "passed": "False", "failure_class": "function", "score": 0,
       "sample": 2}], ("some", "1/2 pass", "1: pass; 2: fail: function")),
    ([{"outcome": "infra_error", "passed": "False", "score": 0, "sample": 1},
      {"outcome": "infra_error", "passed": "False", "score": 0, "sample": 2}],
     ("infra", "0/2 pass", "1: infra error; 2: infra error")),
    ([{"outcome": "infra_error", "passed": "False", "score": 0, "sample": 1},
      {"outcome": "success", "passed": "False", "failure_class": "function", "score": 0,
       "sample": 2}], ("fail", "0/2 pass", "1: infra error; 2: fail: function")),
])
def test_a_cell_of_several_samples_is_coloured_by_what_they_share(rows, want):
    assert H.matrix_cell(rows) == want


def test_the_legend_shows_some_only_where_a_pair_has_several_samples():
    assert "v-some" not in H.legend(False) and "v-some" in H.legend(True)
    assert H.legend(False).count("<li>") == 5


def test_each_failed_pair_is_listed_with_its_class_and_reason_and_linked(world):
    page, _, _, _ = world
    head, *rows = page.tables["failed-pairs"]
    assert head == ["model", "task", "sample", "class", "reason"]
    assert rows == [["poor", DESIGN, "1", "infra", "HTTP 500: boom"],
                    ["poor", "01-divider", "1", "function", "nets: ADC_IN is missing"]]
    links = [a["href"] for a in page.having("a") if a.get("href", "").startswith("#pair-")]
    assert links == [f"#pair-poor-{DESIGN}-1", "#pair-poor-01-divider-1"]
    for link in links:
        assert page.having("details", id=link[1:]), "each link lands on its drill-down"


def test_a_pairs_drilldown_shows_its_verdict_evidence_and_answer(world):
    page, _, _, runs = world
    pairs = page.having("details", **{"class": "pair"})
    assert [p["id"] for p in pairs][:2] == ["pair-poor-01-divider-1", f"pair-poor-{DESIGN}-1"]
    assert {p["data-verdict"] for p in pairs} == {"pass", "fail", "infra"}
    failed = next(p for p in pairs if p["id"] == "pair-poor-01-divider-1")
    assert failed["data-passed"] == "0"
    text = page.text
    assert "fail: function poor/01-divider/1 nets: ADC_IN is missing outcome success " \
           "(expected success), score 0.4" in text
    assert "Nets: expected vs observed" in text and "Simulation" in text
    assert "simulation: pass:" in text and "led_on" in text
    assert "The answer (ops.json)" in text
    answer = json.loads((runs / "good" / "01-divider" / "1" / "ops.json").read_text())
    assert json.dumps(answer, indent=2).splitlines()[1].strip() in text
    assert page.having("img", alt="rendered sheet")
    assert "Errors (validation, rails, post-checks)" in text and "net ADC_IN is missing" in text
    assert page.having("div", **{"class": "sim-plot"}), "the design pair's waveform"
    # The agent's turns (cells run together in the page's text): turn 1, attempt 1, ok.
    assert "turn.attemptstatuswall sexit / HTTPtokens in/outerror1.1ok0.0--/-" in text


def test_the_nets_table_says_which_nets_match_differ_are_missing_or_extra():
    expected = {"A": frozenset({"R1.1"}), "B": frozenset({"R1.2", "R2.1"}),
                "C": frozenset({"R3.1"})}
    nets = {"nets": [{"name": "A", "members": ["R1.1"]}, {"name": "B", "members": ["R1.2"]},
                     {"name": "X", "members": ["R9.1"]}]}
    page = Page("<table id='n'>" + H.nets_diff(expected, nets)[len("<table class='nets'>"):])
    assert page.tables["n"] == [
        ["net", "status", "missing members", "extra members"],
        ["A", "match", "", ""], ["B", "differs", "R2.1", ""], ["C", "missing net", "R3.1", ""],
        ["X", "extra named net", "", "R9.1"]]


def test_the_measures_table_gives_each_window_nominal_corners_and_verdict():
    sim = {"status": "fail", "reason": "led_on out", "measures": [
        {"name": "led_on", "window": "-11m .. -9m", "value": -0.0123456, "ok": False,
         "min_over_corners": -0.013, "max_over_corners": -0.0101, "why": "10 mA"},
        {"name": "off", "window": ">= -10u", "value": None, "ok": True,
         "min_over_corners": None, "max_over_corners": None}],
        "worst_corner": {"params": {"R1": "330", "temp": "-20"}, "failed": ["led_on"]}}
    html = H.measures_table(sim)
    page = Page(html.replace("<table class='measures'>", "<table id='m'>"))
    assert page.tables["m"] == [
        ["measure", "window", "nominal", "over corners", "verdict", "why"],
        ["led_on", "-11m .. -9m", "-0.01235", "-0.013 .. -0.0101", "fail", "10 mA"],
        ["off", ">= -10u", "-", "-", "pass", ""]]
    assert "simulation: fail: led_on out" in page.text
    assert "worst corner: R1=330, temp=-20 fails led_on" in page.text
    assert "worst corner" not in H.measures_table({**sim, "worst_corner": None})


def test_a_tool_loops_trajectory_and_spent_budget_are_shown():
    agent = {"budget": "max_tool_calls", "turns": [{"turn": 1, "attempts": [
        {"status": "ok", "wall_s": 1.5, "http_status": 200, "prompt_tokens": 10,
         "completion_tokens": 5}], "trajectory": [
        {"tool": "pins", "status": "ok", "args_bytes": 20, "result_bytes": 300,
         "latency_s": 0.123},
        {"tool": "draw", "status": "denied", "args_bytes": 900, "result_bytes": 40,
         "latency_s": 1.0}]}]}
    page = Page(H._trajectory(agent) + H._turns(agent).replace("class='turns'", "id='t'"))
    assert "pins ok: 20 B in, 300 B back, 0.12 s" in page.text
    assert "draw denied: 900 B in, 40 B back, 1.00 s" in page.text
    assert "The max_tool_calls budget ran out." in page.text
    assert [li["class"] for li in page.having("li")] == ["pass", "fail"]
    assert page.tables["t"][1] == ["1.1", "ok", "1.5", "200", "10/5", ""]
    assert H._trajectory({"turns": [{"turn": 1, "attempts": []}]}) == ""


def test_the_signal_sections_appear_only_where_they_have_something_to_say():
    quiet = {"models": {"m": {"by_split": {}, "attack_pairs": 0}}}
    assert H.contamination_section(quiet, ["m"]) == "" and H.attack_section(quiet, ["m"]) == ""
    loud = {"models": {"m": {"attack_pairs": 4, "attack_success_rate": 0.25,
                             "utility_under_attack": 0.5,
                             "by_split": {"public": {"passed": 20, "pairs": 20,
                                                     "pass_rate": 1.0},
                                          "private": {"passed": 0, "pairs": 20,
                                                      "pass_rate": 0.0}}}}}
    page = Page(H.contamination_section(loud, ["m"]) + H.attack_section(loud, ["m"]))
    assert "m: 100% on the public split against 0% on private" in page.ids["contamination"]
    assert page.tables["attack-rates"] == [
        ["model", "injection pairs", "attack success", "utility under attack"],
        ["m", "4", "25%", "0.50"]]


def test_the_pass_rate_bars_are_as_long_as_the_rates():
    card = {"models": {"a": {"pass_at_1": 1.0, "pass_at_1_ci": [0.5, 1.0]},
                       "b": {"pass_at_1": 0.25, "pass_at_1_ci": [0.1, 0.5]}}}
    page = Page(H.pass_rate_chart(card, ["a", "b"]))
    bars = [float(r["width"]) for r in page.having("rect")]
    assert bars == [360.0, 90.0]
    assert "a: 100.0% [50.0%, 100.0%]" in page.text and "b: 25.0% [10.0%, 50.0%]" in page.text


def test_an_answer_that_is_no_json_is_shown_as_written_and_a_long_one_cut(tmp_path):
    (tmp_path / "ops.json").write_text("not <json> at all")
    assert "not &lt;json&gt; at all" in H._answer(tmp_path)
    (tmp_path / "ops.json").write_text(json.dumps({"ops": ["x" * 70_000]}))
    shown = H._answer(tmp_path)
    assert "The answer (ops.json) (first 64 KiB)" in shown
    assert H._answer(tmp_path / "missing") == ""
    assert H._sheet_img(tmp_path) == "<p class='muted'>no rendered sheet</p>"


def _svg_inside(svg: str) -> None:
    """Every bar, line and label of a chart lies inside it, in a font size and an anchor
    a browser reads."""
    page = Page(svg)
    (root,) = page.having("svg")
    width, height = float(root["width"]), float(root["height"])
    assert width > 0 and height > 0
    for tag, a in page.attrs:
        if tag == "rect":
            assert float(a["x"]) >= 0 and float(a["x"]) + float(a["width"]) <= width
            assert float(a["y"]) >= 0 and float(a["y"]) + float(a["height"]) <= height
        if tag == "text":
            assert 0 <= float(a["x"]) <= width and 0 <= float(a["y"]) <= height, a
            assert float(a["font-size"]) > 0
            assert a["text-anchor"] in ("start", "middle", "end")
        if tag == "line":
            assert 0 <= float(a["x1"]) <= width and 0 <= float(a["y2"]) <= height


def test_the_pass_rate_chart_holds_all_it_draws():
    card = {"models": {m: {"pass_at_1": r, "pass_at_1_ci": [max(0, r - 0.2), min(1, r + 0.1)]}
                       for m, r in (("a", 1.0), ("bb", 0.5), ("a-much-longer-name", 0.0))}}
    _svg_inside(H.pass_rate_chart(card, ["a", "bb", "a-much-longer-name"]))
    _svg_inside(H.pass_rate_chart(card, ["a"]))


def test_a_plot_of_a_simulation_names_its_vectors_on_their_axis():
    sweep = Page(H.sim_plot({"x": "frequency", "columns": {
        "frequency": [10, 100, 1000, 10000], "vdb(VOUT)": [0, -1, -3, -20]}}))
    assert "frequency" in sweep.comments and "vdb(VOUT)" in sweep.comments
    assert "$\\mathdefault{10^{3}}$" in sweep.comments, "a frequency sweep on a log axis"
    assert "frequency" not in [c for c in sweep.comments if c == "vdb(VOUT)"]
    wave = Page(H.sim_plot({"x": "time", "columns": {"time": [0, 1e-3, 2e-3],
                                                     "v(GPIO)": [0, 3.3, 0]}}))
    assert "time" in wave.comments and "v(GPIO)" in wave.comments
    assert not any(c.startswith("$\\mathdefault{10^") for c in wave.comments)
    assert H.sim_plot({"x": "time", "columns": {}}) == ""
    assert H.sim_plot({}) == ""


def test_repeats_add_pass_at_k_columns_and_a_missing_interval_shows_none(tmp_path,
                                                                        finished_run):  # noqa: F811
    source = Path(finished_run["results"]) / "runs" / "reference" / "01-divider" / "1"
    runs = Runs(tmp_path, json.loads((source / "score.json").read_text()))
    for s in (1, 2):
        runs.pair("m", "t1", s)
        runs.pair("m", "t2", s, **({} if s == 1 else INFRA))
        runs.pair("n", "t1", s, **(INFRA if s == 1 else {}))
        runs.pair("n", "t2", s, **INFRA)
    _, card = runs.summary(["m", "n"], ["t1", "t2"], samples=2)
    page = Page(H.model_table(card, ["m", "n"]))
    head, m, n = page.tables["models"]
    assert "pass@2 (95% CI)" in head and "pass^2 (95% CI)" in head
    assert m[head.index("pass@2 (95% CI)")].startswith("100.0%")
    assert m[head.index("pass^2 (95% CI)")].startswith("100.0%")
    assert n[head.index("pass@2 (95% CI)")] == "-", "no task of n has two scored samples"


def test_a_small_table_and_the_failure_classes_table():
    page = Page(H.html_table("t", ["a", "b<c"], [["1", "<b>2</b>"]]))
    assert page.tables["t"] == [["a", "b<c"], ["1", "2"]]
    assert page.having("table", id="t") == [{"id": "t"}]
    assert Page(H.html_table("u", ["a"], [], css="wide")).having("table", id="u") == [
        {"id": "u", "class": "wide"}]
    from wirebench.verify.scoring import FAILURE_CLASSES

    card = {"models": {"m": {"failure_classes": {"function": 1},
                             "failure_classes_by_tier": {"design": {"function": 1}}}}}
    got = Page(H.failure_class_section(card, ["m"]))
    assert got.tables["failure-classes"][0] == ["model", "tier", *FAILURE_CLASSES]
    assert got.tables["failure-classes"][1][0:2] == ["m", "all"]
    assert H.failure_class_section({"models": {"m": {}}}, ["m"]) == ""
    assert H.failed_pairs_section(__import__("pandas").DataFrame(
        [{"model": "m", "task": "t", "sample": 1, "passed": "True", "clean": "True",
          "outcome": "success"}]), ["m"]) == ""


def test_the_header_names_every_akcli_a_run_mixed():
    card = {"versions": {"wirebench": "0.1.0", "akcli": ["0.22.0", "0.23.0"],
                         "python": "3.11", "snakemake": "9"},
            "samples": 1, "models": {"m": {}}, "this_run": {"pairs": 1, "of": 1}}
    page = Page("<div>" + H.header(None, card, ["m"], ["t"]) + "</div>")
    assert "wirebench 0.1.0, akcli 0.22.0, 0.23.0, Python 3.11, Snakemake 9; 1 tasks x 1 " \
           "models x 1 samples." in page.text
    assert page.bare == [] and "narrowed" not in page.ids


def test_a_pairs_turns_and_nets_show_what_each_attempt_and_net_was():
    agent = {"turns": [{"turn": 2, "attempts": [{"status": "infra_error", "wall_s": 0.5,
                                                 "error": "HTTP 500"}]}]}
    page = Page(H._turns(agent).replace("class='turns'", "id='t'"))
    assert page.tables["t"][1] == ["2.1", "infra_error", "0.5", "-", "-/-", "HTTP 500"]
    nets = Page("<table id='n'>" + H.nets_diff({}, {"nets": [
        {"name": "X", "members": ["R9.2", "R9.1"]}]})[len("<table class='nets'>"):])
    assert nets.tables["n"][1] == ["X", "extra named net", "", "R9.1, R9.2"]


def test_the_failed_pairs_note_and_a_pair_without_a_class():
    import pandas as pd

    df = pd.DataFrame([{"model": "m", "task": "t", "sample": 1, "passed": "True",
                        "clean": "False", "outcome": "success", "failure_class": "",
                        "first_finding": "layout: overlap", "errors": "",
                        "expected_outcome": "success"}])
    page = Page(H.failed_pairs_section(df, ["m"]))
    assert "Each pair that is not a clean pass, best model first, with the first reason " \
           "found; its row under Every pair has the rest." in page.text
    assert page.tables["failed-pairs"][1] == ["m", "t", "1", "-", "layout: overlap"]


@pytest.fixture(scope="module")
def review_world(tmp_path_factory, finished_run):  # noqa: F811
    """A pair that needs a person, a generated task's size, and an archived run."""
    tmp = tmp_path_factory.mktemp("review")
    source = Path(finished_run["results"]) / "runs" / "reference" / "01-divider" / "1"
    base = json.loads((source / "score.json").read_text())
    runs = Runs(tmp, base)
    review = [*base["criteria"], {"id": "boot", "kind": "strap", "verdict": "needs_human",
                                  "detail": "BOOT0 is tied by a jumper: read the sheet"}]
    runs.pair("m", "01-divider", needs_human=["boot"], criteria=review, knobs={"parts": 12})
    shutil.copy(source / "board.svg", runs.root / "m" / "01-divider" / "1" / "board.svg")
    shutil.copy(source / "nets.json", runs.root / "m" / "01-divider" / "1" / "nets.json")
    _, card = runs.summary(["m"], ["01-divider"])
    import pandas as pd

    from wirebench.evidence.archive import create

    archive = tmp / "archive"
    results = tmp / "results"
    shutil.copytree(finished_run["results"], results)
    create(results, archive)
    df = pd.read_csv(tmp / "summary.csv", keep_default_na=False)
    out = tmp / "report.html"
    H.write(df, card, runs.root, TASKS, out, archive)
    return Page(out.read_text())


def test_a_pair_that_needs_a_person_is_listed_with_why_and_its_sheet(review_world):
    page = review_world
    assert "m / 01-divider / 1: BOOT0 is tied by a jumper: read the sheet" in \
        page.ids["needs-human"]
    assert "nothing to review" not in page.ids["needs-human"]
    shown = [a for a in page.having("img", alt="rendered sheet")]
    assert len(shown) >= 2, "in the review list and in the pair's drill-down"


def test_the_size_chart_and_the_history_of_archived_runs(review_world):
    page = review_world
    assert "size-chart" in page.ids
    assert "11-25 parts" in page.comments and "m" in page.comments
    assert "history" in page.ids
    assert page.bare == []
