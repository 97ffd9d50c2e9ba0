"""Out-of-distribution protocol: train on the trial data only, test where it differs.

Splits (each a dict train/validation/test of sample tables; test rows carry `subset`):
- `in_distribution`: a seeded stratified (label x language) test share of the trial data;
- `codeaid`: the trial rows train (less the validation groups below), the CodeAid interview
  answers (nine languages) test, `subset` = language;
- `leave_one_language_out(lang)`: train on the other trial languages, test on `lang`;
- `leave_one_family_out(family)`: every generator of `family` plus a matching, seeded share of
  human rows (same count per language) is the test set.

Validation is always *group*-held-out, never random rows: the trial data's long-tail families
(the families outside the six largest; in the trial data IBM-Granite, Gemma, OpenAI, Mistral
and Gemini) and a
matching share of human rows. Model selection and threshold calibration therefore see
generators the training rows lack, as a deployed detector would."""

from __future__ import annotations

import logging

import numpy as np
import pandas as pd

from ..codetools.codetext import clean_code
from ..common.errors import AicdError
from ..data.families import HUMAN, family_of, is_human
from ..data.schema import LANGUAGES, canonical_language, content_id

log = logging.getLogger("aicd.splits")

TRIAL_LANGUAGES = ("Python", "Java", "C++")
N_LARGEST = 6
# protocol in_distribution's test share where the ood entry gives no test_fraction (a constant,
# not a schema default, for the reason aicd.splits.loco.VALIDATION_FRACTION gives)
TEST_FRACTION = 0.2


def trial_samples(raw: pd.DataFrame) -> pd.DataFrame:
    """Sample table from the SemEval trial subset. Its `label` column is inverted relative to
    the published map (see the data README), so human/machine comes from `generator`."""
    missing = {"code", "generator", "language"} - set(raw.columns)
    if missing:
        raise AicdError(f"trial table lacks columns {sorted(missing)}")
    raw = _with_code(raw, "trial")
    out = pd.DataFrame({
        "code": raw["code"].astype(str).values,
        "label": np.where(raw["generator"].map(is_human), "human", "machine"),
        "language": raw["language"].map(canonical_language).values,
        "generator": raw["generator"].values,
        "family": raw["generator"].map(family_of).values,
        "domain": "algorithmic",
        "source": "semeval2026-task13-trial",
        "problem_id": None,
    })
    out.insert(0, "id", [content_id(lang, code) for lang, code in zip(out["language"], out["code"])])
    return out


def codeaid_samples(raw: pd.DataFrame) -> pd.DataFrame:
    """Sample table from the CodeAid interview answers: only rows in the benchmark's nine
    languages (TypeScript, Kotlin, Swift, SQL, CSS, Dart, Dockerfile are dropped)."""
    raw = _with_code(raw, "CodeAid")
    lang = raw["language"].map(canonical_language)
    keep = raw[lang.isin(LANGUAGES).values].copy()
    lang = lang[lang.isin(LANGUAGES)]
    out = pd.DataFrame({
        "code": keep["code"].astype(str).values,
        "label": keep["label"].values,
        "language": lang.values,
        "generator": keep["generator"].values,
        "family": [HUMAN if lab == "human" else family_of(g) for lab, g in zip(keep["label"], keep["generator"])],
        "domain": "algorithmic",
        "source": "codeaid-interview-answers",
        "problem_id": keep["problem_id"].astype(str).values if "problem_id" in keep else None,
    })
    out.insert(0, "id", [content_id(lang, code) for lang, code in zip(out["language"], out["code"])])
    return out


def _with_code(raw: pd.DataFrame, what: str) -> pd.DataFrame:
    """Rows with usable code (codetext.clean_code, as ingest decides); the others are dropped and
    counted by reason (a missing value is never read as the text "None")."""
    reasons = raw["code"].map(lambda c: clean_code(c)[1])
    if reasons.notna().any():
        counts = ", ".join(f"{k} {v}" for k, v in sorted(reasons.value_counts().items()))
        log.warning("%s: %d of %d rows have no code and are left out (%s)", what, int(reasons.notna().sum()),
                    len(raw), counts)
    return raw[reasons.isna().values]


def largest_families(samples: pd.DataFrame, k: int = N_LARGEST) -> list[str]:
    """The k families with most machine rows; ties broken by name, so row order never matters."""
    counts = samples.loc[samples["label"] == "machine", "family"].value_counts()
    return sorted(counts.index, key=lambda f: (-counts[f], f))[:k]


def _matching_humans(samples: pd.DataFrame, machine: pd.DataFrame, seed: int, exclude=()) -> pd.Index:
    """Human rows, per language as many as `machine` has there (fewer if not available),
    chosen by a seeded shuffle of the rows in id order."""
    rng = np.random.default_rng(seed)
    humans = samples[(samples["label"] == "human") & ~samples.index.isin(exclude)].sort_values("id")
    picked = []
    for lang, count in sorted(machine["language"].value_counts().items()):
        pool = humans.index[humans["language"] == lang]
        picked.extend(pool[rng.permutation(len(pool))[: min(count, len(pool))]])
    return pd.Index(picked)


def _validation_index(train: pd.DataFrame, seed: int, largest: list[str]) -> pd.Index:
    """Group-held-out validation rows: the long-tail families (outside `largest`, the six
    largest of the whole trial data) plus matching human rows."""
    machine = train[(train["label"] == "machine") & ~train["family"].isin(largest)]
    if machine.empty:
        raise AicdError("no long-tail family left in train for a group-held-out validation split")
    return machine.index.append(_matching_humans(train, machine, seed + 1))


def _tables(trial: pd.DataFrame, pool: pd.DataFrame, test: pd.DataFrame, seed: int, subset) -> dict[str, pd.DataFrame]:
    val_idx = _validation_index(pool, seed, largest_families(trial))
    test = test.copy()
    test["subset"] = subset if isinstance(subset, str) else subset.values
    return {
        "train": pool.drop(index=val_idx).reset_index(drop=True),
        "validation": pool.loc[val_idx].reset_index(drop=True),
        "test": test.reset_index(drop=True),
    }


def in_distribution(trial: pd.DataFrame, seed: int = 0, test_fraction: float = TEST_FRACTION) -> dict[str, pd.DataFrame]:
    from .stratified import assign_splits

    split = assign_splits(trial, ["label", "language"], {"train": 1 - test_fraction, "test": test_fraction}, seed)
    test = trial[split == "test"]
    return _tables(trial, trial[split == "train"], test, seed, test["language"])


def codeaid(trial: pd.DataFrame, codeaid_rows: pd.DataFrame, seed: int = 0) -> dict[str, pd.DataFrame]:
    return _tables(trial, trial, codeaid_rows, seed, codeaid_rows["language"])


def leave_one_language_out(trial: pd.DataFrame, language: str, seed: int = 0) -> dict[str, pd.DataFrame]:
    if language not in set(trial["language"]):
        raise AicdError(f"language {language!r} has no trial rows")
    held = trial["language"] == language
    return _tables(trial, trial[~held], trial[held], seed, language)


def leave_one_family_out(trial: pd.DataFrame, family: str, seed: int = 0) -> dict[str, pd.DataFrame]:
    machine = trial[(trial["label"] == "machine") & (trial["family"] == family)]
    if machine.empty:
        raise AicdError(f"family {family!r} has no machine rows in the trial data")
    test_idx = machine.index.append(_matching_humans(trial, machine, seed))
    return _tables(trial, trial.drop(index=test_idx), trial.loc[test_idx], seed, family)


def all_splits(trial: pd.DataFrame, codeaid_rows: pd.DataFrame | None, seed: int = 0) -> dict[str, dict[str, pd.DataFrame]]:
    """Every split of the protocol by name: in_distribution, codeaid, lolo:<lang>, lofo:<family>."""
    splits = {"in_distribution": in_distribution(trial, seed)}
    if codeaid_rows is not None:
        splits["codeaid"] = codeaid(trial, codeaid_rows, seed)
    for lang in TRIAL_LANGUAGES:
        splits[f"lolo:{lang}"] = leave_one_language_out(trial, lang, seed)
    for fam in largest_families(trial):
        splits[f"lofo:{fam}"] = leave_one_family_out(trial, fam, seed)
    return splits
