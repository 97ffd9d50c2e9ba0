"""A detector's output is checked in its detect job (aicd.detectors.output_check): a plug-in
that returns 0/1 instead of label names, NaN scores, or logits where probabilities are promised
fails there with a message naming it, the method and an example row; the score kind is
declared in the predictions file and reaches the score file (the SVM's margins)."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest
from aicd.common.errors import AicdError
from aicd.data.scores import declared
from aicd.detectors.__main__ import main as detectors_main
from aicd.scoring.__main__ import main as scoring_main
from fitted_task_helpers import fit_features, task_tables, write_task

UNIT = Path(__file__).resolve().parents[1]  # tests/unit, where untrusted_plugins.py lives


@pytest.fixture
def task(trial_raw, tmp_path, monkeypatch):
    monkeypatch.syspath_prepend(str(UNIT))
    tables = task_tables(trial_raw, n_train=300, n_test=120)
    train = tables["train"]
    tables = {"train": train.iloc[:220], "validation": train.iloc[220:].reset_index(drop=True), "test": tables["test"]}
    return write_task(tmp_path / "task", tables), tables


def fit(paths: dict, out: Path, spec: dict, features: Path | None = None) -> pd.DataFrame:
    out.mkdir(parents=True, exist_ok=True)
    args = ["fit", "--spec", json.dumps(spec), "--tasks-dir", str(paths["train"].parent), "--task", "T1",
            "--out", str(out / "p.parquet"), "--model", str(out / "model"), "--report", str(out / "r.json"),
            "--validation-scores", str(out / "v.parquet")]
    if features is not None:
        args += ["--features", str(features / "features.npz"), "--featurizer", str(next(features.glob("featurizer.*")))]
    detectors_main(args)
    return pd.read_parquet(out / "p.parquet")


def test_index_labels_fail_in_the_detect_job_naming_the_plugin(task, tmp_path):
    paths, tables = task
    with pytest.raises(AicdError) as err:
        fit(paths, tmp_path / "idx", {"kind": "python", "params": {"object": "untrusted_plugins:IndexLabelDetector"}})
    message = str(err.value)
    assert "object untrusted_plugins:IndexLabelDetector" in message and "predict returned labels outside" in message
    assert "['human', 'machine']" in message and f"id {tables['test']['id'][0]!r}" in message
    assert not (tmp_path / "idx" / "p.parquet").exists()  # nothing half-right is written


def test_nan_scores_and_unpromised_logits_fail_there_too(task, tmp_path):
    paths, _ = task
    with pytest.raises(AicdError, match="predict_scores returned NaN for .* rows, e.g. row"):
        fit(paths, tmp_path / "nan", {"kind": "python", "params": {"object": "untrusted_plugins:NanScoreDetector"}})
    with pytest.raises(AicdError, match=r"promises probabilities .* outside \[0, 1\]"):
        fit(paths, tmp_path / "logit", {"kind": "python", "params": {"object": "untrusted_plugins:LogitDetector"}})
    p = fit(paths, tmp_path / "declared", {"kind": "python",
                                           "params": {"object": "untrusted_plugins:DeclaredLogitDetector"}})
    assert declared(p) == "score" and (p["score_machine"] > 1).any()  # its own scale, said so


def test_svm_margins_are_declared_and_reach_the_score_file(task, tmp_path):
    paths, _ = task
    features = fit_features({k: paths[k] for k in ("train", "validation", "test")}, tmp_path / "features")
    svm = fit(paths, tmp_path / "svm", {"kind": "linear_svm"}, features)
    lr = fit(paths, tmp_path / "lr", {"kind": "logistic_regression"}, features)
    assert declared(svm) == "margin" and declared(lr) == "probability"
    assert (svm["score_machine"].abs() > 1).any()  # margins, not probabilities
    scoring_main(["--task", "T1", "--detector", "svm", "--predictions", str(tmp_path / "svm" / "p.parquet"),
                  "--test", str(paths["test"]), "--labels", "human", "machine", "--resamples", "50",
                  "--validation-scores", str(tmp_path / "svm" / "v.parquet"), "--out", str(tmp_path / "s.json")])
    assert json.loads((tmp_path / "s.json").read_text())["score_kind"] == "margin"
