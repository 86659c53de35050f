"""Judging an answer: reading the op-list, guarding its paths, scoring named nets,
the typed criteria and relabel-tolerant equivalence. Pure functions: no akcli, no files
written."""
