"""Does a detector know when it does not know? From its score_<class> columns: the expected
calibration error (10 equal-width bins of the probability of the label it gave; only where the
scores are probabilities) and macro-F1 when it labels only its most confident rows (the top 80% and 50%
by margin, the top score minus the runner-up; scores of any scale)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from .metrics import classification_scores

COVERAGES = (0.8, 0.5)
BINS = 10


def score_matrix(table: pd.DataFrame) -> tuple[list[str], np.ndarray] | None:
    columns = [c for c in table.columns if str(c).startswith("score_")]
    if len(columns) < 2:
        return None
    scores = table[columns].to_numpy(dtype=float)
    if np.isnan(scores).any():
        return None
    return [c[len("score_"):] for c in columns], scores


def expected_calibration_error(top: np.ndarray, correct: np.ndarray, bins: int = BINS) -> float:
    edges = np.linspace(0, 1, bins + 1)
    which = np.clip(np.digitize(top, edges[1:-1], right=True), 0, bins - 1)
    ece = 0.0
    for b in range(bins):
        in_bin = which == b
        if in_bin.any():
            ece += in_bin.mean() * abs(correct[in_bin].mean() - top[in_bin].mean())
    return float(ece)


def confidence_metrics(table: pd.DataFrame, labels=None, coverages=COVERAGES) -> dict:
    """table: gold, pred and score_<class> per row."""
    found = score_matrix(table)
    if found is None:
        return {"available": False, "why": "the detector gives no score per class"}
    classes, scores = found
    order = np.sort(scores, axis=1)
    margin = order[:, -1] - order[:, -2]
    gold, pred = table["gold"].to_numpy(dtype=object), table["pred"].to_numpy(dtype=object)
    out = {"available": True, "confidence": "top score minus the runner-up"}
    probabilities = bool((scores >= -1e-6).all() and (scores <= 1 + 1e-6).all()
                         and np.allclose(scores.sum(axis=1), 1, atol=1e-3))
    if probabilities:  # the probability of the label given (a thresholded kind's is not always the top one)
        index = {c: j for j, c in enumerate(classes)}
        given = np.array([scores[i, index[str(p)]] if str(p) in index else order[i, -1] for i, p in enumerate(pred)])
        out["ece"] = expected_calibration_error(given, (gold == pred).astype(float))
    else:
        out["ece"], out["why_no_ece"] = None, "the scores are not probabilities (e.g. an SVM's margins)"
    ranked = np.argsort(-margin, kind="stable")
    out["macro_f1_at_coverage"] = {}
    for coverage in coverages:
        keep = ranked[: max(1, int(round(coverage * len(ranked))))]
        out["macro_f1_at_coverage"][f"{coverage:g}"] = classification_scores(gold[keep], pred[keep], labels,
                                                                           resamples=0)["macro_f1"]
    return out
