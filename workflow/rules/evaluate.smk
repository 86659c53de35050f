# The evaluate stage: validate -> apply -> nets -> [simulate] -> score, one job per step
# and pair; simulate runs for design tasks only (those with a testbench).
# On a cluster the four steps of a pair run as one cluster job (group "evaluate"): each
# takes well under a second, far less than a cluster job's own start. Local runs ignore
# groups.


rule validate:
    """akcli ops validate, plus the guard that keeps op-list paths inside the pair."""
    input:
        ops=pair_path("ops.json"),
    output:
        pair_path("validate.json"),
    params:
        fingerprint=step_fingerprint("validate"),
        timeout=STEP_TIMEOUT,
        limits=OPLIST_LIMITS,
    resources:
        akcli=1,
    group:
        "evaluate"
    log:
        pair_log("validate"),
    conda:
        "../../envs/wirebench.yaml"
    shell:
        "wirebench step validate --ops {input.ops} --out {output} --timeout {params.timeout}"
        " {params.limits} 2> {log}"


rule apply:
    """A fresh sheet, the op-list drawn behind --strict-nets, then the task's post-checks."""
    input:
        ops=pair_path("ops.json"),
        validation=pair_path("validate.json"),
        task_files=draw_files,
    output:
        sheet=pair_path("board.kicad_sch"),
        svg=report(
            pair_path("board.svg"),
            caption="../report/sheet.rst",
            category="Sheets",
            subcategory="{model}",
            labels={"model": "{model}", "task": "{task}", "sample": "{sample}"},
        ),
        result=pair_path("apply.json"),
    params:
        task_dir=task_path(),
        symbols=task_symbols,
        # The libraries' names and bytes rather than six more inputs a job: an edit
        # reruns the draws, and a 2,000-pair DAG has 12,000 fewer files to track.
        libraries=task_libraries_hash,
        draw_meta=draw_meta,
        fingerprint=step_fingerprint("apply"),
        timeout=STEP_TIMEOUT,
    resources:
        akcli=1,
    group:
        "evaluate"
    log:
        pair_log("apply"),
    conda:
        "../../envs/wirebench.yaml"
    shell:
        "wirebench step apply --ops {input.ops} --validate {input.validation}"
        " --task {params.task_dir:q} --symbols {params.symbols:q}"
        " --sheet {output.sheet} --svg {output.svg} --out {output.result}"
        " --timeout {params.timeout} 2> {log}"


rule nets:
    """The netlist that landed, as akcli extracts it."""
    input:
        sheet=pair_path("board.kicad_sch"),
    output:
        pair_path("nets.json"),
    params:
        fingerprint=step_fingerprint("nets"),
        timeout=STEP_TIMEOUT,
    resources:
        akcli=1,
    group:
        "evaluate"
    log:
        pair_log("nets"),
    conda:
        "../../envs/wirebench.yaml"
    shell:
        "wirebench step nets --sheet {input.sheet} --out {output} --timeout {params.timeout}"
        " 2> {log}"


rule simulate:
    """A design task's testbench on the drawn sheet: akcli sim (ngspice), with corners."""
    input:
        sheet=pair_path("board.kicad_sch"),
        applied=pair_path("apply.json"),
        nets=pair_path("nets.json"),
        task_files=task_yaml,
    output:
        pair_path("sim.json"),
    params:
        task_dir=task_path(),
        # The simulator's own library file, by hash: an ngspice upgrade reruns simulate
        # and score, never generate.
        engine=NGSPICE,
        fingerprint=step_fingerprint("simulate"),
        timeout=STEP_TIMEOUT,
    resources:
        akcli=1,
    group:
        "evaluate"
    log:
        pair_log("simulate"),
    conda:
        "../../envs/wirebench.yaml"
    shell:
        "wirebench step simulate --sheet {input.sheet} --apply {input.applied}"
        " --nets {input.nets} --task {params.task_dir:q} --out {output}"
        " --timeout {params.timeout} 2> {log}"


rule score:
    """The pair's outcome, its named nets (or its measures, on a design task) and the
    task's criteria."""
    input:
        unpack(score_inputs),
        agent=pair_path("agent.json"),
        validation=pair_path("validate.json"),
        applied=pair_path("apply.json"),
        nets=pair_path("nets.json"),
    output:
        score=pair_path("score.json"),
        trace=pair_path("trace.json"),
    params:
        task_dir=task_path(),
        sim=sim_flag,
        fingerprint=step_fingerprint("score"),
    group:
        "evaluate"
    log:
        pair_log("score"),
    conda:
        "../../envs/wirebench.yaml"
    shell:
        "wirebench step score --agent {input.agent}"
        " --validate {input.validation} --apply {input.applied}"
        " --nets {input.nets} --task-dir {params.task_dir:q} {params.sim}"
        " --out {output.score} --trace {output.trace}"
        " --model {wildcards.model} --task {wildcards.task} --sample {wildcards.sample}"
        " 2> {log}"
