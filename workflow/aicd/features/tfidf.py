"""TF-IDF exactly as the paper (Section 5.1): whitespace tokens, no lowercasing, no stop
words, no normalisation, uni- to tri-grams, the 5,000 n-grams most frequent in the training
split, TF-IDF weights (smoothed idf, l2 rows) and a truncated SVD to 500 components, fitted on
the training split only.

Fitted in bounded memory, so that 900,000 training rows fit in a few GB (scikit-learn's
TfidfVectorizer holds every distinct n-gram of the corpus before keeping 5,000: 1.8 GB at 70K
rows, growing with the rows):

- the vocabulary is exact: a first pass counts every n-gram's occurrences into hash buckets
  (HashingVectorizer; a bucket's count is at least the count of any n-gram in it), a second
  pass counts exactly the n-grams of the buckets that reach a threshold, and the threshold is
  checked against the 5,000th count (lowered and counted again if it was too high). Ties at
  the cut are broken alphabetically (scikit-learn's order there is the sort's, unspecified);
- the SVD is exact too: the top eigenvectors of X^T X (5,000 x 5,000), summed over blocks of
  rows, are the right singular vectors TruncatedSVD approximates by randomised iterations.
  Signs follow scikit-learn's convention (each component's largest entry positive).

Both passes and the transforms run over the job's threads (aicd.common.parallel)."""

from __future__ import annotations

import logging

import numpy as np
import scipy.sparse as sp
from scipy.linalg import eigh
from sklearn.feature_extraction.text import CountVectorizer, HashingVectorizer, TfidfTransformer
from sklearn.utils import murmurhash3_32

from ..common.parallel import chunked, map_chunks
from ..common.params import Param, ParamSpec
from .base import Featurizer, register
from .rows import codes_of

log = logging.getLogger(__name__)

BUCKETS = 1 << 22   # hash buckets of the first counting pass (32 MB of counts per task)
HASH_CHUNK = 20_000  # rows per first-pass task (each returns its bucket counts)
CHUNK = 5_000        # rows per task of the other passes


def whitespace_tokens(text: str) -> list[str]:
    """Split on any run of spaces, tabs or line breaks; nothing else."""
    return text.split()


def _vectorizer_args(ngram_max: int) -> dict:
    return {"tokenizer": whitespace_tokens, "token_pattern": None, "lowercase": False, "ngram_range": (1, ngram_max)}


def _bucket_of(gram: str, buckets: int) -> int:
    """The column HashingVectorizer gives a feature (sklearn's FeatureHasher: murmurhash3
    with seed 0, its absolute value modulo the buckets)."""
    h = murmurhash3_32(gram, seed=0)
    return (2147483647 - (buckets - 1)) % buckets if h == -2147483648 else abs(h) % buckets


def _bucket_counts(codes: list[str], ngram_max: int, buckets: int) -> np.ndarray:
    hashed = HashingVectorizer(**_vectorizer_args(ngram_max), n_features=buckets, alternate_sign=False, norm=None,
                               dtype=np.float64).transform(codes)
    return np.bincount(hashed.indices, weights=hashed.data, minlength=buckets)


def _candidate_counts(codes: list[str], ngram_max: int, buckets: int, heavy: frozenset) -> dict[str, int]:
    analyze = CountVectorizer(**_vectorizer_args(ngram_max)).build_analyzer()
    counts: dict[str, int] = {}
    for code in codes:
        for gram in analyze(code):
            if _bucket_of(gram, buckets) in heavy:
                counts[gram] = counts.get(gram, 0) + 1
    return counts


def _term_counts(codes: list[str], vectorizer: CountVectorizer) -> sp.csr_matrix:
    return vectorizer.transform(codes)


def top_ngrams(codes: list[str], ngram_max: int, k: int, threads: int = 1, buckets: int = BUCKETS) -> list[str]:
    """The k n-grams most frequent over all the codes (ties: alphabetical), in bounded memory."""
    totals = np.zeros(buckets)
    for part in map_chunks(_bucket_counts, chunked(codes, HASH_CHUNK), threads, ngram_max, buckets):
        totals += part
    chunks = chunked(codes, CHUNK)
    ranked = np.sort(totals[totals > 0])[::-1]
    if not len(ranked):
        return []
    threshold = ranked[min(len(ranked), 2 * k) - 1]  # a guess; checked below
    while True:
        heavy = frozenset(np.flatnonzero(totals >= threshold).tolist())
        counts: dict[str, int] = {}
        for part in map_chunks(_candidate_counts, chunks, threads, ngram_max, buckets, heavy):
            for gram, n in part.items():
                counts[gram] = counts.get(gram, 0) + n
        chosen = sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))[:k]
        cut = chosen[-1][1] if len(chosen) == k else 0
        # Exact when every n-gram left out (its bucket below the threshold, so its count too)
        # counts less than the last one chosen.
        if cut >= threshold or threshold <= 1:
            return [gram for gram, _ in chosen]
        threshold = max(cut, 1)


@register("tfidf")
class TfidfSvdFeaturizer(Featurizer):
    """fit_transform(rows) / transform(rows): rows is a table with a `code` column (or a list
    of code strings); the fitted object is all that is needed to featurize new code.
    `threads` (set by the features stage) spreads the passes over processes."""

    max_threads = 8
    back_projects = True  # components_ map its columns back onto named n-grams (the SVM analysis)
    stored_types = ("aicd.features.tfidf.whitespace_tokens",)  # the vectoriser's tokenizer (a function)
    PARAMS = ParamSpec("the TF-IDF features", (
        Param("max_features", (int,), 5000, "paper", "n-grams kept, the most frequent in train", minimum=1),
        Param("ngram_max", (int,), 3, "paper", "longest n-gram, in whitespace tokens", minimum=1, maximum=5),
        Param("svd_components", (int,), 500, "paper", "truncated SVD dimensions", minimum=1),
    ))

    def __init__(self, max_features: int = 5000, ngram_max: int = 3, svd_components: int = 500, seed: int = 0):
        self.max_features = max_features
        self.ngram_max = ngram_max
        self.svd_components = svd_components
        self.seed = seed  # the SVD is exact: kept for the spec, no random choice is left
        self.threads = 1
        self.vocabulary: list[str] = []
        self.vectorizer: CountVectorizer | None = None
        self.transformer: TfidfTransformer | None = None
        self.components_: np.ndarray | None = None

    def __getstate__(self):
        return {k: v for k, v in self.__dict__.items() if k != "threads"}

    def __setstate__(self, state):
        if "svd" in state:  # fitted by an earlier version: a TfidfVectorizer and a TruncatedSVD
            fitted = state.pop("vectorizer")
            state["vocabulary"] = sorted(fitted.vocabulary_, key=fitted.vocabulary_.get)
            state["vectorizer"] = CountVectorizer(**_vectorizer_args(fitted.ngram_range[1]),
                                                  vocabulary=state["vocabulary"], dtype=np.float32)
            state["transformer"] = fitted._tfidf
            state["components_"] = state.pop("svd").components_
            state.setdefault("ngram_max", fitted.ngram_range[1])
        self.__dict__.update(state)
        self.threads = 1

    def _tfidf(self, codes: list[str]) -> sp.csr_matrix:
        parts = list(map_chunks(_term_counts, chunked(codes, CHUNK), self.threads, self.vectorizer))
        counts = sp.vstack(parts, format="csr") if parts else sp.csr_matrix((0, len(self.vocabulary)))
        return self.transformer.transform(counts)

    def fit_transform(self, rows) -> np.ndarray:
        codes = codes_of(rows)
        self.vocabulary = sorted(top_ngrams(codes, self.ngram_max, self.max_features, self.threads))
        self.vectorizer = CountVectorizer(**_vectorizer_args(self.ngram_max), vocabulary=self.vocabulary,
                                          dtype=np.float32)
        parts = list(map_chunks(_term_counts, chunked(codes, CHUNK), self.threads, self.vectorizer))
        counts = sp.vstack(parts, format="csr") if parts else sp.csr_matrix((0, len(self.vocabulary)))
        self.transformer = TfidfTransformer(norm="l2", smooth_idf=True).fit(counts)
        X = self.transformer.transform(counts)
        del counts, parts
        # SVD needs fewer components than features; tiny training sets get fewer, logged.
        n_components = max(1, min(self.svd_components, X.shape[1] - 1, X.shape[0] - 1))
        if n_components < self.svd_components:
            log.warning("TF-IDF: only %d features / %d rows; SVD reduced to %d components instead of %d",
                        X.shape[1], X.shape[0], n_components, self.svd_components)
        self.components_ = right_singular_vectors(X, n_components)
        return self._project(X)

    def _project(self, X: sp.csr_matrix) -> np.ndarray:
        out = np.empty((X.shape[0], self.components_.shape[0]), dtype=np.float32)
        for start in range(0, X.shape[0], 65_536):
            out[start:start + 65_536] = X[start:start + 65_536] @ self.components_.T
        return out

    def transform(self, rows) -> np.ndarray:
        if self.components_ is None:
            raise RuntimeError("fit_transform first")
        codes = codes_of(rows)
        if not codes:
            return np.zeros((0, self.components_.shape[0]), dtype=np.float32)
        return self._project(self._tfidf(codes))

    @property
    def feature_names(self) -> list[str]:
        return [f"svd_{i}" for i in range(self.components_.shape[0])]

    def report_fields(self, column_sums: dict) -> dict:
        return {"tfidf_features": len(self.vocabulary), "svd_components": int(self.components_.shape[0])}


def right_singular_vectors(X: sp.csr_matrix, k: int, block: int = 65_536) -> np.ndarray:
    """The k right singular vectors of X with the largest singular values, as rows (k x
    features), from the eigenvectors of X^T X summed over blocks of rows, or, with fewer rows
    than features, of the smaller X X^T (the same vectors, to rounding, for a fraction of the
    cost: benchmarks/notes/demo.md)."""
    d = X.shape[1]
    if d == 0 or k <= 0:
        return np.zeros((0, d), dtype=np.float64)
    k = min(k, d)
    components = _from_row_gram(X, k) if X.shape[0] < d else None
    if components is None:
        gram = np.zeros((d, d))
        for start in range(0, X.shape[0], block):
            part = X[start:start + block].astype(np.float64)
            gram += (part.T @ part).toarray()
        _, vectors = eigh(gram, subset_by_index=[d - k, d - 1])
        components = vectors[:, ::-1].T.copy()  # largest first
    signs = np.sign(components[np.arange(k), np.abs(components).argmax(axis=1)])
    components *= np.where(signs == 0, 1.0, signs)[:, None]
    return components


def _from_row_gram(X: sp.csr_matrix, k: int) -> np.ndarray | None:
    """V = X^T U / s from the top eigenvectors U of X X^T (eigenvalues s^2); None where a
    singular value wanted is ~0 (X's rank below k), whose vector only X^T X's path defines."""
    n = X.shape[0]
    if k > n:
        return None
    rows = X.astype(np.float64)
    values, vectors = eigh((rows @ rows.T).toarray(), subset_by_index=[n - k, n - 1])
    values, vectors = values[::-1], vectors[:, ::-1]  # largest first
    if values[-1] <= 1e-10 * max(values[0], 1e-300):
        return None
    return np.asarray((rows.T @ vectors).T / np.sqrt(values)[:, None])
