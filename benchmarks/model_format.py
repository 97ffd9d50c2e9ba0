"""Fitted models on disk: the skops files the workflow writes (aicd.models.fitted_files: read without
running code from them) beside the pickle earlier versions wrote, for the demo's detectors.
For each model: file size; the time to read it back into a model ready to predict (median of
--repeats reads in this warm process); and the same in a fresh process, imports included (what
`aicd detect` or a job pays once: skops itself is imported there). The models are fitted here by the
workflow's own jobs (python -m aicd.features, python -m aicd.detectors fit) on --train rows of
the shared trial subset with the demo's settings (config/demo.yaml); the pickle of each is the
same loaded object written with pickle, as earlier versions did. --models DIR measures the
.skops files of a finished run instead (e.g. results/models/binary).

  python benchmarks/model_format.py [--train 3000] [--repeats 5] [--trial PATH] [--models DIR]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "workflow"))
DEFAULT_TRIAL = REPO.parent / "shared" / "data" / "semeval2026-task13-trial" / "task_a_trial_subset.parquet"

# the demo's feature sets and file-stored detectors (config/demo.yaml)
FEATURES = {"tfidf": {"kind": "tfidf", "params": {"max_features": 5000, "ngram_max": 3, "svd_components": 500}},
            "ast": {"kind": "ast"}}
CATBOOST = {"iterations": 200, "depth": 6, "border_count": 32}
DETECTORS = {
    "majority": ({"kind": "majority"}, None),
    "lr_tfidf": ({"kind": "logistic_regression"}, "tfidf"),
    "svm_tfidf": ({"kind": "linear_svm", "params": {"C": 1.0}}, "tfidf"),
    "svm_ast_tfidf": ({"kind": "linear_svm", "params": {"C": 1.0}}, "ast_tfidf"),
    "cb_tfidf": ({"kind": "catboost", "params": CATBOOST}, "tfidf"),
    "cb_ast_tfidf": ({"kind": "catboost", "params": CATBOOST}, "ast_tfidf"),
    "robust": ({"kind": "robust"}, None),
}


def fit_models(trial: str, train: int, tmp: Path) -> list[Path]:
    import pandas as pd
    from aicd.detectors.__main__ import main as detectors_main
    from aicd.features.__main__ import main as features_main
    from aicd.outputs import beside

    raw = pd.read_parquet(trial).sort_values("row_id").reset_index(drop=True).head(train + 500)
    table = pd.DataFrame({"id": [f"r{r}" for r in raw["row_id"]], "code": raw["code"], "language": raw["language"],
                          "target": ["human" if g == "Human" else "machine" for g in raw["generator"]]})
    table.iloc[:train].to_parquet(tmp / "train.parquet")
    table.iloc[train:].to_parquet(tmp / "test.parquet")
    splits = ["--train", str(tmp / "train.parquet"), "--test", str(tmp / "test.parquet")]
    for name, spec in FEATURES.items():
        features_main(["--spec", json.dumps(spec), *splits, "--threads", "2", "--out", beside(tmp / name, "features"),
                       "--model", beside(tmp / name, "featurizer"), "--report", beside(tmp / name, "features_report")])
    parts = [beside(tmp / p, "features") for p in ("ast", "tfidf")]
    features_main(["--spec", '{"kind": "concat"}', "--parts", *parts, "--out", beside(tmp / "ast_tfidf", "features"),
                   "--model", beside(tmp / "ast_tfidf", "featurizer"),
                   "--report", beside(tmp / "ast_tfidf", "features_report")])
    models = []
    for name, (spec, features) in DETECTORS.items():
        started = time.perf_counter()
        args = ["--features", beside(tmp / features, "features"),
                "--featurizer", beside(tmp / features, "featurizer")] if features else []
        detectors_main(["fit", "--spec", json.dumps(spec), *splits, *args, "--threads", "2", "--task", "binary",
                        "--out", str(tmp / f"{name}.parquet"), "--model", str(tmp / f"{name}.skops")])
        print(f"fitted {name} in {time.perf_counter() - started:.1f} s", file=sys.stderr)
        models.append(tmp / f"{name}.skops")
    return models


def timed(read, repeats: int) -> float:
    seconds = []
    for _ in range(repeats):
        started = time.perf_counter()
        read()
        seconds.append(time.perf_counter() - started)
    return statistics.median(seconds)


COLD = """if True:
    import sys, time
    started = time.perf_counter()
    from aicd.detectors.bundle import load_bundle
    from aicd.common.io import read_trusted_pickle
    from aicd.outputs import FITTED_SUFFIX
    load_bundle(sys.argv[1]) if sys.argv[1].endswith(FITTED_SUFFIX) else read_trusted_pickle(sys.argv[1])
    print(time.perf_counter() - started)
"""


def cold(path: Path, repeats: int) -> float:
    """Seconds to import aicd and read the model in a fresh process (median)."""
    import os
    import subprocess

    env = {**os.environ, "PYTHONPATH": str(REPO / "workflow")}
    return statistics.median(float(subprocess.run([sys.executable, "-c", COLD, str(path)], capture_output=True,
                                                  text=True, check=True, env=env).stdout) for _ in range(repeats))


def measure(model: Path, tmp: Path, repeats: int) -> dict:
    from aicd.common.io import read_trusted_pickle, write_pickle
    from aicd.detectors.bundle import load_bundle

    bundle = load_bundle(model)
    as_pickle = tmp / f"{model.stem}.pkl"
    write_pickle(bundle, as_pickle)
    return {"model": model.stem, "skops_kb": model.stat().st_size / 1024, "pickle_kb": as_pickle.stat().st_size / 1024,
            "skops_load_s": timed(lambda: load_bundle(model), repeats),
            "pickle_load_s": timed(lambda: read_trusted_pickle(as_pickle), repeats),
            "skops_cold_s": cold(model, 3), "pickle_cold_s": cold(as_pickle, 3)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--train", type=int, default=3000)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--trial", default=str(DEFAULT_TRIAL))
    parser.add_argument("--models", help="measure the .skops models in this folder instead of fitting them")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        models = sorted(Path(args.models).glob("*.skops")) if args.models else fit_models(args.trial, args.train, tmp)
        rows = [measure(m, tmp, args.repeats) for m in models]
    print("| model | skops KB | pickle KB | skops read s | pickle read s | fresh process: skops s | pickle s |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    for r in rows:
        print(f"| {r['model']} | {r['skops_kb']:,.0f} | {r['pickle_kb']:,.0f} | {r['skops_load_s']:.3f} "
              f"| {r['pickle_load_s']:.3f} | {r['skops_cold_s']:.2f} | {r['pickle_cold_s']:.2f} |")


if __name__ == "__main__":
    main()
