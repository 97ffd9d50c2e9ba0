"""Thresholds calibrated on human reference code: the operating point a detector is deployed at,
set on human code of the user's setting (or a default reference) and no machine code.

A detector's machine score s (higher: more machine-like) flags a program when s > t. Given n
human reference scores, the split-conformal threshold is their k-th smallest with
k = ceil((n + 1)(1 - fpr)): for a new human program exchangeable with the reference, the chance
that it is flagged is at most fpr (exactly (n + 1 - k) / (n + 1) with distinct scores), whatever
n is. A plain percentile does not keep that promise for small n. It needs n >= 1/fpr - 1 (19
programs for 5%, 99 for 1%); below that no order statistic is safe and the threshold is None.

What a held-out part of the reference says about the threshold set on the rest is a count k of
n held-out humans flagged, stated with its one-sided 95% Clopper-Pearson upper bound: the FPR
that the held-out part supports at that confidence."""

from __future__ import annotations

import math

import numpy as np

CONFIDENCE = 0.95


def min_reference(fpr: float) -> int:
    """The fewest reference programs with a conformal threshold at this target FPR."""
    return max(1, math.ceil(1 / fpr - 1 - 1e-9))


def conformal_rank(n: int, fpr: float) -> int | None:
    """k (1-based) of the order statistic that is the threshold, or None where n is too small."""
    k = math.ceil((n + 1) * (1 - fpr) - 1e-9)
    return k if 1 <= k <= n else None


def conformal_threshold(human_scores, fpr: float) -> float | None:
    """The k-th smallest reference score (flag s > t); None with fewer than min_reference(fpr)
    scores. NaN scores are not reference scores: the caller counts and reports them."""
    scores = np.sort(np.asarray(human_scores, dtype=float))
    if np.isnan(scores).any():
        raise ValueError("reference scores hold NaN: drop (and count) those rows first")
    k = conformal_rank(len(scores), fpr)
    return None if k is None else float(scores[k - 1])


def clopper_pearson_upper(flagged: int, n: int, confidence: float = CONFIDENCE) -> float | None:
    """One-sided upper confidence bound of a rate seen as `flagged` of `n` (None for n = 0)."""
    from scipy.stats import beta

    if n <= 0:
        return None
    if flagged >= n:
        return 1.0
    return float(beta.ppf(confidence, flagged + 1, n - flagged))


def realised_fpr(human_scores, threshold: float, confidence: float = CONFIDENCE) -> dict:
    """The share of these human scores above the threshold, with its one-sided upper bound."""
    scores = np.asarray(human_scores, dtype=float)
    n, flagged = len(scores), int((scores > threshold).sum())
    return {"humans": n, "flagged": flagged, "fpr": flagged / n if n else None,
            "fpr_upper": clopper_pearson_upper(flagged, n, confidence), "confidence": confidence}


def split_reference(n: int, held_out: float, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Seeded (fit, held-out) index arrays of n reference rows; held_out in [0, 1)."""
    order = np.random.default_rng(seed).permutation(n)
    cut = int(round(n * held_out))
    return np.sort(order[cut:]), np.sort(order[:cut])
