"""Long-lived sandbox containers and a pool that runs programs in them.

Creating a container on the vfs storage driver costs 10-40 s, so each worker keeps one. Its
main process is the trusted runner (containers/sandbox/runner.py --serve), attached to a
`docker run -i --rm` client: one JSON job per line in, one result per line out. The runner
starts as root with a handful of capabilities, runs the program as an unprivileged user, and
answers with the job's nonce; a result without it, or from a container left unclean, is not
trusted. A container is recycled after `recycle_after` programs, any limit breach or any state
the program left behind, and replaced when it dies; the batch goes on, and every input gets a
result row.

Containers carry labels naming their owner (host, pid, process start time, boot id, PID
namespace), job and pool: the pool removes its own on close, SIGTERM and exit; when the owner
is killed outright its clients' stdin closes and the containers remove themselves; and the next
pool on this host removes any whose owner is provably gone."""

from __future__ import annotations

import atexit
import collections
import json
import logging
import os
import queue
import secrets
import socket
import subprocess
import threading
import time
import uuid
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

from ..errors import AicdError
from ..params import Param, ParamSpec
from .languages import TOOLCHAINS, job_for

log = logging.getLogger(__name__)
BREACHES = ("timeout", "memory_limit", "output_limit", "sandbox_error")
STATUSES = {"ok", "compiled", "compile_error", "runtime_error", "wrong_answer", "timeout", "memory_limit", "output_limit",
            "sandbox_error"}
LABEL = "aicd.sandbox"
# What the trusted runner needs as root: drop to the program's user (SETUID, SETGID), hand it
# the job folder (CHOWN), kill what it leaves (KILL), and remove what it leaves (DAC_OVERRIDE,
# FOWNER). The program itself runs with none.
RUNNER_CAPS = ("SETUID", "SETGID", "CHOWN", "KILL", "DAC_OVERRIDE", "FOWNER")
CONTEXT = Path(__file__).resolve().parents[3] / "containers" / "sandbox"  # the sandbox image's build context
# Docker's default seccomp profile minus io_uring (containers/README.md): in the build context,
# so the image tag's hash covers it; the docker client reads it from here.
SECCOMP_PROFILE = CONTEXT / "seccomp.json"


# Every tmpfs the program can write gets an inode cap as well as a size cap: tmpfs inodes and
# dentries are kernel memory charged to the container, so a flood of empty files would
# otherwise reach the OOM killer (and the runner) long before any size cap. One inode per
# 16 KB of a folder's size: 16,384 in the default 256 MB work folder, where a Go build (the
# largest user) makes ~350 files.
INODES_PER_MB = 64
# Kernel memory per inode at the cap, measured on kernel 6.18: 0.96 KB for an empty file,
# 1.47 KB with a 250-character name (files, folders and symlinks alike); user xattrs draw on
# the same 1 KB-per-inode budget (tmpfs "ispace"). Budgeted with headroom:
INODE_KB = 2
# What must stay free for the trusted side once the program's processes are gone: the runner
# (~12 MB RSS), tini, and the SysV semaphores and message queues the sysctls below allow.
RUNNER_RESERVE_MB = 32


LIMITS = ParamSpec("execution.limits", (
    Param("wall_s", (float,), 5.0, "ours", "seconds per test run", minimum=0, exclusive_minimum=True),
    Param("compile_s", (float,), 30.0, "ours", "seconds to compile", minimum=0, exclusive_minimum=True),
    Param("output_bytes", (int,), 1 << 20, "ours", "stdout and stderr cap, each", minimum=1),
    Param("memory_mb", (int,), 640, "ours", "container memory, swap capped the same; must cover every tmpfs and "
          "SysV cap at once plus the runner", minimum=16),
    Param("pids", (int,), 128, "ours", "processes and threads", minimum=8),
    Param("cpus", (float,), 1.0, "ours", "CPU quota", minimum=0, exclusive_minimum=True),
    Param("work_mb", (int,), 256, "ours", "the exec-enabled tmpfs work folder (inode cap 64 per MB)", minimum=1),
    Param("tmp_mb", (int,), 64, "ours", "/tmp, /dev/shm and SysV shared memory, each (inode caps 64 per MB)",
          minimum=1),
))
_LIMIT = LIMITS.defaults()


@dataclass(frozen=True)
class Limits:
    wall_s: float = _LIMIT["wall_s"]
    compile_s: float = _LIMIT["compile_s"]
    output_bytes: int = _LIMIT["output_bytes"]
    memory_mb: int = _LIMIT["memory_mb"]
    pids: int = _LIMIT["pids"]
    cpus: float = _LIMIT["cpus"]
    work_mb: int = _LIMIT["work_mb"]
    tmp_mb: int = _LIMIT["tmp_mb"]

    def __post_init__(self):
        if min(self.wall_s, self.compile_s, self.output_bytes, self.pids, self.cpus, self.work_mb, self.tmp_mb) <= 0:
            raise AicdError(f"execution.limits: every limit must be positive, got {self}")
        # What the program can leave behind outlives it and stays charged to the container:
        # a full work folder, /tmp and /dev/shm (data and inodes) and SysV shared memory. All of
        # it together must leave the runner room, so a full folder is the program's "No space
        # left on device", never an OOM kill of the runner after the program is gone.
        if self.memory_mb < self.worst_case_mb:
            raise AicdError(
                f"execution.limits: memory_mb ({self.memory_mb}) must be at least {self.worst_case_mb}: the work "
                f"folder ({self.work_mb} MB + {self.inodes(self.work_mb)} inodes), /tmp and /dev/shm ({self.tmp_mb} MB "
                f"+ {self.inodes(self.tmp_mb)} inodes each), SysV shared memory ({self.tmp_mb} MB) and the runner's "
                f"{RUNNER_RESERVE_MB} MB all live in the container's memory; raise memory_mb to {self.worst_case_mb} "
                "or more, or lower work_mb / tmp_mb")

    @staticmethod
    def inodes(size_mb: int) -> int:
        """The inode cap (nr_inodes) of a tmpfs of size_mb."""
        return size_mb * INODES_PER_MB

    @property
    def worst_case_mb(self) -> int:
        """The container memory that everything a program can leave behind holds at its caps,
        plus the runner's reserve."""
        inodes = self.inodes(self.work_mb) + 2 * self.inodes(self.tmp_mb)
        return self.work_mb + 3 * self.tmp_mb + -(-inodes * INODE_KB // 1024) + RUNNER_RESERVE_MB


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


def _start_time(pid: int) -> str | None:
    """A process's start time in clock ticks since boot: with the pid, it names one process
    (a pid alone can be reused after the owner died)."""
    try:
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().rsplit(")", 1)[1].split()[19]
    except (OSError, IndexError):
        return None


def _read(path: str) -> str:
    try:
        with open(path) as fh:
            return fh.read().strip()
    except OSError:
        return "?"


def _pid_namespace() -> str:
    try:
        return os.readlink("/proc/self/ns/pid").strip("pid:[]")
    except OSError:
        return "?"


def owner_label(pid: int | None = None) -> str:
    """host:pid:start time:boot id:pid namespace. Judged only where host, boot and namespace
    are ours: a pid means nothing in another namespace or on another machine."""
    pid = os.getpid() if pid is None else pid
    return ":".join([socket.gethostname(), str(pid), str(_start_time(pid)),
                     _read("/proc/sys/kernel/random/boot_id"), _pid_namespace()])


def owner_alive(owner: str) -> bool:
    parts = owner.split(":")
    if len(parts) != 5:
        return True  # not a label this version wrote: not ours to judge
    host, pid, started, boot, pidns = parts
    if host != socket.gethostname() or pidns != _pid_namespace() or "?" in (boot, pidns) or started == "None":
        return True
    if boot != _read("/proc/sys/kernel/random/boot_id"):
        return False  # the machine rebooted since: that owner is gone
    return pid.isdigit() and _start_time(int(pid)) == started


def remove_container(name: str, attempts: int = 5) -> bool:
    """`docker rm -f` until the container is gone: under load the daemon can refuse for a
    while ("removal already in progress" when --rm got there first, a busy file system on
    vfs). True when it is gone."""
    proc = None
    for attempt in range(1, attempts + 1):
        try:
            proc = docker("rm", "-f", name, timeout=600)
        except subprocess.TimeoutExpired:
            log.warning("removing container %s is taking long; the daemon goes on with it", name)
            return False
        for _ in range(2 * attempt):
            if docker("container", "inspect", name, timeout=60).returncode != 0:
                return True
            time.sleep(1)
    log.warning("container %s is still there after %d x docker rm -f: %s", name, attempts,
                proc.stderr.strip()[:200] if proc else "")
    return False


def remove_stale_containers() -> list[str]:
    """Remove the sandbox containers on this host whose owning process is gone (a job killed
    with SIGKILL cannot clean up after itself). Returns their names."""
    proc = docker("ps", "-a", "--filter", f"label={LABEL}=1", "--format", '{{.Names}}\t{{.Label "aicd.owner"}}', timeout=60)
    stale = [name for name, _, owner in (line.partition("\t") for line in proc.stdout.splitlines())
             if name and not owner_alive(owner)]
    for name in stale:
        log.warning("removing sandbox container %s left by a killed job", name)
        remove_container(name)
    return stale


def owner_labels(job: str = "", pool_id: str = "") -> list[str]:
    """`docker run` flags that let remove_stale_containers find a container whose owner died,
    and a pool find its own."""
    return ["--label", f"{LABEL}=1", "--label", f"aicd.owner={owner_label()}", "--label", f"aicd.job={job}",
            "--label", f"aicd.pool={pool_id}"]


def isolation_flags(lim: Limits, seccomp: bool = True) -> list[str]:
    """`docker run` flags of every sandbox container: root for the trusted runner with only
    RUNNER_CAPS, a reaping init, no network, read-only root, memory = swap cap, pids, CPU, the
    project's seccomp profile (seccomp=False: Docker's default, for comparing the two), and a
    size and an inode cap on every tmpfs the program can write."""
    caps = [arg for cap in RUNNER_CAPS for arg in ("--cap-add", cap)]
    profile = ["--security-opt", f"seccomp={SECCOMP_PROFILE}"] if seccomp else []
    return ["--init", "--network", "none", "--read-only",
            "--tmpfs", f"/work:rw,exec,nosuid,size={lim.work_mb}m,nr_inodes={lim.inodes(lim.work_mb)},uid=0,gid=0,mode=755",
            "--tmpfs", f"/tmp:rw,exec,nosuid,size={lim.tmp_mb}m,nr_inodes={lim.inodes(lim.tmp_mb)},mode=1777",
            # A /dev/shm of our own (Docker's --shm-size sets no inode cap).
            "--tmpfs", f"/dev/shm:rw,nosuid,nodev,size={lim.tmp_mb}m,nr_inodes={lim.inodes(lim.tmp_mb)},mode=1777",
            # SysV IPC and POSIX message queues are not tmpfs: cap them by sysctl. Semaphores
            # as Linux's historical defaults (250 per set, 32,000 in all, 128 sets), 64 shared
            # memory segments of tmp_mb in all, 16 message queues, 16 POSIX queues.
            "--sysctl", f"kernel.shmmax={lim.tmp_mb << 20}", "--sysctl", f"kernel.shmall={lim.tmp_mb << 8}",
            "--sysctl", "kernel.shmmni=64", "--sysctl", "kernel.sem=250 32000 32 128",
            "--sysctl", "kernel.msgmni=16", "--sysctl", "fs.mqueue.queues_max=16",
            "--memory", f"{lim.memory_mb}m", "--memory-swap", f"{lim.memory_mb}m",
            "--pids-limit", str(lim.pids), "--cpus", str(lim.cpus),
            "--user", "0:0", "--cap-drop", "ALL", *caps, "--security-opt", "no-new-privileges", *profile,
            "--ulimit", "core=0"]


class Container:
    """One locked-down container: no network, read-only root, capped memory/pids/CPU, no host
    paths, an exec-enabled tmpfs at /work, a reaping init as PID 1, labelled with its owner.

    Its main process is the trusted runner in serve mode, attached to a `docker run -i --rm`
    client that this object holds: a job is one line to its stdin, the result one line from
    its stdout (no `docker exec` and no interpreter start per program). If the owning process
    dies, the client's stdin closes, the runner exits and Docker removes the container."""

    def __init__(self, image: str, limits: Limits, job: str = "", pool_id: str = ""):
        self.image, self.limits, self.job, self.pool_id = image, limits, job, pool_id
        self.name = f"aicd-sbx-{uuid.uuid4().hex[:12]}"
        self.used = 0
        self.broken = False
        self._lines: queue.Queue = queue.Queue()
        self._stderr: collections.deque = collections.deque(maxlen=20)
        try:
            self._proc = subprocess.Popen(
                ["docker", "run", "-i", "--rm", "--name", self.name, *owner_labels(self.job, self.pool_id),
                 *isolation_flags(self.limits), self.image, "python3", "-I", "-S", "/opt/aicd/runner.py", "--serve"],
                stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, bufsize=1)
        except FileNotFoundError:
            raise AicdError("the docker client is not installed (Debian: apt-get install docker.io)") from None
        threading.Thread(target=self._read_stdout, daemon=True).start()
        threading.Thread(target=self._read_stderr, daemon=True).start()
        ready = self._next_line(300)  # container creation: 10-40 s on vfs
        if not (isinstance(ready, str) and ready.strip() == json.dumps({"ready": True})):
            if ready is None:  # the client ended: let its stderr arrive before quoting it
                try:
                    self._proc.wait(timeout=30)
                except subprocess.TimeoutExpired:
                    pass
                time.sleep(0.2)
            why = "docker run did not return within 300 s" if ready == "" else self.stderr_tail() or repr(ready)
            self.remove()  # a container that was created but did not start still holds a full image copy on vfs
            raise AicdError(f"cannot start a sandbox container from {image}: {why[:300]}")

    def _read_stdout(self) -> None:
        for line in self._proc.stdout:
            self._lines.put(line)
        self._lines.put(None)  # end of stream: the runner or the client is gone

    def _read_stderr(self) -> None:
        for line in self._proc.stderr:
            self._stderr.append(line.rstrip())

    def stderr_tail(self) -> str:
        return " / ".join(self._stderr)

    def _next_line(self, timeout: float) -> str | None:
        """The next line; None at end of stream; "" when none came within timeout."""
        try:
            return self._lines.get(timeout=timeout)
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
               "limits": {"wall_s": lim.wall_s, "compile_s": lim.compile_s, "output_bytes": lim.output_bytes}}
        worst = lim.compile_s + lim.wall_s * max(1, len(job.get("tests") or [])) + 30
        try:
            self._proc.stdin.write(json.dumps(job) + "\n")
            self._proc.stdin.flush()
        except (OSError, ValueError):
            self.broken = True
            return sandbox_error(f"the container's runner is gone: {self.stderr_tail()[:300]}")
        line = self._next_line(worst)
        if line is None or line == "":
            self.broken = True  # never reuse it: a late answer would belong to this job
            return sandbox_error("runner did not answer in time" if line == "" else
                                 f"the container's runner exited: {self.stderr_tail()[:300] or 'no message'}")
        return trusted_answer(line, nonce)

    def alive(self) -> bool:
        return not self.broken and self._proc.poll() is None

    def remove(self) -> None:
        try:
            self._proc.stdin.close()  # the runner's stdin ends: it exits, and --rm removes the container
        except (OSError, ValueError):
            pass
        remove_container(self.name)
        try:
            self._proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            self._proc.kill()
            self._proc.wait()


def sandbox_error(error: str, **extra) -> dict:
    return {"status": "sandbox_error", "error": error, "compile": None, "tests": [], **extra}


def trusted_result(proc: subprocess.CompletedProcess, nonce: str) -> dict:
    """trusted_answer for a one-shot runner (docker exec or docker run of runner.py)."""
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

    def __post_init__(self):
        self._free: list[Container] = []
        self._all: set[Container] = set()
        self._lock = threading.Lock()
        self._closed = False
        self.pool_id = uuid.uuid4().hex[:12]
        self.started = 0   # containers created, for reports and tests
        self.recycled = 0  # containers removed because a program breached a limit or left state
        self.stale_removed = remove_stale_containers()
        atexit.register(self.close)

    def _take(self) -> Container:
        with self._lock:
            if self._closed:
                raise AicdError("the sandbox pool is closed (the job is stopping)")
            if self._free:
                return self._free.pop()
            self.started += 1
        container = Container(self.image, self.limits, self.job, self.pool_id)
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
            self._closed = True
            containers = list(self._all)
            self._all.clear()
            self._free.clear()
        for c in containers:
            c.remove()
        # A container still being created when the pool closed is not registered yet: find it
        # by this pool's label.
        try:
            proc = docker("ps", "-aq", "--filter", f"label=aicd.pool={self.pool_id}", timeout=60)
            for ident in proc.stdout.split():
                remove_container(ident)
        except (AicdError, subprocess.TimeoutExpired) as err:
            log.warning("could not list this pool's containers at close: %s", err)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
