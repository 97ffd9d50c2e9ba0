"""python -m aicd.scoring: score one detector's predictions on one task's test split.

--labels is the task's label set: a gold or predicted label outside it is an error naming the
label and its row count (a binary task never averages over a third class). Every macro-F1 carries
a bootstrap 95% interval (`macro_f1_ci`; --resamples, --seed). Where the predictions carry
score_<class> columns: AUROC (human against the rest) and the TPR at each --fpr, its threshold
set on --validation-scores (the validation split's human rows), under `threshold_metrics`.

`python -m aicd.scoring calibrate` calibrates one fitted detector on the task's human reference
code (aicd.scoring.calibrate_model; its --help)."""

from __future__ import annotations

import argparse
import sys

import pandas as pd

from ..common.errors import AicdError
from ..common.io import write_json
from ..common.stagecli import json_arg, run
from .bootstrap import RESAMPLES
from .scorer import flip_rate, read_test, score
from .thresholds import FPRS


def main(argv=None) -> None:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv and argv[0] == "calibrate":
        from .calibrate_model import main as calibrate_main

        return calibrate_main(argv[1:])
    parser = argparse.ArgumentParser(prog="python -m aicd.scoring", description=__doc__)
    parser.add_argument("--task", required=True)
    parser.add_argument("--detector", required=True)
    parser.add_argument("--predictions", required=True)
    parser.add_argument("--test", required=True, help="the task's test.parquet")
    parser.add_argument("--labels", nargs="*", help="the task's label set, in report order (checked)")
    parser.add_argument("--sample", action="store_true", help="predictions cover a sample of the test split")
    parser.add_argument("--resamples", type=int, default=RESAMPLES, help="bootstrap resamples for the intervals")
    parser.add_argument("--seed", type=int, default=0, help="bootstrap seed")
    parser.add_argument("--validation-scores", nargs="?", default=None,
                        help="parquet of the validation split's human rows: id, domain, machine_score")
    parser.add_argument("--fpr", type=float, nargs="+", default=list(FPRS),
                        help=f"false-positive rates on human code to report the TPR at (default: {' '.join(map(str, FPRS))})")
    parser.add_argument("--versions", type=json_arg, default=None,
                        help="JSON: the task definition's and the detector kind's versions that made these predictions "
                             "(aicd.plan.Plan.versions), written into the score file")
    parser.add_argument("--reference", nargs="?", default=None,
                        help="predictions of the same rows unperturbed: the share of labels that flip (flip_rate)")
    parser.add_argument("--out", required=True)
    args = parser.parse_args(argv)
    if args.resamples < 0:
        raise AicdError(f"--resamples {args.resamples}: give 0 (no intervals) or more")
    bad = [f for f in args.fpr if not 0 < f < 1]
    if bad:
        raise AicdError(f"--fpr {bad[0]}: a false-positive rate is between 0 and 1 (e.g. 0.01)")
    validation = pd.read_parquet(args.validation_scores) if args.validation_scores else None
    result = score(pd.read_parquet(args.predictions), read_test(args.test), args.labels, args.sample,
                   args.resamples, args.seed, validation, args.fpr)
    if args.reference:
        import pyarrow.parquet as pq

        changed = None
        if "perturbed" in pq.read_schema(args.test).names:
            test = pd.read_parquet(args.test, columns=["id", "perturbed"])
            changed = test.loc[test["perturbed"].astype(bool), "id"]
        result["flip_rate"] = flip_rate(pd.read_parquet(args.predictions, columns=["id", "pred"]),
                                        pd.read_parquet(args.reference, columns=["id", "pred"]), changed)
    versions = {"versions": args.versions} if args.versions is not None else {}
    write_json({"task": args.task, "detector": args.detector, **versions, **result}, args.out)


if __name__ == "__main__":
    sys.exit(run(main))
