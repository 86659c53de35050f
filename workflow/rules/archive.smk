# The archive stage: `snakemake archive` freezes the finished run.


rule archive:
    """results/ -> archive/<run-id>.tar.gz with provenance, plus a row in archive/index.csv.
    It has no output on purpose: it runs whenever asked, and an unchanged run (the same
    manifest) keeps the archive and id it already has."""
    input:
        manifest=f"{RESULTS}/manifest.json",
        scorecard=f"{RESULTS}/scorecard.json",
    params:
        results=lambda wildcards, input: os.path.dirname(input.manifest),
        config_file=workflow.configfiles[0] if workflow.configfiles else "config/config.yaml",
    log:
        f"{RESULTS}/logs/archive.log",
    conda:
        "../../envs/wirebench.yaml"
    shell:
        "wirebench archive --results {params.results:q} --config {params.config_file:q}"
        " --out archive"
        " 2> {log}"
