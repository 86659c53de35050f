"""How wirebench runs things: akcli in-process, the warm worker's client, and the tuning
of the Snakemake process."""
