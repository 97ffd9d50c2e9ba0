"""Bootstrap confidence intervals for macro-F1, and the paired bootstrap test of two detectors.

Macro-F1 depends on the rows only through the confusion matrix, so resampling rows with
replacement is the same as drawing the confusion matrix's cell counts from a multinomial with
n trials and the observed cell frequencies (the counts a np.bincount over the resampled row
indices would give, with the same distribution). Drawing the B x cells counts directly costs
O(B x cells) instead of O(B x n): a 100,000-row test set takes milliseconds
(benchmarks/bootstrap_ci.py). The paired test draws the joint cells (gold, pred A, pred B), so
both detectors see the same resampled rows."""

from __future__ import annotations

import numpy as np

RESAMPLES = 1000
LEVEL = 0.95


def encode(values, labels: list) -> np.ndarray:
    """Index of each value in labels; anything else (an abstention) gets len(labels)."""
    index = {c: i for i, c in enumerate(labels)}
    return np.fromiter((index.get(v, len(labels)) for v in values), dtype=np.int64, count=len(values))


def macro_f1_of_counts(confusion: np.ndarray, every_class: bool = False) -> np.ndarray:
    """Macro-F1 of (..., k, k+1) confusion counts (gold rows, predicted columns; the last column
    is abstentions, never a class): F1_c = 2 tp / (gold_c + pred_c), averaged over the classes
    that occur in gold or predictions (gold_c + pred_c > 0), as aicd.scoring.metrics does. A
    resample that happens to hold no row of a rare class is scored on the classes it holds,
    not with an F1 of 0 for the absent one (which would pull the interval down). every_class:
    average over all k classes instead, an absent one counting 0 (Tables 5-7's subsets)."""
    k = confusion.shape[-2]
    tp = np.diagonal(confusion[..., :k], axis1=-2, axis2=-1)
    denominator = confusion.sum(axis=-1) + confusion[..., :k].sum(axis=-2)
    present = denominator > 0
    f1 = np.divide(2.0 * tp, denominator, out=np.zeros(tp.shape, dtype=float), where=present)
    n_present = np.full(present.shape[:-1], k) if every_class else present.sum(axis=-1)
    return np.divide(f1.sum(axis=-1), n_present, out=np.zeros(n_present.shape, dtype=float), where=n_present > 0)


def _encode_gold(gold, labels: list, resamples: int) -> np.ndarray:
    """Gold as label indices; every gold value must be one of labels (an abstention or an
    unknown value in gold would fall outside the confusion counts)."""
    if resamples < 1:
        raise ValueError(f"the bootstrap needs at least one resample, got {resamples}")
    g = encode(gold, labels)
    if (g == len(labels)).any():
        outside = sorted({str(v) for v, i in zip(gold, g) if i == len(labels)})
        raise ValueError(f"gold labels {outside} are not among the labels {list(labels)}")
    return g


def _draw(cell_counts: np.ndarray, resamples: int, seed: int) -> np.ndarray:
    n = int(cell_counts.sum())
    rng = np.random.default_rng(seed)
    return rng.multinomial(n, cell_counts / n, size=resamples)


def _interval(values: np.ndarray, level: float) -> list[float]:
    lo, hi = np.quantile(values, [(1 - level) / 2, 1 - (1 - level) / 2])
    return [float(lo), float(hi)]


def macro_f1_interval(gold, pred, labels: list, resamples: int = RESAMPLES, seed: int = 0,
                      level: float = LEVEL) -> list[float] | None:
    """Percentile bootstrap interval [lo, hi] of macro-F1 (None for no rows). labels: every class
    in gold or predictions; each resample averages over those it holds (macro_f1_of_counts)."""
    k = len(labels)
    if len(gold) == 0 or k == 0:
        return None
    cells = _encode_gold(gold, labels, resamples) * (k + 1) + encode(pred, labels)
    counts = np.bincount(cells, minlength=k * (k + 1))
    draws = _draw(counts, resamples, seed).reshape(resamples, k, k + 1)
    return _interval(macro_f1_of_counts(draws), level)


def subset_metric(gold, pred, labels: list, resamples: int = RESAMPLES, seed: int = 0, level: float = LEVEL) -> dict:
    """What Tables 5-7 print for one detector on one subset, with its bootstrap interval: the
    macro-F1 over the task's whole label set (a class absent from the subset's gold and
    predictions counts 0), or, where the subset's gold labels hold one class, that class's
    recall (its true name: a macro-F1 over one class is no discrimination score)."""
    gold, pred = np.asarray(gold, dtype=object), np.asarray(pred, dtype=object)
    present = sorted({str(g) for g in gold})
    if len(gold) == 0:
        return {"metric": None, "value": None, "ci": None}
    if len(present) == 1:
        hits = int(np.sum(pred.astype(str) == present[0]))
        ci = _interval(np.random.default_rng(seed).binomial(len(gold), hits / len(gold), resamples) / len(gold),
                       level) if resamples else None
        return {"metric": f"recall of {present[0]}", "one_class": present[0], "value": hits / len(gold), "ci": ci}
    k = len(labels)
    cells = _encode_gold(gold, labels, max(resamples, 1)) * (k + 1) + encode(pred, labels)
    counts = np.bincount(cells, minlength=k * (k + 1))
    value = float(macro_f1_of_counts(counts.reshape(k, k + 1), every_class=True))
    ci = _interval(macro_f1_of_counts(_draw(counts, resamples, seed).reshape(resamples, k, k + 1), every_class=True),
                   level) if resamples else None
    return {"metric": "macro-F1 over the task's labels", "one_class": None, "value": value, "ci": ci}


def paired_test(gold, pred_a, pred_b, labels: list, resamples: int = RESAMPLES, seed: int = 0,
                level: float = LEVEL) -> dict:
    """Macro-F1 of A minus B on the same rows: the observed difference, its bootstrap interval,
    and a two-sided p-value, both from the same resamples and so in agreement: p is twice the
    share of resampled differences on the far side of 0 (ties count on both sides), and the
    interval is the k-th smallest and k-th largest of the B sorted differences with k =
    floor((1 - level) / 2 * B) (0-based: symmetric order statistics), so it excludes 0 exactly when
    at most k differences lie on one side of 0, that is when p <= 1 - level. With B resamples,
    p = 0 means below 1 / B."""
    k = len(labels)
    g, a, b = _encode_gold(gold, labels, resamples), encode(pred_a, labels), encode(pred_b, labels)
    cells = (g * (k + 1) + a) * (k + 1) + b
    counts = np.bincount(cells, minlength=k * (k + 1) ** 2)
    joint = counts.reshape(k, k + 1, k + 1)
    observed_a, observed_b = macro_f1_of_counts(joint.sum(axis=2)), macro_f1_of_counts(joint.sum(axis=1))
    draws = _draw(counts, resamples, seed).reshape(resamples, k, k + 1, k + 1)
    diff = macro_f1_of_counts(draws.sum(axis=3)) - macro_f1_of_counts(draws.sum(axis=2))
    lo, hi, p_value = interval_and_p(diff, level)
    return {"n": int(len(g)), "macro_f1_a": float(observed_a), "macro_f1_b": float(observed_b),
            "difference": float(observed_a - observed_b), "difference_ci": [float(lo), float(hi)],
            "p_value": float(p_value), "resamples": int(resamples), "seed": int(seed), "level": level}


def interval_and_p(diff: np.ndarray, level: float = LEVEL) -> tuple[float, float, float]:
    """(lo, hi, p) of resampled differences, in agreement (paired_test's docstring)."""
    resamples = len(diff)
    below, above = int(np.sum(diff <= 0)), int(np.sum(diff >= 0))
    ordered = np.sort(diff)
    k = int(np.floor((1 - level) / 2 * resamples + 1e-9))
    return float(ordered[k]), float(ordered[resamples - 1 - k]), min(1.0, 2 * min(below, above) / resamples)


def describe(resamples: int, seed: int, level: float = LEVEL) -> dict:
    return {"method": "percentile bootstrap over test rows (multinomial confusion counts)",
            "resamples": int(resamples), "seed": int(seed), "level": level}

