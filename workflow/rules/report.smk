# The report stage: every pair's score.json into one table, a scorecard and a report.


rule summary:
    """One row per model x task x sample, and per-model pass rates."""
    input:
        expand(pair_path("score.json"), model=MODELS, task=TASKS, sample=SAMPLES),
    output:
        csv="results/summary.csv",
        scorecard="results/scorecard.json",
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
    """A model x task matrix a person can read."""
    input:
        summary="results/summary.csv",
        scorecard="results/scorecard.json",
    output:
        "results/report.md",
    params:
        fingerprint=step_fingerprint("report"),
    log:
        "results/logs/report.log",
    conda:
        "../../envs/wirebench.yaml"
    shell:
        "wirebench report --summary {input.summary} --scorecard {input.scorecard}"
        " --out {output} 2> {log}"


rule manifest:
    """Every artifact of the run with its size, producing rule and sha256."""
    input:
        rules.summary.output,
        rules.report.output,
        expand(pair_path("trace.json"), model=MODELS, task=TASKS, sample=SAMPLES),
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
