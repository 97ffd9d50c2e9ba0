"""Classical detectors of Table 4: Logistic Regression, linear SVM and CatBoost over a
feature set (TF-IDF+SVD, AST, or both). LR and SVM standardise features first (AST counts
and SVD components live on very different scales), in place on the training matrix
(aicd.detectors.linear), so the paper's 900,000 training rows are held once."""

from __future__ import annotations

import numpy as np
from sklearn.linear_model import LogisticRegression
from sklearn.pipeline import make_pipeline
from sklearn.svm import LinearSVC

from ..common.errors import AicdError
from ..common.params import SET_BY_SEED, SET_BY_THREADS, Param, ParamSpec
from ..models.fitted_files import type_name
from ..outputs import relative
from .base import Detector, register
from .linear import BlockStandardScaler, SquaredHingeSVC


def require_training_data(kind: str, X: np.ndarray, y: np.ndarray) -> None:
    """Name what is empty (the estimators' own messages do not, e.g. CatBoost's
    "Input data must have at least one feature")."""
    if len(X) == 0:
        raise AicdError(f"detector {kind}: the train split has no rows; rebuild the task with rows in train")
    if X.shape[1] == 0:
        raise AicdError(f"detector {kind}: the feature set has no columns for the {len(X)} train rows; "
                        f"check its {relative('features_report')} and its config (e.g. params of tfidf)")
    if len(np.unique(y)) < 2:
        raise AicdError(f"detector {kind}: the train split has one class only ({np.unique(y).tolist()}); "
                        "a classifier needs two or more: give the task rows of its other classes")


def _empty_prediction(X: np.ndarray) -> bool:
    return len(X) == 0  # scikit-learn refuses zero rows; an empty test split predicts nothing


class _SklearnDetector(Detector):
    stored_types = (type_name(BlockStandardScaler),)
    # The detect job owns its training matrix and sets this: standardising it in place then
    # saves a copy of it (BlockStandardScaler). A caller's own array is never changed otherwise.
    scale_in_place = False

    def _estimator(self):
        raise NotImplementedError

    def _scaler(self):
        return BlockStandardScaler(in_place=self.scale_in_place)

    def check_params(self):
        # scikit-learn checks types only when fitting; its own check runs here instead, so
        # `C: "abc"` is named before any features are loaded.
        super().check_params()
        self._estimator()[-1]._validate_params()

    def _library_params(self) -> dict:
        return {k: v for k, v in self.PARAMS.check(self.params).items() if v is not None}

    def fit(self, X, y, X_val=None, y_val=None):
        require_training_data(self.kind, X, y)
        self.model_ = self._estimator().fit(X, y)
        self.classes_ = self.model_.classes_
        return self

    def predict(self, X):
        return np.empty(0, dtype=object) if _empty_prediction(X) else self.model_.predict(X)


@register("logistic_regression")
class LogisticRegressionDetector(_SklearnDetector):
    """Logistic regression on standardised features. Its probabilities are computed in float64
    from the decision function, each class's on its own (the two-class expit(-d), expit(d); the
    softmax otherwise): scikit-learn's own predict_proba works in the features' float32 and gives
    the human class 1 - expit(d), exactly 0 from d = 17 on, so many machine-like rows tied at a
    machine score of 1 (VERSION 2)."""
    VERSION = 2  # 2: probabilities in float64, each class's on its own (score_human no longer 0 from d = 17)
    max_threads = 4  # BLAS in L-BFGS
    PARAMS = ParamSpec("logistic regression", (
        Param("C", (float,), 1.0, "library", "inverse regularisation strength", minimum=0, exclusive_minimum=True),
        Param("max_iter", (int,), 1000, "ours", "L-BFGS iterations (scikit-learn's 100 stop short here)", minimum=1),
    ), open=True, note="any other LogisticRegression argument of scikit-learn",
        library=lambda: LogisticRegression().get_params(),
        reserved={"random_state": SET_BY_SEED, "n_jobs": SET_BY_THREADS})

    def _estimator(self):
        return make_pipeline(self._scaler(), LogisticRegression(random_state=self.seed, **self._library_params()))

    def predict_scores(self, X):
        if _empty_prediction(X):
            return np.zeros((0, len(self.classes_)))
        from scipy.special import expit, softmax

        model = self.model_[-1]
        Z = np.asarray(self.model_[:-1].transform(X), dtype=np.float64)
        decision = Z @ np.asarray(model.coef_, dtype=np.float64).T + np.asarray(model.intercept_, dtype=np.float64)
        if decision.shape[1] == 1:
            return np.column_stack([expit(-decision[:, 0]), expit(decision[:, 0])])
        return softmax(decision, axis=1)


@register("linear_svm")
class LinearSvmDetector(_SklearnDetector):
    """The linear SVM (C = 1.0, the paper's): L2-regularised squared hinge, one against the
    rest, as LinearSVC. `solver: lbfgs` (default) solves LinearSVC's primal problem with L-BFGS
    (aicd.detectors.linear.SquaredHingeSVC), converged in a few hundred iterations at any row
    count; `solver: liblinear` is LinearSVC itself (primal, `dual: true` for the dual), which
    stops at its iteration cap on the multi-class tasks and grows linearly past it."""
    max_threads = 4  # BLAS in the L-BFGS solver
    explains = "coefficients"
    score_kind = "margin"  # the decision function: AUROC needs only its order, no calibration is implied
    stored_types = (type_name(BlockStandardScaler), type_name(SquaredHingeSVC))
    PARAMS = ParamSpec("the linear SVM", (
        Param("C", (float,), 1.0, "library", "inverse regularisation strength", minimum=0, exclusive_minimum=True),
        Param("solver", (str,), "lbfgs", "ours", "lbfgs: LinearSVC's primal problem by L-BFGS; liblinear: LinearSVC",
              choices=("lbfgs", "liblinear")),
        Param("tol", (float,), None, "ours", "stopping tolerance (null: 1e-5 for lbfgs, LinearSVC's 1e-4 for liblinear)",
              minimum=0, exclusive_minimum=True),
        Param("max_iter", (int,), 1000, "ours", "iteration cap", minimum=1),
    ), open=True, note="LinearSVC's other arguments, with solver: liblinear", library=lambda: LinearSVC().get_params(),
        reserved={"random_state": SET_BY_SEED})


    def _estimator(self):
        params = self._library_params()
        solver = params.pop("solver", "lbfgs")
        if solver == "liblinear":
            params = {"dual": False, "max_iter": 1000, **params}
            return make_pipeline(self._scaler(), LinearSVC(random_state=self.seed, **params))
        if solver != "lbfgs":
            raise ValueError(f"the linear SVM's solver must be 'lbfgs' or 'liblinear', got {solver!r}")
        unknown = sorted(set(params) - {"C", "tol", "max_iter"})
        if unknown:
            raise ValueError(f"the linear SVM with solver lbfgs takes C, tol and max_iter; {unknown} are liblinear's "
                             "(set solver: liblinear to use them)")
        return make_pipeline(self._scaler(), SquaredHingeSVC(**{"tol": 1e-5, **params}))

    def predict_scores(self, X):
        if _empty_prediction(X):
            return np.zeros((0, len(self.classes_)))
        scores = self.model_.decision_function(X)
        return np.column_stack([-scores, scores]) if scores.ndim == 1 else scores


def catboost_arguments() -> list[str]:
    """The keyword arguments CatBoostClassifier takes (its synonyms, n_estimators and the like, included)."""
    import inspect

    from catboost import CatBoostClassifier

    return [n for n in inspect.signature(CatBoostClassifier.__init__).parameters if n != "self"]


@register("catboost")
class CatBoostDetector(Detector):
    """CatBoost; the validation split serves for early stopping when early_stopping_rounds is set.

    The paper names no CatBoost settings. Ours: CatBoost's defaults (1,000 iterations, depth 6)
    with two set for scale (BENCHMARKS.md, paper scale), each overridable in params:
    boosting_type Plain, which CatBoost itself picks from 50,000 rows up (below, its Ordered
    boosting costs 7x as much per iteration, so the demo and a small run would time a different
    algorithm), and on feature sets of 200 columns or more rsm 0.1, the share of features
    scored at each split: 14x faster on 10,000 rows of 500 TF-IDF components, 0.4 points of
    macro-F1 lower."""

    max_threads = 8
    explains = "shap"
    RSM, RSM_FROM_COLUMNS = 0.1, 200  # rsm's default on feature sets this wide (ours: 256-1,530 columns)
    PARAMS = ParamSpec("CatBoost", (
        # null, not CatBoost's values: a synonym (n_estimators, max_depth, ...) may be given instead
        Param("iterations", (int,), None, "library", "boosting iterations (null: CatBoost's 1,000)", minimum=1),
        Param("depth", (int,), None, "library", "tree depth (null: CatBoost's 6)", minimum=1),
        Param("boosting_type", (str,), "Plain", "ours", "Plain (CatBoost's own choice from 50,000 rows up) or Ordered",
              choices=("Plain", "Ordered")),
        Param("rsm", (float,), None, "ours", "share of features scored per split (null: 0.1 on feature sets of "
              "200 or more columns, else all)", minimum=0, exclusive_minimum=True),
        Param("border_count", (int,), None, "library", "histogram borders per feature (null: CatBoost's 254)",
              minimum=1),
        Param("learning_rate", (float,), None, "library", "null: CatBoost picks it from the data", minimum=0,
              exclusive_minimum=True),
        Param("early_stopping_rounds", (int,), None, "ours", "stop when validation loss has not improved for this "
              "many iterations (null: off)", minimum=1),
    ), open=True, note="any other CatBoostClassifier argument", library=lambda: catboost_arguments(),
        reserved={"random_seed": SET_BY_SEED, "thread_count": SET_BY_THREADS,
                  "verbose": "its jobs' logs are kept quiet", "allow_writing_files": "it writes no files of its own"})

    @property
    def uses_validation(self) -> bool:
        return self.params.get("early_stopping_rounds") is not None

    def _estimator(self):
        from catboost import CatBoostClassifier

        params = {k: v for k, v in self.PARAMS.check(self.params).items()
                  if v is not None and k != "early_stopping_rounds"}
        return CatBoostClassifier(random_seed=self.seed, thread_count=self.threads, verbose=False,
                                  allow_writing_files=False, **params)

    def check_params(self):
        # CatBoost parses its options only in fit(); the same three checks fit() runs.
        from catboost import CatBoostError
        from catboost.core import _check_param_types, _check_train_params, _params_type_cast, _process_synonyms

        super().check_params()
        params = dict(self._estimator().get_params())
        try:
            _process_synonyms(params)
            _check_param_types(params)
            _check_train_params(_params_type_cast(params))
        except CatBoostError as err:
            raise ValueError(str(err).split(": ", 1)[-1]) from None  # drop the C++ source location

    def fit(self, X, y, X_val=None, y_val=None):
        require_training_data(self.kind, X, y)
        early = self.params.get("early_stopping_rounds")
        self.model_ = self._estimator()
        if self.params.get("rsm") is None and X.shape[1] >= self.RSM_FROM_COLUMNS:
            self.model_.set_params(rsm=self.RSM)
        use_val = early is not None and X_val is not None and len(X_val) > 0 and set(np.unique(y_val)) <= set(np.unique(y))
        if use_val:
            self.model_.fit(X, y, eval_set=(X_val, y_val), early_stopping_rounds=early, use_best_model=True)
        else:
            self.model_.fit(X, y)
        self.classes_ = np.asarray(self.model_.classes_)
        return self

    def predict(self, X):
        return np.empty(0, dtype=object) if _empty_prediction(X) else np.asarray(self.model_.predict(X)).reshape(-1)

    def predict_scores(self, X):
        return np.zeros((0, len(self.classes_))) if _empty_prediction(X) else self.model_.predict_proba(X)
