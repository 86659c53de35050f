"""Mutation score of wirebench's modules, each against the focused tests that guard it.

mutmut makes one-token changes to a module's functions and runs, against each, the tests
that reach that function. A mutant the tests miss is a bug nobody would notice. This
script runs mutmut in a scratch copy of the checkout (so `mutants/` never lands in it),
prints the score per module, and lists every surviving mutant as a diff, marking the
ones that are equivalent code (benchmarks/mutation_equivalent.yaml says why no test can
tell each from the original).

Configurations (--config), one per area of the product:
  scoring    pyproject.toml's [tool.mutmut]: scoring, criteria, equivalence, the op-list
             guard, stats and the gate, against their unit tests (about a minute).
  isolation  the sandbox, Landlock and the confined steps, against tests that attack
             them for real (bubblewrap, Landlock, forked children).
  evidence   fingerprints, batches and the archive.
  verify     design rules, part models, test benches and the simulate step (real ngspice).
  tools      the tool loop, the toolbox and the MCP server (real akcli, a scripted server).
  reports    the summary and the HTML report.
  taskgen    the task generators.
Each module of an area lists its own focused tests (AREAS below): a mutant runs those,
never the whole suite. `--module` picks modules of the area (default all of them).

Three kinds of code mutmut cannot reach on its own are handled here:
- code that runs only in a forked child (the confined steps): mutmut maps no test to it
  ("no tests"). This script runs the module's focused tests against each such mutant
  itself, with the mutant pinned in the process so that a child whose environment is
  built from nothing keeps it;
- a function under functools.cache: mutmut mutates no decorated function, and a cache
  filled before mutmut forks would hide the mutant anyway. In the scratch copy the cache
  is taken off (the function's result is the same, only recomputed);
- module-level tables (a fingerprint's file list, the sandbox's system folders): mutmut
  mutates only functions. For the tables an area names, each element dropped (and each
  number or string changed) is a mutant of its own, run against the module's tests in a
  copy of the package.

    pip install -e '.[audit]'
    python benchmarks/mutation_score.py                      # scoring, about a minute
    nice -n 10 python benchmarks/mutation_score.py --config isolation --module runtime/landlock.py
    python benchmarks/mutation_score.py --config verify --sample 150   # a seeded sample
    python benchmarks/mutation_score.py --min 85   # exit 1 when a module scores below

With --sample N, a module with more than N mutants of its functions is scored on a seeded
sample of N of them (--seed) and all its table mutants; the table says so ("sampled of
all"). Score = detected / (mutants - equivalent), where
detected means the focused tests did not pass (a failure, an error, a crash or a
timeout).
"""

from __future__ import annotations

import argparse
import ast
import json
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parents[1]
EQUIVALENT_FILE = REPO / "benchmarks" / "mutation_equivalent.yaml"
# mutmut's statuses that mean the tests passed, or never ran.
UNDETECTED = {"survived", "no tests", "not checked", "skipped"}
# -n 0: each mutant's run is one process (mutmut forks it), not a pool of workers.
PYTEST_ARGS = ["-p", "no:randomly", "-p", "no:cacheprovider", "-q", "-m", "not slow", "-n", "0"]

B, S, T = "tests/test_behaviour.py", "tests/test_sandbox.py", "tests/test_mut_"
# area -> modules (under src/wirebench) -> the tests that guard each, fastest first; and
# the module-level tables whose elements are mutants too.
AREAS: dict[str, dict] = {
    "isolation": {
        "modules": {
            "runtime/sandbox.py": [
                f"{T}sandbox.py", f"{B}::test_network_false_means_no_connection_even_to_loopback",
                f"{B}::test_max_output_bytes_is_the_entrys_own_cap_on_stdout_files_and_the_answer",
                f"{B}::test_env_passes_exactly_the_named_variables",
                f"{B}::test_expose_shows_the_named_folder_read_only_and_nothing_beside_it",
                f"{S}::test_a_command_agent_cannot_reach_the_answer_key",
                f"{S}::test_a_command_agent_sees_no_secret_but_its_own",
                f"{S}::test_everything_an_agent_started_dies_with_it",
                f"{S}::test_the_output_cap_is_a_total_over_the_agents_files",
                f"{S}::test_an_agent_cannot_write_outside_its_sandbox",
                f"{S}::test_a_command_agent_has_no_capabilities_and_is_never_root",
                f"{S}::test_a_command_agent_sees_an_allow_list_not_the_host_minus_a_list",
                f"{S}::test_every_place_an_agent_can_write_counts_against_its_cap",
                f"{S}::test_no_sandbox_means_a_clear_refusal_unless_the_user_opts_out"],
            "runtime/landlock.py": [
                f"{T}landlock.py", f"{B}::test_landlock_alone_denies_a_signal_out_of_its_domain",
                f"{S}::test_a_confined_step_reaches_its_folder_and_nothing_of_ours"],
            "runtime/confine.py": [
                f"{T}confine.py",
                f"{T}landlock.py::test_a_kernel_without_landlock_is_refused_by_name",
                f"{B}::test_a_confined_step_cannot_signal_a_process_outside_it",
                f"{B}::test_the_step_server_of_a_tool_loop_cannot_signal_outside_it_either",
                f"{S}::test_a_confined_step_reaches_its_folder_and_nothing_of_ours",
                f"{S}::test_a_confined_step_reads_an_allow_list_wherever_a_copy_of_the_corpus_lies",
                f"{S}::test_a_childs_private_folder_is_on_tmpfs_or_in_its_pair_and_gone_after",
                f"{S}::test_the_step_server_confines_every_step_it_serves",
                f"{S}::test_an_oplist_field_cannot_reach_past_the_pair_even_around_the_guard",
                f"{S}::test_a_step_past_its_time_limit_is_a_verdict_on_the_pair",
                f"{S}::test_no_sandbox_means_a_clear_refusal_unless_the_user_opts_out",
                f"{S}::test_a_relative_symbol_source_means_the_pairs_folder_wherever_the_run_"
                "starts"],
        },
        "tables": {"runtime/sandbox.py": ["SYSTEM", "AGENT_UID", "SLACK_BYTES"],
                   "runtime/landlock.py": ["_FILE_RIGHTS", "READ", "_FS_BITS"],
                   "runtime/confine.py": ["SYSTEM_READS", "SYSTEM_WRITES"]},
    },
    "evidence": {
        "modules": {
            "evidence/fingerprint.py": [
                f"{T}evidence.py::test_every_file_a_step_reads_is_in_its_fingerprint",
                "tests/test_causes.py::test_the_preflight_is_in_no_fingerprint"],
            "evidence/archive.py": [f"{T}evidence.py"],
            "steps/batch.py": [f"{T}batch.py", "tests/test_batches.py"],
        },
        "tables": {"evidence/fingerprint.py": ["STEP_CODE", "AKCLI_STEPS"]},
    },
    "verify": {
        "modules": {
            "verify/design_rules.py": [f"{T}verify.py", "tests/test_criteria.py"],
            "verify/part_models.py": [f"{T}simulate.py"],
            "corpus/testbench.py": [f"{T}simulate.py"],
            "steps/simulate.py": [f"{T}simulate.py",
                                  "tests/test_simulate.py::test_a_part_with_no_model_needs_a_"
                                  "person_and_never_passes"],
        },
    },
    "tools": {
        "modules": {
            "agents/tool_loop.py": [
                f"{T}tools.py", f"{B}::test_max_tokens_total_counts_prompt_and_completion_tokens",
                f"{B}::test_a_loop_within_its_token_budget_is_not_cut",
                f"{B}::test_max_tool_calls_counts_calls_not_replies_and_keeps_the_last_draft",
                f"{B}::test_the_loops_timeout_ends_it_between_requests_as_the_models_failure",
                f"{B}::test_a_slow_reply_past_the_loops_timeout_is_the_models_failure",
                f"{B}::test_an_inspect_task_offers_the_loop_only_the_inspect_tools"],
            # (tests/test_tools.py's MCP test starts its server with the client's default
            # environment: a mutant there never reaches it.)
            "steps/tools.py": [f"{T}tools.py",
                               f"{B}::test_an_inspect_task_offers_the_loop_only_the_inspect_tools",
                               f"{T}mcp.py"],
            "mcp_server.py": [f"{T}mcp.py",
                              f"{B}::test_the_mcp_server_lists_only_the_tasks_surface"],
        },
    },
    "reports": {
        "modules": {
            "reports/summary.py": [f"{T}reports.py", "tests/test_signals.py"],
            "reports/report_html.py": [f"{T}report_html.py"],
        },
    },
    "taskgen": {
        # The generated families (the real tier's, taskgen/real/, need kicad-demos and
        # akcli's draws: tests/test_real_tier.py).
        "modules": {f"taskgen/{m}.py": [f"{T}taskgen.py"] for m in (
            "generator", "rng", "spec", "layout", "blocks", "families/common",
            "families/netlist", "families/prose", "families/edit", "families/parametric",
            "families/repair", "families/safety")},
    },
}
# What the tests read besides the package: the corpus, the libraries, the skills, the
# workflow.
ALSO_COPY = ["tasks", "symbols", "skills", "README.md", "Snakefile", "workflow", "config",
             "envs", "profiles", "splits", "scripts", "docs"]
# Every Python process a test starts (a worker, a Snakemake job, an MCP server) pins the
# mutant it was started under, as the fork runner does: its confined children clear the
# environment, and must still run the mutant.
PIN_AT_START = """
import os

if os.environ.get("MUTANT_UNDER_TEST"):
    from mutmut.mutation.trampoline import set_mutant_under_test

    set_mutant_under_test(os.environ["MUTANT_UNDER_TEST"])
"""
# mutmut's own first step, alone: copy the tree into mutants/ and write the mutants.
GENERATE = """
import os
from mutmut.__main__ import (copy_also_copy_files, copy_src_dir, create_mutants,
                             setup_source_paths)
from mutmut.mutation.trampoline import set_mutant_under_test

set_mutant_under_test("mutant_generation")
os.makedirs("mutants", exist_ok=True)
copy_src_dir()
copy_also_copy_files()
setup_source_paths()
create_mutants(2)
"""
# Runs one module's focused tests against each of a list of mutants, in the mutants tree:
# it imports pytest and the tests once, then forks a child per mutant (as mutmut's own
# runner does) with the mutant pinned in the process, so that a confined child whose
# environment is built from nothing keeps it. Writes one JSON line per mutant.
FORK_RUNNER = r"""
import json, os, signal, sys, time

spec = json.load(open(sys.argv[1]))
log = open(spec["log"], "a")
os.dup2(log.fileno(), 1)
os.dup2(log.fileno(), 2)
os.environ["PY_IGNORE_IMPORTMISMATCH"] = "1"
import pytest
from mutmut.mutation.trampoline import set_mutant_under_test

pytest.main(["--collect-only", "-q", *spec["pytest_args"], *spec["tests"]])
out = open(spec["out"], "a")
for name in spec["mutants"]:
    started = time.monotonic()
    pid = os.fork()
    if pid == 0:
        os.setpgid(0, 0)  # a timeout kills what the tests started too
        set_mutant_under_test(name)
        os._exit(int(pytest.main(["-x", *spec["pytest_args"], *spec["tests"]])))
    while True:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            code = os.waitstatus_to_exitcode(status)
            break
        if time.monotonic() - started > spec["timeout"]:
            try:
                os.killpg(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            os.waitpid(pid, 0)
            code = None
            break
        time.sleep(0.02)
    out.write(json.dumps({"name": name, "code": code,
                          "seconds": round(time.monotonic() - started, 2)}) + "\n")
    out.flush()
"""


def module_name(path: str) -> str:
    return "wirebench." + path[:-3].replace("/", ".")


def tests_of(area: str, modules: list[str]) -> list[str]:
    seen: dict[str, None] = {}
    for module in modules:
        seen.update(dict.fromkeys(AREAS[area]["modules"][module]))
    return list(seen)


def configure(tree: Path, area: str, modules: list[str]) -> None:
    """Write the area's configuration into the scratch copy's pyproject.toml (never the
    repo's)."""
    path = tree / "pyproject.toml"
    head = path.read_text().split("[tool.mutmut]", 1)[0]
    settings = {
        "only_mutate": [f"src/wirebench/{m}" for m in modules],
        "pytest_add_cli_args_test_selection": tests_of(area, modules),
        "pytest_add_cli_args": PYTEST_ARGS,
        "also_copy": ALSO_COPY,
    }
    lines = ["[tool.mutmut]", 'source_paths = ["src/"]']
    lines += [f"{key} = {json.dumps(value)}" for key, value in settings.items()]
    path.write_text(head + "\n".join(lines) + "\n")


CACHE_DECORATORS = {"functools.cache", "cache", "functools.lru_cache", "lru_cache"}


def uncache(source: str) -> str:
    """The source with functools.cache taken off every function, each keeping a no-op
    cache_clear and a __wrapped__ (tests use both). Same results, recomputed each call."""
    tree = ast.parse(source)
    lines = source.splitlines(keepends=True)
    cut, after = set(), {}
    for node in tree.body:
        if not isinstance(node, ast.FunctionDef) or len(node.decorator_list) != 1:
            continue
        deco = node.decorator_list[0]
        target = deco.func if isinstance(deco, ast.Call) else deco
        if ast.unparse(target) in CACHE_DECORATORS:
            cut.update(range(deco.lineno - 1, deco.end_lineno))
            # __wrapped__ (the function under the cache, which tests reach for) is the
            # function itself, with its mutants.
            after[node.end_lineno - 1] = (f"{node.name}.cache_clear = lambda: None\n"
                                          f"{node.name}.__wrapped__ = {node.name}\n")
    out = []
    for i, line in enumerate(lines):
        if i not in cut:
            out.append(line)
        if i in after:
            out.append(after[i])
    return "".join(out)


def table_mutants(source: str, names: list[str]) -> list[tuple[str, str, str]]:
    """(what changed, the original text, the mutated module source) for each element
    dropped from a collection that a module-level statement naming one of `names` holds,
    each number in such a statement (+1) and each string it assigns directly (XX..XX)."""
    tree = ast.parse(source)
    starts = [0]
    for line in source.splitlines(keepends=True):
        starts.append(starts[-1] + len(line))

    def at(line: int, col: int) -> int:
        return starts[line - 1] + _col(source, starts, line, col)

    out = []
    for stmt in tree.body:
        if isinstance(stmt, (ast.FunctionDef, ast.ClassDef, ast.Import, ast.ImportFrom)):
            continue
        named = {n.id for n in ast.walk(stmt) if isinstance(n, ast.Name)}
        if not named & set(names):
            continue
        value = getattr(stmt, "value", None)
        changed = [(n, repr(n.value + 1)) for n in ast.walk(stmt) if isinstance(n, ast.Constant)
                   and isinstance(n.value, int) and not isinstance(n.value, bool)]
        if isinstance(stmt, ast.Assign | ast.AnnAssign) and isinstance(value, ast.Constant) \
                and isinstance(value.value, str):
            changed.append((value, repr(f"XX{value.value}XX")))
        for node, new in changed:
            a, b = at(node.lineno, node.col_offset), at(node.end_lineno, node.end_col_offset)
            line = source[starts[node.lineno - 1]:starts[node.lineno]].strip()
            out.append((f"{source[a:b]} -> {new} in {line[:80]}", source[a:b],
                        source[:a] + new + source[b:]))
        for node in ast.walk(stmt):
            if isinstance(node, ast.Dict):
                items = [(k, v) for k, v in zip(node.keys, node.values, strict=True)
                         if k is not None]
                spans = [(at(k.lineno, k.col_offset), at(v.end_lineno, v.end_col_offset))
                         for k, v in items]
            elif isinstance(node, ast.List | ast.Tuple | ast.Set) and isinstance(
                    getattr(node, "ctx", ast.Load()), ast.Load):
                spans = [(at(e.lineno, e.col_offset), at(e.end_lineno, e.end_col_offset))
                         for e in node.elts if not isinstance(e, ast.Starred)]
            else:
                continue
            for i, (a, b) in enumerate(spans):
                if i + 1 < len(spans):
                    cut = (a, spans[i + 1][0])
                elif i > 0:
                    cut = (spans[i - 1][1], b)
                else:
                    cut = (a, b)
                mutated = source[:cut[0]] + source[cut[1]:]
                try:
                    ast.parse(mutated)
                except SyntaxError:
                    continue
                text = " ".join(source[a:b].split())
                out.append((f"drop {text[:90]}", source[a:b], mutated))
    return out


def _col(source: str, starts: list[int], line: int, col: int) -> int:
    """ast's column is in UTF-8 bytes; the string offset is in characters."""
    text = source[starts[line - 1]:starts[line]] if line < len(starts) else ""
    return len(text.encode()[:col].decode(errors="ignore"))


def os_environ() -> dict:
    return dict(os.environ)


def run_tests(tests: list[str], cwd: Path, env: dict, log, timeout: float) -> str:
    """The tests once: killed when they fail, survived when they pass."""
    try:
        proc = subprocess.run([sys.executable, "-m", "pytest", "-x", *PYTEST_ARGS, *tests],
                              cwd=cwd, env=env, stdout=log, stderr=log, timeout=timeout)
    except subprocess.TimeoutExpired:
        return "timeout"
    return _status(proc.returncode)


def _status(code: int | None) -> str:
    return "timeout" if code is None else {0: "survived", 5: "no tests"}.get(code, "killed")


def clean_run(tests: list[str], cwd: Path, env: dict, log, what: str) -> float:
    """The tests against the unmutated code must pass, or every mutant would look killed."""
    started = time.monotonic()
    if run_tests(tests, cwd, env, log, 1800) != "survived":
        raise SystemExit(f"the focused tests of {what} fail without a mutant; see {log.name}")
    return time.monotonic() - started


def run_mutants(by_module: dict[str, list[str]], area: str, tree: Path, log) -> dict:
    """Each module's focused tests against each of its mutants: killed when they fail,
    survived when they pass, timeout past ten times the clean run (two minutes at least)."""
    runner = tree / "mutants" / "_runner"
    runner.mkdir(exist_ok=True)
    (runner / "fork_runner.py").write_text(FORK_RUNNER)
    (runner / "sitecustomize.py").write_text(PIN_AT_START)
    env = {**os_environ(), "PYTHONPATH": f"{runner}:{tree / 'mutants' / 'src'}"}
    out = {}
    for module, names in by_module.items():
        tests = AREAS[area]["modules"][module]
        clean = clean_run(tests, tree / "mutants", {**env, "MUTANT_UNDER_TEST": ""}, log,
                          module)
        results = runner / f"{module.replace('/', '.')}.jsonl"
        spec = {"mutants": names, "tests": tests, "pytest_args": PYTEST_ARGS,
                "timeout": max(120.0, 10 * clean), "log": log.name, "out": str(results)}
        (runner / "spec.json").write_text(json.dumps(spec))
        log.flush()
        proc = subprocess.Popen([sys.executable, str(runner / "fork_runner.py"),
                                 str(runner / "spec.json")], cwd=tree / "mutants", env=env)
        seen = 0
        while True:
            try:
                done = proc.wait(timeout=1) is not None
            except subprocess.TimeoutExpired:
                done = False
            except BaseException:  # interrupted: the runner and its mutant go too
                proc.kill()
                raise
            lines = results.read_text().splitlines() if results.exists() else []
            for line in lines[seen:]:
                row = json.loads(line)
                out[row["name"]] = _status(row["code"])
                seen += 1
                print(f"  [{seen}/{len(names)}] {row['name']}: {out[row['name']]} "
                      f"({row['seconds']} s)", file=sys.stderr, flush=True)
            if done:
                break
        if seen < len(names):
            raise SystemExit(f"the fork runner stopped after {seen} of {len(names)} mutants "
                             f"of {module}; see {log.name}")
    return out


def run_tables(area: str, modules: list[str], tree: Path,
               log) -> list[tuple[str, str, str, str, str]]:
    """The table mutants of the area's modules, all of them (a few dozen a module):
    (module, name, status, old, new)."""
    rows = []
    overlay = tree.parent / "tables"
    for module in modules:
        names = AREAS[area].get("tables", {}).get(module)
        if not names:
            continue
        path = tree / "src" / "wirebench" / module
        original = path.read_text()
        found = table_mutants(original, names)
        chosen = list(enumerate(found, 1))
        if not chosen:
            continue
        if overlay.exists():
            shutil.rmtree(overlay)
        shutil.copytree(tree / "src", overlay / "src")
        target = overlay / "src" / "wirebench" / module
        env = {**os_environ(), "PYTHONPATH": str(overlay / "src")}
        tests = AREAS[area]["modules"][module]
        clean = clean_run(tests, tree, env, log, f"{module} (tables)")
        for i, (n, (what, old, mutated)) in enumerate(chosen, 1):
            target.write_text(mutated)
            name = f"{module_name(module)}.table__{n}"
            # Named as a mutant, so that what tests keep between runs (a finished run)
            # is never made from it.
            status = run_tests(tests, tree, {**env, "MUTANT_UNDER_TEST": name}, log,
                               max(120.0, 10 * clean))
            rows.append((module_name(module), name, status, old, what))
            print(f"  [{i}/{len(chosen)}] {name} ({what}): {status}", file=sys.stderr,
                  flush=True)
        target.write_text(original)
    return rows


def mutmut(args: list[str], cwd: Path, log, env: dict | None = None) -> str:
    bin_dir = Path(sys.executable).parent
    proc = subprocess.run([str(bin_dir / "mutmut"), *args], cwd=cwd, text=True,
                          stdout=subprocess.PIPE, stderr=log, env=env)
    if proc.returncode != 0:
        raise SystemExit(f"mutmut {' '.join(args)} exited {proc.returncode}; see {log.name}")
    return proc.stdout


def copy_checkout(dest: Path) -> None:
    """Tracked and new (not ignored) files: the tree as it is, uncommitted edits too."""
    files = subprocess.run(["git", "ls-files", "-z", "--cached", "--others",
                            "--exclude-standard"], cwd=REPO, check=True,
                           capture_output=True).stdout.decode().split("\0")
    for name in filter(None, files):
        src = REPO / name
        if src.is_file():
            (dest / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, dest / name)


def mutant_names(tree: Path, modules: list[str]) -> dict[str, list[str]]:
    """Every mutant mutmut will make of each module, by its full name."""
    from mutmut.mutation.file_mutation import mutate_file_contents

    out = {}
    for module in modules:
        rel = Path("src/wirebench") / module
        made = mutate_file_contents(str(rel), (tree / rel).read_text(), None, None)
        out[module] = [f"{module_name(module)}.{n}" for n in made.mutant_names]
    return out


def mutated_lines(name: str, cwd: Path, log) -> tuple[str, str]:
    """The original and the mutated line of one mutant, from `mutmut show`."""
    diff = mutmut(["show", name], cwd, log).splitlines()
    old = [line[1:].strip() for line in diff if line.startswith("-") and
           not line.startswith("---")]
    new = [line[1:].strip() for line in diff if line.startswith("+") and
           not line.startswith("+++")]
    return " / ".join(old), " / ".join(new)


def load_equivalent() -> list[dict]:
    """The committed list: each entry names a module and either `mutant`, the mutated line
    as `mutmut show` prints it (a table mutant's label), or `line`, an original line every
    mutant of which it covers; and `why` no test can kill it. `kind: unreachable` marks
    code this machine never runs (another kernel's branch), as opposed to equivalent code.
    Matched on text, not on mutmut's numbering, which shifts as code changes."""
    entries = yaml.safe_load(EQUIVALENT_FILE.read_text()) or []
    for e in entries:
        e["why"] = " ".join(e["why"].split())
        if e.get("kind", "equivalent") not in ("equivalent", "unreachable"):
            raise SystemExit(f"{EQUIVALENT_FILE.name}: unknown kind {e['kind']!r}")
    return entries


def excuse(entries: list[dict], module: str, old: str, new: str) -> str | None:
    """Why this surviving mutant is no missed bug, or None."""
    for e in entries:
        if e["module"] != module:
            continue
        if ("mutant" in e and e["mutant"].strip() == new.strip()) or (
                "line" in e and e["line"].strip() == old.strip()):
            return f"{e.get('kind', 'equivalent').upper()}: {e['why']}"
    return None


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--min", type=float, default=90.0,
                        help="the score (%%) every module must reach (default 90)")
    parser.add_argument("--config", choices=["scoring", *AREAS], default="scoring",
                        help="which area (default scoring)")
    parser.add_argument("--module", action="append", default=[],
                        help="a module of the area, as runtime/sandbox.py (repeatable; "
                             "default all of them)")
    parser.add_argument("--sample", type=int, default=0,
                        help="score a module with more mutants than this on a seeded "
                             "sample of this many (default: all of them)")
    parser.add_argument("--seed", type=int, default=35)
    parser.add_argument("--jobs", type=int, default=2,
                        help="mutants mutmut runs at once (--config scoring)")
    args = parser.parse_args()
    area = None if args.config == "scoring" else args.config
    modules = (args.module or list(AREAS[area]["modules"])) if area else []
    if area:
        unknown = [m for m in modules if m not in AREAS[area]["modules"]]
        if unknown:
            raise SystemExit(f"not a module of {area}: {', '.join(unknown)} (it has "
                             f"{', '.join(AREAS[area]['modules'])})")
    equivalent = load_equivalent()
    work = Path(tempfile.mkdtemp(prefix="wirebench-mutation-"))
    tree = work / "tree"
    log_path = work / "mutmut.log"
    sampled: dict[str, tuple[int, int]] = {}
    try:
        copy_checkout(tree)
        chosen: list[str] = []
        if area:
            configure(tree, area, modules)
            for m in modules:
                path = tree / "src" / "wirebench" / m
                path.write_text(uncache(path.read_text()))
            for module, names in mutant_names(tree, modules).items():
                if 0 < args.sample < len(names):
                    pick = sorted(random.Random(args.seed).sample(names, args.sample))
                    sampled[module_name(module)] = (len(pick), len(names))
                    chosen += pick
                else:
                    chosen += names
        with open(log_path, "w") as log:
            started = time.monotonic()
            # Subprocesses a test starts (Snakemake's jobs, `wirebench step`) import the
            # mutants too.
            env = {**os_environ(), "PYTHONPATH": str(tree / "mutants" / "src")}
            # It must exist when mutmut starts: Python skips for good a path entry that
            # was missing at its first import.
            (tree / "mutants" / "src").mkdir(parents=True, exist_ok=True)
            rows: list[tuple[str, str]] = []
            if not area:
                # mutmut draws a progress spinner on stdout: keep it in the log, not here
                subprocess.run([str(Path(sys.executable).parent / "mutmut"), "run",
                                "--max-children", str(args.jobs)],
                               cwd=tree, stdout=log, stderr=log, check=True, env=env)
                rows = [line.rsplit(": ", 1) for line in
                        mutmut(["results", "--all", "true"], tree, log).splitlines()
                        if ": " in line]
                rows = [(name.strip(), status.strip()) for name, status in rows]
            else:
                # mutmut makes the mutants; this script runs them. mutmut's own map from
                # tests to functions sees only calls in the test's process, so a function
                # that runs in a forked child too (or a sandbox's subprocess) would meet
                # only the tests that happen to call it in-process: every mutant meets all
                # of its module's focused tests instead.
                subprocess.run([sys.executable, "-c", GENERATE], cwd=tree, stdout=log,
                               stderr=log, check=True, env=env)
                files = {module_name(m): m for m in modules}
                by_file: dict[str, list[str]] = defaultdict(list)
                for name in chosen:
                    by_file[files[_module_of(name)]].append(name)
                found = run_mutants(dict(by_file), area, tree, log)
                rows = [(n, found[n]) for n in chosen]
            tables = run_tables(area, modules, tree, log) if area else []
            wall = time.monotonic() - started
            by_module: dict[str, list[tuple[str, str]]] = defaultdict(list)
            for name, status in rows:
                by_module[_module_of(name)].append((name, status))
            lines_of = {}
            for module, name, status, old, new in tables:
                by_module[module].append((name, status))
                lines_of[name] = (old, new)
            worst, survivors = 100.0, []
            total = sum(map(len, by_module.values()))
            print(f"mutmut over {total} mutants in {wall:.0f} s (config {args.config}"
                  f"{f', sample {args.sample} seed {args.seed}' if sampled else ''})\n")
            print(f"{'module':40} {'mutants':>9} {'detected':>8} {'equiv.':>6} {'score':>7}")
            for module, mutants in sorted(by_module.items()):
                detected = sum(status not in UNDETECTED for _, status in mutants)
                n_equivalent = 0
                for name, status in mutants:
                    if status not in UNDETECTED:
                        continue
                    old, new = lines_of.get(name) or mutated_lines(name, tree, log)
                    why = excuse(equivalent, module, old, new)
                    n_equivalent += why is not None
                    survivors.append((name, status, old, new, why))
                score = 100.0 * detected / max(1, len(mutants) - n_equivalent)
                worst = min(worst, score)
                count = (f"{len(mutants)}" if module not in sampled else
                         f"{len(mutants)}/{sampled[module][1] + _tables(tables, module)}")
                print(f"{module:40} {count:>9} {detected:8} {n_equivalent:6} {score:6.1f}%")
            print(f"\nsurviving mutants ({len(survivors)}):")
            for name, status, old, new, why in survivors:
                print(f"  {name} [{status}]{' ' + why if why else ''}\n"
                      f"    - {old}\n    + {new}")
    except subprocess.CalledProcessError:
        print(log_path.read_text()[-3000:], file=sys.stderr)
        raise SystemExit(f"mutmut run failed; its log is in {log_path}") from None
    shutil.rmtree(work)
    print(f"\nlowest module score {worst:.1f}% (wanted at least {args.min:.0f}%)")
    return 0 if worst >= args.min else 1


def _module_of(name: str) -> str:
    # A function's mutant is module.x_name__mutmut_N; a method's is
    # module.xǁClassǁname__mutmut_N; a table's, module.table__N.
    return re.sub(r"\.(x(_|ǁ).*__mutmut_\d+|table__\d+)$", "", name)


def _tables(tables: list, module: str) -> int:
    return sum(row[0] == module for row in tables)


if __name__ == "__main__":
    sys.exit(main())
