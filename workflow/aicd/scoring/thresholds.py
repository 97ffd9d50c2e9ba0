"""Threshold metrics of a detector that gives scores: AUROC of human against the rest, and the
true-positive rate at a fixed false-positive rate on human code, RAID's way.

The machine-score of a row is 1 - score_human (T1: the machine probability; T3: hybrid,
adversarial and machine together, as the paper binarises it for Fast-DetectGPT). The
threshold for an FPR is set on the validation split's human rows, never on the test rows: the
smallest t with at most FPR of them scoring above it. On the test rows it gives a TPR (machine
code caught) and a realised FPR (humans wrongly accused), each with a percentile bootstrap
interval over the test rows (the threshold held fixed). Per domain: each domain's own
threshold from its validation human rows, where it has enough of them (1 / FPR at least);
the others use the overall threshold and are counted.

The AUROC interval is drawn, like macro-F1's, from multinomial cell counts: cells are (score
bin, human or not) with the scores in at most BINS quantile bins, so a million rows cost
milliseconds; the AUROC itself is exact."""

from __future__ import annotations

import numpy as np
import pandas as pd

from .bootstrap import LEVEL, RESAMPLES, _interval

from ..families import HUMAN
FPRS = (0.01, 0.05)
BINS = 1000


def machine_scores(table: pd.DataFrame) -> np.ndarray | None:
    """1 - score_human per row, or None when the detector gives no score for the human class."""
    column = f"score_{HUMAN}"
    if column not in table.columns or table[column].isna().all():
        return None
    return 1.0 - table[column].to_numpy(dtype=float)


def auroc(scores: np.ndarray, positive: np.ndarray) -> float | None:
    """Mann-Whitney AUROC (ties count a half); None without both classes."""
    from scipy.stats import rankdata

    n_pos, n_neg = int(positive.sum()), int((~positive).sum())
    if n_pos == 0 or n_neg == 0:
        return None
    ranks = rankdata(scores)
    return float((ranks[positive].sum() - n_pos * (n_pos + 1) / 2) / (n_pos * n_neg))


def _auroc_of_counts(pos: np.ndarray, neg: np.ndarray) -> np.ndarray:
    """AUROC of (..., bins) counts of positives and negatives per ascending score bin."""
    below = np.cumsum(neg, axis=-1) - neg  # negatives in lower bins
    wins = (pos * (below + neg / 2.0)).sum(axis=-1)
    total = pos.sum(axis=-1) * neg.sum(axis=-1)
    return np.divide(wins, total, out=np.full(total.shape, np.nan), where=total > 0)


def auroc_interval(scores: np.ndarray, positive: np.ndarray, resamples: int, seed: int,
                   level: float = LEVEL) -> list[float] | None:
    if resamples < 1 or positive.all() or not positive.any():
        return None
    edges = np.unique(np.quantile(scores, np.linspace(0, 1, BINS + 1)[1:-1]))
    bins = np.searchsorted(edges, scores, side="right") if len(np.unique(scores)) > BINS \
        else np.unique(scores, return_inverse=True)[1]
    k = int(bins.max()) + 1
    counts = np.bincount(bins * 2 + positive.astype(int), minlength=2 * k)
    rng = np.random.default_rng(seed)
    draws = rng.multinomial(int(counts.sum()), counts / counts.sum(), size=resamples).reshape(resamples, k, 2)
    values = _auroc_of_counts(draws[..., 1], draws[..., 0])
    return _interval(values[~np.isnan(values)], level) if (~np.isnan(values)).any() else None


def threshold_at(human_scores: np.ndarray, fpr: float) -> float | None:
    """The smallest observed t with at most fpr of human_scores above it (None for no rows)."""
    s = np.sort(np.asarray(human_scores, dtype=float))
    if len(s) == 0:
        return None
    allowed = int(np.floor(fpr * len(s)))  # human rows that may score above t
    return float(s[len(s) - 1 - allowed]) if allowed < len(s) else float(s[0]) - 1.0


def rates(flagged: np.ndarray, positive: np.ndarray, resamples: int, seed: int, level: float = LEVEL) -> dict:
    """TPR (flagged share of positives) and FPR (flagged share of human rows), with intervals
    from multinomial draws of the four (flagged, positive) cells."""
    cells = np.bincount(flagged.astype(int) * 2 + positive.astype(int), minlength=4)  # (f,p): 00 01 10 11
    n_pos, n_neg = int(cells[1] + cells[3]), int(cells[0] + cells[2])
    out = {"tpr": float(cells[3] / n_pos) if n_pos else None, "fpr": float(cells[2] / n_neg) if n_neg else None,
           "positives": n_pos, "humans": n_neg, "tpr_ci": None, "fpr_ci": None}
    if resamples >= 1 and cells.sum():
        draws = np.random.default_rng(seed).multinomial(int(cells.sum()), cells / cells.sum(), size=resamples)
        pos, neg = draws[:, 1] + draws[:, 3], draws[:, 0] + draws[:, 2]
        if n_pos:
            out["tpr_ci"] = _interval(draws[pos > 0, 3] / pos[pos > 0], level)
        if n_neg:
            out["fpr_ci"] = _interval(draws[neg > 0, 2] / neg[neg > 0], level)
    return out


def per_domain_thresholds(validation: pd.DataFrame, fpr: float) -> dict[str, dict]:
    """domain -> its threshold where its validation human rows number 1 / fpr at least."""
    out = {}
    if "domain" not in validation.columns:
        return out
    need = int(np.ceil(1.0 / fpr))
    for domain, rows in validation.groupby("domain", dropna=True):
        if len(rows) >= need:
            out[str(domain)] = {"threshold": threshold_at(rows["machine_score"].to_numpy(), fpr),
                                "validation_human_rows": int(len(rows))}
    return out


def _group_metrics(scores, positive, thresholds: dict, resamples: int, seed: int) -> dict:
    out = {"n": int(len(scores)), "auroc": auroc(scores, positive),
           "auroc_ci": auroc_interval(scores, positive, resamples, seed)}
    out["at_fpr"] = {key: rates(scores > t, positive, resamples, seed) for key, t in thresholds.items()}
    return out


def threshold_metrics(test: pd.DataFrame, validation: pd.DataFrame | None, fprs=FPRS,
                      breakdown_columns=(), resamples: int = RESAMPLES, seed: int = 0) -> dict:
    """test: gold and score_<class> per row (plus breakdown columns); validation: the
    validation split's human rows with machine_score (and domain). Says why when it cannot."""
    scores = machine_scores(test)
    if scores is None:
        return {"available": False, "why": f"the detector gives no score for the {HUMAN!r} class "
                                           "(labels only, or a task without human rows)"}
    positive = test["gold"].astype(str).to_numpy() != HUMAN
    keep = ~np.isnan(scores)
    result = {"available": True, "positive": f"not {HUMAN}", "score": f"1 - score_{HUMAN}",
              "unscored_rows": int((~keep).sum())}
    test, scores, positive = test[keep], scores[keep], positive[keep]
    result["auroc"] = auroc(scores, positive)
    result["auroc_ci"] = auroc_interval(scores, positive, resamples, seed)
    thresholds = {}
    if validation is None or validation.empty or validation["machine_score"].isna().all():
        result["at_fpr"] = None
        result["why_no_fpr"] = "no validation scores of human rows to set a threshold on"
    else:
        scored = validation["machine_score"].notna()
        if not scored.all():  # a row without a score cannot place a threshold: counted, left out
            result["validation_rows_without_score"] = int((~scored).sum())
            validation = validation[scored]
        human = validation["machine_score"].to_numpy(dtype=float)
        result["validation_human_rows"] = int(len(human))
        result["at_fpr"], result["at_fpr_per_domain"] = {}, {}
        for fpr in fprs:
            key = f"{fpr:g}"
            thresholds[key] = threshold_at(human, fpr)
            result["at_fpr"][key] = {"threshold": thresholds[key], **rates(scores > thresholds[key], positive,
                                                                            resamples, seed)}
            domains = per_domain_thresholds(validation, fpr)
            if "domain" in test.columns and domains:
                own = test["domain"].astype(str).map(lambda d: domains.get(d, {}).get("threshold"))
                per_row = own.fillna(thresholds[key]).to_numpy(dtype=float)
                result["at_fpr_per_domain"][key] = {
                    **rates(scores > per_row, positive, resamples, seed), "domains": domains,
                    "overall_threshold_rows": int(own.isna().sum())}
    result["by"] = {}
    for col in breakdown_columns:
        if col not in test.columns or not test[col].notna().any():
            continue
        values = test[col].to_numpy(dtype=object)
        result["by"][col] = {
            str(v): _group_metrics(scores[values == v], positive[values == v], thresholds, resamples, seed)
            for v in sorted({v for v in values if v is not None and v == v}, key=str)}
    return result
