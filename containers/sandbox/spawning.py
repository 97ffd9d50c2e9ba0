"""Starting one step's program (a compile or a run) for the trusted runner: fork and exec in a
session of its own, as the program's user, under its rlimits and, where the runner stands in for
a limit, its own seccomp filter (gate.py); the signal dispositions and OOM score it starts with."""

import os
import resource
import signal

from program_user import PROGRAM_GID, PROGRAM_UID, SANDBOX


def _ignored_at_start() -> list[int]:
    """The signals this process was started with ignored (SigIgn), Python's own among them:
    an ignored signal survives exec, and an engine or host can hand the runner any (one seen:
    signal 32, glibc's reserved SIGCANCEL, which Python cannot reset)."""
    try:
        with open("/proc/self/status") as fh:
            mask = next(int(line.split()[1], 16) for line in fh if line.startswith("SigIgn:"))
    except (OSError, StopIteration, ValueError):
        return [signal.SIGPIPE, signal.SIGXFSZ]
    return [sig for sig in range(1, 65) if mask >> (sig - 1) & 1]


IGNORED_AT_START = _ignored_at_start()
# rt_sigaction by number (glibc's sigaction refuses its reserved signals 32 and 33); the
# kernel's struct is the same on both: handler, flags, restorer, an 8-byte mask. Loaded here,
# before any fork, and only where such a signal came ignored.
RT_SIGACTION = {"x86_64": 13, "aarch64": 134}.get(os.uname().machine)
if RT_SIGACTION is not None and any(sig > signal.NSIG - 1 or sig in (32, 33) for sig in IGNORED_AT_START):
    import ctypes

    RAW_SYSCALL = ctypes.CDLL(None, use_errno=True).syscall
    SIG_DFL_ACTION = (ctypes.c_ulong * 4)(0, 0, 0, 0)  # SIG_DFL, no flags, no restorer, empty mask
else:
    RAW_SYSCALL = None


def default_disposition(sig: int) -> None:
    """SIG_DFL for `sig`, in the child before exec."""
    try:
        signal.signal(sig, signal.SIG_DFL)
        return
    except (OSError, ValueError):
        pass
    if RAW_SYSCALL is not None:
        RAW_SYSCALL(RT_SIGACTION, sig, ctypes.byref(SIG_DFL_ACTION), None, 8)


def set_oom_score_adj(value: int, pid="self") -> bool:
    """Write /proc/PID/oom_score_adj (only simple system calls: also in a child before exec)."""
    try:
        fd = os.open(f"/proc/{pid}/oom_score_adj", os.O_WRONLY)
    except OSError:
        return False
    try:
        os.write(fd, str(value).encode())
        return True
    except OSError:
        return False
    finally:
        os.close(fd)


def guard_from_oom() -> bool:
    """Take the container's init and this runner out of the OOM killer's reach (-1000) where the
    runner may (CAP_SYS_RESOURCE in the host's user namespace: the pool grants it where a cgroup
    caps the memory). The OOM killer takes the program first (1000); but memory that only the
    program's exit frees (shared memory it dropped from its mapping) stays charged until that
    exit, and an allocation of the runner's in between made the runner the next victim. Now such
    an allocation waits for the exit instead. False where the kernel refused."""
    return set_oom_score_adj(-1000, 1) & set_oom_score_adj(-1000)


class SandboxFault(Exception):
    """The runner could not do its job: the result is `sandbox_error`, not the program's fault."""


def kill_group(proc):
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def program_env(cwd, rlimits=None):
    env = {"PATH": "/usr/local/bin:/usr/bin:/bin", "HOME": cwd, "TMPDIR": cwd + "/.tmp", "GOCACHE": cwd + "/.gocache",
           "GOPATH": cwd + "/.gopath", "GOTMPDIR": cwd + "/.tmp", "LANG": "C.UTF-8", "GOFLAGS": "-mod=mod"}
    if (rlimits or {}).get("memory_mb"):
        # Without a cgroup limit the JVM sizes itself from the host's memory: tell it the
        # sandbox's instead (what it reads from the cgroup elsewhere).
        env["JAVA_TOOL_OPTIONS"] = f"-XX:MaxRAM={int(rlimits['memory_mb'])}m"
    return env


def child_rlimits(rlimits, seconds):
    """(resource, soft, hard) for a step's program from the pool's `rlimits` (aicd.sandbox.
    isolation.runner_limits): file size and open files always; a backstop on each process's
    private writable memory, processes and CPU time where the engine cannot cap them for the
    container. CPU time is the step's time limit times the CPU quota: the soft limit sends
    SIGXCPU (a timeout), the hard one SIGKILL."""
    rlimits = rlimits or {}
    out = []
    for key, kind, scale in (("fsize_mb", resource.RLIMIT_FSIZE, 1 << 20), ("nofile", resource.RLIMIT_NOFILE, 1),
                             ("data_mb", resource.RLIMIT_DATA, 1 << 20), ("nproc", resource.RLIMIT_NPROC, 1)):
        if rlimits.get(key):
            out.append((kind, int(rlimits[key]) * scale, int(rlimits[key]) * scale))
    if rlimits.get("cpus"):
        cpu = max(1, int(-(-seconds * float(rlimits["cpus"]) // 1)))
        out.append((resource.RLIMIT_CPU, cpu, cpu + 1))
    return out


class Spawned:
    """A started step: its pid, the parent's ends of its three pipes, and the inode gate's
    listener where it runs under one."""

    def __init__(self, pid, stdin, stdout, stderr, listener=None):
        self.pid, self.stdin, self.stdout, self.stderr, self.listener = pid, stdin, stdout, stderr, listener


def load(name):
    """meter.py or gate.py (beside this file, on the path runner.py sets), imported when a job
    first needs it: a host run never does, and each does work at import (gate builds its filters,
    meter makes a memfd to learn the shmem device)."""
    return __import__(name)


def spawn(argv, cwd, limits=(), env=None, filtered=None):
    """fork + exec in a new session, as the program's user inside the image, under `limits`
    (child_rlimits); filtered: under the program's own seccomp filter (gate.Options, from
    supervision.program_filter), whose listener the result carries where it has one.
    (Hand-written rather than subprocess: that import alone costs ~8 ms of every program's
    start-up.) All other descriptors are non-inheritable (PEP 446), so exec closes them."""
    gated = filtered is not None
    gate = load("gate") if gated else None
    program = gate.compiled(filtered) if gated else None  # built here: the child only makes system calls
    pipes = [os.pipe() for _ in range(4)]  # stdin, stdout, stderr, and errors before exec (close-on-exec)
    pair = gate.socket.socketpair() if gated else None
    try:
        pid = os.fork()
    except OSError:
        for read_end, write_end in pipes:
            os.close(read_end)
            os.close(write_end)
        for end in pair or ():
            end.close()
        raise
    if pid == 0:  # the child: only simple system calls until exec
        stage = "setup"
        try:
            os.setsid()
            os.dup2(pipes[0][0], 0)
            os.dup2(pipes[1][1], 1)
            os.dup2(pipes[2][1], 2)
            os.chdir(cwd)
            # Ignored signals survive exec (Python ignores SIGPIPE and SIGXFSZ, and the engine may
            # hand others down); programs expect defaults.
            for sig in IGNORED_AT_START:
                default_disposition(sig)
            stage = "limits"
            for kind, soft, hard in limits:
                resource.setrlimit(kind, (soft, hard))
            stage = "setup"
            if SANDBOX:
                # The OOM killer's first choice, and pinned there: written while the child may
                # (CAP_SYS_RESOURCE, where the runner has it), the program cannot lower it.
                set_oom_score_adj(1000)
                os.setgroups([])
                os.setgid(PROGRAM_GID)
                os.setuid(PROGRAM_UID)
                os.umask(0o077)
            if gated:
                stage = "gate"
                pair[0].close()
                gate.install_and_send(pair[1], program)
                pair[1].close()
            stage = "exec"
            os.execvpe(argv[0], argv, env or program_env(cwd))
        except BaseException as err:  # noqa: B036  tell the parent, then go
            try:
                os.write(pipes[3][1], f"{stage}\0{argv[0]}: {err}".encode())
            finally:
                os._exit(127)
    for fd in (pipes[0][0], pipes[1][1], pipes[2][1], pipes[3][1]):
        os.close(fd)
    listener = None
    if gated:
        pair[1].close()
        listener = gate.receive(pair[0])  # before exec: the program's first call may wait for it
        pair[0].close()
    with os.fdopen(pipes[3][0], "rb") as errors:
        failure = errors.read()  # empty: exec closed it, the program runs
    spawned = Spawned(pid, os.fdopen(pipes[0][1], "wb"), os.fdopen(pipes[1][0], "rb"), os.fdopen(pipes[2][0], "rb"),
                      listener)
    if failure:
        os.waitpid(pid, 0)
        for stream in (spawned.stdin, spawned.stdout, spawned.stderr):
            stream.close()
        if listener is not None:
            os.close(listener)
        stage, _, message = failure.decode("utf-8", "replace").partition("\0")
        if stage != "exec":  # chdir, setuid, the gate, ...: the runner's failure, not the program's
            raise SandboxFault(f"cannot start the program ({stage}): {message}")
        raise FileNotFoundError(message)  # the program's command does not exist
    return spawned
