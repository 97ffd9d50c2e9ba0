"""Long-lived sandbox containers and a pool that runs programs in them.

Creating a container on the vfs storage driver costs 10-40 s, so each worker keeps one. Its
main process is the trusted runner (containers/sandbox/runner.py --serve), whose stdin and
stdout the pool holds through the engine's attach stream (the `docker` SDK, on Docker or
Podman): one JSON job per line in, one result per line out. The runner starts as root with a
handful of capabilities, runs the program as an unprivileged user, and answers with the job's
nonce; a result without it, or from a container left unclean, is not trusted. A container is
recycled after `recycle_after` programs, any limit breach or any state the program left
behind, and replaced when it dies; the batch goes on, and every input gets a result row.

Containers carry labels naming their owner (host, pid, process start time, boot id, PID
namespace), job and pool: the pool removes its own on close, SIGTERM and exit; when the owner
is killed outright its attach connections close, the runners' stdin ends and the containers
remove themselves; and the next pool on this host removes any whose owner is provably gone."""

from __future__ import annotations

import atexit
import collections
import hashlib
import json
import logging
import queue
import secrets
import socket
import struct
import subprocess
import threading
import time
import uuid
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field

from ..common.errors import AicdError
from .engine import Engine, available, shared
from .isolation import (
    CONTEXT,
    OOM_GUARD_CAP,
    PROGRAM_UIDS,
    RUNNER_CAPS,
    SECCOMP_PROFILE,
    UID_LABEL,
    USERNS_IDS,
    WALL_GRACE,
    container_config,
    isolation_flags,
    limits_line,
    per_container_userns,
    program_uid,
    runner_limits,
)
from .languages import TOOLCHAINS, job_for
from .limits import INODE_KB, INODES_PER_MB, LIMITS, RUNNER_RESERVE_MB, Limits
from .owner import owner_alive, owner_label

__all__ = ["CONTEXT", "INODE_KB", "INODES_PER_MB", "LIMITS", "RUNNER_CAPS", "RUNNER_RESERVE_MB", "SECCOMP_PROFILE",
           "Container", "Limits", "SandboxPool", "docker_available", "isolation_flags", "owner_alive", "owner_label",
           "remove_stale_containers", "sandbox_error", "trusted_answer", "trusted_result"]

log = logging.getLogger(__name__)
BREACHES = ("timeout", "memory_limit", "output_limit", "sandbox_error")
STATUSES = {"ok", "compiled", "compile_error", "runtime_error", "wrong_answer", "timeout", "memory_limit", "output_limit",
            "sandbox_error"}
LABEL = "aicd.sandbox"


def docker_available(engine: str = "auto") -> bool:
    """Whether a container engine for the sandbox answers (the name is older than Podman)."""
    return available(engine)


def owner_labels(job: str = "", pool_id: str = "") -> dict[str, str]:
    """Labels that let remove_stale_containers find a container whose owner died, and a pool
    find its own."""
    return {LABEL: "1", "aicd.owner": owner_label(), "aicd.job": job, "aicd.pool": pool_id}


# The program uids this process has given its containers and not yet taken back (free_program_uid).
_UIDS_HERE: set[int] = set()
_UIDS_LOCK = threading.Lock()


def free_program_uid(engine: Engine, seed: str) -> int:
    """A program uid for a new container (isolation.PROGRAM_UIDS): one no other sandbox container
    on the engine has (their UID_LABEL) and none this process has just given out, the first free
    one from a place `seed` (the pool's id) picks, so that pools starting at once in other
    processes start apart. Where each container has a user namespace of its own, the one uid
    USERNS_PROGRAM_UID: its host uids are the container's own."""
    if per_container_userns(engine):
        return program_uid(engine)
    try:
        taken = {int(c.labels.get(UID_LABEL, 0)) for c in labelled(engine, f"{LABEL}=1")}
    except _api_errors() + (ValueError,):
        taken = set()
    start = int(hashlib.sha256(seed.encode()).hexdigest(), 16) % len(PROGRAM_UIDS)
    with _UIDS_LOCK:
        for step in range(len(PROGRAM_UIDS)):
            uid = PROGRAM_UIDS[(start + step) % len(PROGRAM_UIDS)]
            if uid not in taken and uid not in _UIDS_HERE:
                _UIDS_HERE.add(uid)
                return uid
    raise AicdError(f"every program uid of {PROGRAM_UIDS.start}-{PROGRAM_UIDS.stop - 1} is in use by a sandbox "
                    "container on this engine: remove stale ones (docker ps -a --filter label=aicd.sandbox=1)")


def _api_errors() -> tuple:
    import docker.errors

    return docker.errors.DockerException, OSError  # requests' errors (timeouts, a lost socket) are OSErrors


def remove_container(engine: Engine, ident: str, attempts: int = 5) -> bool:
    """Force-remove until the container is gone: under load the engine can refuse for a while
    ("removal already in progress" when auto-remove got there first, a busy file system on
    vfs). True when it is gone."""
    import docker.errors

    api, why = engine.client.api, ""
    for attempt in range(1, attempts + 1):
        try:
            api.remove_container(ident, force=True)
        except docker.errors.NotFound:
            return True
        except _api_errors() as err:  # 409 removal in progress, a timeout on a busy daemon
            why = str(err)
        for _ in range(2 * attempt):
            try:
                api.inspect_container(ident)
            except docker.errors.NotFound:
                return True
            except _api_errors() as err:
                why = str(err)
            time.sleep(1)
    log.warning("container %s is still there after %d forced removals: %s", ident[:12], attempts, why[:200])
    return False


@dataclass(frozen=True)
class Listed:
    """A container as the engine's list shows it."""

    id: str
    name: str
    labels: dict


def labelled(engine: Engine, label: str) -> list[Listed]:
    """The containers (running or not) that carry `label` (key=value), from the engine's list
    alone: the SDK's list inspects each container after, and one removed in between (a recycled
    sandbox container) made Podman answer 500, not the 404 the SDK skips, which failed the caller."""
    return [Listed(c["Id"], (c.get("Names") or [""])[0].lstrip("/"), c.get("Labels") or {})
            for c in engine.client.api.containers(all=True, filters={"label": label})]


def remove_stale_containers(engine: Engine | str = "auto") -> list[str]:
    """Remove the sandbox containers on this host whose owning process is gone (a job killed
    with SIGKILL cannot clean up after itself). Returns their names."""
    engine = shared(engine) if isinstance(engine, str) else engine
    stale = [c for c in labelled(engine, f"{LABEL}=1") if not owner_alive(c.labels.get("aicd.owner", ""))]
    for container in stale:
        log.warning("removing sandbox container %s left by a killed job", container.name)
        remove_container(engine, container.id)
    return [c.name for c in stale]


class AttachedStream:
    """The runner's stdin and its multiplexed stdout/stderr over the engine's attach socket (one
    8-byte header per frame: stream, then length). Lines of stdout go to a queue, stderr's last
    lines are kept for messages; None in the queue marks the end of the stream."""

    def __init__(self, engine: Engine, ident: str):
        self._io = engine.client.api.attach_socket(ident, params={"stdin": 1, "stdout": 1, "stderr": 1, "stream": 1})
        self.sock = getattr(self._io, "_sock", self._io)
        self.sock.settimeout(None)  # the session's API timeout would end a quiet stream
        self.lines: queue.Queue = queue.Queue()
        self.stderr: collections.deque = collections.deque(maxlen=20)
        self.ended = threading.Event()
        threading.Thread(target=self._read, daemon=True).start()

    def _exactly(self, n: int) -> bytes | None:
        data = b""
        while len(data) < n:
            chunk = self.sock.recv(n - len(data))
            if not chunk:
                return None
            data += chunk
        return data

    def _read(self) -> None:
        pending = {1: b"", 2: b""}
        try:
            while True:
                header = self._exactly(8)
                if header is None:
                    break
                stream, size = struct.unpack(">BxxxL", header)
                data = self._exactly(size)
                if data is None:
                    break
                pending[stream if stream in pending else 2] += data
                *complete, pending[1] = pending[1].split(b"\n")
                for line in complete:
                    self.lines.put(line.decode("utf-8", "replace") + "\n")
                *errors, pending[2] = pending[2].split(b"\n")
                self.stderr.extend(e.decode("utf-8", "replace").rstrip() for e in errors)
        except OSError:
            pass
        finally:
            if pending[1]:
                self.lines.put(pending[1].decode("utf-8", "replace"))
            if pending[2]:
                self.stderr.append(pending[2].decode("utf-8", "replace").rstrip())
            self.ended.set()
            self.lines.put(None)

    def send(self, text: str) -> None:
        self.sock.sendall(text.encode())

    def close_stdin(self) -> None:
        """The runner's stdin ends (StdinOnce): it exits, and the engine removes the container."""
        try:
            self.sock.shutdown(socket.SHUT_WR)
        except OSError:
            pass

    def close(self) -> None:
        for closing in (self._io.close, self.sock.close):
            try:
                closing()
            except OSError:
                pass


class Container:
    """One locked-down container (aicd.sandbox.isolation): no network, read-only root, capped
    memory/pids/CPU, no host paths, an exec-enabled tmpfs at /work, a reaping init as PID 1,
    labelled with its owner.

    Its main process is the trusted runner in serve mode: a job is one line to its stdin, the
    result one line from its stdout, both over the attach stream this object holds (no exec and
    no interpreter start per program). If the owning process dies, the stream closes, the
    runner's stdin ends, it exits, and the engine removes the container."""

    def __init__(self, image: str, limits: Limits, job: str = "", pool_id: str = "", engine: Engine | str = "auto"):
        import docker.errors

        self.engine = shared(engine) if isinstance(engine, str) else engine
        self.image, self.limits, self.job, self.pool_id = image, limits, job, pool_id
        self.name = f"aicd-sbx-{uuid.uuid4().hex[:12]}"
        self.used = 0
        self.broken = False
        self.runner_limits = runner_limits(self.engine, limits)
        api = self.engine.client.api
        self.id = None
        self._stream: AttachedStream | None = None
        self.program_uid = free_program_uid(self.engine, pool_id or self.name)
        try:
            self._create_and_start(api, image, limits, job, pool_id)
        except docker.errors.ImageNotFound:
            self.remove()
            raise AicdError(f"the sandbox image {image} does not exist on this {self.engine.name}: run "
                            f"python -m aicd.sandbox images --engine {self.engine.name}") from None
        except _api_errors() as err:
            self.remove()  # a container that was created but did not start still holds a full image copy on vfs
            raise AicdError(f"cannot start a sandbox container from {image} on {self.engine.name}: "
                            f"{str(err)[:300]}{_userns_advice(str(err))}") from None
        ready = self._next_line(300)  # container creation: 10-40 s on vfs
        if not (isinstance(ready, str) and ready.strip() == json.dumps({"ready": True})):
            if ready is None:
                time.sleep(0.2)  # the stream ended: let its stderr arrive before quoting it
            why = "the runner did not answer within 300 s" if ready == "" else self.stderr_tail() or repr(ready)
            self.remove()
            raise AicdError(f"cannot start a sandbox container from {image}: {why[:300]}")

    def _create_and_start(self, api, image: str, limits: Limits, job: str, pool_id: str) -> None:
        """Create and start the container. An engine that cannot grant the runner OOM_GUARD_CAP
        (a host that withholds it) refuses to start it: it is made again without, once for the
        engine."""
        import docker.errors

        for attempt in (1, 2):
            config = container_config(self.engine, image, limits, owner_labels(job, pool_id), uid=self.program_uid)
            self.id = api.create_container_from_config(config, name=self.name)["Id"]
            self._stream = AttachedStream(self.engine, self.id)  # before start: no line is missed
            try:
                api.start(self.id)
                return
            except docker.errors.APIError as err:
                if attempt == 2 or OOM_GUARD_CAP not in config["HostConfig"]["CapAdd"] or "caps" not in str(err):
                    raise
            log.warning("%s cannot grant the runner CAP_%s: its containers go without (the runner is then not "
                        "out of the OOM killer's reach; docs/sandbox.md)", self.engine.name, OOM_GUARD_CAP)
            self.engine.oom_guard = False
            self.remove()
            self.id, self._stream = None, None

    def stderr_tail(self) -> str:
        return " / ".join(self._stream.stderr) if self._stream else ""

    def _next_line(self, timeout: float) -> str | None:
        """The next line; None at end of stream; "" when none came within timeout."""
        try:
            return self._stream.lines.get(timeout=timeout)
        except queue.Empty:
            return ""

    def run(self, job: dict) -> dict:
        """The runner's result, or `sandbox_error` when it is not the trusted runner's answer
        to this job (wrong nonce, not one JSON object, no answer) or the container was left
        unclean (`unclean`)."""
        self.used += 1
        lim = self.limits
        nonce = secrets.token_hex(16)
        job = {**job, "nonce": nonce,
               "limits": {"wall_s": lim.wall_s, "compile_s": lim.compile_s, "output_bytes": lim.output_bytes,
                          "rlimits": self.runner_limits}}
        # every step may run WALL_GRACE times its limit while slowed by others' load (isolation.py)
        worst = WALL_GRACE * (lim.compile_s + lim.wall_s * max(1, len(job.get("tests") or []))) + 30
        try:
            self._stream.send(json.dumps(job) + "\n")
        except OSError:
            self.broken = True
            return sandbox_error(f"the container's runner is gone: {self.stderr_tail()[:300]}")
        line = self._next_line(worst)
        if line is None or line == "":
            self.broken = True  # never reuse it: a late answer would belong to this job
            return sandbox_error("runner did not answer in time" if line == "" else
                                 f"the container's runner exited: {self.stderr_tail()[:300] or 'no message'}")
        return trusted_answer(line, nonce)

    def alive(self) -> bool:
        return not self.broken and self._stream is not None and not self._stream.ended.is_set()

    def remove(self) -> None:
        if self._stream is not None:
            self._stream.close_stdin()
        if self.id is not None:
            remove_container(self.engine, self.id)
        if self._stream is not None:
            self._stream.close()
        _UIDS_HERE.discard(self.program_uid)


def _userns_advice(error: str) -> str:
    """What to do when rootless Podman has no subordinate ids left for one more container."""
    if "not enough unused IDs" not in error and "no subuid ranges" not in error:
        return ""
    return (f" (rootless Podman gives each container a user namespace of {USERNS_IDS} ids of its own: the user "
            f"needs {USERNS_IDS} subordinate uids and gids per container of every pool at once in /etc/subuid and "
            "/etc/subgid; ask the admin for more, or lower execution.workers; docs/cluster.md)")


def sandbox_error(error: str, **extra) -> dict:
    return {"status": "sandbox_error", "error": error, "compile": None, "tests": [], **extra}


def trusted_result(proc: subprocess.CompletedProcess, nonce: str) -> dict:
    """trusted_answer for a one-shot runner (an exec or a run of runner.py)."""
    if proc.returncode != 0:
        return sandbox_error(f"runner exited {proc.returncode}: {(proc.stderr or proc.stdout).strip()[:300] or 'no output'}")
    return trusted_answer(proc.stdout, nonce)


def trusted_answer(text: str, nonce: str) -> dict:
    try:
        result = json.loads(text)
    except json.JSONDecodeError:
        return sandbox_error(f"runner answer is not one JSON object: {text.strip()[:200]!r}")
    if not isinstance(result, dict) or result.get("nonce") != nonce or result.get("status") not in STATUSES:
        return sandbox_error("runner answer does not carry this job's nonce: not produced by the trusted runner")
    if result.get("clean") is not True:
        # The program's own result was measured by the runner and stands; the container does not.
        result["unclean"] = result.get("breaches") or ["the runner could not verify the container"]
    return result


@dataclass
class SandboxPool:
    image: str
    size: int = 1
    recycle_after: int = 200
    limits: Limits = field(default_factory=Limits)
    job: str = ""                 # recorded as a label on every container
    engine: Engine | str = "auto"  # an Engine, or execution.engine: auto, docker or podman

    def __post_init__(self):
        if isinstance(self.engine, str):
            self.engine = shared(self.engine)
        self._free: list[Container] = []
        self._all: set[Container] = set()
        self._lock = threading.Lock()
        self._closed = False
        self._swept = False
        self.pool_id = uuid.uuid4().hex[:12]
        self.started = 0   # containers created, for reports and tests
        self.recycled = 0  # containers removed because a program breached a limit or left state
        self.stale_removed = remove_stale_containers(self.engine)
        # What this engine cannot promise here, once, at the start of the run.
        (log.warning if self.engine.unenforced else log.info)("%s", limits_line(self.engine, self.limits))
        atexit.register(self.close)

    def _take(self) -> Container:
        with self._lock:
            if self._closed:
                raise AicdError("the sandbox pool is closed (the job is stopping)")
            if self._free:
                return self._free.pop()
            self.started += 1
        container = Container(self.image, self.limits, self.job, self.pool_id, self.engine)
        with self._lock:
            self._all.add(container)
            closed = self._closed
        if closed:  # closed while this one started: never leave it behind
            self._drop(container)
            raise AicdError("the sandbox pool is closed (the job is stopping)")
        return container

    def _drop(self, container: Container) -> None:
        with self._lock:
            self._all.discard(container)
        container.remove()

    def _give(self, container: Container, result: dict) -> None:
        breach = result["status"] in BREACHES or result.get("unclean")
        if breach:
            self.recycled += 1
        if breach or container.used >= self.recycle_after or not container.alive():
            self._drop(container)  # recycled: the next program gets a fresh container
            return
        with self._lock:
            if not self._closed:
                self._free.append(container)
                return
        self._drop(container)

    def run_one(self, language: str, code: str, tests: list[dict] | None = None) -> dict:
        if language not in TOOLCHAINS:
            return sandbox_error(f"no toolchain for language {language!r}")
        job = job_for(language, code, tests)
        for attempt in (1, 2):
            container = self._take()
            result = container.run(job)
            self._give(container, result)  # a sandbox_error recycles the container
            if result["status"] != "sandbox_error" or self._closed:
                return result
            log.warning("sandbox_error (attempt %d: %s); retrying once in a fresh container", attempt,
                        result.get("error"))
        result["error"] = f"{result.get('error')} (twice, in two containers)"
        return result

    def run_many(self, items: list[tuple[str, str, list | None]], progress=None) -> list[dict]:
        """Results in input order; one per item, whatever happens."""
        def one(item):
            try:
                return self.run_one(*item)
            except AicdError as err:
                return sandbox_error(str(err))
            finally:
                if progress:
                    progress.update(1)

        with ThreadPoolExecutor(max_workers=self.size) as ex:
            return list(ex.map(one, items))

    def close(self) -> None:
        """Remove every container of this pool, in use or not; later runs are refused."""
        with self._lock:
            if self._swept and not self._all:
                return  # closed before (atexit after the with-block): nothing of ours is left
            self._closed = True
            containers = list(self._all)
            self._all.clear()
            self._free.clear()
        for c in containers:
            c.remove()
        # A container still being created when the pool closed is not registered yet: find it
        # by this pool's label.
        try:
            for leftover in labelled(self.engine, f"aicd.pool={self.pool_id}"):
                remove_container(self.engine, leftover.id)
        except _api_errors() as err:
            log.warning("could not list this pool's containers at close: %s", err)
            return
        self._swept = True  # a close cut short (SIGTERM during the first) leaves this False: the next one sweeps

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
