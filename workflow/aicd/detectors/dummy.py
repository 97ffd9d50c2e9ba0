"""Dummy baselines of Table 4: seeded uniform random and majority class."""

from __future__ import annotations

import numpy as np

from ..common.errors import AicdError
from ..common.params import ParamSpec
from .base import Detector, register


class _Baseline(Detector):
    inputs = "nothing"
    dummy = True


@register("random")
class RandomDetector(_Baseline):
    """Uniform over the classes seen in training, from a generator seeded by config."""

    PARAMS = ParamSpec("the random baseline")

    def fit(self, X, y, X_val=None, y_val=None):
        if len(y) == 0:
            raise AicdError(f"detector {self.kind}: the train split has no rows; rebuild the task with rows in train")
        self.classes_ = np.unique(y)
        return self

    def predict(self, X):
        rng = np.random.default_rng(self.seed)
        return self.classes_[rng.integers(0, len(self.classes_), size=len(X))]


@register("majority")
class MajorityDetector(_Baseline):
    """The most frequent training class (ties: the first in sorted order)."""

    PARAMS = ParamSpec("the majority baseline")

    def fit(self, X, y, X_val=None, y_val=None):
        if len(y) == 0:
            raise AicdError(f"detector {self.kind}: the train split has no rows; rebuild the task with rows in train")
        self.classes_, counts = np.unique(y, return_counts=True)
        self.majority_ = self.classes_[int(np.argmax(counts))]
        return self

    def predict(self, X):
        return np.full(len(X), self.majority_, dtype=object)
