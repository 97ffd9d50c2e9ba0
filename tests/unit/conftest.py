"""Unit tests run with one BLAS thread in the test process. `make test` runs two xdist workers
on two cores: OpenBLAS's own two threads per worker then wait on each other, and an exact SVD
took two to ten times as long as on one thread (DEVELOPERS.md, "The test suite's time"). The
code's own threads are processes (aicd.common.parallel) and subprocesses, which this does not reach;
results do not depend on it (the tests that compare thread counts start processes)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from threadpoolctl import threadpool_limits

# The unit tests live in folders named for what they test (tests/unit/<subpackage>/test_*.py; no
# __init__.py, so pytest's "prepend" import mode puts each test file's own folder on sys.path).
# The helpers that tests of several folders share stay here in tests/unit (fitted_task_helpers,
# untrusted_plugins, nine_languages): this folder goes on sys.path so that they import by name
# from any of them, and so that a plug-in named "untrusted_plugins:Class" in a spec loads.
UNIT = Path(__file__).resolve().parent
if str(UNIT) not in sys.path:
    sys.path.insert(0, str(UNIT))


@pytest.fixture(scope="session", autouse=True)
def one_blas_thread():
    with threadpool_limits(limits=1, user_api="blas"):
        yield


# The demo's validated config and its model registry, read once per module by the plan's and the
# run records' tests.
@pytest.fixture(scope="module")
def demo(repo):
    import yaml
    from aicd.config import validate_config

    config = yaml.safe_load((repo / "config" / "demo.yaml").read_text())
    validate_config(config)
    return config


@pytest.fixture(scope="module")
def models(repo, demo):
    from aicd.generate.registry import load_registry

    return load_registry(repo / demo["registry"])
