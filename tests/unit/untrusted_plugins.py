"""Plug-in detectors (kind python, object ...) whose output a careless user might write: scores
that saturate, scores with three distinct values, labels as 0/1 indices, NaN scores. Real
classes run through the detect job, not stand-ins."""

from __future__ import annotations

import numpy as np


class _ByLength:
    """Learns the median code length of each class; longer than the midpoint is machine."""

    classes_ = ["human", "machine"]

    def fit(self, codes, labels):
        lengths = np.array([len(c) for c in codes], dtype=float)
        labels = np.asarray(labels, dtype=object)
        self.cut_ = (np.median(lengths[labels == "human"]) + np.median(lengths[labels != "human"])) / 2
        return self

    def _machine(self, codes) -> np.ndarray:
        return np.array([len(c) for c in codes], dtype=float) > self.cut_

    def predict(self, codes):
        return np.where(self._machine(codes), "machine", "human")


class SaturatedDetector(_ByLength):
    """Naive-Bayes-like scores: every row is certain, probabilities exactly 0 or 1."""

    def predict_scores(self, codes):
        machine = self._machine(codes).astype(float)
        return np.column_stack([1.0 - machine, machine])


class TiedDetector(_ByLength):
    """Probabilities with three distinct values only (short, long, very long code): most rows tie."""

    def predict_scores(self, codes):
        lengths = np.array([len(c) for c in codes], dtype=float)
        machine = np.select([lengths < self.cut_, lengths < self.cut_ * 8], [0.2, 0.5], 0.9)
        return np.column_stack([1.0 - machine, machine])


class IndexLabelDetector(_ByLength):
    """Returns 0/1 class indices instead of the task's label names."""

    def predict(self, codes):
        return self._machine(codes).astype(int)


class NanScoreDetector(_ByLength):
    """Gives NaN scores for empty-looking code."""

    def predict_scores(self, codes):
        machine = self._machine(codes).astype(float)
        machine[[i for i, c in enumerate(codes) if len(c) < 400]] = np.nan
        return np.column_stack([1.0 - machine, machine])


class LogitDetector(_ByLength):
    """Promises probabilities (no score_kind) but returns raw logits."""

    def predict_scores(self, codes):
        z = (np.array([len(c) for c in codes], dtype=float) - self.cut_) / 100.0
        return np.column_stack([-z, z])


class DeclaredLogitDetector(LogitDetector):
    """The same logits, declared as its own scale."""

    score_kind = "score"


class CharNGramNB:
    """A user's class holding a library estimator the package does not list as trusted
    (scikit-learn's MultinomialNB over character n-gram counts)."""

    def fit(self, codes, labels):
        from sklearn.feature_extraction.text import CountVectorizer
        from sklearn.naive_bayes import MultinomialNB

        self.vectorizer_ = CountVectorizer(analyzer="char", ngram_range=(2, 3), max_features=2000)
        self.nb_ = MultinomialNB().fit(self.vectorizer_.fit_transform(codes), np.asarray(labels, dtype=object))
        self.classes_ = list(self.nb_.classes_)
        return self

    def predict(self, codes):
        return self.nb_.predict(self.vectorizer_.transform(codes))

    def predict_scores(self, codes):
        return self.nb_.predict_proba(self.vectorizer_.transform(codes))
