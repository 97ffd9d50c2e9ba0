"""Per-language standardisation on human code: each column becomes (value - mean) / std with the
mean and std of the *human* training rows of the row's language, so that a language's typical
human program is the zero and a column reads "how far from how people write this language".
Machine rows never set the statistics (a generator's style would become the zero), nor do the
rows being predicted (that would adapt to the test set).

A language with fewer than `min_humans` human training rows, or none (a language the training
rows lack), takes the pooled statistics of every human training row, counted in the report.
A column whose spread is (nearly) zero among the humans keeps a scale of 1. NaN stays NaN."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd

from ..common.errors import AicdError

MIN_HUMANS = 20
HUMAN = "human"


def human_rows(rows) -> np.ndarray:
    """Which training rows are human, from the table's `label` (else `target`) column."""
    if isinstance(rows, pd.DataFrame):
        for column in ("label", "target"):
            if column in rows.columns:
                return (rows[column].astype(str) == HUMAN).to_numpy()
    raise AicdError("per-language standardisation is fitted on the training rows' human code: it needs a table "
                    "with a 'label' (or 'target') column")


def _moments(values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # an all-NaN column: its moments are NaN
        mean, std = np.nanmean(values, axis=0), np.nanstd(values, axis=0)
    mean = np.where(np.isfinite(mean), mean, 0.0)
    std = np.where(np.isfinite(std) & (std > 1e-9), std, 1.0)
    return mean, std


class LanguageStandardiser:
    def __init__(self, min_humans: int = MIN_HUMANS) -> None:
        self.min_humans = min_humans

    def fit(self, values: np.ndarray, languages, humans: np.ndarray) -> LanguageStandardiser:
        values = np.asarray(values, dtype=np.float64)
        languages = np.asarray([str(x) for x in languages], dtype=object)
        humans = np.asarray(humans, dtype=bool)
        if not humans.any():
            raise AicdError("per-language standardisation: the training rows hold no human code to standardise on")
        self.pooled_ = _moments(values[humans])
        self.by_language_ = {}
        self.humans_ = {}
        for language in sorted(set(languages[humans])):
            mask = humans & (languages == language)
            self.humans_[language] = int(mask.sum())
            if mask.sum() >= self.min_humans:
                self.by_language_[language] = _moments(values[mask])
        return self

    def transform(self, values: np.ndarray, languages) -> np.ndarray:
        values = np.asarray(values, dtype=np.float64)
        out = np.empty_like(values)
        languages = np.asarray([str(x) for x in languages], dtype=object)
        for language in set(languages):
            mask = languages == language
            mean, std = self.by_language_.get(language, self.pooled_)
            out[mask] = (values[mask] - mean) / std
        return out

    def report(self) -> dict:
        """Human training rows per language, and which languages took the pooled statistics."""
        return {"min_humans": self.min_humans, "human_rows": dict(self.humans_),
                "pooled": sorted(set(self.humans_) - set(self.by_language_))}
