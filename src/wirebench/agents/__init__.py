"""Agents: the columns of the matrix. Each kind turns a task into an answer (op-list bytes).

A kind is a module in this package with one function, `answer(spec, ctx)`, that takes
one turn's TurnContext and returns an Answer (both in agents/answer.py). KINDS below is
the one list of kinds; the config schema's enum mirrors it and a test keeps the two equal.

This module stays import-free on purpose: every step's client reads OFFLINE_KINDS.
"""

KINDS = {
    "reference": "wirebench.agents.reference",
    "ops_dir": "wirebench.agents.ops_dir",
    "command": "wirebench.agents.command",
    "openai": "wirebench.agents.openai_chat",
}

TOOL_LOOP = "wirebench.agents.tool_loop"

# Kinds that only read files and need no secrets: their generate step may run in the
# shared warm worker (worker.py) like any akcli step. Every other kind runs in its own
# process with the environment its model entry allows.
OFFLINE_KINDS = frozenset({"reference", "ops_dir"})


class UnknownAgentKind(ValueError):
    pass


def answer(spec: dict, ctx):
    from importlib import import_module

    kind = spec.get("kind")
    if kind not in KINDS:
        raise UnknownAgentKind(f"unknown agent kind {kind!r}; known kinds: {sorted(KINDS)}")
    # `tools: true` turns an openai entry into the tool-calling loop (agents/tool_loop.py).
    module = TOOL_LOOP if kind == "openai" and spec.get("tools") else KINDS[kind]
    return import_module(module).answer(spec, ctx)
