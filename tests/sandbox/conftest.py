"""Sandbox tests run against real engines with the real sandbox image: Docker's daemon, and
rootless Podman (the cluster mode) through its Docker-compatible service, both through the
`docker` SDK.

The engine-bound fixtures (`engine`, `sandbox_image`, `pool`) are parametrized over the engines
of AICD_SANDBOX_ENGINES (default `docker,podman`), so each test that uses one runs on each; a
session holds one pool per engine. Tests whose subject is not the engine carry ONE_ENGINE
(sandbox_support.py) and run on one engine only: rootless Podman where it is set up (its
containers start in a second; Docker's vfs copies the image for each), else the first of the list. Run as root (CI), the Podman side is rootless all the same: a Podman service
is started as the unprivileged user AICD_PODMAN_USER (default `aicd-podman`, with an
/etc/subuid range; .ci/run makes it), and the image Docker built is copied into that user's
storage once (`docker save | podman load` through the SDK, about a minute on vfs). Run as an
ordinary user, the pool starts that user's own service.

CI (.ci/run) installs docker.io and podman and builds the image before the tests; on a machine
without them these tests skip with a message naming what is missing (under CI=true they fail:
tests/components.py)."""

from __future__ import annotations

import os
import pwd
import shutil

import pytest
from aicd.sandbox.engine import SERVICE_PREFIX, available, connect, connect_podman, scratch_folder, start_podman_service
from aicd.sandbox.images import CONTEXT, LOCAL_BASE, context_tag, copy_image, image_exists, remove_stale_sandbox_images
from aicd.sandbox.pool import Container, SandboxPool
from components import require
from sandbox_support import ENGINES, PODMAN_USER, SPARES, TEST_LIMITS

INSTALL = {"docker": "apt-get install docker.io and start dockerd (.ci/run does both)",
           "podman": f"apt-get install podman uidmap, and (as root) a user {PODMAN_USER} with an /etc/subuid range "
                     "(.ci/run makes both)"}


def image_tag() -> str:
    return os.environ.get("AICD_SANDBOX_IMAGE") or context_tag(CONTEXT, LOCAL_BASE)


def rootless_podman():
    """Rootless Podman: as root, a service run as PODMAN_USER (a root process talks to it over
    its socket); as anyone else, the user's own (the pool starts one where none answers)."""
    if os.geteuid() != 0:
        require(available("podman"), "sandbox test: rootless Podman", INSTALL["podman"])
        return connect_podman(), None
    try:
        pwd.getpwnam(PODMAN_USER)
    except KeyError:
        require(False, f"sandbox test: the user {PODMAN_USER} for rootless Podman", INSTALL["podman"])
    require(shutil.which("podman") is not None, "sandbox test: Podman", INSTALL["podman"])
    scratch = scratch_folder(SERVICE_PREFIX)  # not under pytest's root-only folder; removed if this session is killed
    shutil.chown(scratch, PODMAN_USER)
    service, url, _ = start_podman_service(["runuser", "-u", PODMAN_USER, "--"], scratch)
    eng = connect_podman(url)
    eng.service, eng.scratch = service, scratch  # stopped and removed with the engine
    return eng, url


@pytest.fixture(scope="session", params=ENGINES)
def engine(request):
    """A connected engine, once per engine of AICD_SANDBOX_ENGINES."""
    name = request.param
    url = None
    if name == "docker":
        require(available("docker"), "sandbox test: a Docker daemon", INSTALL["docker"])
        eng = connect("docker")
    else:
        eng, url = rootless_podman()
        assert eng.rootless, f"the Podman side must be rootless (the cluster mode): {eng.describe()}"
    # What a subprocess (python -m aicd.sandbox) needs to reach the same engine; os.environ stays as it is.
    eng.test_env = {**os.environ, "CONTAINER_HOST": url} if url else dict(os.environ)
    yield eng
    eng.close()


@pytest.fixture(scope="session")
def sandbox_image(engine):
    tag = image_tag()
    if not image_exists(tag, engine) and engine.name == "podman" and available("docker"):
        docker_side = connect("docker")
        try:
            if image_exists(tag, docker_side):
                remove_stale_sandbox_images(tag, LOCAL_BASE, engine)  # earlier contexts' copies: disk
                copy_image(tag, docker_side, engine)  # Podman loads what Docker built (~1 min)
        finally:
            docker_side.close()
    require(image_exists(tag, engine), f"sandbox test: the image {tag} on {engine.name}",
            f"python -m aicd.sandbox images --engine {engine.name} (make test does it for Docker; the tests copy "
            "it to Podman)")
    return tag


@pytest.fixture(scope="session")
def pool(engine, sandbox_image):
    with SandboxPool(sandbox_image, size=1, recycle_after=500, limits=TEST_LIMITS, engine=engine) as p:
        yield p


@pytest.fixture(scope="session")
def spare(engine, sandbox_image, pool):
    """A container beside the session pool's, with its limits, used directly (no recycling after
    a breach) by the tests that need the very container a program used, or a second one: one per
    session, as each costs 10-40 s to make and as long to remove on Docker's vfs driver."""
    box = Container(sandbox_image, pool.limits, job="test-spare", pool_id=SPARES, engine=engine)
    yield box
    box.remove()


@pytest.fixture(scope="session")
def pair(engine, sandbox_image, pool, spare):
    """Two containers of one pool of two, used directly (a breach here does not recycle them: on
    Docker's vfs each new container costs 10-40 s, and the runner must answer in the very
    container a hostile program used): a fresh one, and the session's spare of the same pool.
    The session pool is another pool: another job of the same user on the same node."""
    box = Container(sandbox_image, pool.limits, job="test-pair", pool_id=SPARES, engine=engine)
    try:
        yield box, spare
    finally:
        box.remove()
