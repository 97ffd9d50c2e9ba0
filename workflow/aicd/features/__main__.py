"""python -m aicd.features: compute one feature set for one task.

Fits on the train split only, transforms train/validation/test, and writes
features.npz (X_{split}, ids_{split}, feature_names), the fitted featurizer, and a report."""

from __future__ import annotations

import argparse
import logging
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd
from tqdm import tqdm

from ..cli import json_arg, run
from ..errors import AicdError
from ..io import write_json, write_pickle
from ..schema import SPLITS
from . import store
from .ast_features import AstFeaturizer
from .tfidf import TfidfSvdFeaturizer

log = logging.getLogger("aicd.features")
KINDS = ("tfidf", "ast", "concat")


def compute(kind: str, params: dict, tables: dict[str, pd.DataFrame], seed: int):
    """Return (matrices, featurizer, names, extra report fields)."""
    def progress(items, total):
        return tqdm(items, total=total, desc=f"{kind} features", unit="rows", mininterval=5, file=sys.stderr)

    def transform(split, fn, *columns):
        # The featurizers refuse zero rows; an empty validation split is legitimate.
        if tables[split].empty:
            return np.zeros((0, matrices["train"].shape[1]), dtype=np.float32)
        return fn(*[tables[split][c].tolist() for c in columns])

    matrices = {}
    if kind == "tfidf":
        featurizer = TfidfSvdFeaturizer(seed=seed, **params)
        matrices["train"] = featurizer.fit_transform(tables["train"]["code"].tolist())
        for split in SPLITS[1:]:
            matrices[split] = transform(split, featurizer.transform, "code")
        names = [f"svd_{i}" for i in range(matrices["train"].shape[1])]
        extra = {"tfidf_features": len(featurizer.vectorizer.vocabulary_),
                 "svd_components": int(matrices["train"].shape[1])}
    elif kind == "ast":
        featurizer = AstFeaturizer()
        t = tables["train"]
        matrices["train"] = featurizer.fit_transform(t["code"].tolist(), t["language"].tolist(), progress)
        for split in SPLITS[1:]:
            matrices[split] = transform(split, lambda c, lang: featurizer.transform(c, lang, progress), "code", "language")
        names = featurizer.feature_names
        col = names.index("parse_failed") if "parse_failed" in names else None
        extra = {"parse_failed": {s: int(matrices[s][:, col].sum()) if col is not None else 0 for s in SPLITS},
                 "parse_error_trees": {s: int(matrices[s][:, names.index("ast:has_error")].sum())
                                       if "ast:has_error" in names else 0 for s in SPLITS}}
    else:
        raise AicdError(f"unknown feature kind {kind!r}; use one of {KINDS}")
    return matrices, featurizer, names, extra


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(prog="python -m aicd.features", description=__doc__)
    parser.add_argument("--spec", required=True, type=json_arg, help="the feature set's config entry, as JSON")
    parser.add_argument("--tasks-dir", help="folder with {train,validation,test}.parquet (tfidf, ast)")
    parser.add_argument("--parts", nargs="*", default=[], help="features.npz files to concatenate (concat)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", required=True, help="output features.npz")
    parser.add_argument("--model", required=True, help="output fitted featurizer (pickle)")
    parser.add_argument("--report", required=True, help="output JSON report")
    args = parser.parse_args(argv)

    kind = args.spec.get("kind")
    params = args.spec.get("params") or {}
    started = time.perf_counter()
    if kind == "concat":
        if len(args.parts) < 2:
            raise AicdError("a concat feature set needs at least two parts")
        matrices, ids, names = store.concat([store.load(p) for p in args.parts])
        featurizer, extra = {"parts": args.parts}, {}
    else:
        if not args.tasks_dir:
            raise AicdError(f"feature kind {kind} needs --tasks-dir")
        tables = {s: pd.read_parquet(Path(args.tasks_dir) / f"{s}.parquet") for s in SPLITS}
        if tables["train"].empty:
            raise AicdError(f"the train split in {args.tasks_dir} is empty: nothing to fit features on; "
                            "rebuild the task (python -m aicd.splits) with rows in train")
        matrices, featurizer, names, extra = compute(kind, params, tables, args.seed)
        ids = {s: tables[s]["id"].to_numpy() for s in SPLITS}
    store.save(args.out, matrices, ids, names)
    write_pickle(featurizer, args.model)
    rows = {s: int(matrices[s].shape[0]) for s in SPLITS}
    seconds = time.perf_counter() - started
    write_json({"kind": kind, "params": params, "dimensions": len(names), "rows": rows,
                "seconds": round(seconds, 3), **extra}, args.report)
    log.info("%s: %d dimensions, rows %s, %.1fs", kind, len(names), rows, seconds)


if __name__ == "__main__":
    sys.exit(run(main))
