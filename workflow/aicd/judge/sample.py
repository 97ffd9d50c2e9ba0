"""The rows an LLM judge sees: a stratified sample of a task's test split."""

from __future__ import annotations

import pandas as pd

from ..common.errors import AicdError
from ..splits.stratified import assign_splits, stratified_sample


def judge_sample(test: pd.DataFrame, fraction: float, seed: int, max_rows: int | None = None) -> pd.DataFrame:
    """A stratified sample: within each (class, language, domain) stratum, `fraction` of rows;
    at most `max_rows` of them (the same stratified splitter on the sample, seeded)."""
    if not 0 < fraction <= 1:
        raise AicdError(f"judging fraction must be in (0, 1], got {fraction}")
    by = [c for c in ("target", "language", "domain") if c in test.columns]
    sample = test
    if fraction < 1:
        split = assign_splits(test.fillna(dict.fromkeys(by, "")), by, {"test": fraction, "train": 1 - fraction}, seed)
        sample = test[split == "test"]
    if max_rows and len(sample) > max_rows:  # exactly max_rows, each stratum its share (largest remainders)
        sample = stratified_sample(sample.fillna(dict.fromkeys(by, "")), max_rows, seed, by)
        sample = test.loc[sample.index]
    return sample
