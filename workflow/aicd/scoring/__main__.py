"""python -m aicd.scoring: score one detector's predictions on one task's test split.

--labels is the task's label set: a gold or predicted label outside it is an error naming the
label and its row count (a binary task never averages over a third class). Every macro-F1 carries
a bootstrap 95% interval (`macro_f1_ci`; --resamples, --seed)."""

from __future__ import annotations

import argparse
import sys

import pandas as pd

from ..errors import AicdError
from ..io import write_json
from ..stagecli import run
from .bootstrap import RESAMPLES
from .score import read_test, score


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
    result = score(pd.read_parquet(args.predictions), read_test(args.test), args.labels, args.sample,
                   args.resamples, args.seed)
    write_json({"task": args.task, "detector": args.detector, **result}, args.out)


if __name__ == "__main__":
    sys.exit(run(main))
