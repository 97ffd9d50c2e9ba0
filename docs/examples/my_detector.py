"""An example of a detector you bring (docs/own_detector.md): a class with the detector API on
code strings, and a zero-shot score function. config/own_detector.yaml uses both; run it with
this folder on PYTHONPATH:

    PYTHONPATH=docs/examples snakemake --cores 2 --configfile config/own_detector.yaml

The tests use the same module (tests/unit/detectors/test_plugins.py, tests/workflow/test_own_detector.py)."""

from __future__ import annotations

import numpy as np


def _features(codes):
    rows = []
    for code in codes:
        lines = code.splitlines() or [""]
        rows.append([np.mean([len(line) for line in lines]), sum(line.strip().startswith(("#", "//")) for line in lines)
                     / len(lines), code.count("    ") / max(len(code), 1)])
    return np.asarray(rows, dtype=float)


class NearestMeanDetector:
    """Each class's mean of three layout features; the nearest mean wins."""

    def __init__(self, scale: float = 1.0):
        self.scale = scale

    def fit(self, codes, labels, val_codes=None, val_labels=None):
        X, y = _features(codes), np.asarray(labels, dtype=object)
        self.classes_ = sorted(set(y))
        self.means_ = np.array([X[y == c].mean(axis=0) for c in self.classes_])
        self.std_ = X.std(axis=0) + 1e-9
        self.saw_validation_ = val_codes is not None and len(val_codes) > 0
        return self

    def predict_scores(self, codes):
        d = np.linalg.norm((_features(codes)[:, None, :] - self.means_[None]) / self.std_, axis=2) * self.scale
        e = np.exp(-(d - d.min(axis=1, keepdims=True)))
        return e / e.sum(axis=1, keepdims=True)

    def predict(self, codes):
        return [self.classes_[i] for i in self.predict_scores(codes).argmax(axis=1)]


def comment_density(codes):
    """Zero-shot: a machine-score from the share of comment lines (LLM code comments more)."""
    return [float(f[1]) for f in _features(codes)]
