"""Detectors a user brings without editing this package: each is a Table 4 row with every
breakdown and the threshold metrics.

- kind: python, params: {object: "package.module:Name", options: {...}} -- a class with the
  detector API on code strings: fit(codes, labels, val_codes, val_labels) (the validation
  arguments optional), predict(codes) -> label names, optionally predict_scores(codes) ->
  (rows, classes) in the order of its `classes_`: probabilities, unless the class sets
  `score_kind = "score"` (any real numbers, higher = more that class). Built with `options` as
  keyword arguments. What it returns is checked in the detect job (aicd.detectors.output_check).
- kind: python, params: {score_function: "package.module:name"} -- a plain function from a list
  of code strings to one machine-score per string (higher: more likely machine). Zero-shot and
  scored on human vs the rest; its threshold is the one that maximises macro-F1 on the
  validation split (carved from train when the task has none).
- kind: hf_classifier (aicd.detectors.hf_classifier): an already fine-tuned sequence classifier.
- kind: predictions, params: {file: PATH, validation_file: PATH} -- predictions made elsewhere:
  id, pred[, score_<class>...] for every test row (validation_file: the same for validation
  rows, for thresholds at a fixed FPR). Ids must match the test split one to one.

The python kind imports from the user's environment (the module must be importable where the job runs)."""

from __future__ import annotations

import inspect
from collections import Counter

import numpy as np
import pandas as pd

from ..common.errors import AicdError
from ..common.params import Param, ParamSpec
from ..common.registry import import_object
from ..data.families import HUMAN
from ..data.ids import disagreement, match
from ..data.metrics import best_threshold
from .base import Detector, register

MACHINE = "machine"




@register("python")
class PythonDetector(Detector):
    """A user's class or score function (module docstring)."""

    inputs = "text"
    uses_validation = True   # a score function's threshold; a class may take the validation rows
    holds_users_objects = True  # what its object holds is vouched for when read (trust_types, --trust-type)
    PARAMS = ParamSpec("a python detector", (
        Param("object", (str,), None, "ours", "package.module:Name of a class with fit/predict(/predict_scores) "
                                              "on code strings"),
        Param("score_function", (str,), None, "ours", "package.module:name of a function from code strings to "
                                                      "machine-scores (zero-shot)"),
        Param("options", (dict,), {}, "ours", "keyword arguments for the class"),
        Param("trust_types", (list,), [], "ours", "library types (module.Name) objects of the class hold, such as "
                                                  "sklearn.naive_bayes.MultinomialNB: trusted in its model file with "
                                                  "the class itself"),
    ))

    @classmethod
    def declare(cls, params: dict) -> dict:
        """A score function is zero-shot and scored on human vs the rest; a class is neither."""
        function = bool(params.get("score_function"))
        return {"zero_shot": function, "binarise": function}

    def __init__(self, seed: int = 0, threads: int = 1, **params):
        super().__init__(seed=seed, threads=threads, **params)
        if params.get("object"):  # rows are carved from train for validation only if fit takes them
            try:
                fit = getattr(import_object(params["object"], "object"), "fit", None)
                accepts = inspect.signature(fit).parameters if callable(fit) else {}
                self.uses_validation = len(accepts) >= 4 or any(p.kind == p.VAR_POSITIONAL for p in accepts.values())
            except (AicdError, TypeError, ValueError):
                pass  # fit() says what is wrong

    def check_params(self) -> None:
        super().check_params()
        if bool(self.params.get("object")) == bool(self.params.get("score_function")):
            raise ValueError("give exactly one of object (a class) and score_function (a function)")

    def _user(self):
        if self.params.get("score_function"):
            fn = import_object(self.params["score_function"], "score_function")
            if not callable(fn):
                raise AicdError(f"score_function {self.params['score_function']!r} is not a function")
            return fn
        cls = import_object(self.params["object"], "object")
        missing = [m for m in ("fit", "predict") if not callable(getattr(cls, m, None))]
        if missing:
            raise AicdError(f"object {self.params['object']!r} has no {' and no '.join(missing)} method: a detector "
                            "class needs fit(codes, labels[, val_codes, val_labels]) and predict(codes) -> labels")
        try:
            return cls(**(self.setting("options") or {})) if inspect.isclass(cls) else cls
        except TypeError as err:
            raise AicdError(f"object {self.params['object']!r} does not take options "
                            f"{self.setting('options')}: {err}") from None

    @property
    def score_kind(self) -> str:
        """A score_function's machine-scores are its own scale; an object's predict_scores
        promise probabilities unless the object says otherwise (its own `score_kind`)."""
        if self.params.get("score_function"):
            return "score"
        return str(getattr(getattr(self, "user_", None), "score_kind", "probability"))

    def _function_scores(self, codes) -> np.ndarray:
        values = np.asarray(self.user_(list(codes)), dtype=float).reshape(-1)
        if len(values) != len(codes):
            raise AicdError(f"score_function {self.params['score_function']!r} returned {len(values)} scores for "
                            f"{len(codes)} code strings: give one machine-score per string")
        if np.isnan(values).any():
            raise AicdError(f"score_function {self.params['score_function']!r} returned {int(np.isnan(values).sum())} "
                            "NaN scores: give a number for every string")
        return values

    def fit(self, X, y, X_val=None, y_val=None):
        self.user_ = self._user()
        if self.params.get("score_function"):
            self.classes_ = np.array([HUMAN, MACHINE], dtype=object)
            rows_x, rows_y = (X_val, y_val) if X_val is not None and len(X_val) else (X, y)
            human = np.asarray(rows_y, dtype=object) == HUMAN
            if human.all() or not human.any():
                raise AicdError("score_function: the validation rows hold one class only: no threshold can be set")
            self.threshold_ = best_threshold(self._function_scores(rows_x), ~human)[0]
            return self
        accepts = inspect.signature(self.user_.fit).parameters
        if len(accepts) >= 4 or any(p.kind == p.VAR_POSITIONAL for p in accepts.values()):
            self.user_.fit(list(X), list(y), list(X_val) if X_val is not None else None,
                           list(y_val) if y_val is not None else None)
        else:
            self.user_.fit(list(X), list(y))
        has_scores = callable(getattr(self.user_, "predict_scores", None))
        classes = getattr(self.user_, "classes_", None)
        if has_scores and classes is None:
            raise AicdError(f"object {self.params['object']!r} has predict_scores but no classes_: give the fitted "
                            "object a classes_ list naming the score columns in order")
        self.classes_ = np.asarray(classes if classes is not None else sorted(set(y), key=str), dtype=object)
        return self

    def predict(self, X):
        if self.params.get("score_function"):
            return np.where(self._function_scores(X) > self.threshold_, MACHINE, HUMAN).astype(object)
        pred = np.asarray(self.user_.predict(list(X)), dtype=object).reshape(-1)
        if len(pred) != len(X):
            raise AicdError(f"object {self.params['object']!r}: predict returned {len(pred)} labels for {len(X)} rows")
        return pred

    def predict_scores(self, X):
        if self.params.get("score_function"):
            s = self._function_scores(X)
            return np.column_stack([1.0 - s, s])  # machine-scores as given: AUROC needs only their order
        if not callable(getattr(self.user_, "predict_scores", None)):
            return None
        scores = np.asarray(self.user_.predict_scores(list(X)), dtype=float)
        if scores.shape != (len(X), len(self.classes_)):
            raise AicdError(f"object {self.params['object']!r}: predict_scores gave shape {scores.shape}, expected "
                            f"({len(X)}, {len(self.classes_)}) (rows, classes_)")
        return scores

    def summary(self, gold=None) -> dict:
        return {"threshold": self.threshold_} if hasattr(self, "threshold_") else {}


@register("predictions")
class PredictionsDetector(Detector):
    """Predictions made elsewhere (module docstring): checked against the test split, never fitted."""

    inputs = "ids"               # fit/predict take the rows' ids
    zero_shot = True
    applies_to_new_code = False  # only the rows of its file
    score_kind = "score"         # a file's scores: their scale is whoever made them
    PARAMS = ParamSpec("a predictions file", (
        Param("file", (str,), None, "ours", "id, pred[, score_<class>...] of every test row (.csv, .jsonl, .parquet)"),
        Param("validation_file", (str,), None, "ours", "the same for validation rows: thresholds at a fixed FPR"),
    ))

    def check_params(self) -> None:
        super().check_params()
        if not self.params.get("file"):
            raise ValueError("give file: the predictions (id, pred[, score_<class>...]) of the test rows")

    def _read(self, path: str, ids: np.ndarray, split: str, classes: set) -> pd.DataFrame:
        table = load_predictions_table(path)
        found = match(table["id"], ids)
        if not found.ok:
            raise AicdError(f"{path}: {disagreement(found, given='file', wanted=f'the {split} split')}")
        outside = Counter(str(v) for v in table["pred"] if v not in classes)
        if outside:
            named = ", ".join(f"{v!r} ({n} rows)" for v, n in outside.most_common(5))
            raise AicdError(f"{path}: predicted labels outside the task's classes {sorted(classes)}: {named}")
        return table.set_index("id")

    def fit(self, X, y, X_val=None, y_val=None):
        known = {str(c) for c in y if c is not None}
        self.classes_ = np.array(sorted(known), dtype=object)
        self.rows_, self.scored_ = {}, set()  # scored_: ids whose file gives every score_<class>
        self.score_columns_ = [f"score_{c}" for c in self.classes_]
        files = [(self.params["file"], "test")]
        if self.params.get("validation_file"):
            files.append((self.params["validation_file"], "validation"))
        for path, split in files:
            table = self._read(path, self.row_ids[split], split, known)
            self.rows_.update(table.to_dict("index"))
            if all(c in table.columns for c in self.score_columns_):
                self.scored_ |= set(table.index[table[self.score_columns_].notna().all(axis=1)])
        self.has_scores_ = set(self.row_ids["test"]) <= self.scored_
        return self

    def _rows(self, ids):
        missing = [i for i in ids if i not in self.rows_]
        if missing:
            raise AicdError(f"predictions file has no row for {len(missing)} ids (e.g. {missing[0]!r})")
        return [self.rows_[i] for i in ids]

    def predict(self, X):
        return np.array([r["pred"] for r in self._rows(X)], dtype=object)

    def predict_scores(self, X):
        if not self.has_scores_:
            return None
        return np.array([[float(r[c]) for c in self.score_columns_] for r in self._rows(X)], dtype=float)

    def scores_rows(self, ids) -> bool:
        """Whether it holds scores for these ids (validation rows only with a validation_file)."""
        return self.has_scores_ and all(i in self.scored_ for i in ids)


def load_predictions_table(path: str) -> pd.DataFrame:
    """id (as text), pred and score_<class> columns of a predictions file."""
    from ..common.io import read_any

    table = read_any(path)
    if "id" not in table.columns or "pred" not in table.columns:
        raise AicdError(f"predictions file {path}: needs columns id and pred (and optionally score_<class>); "
                        f"its columns are {list(table.columns)}")
    table["id"] = table["id"].astype(str)
    for column in (c for c in table.columns if str(c).startswith("score_")):
        table[column] = pd.to_numeric(table[column], errors="coerce")
    return table

