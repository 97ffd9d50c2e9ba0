"""python -m aicd.detectors.run_fast_detectgpt: the Fast-DetectGPT job of one task.

Like `python -m aicd.detectors`, but the gold labels are binarised (human vs every other class:
the paper's binarised Task 3), the raw criterion of each test row is a `criterion` column of
the predictions, and the record written to --model holds the threshold, the test AUROC and the
scoring model (`--lm-dir` overrides params.model with a folder the workflow trained)."""

from __future__ import annotations

import argparse
import logging
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

from ..stagecli import json_arg, run
from ..errors import AicdError
from ..io import write_parquet
from .base import build
from .fast_detectgpt import MACHINE, auroc

log = logging.getLogger("aicd.detectors.fast_detectgpt")


def fit_predict(spec: dict, tables: dict[str, pd.DataFrame], seed: int = 0, threads: int = 1,
                lm_dir: str | None = None):
    params = dict(spec.get("params") or {})
    if lm_dir:
        params["model"] = lm_dir
    detector = build(spec.get("kind", "fast_detectgpt"), params, seed=seed, threads=threads)
    X = {s: t["code"].to_numpy(dtype=object) for s, t in tables.items()}
    y = {s: detector.binarize(t["target"].to_numpy(dtype=object)) for s, t in tables.items()}
    detector.fit(X["train"], y["train"], X["validation"], y["validation"])
    pred, scores = detector.predict_with_scores(X["test"])
    out = pd.DataFrame({"id": tables["test"]["id"].to_numpy(), "gold": y["test"], "pred": pred})
    for j, cls in enumerate(detector.classes_):
        out[f"score_{cls}"] = scores[:, j].astype(np.float32)
    out["criterion"] = detector.criterion_.astype(np.float32)
    ok = np.isfinite(detector.criterion_)
    detector.run_report_ = {
        "test_rows": int(len(out)), "test_unscored_too_short": int((~ok).sum()),
        "test_auroc": auroc(detector.criterion_[ok], y["test"][ok] == MACHINE),
        "predict_seconds": round(detector.predict_seconds_, 2),
        "samples_per_second": round(len(out) / detector.predict_seconds_, 2) if detector.predict_seconds_ else None,
        "binarized_from": sorted(map(str, set(tables["test"]["target"]))),
    }
    if lm_dir and (Path(lm_dir) / "lm.json").is_file():
        import json
        detector.run_report_["scoring_lm"] = json.loads((Path(lm_dir) / "lm.json").read_text())
    return detector, out


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(prog="python -m aicd.detectors.run_fast_detectgpt", description=__doc__)
    parser.add_argument("--spec", required=True, type=json_arg, help="the detector's config entry, as JSON")
    parser.add_argument("--tasks-dir", required=True, help="folder with {train,validation,test}.parquet")
    parser.add_argument("--lm-dir", help="a causal LM folder (save_pretrained) that replaces params.model")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--out", required=True, help="output predictions parquet")
    parser.add_argument("--model", required=True, help="output record (JSON): threshold, AUROC, scoring model")
    args = parser.parse_args(argv)
    tables = {s: pd.read_parquet(Path(args.tasks_dir) / f"{s}.parquet") for s in ("train", "validation", "test")}
    if tables["test"].empty:
        raise AicdError(f"{args.tasks_dir}: the test split is empty")
    started = time.perf_counter()
    detector, predictions = fit_predict(args.spec, tables, args.seed, args.threads, args.lm_dir)
    detector.save(args.model)
    write_parquet(predictions, args.out)
    log.info("fast_detectgpt: %d test predictions in %.1fs, test AUROC %s", len(predictions),
             time.perf_counter() - started, detector.run_report_["test_auroc"])


if __name__ == "__main__":
    sys.exit(run(main))
