"""Detectors a user brings without editing the package (kind python: a class or a score
function, here the guide's docs/examples/my_detector.py; kind predictions: a file made
elsewhere), fitted through the detectors stage's own CLI on real trial rows, and their errors."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from aicd.common.errors import AicdError
from aicd.data.metrics import best_threshold
from aicd.detectors.__main__ import main as detectors_main
from aicd.plan import Plan
from fitted_task_helpers import task_with_validation

PLUGINS = Path(__file__).resolve().parents[3] / "docs" / "examples"  # the guide's example plug-ins


class NoPredict:
    """A class that forgot predict."""

    def fit(self, codes, labels):
        return self


@pytest.fixture(autouse=True)
def importable(monkeypatch):
    monkeypatch.syspath_prepend(str(PLUGINS))


@pytest.fixture
def task(trial_raw, tmp_path):
    return task_with_validation(trial_raw, tmp_path / "task", n_fit=220, n_validation=80, n_test=120)


def fit(task_dir: Path, out: Path, kind: str, params: dict) -> pd.DataFrame:
    out.mkdir(parents=True, exist_ok=True)
    detectors_main(["fit", "--spec", json.dumps({"kind": kind, "params": params}), "--tasks-dir", str(task_dir),
                    "--task", "T1", "--out", str(out / "p.parquet"), "--model", str(out / "m.skops"),
                    "--report", str(out / "r.json"), "--validation-scores", str(out / "v.parquet")])
    return pd.read_parquet(out / "p.parquet")


def test_a_users_class_is_fitted_and_gives_scores(task, tmp_path):
    task_dir, tables = task
    p = fit(task_dir, tmp_path / "cls", "python", {"object": "my_detector:NearestMeanDetector",
                                                    "options": {"scale": 2.0}})
    assert list(p["id"]) == list(tables["test"]["id"]) and set(p["pred"]) <= {"human", "machine"}
    assert {"score_human", "score_machine"} <= set(p.columns)
    assert (p["pred"] == p["gold"]).mean() > 0.5  # it learned something from layout
    humans = (tables["validation"]["target"] == "human").sum()
    validation = pd.read_parquet(tmp_path / "cls" / "v.parquet")
    assert (validation["gold"] == "human").sum() == humans  # and a sample of the others (validation AUROC)


def test_a_score_function_gets_its_threshold_on_validation(task, tmp_path):
    task_dir, _tables = task
    p = fit(task_dir, tmp_path / "fn", "python", {"score_function": "my_detector:comment_density"})
    report = json.loads((tmp_path / "fn" / "r.json").read_text())
    assert "threshold" in report
    machine = p["score_machine"].to_numpy()
    assert ((machine > report["threshold"]) == (p["pred"] == "machine")).all()


def test_best_threshold_maximises_macro_f1():
    scores = np.array([0.1, 0.2, 0.3, 0.4, 0.6, 0.7, 0.8, 0.9])
    human = np.array([1, 1, 1, 0, 1, 0, 0, 0], bool)
    t, _ = best_threshold(scores, ~human)
    assert t in (0.3, 0.6)  # either cut misplaces one row; nothing does better
    assert best_threshold(np.array([0.5, 0.5, 0.9]), np.array([0, 1, 1], bool))[0] == 0.5  # never between equal scores


def test_the_plan_reads_zero_shot_and_binarising_from_the_params():
    from aicd.detectors import REGISTRY

    cls = REGISTRY["python"]
    function, obj = cls.traits({"score_function": "m:f"}), cls.traits({"object": "m:C"})
    assert function.zero_shot and function.binarise
    assert not obj.zero_shot and not obj.binarise
    # the fitted detector reads the same declaration (label_of binarises for a score function only)
    detector = cls(score_function="m:f")
    assert detector.declared == function and list(detector.label_of(["human", "hybrid"])) == ["human", "machine"]
    assert list(cls(object="m:C").label_of(["human", "hybrid"])) == ["human", "hybrid"]


@pytest.mark.parametrize("params, message", [
    ({"object": "no_such_module_here:X"}, "module 'no_such_module_here' does not import"),
    ({"object": "my_detector:Missing"}, "has no 'Missing'"),
    ({"object": "test_plugins:NoPredict"}, "has no predict method"),
    ({"object": "my_detector"}, "write it as package.module:Name"),
    ({"object": "my_detector:NearestMeanDetector", "options": {"bogus": 1}}, "does not take options"),
    ({}, "give exactly one of object"),
])
def test_a_plugin_that_cannot_be_used_says_what_to_fix(task, tmp_path, params, message):
    task_dir, _ = task
    with pytest.raises(AicdError, match=message):
        fit(task_dir, tmp_path / "bad", "python", params)


def write_predictions(path: Path, ids, rng, labels=("human", "machine")) -> None:
    machine = rng.random(len(ids))
    pd.DataFrame({"id": ids, "pred": np.where(machine > 0.5, labels[1], labels[0]), "score_human": 1 - machine,
                  "score_machine": machine}).to_csv(path, index=False)


def test_a_predictions_file_made_elsewhere_is_a_detector(task, tmp_path):
    task_dir, tables = task
    rng = np.random.default_rng(0)
    write_predictions(tmp_path / "test.csv", tables["test"]["id"], rng)
    write_predictions(tmp_path / "val.csv", tables["validation"]["id"], rng)
    p = fit(task_dir, tmp_path / "pred", "predictions", {"file": str(tmp_path / "test.csv"),
                                                         "validation_file": str(tmp_path / "val.csv")})
    given = pd.read_csv(tmp_path / "test.csv", dtype={"id": str})
    assert list(p["pred"]) == list(given["pred"]) and np.allclose(p["score_machine"], given["score_machine"])
    val = pd.read_parquet(tmp_path / "pred" / "v.parquet")
    assert (val["gold"] == "human").sum() == (tables["validation"]["target"] == "human").sum()
    assert set(val["id"]) <= set(tables["validation"]["id"])
    # without a validation file: predictions still, no validation scores
    fit(task_dir, tmp_path / "noval", "predictions", {"file": str(tmp_path / "test.csv")})
    assert pd.read_parquet(tmp_path / "noval" / "v.parquet").empty


def test_a_predictions_file_that_does_not_match_the_test_split_is_counted(task, tmp_path):
    task_dir, tables = task
    rng = np.random.default_rng(1)
    ids = list(tables["test"]["id"])
    write_predictions(tmp_path / "bad.csv", ids[3:] + ["nope1", "nope2"] + ids[3:5], rng)
    with pytest.raises(AicdError, match=r"3 ids of the test split not in the file \(e\.g\. '.*'\); 2 ids of the file not in "
                                        r"the test split \(e\.g\. 'nope1'\); 2 ids more than once in the file"):
        fit(task_dir, tmp_path / "b1", "predictions", {"file": str(tmp_path / "bad.csv")})
    write_predictions(tmp_path / "labels.csv", ids, rng, labels=("human", "robot"))
    with pytest.raises(AicdError, match=r"predicted labels outside the task's classes .*'robot'"):
        fit(task_dir, tmp_path / "b2", "predictions", {"file": str(tmp_path / "labels.csv")})
    with pytest.raises(AicdError, match="no such file"):
        fit(task_dir, tmp_path / "b3", "predictions", {"file": str(tmp_path / "absent.csv")})


def test_plugins_plan_without_any_edit(repo):
    import yaml
    from aicd.config import validate_config
    from aicd.generate.registry import load_registry

    config = yaml.safe_load((repo / "config" / "demo.yaml").read_text())
    config["detectors"] = {
        "mine": {"kind": "python", "title": "Mine", "params": {"object": "my_detector:NearestMeanDetector"}},
        "zero": {"kind": "python", "title": "Zero", "params": {"score_function": "my_detector:comment_density"}},
        "file": {"kind": "predictions", "title": "File", "params": {"file": "x.csv"}}}
    validate_config(config)
    sys.modules.pop("my_detector", None)
    plan = Plan.from_config(config, load_registry(repo / config["registry"]), {})
    assert plan.detectors["zero"].zero_shot and plan.detectors["zero"].binarise
    assert not plan.detectors["mine"].zero_shot and plan.detectors["file"].zero_shot
    assert not plan.detectors["file"].applies_to_new_code
    assert "my_detector" not in sys.modules  # planning imports nothing of the user's


def test_a_fitted_plugin_labels_files_with_aicd_detect_and_names_its_module(task, tmp_path, monkeypatch, capsys):
    from aicd.cli import main as aicd

    task_dir, tables = task
    fit(task_dir, tmp_path / "cls", "python", {"object": "my_detector:NearestMeanDetector"})
    (tmp_path / "a.py").write_text(tables["test"]["code"].iloc[0])
    model = str(tmp_path / "cls" / "m.skops")
    # the user's class is their own code: read from the model only when they say they trust it
    assert aicd(["detect", str(tmp_path / "a.py"), "--model", model]) == 2
    assert "not trusted, so it is not read: my_detector.NearestMeanDetector" in capsys.readouterr().err
    trust = ["--trust-type", "my_detector.NearestMeanDetector"]
    assert aicd(["detect", str(tmp_path / "a.py"), "--model", model, *trust, "--out", str(tmp_path / "d.csv")]) == 0
    assert pd.read_csv(tmp_path / "d.csv")["model_label"].iloc[0] in ("human", "machine")
    monkeypatch.setattr(sys, "path", [p for p in sys.path if p != str(PLUGINS)])
    sys.modules.pop("my_detector", None)
    assert aicd(["detect", str(tmp_path / "a.py"), "--model", model, *trust]) == 2
    assert "from the module 'my_detector', which does not import here" in capsys.readouterr().err


def test_library_types_inside_a_plugin_are_named_with_the_flags_that_trust_them(task, tmp_path, capsys):
    """A user's class that holds scikit-learn's MultinomialNB: trusting the class alone is not
    enough, and the refusal says which type is a library type inside it and which flags read the
    file; --trust-package trusts the user's package in one flag; the workflow's own predict job
    reads it with the entry's params.trust_types."""
    from aicd.cli import main as aicd

    task_dir, tables = task
    params = {"object": "untrusted_plugins:CharNGramNB"}
    fit(task_dir, tmp_path / "nb", "python", params)
    (tmp_path / "a.py").write_text(tables["test"]["code"].iloc[0])
    model = str(tmp_path / "nb" / "m.skops")
    assert aicd(["detect", str(tmp_path / "a.py"), "--model", model, "--trust-type",
                 "untrusted_plugins.CharNGramNB"]) == 2
    said = capsys.readouterr().err
    assert "not trusted, so it is not read: sklearn.naive_bayes.MultinomialNB" in said
    assert "is a library type that code holds" in said and "--trust-type sklearn.naive_bayes.MultinomialNB" in said
    both = ["--trust-type", "untrusted_plugins.CharNGramNB", "--trust-type", "sklearn.naive_bayes.MultinomialNB"]
    assert aicd(["detect", str(tmp_path / "a.py"), "--model", model, *both]) == 0
    capsys.readouterr()
    assert aicd(["detect", str(tmp_path / "a.py"), "--model", model]) == 2
    said = capsys.readouterr().err
    assert "untrusted_plugins.CharNGramNB is code outside the package" in said
    assert "--trust-package untrusted_plugins" in said
    assert aicd(["detect", str(tmp_path / "a.py"), "--model", model, "--trust-package", "untrusted_plugins",
                 "--trust-type", "sklearn.naive_bayes.MultinomialNB"]) == 0
    test = tmp_path / "nb" / "test.parquet"
    tables["test"].to_parquet(test)
    spec = {"kind": "python", "params": {**params, "trust_types": ["sklearn.naive_bayes.MultinomialNB"]}}
    detectors_main(["predict", "--model", model, "--test", str(test), "--spec", json.dumps(spec),
                    "--out", str(tmp_path / "nb" / "again.parquet")])
    again = pd.read_parquet(tmp_path / "nb" / "again.parquet")
    assert list(again["pred"]) == list(pd.read_parquet(tmp_path / "nb" / "p.parquet")["pred"])
