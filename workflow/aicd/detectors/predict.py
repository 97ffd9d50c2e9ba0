"""python -m aicd.detectors.predict: apply a fitted model (python -m aicd.detectors --model) to
a test table, without refitting anything: the job a new test set needs.

Writes id, gold (the table's `target`, else `label`, when present), pred and score_<class>..."""

from __future__ import annotations

import argparse
import logging
import sys
import time

from ..stagecli import run
from ..errors import AicdError
from ..features.tables import read_table
from ..io import write_parquet
from .bundle import load_bundle

log = logging.getLogger("aicd.detectors")


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(prog="python -m aicd.detectors.predict", description=__doc__)
    parser.add_argument("--model", required=True, help="a fitted model (pickle or folder)")
    parser.add_argument("--test", required=True, help="the rows to predict (parquet: id, code, language, target)")
    parser.add_argument("--out", required=True, help="output predictions parquet")
    parser.add_argument("--threads", type=int, default=None,
                        help="threads for prediction (the workflow passes the job's {threads}); "
                             "default: as many as the model was fitted with")
    args = parser.parse_args(argv)
    if args.threads is not None and args.threads < 1:
        raise AicdError(f"--threads {args.threads}: give 1 or more")
    started = time.perf_counter()
    model = load_bundle(args.model, threads=args.threads or 1)
    if args.threads and model.detector is not None:
        model.detector.threads = args.threads  # a pickled detector carries its fit-time count
    table = read_table(args.test, "test")
    if table.empty:
        raise AicdError(f"the test file {args.test} has no rows: nothing to predict")
    predictions = model.predict_rows(table)
    gold = "target" if "target" in table.columns else ("label" if "label" in table.columns else None)
    if gold:
        predictions.insert(1, "gold", table[gold].to_numpy(dtype=object))
    write_parquet(predictions, args.out)
    log.info("%d predictions in %.1fs", len(predictions), time.perf_counter() - started)


if __name__ == "__main__":
    sys.exit(run(main))
