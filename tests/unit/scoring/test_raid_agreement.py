"""Our threshold metrics against RAID's own evaluation code (raid-bench, `raid.run_evaluation`),
on the same scores: the same AUROC, the same ROC operating point (RAID's TPR @ FPR, the
threshold tuned on the evaluated humans), and the same deployment TPR when RAID is given the
validation humans to tune on.

RAID searches for a threshold whose FPR is within epsilon (0.0005) of the target and stops at
the first it finds, anywhere between two human scores; where no FPR is that close it keeps the
closest one below the target, converging on the ROC point from above. So RAID's TPR can fall a
machine row or two short of the ROC point where some k / humans is within epsilon of the target
(always, from 1,000 humans up). The human counts here (465, 650) keep every k / humans further
than epsilon from 1% and 5%: RAID's search then lands on the ROC point itself, and the counts of
machine rows compare exactly."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # tests/, for components
from components import require

require(importlib.util.find_spec("raid") is not None, "raid-bench (RAID's evaluation code)",
        "make setup (it installs raid-bench==0.2.0 with --no-deps)")

from aicd.scoring.thresholds import threshold_metrics  # noqa: E402
from raid import run_evaluation  # noqa: E402

FPRS = (0.01, 0.05)


def raid_rows(machine_scores: np.ndarray, is_human: np.ndarray, domains=None) -> tuple[list[dict], pd.DataFrame]:
    """RAID's inputs: (results [{id, score}], the data frame of its columns)."""
    n = len(machine_scores)
    frame = pd.DataFrame({"id": np.arange(n), "model": np.where(is_human, "human", "some-llm"),
                          "domain": "code" if domains is None else domains, "attack": "none",
                          "decoding": "greedy", "repetition_penalty": "no"})
    return [{"id": int(i), "score": float(s)} for i, s in enumerate(machine_scores)], frame


def raid_record(result: dict, domain: str = "all") -> dict:
    return next(r for r in result["scores"] if r["domain"] == domain and r["model"] == "all"
                and r["attack"] == "all" and r["decoding"] == "all" and r["repetition_penalty"] == "all")


def raid_tpr(record: dict, fpr: float):
    cell = record["accuracy"][str(fpr)]
    return None if cell is None else cell["tp"] / (cell["tp"] + cell["fn"])


def ours(machine_scores, is_human, validation=None, domains=None) -> dict:
    test = pd.DataFrame({"id": [str(i) for i in range(len(machine_scores))],
                         "gold": np.where(is_human, "human", "machine"), "score_human": 1.0 - machine_scores})
    if domains is not None:
        test["domain"] = domains
    return threshold_metrics(test, validation, FPRS, breakdown_columns=("domain",) if domains is not None else (),
                             resamples=0)


def scores_of(rng, humans: int, machines: int, decimals: int | None = None) -> tuple[np.ndarray, np.ndarray]:
    s = np.r_[rng.beta(2, 5, humans), rng.beta(5, 2, machines)]
    if decimals is not None:
        s = np.round(s, decimals)  # ties, as saturated or rounded probabilities give
    s = 1.0 - (1.0 - s)  # the value our machine_score reads back from score_human
    return s, np.r_[np.ones(humans, bool), np.zeros(machines, bool)]


@pytest.mark.parametrize("seed,decimals", [(0, None), (1, None), (2, 2), (3, 3)])
def test_auroc_and_roc_point_agree_with_raid(seed, decimals):
    scores, is_human = scores_of(np.random.default_rng(seed), 465, 1000, decimals)
    mine = ours(scores, is_human)
    record = raid_record(run_evaluation(*raid_rows(scores, is_human), target_fpr=list(FPRS), per_domain_tuning=False))
    assert mine["auroc"] == pytest.approx(record["auroc"], abs=1e-12)
    for fpr in FPRS:
        point = mine["roc_at_fpr"][f"{fpr:g}"]
        assert point["reachable"] and point["fpr"] <= fpr
        assert point["tpr"] == pytest.approx(raid_tpr(record, fpr), abs=1e-12), fpr


def test_ties_at_the_top_are_unreachable_for_both():
    rng = np.random.default_rng(4)
    scores, is_human = scores_of(rng, 465, 1000)
    scores[:20] = 1.0  # 20 of 465 human rows tie at the top score: more than 1% (4), fewer than 5% (23)
    scores[465:600] = 1.0
    mine = ours(scores, is_human)
    record = raid_record(run_evaluation(*raid_rows(scores, is_human), target_fpr=list(FPRS), per_domain_tuning=False))
    one = mine["roc_at_fpr"]["0.01"]
    assert not one["reachable"] and one["unreachable"]["reason"] == "ties_at_top" and one["fpr"] == 0
    assert raid_tpr(record, 0.01) is None  # RAID drops an FPR it cannot reach
    five = mine["roc_at_fpr"]["0.05"]
    assert five["reachable"] and five["tpr"] == pytest.approx(raid_tpr(record, 0.05), abs=1e-12)


def test_deployment_tpr_is_raids_when_raid_tunes_on_the_validation_humans():
    rng = np.random.default_rng(5)
    test_scores, is_human = scores_of(rng, 300, 1000)
    validation_humans = rng.beta(1.5, 6, 465)  # another split, shifted: the threshold transfers imperfectly
    validation = pd.DataFrame({"id": [f"v{i}" for i in range(465)], "machine_score": validation_humans})
    mine = ours(test_scores, is_human, validation)
    # RAID tunes on the human rows it is given and counts the machine rows: give it the validation
    # humans and the test's machine rows
    machines = test_scores[~is_human]
    both = np.r_[validation_humans, machines]
    record = raid_record(run_evaluation(*raid_rows(both, np.r_[np.ones(465, bool), np.zeros(len(machines), bool)]),
                                        target_fpr=list(FPRS), per_domain_tuning=False))
    for fpr in FPRS:
        at = mine["deployment_at_fpr"][f"{fpr:g}"]
        assert at["tpr"] == pytest.approx(raid_tpr(record, fpr), abs=1e-12), fpr
        assert at["tpr"] != mine["roc_at_fpr"][f"{fpr:g}"]["tpr"]  # the two views differ on shifted humans


def test_per_domain_roc_points_are_raids_per_domain_tuning():
    rng = np.random.default_rng(6)
    a, ha = scores_of(rng, 465, 600)
    b, hb = scores_of(rng, 650, 800)
    b = np.clip(b + 0.1, 0, 1)  # another domain, another score scale
    scores, is_human = np.r_[a, b], np.r_[ha, hb]
    domains = np.r_[np.full(len(a), "algorithmic"), np.full(len(b), "general")]
    mine = ours(scores, is_human, domains=domains)
    result = run_evaluation(*raid_rows(scores, is_human, domains), target_fpr=list(FPRS), per_domain_tuning=True)
    for domain in ("algorithmic", "general"):
        record, group = raid_record(result, domain), mine["by"]["domain"][domain]
        assert group["auroc"] == pytest.approx(record["auroc"], abs=1e-12)
        for fpr in FPRS:
            assert group["roc_at_fpr"][f"{fpr:g}"]["tpr"] == pytest.approx(raid_tpr(record, fpr), abs=1e-12)
