"""The task corpus: loading and checking a task folder. (The gate that runs every
reference, `wirebench tasks check`, is wirebench/steps/tasks_check.py: it runs the steps.)"""
