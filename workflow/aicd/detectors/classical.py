"""Classical detectors of Table 4: Logistic Regression, linear SVM and CatBoost over a
feature set (TF-IDF+SVD, AST, or both). LR and SVM standardise features first (AST counts
and SVD components live on very different scales)."""

from __future__ import annotations

import numpy as np
from sklearn.linear_model import LogisticRegression
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.svm import LinearSVC

from .base import Detector, register


class _SklearnDetector(Detector):
    def _estimator(self):
        raise NotImplementedError

    def check_params(self):
        self._estimator()

    def fit(self, X, y, X_val=None, y_val=None):
        self.model_ = self._estimator().fit(X, y)
        self.classes_ = self.model_.classes_
        return self

    def predict(self, X):
        return self.model_.predict(X)


@register("logistic_regression")
class LogisticRegressionDetector(_SklearnDetector):
    def _estimator(self):
        params = {"max_iter": 1000, **self.params}
        return make_pipeline(StandardScaler(), LogisticRegression(random_state=self.seed, **params))

    def predict_scores(self, X):
        return self.model_.predict_proba(X)


@register("linear_svm")
class LinearSvmDetector(_SklearnDetector):
    def _estimator(self):
        # The dual solver converges ~10x faster than the primal one on the wide, standardised
        # AST+TF-IDF matrices of the multi-class tasks (measured on the demo; BENCHMARKS.md).
        params = {"dual": True, "max_iter": 1000, **self.params}
        return make_pipeline(StandardScaler(), LinearSVC(random_state=self.seed, **params))

    def predict_scores(self, X):
        scores = self.model_.decision_function(X)
        return np.column_stack([-scores, scores]) if scores.ndim == 1 else scores


@register("catboost")
class CatBoostDetector(Detector):
    """CatBoost; the validation split serves for early stopping when early_stopping_rounds is set."""

    def _estimator(self):
        from catboost import CatBoostClassifier

        params = {k: v for k, v in self.params.items() if k != "early_stopping_rounds"}
        return CatBoostClassifier(random_seed=self.seed, thread_count=self.threads, verbose=False,
                                  allow_writing_files=False, **params)

    def check_params(self):
        self._estimator()

    def fit(self, X, y, X_val=None, y_val=None):
        early = self.params.get("early_stopping_rounds")
        self.model_ = self._estimator()
        use_val = early is not None and X_val is not None and len(X_val) > 0 and set(np.unique(y_val)) <= set(np.unique(y))
        if use_val:
            self.model_.fit(X, y, eval_set=(X_val, y_val), early_stopping_rounds=early, use_best_model=True)
        else:
            self.model_.fit(X, y)
        self.classes_ = np.asarray(self.model_.classes_)
        return self

    def predict(self, X):
        return np.asarray(self.model_.predict(X)).reshape(-1)

    def predict_scores(self, X):
        return self.model_.predict_proba(X)
