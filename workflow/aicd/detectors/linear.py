"""The linear models' building blocks, written for the paper's scale (900,000 rows x 1,100
float32 features held once in memory):

- BlockStandardScaler: scikit-learn's StandardScaler, but its statistics are summed over
  blocks of rows and the training matrix is scaled in place (StandardScaler.fit makes a
  full-size temporary; liblinear and its float64 copy make three);
- SquaredHingeSVC: LinearSVC's primal problem (L2-regularised squared hinge loss, one weight
  vector per class against the rest, the intercept a constant feature of 1 that is
  regularised like the weights, as liblinear does) solved with L-BFGS on float32 matrix
  products. liblinear's primal solver stops at its iteration cap on the multi-class tasks and
  its time grows linearly with the rows past it (130 s at 3.2K rows, 454 s at 12.9K); this one
  converges in a few hundred iterations whatever the row count, each two matrix products."""

from __future__ import annotations

import logging

import numpy as np
from scipy.optimize import minimize
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.preprocessing import StandardScaler

log = logging.getLogger(__name__)
BLOCK = 8_192  # rows per float64 temporary: ~100 MB at 1,500 columns


class BlockStandardScaler(StandardScaler):
    """Mean and standard deviation (population, as StandardScaler) in float64 over row blocks;
    with in_place=True fit_transform scales its input in place (a training matrix its caller
    owns and reads no more, as the detect job's); transform copies."""

    def __init__(self, in_place: bool = False):
        super().__init__()
        self.in_place = in_place

    def fit(self, X, y=None, sample_weight=None):
        X = np.asarray(X)
        n, d = X.shape
        total, squares = np.zeros(d), np.zeros(d)
        for start in range(0, n, BLOCK):
            block = X[start:start + BLOCK].astype(np.float64)
            total += block.sum(axis=0)
        mean = total / max(n, 1)
        for start in range(0, n, BLOCK):
            block = X[start:start + BLOCK].astype(np.float64) - mean
            squares += (block * block).sum(axis=0)
        var = squares / max(n, 1)
        self.n_features_in_, self.n_samples_seen_ = d, n
        self.mean_, self.var_ = mean, var
        scale = np.sqrt(var)
        self.scale_ = np.where(scale < 10 * np.finfo(np.float64).eps, 1.0, scale)  # constant columns stay
        return self

    def fit_transform(self, X, y=None, **fit_params):
        self.fit(X)
        if not (self.in_place and isinstance(X, np.ndarray) and X.flags.writeable and X.dtype == np.float32
                and X.flags.c_contiguous):
            return self.transform(X)
        mean, scale = self.mean_.astype(np.float32), self.scale_.astype(np.float32)
        for start in range(0, len(X), BLOCK):
            block = X[start:start + BLOCK]
            block -= mean
            block /= scale
        return X

    def transform(self, X, copy=None):
        X = np.array(X, dtype=np.float32)
        X -= self.mean_.astype(np.float32)
        X /= self.scale_.astype(np.float32)
        return X


class SquaredHingeSVC(ClassifierMixin, BaseEstimator):
    """LinearSVC(loss="squared_hinge", penalty="l2", dual=False) solved with L-BFGS:
    minimises 1/2 (|W|^2 + |b|^2) + C sum_i sum_c max(0, 1 - y_ic (w_c . x_i + b_c))^2, with
    y_ic = +1 for the row's class and -1 otherwise (a single vector for two classes)."""

    def __init__(self, C: float = 1.0, tol: float = 1e-5, max_iter: int = 1000):
        self.C = C
        self.tol = tol
        self.max_iter = max_iter

    def _validate_params(self):
        for name, low in (("C", 0.0), ("tol", 0.0)):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, (int, float)) or value <= low:
                raise ValueError(f"The {name!r} parameter of the linear SVM must be a number > {low}, got {value!r}")
        if isinstance(self.max_iter, bool) or not isinstance(self.max_iter, int) or self.max_iter < 1:
            raise ValueError(f"The 'max_iter' parameter of the linear SVM must be an integer >= 1, got {self.max_iter!r}")

    def fit(self, X, y):
        self._validate_params()
        X = np.asarray(X, dtype=np.float32)
        self.classes_ = np.unique(y)
        k = 1 if len(self.classes_) == 2 else len(self.classes_)
        positive = self.classes_[1:] if k == 1 else self.classes_
        Y = np.where(np.asarray(y)[:, None] == positive[None, :], 1.0, -1.0).astype(np.float32)
        d = X.shape[1]
        C = float(self.C)

        def loss_and_grad(theta):
            W = theta[: k * d].reshape(k, d)
            b = theta[k * d:]
            margins = X @ W.T.astype(np.float32) + b.astype(np.float32)
            violation = np.maximum(1.0 - Y * margins, 0.0)
            loss = 0.5 * (W @ W.T).trace() + 0.5 * b @ b + C * np.sum(violation * violation, dtype=np.float64)
            weighted = (Y * violation).astype(np.float32)
            grad_W = W - 2.0 * C * (weighted.T @ X).astype(np.float64)
            grad_b = b - 2.0 * C * weighted.sum(axis=0, dtype=np.float64)
            return loss, np.concatenate([grad_W.ravel(), grad_b])

        result = minimize(loss_and_grad, np.zeros(k * d + k), jac=True, method="L-BFGS-B",
                          options={"maxiter": self.max_iter, "gtol": self.tol, "ftol": 1e-10, "maxcor": 20})
        self.n_iter_ = int(result.nit)
        if not result.success and "ABNORMAL" not in str(result.message):
            log.warning("linear SVM: L-BFGS stopped after %d iterations (%s); raise max_iter", result.nit, result.message)
        self.coef_ = result.x[: k * d].reshape(k, d).astype(np.float32)
        self.intercept_ = result.x[k * d:].astype(np.float32)
        return self

    def decision_function(self, X):
        scores = np.asarray(X, dtype=np.float32) @ self.coef_.T + self.intercept_
        return scores[:, 0] if scores.shape[1] == 1 else scores

    def predict(self, X):
        scores = self.decision_function(X)
        if scores.ndim == 1:
            return self.classes_[(scores > 0).astype(int)]
        return self.classes_[np.argmax(scores, axis=1)]
