"""A detector's `training:` options (aicd.detectors.training): perturbation augmentation of the
train split and language-balanced resampling, through the detectors stage's CLI."""

from __future__ import annotations

import json
from collections import Counter

import numpy as np
import pandas as pd
import pytest

from aicd.detectors.__main__ import main as detectors_main
from aicd.detectors.training import augmented_rows, balanced_indices
from aicd.errors import AicdError
from fitted_task_helpers import fit_features, task_tables, write_task


def test_balanced_indices_give_every_language_the_largest_count():
    languages = ["Python"] * 10 + ["Java"] * 3 + ["C++"] * 1
    idx = balanced_indices(languages, seed=0)
    counts = Counter(np.asarray(languages)[idx])
    assert counts == {"Python": 10, "Java": 10, "C++": 10}
    assert set(range(14)) <= set(idx)  # every row is kept at least once
    assert np.array_equal(idx, balanced_indices(languages, seed=0))


def test_augmented_rows_are_labelled_copies_of_changed_rows():
    train = pd.DataFrame({"id": ["a", "b"], "code": ["def f(x):\n    return x\n", "print(1)\n"],
                          "language": ["Python", "Python"], "target": ["human", "machine"]})
    extra = augmented_rows(train, ["rename", "reindent_tabs"], seed=0)
    assert list(extra["id"]) == ["a~rename", "a~reindent_tabs"]  # b: nothing to rename or re-indent
    assert list(extra["target"]) == ["human", "human"] and "v1" in extra["code"].iloc[0]
    with pytest.raises(AicdError, match="unknown perturbations"):
        augmented_rows(train, ["shuffle"], seed=0)


def test_training_options_through_the_cli(trial_raw, tmp_path):
    tables = task_tables(trial_raw, n_train=300, n_test=80)
    paths = write_task(tmp_path / "task", {"train": tables["train"], "test": tables["test"]})
    features = fit_features(paths, tmp_path / "features")
    spec = {"kind": "logistic_regression", "training": {"augment": ["rename", "no_comments"], "balance_languages": True}}
    detectors_main(["fit", "--spec", json.dumps(spec), "--tasks-dir", str(tmp_path / "task"),
                    "--features", str(features / "features.npz"), "--featurizer", str(features / "featurizer.pkl"),
                    "--out", str(tmp_path / "p.parquet"), "--model", str(tmp_path / "m.pkl"),
                    "--report", str(tmp_path / "r.json")])
    training = json.loads((tmp_path / "r.json").read_text())["training"]
    assert training["rows_before"] == 300 and training["augmented_rows"] > 100
    counts = set(training["balanced_languages"].values())
    assert len(counts) == 1 and training["rows_after"] == sum(training["balanced_languages"].values())
    assert len(pd.read_parquet(tmp_path / "p.parquet")) == 80
    no_featurizer = ["fit", "--spec", json.dumps(spec), "--tasks-dir", str(tmp_path / "task"),
                     "--features", str(features / "features.npz"), "--out", str(tmp_path / "q.parquet"),
                     "--model", str(tmp_path / "n.pkl")]
    with pytest.raises(AicdError, match="needs --featurizer"):
        detectors_main(no_featurizer)
