"""The zero-shot panel: one criterion of a causal LM's token statistics (an `lm_stats` feature
set, aicd.features.lm_stats) per detector row, nothing learned but a threshold.

    criterion        higher = more machine-like                        from
    loglik           mean log-likelihood                               Gehrmann et al. 2019 (GLTR)
    logrank          minus the mean log-rank                           Mitchell et al. 2023's baseline
    entropy          minus the mean predictive entropy                 Mitchell et al. 2023's baseline
    lrr              log-likelihood / log-rank ratio                   Su et al. 2023 (DetectLLM)
    fast_detectgpt   analytic sampling discrepancy                     Bao et al. 2024
    binoculars       minus log-perplexity over cross-perplexity        Hans et al. 2024 (two models)

(definitions: aicd.lm.stats.criterion). Every criterion reads the same statistics, computed
once per (model, window, text). Labels are binarised (human vs every other class), as for the
paper's Fast-DetectGPT. The threshold is the value maximising macro-F1 on the validation rows
the feature set scored (or a number). Where the feature set scored a sample of a split, the
detector predicts that sample only; a text too short to score (under two tokens) is predicted
human and counted. score_human / score_machine are the criterion's distance to the threshold
(kind `score`: not probabilities)."""

from __future__ import annotations

import logging

import numpy as np

from ..common.errors import AicdError
from ..common.params import Param, ParamSpec
from ..data.metrics import auroc, best_threshold
from .base import Detector, pd_isna, register

log = logging.getLogger("aicd.detectors.zero_shot_lm")

HUMAN, MACHINE = "human", "machine"


def _criteria() -> tuple:
    from ..lm.stats import CRITERIA

    return tuple(CRITERIA)


PARAMS = ParamSpec("a zero-shot LM criterion", (
    Param("criterion", (str,), None, "ours", "loglik, logrank, entropy, lrr, fast_detectgpt or binoculars "
          "(binoculars needs the feature set's reference_model)"),
    Param("threshold", (str, float), "validation", "ours", "validation (the value maximising macro-F1 on the "
          "scored validation rows) or a number"),
    Param("human_label", (str,), HUMAN, "ours", "the class that stays human when labels are binarised"),
))


@register("zero_shot_lm")
class ZeroShotLMDetector(Detector):
    # 2: its validation threshold is the exact cut that maximises macro-F1 at a criterion value
    # (aicd.data.metrics), not a midpoint from a grid of at most 2,001
    VERSION = 2
    zero_shot = True
    binarise = True
    environment = "neural"  # its feature set's LM (applying it to new code scores the code again)
    uses_validation = True
    covers_feature_rows = True  # predicts the rows its feature set scored (a sample, on a CPU run)
    score_kind = "score"
    applies_to_new_code = True  # its featurizer loads the LM again to score new code
    PARAMS = PARAMS

    def check_params(self) -> None:
        super().check_params()
        criterion = self.params.get("criterion")
        if criterion not in _criteria():
            raise ValueError(f"criterion must be one of {', '.join(_criteria())}, got {criterion!r}")
        threshold = self.setting("threshold")
        if isinstance(threshold, str) and threshold != "validation":
            raise ValueError("threshold must be 'validation' or a number")

    def label_of(self, y) -> np.ndarray:
        y = np.asarray(y, dtype=object)
        out = np.where(y == self.setting("human_label"), HUMAN, MACHINE).astype(object)
        out[pd_isna(y)] = None
        return out

    def scores_of(self, X) -> np.ndarray:
        from ..lm.stats import STAT_NAMES, criterion

        X = np.asarray(X, dtype=np.float64)
        if X.ndim != 2 or X.shape[1] != len(STAT_NAMES):
            raise AicdError(f"zero_shot_lm reads an lm_stats feature set ({len(STAT_NAMES)} columns: "
                            f"{', '.join(STAT_NAMES)}); its features have {X.shape[-1]} columns")
        return np.asarray(criterion(self.params["criterion"], X), dtype=np.float64)

    def fit(self, X, y, X_val=None, y_val=None) -> ZeroShotLMDetector:
        """Nothing is learned; the threshold is set on the scored validation rows (else train's)."""
        self.classes_ = np.array([HUMAN, MACHINE], dtype=object)
        report = {"criterion": self.params["criterion"]}
        if self.setting("threshold") == "validation":
            use_val = X_val is not None and len(X_val) > 0
            Xt, yt = (X_val, y_val) if use_val else (X, y)
            crit = self.scores_of(Xt)
            ok = np.isfinite(crit)
            if not ok.any():
                raise AicdError(f"zero_shot_lm ({self.params['criterion']}): no {'validation' if use_val else 'train'} "
                                "row has a finite criterion to set the threshold on: score some (lm_stats rows)")
            self.threshold_, f1 = best_threshold(crit[ok], np.asarray(yt)[ok] == MACHINE)
            report.update({"threshold_from": "validation" if use_val else "train", "threshold_rows": int(ok.sum()),
                           "threshold_unscored": int((~ok).sum()), "threshold_macro_f1": f1,
                           "threshold_auroc": auroc(crit[ok], np.asarray(yt)[ok] == MACHINE)})
        else:
            self.threshold_ = float(self.setting("threshold"))
            report["threshold_from"] = "params"
        report["threshold"] = self.threshold_
        self.fit_report_ = report
        return self

    def predict_with_scores(self, X):
        crit = self.scores_of(X)
        self.criterion_ = crit
        margin = np.where(np.isfinite(crit), crit - self.threshold_, -np.inf)  # unscorable: human
        pred = np.where(margin > 0, MACHINE, HUMAN).astype(object)
        margin = np.clip(margin, -1e6, 1e6)
        return pred, np.stack([-margin, margin], axis=1)

    def predict(self, X):
        return self.predict_with_scores(X)[0]

    def extra_columns(self) -> dict:
        crit = getattr(self, "criterion_", None)
        return {"criterion": crit.astype(np.float32)} if crit is not None else {}

    def summary(self, gold=None) -> dict:
        report: dict = {}
        crit = getattr(self, "criterion_", None)
        if crit is not None:
            ok = np.isfinite(crit)
            report.update({"test_rows": int(len(crit)), "test_unscored_too_short": int((~ok).sum())})
            if gold is not None:
                binary = self.label_of(gold)
                report["test_auroc"] = auroc(crit[ok], binary[ok] == MACHINE)
        return {"settings": {**self.PARAMS.defaults(), **self.params}, "classes": list(map(str, self.classes_)),
                "threshold": self.threshold_, "fit": getattr(self, "fit_report_", {}), "report": report}
