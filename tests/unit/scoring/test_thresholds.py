"""Threshold metrics: AUROC against scikit-learn, thresholds set on validation human rows only,
the TPR and realised FPR at them with intervals, per-domain thresholds, and a real detector's
validation scores going through the scoring stage's CLI."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
from aicd.common.errors import AicdError
from aicd.data.metrics import auroc
from aicd.data.metrics import quantile_threshold as threshold_at
from aicd.detectors.__main__ import main as detectors_main
from aicd.scoring.__main__ import main as scoring_main
from aicd.scoring.thresholds import BINS, auroc_interval, rates, threshold_metrics
from fitted_task_helpers import fit_features, task_tables, write_task
from sklearn.metrics import roc_auc_score


def synthetic(n: int, seed: int, shift: float = 1.5, domains=("algorithmic", "general")):
    rng = np.random.default_rng(seed)
    human = rng.random(n) < 0.5
    raw = rng.normal(0, 1, n) + np.where(human, 0.0, shift)
    p_machine = 1 / (1 + np.exp(-raw))
    return pd.DataFrame({"id": [f"r{i}" for i in range(n)], "gold": np.where(human, "human", "machine"),
                         "pred": np.where(p_machine > 0.5, "machine", "human"),
                         "score_human": 1 - p_machine, "score_machine": p_machine,
                         "domain": rng.choice(domains, n)})


def test_auroc_is_scikit_learns_with_ties():
    rng = np.random.default_rng(0)
    scores = rng.integers(0, 20, 500).astype(float)  # many ties
    positive = rng.random(500) < 0.4
    assert auroc(scores, positive) == pytest.approx(roc_auc_score(positive, scores))
    assert auroc(scores, np.zeros(500, bool)) is None


def test_auroc_interval_holds_the_estimate_binned_or_not():
    t = synthetic(20_000, 1)
    scores, positive = 1 - t["score_human"].to_numpy(), t["gold"].to_numpy() != "human"
    assert len(np.unique(scores)) > BINS  # the binned path
    exact = auroc(scores, positive)
    lo, hi = auroc_interval(scores, positive, 500, 0)
    assert lo < exact < hi and hi - lo < 0.03
    small = auroc_interval(scores[:300], positive[:300], 500, 0)
    assert small[1] - small[0] > hi - lo  # fewer rows, wider interval
    assert auroc_interval(scores, positive, 500, 0) == [lo, hi]  # seeded


def test_threshold_allows_at_most_the_fpr_of_human_rows_above_it():
    human = np.arange(200, dtype=float)
    for fpr in (0.01, 0.05, 0.2):
        t = threshold_at(human, fpr)
        assert (human > t).mean() <= fpr
        assert (human >= t).mean() > fpr  # one step lower would flag more than fpr
    assert threshold_at(np.array([]), 0.01) is None


def test_rates_count_the_cells():
    flagged = np.array([1, 1, 0, 0, 1, 0], bool)
    positive = np.array([1, 1, 1, 0, 0, 0], bool)
    r = rates(flagged, positive, 200, 0)
    assert r["tpr"] == pytest.approx(2 / 3) and r["fpr"] == pytest.approx(1 / 3)
    assert r["positives"] == 3 and r["humans"] == 3
    assert r["tpr_ci"][0] <= r["tpr"] <= r["tpr_ci"][1]


def test_the_threshold_comes_from_validation_and_the_realised_fpr_is_near_it():
    test, validation = synthetic(40_000, 2), synthetic(40_000, 3)
    human_val = validation[validation["gold"] == "human"]
    val = pd.DataFrame({"id": human_val["id"], "domain": human_val["domain"],
                        "machine_score": 1 - human_val["score_human"]})
    m = threshold_metrics(test, val, (0.01, 0.05), ("domain",), 200, 0)
    assert m["available"] and m["validation_human_rows"] == len(val)
    for fpr in (0.01, 0.05):
        at = m["deployment_at_fpr"][f"{fpr:g}"]
        assert abs(at["fpr"] - fpr) < 0.25 * fpr  # same distribution: the nominal rate holds on test
        assert 0 < at["tpr"] < 1 and at["tpr_ci"][0] <= at["tpr"] <= at["tpr_ci"][1]
    assert m["deployment_at_fpr"]["0.05"]["tpr"] > m["deployment_at_fpr"]["0.01"]["tpr"]
    # a threshold set on other rows: validation humans scored higher (a shifted domain) raise it
    shifted = val.assign(machine_score=val["machine_score"] + 0.2)
    assert threshold_metrics(test, shifted, (0.01,))["deployment_at_fpr"]["0.01"]["fpr"] < m["deployment_at_fpr"]["0.01"]["fpr"]
    per_domain = m["deployment_at_fpr_per_domain"]["0.01"]
    assert set(per_domain["domains"]) == {"algorithmic", "general"} and per_domain["overall_threshold_rows"] == 0
    assert set(m["by"]["domain"]) == {"algorithmic", "general"}


def test_a_domain_with_too_few_validation_humans_uses_the_overall_threshold():
    test, validation = synthetic(2_000, 4, domains=("a", "b")), synthetic(2_000, 5, domains=("a",))
    human_val = validation[validation["gold"] == "human"]
    val = pd.DataFrame({"id": human_val["id"], "domain": human_val["domain"],
                        "machine_score": 1 - human_val["score_human"]})
    val.loc[val.index[:40], "domain"] = "b"  # 40 rows: fewer than 1 / 0.01
    per_domain = threshold_metrics(test, val, (0.01,), resamples=50)["deployment_at_fpr_per_domain"]["0.01"]
    assert set(per_domain["domains"]) == {"a"}
    assert per_domain["overall_threshold_rows"] == int((test["domain"] == "b").sum())


def test_without_scores_or_validation_it_says_why():
    labels_only = synthetic(100, 6).drop(columns=["score_human", "score_machine"])
    assert threshold_metrics(labels_only, None) == {
        "available": False, "why": "the detector gives no score for the 'human' class (labels only, or a task "
                                   "without human rows)"}
    m = threshold_metrics(synthetic(100, 6), None, resamples=50)
    assert m["available"] and m["auroc"] is not None and m["deployment_at_fpr"] is None
    assert "no validation scores" in m["why_no_deployment"]
    assert m["roc_at_fpr"]["0.01"]["humans"] > 0  # the ROC operating point needs the test rows only


def test_a_fitted_detectors_validation_scores_reach_the_score_file(trial_raw, tmp_path):
    tables = task_tables(trial_raw, n_train=300, n_test=120)
    train = tables["train"]
    tables = {"train": train.iloc[:220], "validation": train.iloc[220:], "test": tables["test"]}
    paths = write_task(tmp_path / "task", tables)
    features = fit_features({**paths}, tmp_path / "features")
    out = tmp_path / "det"
    detectors_main(["fit", "--spec", json.dumps({"kind": "logistic_regression"}), "--tasks-dir", str(tmp_path / "task"),
                    "--features", str(features / "features.npz"), "--featurizer", str(features / "featurizer.skops"),
                    "--out", str(out / "p.parquet"), "--model", str(out / "m.pkl"),
                    "--validation-scores", str(out / "v.parquet")])
    val = pd.read_parquet(out / "v.parquet")
    humans = tables["validation"][tables["validation"]["target"] == "human"]
    others = tables["validation"][tables["validation"]["target"] != "human"]
    assert list(val.loc[val["gold"] == "human", "id"]) == list(humans["id"]) and val["machine_score"].between(0, 1).all()
    sampled = val[val["gold"] != "human"]  # as many others as humans (or all there are), for the validation AUROC
    assert len(sampled) == min(len(humans), len(others)) and set(sampled["id"]) <= set(others["id"])
    scoring_main(["--task", "T1", "--detector", "lr", "--predictions", str(out / "p.parquet"),
                  "--test", str(paths["test"]), "--labels", "human", "machine", "--resamples", "100",
                  "--validation-scores", str(out / "v.parquet"), "--fpr", "0.05", "--out", str(tmp_path / "s.json")])
    m = json.loads((tmp_path / "s.json").read_text())["threshold_metrics"]
    assert m["available"] and m["validation_human_rows"] == len(humans) and set(m["deployment_at_fpr"]) == {"0.05"}
    assert m["validation_auroc"] > 0.5 and m["inverted"] is False
    predictions = pd.read_parquet(out / "p.parquet")
    expected = roc_auc_score(predictions["gold"] != "human", 1 - predictions["score_human"])
    assert m["auroc"] == pytest.approx(expected) and m["auroc"] > 0.5
    with pytest.raises(AicdError, match="between 0 and 1"):
        scoring_main(["--task", "T1", "--detector", "lr", "--predictions", str(out / "p.parquet"),
                      "--test", str(paths["test"]), "--fpr", "5", "--out", str(tmp_path / "bad.json")])


def test_confidence_metrics_ece_and_coverage():
    from aicd.scoring.confidence import confidence_metrics, expected_calibration_error

    # calibrated by construction: a row with top probability p is right with probability p
    rng = np.random.default_rng(7)
    n = 20_000
    p = rng.uniform(0.5, 1.0, n)
    right = rng.random(n) < p
    gold = np.where(rng.random(n) < 0.5, "human", "machine")
    pred = np.where(right, gold, np.where(gold == "human", "machine", "human"))
    p_machine = np.where(pred == "machine", p, 1 - p)
    table = pd.DataFrame({"gold": gold, "pred": pred, "score_human": 1 - p_machine, "score_machine": p_machine})
    m = confidence_metrics(table, ["human", "machine"])
    assert m["ece"] < 0.02
    assert m["macro_f1_at_coverage"]["0.5"] > m["macro_f1_at_coverage"]["0.8"]  # the confident half is better
    overconfident = table.assign(score_human=np.where(pred == "human", 0.999, 0.001),
                                 score_machine=np.where(pred == "machine", 0.999, 0.001))
    assert confidence_metrics(overconfident)["ece"] > 0.2
    margins = table.assign(score_human=-(p_machine - 0.5) * 4, score_machine=(p_machine - 0.5) * 4)
    svm = confidence_metrics(margins)
    assert svm["ece"] is None and "not probabilities" in svm["why_no_ece"]
    assert svm["macro_f1_at_coverage"] == m["macro_f1_at_coverage"]  # the same ranking by margin
    assert confidence_metrics(table[["gold", "pred"]])["available"] is False
    assert expected_calibration_error(np.array([0.95, 0.95]), np.array([1.0, 0.0])) == pytest.approx(0.45)


def test_validation_rows_without_a_score_are_counted_and_left_out():
    test = synthetic(2000, 8)
    human = synthetic(2000, 9)
    human = human[human["gold"] == "human"]
    val = pd.DataFrame({"id": human["id"], "domain": "general", "machine_score": 1 - human["score_human"]})
    val.loc[val.index[:25], "machine_score"] = np.nan
    m = threshold_metrics(test, val, (0.05,), resamples=50)
    assert m["validation_rows_without_score"] == 25 and m["validation_human_rows"] == len(val) - 25
    assert np.isfinite(m["deployment_at_fpr"]["0.05"]["threshold"])
    none = threshold_metrics(test, val.assign(machine_score=np.nan), (0.05,), resamples=50)
    assert none["deployment_at_fpr"] is None


def test_average_ranks_are_scipys_rankdata_to_the_bit():
    """The scoring jobs rank without importing scipy.stats: the same floats, ties sharing their
    mean rank, NaN propagated."""
    from aicd.data.metrics import average_ranks
    from scipy.stats import rankdata

    rng = np.random.default_rng(11)
    for _ in range(300):
        values = np.round(rng.normal(size=int(rng.integers(0, 80))), int(rng.integers(0, 3)))
        for x in (values, values.astype(int)):
            assert np.array_equal(average_ranks(x), rankdata(x)), x
    assert np.isnan(average_ranks(np.array([1.0, np.nan, 2.0]))).all()
