"""Long-lived sandbox containers and a pool that runs programs through `docker exec`.

Creating a container on the vfs storage driver costs 10-40 s and an exec ~0.07 s, so each
worker keeps one container and execs the runner (containers/sandbox/runner.py) per program.
A container is recycled after `recycle_after` programs or any limit breach, and replaced
when it dies; the batch goes on, and every input gets a result row."""

from __future__ import annotations

import json
import logging
import subprocess
import threading
import uuid
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field

from ..errors import AicdError
from .languages import TOOLCHAINS, job_for

log = logging.getLogger(__name__)
BREACHES = ("timeout", "memory_limit", "output_limit", "sandbox_error")


@dataclass(frozen=True)
class Limits:
    wall_s: float = 5.0           # per test run
    compile_s: float = 30.0
    output_bytes: int = 1 << 20   # per stream
    memory_mb: int = 512          # container memory, swap capped at the same value
    pids: int = 128
    cpus: float = 1.0
    work_mb: int = 256            # the exec-enabled tmpfs work folder


def docker(*args: str, timeout: float = 120, input: str | None = None) -> subprocess.CompletedProcess:
    try:
        return subprocess.run(["docker", *args], capture_output=True, text=True, timeout=timeout, input=input)
    except FileNotFoundError:
        raise AicdError("the docker client is not installed (Debian: apt-get install docker.io)") from None


def docker_available() -> bool:
    try:
        return docker("info", "--format", "{{.ServerVersion}}", timeout=20).returncode == 0
    except (AicdError, subprocess.TimeoutExpired):
        return False


class Container:
    """One locked-down container: no network, read-only root, capped memory/pids/CPU,
    unprivileged user, no capabilities, no host paths, an exec-enabled tmpfs at /work."""

    def __init__(self, image: str, limits: Limits):
        self.image, self.limits = image, limits
        self.name = f"aicd-sbx-{uuid.uuid4().hex[:12]}"
        self.used = 0
        try:
            proc = self._start()
        except subprocess.TimeoutExpired:
            proc = subprocess.CompletedProcess([], 1, "", "docker run did not return within 300 s")
        if proc.returncode != 0:
            self.remove()  # a container that was created but did not start still holds a full image copy on vfs
            raise AicdError(f"cannot start a sandbox container from {image}: {proc.stderr.strip()[:300]}")

    def _start(self) -> subprocess.CompletedProcess:
        lim = self.limits
        return docker(
            "run", "-d", "--name", self.name, "--network", "none", "--read-only",
            "--tmpfs", f"/work:rw,exec,nosuid,size={lim.work_mb}m,uid=10001,gid=10001,mode=700",
            "--tmpfs", "/tmp:rw,exec,nosuid,size=64m,mode=1777",
            "--memory", f"{lim.memory_mb}m", "--memory-swap", f"{lim.memory_mb}m",
            "--pids-limit", str(lim.pids), "--cpus", str(lim.cpus),
            "--user", "10001:10001", "--cap-drop", "ALL", "--security-opt", "no-new-privileges",
            "--ulimit", "core=0", self.image, "sleep", "infinity", timeout=300)

    def run(self, job: dict) -> dict:
        self.used += 1
        lim = self.limits
        job = {**job, "limits": {"wall_s": lim.wall_s, "compile_s": lim.compile_s, "output_bytes": lim.output_bytes}}
        worst = lim.compile_s + lim.wall_s * max(1, len(job.get("tests") or [])) + 30
        try:
            proc = docker("exec", "-i", self.name, "python3", "/opt/aicd/runner.py", input=json.dumps(job), timeout=worst)
        except subprocess.TimeoutExpired:
            return {"status": "sandbox_error", "error": "runner did not answer in time", "compile": None, "tests": []}
        try:
            return json.loads(proc.stdout)
        except json.JSONDecodeError:
            return {"status": "sandbox_error", "error": (proc.stderr or proc.stdout).strip()[:300] or "no output",
                    "compile": None, "tests": []}

    def alive(self) -> bool:
        proc = docker("inspect", "-f", "{{.State.Running}}", self.name, timeout=30)
        return proc.returncode == 0 and proc.stdout.strip() == "true"

    def remove(self) -> None:
        try:
            docker("rm", "-f", self.name, timeout=600)
        except subprocess.TimeoutExpired:
            log.warning("removing container %s is taking long; the daemon goes on with it", self.name)


@dataclass
class SandboxPool:
    image: str
    size: int = 1
    recycle_after: int = 200
    limits: Limits = field(default_factory=Limits)

    def __post_init__(self):
        self._free: list[Container] = []
        self._lock = threading.Lock()
        self.started = 0  # containers created, for reports and tests

    def _take(self) -> Container:
        with self._lock:
            if self._free:
                return self._free.pop()
        self.started += 1
        return Container(self.image, self.limits)

    def _give(self, container: Container, result: dict) -> None:
        if result["status"] in BREACHES or container.used >= self.recycle_after or not container.alive():
            container.remove()  # recycled: the next program gets a fresh container
            return
        with self._lock:
            self._free.append(container)

    def run_one(self, language: str, code: str, tests: list[dict] | None = None) -> dict:
        if language not in TOOLCHAINS:
            return {"status": "sandbox_error", "error": f"no toolchain for language {language!r}", "compile": None, "tests": []}
        job = {**job_for(language, code), "tests": tests or []}
        for attempt in (1, 2):
            container = self._take()
            result = container.run(job)
            dead = result["status"] == "sandbox_error" and not container.alive()
            self._give(container, result)
            if not dead:
                return result
            log.warning("sandbox container died (attempt %d); replacing it", attempt)
        return result

    def run_many(self, items: list[tuple[str, str, list | None]], progress=None) -> list[dict]:
        """Results in input order; one per item, whatever happens."""
        def one(item):
            try:
                return self.run_one(*item)
            except AicdError as err:
                return {"status": "sandbox_error", "error": str(err), "compile": None, "tests": []}
            finally:
                if progress:
                    progress.update(1)

        with ThreadPoolExecutor(max_workers=self.size) as ex:
            return list(ex.map(one, items))

    def close(self) -> None:
        with self._lock:
            for c in self._free:
                c.remove()
            self._free.clear()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
