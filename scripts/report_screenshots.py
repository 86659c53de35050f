"""Make docs/report.png and docs/drilldown.png from a real run.

    python scripts/report_screenshots.py             # writes both into docs/
    python scripts/report_screenshots.py --keep DIR  # and keeps the run in DIR

It runs the real workflow (Snakemake, akcli, ngspice) in a temporary folder on nine
tasks of three tiers with four models: the reference; the heuristic baseline twice, once
with the shipped skills folder and once with an A/B copy of it (one line added); and
`known-wrong`, an ops_dir of answers wrong in known ways (a label short, an old
protocol, a drawing where the task asks a question, the design tasks' own wrong answers).
Then Debian's headless chromium takes the report's top (the models best first, their
skills folders, why pairs failed) and the drill-down of a design pair that fails its
power-up transient. About a minute on two cores.
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parents[1]
TASKS = ["01-divider", "02-rc-lowpass", "04-i2c-pullups", "12-battery-sense-divider-macro",
         "15-edit-tie-grounds-blocked", "17-contradictory-divider", "18-out-of-domain-firmware",
         "d01-rc-lowpass-loaded", "d03-noninverting-gain"]
# The pair whose drill-down docs/drilldown.png shows: swapped op-amp inputs, right in AC,
# latched at a rail after power-up.
DRILLDOWN = "pair-known-wrong-d03-noninverting-gain-1"
CHROMIUM_FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
                  "--no-first-run", "--disable-background-networking",
                  "--disable-component-update", "--disable-sync"]


def _reference(task: str) -> dict:
    return json.loads((REPO / "tasks" / task / "reference_ops.json").read_text())


def known_wrong(folder: Path) -> None:
    """An answer a task at a time, each wrong for a stated reason (or right, where the
    model should be seen to pass)."""
    folder.mkdir(parents=True)
    answers = {task: _reference(task) for task in TASKS}
    answers["01-divider"]["ops"] = answers["01-divider"]["ops"][:-1]  # a label short
    answers["02-rc-lowpass"]["protocol_version"] = 1                  # akcli refuses it
    answers["17-contradictory-divider"] = _reference("01-divider")    # draws, asked not to
    for task, wrong in (("d01-rc-lowpass-loaded", "high-pass.json"),
                        ("d03-noninverting-gain", "inputs-swapped.json")):
        answers[task] = json.loads((REPO / "tasks" / task / "wrong" / wrong).read_text())
    for task, doc in answers.items():
        (folder / f"{task}.json").write_text(json.dumps(doc))


def make_run(root: Path) -> Path:
    shutil.copytree(REPO / "skills", root / "skills")
    shutil.copytree(REPO / "skills", root / "skills-b")
    guide = root / "skills-b" / "akcli-oplists.md"
    guide.write_text(guide.read_text() + "\nCheck every label against the task.\n")
    known_wrong(root / "answers")
    baseline = {"kind": "command", "command": "wirebench-baseline", "provider": "local",
                "timeout": 60}
    config = {"tasks_dir": str(REPO / "tasks"), "tasks": TASKS,
              "symbols": sorted(str(p) for p in (REPO / "symbols").glob("*.kicad_sym")),
              "models": {"reference": {"kind": "reference"},
                         "baseline": {**baseline, "skills": "skills"},
                         "baseline-b": {**baseline, "skills": "skills-b"},
                         "known-wrong": {"kind": "ops_dir", "dir": str(root / "answers")}}}
    (root / "config").mkdir()
    (root / "config" / "config.yaml").write_text(yaml.safe_dump(config))
    subprocess.run(["snakemake", "-s", str(REPO / "Snakefile"), "-d", str(root), "--cores",
                    "2", "-q"], check=True, timeout=1200)
    return root / "results" / "report.html"


def shoot(page: Path, out: Path, size: str, profile: Path) -> None:
    chromium = shutil.which("chromium")
    if chromium is None:
        sys.exit("Debian's chromium is needed: apt-get install -y chromium")
    subprocess.run([chromium, *CHROMIUM_FLAGS, f"--user-data-dir={profile}",
                    f"--screenshot={out}", f"--window-size={size}", page.as_uri()],
                   check=True, capture_output=True, timeout=120)
    if out.read_bytes()[:8] != b"\x89PNG\r\n\x1a\n":
        sys.exit(f"{out}: chromium wrote no PNG")


def drilldown_page(report: Path, out: Path) -> Path:
    """The report with one pair's drill-down open and nothing else shown."""
    html = report.read_text()
    if f"id='{DRILLDOWN}'" not in html:
        sys.exit(f"{report}: no {DRILLDOWN}")
    style = ("<style>body>*:not(#pairs){display:none}"
             f"#pairs>details:not(#{DRILLDOWN}){{display:none}}</style>")
    out.write_text(html.replace("</head>", style + "</head>")
                   .replace(f"id='{DRILLDOWN}'", f"id='{DRILLDOWN}' open"))
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", type=Path, default=REPO / "docs")
    ap.add_argument("--keep", type=Path, help="run in this (new) folder and keep it")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="wirebench-shots-") as td:
        root = args.keep or Path(td) / "run"
        root.mkdir(parents=True)
        report = make_run(root.resolve())
        shoot(report, args.out / "report.png", "1280,1800", Path(td) / "profile")
        shoot(drilldown_page(report, Path(td) / "drilldown.html"), args.out / "drilldown.png",
              "1280,1500", Path(td) / "profile")
    print(f"wrote {args.out / 'report.png'} and {args.out / 'drilldown.png'}")


if __name__ == "__main__":
    main()
