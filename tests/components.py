"""The one rule for the real components a test needs (Docker, SLURM, headless Chromium, a C
compiler, the shared data): outside CI a missing one is a skip that names it and the command
that installs it; under CI=true (.ci/run provides everything) it is a failure."""

from __future__ import annotations

import os

import pytest


def in_ci() -> bool:
    return os.environ.get("CI", "").lower() == "true"


def require(available: bool, what: str, install: str) -> None:
    """Skip (developer machine) or fail (CI) unless `available`; `install` says how to get it."""
    if available:
        return
    message = f"{what} is missing: {install}"
    if in_ci():
        pytest.fail(f"{message} (CI=true: .ci/run must provide it)")
    pytest.skip(message, allow_module_level=True)  # also from a conftest or at import


def require_extra(extra: str, *modules: str) -> None:
    """require() for the modules an optional extra of pyproject.toml installs (`encoders`:
    torch, transformers, ...), naming the extra and its install command."""
    import importlib.util

    missing = [m for m in modules if importlib.util.find_spec(m) is None]
    require(not missing, f"{', '.join(missing)} (the {extra} extra)", f"pip install -e '.[{extra}]' (make setup does)")
