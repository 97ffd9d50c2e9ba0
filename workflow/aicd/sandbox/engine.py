"""The container engine the sandbox runs on: Docker, or Podman (rootless on a cluster), both
reached through the `docker` Python SDK — Docker's socket, or Podman's Docker-compatible one.

`connect(engine)` picks the engine (`auto`: Docker where its daemon answers, else Podman where
it is installed) and says what it can enforce. Where no Podman service answers, one is started
(`podman system service` on a private socket) and stopped again by `close()`; it also goes when
the process that started it dies (PR_SET_PDEATHSIG), so a killed job leaves no service behind.
Podman's own remote variable CONTAINER_HOST names a service that is already running (the tests
start one as an unprivileged user)."""

from __future__ import annotations

import atexit
import json
import os
import shutil
import signal
import subprocess
import tempfile
import threading
import time
import weakref
from dataclasses import dataclass, field
from pathlib import Path

from ..common.errors import AicdError
from ..common.subprocesses import die_with_parent
from .owner import owner_alive, owner_label

ENGINES = ("docker", "podman")
CHOICES = ("auto", *ENGINES)
# What a cgroup can cap for a container; where the engine cannot, the runner stands in.
CGROUP_LIMITS = ("memory", "pids", "cpu")
NO_DOCKER = "no Docker daemon answers: install docker.io and start dockerd (see README, Sandbox)"
NO_PODMAN = "podman is not installed (Debian: apt-get install podman uidmap; see docs/sandbox.md)"
NO_ENGINE = ("no container engine answers: neither a Docker daemon nor Podman (install docker.io and start "
             "dockerd, or install podman; see docs/sandbox.md)")
# Creating a container copies the whole image on the vfs storage driver: 10-40 s, more under load.
API_TIMEOUT_S = 900
# Private folders in the temporary folder: a Podman service's socket and log (SERVICE_PREFIX), and
# the files a container bind-mounts or the engine reads (STAGE_PREFIX: its /etc files, the seccomp
# profile). A container's mount table shows the path of its /etc files, so that one is named for
# nothing of this host or project. Each holds OWNER_FILE, so that what a killed process left is
# removed by the next (remove_stale_scratch).
SERVICE_PREFIX, STAGE_PREFIX, OWNER_FILE = "aicd-engine-", "sandbox-", ".owner"


def scratch_folder(prefix: str) -> Path:
    """A new private folder in the temporary folder, readable by a rootless service of another
    user, that names its owner (owner.owner_label)."""
    folder = Path(tempfile.mkdtemp(prefix=prefix))
    folder.chmod(0o755)  # a rootless service of another user reads from here
    (folder / OWNER_FILE).write_text(owner_label())
    return folder


def remove_stale_scratch(parent: str | None = None) -> list[str]:
    """Remove the scratch folders (scratch_folder) whose owner is provably gone: a job killed
    outright cannot remove its own. Folders without an owner file are not ours. Returns them."""
    parent_dir = Path(parent or tempfile.gettempdir())
    removed = []
    try:
        entries = list(parent_dir.iterdir())
    except OSError:
        return removed
    for folder in entries:
        if not folder.name.startswith((SERVICE_PREFIX, STAGE_PREFIX)):
            continue
        try:
            owner = (folder / OWNER_FILE).read_text()
        except OSError:
            continue
        if not owner_alive(owner):
            shutil.rmtree(folder, ignore_errors=True)
            removed.append(str(folder))
    return removed


@dataclass
class Engine:
    """A connected engine: its SDK client and the facts the pool adapts to."""

    name: str                       # "docker" or "podman"
    client: object                  # docker.DockerClient
    version: str
    rootless: bool
    cgroup_version: str             # "1" or "2"
    enforced: frozenset             # the CGROUP_LIMITS this engine enforces here
    service: subprocess.Popen | None = None   # a `podman system service` this process started
    scratch: Path | None = None     # private folder of that service: its socket and log
    stage: Path | None = None       # private folder of files for the engine: /etc files, the seccomp profile
    oom_guard: bool = True          # whether containers may ask for isolation.OOM_GUARD_CAP (False once refused)
    subordinate_ids: int = 0        # rootless Podman: the user's subordinate uids (0: not known)
    _closed: bool = field(default=False, repr=False)

    @property
    def inode_caps(self) -> bool:
        """Whether tmpfs mounts take `nr_inodes` (Podman 4 refuses the option)."""
        return self.name == "docker"

    @property
    def unenforced(self) -> list[str]:
        """The limits the runner must stand in for: cgroup ones the engine cannot set, and inodes."""
        return [lim for lim in CGROUP_LIMITS if lim not in self.enforced] + ([] if self.inode_caps else ["inodes"])

    def describe(self) -> str:
        mode = "rootless" if self.rootless else "rootful"
        return f"{self.name} {self.version} ({mode}, cgroup v{self.cgroup_version})"

    def seccomp_option(self, profile: dict) -> str:
        """`seccomp=...` for SecurityOpt: Docker's API takes the profile's JSON, Podman's a path
        that the service can read (a copy in a world-readable folder of our own)."""
        text = json.dumps(profile, separators=(",", ":"))
        return "seccomp=" + (text if self.name == "docker" else str(self.staged("seccomp.json", text)))

    def staged(self, name: str, content: str | bytes) -> Path:
        """A world-readable file of ours with `content`, for the engine to read or bind-mount
        (a rootless service runs as another user); written once, atomically (a pool's workers
        create containers side by side)."""
        data = content.encode() if isinstance(content, str) else content
        copy = self._stage() / name
        if not copy.exists() or copy.read_bytes() != data:
            staged = copy.with_name(f".{name}.{os.getpid()}.{threading.get_ident()}")
            staged.write_bytes(data)
            staged.chmod(0o644)
            os.replace(staged, copy)
        return copy

    def empty_folder(self) -> Path:
        """An empty, world-readable folder of ours, for the engine to bind over a path it masks."""
        folder = self._stage() / "empty"
        folder.mkdir(mode=0o755, exist_ok=True)
        folder.chmod(0o555)
        return folder

    def _stage(self) -> Path:
        if self.stage is None:
            self.stage = scratch_folder(STAGE_PREFIX)
            # an engine nobody closed (a caller's own script, a test that only builds a
            # container's config) still takes its folder along when it is collected or the
            # process exits; close() removes it sooner
            weakref.finalize(self, shutil.rmtree, self.stage, True)
        return self.stage

    def cli(self) -> str:
        """The engine's own command, for image builds (the SDK runs everything else)."""
        found = shutil.which(self.name)
        if not found:
            raise AicdError(f"the {self.name} command is not installed: image builds use it")
        return found

    def close(self) -> None:
        """Stop the service this process started, and remove the private folders."""
        if self._closed:
            return
        self._closed = True
        try:
            self.client.close()
        except Exception:
            pass
        if self.service is not None and self.service.poll() is None:
            self.service.terminate()
            try:
                self.service.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.service.kill()
                self.service.wait()
        for folder in (self.stage, self.scratch):
            if folder is not None:
                shutil.rmtree(folder, ignore_errors=True)


def _client(base_url: str | None, timeout: float = API_TIMEOUT_S, pool: int = 32):
    import docker

    if base_url:
        return docker.DockerClient(base_url=base_url, version="auto", timeout=timeout, max_pool_size=pool)
    return docker.from_env(version="auto", timeout=timeout, max_pool_size=pool)


def _answers(base_url: str | None, timeout: float = 10) -> object | None:
    """A client when an engine answers at base_url (None: Docker's default, DOCKER_HOST)."""
    import docker.errors

    try:
        client = _client(base_url, timeout=timeout)
        client.ping()
    except (docker.errors.DockerException, OSError):  # requests' errors are OSErrors
        return None
    client.api.timeout = API_TIMEOUT_S
    return client


def _is_podman(client) -> bool:
    return any("podman" in c.get("Name", "").lower() for c in client.version().get("Components") or [])


def _facts(client, name: str) -> tuple[str, bool, str, frozenset]:
    """(version, rootless, cgroup version, the cgroup limits enforced)."""
    if name == "podman":
        # The compatible /info claims every limit even where rootless Podman ignores them;
        # Podman's own /libpod/info tells the controllers the user may actually use.
        info = client.api._result(client.api._get(client.api._url("/libpod/info")), json=True)
        host = info["host"]
        controllers = set(host.get("cgroupControllers") or [])
        enforced = {lim for lim, ctl in (("memory", "memory"), ("pids", "pids"), ("cpu", "cpu")) if ctl in controllers}
        return (info["version"]["Version"], bool(host["security"]["rootless"]), host["cgroupVersion"].lstrip("v"),
                frozenset(enforced))
    info = client.info()
    rootless = any("name=rootless" in opt for opt in info.get("SecurityOptions") or [])
    enforced = {lim for lim, key in (("memory", "MemoryLimit"), ("pids", "PidsLimit"), ("cpu", "CpuCfsQuota"))
                if info.get(key)}
    if rootless and str(info.get("CgroupVersion")) == "1":
        enforced = set()  # rootless Docker on cgroup v1 sets no limits either
    return info["ServerVersion"], rootless, str(info.get("CgroupVersion", "1")), frozenset(enforced)


def _subordinate_ids(client) -> int:
    """Rootless Podman: how many subordinate uids its user has (its uid map less the user's own
    uid), which bounds the containers that user can have at once with a user namespace each."""
    info = client.api._result(client.api._get(client.api._url("/libpod/info")), json=True)
    mapped = (info["host"].get("idMappings") or {}).get("uidmap") or []
    return sum(int(entry.get("size", 0)) for entry in mapped if entry.get("container_id") != 0)


def _connected(client, name: str, service=None, scratch=None) -> Engine:
    remove_stale_scratch()  # what a killed job left in the temporary folder
    version, rootless, cgroup, enforced = _facts(client, name)
    engine = Engine(name, client, version, rootless, cgroup, enforced, service, scratch)
    if name == "podman" and rootless:
        engine.subordinate_ids = _subordinate_ids(client)
    return engine


def _podman_sockets() -> list[str]:
    """Where a Podman service listens when one was set up for this user (systemd's podman.socket)."""
    runtime = os.environ.get("XDG_RUNTIME_DIR") or f"/run/user/{os.getuid()}"
    return [f"unix://{runtime}/podman/podman.sock"] + (["unix:///run/podman/podman.sock"] if os.getuid() == 0 else [])


def _service_dies_with_parent() -> None:
    """In the service's child process: SIGTERM when the thread that started it dies."""
    die_with_parent(signal.SIGTERM)


def start_podman_service(run_as: list[str] | None = None, scratch: Path | None = None,
                         wait_s: float = 60) -> tuple[subprocess.Popen, str, Path]:
    """`podman system service` on a socket in a private folder; (process, socket URL, folder).
    run_as: a command prefix that runs it as another user (`runuser -u USER --`), for tests
    that need rootless Podman while running as root."""
    podman = shutil.which("podman")
    if not podman:
        raise AicdError(NO_PODMAN)
    scratch = scratch or scratch_folder(SERVICE_PREFIX)
    url = f"unix://{scratch}/podman.sock"
    logfile = open(scratch / "service.log", "wb")
    # --time 0: no idle timeout (the pool's attach streams stay open between requests).
    proc = subprocess.Popen([*(run_as or []), podman, "system", "service", "--time", "0", url],
                            stdin=subprocess.DEVNULL, stdout=logfile, stderr=subprocess.STDOUT,
                            preexec_fn=_service_dies_with_parent)
    logfile.close()
    end = time.monotonic() + wait_s
    while time.monotonic() < end:
        if proc.poll() is not None:
            break
        client = _answers(url, timeout=5)
        if client is not None:
            client.close()
            return proc, url, scratch
        time.sleep(0.2)
    if proc.poll() is None:
        proc.terminate()
        proc.wait()
    why = (scratch / "service.log").read_text(errors="replace").strip()[-300:]
    raise AicdError(f"podman system service did not start: {why or 'no message'}")


def connect(engine: str = "auto") -> Engine:
    """The engine to run containers on; an AicdError in one line saying what to install or start."""
    if engine not in CHOICES:
        raise AicdError(f"execution.engine must be one of {', '.join(CHOICES)}, got {engine!r}")
    if engine in ("auto", "docker"):
        client = _answers(None)
        if client is not None and not _is_podman(client):
            return _connected(client, "docker")
        if client is not None and engine == "docker":
            raise AicdError(f"{NO_DOCKER} (DOCKER_HOST points at a Podman service: use execution.engine: podman)")
        if engine == "docker":
            raise AicdError(NO_DOCKER)
        if not shutil.which("podman") and not os.environ.get("CONTAINER_HOST"):
            raise AicdError(NO_ENGINE)
    return connect_podman()


def connect_podman(url: str | None = None) -> Engine:
    """Podman's service at `url`, or the one CONTAINER_HOST names, or this user's, or one started
    here (stopped by Engine.close)."""
    named = url or os.environ.get("CONTAINER_HOST")
    if named:
        client = _answers(named)
        if client is None:
            raise AicdError(f"no Podman service answers at {named}" + ("" if url else " (CONTAINER_HOST)"))
        return _connected(client, "podman")
    for default in _podman_sockets():
        client = _answers(default)
        if client is not None:
            return _connected(client, "podman")
    proc, started, scratch = start_podman_service()
    try:
        return _connected(_client(started), "podman", proc, scratch)
    except Exception:
        proc.terminate()
        proc.wait()
        shutil.rmtree(scratch, ignore_errors=True)
        raise


def available(engine: str = "auto") -> bool:
    """Whether `connect(engine)` would find an engine, without starting anything: Docker's daemon
    answers, or Podman is installed and `podman info` works for this user."""
    if engine in ("auto", "docker"):
        client = _answers(None)
        if client is not None:
            podman = _is_podman(client)
            client.close()
            if not podman:
                return True
        if engine == "docker":
            return False
    named = os.environ.get("CONTAINER_HOST")
    if named:
        client = _answers(named)
        if client is not None:
            client.close()
        return client is not None
    podman = shutil.which("podman")
    if not podman:
        return False
    try:
        return subprocess.run([podman, "info", "--format", "{{.Host.Arch}}"], capture_output=True,
                              timeout=60).returncode == 0
    except subprocess.TimeoutExpired:
        return False


_shared: dict[str, Engine] = {}
_shared_lock = threading.Lock()


def shared(engine: str = "auto") -> Engine:
    """One connection per engine choice for this process (pools, image checks and sweeps share
    it, and with it any Podman service it started); closed at exit, after the pools (atexit
    runs in reverse order of registration, and this registers before any pool exists)."""
    with _shared_lock:
        found = _shared.get(engine)
        if found is None or found._closed:
            found = _shared[engine] = connect(engine)
        return found


atexit.register(lambda: close_shared())


def close_shared() -> None:
    with _shared_lock:
        engines = list(_shared.values())
        _shared.clear()
    for eng in engines:
        eng.close()
