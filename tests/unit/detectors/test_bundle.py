"""Self-contained fitted models: a fitted detector carries its fitted featurizer
and applies itself to raw code; featurizers are registered by kind; validation is carved from
train when a detector needs one and none is given; the SVM's primal solver converges."""

import pickle
import warnings
import zipfile

import numpy as np
import pandas as pd
import pytest
from aicd.common.errors import AicdError
from aicd.common.io import read_json, write_pickle
from aicd.detectors.__main__ import main as detectors_main
from aicd.detectors.bundle import FittedModel, load_bundle
from aicd.features.__main__ import main as features_main
from aicd.features.registry import ConcatFeaturizer, build, load_featurizer
from fitted_task_helpers import fit_detector, fit_features, task_tables, write_task
from sklearn.exceptions import ConvergenceWarning


@pytest.fixture(scope="module")
def task(trial_raw, tmp_path_factory):
    root = tmp_path_factory.mktemp("task")
    tables = task_tables(trial_raw)
    paths = write_task(root / "tasks", tables)
    return root, tables, paths


# The features and models several tests read, each fitted once for the module (the tests only
# read them; what a test writes goes to its own tmp_path).
@pytest.fixture(scope="module")
def tfidf(task):
    root, _tables, paths = task
    return fit_features(paths, root / "features" / "tfidf")


@pytest.fixture(scope="module")
def tfidf_of_train(task):
    root, _tables, paths = task
    return fit_features({"train": paths["train"]}, root / "features" / "tfidf_train")   # features of train only


@pytest.fixture(scope="module")
def ast(task):
    root, _tables, paths = task
    return fit_features(paths, root / "features" / "ast", spec={"kind": "ast"})


@pytest.fixture(scope="module")
def logistic_regression(task, tfidf):
    root, _tables, paths = task
    return fit_detector(paths, tfidf, root / "models")


def test_bundle_predicts_raw_code_exactly_as_the_workflow(task, logistic_regression):
    _root, tables, _paths = task
    model_path, predictions_path = logistic_regression
    workflow = pd.read_parquet(predictions_path)
    model = load_bundle(model_path)
    assert isinstance(model, FittedModel) and model.featurizer is not None
    assert model.labels == ["human", "machine"] and model.task == "T1" and model.code_version.startswith("aicd ")
    # raw code only: no id, no features file; row order shuffled
    shuffled = tables["test"].sample(frac=1, random_state=3)
    mine = model.predict_rows(shuffled[["code", "language"]]).set_index(shuffled["id"].to_numpy())
    mine = mine.loc[workflow["id"]]
    assert (mine["pred"].to_numpy() == workflow["pred"].to_numpy()).all()
    assert np.allclose(mine["score_machine"].to_numpy(), workflow["score_machine"].to_numpy(), atol=1e-5)
    assert workflow["pred"].nunique() == 2  # a real model, not a constant


def test_a_new_test_set_is_featurized_by_the_fitted_featurizer(task, tfidf_of_train, tmp_path):
    _root, tables, paths = task
    features = tfidf_of_train
    assert np.load(features / "features.npz")["X_test"].shape[0] == 0
    _, predictions = fit_detector(paths, features, tmp_path / "m")
    assert len(pd.read_parquet(predictions)) == len(tables["test"])
    # without the featurizer the mismatch is named, not guessed
    with pytest.raises(AicdError, match="do not match the test split's rows.*--featurizer"):
        detectors_main(["fit", "--spec", '{"kind": "logistic_regression"}', "--train", str(paths["train"]),
                        "--test", str(paths["test"]), "--features", str(features / "features.npz"),
                        "--out", str(tmp_path / "p.parquet"), "--model", str(tmp_path / "m.skops")])


def test_concat_featurizer_holds_its_parts_and_transforms_new_code(task, tfidf, ast, tmp_path):
    _root, tables, paths = task
    out = tmp_path / "ast_tfidf"
    features_main(["--spec", '{"kind": "concat"}', "--parts", str(ast / "features.npz"), str(tfidf / "features.npz"),
                   "--out", str(out / "features.npz"), "--model", str(out / "featurizer.skops"),
                   "--report", str(out / "report.json")])
    concat = load_featurizer(out / "featurizer.skops")
    assert isinstance(concat, ConcatFeaturizer) and [p.kind for p in concat.parts] == ["ast", "tfidf"]
    stored = np.load(out / "features.npz")
    again = concat.transform(tables["test"])
    assert again.shape == stored["X_test"].shape and np.allclose(again, stored["X_test"], atol=1e-4)
    # a fitted CatBoost on the concatenated set applies itself to raw code
    model, predictions = fit_detector(paths, out, tmp_path / "m", kind="catboost", params={"iterations": 20})
    rows = load_bundle(model).predict_rows(tables["test"])
    assert (rows["pred"].to_numpy() == pd.read_parquet(predictions)["pred"].to_numpy()).all()


def test_an_old_concat_pickle_of_paths_is_refused_by_name(task, tfidf, tmp_path):
    _root, _tables, paths = task
    write_pickle({"parts": ["a.npz", "b.npz"]}, tmp_path / "old.pkl")
    with pytest.raises(AicdError, match="old.pkl does not hold a fitted featurizer.*rebuild"):
        load_featurizer(tmp_path / "old.pkl", trust_pickle=True)
    with pytest.raises(AicdError, match="old.pkl is a pickle .*rebuild that feature set.*--trust-pickle"):
        detectors_main(["fit", "--spec", '{"kind": "logistic_regression"}', "--train", str(paths["train"]),
                        "--test", str(paths["test"]), "--features", str(tfidf / "features.npz"),
                        "--featurizer", str(tmp_path / "old.pkl"),
                        "--out", str(tmp_path / "p.parquet"), "--model", str(tmp_path / "m.skops")])


def test_registry_builds_table_featurizers_and_names_unknown_kinds():
    table = pd.DataFrame({"code": ["def f(x):\n    return x\n", "int main() { return 0; }\n"] * 4,
                          "language": ["Python", "C"] * 4})
    ast = build("ast")
    X = ast.fit_transform(table)
    assert X.shape[0] == 8 and ast.transform(table.iloc[:0]).shape == (0, X.shape[1])
    with pytest.raises(AicdError, match="unknown feature kind 'bow'"):
        build("bow")
    with pytest.raises(AicdError, match="the AST features have no parameter 'depth'"):
        build("ast", {"depth": 3})
    with pytest.raises(AicdError, match="needs at least two parts"):
        ConcatFeaturizer([ast])


def test_a_bare_detector_pickle_still_loads_without_a_featurizer_when_trusted(task, tmp_path):
    from aicd.detectors import build as build_detector

    det = build_detector("majority", {}, seed=0).fit(np.zeros((3, 0)), np.array(["human", "machine", "machine"]))
    write_pickle(det, tmp_path / "old.pkl")
    with pytest.raises(AicdError, match="old.pkl is a pickle"):
        load_bundle(tmp_path / "old.pkl")
    model = load_bundle(tmp_path / "old.pkl", trust_pickle=True)
    assert model.featurizer is None and model.labels == ["human", "machine"]
    assert list(model.predict_rows(pd.DataFrame({"code": ["x = 1"]}))["pred"]) == ["machine"]
    (tmp_path / "junk.pkl").write_bytes(b"not a pickle")
    with pytest.raises(AicdError, match="junk.pkl is not a fitted model"):
        load_bundle(tmp_path / "junk.pkl")
    with pytest.raises(AicdError, match="junk.pkl is not a fitted model"):
        load_bundle(tmp_path / "junk.pkl", trust_pickle=True)
    with pytest.raises(AicdError, match="does not exist"):
        load_bundle(tmp_path / "nothing.pkl")


def test_the_bundle_reads_through_to_the_detector_for_older_readers(task, tfidf, tmp_path):
    _root, _tables, paths = task
    features = tfidf
    model, _ = fit_detector(paths, features, tmp_path / "m", kind="linear_svm")
    bundle = load_bundle(model)
    assert bundle.model_ is bundle.detector.model_   # attributes read through to the detector
    assert pickle.loads(pickle.dumps(bundle)).labels == ["human", "machine"]


def test_validation_is_carved_from_train_when_a_detector_needs_one(task, tfidf, tmp_path):
    _root, _tables, paths = task
    features = tfidf
    (tmp_path / "empty.parquet").write_bytes(b"")   # an empty validation file is legitimate
    args = ["--train", str(paths["train"]), "--validation", str(tmp_path / "empty.parquet"), "--test", str(paths["test"]),
            "--features", str(features / "features.npz"), "--featurizer", str(features / "featurizer.skops")]
    detectors_main(["fit", "--spec", '{"kind": "catboost", "params": {"iterations": 30, "early_stopping_rounds": 5}}', *args,
                    "--out", str(tmp_path / "p.parquet"), "--model", str(tmp_path / "m.skops"),
                    "--report", str(tmp_path / "r.json")])
    record = read_json(tmp_path / "r.json")["validation"]
    assert record["source"] == "carved from train" and record["stratified"] is True
    assert record["rows"] == 30 and record["train_rows_left"] == 270
    assert load_bundle(tmp_path / "m.skops").validation == record
    # a detector that reads no validation gets none carved
    detectors_main(["fit", "--spec", '{"kind": "logistic_regression"}', *args, "--out", str(tmp_path / "p2.parquet"),
                    "--model", str(tmp_path / "m2.skops"), "--report", str(tmp_path / "r2.json")])
    assert read_json(tmp_path / "r2.json")["validation"] == {"source": "given", "rows": 0, "used": False}


def test_the_carve_is_seeded_and_stratified():
    from aicd.detectors.validation import carve

    y = np.array(["human"] * 80 + ["machine"] * 20, dtype=object)
    a_train, a_val, _rec = carve(y, seed=4)
    _b_train, b_val, _ = carve(y, seed=4)
    assert (a_val == b_val).all() and len(a_val) == 10 and set(a_train).isdisjoint(a_val)
    assert (y[a_val] == "machine").sum() == 2   # the class balance of train
    assert not (carve(y, seed=5)[1] == a_val).all()
    assert carve(y[:3], seed=0)[2]["rows"] == 0


def test_linear_svm_converges_and_solves_linearsvcs_problem(trial_raw, tmp_path):
    # demo-sized TF-IDF features (1,500 rows, 5,000 n-grams, 500 SVD components): the L-BFGS
    # solver converges; liblinear's primal solver reaches the same optimum (its predictions
    # agree), and its dual one stops at max_iter unconverged on the same rows.
    from aicd.detectors import build as build_detector

    tables = task_tables(trial_raw, 1500, 10)
    paths = write_task(tmp_path / "t", tables)
    features = fit_features(paths, tmp_path / "f", spec={"kind": "tfidf", "params": {"svd_components": 500}})
    X, y = np.load(features / "features.npz")["X_train"], tables["train"]["target"].to_numpy(dtype=object)
    det = build_detector("linear_svm", {}, seed=0)
    with warnings.catch_warnings():
        warnings.simplefilter("error")   # a warning fails the test
        det.fit(X.copy(), y)
    svc = det.model_[-1]
    assert type(svc).__name__ == "SquaredHingeSVC" and svc.n_iter_ < svc.max_iter
    liblinear = build_detector("linear_svm", {"solver": "liblinear", "tol": 1e-6, "max_iter": 20000}, seed=0)
    liblinear.fit(X.copy(), y)
    agree = (det.predict(X) == liblinear.predict(X)).mean()
    assert agree > 0.99, agree
    with pytest.warns(ConvergenceWarning):   # what `dual: true` still does on the same rows
        build_detector("linear_svm", {"solver": "liblinear", "dual": True}, seed=0).fit(X.copy(), y)


def test_explicit_files_and_a_tasks_folder_are_not_mixed(task, tmp_path):
    root, _tables, paths = task
    with pytest.raises(AicdError, match="either --tasks-dir or --train"):
        detectors_main(["fit", "--spec", '{"kind": "majority"}', "--tasks-dir", str(root / "tasks"), "--train",
                        str(paths["train"]), "--out", str(tmp_path / "p.parquet"), "--model", str(tmp_path / "m.skops")])
    with pytest.raises(AicdError, match="name the test rows"):
        detectors_main(["fit", "--spec", '{"kind": "majority"}', "--train", str(paths["train"]),
                        "--out", str(tmp_path / "p.parquet"), "--model", str(tmp_path / "m.skops")])
    (tmp_path / "t.parquet").write_bytes(b"")
    with pytest.raises(AicdError, match="the test split is empty"):
        detectors_main(["fit", "--spec", '{"kind": "majority"}', "--train", str(paths["train"]), "--test",
                        str(tmp_path / "t.parquet"), "--out", str(tmp_path / "p.parquet"), "--model", str(tmp_path / "m.skops")])


def test_features_stage_takes_explicit_files_with_validation_optional(task, tmp_path):
    _root, _tables, paths = task
    (tmp_path / "empty.parquet").write_bytes(b"")
    out = tmp_path / "f"
    features_main(["--spec", '{"kind": "ast"}', "--train", str(paths["train"]), "--validation",
                   str(tmp_path / "empty.parquet"), "--test", str(paths["test"]), "--out", str(out / "features.npz"),
                   "--model", str(out / "featurizer.skops"), "--report", str(out / "report.json")])
    report = read_json(out / "report.json")
    assert report["rows"] == {"train": 300, "validation": 0, "test": 120}
    assert set(report["parse_failed"]) == {"train", "validation", "test"}
    with pytest.raises(AicdError, match="needs --tasks-dir or --train"):
        features_main(["--spec", '{"kind": "tfidf"}', "--out", "a", "--model", "b", "--report", "c"])
    (tmp_path / "bad.parquet").write_text("not parquet")
    with pytest.raises(AicdError, match="cannot read the train file .*bad.parquet as parquet"):
        features_main(["--spec", '{"kind": "tfidf"}', "--train", str(tmp_path / "bad.parquet"),
                       "--out", "a", "--model", "b", "--report", "c"])


def test_predict_job_applies_a_model_to_a_new_test_set(task, logistic_regression, tmp_path):
    from aicd.detectors.__main__ import main as stage_main

    def predict_main(argv):
        return stage_main(["predict", *argv])

    _root, _tables, paths = task
    model, predictions = logistic_regression
    predict_main(["--model", str(model), "--test", str(paths["test"]), "--out", str(tmp_path / "again.parquet")])
    again, first = pd.read_parquet(tmp_path / "again.parquet"), pd.read_parquet(predictions)
    assert list(again.columns) == list(first.columns)
    assert (again["id"] == first["id"]).all() and (again["pred"] == first["pred"]).all()
    # the job's threads (what the predict_test_set rule passes) change the speed, not the answer
    predict_main(["--model", str(model), "--test", str(paths["test"]), "--threads", "2",
                  "--out", str(tmp_path / "threads.parquet")])
    assert pd.read_parquet(tmp_path / "threads.parquet").equals(again)
    with pytest.raises(AicdError, match="--threads 0: give 1 or more"):
        predict_main(["--model", str(model), "--test", str(paths["test"]), "--threads", "0", "--out", "x"])


def test_a_folder_model_keeps_its_bundle_beside_the_weights(tmp_path):
    import json as json_module

    from aicd.detectors.base import REGISTRY, Detector, register
    from aicd.detectors.bundle import BUNDLE_FILE, make_bundle, save_bundle

    @register("folder_probe")
    class FolderProbe(Detector):   # stands in for an encoder: stored with its own save/load
        inputs, storage = "text", "folder"

        def fit(self, X, y, X_val=None, y_val=None):
            self.classes_ = np.unique(y)
            return self

        def predict(self, X):
            return np.array(["machine" if "def" in x else "human" for x in X], dtype=object)

        def save(self, path):
            path.mkdir(parents=True, exist_ok=True)
            (path / "detector.json").write_text(json_module.dumps({"kind": self.kind, "classes": list(self.classes_)}))

        @classmethod
        def load(cls, path, device="auto", threads=1):
            det = cls()
            det.classes_ = np.array(json_module.loads((path / "detector.json").read_text())["classes"], dtype=object)
            return det

    try:
        det = FolderProbe().fit(None, np.array(["human", "machine"], dtype=object))
        save_bundle(make_bundle(det, None, {"kind": "folder_probe"}, "T1", {"source": "given", "rows": 5}),
                    tmp_path / "model")
        assert (tmp_path / "model" / BUNDLE_FILE).exists() and (tmp_path / "model" / "detector.json").exists()
        model = load_bundle(tmp_path / "model")
        assert model.task == "T1" and model.validation["rows"] == 5 and model.labels == ["human", "machine"]
        assert list(model.predict_rows(pd.DataFrame({"code": ["def f(): pass", "x"]}))["pred"]) == ["machine", "human"]
        (tmp_path / "model" / BUNDLE_FILE).unlink()   # a folder from before bundles: detector.json suffices
        assert load_bundle(tmp_path / "model").detector_kind == "folder_probe"
    finally:
        REGISTRY.pop("folder_probe")


def test_unlabelled_test_rows_get_predictions_with_a_null_gold(task, tfidf_of_train, tmp_path):
    _root, tables, paths = task
    features = tfidf_of_train
    tables["test"].drop(columns=["target"]).to_parquet(tmp_path / "unlabelled.parquet")
    _, predictions = fit_detector({"train": paths["train"], "test": tmp_path / "unlabelled.parquet"}, features,
                                  tmp_path / "m")
    got = pd.read_parquet(predictions)
    assert len(got) == 120 and got["gold"].isna().all() and set(got["pred"]) <= {"human", "machine"}
    tables["train"].drop(columns=["target"]).to_parquet(tmp_path / "train_nolabel.parquet")
    with pytest.raises(AicdError, match="the train rows have no 'target' column"):
        fit_detector({"train": tmp_path / "train_nolabel.parquet", "test": paths["test"]}, features, tmp_path / "m2")


def test_a_featurizer_that_did_not_make_the_features_is_refused(task, tfidf, ast, tmp_path):
    _root, tables, paths = task
    features = tfidf
    other_rows = write_task(tmp_path / "other", {"train": tables["test"], "test": tables["train"]})
    refit = fit_features(other_rows, tmp_path / "refit")   # same kind and width, fitted on other rows
    args = ["--spec", '{"kind": "logistic_regression"}', "--train", str(paths["train"]), "--test", str(paths["test"]),
            "--features", str(features / "features.npz"), "--out", str(tmp_path / "p.parquet"),
            "--model", str(tmp_path / "m.skops")]
    with pytest.raises(AicdError, match="--featurizer does not belong to features"):
        detectors_main(["fit", *args, "--featurizer", str(ast / "featurizer.skops")])
    with pytest.raises(AicdError, match="does not reproduce the test features .* fitted on other rows"):
        detectors_main(["fit", *args, "--featurizer", str(refit / "featurizer.skops")])


def test_the_saved_model_holds_no_path_of_the_job(task, tfidf, tmp_path):
    _root, _tables, paths = task
    features = tfidf
    detectors_main(["fit", "--spec", '{"kind": "logistic_regression"}', "--train", str(paths["train"]),
                    "--test", str(paths["test"]), "--features", str(features / "features.npz"),
                    "--featurizer", str(features / "featurizer.skops"), "--work-dir", str(tmp_path / "scratch_here"),
                    "--cache-dir", str(tmp_path / "cache_here"), "--out", str(tmp_path / "p.parquet"),
                    "--model", str(tmp_path / "m.skops")])
    with zipfile.ZipFile(tmp_path / "m.skops") as stored:  # every member, uncompressed
        raw = b"".join(stored.read(name) for name in stored.namelist())
    assert b"scratch_here" not in raw and b"cache_here" not in raw and str(tmp_path).encode() not in raw
    assert str(features).encode() not in raw and str(paths["train"].parent).encode() not in raw  # nor its inputs'


def test_a_wrapped_detector_keeps_no_path_of_the_job_either(task, tmp_path):
    # training.calibrate wraps the fitted detector; its base (robust, reading the run's feature
    # cache) holds the job's folders too, and they are cleared there as well
    _root, _tables, paths = task
    detectors_main(["fit", "--spec", '{"kind": "robust", "params": {"max_iter": 5}, "training": {"calibrate": true}}',
                    "--train", str(paths["train"]), "--test", str(paths["test"]),
                    "--cache-dir", str(tmp_path / "cache_here"), "--out", str(tmp_path / "p.parquet"),
                    "--model", str(tmp_path / "m.skops")])
    assert (tmp_path / "cache_here" / "stats.sqlite").is_file()  # the fit read its stylometry through it
    with zipfile.ZipFile(tmp_path / "m.skops") as stored:
        raw = b"".join(stored.read(name) for name in stored.namelist())
    assert b"cache_here" not in raw and str(tmp_path).encode() not in raw


def test_missing_or_corrupt_featurizer_and_features_are_one_line_errors(task, tfidf, tmp_path):
    _root, _tables, paths = task
    features = tfidf
    (tmp_path / "junk.pkl").write_bytes(b"not a pickle")
    base = ["--spec", '{"kind": "logistic_regression"}', "--train", str(paths["train"]), "--test", str(paths["test"]),
            "--out", str(tmp_path / "p.parquet"), "--model", str(tmp_path / "m.skops")]
    with pytest.raises(AicdError, match="nope.pkl does not exist"):
        detectors_main(["fit", *base, "--features", str(features / "features.npz"), "--featurizer", str(tmp_path / "nope.pkl")])
    with pytest.raises(AicdError, match="junk.pkl is not a fitted featurizer"):
        detectors_main(["fit", *base, "--features", str(features / "features.npz"), "--featurizer", str(tmp_path / "junk.pkl")])
    with pytest.raises(AicdError, match="feature set .*nope.npz does not exist"):
        detectors_main(["fit", *base, "--features", str(tmp_path / "nope.npz")])
    with pytest.raises(AicdError, match="junk.pkl is not a fitted featurizer"):
        features_main(["--spec", '{"kind": "concat"}', "--parts", str(features / "features.npz"),
                       str(features / "features.npz"), "--part-models", str(tmp_path / "junk.pkl"),
                       str(features / "featurizer.skops"), "--out", str(tmp_path / "c.npz"),
                       "--model", str(tmp_path / "c.skops"), "--report", str(tmp_path / "c.json")])
