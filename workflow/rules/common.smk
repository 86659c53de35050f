# Config loading, the matrix, and the path helpers every rule uses.
import json
import shlex

import yaml
from snakemake.exceptions import WorkflowError

from wirebench.config import ConfigError, check, select_models, select_tasks
from wirebench.fingerprint import fingerprint
from wirebench.tasks import TaskError, discover


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
        tasks = select_tasks(config, [d.name for d in discover(config["tasks_dir"])])
    except (ConfigError, TaskError) as exc:
        raise WorkflowError(str(exc)) from None
    if not tasks:
        raise WorkflowError(f"no tasks to run in {config['tasks_dir']}")
    return models, tasks


MODELS, TASKS = _load_matrix()
SAMPLES = list(range(1, config["samples"] + 1))
SYMBOLS = config["symbols"]
PAIR = "results/runs/{model}/{task}/{sample}"


wildcard_constraints:
    model=r"[A-Za-z0-9][A-Za-z0-9_.-]*",
    task=r"[A-Za-z0-9][A-Za-z0-9_.-]*",
    sample=r"\d+",


def pair_path(name):
    return f"{PAIR}/{name}"


def pair_log(step):
    return f"results/logs/{{model}}/{{task}}/{{sample}}/{step}.log"


def task_path(name=""):
    return f"{config['tasks_dir']}/{{task}}/{name}".rstrip("/")


def optional_task_files(wildcards):
    """Task files that change how a pair is drawn, when the task has them."""
    base = f"{config['tasks_dir']}/{wildcards.task}"
    names = ("base_ops.json", "postcheck_arrange.json", "task.yaml")
    return [f"{base}/{n}" for n in names if os.path.exists(f"{base}/{n}")]


def model_entry(wildcards):
    if wildcards.model not in MODELS:
        raise WorkflowError(f"model {wildcards.model!r} is not in the config's models")
    return MODELS[wildcards.model]


def agent_arg(wildcards):
    """The model entry as one shell word. Entries name env vars, never hold secrets."""
    return shlex.quote(json.dumps(model_entry(wildcards), sort_keys=True))


def generate_inputs(wildcards):
    """The prompt, plus the file the agent answers from when it reads one."""
    entry = model_entry(wildcards)
    inputs = {"prompt": f"{config['tasks_dir']}/{wildcards.task}/task.md"}
    if entry["kind"] == "reference":
        inputs["reference"] = f"{config['tasks_dir']}/{wildcards.task}/reference_ops.json"
    elif entry["kind"] == "ops_dir":
        answer = f"{entry['dir']}/{wildcards.task}.json"
        if os.path.exists(answer):
            inputs["answer"] = answer
    return inputs


def step_fingerprint(step):
    return fingerprint(step)
