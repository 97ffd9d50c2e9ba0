"""Computing one feature set: a table-based featurizer fitted on train and applied to every
split, or a concatenation of already computed parts (their features and fitted featurizers)."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from ..errors import AicdError
from ..schema import SPLITS
from . import store
from .registry import ConcatFeaturizer, build, load_featurizer


def compute(kind: str, params: dict, tables: dict[str, pd.DataFrame], seed: int):
    """Fit a table-based featurizer on train; return (matrices, featurizer, names, extra report fields)."""
    featurizer = build(kind, params, seed)
    matrices = {"train": featurizer.fit_transform(tables["train"])}
    for split in SPLITS[1:]:
        matrices[split] = featurizer.transform(tables[split])
    return matrices, featurizer, featurizer.feature_names, featurizer.report_fields(matrices)


def concat_parts(parts: list[str], part_models: list[str]):
    """(matrices, ids, names, featurizer) of a concatenated feature set."""
    if len(parts) < 2:
        raise AicdError("a concat feature set needs at least two parts")
    models = part_models or [str(Path(p).with_name("featurizer.pkl")) for p in parts]
    if len(models) != len(parts):
        raise AicdError(f"{len(parts)} --parts but {len(models)} --part-models: give one fitted featurizer per part")
    fitted = [load_featurizer(path) for path in models]
    matrices, ids, names = store.concat([store.load(p) for p in parts])
    featurizer = ConcatFeaturizer(fitted)
    if featurizer.feature_names != names:
        raise AicdError("the parts' featurizers do not match their features.npz (feature names differ): rebuild them")
    return matrices, ids, names, featurizer
