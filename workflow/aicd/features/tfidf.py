"""TF-IDF exactly as the paper (Section 5.1): whitespace tokens, no lowercasing, no stop
words, no normalisation, uni- to tri-grams, 5,000 features, TruncatedSVD to 500 components,
fitted on the training split only."""

from __future__ import annotations

import logging

import numpy as np
from sklearn.decomposition import TruncatedSVD
from sklearn.feature_extraction.text import TfidfVectorizer

from .rows import codes_of

log = logging.getLogger(__name__)


def whitespace_tokens(text: str) -> list[str]:
    """Split on any run of spaces, tabs or line breaks; nothing else."""
    return text.split()


class TfidfSvdFeaturizer:
    """fit_transform(rows) / transform(rows): rows is a table with a `code` column (or a list
    of code strings); the fitted object is all that is needed to featurize new code."""

    kind = "tfidf"

    def __init__(self, max_features: int = 5000, ngram_max: int = 3, svd_components: int = 500, seed: int = 0):
        self.max_features = max_features
        self.svd_components = svd_components
        self.seed = seed
        self.vectorizer = TfidfVectorizer(
            tokenizer=whitespace_tokens, token_pattern=None, lowercase=False, stop_words=None,
            ngram_range=(1, ngram_max), max_features=max_features, dtype=np.float32,
        )
        self.svd: TruncatedSVD | None = None

    def fit_transform(self, rows) -> np.ndarray:
        tfidf = self.vectorizer.fit_transform(codes_of(rows))
        # SVD needs fewer components than features; tiny training sets get fewer, logged.
        n_components = min(self.svd_components, tfidf.shape[1] - 1, tfidf.shape[0] - 1)
        if n_components < self.svd_components:
            log.warning("TF-IDF: only %d features / %d rows; SVD reduced to %d components instead of %d",
                        tfidf.shape[1], tfidf.shape[0], n_components, self.svd_components)
        self.svd = TruncatedSVD(n_components=max(n_components, 1), random_state=self.seed)
        return self.svd.fit_transform(tfidf).astype(np.float32)

    def transform(self, rows) -> np.ndarray:
        if self.svd is None:
            raise RuntimeError("fit_transform first")
        codes = codes_of(rows)
        if not codes:  # scikit-learn refuses zero rows
            return np.zeros((0, self.svd.n_components), dtype=np.float32)
        return self.svd.transform(self.vectorizer.transform(codes)).astype(np.float32)

    @property
    def feature_names(self) -> list[str]:
        return [f"svd_{i}" for i in range(self.svd.n_components)]

    def report_fields(self, matrices: dict) -> dict:
        return {"tfidf_features": len(self.vectorizer.vocabulary_), "svd_components": int(self.svd.n_components)}
