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


# `make test` runs the suite on two pytest-xdist workers (--dist loadgroup). Tests that share a
# session or module fixture stay on one worker (one demo run, one classical slice, one sandbox
# pool, one SLURM cluster); the rest spread. The slowest groups are collected first so the two
# workers finish together (longest first); the figures are in DEVELOPERS.md, "The test suite's time".
SHARED_FIXTURE_GROUPS = {"demo_run": "demo", "slice_run": "slice"}
DIRECTORY_GROUPS = ("sandbox", "encoders", "llm")
SLOWEST_FIRST = ("test_workflow_image.py", "slice", "demo", "sandbox", "test_full_build.py",
                 "test_llm_workflow.py", "encoders", "test_minimal_config.py",
                 "test_ood_plan.py", "test_empty_inputs.py", "llm")


def xdist_groups(items) -> dict[str, str]:
    """Test file -> its group: a file that uses a shared fixture joins that fixture's group."""
    groups = {}
    for item in items:
        path = Path(str(item.fspath))
        own = path.parent.name if path.parent.name in DIRECTORY_GROUPS else path.name
        shared = [g for fixture, g in SHARED_FIXTURE_GROUPS.items() if fixture in item.fixturenames]
        groups[str(path)] = shared[0] if shared else groups.get(str(path), own)
    return groups


def pytest_collection_modifyitems(config, items):
    groups = xdist_groups(items)
    for item in items:
        if not item.get_closest_marker("xdist_group"):
            item.add_marker(pytest.mark.xdist_group(groups[str(item.fspath)]))
    rank = {group: i for i, group in enumerate(SLOWEST_FIRST)}
    items.sort(key=lambda item: rank.get(groups[str(item.fspath)], len(rank)))  # stable: file order within a group
