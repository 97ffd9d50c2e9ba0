"""Training options of any detector (its config entry's `training:`), for invariance:

- augment: [perturbation, ...] -- one seeded copy of every train row per perturbation of
  aicd.codetools.perturb, with the row's label, appended to the train split (a feature-based
  detector featurizes the copies with its feature set's fitted featurizer);
- balance_languages: true -- train rows resampled (seeded, with replacement) so that every
  language has as many rows as the largest one;
- calibrate: true -- its scores recalibrated on the validation rows (group-held-out in the OOD
  tasks; carved from train where the task has none), labels following them (Calibrated).

Validation and test rows are never touched."""

from __future__ import annotations

import numpy as np
import pandas as pd

from ..codetools.perturb import PERTURBATIONS, perturb
from ..common.errors import AicdError


def augmented_rows(train: pd.DataFrame, kinds, seed: int) -> pd.DataFrame:
    """The train rows rewritten once per perturbation (ids suffixed ~kind); rows a rewrite
    leaves unchanged are not copied (they would only double their weight)."""
    unknown = [k for k in kinds if k not in PERTURBATIONS]
    if unknown:
        raise AicdError(f"training.augment: unknown perturbations {unknown}; known: {', '.join(PERTURBATIONS)}")
    parts = []
    for k, kind in enumerate(kinds):
        codes = [perturb(c, lang, kind, seed + k) for c, lang in zip(train["code"], train["language"])]
        changed = np.array([a != b for a, b in zip(codes, train["code"])])
        part = train[changed].assign(code=np.asarray(codes, dtype=object)[changed])
        parts.append(part.assign(id=part["id"].astype(str) + f"~{kind}"))
    return pd.concat(parts, ignore_index=True) if parts else train.iloc[:0]


def balanced_indices(languages, seed: int) -> np.ndarray:
    """Row indices with every language oversampled to the count of the largest (seeded)."""
    languages = np.asarray(languages, dtype=object)
    rng = np.random.default_rng(seed)
    groups = {lang: np.flatnonzero(languages == lang) for lang in pd.unique(languages)}
    largest = max(len(g) for g in groups.values())
    picked = [np.concatenate([g, rng.choice(g, largest - len(g), replace=True)]) for g in groups.values()]
    return np.sort(np.concatenate(picked))


class Calibrated:
    """A fitted detector whose scores are recalibrated on validation rows (training.calibrate):
    a multinomial logistic regression from its scores (log-probabilities where they are
    probabilities) to the validation labels; labels follow the calibrated probabilities. Every
    other attribute is the detector's own."""

    score_kind = "probability"  # whatever the base gave, the calibrator's output is probabilities

    def __init__(self, base, calibrator, logs: bool):
        self.base, self.calibrator, self.logs = base, calibrator, logs

    def __getattr__(self, name):
        if name in ("base", "calibrator", "logs") or name.startswith("__"):
            raise AttributeError(name)
        return getattr(self.base, name)

    def _features(self, scores: np.ndarray) -> np.ndarray:
        return np.log(np.clip(scores, 1e-6, 1.0)) if self.logs else scores

    def predict_with_scores(self, X):
        _, raw = self.base.predict_with_scores(X)
        if raw is None or len(raw) == 0:
            return self.base.predict_with_scores(X)
        probs = self.calibrator.predict_proba(self._features(np.asarray(raw, dtype=float)))
        ordered = probs[:, [list(self.calibrator.classes_).index(c) for c in self.base.classes_]]
        return np.asarray(self.base.classes_, dtype=object)[ordered.argmax(axis=1)], ordered

    def predict(self, X):
        return self.predict_with_scores(X)[0]

    def predict_scores(self, X):
        return self.predict_with_scores(X)[1]


def check_calibratable(detector) -> None:
    """training.calibrate needs a kind stored as one file that gives scores."""
    from .base import Detector

    if detector.declared.storage != "file":
        raise AicdError(f"training.calibrate: detector kind {detector.kind} is stored as a folder; calibration "
                        "applies to kinds stored as one file")
    if type(detector).predict_scores is Detector.predict_scores and \
            type(detector).predict_with_scores is Detector.predict_with_scores:
        raise AicdError(f"training.calibrate: detector kind {detector.kind} gives no scores to calibrate")


def calibrate(detector, scores: np.ndarray, y: np.ndarray, seed: int) -> Calibrated:
    """Calibrated(detector) from its scores of validation rows and their labels."""
    from sklearn.linear_model import LogisticRegression

    if scores is None:
        raise AicdError(f"training.calibrate: detector kind {detector.kind} gave no scores to calibrate")
    y = np.asarray(y, dtype=object)
    missing = sorted(set(map(str, detector.classes_)) - set(map(str, y)))
    if missing:
        raise AicdError(f"training.calibrate: the validation rows have no {missing} rows to calibrate on")
    scores = np.asarray(scores, dtype=float)
    logs = bool((scores >= 0).all() and (scores <= 1 + 1e-6).all())
    model = LogisticRegression(C=100.0, max_iter=1000, random_state=seed)
    model.fit(np.log(np.clip(scores, 1e-6, 1.0)) if logs else scores, y)
    return Calibrated(detector, model, logs)
