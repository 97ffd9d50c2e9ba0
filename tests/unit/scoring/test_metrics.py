import pytest
from aicd.scoring.metrics import breakdown, classification_scores
from sklearn.metrics import f1_score


def test_macro_f1_hand_computed():
    gold = ["a", "a", "b", "b", "c"]
    pred = ["a", "b", "b", "b", "a"]
    s = classification_scores(gold, pred)
    # a: P 1/2 R 1/2 F 1/2; b: P 2/3 R 1 F 4/5; c: P 0 R 0 F 0
    assert s["per_class"]["a"]["f1"] == pytest.approx(0.5)
    assert s["per_class"]["b"]["precision"] == pytest.approx(2 / 3)
    assert s["per_class"]["b"]["f1"] == pytest.approx(0.8)
    assert s["per_class"]["c"]["f1"] == 0.0 and s["per_class"]["c"]["support"] == 1
    assert s["macro_f1"] == pytest.approx((0.5 + 0.8 + 0.0) / 3)
    assert s["accuracy"] == pytest.approx(3 / 5)
    assert s["macro_f1"] == pytest.approx(f1_score(gold, pred, average="macro"))


def test_a_predicted_class_absent_from_gold_counts():
    s = classification_scores(["h", "h", "m", "m"], ["h", "x", "m", "m"])
    # h: P 1 R 1/2 F 2/3; m: F 1; x: F 0
    assert s["labels"] == ["h", "m", "x"]
    assert s["macro_f1"] == pytest.approx((2 / 3 + 1 + 0) / 3)


def test_binary_perfect_and_inverted():
    assert classification_scores(["h", "m"], ["h", "m"])["macro_f1"] == 1.0
    assert classification_scores(["h", "m"], ["m", "h"])["macro_f1"] == 0.0


def test_confusion_matrix_is_row_normalised_in_preferred_order():
    s = classification_scores(["m", "m", "m", "h"], ["m", "h", "m", "h"], preferred_order=["m", "h"])
    assert s["labels"] == ["m", "h"]
    assert s["confusion"]["counts"] == [[2, 1], [0, 1]]
    assert s["confusion"]["row_normalized"][0] == pytest.approx([2 / 3, 1 / 3])


def test_breakdown_by_subset_skips_missing_values():
    out = breakdown(["a", "b", "a", "b"], ["a", "b", "b", "b"], ["seen", "seen", "unseen", None])
    assert set(out) == {"seen", "unseen"}
    assert out["seen"]["macro_f1"] == 1.0 and out["unseen"]["n"] == 1


def test_breakdown_names_a_group_that_holds_one_gold_class():
    out = breakdown(["human", "human", "human", "machine"], ["human", "machine", "human", "machine"],
                    ["unseen", "unseen", "seen", "seen"])
    assert out["unseen"]["one_class"] == "human" and out["seen"]["one_class"] is None
    # one gold class but a second one predicted: macro-F1 averages both (the second scores 0)
    assert out["unseen"]["labels"] == ["human", "machine"] and out["unseen"]["macro_f1"] == pytest.approx(1 / 3)
