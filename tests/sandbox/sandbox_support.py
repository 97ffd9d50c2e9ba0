"""What the sandbox tests share besides fixtures: the engines under test and the marks and
limits that go with them (conftest.py holds the fixtures)."""

from __future__ import annotations

import os
import pwd
import shutil

import pytest
from aicd.sandbox.pool import Limits

ENGINES = tuple(e.strip() for e in os.environ.get("AICD_SANDBOX_ENGINES", "docker,podman").split(",") if e.strip())
PODMAN_USER = os.environ.get("AICD_PODMAN_USER", "aicd-podman")


def _one_engine() -> str:
    """The engine for tests whose subject is not the engine: AICD_SANDBOX_ONE_ENGINE, else
    rootless Podman where it is set up (a container starts in about a second on its overlay
    storage, against 10-40 s on Docker's vfs), else the first of ENGINES."""
    chosen = os.environ.get("AICD_SANDBOX_ONE_ENGINE")
    if chosen:
        return chosen
    if "podman" in ENGINES and shutil.which("podman"):
        if os.geteuid() != 0:
            return "podman"
        try:
            pwd.getpwnam(PODMAN_USER)  # as root, the tests' rootless Podman runs as this user
            return "podman"
        except KeyError:
            pass
    return ENGINES[0]


ONE_ENGINE = pytest.mark.parametrize("engine", [_one_engine()], indirect=True)
TEST_LIMITS = Limits(wall_s=3.0, compile_s=60.0, output_bytes=64 * 1024, memory_mb=320, pids=64, work_mb=128,
                     tmp_mb=32)
SPARES = "test-spares"  # the pool id of the containers the tests use directly, as of one pool of two
RUN = [{"stdin": ""}]  # run once on empty stdin, output not judged (with no tests a program is only built)
HELLO = ("Python", "print('still fine')\n")


def stdout(result, test=0):
    return result["tests"][test]["stdout"] if result["tests"] else ""


def run_once(engine, image, command, *, seccomp=True, user=None, binds=(), limits=None,
             timeout=600) -> tuple[int, str, str]:
    """(exit code, stdout, stderr) of one command in a sandbox container with the pool's
    settings (seccomp=False: the engine's default profile), through the SDK; as the program's
    user unless `user` says otherwise."""
    import uuid

    from aicd.sandbox.isolation import container_config, program_uid
    from aicd.sandbox.pool import AttachedStream, remove_container

    user = user or f"{program_uid(engine)}:{program_uid(engine)}"
    config = container_config(engine, image, limits or Limits(), {"aicd.sandbox": "1", "aicd.job": "test-once"},
                              command=list(command), seccomp=seccomp, user=user, binds=list(binds))
    config["HostConfig"]["AutoRemove"] = False  # its exit code is read after it ends
    api = engine.client.api
    ident = api.create_container_from_config(config, name=f"aicd-once-{uuid.uuid4().hex[:8]}")["Id"]
    try:
        stream = AttachedStream(engine, ident)
        api.start(ident)
        stream.close_stdin()
        code = api.wait(ident, timeout=timeout)["StatusCode"]
        assert stream.ended.wait(60), "the attach stream did not end with the container"
        lines = []
        while (line := stream.lines.get()) is not None:
            lines.append(line)
        stream.close()
        return code, "".join(lines), "\n".join(stream.stderr)
    finally:
        remove_container(engine, ident)
