"""Threshold metrics that say when they cannot be trusted: a threshold on saturated or tied
validation scores, or on too few validation humans, gives a reason instead of a number; a
threshold that does not transfer to the test's humans is marked, with where; the TPR interval
holds the threshold's own uncertainty; an inverted detector is marked. Real plug-ins (classes a
user could write) go through the detect job, the scoring stage and the thresholds table."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from aicd.data.metrics import quantile_threshold as threshold_at
from aicd.detectors.__main__ import main as detectors_main
from aicd.report import threshold_table
from aicd.report.marks import Marks
from aicd.report.table4 import Column, Row
from aicd.scoring.__main__ import main as scoring_main
from aicd.scoring.thresholds import threshold_metrics, threshold_problem, thresholds_resampled
from fitted_task_helpers import task_with_validation

UNIT = Path(__file__).resolve().parents[1]  # tests/unit, where untrusted_plugins.py lives


def scores_table(machine: np.ndarray, human: np.ndarray, **columns) -> pd.DataFrame:
    return pd.DataFrame({"id": [f"r{i}" for i in range(len(machine))], "gold": np.where(human, "human", "machine"),
                         "pred": np.where(machine > 0.5, "machine", "human"),
                         "score_human": 1 - machine, "score_machine": machine, **columns})


def validation(machine: np.ndarray, human: np.ndarray | None = None) -> pd.DataFrame:
    human = np.ones(len(machine), bool) if human is None else human
    return pd.DataFrame({"id": [f"v{i}" for i in range(len(machine))], "domain": "algorithmic",
                         "gold": np.where(human, "human", "machine"), "machine_score": machine})


def test_each_reason_is_told_apart():
    rng = np.random.default_rng(0)
    assert threshold_problem(rng.random(60), 0.9, 0.01)["reason"] == "few_validation_humans"  # 60 < 1 / 0.01
    saturated = np.concatenate([rng.random(276), np.ones(124)])  # 124 of 400 exactly 1.0
    assert threshold_problem(saturated, 1.0, 0.01)["reason"] == "threshold_at_maximum"
    tied = np.repeat([0.2, 0.5, 0.9], [300, 95, 5])  # 5 of 400 above 0.5: 1.25% < 5% / 2
    assert threshold_problem(tied, 0.5, 0.05)["reason"] == "ties"
    assert threshold_problem(rng.random(400), 0.99, 0.01) is None  # distinct scores: the FPR can be set


def test_a_saturated_threshold_says_why_instead_of_zero():
    rng = np.random.default_rng(1)
    human = rng.random(2000) < 0.5
    machine = np.where(human, np.where(rng.random(2000) < 0.3, 1.0, rng.random(2000) * 0.5), 1.0)
    val_human = np.where(rng.random(400) < 0.3, 1.0, rng.random(400) * 0.5)
    m = threshold_metrics(scores_table(machine, human), validation(val_human), (0.01,), resamples=100)
    at = m["deployment_at_fpr"]["0.01"]
    assert at["threshold"] == 1.0 and at["tpr"] == 0.0  # what used to print as "0.00 ± 0.00"
    assert at["unreliable"]["reason"] == "threshold_at_maximum" and "top of the validation scores" in \
        at["unreliable"]["why"]
    md, tex, page = threshold_table.render([Row("nb", "NB", False)], [Column("T1", "T1")], {("nb", "T1"): {
        "threshold_metrics": m}})
    line = next(line for line in md.splitlines() if line.startswith("| NB"))
    assert "ties at max" in line and "0.00 ± 0.00" not in line
    assert "ties at max" in tex and "ties at max" in page


def test_aicd_score_prints_why_a_saturated_threshold_cannot_be_trusted(capsys):
    from aicd.cli import _print_thresholds

    rng = np.random.default_rng(1)
    human = rng.random(2000) < 0.5
    machine = np.where(human, np.where(rng.random(2000) < 0.3, 1.0, rng.random(2000) * 0.5), 1.0)
    val_human = np.where(rng.random(400) < 0.3, 1.0, rng.random(400) * 0.5)
    _print_thresholds(threshold_metrics(scores_table(machine, human), validation(val_human), (0.01,), resamples=50),
                      asked=True)
    out = capsys.readouterr().out
    assert "cannot be trusted: " in out and "top of the validation scores" in out
    no_humans = validation(val_human, np.zeros(len(val_human), bool))  # validation rows, none of them human
    _print_thresholds(threshold_metrics(scores_table(machine, human), no_humans, (0.01,), resamples=50), asked=True)
    assert "validation threshold for 1.0% FPR: not measured: the validation rows hold no human row" in \
        capsys.readouterr().out


def test_a_threshold_that_does_not_transfer_is_marked_with_where():
    rng = np.random.default_rng(2)
    n = 4000
    domain = rng.choice(["algorithmic", "general"], n)
    human = rng.random(n) < 0.5
    raw = rng.normal(0, 1, n) + np.where(human, np.where(domain == "general", 2.0, 0.0), 3.0)
    test = scores_table(1 / (1 + np.exp(-raw)), human, domain=domain)
    val = 1 / (1 + np.exp(-rng.normal(0, 1, 1000)))  # validation humans: the algorithmic ones only
    m = threshold_metrics(test, validation(val), (0.01,), ("domain",), resamples=200)
    at = m["deployment_at_fpr"]["0.01"]
    assert at["unreliable"] is None and at["transfers"] is False and at["fpr"] > 0.02
    where = {(p["by"], p["value"]) for p in m["not_transferred"]["0.01"]}
    assert ("domain", "general") in where and ("domain", "algorithmic") not in where and ("all", "all test rows") in where
    assert m["by"]["domain"]["algorithmic"]["deployment_at_fpr"]["0.01"]["transfers"] is True
    # a group with fewer than 1/FPR humans cannot tell: one false positive is over the nominal rate
    few = test[~test["gold"].eq("human").to_numpy() | (np.arange(len(test)) < 150)].assign(domain="general")
    few.loc[few.index[:60], "domain"] = "tiny"
    small = threshold_metrics(few, validation(val), (0.01,), ("domain",), resamples=50)["by"]["domain"]["tiny"]
    assert small["deployment_at_fpr"]["0.01"]["humans"] < 100 and small["deployment_at_fpr"]["0.01"]["transfers"] is None
    md, _, _ = threshold_table.render([Row("lr", "LR", False)], [Column("T1", "T1")], {("lr", "T1"): {
        "threshold_metrics": m}})
    table_line = next(line for line in md.splitlines() if line.startswith("| LR"))
    head = next(line for line in md.splitlines() if line.startswith("| Model")).split("|")
    fpr_cell = [h.strip() for h in head].index("val. threshold for 1%: FPR on test")
    assert "‡" in table_line.split("|")[fpr_cell]  # the realised-FPR cell of the deployment view
    assert "‡" not in table_line.split("|")[3]  # the ROC operating point, headed TPR @ 1% FPR, never transfers
    assert "Where the validation threshold does not transfer" in md and "domain general" in md
    assert md.index("TPR @ 1% FPR") < md.index("val. threshold for 1%: FPR on test") < \
        md.index("val. threshold for 1%: TPR")  # the realised FPR leads its TPR


def test_the_tpr_interval_holds_the_thresholds_uncertainty():
    rng = np.random.default_rng(3)
    n = 20000
    human = rng.random(n) < 0.5
    machine = 1 / (1 + np.exp(-(rng.normal(0, 1, n) + np.where(human, 0.0, 2.0))))
    val = 1 / (1 + np.exp(-rng.normal(0, 1, 300)))  # few validation humans: a shaky threshold
    at = threshold_metrics(scores_table(machine, human), validation(val), (0.01,), resamples=400)["deployment_at_fpr"]["0.01"]
    fixed = at["tpr_ci"][1] - at["tpr_ci"][0]
    full = at["tpr_ci_with_threshold"][1] - at["tpr_ci_with_threshold"][0]
    assert full > 2 * fixed
    assert at["tpr_ci_with_threshold"][0] <= at["tpr"] <= at["tpr_ci_with_threshold"][1]


def test_resampled_thresholds_follow_a_brute_force_bootstrap():
    """The threshold of a bootstrap resample drawn as an order statistic (one Beta draw each)
    has the distribution of threshold_at over resampled rows, ties included."""
    rng = np.random.default_rng(6)
    human = np.round(rng.normal(0, 1, 400), 1)  # ties, as real scores have
    for fpr in (0.01, 0.05):
        fast = thresholds_resampled(human, fpr, 20000, seed=3)
        brute = np.array([threshold_at(rng.choice(human, len(human)), fpr) for _ in range(4000)])
        for q in (0.05, 0.25, 0.5, 0.75, 0.95):
            assert abs(np.quantile(fast, q) - np.quantile(brute, q)) <= 0.1 + 1e-9, (fpr, q)


def test_an_inverted_detector_is_marked_wherever_it_appears():
    rng = np.random.default_rng(4)
    human = rng.random(1000) < 0.5
    backwards = np.where(human, 0.7, 0.3) + rng.normal(0, 0.1, 1000)
    val_human = rng.random(400) < 0.5
    val = validation(np.where(val_human, 0.7, 0.3) + rng.normal(0, 0.1, 400), val_human)
    m = threshold_metrics(scores_table(backwards, human), val, (0.05,), resamples=50)
    assert m["validation_auroc"] < 0.5 and m["inverted"] is True
    scores = {("fdg", "T1"): {"threshold_metrics": m, "macro_f1": 0.2}}
    tags = Marks.from_scores(scores, ours=set())
    md, _, _ = threshold_table.render([Row("fdg", "Fast-DetectGPT", False)], [Column("T1", "T1")], scores, tags)
    assert "Fast-DetectGPT <sup>inverted</sup>" in md and "worse than chance on validation" in md


@pytest.fixture
def task(trial_raw, tmp_path):
    return task_with_validation(trial_raw, tmp_path / "task", n_fit=500, n_validation=400, n_test=400)


def fit_and_score(task_dir: Path, out: Path, spec: dict) -> dict:
    out.mkdir(parents=True, exist_ok=True)
    detectors_main(["fit", "--spec", json.dumps(spec), "--tasks-dir", str(task_dir), "--task", "T1",
                    "--out", str(out / "p.parquet"), "--model", str(out / "model"),
                    "--report", str(out / "r.json"), "--validation-scores", str(out / "v.parquet")])
    scoring_main(["--task", "T1", "--detector", "d", "--predictions", str(out / "p.parquet"),
                  "--test", str(task_dir / "test.parquet"), "--labels", "human", "machine", "--resamples", "100",
                  "--validation-scores", str(out / "v.parquet"), "--out", str(out / "s.json")])
    return json.loads((out / "s.json").read_text())


@pytest.mark.parametrize("plugin, reason", [("SaturatedDetector", "threshold_at_maximum"),
                                            ("TiedDetector", "ties")])
def test_plugins_with_saturated_or_tied_scores_get_their_reason(task, tmp_path, monkeypatch, plugin, reason):
    monkeypatch.syspath_prepend(str(UNIT))
    task_dir, _tables = task
    s = fit_and_score(task_dir, tmp_path / plugin, {"kind": "python", "params": {"object": f"untrusted_plugins:{plugin}"}})
    m = s["threshold_metrics"]
    assert m["validation_human_rows"] >= 100  # enough for 1%: the reason is the scores', not the count's
    assert m["deployment_at_fpr"]["0.01"]["unreliable"]["reason"] == reason
    md, _, _ = threshold_table.render([Row("d", plugin, False)], [Column("T1", "T1")], {("d", "T1"): s})
    line = next(line for line in md.splitlines() if line.startswith(f"| {plugin}"))
    deployment = line.split("|")[5:]  # Model, AUROC and the two ROC points first
    assert "ties" in "|".join(deployment) and "0.00 ± 0.00" not in "|".join(deployment)
