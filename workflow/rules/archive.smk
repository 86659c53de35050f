# The archive stage: `snakemake archive` freezes the finished run.


rule archive:
    """results/ -> archive/<run-id>.tar.gz with provenance, plus a row in archive/index.csv.
    It has neither inputs nor outputs on purpose. It freezes the results as the run that
    wrote them left them, checked against their manifest, with the config that run
    recorded (results/config.json): with inputs, a bare `snakemake archive` after a run
    with `--config models_file=...` rebuilt the default matrix's summary and archived that.
    It runs whenever asked, and an unchanged run (the same manifest) keeps the archive and
    id it already has."""
    params:
        results=RESULTS,
    log:
        f"{RESULTS}/logs/archive.log",
    conda:
        "../../envs/wirebench.yaml"
    shell:
        "wirebench archive --results {params.results:q} --out archive 2> {log}"
