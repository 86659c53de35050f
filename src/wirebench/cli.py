"""The `wirebench` command. Snakemake rules call its `step` commands; people call the rest.

Imports are lazy on purpose: every Snakemake job is a fresh interpreter, and a step that
imported pandas would pay 1.1 s for nothing.

Exit codes:
  0  success (for `score`: the pair passed; for `tasks check`: the corpus is sound)
  1  a result that is a failure: the pair did not pass, or the corpus check found problems
  2  bad usage or bad input (unknown flag, missing file, bad config or task)
  70 an internal error in wirebench itself
"""

from __future__ import annotations

import sys

EXIT_FAIL, EXIT_USAGE, EXIT_INTERNAL = 1, 2, 70

def _cmd_step(argv: list[str]) -> int:
    from wirebench.runtime.worker_client import call, may_serve

    if may_serve(argv):
        reply = call(argv)
        if reply is not None:
            sys.stdout.write(reply["stdout"])
            sys.stderr.write(reply["stderr"])
            return reply["rc"]
    from wirebench.steps.dispatch import run_step

    return run_step(argv)


def _libraries(args) -> tuple[list[str], str | None]:
    """The run's symbol libraries (`--symbols`, else the config's) and the config's KiCad
    folder, which board tasks read their own libraries from."""
    from pathlib import Path

    from wirebench.config import load_config

    if args.symbols and not args.config.is_file():  # all given: no config needed
        symbols, kicad = args.symbols, None
    else:
        config = load_config(args.config)
        symbols, kicad = args.symbols or config["symbols"], config.get("kicad_symbols")
    for path in symbols:  # named here, before a step fails on it deep inside a draw
        if not Path(path).is_file():
            raise ValueError(f"symbol library not found: {path} (a config's paths are "
                             "relative to where wirebench runs; give --symbols to override)")
    return symbols, kicad


def _cmd_score(args) -> int:
    import json
    import tempfile
    from pathlib import Path

    from wirebench.corpus.tasks import RULE_TIERS, load_task
    from wirebench.steps.pair import evaluate_pair

    task = load_task(args.task)
    if not Path(args.ops).is_file():
        raise ValueError(f"{args.ops}: --ops must be an op-list file")
    symbols, kicad = _libraries(args)
    with tempfile.TemporaryDirectory(prefix="wirebench-score-") as td:
        result = evaluate_pair(args.ops, task.path, symbols, Path(td),
                               {"model": "cli", "task": task.id, "sample": 1}, kicad=kicad)
    for key in ("inputs", "versions"):
        result.pop(key, None)
    if args.json:
        print(json.dumps(result, indent=2, sort_keys=True))
    else:
        mark = "PASS" if result["passed"] else "FAIL"
        rules = [c for c in result["criteria"] if c["verdict"] != "needs_human"]
        judged = (f"sim={result['sim_status']}" if result["sim_status"] else
                  f"rules={sum(c['verdict'] == 'pass' for c in rules)}/{len(rules)}"
                  if result["tier"] in RULE_TIERS else
                  f"matched={result['matched']}/{result['expected']}")
        print(f"{mark}  {task.id}  score={result['score']}  {judged}")
        for line in result["errors"]:
            print(f"      {line}")
    return 0 if result["passed"] else EXIT_FAIL


def _cmd_tasks_generate(args) -> int:
    from wirebench.taskgen.generator import generate, seed_hash

    if args.family == "real":  # inside the installed kicad-demos (taskgen/real)
        from wirebench.taskgen import real

        made = real.generate(args.seed, args.demos, args.out, count=args.count,
                             split=args.split)
        print(f"wrote {len(made)} real task(s) from {args.demos} to {args.out} "
              f"(seed sha256 {seed_hash(args.seed)[:12]}...); they derive from GPL "
              "designs: never commit them")
        return 0
    if args.count is None:
        raise SystemExit("wirebench tasks generate: --count is required")
    made = generate(args.family, args.seed, args.count, args.out, start=args.start,
                    split=args.split)
    print(f"wrote {len(made)} {args.family} task(s) to {args.out} "
          f"(seed sha256 {seed_hash(args.seed)[:12]}...)")
    return 0


def _cmd_tasks_split(args) -> int:
    """Regenerate a split from its manifest; --check compares with what is on disk."""
    import filecmp
    import tempfile
    from pathlib import Path

    from wirebench.taskgen.generator import generate_split

    if not args.check:
        made = generate_split(args.manifest)
        print(f"wrote {len(made)} task(s) to {args.manifest.parent}")
        return 0
    with tempfile.TemporaryDirectory(prefix="wirebench-split-") as td:
        made = generate_split(args.manifest, Path(td))
        differ = []
        for fresh in made:
            held = args.manifest.parent / fresh.name
            cmp = filecmp.dircmp(fresh, held) if held.is_dir() else None
            if cmp is None or _differs(cmp):
                differ.append(fresh.name)
        known = {m.name for m in made}
        extra = sorted(d.name for d in args.manifest.parent.iterdir()
                       if d.is_dir() and (d / "task.md").is_file() and d.name not in known)
    for name in differ:
        print(f"DIFFERS  {name}")
    for name in extra:
        print(f"EXTRA    {name} (not in the manifest)")
    print(f"{len(made) - len(differ)}/{len(made)} generated tasks byte-identical")
    return EXIT_FAIL if differ or extra else 0


def _differs(cmp) -> bool:
    import filecmp

    files = cmp.common_files
    _, mismatch, errors = filecmp.cmpfiles(cmp.left, cmp.right, files, shallow=False)
    return bool(cmp.left_only or cmp.right_only or mismatch or errors
                or any(_differs(sub) for sub in cmp.subdirs.values()))


def _cmd_tasks_pack(args) -> int:
    """The prompt pack a pair of this task gets, as the workflow's prompt_pack rule
    builds it: the skills, akcli's references, the pin tables of every symbol the task
    names from the libraries it draws with (a board's KiCad ones, a real task's own), the
    notes or datasheets, the task and any base sheet."""
    import sys

    from wirebench.corpus.libraries import symbols_for
    from wirebench.corpus.tasks import load_task
    from wirebench.steps import prompt_pack

    symbols, kicad = _libraries(args)
    libraries = symbols_for(load_task(args.task), symbols, kicad)
    if args.out:
        prompt_pack.write(args.task, args.skills, libraries, args.out)
    else:
        sys.stdout.write(prompt_pack.build(args.task, args.skills, libraries))
    return 0


def _cmd_tasks_check(args) -> int:
    import json

    from wirebench.steps.tasks_check import check_corpus

    symbols, kicad = _libraries(args)
    report = check_corpus(args.dir, symbols, kicad)
    if args.json:
        print(json.dumps(report, indent=2, sort_keys=True))
    else:
        for task in report["tasks"]:
            mark = "ok  " if not task["problems"] else "FAIL"
            print(f"{mark}  {task['id']}")
            for line in task["problems"]:
                print(f"      {line}")
        for line in report["problems"]:
            print(f"FAIL  {line}")
        cover = report["op_coverage"]
        print(f"\n{report['ok']}/{len(report['tasks'])} tasks sound; the references use "
              f"{len(cover['used'])} of akcli's {cover['offered']} ops"
              + (f" (not: {', '.join(cover['missing'][:8])}"
                 + (f" and {len(cover['missing']) - 8} more" if len(cover["missing"]) > 8
                    else "") + ")" if cover["missing"] else ""))
    return 0 if report["sound"] else EXIT_FAIL


def _cmd_summary(args) -> int:
    import json

    from wirebench.reports.summary import write_summary

    experiment = ((args.experiment_models.split(","), args.experiment_tasks.split(","))
                  if args.experiment_models and args.experiment_tasks else None)
    write_summary(args.runs, args.models.split(","), args.tasks.split(","), args.samples,
                  args.csv, args.scorecard, {"corpus_sha256": args.corpus_sha256,
                                             "config_sha256": args.config_sha256},
                  experiment, json.loads(args.skills) if args.skills else None)
    return 0


def _cmd_manifest(args) -> int:
    from wirebench.evidence.manifest import write

    write(args.results, args.out)
    return 0


def _cmd_verify(args) -> int:
    from wirebench.evidence.manifest import verify

    problems = verify(args.results)
    for line in problems:
        print(line)
    print("verified: every artifact matches the manifest" if not problems
          else f"{len(problems)} artifact(s) do not match the manifest")
    return EXIT_FAIL if problems else 0


def _cmd_replay(args) -> int:
    import json
    import tempfile
    from pathlib import Path

    from wirebench.config import load_config
    from wirebench.evidence.archive import unpack
    from wirebench.steps.replay import replay

    config = load_config(args.config)
    with tempfile.TemporaryDirectory(prefix="wirebench-unpack-") as td:
        results = args.results
        if results.is_file():  # an archived run: archive/<run-id>.tar.gz
            results = unpack(results, Path(td))
        # The config's tasks folder, and the real tier's cache when it asks for one.
        dirs = [Path(args.tasks_dir or config["tasks_dir"])]
        if config.get("real_tier"):
            from wirebench.taskgen.real.tier import folder

            dirs.append(folder(config))
        report = replay(results, dirs,
                        args.symbols or config["symbols"], config.get("kicad_symbols"))
    if args.json:
        print(json.dumps(report, indent=2, sort_keys=True))
    else:
        for pair in report["pairs"]:
            if not pair["same"]:
                print(f"DIFFERS  {pair['pair']}: steps {pair['differs']}, outcome "
                      f"{pair['outcome']} -> {pair['replayed_outcome']}")
        print(f"{report['equivalent']}/{report['total']} pairs equivalent ({report['percent']}%)")
    return 0 if report["equivalent"] == report["total"] else EXIT_FAIL


def _cmd_archive(args) -> int:
    from wirebench.evidence.archive import create

    # The results' own config (results/config.json); --config only for older results.
    made = create(args.results, args.out, args.config)
    if made.get("unchanged"):
        print(f"unchanged since {made['run_id']}: {made['archive']} (no new archive)")
    else:
        print(f"archived {made['run_id']} -> {made['archive']}")
    return 0


def _cmd_compare(args) -> int:
    import json

    from wirebench.evidence.files import write_bytes_atomic, write_json
    from wirebench.reports.compare import markdown, run

    if (args.b is None) == (args.models is None):
        raise ValueError("compare takes two runs (A B), or one run and --models M1 M2")
    report = run(args.a, args.b, args.models)
    text = markdown(report)
    if args.out:
        write_bytes_atomic(args.out / "compare.md", text.encode())
        write_json(args.out / "compare.json", report)
    print(json.dumps(report, indent=2, sort_keys=True) if args.json else text, end="")
    if args.fail_on_regression and not report["pairs"]:
        print("wirebench: no scored pairs in common: nothing shows there is no regression",
              file=sys.stderr)
        return EXIT_FAIL
    return EXIT_FAIL if args.fail_on_regression and report["regressions"] else 0


def _cmd_history(args) -> int:
    from wirebench.reports.history import write

    rows = write(args.archive, args.out)
    print(f"{len(rows)} model-run rows -> {args.out}/history.csv, history.svg")
    return 0


def _cmd_gate(args) -> int:
    from wirebench.reports.gate import reason, write

    floors = {}
    for item in args.floor or []:
        model, _, rate = item.partition("=")
        floors[model] = float(rate)
    report = write(args.results, floors, args.reference, args.out)
    for line in report["problems"]:
        print(f"GATE  {line}")
    print(reason(report))
    return 0 if report["passed"] else EXIT_FAIL


def _cmd_retry_infra(args) -> int:
    """Rerun exactly the pairs whose last generate was an infra error: their ops.json are
    forced targets, and Snakemake reruns what follows from them (and nothing else)."""
    import json
    import subprocess
    from pathlib import Path

    results = Path(args.results)
    if not (results / "runs").is_dir():
        raise FileNotFoundError(f"{results}: no runs/ here (a results folder of a run)")
    wanted = set(args.models or [])
    targets = []
    for agent in sorted(results.glob("runs/*/*/*/agent.json")):
        doc = json.loads(agent.read_text())
        if doc.get("status") == "infra_error" and (not wanted or doc.get("model") in wanted):
            targets.append(str(agent.parent / "ops.json"))
    print(f"{len(targets)} pair(s) whose last answer was an infra error")
    if not targets:
        return 0
    extra = [a for a in args.snakemake_args if a != "--"]
    cmd = ["snakemake", "--force", *targets, "all", *extra]
    print(f"snakemake --force <{len(targets)} answers> all {' '.join(extra)}", flush=True)
    return subprocess.call(cmd)


def _cmd_verdict(args) -> int:
    from wirebench.evidence.files import write_json
    from wirebench.reports.verdict import verdict

    text, failed = verdict(args.summary, args.max_infra_rate)
    print(text)
    for line in failed:
        print(f"wirebench: {line}", file=sys.stderr)
    if failed:
        return EXIT_FAIL
    if args.out:
        write_json(args.out, {"schema": "wirebench.verdict/1", "table": text,
                              "max_infra_rate": args.max_infra_rate})
    return 0


def _cmd_report(args) -> int:
    from pathlib import Path

    from wirebench.reports.report import write_report

    write_report(args.summary, args.scorecard, args.out, args.html, args.runs,
                 args.tasks_dir or [Path("tasks")], args.archive)
    return 0


def _parser():
    import argparse
    from pathlib import Path

    p = argparse.ArgumentParser(prog="wirebench", description=__doc__.splitlines()[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter,
                                epilog=__doc__.split("\n\n", 2)[2])
    from wirebench import __version__

    p.add_argument("--version", action="version", version=f"wirebench {__version__}")
    sub = p.add_subparsers(dest="command", required=True)

    sub.add_parser("step", help="run one per-pair step (what the Snakemake rules call)",
                   add_help=False)

    sc = sub.add_parser("score", help="score one op-list against one task, no Snakemake")
    sc.add_argument("--task", required=True, type=Path, help="the task directory")
    sc.add_argument("--ops", required=True, type=Path, help="the op-list to score")
    sc.add_argument("--json", action="store_true", help="print the score document")
    _symbol_flags(sc)
    sc.set_defaults(func=_cmd_score)

    tasks = sub.add_parser("tasks", help="work with the task corpus")
    tsub = tasks.add_subparsers(dest="tasks_command", required=True)
    chk = tsub.add_parser("check", help="every task parses, ids are unique, references score 1.0")
    chk.add_argument("dir", nargs="?", type=Path, default=Path("tasks"),
                     help="a folder of tasks, or one task's folder (default: tasks)")
    chk.add_argument("--json", action="store_true")
    _symbol_flags(chk)
    chk.set_defaults(func=_cmd_tasks_check)
    pk = tsub.add_parser("pack", help="the prompt pack an agent gets for one task")
    pk.add_argument("task", type=Path, help="the task directory")
    pk.add_argument("--skills", type=Path, default=Path("skills"),
                    help="the skills folder (default: ./skills, the workflow's)")
    pk.add_argument("--out", type=Path, help="write it here (default: standard output)")
    _symbol_flags(pk)
    pk.set_defaults(func=_cmd_tasks_pack)
    gen = tsub.add_parser("generate", help="seeded tasks of one family, with their oracles")
    gen.add_argument("family")
    gen.add_argument("--seed", required=True, help="any string; a private split keeps it secret")
    gen.add_argument("--count", type=int,
                     help="how many tasks (required, except for `real`: all it finds)")
    gen.add_argument("--demos", type=Path, default=Path("/usr/share/kicad/demos"),
                     help="`real` only: KiCad's demos folder (Debian's kicad-demos)")
    gen.add_argument("--out", type=Path, required=True)
    gen.add_argument("--start", type=int, default=0, help="the first task's index")
    gen.add_argument("--split", default="private",
                     help="the split's name in results and reports (default: private)")
    gen.set_defaults(func=_cmd_tasks_generate)
    spl = tsub.add_parser("split", help="regenerate a split from its manifest (split.yaml)")
    spl.add_argument("manifest", type=Path)
    spl.add_argument("--check", action="store_true",
                     help="write nothing; exit 1 unless every folder is byte-identical")
    spl.set_defaults(func=_cmd_tasks_split)

    sm = sub.add_parser("summary", help="aggregate score.json files: summary.csv + scorecard")
    sm.add_argument("--runs", required=True, type=Path, help="results/runs")
    sm.add_argument("--models", required=True, help="comma-separated model names")
    sm.add_argument("--tasks", required=True, help="comma-separated task ids")
    sm.add_argument("--samples", required=True, type=int)
    sm.add_argument("--experiment-models", help="the experiment's whole matrix, when this "
                    "run was narrowed: its earlier scored pairs are rows too (this_run false)")
    sm.add_argument("--experiment-tasks")
    sm.add_argument("--corpus-sha256")
    sm.add_argument("--config-sha256")
    sm.add_argument("--skills", help="a JSON object: model -> the skills folder it reads")
    sm.add_argument("--csv", required=True, type=Path)
    sm.add_argument("--scorecard", required=True, type=Path)
    sm.set_defaults(func=_cmd_summary)

    mf = sub.add_parser("manifest", help="results/manifest.json: every artifact and its hash")
    mf.add_argument("--results", required=True, type=Path,
                    help="the run's folder: its summary.csv names the pairs")
    mf.add_argument("--out", required=True, type=Path)
    mf.set_defaults(func=_cmd_manifest)

    vf = sub.add_parser("verify", help="recompute every hash in results/manifest.json")
    vf.add_argument("results", nargs="?", type=Path, default=Path("results"))
    vf.set_defaults(func=_cmd_verify)

    rpl = sub.add_parser("replay", help="re-run validate..score for every stored pair and "
                         "check the traces are the same")
    rpl.add_argument("results", nargs="?", type=Path, default=Path("results"),
                     help="a results folder, or an archived run (.tar.gz)")
    rpl.add_argument("--tasks-dir", help="the tasks folder (default: the config's)")
    rpl.add_argument("--json", action="store_true")
    _symbol_flags(rpl)
    rpl.set_defaults(func=_cmd_replay)

    ar = sub.add_parser("archive", help="freeze results/ into archive/<run-id>.tar.gz")
    ar.add_argument("--results", type=Path, default=Path("results"))
    ar.add_argument("--config", type=Path, default=Path("config/config.yaml"),
                    help="for results written before runs recorded their config.json")
    ar.add_argument("--out", type=Path, default=Path("archive"))
    ar.set_defaults(func=_cmd_archive)

    cp = sub.add_parser("compare", help="regressions, fixes and a McNemar test between two "
                        "runs, or two models of one run")
    cp.add_argument("a", type=Path, help="results folder or archive/<run-id>.tar.gz")
    cp.add_argument("b", type=Path, nargs="?", help="the other run")
    cp.add_argument("--models", nargs=2, metavar=("M1", "M2"),
                    help="compare two models (or skills variants) within run A")
    cp.add_argument("--out", type=Path, help="also write compare.md and compare.json here")
    cp.add_argument("--json", action="store_true")
    cp.add_argument("--fail-on-regression", action="store_true",
                    help="exit 1 when any pair regressed (gate a docs PR on it)")
    cp.set_defaults(func=_cmd_compare)

    hi = sub.add_parser("history", help="each model's pass rate over the archived runs")
    hi.add_argument("archive", nargs="?", type=Path, default=Path("archive"))
    hi.add_argument("--out", type=Path, default=Path("results/history"))
    hi.set_defaults(func=_cmd_history)

    gt = sub.add_parser("gate", help="exit 1 when a reference pair misses its expected "
                        "outcome or a model falls below its floor")
    gt.add_argument("results", nargs="?", type=Path, default=Path("results"))
    gt.add_argument("--floor", action="append", metavar="MODEL=RATE",
                    help="minimum pass rate of a model (repeatable)")
    gt.add_argument("--reference", default="reference", help="the self-check model's name")
    gt.add_argument("--out", type=Path, help="write gate.json here when the gate passes")
    gt.set_defaults(func=_cmd_gate)

    ri = sub.add_parser("retry-infra", help="rerun the pairs whose last answer was an "
                        "infra error (and only those); arguments after -- go to snakemake")
    ri.add_argument("--results", type=Path, default=Path("results"))
    ri.add_argument("--models", nargs="*", help="only these models' pairs")
    ri.add_argument("snakemake_args", nargs=argparse.REMAINDER)
    ri.set_defaults(func=_cmd_retry_infra)

    vd = sub.add_parser("verdict", help="a line per model; exit 1 when a model's pairs are "
                        "mostly infra errors")
    vd.add_argument("--summary", type=Path, default=Path("results/summary.csv"))
    vd.add_argument("--max-infra-rate", type=float, default=0.5,
                    help="the infra-error share above which a model fails the run")
    vd.add_argument("--out", type=Path, help="write verdict.json here when it passes")
    vd.set_defaults(func=_cmd_verdict)

    rp = sub.add_parser("report", help="report.md: a model x task matrix")
    rp.add_argument("--summary", required=True, type=Path)
    rp.add_argument("--scorecard", required=True, type=Path)
    rp.add_argument("--out", required=True, type=Path)
    rp.add_argument("--html", type=Path, help="also write the HTML report here")
    rp.add_argument("--runs", type=Path, default=Path("results/runs"))
    rp.add_argument("--tasks-dir", type=Path, nargs="+", action="extend",
                    help="the tasks folders (the run's, then a generated tier's)")
    rp.add_argument("--archive", type=Path, help="add a history chart of these archived runs")
    rp.set_defaults(func=_cmd_report)

    mc = sub.add_parser("mcp", help="one pair's akcli tools as a stdio MCP server")
    mc.add_argument("--task", required=True, type=Path, help="the task folder")
    mc.add_argument("--pair", required=True, type=Path,
                    help="the folder the tools work in (their scratch sheets go here)")
    mc.add_argument("--submit", type=Path, help="where `submit` writes the op-list")
    _symbol_flags(mc)
    mc.set_defaults(func=_cmd_mcp)
    return p


def _cmd_mcp(args) -> int:
    from wirebench.corpus.libraries import symbols_for
    from wirebench.corpus.tasks import load_task
    from wirebench.mcp_server import serve
    from wirebench.runtime.confine import require

    require()  # the tools' akcli steps run confined, or not at all
    symbols, kicad = _libraries(args)
    task = load_task(args.task)
    return serve(task.path, args.pair, symbols_for(task, symbols, kicad), args.submit)


def _symbol_flags(p) -> None:
    from pathlib import Path

    p.add_argument("--symbols", nargs="+", help="symbol libraries (default: the config's)")
    p.add_argument("--config", type=Path, default=Path("config/config.yaml"),
                   help="config whose `symbols` to use (default: config/config.yaml)")


def _internal_error(exc: BaseException) -> int:
    import traceback

    traceback.print_exc()
    print(f"wirebench: internal error: {type(exc).__name__}: {exc}", file=sys.stderr)
    return EXIT_INTERNAL


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["step"]:
        try:
            return _cmd_step(argv[1:])
        except Exception as exc:  # a step that crashes is the harness's bug: say so, exit 70
            return _internal_error(exc)
    args = _parser().parse_args(argv)
    from wirebench.config import ConfigError
    from wirebench.corpus.tasks import TaskError
    from wirebench.runtime.landlock import Unavailable

    try:
        return args.func(args)
    except (TaskError, ConfigError, ValueError, Unavailable) as exc:
        print(f"wirebench: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except (FileNotFoundError, FileExistsError, IsADirectoryError, NotADirectoryError,
            PermissionError) as exc:
        # A path the user gave that is missing, or a folder where a file belongs (or the
        # other way round): bad input, named in one line.
        where = f": {exc.filename}" if exc.filename else ""
        print(f"wirebench: {exc.strerror or exc}{where}", file=sys.stderr)
        return EXIT_USAGE
    except Exception as exc:
        return _internal_error(exc)


if __name__ == "__main__":
    sys.exit(main())
