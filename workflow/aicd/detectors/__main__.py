"""python -m aicd.detectors: fit one detector on a task's train split and predict its test split.

Writes predictions (id, gold, pred, score_<class>...) and the fitted detector: a pickle, or a
folder for detectors stored with save_pretrained (the encoders)."""

from __future__ import annotations

import argparse
import logging
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

from ..cli import json_arg, run
from ..errors import AicdError
from ..io import write_parquet
from ..features import store
from . import build

log = logging.getLogger("aicd.detectors")


def fit_predict(spec: dict, tables: dict[str, pd.DataFrame], features: str | None, seed: int, threads: int = 1,
                work_dir: str | None = None, cache_dir: str | None = None):
    detector = build(spec["kind"], spec.get("params") or {}, seed=seed, threads=threads)
    detector.work_dir, detector.cache_dir = work_dir, cache_dir
    if detector.needs_text:
        X = {s: t["code"].to_numpy(dtype=object) for s, t in tables.items()}
    elif detector.needs_features:
        if not features:
            raise AicdError(f"detector kind {spec['kind']} needs a feature set: set features: in its config entry")
        matrices, ids, _ = store.load(features)
        for split in ("train", "validation", "test"):
            if not np.array_equal(ids[split], tables[split]["id"].to_numpy(dtype=str)):
                raise AicdError(f"features {features} do not match the {split} split's rows: rebuild them")
        X = matrices
    else:
        X = {s: np.zeros((len(t), 0), dtype=np.float32) for s, t in tables.items()}
    y = {s: tables[s]["target"].to_numpy(dtype=object) for s in tables}
    if len(np.unique(y["train"])) < 2 and detector.needs_features:
        raise AicdError("the train split has fewer than two classes: nothing to learn")
    detector.fit(X["train"], y["train"], X["validation"], y["validation"])
    pred, scores = detector.predict_with_scores(X["test"])
    out = pd.DataFrame({"id": tables["test"]["id"].to_numpy(), "gold": y["test"], "pred": np.asarray(pred, dtype=object)})
    if scores is not None:
        for j, cls in enumerate(detector.classes_):
            out[f"score_{cls}"] = scores[:, j].astype(np.float32)
    return detector, out


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(prog="python -m aicd.detectors", description=__doc__)
    parser.add_argument("--spec", required=True, type=json_arg, help="the detector's config entry, as JSON")
    parser.add_argument("--tasks-dir", required=True, help="folder with {train,validation,test}.parquet")
    parser.add_argument("--features", help="features.npz, for detectors that use features")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--out", required=True, help="output predictions parquet")
    parser.add_argument("--model", required=True, help="output fitted detector (a pickle, or a folder for encoders)")
    parser.add_argument("--work-dir", help="scratch folder kept across a killed job (encoder checkpoints)")
    parser.add_argument("--cache-dir", help="shared cache folder (tokenised splits)")
    args = parser.parse_args(argv)
    tables = {s: pd.read_parquet(Path(args.tasks_dir) / f"{s}.parquet") for s in ("train", "validation", "test")}
    if tables["train"].empty or tables["test"].empty:
        raise AicdError(f"{args.tasks_dir}: the train or test split is empty")
    started = time.perf_counter()
    detector, predictions = fit_predict(args.spec, tables, args.features, args.seed, args.threads,
                                        args.work_dir, args.cache_dir)
    detector.save(args.model)
    write_parquet(predictions, args.out)
    log.info("%s: %d test predictions in %.1fs", args.spec["kind"], len(predictions), time.perf_counter() - started)


if __name__ == "__main__":
    sys.exit(run(main))
