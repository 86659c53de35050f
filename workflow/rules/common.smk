# The Snakemake process's tuning, config loading, the matrix, and the path helpers every
# rule uses.
import functools
import glob
import json
import re
import shlex
import sys
from types import SimpleNamespace

import yaml
from snakemake.exceptions import WorkflowError
from snakemake_interface_executor_plugins.settings import DeploymentMethod

from wirebench.agents import OFFLINE_KINDS
from wirebench.agents.ops_dir import answer_path
from wirebench.agents.setup import prepare_jobs
from wirebench.config import (
    ConfigError,
    agent_files_hash,
    answer_entry,
    check,
    corpus_clash,
    experiment_models,
    experiment_tasks,
    is_narrowed,
    mark_corpus,
    results_dir,
    sample_tiers,
    select_models,
    select_tasks,
)
from wirebench.evidence.files import sha256_file
from wirebench.evidence.fingerprint import fingerprint
from wirebench.evidence.provenance import config_hash, corpus_hash, libraries_hash
from wirebench.runtime import symbol_cache
from wirebench.runtime.akcli_backend import ngspice_identity
from wirebench.agents.secrets import secret_names
from wirebench.runtime.snakemake_process import (
    checksums_once_per_job,
    defer_remaining_jobs,
    exact_producers,
    fresh_bytecode,
    job_shell_prefix,
    one_marker_per_job,
    rule_groups_by_name,
    spare_the_collector,
    stop_scheduler_timers,
)
from wirebench.corpus.libraries import symbols_for
from wirebench.steps.batch import partition, write_spec
from wirebench.corpus.tasks import TaskError, discover_all, load_task
from wirebench.taskgen.real import tier as real_tier


# The Snakemake process itself: fewer collector passes over the DAG, no list of every
# remaining job built each scheduling round, no regular expression compiled to find which
# rule makes a file, each input of a finished job hashed once, and bytecode written once
# for every job.
# Why and what each saves: wirebench/runtime/snakemake_process.py.
spare_the_collector()
defer_remaining_jobs()
exact_producers()
checksums_once_per_job()
fresh_bytecode()


# The real tier, generated from the installed kicad-demos into a cache folder when the
# config asks for it (`real_tier:`), and run beside the tasks folder's tasks. Why at the
# start and not in a rule: taskgen/real/tier.py. Without kicad-demos the run goes on.
REAL_DIR, REAL_LEFT_OUT = real_tier.ensure(config)
if REAL_LEFT_OUT:
    print(f"wirebench: {REAL_LEFT_OUT}", file=sys.stderr)
TASKS_DIRS = [config["tasks_dir"], *([str(REAL_DIR)] if REAL_DIR else [])]


def _load_matrix():
    # --config models=a,b replaces the mapping with names: look them up in the file.
    catalog = {}
    for path in workflow.configfiles:
        with open(path) as fh:
            catalog.update((yaml.safe_load(fh) or {}).get("models") or {})
    try:
        check(config)
        models = select_models(config, catalog)
        check({**config, "models": models})
        folders = {t: str(d) for t, d in discover_all(TASKS_DIRS).items()}
        available = list(folders)
        tasks = select_tasks(config, available)
    except (ConfigError, TaskError) as exc:
        raise WorkflowError(str(exc)) from None
    if not tasks:
        raise WorkflowError(f"no tasks to run in {config['tasks_dir']}")
    # Every selected task is checked now, before any job runs: a malformed task.yaml
    # stops the run here, naming its file, instead of failing its jobs one by one.
    try:
        loaded = {t: load_task(folders[t]) for t in tasks}
    except TaskError as exc:
        raise WorkflowError(str(exc)) from None
    tasks = sample_tiers(config, {t: task.tier for t, task in loaded.items()})
    experiment = _experiment(catalog, folders, list(models), tasks)
    return models, tasks, {t: loaded[t] for t in tasks}, experiment, folders


def _experiment(catalog, folders, models, tasks):
    # The experiment's whole matrix: a narrowed run's summary and reports still cover
    # every pair of it that an earlier run scored (reports/summary.py).
    if not is_narrowed(config):
        return models, tasks
    tiers = {}
    for name, path in folders.items():
        try:
            tiers[name] = load_task(path).tier
        except TaskError:
            continue  # a task that cannot load has no scored pairs to show
    return experiment_models(config, catalog), experiment_tasks(config, tiers)


MODELS, TASKS, TASK_OBJECTS, (EXPERIMENT_MODELS, EXPERIMENT_TASKS), TASK_DIRS = _load_matrix()
# Design tasks: their pairs get a simulate job (sim.json) between nets and score.
DESIGN_TASKS = {t for t, task in TASK_OBJECTS.items() if task.testbench is not None}
NGSPICE = ngspice_identity()
if DESIGN_TASKS and NGSPICE is None:
    raise WorkflowError(
        f"{len(DESIGN_TASKS)} design task(s) need ngspice's shared library to simulate: "
        "install Debian's libngspice0, or set AKCLI_NGSPICE to libngspice's path "
        "(or narrow the run with --config tasks=...)")
SAMPLES = list(range(1, config["samples"] + 1))
SYMBOLS = config["symbols"]
try:
    SYMBOLS_SHA256 = libraries_hash(SYMBOLS)
except OSError as exc:
    raise WorkflowError(f"config key symbols: cannot read {exc.filename}: {exc.strerror}")


def _task_libraries():
    """Each task's libraries: the run's `symbols`, or the KiCad ones a board task names.
    A missing KiCad library stops the run here, naming the task and how to install it."""
    libraries, hashes = {}, {tuple(SYMBOLS): SYMBOLS_SHA256}
    for name, task in TASK_OBJECTS.items():
        try:
            libraries[name] = symbols_for(task, SYMBOLS, config.get("kicad_symbols"))
        except TaskError as exc:
            raise WorkflowError(f"task {name}: {exc} (or narrow the run with "
                                "--config tasks=...)") from None
        key = tuple(libraries[name])
        if key not in hashes:
            hashes[key] = libraries_hash(libraries[name])
    return libraries, {name: hashes[tuple(libs)] for name, libs in libraries.items()}


# Per task: the library paths a pair draws with, and their names and bytes' hash.
TASK_SYMBOLS, TASK_SYMBOLS_SHA256 = _task_libraries()
# Jobs inherit it: the warm worker parses these once, before it forks its servers.
os.environ[symbol_cache.WARM_VAR] = os.pathsep.join(sorted(
    {str(Path(p).absolute()) for libs in TASK_SYMBOLS.values() for p in libs}))

# Job shells that hand steps to the warm worker, or start `wirebench` with this
# interpreter (under --sdm conda a job's own environment provides `wirebench`). Only
# after the last change to the jobs' environment: the worker's name hashes part of it,
# and a prefix that named another worker than the jobs start would never be used.
if DeploymentMethod.CONDA not in workflow.deployment_settings.deployment_method:
    shell.prefix(job_shell_prefix())


def task_symbols(wildcards):
    return TASK_SYMBOLS[wildcards.task]


# Where this run's files go: results/, or results/NAME/ for `--config experiment=NAME`.
try:
    RESULTS = results_dir(config)
except ConfigError as exc:
    raise WorkflowError(str(exc)) from None
# An experiment keeps to one tasks folder: another one's ids would overwrite its pairs.
if clash := corpus_clash(RESULTS, config["tasks_dir"]):
    raise WorkflowError(clash)
PAIR = f"{RESULTS}/runs/{{model}}/{{task}}/{{sample}}"


# The skills folder shipped next to the Snakefile, for entries that name none. Relative,
# because it ends up in params: an absolute path would rerun every agent after a clone.
DEFAULT_SKILLS = os.path.relpath(
    os.path.join(os.path.dirname(workflow.main_snakefile), "skills"))


def skills_dir(entry):
    return entry.get("skills", DEFAULT_SKILLS)


def _skills_variants():
    """Skills folders in use, by folder name: the {skills} wildcard of prompt packs."""
    variants = {}
    for name, entry in MODELS.items():
        if entry["kind"] in OFFLINE_KINDS:
            continue
        folder = skills_dir(entry)
        key = os.path.basename(os.path.normpath(folder))
        if variants.setdefault(key, folder) != folder:
            raise WorkflowError(f"config key models.{name}.skills: two skills folders are "
                                f"named {key!r}; give them distinct folder names")
        if not os.path.isdir(folder):
            raise WorkflowError(f"config key models.{name}.skills: no folder {folder!r}")
    return variants


SKILLS = _skills_variants()
# The API keys the models name, handed to cluster jobs through Snakemake's envvars (in
# their environment, never on disk). Names that are not set are left out: an `openai`
# entry's own key stops the run at its preflight (onstart, below), before any paid call;
# an `env:` name of a command entry is the command's to report.
SECRET_ENVVARS = sorted({n for e in MODELS.values() for n in secret_names(e) if n in os.environ})
STEP_TIMEOUT = config.get("step_timeout_s", 120)
OPLIST_LIMITS = [word for flag, key in (("max-bytes", "max_oplist_bytes"),
                                         ("max-ops", "max_ops")) if key in config
                 for word in (f"--{flag}", str(int(config[key])))]
# Every job redacts the secrets of every entry; command agents run in bubblewrap and akcli
# steps under Landlock, or the run refuses to start (runtime/sandbox.py).
try:
    prepare_jobs(MODELS, bool(config.get("unsafe_no_sandbox")))
except OSError as exc:
    raise WorkflowError(str(exc)) from None
CORPUS_SHA256 = corpus_hash(config["tasks_dir"], TASKS, TASK_DIRS)
# The config as run: the models' entries and the tasks resolved. It is stored under its
# own hash, as a batch's spec is, and copied into the results (results/config.json) by
# the run that scores with it, so `archive` freezes the run as it was configured, not as
# the archive command's own --config would have it.
RUN_CONFIG = {**config, "models": MODELS, "tasks": TASKS}
CONFIG_SHA256 = config_hash(RUN_CONFIG)
RUN_CONFIG_FILE = write_spec(".snakemake/wirebench/configs", RUN_CONFIG)
# Every provider gets a resource; cap one with --resources provider_<name>=N.
PROVIDERS = sorted({e.get("provider", e["kind"]) for e in MODELS.values()})
# akcli steps are CPU-bound: unless told otherwise, run no more of them at once than
# there are CPUs, so that --cores 16 means 16 agent calls, not 16 akcli draws.
if "akcli" not in workflow.global_resources:
    workflow.register_resource("akcli", os.cpu_count() or 1)


wildcard_constraints:
    model=r"[A-Za-z0-9][A-Za-z0-9_.-]*",
    task=r"[A-Za-z0-9][A-Za-z0-9_.-]*",
    sample=r"\d+",


def pair_path(name):
    return f"{PAIR}/{name}"


def pair_log(step):
    return f"{RESULTS}/logs/{{model}}/{{task}}/{{sample}}/{step}.log"


def pair_dir(model, task, sample):
    return PAIR.format(model=model, task=task, sample=sample)


def task_dir(task):
    return TASK_DIRS[task]


def draw_files(task):
    """Task files that change how a pair is drawn, when the task has them. task.yaml is
    not one: what apply reads of it is hashed into its salt (draw_meta_hash), so editing
    a testbench or a criterion never reruns a draw."""
    names = ("base_ops.json", "postcheck_arrange.json")
    return [f"{task_dir(task)}/{n}" for n in names if os.path.exists(f"{task_dir(task)}/{n}")]


def task_yaml(task):
    path = f"{task_dir(task)}/task.yaml"
    return [path] if os.path.exists(path) else []


def expected_file(task):
    """The ground truth a pair's nets are scored against, when the task has one."""
    t = TASK_OBJECTS[task]
    return [task_file(task, t.expected_path)] if t.expected_path.is_file() else []


def task_path(name=""):
    return lambda wildcards: f"{TASK_DIRS[wildcards.task]}/{name}".rstrip("/")


def task_file(task_id, path):
    """A task's file as the config spells the tasks folder (relative stays relative: on a
    cluster's shared storage paths are taken from the project folder)."""
    return f"{TASK_DIRS[task_id]}/{path.relative_to(TASK_OBJECTS[task_id].path)}"


def prompt_files(wildcards):
    """What a prompt pack shows besides task.md: the base design an edit task starts
    from, and the datasheets on the parts a board or spec task names (a spec task's are
    under datasheets/full/)."""
    task = TASK_OBJECTS[wildcards.task]
    notes = [f"{config['tasks_dir']}/{p.relative_to(task.path.parent)}"
             for p in task.datasheet_paths]
    return ([task_file(wildcards.task, task.base_ops_path)] if task.base_ops_path else []) + notes


def _agent_files():
    """Per model, the hash of its own agent's files (config.agent_files: `files:`, what
    the command names, the scripts under `expose:`): a generate param, so editing the
    script reruns that model and nothing else."""
    try:
        return {name: agent_files_hash(name, entry) for name, entry in MODELS.items()}
    except ConfigError as exc:
        raise WorkflowError(str(exc)) from None


AGENT_FILES = _agent_files()


def model_entry(wildcards):
    if wildcards.model not in MODELS:
        raise WorkflowError(f"model {wildcards.model!r} is not in the config's models")
    return MODELS[wildcards.model]


class Untracked:
    """A param's text that Snakemake's params trigger does not compare: it records only
    values of builtin types (snakemake.persistence, _serialize_param), and this is none.
    The command still gets the text."""

    def __init__(self, text):
        self.text = text

    def __str__(self):
        return self.text


def agent_arg(wildcards):
    """The whole model entry as one shell word, untracked: a change of its operational
    knobs (a timeout) must rerun no agent call. The rest of it is tracked (agent_entry).
    Entries name env vars, never hold secrets."""
    return Untracked(shlex.quote(json.dumps(model_entry(wildcards), sort_keys=True)))


def agent_entry(wildcards):
    """What of the model entry its answers depend on: a generate param, so changing it
    reruns that model. Spelled as agent_arg was when it was tracked, so an entry without
    knobs keeps its answers."""
    return shlex.quote(json.dumps(answer_entry(model_entry(wildcards)), sort_keys=True))


def skills_key(entry):
    return os.path.basename(os.path.normpath(skills_dir(entry)))


def prompt_of(entry, wildcards):
    """The prompt pack a model entry reads for this task."""
    return f"{RESULTS}/prompts/{skills_key(entry)}/{wildcards.task}.md"


def generate_inputs(wildcards):
    """The task, and what the agent reads: its prompt pack, or its answer file."""
    entry = model_entry(wildcards)
    inputs = {"task": f"{TASK_DIRS[wildcards.task]}/task.md"}
    if entry["kind"] not in OFFLINE_KINDS:
        inputs["prompt"] = prompt_of(entry, wildcards)
    if entry["kind"] == "reference":
        inputs["reference"] = f"{TASK_DIRS[wildcards.task]}/reference_ops.json"
    elif entry["kind"] == "ops_dir":
        answer = answer_path(entry, wildcards.task)
        if answer.is_file():
            inputs["answer"] = str(answer)
    return inputs


def agent_flags(wildcards):
    """Extra generate flags for agents that read a prompt pack and may repair."""
    entry = model_entry(wildcards)
    if entry["kind"] in OFFLINE_KINDS:
        return ""
    return (f"--prompt {shlex.quote(prompt_of(entry, wildcards))}"
            f" --skills {shlex.quote(skills_dir(entry))}"
            f" --symbols {' '.join(map(shlex.quote, TASK_SYMBOLS[wildcards.task]))}")


def provider_slots():
    """resources: one slot of the model's own provider, zero of every other."""
    return {
        f"provider_{p}": (lambda wc, p=p: int(model_entry(wc).get("provider",
                                                                    model_entry(wc)["kind"]) == p))
        for p in PROVIDERS
    }


def skills_files(wildcards):
    return sorted(glob.glob(f"{SKILLS[wildcards.skills]}/*.md"))


def step_fingerprint(step):
    return fingerprint(step)


def print_verdict():
    """The per-model line on the terminal, even under -q, why this run's pairs failed
    (each cause once per model, redacted), and why the run failed when a model's pairs are
    mostly infra errors (the verdict rule's own output goes to its log)."""
    from wirebench.reports.verdict import verdict, why_failed

    summary = f"{RESULTS}/summary.csv"
    if os.path.exists(summary):
        text, failed = verdict(summary, config.get("max_infra_rate", 0.5))
        print("\n".join(["", text, *why_failed(summary),
                         *(f"wirebench: {line}" for line in failed)]))


def preflight():
    """Before the first paid call, each online entry with a generate job to run is checked
    once (agents/preflight.py): its key's variable, its endpoint, its model. A failed check
    stops the run here, before any job, naming the entry and the cause. Snakemake runs
    onstart neither in a dry run nor in a cluster job, and the check feeds no job: it
    changes no fingerprint and reruns nothing."""
    import sys

    from wirebench.agents.preflight import ONLINE_KINDS, check_all

    due = {job.wildcards.model for job in workflow.dag.needrun_jobs()
           if job.rule.name == "generate"}
    stops, notes = check_all({m: MODELS[m] for m in due
                              if MODELS.get(m, {}).get("kind") in ONLINE_KINDS})
    for note in notes:
        print(f"wirebench: {note}", file=sys.stderr)
    if stops:
        raise WorkflowError("the run stops before any agent call:\n"
                            + "\n".join(f"  {line}" for line in stops)
                            + "\nfix the entry, or leave its model out of this run "
                            "(--config models=...)")


onstart:
    preflight()
    mark_corpus(RESULTS, config["tasks_dir"])


onsuccess:
    stop_scheduler_timers()
    print_verdict()


onerror:
    stop_scheduler_timers()
    print_verdict()
