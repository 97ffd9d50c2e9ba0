"""Unit tests run with one BLAS thread in the test process. `make test` runs two xdist workers
on two cores: OpenBLAS's own two threads per worker then wait on each other, and an exact SVD
took two to ten times as long as on one thread (DEVELOPERS.md, "The test suite's time"). The
code's own threads are processes (aicd.common.parallel) and subprocesses, which this does not reach;
results do not depend on it (the tests that compare thread counts start processes)."""

from __future__ import annotations

import pytest
from threadpoolctl import threadpool_limits


@pytest.fixture(scope="session", autouse=True)
def one_blas_thread():
    with threadpool_limits(limits=1, user_api="blas"):
        yield
