"""python -m aicd.detectors: the detectors stage.

  fit      fit one detector on a task's train split and predict its test split
  predict  apply a fitted model to new rows (an extra test set), refitting nothing

fit: rows come from --tasks-dir FOLDER or from --train/--validation/--test files; validation
is optional (absent flag, absent file, empty file): a detector that needs one (encoders,
CatBoost with early stopping) then gets one carved from train (10%, seeded, stratified), logged
and recorded in the model and the --report. Writes predictions (id, gold, pred,
score_<class>..., and a kind's own columns such as Fast-DetectGPT's criterion), the fitted
model (--model): a self-contained bundle (aicd.detectors.bundle) holding the detector, the
fitted featurizer of its feature set (--featurizer), the labels and the spec, as a skops file
(reading it runs no code from the file) or, for a folder-stored kind, a folder; and --report: rows, validation, seconds and what the
detector reports of itself (a threshold, an AUROC). Test features are taken from --features
when its test ids match the test rows; otherwise computed with --featurizer.

predict: writes id, gold (the table's `target`, else `label`, when present), pred and
score_<class>... for every row of --test. The model's types must all be trusted
(aicd.models.fitted_files); --spec (the detector's config entry) trusts the user's own code it names
(a kind: python detector's class), --trust-type names more; a pickle is read only with
--trust-pickle.

Examples:
  python -m aicd.detectors fit --spec '{"kind": "majority"}' --tasks-dir results/tasks/binary \\
      --out preds.parquet --model model.skops
  python -m aicd.detectors predict --model results/models/binary/svm_tfidf.skops --test extra.parquet --out p.parquet"""

from __future__ import annotations

import argparse
import logging
import sys
import time

from ..common.errors import AicdError
from ..common.io import write_json, write_parquet
from ..common.stagecli import json_arg, run
from ..features.registry import load_featurizer
from ..features.tables import add_arguments, read_code, read_splits, read_table, split_paths
from ..models.fitted_files import add_trust_arguments, package_trust
from ..outputs import SHOWN, name_of
from .base import REGISTRY
from .bundle import configured_code, load_bundle, make_bundle, save_bundle
from .fitting import fit_predict

log = logging.getLogger("aicd.detectors")


def _prepared(pairs: list[str]) -> dict[str, str]:
    out = {}
    for pair in pairs:
        name, sep, path = pair.partition("=")
        if not sep or not name or not path:
            raise AicdError(f"--prepared {pair!r}: give NAME=PATH (e.g. lm={SHOWN.lm('fast_detectgpt')})")
        out[name] = path
    return out


def fit(args) -> None:
    # A detector that does not read code gets its tables without it (most of their memory at
    # the paper's scale); the code of a split is read only where it turns out to be needed.
    skip = () if REGISTRY[args.spec.get("kind")].inputs == "text" else ("code",)
    paths = split_paths(args)
    tables = read_splits(args, skip=skip)
    where = args.tasks_dir or f"--train {args.train} / --test {args.test}"
    if tables["train"].empty or tables["test"].empty:
        empty = [s for s in ("train", "test") if tables[s].empty]
        raise AicdError(f"{where}: the {' and '.join(empty)} split is empty: rebuild the task with rows in it")
    featurizer = load_featurizer(args.featurizer) if args.featurizer else None
    started = time.perf_counter()
    result = fit_predict(args.spec, tables, args.features, args.seed, args.threads, args.work_dir, args.cache_dir,
                         featurizer, _prepared(args.prepared),
                         code_reader=lambda split, rows=None: read_code(paths[split], split, rows))
    on_features = result.detector.inputs == "features"
    languages = tables["train"]["language"].dropna() if "language" in tables["train"] else ()
    bundle = make_bundle(result.detector, featurizer if on_features else None, args.spec, args.task,
                         result.validation, train_languages=languages)
    if on_features and featurizer is None:
        log.warning("no --featurizer: the saved model applies to feature matrices only, not to new code")
    save_bundle(bundle, args.model)
    write_parquet(result.predictions, args.out)
    if args.validation_scores:
        write_parquet(result.validation_scores, args.validation_scores)
    seconds = time.perf_counter() - started
    if args.report:
        write_json({"kind": args.spec["kind"], "task": args.task, "rows": {s: int(len(t)) for s, t in tables.items()},
                    "validation": result.validation, **({"training": result.training} if result.training else {}),
                    "self_contained": bundle.featurizer is not None or not on_features,
                    **({"features": featurizer.describe()} if featurizer is not None and on_features else {}),
                    "seconds": round(seconds, 3), **result.summary}, args.report)
    log.info("%s: %d test predictions in %.1fs", args.spec["kind"], len(result.predictions), seconds)


def predict(args) -> None:
    if args.threads is not None and args.threads < 1:
        raise AicdError(f"--threads {args.threads}: give 1 or more")
    started = time.perf_counter()
    model = load_bundle(args.model, threads=args.threads or 1, trust_pickle=args.trust_pickle,
                        trust_types=configured_code(args.spec) + (args.trust_type or [])
                        + package_trust(getattr(args, "trust_package", None)))
    if args.threads and model.detector is not None:
        model.detector.threads = args.threads  # a stored detector carries its fit-time count
    table = read_table(args.test, "test")
    if table.empty:
        raise AicdError(f"the test file {args.test} has no rows: nothing to predict")
    predictions = model.predict_rows(table)
    gold = "target" if "target" in table.columns else ("label" if "label" in table.columns else None)
    if gold:
        predictions.insert(1, "gold", table[gold].to_numpy(dtype=object))
    write_parquet(predictions, args.out)
    log.info("%d predictions in %.1fs", len(predictions), time.perf_counter() - started)


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(prog="python -m aicd.detectors", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="cmd", required=True)
    f = sub.add_parser("fit", help="fit one detector and predict its task's test split")
    f.add_argument("--spec", required=True, type=json_arg, help="the detector's config entry, as JSON")
    add_arguments(f)
    f.add_argument("--features", help=f"{name_of('features')}, for detectors that use features")
    f.add_argument("--featurizer", help=f"the feature set's fitted {name_of('featurizer')}: stored in the model so it "
                   "applies to raw code, and used for test rows not in --features")
    f.add_argument("--prepared", nargs="*", default=[], metavar="NAME=PATH",
                   help="files another job made for this detector (its kind's prepared_inputs)")
    f.add_argument("--task", help="the task name, recorded in the model")
    f.add_argument("--seed", type=int, default=0)
    f.add_argument("--threads", type=int, default=1)
    f.add_argument("--out", required=True, help="output predictions parquet")
    f.add_argument("--model", required=True, help="output fitted model (a .skops file, or a folder)")
    f.add_argument("--report", help="output JSON: rows per split, how validation was had, seconds, the summary")
    f.add_argument("--validation-scores", help="output parquet: id, domain, gold, machine_score of the validation "
                   "split's human rows (what the scoring stage sets thresholds at a fixed FPR on) and of a "
                   "sample of its other rows (the validation AUROC)")
    f.add_argument("--work-dir", help="scratch folder kept across a killed job (encoder checkpoints)")
    f.add_argument("--cache-dir", help="shared cache folder: an encoder's tokenised splits; for other kinds, the "
                   f"run's per-text feature values ({SHOWN.features_cache()}: robust's stylometry)")
    p = sub.add_parser("predict", help="apply a fitted model to new rows")
    p.add_argument("--model", required=True, help="a fitted model (a .skops file or a folder)")
    p.add_argument("--test", required=True, help="the rows to predict (parquet: id, code, language, target)")
    p.add_argument("--out", required=True, help="output predictions parquet")
    add_trust_arguments(p)
    p.add_argument("--spec", type=json_arg, default=None, help="the detector's config entry, as JSON: the "
                   "user's own code it names (a kind: python detector's object) is trusted in the model")
    p.add_argument("--threads", type=int, default=None,
                   help="threads for prediction (the workflow passes the job's {threads}); default: as fitted")
    args = parser.parse_args(argv)
    (fit if args.cmd == "fit" else predict)(args)


if __name__ == "__main__":
    sys.exit(run(main))
