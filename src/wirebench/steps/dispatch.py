"""The step dispatcher: `wirebench step NAME ...` parsed and run in this process.

The CLI runs a step here when there is no warm worker; the worker's servers run every
step they are sent through the same function.
"""

from __future__ import annotations

_STEP_PARSER = None


def _step_parser():
    """Built once a process: a warm worker's server parses thousands of steps (2.6 ms a
    build here)."""
    global _STEP_PARSER
    if _STEP_PARSER is None:
        _STEP_PARSER = _build_step_parser()
    return _STEP_PARSER


_TIMEOUT_HELP = "wall-clock seconds before the pair is given up (config step_timeout_s)"


def _build_step_parser():
    import argparse
    from pathlib import Path

    p = argparse.ArgumentParser(prog="wirebench step", description="one per-pair step")
    sub = p.add_subparsers(dest="step", required=True)

    g = sub.add_parser("generate", help="the agent answers the task: ops.json + agent.json")
    g.add_argument("--model", required=True)
    g.add_argument("--kind", required=True, help="the model entry's kind")
    g.add_argument("--agent", required=True, help="the model entry, as JSON")
    g.add_argument("--task", required=True, type=Path)
    g.add_argument("--sample", required=True, type=int)
    g.add_argument("--ops", required=True, type=Path)
    g.add_argument("--agent-out", required=True, type=Path)
    g.add_argument("--prompt", type=Path, help="the prompt pack (agents that read one)")
    g.add_argument("--skills", type=Path, help="the skills folder the model entry uses")
    g.add_argument("--symbols", nargs="*", default=(), help="for the repair loop's checks")

    pp = sub.add_parser("prompt", help="build the prompt pack of one task")
    pp.add_argument("--task", required=True, type=Path)
    pp.add_argument("--skills", required=True, type=Path)
    pp.add_argument("--symbols", nargs="+", required=True)
    pp.add_argument("--out", required=True, type=Path)

    v = sub.add_parser("validate", help="akcli ops validate + path guard: validate.json")
    v.add_argument("--ops", required=True, type=Path)
    v.add_argument("--out", required=True, type=Path)
    v.add_argument("--timeout", type=float, help=_TIMEOUT_HELP)
    v.add_argument("--max-bytes", type=int, help="config max_oplist_bytes")
    v.add_argument("--max-ops", type=int, help="config max_ops")

    a = sub.add_parser("apply", help="akcli new + draw --apply --strict-nets + post-checks")
    a.add_argument("--ops", required=True, type=Path)
    a.add_argument("--validate", required=True, type=Path)
    a.add_argument("--task", required=True, type=Path)
    a.add_argument("--symbols", nargs="+", required=True)
    a.add_argument("--sheet", required=True, type=Path)
    a.add_argument("--svg", type=Path, help="also render the sheet here")
    a.add_argument("--out", required=True, type=Path)
    a.add_argument("--timeout", type=float, help=_TIMEOUT_HELP)

    n = sub.add_parser("nets", help="akcli nets --json: nets.json")
    n.add_argument("--sheet", required=True, type=Path)
    n.add_argument("--out", required=True, type=Path)
    n.add_argument("--timeout", type=float, help=_TIMEOUT_HELP)

    sm = sub.add_parser("simulate", help="a design task's testbench via akcli sim: sim.json")
    sm.add_argument("--sheet", required=True, type=Path)
    sm.add_argument("--apply", required=True, type=Path)
    sm.add_argument("--nets", required=True, type=Path)
    sm.add_argument("--task", required=True, type=Path)
    sm.add_argument("--out", required=True, type=Path)
    sm.add_argument("--timeout", type=float, help=_TIMEOUT_HELP)

    b = sub.add_parser("batch", help="one step for a batch of pairs (steps/batch.py)")
    b.add_argument("--spec", required=True, type=Path, help="the batch's spec")
    b.add_argument("--record", required=True, type=Path, help="the batch's record: stamps")

    s = sub.add_parser("score", help="outcome, nets or measures, criteria: score.json")
    for name in ("validate", "apply", "nets", "out"):
        s.add_argument(f"--{name}", required=True, type=Path)
    s.add_argument("--task-dir", required=True, type=Path, help="the task folder")
    s.add_argument("--sim", type=Path, help="sim.json, for a design task")
    s.add_argument("--agent", type=Path, help="agent.json: the agent's account")
    s.add_argument("--trace", type=Path, help="also write the pair's trace.json here")
    s.add_argument("--model", required=True)
    s.add_argument("--task", required=True)
    s.add_argument("--sample", required=True, type=int)
    return p


def run_step(argv: list[str]) -> int:
    """Run one step in this process (the worker and the local fallback both land here)."""
    import json
    from pathlib import Path

    args = _step_parser().parse_args(argv)
    if args.step == "batch":
        from wirebench.steps.batch import run_batch

        return run_batch(args.spec, args.record, run_step)
    if args.step != "prompt":  # per-pair steps: clear what a killed earlier try left
        from wirebench.evidence.files import sweep

        sweep(Path(args.ops if args.step == "generate" else args.out).parent)
    if args.step == "generate":
        from wirebench.steps.generate import generate

        generate(args.model, json.loads(args.agent), args.task, args.sample, args.ops,
                 args.agent_out, prompt=args.prompt, skills=args.skills, symbols=args.symbols)
    elif args.step == "prompt":
        from wirebench.steps.prompt_pack import write

        write(args.task, args.skills, args.symbols, args.out)
    elif args.step == "validate":
        from wirebench.steps.validate import validate

        limits = {k: v for k, v in (("max_bytes", args.max_bytes), ("max_ops", args.max_ops))
                  if v is not None}
        validate(args.ops, args.out, timeout=args.timeout, **limits)
    elif args.step == "apply":
        from wirebench.steps.apply import apply

        apply(args.ops, args.validate, args.task, args.symbols, args.sheet, args.out, args.svg,
              timeout=args.timeout)
    elif args.step == "nets":
        from wirebench.steps.nets import nets

        nets(args.sheet, args.out, timeout=args.timeout)
    elif args.step == "simulate":
        from wirebench.steps.simulate import simulate

        simulate(args.sheet, args.apply, args.nets, args.task, args.out, timeout=args.timeout)
    elif args.step == "score":
        from wirebench.steps.score import score

        score(args.validate, args.apply, args.nets, args.task_dir, args.out,
              {"model": args.model, "task": args.task, "sample": args.sample},
              agent=args.agent, sim=args.sim)
        if args.trace:
            from wirebench.evidence.trace import write

            write(args.out.parent, args.trace)
    return 0
