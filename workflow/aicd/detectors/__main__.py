"""python -m aicd.detectors: fit one detector on a task's train split and predict its test split.

Rows come from --tasks-dir FOLDER or from --train/--validation/--test files; validation is
optional (absent flag, absent file, empty file): a detector that needs one (encoders, CatBoost
with early stopping) then gets one carved from train (10%, seeded, stratified), logged and
recorded in the model and the --report.

Writes predictions (id, gold, pred, score_<class>...) and the fitted model (--model): a
self-contained bundle (aicd.detectors.bundle) holding the detector, the fitted featurizer of its
feature set (--featurizer), the labels and the spec; a pickle, or a folder for detectors stored
with save_pretrained (the encoders). Apply it to new code with `aicd detect`.

Test features: taken from --features when its test ids match the test rows; otherwise computed
with --featurizer (so a new test set needs no new features job)."""

from __future__ import annotations

import argparse
import logging
import sys
import time

from ..errors import AicdError
from ..features.registry import load_featurizer
from ..features.tables import add_arguments, read_splits
from ..io import write_json, write_parquet
from ..stagecli import json_arg, run
from .bundle import make_bundle, save_bundle
from .fitting import fit_predict

log = logging.getLogger("aicd.detectors")


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(prog="python -m aicd.detectors", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--spec", required=True, type=json_arg, help="the detector's config entry, as JSON")
    add_arguments(parser)
    parser.add_argument("--features", help="features.npz, for detectors that use features")
    parser.add_argument("--featurizer", help="the feature set's fitted featurizer.pkl: stored in the model so it "
                        "applies to raw code, and used for test rows not in --features")
    parser.add_argument("--task", help="the task name, recorded in the model")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--out", required=True, help="output predictions parquet")
    parser.add_argument("--model", required=True, help="output fitted model (a pickle, or a folder for encoders)")
    parser.add_argument("--report", help="output JSON: rows per split, how validation was had, seconds")
    parser.add_argument("--work-dir", help="scratch folder kept across a killed job (encoder checkpoints)")
    parser.add_argument("--cache-dir", help="shared cache folder (tokenised splits)")
    args = parser.parse_args(argv)
    tables = read_splits(args)
    where = args.tasks_dir or f"--train {args.train} / --test {args.test}"
    if tables["train"].empty or tables["test"].empty:
        empty = [s for s in ("train", "test") if tables[s].empty]
        raise AicdError(f"{where}: the {' and '.join(empty)} split is empty: rebuild the task with rows in it")
    featurizer = load_featurizer(args.featurizer) if args.featurizer else None
    started = time.perf_counter()
    validation: dict = {}
    detector, predictions = fit_predict(args.spec, tables, args.features, args.seed, args.threads,
                                        args.work_dir, args.cache_dir, featurizer, validation)
    bundle = make_bundle(detector, featurizer if detector.needs_features else None, args.spec, args.task, validation)
    if detector.needs_features and featurizer is None:
        log.warning("no --featurizer: the saved model applies to feature matrices only, not to new code")
    save_bundle(bundle, args.model)
    write_parquet(predictions, args.out)
    seconds = time.perf_counter() - started
    if args.report:
        write_json({"kind": args.spec["kind"], "task": args.task, "rows": {s: int(len(t)) for s, t in tables.items()},
                    "validation": validation,
                    "self_contained": bundle.featurizer is not None or not detector.needs_features,
                    "seconds": round(seconds, 3)}, args.report)
    log.info("%s: %d test predictions in %.1fs", args.spec["kind"], len(predictions), seconds)


if __name__ == "__main__":
    sys.exit(run(main))
