"""The rows an LLM judge sees: a stratified sample of a task's test split."""

from __future__ import annotations

import pandas as pd

from ..errors import AicdError
from ..splits.stratified import assign_splits


def judge_sample(test: pd.DataFrame, fraction: float, seed: int) -> pd.DataFrame:
    """A stratified sample: within each (class, language, domain) stratum, `fraction` of rows."""
    if not 0 < fraction <= 1:
        raise AicdError(f"judging fraction must be in (0, 1], got {fraction}")
    if fraction == 1:
        return test
    by = [c for c in ("target", "language", "domain") if c in test.columns]
    split = assign_splits(test.fillna({c: "" for c in by}), by, {"test": fraction, "train": 1 - fraction}, seed)
    return test[split == "test"]
