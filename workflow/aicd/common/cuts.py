"""The binary cut of a score that maximises macro-F1 (machine against human), computed for every
cut at once from sorted counts: the validation threshold of the fused detector and of the
leave-one-collection-out protocol (aicd.scoring.loco), and the oracle threshold there. Flag a row
as machine when its score is above the threshold."""

from __future__ import annotations

import numpy as np


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
    """(the threshold maximising macro-F1, that macro-F1); the lowest such threshold on ties."""
    scores, positive = np.asarray(scores, dtype=float), np.asarray(positive, dtype=bool)
    cuts, f1 = cut_points(scores, positive)
    best = int(np.argmax(f1))
    return float(cuts[best]), float(f1[best])
