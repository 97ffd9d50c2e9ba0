"""Metrics and threshold rules have one home, aicd.data.metrics: AUROC, the cut that maximises
macro-F1, the threshold at a target FPR (the quantile and the conformal rule, each under its own
name, with the fewest human scores each needs), and the machine score. No other module defines
one again or takes one from elsewhere; and the leave-one-collection-out table says the target
FPR it was made at."""

from __future__ import annotations

import ast
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from aicd.data import metrics

REPO = Path(__file__).resolve().parents[3]
RULES = ("machine_score", "machine_scores", "average_ranks", "auroc", "auroc_of_counts", "cut_points",
         "macro_f1_of_cells", "best_threshold", "min_humans_quantile", "quantile_threshold", "check_confidence",
         "min_reference", "conformal_rank")


def sources():
    for path in sorted([*(REPO / "workflow" / "aicd").rglob("*.py"), *(REPO / "benchmarks").glob("*.py")]):
        if path != REPO / "workflow" / "aicd" / "data" / "metrics.py":
            yield path


def test_each_rule_is_defined_once_and_imported_from_its_home():
    for name in RULES:
        assert callable(getattr(metrics, name)), name
    again, elsewhere = [], []
    for path in sources():
        tree = ast.parse(path.read_text())
        for node in ast.walk(tree):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name in RULES + ("threshold_at",):
                again.append(f"{path.relative_to(REPO)}:{node.lineno} def {node.name}")
            if isinstance(node, ast.ImportFrom) and not (node.module or "").endswith("metrics"):
                elsewhere += [f"{path.relative_to(REPO)}:{node.lineno} {a.name} from {node.module}"
                              for a in node.names if a.name in RULES]
    assert not again, "a metric or threshold rule defined outside aicd.data.metrics:\n" + "\n".join(again)
    assert not elsewhere, "a rule imported from elsewhere:\n" + "\n".join(elsewhere)


def test_the_two_thresholds_at_a_target_fpr_need_what_each_rule_says():
    human = np.arange(20, dtype=float)
    # the quantile: one human score may lie above it once there are ceil(1/fpr) of them
    assert metrics.min_humans_quantile(0.05) == 20 and metrics.quantile_threshold(human, 0.05) == 18.0
    # the split-conformal threshold: the ceil((n + 1)(1 - fpr))-th smallest, from 1/fpr - 1 humans on
    assert metrics.min_reference(0.05) == 19 and metrics.conformal_rank(19, 0.05) == 19
    assert metrics.conformal_rank(18, 0.05) is None
    assert metrics.min_reference(0.05, 0.95) == 59 and metrics.conformal_rank(58, 0.05, 0.95) is None


def test_the_best_cut_flags_the_rows_above_a_score_and_takes_no_part_of_nan():
    scores = np.array([0.1, 0.2, np.nan, 0.8, 0.9])
    t, f1 = metrics.best_threshold(scores, np.array([0, 0, 1, 1, 1], bool))
    assert t == 0.2 and f1 == 1.0


@pytest.mark.parametrize("fpr", [0.01, 0.05])
def test_the_loco_table_says_the_target_fpr_it_was_made_at(fpr):
    from aicd.report.loco import detector_records, markdown

    rng = np.random.default_rng(0)

    def fold(shift):
        gold = np.array(["human"] * 120 + ["machine"] * 120, dtype=object)
        score_human = np.r_[rng.uniform(0.3, 1, 120), rng.uniform(0, 0.7 - shift, 120)]
        predictions = pd.DataFrame({"id": np.arange(240).astype(str), "gold": gold, "score_human": score_human})
        validation = pd.DataFrame({"gold": gold, "machine_score": 1 - score_human})
        return predictions, validation

    record = detector_records("d", {"A": fold(0.0), "B": fold(0.1)}, 0, fpr)
    text = markdown({"d": record}, {"d": "D"}, fpr)
    assert f"({fpr:.0%} target)" in text
    other = {0.01: "5%", 0.05: "1%"}[fpr]
    assert f"({other} target)" not in text
    assert record["folds"]["A"]["calibrated"]["target_fpr"] == fpr
