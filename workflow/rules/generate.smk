# The generate stage: the agent (a model entry) answers one task, once per sample.


# A prompt pack is a few files written from the task: on a cluster it runs on the submit
# host rather than costing a Slurm job of its own.
localrules:
    prompt_pack,


rule prompt_pack:
    """Everything an agent is given: the skills docs, akcli's op list, schema and pin
    tables, then the task."""
    input:
        skills=skills_files,
        task=task_path("task.md"),
        task_files=prompt_files,
    output:
        f"{RESULTS}/prompts/{{skills}}/{{task}}.md",
    params:
        # Paths, not inputs: an edited library must never rerun a paid generate call.
        # `snakemake --forcerun prompt_pack` refreshes the pin tables when you want it.
        symbols=task_symbols,
        skills_dir=lambda wildcards: SKILLS[wildcards.skills],
        task_dir=lambda wildcards, input: os.path.dirname(input.task),
        fingerprint=step_fingerprint("prompt_pack"),
    resources:
        akcli=1,
    log:
        f"{RESULTS}/logs/prompts/{{skills}}/{{task}}.log",
    conda:
        "../../envs/wirebench.yaml"
    shell:
        "wirebench step prompt --task {params.task_dir:q} --skills {params.skills_dir:q}"
        " --symbols {params.symbols:q} --out {output:q} 2> {log:q}"


rule generate:
    """The agent writes its answer (ops.json) and what happened (agent.json). A job per
    pair: an agent's answer costs far more than a job, and a batch that failed would take
    its finished answers with it."""
    wildcard_constraints:
        # The offline agents' answers are files: they are copied in batches, below.
        model=ONLINE_MODELS,
    input:
        unpack(generate_inputs),
    output:
        ops=pair_path("ops.json"),
        agent=pair_path("agent.json"),
    params:
        kind=lambda wildcards: model_entry(wildcards)["kind"],
        agent=agent_arg,
        entry=agent_entry,
        # The bytes of the agent's own files (`files:`, what its command names, the
        # scripts it is shown), not only its config entry.
        agent_files=lambda wildcards: AGENT_FILES[wildcards.model],
        flags=agent_flags,
        task_dir=task_path(),
        fingerprint=step_fingerprint("generate"),
    resources:
        **provider_slots(),
    log:
        pair_log("generate"),
    conda:
        "../../envs/wirebench.yaml"
    shell:
        "wirebench step generate --model {wildcards.model} --kind {params.kind}"
        " --agent {params.agent}"
        " --task {params.task_dir:q} --sample {wildcards.sample}"
        " --ops {output.ops} --agent-out {output.agent} {params.flags} 2> {log}"


for batch in BATCHES:
    if MODELS[batch.model]["kind"] not in OFFLINE_KINDS:
        continue
    pairs = batch_pairs(batch, offline_generate_step)

    rule:
        name:
            batch.rule("generate")
        input:
            batch_inputs(batch, pairs),
            spec=batch_spec("generate", pairs),
        output:
            outputs=batch_outputs(batch, pairs),
            record=update(record_path(batch, "generate")),
        group:
            # On a cluster, inside its batch's job: copying answers is no job of its own.
            "evaluate"
        log:
            batch_log(batch, "generate"),
        conda:
            "../../envs/wirebench.yaml"
        shell:
            "wirebench step batch --spec {input.spec:q} --record {output.record:q} 2> {log:q}"
