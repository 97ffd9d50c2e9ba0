"""Scoring one detector's predictions against a task's test split: macro-F1 with a bootstrap
interval, per-class scores, and the same per subset, language, domain and generator; for a
detector that gives scores, AUROC and the TPR at fixed FPRs on human code (thresholds set on
the validation split's human rows: aicd.scoring.thresholds), and what its scores are
(`score_kind`, as its predictions file declares it: aicd.data.scores)."""

from __future__ import annotations

from collections import Counter

import pandas as pd

from ..common.errors import AicdError
from ..data.ids import disagreement, match
from ..data.schema import ABSTAIN
from ..data.scores import declared
from .bootstrap import RESAMPLES, describe
from .confidence import confidence_metrics
from .metrics import breakdown, classification_scores
from .thresholds import FPRS, threshold_metrics

BREAKDOWN_COLUMNS = ("subset", "language", "domain", "generator")
TEST_COLUMNS = ("id", *BREAKDOWN_COLUMNS, "language_origin")  # what scoring reads of a test split


def read_test(path) -> pd.DataFrame:
    """The columns of a test split that scoring uses (never its code: a million rows of it)."""
    import pyarrow.parquet as pq

    present = set(pq.read_schema(path).names)
    if "id" not in present:
        raise AicdError(f"{path}: the test split has no 'id' column (columns: {', '.join(sorted(present))})")
    return pd.read_parquet(path, columns=[c for c in TEST_COLUMNS if c in present])


TASK_ADVICE = "map or drop them when building the task (label_map), or list them in the task's labels"


def check_label_set(values, labels: list, what: str, allow_abstain: bool = False, advice: str = TASK_ADVICE,
                    label_set: str = "the task's label set") -> None:
    """Refuse labels outside the task's set, naming each with its row count; `advice` says what
    to do (the workflow's task config by default; aicd score names its own options)."""
    allowed = set(labels) | ({ABSTAIN} if allow_abstain else set())
    outside = Counter(str(v) for v in values if v not in allowed)
    if outside:
        named = ", ".join(f"{v!r} ({n} rows)" for v, n in outside.most_common())
        raise AicdError(f"{what} labels outside {label_set} {list(labels)}: {named}; {advice}")


def score(predictions: pd.DataFrame, test: pd.DataFrame, labels: list | None = None, sample: bool = False,
          resamples: int = RESAMPLES, seed: int = 0, validation: pd.DataFrame | None = None,
          fprs=FPRS) -> dict:
    """sample=True: predictions cover a sample of the test split (LLM judges). labels: the
    task's label set (checked when given). validation: machine-scores of the validation
    split's human rows (the detect job's validation_scores), for the TPR at each FPR."""
    if predictions.empty or test.empty:
        raise AicdError(f"nothing to score: {len(predictions)} predictions for {len(test)} test rows; "
                        "rebuild the task with rows in test, then rerun the detector")
    ids = match(predictions["id"], test["id"])
    if ids.extra or ids.repeated or (ids.missing and not sample):
        raise AicdError(f"{disagreement(ids, ignore_missing=sample)}: rerun the detector")
    merged = test.drop(columns=["target"], errors="ignore").merge(predictions, on="id", validate="one_to_one")
    if labels:
        check_label_set(merged["gold"], labels, "gold")
        check_label_set(merged["pred"], labels, "predicted", allow_abstain=True)
    result = classification_scores(merged["gold"], merged["pred"], labels, resamples, seed)
    result["bootstrap"] = describe(resamples, seed)
    result["coverage"] = len(merged) / len(test) if len(test) else 0.0
    result["by"] = {
        col: breakdown(merged["gold"], merged["pred"], merged[col], labels, resamples, seed,
                       task_labels=labels if col == "subset" else None)
        for col in BREAKDOWN_COLUMNS
        if col in merged.columns and merged[col].notna().any()
    }
    result["score_kind"] = declared(predictions)
    result["threshold_metrics"] = threshold_metrics(merged, validation, fprs, BREAKDOWN_COLUMNS, resamples, seed)
    result["confidence"] = confidence_metrics(merged, labels)
    if "language_origin" in merged.columns:  # release tables: languages identified, not given
        identified = int(merged["language_origin"].eq("identified").sum())
        if identified:
            result["inferred"] = {"language": {"rows": identified, "of": int(len(merged)),
                                               "by": "aicd.normalize.langid"}}
    return result


def flip_rate(predictions: pd.DataFrame, reference: pd.DataFrame, changed_ids=None) -> dict:
    """Share of rows whose label differs from the reference predictions of the same ids (a
    perturbed test set against the unperturbed one): over all rows, and over the rows the
    rewrite changed (`changed_ids`; an unchanged row can only flip by rounding)."""
    merged = predictions.merge(reference, on="id", suffixes=("", "_reference"), validate="one_to_one")
    if len(merged) != len(predictions):
        raise AicdError(f"{len(predictions) - len(merged)} perturbed rows have no unperturbed prediction: "
                        "rerun the detector on the task")
    flipped = merged["pred"].astype(str) != merged["pred_reference"].astype(str)
    out = {"rate": float(flipped.mean()) if len(merged) else None, "flipped": int(flipped.sum()), "rows": int(len(merged))}
    if changed_ids is not None:
        changed = merged["id"].isin(set(changed_ids))
        out.update({"changed_rows": int(changed.sum()),
                    "rate_changed": float(flipped[changed].mean()) if changed.any() else None})
    return out
