"""Bootstrap intervals of macro-F1 and the paired test: the multinomial draw of
confusion counts gives the same interval as resampling rows; seeded; cheap for 100,000 rows."""

import time

import numpy as np
import pandas as pd
import pytest
from aicd.common.errors import AicdError
from aicd.data.schema import ABSTAIN
from aicd.scoring.bootstrap import interval_and_p, macro_f1_interval, macro_f1_of_counts, paired_test
from aicd.scoring.metrics import classification_scores
from aicd.scoring.scorer import score
from sklearn.metrics import f1_score

LABELS = ["human", "machine", "hybrid"]


def noisy(gold, accuracy, rng):
    return np.where(rng.random(len(gold)) < accuracy, gold, rng.choice(LABELS, len(gold))).astype(object)


def test_interval_matches_resampling_rows():
    rng = np.random.default_rng(1)
    gold = rng.choice(LABELS, 2000, p=[0.5, 0.3, 0.2]).astype(object)
    pred = noisy(gold, 0.7, rng)
    lo, hi = macro_f1_interval(gold, pred, LABELS, resamples=2000, seed=0)
    # the textbook bootstrap: resample row indices, recompute with scikit-learn
    idx = np.random.default_rng(9).integers(0, len(gold), size=(400, len(gold)))
    rows = [f1_score(gold[i], pred[i], average="macro", labels=LABELS) for i in idx]
    ref_lo, ref_hi = np.quantile(rows, [0.025, 0.975])
    assert abs(lo - ref_lo) < 0.006 and abs(hi - ref_hi) < 0.006
    point = f1_score(gold, pred, average="macro")
    assert lo < point < hi and 0.01 < hi - lo < 0.1


def test_macro_f1_of_counts_is_the_scorer_and_abstentions_only_lower_recall():
    gold = np.array(["human", "human", "machine", "machine", "hybrid"], dtype=object)
    pred = np.array(["human", ABSTAIN, "machine", "hybrid", "hybrid"], dtype=object)
    s = classification_scores(gold, pred, resamples=0)
    counts = np.array([[1, 0, 0, 1], [0, 1, 1, 0], [0, 0, 1, 0]])  # human, machine, hybrid, abstain
    assert macro_f1_of_counts(counts) == pytest.approx(s["macro_f1"])
    assert s["per_class"]["human"]["recall"] == 0.5 and s["per_class"]["human"]["precision"] == 1.0
    assert s["macro_f1_ci"] is None and s["abstentions"] == 1


def test_intervals_are_seeded_and_a_perfect_detector_has_a_point_interval():
    rng = np.random.default_rng(0)
    gold = rng.choice(LABELS, 500).astype(object)
    pred = noisy(gold, 0.8, rng)
    a = classification_scores(gold, pred, LABELS, seed=3)["macro_f1_ci"]
    assert a == classification_scores(gold, pred, LABELS, seed=3)["macro_f1_ci"]
    assert a != classification_scores(gold, pred, LABELS, seed=4)["macro_f1_ci"]
    assert classification_scores(gold, gold, LABELS)["macro_f1_ci"] == [1.0, 1.0]
    assert classification_scores([], [])["macro_f1_ci"] is None


def test_paired_test_finds_a_real_difference_and_not_a_null_one():
    rng = np.random.default_rng(2)
    gold = rng.choice(LABELS, 3000).astype(object)
    good, bad = noisy(gold, 0.85, rng), noisy(gold, 0.75, rng)
    r = paired_test(gold, good, bad, LABELS, seed=0)
    assert r["difference"] == pytest.approx(f1_score(gold, good, average="macro") - f1_score(gold, bad, average="macro"))
    assert r["difference_ci"][0] > 0 and r["p_value"] < 0.01
    same = paired_test(gold, good, good, LABELS, seed=0)
    assert same["difference"] == 0 and same["difference_ci"] == [0.0, 0.0] and same["p_value"] == 1.0
    twin = noisy(gold, 0.85, rng)   # as good, different errors
    assert paired_test(gold, good, twin, LABELS, seed=0)["p_value"] > 0.05
    assert paired_test(gold, good, bad, LABELS, seed=0) == r


def test_the_interval_and_the_p_value_agree_at_the_boundary():
    """Both come from the same resamples: the interval excludes 0 exactly when p <= 0.05 (near
    the boundary too, where a p-value with a +1 correction said 0.0519 beside an interval that
    excluded 0)."""
    rng = np.random.default_rng(5)
    seen = set()
    for trial in range(60):
        gold = rng.choice(LABELS, 600).astype(object)
        a = noisy(gold, 0.80, rng)
        b = noisy(gold, 0.80 - rng.uniform(0, 0.06), rng)
        r = paired_test(gold, a, b, LABELS, resamples=400, seed=trial)
        lo, hi = r["difference_ci"]
        excludes = lo > 0 or hi < 0
        assert excludes == (r["p_value"] <= 0.05), (lo, hi, r["p_value"])
        seen.add(excludes)
    assert seen == {True, False}  # both sides of the boundary were tried


@pytest.mark.parametrize("sign", [1, -1])
@pytest.mark.parametrize("on_far_side, excludes", [(24, True), (25, True), (26, False)])
def test_interval_and_p_agree_exactly_at_the_boundary(sign, on_far_side, excludes):
    """1,000 resamples, k = 25: with 25 differences on the far side of 0, p = 0.05 and the
    interval excludes 0; with 26, p > 0.05 and it does not; the same in both directions."""
    diff = sign * np.concatenate([-np.arange(1, on_far_side + 1) / 1000, np.arange(1, 1001 - on_far_side) / 100])
    lo, hi, p = interval_and_p(np.random.default_rng(0).permutation(diff), 0.95)
    assert (lo > 0 or hi < 0) is excludes and (p <= 0.05) is excludes, (lo, hi, p)


def test_100k_rows_take_well_under_a_second():
    rng = np.random.default_rng(0)
    gold = rng.choice(LABELS, 100_000).astype(object)
    pred = noisy(gold, 0.8, rng)
    started = time.perf_counter()
    classification_scores(gold, pred, LABELS)
    assert time.perf_counter() - started < 1.0


def binary_task(n=300):
    """A binary task's test rows with a `subset` column, and predictions 80% right."""
    rng = np.random.default_rng(0)
    test = pd.DataFrame({"id": [f"i{i}" for i in range(n)], "target": rng.choice(["human", "machine"], n),
                         "subset": rng.choice(["seen", "unseen"], n)})
    preds = pd.DataFrame({"id": test["id"], "gold": test["target"], "pred": noisy(test["target"].to_numpy(), 0.8, rng)})
    preds["pred"] = preds["pred"].replace("hybrid", "machine")
    return test, preds


def test_score_json_carries_intervals_everywhere():
    test, preds = binary_task()
    result = score(preds, test, ["human", "machine"])
    lo, hi = result["macro_f1_ci"]
    assert lo <= result["macro_f1"] <= hi and result["bootstrap"]["resamples"] == 1000
    for group in result["by"]["subset"].values():
        assert group["macro_f1_ci"][0] <= group["macro_f1"] <= group["macro_f1_ci"][1]


def test_score_refuses_gold_labels_outside_the_task():
    # a gold `hybrid` in a binary task: an error naming it and its count, not a three-class average
    test, preds = binary_task()
    bad = test.copy()
    bad.loc[:6, "target"] = "hybrid"
    bad_preds = preds.assign(gold=bad["target"])
    with pytest.raises(AicdError, match=r"gold labels outside the task's label set \['human', 'machine'\]: 'hybrid' \(7 rows\)"):
        score(bad_preds, bad, ["human", "machine"])


def test_score_refuses_an_empty_test_set():
    test, preds = binary_task()
    with pytest.raises(AicdError, match="nothing to score: 0 predictions for 0 test rows"):
        score(preds.iloc[:0], test.iloc[:0], ["human", "machine"])


def test_a_resample_without_a_rare_class_is_scored_on_the_classes_it_holds():
    # macro-F1 averages over the classes present in gold or predictions; a resample that holds
    # no row of the rare class must not score it as F1 0 (that pulled a perfect detector's
    # interval down to [0.5, 1.0] here)
    gold = np.array(["human"] * 18 + ["machine"] * 2, dtype=object)
    assert classification_scores(gold, gold)["macro_f1_ci"] == [1.0, 1.0]
    counts = np.array([[5, 0, 0], [0, 0, 0]])   # machine: neither in gold nor predicted
    assert macro_f1_of_counts(counts) == 1.0


def two_detectors():
    """Gold labels and two detectors' predictions; B also predicts hybrid, a class neither gold nor A holds."""
    rng = np.random.default_rng(5)
    gold = rng.choice(["human", "machine"], 400).astype(object)
    a = noisy(gold, 0.9, rng)
    a[a == "hybrid"] = "human"
    b = noisy(gold, 0.7, rng)
    return gold, a, b


def test_pairs_score_each_side_as_the_scorer_does():
    gold, a, b = two_detectors()
    r = paired_test(gold, a, b, LABELS, seed=0)
    assert r["macro_f1_a"] == pytest.approx(classification_scores(gold, a, resamples=0)["macro_f1"])
    assert r["macro_f1_b"] == pytest.approx(classification_scores(gold, b, resamples=0)["macro_f1"])


def test_an_interval_refuses_gold_outside_the_labels():
    gold, _, _ = two_detectors()
    with pytest.raises(ValueError, match=r"gold labels \['hybrid'\] are not among"):
        macro_f1_interval(np.array(["hybrid", "human"], dtype=object), gold[:2], ["human", "machine"])


def test_a_paired_test_needs_at_least_one_resample():
    gold, a, b = two_detectors()
    with pytest.raises(ValueError, match="at least one resample"):
        paired_test(gold, a, b, LABELS, resamples=0)
