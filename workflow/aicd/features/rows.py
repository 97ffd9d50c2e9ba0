"""What a featurizer reads from its input: a table with `code` (and `language`) columns, or,
for the older call style, a plain list of code strings (and a list of languages)."""

from __future__ import annotations

import pandas as pd

from ..common.errors import AicdError


def codes_of(rows) -> list[str]:
    if isinstance(rows, pd.DataFrame):
        if "code" not in rows.columns:
            raise AicdError(f"a featurizer needs a 'code' column; the table has {list(rows.columns)}")
        return rows["code"].tolist()
    return list(rows)


def languages_of(rows, languages=None) -> list:
    """The language of each row: the table's `language` column (null where absent)."""
    if languages is not None:
        return list(languages)
    if isinstance(rows, pd.DataFrame):
        return rows["language"].tolist() if "language" in rows.columns else [None] * len(rows)
    raise AicdError("AST features need each row's language: pass a table with a 'language' column")


class JobThreads:
    """A featurizer's `threads` is the applying job's own setting: never pickled, 1 once loaded."""

    def __getstate__(self):
        return {k: v for k, v in self.__dict__.items() if k != "threads"}

    def __setstate__(self, state):
        self.__dict__.update(state)
        self.threads = 1
