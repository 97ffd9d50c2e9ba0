"""The conformal threshold and the Clopper-Pearson bound (aicd.scoring.calibration)."""

import math

import numpy as np
import pytest
from aicd.scoring.calibration import (
    clopper_pearson_upper,
    conformal_rank,
    conformal_threshold,
    min_reference,
    realised_fpr,
    split_reference,
)


@pytest.mark.parametrize("fpr,least", [(0.05, 19), (0.01, 99), (0.1, 9), (0.2, 4)])
def test_the_smallest_reference_with_a_threshold(fpr, least):
    assert min_reference(fpr) == least
    assert conformal_rank(least, fpr) == least          # the largest score: only an outlier is flagged
    assert conformal_rank(least - 1, fpr) is None
    assert conformal_threshold(np.arange(least - 1.0), fpr) is None


@pytest.mark.parametrize("n", [19, 20, 37, 100, 250])
def test_the_expected_fpr_of_a_new_human_stays_at_the_target_for_every_reference_size(n):
    # Exchangeable humans: over many seeded references the share of fresh humans above the
    # threshold is at most the target (exactly (n + 1 - k) / (n + 1) in expectation), where a
    # plain 95th percentile overshoots it for small n.
    rng = np.random.default_rng(n)
    fresh_fpr, percentile_fpr = [], []
    for _ in range(3000):
        reference, fresh = rng.normal(size=n), rng.normal(size=200)
        fresh_fpr.append((fresh > conformal_threshold(reference, 0.05)).mean())
        percentile_fpr.append((fresh > np.percentile(reference, 95)).mean())
    k = conformal_rank(n, 0.05)
    assert np.mean(fresh_fpr) == pytest.approx((n + 1 - k) / (n + 1), abs=0.004)
    assert np.mean(fresh_fpr) <= 0.05 + 0.004
    if n < 100:
        assert np.mean(percentile_fpr) > np.mean(fresh_fpr)


def test_clopper_pearson_upper_bound_matches_its_closed_forms():
    # 0 of n: 1 - (1 - c)^(1/n); n of n: 1.
    for n in (1, 10, 59, 300):
        assert clopper_pearson_upper(0, n) == pytest.approx(1 - 0.05 ** (1 / n), rel=1e-9)
    assert clopper_pearson_upper(5, 5) == 1.0
    assert clopper_pearson_upper(0, 0) is None
    # the bound lies above the observed rate and falls as n grows at the same rate
    assert clopper_pearson_upper(5, 100) > 0.05 > clopper_pearson_upper(50, 2000) - 0.01
    assert clopper_pearson_upper(50, 1000) < clopper_pearson_upper(5, 100)


def test_realised_fpr_counts_scores_strictly_above_the_threshold():
    out = realised_fpr([0.1, 0.5, 0.5, 0.9], 0.5)
    assert (out["humans"], out["flagged"], out["fpr"]) == (4, 1, 0.25)
    assert out["fpr_upper"] == pytest.approx(clopper_pearson_upper(1, 4))


def test_nan_reference_scores_are_refused_not_sorted_to_the_end():
    with pytest.raises(ValueError, match="NaN"):
        conformal_threshold([0.1, math.nan] * 20, 0.05)


def test_the_reference_split_is_seeded_and_a_partition():
    fit, held = split_reference(101, 0.5, seed=7)
    assert len(held) == 50 and len(fit) == 51
    assert sorted(np.r_[fit, held].tolist()) == list(range(101))
    again = split_reference(101, 0.5, seed=7)
    assert (again[0] == fit).all() and (again[1] == held).all()
    assert not (split_reference(101, 0.5, seed=8)[1] == held).all()


@pytest.mark.parametrize("fpr,least", [(0.05, 59), (0.01, 299), (0.1, 29)])
def test_a_threshold_held_with_a_confidence_needs_more_reference(fpr, least):
    # (1 - fpr)^n <= 1 - 0.95: only then can even the largest score be trusted with 95%
    assert min_reference(fpr, 0.95) == least
    assert conformal_rank(least, fpr, 0.95) == least and conformal_rank(least - 1, fpr, 0.95) is None
    assert conformal_threshold(np.arange(least - 1.0), fpr, 0.95) is None


@pytest.mark.parametrize("n", [59, 100, 151, 400])
def test_with_a_confidence_the_fpr_holds_on_that_share_of_references_where_on_average_it_does_not(n):
    # Uniform human scores: a threshold t lets 1 - t of all humans through (its true FPR). Over
    # seeded references, the share whose threshold lets more than 5% through is at most 5% with
    # --fpr-confidence 0.95; the split-conformal threshold, held on average, misses on far more.
    rng = np.random.default_rng(n)
    confident, average = [], []
    for _ in range(4000):
        reference = rng.uniform(size=n)
        confident.append(1 - conformal_threshold(reference, 0.05, 0.95) > 0.05)
        average.append(1 - conformal_threshold(reference, 0.05) > 0.05)
    assert np.mean(confident) <= 0.05 + 0.01
    assert np.mean(average) > 0.2
    assert conformal_rank(n, 0.05, 0.95) >= conformal_rank(n, 0.05)


@pytest.mark.parametrize("confidence", [0, 0.3, 1.0, 1.5])
def test_a_confidence_outside_half_to_one_is_refused(confidence):
    # 1.0 has no threshold at all; below 0.5 the threshold would hold less often than the average rule
    with pytest.raises(ValueError, match="a probability in"):
        conformal_rank(100, 0.05, confidence)


def test_the_bounds_are_scipy_stats_to_the_bit():
    """Clopper-Pearson and the confident rank from scipy.special (a tenth of scipy.stats' import):
    beta.ppf's and binom.sf's values exactly."""
    from scipy.stats import beta, binom

    for n in (1, 7, 59, 100, 151, 400):
        for flagged in range(0, n, max(1, n // 9)):
            assert clopper_pearson_upper(flagged, n) == float(beta.ppf(0.95, flagged + 1, n - flagged))
        for fpr, confidence in ((0.05, 0.95), (0.01, 0.9), (0.1, 0.99)):
            ranks = np.arange(1, n + 1)
            holds = binom.sf(ranks - 1, n, 1 - fpr) <= 1 - confidence + 1e-12
            assert conformal_rank(n, fpr, confidence) == (int(ranks[holds][0]) if n >= min_reference(fpr, confidence) else None)
