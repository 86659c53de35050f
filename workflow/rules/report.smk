# The report stage: every pair's score.json into one table, a scorecard and a report.


rule summary:
    """One row per model x task x sample, and per-model pass rates."""
    input:
        expand(pair_path("score.json"), model=MODELS, task=TASKS, sample=SAMPLES),
    output:
        csv=report("results/summary.csv", caption="../report/summary.rst", category="Results"),
        scorecard=report(
            "results/scorecard.json", caption="../report/scorecard.rst", category="Results"
        ),
    params:
        # The matrix, not the file list: a list of 10,000 paths overflows one shell word.
        models=",".join(MODELS),
        tasks=",".join(TASKS),
        samples=len(SAMPLES),
        corpus=CORPUS_SHA256,
        config=CONFIG_SHA256,
        fingerprint=step_fingerprint("summary"),
    log:
        "results/logs/summary.log",
    conda:
        "../../envs/wirebench.yaml"
    shell:
        "wirebench summary --runs results/runs --models {params.models}"
        " --tasks {params.tasks} --samples {params.samples}"
        " --corpus-sha256 {params.corpus} --config-sha256 {params.config}"
        " --csv {output.csv} --scorecard {output.scorecard} 2> {log}"


rule report:
    """report.md and the self-contained report.html: heatmap, intervals, drill-downs."""
    input:
        summary="results/summary.csv",
        scorecard="results/scorecard.json",
        traces=expand(pair_path("trace.json"), model=MODELS, task=TASKS, sample=SAMPLES),
        # Archived runs are read (--archive) but are no input: archiving this run adds
        # its row, and that alone must not rerun the report, and through it the manifest,
        # whose new hash would make the next archive a new run. The history is as of the
        # report's own run; `--forcerun report` draws it afresh.
    output:
        md="results/report.md",
        html=report(
            "results/report.html", caption="../report/report_html.rst", category="Results"
        ),
    params:
        tasks_dir=config["tasks_dir"],
        fingerprint=step_fingerprint("report"),
    log:
        "results/logs/report.log",
    conda:
        "../../envs/wirebench.yaml"
    shell:
        "wirebench report --summary {input.summary} --scorecard {input.scorecard}"
        " --out {output.md} --html {output.html} --runs results/runs"
        " --tasks-dir {params.tasks_dir:q} --archive archive 2> {log}"


rule manifest:
    """Every artifact of the run with its size, producing rule and sha256."""
    input:
        rules.summary.output,
        rules.report.output,
    output:
        "results/manifest.json",
    params:
        models=",".join(MODELS),
        tasks=",".join(TASKS),
        samples=len(SAMPLES),
        fingerprint=step_fingerprint("manifest"),
    log:
        "results/logs/manifest.log",
    conda:
        "../../envs/wirebench.yaml"
    shell:
        "wirebench manifest --results results --models {params.models} --tasks {params.tasks}"
        " --samples {params.samples} --out {output} 2> {log}"


rule verdict:
    """A line per model; the run fails when a model's pairs are mostly infra errors (a
    command not on PATH, a dead endpoint): otherwise it would end green, that model
    silently left out of every pass rate."""
    input:
        scorecard="results/scorecard.json",
        summary="results/summary.csv",
    output:
        "results/verdict.json",
    params:
        max_infra_rate=config.get("max_infra_rate", 0.5),
        fingerprint=step_fingerprint("verdict"),
    log:
        "results/logs/verdict.log",
    conda:
        "../../envs/wirebench.yaml"
    shell:
        "wirebench verdict --scorecard {input.scorecard} --summary {input.summary}"
        " --max-infra-rate {params.max_infra_rate} --out {output} 2> {log}"


rule gate:
    """With --config strict=true: fail the run when a reference pair misses its expected
    outcome or a model falls below its configured floor."""
    input:
        scorecard="results/scorecard.json",
    output:
        "results/gate.json",
    params:
        floors=" ".join(f"--floor {m}={r}" for m, r in sorted(config.get("floors", {}).items())),
        reference=config.get("reference_model", "reference"),
        fingerprint=step_fingerprint("gate"),
    log:
        "results/logs/gate.log",
    conda:
        "../../envs/wirebench.yaml"
    shell:
        "wirebench gate results {params.floors} --reference {params.reference}"
        " --out {output} > {log} 2>&1"
