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


def run(box, language, code, tests=RUN):
    """One program in a container used directly (aicd.sandbox.pool.Container)."""
    from aicd.sandbox.languages import job_for

    return box.run(job_for(language, code, tests))


def still_fine(box):
    """The next program in the same container runs and prints: the runner answers."""
    after = run(box, *HELLO)
    assert after["status"] == "ok" and stdout(after).strip() == "still fine", after


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


class HostMemory:
    """The host's kernel memory while a program runs, sampled every 10 ms from /proc/meminfo (the
    kernel's own count, which no container can change): how far Slab (task structs, page tables'
    bookkeeping, socket and file objects) rose above its level at the start, how far MemAvailable
    fell, and the longest this sampling thread waited for its 10 ms sleep (a host starved of CPU).
    A context manager: the figures are read after it ends."""

    def __init__(self):
        import threading

        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._sample, daemon=True)

    @staticmethod
    def meminfo_mb() -> dict:
        with open("/proc/meminfo") as fh:
            return {line.split(":")[0]: int(line.split()[1]) / 1024 for line in fh}

    def _sample(self):
        import time

        last = time.monotonic()
        while not self._stop.wait(0.01):
            now = time.monotonic()
            self.longest_wait_s, last = max(self.longest_wait_s, now - last), now
            seen = self.meminfo_mb()
            self.slab_rise_mb = max(self.slab_rise_mb, seen["Slab"] - self._start["Slab"])
            self.available_fall_mb = max(self.available_fall_mb, self._start["MemAvailable"] - seen["MemAvailable"])

    def __enter__(self):
        self._start = self.meminfo_mb()
        self.slab_rise_mb = self.available_fall_mb = self.longest_wait_s = 0.0
        self._thread.start()
        return self

    def __exit__(self, *exc):
        self._stop.set()
        self._thread.join()


class SandboxCpu:
    """The CPU time the host's kernel counts for what a container's programs did while a job ran,
    read on the host apart from the runner's own count: the container's init (tini) and the
    runner reap every process of a program (the runner waits for the program it started, tini for
    the orphans), and what a process has reaped is its cutime + cstime, sums the kernel keeps
    exactly and rounds to clock ticks only when read. Less the job's compile step, which the
    result reports (`compiled_s`, 0 where a runner does not say). A context manager: `seconds`
    once it ends."""

    CLK_TCK = os.sysconf("SC_CLK_TCK")

    def __init__(self, box):
        init = box.engine.client.api.inspect_container(box.id)["State"]["Pid"]
        with open(f"/proc/{init}/task/{init}/children") as fh:
            self.pids = [init, *map(int, fh.read().split())]  # tini, and its one child: the runner

    def reaped_s(self) -> float:
        total = 0
        for pid in self.pids:
            with open(f"/proc/{pid}/stat") as fh:
                fields = fh.read().rsplit(")", 1)[1].split()
            total += int(fields[13]) + int(fields[14])
        return total / self.CLK_TCK

    def __enter__(self):
        self._start = self.reaped_s()
        return self

    def __exit__(self, *exc):
        self.seconds = self.reaped_s() - self._start

    def of_run(self, result) -> float:
        """The run step's share of `seconds`: the job's less its compile step's."""
        return self.seconds - ((result.get("compile") or {}).get("cpu_s") or 0.0)
