"""python -m aicd.scoring: score one detector's predictions on one task's test split.

--labels is the task's label set: a gold or predicted label outside it is an error naming the
label and its row count (a binary task never averages over a third class). Every macro-F1 carries
a bootstrap 95% interval (`macro_f1_ci`; --resamples, --seed)."""

from __future__ import annotations

import argparse
import sys
from collections import Counter

import pandas as pd

from ..stagecli import run
from ..errors import AicdError
from ..io import write_json
from ..schema import ABSTAIN
from .bootstrap import RESAMPLES, describe
from .metrics import breakdown, classification_scores

BREAKDOWN_COLUMNS = ("subset", "language", "domain", "generator")


def check_label_set(values, labels: list, what: str, allow_abstain: bool = False) -> None:
    """Refuse labels outside the task's set, naming each with its row count."""
    allowed = set(labels) | ({ABSTAIN} if allow_abstain else set())
    outside = Counter(str(v) for v in values if v not in allowed)
    if outside:
        named = ", ".join(f"{v!r} ({n} rows)" for v, n in outside.most_common())
        raise AicdError(f"{what} labels outside the task's label set {list(labels)}: {named}; "
                        "map or drop them when building the task (label_map), or list them in the task's labels")


def score(predictions: pd.DataFrame, test: pd.DataFrame, labels: list | None = None, sample: bool = False,
          resamples: int = RESAMPLES, seed: int = 0) -> dict:
    """sample=True: predictions cover a sample of the test split (LLM judges). labels: the
    task's label set (checked when given)."""
    if predictions.empty or test.empty:
        raise AicdError(f"nothing to score: {len(predictions)} predictions for {len(test)} test rows; "
                        "rebuild the task with rows in test, then rerun the detector")
    unknown = set(predictions["id"]) - set(test["id"])
    missing = set(test["id"]) - set(predictions["id"])
    if unknown or (missing and not sample):
        raise AicdError(f"predictions and test split disagree on {len(unknown | missing)} ids "
                        f"({len(unknown)} predicted ids not in the test split, {len(missing)} test ids not predicted): "
                        "rerun the detector")
    merged = test.drop(columns=["target"], errors="ignore").merge(predictions, on="id", validate="one_to_one")
    if labels:
        check_label_set(merged["gold"], labels, "gold")
        check_label_set(merged["pred"], labels, "predicted", allow_abstain=True)
    result = classification_scores(merged["gold"], merged["pred"], labels, resamples, seed)
    result["bootstrap"] = describe(resamples, seed)
    result["coverage"] = len(merged) / len(test) if len(test) else 0.0
    result["by"] = {
        col: breakdown(merged["gold"], merged["pred"], merged[col], labels, resamples, seed)
        for col in BREAKDOWN_COLUMNS
        if col in merged.columns and merged[col].notna().any()
    }
    if "language_origin" in merged.columns:  # release tables: languages identified, not given
        identified = int(merged["language_origin"].eq("identified").sum())
        if identified:
            result["inferred"] = {"language": {"rows": identified, "of": int(len(merged)),
                                               "by": "aicd.normalize.langid"}}
    return result


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(prog="python -m aicd.scoring", description=__doc__)
    parser.add_argument("--task", required=True)
    parser.add_argument("--detector", required=True)
    parser.add_argument("--predictions", required=True)
    parser.add_argument("--test", required=True, help="the task's test.parquet")
    parser.add_argument("--labels", nargs="*", help="the task's label set, in report order (checked)")
    parser.add_argument("--sample", action="store_true", help="predictions cover a sample of the test split")
    parser.add_argument("--resamples", type=int, default=RESAMPLES, help="bootstrap resamples for the intervals")
    parser.add_argument("--seed", type=int, default=0, help="bootstrap seed")
    parser.add_argument("--out", required=True)
    args = parser.parse_args(argv)
    if args.resamples < 0:
        raise AicdError(f"--resamples {args.resamples}: give 0 (no intervals) or more")
    result = score(pd.read_parquet(args.predictions), pd.read_parquet(args.test), args.labels, args.sample,
                   args.resamples, args.seed)
    write_json({"task": args.task, "detector": args.detector, **result}, args.out)


if __name__ == "__main__":
    sys.exit(run(main))
