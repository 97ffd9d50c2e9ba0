"""Sandbox tests run against the real Docker daemon with the real sandbox image.

CI (.ci/run) installs docker.io, starts dockerd and builds the images before the tests; on a
machine without a daemon these tests skip with a message naming what is missing (under CI=true
they fail: tests/components.py)."""

import os

import pytest
from components import require

from aicd.sandbox.images import CONTEXT, LOCAL_BASE, context_tag, image_exists
from aicd.sandbox.pool import Limits, SandboxPool, docker_available


@pytest.fixture(scope="session")
def sandbox_image():
    require(docker_available(), "sandbox test: a Docker daemon",
            "apt-get install docker.io and start dockerd (.ci/run does both)")
    tag = os.environ.get("AICD_SANDBOX_IMAGE") or context_tag(CONTEXT, LOCAL_BASE)
    require(image_exists(tag), f"sandbox test: the image {tag}", "python -m aicd.sandbox images (make test does it)")
    return tag


@pytest.fixture(scope="session")
def pool(sandbox_image):
    limits = Limits(wall_s=3.0, compile_s=60.0, output_bytes=64 * 1024, memory_mb=320, pids=64, work_mb=128, tmp_mb=32)
    with SandboxPool(sandbox_image, size=1, recycle_after=500, limits=limits) as p:
        yield p
