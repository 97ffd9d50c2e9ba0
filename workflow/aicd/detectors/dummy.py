"""Dummy baselines of Table 4: seeded uniform random and majority class."""

from __future__ import annotations

import numpy as np

from .base import Detector, register


@register("random")
class RandomDetector(Detector):
    """Uniform over the classes seen in training, from a generator seeded by config."""
    needs_features = False

    def fit(self, X, y, X_val=None, y_val=None):
        self.classes_ = np.unique(y)
        return self

    def predict(self, X):
        rng = np.random.default_rng(self.seed)
        return self.classes_[rng.integers(0, len(self.classes_), size=len(X))]


@register("majority")
class MajorityDetector(Detector):
    """The most frequent training class (ties: the first in sorted order)."""
    needs_features = False

    def fit(self, X, y, X_val=None, y_val=None):
        self.classes_, counts = np.unique(y, return_counts=True)
        self.majority_ = self.classes_[int(np.argmax(counts))]
        return self

    def predict(self, X):
        return np.full(len(X), self.majority_, dtype=object)
