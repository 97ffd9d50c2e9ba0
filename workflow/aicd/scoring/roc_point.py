"""The ROC operating point: the TPR at a fixed FPR as the field defines it (RAID's evaluation and
leaderboard, an ROC curve read at that FPR): the largest TPR of any threshold whose FPR on the
scored rows' own human rows is at most the target. The threshold is set on those same rows, so
this says how well the scores separate the classes there, not what a deployed threshold would do
(that is the deployment view: aicd.scoring.thresholds, a threshold set on validation humans).

The threshold is the smallest observed human score t with at most floor(FPR x humans) human
rows above it; rows scoring above t are flagged. Where that leaves no human row above t (fewer
human rows than 1 / FPR, or more of them tied at the top score than the FPR allows), no
threshold has an FPR above 0 and at most the target: the point is unreachable, and the TPR kept
is the one at FPR 0, with the reason. RAID's search reports nothing there (it drops an FPR it
cannot reach).

The interval resamples the scored rows (multinomial cell counts over score bins, as the AUROC's:
exact where the scores take at most BINS values, the scores' quantile bins otherwise) and sets
each resample's own threshold."""

from __future__ import annotations

import math

import numpy as np

from .bootstrap import LEVEL, _interval

BINS = 1000


def score_bins(scores: np.ndarray) -> np.ndarray:
    """Each score's bin, ascending: its distinct value where there are at most BINS of them, else
    its quantile bin."""
    if len(np.unique(scores)) <= BINS:
        return np.unique(scores, return_inverse=True)[1]
    edges = np.unique(np.quantile(scores, np.linspace(0, 1, BINS + 1)[1:-1]))
    return np.searchsorted(edges, scores, side="right")


def bin_draws(scores: np.ndarray, positive: np.ndarray, resamples: int, seed: int) -> np.ndarray:
    """(resamples, bins, 2) multinomial draws of the (score bin, human 0 / positive 1) cell counts."""
    bins = score_bins(scores)
    k = int(bins.max()) + 1
    counts = np.bincount(bins * 2 + positive.astype(int), minlength=2 * k)
    rng = np.random.default_rng(seed)
    return rng.multinomial(int(counts.sum()), counts / counts.sum(), size=resamples).reshape(resamples, k, 2)


def roc_tpr_of_counts(humans: np.ndarray, positives: np.ndarray, fpr: float) -> np.ndarray:
    """The ROC operating point's TPR of (..., bins) counts per ascending score bin: flag the bins
    above the lowest bin that leaves at most floor(fpr x humans) humans above it."""
    total_h, total_p = humans.sum(axis=-1), positives.sum(axis=-1)
    humans_above = total_h[..., None] - np.cumsum(humans, axis=-1)  # humans in bins above bin b
    allowed = np.floor(fpr * total_h + 1e-9)
    first = np.argmax(humans_above <= allowed[..., None], axis=-1)  # the top bin always qualifies
    caught = total_p - np.take_along_axis(np.cumsum(positives, axis=-1), first[..., None], axis=-1)[..., 0]
    return np.divide(caught, total_p, out=np.full(total_p.shape, np.nan, dtype=float), where=total_p > 0)


def roc_interval(scores: np.ndarray, positive: np.ndarray, fpr: float, resamples: int, seed: int,
                 level: float = LEVEL, draws: np.ndarray | None = None) -> list[float] | None:
    """`draws`: bin_draws of these rows made once for several FPRs (and the AUROC's interval)."""
    if resamples < 1 or positive.all() or not positive.any():
        return None
    draws = bin_draws(scores, positive, resamples, seed) if draws is None else draws
    values = roc_tpr_of_counts(draws[..., 0], draws[..., 1], fpr)
    keep = ~np.isnan(values) & (draws[..., 0].sum(axis=-1) > 0)
    return _interval(values[keep], level) if keep.any() else None


def unreachable(human: np.ndarray, fpr: float) -> dict | None:
    """Why no threshold has an FPR above 0 and at most `fpr` on these human scores, or None:
    {reason, short (for a table cell), why (the whole sentence)}."""
    n, need = len(human), math.ceil(1.0 / fpr - 1e-9)
    if n < need:
        return {"reason": "few_test_humans", "short": f"unreachable: < {need} humans",
                "why": f"{n} human rows, fewer than 1 / FPR = {need}: a single false positive is already over "
                       f"{fpr:.0%}, so only FPR 0 is possible"}
    top = float(human.max())
    tied = int((human == top).sum())
    return {"reason": "ties_at_top", "short": f"unreachable: {tied} tie at top",
            "why": f"{tied} of {n} human rows tie at the top score {top:.6g}, more than {fpr:.0%} of them: a "
                   f"threshold flags none or all {tied} of them, so only FPR 0 is at most {fpr:.0%}"}


def roc_point(scores: np.ndarray, positive: np.ndarray, fpr: float, resamples: int = 0, seed: int = 0,
              draws: np.ndarray | None = None) -> dict | None:
    """The ROC operating point at `fpr` of these rows: {tpr, tpr_ci, fpr (realised on these rows'
    humans, at most the target), threshold, humans, positives, reachable, unreachable (why, or
    None)}. None without both human and positive rows."""
    scores, positive = np.asarray(scores, dtype=float), np.asarray(positive, dtype=bool)
    human = scores[~positive]
    if len(human) == 0 or not positive.any():
        return None
    ordered = np.sort(human)[::-1]
    allowed = int(math.floor(fpr * len(human) + 1e-9))
    threshold = float(ordered[allowed]) if allowed < len(human) else float(ordered[-1]) - 1.0
    realised = float((human > threshold).mean())
    return {"threshold": threshold, "tpr": float((scores[positive] > threshold).mean()),
            "tpr_ci": roc_interval(scores, positive, fpr, resamples, seed, draws=draws), "fpr": realised,
            "humans": int(len(human)), "positives": int(positive.sum()), "reachable": realised > 0,
            "unreachable": None if realised > 0 else unreachable(human, fpr)}
