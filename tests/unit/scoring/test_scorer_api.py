"""The scorer one import away: docs/own_detector.md's example of `from aicd.scoring import score`,
run as written on files the workflow's own jobs made, gives what the score job
(`python -m aicd.scoring`, as the score rule runs it) writes into its score file; the FPRs are
the caller's; the gold comes from the gold table where predictions carry none; the score file
says which task definition and detector kind made it."""

from __future__ import annotations

import json
import re

import numpy as np
import pandas as pd
import pytest
from aicd.common.io import read_json
from aicd.detectors.__main__ import main as detectors_main
from aicd.features.__main__ import main as features_main
from aicd.scoring.__main__ import main as scoring_main
from fitted_task_helpers import TFIDF, task_with_validation

VERSIONS = {"task": {"definition": "binary", "version": 1}, "detector": {"kind": "linear_svm", "version": 1}}


@pytest.fixture(scope="module")
def run(tmp_path_factory, trial_raw):
    """results/ as the workflow lays it out for the doc's example: a task, a TF-IDF + SVM fit job."""
    root = tmp_path_factory.mktemp("scorer")
    results = root / "results"
    tasks = results / "tasks" / "binary"
    task_with_validation(trial_raw, tasks, n_fit=200, n_validation=80, n_test=120)
    features = results / "features" / "binary" / "tfidf"
    features.mkdir(parents=True)
    features_main(["--spec", json.dumps(TFIDF), "--tasks-dir", str(tasks), "--seed", "0", "--threads", "1",
                   "--out", str(features / "features.npz"), "--model", str(features / "featurizer.skops"),
                   "--report", str(features / "report.json")])
    for folder in ("predictions", "models", "validation_scores"):
        (results / folder / "binary").mkdir(parents=True)
    detectors_main(["fit", "--spec", json.dumps({"kind": "linear_svm", "params": {}}), "--tasks-dir", str(tasks),
                    "--features", str(features / "features.npz"), "--featurizer", str(features / "featurizer.skops"),
                    "--task", "binary", "--out", str(results / "predictions/binary/svm_tfidf.parquet"),
                    "--model", str(results / "models/binary/svm_tfidf.skops"),
                    "--validation-scores", str(results / "validation_scores/binary/svm_tfidf.parquet")])
    return root


def documented_example(repo) -> str:
    text = (repo / "docs" / "own_detector.md").read_text()
    blocks = re.findall(r"```python\n(.*?)```", text, flags=re.S)
    return next(b for b in blocks if "from aicd.scoring import score" in b)


def test_the_documented_example_gives_the_score_file_of_the_score_job(run, repo, monkeypatch, capsys):
    monkeypatch.chdir(run)
    namespace: dict = {}
    exec(documented_example(repo), namespace)  # as a user pastes it
    result = namespace["result"]
    assert capsys.readouterr().out.strip()  # it prints what it says it prints
    out = run / "score.json"
    scoring_main(["--task", "binary", "--detector", "svm_tfidf", "--predictions",
                  "results/predictions/binary/svm_tfidf.parquet", "--test", "results/tasks/binary/test.parquet",
                  "--validation-scores", "results/validation_scores/binary/svm_tfidf.parquet", "--fpr", "0.01", "0.05",
                  "--versions", json.dumps(VERSIONS), "--out", str(out)])
    written = read_json(out)
    assert written.pop("task") == "binary" and written.pop("detector") == "svm_tfidf"
    assert written.pop("versions") == VERSIONS  # what made it, in the file
    assert written == json.loads(json.dumps(result))
    assert 0 < result["macro_f1"] <= 1 and result["threshold_metrics"]["available"]
    assert result["threshold_metrics"]["deployment_at_fpr"]  # thresholds set on the validation humans


def test_the_fprs_are_the_callers_and_the_gold_may_come_from_the_gold_table(run):
    from aicd.scoring import score

    predictions = pd.read_parquet(run / "results/predictions/binary/svm_tfidf.parquet")
    test = pd.read_parquet(run / "results/tasks/binary/test.parquet")
    validation = run / "results/validation_scores/binary/svm_tfidf.parquet"
    given = score(predictions, test, fprs=[0.1], validation=validation, resamples=50)
    assert list(given["threshold_metrics"]["roc_at_fpr"]) == ["0.1"]
    assert list(given["threshold_metrics"]["deployment_at_fpr"]) == ["0.1"]
    # predictions without their gold column (a file made elsewhere): the test table's target is the gold
    bare = score(predictions.drop(columns=["gold"]), test, fprs=[0.1], validation=validation, resamples=50)
    assert bare["macro_f1"] == given["macro_f1"] and bare["per_class"] == given["per_class"]
    with pytest.raises(Exception, match="no gold labels"):
        score(predictions.drop(columns=["gold"]), test.drop(columns=["target"]))


def test_the_library_refuses_what_aicd_score_refuses(run, tmp_path, capsys):
    """A predicted label the gold labels do not hold, or a row without a gold label: `aicd score`
    refuses the pair of files, and so does score(), where it used to score a third class (and lower
    the macro-F1 with it)."""
    from aicd.cli import main as aicd
    from aicd.common.errors import AicdError
    from aicd.scoring import score

    predictions = pd.read_parquet(run / "results/predictions/binary/svm_tfidf.parquet")
    test = pd.read_parquet(run / "results/tasks/binary/test.parquet")
    unknown = predictions.assign(pred=predictions["pred"].where(predictions.index % 4 != 0, "robot"))
    no_gold = test.assign(target=test["target"].where(test.index % 5 != 0, None))
    for preds, gold, says in ((unknown.drop(columns=["gold"]), test, "'robot' (30 rows)"),
                              (predictions.drop(columns=["gold"]), no_gold, "24 rows have no gold label")):
        pred_file, gold_file = tmp_path / "pred.csv", tmp_path / "gold.csv"
        preds[["id", "pred"]].to_csv(pred_file, index=False)
        gold[["id", "target"]].to_csv(gold_file, index=False)
        assert aicd(["score", str(pred_file), str(gold_file)]) == 2   # the CLI's refusal
        assert "nothing scored" in capsys.readouterr().err
        with pytest.raises(AicdError, match=re.escape(says)):
            score(preds, gold, resamples=0)
    # given the label set, as the workflow gives it, a third class is refused the same way
    with pytest.raises(AicdError, match="labels outside the task's label set"):
        score(unknown.drop(columns=["gold"]), test, ["human", "machine"], resamples=0)
    # abstentions (an LLM judge's unparsable answer) are no class: scored as wrong, not refused
    from aicd.data.schema import ABSTAIN

    abstained = score(predictions.assign(pred=predictions["pred"].where(predictions.index % 4 != 0, ABSTAIN)), test,
                      resamples=0)
    assert abstained["abstentions"] == 30 and abstained["labels"] == ["human", "machine"]


def test_the_fit_jobs_validation_scores_hold_the_score_calibrations_set_thresholds_on(run):
    """validation_scores' threshold_score of each row is what the fitted model gives that row's code
    (aicd.data.scores.threshold_score), so a calibration mixing the validation humans with code it
    predicts anew holds them on one scale."""
    from aicd.data.scores import THRESHOLD_SCORE, threshold_score
    from aicd.detectors.bundle import load_bundle

    validation = pd.read_parquet(run / "results/validation_scores/binary/svm_tfidf.parquet")
    rows = pd.read_parquet(run / "results/tasks/binary/validation.parquet").set_index("id").loc[validation["id"]]
    model = load_bundle(run / "results/models/binary/svm_tfidf.skops")
    again = threshold_score(model.predict_rows(rows.reset_index()[["code", "language"]]), model.detector.score_kind)
    assert model.detector.score_kind == "margin" and len(validation) > 0
    assert np.array_equal(validation[THRESHOLD_SCORE].to_numpy(), again)
