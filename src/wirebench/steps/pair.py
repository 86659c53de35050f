"""One pair through validate -> apply -> nets -> [simulate] -> score in one process: what `wirebench
score`, `tasks check` and `replay` run. The Snakemake rules call the very same step
functions, one job each."""

from __future__ import annotations

from pathlib import Path

from wirebench.steps.apply import apply
from wirebench.steps.nets import nets
from wirebench.steps.score import score
from wirebench.steps.validate import validate


def evaluate_pair(ops: Path, task_dir: Path, symbols: list[str], pair_dir: Path,
                  pair: dict, agent: Path | None = None, kicad: str | None = None) -> dict:
    """All four steps in one process, with the task loaded once for all of them. Each
    akcli step runs confined (steps/confined.py); where the kernel cannot confine it, this
    refuses unless the user opted out (WIREBENCH_UNSAFE_NO_SANDBOX=1). A board task draws
    with the KiCad libraries it names (found in `kicad`, corpus/libraries.py)."""
    from wirebench.corpus.libraries import symbols_for
    from wirebench.corpus.tasks import load_task
    from wirebench.runtime.confine import require

    require()

    task = load_task(task_dir)
    symbols = symbols_for(task, symbols, kicad)
    pair_dir = Path(pair_dir)
    pair_dir.mkdir(parents=True, exist_ok=True)
    files = {k: pair_dir / f"{k}.json" for k in ("validate", "apply", "nets", "sim", "score")}
    sheet = pair_dir / "board.kicad_sch"
    validate(ops, files["validate"])
    apply(ops, files["validate"], task, symbols, sheet, files["apply"],
          pair_dir / "board.svg")
    nets(sheet, files["nets"])
    sim = None
    if task.testbench is not None:
        from wirebench.steps.simulate import simulate

        simulate(sheet, files["apply"], files["nets"], task, files["sim"])
        sim = files["sim"]
    return score(files["validate"], files["apply"], files["nets"], task, files["score"], pair,
                 agent=agent, sim=sim)
