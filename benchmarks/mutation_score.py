"""Mutation score of the modules whose bugs would silently change every score, or
silently open the sandbox.

mutmut makes one-token changes to a configuration's modules and runs their focused tests
against each. A mutant the tests miss is a bug nobody would notice. This script runs
mutmut in a scratch copy of the checkout (so `mutants/` never lands in it), prints the
score per module, and lists every surviving mutant as a diff, marking the ones below
that are equivalent code (no test can tell them apart from the original).

Configurations (--config):
  scoring    pyproject.toml's [tool.mutmut]: scoring, criteria, equivalence, the op-list
             guard, stats and the gate, against their unit tests (about a minute).
  isolation  runtime/sandbox.py, runtime/confine.py, runtime/isolation.py and
             verify/oplist_guard.py, against the tests that try the sandbox for real
             (test_sandbox, test_behaviour's sandbox and signal tests, test_oplist_guard).

Much of confine.py and isolation.py runs only in a forked, confined child, where mutmut's
map from tests to functions is not recorded: mutmut reports those mutants "no tests".
This script then runs the configuration's tests against each such mutant itself (all of
them, or a seeded sample of --sample), with the mutant pinned in the process so that the
child's environment built from nothing keeps it, and counts what they catch.

    pip install -e '.[audit]'
    python benchmarks/mutation_score.py                      # scoring, about a minute
    python benchmarks/mutation_score.py --config isolation   # the sandbox (long)
    python benchmarks/mutation_score.py --min 90   # exit 1 when a module scores below

Score = detected / (mutants - equivalent), where detected = killed or timed out.
"""

from __future__ import annotations

import argparse
import re
import shutil
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
DETECTED = {"killed", "timeout"}

# Equivalent mutants: (module, the mutated line as mutmut writes it) -> why no test can
# kill it. Matched on text, not on mutmut's numbering, which shifts as code changes.
_NET_ID = "a net node's id is only an identity: it is never compared or shown"
_NET_KIND = ("a net node's kind only has to differ from every part kind, and part_type "
             "gives upper-case letters")
_ALNUM = "'-' or '_' replaced by letters instead of nothing is alphanumeric all the same"
EQUIVALENT: dict[tuple[str, str], str] = {
    ("wirebench.verify.equivalence", 'net = ("XXnetXX", i)'): _NET_ID,
    ("wirebench.verify.equivalence", 'net = ("NET", i)'): _NET_ID,
    ("wirebench.verify.equivalence", "g.add_node(net, kind=None)"): _NET_KIND,
    ("wirebench.verify.equivalence", 'g.add_node(net, kind="XXnetXX")'): _NET_KIND,
    ("wirebench.verify.oplist_guard",
     'if not (isinstance(value, str) and value.replace("-", "XXXX").replace('): _ALNUM,
    ("wirebench.verify.oplist_guard",
     '"_", "XXXX").isalnum() and value.isascii()):'): _ALNUM,
}


# The second configuration: the isolation modules and the tests that attack them for real.
ISOLATION_MODULES = ["src/wirebench/runtime/sandbox.py", "src/wirebench/runtime/confine.py",
                     "src/wirebench/runtime/isolation.py", "src/wirebench/verify/oplist_guard.py"]
ISOLATION_TESTS = ["tests/test_sandbox.py", "tests/test_behaviour.py",
                   "tests/test_oplist_guard.py"]
# Of those files, the tests that reach the isolation modules (the tool loop's and the
# board's tests in test_behaviour reach them too, at far more cost a mutant).
ISOLATION_SELECT = ["-k", "not budget and not token and not tool_calls and not timeout and "
                    "not inspect and not mcp and not upper_bound and not slow_reply"]
CONFIGS = {
    "scoring": None,  # pyproject.toml's own [tool.mutmut]
    "isolation": {
        "only_mutate": ISOLATION_MODULES,
        "pytest_add_cli_args_test_selection": ISOLATION_TESTS,
        "pytest_add_cli_args": ["-p", "no:randomly", "-p", "no:cacheprovider", "-q",
                                "-m", "not slow", *ISOLATION_SELECT],
        # What the tests read besides the package: the corpus, the libraries, the skills.
        "also_copy": ["tasks", "symbols", "skills", "README.md"],
    },
}
# A pytest plugin that pins the mutant in the process (mutmut's own runner does the same):
# a confined child clears its environment, and must still run the mutant.
PIN_PLUGIN = """
import os
from mutmut.mutation.trampoline import set_mutant_under_test

def pytest_configure(config):
    set_mutant_under_test(os.environ.get("MUTANT_UNDER_TEST") or None)
"""


def configure(tree: Path, config: str) -> None:
    """Write the configuration into the scratch copy's pyproject.toml (never the repo's)."""
    settings = CONFIGS[config]
    if settings is None:
        return
    import json

    path = tree / "pyproject.toml"
    text = path.read_text()
    head = text.split("[tool.mutmut]", 1)[0]
    lines = ["[tool.mutmut]", 'source_paths = ["src/"]']
    lines += [f"{key} = {json.dumps(value)}" for key, value in settings.items()]
    path.write_text(head + "\n".join(lines) + "\n")


def run_uncovered(names: list[str], tree: Path, config: str, log) -> dict[str, str]:
    """The configuration's tests against each mutant mutmut found no test for: killed
    when they fail, survived when they pass, timeout past 15 minutes."""
    settings = CONFIGS[config]
    plugin = tree / "mutants" / "_pin"
    plugin.mkdir(exist_ok=True)
    (plugin / "wirebench_pin_mutant.py").write_text(PIN_PLUGIN)
    env = {**os_environ(), "PYTHONPATH": f"{plugin}:{tree / 'mutants' / 'src'}"}
    out = {}
    for i, name in enumerate(names, 1):
        try:
            proc = subprocess.run(
                [sys.executable, "-m", "pytest", "-x", "-p", "wirebench_pin_mutant",
                 *settings["pytest_add_cli_args"], *settings["pytest_add_cli_args_test_selection"]],
                cwd=tree / "mutants", env={**env, "MUTANT_UNDER_TEST": name},
                stdout=log, stderr=log, timeout=900)
            out[name] = "survived" if proc.returncode == 0 else "killed"
        except subprocess.TimeoutExpired:
            out[name] = "timeout"
        print(f"  [{i}/{len(names)}] {name}: {out[name]}", file=sys.stderr, flush=True)
    return out


def os_environ() -> dict:
    import os

    return dict(os.environ)


def mutmut(args: list[str], cwd: Path, log) -> str:
    bin_dir = Path(sys.executable).parent
    proc = subprocess.run([str(bin_dir / "mutmut"), *args], cwd=cwd, text=True,
                          stdout=subprocess.PIPE, stderr=log)
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


def mutated_lines(name: str, cwd: Path, log) -> tuple[str, str]:
    """The original and the mutated line of one mutant, from `mutmut show`."""
    diff = mutmut(["show", name], cwd, log).splitlines()
    old = [line[1:].strip() for line in diff if line.startswith("-") and
           not line.startswith("---")]
    new = [line[1:].strip() for line in diff if line.startswith("+") and
           not line.startswith("+++")]
    return " / ".join(old), " / ".join(new)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--min", type=float, default=90.0,
                        help="the score (%%) every module must reach (default 90)")
    parser.add_argument("--config", choices=sorted(CONFIGS), default="scoring",
                        help="which modules and tests (default scoring)")
    parser.add_argument("--sample", type=int, default=0,
                        help="run the tests against a seeded sample of this many of the "
                             "mutants mutmut found no test for (default: all of them)")
    parser.add_argument("--seed", type=int, default=35)
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="wirebench-mutation-"))
    log_path = work / "mutmut.log"
    try:
        copy_checkout(work / "tree")
        configure(work / "tree", args.config)
        with open(log_path, "w") as log:
            started = time.monotonic()
            # mutmut draws a progress spinner on stdout: keep it in the log, not here
            subprocess.run([str(Path(sys.executable).parent / "mutmut"), "run"],
                           cwd=work / "tree", stdout=log, stderr=log, check=True)
            wall = time.monotonic() - started
            rows = [line.rsplit(": ", 1) for line in
                    mutmut(["results", "--all", "true"], work / "tree", log).splitlines()
                    if ": " in line]
            rows = [(name.strip(), status.strip()) for name, status in rows]
            uncovered = [name for name, status in rows if status == "no tests"]
            if uncovered and CONFIGS[args.config] is not None:
                import random

                chosen = (sorted(random.Random(args.seed).sample(uncovered, args.sample))
                          if 0 < args.sample < len(uncovered) else uncovered)
                print(f"{len(uncovered)} mutants with no test mapped (they run in a forked "
                      f"child); running the tests against {len(chosen)} of them",
                      file=sys.stderr)
                found = run_uncovered(chosen, work / "tree", args.config, log)
                rows = [(n, found.get(n, s)) for n, s in rows
                        if s != "no tests" or n in found]
            by_module: dict[str, list[tuple[str, str]]] = defaultdict(list)
            for name, status in rows:
                # A function's mutant is module.x_name__mutmut_N; a method's is
                # module.xǁClassǁname__mutmut_N.
                module = re.sub(r"\.x(_|ǁ).*__mutmut_\d+$", "", name)
                by_module[module].append((name, status))
            worst, survivors = 100.0, []
            print(f"mutmut over {sum(map(len, by_module.values()))} mutants in {wall:.0f} s\n")
            print(f"{'module':36} {'mutants':>7} {'detected':>8} {'equiv.':>6} {'score':>7}")
            for module, mutants in sorted(by_module.items()):
                detected = sum(status in DETECTED for _, status in mutants)
                equivalent = 0
                for name, status in mutants:
                    if status in DETECTED:
                        continue
                    old, new = mutated_lines(name, work / "tree", log)
                    why = EQUIVALENT.get((module, new))
                    equivalent += why is not None
                    survivors.append((name, status, old, new, why))
                score = 100.0 * detected / max(1, len(mutants) - equivalent)
                worst = min(worst, score)
                print(f"{module:36} {len(mutants):7} {detected:8} {equivalent:6} "
                      f"{score:6.1f}%")
            print(f"\nsurviving mutants ({len(survivors)}):")
            for name, status, old, new, why in survivors:
                print(f"  {name} [{status}]{' EQUIVALENT: ' + why if why else ''}\n"
                      f"    - {old}\n    + {new}")
    except subprocess.CalledProcessError:
        print(log_path.read_text()[-3000:], file=sys.stderr)
        raise SystemExit(f"mutmut run failed; its log is in {log_path}") from None
    shutil.rmtree(work)
    print(f"\nlowest module score {worst:.1f}% (wanted at least {args.min:.0f}%)")
    return 0 if worst >= args.min else 1


if __name__ == "__main__":
    sys.exit(main())
