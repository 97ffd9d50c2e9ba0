"""What a predictions table's score_<class> columns hold, said in the table itself.

Every detector kind declares its `score_kind` (aicd.detectors.base.Detector.score_kind):

- probability: per-row probabilities in [0, 1] that sum to one (CatBoost, logistic regression,
  the encoders, Fast-DetectGPT's sigmoid, ...);
- margin: signed distances to each class's decision boundary (the linear SVM's decision
  function), any real number, higher = more that class; not probabilities;
- score: any real number, higher = more that class (a plug-in's own scores).

AUROC and the TPR at a fixed FPR read only the order of the scores, so each kind serves them;
calibration (ECE) needs probabilities. The kind travels in the predictions parquet's metadata
(pandas `attrs["aicd"]["score_kind"]`) and into the score file.

Scores are stored as float32; `machine_score` (aicd.data.metrics) turns score_human into the
score a threshold is set on the same way for validation and test rows, so equal values are equal
on both sides.

`threshold_score` is the score a calibration on human code sets its thresholds on
(aicd.scoring.calibration): float64, and for probabilities the log-odds that a row is not human,
log(sum of the other classes' probabilities) - log(score_human), read from the stored float32
columns. 1 - score_human saturates: a float32 probability of 1 - 3e-8 is 1, and in float64 every
score_human below 1.1e-16 makes it exactly 1, so many machine-like rows tie at 1 and a threshold
of 1 flags nothing; the log-odds keeps them apart down to float32's smallest probability
(1.4e-45 either way). Margins and a detector's own scores are already unbounded: -score_human."""

from __future__ import annotations

import numpy as np
import pandas as pd

SCORE_KINDS = {
    "probability": "probabilities in [0, 1] that sum to one per row",
    "margin": "decision-function margins (any real number, higher = more that class); not probabilities",
    "score": "the detector's own scores (any real number, higher = more that class); not probabilities",
}
STORED = np.float32
THRESHOLD_SCORE = "threshold_score"   # its column in the fit job's validation_scores


def stored(values) -> np.ndarray:
    """Scores at the precision predictions files keep."""
    return np.asarray(values, dtype=float).astype(STORED)




def threshold_score(table: pd.DataFrame, kind: str | None = None) -> np.ndarray | None:
    """The float64 machine score of each row that thresholds on human code are set on (higher:
    more machine-like; the module's docstring): None where the table has no score_human column.
    kind: what the score columns hold (SCORE_KINDS; None: what the table declares, else
    probabilities where they lie in [0, 1])."""
    from .families import HUMAN

    kind = kind or declared(table)

    column = f"score_{HUMAN}"
    if column not in table.columns or table[column].isna().all():
        return None
    human = stored(table[column]).astype(np.float64)
    others = [c for c in table.columns if str(c).startswith("score_") and c != column]
    if kind is None:
        kind = "probability" if others and ((human >= 0) & (human <= 1)).all() else "score"
    if kind != "probability" or not others:
        return -human
    rest = np.sum([stored(table[c]).astype(np.float64) for c in others], axis=0)
    with np.errstate(divide="ignore", invalid="ignore"):   # a probability of 0: an infinite log-odds
        return np.log(rest) - np.log(human)


def declare(table: pd.DataFrame, kind: str | None) -> pd.DataFrame:
    """Record what the table's score columns hold (None: the table has none)."""
    if kind is not None and kind not in SCORE_KINDS:
        raise ValueError(f"score kind {kind!r}: one of {', '.join(SCORE_KINDS)}")
    table.attrs["aicd"] = {**table.attrs.get("aicd", {}), "score_kind": kind,
                           "score_meaning": SCORE_KINDS.get(kind)}
    return table


def declared(table: pd.DataFrame) -> str | None:
    """The score kind a predictions table says it holds; None where it says nothing (a file
    from elsewhere, or from an earlier version)."""
    return (table.attrs.get("aicd") or {}).get("score_kind")


def declared_in_file(path) -> str | None:
    """The score kind a predictions parquet declares (from its schema, without reading rows);
    None for other formats or files that declare none."""
    from pathlib import Path

    if Path(path).suffix != ".parquet":
        return None
    import pyarrow.parquet as pq

    try:
        meta = pq.read_schema(path).pandas_metadata or {}
    except (OSError, ValueError):
        return None
    attrs = meta.get("attributes") or meta.get("attrs") or {}  # pandas 3 writes "attributes", 2.x "attrs"
    return (attrs.get("aicd") or {}).get("score_kind")
