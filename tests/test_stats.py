"""The statistics, against values worked out by hand."""

import pytest

from wirebench.reports.stats import mcnemar_exact, pass_at_k, pass_hat_k, wilson


def test_mcnemar_exact_hand_computed():
    # 1 regression, 5 fixes: p = 2 * (C(6,0) + C(6,1)) / 2^6 = 2 * 7 / 64
    assert mcnemar_exact(1, 5) == pytest.approx(0.21875)
    assert mcnemar_exact(5, 1) == pytest.approx(0.21875)
    # 0 vs 6: p = 2 / 64
    assert mcnemar_exact(0, 6) == pytest.approx(0.03125)
    assert mcnemar_exact(3, 3) == 1.0 and mcnemar_exact(0, 0) == 1.0


def test_wilson_hand_computed():
    lo, hi = wilson(8, 10)
    assert (round(lo, 4), round(hi, 4)) == (0.4902, 0.9433)
    assert wilson(0, 10)[0] == pytest.approx(0.0) and wilson(10, 10)[1] == pytest.approx(1.0)
    assert wilson(0, 0) == (0.0, 1.0)


def test_pass_at_k_and_pass_hat_k():
    assert pass_at_k(5, 0, 1) == 0.0 and pass_at_k(5, 5, 3) == 1.0
    assert pass_at_k(5, 2, 1) == pytest.approx(0.4)
    assert pass_at_k(5, 2, 2) == pytest.approx(1 - 3 / 10)  # 1 - C(3,2)/C(5,2)
    assert pass_hat_k(5, 2, 2) == pytest.approx(1 / 10)     # C(2,2)/C(5,2)
    assert pass_hat_k(3, 3, 3) == 1.0 and pass_hat_k(3, 2, 3) == 0.0
    with pytest.raises(ValueError):
        pass_at_k(2, 1, 3)


def test_wilson_at_the_edges_is_the_formula_not_a_clamp():
    # 0/10: the lower bound is 0 and the upper is z^2 / (n + z^2) = 3.8415 / 13.8415
    lo, hi = wilson(0, 10)
    assert lo == 0.0 and round(hi, 4) == 0.2775
    assert round(wilson(10, 10)[0], 4) == 0.7225
    # in floating point the formula lands a hair outside [0, 1] at 0/21 and 16/16
    assert wilson(0, 21)[0] == 0.0 and wilson(16, 16)[1] == 1.0
    # 90% when asked (by hand: centre 0.7361, half-width 0.1953), narrower than 95%
    assert [round(x, 4) for x in wilson(8, 10, z=1.6448536269514722)] == [0.5408, 0.9314]


def test_pass_at_k_where_exactly_k_samples_failed_and_k_equals_n():
    assert pass_at_k(5, 3, 2) == pytest.approx(0.9)   # 1 - C(2,2)/C(5,2)
    assert pass_at_k(3, 1, 3) == 1.0 and pass_at_k(3, 0, 3) == 0.0
    assert pass_hat_k(3, 3, 3) == 1.0


def test_too_few_samples_name_the_estimator_and_the_counts():
    with pytest.raises(ValueError, match=r"^pass@3 needs at least 3 samples, not 2$"):
        pass_at_k(2, 1, 3)
    with pytest.raises(ValueError, match=r"^pass\^4 needs at least 4 samples, not 3$"):
        pass_hat_k(3, 1, 4)
