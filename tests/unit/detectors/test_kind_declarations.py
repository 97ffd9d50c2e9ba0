"""What a kind is, declared once on its class and read in one form (aicd.detectors.base.Traits)
by the plan, the job and the report: a dummy baseline is one because its kind says so (no config
flag needed), a binarising kind is fitted and scored on human vs the rest in the plan and in the
job alike, and a kind that lacks a method is refused when its module is imported, by name."""

from __future__ import annotations

import copy
import importlib
import sys

import numpy as np
import pytest
from aicd.common.errors import AicdError
from aicd.config import validate_config
from aicd.detectors import REGISTRY
from aicd.detectors.base import Detector
from aicd.features.registry import FEATURIZERS
from aicd.plan import Plan
from aicd.report import layouts


def plan_of(config):
    config = copy.deepcopy(config)
    validate_config(config)
    return Plan.from_config(config, {}, {})


def test_random_and_majority_are_dummies_by_their_kind_without_a_config_flag(demo):
    assert REGISTRY["random"].traits().dummy and REGISTRY["majority"].traits().dummy
    assert not REGISTRY["logistic_regression"].traits().dummy
    config = copy.deepcopy(demo)
    assert "dummy" not in config["detectors"]["random"]  # the demo says only kind: random
    plan = plan_of(config)
    assert plan.detectors["random"].dummy and plan.detectors["majority"].dummy
    trained = plan.trained("binary")
    assert "random" not in trained and "majority" not in trained and trained  # never a trained row
    # the report's layout (Table 4's underline, the figures) reads the same declaration
    rows = {d: dummy for d, _, dummy in layouts.report_layout(plan)["detectors"]}
    assert rows["random"] and rows["majority"] and not any(v for d, v in rows.items() if d not in ("random", "majority"))
    # the calibration leaves dummies out as the plan has them
    assert not {d for _, d in plan.calibration_pairs()} & {"random", "majority"}


def test_a_config_may_still_mark_a_kind_that_does_not_declare_it_a_dummy(demo):
    config = copy.deepcopy(demo)
    config["detectors"]["baseline"] = {"kind": "logistic_regression", "title": "LR base", "features": "tfidf",
                                       "dummy": True}
    config["detectors"]["random"]["dummy"] = False  # and override a kind's own
    plan = plan_of(config)
    assert plan.detectors["baseline"].dummy and not plan.detectors["random"].dummy
    assert "baseline" not in plan.trained("binary") and "random" in plan.trained("binary")


def test_a_binarising_kind_is_scored_and_fitted_on_human_vs_the_rest_from_one_declaration(demo, monkeypatch):
    class Binarised(Detector):
        inputs = "nothing"
        binarise = True

        def fit(self, X, y, X_val=None, y_val=None):
            self.classes_ = np.unique(y)
            return self

        def predict(self, X):
            return np.full(len(X), self.classes_[0], dtype=object)

    monkeypatch.setitem(REGISTRY, "binarised_toy", Binarised)
    config = copy.deepcopy(demo)
    config["detectors"]["toy"] = {"kind": "binarised_toy", "title": "Toy"}
    plan = plan_of(config)
    fine = next(t for t, task in plan.tasks.items() if len(task.labels) > 2)
    assert plan.detectors["toy"].binarise
    assert plan.score_labels(fine, "toy") == ("human", "machine")          # the plan: what the score job checks
    assert plan.score_labels(fine, "random") == plan.tasks[fine].labels
    y = np.array(list(plan.tasks[fine].labels), dtype=object)
    fitted = Binarised().fit(np.zeros((len(y), 0)), Binarised().label_of(y))  # the job: what it fits on
    assert set(fitted.classes_) == {"human", "machine"}
    assert Binarised().declared == Binarised.traits() and Binarised.traits().binarise


def test_a_kind_that_changes_a_declaration_by_its_params_says_so_in_declare():
    robust = REGISTRY["robust"]
    assert robust.traits({}).environment == "core" and robust.traits({"lm": {}}).environment == "neural"

    class OldStyle(Detector):
        @classmethod
        def binarises(cls, params):
            return True

        def fit(self, X, y, X_val=None, y_val=None):
            return self

        def predict(self, X):
            return X

    with pytest.raises(AicdError, match=r"old_style.*binarises.*declare\(params\)"):
        REGISTRY["old_style"] = OldStyle
    assert "old_style" not in REGISTRY


HALF_DONE = '''
import numpy as np
from aicd.detectors.base import Detector, register
from aicd.features.base import Featurizer, register as register_features

{what}
'''
DETECTOR_WITHOUT_PREDICT = '''
@register("half_done_detector")
class HalfDone(Detector):
    def fit(self, X, y, X_val=None, y_val=None):
        return self
'''
FEATURIZER_WITHOUT_TRANSFORM = '''
@register_features("half_done_features")
class HalfDone(Featurizer):
    def fit_transform(self, rows):
        return np.zeros((len(rows), 1))
'''


@pytest.mark.parametrize("what, kind, missing, registry", [
    (DETECTOR_WITHOUT_PREDICT, "half_done_detector", "predict", REGISTRY),
    (FEATURIZER_WITHOUT_TRANSFORM, "half_done_features", "transform", FEATURIZERS),
])
def test_a_kind_without_a_method_is_refused_when_its_module_is_imported(tmp_path, monkeypatch, what, kind, missing,
                                                                          registry):
    module = f"unfinished_{kind}"
    (tmp_path / f"{module}.py").write_text(HALF_DONE.format(what=what))
    monkeypatch.syspath_prepend(str(tmp_path))
    with pytest.raises(AicdError, match=rf"kind '{kind}' \({module}.HalfDone\) does not define {missing}\b"):
        importlib.import_module(module)
    sys.modules.pop(module, None)
    assert kind not in registry  # nothing half-registered for a job to fail on later
    with pytest.raises(TypeError):  # and the abstract class itself cannot be made
        Detector()
