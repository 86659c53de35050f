"""The README is a newcomer's ten minutes: short, its links resolve, and every command in
it is run, here or by .ci/run.

Each shell command in the README's code blocks is checked by what it is:
- the install steps (apt-get, the venv, pip, pytest) must be what `.ci/run` runs: the
  same packages (plus python3-venv, which `python3 -m venv` needs on Debian), extras that
  exist and that the test extra covers, the same test command;
- file steps (mkdir, cp, sed) and the cheap `wirebench tasks` commands run for real in a
  copy of the repository, in the README's order, after the files the README names in its
  code blocks (`# my_models.yaml` on a block's first line) are written there;
- every `wirebench` command must name a subcommand that exists and only flags its
  `--help` lists;
- every `snakemake` command must dry-run (`-n`) in that copy.
Any other command fails until it gets a check here.
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
README = REPO / "README.md"
CI = REPO / ".ci" / "run"
BIN = str(Path(sys.executable).parent)
ENV = {**os.environ, "PATH": BIN + os.pathsep + os.environ.get("PATH", "")}
MAX_LINES = 260


def code_blocks(text: str) -> list[tuple[str, str]]:
    """(language, body) of every fenced block."""
    return re.findall(r"^```(\w*)\n(.*?)^```", text, re.S | re.M)


def readme_commands(text: str) -> list[str]:
    """Every simple command of the README's sh blocks, in order: comments dropped,
    continuation lines joined, `&&` chains split."""
    commands = []
    for lang, body in code_blocks(text):
        if lang not in ("sh", "bash", "shell", "console"):
            continue
        for line in body.replace("\\\n", " ").splitlines():
            words = shlex.split(line, comments=True)
            command: list[str] = []
            for word in [*words, "&&"]:
                if word == "&&":
                    if command:
                        commands.append(shlex.join(command))
                    command = []
                else:
                    command.append(word)
    return commands


def named_files(text: str) -> dict[str, str]:
    """Files the README spells out in full: a yaml or python block whose first line is
    `# path` (before any `:`)."""
    files = {}
    for lang, body in code_blocks(text):
        first = body.splitlines()[0] if body else ""
        if lang in ("yaml", "python") and re.match(r"# [\w./-]+(:|$)", first):
            files[first[2:].split(":")[0].strip()] = body
    return files


COMMANDS = readme_commands(README.read_text())


def inline_commands(text: str) -> list[str]:
    """Commands the README's prose names in `code spans`: those that start with a program
    a reader would type (wirebench, snakemake, pip, python)."""
    prose = re.sub(r"^```.*?^```", "", text, flags=re.S | re.M)
    spans = (" ".join(m.split()) for m in re.findall(r"`([^`]+)`", prose))
    return sorted({s for s in spans if re.match(r"(wirebench|snakemake|pip|python) ", s)})


INLINE = inline_commands(README.read_text())


def ci_text() -> str:
    return CI.read_text()


def ci_packages() -> set[str]:
    return set(re.findall(r'NEED="\$NEED ([\w.+-]+)"', ci_text()))


def extras() -> dict[str, list[str]]:
    return tomllib.loads((REPO / "pyproject.toml").read_text())["project"][
        "optional-dependencies"]


# --- the README's shape ---------------------------------------------------------------

def test_the_readme_is_short():
    lines = README.read_text().splitlines()
    assert len(lines) <= MAX_LINES, f"README.md has {len(lines)} lines; keep it to " \
        f"{MAX_LINES} and move the rest to docs/"


def _slug(heading: str) -> str:
    """GitHub's anchor for a heading."""
    text = re.sub(r"[^\w\- ]", "", heading.strip().lower())
    return text.replace(" ", "-")


def _anchors(path: Path) -> set[str]:
    text = re.sub(r"^```.*?^```", "", path.read_text(), flags=re.S | re.M)
    return {_slug(m) for m in re.findall(r"^#+ (.+)$", text, re.M)}


def _broken_links(path: Path) -> list[str]:
    text = re.sub(r"^```.*?^```", "", path.read_text(), flags=re.S | re.M)
    broken = []
    for target in re.findall(r"\]\(([^)\s]+)\)", text):
        if re.match(r"\w+://|mailto:", target):
            continue
        file, _, anchor = target.partition("#")
        dest = (path.parent / file).resolve() if file else path
        if not dest.exists():
            broken.append(f"{target}: no such file")
        elif anchor and dest.suffix == ".md" and anchor not in _anchors(dest):
            broken.append(f"{target}: no heading #{anchor} in {dest.name}")
    return broken


def test_every_link_in_the_readme_resolves():
    links = re.findall(r"\]\((docs/[^)\s]*)\)", README.read_text())
    assert links, "the README links to docs/"
    assert _broken_links(README) == []


def test_every_link_in_the_docs_resolves():
    broken = {p.name: b for p in sorted((REPO / "docs").glob("*.md")) if (b := _broken_links(p))}
    assert broken == {}


def test_the_readme_ends_with_where_to_read_more():
    text = README.read_text()
    last = re.findall(r"^## (.+)$", text, re.M)[-1]
    assert last == "Where to read more"
    tail = text[text.index("## Where to read more"):]
    for doc in sorted((REPO / "docs").glob("*.md")):
        assert f"docs/{doc.name}" in tail, f"docs/{doc.name} is not listed under Where to read more"


def test_no_doc_speaks_of_sessions():
    """Work sessions are no reader's business; a process's or a client's session is."""
    allowed = re.compile(r"new-session|session or process group|(MCP|client|HTTP) session",
                         re.I)
    found = []
    for path in [README, *sorted((REPO / "docs").glob("*.md"))]:
        for n, line in enumerate(path.read_text().splitlines(), 1):
            if re.search(r"\bsessions?\b", allowed.sub("", line), re.I):
                found.append(f"{path.name}:{n}: {line.strip()}")
    assert found == []


def test_every_summary_column_is_documented():
    from wirebench.reports.summary import COLUMNS

    guide = (REPO / "docs" / "config.md").read_text()
    assert [c for c in COLUMNS if f"`{c}`" not in guide] == []


# --- the install commands are what CI runs --------------------------------------------

def test_the_readme_has_its_two_commands_at_the_top():
    text = README.read_text()
    first = next(body for lang, body in code_blocks(text) if lang == "sh")
    lines = [c for c in readme_commands(f"```sh\n{first}```\n")]
    assert "snakemake --cores 2" in lines, "the first block runs the default matrix"
    assert "python -m pytest -q" in lines, "the first block runs the tests"
    assert text.index("```sh") < text.index("\n## "), "the commands come before any section"


def test_the_readme_test_command_is_what_ci_runs():
    ci = ci_text()
    assert "python -m pytest -q" in ci
    assert "pip install --quiet -e '.[test]'" in ci
    assert "python3 -m venv .venv" in ci and ". .venv/bin/activate" in ci


def _check_install(cmd: str) -> None:
    words = shlex.split(cmd)
    ci = ci_text()
    if words[:2] == ["apt-get", "update"]:
        assert "apt-get update" in ci
    elif words[:2] == ["apt-get", "install"]:
        packages = {w for w in words[2:] if not w.startswith("-")}
        # python3-venv: what `python3 -m venv` (which .ci/run runs) needs on Debian.
        assert packages <= ci_packages() | {"python3-venv"}, \
            f"{cmd}: not what .ci/run installs ({sorted(ci_packages())})"
    elif words[:3] == ["python3", "-m", "venv"]:
        assert cmd in ci
    elif words[:1] in (["."], ["source"]):
        assert f". {words[1]}" in ci
    elif words[:1] == ["pip"]:
        assert words[1:3] == ["install", "-e"] and len(words) == 4, cmd
        spec = words[3]
        m = re.fullmatch(r"\.(?:\[([\w,-]+)\])?", spec)
        assert m, f"{cmd}: install the checkout, with extras"
        have = extras()
        test_deps = {re.split(r"[<>=\[ ]", d)[0] for d in have["test"]}
        for extra in (m.group(1) or "").split(",") if m.group(1) else []:
            assert extra in have, f"{cmd}: pyproject.toml has no extra {extra!r}"
            if extra not in ("test", "audit"):  # CI installs the test extra: it covers these
                deps = {re.split(r"[<>=\[ ]", d)[0] for d in have[extra]}
                assert deps <= test_deps, f"the test extra lacks {sorted(deps - test_deps)}"
    elif words[:3] == ["python", "-m", "pytest"]:
        assert cmd in ci
    else:
        raise AssertionError(cmd)


# --- the rest runs in a copy of the repository ----------------------------------------

FILE_STEPS = ("mkdir", "cp", "sed")
RUN_FOR_REAL = (("wirebench", "tasks", "check"), ("wirebench", "tasks", "generate"),
                ("wirebench", "tasks", "split"))


def _run(args: list[str], cwd: Path, timeout: int = 600) -> subprocess.CompletedProcess:
    return subprocess.run(args, cwd=cwd, env=ENV, capture_output=True, text=True,
                          timeout=timeout)


@pytest.fixture(scope="module")
def clone(tmp_path_factory) -> Path:
    """The repository as a fresh clone would have it (tracked and new files, not
    results), with the README's named files and its file steps done, in its order."""
    root = tmp_path_factory.mktemp("readme") / "wirebench"
    listed = subprocess.run(["git", "ls-files", "-z", "--cached", "--others",
                             "--exclude-standard"], cwd=REPO, capture_output=True,
                            check=True).stdout.decode().split("\0")
    for rel in filter(None, listed):
        src = REPO / rel
        if src.is_file():
            (root / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, root / rel)
    for rel, body in named_files(README.read_text()).items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(body)
    for cmd in COMMANDS:
        words = shlex.split(cmd)
        if words[0] in FILE_STEPS or tuple(words[:3]) in RUN_FOR_REAL:
            proc = _run(words, root)
            assert proc.returncode == 0, f"{cmd}\n{proc.stdout[-2000:]}{proc.stderr[-2000:]}"
    return root


def _help(words: list[str], cwd: Path) -> str:
    proc = _run([*words, "--help"], cwd, timeout=60)
    assert proc.returncode == 0, f"{shlex.join(words)} --help: {proc.stderr[-1000:]}"
    return proc.stdout


def _check_wirebench(cmd: str, cwd: Path) -> None:
    words = shlex.split(cmd)
    path = ["wirebench"]
    usage = _help(path, cwd)
    for word in words[1:]:
        choices = re.search(r"\{([\w,-]+)\}", usage)
        if not choices:
            break
        assert word in choices.group(1).split(","), \
            f"{cmd}: `{shlex.join(path)}` has no subcommand {word!r}"
        path.append(word)
        usage = _help(path, cwd)
    for flag in (w.split("=")[0] for w in words if w.startswith("--")):
        assert re.search(rf"(^|[\s\[,]){re.escape(flag)}\b", usage, re.M), \
            f"{cmd}: `{shlex.join(path)} --help` lists no {flag}"


def _check_snakemake(cmd: str, cwd: Path) -> None:
    proc = _run([*shlex.split(cmd), "-n"], cwd)
    assert proc.returncode == 0, f"{cmd} -n failed:\n{proc.stderr[-3000:]}"
    assert "dry-run" in proc.stdout + proc.stderr


INSTALL = ("apt-get", "python3", ".", "source", "pip", "python")


@pytest.mark.parametrize("cmd", COMMANDS)
@pytest.mark.slow
def test_every_readme_command_runs(cmd, request):
    words = shlex.split(cmd)
    if words[0] in INSTALL and not (words[0] == "python" and words[1:2] != ["-m"]):
        _check_install(cmd)
        return
    clone = request.getfixturevalue("clone")
    if words[0] in FILE_STEPS or tuple(words[:3]) in RUN_FOR_REAL:
        return  # the clone fixture ran it, and it succeeded
    if words[0] == "wirebench":
        _check_wirebench(cmd, clone)
    elif words[0] == "snakemake":
        _check_snakemake(cmd, clone)
    else:
        raise AssertionError(f"the README runs {cmd!r}, which no test checks: add a check to "
                             "tests/test_readme.py or drop the command")


@pytest.mark.parametrize("cmd", INLINE)
@pytest.mark.slow
def test_every_command_the_prose_names_runs(cmd, request):
    """The same checks, for a command in a code span: `wirebench` subcommands and flags
    exist, a benchmark script exists and takes its flags, installs are CI's."""
    words = shlex.split(cmd.replace("<", "").replace(">", ""))
    if words[0] == "pip" or words[:3] == ["python", "-m", "pytest"]:
        _check_install(cmd)
    elif words[0] == "wirebench":
        _check_wirebench(shlex.join(words), REPO)
    elif words[0] == "snakemake":
        _check_snakemake(cmd, request.getfixturevalue("clone"))
    elif words[0] == "python" and words[1].startswith("benchmarks/"):
        assert (REPO / words[1]).is_file(), f"{cmd}: no such script"
        usage = _help(["python", words[1]], REPO)
        for flag in (w.split("=")[0] for w in words if w.startswith("--")):
            assert flag in usage, f"{cmd}: {words[1]} takes no {flag}"
    else:
        raise AssertionError(f"the README names {cmd!r}, which no test checks")


def test_the_readme_shows_commands():
    """Guard the extractor itself: it finds the journeys' commands."""
    assert "snakemake --cores 2 --config models_file=my_models.yaml" in COMMANDS
    assert any(c.startswith("wirebench compare") for c in COMMANDS)
    assert any(c.startswith("wirebench tasks generate") for c in COMMANDS)
    assert "my_models.yaml" in named_files(README.read_text())
    assert any(c.startswith("wirebench compare archive/") for c in INLINE)
