"""The fused detector (kind `fused`): a causal LM's criteria, whose direction no training
collection can turn, beside trained columns that may lean either way.

It reads a feature set whose LM columns are named `lm:<criterion>` (aicd.features.lm_criteria:
each criterion oriented so that higher means more machine-like, standardised on the human
training rows of its language), usually concatenated with per-language standardised stylometry,
the delexicalised view and TF-IDF (docs/ood.md, "The fused detector"; config/loco.yaml's row, the
one its selection rule picked: benchmarks/notes/deployable.md). Every column is scaled on the
training rows; classes are weighted to balance. The defaults are that row's.

- `model: constrained`: one logistic regression over every column, whose LM coefficients are
  bounded below by 0 (L-BFGS-B): a training set in which an LM criterion leans the other way
  (a collection where machine code is the less likely one) sets that coefficient to 0, it cannot
  make it negative. The trained columns are free.
- `model: average`: two parts fitted apart, an LM part (the same sign-constrained regression on
  the LM columns alone: monotone, never decreasing, in every criterion) and a trained part (an
  unconstrained regression on the other columns); each part's score is standardised on the
  human training rows, and the score is `lm_weight` times the LM part plus the rest times the
  trained part. Whatever the trained part does on a new collection, the LM part keeps its
  share and its direction.

The label threshold is the cut that maximises macro-F1 on the validation rows (else the
training rows). score_machine is the score minus the threshold, score_human its negative
(kind `score`, not probabilities)."""

from __future__ import annotations

import logging

import numpy as np
from scipy.optimize import minimize

from ..common.errors import AicdError
from ..common.params import Param, ParamSpec
from ..data.metrics import best_threshold
from .base import Detector, register

log = logging.getLogger("aicd.detectors.fused")

HUMAN, MACHINE = "human", "machine"
MODELS = ("constrained", "average")
LM_PREFIX = "lm:"

PARAMS = ParamSpec("the fused detector", (
    Param("model", (str,), "average", "ours", "constrained (one regression, LM coefficients >= 0) or average (an "
          "LM part and a trained part, each standardised on human training rows, mixed at lm_weight)",
          choices=MODELS),
    Param("C", (int, float), 0.1, "ours", "inverse strength of the L2 penalty of every regression", minimum=1e-6),
    Param("lm_weight", (int, float), 0.5, "ours", "model average: the LM part's share of the score", minimum=0.0,
          maximum=1.0),
    Param("max_iter", (int,), 500, "ours", "L-BFGS-B iterations per regression", minimum=10),
))


def balanced_weights(y: np.ndarray) -> np.ndarray:
    """Per-row weights that give each class the same total, mean 1."""
    w = np.ones(len(y))
    for value in (0, 1):
        n = (y == value).sum()
        if n:
            w[y == value] = len(y) / (2.0 * n)
    return w


def fit_logit(X: np.ndarray, y: np.ndarray, C: float, nonnegative: np.ndarray, max_iter: int = 500
              ) -> tuple[np.ndarray, float]:
    """(w, b) of an L2-penalised, class-balanced logistic regression, y in {0, 1}; w_j >= 0 where
    `nonnegative` is true (the intercept is free and unpenalised)."""
    X = np.asarray(X, dtype=np.float64)
    sign = 2.0 * y - 1.0
    weights = balanced_weights(y)
    d = X.shape[1]

    def loss_and_grad(theta):
        w, b = theta[:d], theta[d]
        margin = sign * (X @ w + b)
        loss = np.sum(weights * np.logaddexp(0.0, -margin)) + 0.5 / C * (w @ w)
        g = -weights * sign * np.exp(-np.logaddexp(0.0, margin))  # d loss / d (x.w + b)
        return loss, np.concatenate([X.T @ g + w / C, [g.sum()]])

    bounds = [(0.0, None) if nonnegative[j] else (None, None) for j in range(d)] + [(None, None)]
    result = minimize(loss_and_grad, np.zeros(d + 1), jac=True, method="L-BFGS-B", bounds=bounds,
                      options={"maxiter": max_iter})
    if not result.success and "ABNORMAL" not in str(result.message):
        log.warning("fused: L-BFGS-B stopped after %d iterations (%s)", result.nit, result.message)
    return result.x[:d], float(result.x[d])


class _Scaler:
    def fit(self, X: np.ndarray) -> _Scaler:
        self.mean_ = X.mean(axis=0)
        std = X.std(axis=0)
        self.scale_ = np.where(std > 1e-9, std, 1.0)
        return self

    def transform(self, X: np.ndarray) -> np.ndarray:
        return (X - self.mean_) / self.scale_


@register("fused")
class FusedDetector(Detector):
    binarise = True
    uses_validation = True
    score_kind = "score"
    explains = None
    stored_types = ("aicd.detectors.fused._Scaler",)
    PARAMS = PARAMS

    def _lm_mask(self, width: int) -> np.ndarray:
        names = self.feature_names
        if names is None or len(names) != width:
            raise AicdError(f"fused reads its LM columns by name: it needs the feature set's column names "
                            f"({width} columns, {'none' if names is None else len(names)} names)")
        mask = np.array([str(n).startswith(LM_PREFIX) for n in names])
        if not mask.any():
            raise AicdError("fused needs LM columns (lm:<criterion>, the lm_criteria feature set) in its feature set: "
                            "give it a concat whose parts include an lm_criteria set")
        return mask

    def fit(self, X, y, X_val=None, y_val=None) -> FusedDetector:
        X = np.nan_to_num(np.asarray(X, dtype=np.float64))
        target = (self.label_of(y) == MACHINE).astype(float)
        if len(np.unique(target)) < 2:
            raise AicdError("fused: the train split has one class only: nothing to learn")
        self.classes_ = np.array([HUMAN, MACHINE], dtype=object)
        self.lm_mask_ = self._lm_mask(X.shape[1])
        self.lm_names_ = [n for n, m in zip(self.feature_names, self.lm_mask_) if m]
        self.scaler_ = _Scaler().fit(X)
        Z = self.scaler_.transform(X)
        C, iters = float(self.setting("C")), int(self.setting("max_iter"))
        if self.setting("model") == "constrained":
            self.w_, self.b_ = fit_logit(Z, target, C, self.lm_mask_, iters)
        else:
            self._fit_average(Z, target, C, iters)
        Xt, yt = (X_val, y_val) if X_val is not None and len(X_val) else (X, y)
        self.threshold_, self.threshold_f1_ = best_threshold(self.fused_score(Xt), self.label_of(yt) == MACHINE)
        self.threshold_from_ = "validation" if X_val is not None and len(X_val) else "train"
        return self

    def _fit_average(self, Z: np.ndarray, target: np.ndarray, C: float, iters: int) -> None:
        lm, rest = self.lm_mask_, ~self.lm_mask_
        self.w_lm_, self.b_lm_ = fit_logit(Z[:, lm], target, C, np.ones(lm.sum(), bool), iters)
        if rest.any():
            self.w_rest_, self.b_rest_ = fit_logit(Z[:, rest], target, C, np.zeros(rest.sum(), bool), iters)
        humans = target == 0
        self.part_scale_ = {}
        for part, (w, mask) in {"lm": (self.w_lm_, lm), "rest": (getattr(self, "w_rest_", None), rest)}.items():
            if w is None:
                continue
            s = Z[humans][:, mask] @ w
            self.part_scale_[part] = (float(s.mean()), float(s.std()) if s.std() > 1e-9 else 1.0)

    def parts(self, X) -> dict[str, np.ndarray]:
        """model average: each part's score, standardised on the human training rows."""
        Z = self.scaler_.transform(np.nan_to_num(np.asarray(X, dtype=np.float64)))
        out = {}
        for part, (w, mask) in {"lm": (self.w_lm_, self.lm_mask_),
                                "rest": (getattr(self, "w_rest_", None), ~self.lm_mask_)}.items():
            if w is not None:
                mean, std = self.part_scale_[part]
                out[part] = (Z[:, mask] @ w - mean) / std
        return out

    def fused_score(self, X) -> np.ndarray:
        """Higher = more machine-like (before the threshold)."""
        if self.setting("model") == "constrained":
            Z = self.scaler_.transform(np.nan_to_num(np.asarray(X, dtype=np.float64)))
            return Z @ self.w_ + self.b_
        parts = self.parts(X)
        weight = float(self.setting("lm_weight")) if "rest" in parts else 1.0
        return weight * parts["lm"] + (1.0 - weight) * parts.get("rest", 0.0)

    def predict_with_scores(self, X):
        margin = self.fused_score(X) - self.threshold_
        pred = np.where(margin > 0, MACHINE, HUMAN).astype(object)
        return pred, np.stack([-margin, margin], axis=1)

    def predict(self, X):
        return self.predict_with_scores(X)[0]

    def lm_coefficients(self) -> dict[str, float]:
        """Each LM column's coefficient (on the scaled column): never below 0."""
        w = self.w_[self.lm_mask_] if self.setting("model") == "constrained" else self.w_lm_
        return {n: float(v) for n, v in zip(self.lm_names_, w)}

    def summary(self, gold=None) -> dict:
        return {"settings": {**self.PARAMS.defaults(), **self.params}, "classes": [HUMAN, MACHINE],
                "lm_coefficients": self.lm_coefficients(), "threshold": self.threshold_,
                "threshold_from": self.threshold_from_, "threshold_macro_f1": self.threshold_f1_,
                "columns": {"lm": int(self.lm_mask_.sum()), "trained": int((~self.lm_mask_).sum())}}
