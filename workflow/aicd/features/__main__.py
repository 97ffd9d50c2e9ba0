"""python -m aicd.features: compute one feature set for one task.

Fits on the train split only, transforms train/validation/test, and writes features.npz
(X_{split}, ids_{split}, feature_names), the fitted featurizer (a self-contained pickle: it can
featurize new code with no other file), and a report.

Rows come from --tasks-dir FOLDER or from --train/--validation/--test files (validation and
test optional here; absent ones give zero rows). A concat set joins the parts' features.npz
(--parts) and their fitted featurizers (--part-models, by default featurizer.pkl beside each part)."""

from __future__ import annotations

import argparse
import logging
import sys
import time
from pathlib import Path

import pandas as pd

from ..stagecli import json_arg, run
from ..errors import AicdError
from ..io import write_json, write_pickle
from ..schema import SPLITS
from . import store
from .registry import KINDS, ConcatFeaturizer, build, load_featurizer
from .tables import add_arguments, read_splits

log = logging.getLogger("aicd.features")


def compute(kind: str, params: dict, tables: dict[str, pd.DataFrame], seed: int):
    """Fit a table-based featurizer on train; return (matrices, featurizer, names, extra report fields)."""
    featurizer = build(kind, params, seed)
    matrices = {"train": featurizer.fit_transform(tables["train"])}
    for split in SPLITS[1:]:
        matrices[split] = featurizer.transform(tables[split])
    return matrices, featurizer, featurizer.feature_names, featurizer.report_fields(matrices)


def concat_parts(parts: list[str], part_models: list[str]):
    """(matrices, ids, names, featurizer) of a concatenated feature set."""
    if len(parts) < 2:
        raise AicdError("a concat feature set needs at least two parts")
    models = part_models or [str(Path(p).with_name("featurizer.pkl")) for p in parts]
    if len(models) != len(parts):
        raise AicdError(f"{len(parts)} --parts but {len(models)} --part-models: give one fitted featurizer per part")
    fitted = [load_featurizer(path) for path in models]
    matrices, ids, names = store.concat([store.load(p) for p in parts])
    featurizer = ConcatFeaturizer(fitted)
    if featurizer.feature_names != names:
        raise AicdError("the parts' featurizers do not match their features.npz (feature names differ): rebuild them")
    return matrices, ids, names, featurizer


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(prog="python -m aicd.features", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--spec", required=True, type=json_arg, help="the feature set's config entry, as JSON")
    add_arguments(parser, test_required=False)
    parser.add_argument("--parts", nargs="*", default=[], help="features.npz files to concatenate (concat)")
    parser.add_argument("--part-models", nargs="*", default=[],
                        help="the parts' fitted featurizer pickles (concat; default: featurizer.pkl beside each part)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", required=True, help="output features.npz")
    parser.add_argument("--model", required=True, help="output fitted featurizer (pickle)")
    parser.add_argument("--report", required=True, help="output JSON report")
    args = parser.parse_args(argv)

    kind = args.spec.get("kind")
    params = args.spec.get("params") or {}
    if kind not in KINDS:
        raise AicdError(f"unknown feature kind {kind!r}; use one of {', '.join(KINDS)}")
    started = time.perf_counter()
    if kind == "concat":
        matrices, ids, names, featurizer = concat_parts(args.parts, args.part_models)
        extra = featurizer.report_fields(matrices)
    else:
        if not (args.tasks_dir or args.train):
            raise AicdError(f"feature kind {kind} needs --tasks-dir or --train")
        tables = read_splits(args, test_required=False)
        if tables["train"].empty:
            where = args.tasks_dir or args.train
            raise AicdError(f"the train split in {where} is empty: nothing to fit features on; "
                            "rebuild the task (python -m aicd.splits) with rows in train")
        matrices, featurizer, names, extra = compute(kind, params, tables, args.seed)
        ids = {s: tables[s]["id"].to_numpy(dtype=str) for s in SPLITS}
    store.save(args.out, matrices, ids, names)
    write_pickle(featurizer, args.model)
    rows = {s: int(matrices[s].shape[0]) for s in SPLITS}
    seconds = time.perf_counter() - started
    write_json({"kind": kind, "params": params, "dimensions": len(names), "rows": rows,
                "seconds": round(seconds, 3), **extra}, args.report)
    log.info("%s: %d dimensions, rows %s, %.1fs", kind, len(names), rows, seconds)


if __name__ == "__main__":
    sys.exit(run(main))
