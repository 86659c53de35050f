# Batches: which pairs share a job, and what each step runs for one pair. A job runs one
# step for up to `batch` pairs of one model (wirebench/steps/batch.py); the rule files
# make a rule per step and batch from these.


# The models whose generate is a job per pair (the offline ones go in batches).
ONLINE_MODELS = "|".join(re.escape(m) for m, e in MODELS.items()
                         if e["kind"] not in OFFLINE_KINDS) or "(?!)"
try:
    BATCHES = partition(list(MODELS), TASKS, SAMPLES, int(config.get("batch", 25)))
except ValueError as exc:
    raise WorkflowError(f"config key batch: {exc}") from None
if len({b.id for b in BATCHES}) < len(BATCHES):
    raise WorkflowError("two model names differ only in `.` or `-` against `_`: "
                        "rename one (batches are named after their model)")
# Specs are stored by their own hash: written once, and free to write again.
BATCH_SPECS = ".snakemake/wirebench/batches"


def batch_pairs(batch, pair_step):
    """The batch's pairs that have this step: each with its id, argv, files and salt."""
    pairs = []
    for task, sample in batch.pairs:
        entry = pair_step(batch.model, task, sample)
        if entry is not None:
            pairs.append({"id": f"{batch.model}/{task}/{sample}", **entry})
    return pairs


# The step that writes each of a pair's files. A batch's job reads another step's files
# through that step's record, one input whatever the batch's size: Snakemake stores every
# input's checksum in the record of every output, so a job with a batch's files as inputs
# would cost it a batch's square in time and metadata.
PAIR_FILE_STEP = {"ops.json": "generate", "agent.json": "generate",
                  "validate.json": "validate", "board.kicad_sch": "apply",
                  "board.svg": "apply", "apply.json": "apply", "nets.json": "nets",
                  "sim.json": "simulate"}
RUNS = f"{RESULTS}/runs/"


def batch_inputs(batch, pairs):
    """The spec, and the records of the steps whose files the pairs read; an online
    agent's answers by name, since each is a job of its own. A task's files are in the
    spec, by hash (batch_spec)."""
    inputs = set()
    for pair in pairs:
        for path in pair["inputs"]:
            if not path.startswith(RUNS):
                continue
            step = PAIR_FILE_STEP[os.path.basename(path)]
            if step == "generate" and MODELS[batch.model]["kind"] not in OFFLINE_KINDS:
                inputs.add(path)
            else:
                inputs.add(record_path(batch, step))
    return sorted(inputs)


@functools.cache
def _file_hash(path):
    return sha256_file(path)


def batch_spec(step, pairs):
    """The spec's path: it changes, and so reruns the batch, when anything its pairs'
    results depend on does, a task's files included."""
    for pair in pairs:
        pair.setdefault("salt", {})["files"] = {
            p: _file_hash(p) for p in pair["inputs"] if not p.startswith(RUNS)}
    return write_spec(BATCH_SPECS, {"step": step, "fingerprint": step_fingerprint(step),
                                    "pairs": pairs})


def batch_outputs(batch, pairs):
    """The pairs' own files, update()-flagged: Snakemake leaves them in place when the
    batch reruns, and the step redoes only the pairs whose stamp changed. A sheet's render
    goes into Snakemake's report, labelled with its pair."""
    outputs = []
    for pair in pairs:
        task, sample = pair["id"].split("/")[-2:]
        for path in pair["outputs"]:
            path = update(path)
            if path.endswith(".svg"):
                path = report(path, caption="../report/sheet.rst", category="Sheets",
                              subcategory=batch.model,
                              labels={"model": batch.model, "task": task, "sample": sample})
            outputs.append(path)
    return outputs


def batch_runtime(pairs):
    """Minutes for a batch's job if every pair takes its step's time limit, at least 15."""
    return max(15, int(-(-len(pairs) * STEP_TIMEOUT // 60)))


def record_path(batch, step):
    return f"{RESULTS}/batches/{batch.model}/{batch.number:04d}/{step}.json"


def batch_log(batch, step):
    return f"{RESULTS}/logs/batches/{batch.model}/{batch.number:04d}/{step}.log"


def offline_generate_step(model, task, sample):
    """An offline agent's answer: the task's reference, or a file from the entry's folder."""
    entry, d = MODELS[model], pair_dir(model, task, sample)
    inputs = list(generate_inputs(SimpleNamespace(model=model, task=task)).values())
    return {"argv": ["generate", "--model", model, "--kind", entry["kind"],
                     "--agent", json.dumps(entry, sort_keys=True), "--task", task_dir(task),
                     "--sample", str(sample), "--ops", f"{d}/ops.json",
                     "--agent-out", f"{d}/agent.json"],
            "inputs": inputs, "outputs": [f"{d}/ops.json", f"{d}/agent.json"],
            "salt": {"agent_files": AGENT_FILES[model]}}


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


def batch_rules_by_step():
    by_step = {}
    for name in (r.name for r in workflow.rules):
        if "__" in name:
            by_step.setdefault(name.split("__")[0], []).append(name)
    return by_step


def steps_as_rules():
    """`--forcerun apply`, `--until nets`, `--omit-from score` and a step as a target name
    the step's rules, one a batch."""
    rule_groups_by_name(batch_rules_by_step())


def marked_by_records():
    """A batch job is marked incomplete by its record alone: the runner writes it first
    and settles it last (steps/batch.py), and its pairs are redone by their stamps."""
    one_marker_per_job({name: "record" for names in batch_rules_by_step().values()
                        for name in names})
