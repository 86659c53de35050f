"""The `reference` agent: answers with the task's committed reference_ops.json.

It is the harness's self-check: every task must score 1.0 through it.
"""

from .answer import Answer, TurnContext


def answer(spec: dict, ctx: TurnContext) -> Answer:
    return Answer(ops=ctx.task.reference_path.read_bytes())
