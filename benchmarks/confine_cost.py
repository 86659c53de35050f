"""What a confined akcli step pays for its isolation: a step that does nothing, run through
confine.run (fork, Landlock, seccomp, its own pid namespace) as every validate, apply,
nets and simulate step is. Three ways to the namespace: made for the child by the parent
(root: one fork), made by the child itself (one more fork, as without root), and none.

    python benchmarks/confine_cost.py [--steps 200]

Prints the median and quartiles of each, interleaved step by step so that the machine's
load falls on all alike.
"""

from __future__ import annotations

import argparse
import os
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
    fork_as_init, new_ns = isolation.fork_as_init, isolation.new_pid_namespace
    modes = {
        "made by the parent": (fork_as_init, new_ns),
        "made by the child": (lambda: (os.fork(), False), new_ns),
        "no pid namespace": (lambda: (os.fork(), False), lambda: False),
    }
    times: dict[str, list[float]] = {label: [] for label in modes}
    for _ in range(args.steps):
        for label, (fork, make) in modes.items():
            isolation.fork_as_init, isolation.new_pid_namespace = fork, make
            started = time.perf_counter()
            confine.run(_noop, write=pair, timeout=30)
            times[label].append((time.perf_counter() - started) * 1000)
    isolation.fork_as_init, isolation.new_pid_namespace = fork_as_init, new_ns
    for label, values in times.items():
        q1, median, q3 = statistics.quantiles(values, n=4)
        print(f"{label:>20}: median {median:.2f} ms a step (quartiles {q1:.2f}-{q3:.2f}), "
              f"{len(values)} steps")


if __name__ == "__main__":
    main()
