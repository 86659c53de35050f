# The report stage: every pair's score.json into one table, a scorecard and a report.

# Each reads the whole run and takes seconds: on a cluster they run on the submit host,
# which has the results folder, rather than each waiting on a Slurm job of its own.
localrules:
    run_config,
    summary,
    report,
    manifest,
    verdict,
    gate,


rule summary:
    """One row per model x task x sample, and per-model pass rates."""
    input:
        expand(pair_path("score.json"), model=MODELS, task=TASKS, sample=SAMPLES),
    output:
        csv=report(f"{RESULTS}/summary.csv", caption="../report/summary.rst", category="Results"),
        scorecard=report(
            f"{RESULTS}/scorecard.json", caption="../report/scorecard.rst", category="Results"
        ),
    params:
        # The run's results folder: where its output lies.
        results=lambda wildcards, output: os.path.dirname(output[0]),
        # The matrix, not the file list: a list of 10,000 paths overflows one shell word.
        models=",".join(MODELS),
        tasks=",".join(TASKS),
        samples=len(SAMPLES),
        # A narrowed run's summary still covers its experiment's earlier pairs.
        experiment_models=",".join(EXPERIMENT_MODELS),
        experiment_tasks=",".join(EXPERIMENT_TASKS),
        corpus=CORPUS_SHA256,
        config=CONFIG_SHA256,
        # The skills folder each model reads, which the reports show beside it.
        skills=json.dumps({m: skills_dir(e) for m, e in MODELS.items()
                           if e["kind"] not in OFFLINE_KINDS}, sort_keys=True),
        fingerprint=step_fingerprint("summary"),
    log:
        f"{RESULTS}/logs/summary.log",
    conda:
        "../../envs/wirebench.yaml"
    shell:
        "wirebench summary --runs {params.results:q}/runs --models {params.models}"
        " --tasks {params.tasks} --samples {params.samples}"
        " --experiment-models {params.experiment_models}"
        " --experiment-tasks {params.experiment_tasks}"
        " --corpus-sha256 {params.corpus} --config-sha256 {params.config}"
        " --skills {params.skills:q}"
        " --csv {output.csv} --scorecard {output.scorecard} 2> {log}"


rule report:
    """report.md and the self-contained report.html: heatmap, intervals, drill-downs."""
    input:
        summary=f"{RESULTS}/summary.csv",
        scorecard=f"{RESULTS}/scorecard.json",
        traces=expand(pair_path("trace.json"), model=MODELS, task=TASKS, sample=SAMPLES),
        # Archived runs are read (--archive) but are no input: archiving this run adds
        # its row, and that alone must not rerun the report, and through it the manifest,
        # whose new hash would make the next archive a new run. The history is as of the
        # report's own run; `--forcerun report` draws it afresh.
    output:
        md=f"{RESULTS}/report.md",
        html=report(
            f"{RESULTS}/report.html", caption="../report/report_html.rst", category="Results"
        ),
    params:
        # The run's results folder: where its output lies.
        results=lambda wildcards, output: os.path.dirname(output[0]),
        # The tasks folder, and the real tier's cache when the run has one.
        tasks_dirs=TASKS_DIRS,
        fingerprint=step_fingerprint("report"),
    log:
        f"{RESULTS}/logs/report.log",
    conda:
        "../../envs/wirebench.yaml"
    shell:
        "wirebench report --summary {input.summary} --scorecard {input.scorecard}"
        " --out {output.md} --html {output.html} --runs {params.results:q}/runs"
        " --tasks-dir {params.tasks_dirs:q} --archive archive 2> {log}"


rule run_config:
    """The config as run (models and tasks resolved), into the results: what `archive`
    records as the run's config. Its stored copy's path changes exactly when it does."""
    input:
        RUN_CONFIG_FILE,
    output:
        f"{RESULTS}/config.json",
    log:
        f"{RESULTS}/logs/run_config.log",
    conda:
        "../../envs/wirebench.yaml"
    shell:
        "cp {input:q} {output:q} 2> {log:q}"


rule manifest:
    """Every artifact of the run with its size, producing rule and sha256."""
    input:
        rules.summary.output,
        rules.report.output,
        rules.run_config.output,
    output:
        f"{RESULTS}/manifest.json",
    params:
        # The run's results folder: where its output lies.
        results=lambda wildcards, output: os.path.dirname(output[0]),
        fingerprint=step_fingerprint("manifest"),
    log:
        f"{RESULTS}/logs/manifest.log",
    conda:
        "../../envs/wirebench.yaml"
    shell:
        "wirebench manifest --results {params.results:q} --out {output} 2> {log}"


rule verdict:
    """A line per model; the run fails when a model's pairs are mostly infra errors (a
    command not on PATH, a dead endpoint): otherwise it would end green, that model
    silently left out of every pass rate."""
    input:
        summary=f"{RESULTS}/summary.csv",
    output:
        f"{RESULTS}/verdict.json",
    params:
        max_infra_rate=config.get("max_infra_rate", 0.5),
        fingerprint=step_fingerprint("verdict"),
    log:
        f"{RESULTS}/logs/verdict.log",
    conda:
        "../../envs/wirebench.yaml"
    shell:
        "wirebench verdict --summary {input.summary}"
        # Its table to the log: onsuccess/onerror print it once (common.smk), even
        # under -q and on a run with nothing to do.
        " --max-infra-rate {params.max_infra_rate} --out {output} > {log} 2>&1"


rule gate:
    """With --config strict=true: fail the run when a reference pair misses its expected
    outcome or a model falls below its configured floor. It runs in Snakemake's own
    process, not a job shell: a tripped gate's error is then its reason in one line,
    where a failed shell command is shown with the whole job-shell function before it."""
    input:
        scorecard=f"{RESULTS}/scorecard.json",
    output:
        f"{RESULTS}/gate.json",
    params:
        # The run's results folder: where its output lies.
        results=lambda wildcards, output: os.path.dirname(output[0]),
        # What the gate decides by: a change of floors or of the reference reruns it.
        floors=" ".join(f"--floor {m}={r}" for m, r in sorted(config.get("floors", {}).items())),
        reference=config.get("reference_model", "reference"),
        fingerprint=step_fingerprint("gate"),
    log:
        f"{RESULTS}/logs/gate.log",
    run:
        from wirebench.reports.gate import enforce

        failed = enforce(params.results, config.get("floors", {}), params.reference,
                         output[0], log[0])
        if failed:
            raise WorkflowError(failed)
