# The evaluate stage: validate -> apply -> nets -> [simulate] -> score. A job runs one
# step for a batch of one model's pairs (config `batch`), and every pair keeps its own
# files as the targets: Snakemake's own cost is about 10 ms a job, more than a step of a
# small pair, and a job per step and pair made it the bottleneck (docs/architecture.md, Batches).
# Within a job, only the pairs whose inputs changed are redone (wirebench/steps/batch.py),
# so one edited answer redraws one pair, and a batch cut short keeps its finished pairs.
# simulate runs for design tasks only (those with a testbench). On a cluster a batch's
# steps run as one cluster job (group "evaluate").


for batch in BATCHES:
    for step, pair_step, akcli in (("validate", validate_step, 1), ("apply", apply_step, 1),
                                   ("nets", nets_step, 1), ("simulate", simulate_step, 1),
                                   ("score", score_step, 0)):
        pairs = batch_pairs(batch, pair_step)
        if not pairs:  # simulate, in a batch without a design task
            continue

        rule:
            name:
                batch.rule(step)
            input:
                batch_inputs(batch, pairs),
                spec=batch_spec(step, pairs),
            output:
                outputs=batch_outputs(batch, pairs),
                record=update(record_path(batch, step)),
            resources:
                akcli=akcli,
                # Every pair may take its step's time limit: a cluster must not end the job
                # first (a job it cancels is put back as it was, and would only run again).
                runtime=batch_runtime(pairs),
            group:
                "evaluate"
            log:
                batch_log(batch, step),
            conda:
                "../../envs/wirebench.yaml"
            shell:
                "wirebench step batch --spec {input.spec:q} --record {output.record:q} 2> {log:q}"
