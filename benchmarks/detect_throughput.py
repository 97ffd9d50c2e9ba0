"""Throughput of `aicd detect` after the model is loaded: files read, languages named,
featurized (TF-IDF + SVD, paper settings) and labelled by a TF-IDF logistic-regression model,
over a folder of --files code files. The model is fitted here by the workflow's own jobs
(python -m aicd.features, python -m aicd.detectors) on --train rows of the shared trial subset;
the files are other rows of it, written with their language's extension. Bar:
>= 500 files/s on 2 cores.

  python benchmarks/detect_throughput.py [--files 1000] [--train 2000] [--trial PATH]
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "workflow"))
DEFAULT_TRIAL = REPO.parent / "shared" / "data" / "semeval2026-task13-trial" / "task_a_trial_subset.parquet"
EXT = {"Python": ".py", "C++": ".cpp", "Java": ".java"}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--files", type=int, default=1000)
    parser.add_argument("--train", type=int, default=2000)
    parser.add_argument("--trial", default=str(DEFAULT_TRIAL))
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()

    import pandas as pd

    from aicd.detectors.__main__ import main as detectors_main
    from aicd.detectors.apply import detect, read_files
    from aicd.detectors.bundle import load_bundle
    from aicd.features.__main__ import main as features_main

    raw = pd.read_parquet(args.trial).sort_values("row_id").reset_index(drop=True)
    if len(raw) < args.train + args.files:
        sys.exit(f"the trial file has {len(raw)} rows; need --train + --files <= that")
    table = pd.DataFrame({"id": [f"r{r}" for r in raw["row_id"]], "code": raw["code"], "language": raw["language"],
                          "target": ["human" if g == "Human" else "machine" for g in raw["generator"]]})
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        table.iloc[:args.train].to_parquet(tmp / "train.parquet")
        table.iloc[args.train:args.train + 50].to_parquet(tmp / "test.parquet")
        features_main(["--spec", json.dumps({"kind": "tfidf"}), "--train", str(tmp / "train.parquet"),
                       "--out", str(tmp / "features.npz"), "--model", str(tmp / "featurizer.pkl"),
                       "--report", str(tmp / "features.json")])
        detectors_main(["fit", "--spec", json.dumps({"kind": "logistic_regression"}), "--train", str(tmp / "train.parquet"),
                        "--test", str(tmp / "test.parquet"), "--features", str(tmp / "features.npz"),
                        "--featurizer", str(tmp / "featurizer.pkl"), "--out", str(tmp / "p.parquet"),
                        "--model", str(tmp / "lr_tfidf.pkl")])
        folder = tmp / "code"
        folder.mkdir()
        files = table.iloc[args.train:args.train + args.files]
        for row in files.itertuples():
            (folder / f"{row.id}{EXT[row.language]}").write_bytes(row.code.encode("utf-8"))
        started = time.perf_counter()
        model = load_bundle(tmp / "lr_tfidf.pkl")
        load_seconds = time.perf_counter() - started
        best = float("inf")
        for _ in range(args.repeats):
            started = time.perf_counter()
            result = detect(model, read_files([str(folder)]))
            best = min(best, time.perf_counter() - started)
        assert len(result) == args.files
    print(f"aicd detect, TF-IDF (5,000 n-grams, SVD 500) + logistic regression, {args.files} files "
          f"({', '.join(f'{k} {v}' for k, v in files['language'].value_counts().items())}), "
          f"model fitted on {args.train} rows")
    print(f"  load {load_seconds:.2f} s; read + featurize + predict {best:.3f} s (best of {args.repeats}): "
          f"{args.files / best:.0f} files/s")


if __name__ == "__main__":
    main()
