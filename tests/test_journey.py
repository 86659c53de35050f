"""A newcomer's first hour, end to end, in one fresh copy of the repository, doing what the
README says in its order: the default run and a compare on it; one's own agent, added the
wrong way first and fixed as the refusal says; edits, a timeout change, a narrowed run,
an archive, and a docs A/B with compare. Real Snakemake, akcli, ngspice and bubblewrap.

What reran is read from the job logs (a generate job per pair rewrites its log; a batch
job's log names each pair it ran), never from a dry run's job counts: a batch job that
reruns but skips its pairs, or the reverse, would pass a dry run.
"""

from __future__ import annotations

import csv
import json
import os
import re
import shutil
import subprocess
import tarfile
from pathlib import Path

import pytest
import yaml
from conftest import REPO, TASKS

from wirebench.runtime import akcli_backend

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(akcli_backend.ngspice_library() is None,
                       reason="needs Debian's libngspice0 (or AKCLI_NGSPICE)"),
    pytest.mark.skipif(not Path("/usr/share/kicad/symbols/Device.kicad_sym").is_file(),
                       reason="the default run's boards need Debian's kicad-symbols"),
]

# The README's agent skeleton with ask() written: it answers 01-divider's reference.
ANSWER = (TASKS / "01-divider" / "reference_ops.json").read_text()
AGENT = ("import os\nfrom pathlib import Path\n\n\ndef ask(prompt: str) -> str:\n"
         f"    return {ANSWER!r}\n\n\n"
         "Path(os.environ['OPS_OUT']).write_text(ask(Path(os.environ['PROMPT_FILE']).read_text()))\n")


class Newcomer:
    """A fresh copy of the repository, run as a user runs it: from its folder, with its
    own copy of the package first on PYTHONPATH (the steps' fingerprints hash the package,
    which an edit in the checkout during the test must not change)."""

    def __init__(self, root: Path):
        self.root = root
        listed = subprocess.run(["git", "ls-files", "-z", "--cached", "--others",
                                 "--exclude-standard"], cwd=REPO, capture_output=True,
                                check=True).stdout.decode().split("\0")
        for rel in filter(None, listed):
            if (REPO / rel).is_file():
                (root / rel).parent.mkdir(parents=True, exist_ok=True)
                shutil.copy2(REPO / rel, root / rel)
        self.env = {**os.environ, "PYTHONPATH": str(root / "src"), "WIREBENCH_WORKER": "0"}

    def run(self, *args: str, check: bool = True) -> subprocess.CompletedProcess:
        proc = subprocess.run(list(args), cwd=self.root, env=self.env, capture_output=True,
                              text=True, timeout=1200)
        if check:
            assert proc.returncode == 0, f"{' '.join(args)}:\n{proc.stderr[-4000:]}"
        return proc

    def snakemake(self, *config: str, check: bool = True) -> subprocess.CompletedProcess:
        return self.run("snakemake", "--cores", "2", *(["--config", *config] if config else []),
                        check=check)

    def _logs(self) -> dict[Path, int]:
        logs = self.root / "results" / "logs"
        return {p: p.stat().st_mtime_ns for p in logs.rglob("*.log")} if logs.is_dir() else {}

    def ran(self, *config: str) -> dict[str, set[str]]:
        """A real run; step -> the pairs it ran (MODEL/TASK/SAMPLE)."""
        before = self._logs()
        self.snakemake(*config)
        ran: dict[str, set[str]] = {}
        for log, mtime in self._logs().items():
            if before.get(log) == mtime:
                continue  # its job did not run
            parts = log.relative_to(self.root / "results" / "logs").parts
            if parts[0] == "batches":  # batches/MODEL/NNNN/STEP.log
                pairs = {line[3:] for line in log.read_text().splitlines()
                         if line.startswith("== ")}
                if pairs:
                    ran.setdefault(log.stem, set()).update(pairs)
            elif len(parts) == 4:  # MODEL/TASK/SAMPLE/generate.log
                ran.setdefault(log.stem, set()).add("/".join(parts[:3]))
        return ran

    def answered(self, pairs: set[str]) -> dict[str, bytes]:
        """Each pair's agent.json, the record of its answer that score reads."""
        return {p: (self.root / "results" / "runs" / p / "agent.json").read_bytes()
                for p in pairs}

    def summary(self, under: str = "results") -> list[dict]:
        with open(self.root / under / "summary.csv", newline="") as fh:
            return list(csv.DictReader(fh))

    def compare(self, *args: str) -> dict:
        proc = self.run("wirebench", "compare", *args, "--json")
        return json.loads(proc.stdout)


def _pairs(rows: list[dict], model: str) -> set[str]:
    return {f"{model}/{r['task']}/{r['sample']}" for r in rows if r["model"] == model}


def _models_file(path: Path, entries: dict) -> None:
    path.write_text(yaml.safe_dump({"models": entries}, sort_keys=False))


def test_a_newcomers_first_hour(tmp_path):
    me = Newcomer(tmp_path / "wirebench")

    # 1. The README's first command (after its install): the default run.
    first = me.snakemake()
    rows = me.summary()
    assert {r["model"] for r in rows} == {"reference", "baseline"}
    tiers = {r["tier"] for r in rows}
    assert {"transcription", "design", "board"} <= tiers, tiers
    reference = [r for r in rows if r["model"] == "reference"]
    assert all(r["passed"] == "True" for r in reference), \
        [r["task"] for r in reference if r["passed"] != "True"]
    table = first.stdout + first.stderr
    assert len(re.findall(r"^model\s+pairs\s+passed\b", table, re.M)) == 1, \
        "the run ends with its table, once"
    for model in ("reference", "baseline"):
        assert re.search(rf"^{model}\s+{len(reference)}\s", table, re.M), f"a line for {model}"
    for name in ("scorecard.json", "report.md", "report.html", "manifest.json"):
        assert (me.root / "results" / name).is_file(), name
    assert me.ran() == {}, "run it again and nothing reruns"

    # 2. compare on the default run: every tier, design and board pairs included.
    default = me.compare("results", "--models", "reference", "baseline")
    assert default["pairs"] == len(reference)
    failed_by_baseline = sorted(f"{r['task']}/{r['sample']}" for r in rows
                                if r["model"] == "baseline" and r["passed"] != "True")
    assert [r["pair"] for r in default["regressions"]] == failed_by_baseline
    failed_tiers = {r["tier"] for r in rows if r["model"] == "baseline"
                    and f"{r['task']}/{r['sample']}" in failed_by_baseline}
    assert {"design", "board"} <= failed_tiers, "compare read design and board pairs"

    # 3. One's own agent, the README's way, first with the paths a newcomer would write.
    (me.root / "my_agents").mkdir()
    (me.root / "my_agents" / "agent.py").write_text("# version 1\n" + AGENT)
    tools = tmp_path / "tools"  # a script outside the project, with a module it imports
    tools.mkdir()
    (tools / "agent.py").write_text("import helper  # noqa\n")
    (tools / "helper.py").write_text("# version 1\n" + AGENT)
    models = me.root / "my_models.yaml"
    _models_file(models, {"mine": {"kind": "command", "command": "python3 my_agents/agent.py",
                                   "timeout": 900}})
    refused = me.snakemake("models_file=my_models.yaml", check=False)
    assert refused.returncode != 0
    assert "models.mine.files: [my_agents/agent.py]" in refused.stdout + refused.stderr
    _models_file(models, {"mine": {"kind": "command",
                                   "command": f"python3 {tools}/agent.py", "timeout": 900}})
    refused = me.snakemake("models_file=my_models.yaml", check=False)
    assert refused.returncode != 0 and "expose:" in refused.stdout + refused.stderr
    # Fixed as the messages say (the README's my_models.yaml, and an `expose:` entry).
    entries = {
        "mine": {"kind": "command", "command": 'python3 "$PROJECT_DIR/my_agents/agent.py"',
                 "files": ["my_agents/*.py"], "timeout": 900},
        "ext": {"kind": "command", "command": f"python3 {tools}/agent.py",
                "expose": [str(tools)], "timeout": 900},
        "baseline": {"kind": "command", "command": "wirebench-baseline"},
    }
    _models_file(models, entries)
    me.snakemake("models_file=my_models.yaml")
    rows = me.summary()
    assert {r["model"] for r in rows} == {"mine", "ext", "baseline"}
    for model in ("mine", "ext"):
        (divider,) = [r for r in rows if r["model"] == model and r["task"] == "01-divider"]
        assert divider["passed"] == "True", (model, divider["first_finding"])
    mine, ext = _pairs(rows, "mine"), _pairs(rows, "ext")

    # 4. Edit a script: only that model's pairs are answered (and scored) again; the same
    #    answer draws nothing again.
    #    Score reruns a pair whose agent.json changed: its wall time, to the millisecond,
    #    which on a quiet machine can come out the same, and then nothing is to redo.
    for edited, model, pairs in ((me.root / "my_agents" / "agent.py", "mine", mine),
                                 (tools / "helper.py", "ext", ext)):
        before = me.answered(pairs)
        edited.write_text(edited.read_text().replace("# version 1", "# version 2"))
        ran = me.ran("models_file=my_models.yaml")
        after = me.answered(pairs)
        changed = {p for p in pairs if after[p] != before[p]}
        assert changed, f"{model}: a rerun agent writes a new agent.json"
        assert ran == {"generate": pairs, "score": changed}, model

    # 5. A timeout (and retries) change reruns no agent call, and nothing else.
    entries["mine"].update(timeout=1200, retries=3)
    _models_file(models, entries)
    assert me.ran("models_file=my_models.yaml") == {}

    # 6. A narrowed run after a task edit, then the full run: nothing left to redo.
    with open(me.root / "tasks" / "01-divider" / "task.md", "a") as fh:
        fh.write("\nThe divider feeds an ADC input.\n")
    narrowed = me.ran("models_file=my_models.yaml", "tasks=01-divider")
    assert narrowed["generate"] == {f"{m}/01-divider/1" for m in entries}
    # Its summary and manifest still cover the whole run, and the hashes hold.
    assert _pairs(me.summary(), "mine") == mine
    manifest = json.loads((me.root / "results" / "manifest.json").read_text())
    scored = {e["path"] for e in manifest["artifacts"] if e["kind"] == "score"}
    assert scored == {f"runs/{p}/score.json" for p in mine | ext | _pairs(rows, "baseline")}
    me.run("wirebench", "verify", "results")
    assert me.ran("models_file=my_models.yaml") == {}

    # 7. A bare archive freezes the run as it was configured: its models, not the
    #    default's, and no job but the archive's.
    proc = me.run("snakemake", "--cores", "1", "archive")
    jobs = proc.stdout + proc.stderr
    assert "localrule archive:" in jobs and "rule score" not in jobs, jobs[-2000:]
    with open(me.root / "archive" / "index.csv", newline="") as fh:
        (row,) = csv.DictReader(fh)
    assert row["models"] == "baseline;ext;mine"
    archive = me.root / "archive" / row["archive"]
    with tarfile.open(archive) as tar:
        names = tar.getnames()
    assert f"{row['run_id']}/runs/mine/01-divider/1/score.json" in names
    assert not any("/runs/reference/" in n for n in names)
    same = me.compare(str(archive), "results")
    assert (same["pairs"], same["regressions"], same["fixes"]) == (len(rows), [], [])
    within = me.compare(str(archive), "--models", "baseline", "mine")
    assert within["pairs"] == len(mine)

    # 8. A docs A/B: two entries that differ only in their skills folder.
    shutil.copytree(me.root / "skills", me.root / "my_skills")
    with open(me.root / "my_skills" / "akcli-oplists.md", "a") as fh:
        fh.write("\nPlace every resistor before its labels.\n")
    _models_file(me.root / "ab_models.yaml", {
        "docs-a": {"kind": "command", "command": "wirebench-baseline", "skills": "skills"},
        "docs-b": {"kind": "command", "command": "wirebench-baseline", "skills": "my_skills"}})
    me.snakemake("models_file=ab_models.yaml", "experiment=docs-ab")
    ab_rows = me.summary("results/docs-ab")
    ab = me.compare("results/docs-ab", "--models", "docs-a", "docs-b")
    assert ab["pairs"] == len(ab_rows) // 2
    assert {r["tier"] for r in ab_rows} >= {"design", "board"}
    for change in ab["regressions"] + ab["fixes"]:  # a pair that moved: its docs moved it
        assert any("skills" in what for what in change["what_changed"]), change
    assert {r["model"] for r in me.summary()} == set(entries), \
        "an experiment leaves the main run whole"
