"""Seeded stratified assignment of rows to train/validation/test."""

from __future__ import annotations

import numpy as np
import pandas as pd

from ..common.errors import AicdError
from ..data.schema import SPLITS


def assign_splits(df: pd.DataFrame, by: list[str], fractions: dict[str, float], seed: int) -> pd.Series:
    """Split name per row. Within each stratum (rows sharing the `by` values, in id order)
    rows are shuffled with one generator seeded from config, then cut by the fractions.
    The same rows, fractions and seed always give the same assignment."""
    unknown = set(fractions) - set(SPLITS)
    if unknown:
        raise AicdError(f"split fractions name unknown splits {sorted(unknown)}; use {SPLITS}")
    total = sum(fractions.values())
    if not np.isclose(total, 1.0):
        raise AicdError(f"split fractions must add up to 1, got {total:g} ({fractions})")
    missing = [c for c in by if c not in df.columns]
    if missing:
        raise AicdError(f"cannot stratify by {missing}: not a column of the table")
    rng = np.random.default_rng(seed)
    out = pd.Series(index=df.index, dtype=object)
    if df.empty:  # nothing to group (pandas cannot group an empty key frame)
        return out
    ordered = df.sort_values("id")
    if by:
        keys = ordered[by].astype(object).fillna("-").astype(str).agg("\x1f".join, axis=1)
    else:
        keys = pd.Series("", index=ordered.index)
    f_test = fractions.get("test", 0.0)
    f_val = fractions.get("validation", 0.0)
    for _, idx in sorted(keys.groupby(keys).groups.items()):
        idx = np.asarray(idx)[rng.permutation(len(idx))]
        n = len(idx)
        n_test = int(round(n * f_test))
        n_val = int(round(n * (f_test + f_val))) - n_test
        out.loc[idx[:n_test]] = "test"
        out.loc[idx[n_test:n_test + n_val]] = "validation"
        out.loc[idx[n_test + n_val:]] = "train"
    return out


def stratified_sample(df: pd.DataFrame, n: int, seed: int, by: list[str]) -> pd.DataFrame:
    """n rows, proportionally from each stratum (largest remainders), seeded."""
    keys = df[by].astype(object).fillna("-").astype(str).agg("\x1f".join, axis=1) if by \
        else pd.Series("", index=df.index)
    sizes = keys.value_counts().sort_index()
    quota = sizes * n / len(df)
    base = np.floor(quota).astype(int)
    rest = n - base.sum()
    extra = (quota - base).sort_values(ascending=False, kind="stable").index[:rest]
    base[extra] += 1
    rng = np.random.default_rng(seed)
    picked = []
    for key, k in base.items():
        idx = np.sort(df.index[keys.eq(key)].to_numpy())
        picked.append(idx[rng.permutation(len(idx))[:k]])
    return df.loc[np.concatenate(picked)] if picked else df.iloc[:0]
