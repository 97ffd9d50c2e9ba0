"""`stylometry`: the columns the `robust` detector reads (aicd.features.stylometry: line
lengths, spacing, punctuation, identifiers, ...) as a feature set any detector can use.

`text: invariant` computes them on aicd.codetools.perturb.invariant_text, the one text every
rewrite of aicd.codetools.perturb maps to (no comments, bound names canonical, no indentation,
blank lines or trailing spaces, block braces on their own line): no rewrite can move a column.
What is left to read is how code is written inside its lines (spacing around operators and
commas, statement packing, line lengths), punctuation and characters, the names the code does
not bind, literals; a code formatter would change some of it, the rewrites do not.

Every column comes twice: its value, 0 where it is undefined (a ratio over nothing: no commas,
no comments), and an indicator of that, so "no braces" never reads as "never a brace on its own
line" whichever languages the training rows had. Nothing is learnt (a fitted featurizer is the
class and its setting), except with `standardise: language`: each value column then becomes its
distance from the human training rows of the row's language, in their standard deviations
(aicd.features.standardise: a language's typical human program is the zero; a language with too
few human training rows takes the pooled human statistics), and an undefined value is 0 there."""

from __future__ import annotations

import numpy as np
import pandas as pd

from ..codetools.perturb import invariant_text
from ..common.errors import AicdError
from ..common.parallel import chunked, map_chunks
from ..common.params import Param, ParamSpec
from .base import Featurizer, register
from .rows import JobThreads, codes_of
from .standardise import MIN_HUMANS, LanguageStandardiser, human_rows
from .stylometry import FEATURE_NAMES, stylometry

TEXTS = ("raw", "invariant")


def _values(pairs: list, text: str) -> np.ndarray:
    codes = [invariant_text(code, lang) for code, lang in pairs] if text == "invariant" else [c for c, _ in pairs]
    return np.asarray([stylometry(c) for c in codes], dtype=np.float64).reshape(len(pairs), len(FEATURE_NAMES))


@register("stylometry")
class StylometryFeaturizer(JobThreads, Featurizer):
    """fit_transform(rows) / transform(rows): rows is a table with `code` (and, for
    `text: invariant`, `language`); rows are computed over `threads` processes."""

    CHUNK = 1_000
    max_threads = 8
    named_columns = True
    stored_types = ("aicd.features.standardise.LanguageStandardiser",)
    PARAMS = ParamSpec("the stylometry feature set", (
        Param("text", (str,), "raw", "ours",
              "what the columns are computed on: the code as written (`raw`, what `robust` reads) or its "
              "invariant text (`invariant`: no comments, bound names canonical, no indentation, blank lines or "
              "trailing spaces, block braces on their own line; no rewrite of aicd.codetools.perturb moves a column)",
              choices=TEXTS),
        Param("standardise", (str,), "none", "ours",
              "`language`: every value column standardised on the human training rows of the row's language "
              "(aicd.features.standardise); `none`: as computed", choices=("none", "language")),
        Param("min_humans", (int,), MIN_HUMANS, "ours",
              "standardise: language: a language with fewer human training rows takes the pooled statistics",
              minimum=2),
    ))

    def __init__(self, text: str = "raw", standardise: str = "none", min_humans: int = MIN_HUMANS,
                 seed: int = 0) -> None:
        if text not in TEXTS:
            raise ValueError(f"text must be one of {', '.join(TEXTS)}, got {text!r}")
        self.text = text
        self.standardise = standardise
        self.standardiser = LanguageStandardiser(min_humans) if standardise == "language" else None
        self.threads = 1

    def _pairs(self, rows, need_language: bool = False) -> list:
        codes = codes_of(rows)
        if self.text == "raw" and not need_language:
            return [(code, None) for code in codes]
        if not isinstance(rows, pd.DataFrame) or "language" not in rows.columns:
            why = "the invariant text is read with the language's grammar" if self.text != "raw" \
                else "standardise: language reads each row's language"
            raise AicdError(f"feature set stylometry needs each row's language (a 'language' column): {why}")
        return list(zip(codes, rows["language"].tolist()))

    def _raw_values(self, pairs: list) -> np.ndarray:
        if not pairs:
            return np.zeros((0, len(FEATURE_NAMES)))
        return np.vstack(list(map_chunks(_values, chunked(pairs, self.CHUNK), self.threads, self.text)))

    def _matrix(self, values: np.ndarray, pairs: list) -> np.ndarray:
        undefined = np.isnan(values)
        if getattr(self, "standardiser", None) is not None and len(values):
            values = self.standardiser.transform(values, [lang for _, lang in pairs])
        return np.hstack([np.where(undefined, 0.0, values), undefined]).astype(np.float32)

    def transform(self, rows) -> np.ndarray:
        pairs = self._pairs(rows, getattr(self, "standardiser", None) is not None)
        return self._matrix(self._raw_values(pairs), pairs)

    def fit_transform(self, rows) -> np.ndarray:
        if getattr(self, "standardiser", None) is None:
            return self.transform(rows)
        pairs = self._pairs(rows, True)
        values = self._raw_values(pairs)
        self.standardiser.fit(values, [lang for _, lang in pairs], human_rows(rows))
        return self._matrix(values, pairs)

    @property
    def feature_names(self) -> list[str]:
        prefix = "stylometry" if self.text == "raw" else f"stylometry_{self.text}"
        return [f"{prefix}:{n}" for n in FEATURE_NAMES] + [f"{prefix}:{n}_undefined" for n in FEATURE_NAMES]

    def report_fields(self, column_sums: dict) -> dict:
        out = {"text": self.text}
        if getattr(self, "standardiser", None) is not None:
            out["standardised_on_humans"] = self.standardiser.report()
        return out
