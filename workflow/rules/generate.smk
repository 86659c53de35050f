# The generate stage: the agent (a model entry) answers one task, once per sample.


rule generate:
    """The agent writes its answer (ops.json) and what happened (agent.json)."""
    input:
        unpack(generate_inputs),
    output:
        ops=pair_path("ops.json"),
        agent=pair_path("agent.json"),
    params:
        kind=lambda wildcards: model_entry(wildcards)["kind"],
        agent=agent_arg,
        task_dir=task_path(),
        fingerprint=step_fingerprint("generate"),
    log:
        pair_log("generate"),
    conda:
        "../../envs/wirebench.yaml"
    shell:
        "wirebench step generate --model {wildcards.model} --kind {params.kind}"
        " --agent {params.agent}"
        " --task {params.task_dir} --sample {wildcards.sample}"
        " --ops {output.ops} --agent-out {output.agent} 2> {log}"
