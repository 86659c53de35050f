"""Seeded task generators (`wirebench tasks generate`, `wirebench tasks split`):
generator.py is the entry, families/ holds one module a family."""
