"""Threshold metrics of a detector that gives scores: AUROC of human against the rest, and the
true-positive rate at a fixed false-positive rate on human code, in two views named for what
they are.

The machine-score of a row is 1 - score_human (aicd.data.metrics.machine_score; T1: the machine
probability; T3: hybrid, adversarial and machine together, as the paper binarises it for
Fast-DetectGPT).

(a) `roc_at_fpr`, the ROC operating point: the TPR where the test humans' own FPR is at most the
    target, the threshold set on the test rows themselves (aicd.scoring.roc_point). This is the
    field's "TPR @ 1% FPR": RAID's evaluation (raid-bench's `run_evaluation`, its leaderboard)
    and an ROC curve read at that FPR. RAID tunes it per domain by default; the pooled point here
    is its `per_domain_tuning=False`, and each domain's own point is under by.domain.
    "Unreachable", with the reason, where no threshold gives an FPR above 0 and at most the
    target (few test humans, ties at the top score). tests/unit/scoring/test_raid_agreement.py checks
    both views and the AUROC against raid-bench's own code.
(b) `deployment_at_fpr`, the deployment view (ours): the threshold is set on the validation
    split's human rows, never on the test rows (the smallest t with at most FPR of them scoring
    above it), and applied to the test rows, where it gives a TPR (machine code caught) and a
    realised FPR (humans wrongly accused), which may be far from the nominal one. RAID computes
    the same TPR when it is given the validation humans to tune on. Two intervals each:
    `tpr_ci` with the threshold held fixed (test rows resampled), and `tpr_ci_with_threshold`,
    where the validation human rows are resampled too, so the threshold's own uncertainty is in
    it (the one the tables print).

A deployment threshold that cannot do what it is for says why (`unreliable`): fewer validation
human rows than 1 / FPR, the threshold at the largest validation score (ties at the top, as
saturated probabilities give), or ties at the threshold leaving the validation FPR under half
the nominal one. A realised test FPR over twice the nominal one (`transfers: false`) means the
threshold does not transfer to the test's humans; the same per subset, language and domain.
Where the validation file holds rows of the other classes too, their AUROC there
(`validation_auroc`) tells an inverted detector (below 0.5).

Per domain (`deployment_at_fpr_per_domain`): each domain's own threshold from its validation
human rows, where it has enough of them (1 / FPR at least); the others use the overall
threshold and are counted.

The AUROC interval is drawn, like macro-F1's, from multinomial cell counts: cells are (score
bin, human or not) with the scores in at most BINS quantile bins, so a million rows cost
milliseconds; the AUROC itself is exact."""

from __future__ import annotations

import numpy as np
import pandas as pd

from ..data.families import HUMAN
from ..data.metrics import auroc, auroc_of_counts, machine_scores, min_humans_quantile, quantile_threshold
from .bootstrap import LEVEL, RESAMPLES, _interval
from .roc_point import BINS, bin_draws, roc_point  # noqa: F401  (BINS: the bins the intervals draw over)

FPRS = (0.01, 0.05)
VIEWS = {"roc_at_fpr": "the ROC operating point: TPR where the test humans' own FPR is at most the target "
                       "(threshold set on the test rows; RAID's definition)",
         "deployment_at_fpr": "the deployment view: the threshold set on validation humans, applied to test, with "
                              "the FPR and TPR it realises there"}
PLACE_ORDER = {"all": 0, "domain": 1, "subset": 2, "language": 3}  # shift's likeliest causes first
TRANSFER_FACTOR = 2.0  # a realised test FPR above this many times the nominal one: the threshold does not transfer










def auroc_interval(scores: np.ndarray, positive: np.ndarray, resamples: int, seed: int,
                   level: float = LEVEL, draws: np.ndarray | None = None) -> list[float] | None:
    """`draws`: aicd.scoring.roc_point.bin_draws of these rows, shared with the ROC points' intervals."""
    if resamples < 1 or positive.all() or not positive.any():
        return None
    draws = bin_draws(scores, positive, resamples, seed) if draws is None else draws
    values = auroc_of_counts(draws[..., 1], draws[..., 0])
    return _interval(values[~np.isnan(values)], level) if (~np.isnan(values)).any() else None




def threshold_problem(human_scores: np.ndarray, threshold: float, fpr: float) -> dict | None:
    """Why a threshold set on these validation human scores cannot stand for the FPR, or None:
    {reason, short (for a table cell), why (the whole sentence)}."""
    human = np.asarray(human_scores, dtype=float)
    n, need = len(human), min_humans_quantile(fpr)
    if n < need:
        return {"reason": "few_validation_humans", "short": f"< {need} val. humans",
                "why": f"{n} validation human rows, fewer than 1 / FPR = {need}: no threshold can leave "
                       f"{fpr:.0%} of them above it (it falls on their largest score)"}
    above, tied = int((human > threshold).sum()), int((human == threshold).sum())
    realised = above / n
    if threshold >= human.max():
        return {"reason": "threshold_at_maximum", "short": f"ties at max ({tied})",
                "why": f"{tied} of {n} validation human rows tie at the largest score {threshold:.6g}, so the "
                       f"threshold sits at the top of the validation scores (saturated scores): a test row must "
                       f"score above every validation human to count, and the validation FPR is {realised:.2%}, "
                       f"not {fpr:.0%}"}
    if realised < fpr / 2:
        return {"reason": "ties", "short": f"ties ({tied} at t)",
                "why": f"{tied} of {n} validation human rows tie at the threshold {threshold:.6g}: the scores have "
                       f"too few distinct values for an FPR of {fpr:.0%} (validation FPR {realised:.2%})"}
    return None


def thresholds_resampled(human: np.ndarray, fpr: float, resamples: int, seed: int) -> np.ndarray | None:
    """threshold_at of `resamples` bootstrap resamples of the validation human scores. The
    threshold is their (n - allowed)-th smallest score, and the k-th smallest of n draws from the
    scores' empirical distribution is that distribution's quantile at the k-th smallest of n
    uniforms, a Beta(k, n - k + 1) draw: exact, in O(resamples) memory whatever n is."""
    s = np.sort(np.asarray(human, dtype=float))
    n = len(s)
    if resamples < 1 or n == 0:
        return None
    k = n - int(np.floor(fpr * n))
    u = np.random.default_rng(seed + 1).beta(k, n - k + 1, size=resamples)
    return s[np.clip(np.ceil(u * n).astype(int) - 1, 0, n - 1)]


def rates_with_threshold(scores: np.ndarray, positive: np.ndarray, thresholds: np.ndarray | None, seed: int,
                         level: float = LEVEL) -> dict:
    """Intervals of the TPR and the realised FPR with the threshold's own uncertainty: each
    resample takes a resampled threshold (thresholds_resampled) and counts resampled test rows
    above it (a binomial draw per class at that threshold, the test rows' share above it)."""
    if thresholds is None:
        return {"tpr_ci_with_threshold": None, "fpr_ci_with_threshold": None}
    rng = np.random.default_rng(seed + 2)
    out = {}
    for key, rows in (("tpr_ci_with_threshold", scores[positive]), ("fpr_ci_with_threshold", scores[~positive])):
        if len(rows) == 0:
            out[key] = None
            continue
        ordered = np.sort(rows)
        share = (len(ordered) - np.searchsorted(ordered, thresholds, side="right")) / len(ordered)
        out[key] = _interval(rng.binomial(len(ordered), share) / len(ordered), level)
    return out


def transfer(at: dict, fpr: float) -> bool | None:
    """Does the threshold hold its FPR on the test's humans (realised <= TRANSFER_FACTOR x nominal)?
    None where that is not measured, or measured on fewer than 1/FPR human rows: there a single
    false positive is already more than the nominal rate, so the group cannot tell."""
    if at.get("fpr") is None or (at.get("humans") or 0) < min_humans_quantile(fpr):
        return None
    return bool(at["fpr"] <= TRANSFER_FACTOR * fpr)


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
            out[str(domain)] = {"threshold": quantile_threshold(rows["machine_score"].to_numpy(), fpr),
                                "validation_human_rows": int(len(rows))}
    return out


def at_threshold(scores, positive, threshold: float, fpr: float, resampled: np.ndarray | None, resamples: int,
                 seed: int) -> dict:
    """TPR and realised FPR at one threshold, both intervals (`resampled`: the threshold's
    bootstrap draws), and whether it transfers."""
    at = {"threshold": threshold, **rates(scores > threshold, positive, resamples, seed),
          **rates_with_threshold(scores, positive, resampled, seed)}
    at["transfers"] = transfer(at, fpr)
    return at


def shared_draws(scores, positive, resamples: int, seed: int) -> np.ndarray | None:
    """One set of bootstrap draws of these rows for the AUROC's and the ROC points' intervals."""
    both = bool(positive.any()) and not bool(positive.all())
    return bin_draws(scores, positive, resamples, seed) if resamples >= 1 and both else None


def roc_points(scores, positive, fprs, resamples: int, seed: int, draws=None) -> dict | None:
    """FPR key -> the ROC operating point there (aicd.scoring.roc_point); None without both classes."""
    points = {f"{fpr:g}": roc_point(scores, positive, fpr, resamples, seed, draws) for fpr in fprs}
    return None if all(v is None for v in points.values()) else points


def _group_metrics(scores, positive, fprs, thresholds: dict, resampled: dict, resamples: int, seed: int) -> dict:
    draws = shared_draws(scores, positive, resamples, seed)
    out = {"n": int(len(scores)), "auroc": auroc(scores, positive),
           "auroc_ci": auroc_interval(scores, positive, resamples, seed, draws=draws),
           "roc_at_fpr": roc_points(scores, positive, fprs, resamples, seed, draws)}
    out["deployment_at_fpr"] = {key: at_threshold(scores, positive, t, float(key), resampled.get(key), resamples,
                                                  seed) for key, t in thresholds.items()}
    return out


def validation_split(validation: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame | None]:
    """(human rows, every row with its gold) of a validation-scores table; a table without a
    gold column holds human rows only (an older file, or one made elsewhere)."""
    if "gold" not in validation.columns:
        return validation, None
    gold = validation["gold"].astype(str)
    return validation[gold == HUMAN], validation


def deployment(result: dict, test: pd.DataFrame, scores, positive, validation: pd.DataFrame, fprs, resamples: int,
               seed: int) -> tuple[dict, dict]:
    """(b) The deployment view into `result`: thresholds set on the validation humans, applied to
    the test rows; returns (FPR key -> threshold, FPR key -> its bootstrap draws) for the groups."""
    thresholds, resampled = {}, {}
    scored = validation["machine_score"].notna()
    if not scored.all():  # a row without a score cannot place a threshold: counted, left out
        result["validation_rows_without_score"] = int((~scored).sum())
        validation = validation[scored]
    validation, every = validation_split(validation)
    if every is not None:
        val_positive = every["gold"].astype(str).to_numpy() != HUMAN
        result["validation_auroc"] = auroc(every["machine_score"].to_numpy(dtype=float), val_positive)
        result["validation_rows"] = {"human": int((~val_positive).sum()), "other": int(val_positive.sum())}
        result["inverted"] = None if result["validation_auroc"] is None else bool(result["validation_auroc"] < 0.5)
    human = validation["machine_score"].to_numpy(dtype=float)
    result["validation_human_rows"] = int(len(human))
    result["deployment_at_fpr"], result["deployment_at_fpr_per_domain"] = {}, {}
    for fpr in fprs:
        key = f"{fpr:g}"
        if len(human) == 0:
            result["deployment_at_fpr"][key] = {"threshold": None, "unreliable": {
                "reason": "no_validation_humans", "short": "no val. humans",
                "why": "the validation rows hold no human row: no threshold can be set"}}
            continue
        thresholds[key] = quantile_threshold(human, fpr)
        resampled[key] = thresholds_resampled(human, fpr, resamples, seed)  # once: every group shares it
        at = at_threshold(scores, positive, thresholds[key], fpr, resampled[key], resamples, seed)
        at["validation_fpr"] = float((human > thresholds[key]).mean())
        at["unreliable"] = threshold_problem(human, thresholds[key], fpr)
        result["deployment_at_fpr"][key] = at
        domains = per_domain_thresholds(validation, fpr)
        if "domain" in test.columns and domains:
            own = test["domain"].astype(str).map(lambda d, domains=domains: domains.get(d, {}).get("threshold"))
            per_row = own.fillna(thresholds[key]).to_numpy(dtype=float)
            result["deployment_at_fpr_per_domain"][key] = {
                **rates(scores > per_row, positive, resamples, seed), "domains": domains,
                "overall_threshold_rows": int(own.isna().sum())}
    return thresholds, resampled


def threshold_metrics(test: pd.DataFrame, validation: pd.DataFrame | None, fprs=FPRS,
                      breakdown_columns=(), resamples: int = RESAMPLES, seed: int = 0) -> dict:
    """test: gold and score_<class> per row (plus breakdown columns); validation: machine_score
    (and domain, and gold where it holds rows of other classes) of validation rows. Says why
    when it cannot."""
    scores = machine_scores(test)
    if scores is None:
        return {"available": False, "why": f"the detector gives no score for the {HUMAN!r} class "
                                           "(labels only, or a task without human rows)"}
    positive = test["gold"].astype(str).to_numpy() != HUMAN
    keep = ~np.isnan(scores)
    result = {"available": True, "positive": f"not {HUMAN}", "score": f"1 - score_{HUMAN}", "views": VIEWS,
              "unscored_rows": int((~keep).sum()), "transfer_factor": TRANSFER_FACTOR}
    test, scores, positive = test[keep], scores[keep], positive[keep]
    draws = shared_draws(scores, positive, resamples, seed)
    result["auroc"] = auroc(scores, positive)
    result["auroc_ci"] = auroc_interval(scores, positive, resamples, seed, draws=draws)
    result["roc_at_fpr"] = roc_points(scores, positive, fprs, resamples, seed, draws)
    thresholds, resampled = {}, {}
    if validation is None or validation.empty or validation["machine_score"].isna().all():
        result["deployment_at_fpr"] = None
        result["why_no_deployment"] = "no validation scores of human rows to set a threshold on"
    else:
        thresholds, resampled = deployment(result, test, scores, positive, validation, fprs, resamples, seed)
    result["by"] = {}
    for col in breakdown_columns:
        if col not in test.columns or not test[col].notna().any():
            continue
        values = test[col].to_numpy(dtype=object)
        result["by"][col] = {
            str(v): _group_metrics(scores[values == v], positive[values == v], fprs, thresholds, resampled, resamples,
                                   seed)
            for v in sorted({v for v in values if v is not None and v == v}, key=str)}
    result["not_transferred"] = not_transferred(result)
    return result


def not_transferred(result: dict) -> dict[str, list[dict]]:
    """FPR -> the subsets, languages, domains (and the whole test split) whose realised FPR is
    over TRANSFER_FACTOR x the nominal one, with that FPR and their human rows: the whole split,
    then domains, subsets and languages, each worst first."""
    out = {}
    for key, at in (result.get("deployment_at_fpr") or {}).items():
        found = []
        if at.get("transfers") is False:
            found.append({"by": "all", "value": "all test rows", "fpr": at["fpr"], "humans": at["humans"]})
        for col, groups in (result.get("by") or {}).items():
            if col == "generator":
                continue  # its only human group is every human row: "all" says it
            for value, g in groups.items():
                entry = (g.get("deployment_at_fpr") or {}).get(key) or {}
                if entry.get("transfers") is False:
                    found.append({"by": col, "value": value, "fpr": entry["fpr"], "humans": entry["humans"]})
        if found:
            out[key] = sorted(found, key=lambda p: (PLACE_ORDER.get(p["by"], len(PLACE_ORDER)), -p["fpr"]))
    return out
