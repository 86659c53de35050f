"""Statistics that hold up with a few dozen tasks: Wilson intervals, pass@k, exact McNemar.

Pure Python on purpose: these are small sums, and the formulas stay readable.
"""

from __future__ import annotations

from math import comb, sqrt

Z95 = 1.959963984540054


def wilson(successes: int, n: int, z: float = Z95) -> tuple[float, float]:
    """The Wilson score interval of a binomial proportion (95% by default).

    Unlike the normal approximation it stays inside [0, 1] and is honest at 0/n and n/n.
    """
    if n == 0:
        return (0.0, 1.0)
    p = successes / n
    denom = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z * sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denom
    return (max(0.0, centre - half), min(1.0, centre + half))


def pass_at_k(n: int, c: int, k: int) -> float:
    """The unbiased pass@k estimator from n samples of which c passed (Chen et al. 2021):
    1 - C(n-c, k) / C(n, k), the chance that at least one of k draws passes."""
    if k > n:
        raise ValueError(f"pass@{k} needs at least {k} samples, not {n}")
    return 1.0 - comb(n - c, k) / comb(n, k)  # comb is 0 when fewer than k failed


def pass_hat_k(n: int, c: int, k: int) -> float:
    """pass^k: the chance that k draws ALL pass, estimated without bias as
    C(c, k) / C(n, k). With k = n it is 1 when every sample passed, else 0."""
    if k > n:
        raise ValueError(f"pass^{k} needs at least {k} samples, not {n}")
    return comb(c, k) / comb(n, k)


def mcnemar_exact(regressions: int, fixes: int) -> float:
    """Two-sided exact McNemar p-value for paired pass/fail outcomes: under no change the
    discordant pairs split like fair coin flips, so p = 2 * P(X <= min(b, c)) with
    X ~ Binomial(b + c, 1/2), capped at 1."""
    n = regressions + fixes  # n = 0 gives tail 1, so p = 1: no evidence of change
    tail = sum(comb(n, i) for i in range(min(regressions, fixes) + 1)) / 2 ** n
    return min(1.0, 2 * tail)
