"""A detector's output checked in the job that makes it: the right number of labels, labels
from the task's set, one score per class and row, no NaN, and probabilities in [0, 1] where
the detector's score kind promises them. A plug-in that returns 0/1 instead of the task's label
names fails here, naming itself, the method and an example row, not later in scoring."""

from __future__ import annotations

from collections import Counter

import numpy as np

from ..common.errors import AicdError
from ..data.schema import ABSTAIN
from ..data.scores import SCORE_KINDS

PROBABILITY_SLACK = 1e-4  # float32 rounding of a probability


def describe(spec: dict) -> str:
    """'detector kind python (object my.pkg:Detector)': who made the output."""
    params = spec.get("params") or {}
    what = next((f"{k} {params[k]}" for k in ("object", "score_function", "file", "model") if params.get(k)), "")
    return f"detector kind {spec.get('kind')}" + (f" ({what})" if what else "")


def _example(ids, index: int) -> str:
    return f"row {index}" + (f" (id {ids[index]!r})" if ids is not None and index < len(ids) else "")


def check_labels(who: str, pred, n_rows: int, allowed: set, ids=None) -> None:
    pred = np.asarray(pred, dtype=object).reshape(-1)
    if len(pred) != n_rows:
        raise AicdError(f"{who}: predict returned {len(pred)} labels for {n_rows} rows: give one label per row")
    outside = [i for i, v in enumerate(pred) if v != ABSTAIN and v not in allowed]
    if outside:
        counts = Counter(repr(pred[i]) for i in outside)
        named = ", ".join(f"{v} ({n} rows)" for v, n in counts.most_common(5))
        first = outside[0]
        raise AicdError(f"{who}: predict returned labels outside the task's label set {sorted(map(str, allowed))}: "
                        f"{named}; e.g. {_example(ids, first)} got {pred[first]!r}. Return the task's label names "
                        "(the labels fit was given), not indices or other names")


def check_scores(who: str, scores, n_rows: int, classes, kind: str, ids=None) -> None:
    if scores is None:
        return
    if kind not in SCORE_KINDS:
        raise AicdError(f"{who}: score_kind {kind!r} is not one of {', '.join(SCORE_KINDS)}")
    try:
        scores = np.asarray(scores, dtype=float)
    except (TypeError, ValueError) as err:
        raise AicdError(f"{who}: predict_scores returned values that are not numbers ({err})") from None
    expected = (n_rows, len(classes))
    if scores.shape != expected:
        raise AicdError(f"{who}: predict_scores returned shape {scores.shape}, expected {expected} "
                        f"(one row per input, one column per class of classes_ {list(map(str, classes))})")
    nan = np.flatnonzero(np.isnan(scores).any(axis=1))
    if len(nan):
        raise AicdError(f"{who}: predict_scores returned NaN for {len(nan)} rows, e.g. {_example(ids, int(nan[0]))}: "
                        "give a number for every row and class")
    if kind == "probability":
        bad = np.flatnonzero(((scores < -PROBABILITY_SLACK) | (scores > 1 + PROBABILITY_SLACK)).any(axis=1))
        if len(bad):
            first = int(bad[0])
            raise AicdError(f"{who}: predict_scores promises probabilities (score_kind probability) but {len(bad)} "
                            f"rows have scores outside [0, 1], e.g. {_example(ids, first)}: "
                            f"{np.round(scores[first], 4).tolist()}; return probabilities, or declare "
                            "score_kind = 'score' on the detector")
        sums = scores.sum(axis=1)
        off = np.flatnonzero(np.abs(sums - 1.0) > len(classes) * PROBABILITY_SLACK * 10)
        if len(off):
            first = int(off[0])
            raise AicdError(f"{who}: predict_scores promises probabilities (score_kind probability) but {len(off)} "
                            f"rows do not sum to one, e.g. {_example(ids, first)} sums to {sums[first]:.4f}; "
                            "normalise them, or declare score_kind = 'score' on the detector")
