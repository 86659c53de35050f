"""The reports people look at: report.html in a real headless Chromium, compare with a
planted regression and fix, history over archives, the strict gate, Snakemake's report."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import zipfile

import pytest
from conftest import TASKS, Project

CHROMIUM_FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
                  "--no-first-run", "--disable-background-networking",
                  "--disable-component-update", "--disable-sync"]


def chromium() -> str:
    path = shutil.which("chromium")
    if path is None:  # not a skip: CI installs it (.ci/run), and so must a developer
        raise AssertionError("Debian's chromium is needed for the page tests: "
                             "apt-get install -y chromium")
    return path


def browse(page, tmp_path, *args):
    return subprocess.run([chromium(), *CHROMIUM_FLAGS, f"--user-data-dir={tmp_path / 'ud'}",
                           *args, page.as_uri()], capture_output=True, text=True, timeout=120)


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    project = Project(tmp_path_factory.mktemp("reports") / "wb").configure(
        {"reference": {"kind": "reference"},
         "baseline": {"kind": "command", "command": "wirebench-baseline"}},
        tasks=["01-divider", "07-arrange-safe-blocks", "12-battery-sense-divider-macro"],
        samples=2)
    project.snakemake()
    return project


@pytest.mark.slow
def test_report_html_in_headless_chromium(run, tmp_path):
    page = run.root / "results" / "report.html"
    dom = browse(page, tmp_path, "--dump-dom").stdout
    assert re.search(r'<div id="heatmap"><table class="matrix"', dom), "the matrix is a table"
    assert re.search(r'<div id="pass-rates"><svg', dom)
    # A drill-down per pair, each with its rendered sheet and a nets diff.
    pairs = re.findall(r'<details class="pair" id="pair-([^"]+)" data-passed', dom)
    assert len(pairs) == 2 * 3 * 2
    drill = dom[dom.index('id="pair-baseline-12-battery-sense-divider-macro-1"'):]
    drill = drill[:drill.index("</details>")]
    assert 'src="data:image/svg+xml;base64,' in drill
    assert "missing net" in drill and "<table class=\"turns\">" in drill
    # The needs_human item of task 07's subjective criterion, with its picture.
    review = dom[dom.index('<ul id="needs-human">'):]
    review = review[:review.index("</ul>")]
    assert "reference / 07-arrange-safe-blocks / 1" in review and "<img" in review
    shot = tmp_path / "report.png"
    browse(page, tmp_path, f"--screenshot={shot}", "--window-size=1280,1600")
    assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and shot.stat().st_size > 20_000


@pytest.mark.slow
def test_failed_pairs_come_first_with_their_answer_and_a_filter(run, tmp_path):
    page = run.root / "results" / "report.html"
    dom = browse(page, tmp_path, "--dump-dom").stdout
    flags = re.findall(r'<details class="pair" id="pair-[^"]+" data-passed="(\d)"', dom)
    assert len(flags) == 12 and "1" in flags and "0" in flags
    assert flags == sorted(flags), "every failed pair comes before every passed one"
    assert '<input type="checkbox" id="failed-only">' in dom
    # The agent's answer, pretty-printed and collapsed, in each drill-down.
    drill = dom[dom.index('id="pair-reference-01-divider-1"'):]
    answer = drill[drill.index('<details class="answer">'):drill.index("</pre>")]
    assert '"protocol_version": 2,\n' in answer and '  "ops": [' in answer
    # With the box ticked, Chromium lays out failed pairs only (the style does it): the
    # same page prints on fewer pages.
    # Small pages, so that what the filter hides shows in the count whatever the report
    # puts above the pairs.
    small = page.read_text().replace("</head>", "<style>@page { size: 120mm 90mm }</style></head>")
    every = tmp_path / "every.html"
    every.write_text(small)
    filtered = tmp_path / "filtered.html"
    filtered.write_text(small.replace("id='failed-only'>", "id='failed-only' checked>"))
    pages = {}
    for name, html in (("all", every), ("failed", filtered)):
        pdf = tmp_path / f"{name}.pdf"
        browse(html, tmp_path, f"--print-to-pdf={pdf}", "--no-pdf-header-footer")
        pages[name] = len(re.findall(rb"/Type\s*/Page[^s]", pdf.read_bytes()))
    assert 0 < pages["failed"] < pages["all"], pages


@pytest.mark.slow
def test_repeats_give_pass_at_k_and_pass_hat_k(run):
    card = json.loads((run.root / "results" / "scorecard.json").read_text())
    ref, base = card["models"]["reference"], card["models"]["baseline"]
    assert (ref["k"], ref["pass_at_1"], ref["pass_at_k"], ref["pass_hat_k"]) == (2, 1.0, 1.0, 1.0)
    # The baseline passes the divider every time and the other two never.
    assert base["pass_at_k"] == pytest.approx(1 / 3, abs=1e-4)
    assert base["pass_hat_k"] == pytest.approx(1 / 3, abs=1e-4)
    assert card["per_task"]["01-divider"]["baseline"]["pass_at_1"] == 1.0
    report = (run.root / "results" / "report.md").read_text()
    assert "| model | pass@1 | pass@2 | pass^2 |" in report


@pytest.mark.slow
def test_snakemakes_own_report_holds_the_results_and_sheets(run, tmp_path):
    out = tmp_path / "report.zip"
    run.snakemake("--report", str(out))
    names = zipfile.ZipFile(out).namelist()
    assert any(n.endswith("/report.html") and "/data/" in n for n in names)
    assert any(n.endswith("summary.csv") for n in names)
    assert sum(n.endswith("board.svg") for n in names) == 2 * 3 * 2


@pytest.mark.slow
def test_the_strict_gate_fails_the_run_below_a_floor(run):
    failed = run.snakemake("--config", "strict=true", "floors={baseline: 0.9}", check=False)
    assert failed.returncode != 0
    assert "model 'baseline' passes 0.3333 < floor 0.9" in (
        run.root / "results" / "logs" / "gate.log").read_text()
    run.snakemake("--config", "strict=true", "floors={baseline: 0.3}")
    assert json.loads((run.root / "results" / "gate.json").read_text())["passed"]


# --- compare and history ----------------------------------------------------------------

def answers(folder, right: set[str], wrong: set[str]):
    folder.mkdir(parents=True)
    for task in right | wrong:
        doc = json.loads((TASKS / task / "reference_ops.json").read_text())
        if task in wrong:
            doc["ops"] = doc["ops"][:-1]  # drop the last label: one net short
        (folder / f"{task}.json").write_text(json.dumps(doc))
    return folder


TASK_IDS = ["01-divider", "02-rc-lowpass", "03-pi-filter", "04-i2c-pullups"]


@pytest.fixture(scope="module")
def two_runs(tmp_path_factory):
    root = tmp_path_factory.mktemp("compare")
    runs = {}
    # A fails 03 and 04; B breaks 01 (a regression) and fixes 03; 04 stays failed.
    for name, right, wrong in (("a", {"01-divider", "02-rc-lowpass"},
                                {"03-pi-filter", "04-i2c-pullups"}),
                               ("b", {"02-rc-lowpass", "03-pi-filter"},
                                {"01-divider", "04-i2c-pullups"})):
        folder = answers(root / f"answers-{name}", right, wrong)
        project = Project(root / name).configure({"m": {"kind": "ops_dir", "dir": str(folder)}},
                                                 tasks=TASK_IDS)
        project.snakemake()
        runs[name] = project
    return runs


def compare(*args):
    return subprocess.run(["wirebench", "compare", *args], capture_output=True, text=True)


@pytest.mark.slow
def test_compare_finds_the_planted_regression_and_fix(two_runs, tmp_path):
    a, b = (two_runs[k].root / "results" for k in ("a", "b"))
    proc = compare(str(a), str(b), "--json", "--out", str(tmp_path))
    assert proc.returncode == 0
    report = json.loads(proc.stdout)
    assert [r["pair"] for r in report["regressions"]] == ["m/01-divider/1"]
    assert [f["pair"] for f in report["fixes"]] == ["m/03-pi-filter/1"]
    assert report["regressions"][0]["what_changed"] == ["answer (ops hash)"]
    assert (report["pass_rate_a"], report["pass_rate_b"], report["delta"]) == (0.5, 0.5, 0.0)
    assert report["mcnemar_p"] == 1.0  # b = c = 1: 2 * (C(2,0) + C(2,1)) / 4, capped at 1
    assert (tmp_path / "compare.md").read_text().startswith("# wirebench compare")
    gated = compare(str(a), str(b), "--fail-on-regression")
    assert gated.returncode == 1 and "## Regressions" in gated.stdout


@pytest.mark.slow
def test_compare_two_models_within_one_run_and_an_archive(two_runs, tmp_path):
    a = two_runs["a"]
    a.snakemake("archive")
    (archive,) = (a.root / "archive").glob("*.tar.gz")
    proc = compare(str(archive), str(two_runs["b"].root / "results"), "--json")
    assert [r["pair"] for r in json.loads(proc.stdout)["regressions"]] == ["m/01-divider/1"]
    same = json.loads(compare(str(a.root / "results"), "--models", "m", "m", "--json").stdout)
    assert (same["pairs"], same["regressions"], same["fixes"]) == (4, [], [])


@pytest.mark.slow
def test_history_over_archived_runs(two_runs, tmp_path):
    b = two_runs["b"]
    b.snakemake("archive")
    shutil.copy(next((two_runs["a"].root / "archive").glob("*.tar.gz")), b.root / "archive")
    # Two archived runs in one index: the A run's row, then this one's.
    a_index = (two_runs["a"].root / "archive" / "index.csv").read_text().splitlines()
    index = b.root / "archive" / "index.csv"
    index.write_text("\n".join([a_index[0], a_index[1], *index.read_text().splitlines()[1:]])
                     + "\n")
    proc = subprocess.run(["wirebench", "history", str(b.root / "archive"), "--out",
                           str(tmp_path)], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    rows = (tmp_path / "history.csv").read_text().splitlines()
    assert len(rows) == 3 and all(",m," in r for r in rows[1:])
    assert (tmp_path / "history.svg").read_text().startswith("<svg")


def test_the_matrix_colours_each_cell_by_its_pairs_verdicts():
    import pandas as pd

    from wirebench.reports.report_html import heatmap

    rows = [("m", "all", 1.0, True, "success", ""), ("m", "all", 1.0, True, "success", ""),
            ("m", "half", 1.0, True, "success", ""),
            ("m", "half", 0.5, False, "invalid", "invalid"),
            ("m", "none", 0.0, False, "success", "function"),
            ("m", "down", None, False, "infra_error", "infra"),
            ("m", "asked", 1.0, True, "blocked", ""), ("m", "asked", 1.0, True, "blocked", "")]
    df = pd.DataFrame(rows, columns=["model", "task", "score", "passed", "outcome",
                                     "failure_class"]).assign(
        sample=[1, 2, 1, 2, 1, 1, 1, 2], clean=lambda d: d["passed"], errors="",
        first_finding="", expected_outcome="success")
    table = heatmap(df, ["m"], ["all", "half", "none", "down", "asked"])
    cells = re.findall(r"<tr><th>(\w+)</th><td class='v v-(\w+)' data-verdict='\w+' "
                       r"title='[^']*'>([^<]*)</td>", table)
    assert cells == [("all", "pass", "2/2 pass"), ("half", "some", "1/2 pass"),
                     ("none", "fail", "fail: function"), ("down", "infra", "infra error"),
                     ("asked", "refused", "2/2 pass")]
