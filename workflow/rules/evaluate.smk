# The evaluate stage: validate -> apply -> nets -> [simulate] -> score. A job runs one
# step for a batch of one model's pairs (config `batch`), and every pair keeps its own
# files as the targets: Snakemake's own cost is about 10 ms a job, more than a step of a
# small pair, and a job per step and pair made it the bottleneck (README, Speed).
# Within a job, only the pairs whose inputs changed are redone (wirebench/steps/batch.py),
# so one edited answer redraws one pair, and a batch cut short keeps its finished pairs.
# simulate runs for design tasks only (those with a testbench). On a cluster a batch's
# steps run as one cluster job (group "evaluate").


def validate_step(model, task, sample):
    d = pair_dir(model, task, sample)
    return {"argv": ["validate", "--ops", f"{d}/ops.json", "--out", f"{d}/validate.json",
                     "--timeout", str(STEP_TIMEOUT), *OPLIST_LIMITS],
            "inputs": [f"{d}/ops.json"], "outputs": [f"{d}/validate.json"]}


def apply_step(model, task, sample):
    """A fresh sheet, the op-list drawn behind --strict-nets, the task's post-checks."""
    d = pair_dir(model, task, sample)
    return {"argv": ["apply", "--ops", f"{d}/ops.json", "--validate", f"{d}/validate.json",
                     "--task", task_dir(task), "--symbols", *TASK_SYMBOLS[task],
                     "--sheet", f"{d}/board.kicad_sch", "--svg", f"{d}/board.svg",
                     "--out", f"{d}/apply.json", "--timeout", str(STEP_TIMEOUT)],
            "inputs": [f"{d}/ops.json", f"{d}/validate.json", *draw_files(task)],
            "outputs": [f"{d}/board.kicad_sch", f"{d}/board.svg", f"{d}/apply.json"],
            # The libraries' names and bytes, and what apply reads of task.yaml, rather
            # than more input files: an edit reruns the draws, and a criterion's edit
            # never does.
            "salt": {"libraries": TASK_SYMBOLS_SHA256[task],
                     "draw": TASK_OBJECTS[task].draw_meta_hash()}}


def nets_step(model, task, sample):
    d = pair_dir(model, task, sample)
    return {"argv": ["nets", "--sheet", f"{d}/board.kicad_sch", "--out", f"{d}/nets.json",
                     "--timeout", str(STEP_TIMEOUT)],
            "inputs": [f"{d}/board.kicad_sch"], "outputs": [f"{d}/nets.json"]}


def simulate_step(model, task, sample):
    """A design task's testbench on the drawn sheet: akcli sim (ngspice), with corners."""
    if task not in DESIGN_TASKS:
        return None
    d = pair_dir(model, task, sample)
    return {"argv": ["simulate", "--sheet", f"{d}/board.kicad_sch", "--apply",
                     f"{d}/apply.json", "--nets", f"{d}/nets.json", "--task", task_dir(task),
                     "--out", f"{d}/sim.json", "--timeout", str(STEP_TIMEOUT)],
            "inputs": [f"{d}/board.kicad_sch", f"{d}/apply.json", f"{d}/nets.json",
                       *task_yaml(task)],
            "outputs": [f"{d}/sim.json"],
            # The simulator's own library, by hash: an ngspice upgrade reruns simulate
            # and score, never generate.
            "salt": {"engine": NGSPICE}}


def score_step(model, task, sample):
    """The pair's outcome, its named nets (or its measures) and the task's criteria."""
    d = pair_dir(model, task, sample)
    sim = [f"{d}/sim.json"] if task in DESIGN_TASKS else []
    return {"argv": ["score", "--agent", f"{d}/agent.json", "--validate", f"{d}/validate.json",
                     "--apply", f"{d}/apply.json", "--nets", f"{d}/nets.json",
                     "--task-dir", task_dir(task), *(["--sim", *sim] if sim else []),
                     "--out", f"{d}/score.json", "--trace", f"{d}/trace.json",
                     "--model", model, "--task", task, "--sample", str(sample)],
            "inputs": [f"{d}/agent.json", f"{d}/validate.json", f"{d}/apply.json",
                       f"{d}/nets.json", *task_yaml(task), *expected_file(task), *sim],
            "outputs": [f"{d}/score.json", f"{d}/trace.json"]}


for batch in BATCHES:
    for step, pair_step, akcli in (("validate", validate_step, 1), ("apply", apply_step, 1),
                                   ("nets", nets_step, 1), ("simulate", simulate_step, 1),
                                   ("score", score_step, 0)):
        pairs = batch_pairs(batch, pair_step)
        if not pairs:  # simulate, in a batch without a design task
            continue

        rule:
            name:
                batch.rule(step)
            input:
                batch_inputs(batch, pairs),
                spec=batch_spec(step, pairs),
            output:
                outputs=batch_outputs(batch, pairs),
                record=update(record_path(batch, step)),
            resources:
                akcli=akcli,
            group:
                "evaluate"
            log:
                batch_log(batch, step),
            conda:
                "../../envs/wirebench.yaml"
            shell:
                "wirebench step batch --spec {input.spec:q} --record {output.record:q} 2> {log:q}"
