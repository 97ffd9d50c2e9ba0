"""python -m aicd.scoring: score one detector's predictions on one task's test split."""

from __future__ import annotations

import argparse
import sys

import pandas as pd

from ..cli import run
from ..errors import AicdError
from ..io import write_json
from .metrics import breakdown, classification_scores

BREAKDOWN_COLUMNS = ("subset", "language", "domain", "generator")


def score(predictions: pd.DataFrame, test: pd.DataFrame, labels: list | None = None, sample: bool = False) -> dict:
    """sample=True: predictions cover a sample of the test split (LLM judges)."""
    if predictions.empty or test.empty:
        raise AicdError(f"nothing to score: {len(predictions)} predictions for {len(test)} test rows; "
                        "rebuild the task with rows in test, then rerun the detector")
    unknown = set(predictions["id"]) - set(test["id"])
    missing = set(test["id"]) - set(predictions["id"])
    if unknown or (missing and not sample):
        raise AicdError(f"predictions and test split disagree on {len(unknown | missing)} ids: rerun the detector")
    merged = test.drop(columns=["target"]).merge(predictions, on="id", validate="one_to_one")
    result = classification_scores(merged["gold"], merged["pred"], labels)
    result["coverage"] = len(merged) / len(test) if len(test) else 0.0
    result["by"] = {
        col: breakdown(merged["gold"], merged["pred"], merged[col], labels)
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
    parser.add_argument("--labels", nargs="*", help="preferred class order for reports")
    parser.add_argument("--sample", action="store_true", help="predictions cover a sample of the test split")
    parser.add_argument("--out", required=True)
    args = parser.parse_args(argv)
    result = score(pd.read_parquet(args.predictions), pd.read_parquet(args.test), args.labels, args.sample)
    write_json({"task": args.task, "detector": args.detector, **result}, args.out)


if __name__ == "__main__":
    sys.exit(run(main))
