"""The feature kinds by name (FEATURIZERS: the featurizer interface and the registry are in
aicd.features.base), the concatenation of fitted feature sets, and reading a fitted featurizer.

Importing this module registers every kind of the package: its `from . import ...` line names
their modules (a new kind's module goes on it; tests/unit/common/test_registry.py names one missing)."""

from __future__ import annotations

import numpy as np

from ..common.errors import AicdError
from ..common.params import ParamSpec
from . import ast_features, canonical, embedding, lm_criteria, lm_stats, structure, stylometry_set, tfidf  # noqa: F401
from .base import FEATURIZERS, Featurizer, register


@register("concat")
class ConcatFeaturizer(Featurizer):
    """Column-wise concatenation of fitted featurizers (e.g. AST + TF-IDF), holding the parts
    themselves, so it can transform new code."""

    PARAMS = ParamSpec("a concatenation")

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

    @property
    def verify_rows(self) -> int:
        """As few as its most costly part allows (an LM's part: none, it would load the LM)."""
        return min(getattr(p, "verify_rows", Featurizer.verify_rows) for p in self.parts)

    def report_fields(self, matrices: dict) -> dict:
        return {"parts": [p.kind for p in self.parts]}


def build(kind: str, params: dict | None = None, seed: int = 0):
    """A new, unfitted featurizer of a table-based kind (tfidf, ast). concat is built from
    fitted parts: ConcatFeaturizer(parts)."""
    if kind == "concat":
        raise AicdError("a concat feature set is built from its fitted parts (--parts)")
    cls = FEATURIZERS[kind]  # an unknown kind: one line naming the registered ones
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

    from ..models.fitted_files import load_fitted

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
