"""Training options of any detector (its config entry's `training:`), for invariance:

- augment: [perturbation, ...] -- one seeded copy of every train row per perturbation of
  aicd.splits.perturb, with the row's label, appended to the train split (a feature-based
  detector featurizes the copies with its feature set's fitted featurizer);
- balance_languages: true -- train rows resampled (seeded, with replacement) so that every
  language has as many rows as the largest one.

Validation and test rows are never touched."""

from __future__ import annotations

import numpy as np
import pandas as pd

from ..errors import AicdError
from ..splits.perturb import PERTURBATIONS, perturb


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
