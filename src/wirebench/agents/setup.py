"""What a run sets up for its agents before any job starts.

Jobs inherit the workflow's environment (on a cluster too), so this is where the run
tells every job which secrets to redact, and whether the sandbox may be skipped.
"""

from __future__ import annotations

import os


def prepare_jobs(models: dict, unsafe_no_sandbox: bool) -> None:
    """What the workflow sets up before any job runs (jobs inherit its environment, on a
    cluster too): every entry's secret names, for redaction in every job, and the sandbox
    policy. Without a working sandbox this raises, naming what is missing, unless the user
    opted out with `unsafe_no_sandbox: true`."""
    from wirebench.agents.secrets import ALL_NAMES_VAR, secret_names
    from wirebench.runtime import confine, sandbox

    os.environ[ALL_NAMES_VAR] = ",".join(sorted({n for e in models.values()
                                                 for n in secret_names(e)}))
    if unsafe_no_sandbox:
        os.environ[confine.OPT_OUT_VAR] = "1"
        return
    os.environ.pop(confine.OPT_OUT_VAR, None)
    confine.require()
    commands = {name: e for name, e in models.items() if e.get("kind") == "command"}
    if commands:
        sandbox.require()
    for name, entry in sorted(commands.items()):
        unseen = sandbox.unseen_paths(entry["command"], entry.get("expose", []))
        relative = [w for w in unseen if not os.path.isabs(w)]
        if relative:  # the project's own file: `files:` shows it and fingerprints it
            raise sandbox.Unavailable(
                f"models.{name}.command names {relative}, which its sandbox will not show: "
                "the agent starts in an empty folder of its own, with the project hidden. "
                f"List it under `files:` (models.{name}.files: [{relative[0]}]) and name "
                f'it as "$PROJECT_DIR/{relative[0]}" in the command')
        if unseen:
            raise sandbox.Unavailable(
                f"models.{name}.command names {unseen}, which its sandbox will not show. "
                f"List it (or its folder) under `expose:` (models.{name}.expose), or, "
                "within the project, under `files:`")
