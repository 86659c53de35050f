"""Break a feature on purpose, in a copy, and check that a test goes red.

Each breakage below is one a review found the suite blind to: a one- or two-line change
that a test must catch. For each, this script copies the committed tree (`git archive
HEAD`) to a temporary folder, applies the change, runs the tests named for it against
that copy, and reports whether they failed. Exit status 1 if any breakage went unseen.

    python benchmarks/breakages.py            # all of them
    python benchmarks/breakages.py render     # the ones whose name holds "render"

It runs the real tests (Snakemake runs included), so it takes a few minutes.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]

# name -> (file, text to replace, replacement, tests that must fail)
BREAKAGES = {
    "report-infra-cells-blanked": (
        "src/wirebench/reports/report.py",
        'if v == "infra":', "if False:",
        ["tests/test_agents.py::test_infra_errors_are_left_out_of_pass_rates"]),
    "report-models-by-name": (
        "src/wirebench/reports/summary.py",
        "    return sorted(models, key=key)", "    return sorted(models)",
        ["tests/test_report_ranking.py::test_the_models_are_listed_best_first_everywhere"]),
    "report-refusal-as-warning": (
        "src/wirebench/reports/report_html.py",
        ".v-pass,.v-refused{background:#a8d8b2}",
        ".v-pass{background:#a8d8b2}.v-refused{background:#f3d9a4}",
        ["tests/test_report_ranking.py::test_cells_are_coloured_by_their_verdict_and_failed_rows_show_why"]),
    "report-reason-not-on-the-row": (
        "src/wirebench/reports/report_html.py",
        """+ (f" <span class='reason'>{escape(why)}</span>" if why else "")""", '+ ""',
        ["tests/test_report_ranking.py::test_cells_are_coloured_by_their_verdict_and_failed_rows_show_why"]),
    "report-skills-dropped": (
        "src/wirebench/reports/summary.py",
        '"skills": (skills.get(model, "") if model in models', '"skills": ("" if model in models',
        ["tests/test_report_ranking.py::test_the_skills_folder_of_each_model_is_shown"]),
    "answer-not-redacted": (
        "src/wirebench/steps/generate.py",
        'ops = redact((final.ops or b"").decode(errors="surrogateescape"), spec).encode(\n'
        '        errors="surrogateescape")', 'ops = final.ops or b""',
        ["tests/test_agents.py::test_no_secret_reaches_results_metadata_logs_or_the_archive"]),
    "retry-after-not-waited": (
        "src/wirebench/steps/generate.py",
        "        sleep(min(delay, BACKOFF_CAP_S))", "        pass",
        ["tests/test_agents.py::test_a_429_is_retried_after_retry_after"]),
    "render-always-placeholder": (
        "src/wirebench/steps/apply.py",
        "if res.rc != 0 or not svg.is_file():", "if True:",
        ["tests/test_evaluate.py::test_the_rendered_sheet_shows_the_parts_and_nets"]),
    "wilson-at-80-percent": (
        "src/wirebench/reports/summary.py",
        "wilson(c, n)", "wilson(c, n, z=1.2816)",
        ["tests/test_agents.py::test_infra_errors_are_left_out_of_pass_rates"]),
    "mcnemar-constant": (
        "src/wirebench/reports/compare.py",
        '"mcnemar_p": round(mcnemar_exact(len(regressions), len(fixes)), 6),',
        '"mcnemar_p": 1.0,',
        ["tests/test_gates.py"]),
    "gate-reference-branch-off": (
        "src/wirebench/reports/gate.py",
        'if not doc["outcome_ok"] or not doc["passed"]:', "if False:",
        ["tests/test_gates.py"]),
    "worker-bypassed": (
        "src/wirebench/cli.py",
        "        if reply is not None:", "        if reply is not None and False:",
        ["tests/test_worker.py::test_a_served_step_never_runs_in_the_client"]),
}


def copy_of_head(into: Path) -> None:
    archive = subprocess.run(["git", "archive", "HEAD"], cwd=REPO, capture_output=True,
                             check=True).stdout
    with tempfile.TemporaryFile() as fh:
        fh.write(archive)
        fh.seek(0)
        with tarfile.open(fileobj=fh) as tar:
            tar.extractall(into, filter="data")


def check(name: str, spec: tuple) -> bool:
    path, old, new, tests = spec
    with tempfile.TemporaryDirectory(prefix=f"wirebench-break-{name}-") as td:
        copy = Path(td)
        copy_of_head(copy)
        target = copy / path
        text = target.read_text()
        if old not in text:
            print(f"{name:30s} STALE: {path} no longer holds the line this breaks")
            return False
        target.write_text(text.replace(old, new))
        started = time.monotonic()
        proc = subprocess.run(
            [sys.executable, "-m", "pytest", "-q", "-x", "-p", "no:cacheprovider", *tests],
            cwd=copy, capture_output=True, text=True,
            env={**os.environ, "PYTHONPATH": str(copy / "src")})
        caught = proc.returncode == 1
        verdict = "caught" if caught else f"NOT CAUGHT (pytest exit {proc.returncode})"
        print(f"{name:30s} {verdict:28s} {time.monotonic() - started:5.0f} s  {' '.join(tests)}")
        return caught


def main() -> None:
    wanted = sys.argv[1:]
    chosen = {n: s for n, s in BREAKAGES.items() if not wanted or any(w in n for w in wanted)}
    results = [check(name, spec) for name, spec in chosen.items()]
    print(f"{sum(results)} of {len(results)} breakages caught")
    sys.exit(0 if all(results) else 1)


if __name__ == "__main__":
    main()
