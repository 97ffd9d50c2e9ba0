"""Shared fixtures. Tests run offline: the Hub and litellm's cost map are never fetched."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("HF_DATASETS_OFFLINE", "1")
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
os.environ.setdefault("MPLBACKEND", "Agg")

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "workflow"))

TRIAL = Path(os.environ.get(
    "AICD_TRIAL_DATA",
    REPO.parent / "shared" / "data" / "semeval2026-task13-trial" / "task_a_trial_subset.parquet",
))


@pytest.fixture(scope="session")
def repo() -> Path:
    return REPO


@pytest.fixture(scope="session")
def trial_path() -> Path:
    if not TRIAL.is_file():
        pytest.skip(
            f"real-data test: the SemEval-2026 Task 13 trial subset is not at {TRIAL}; it ships in "
            "../shared/data beside the repository (CI has it), or set AICD_TRIAL_DATA"
        )
    return TRIAL


@pytest.fixture(scope="session")
def trial_raw(trial_path):
    import pandas as pd

    return pd.read_parquet(trial_path)
