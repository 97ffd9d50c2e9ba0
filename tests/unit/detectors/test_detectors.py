import numpy as np
import pytest
from aicd.common.errors import AicdError
from aicd.detectors import REGISTRY, Detector, build, register


def separable(n=300, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 6)).astype(np.float32)
    y = np.where(X[:, 0] + 0.5 * X[:, 1] > 0, "machine", "human").astype(object)
    return X[: n // 2], y[: n // 2], X[n // 2:], y[n // 2:]


def test_registry_has_the_table4_kinds():
    assert {"random", "majority", "logistic_regression", "linear_svm", "catboost"} <= set(REGISTRY)


def test_random_is_seeded_and_uniform():
    X, y, Xt, _ = separable(4000)
    a = build("random", {}, seed=3).fit(X, y).predict(Xt)
    b = build("random", {}, seed=3).fit(X, y).predict(Xt)
    c = build("random", {}, seed=4).fit(X, y).predict(Xt)
    assert (a == b).all() and not (a == c).all()
    assert abs((a == "human").mean() - 0.5) < 0.05


def test_majority_predicts_the_most_frequent_training_class():
    X = np.zeros((5, 0))
    y = np.array(["a", "b", "b", "c", "b"], dtype=object)
    assert list(build("majority", {}, seed=0).fit(X, y).predict(np.zeros((3, 0)))) == ["b", "b", "b"]


@pytest.mark.parametrize("kind,params", [
    ("logistic_regression", {"C": 1.0}),
    ("linear_svm", {"C": 1.0}),
    ("catboost", {"iterations": 60, "depth": 3}),
])
def test_trained_detectors_learn_a_separable_problem(kind, params):
    X, y, Xt, yt = separable()
    det = build(kind, params, seed=0).fit(X, y, Xt[:10], yt[:10])
    pred = det.predict(Xt)
    assert (pred == yt).mean() > 0.9
    scores = det.predict_scores(Xt)
    assert scores.shape == (len(Xt), 2) and list(det.classes_) == ["human", "machine"]


def test_catboost_is_deterministic_given_seed():
    X, y, Xt, _ = separable()
    a = build("catboost", {"iterations": 30}, seed=1).fit(X, y).predict_scores(Xt)
    b = build("catboost", {"iterations": 30}, seed=1).fit(X, y).predict_scores(Xt)
    assert np.allclose(a, b)


def test_unknown_kind_and_bad_params_are_user_errors():
    with pytest.raises(AicdError, match="unknown detector kind 'xgb'"):
        build("xgb", {}, seed=0)
    with pytest.raises(AicdError, match="bad parameters"):
        build("linear_svm", {"not_a_param": 1}, seed=0).fit(*separable()[:2])


def test_adding_a_detector_is_a_few_lines():
    @register("always_human_test")
    class AlwaysHuman(Detector):
        inputs = "nothing"

        def fit(self, X, y, X_val=None, y_val=None):
            self.classes_ = np.unique(y)
            return self

        def predict(self, X):
            return np.full(len(X), "human", dtype=object)

    try:
        assert list(build("always_human_test", {}, seed=0).fit(np.zeros((2, 0)), np.array(["human", "machine"]))
                    .predict(np.zeros((2, 0)))) == ["human", "human"]
    finally:
        del REGISTRY["always_human_test"]


@pytest.mark.parametrize("kind, params, named", [
    ("linear_svm", {"C": "abc"}, r"'C' parameter of the linear SVM must be a number, got 'abc'"),
    ("linear_svm", {"C": -1.0}, r"'C' parameter of the linear SVM must be > 0"),
    ("linear_svm", {"dual": True}, r"dual.*are liblinear's \(set solver: liblinear"),
    ("linear_svm", {"dual": "yes", "solver": "liblinear"}, r"'dual' parameter of LinearSVC"),
    ("linear_svm", {"solver": "sag"}, r"'solver' parameter of the linear SVM must be one of \['lbfgs', 'liblinear'\]"),
    ("logistic_regression", {"max_iter": "many"}, r"'max_iter' parameter of logistic regression must be an integer"),
    ("catboost", {"iterations": "abc"}, r"'iterations' parameter of CatBoost must be an integer, got 'abc'"),
    ("catboost", {"early_stopping_rounds": 1.5}, r"'early_stopping_rounds' parameter of CatBoost must be an integer"),
    ("catboost", {"loss_function": "NoSuchLoss"}, r"NoSuchLoss"),
    ("majority", {"C": 1.0}, r"has no parameter 'C'"),
])
def test_parameter_types_are_checked_when_the_detector_is_built(kind, params, named):
    with pytest.raises(AicdError, match=named):
        build(kind, params, seed=0)


def test_the_detect_job_checks_params_before_loading_features(tmp_path):
    import pandas as pd
    from aicd.detectors.__main__ import main

    for split in ("train", "validation", "test"):
        pd.DataFrame({"id": ["a", "b"], "code": ["x", "y"], "target": ["human", "machine"]}).to_parquet(
            tmp_path / f"{split}.parquet")
    with pytest.raises(AicdError, match="'C' parameter of the linear SVM"):
        main(["fit", "--spec", '{"kind": "linear_svm", "params": {"C": "abc"}}', "--tasks-dir", str(tmp_path),
              "--features", str(tmp_path / "not_built_yet.npz"), "--out", str(tmp_path / "p.parquet"),
              "--model", str(tmp_path / "m.pkl")])


def test_shipped_parameters_pass_the_check(repo):
    import yaml

    for name in ("config.yaml", "demo.yaml"):
        for det in yaml.safe_load((repo / "config" / name).read_text())["detectors"].values():
            build(det["kind"], det.get("params") or {}, seed=0)


def test_catboost_takes_a_synonym_of_its_iterations():
    """iterations and depth default to CatBoost's own (null), so n_estimators / max_depth pass."""
    from aicd.detectors import build

    det = build("catboost", {"n_estimators": 5, "max_depth": 3}, seed=0)
    params = det._estimator().get_params()
    assert params["n_estimators"] == 5 and "iterations" not in params and "depth" not in params
