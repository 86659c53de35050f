"""Mutation score of the modules whose bugs would silently change every score.

mutmut (configured in pyproject.toml's [tool.mutmut]) makes hundreds of one-token changes
to scoring, criteria, equivalence, the op-list guard, stats and the gate, and runs their
unit tests against each. A mutant the tests miss is a bug nobody would notice. This
script runs mutmut in a scratch copy of the checkout (so `mutants/` never lands in it),
prints the score per module, and lists every surviving mutant as a diff, marking the
ones below that are equivalent code (no test can tell them apart from the original).

    pip install -e '.[audit]'
    python benchmarks/mutation_score.py            # about a minute on 2 cores
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
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="wirebench-mutation-"))
    log_path = work / "mutmut.log"
    try:
        copy_checkout(work / "tree")
        with open(log_path, "w") as log:
            started = time.monotonic()
            # mutmut draws a progress spinner on stdout: keep it in the log, not here
            subprocess.run([str(Path(sys.executable).parent / "mutmut"), "run"],
                           cwd=work / "tree", stdout=log, stderr=log, check=True)
            wall = time.monotonic() - started
            rows = [line.rsplit(": ", 1) for line in
                    mutmut(["results", "--all", "true"], work / "tree", log).splitlines()
                    if ": " in line]
            by_module: dict[str, list[tuple[str, str]]] = defaultdict(list)
            for name, status in rows:
                module = re.sub(r"\.x_\w+?__mutmut_\d+$", "", name.strip())
                by_module[module].append((name.strip(), status.strip()))
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
