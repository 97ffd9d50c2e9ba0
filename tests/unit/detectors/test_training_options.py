"""A detector's `training:` options (aicd.detectors.training): perturbation augmentation of the
train split and language-balanced resampling, through the detectors stage's CLI."""

from __future__ import annotations

import json
from collections import Counter

import numpy as np
import pandas as pd
import pytest
from aicd.common.errors import AicdError
from aicd.detectors.__main__ import main as detectors_main
from aicd.detectors.training import augmented_rows, balanced_indices
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


@pytest.fixture(scope="module")
def task(trial_raw, tmp_path_factory):
    """300 train and 80 test rows of the trial and their TF-IDF features, fitted once for the
    tests below (each fits its own detector on them)."""
    root = tmp_path_factory.mktemp("training")
    tables = task_tables(trial_raw, n_train=300, n_test=80)
    paths = write_task(root / "task", {"train": tables["train"], "test": tables["test"]})
    return root / "task", tables, fit_features(paths, root / "features")


AUGMENTED = {"kind": "logistic_regression", "training": {"augment": ["rename", "no_comments"], "balance_languages": True}}


def test_training_options_through_the_cli(task, tmp_path):
    tasks, _tables, features = task
    detectors_main(["fit", "--spec", json.dumps(AUGMENTED), "--tasks-dir", str(tasks),
                    "--features", str(features / "features.npz"), "--featurizer", str(features / "featurizer.skops"),
                    "--out", str(tmp_path / "p.parquet"), "--model", str(tmp_path / "m.pkl"),
                    "--report", str(tmp_path / "r.json")])
    training = json.loads((tmp_path / "r.json").read_text())["training"]
    assert training["rows_before"] == 300 and training["augmented_rows"] > 100
    counts = set(training["balanced_languages"].values())
    assert len(counts) == 1 and training["rows_after"] == sum(training["balanced_languages"].values())
    assert len(pd.read_parquet(tmp_path / "p.parquet")) == 80


def test_augmenting_features_needs_the_featurizer(task, tmp_path):
    tasks, _tables, features = task
    no_featurizer = ["fit", "--spec", json.dumps(AUGMENTED), "--tasks-dir", str(tasks),
                     "--features", str(features / "features.npz"), "--out", str(tmp_path / "q.parquet"),
                     "--model", str(tmp_path / "n.pkl")]
    with pytest.raises(AicdError, match="needs --featurizer"):
        detectors_main(no_featurizer)


def test_calibrated_scores_are_probabilities_that_the_labels_follow(trial_raw, tmp_path):
    tables = task_tables(trial_raw, n_train=300, n_test=80)
    train = tables["train"]
    split = {"train": train.iloc[:220], "validation": train.iloc[220:], "test": tables["test"]}
    paths = write_task(tmp_path / "task", split)
    features = fit_features(paths, tmp_path / "features")
    spec = {"kind": "linear_svm", "training": {"calibrate": True}}
    detectors_main(["fit", "--spec", json.dumps(spec), "--tasks-dir", str(tmp_path / "task"),
                    "--features", str(features / "features.npz"), "--featurizer", str(features / "featurizer.skops"),
                    "--out", str(tmp_path / "p.parquet"), "--model", str(tmp_path / "m.pkl"),
                    "--report", str(tmp_path / "r.json")])
    p = pd.read_parquet(tmp_path / "p.parquet")
    scores = p[["score_human", "score_machine"]].to_numpy()
    assert np.allclose(scores.sum(axis=1), 1, atol=1e-5) and (scores >= 0).all()  # an SVM's margins, now probabilities
    assert ((scores[:, 1] > scores[:, 0]) == (p["pred"] == "machine")).all()
    assert json.loads((tmp_path / "r.json").read_text())["validation"]["calibrated_on"] == 80
    from aicd.cli import main as aicd

    (tmp_path / "a.py").write_text(split["test"]["code"].iloc[0])
    assert aicd(["detect", str(tmp_path / "a.py"), "--model", str(tmp_path / "m.pkl"), "--out", str(tmp_path / "d.csv")]) == 0
    d = pd.read_csv(tmp_path / "d.csv")
    assert d["score_machine"].iloc[0] == pytest.approx(p["score_machine"].iloc[0], abs=1e-4)  # the saved model is calibrated


def test_ood_score_is_about_one_in_distribution_and_grows_away_from_it():
    from aicd.detectors.novelty import Novelty

    rng = np.random.default_rng(0)
    X = rng.normal(0, 1, (3000, 40))
    novelty = Novelty(X, seed=0)
    near = novelty.score(rng.normal(0, 1, (500, 40)))
    far = novelty.score(rng.normal(0, 1, (500, 40)) + 4.0)
    assert 0.8 < np.median(near) < 1.3 and np.median(far) > 2.0


@pytest.fixture(scope="module")
def fitted_with_ood(task, tmp_path_factory):
    tasks, tables, features = task
    out = tmp_path_factory.mktemp("ood")
    detectors_main(["fit", "--spec", json.dumps({"kind": "logistic_regression"}), "--tasks-dir", str(tasks),
                    "--features", str(features / "features.npz"), "--featurizer", str(features / "featurizer.skops"),
                    "--out", str(out / "p.parquet"), "--model", str(out / "m.pkl")])
    return out, tables


def test_predictions_carry_the_ood_score(fitted_with_ood):
    out, _ = fitted_with_ood
    p = pd.read_parquet(out / "p.parquet")
    assert p["ood_score"].notna().all() and 0.5 < p["ood_score"].median() < 2.0


def test_aicd_detect_scores_code_unlike_the_training_rows_further_out(fitted_with_ood, tmp_path):
    from aicd.cli import main as aicd

    out, tables = fitted_with_ood
    (tmp_path / "code").mkdir()
    (tmp_path / "code" / "usual.py").write_text(tables["test"]["code"].iloc[0])
    (tmp_path / "code" / "odd.py").write_text("\n".join(f"zz{i} = {i} ** {i} ^ ~{i} @ 0x{i}" for i in range(40)))
    assert aicd(["detect", str(tmp_path / "code"), "--model", str(out / "m.pkl"),
                 "--out", str(tmp_path / "d.csv")]) == 0
    d = pd.read_csv(tmp_path / "d.csv").set_index("path")
    odd = next(k for k in d.index if k.endswith("odd.py"))
    usual = next(k for k in d.index if k.endswith("usual.py"))
    assert d.loc[odd, "ood_score"] > d.loc[usual, "ood_score"]


def test_ood_score_on_uncentred_features_is_about_one(trial_raw, tmp_path):
    """AST counts are far from zero mean, and the linear detectors standardise their train
    matrix in place while fitting: the score must be taken on the rows as they were."""
    tables = task_tables(trial_raw, n_train=300, n_test=80)
    paths = write_task(tmp_path / "task", {"train": tables["train"], "test": tables["test"]})
    features = fit_features(paths, tmp_path / "features", spec={"kind": "ast"})
    for kind in ("logistic_regression", "linear_svm"):
        detectors_main(["fit", "--spec", json.dumps({"kind": kind}), "--tasks-dir", str(tmp_path / "task"),
                        "--features", str(features / "features.npz"), "--featurizer", str(features / "featurizer.skops"),
                        "--out", str(tmp_path / f"{kind}.parquet"), "--model", str(tmp_path / f"{kind}.pkl")])
        score = pd.read_parquet(tmp_path / f"{kind}.parquet")["ood_score"]
        assert 0.5 < score.median() < 2.0, (kind, score.median())
