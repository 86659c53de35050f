"""The step functions the Snakemake rules call, one module per rule (prompt_pack,
generate, validate, apply, nets, score), the dispatcher that runs them, and the one-process
pass over a pair that `score`, `tasks check` and `replay` use."""
