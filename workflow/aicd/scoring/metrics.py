"""Metrics on label names. Macro-F1 averages per-class F1 over the classes that occur in
gold or predictions (scikit-learn's and the SemEval-2026 Task 13 scorer's convention); a
class never predicted has F1 0. Every macro-F1 carries `macro_f1_ci`, a seeded percentile
bootstrap 95% interval [lo, hi] over the test rows (aicd.scoring.bootstrap)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ..data.schema import ABSTAIN  # never a class, always wrong
from .bootstrap import RESAMPLES, encode, macro_f1_interval, subset_metric


def class_order(gold: Sequence, pred: Sequence, preferred: Sequence | None = None) -> list:
    present = (set(gold) | set(pred)) - {ABSTAIN}
    first = [c for c in (preferred or []) if c in present]
    return first + sorted(present - set(first), key=str)


def classification_scores(gold: Sequence, pred: Sequence, preferred_order: Sequence | None = None,
                          resamples: int = RESAMPLES, seed: int = 0) -> dict:
    gold = np.asarray(gold, dtype=object)
    pred = np.asarray(pred, dtype=object)
    if len(gold) != len(pred):
        raise ValueError(f"{len(gold)} gold labels but {len(pred)} predictions")
    if len(gold) == 0:
        return {"n": 0, "macro_f1": None, "macro_f1_ci": None, "accuracy": None, "labels": [], "per_class": {}}
    labels = class_order(gold, pred, preferred_order)
    # Everything from one confusion count (np.bincount over encoded labels; scikit-learn's
    # metrics on object arrays take over a second per 100,000 rows). The extra last column
    # holds abstentions: they lower their gold class's recall and add no class of their own.
    k = len(labels)
    full = np.bincount(encode(gold, labels) * (k + 1) + encode(pred, labels),
                       minlength=k * (k + 1)).reshape(k, k + 1)
    counts = full[:, :k]
    tp = np.diagonal(counts).astype(float)
    s = full.sum(axis=1)
    predicted = counts.sum(axis=0)
    p = np.divide(tp, predicted, out=np.zeros(k), where=predicted > 0)
    r = np.divide(tp, s, out=np.zeros(k), where=s > 0)
    f = np.divide(2 * tp, s + predicted, out=np.zeros(k), where=(s + predicted) > 0)
    row_sums = counts.sum(axis=1, keepdims=True)
    normalised = np.divide(counts, row_sums, out=np.zeros(counts.shape, dtype=float), where=row_sums > 0)
    return {
        "n": int(len(gold)),
        "macro_f1": float(np.mean(f)),
        "macro_f1_ci": macro_f1_interval(gold, pred, labels, resamples, seed) if resamples else None,
        "accuracy": float(np.mean(gold == pred)),
        "abstentions": int(np.sum(pred == ABSTAIN)),
        "labels": [str(c) for c in labels],
        "per_class": {
            str(c): {"precision": float(p[i]), "recall": float(r[i]), "f1": float(f[i]), "support": int(s[i])}
            for i, c in enumerate(labels)
        },
        "confusion": {"counts": counts.tolist(), "row_normalized": normalised.round(6).tolist()},
    }


def breakdown(gold, pred, groups, preferred_order=None, resamples: int = RESAMPLES, seed: int = 0,
              task_labels: Sequence | None = None) -> dict:
    """Scores per value of a grouping column (rows with a missing value are left out); each
    group says `one_class` (the class) when its gold labels hold only one. With the task's
    labels, each group also gets `table_metric`: what Tables 5-7 print for it, with its
    interval (aicd.scoring.bootstrap.subset_metric)."""
    gold = np.asarray(gold, dtype=object)
    pred = np.asarray(pred, dtype=object)
    groups = np.asarray(groups, dtype=object)
    out = {}
    for value in sorted({g for g in groups if g is not None and g == g}, key=str):
        mask = groups == value
        scores = classification_scores(gold[mask], pred[mask], preferred_order, resamples, seed)
        scores.pop("confusion", None)
        present = sorted({str(g) for g in gold[mask]})
        # a group with one gold class: its macro-F1 scores that class alone (and any predicted)
        scores["one_class"] = present[0] if len(present) == 1 else None
        if task_labels:
            scores["table_metric"] = subset_metric(gold[mask], pred[mask], list(task_labels), resamples, seed)
        out[str(value)] = scores
    return out
