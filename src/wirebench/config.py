"""The run config: schema-checked, with the matrix (models x tasks x samples) resolved.

The Snakefile and the CLI both load the config through here, so a bad key gets the same
message that names it in both places.
"""

from __future__ import annotations

import contextlib
import json
import re
from functools import cache
from importlib import resources
from pathlib import Path


class ConfigError(Exception):
    """A config that cannot be run; the message names the offending key."""


@cache
def _schema_text(name: str) -> str:
    return (resources.files("wirebench") / "schemas" / f"{name}.schema.yaml").read_text()


@cache
def validator(name: str):
    import jsonschema

    return jsonschema.Draft202012Validator(schema(name))


def schema(name: str = "config") -> dict:
    """A committed JSON Schema from src/wirebench/schemas (workflow/schemas links there)."""
    import yaml

    return yaml.safe_load(_schema_text(name))


def check(config: dict) -> dict:
    """Validate against the committed schema and fill defaults; raise ConfigError."""

    if not isinstance(config, dict):
        raise ConfigError("config: the top level must be a mapping")
    _coerce_command_line(config)
    problems = schema_problems("config", config)
    if problems:
        raise ConfigError("invalid config:\n  " + "\n  ".join(f"config {p}" for p in problems))
    config.setdefault("samples", 1)
    return config


def schema_problems(name: str, doc) -> list[str]:
    """`key a.b: message`, one line per way `doc` breaks schema `name`, in key order."""
    errors = sorted(validator(name).iter_errors(doc), key=lambda e: list(e.absolute_path))
    lines = []
    for err in errors:
        leaf = most_specific(err)
        where = ".".join(str(p) for p in leaf.absolute_path) or "(top level)"
        lines.append(f"key {where}: {leaf.message}")
    return list(dict.fromkeys(lines))


def _coerce_command_line(config: dict) -> None:
    """`--config strict=true floors={m: 0.8}` arrives as strings; read them as meant."""
    if isinstance(config.get("strict"), str) and config["strict"].lower() in ("true", "false"):
        config["strict"] = config["strict"].lower() == "true"
    floors = config.get("floors")
    if isinstance(floors, dict):
        for model, rate in floors.items():
            with contextlib.suppress(TypeError, ValueError):  # else the schema names it
                floors[model] = float(rate)


def most_specific(err):
    """For a oneOf failure, the error from the branch the value was meant for: skip the
    branches whose type did not even match, then take the deepest remaining error."""
    leaves, stack = [], [err]
    while stack:
        e = stack.pop()
        if e.context:
            stack.extend(e.context)
        elif e.validator != "type" or e is err:
            leaves.append(e)
    return max(leaves, key=lambda e: len(e.absolute_path)) if leaves else err


def _names(value) -> list[str]:
    if isinstance(value, str):
        return [v.strip() for v in value.split(",") if v.strip()]
    return list(value or [])


def models_file(path: str) -> dict:
    """The `models:` mapping of a models file (config key `models_file`)."""
    import yaml

    try:
        doc = yaml.safe_load(Path(path).read_text(encoding="utf-8"))
    except OSError as exc:
        raise ConfigError(f"config key models_file: cannot read {path}: "
                          f"{exc.strerror or exc}") from None
    except yaml.YAMLError as exc:
        raise ConfigError(f"config key models_file: {path} is not valid YAML ({exc})") from None
    models = doc.get("models") if isinstance(doc, dict) else None
    if not isinstance(models, dict) or not models:
        raise ConfigError(f"config key models_file: {path} needs a non-empty `models:` "
                          "mapping")
    return models


def select_models(config: dict, catalog: dict) -> dict:
    """The model entries to run. `models_file: my_models.yaml` replaces the config's
    models with that file's (Snakemake merges every --configfile into the default one, so
    a second config file can add models but never drop one). `--config models=a,b` then
    narrows by name, within the models file's entries when there is one, else within the
    config files' own `models` (the catalog)."""
    models = config["models"]
    if config.get("models_file"):
        catalog = models_file(config["models_file"])
        if isinstance(models, dict):
            return catalog
    elif isinstance(models, dict):
        return models
    chosen = {}
    for name in _names(models):
        if name not in catalog:
            raise ConfigError(f"config key models: no model named {name!r} in the config file; "
                              f"known: {sorted(catalog)}")
        chosen[name] = catalog[name]
    return chosen


def select_tasks(config: dict, available: list[str]) -> list[str]:
    wanted = _names(config.get("tasks"))
    if not wanted:
        return available
    missing = [t for t in wanted if t not in available]
    if missing:
        raise ConfigError(f"config key tasks: unknown task id(s) {missing} in "
                          f"{config['tasks_dir']}")
    return [t for t in available if t in wanted]


def sample_tiers(config: dict, tiers: dict[str, str]) -> list[str]:
    """The tasks a run keeps: with `sample_per_tier: {board: 2}` only the first two board
    tasks (by id), every task of the other tiers. An explicit `tasks:` list wins, and
    `--config sample_per_tier=all` runs the whole corpus (Snakemake merges a mapping
    given on its command line into the file's, so an empty one cannot clear it)."""
    value = config.get("sample_per_tier")
    quota = dict(value) if isinstance(value, dict) else {}
    if _names(config.get("tasks")) or not quota:
        return list(tiers)
    kept, seen = [], {}
    for task, tier in tiers.items():
        seen[tier] = seen.get(tier, 0) + 1
        if tier not in quota or seen[tier] <= quota[tier]:
            kept.append(task)
    return kept


def is_narrowed(config: dict) -> bool:
    """Did `--config tasks=` or `models=` narrow this run to part of its experiment?"""
    return bool(_names(config.get("tasks"))) or not isinstance(config["models"], dict)


def experiment_models(config: dict, catalog: dict) -> list[str]:
    """The models of the experiment's whole matrix: every entry `models=` chose from."""
    if config.get("models_file"):
        return list(models_file(config["models_file"]))
    return list(config["models"] if isinstance(config["models"], dict) else catalog)


def experiment_tasks(config: dict, tiers: dict[str, str]) -> list[str]:
    """The tasks of the experiment's whole matrix: what the run keeps without `tasks=`."""
    return sample_tiers({**config, "tasks": None}, tiers)


# Folders results/ holds itself: an experiment may not take their names.
RESULTS_OWN = ("runs", "prompts", "logs", "history", "batches")


def results_dir(config: dict) -> str:
    """Where a run keeps its files: `results`, or `results/NAME` for `--config
    experiment=NAME`, so that two experiments never overwrite each other's pairs,
    summaries or reports."""
    name = config.get("experiment")
    if not name:
        return "results"
    name = str(name)
    if not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9_.-]*", name) or name in RESULTS_OWN:
        raise ConfigError(f"config key experiment: {name!r} is no experiment name (letters, "
                          f"digits, '.', '_' and '-'; not one of {list(RESULTS_OWN)})")
    return f"results/{name}"


CORPUS_MARK = "corpus.json"


def corpus_clash(results: str, tasks_dir: str) -> str | None:
    """Why this run may not write to `results`, or None. An experiment's pairs are keyed
    by task id, so a second tasks folder whose ids match would overwrite the first one's
    pairs, and switching back would pay for them again: each experiment keeps to the tasks
    folder its first run used (recorded in results/.../corpus.json)."""
    mark = Path(results) / CORPUS_MARK
    here = str(Path(tasks_dir).resolve())
    try:
        recorded = json.loads(mark.read_text()).get("tasks_dir")
    except (OSError, ValueError, AttributeError):
        return None  # no mark (a first run, or one from before marks): nothing to keep
    if recorded in (None, here):
        return None
    return (f"{results}/ holds the runs of the tasks folder {recorded}, not {here}: pairs "
            "with the same task id would overwrite each other. Run this folder as an "
            f"experiment of its own (--config experiment=NAME), or delete {mark} to hand "
            f"{results}/ over to it.")


def mark_corpus(results: str, tasks_dir: str) -> None:
    from wirebench.evidence.files import write_json

    write_json(Path(results) / CORPUS_MARK, {"schema": "wirebench.corpus/1",
                                             "tasks_dir": str(Path(tasks_dir).resolve())})


def load_config(path: str | Path) -> dict:
    import yaml

    path = Path(path)
    if not path.is_file():
        raise ConfigError(f"config file not found: {path}")
    return check(yaml.safe_load(path.read_text()) or {})


# How an entry runs, not what it answers: changing one reruns no agent call. A pair that
# timed out under the old limit stays an infra error until `wirebench retry-infra`.
OPERATIONAL_KNOBS = ("timeout", "retries", "backoff_s", "max_output_bytes")


def answer_entry(entry: dict) -> dict:
    """The part of a model entry its answers depend on: all but its operational knobs."""
    return {k: v for k, v in entry.items() if k not in OPERATIONAL_KNOBS}


# Files a folder under `expose:` may hold that a command runs: its scripts, so a module an
# exposed script imports counts too. Binaries and weights are not read (gigabytes, at
# every start): name such a file in `files:` or in the command to have it hashed.
SCRIPT_SUFFIXES = (".py", ".sh", ".bash", ".js", ".mjs", ".cjs", ".ts", ".rb", ".pl",
                   ".lua", ".r", ".jl", ".php")


def agent_files(name: str, entry: dict) -> list[str]:
    """Every file of an entry's own agent whose bytes decide its answers, sorted: what its
    `files:` globs match (from the workflow folder), each file its command names
    (`python3 /abs/agent.py`, `"$PROJECT_DIR/agent.py"`) and the scripts under its
    `expose:` paths. A `files:` glob that matches nothing is refused."""
    import glob
    import os
    import shlex

    found = set()
    for pattern in entry.get("files", []):
        matched = [p for p in glob.glob(pattern, recursive=True) if os.path.isfile(p)]
        if not matched:
            raise ConfigError(f"config key models.{name}.files: {pattern!r} matches no file")
        found.update(matched)
    try:
        words = shlex.split(entry.get("command", ""))
    except ValueError:
        words = []  # the sandbox's own check names a command it cannot split
    for word in words:
        for var in ("$PROJECT_DIR", "${PROJECT_DIR}"):  # the workflow folder, in the job
            if word.startswith(var + "/"):
                word = os.path.join(os.getcwd(), word[len(var) + 1:])
        if os.path.isfile(word):
            found.add(word)
    for path in entry.get("expose", []):
        path = os.path.expanduser(path)
        if os.path.isfile(path):
            found.add(path)
        for folder, dirs, files in os.walk(path):
            dirs[:] = sorted(d for d in dirs if d != "__pycache__")
            found.update(os.path.join(folder, f) for f in files
                         if f.lower().endswith(SCRIPT_SUFFIXES))
    return sorted(found)


def agent_files_hash(name: str, entry: dict) -> str:
    """The bytes of agent_files(), as a short hash; "" for an entry with none."""
    import hashlib

    from wirebench.evidence.files import sha256_file

    files = agent_files(name, entry)
    if not files:
        return ""
    h = hashlib.sha256()
    for path in files:  # the spelling hashes of `files:` had before: they stay current
        h.update(path.encode() + b"\0")
        h.update(bytes.fromhex(sha256_file(path)))
    return h.hexdigest()[:16]
