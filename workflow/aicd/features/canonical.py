"""A canonical view of code, as the feature set `canon_tfidf`: the paper's TF-IDF + SVD over the
canonical token stream (aicd.codetools.tokens) instead of whitespace tokens, so that layout
never reaches the features, comments are left out (or one COMMENT token each, `comments: true`),
every identifier becomes the class of its naming style and length (`snake_mid`, `camel_long`,
`single_letter`, ...), and literals are bucketed (`STR_short`, `NUM_small`, ...). Beside the SVD
columns: identifier-vocabulary statistics computed on the same tokens (share of each naming
style, distinct-name ratio, mean length). `identifiers: anonymous` makes every identifier one ID
token and keeps only the identifier count, so that renaming cannot reach the features; `bound`
hides only the names the code binds (one VAR token: exactly what the rename rewrite changes,
aicd.codetools.bindings) and keeps functions, types, fields and library calls as written; `role`
writes every name as its role (VAR, DEFNAME, CALLNAME, ...). `literals: class` writes every
string STR and every number NUM (with `identifiers: anonymous`, the delexicalised view: no
comments, every name ID, every literal its class). `tokens: universal` writes keywords
and operators as cross-language classes (aicd.codetools.token_classes), so that n-grams learnt
on one language can be read in another.

The paper's `tfidf` stays as it is; this is an additional row family."""

from __future__ import annotations

import numpy as np

from ..codetools.tokens import IDENTIFIER_MODES, STYLES, canonical_tokens, literal_class, style_of
from ..common.params import Param, ParamSpec
from .base import Featurizer, register
from .rows import codes_of, languages_of
from .tfidf import TfidfSvdFeaturizer


def vocabulary_stats(names: list[str]) -> list[float]:
    """Shares of each naming style, distinct-name ratio, mean and max length (/ 20), count (log)."""
    if not names:
        return [0.0] * (len(STYLES) + 4)
    styles = [style_of(n) for n in names]
    lengths = np.array([len(n) for n in names], dtype=float)
    return [styles.count(s) / len(names) for s in STYLES] + [
        len(set(names)) / len(names), float(lengths.mean()) / 20, float(lengths.max()) / 20, np.log1p(len(names)) / 10]


STAT_NAMES = [f"ident_{s}" for s in STYLES] + ["ident_distinct", "ident_mean_len", "ident_max_len", "ident_count"]
# what any renaming keeps: how many names (not how many distinct: a renamer that follows scopes
# gives one name two new ones)
RENAME_INVARIANT_STATS = ["ident_count"]
# with bound names hidden: how many names, the bound share, and the styles and lengths of the
# names the code does not bind (functions, types, fields, library calls), which renaming keeps
BOUND_STAT_NAMES = ["ident_count", "ident_bound_share"] + [f"kept_{s}" for s in STYLES] + ["kept_mean_len", "kept_max_len"]


def bound_stats(kept: list[str], n_bound: int) -> list[float]:
    total = len(kept) + n_bound
    if not kept:
        return [np.log1p(total) / 10, 1.0 if total else 0.0] + [0.0] * (len(STYLES) + 2)
    styles = [style_of(n) for n in kept]
    lengths = np.array([len(n) for n in kept], dtype=float)
    return [np.log1p(total) / 10, n_bound / total] + [styles.count(s) / len(kept) for s in STYLES] + [
        float(lengths.mean()) / 20, float(lengths.max()) / 20]


@register("canon_tfidf")
class CanonicalTfidfFeaturizer(Featurizer):
    """fit_transform(rows) / transform(rows): rows is a table with `code` and `language`."""

    PARAMS = ParamSpec("the canonical-view TF-IDF features", (
        Param("max_features", (int,), 5000, "ours", "canonical n-grams kept (as the paper's TF-IDF)", minimum=1),
        Param("ngram_max", (int,), 3, "ours", "longest n-gram, in canonical tokens", minimum=1, maximum=5),
        Param("svd_components", (int,), 500, "ours", "truncated SVD dimensions", minimum=1),
        Param("comments", (bool,), False, "ours", "keep one COMMENT token per comment (default: none)"),
        Param("identifiers", (str,), "class", "ours",
              "what an identifier becomes: the class of its naming style and length (`class`); one ID token "
              "(`anonymous`: of the identifier statistics only the count is kept); VAR where the code binds it "
              "and every other name as written (`bound`); VAR where bound, else its role: DEFNAME, CALLNAME, "
              "FIELD, TYPE, NAME (`role`). anonymous, bound and role: renaming cannot change the features",
              choices=IDENTIFIER_MODES),
        Param("tokens", (str,), "written", "ours",
              "keywords and operators as written (`written`) or as their cross-language classes "
              "(`universal`: LOOP, COND, AUG, ...; aicd.codetools.token_classes)", choices=("written", "universal")),
        Param("literals", (str,), "bucket", "ours",
              "literals bucketed by size (`bucket`: STR_short, NUM_small, ...) or as their class only (`class`: "
              "STR, NUM; with identifiers: anonymous, the delexicalised view: aicd.codetools.tokens."
              "delexicalised_tokens)", choices=("bucket", "class")),
    ))

    def __init__(self, max_features: int = 5000, ngram_max: int = 3, svd_components: int = 500,
                 comments: bool = False, identifiers: str = "class", tokens: str = "written", literals: str = "bucket",
                 seed: int = 0):
        if identifiers not in IDENTIFIER_MODES:
            raise ValueError(f"identifiers must be one of {', '.join(IDENTIFIER_MODES)}, got {identifiers!r}")
        if tokens not in ("written", "universal"):
            raise ValueError(f"tokens must be 'written' or 'universal', got {tokens!r}")
        self.comments = comments
        self.identifiers = identifiers
        self.tokens = tokens
        self.literals = literals
        self.tfidf = TfidfSvdFeaturizer(max_features=max_features, ngram_max=ngram_max,
                                        svd_components=svd_components, seed=seed)
        self.threads = 1

    @property
    def mode(self) -> str:
        return getattr(self, "identifiers", "class")  # featurizers pickled before the option: class

    @property
    def anonymous(self) -> bool:
        return self.mode == "anonymous"

    @property
    def stat_names(self) -> list[str]:
        return {"class": STAT_NAMES, "anonymous": RENAME_INVARIANT_STATS}.get(self.mode, BOUND_STAT_NAMES)

    def _views(self, rows) -> tuple[list[str], np.ndarray]:
        codes = codes_of(rows)
        languages = languages_of(rows)
        universal = getattr(self, "tokens", "written") == "universal"
        classes = getattr(self, "literals", "bucket") == "class"  # featurizers pickled before the option: bucket
        streams, stats = [], []
        for code, language in zip(codes, languages):
            tokens, names = canonical_tokens(code, language, self.comments, identifiers=self.mode, universal=universal)
            if classes:
                tokens = [literal_class(t) for t in tokens]
            streams.append(" ".join(tokens))
            if self.mode in ("bound", "role"):
                stats.append(bound_stats(names, tokens.count("VAR")))
            else:
                stats.append(vocabulary_stats(names))
        computed = BOUND_STAT_NAMES if self.mode in ("bound", "role") else STAT_NAMES
        stats = np.asarray(stats, dtype=np.float32).reshape(len(codes), len(computed))
        if self.anonymous:
            stats = stats[:, [STAT_NAMES.index(n) for n in RENAME_INVARIANT_STATS]]
        return streams, stats

    def fit_transform(self, rows) -> np.ndarray:
        streams, stats = self._views(rows)
        self.tfidf.threads = self.threads
        return np.hstack([self.tfidf.fit_transform(streams), stats]).astype(np.float32)

    def transform(self, rows) -> np.ndarray:
        streams, stats = self._views(rows)
        return np.hstack([self.tfidf.transform(streams), stats]).astype(np.float32)

    @property
    def feature_names(self) -> list[str]:
        return [f"canon_{n}" for n in self.tfidf.feature_names] + self.stat_names

    def report_fields(self, column_sums: dict) -> dict:
        return {"canonical_features": len(self.tfidf.vocabulary), "svd_components": int(self.tfidf.components_.shape[0]),
                "identifier_statistics": len(self.stat_names), "comments": self.comments, "identifiers": self.mode,
                "tokens": getattr(self, "tokens", "written"), "literals": getattr(self, "literals", "bucket")}
