"""What a confined akcli step pays for its isolation: a step that does nothing, run through
confine.run (fork, Landlock, seccomp, pid namespace) as every validate, apply, nets and
simulate step is, against the same without its own pid namespace.

    python benchmarks/confine_cost.py [--steps 200]

Prints the median and quartiles of each, interleaved in rounds so that the machine's load
falls on both alike.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path


def _noop() -> None:
    pass


def main() -> None:
    from wirebench.runtime import akcli_backend, confine, isolation

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--steps", type=int, default=200)
    args = parser.parse_args()
    akcli_backend.warm_up()  # a warm worker's size: a fork copies its page tables
    pair = Path(tempfile.mkdtemp(prefix="wirebench-confine-"))
    real = isolation.new_pid_namespace
    times: dict[str, list[float]] = {"with its pid namespace": [], "without": []}
    for i in range(args.steps * 2):
        label = "with its pid namespace" if i % 2 == 0 else "without"
        isolation.new_pid_namespace = real if i % 2 == 0 else (lambda: False)
        started = time.perf_counter()
        confine.run(_noop, write=pair, timeout=30)
        times[label].append((time.perf_counter() - started) * 1000)
    isolation.new_pid_namespace = real
    for label, values in times.items():
        q1, median, q3 = statistics.quantiles(values, n=4)
        print(f"{label:>24}: median {median:.2f} ms a step (quartiles {q1:.2f}-{q3:.2f}), "
              f"{len(values)} steps")


if __name__ == "__main__":
    main()
