"""python -m aicd.features: compute one feature set for one task.

Fits on the train split only, transforms train/validation/test, and writes features.npz
(X_{split}, ids_{split}, feature_names), the fitted featurizer (a self-contained skops file,
aicd.models.fitted_files: it can featurize new code with no other file), and a report.

Rows come from --tasks-dir FOLDER or from --train/--validation/--test files (validation and
test optional here; absent ones give zero rows). A concat set joins the parts' features.npz
(--parts) and their fitted featurizers (--part-models, by default featurizer.skops beside each part)."""

from __future__ import annotations

import argparse
import logging
import sys
import time

from ..common.errors import AicdError
from ..common.io import write_json
from ..common.stagecli import json_arg, run
from ..models.fitted_files import save_fitted
from ..outputs import name_of
from .compute import compute, concat_parts
from .registry import FEATURIZERS
from .tables import add_arguments, read_splits

log = logging.getLogger("aicd.features")


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(prog="python -m aicd.features", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--spec", required=True, type=json_arg, help="the feature set's config entry, as JSON")
    add_arguments(parser, test_required=False)
    parser.add_argument("--parts", nargs="*", default=[], help=f"{name_of('features')} files to concatenate (concat)")
    parser.add_argument("--part-models", nargs="*", default=[],
                        help=f"the parts' fitted featurizers (concat; default: {name_of('featurizer')} beside each part)")
    parser.add_argument("--trust-pickle", action="store_true",
                        help="also read --part-models stored as a pickle (by an earlier version, or by someone "
                             "else): reading a pickle runs any code the file holds, so only for files you trust")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--threads", type=int, default=1, help="processes for the per-row work (parsing, n-grams)")
    parser.add_argument("--cache-dir", default=None, help="where a kind keeps per-text values between jobs "
                        "(lm_stats: a causal LM's statistics, shared by every task of the run)")
    parser.add_argument("--out", required=True, help=f"output {name_of('features')}")
    parser.add_argument("--model", required=True, help=f"output fitted featurizer (a skops file: {name_of('featurizer')})")
    parser.add_argument("--report", required=True, help="output JSON report")
    args = parser.parse_args(argv)

    kind = args.spec.get("kind")
    params = args.spec.get("params") or {}
    if kind not in FEATURIZERS:
        raise FEATURIZERS.unknown(kind)
    started = time.perf_counter()
    if kind == "concat":
        featurizer, names, rows = concat_parts(args.parts, args.part_models, args.out, args.trust_pickle)
        extra = featurizer.report_fields({})
    else:
        if not (args.tasks_dir or args.train):
            raise AicdError(f"feature kind {kind} needs --tasks-dir or --train")
        tables = read_splits(args, test_required=False)
        if tables["train"].empty:
            where = args.tasks_dir or args.train
            raise AicdError(f"the train split in {where} is empty: nothing to fit features on; "
                            "rebuild the task (python -m aicd.splits) with rows in train")
        featurizer, names, rows, sums = compute(kind, params, tables, args.seed, args.out, max(1, args.threads),
                                                args.cache_dir)
        extra = featurizer.report_fields(sums)
    save_fitted(featurizer, args.model)
    seconds = time.perf_counter() - started
    write_json({"kind": kind, "params": params, "dimensions": len(names), "rows": rows,
                "seconds": round(seconds, 3), **extra}, args.report)
    log.info("%s: %d dimensions, rows %s, %.1fs", kind, len(names), rows, seconds)


if __name__ == "__main__":
    sys.exit(run(main))
