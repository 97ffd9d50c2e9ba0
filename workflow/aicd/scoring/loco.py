"""What the leave-one-collection-out protocol (aicd.splits.loco) reads of one detector on one
held-out collection, and the mean and worst over collections, each with a bootstrap interval.

Per held-out collection, from the detector's machine scores (1 - score_human) of its test rows
and of its validation rows (from the *training* collections):

- `auroc`: machine against human, with the percentile interval of resampled rows
  (aicd.scoring.thresholds);
- `val_threshold`: the cut that maximises macro-F1 on the validation rows (every validation human
  and as many machine rows: the detect job's validation scores), the same rule for every
  detector; at it, on the held-out rows, `macro_f1` (with its interval) and `human_fpr` (the
  share of its human programs flagged as machine);
- `oracle_macro_f1`: the best macro-F1 any threshold gives on the held-out rows (a bound, not a
  result: the threshold is read off the test rows);
- `calibrated`: a seeded half of the collection's *human* rows sets a split-conformal threshold
  at the target FPR (aicd.scoring.calibration; no machine row, no label of the other half), and
  the other half gives the realised FPR, with its one-sided 95% Clopper-Pearson bound; the TPR is
  read on every machine row. None with fewer reference humans than the target allows (19 at 5%);
- `calibrated_confident`: the same half, the threshold held with probability LOCO_FPR_CONFIDENCE
  over the half drawn (a higher order statistic; None below 59 humans at 5% and 0.95);
- in both, `halvings`: the same rule over HALVINGS seeded halvings of the same humans, since one
  half is one draw of the reference a user might hold (with 100 measuring humans one program is a
  point): the mean and the highest realised FPR, how many halvings passed the target by more than
  MISS_MARGIN, and the mean TPR;
- `default_reference` (added by aicd.report.loco from the calibrate job's test view): no row of
  the collection sets the threshold; the calibrate job's reference (human code the fold's
  detector did not train on, not of the held-out collection) sets it per language by `aicd
  detect`'s rule, and every human row of the collection gives the realised FPR.

Flag a row as machine when its score is above the threshold, everywhere. The mean and worst
over collections (worst: the lowest AUROC and macro-F1, the highest FPR) take their intervals
from the same resamples: each collection's rows are resampled on their own, and the mean and
the worst are taken per resample."""

from __future__ import annotations

import numpy as np

from ..data.metrics import auroc, auroc_of_counts, best_threshold, macro_f1_of_cells, min_reference
from .bootstrap import RESAMPLES, _draw, _interval
from .calibration import (
    conformal_threshold,
    realised_fpr,
    split_reference,
)
from .roc_point import bin_draws

# The own-half view held with a confidence (aicd detect --fpr-confidence): a setting of the protocol,
# not the level of the Clopper-Pearson bounds, though both are 0.95.
LOCO_FPR_CONFIDENCE = 0.95
# The own-half views read again over this many seeded halvings, and a halving counted as a miss
# where its realised FPR passes the target by more than the margin (7% for a 5% target).
HALVINGS = 50
MISS_MARGIN = 0.02


def cells(scores: np.ndarray, positive: np.ndarray, threshold: float) -> np.ndarray:
    """Counts (tp, fp, fn, tn) of flagging rows above the threshold."""
    flagged = scores > threshold
    return np.array([(flagged & positive).sum(), (flagged & ~positive).sum(), (~flagged & positive).sum(),
                     (~flagged & ~positive).sum()])


def calibrated(scores: np.ndarray, positive: np.ndarray, fpr: float, seed: int, confidence: float | None = None) -> dict:
    """A seeded half of the human rows sets the split-conformal threshold (held on average, or
    with `confidence` over the half drawn); the other half measures it."""
    human, machine = scores[~positive], scores[positive]
    fit, held, threshold = _half_sets(human, fpr, seed, confidence)
    out = {"target_fpr": fpr, "fpr_confidence": confidence, "reference_humans": int(len(fit)),
           "measuring_humans": int(len(held))}
    if threshold is None:
        return {**out, "threshold": None, "why": f"{len(fit)} reference humans, fewer than the "
                                                 f"{min_reference(fpr, confidence)} a {fpr:.0%} target needs"}
    realised = realised_fpr(human[held], threshold)
    return {**out, "threshold": threshold, "fpr": realised["fpr"], "fpr_upper": realised["fpr_upper"],
            "tpr": float((machine > threshold).mean()) if len(machine) else None,
            "halvings": over_halvings(human, machine, fpr, seed, confidence)}


def _half_sets(human: np.ndarray, fpr: float, seed, confidence: float | None) -> tuple:
    """(fitting half, measuring half, the threshold the fitting half sets or None) of a seeded
    halving of the human scores."""
    fit, held = split_reference(len(human), 0.5, seed)
    return fit, held, conformal_threshold(human[fit], fpr, confidence)


def over_halvings(human: np.ndarray, machine: np.ndarray, fpr: float, seed: int, confidence: float | None) -> dict:
    """The own-half rule over HALVINGS seeded halvings of the same human rows: what the rule keeps
    over the references a user might hold. Seeds (seed, j + 1): numpy pads a seed with zeros, so
    (seed, 0) would be the single view's own half."""
    fprs, tprs = np.empty(HALVINGS), np.empty(HALVINGS)
    for j in range(HALVINGS):
        _, held, threshold = _half_sets(human, fpr, [seed, j + 1], confidence)  # not None: the same sizes as the single half
        fprs[j] = (human[held] > threshold).mean()
        tprs[j] = (machine > threshold).mean() if len(machine) else np.nan
    return {"count": HALVINGS, "fpr_mean": float(fprs.mean()), "fpr_max": float(fprs.max()),
            "missed": int((fprs > fpr + MISS_MARGIN + 1e-12).sum()), "miss_margin": MISS_MARGIN,
            "tpr_mean": None if np.isnan(tprs).all() else float(np.nanmean(tprs))}


def fold_metrics(test_scores, test_positive, val_scores, val_positive, fpr: float, seed: int = 0,
                 resamples: int = RESAMPLES) -> tuple[dict, dict]:
    """(metrics of one held-out collection, their resamples {auroc, macro_f1, human_fpr}: arrays of
    `resamples` values, for the intervals over collections). The default-reference view is the
    calibrate job's (aicd.report.loco.from_view), added by the caller."""
    s, pos = np.asarray(test_scores, dtype=float), np.asarray(test_positive, dtype=bool)
    vs, vpos = np.asarray(val_scores, dtype=float), np.asarray(val_positive, dtype=bool)
    if np.isnan(s).any() or np.isnan(vs).any():
        raise ValueError("scores hold NaN: a detector that leaves rows unscored is read on the rows it scores")
    threshold, val_f1 = best_threshold(vs, vpos)
    tp, fp, fn, tn = cells(s, pos, threshold)
    binned = bin_draws(s, pos, resamples, seed)  # (resamples, bins, [human, machine])
    cell_draws = _draw(np.array([tp, fp, fn, tn], dtype=float), resamples, seed + 1)
    humans = cell_draws[:, 1] + cell_draws[:, 3]
    draws = {"auroc": auroc_of_counts(binned[..., 1], binned[..., 0]),
             "macro_f1": macro_f1_of_cells(*cell_draws.T),
             "human_fpr": np.divide(cell_draws[:, 1], humans, out=np.full(resamples, np.nan), where=humans > 0)}
    metrics = {
        "rows": {"human": int((~pos).sum()), "machine": int(pos.sum())},
        "auroc": auroc(s, pos), "auroc_ci": _ci(draws["auroc"]),
        "val_threshold": threshold, "val_macro_f1": val_f1,
        "macro_f1": float(macro_f1_of_cells(tp, fp, fn, tn)), "macro_f1_ci": _ci(draws["macro_f1"]),
        "human_fpr": float(fp / (fp + tn)) if fp + tn else None, "human_fpr_ci": _ci(draws["human_fpr"]),
        "tpr": float(tp / (tp + fn)) if tp + fn else None,
        "oracle_macro_f1": best_threshold(s, pos)[1],
        "calibrated": calibrated(s, pos, fpr, seed),
        "calibrated_confident": calibrated(s, pos, fpr, seed, LOCO_FPR_CONFIDENCE),
    }
    return metrics, draws


def _ci(values: np.ndarray) -> list[float] | None:
    values = values[~np.isnan(values)]
    return _interval(values, 0.95) if len(values) else None


WORST = {"auroc": np.min, "macro_f1": np.min, "human_fpr": np.max, "oracle_macro_f1": np.min}


def summary(folds: dict[str, dict], draws: dict[str, dict]) -> dict:
    """Mean and worst over the held-out collections of each metric, with intervals where the
    metric has resamples; the calibrated view's mean and worst over the collections that have a
    threshold (how many: `collections`); `halvings`: both own-half rules' halving means, the same way."""
    out = {}
    for name, worst in WORST.items():
        values = np.array([f[name] for f in folds.values()], dtype=float)
        entry = {"mean": float(np.nanmean(values)), "worst": float(worst(values)), "collections": len(values)}
        if name in ("auroc", "macro_f1", "human_fpr"):
            stacked = np.vstack([draws[c][name] for c in folds])
            entry["mean_ci"] = _ci(np.nanmean(stacked, axis=0))
            entry["worst_ci"] = _ci(worst(stacked, axis=0))
        out[name] = entry
    for view in ("calibrated", "calibrated_confident", "default_reference"):
        measured = [f[view] for f in folds.values() if (f.get(view) or {}).get("fpr") is not None]
        if measured:
            out[view] = _rates_over(measured)
    # both own-half rules over their halvings, on the collections where the confident one has a
    # threshold too, so that the two read the same collections
    both = [f for f in folds.values() if ((f.get("calibrated_confident") or {}).get("halvings"))]
    if both:
        out["halvings"] = {view: _rates_over([{"fpr": f[view]["halvings"]["fpr_mean"],
                                                "tpr": f[view]["halvings"]["tpr_mean"]} for f in both])
                           for view in ("calibrated", "calibrated_confident")}
    return out


def _rates_over(views: list[dict]) -> dict:
    """Mean and worst (highest FPR, lowest TPR) over the collections a view measured."""
    fprs = np.array([c["fpr"] for c in views])
    tprs = np.array([c["tpr"] for c in views if c["tpr"] is not None])
    return {"collections": len(views), "fpr_mean": float(fprs.mean()), "fpr_worst": float(fprs.max()),
            "tpr_mean": float(tprs.mean()) if len(tprs) else None, "tpr_worst": float(tprs.min()) if len(tprs) else None}
