"""A detector over a feature set reads its task tables without their code column, and reads the
code of a split (or of its first rows) only where it is needed: the featurizer check, and test
rows that the stored features do not hold."""

from __future__ import annotations

import numpy as np
import pandas as pd
from aicd.detectors.fitting import fit_predict
from aicd.features.registry import load_featurizer
from aicd.features.tables import read_code, read_table
from fitted_task_helpers import fit_features, task_tables, write_task


def test_features_detector_reads_only_the_code_it_needs(trial_raw, tmp_path):
    tables = task_tables(trial_raw, n_train=200, n_test=60)
    paths = write_task(tmp_path / "task", {"train": tables["train"], "test": tables["test"]})
    features = fit_features(paths, tmp_path / "features")
    featurizer = load_featurizer(features / "featurizer.skops")
    read = {s: read_table(paths[s], s, skip=("code",)) for s in paths}
    read["validation"] = read["train"].iloc[0:0]
    assert "code" not in read["train"].columns and "language" in read["train"].columns
    asked = []

    def reader(split, rows=None):
        asked.append((split, rows))
        return read_code(paths.get(split), split, rows)

    predictions = fit_predict({"kind": "logistic_regression"}, read, str(features / "features.npz"), seed=0,
                              featurizer=featurizer, code_reader=reader).predictions
    assert len(predictions) == 60
    assert asked and all(rows is not None and rows <= 8 for _, rows in asked)  # the featurizer check's few rows

    # test rows the features do not hold are featurized, so their code is read whole
    other = tables["test"].assign(id=["new" + i for i in tables["test"]["id"]])
    other.to_parquet(paths["test"])
    read["test"] = read_table(paths["test"], "test", skip=("code",))
    asked.clear()
    again = fit_predict({"kind": "logistic_regression"}, read, str(features / "features.npz"), seed=0,
                        featurizer=featurizer, code_reader=reader).predictions
    assert ("test", None) in asked
    assert np.array_equal(again["pred"].to_numpy(), predictions["pred"].to_numpy())


def test_read_code_gives_a_split_or_its_first_rows(tmp_path):
    path = tmp_path / "t.parquet"
    pd.DataFrame({"id": ["a", "b", "c"], "code": ["x = 1", "y = 2", "z = 3"]}).to_parquet(path)
    assert list(read_code(path, "test")) == ["x = 1", "y = 2", "z = 3"]
    assert list(read_code(path, "test", rows=2)) == ["x = 1", "y = 2"]
    assert list(read_table(path, "test", skip=("code",)).columns) == ["id"]
    assert len(read_code(None, "validation")) == 0
