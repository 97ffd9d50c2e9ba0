"""The feature kinds by name, and the concatenation of fitted feature sets.

Every featurizer takes a table (`code`, `language` columns) and is self-contained once fitted:
fit_transform(table) -> matrix; transform(table) -> matrix of the same width; feature_names;
report_fields(matrices) -> extra fields for the features report; optionally environment =
"neural" where it needs torch (its jobs, and those that apply it, then use envs/neural.yaml).
A fitted featurizer stored by the features stage (featurizer.skops, aicd.fitted_files) is all a
fitted detector needs to apply itself to new code (no paths into results/). Adding a kind: a class with those members,
registered in FEATURIZERS."""

from __future__ import annotations

import numpy as np

from ..errors import AicdError
from ..params import ParamSpec
from .ast_features import AstFeaturizer
from .canonical import CanonicalTfidfFeaturizer
from .embedding import CodeEmbeddingFeaturizer
from .lm_stats import LMStatsFeaturizer
from .structure import StructureFeaturizer
from .stylometry_set import StylometryFeaturizer
from .tfidf import TfidfSvdFeaturizer


class ConcatFeaturizer:
    """Column-wise concatenation of fitted featurizers (e.g. AST + TF-IDF), holding the parts
    themselves, so it can transform new code."""

    kind = "concat"
    max_threads = 1
    back_projects = False
    PARAMS = ParamSpec("a concatenation")

    @staticmethod
    def named(part_kinds) -> bool:
        """Whether a concatenation of these kinds has named columns (any part does)."""
        return any(getattr(FEATURIZERS[k], "named_columns", False) for k in part_kinds)

    def __init__(self, parts: list) -> None:
        if len(parts) < 2:
            raise AicdError("a concat feature set needs at least two parts")
        for i, part in enumerate(parts):
            if not callable(getattr(part, "transform", None)):
                raise AicdError(f"concat part {i} is not a fitted featurizer ({type(part).__name__}); "
                                "rebuild that feature set")
        self.parts = list(parts)

    def fit_transform(self, rows) -> np.ndarray:
        return np.hstack([p.fit_transform(rows) for p in self.parts]).astype(np.float32)

    def transform(self, rows) -> np.ndarray:
        return np.hstack([p.transform(rows) for p in self.parts]).astype(np.float32)

    @property
    def feature_names(self) -> list[str]:
        return [n for p in self.parts for n in p.feature_names]

    def report_fields(self, matrices: dict) -> dict:
        return {"parts": [p.kind for p in self.parts]}


FEATURIZERS = {"tfidf": TfidfSvdFeaturizer, "ast": AstFeaturizer, "canon_tfidf": CanonicalTfidfFeaturizer,
               "code_embedding": CodeEmbeddingFeaturizer, "structure": StructureFeaturizer,
               "stylometry": StylometryFeaturizer, "lm_stats": LMStatsFeaturizer, "concat": ConcatFeaturizer}
KINDS = tuple(FEATURIZERS)


def build(kind: str, params: dict | None = None, seed: int = 0):
    """A new, unfitted featurizer of a table-based kind (tfidf, ast). concat is built from
    fitted parts: ConcatFeaturizer(parts)."""
    if kind == "concat":
        raise AicdError("a concat feature set is built from its fitted parts (--parts)")
    if kind not in FEATURIZERS:
        raise AicdError(f"unknown feature kind {kind!r}; use one of {', '.join(KINDS)}")
    cls = FEATURIZERS[kind]
    try:
        params = cls.PARAMS.check(dict(params or {}))
    except (TypeError, ValueError) as err:
        raise AicdError(f"feature kind {kind}: {err}") from None
    return cls(seed=seed, **params) if params else cls()


def load_featurizer(path, trust_pickle: bool = False) -> object:
    """A fitted featurizer file (skops: reading it runs no code from the file), or one clear
    line: missing, unreadable, holding an untrusted type, or not a featurizer. A pickle (what
    earlier versions wrote) is read only with trust_pickle."""
    from pathlib import Path

    from ..fitted_files import load_fitted

    if not Path(path).is_file():
        raise AicdError(f"the fitted featurizer {path} does not exist: build that feature set first")
    obj = load_fitted(path, "a fitted featurizer", "rebuild that feature set", trust_pickle=trust_pickle)
    return check_featurizer(obj, str(path))


def check_featurizer(obj, origin: str):
    """A loaded featurizer, refused with a clear line when it is not one (e.g. the older
    concat pickle that held only paths to .npz files)."""
    if not callable(getattr(obj, "transform", None)):
        raise AicdError(f"{origin} does not hold a fitted featurizer ({type(obj).__name__}); "
                        "it was written by an older version: rebuild that feature set")
    return obj
