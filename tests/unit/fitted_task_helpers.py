"""A small real task (the SemEval-2026 Task 13 trial subset, labels from the generator column)
and the workflow's own jobs run on it: features, then a detector with its fitted featurizer."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
from aicd.detectors.__main__ import main as detectors_main
from aicd.features.__main__ import main as features_main

TFIDF = {"kind": "tfidf", "params": {"max_features": 2000, "svd_components": 64}}


def task_tables(trial_raw: pd.DataFrame, n_train: int = 300, n_test: int = 120) -> dict[str, pd.DataFrame]:
    rows = trial_raw.sort_values("row_id").head(n_train + n_test).reset_index(drop=True)
    table = pd.DataFrame({"id": [f"r{r}" for r in rows["row_id"]], "code": rows["code"],
                          "language": rows["language"],
                          # the file's label column runs the wrong way (its README): the generator decides
                          "target": ["human" if g == "Human" else "machine" for g in rows["generator"]]})
    return {"train": table.iloc[:n_train].reset_index(drop=True),
            "test": table.iloc[n_train:].reset_index(drop=True)}


def task_with_validation(trial_raw: pd.DataFrame, folder: Path, n_fit: int, n_validation: int,
                         n_test: int) -> tuple[Path, dict[str, pd.DataFrame]]:
    """A task folder with train, validation (the next rows of the trial) and test tables."""
    tables = task_tables(trial_raw, n_train=n_fit + n_validation, n_test=n_test)
    train = tables["train"]
    tables = {"train": train.iloc[:n_fit], "validation": train.iloc[n_fit:].reset_index(drop=True),
              "test": tables["test"]}
    write_task(folder, tables)
    return folder, tables


def write_task(folder: Path, tables: dict[str, pd.DataFrame]) -> dict[str, Path]:
    folder.mkdir(parents=True, exist_ok=True)
    paths = {}
    for split, table in tables.items():
        paths[split] = folder / f"{split}.parquet"
        table.to_parquet(paths[split])
    return paths


def fit_features(paths: dict[str, Path], out: Path, spec: dict = TFIDF, seed: int = 0, threads: int = 1) -> Path:
    out.mkdir(parents=True, exist_ok=True)
    args = ["--spec", json.dumps(spec), "--train", str(paths["train"]), "--seed", str(seed), "--threads", str(threads),
            "--out", str(out / "features.npz"), "--model", str(out / "featurizer.skops"),
            "--report", str(out / "report.json")]
    if "test" in paths:
        args += ["--test", str(paths["test"])]
    features_main(args)
    return out


def fit_detector(paths: dict[str, Path], features: Path, out: Path, kind: str = "logistic_regression",
                 params: dict | None = None) -> tuple[Path, Path]:
    out.mkdir(parents=True, exist_ok=True)
    model, predictions = out / f"{kind}.skops", out / f"{kind}.parquet"
    detectors_main(["fit", "--spec", json.dumps({"kind": kind, "params": params or {}}), "--train", str(paths["train"]),
                    "--test", str(paths["test"]), "--features", str(features / "features.npz"),
                    "--featurizer", str(features / "featurizer.skops"), "--task", "T1",
                    "--out", str(predictions), "--model", str(model), "--report", str(out / f"{kind}.json")])
    return model, predictions
