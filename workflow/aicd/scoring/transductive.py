"""A threshold adapted to the unlabelled test set: never the default, and named for what it is
wherever it is printed (ADAPTED).

Some SemEval-2026 Task 13 systems set their operating point on the test collection itself,
without its labels: the scores are standardised per group (a language, or the whole
collection), a two-component Gaussian mixture is fitted to the standardised scores (seeded), and
a program is flagged where the component with the higher mean is the likelier one. That reads
the test rows' score distribution, so it is not a threshold one can deploy before seeing the
code, and it assumes the collection holds both human and machine code: on a collection of human
code alone it still splits it in two. Hence it is only ever an option (`aicd detect
--adapt-to-input`, the calibrated view's separate column), labelled "adapted to the unlabelled
test set"."""

from __future__ import annotations

import numpy as np

ADAPTED = "adapted to the unlabelled test set"
MIN_GROUP = 20      # rows a group needs to be standardised on its own (else on the whole collection)
MIN_ROWS = 20       # rows the collection needs for a mixture at all
GRID = 2001         # points between the two means where the posterior is read


def _standardise(scores: np.ndarray, groups: np.ndarray, min_group: int) -> tuple[np.ndarray, dict]:
    """z-scores within each group of at least min_group rows with spread, the rest against the
    whole collection; {group: {n, mean, std, standardised_on}}."""
    mean, std = float(scores.mean()), float(scores.std()) or 1.0
    z = (scores - mean) / std
    info = {}
    for group in sorted(set(groups.tolist())):
        rows = groups == group
        own = rows.sum() >= min_group and scores[rows].std() > 0
        m, s = (float(scores[rows].mean()), float(scores[rows].std())) if own else (mean, std)
        z[rows] = (scores[rows] - m) / s
        info[str(group)] = {"n": int(rows.sum()), "mean": m, "std": s,
                            "standardised_on": "own rows" if own else "the whole collection"}
    return z, info


def adapt(scores, groups=None, seed: int = 0, min_group: int = MIN_GROUP, min_rows: int = MIN_ROWS) -> dict:
    """{"label": ADAPTED, "available", "why" (where not), "threshold_z", "components",
    "groups": {group: {n, mean, std, standardised_on, threshold}}} for the scores of an
    unlabelled collection (machine scores: flag s > threshold); groups: e.g. each row's language
    (None: the collection is one group)."""
    from sklearn.mixture import GaussianMixture

    scores = np.asarray(scores, dtype=float)
    groups = np.full(len(scores), "all", dtype=object) if groups is None else np.asarray(groups, dtype=object)
    out = {"label": ADAPTED, "available": False, "seed": int(seed), "n": int(len(scores))}
    if len(scores) < min_rows or np.isnan(scores).any():
        out["why"] = (f"{len(scores)} rows, fewer than the {min_rows} a two-component mixture is fitted on"
                      if len(scores) < min_rows else "some scores are NaN")
        return out
    finite = np.isfinite(scores)
    if not finite.any():
        out["why"] = "no score is finite"
        return out
    # a probability of exactly 0 or 1 is an infinite log-odds (aicd.data.scores.threshold_score):
    # held at the most extreme finite score, which keeps every row's rank and the mixture defined
    scores = np.clip(scores, scores[finite].min(), scores[finite].max())
    z, info = _standardise(scores, groups, min_group)
    if np.ptp(z) == 0:
        out["why"] = "every score is the same: nothing to split"
        return out
    mixture = GaussianMixture(2, random_state=seed).fit(z.reshape(-1, 1))
    means = mixture.means_.ravel()
    high = int(np.argmax(means))
    grid = np.linspace(means.min(), means.max(), GRID).reshape(-1, 1)
    posterior = mixture.predict_proba(grid)[:, high]
    crossing = np.flatnonzero(posterior >= 0.5)
    threshold_z = float(grid[crossing[0], 0]) if len(crossing) else float(means.mean())
    out.update(available=True, threshold_z=threshold_z,
               components=[{"mean": float(means[k]), "weight": float(mixture.weights_[k])} for k in (1 - high, high)])
    for g in info.values():
        g["threshold"] = g["mean"] + threshold_z * g["std"]
    out["groups"] = info
    return out


def adapted_thresholds(adapted: dict, groups=None, n: int | None = None) -> np.ndarray:
    """Each row's threshold from adapt()'s answer (NaN where it has none)."""
    if groups is None:
        groups = np.full(n if n is not None else adapted.get("n", 0), "all", dtype=object)
    if not adapted.get("available"):
        return np.full(len(groups), np.nan)
    return np.array([adapted["groups"].get(str(g), {}).get("threshold", np.nan) for g in groups], dtype=float)
