"""The scorer: one detector's predictions against a task's test split (its gold labels): macro-F1
with a bootstrap interval, per-class scores, and the same per subset, language, domain and
generator; for a detector that gives scores, AUROC and the TPR at fixed FPRs on human code
(thresholds set on the validation split's human rows: aicd.scoring.thresholds), and what its
scores are (`score_kind`, as its predictions file declares it: aicd.data.scores).

`score` is what every score file of the workflow holds (`python -m aicd.scoring` writes it), and
what `from aicd.scoring import score` gives a user (docs/own_detector.md):

    from aicd.scoring import score
    result = score("results/predictions/binary/svm_tfidf.parquet", "results/tasks/binary/test.parquet",
                   fprs=[0.01, 0.05], validation="results/validation_scores/binary/svm_tfidf.parquet")
    result["macro_f1"], result["macro_f1_ci"], result["threshold_metrics"]["deployment_at_fpr"]"""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pandas as pd

from ..common.errors import AicdError
from ..common.words import counted
from ..data.ids import disagreement, match
from ..data.schema import ABSTAIN
from ..data.scores import declared
from .bootstrap import RESAMPLES, describe
from .confidence import confidence_metrics
from .metrics import breakdown, classification_scores
from .thresholds import FPRS, threshold_metrics

BREAKDOWN_COLUMNS = ("subset", "language", "domain", "generator")
TEST_COLUMNS = ("id", *BREAKDOWN_COLUMNS, "language_origin")  # what scoring reads of a test split
GOLD_COLUMNS = ("target", "label", "gold")   # a gold label, the first present (a task table's class is `target`)


def read_test(path, gold: bool = False) -> pd.DataFrame:
    """The columns of a test split that scoring uses (never its code: a million rows of it);
    with gold, its gold label column too."""
    import pyarrow.parquet as pq

    present = set(pq.read_schema(path).names)
    if "id" not in present:
        raise AicdError(f"{path}: the test split has no 'id' column (columns: {', '.join(sorted(present))})")
    wanted = [*TEST_COLUMNS, *(GOLD_COLUMNS if gold else ())]
    return pd.read_parquet(path, columns=[c for c in wanted if c in present])


def _table(value, what: str, gold: bool = False) -> pd.DataFrame:
    """A table given as a DataFrame or a file (parquet; a test split's scoring columns only)."""
    if isinstance(value, pd.DataFrame):
        return value
    if str(value).endswith(".parquet") and what == "gold":
        return read_test(value, gold=gold)
    from ..common.io import read_any

    return read_any(value)


def with_gold(predictions: pd.DataFrame, test: pd.DataFrame) -> pd.DataFrame:
    """Predictions with their `gold` column: their own (the workflow's predictions carry it), else
    the gold table's label (target, label or gold, the first present), matched by id."""
    if "gold" in predictions.columns:
        return predictions
    column = next((c for c in GOLD_COLUMNS if c in test.columns), None)
    if column is None:
        raise AicdError(f"no gold labels: the predictions have no 'gold' column and the gold table none of "
                        f"{list(GOLD_COLUMNS)} (its columns: {', '.join(map(str, test.columns))})")
    labels = test[["id", column]].rename(columns={column: "gold"})
    return predictions.merge(labels, on="id", how="left")


TASK_ADVICE = "map or drop them when building the task (label_map), or list them in the task's labels"


def check_label_set(values, labels: list, what: str, allow_abstain: bool = False, advice: str = TASK_ADVICE,
                    label_set: str = "the task's label set") -> None:
    """Refuse labels outside the task's set, naming each with its row count; `advice` says what
    to do (the workflow's task config by default; aicd score names its own options)."""
    allowed = set(labels) | ({ABSTAIN} if allow_abstain else set())
    outside = Counter(str(v) for v in values if v not in allowed)
    if outside:
        named = ", ".join(f"{v!r} ({counted(n, 'row')})" for v, n in outside.most_common())
        raise AicdError(f"{what} labels outside {label_set} {list(labels)}: {named}; {advice}")


LIBRARY_ADVICE = ("pass labels=[...] (the task's label set) to score a class the gold labels do not hold, or map "
                  "the predictions' labels to the gold's")


def check_scorable(merged: pd.DataFrame, labels: list | None) -> None:
    """Refuse what `aicd score` refuses before anything is scored: rows without a gold or a
    predicted label, and labels outside the label set (`labels`, else the gold labels; abstentions
    allowed): scored, each would be a class of its own and lower every average."""
    for column, what in (("gold", "gold"), ("pred", "predicted")):
        missing = merged[column].isna()
        if missing.any():
            eg = ", ".join(repr(str(i)) for i in merged.loc[missing, "id"].head(3))
            raise AicdError(f"{counted(missing.sum(), 'row')} {'has' if missing.sum() == 1 else 'have'} no {what} label (e.g. id {eg}): nothing scored; give "
                            f"every row its {what} label, or leave those rows out")
    if labels:
        check_label_set(merged["gold"], labels, "gold")
        check_label_set(merged["pred"], labels, "predicted", allow_abstain=True)
        return
    gold = sorted(set(merged["gold"]), key=str)
    check_label_set(merged["pred"], gold, "predicted", allow_abstain=True, advice=LIBRARY_ADVICE,
                    label_set="the gold labels")


def score(predictions, test, labels: list | None = None, sample: bool = False, resamples: int = RESAMPLES,
          seed: int = 0, validation=None, fprs=FPRS) -> dict:
    """The score dict of a detector's predictions. predictions: a table or a file (id, pred,
    optional gold and score_<class> columns); test: the gold table or file (the task's test split:
    id, the breakdown columns, and the gold label where the predictions carry none). sample=True:
    predictions cover a sample of the test split (LLM judges). labels: the task's label set
    (checked when given). validation: a table or file of machine-scores of the validation split's
    human rows (the detect job's validation_scores), for the TPR at each of `fprs`. Refused, as
    `aicd score` refuses them: rows without a gold or predicted label, and labels outside `labels`
    (else the gold labels) but abstentions (check_scorable)."""
    predictions = _table(predictions, "predictions")
    test = _table(test, "gold", gold="gold" not in predictions.columns)
    if isinstance(validation, (str, Path)):
        validation = _table(validation, "validation")
    if predictions.empty or test.empty:
        raise AicdError(f"nothing to score: {len(predictions)} predictions for {len(test)} test rows; "
                        "rebuild the task with rows in test, then rerun the detector")
    ids = match(predictions["id"], test["id"])
    if ids.extra or ids.repeated or (ids.missing and not sample):
        raise AicdError(f"{disagreement(ids, ignore_missing=sample)}: rerun the detector")
    given = "gold" in predictions.columns
    predictions = with_gold(predictions, test)
    # the gold label is the predictions' (taken from the gold table above where they had none)
    merged = test.drop(columns=["target"] if given else ["target", "gold"], errors="ignore").merge(
        predictions, on="id", validate="one_to_one")
    check_scorable(merged, labels)
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
