"""Which detectors are calibrated on human reference code (aicd.plan.Plan.calibration_pairs), and
the config's calibration section checked by name before any job (aicd.config)."""

import copy

import pytest
import yaml
from aicd.common.errors import AicdError
from aicd.config import validate_config
from aicd.plan import Plan


def plan(config):
    return Plan.from_config(config, {}, {})


def test_the_demo_calibrates_every_trained_t1_detector_but_its_minilm_and_no_dummy(demo):
    pairs = plan(demo).calibration_pairs()
    assert {t for t, _ in pairs} == {"binary"} and plan(demo).calibrated_tasks() == ["binary"]
    assert {d for _, d in pairs} == set(demo["detectors"]) - {"random", "majority", "minilm"}


def test_every_task_with_a_human_class_by_default_and_none_when_off(demo):
    config = copy.deepcopy(demo)
    config["calibration"]["tasks"] = "all"
    assert plan(config).calibrated_tasks() == ["binary", "family"]
    config["calibration"]["exclude"] = []
    assert ("binary", "minilm") in plan(config).calibration_pairs()
    config["calibration"]["detectors"] = ["lr_tfidf", "random"]   # a dummy named is still left out
    assert plan(config).calibration_pairs() == [("binary", "lr_tfidf"), ("family", "lr_tfidf")]
    config["calibration"]["enabled"] = False
    assert plan(config).calibration_pairs() == [] and plan(config).calibrated_tasks() == []


def test_a_detector_whose_model_does_not_apply_to_new_code_is_not_calibrated(demo):
    config = copy.deepcopy(demo)
    config["detectors"]["fdg"] = {"kind": "fast_detectgpt", "title": "FDG", "tasks": ["binary"],
                                  "params": {"model": "gpt2"}}
    validate_config(config)
    assert "fdg" not in {d for _, d in plan(config).calibration_pairs()}


@pytest.mark.parametrize("change,says", [
    ({"tasks": ["binry"]}, "calibration.tasks: no task named 'binry'"),
    ({"detectors": ["svm"]}, "calibration.detectors: no detector named 'svm'"),
    ({"view_fpr": 0.1}, "calibration.view_fpr: 0.1 is not one of calibration.fprs"),
    ({"reference": {"library": "trial"}}, "'trial' is not a source that gathers code"),
    ({"reference": {"sources": ["codeaid"]}}, "'codeaid' is in dataset.sources"),
    ({"reference": {"sources": ["nope"]}}, "calibration.reference.sources: no source named 'nope'"),
])
def test_a_bad_calibration_section_is_named_before_any_job(repo, change, says):
    config = yaml.safe_load((repo / "config" / "demo.yaml").read_text())
    config["calibration"] = {**config["calibration"], **change}
    with pytest.raises(AicdError, match="invalid configuration") as err:
        validate_config(config)
    assert says in str(err.value)


def test_an_exclude_naming_no_configured_detector_excludes_nothing(repo):
    """A copy of the demo's config with detectors of one's own keeps the demo's exclude: [minilm]."""
    config = yaml.safe_load((repo / "config" / "demo.yaml").read_text())
    config["detectors"] = {"lr": config["detectors"]["lr_tfidf"]}
    assert "minilm" in config["calibration"]["exclude"]
    validate_config(config)
    assert {d for _, d in plan(config).calibration_pairs()} == {"lr"}
