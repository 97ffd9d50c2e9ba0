"""Per-language calibration (aicd.scoring.calibration): each group's threshold from its fitting
part with the held-out check, the pooled fallback of a small group with how many more programs it
needs, the calibration file tied to one model, and the threshold adapted to the unlabelled test
set (aicd.scoring.transductive), which is an option labelled as such."""

import json

import numpy as np
import pytest
from aicd.common.errors import AicdError
from aicd.scoring.calibration import (
    POOLED,
    Calibration,
    calibrate,
    clopper_pearson_upper,
    conformal_threshold,
    held_out_mask,
    model_identity,
    more_needed,
    operating_point,
)
from aicd.scoring.transductive import ADAPTED, adapt, adapted_thresholds


def reference(seed=0):
    """Python 200 (two domains), Go 60 scoring higher, C 20 (too few for 5% once halved)."""
    rng = np.random.default_rng(seed)
    scores = np.r_[rng.normal(0, 1, 200), rng.normal(2, 1, 60), rng.normal(0, 1, 20)]
    languages = np.array(["Python"] * 200 + ["Go"] * 60 + ["C"] * 20, dtype=object)
    domains = np.array(["algorithmic"] * 100 + ["general"] * 100 + ["general"] * 80, dtype=object)
    return scores, languages, domains


def test_each_language_gets_the_conformal_threshold_of_its_fitting_part_checked_on_the_rest():
    scores, languages, domains = reference()
    result = calibrate(scores, languages, domains, fprs=(0.05,), held_out=0.5, seed=3)
    held = held_out_mask(languages, domains, 0.5, 3)
    go = result["groups"]["Go"]
    fit, out = scores[(languages == "Go") & ~held], scores[(languages == "Go") & held]
    assert (go["n"], go["fit_n"], go["held_out_n"]) == (60, len(fit), len(out)) == (60, 30, 30)
    at = go["at"]["0.05"]
    assert at["own"] and at["threshold"] == conformal_threshold(fit, 0.05)
    assert at["flagged"] == int((out > at["threshold"]).sum()) and at["realised_fpr"] == at["flagged"] / 30
    assert at["fpr_upper"] == pytest.approx(clopper_pearson_upper(at["flagged"], 30))
    # Go scores higher than Python: a pooled threshold would flag far more of its humans
    assert at["threshold"] > result["groups"]["Python"]["at"]["0.05"]["threshold"]
    # a language in one domain is a group of its own too
    assert result["groups"]["Python · general"]["n"] == 100 and result["groups"]["Python · algorithmic"]["n"] == 100


def test_a_small_language_falls_back_to_the_pooled_threshold_with_what_it_needs():
    scores, languages, domains = reference()
    result = calibrate(scores, languages, domains, fprs=(0.01, 0.05), held_out=0.5, seed=3)
    c = result["groups"]["C"]["at"]
    assert not c["0.05"]["own"] and c["0.05"]["threshold"] == result["pooled"]["at"]["0.05"]["threshold"]
    assert "10 reference programs in its fitting part, fewer than the 19" in c["0.05"]["why_pooled"]
    assert c["0.05"]["more_needed"] == more_needed(20, 19, 0.5) == 17   # 37 halve into 19 + 18
    # at 1% (99 fitting programs) Python's 100 and the pooled 140 are large enough, Go's 30 is not
    assert result["pooled"]["at"]["0.01"]["threshold"] is not None and result["groups"]["Python"]["at"]["0.01"]["own"]
    assert not result["groups"]["Go"]["at"]["0.01"]["own"] and result["groups"]["Go"]["at"]["0.05"]["own"]
    # a floor above 1/FPR - 1 is honoured
    floored = calibrate(scores, languages, domains, fprs=(0.05,), held_out=0.5, seed=3, floor=40)
    assert not floored["groups"]["Go"]["at"]["0.05"]["own"] and floored["groups"]["Python"]["at"]["0.05"]["own"]


def test_a_rows_part_does_not_change_when_another_language_gains_rows():
    _, languages, domains = reference()
    before = held_out_mask(languages, domains, 0.5, 7)
    more = np.r_[languages, ["Rust"] * 50]
    after = held_out_mask(more, np.r_[domains, ["general"] * 50], 0.5, 7)
    assert (after[:len(languages)] == before).all()


def test_thresholds_go_to_each_program_by_language_domain_or_the_pooled_one():
    scores, languages, domains = reference()
    cal = Calibration({"file": "m.skops", "sha256": "abc"}, {"rows": len(scores)},
                      calibrate(scores, languages, domains, fprs=(0.05,), seed=3))
    values, groups, pooled = cal.thresholds(["Go", "C", "Rust", "Python", "Python"], 0.05,
                                            [None, None, None, "general", "contest"])
    pooled_t = cal.result["pooled"]["at"]["0.05"]["threshold"]
    assert groups == ["Go", POOLED, POOLED, "Python · general", "Python"]
    assert list(pooled) == [False, True, True, False, False]
    assert values[1] == values[2] == pooled_t
    assert values[3] == cal.group("Python · general")["at"]["0.05"]["threshold"]
    with pytest.raises(AicdError, match="no thresholds for an FPR of 0.1"):
        cal.thresholds(["Go"], 0.1)


def test_the_calibration_file_round_trips_and_belongs_to_one_model(tmp_path):
    scores, languages, domains = reference()
    model = tmp_path / "m.skops"
    model.write_bytes(b"a fitted model")
    identity = model_identity(model)
    cal = Calibration(identity, {"from": "test", "rows": 280}, calibrate(scores, languages, domains, seed=1))
    path = tmp_path / "cal.json"
    cal.save(path)
    again = Calibration.load(path)
    assert again.to_json() == json.loads(path.read_text()) == cal.to_json()
    again.check_model(identity)
    other = tmp_path / "n.skops"
    other.write_bytes(b"another fitted model")
    with pytest.raises(AicdError, match="was made for another fitted model"):
        again.check_model(model_identity(other))
    folder = tmp_path / "encoder"
    folder.mkdir()
    (folder / "config.json").write_text("{}")
    first = model_identity(folder)
    (folder / "model.safetensors").write_bytes(b"weights")
    assert model_identity(folder)["sha256"] != first["sha256"] and first["file"] == "encoder"


def test_the_operating_point_of_fixed_thresholds_on_labelled_rows():
    scores = np.array([0.1, 0.2, 0.9, 0.95, 0.3, 0.8])
    is_human = np.array([True, True, True, False, False, False])
    point = operating_point(scores, is_human, np.array([0.5] * 5 + [np.nan]), resamples=200, seed=0)
    assert (point["fpr"], point["tpr"], point["without_threshold"]) == (1 / 3, 1 / 3, 1)
    assert point["fpr_upper"] == pytest.approx(clopper_pearson_upper(1, 3))
    assert point["tpr_ci"][0] <= point["tpr"] <= point["tpr_ci"][1]


def test_the_adapted_threshold_splits_a_two_class_collection_and_says_what_it_is():
    rng = np.random.default_rng(0)
    scores = np.r_[rng.normal(0, 1, 400), rng.normal(4, 1, 400), rng.normal(10, 1, 100), rng.normal(14, 1, 100)]
    groups = np.array(["A"] * 800 + ["B"] * 200, dtype=object)
    fitted = adapt(scores, groups, seed=0)
    assert fitted["label"] == ADAPTED == "adapted to the unlabelled test set" and fitted["available"]
    thresholds = adapted_thresholds(fitted, groups)
    machine = np.r_[np.zeros(400, bool), np.ones(400, bool), np.zeros(100, bool), np.ones(100, bool)]
    flagged = scores > thresholds
    # per-group standardisation puts B's threshold between its own two clusters, not A's
    assert (flagged == machine).mean() > 0.95
    assert adapt(scores, groups, seed=0) == fitted                      # seeded
    assert not adapt(scores[:10], seed=0)["available"]                  # too few rows to fit a mixture
    assert "fewer than the 20" in adapt(scores[:10], seed=0)["why"]
    # a probability of exactly 0 or 1 is an infinite log-odds: the mixture is fitted all the same,
    # and the rows it holds at the extremes fall on their side of the threshold
    extreme = scores.copy()
    extreme[[0, 500]] = [-np.inf, np.inf]
    fitted = adapt(extreme, groups, seed=0)
    assert fitted["available"]
    flagged = extreme > adapted_thresholds(fitted, groups)
    assert not flagged[0] and flagged[500] and (flagged == machine).mean() > 0.95


def test_held_with_a_confidence_a_language_needs_more_programs_and_the_file_says_so():
    scores, languages, domains = reference()
    average = calibrate(scores, languages, domains, fprs=(0.05,), held_out=0.5, seed=3)
    confident = calibrate(scores, languages, domains, fprs=(0.05,), held_out=0.5, seed=3, confidence=0.95)
    assert average["fpr_confidence"] is None and confident["fpr_confidence"] == 0.95
    go = confident["groups"]["Go"]["at"]["0.05"]  # 30 in its fitting part: enough on average, not with 95%
    assert average["groups"]["Go"]["at"]["0.05"]["own"] and not go["own"]
    assert "30 reference programs in its fitting part, fewer than the 59" in go["why_pooled"]
    assert confident["pooled"]["at"]["0.05"]["threshold"] >= average["pooled"]["at"]["0.05"]["threshold"]
    again = Calibration.from_json(Calibration({"sha256": "x"}, {}, confident).to_json())
    assert again.result["fpr_confidence"] == 0.95
