"""A causal LM's zero-shot criteria as oriented, standardised columns (kind `lm_criteria`).

The token statistics of the `lm_stats` feature set (aicd.features.lm_stats: one forward pass per
text, cached per text) turned into the zero-shot panel's criteria (aicd.lm.stats.criterion:
loglik, logrank, entropy, lrr, fast_detectgpt), each oriented as the panel orients it (higher =
more machine-like), then, with `standardise: language` (the default), standardised on the human
training rows of the row's language (aicd.features.standardise): a language's typical human
program scores 0, whatever the language's own perplexity. Columns are named `lm:<criterion>`,
which is how the `fused` detector finds the columns whose direction it keeps. With `text:
no_comments` the LM reads the code without its comments (what the code says, not what its
author wrote about it). A text the model cannot score (under two tokens) reads 0, a typical
human program."""

from __future__ import annotations

import numpy as np

from ..common.errors import AicdError
from ..common.params import Param, ParamSpec
from .base import Featurizer, register
from .lm_stats import PARAMS as LM_PARAMS
from .lm_stats import LMStatsFeaturizer
from .standardise import MIN_HUMANS, LanguageStandardiser, human_rows

PREFIX = "lm:"
DIRECTED = ("loglik", "logrank", "entropy", "lrr", "fast_detectgpt")  # one model, one pass: no binoculars

PARAMS = ParamSpec("the lm_criteria feature set", (
    *[p for p in LM_PARAMS.params if p.name != "rows"],
    Param("criteria", (list,), list(DIRECTED), "ours", f"the criteria, each a column (of {', '.join(DIRECTED)})"),
    Param("standardise", (str,), "language", "ours", "`language`: standardised on the human training rows of "
          "the row's language (aicd.features.standardise); `none`: as the criterion gives it",
          choices=("language", "none")),
    Param("min_humans", (int,), MIN_HUMANS, "ours", "a language with fewer human training rows takes the pooled "
          "statistics", minimum=2),
    Param("text", (str,), "raw", "ours", "what the LM reads: the code as written (`raw`) or without its comments "
          "(`no_comments`: aicd.codetools.perturb.no_comments; docstrings are strings and stay)",
          choices=("raw", "no_comments")),
))


@register("lm_criteria")
class LMCriteriaFeaturizer(Featurizer):
    max_threads = 8
    environment = "neural"
    named_columns = True
    verify_rows = 0  # re-featurizing stored rows would load the LM (as lm_stats)
    stored_types = ("aicd.features.lm_stats.LMStatsFeaturizer", "aicd.features.standardise.LanguageStandardiser")
    PARAMS = PARAMS

    def __init__(self, seed: int = 0, criteria: list | None = None, standardise: str = "language",
                 min_humans: int = MIN_HUMANS, text: str = "raw", **lm_params) -> None:
        self.criteria = list(criteria or DIRECTED)
        self.text = text
        unknown = [c for c in self.criteria if c not in DIRECTED]
        if unknown or not self.criteria:
            raise AicdError(f"lm_criteria params.criteria: {unknown or 'none'}; use some of {', '.join(DIRECTED)}")
        self.stats = LMStatsFeaturizer(seed, **lm_params)
        self.standardiser = LanguageStandardiser(min_humans) if standardise == "language" else None

    # the features job sets these on the featurizer it builds: the statistics' featurizer reads them
    @property
    def threads(self) -> int:
        return self.stats.threads

    @threads.setter
    def threads(self, value: int) -> None:
        self.stats.threads = value

    @property
    def cache_dir(self):
        return self.stats.cache_dir

    @cache_dir.setter
    def cache_dir(self, value) -> None:
        self.stats.cache_dir = value

    @property
    def feature_names(self) -> list[str]:
        return [PREFIX + c for c in self.criteria]

    def _criteria(self, rows) -> np.ndarray:
        from ..lm.stats import criterion

        if self.text == "no_comments":
            from ..codetools.perturb import no_comments

            rows = rows.assign(code=[no_comments(c, lang) for c, lang in zip(rows["code"], _languages(rows))])
        stats = self.stats.transform(rows)
        return np.column_stack([criterion(c, stats) for c in self.criteria]) if len(stats) \
            else np.zeros((0, len(self.criteria)))

    def _finish(self, values: np.ndarray, rows) -> np.ndarray:
        if self.standardiser is not None and len(values):
            values = self.standardiser.transform(values, _languages(rows))
        return np.where(np.isfinite(values), values, 0.0).astype(np.float32)

    def fit_transform(self, rows) -> np.ndarray:
        values = self._criteria(rows)
        if self.standardiser is not None:
            scored = np.isfinite(values).all(axis=1)
            humans = human_rows(rows) & scored
            self.standardiser.fit(values[scored] if scored.any() else values, np.asarray(_languages(rows))[scored],
                                  humans[scored])
        return self._finish(values, rows)

    def transform(self, rows) -> np.ndarray:
        return self._finish(self._criteria(rows), rows)

    def report_fields(self, sums: dict) -> dict:
        out = {"criteria": self.criteria, "text": self.text, "lm": self.stats.report_fields(sums)}
        if self.standardiser is not None:
            out["standardised_on_humans"] = self.standardiser.report()
        return out

    def describe(self) -> dict:
        return {**self.stats.describe(), "kind": self.kind, "criteria": self.criteria, "text": self.text,
                "standardise": "language" if self.standardiser is not None else "none"}


def _languages(rows) -> list:
    if "language" not in getattr(rows, "columns", ()):
        raise AicdError("feature set lm_criteria standardises per language: it needs a table with a 'language' column")
    return rows["language"].tolist()
