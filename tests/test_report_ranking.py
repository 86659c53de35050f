"""The report answers "which model is best, where does mine fail, why" (issue 32): the
models best first, the failure classes per model, every failed pair's reason on its
collapsed row, cells coloured by the verdict they show (an expected refusal as a pass),
and the skills folder each model read. One real Snakemake run with four models whose
pass rates differ and whose names sort the other way, one of them a scripted
OpenAI-compatible server reading an A/B copy of the skills folder; the page is checked
in a real headless Chromium."""

from __future__ import annotations

import csv
import html
import json
import re
import shutil

import pytest
from conftest import REPO, TASKS, Project
from fake_openai import FakeOpenAI, completion, error
from test_reports import browse

TASK_IDS = ["01-divider", "02-rc-lowpass", "15-edit-tie-grounds-blocked",
            "17-contradictory-divider"]
# By name: alpha, baseline, down, reference. By pass rate: reference 4/4 (its block of
# task 15 and its question on task 17 are what those tasks ask), baseline 2/4 (it draws
# where 15 and 17 want it not to), alpha 1/4, down none (every call a 503: infra).
RANKED = ["reference", "baseline", "alpha", "down"]


def _ops(task: str) -> dict:
    return json.loads((TASKS / task / "reference_ops.json").read_text())


def _title(task: str) -> str:
    return (TASKS / task / "task.md").read_text().splitlines()[0]


def alpha_reply(n, body):
    """A model wrong in a known way on each task but the first: a label short on 02 (a
    function failure), protocol 1 on 15 (akcli refuses it: invalid), a drawing where 17
    asks for a question (wrong outcome)."""
    prompt = body["messages"][-1]["content"]
    divider = _ops("01-divider")
    if _title("02-rc-lowpass") in prompt:
        doc = _ops("02-rc-lowpass")
        doc["ops"] = doc["ops"][:-1]
    elif _title("15-edit-tie-grounds-blocked") in prompt:
        doc = {**_ops("15-edit-tie-grounds-blocked"), "protocol_version": 1}
    else:
        doc = divider
    return completion(json.dumps(doc))


@pytest.fixture(scope="module")
def ranked_run(tmp_path_factory):
    root = tmp_path_factory.mktemp("ranking")
    # alpha reads an A/B copy of the docs: one more line in its guide.
    shutil.copytree(REPO / "skills", root / "wb" / "skills-b")
    guide = root / "wb" / "skills-b" / "akcli-oplists.md"
    guide.write_text(guide.read_text() + "\nCheck every label against the task.\n")
    scripts = {"alpha": alpha_reply, "down": lambda n, body: error(503, "overloaded")}
    with FakeOpenAI(scripts) as server:
        def entry(model, **extra):
            return {"kind": "openai", "base_url": server.base_url, "model": model,
                    "api_key_env": "WB_TEST_KEY", "provider": "fake", "retries": 0,
                    "backoff_s": 0.1, **extra}

        project = Project(root / "wb").configure(
            {"reference": {"kind": "reference"},
             "baseline": {"kind": "command", "command": "wirebench-baseline", "timeout": 60},
             "alpha": entry("alpha", skills="skills-b"), "down": entry("down")},
            tasks=TASK_IDS, max_infra_rate=1.0)
        project.snakemake(env={"WB_TEST_KEY": "sk-test-ranking"})
    return project


def _md_table(report: str, head: str) -> list[list[str]]:
    lines = report.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith(head))
    rows = []
    for line in lines[start + 2:]:
        if not line.startswith("| "):
            break
        rows.append([c.strip() for c in line.split("|")[1:-1]])
    return rows


def _summary(project) -> list[dict]:
    with open(project.root / "results" / "summary.csv", newline="") as fh:
        return list(csv.DictReader(fh))


@pytest.mark.slow
def test_the_models_are_listed_best_first_everywhere(ranked_run):
    card = json.loads((ranked_run.root / "results" / "scorecard.json").read_text())
    rates = {m: card["models"][m]["pass_rate"] for m in RANKED}
    assert rates == {"reference": 1.0, "baseline": 0.5, "alpha": 0.25, "down": None}
    report = (ranked_run.root / "results" / "report.md").read_text()
    assert [r[0] for r in _md_table(report, "| model | pairs |")] == RANKED
    assert "Models are ranked by pass rate" in report
    (matrix_head,) = [line for line in report.splitlines() if line.startswith("| task |")]
    assert [c.strip() for c in matrix_head.split("|")[2:-1]] == RANKED
    family = next(line for line in report.splitlines() if line.startswith("| family |"))
    assert [c.strip() for c in family.split("|")[2:-1]] == RANKED
    classes = _md_table(report, "| model | tier | infra |")
    assert list(dict.fromkeys(r[0] for r in classes)) == RANKED
    page = (ranked_run.root / "results" / "report.html").read_text()
    models = page.split("<table id='models'>", 1)[1].split("</table>", 1)[0]
    assert re.findall(r"<tr><td>(\d+)</td><td><b>([^<]+)</b>", models) == [
        (str(i), m) for i, m in enumerate(RANKED, start=1)]
    matrix = page.split("<table class='matrix' id='matrix'>", 1)[1].split("</tr>", 1)[0]
    assert re.findall(r"<th>([a-z]+)", matrix)[1:] == RANKED
    chart = page.split("<div id='pass-rates'>", 1)[1].split("</svg>", 1)[0]
    assert re.findall(r"<title>([a-z]+): ", chart) == RANKED


@pytest.mark.slow
def test_each_gap_in_the_ranking_says_whether_it_tells_the_models_apart(ranked_run,
                                                                         tmp_path):
    """reference 4/4 over baseline 2/4 is two tasks: McNemar p = 0.5, not told apart, and
    the report says so beside the ranking, in markdown and on the page (Chromium)."""
    card = json.loads((ranked_run.root / "results" / "scorecard.json").read_text())
    gaps = [(g["above"], g["below"], g["shared"], g["above_alone"], g["below_alone"],
             g["mcnemar_p"], g["told_apart"]) for g in card["rank_gaps"]]
    assert gaps == [("reference", "baseline", 4, 2, 0, 0.5, False),
                    ("baseline", "alpha", 4, 1, 0, 1.0, False),
                    ("alpha", "down", 0, 0, 0, 1.0, False)]
    report = (ranked_run.root / "results" / "report.md").read_text()
    assert _md_table(report, "| above | below |")[0] == [
        "reference", "baseline", "4", "2", "0", "0.5", "no"]
    dom = browse(ranked_run.root / "results" / "report.html", tmp_path, "--dump-dom").stdout
    table = dom.split('<table id="rank-gaps">', 1)[1].split("</table>", 1)[0]
    assert re.findall(r"<tr><td>([a-z]+)</td><td>([a-z]+)</td>", table) == [
        ("reference", "baseline"), ("baseline", "alpha"), ("alpha", "down")]


def test_a_gap_of_ten_tasks_tells_two_models_apart_and_one_of_two_does_not():
    import pandas as pd

    from wirebench.reports.summary import rank_gaps

    rows = [{"model": m, "task": f"t{i}", "sample": 1, "outcome": "success",
             "passed": passed(i)}
            for m, passed in (("a", lambda i: True), ("b", lambda i: i >= 10),
                              ("c", lambda i: i >= 12))
            for i in range(30)]
    rows.append({"model": "c", "task": "t0", "sample": 2, "outcome": "infra_error",
                 "passed": False})  # an infra error is no answer: not paired
    gaps = rank_gaps(pd.DataFrame(rows), ["a", "b", "c"])
    assert [(g["shared"], g["above_alone"], g["below_alone"], g["told_apart"])
            for g in gaps] == [(30, 10, 0, True), (30, 2, 0, False)]
    assert gaps[0]["mcnemar_p"] == round(2 / 2 ** 10, 6)


@pytest.mark.slow
def test_why_each_pair_failed_by_class_and_reason(ranked_run):
    rows = {(r["model"], r["task"]): r for r in _summary(ranked_run)}
    alpha = {t: rows[("alpha", t)]["failure_class"] for t in TASK_IDS}
    assert alpha == {"01-divider": "", "02-rc-lowpass": "function",
                     "15-edit-tie-grounds-blocked": "invalid",
                     "17-contradictory-divider": "wrong outcome"}
    report = (ranked_run.root / "results" / "report.md").read_text()
    why = report.split("## Why pairs failed", 1)[1]
    function = rows[("alpha", "02-rc-lowpass")]["first_finding"]
    assert function and f"- alpha / 02-rc-lowpass / 1: [function] {function}" in why
    assert "- alpha / 17-contradictory-divider / 1: [wrong outcome] outcome success, " \
           "expected human-review-required" in why
    assert "- down / 01-divider / 1: [infra] " in why
    assert "reference /" not in why, "a right refusal is no failure"
    # Cells in words: a right block reads as a pass, each failure names its class.
    cells = dict(zip(TASK_IDS, _md_table(report, "| task |"), strict=True))
    assert cells["15-edit-tie-grounds-blocked"][1] == "PASS (blocked, as expected)"
    assert cells["17-contradictory-divider"][1] == "PASS (asked for review, as expected)"
    assert cells["02-rc-lowpass"][3].startswith("fail: function, score 0.")
    assert cells["15-edit-tie-grounds-blocked"][3] == "fail: invalid"
    assert cells["01-divider"][4] == "infra error"
    page = (ranked_run.root / "results" / "report.html").read_text()
    failed = page.split("<table id='failed-pairs'>", 1)[1].split("</table>", 1)[0]
    assert html.escape(function, quote=True) in failed
    assert failed.count("<tr>") == 1 + 2 + 3 + 4  # the head, baseline, alpha, down
    models = page.split("<table id='models'>", 1)[1].split("</table>", 1)[0]
    assert "<td>wrong outcome 1, invalid 1, function 1</td>" in models


@pytest.mark.slow
def test_the_skills_folder_of_each_model_is_shown(ranked_run):
    rows = _summary(ranked_run)
    folders = {r["model"]: r["skills"] for r in rows}
    assert folders["alpha"] == "skills-b" and folders["reference"] == ""
    assert folders["baseline"].endswith("skills") and folders["baseline"] == folders["down"]
    report = (ranked_run.root / "results" / "report.md").read_text()
    table = {r[0]: r[-1] for r in _md_table(report, "| model | pairs |")}
    assert table == {"reference": "-", "baseline": folders["baseline"], "alpha": "skills-b",
                     "down": folders["baseline"]}
    assert (f"Skills folders (the docs each model's prompt pack is made of): "
            f"{folders['baseline']}: baseline, down; skills-b: alpha; none read: "
            "reference.") in report
    page = (ranked_run.root / "results" / "report.html").read_text()
    head = page.split("<table class='matrix' id='matrix'>", 1)[1].split("</tr>", 1)[0]
    assert "<th>alpha<br><span class='skills'>skills-b</span></th>" in head
    models = page.split("<table id='models'>", 1)[1].split("</table>", 1)[0]
    assert "<td><b>alpha</b></td><td>skills-b</td>" in models


@pytest.mark.slow
def test_a_narrowed_summary_keeps_the_skills_folder_of_the_models_it_left_out(
        ranked_run, tmp_path):
    """`--config models=reference` names one model: the others' rows are as the earlier
    run left them, their skills folder included (the summary step reads it back from the
    summary.csv it replaces)."""
    from wirebench.reports.summary import write_summary

    csv_out = tmp_path / "summary.csv"
    shutil.copy(ranked_run.root / "results" / "summary.csv", csv_out)
    write_summary(ranked_run.root / "results" / "runs", ["reference"], TASK_IDS, 1, csv_out,
                  tmp_path / "scorecard.json", experiment=(RANKED, TASK_IDS), skills={})
    with open(csv_out, newline="") as fh:
        narrowed = {(r["model"], r["task"]): (r["this_run"], r["skills"])
                    for r in csv.DictReader(fh)}
    assert narrowed[("alpha", "01-divider")] == ("False", "skills-b")
    assert narrowed[("reference", "01-divider")] == ("True", "")
    card = json.loads((tmp_path / "scorecard.json").read_text())
    assert card["models"]["alpha"]["skills"] == "skills-b"


# The page, as a browser lays it out: a script in a copy of it writes what Chromium
# computed into the DOM, which --dump-dom prints.
PROBE = """<script>
window.addEventListener('load', () => {
  const bg = el => getComputedStyle(el).backgroundColor;
  const shown = el => el.checkVisibility() && el.getBoundingClientRect().height > 0;
  const models = [...document.querySelectorAll('#matrix tr:first-child th')].slice(1)
    .map(th => th.firstChild.textContent);
  const cells = {};
  for (const tr of [...document.querySelectorAll('#matrix tr')].slice(1)) {
    const task = tr.querySelector('th').textContent;
    [...tr.querySelectorAll('td')].forEach((td, i) => {
      cells[models[i] + '/' + task] = {bg: bg(td), text: td.textContent,
                                       verdict: td.dataset.verdict};
    });
  }
  const legend = {};
  for (const s of document.querySelectorAll('#legend .v')) legend[s.textContent] = bg(s);
  const rows = [...document.querySelectorAll('details.pair')].map(d => {
    const reason = d.querySelector('summary .reason');
    return {id: d.id, open: d.open, passed: d.dataset.passed,
            badge: bg(d.querySelector('summary .v')),
            reason: reason ? reason.textContent : null,
            reason_shown: reason ? shown(reason) : false,
            body_shown: shown(d.querySelector('h4'))};
  });
  const out = document.createElement('pre');
  out.id = 'probe';
  out.textContent = JSON.stringify({cells, legend, rows});
  document.body.appendChild(out);
});
</script>"""


def _probe(project, tmp_path) -> dict:
    page = tmp_path / "probed.html"
    page.write_text((project.root / "results" / "report.html").read_text()
                    .replace("</body>", PROBE + "</body>"))
    dom = browse(page, tmp_path, "--dump-dom").stdout
    found = re.search(r'<pre id="probe">(.*?)</pre>', dom, re.S)
    assert found, "the probe did not run"
    return json.loads(html.unescape(found.group(1)))


def _rgb(css: str) -> tuple[int, ...]:
    return tuple(int(x) for x in re.findall(r"\d+", css)[:3])


@pytest.mark.slow
def test_cells_are_coloured_by_their_verdict_and_failed_rows_show_why(ranked_run, tmp_path):
    seen = _probe(ranked_run, tmp_path)
    cells, legend = seen["cells"], seen["legend"]
    passed = cells["reference/01-divider"]
    failed = cells["baseline/17-contradictory-divider"]
    refused = cells["reference/15-edit-tie-grounds-blocked"]
    invalid = cells["alpha/15-edit-tie-grounds-blocked"]
    infra = cells["down/01-divider"]
    assert [c["verdict"] for c in (passed, failed, refused, invalid, infra)] == [
        "pass", "fail", "refused", "invalid", "infra"]
    # Each cell has its legend's colour, and the legend tells the five apart.
    assert (passed["bg"], failed["bg"], refused["bg"], invalid["bg"], infra["bg"]) == (
        legend["pass"], legend["fail"], legend["expected refusal"], legend["invalid"],
        legend["infra error"])
    assert len({passed["bg"], failed["bg"], invalid["bg"], infra["bg"]}) == 4
    r, g, b = _rgb(passed["bg"])
    assert g > r + 30 and g > b + 20, f"a pass is green: {passed['bg']}"
    r, g, b = _rgb(failed["bg"])
    assert r > g + 40 and r > b + 40, f"a fail is red: {failed['bg']}"
    # A block the task asks for is right: a pass's colour and a pass's words, no warning.
    assert refused["bg"] == passed["bg"] and refused["text"] == "blocked, as expected"
    assert cells["reference/17-contradictory-divider"]["bg"] == passed["bg"]
    assert failed["text"] == "fail: wrong outcome" and invalid["text"] == "invalid"
    # Every failed pair's collapsed row shows its reason, as summary.csv has it, without
    # a click; what is behind the row stays folded.
    rows = {r["model"] + "/" + r["task"]: r for r in _summary(ranked_run)}
    failing = [r for r in seen["rows"] if r["passed"] == "0"]
    assert len(failing) == 2 + 3 + 4
    for row in failing:
        key = row["id"].removeprefix("pair-").removesuffix("-1")
        model, task = key.split("-", 1)
        want = rows[f"{model}/{task}"]
        expected = want["first_finding"] or want["errors"].split(" | ")[0]
        assert not row["open"] and not row["body_shown"], row["id"]
        assert row["reason_shown"] and row["reason"] == expected, (row, expected)
        assert row["badge"] == legend[{"infra": "infra error", "invalid": "invalid"}.get(
            want["failure_class"], "fail")], row["id"]
    right = next(r for r in seen["rows"] if r["id"] == "pair-reference-15-edit-tie-grounds-"
                 "blocked-1")
    assert right["badge"] == legend["pass"] and right["reason"] is None


def test_ties_are_broken_by_the_stated_rule():
    from wirebench.reports.summary import RANK_NOTE, ranked

    def model(rate, every, clean):
        return {"pass_rate": rate, "pass_rate_all_pairs": every, "clean_rate": clean}

    card = {"models": {
        "b-tie": model(0.5, 0.5, 0.5), "a-tie": model(0.5, 0.5, 0.5),   # all equal: by name
        "cleaner": model(0.5, 0.5, 0.75),                              # a higher clean rate
        "fewer-infra": model(0.5, 0.6, 0.1),                           # fewer infra errors
        "best": model(0.9, 0.1, 0.0), "no-answers": model(None, 0.0, None),
        "worst": model(0.0, 0.0, 0.0)}}
    assert ranked(card, sorted(card["models"])) == [
        "best", "fewer-infra", "cleaner", "a-tie", "b-tie", "worst", "no-answers"]
    assert "infra errors counted as failures, then to the higher clean rate, then by " \
           "name" in RANK_NOTE


def test_a_several_sample_cell_takes_its_samples_shared_verdict():
    from wirebench.reports.report_html import matrix_cell

    def row(sample, outcome, passed, cls=""):
        return {"sample": sample, "outcome": outcome, "passed": passed, "clean": passed,
                "failure_class": cls, "score": 1.0 if passed else 0.0, "errors": "",
                "first_finding": "", "expected_outcome": "success"}

    ok, bad = row(1, "success", True), row(2, "success", False, "function")
    assert matrix_cell([ok, row(2, "success", True)])[:2] == ("pass", "2/2 pass")
    assert matrix_cell([ok, bad])[:2] == ("some", "1/2 pass")
    assert matrix_cell([bad, row(1, "invalid", False, "invalid")])[:2] == ("fail", "0/2 pass")
    assert matrix_cell([row(1, "infra_error", False, "infra")] * 2)[:2] == ("infra", "0/2 pass")
    blocked = row(1, "blocked", True)
    assert matrix_cell([blocked]) == ("refused", "blocked, as expected", "score 1.00")
    assert matrix_cell([]) == ("none", "-", "no pair")
