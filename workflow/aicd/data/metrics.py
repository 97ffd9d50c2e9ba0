"""Metrics and threshold rules of a detector's machine score: the one home of each (ground
floor: every stage reads them here; tests/unit/data/test_metrics_home.py checks that no module
defines one again).

- the machine score of a row: 1 - score_human at stored precision (`machine_score`,
  `machine_scores` of a predictions table); higher: more machine-like, flagged when above t;
- AUROC, machine against human: Mann-Whitney with ties counting a half (`auroc`), and of
  binned counts (`auroc_of_counts`, the bootstrap's draws);
- the cut that maximises binary macro-F1 (`best_threshold`, `cut_points`): thresholds are the
  scores themselves, every cut at once from sorted counts, the lowest on ties;
- the threshold at a target FPR on human scores, two rules under two names:
  `quantile_threshold` (the smallest observed t with at most fpr of the humans above it: a score
  file's "validation threshold"), which needs `min_humans_quantile` = ceil(1/fpr) humans to
  leave one above it; and the split-conformal threshold (`conformal_rank`: the k-th smallest of
  n with k = ceil((n + 1)(1 - fpr)), or held with a confidence c over the reference drawn), which
  needs `min_reference` = ceil(1/fpr - 1) humans (log(1 - c) / log(1 - fpr) with a confidence:
  aicd.scoring.calibration says what each promises)."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from .families import HUMAN
from .scores import stored

# ------------------------------------------------------------------ the machine score


def machine_score(score_human) -> np.ndarray:
    """1 - score_human at stored precision, computed in float64 (the threshold's scale)."""
    return 1.0 - stored(score_human).astype(np.float64)


def machine_scores(table: pd.DataFrame) -> np.ndarray | None:
    """machine_score of a predictions table's score_human column; None where the detector gives
    no score for the human class."""
    column = f"score_{HUMAN}"
    if column not in table.columns or table[column].isna().all():
        return None
    return machine_score(table[column].to_numpy(dtype=float))


# ------------------------------------------------------------------ AUROC


def average_ranks(values: np.ndarray) -> np.ndarray:
    """1-based ranks, tied values sharing their mean rank (scipy.stats.rankdata's default, the
    same floats; NaN anywhere gives NaN everywhere, as rankdata propagates it). Here because
    importing scipy.stats costs every scoring job ~0.4 CPU-s."""
    values = np.asarray(values)
    if values.dtype.kind == "f" and np.isnan(values).any():
        return np.full(values.shape, np.nan)
    order = np.argsort(values, kind="mergesort")
    ordered = values[order]
    first = np.concatenate(([True], ordered[1:] != ordered[:-1])) if len(ordered) else np.zeros(0, bool)
    starts = np.flatnonzero(first)
    ends = np.append(starts[1:], len(ordered))
    ranks = np.empty(len(ordered))
    ranks[order] = ((starts + 1 + ends) / 2.0)[np.cumsum(first) - 1]
    return ranks


def auroc(scores, positive) -> float | None:
    """Mann-Whitney AUROC of the positives (machine) against the rest (ties count a half); None
    without both classes."""
    scores, positive = np.asarray(scores, dtype=float), np.asarray(positive, dtype=bool)
    n_pos, n_neg = int(positive.sum()), int((~positive).sum())
    if n_pos == 0 or n_neg == 0:
        return None
    ranks = average_ranks(scores)
    return float((ranks[positive].sum() - n_pos * (n_pos + 1) / 2) / (n_pos * n_neg))


def auroc_of_counts(pos: np.ndarray, neg: np.ndarray) -> np.ndarray:
    """AUROC of (..., bins) counts of positives and negatives per ascending score bin."""
    below = np.cumsum(neg, axis=-1) - neg  # negatives in lower bins
    wins = (pos * (below + neg / 2.0)).sum(axis=-1)
    total = pos.sum(axis=-1) * neg.sum(axis=-1)
    return np.divide(wins, total, out=np.full(total.shape, np.nan), where=total > 0)


# ------------------------------------------------------------------ the cut that maximises macro-F1


def cut_points(scores: np.ndarray, positive: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(thresholds, macro-F1 of flagging rows above each): one threshold below every score, then
    each distinct score (flagging the rows above it; the top one flags none); all at once from
    sorted counts. The thresholds are scores themselves, never midpoints, which rounding could
    put on one of two neighbouring floats."""
    order = np.argsort(scores, kind="stable")
    s, pos = scores[order], positive[order].astype(np.int64)
    distinct = np.flatnonzero(np.diff(s) > 0)  # last index of each run of equal scores but the top one
    cuts = np.concatenate([[np.nextafter(s[0], -np.inf)], s[distinct], [s[-1]]])
    below_pos = np.concatenate([[0], np.cumsum(pos)[distinct], [pos.sum()]])  # positives at or below each cut
    below_all = np.concatenate([[0], distinct + 1, [len(s)]])
    tp, fn = pos.sum() - below_pos, below_pos
    tn = below_all - below_pos
    fp = (len(s) - pos.sum()) - tn
    return cuts, macro_f1_of_cells(tp, fp, fn, tn)


def macro_f1_of_cells(tp, fp, fn, tn) -> np.ndarray:
    """Binary macro-F1 (machine and human) of confusion cells, arrays broadcast; a class that occurs
    neither in gold nor in predictions counts 0, as f1_score's zero_division=0 does."""
    tp, fp, fn, tn = (np.asarray(a, dtype=float) for a in (tp, fp, fn, tn))
    f_machine = np.divide(2 * tp, 2 * tp + fp + fn, out=np.zeros(np.broadcast(tp, fp).shape), where=2 * tp + fp + fn > 0)
    f_human = np.divide(2 * tn, 2 * tn + fn + fp, out=np.zeros(np.broadcast(tn, fn).shape), where=2 * tn + fn + fp > 0)
    return (f_machine + f_human) / 2


def best_threshold(scores, positive) -> tuple[float, float]:
    """(the threshold maximising macro-F1 of flagging rows above it, that macro-F1); the lowest
    such threshold on ties; non-finite scores take no part ((0.0, 0.0) where none is finite)."""
    scores, positive = np.asarray(scores, dtype=float), np.asarray(positive, dtype=bool)
    finite = np.isfinite(scores)
    if not finite.any():
        return 0.0, 0.0
    cuts, f1 = cut_points(scores[finite], positive[finite])
    best = int(np.argmax(f1))
    return float(cuts[best]), float(f1[best])


# ------------------------------------------------------------------ thresholds at a target FPR


def min_humans_quantile(fpr: float) -> int:
    """The fewest human scores that leave one above quantile_threshold at this FPR: ceil(1/fpr)."""
    return int(math.ceil(1.0 / fpr - 1e-9))


def quantile_threshold(human_scores, fpr: float) -> float | None:
    """The smallest observed t with at most fpr of human_scores above it (None for no rows)."""
    s = np.sort(np.asarray(human_scores, dtype=float))
    if len(s) == 0:
        return None
    allowed = int(np.floor(fpr * len(s)))  # human rows that may score above t
    return float(s[len(s) - 1 - allowed]) if allowed < len(s) else float(s[0]) - 1.0


def check_confidence(confidence: float | None) -> None:
    """None (on average) or a probability in [0.5, 1): below 0.5 the threshold would hold its FPR
    less often than the average rule does."""
    if confidence is not None and not 0.5 <= confidence < 1:
        raise ValueError(f"confidence {confidence}: None (held on average) or a probability in [0.5, 1)")


def min_reference(fpr: float, confidence: float | None = None) -> int:
    """The fewest reference programs with a conformal threshold at this target FPR (held on
    average: ceil(1/fpr - 1); or with `confidence` over the reference drawn)."""
    check_confidence(confidence)
    if confidence is None:
        return max(1, math.ceil(1 / fpr - 1 - 1e-9))
    return max(1, math.ceil(math.log(1 - confidence) / math.log(1 - fpr) - 1e-9))


def conformal_rank(n: int, fpr: float, confidence: float | None = None) -> int | None:
    """k (1-based) of the order statistic of n human scores that is the split-conformal
    threshold, or None where n is too small."""
    if confidence is None:
        k = math.ceil((n + 1) * (1 - fpr) - 1e-9)
        return k if 1 <= k <= n else None
    if n < min_reference(fpr, confidence):
        return None
    from scipy.special import betainc  # scipy.special, not scipy.stats: a tenth of the import

    ranks = np.arange(1, n + 1)
    # P(the k-th smallest of n humans' scores lets more than fpr of humans through) = P(Bin(n, 1 - fpr) >= k)
    # = I_{1-fpr}(k, n - k + 1), the regularized incomplete beta (binom.sf(k - 1, ...) to the bit)
    holds = betainc(ranks, n - ranks + 1, 1 - fpr) <= 1 - confidence + 1e-12
    return int(ranks[holds][0])
