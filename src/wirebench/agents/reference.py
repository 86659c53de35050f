"""The `reference` agent: answers with the task's committed reference_ops.json.

It is the harness's self-check: every task must score 1.0 through it. A folder in
akcli's own format gets its protocol 1 envelope restamped (corpus/tasks.py).
"""

from .answer import Answer, TurnContext


def answer(spec: dict, ctx: TurnContext) -> Answer:
    return Answer(ops=ctx.task.reference_ops())
