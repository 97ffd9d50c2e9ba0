"""Every printed number means what its header says: intervals printed as they are, the report's
data block generated from the run's task reports, a label-correction note whose numbers add up,
one-class slices marked in the per-language figure and in `aicd score`."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from aicd.report.data_block import data_block
from aicd.report.intervals import with_interval
from aicd.report.report_md import audit_line
from aicd.scoring.roc_point import roc_point, roc_tpr_of_counts, score_bins


def test_an_interval_is_printed_as_it_is():
    assert with_interval(0.8721, [0.8591, 0.8851]) == "87.21 ± 1.30"
    assert with_interval(0.2720, [0.0760, 0.3240]) == "27.20 [7.60, 32.40]"  # lopsided: its ends
    assert with_interval(0.3783, [0.3258, 0.6399]) == "37.83 [32.58, 63.99]"
    assert with_interval(0.5, [0.49, 0.51], "latex") == "50.00 $\\pm$ 1.00"
    assert with_interval(0.5, None) == "50.00" and with_interval(None, [0, 1]) == "–"
    assert with_interval(0.2, [0.25, 0.3]) == "20.00 [25.00, 30.00]"  # a value outside its interval shows it


def test_the_roc_points_interval_counts_the_same_way_as_its_value():
    rng = np.random.default_rng(0)
    scores = np.round(np.r_[rng.beta(2, 5, 465), rng.beta(5, 2, 700)], 3)  # at most 1,000 values: exact bins
    positive = np.r_[np.zeros(465, bool), np.ones(700, bool)]
    bins = score_bins(scores)
    humans = np.bincount(bins[~positive], minlength=bins.max() + 1)
    positives = np.bincount(bins[positive], minlength=bins.max() + 1)
    for fpr in (0.01, 0.05):
        point = roc_point(scores, positive, fpr, resamples=300, seed=1)
        assert roc_tpr_of_counts(humans, positives, fpr) == pytest.approx(point["tpr"])
        assert point["tpr_ci"][0] <= point["tpr"] <= point["tpr_ci"][1] and point["fpr"] <= fpr


def test_an_unreachable_operating_point_says_why():
    rng = np.random.default_rng(2)
    humans, machines = rng.random(60), rng.random(60) + 0.5
    few = roc_point(np.r_[humans, machines], np.r_[np.zeros(60, bool), np.ones(60, bool)], 0.01)
    assert not few["reachable"] and few["unreachable"]["reason"] == "few_test_humans" and few["fpr"] == 0.0
    assert few["tpr"] == pytest.approx((machines > humans.max()).mean())  # the TPR at FPR 0 is kept beside why
    assert "< 100 humans" in few["unreachable"]["short"]
    assert roc_point(np.ones(10), np.zeros(10, bool), 0.01) is None  # one class: no point


TASK = {"task": "binary", "splits": {
    "train": {"rows": 100, "target": {"human": 50, "machine": 50}, "language": {"Python": 100},
              "classes_by": {"domain": {"algorithmic": {"human": 50, "machine": 50}},
                             "language": {"Python": {"human": 50, "machine": 50}}}},
    "validation": {"rows": 20, "target": {"human": 10, "machine": 10}, "language": {"Python": 20},
                   "classes_by": {"domain": {"algorithmic": {"human": 10, "machine": 10}}}},
    "test": {"rows": 90, "target": {"human": 60, "machine": 30}, "language": {"Python": 70, "Rust": 20},
             "classes_by": {"domain": {"algorithmic": {"human": 30, "machine": 30}, "general": {"human": 30}},
                            "language": {"Python": {"human": 40, "machine": 30}, "Rust": {"human": 20}}}}},
    "test_subsets": {"seen_language_unseen_domain": {"rows": 30, "target": {"human": 30}, "one_class": "human"}}}


def test_the_data_block_says_what_the_run_holds():
    lines = data_block({"binary": TASK, "family": {**TASK, "task": "family"}}, {"binary": "T1", "family": "T2"},
                       {"binary": "build", "family": "build"})
    text = "\n".join(lines)
    assert lines[0] == "## What these data are"
    assert "| test | 90 | human 60, machine 30 | algorithmic 60, general 30 | 2: Python, Rust |" in text
    assert text.index("| train |") < text.index("| validation |") < text.index("| test |")
    assert "The validation split holds only the algorithmic domain; the test split also has general (30 test rows)" \
        in text
    assert "Test domains that hold one class (general: 30 rows, all human)" in text
    assert "Test languages that hold one class (Rust: 20 rows, all human)" in text
    assert "Test subsets that hold one class (seen_language_unseen_domain: 30 rows, all human)" in text
    assert "Test languages not in train: Rust." in text
    assert "Tasks binary, family are cut from one pool" in text
    one = "\n".join(data_block({"binary": TASK}, {"binary": "T1"}, {"binary": "release"}))
    assert "read from the release" in one and "cut from one pool" not in one


def test_the_label_audit_note_adds_up():
    every = audit_line({"checked": 5906, "corrected": 5906, "example": "the largest 3 of 61 (generator, label) groups: "
                        "generator 'human' labelled 'machine' (2971 rows)"})
    assert "all 5,906 checked rows" in every and "the whole label column was replaced" in every
    assert "the largest 3 of 61" in every
    some = audit_line({"checked": 1000, "corrected": 40, "uncorrectable": 2, "example": "x"})
    assert "40 of 1,000 checked rows" in some and "2 rows it could not correct were dropped" in some


def test_the_language_figure_never_draws_a_one_class_language_as_a_score(tmp_path, monkeypatch):
    from aicd.report import paper_figures

    drawn = {}
    monkeypatch.setattr(paper_figures, "save_figure", lambda fig, stem: drawn.setdefault("fig", fig) and [])
    scores = {"lr": {"by": {"language": {"Python": {"macro_f1": 0.8, "n": 50},
                                         "Rust": {"macro_f1": 1.0, "n": 16, "one_class": "human"}}}}}
    paper_figures.language_figure(scores, {"lr": "LR"}, "T1", tmp_path / "language_T1")
    ax = drawn["fig"].axes[0]
    texts = [t.get_text() for t in ax.texts]
    assert "80" in texts and "human\nonly" in texts and "100" not in texts
    assert np.isnan(np.ma.getdata(ax.images[0].get_array())[0, 1])  # no colour for the one-class cell
    assert drawn["fig"].axes[1].get_ylabel() == "macro-F1 × 100"  # the colour bar reads like the cells


def test_aicd_score_marks_a_one_class_group(tmp_path, capsys):
    from aicd.cli import main

    gold = pd.DataFrame({"id": [f"r{i}" for i in range(40)], "target": ["human", "machine"] * 15 + ["human"] * 10,
                         "language": ["Python"] * 30 + ["Rust"] * 10})
    pred = pd.DataFrame({"id": gold["id"], "pred": ["human"] * 40})
    gold.to_parquet(tmp_path / "gold.parquet")
    pred.to_csv(tmp_path / "pred.csv", index=False)
    assert main(["score", str(tmp_path / "pred.csv"), str(tmp_path / "gold.parquet"), "--resamples", "20"]) == 0
    out = capsys.readouterr().out
    assert "one_class" in out and "(one_class: the language's gold rows hold that class alone" in out


def test_the_leaderboard_heads_each_view_for_what_it_is():
    from aicd.report.leaderboard import build, render

    rng = np.random.default_rng(3)
    test = pd.DataFrame({"gold": ["human"] * 465 + ["machine"] * 500,
                         "score_human": np.r_[rng.beta(5, 2, 465), rng.beta(2, 5, 500)]})
    validation = pd.DataFrame({"machine_score": rng.beta(2, 4, 400)})  # shifted humans: the threshold moves
    from aicd.scoring.thresholds import threshold_metrics

    m = threshold_metrics(test, validation, (0.01,), resamples=100)
    boards = build([{"task": "T1", "metadata": {"detector": "Mine", "date": "2026-12-04"}, "macro_f1": 0.8,
                     "macro_f1_ci": [0.78, 0.82], "threshold_metrics": m}])
    entry = boards["T1"]["entries"][0]
    assert entry["tpr_at_1pct_fpr"] == m["roc_at_fpr"]["0.01"]["tpr"]  # "TPR @ 1% FPR": the ROC operating point
    assert entry["deployment_1pct_tpr"] == m["deployment_at_fpr"]["0.01"]["tpr"]
    page = render(boards)
    assert "<th class=\"\">TPR @ 1% FPR</th>" in page and "val. threshold for 1%: TPR (test FPR)" in page
    realised = m["deployment_at_fpr"]["0.01"]["fpr"]
    assert f"(test FPR {realised * 100:.2f}" in page


def test_fast_detectgpts_note_names_both_validation_samples():
    from aicd.report.paper_section import fast_detectgpt_validation, paper_figure

    rec = {"rows": {"validation": 648}, "fit": {"threshold": -12.94, "threshold_from": "validation",
                                               "threshold_rows": 200, "threshold_macro_f1": 0.3355,
                                               "threshold_auroc": 0.1594}}
    score = {"threshold_metrics": {"validation_auroc": 0.1709, "validation_rows": {"human": 320, "other": 320}}}
    text = fast_detectgpt_validation(rec, score)
    assert "a class-stratified sample of 200 of the 648 validation rows" in text and "AUROC 0.1594 on those rows" in text
    assert "every validation human row (320" in text and "validation AUROC 0.1709" in text
    assert paper_figure("confusion_best", "binary") == "the paper has no such figure for Task 1"
    assert paper_figure("confusion_best", "family") == "the paper's Figure 1"
