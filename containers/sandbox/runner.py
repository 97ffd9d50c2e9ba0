#!/usr/bin/env python3
"""Runs programs inside the sandbox container. `runner.py --serve` is the container's main
process (as root, under tini): one JSON job per line on stdin, one JSON result per line on
stdout. Without arguments it runs the one job on stdin (docker exec, host tests).

Job: {"files": {name: text}, "compile": [argv] | null, "run": [argv] | null, "tests": [{"stdin", "expected"}],
      "limits": {"compile_s", "wall_s", "output_bytes"}, "nonce": str}

Trusted and untrusted sides (inside the image, AICD_SANDBOX=1): this runner is root with a
few capabilities; every compile and run step runs as the unprivileged PROGRAM_UID, which can
neither signal, trace nor write to the runner, nor read the job (so not the nonce that marks a
genuine result). Each step is its own session with a wall-clock limit that kills the group;
output beyond the cap stops the program. Afterwards every process of PROGRAM_UID is killed,
its SysV IPC objects removed (by creator as well as owner), the job folder and the scratch
folders emptied, and the result
says whether the container was left clean (`clean`, `breaches`); the pool recycles a container
that was not.

Outside the image (host tests, the bare benchmark) the same steps run as the calling user and
only the job folder is removed: there is no separate program user to clean up after."""

import json
import os
import resource
import signal
import stat
import sys
import threading
import time

WORK = os.environ.get("AICD_WORK", "/work")
SANDBOX = os.environ.get("AICD_SANDBOX") == "1"
# The program's user: 10001 by default; the pool names another where the container has a user
# namespace of its own (aicd.sandbox.isolation.program_uid). Set by the pool, never the program.
PROGRAM_UID = PROGRAM_GID = int(os.environ.get("AICD_PROGRAM_UID") or 10001)
HERE = os.path.dirname(os.path.abspath(__file__))  # meter.py and gate.py beside this file
SCRATCH = ("/tmp", "/dev/shm", "/dev/mqueue")  # world-writable places, emptied after every program
NOT_STATE = {"proc", "sysfs", "cgroup", "cgroup2", "devpts", "securityfs", "debugfs"}
# The program's processes are the OOM killer's first choice, never the runner.


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


OOM_GUARDED = None  # guard_from_oom's answer, in serve mode; reported with every result


class SandboxFault(Exception):
    """The runner could not do its job: the result is `sandbox_error`, not the program's fault."""


def reader(stream, cap, sink, state, proc):
    total = 0
    while True:
        chunk = stream.read(65536)
        if not chunk:
            return
        total += len(chunk)
        if total > cap:
            sink.append(chunk[: max(0, cap - (total - len(chunk)))])
            state["overflow"] = True
            kill_group(proc)
            # keep draining so the child cannot block on a full pipe
            while stream.read(65536):
                pass
            return
        sink.append(chunk)


def feed(pipe, text):
    try:
        if text:
            pipe.write(text.encode())
        pipe.close()
    except (BrokenPipeError, OSError, ValueError):
        pass


OOM_COUNTERS = ("/sys/fs/cgroup/memory.events", "/sys/fs/cgroup/memory/memory.oom_control")  # cgroup v2, v1


def oom_kills() -> int | None:
    """The container's count of OOM kills (None where the cgroup does not show it)."""
    for path in OOM_COUNTERS:
        try:
            with open(path) as fh:
                for line in fh:
                    if line.startswith("oom_kill "):
                        return int(line.split()[1])
        except (OSError, ValueError):
            continue
    return None


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


def _module(name):
    """meter.py or gate.py, imported when a job first needs it (host runs never do)."""
    if HERE not in sys.path:
        sys.path.insert(0, HERE)  # -I leaves the script's folder out; /opt/aicd is root's and read-only
        sys.dont_write_bytecode = True  # no __pycache__ in the build context of a host checkout
    return __import__(name)


def spawn(argv, cwd, limits=(), env=None, filtered=None):
    """fork + exec in a new session, as the program's user inside the image, under `limits`
    (child_rlimits); filtered: under the program's own seccomp filter (gate.py, program_filter's
    arguments), whose listener the result carries where it has one. (Hand-written rather than
    subprocess: that import alone costs ~8 ms of every program's start-up.) All other
    descriptors are non-inheritable (PEP 446), so exec closes them."""
    gated = filtered is not None
    gate = _module("gate") if gated else None
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
                gate.install_and_send(pair[1], **filtered)
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


def start_helper(thread, proc, state) -> None:
    """Start one of the runner's helper threads. A program that forks at once (a fork bomb) can
    use up the container's process limit before they start: it is then killed (it has used up
    its limit; its status says so) and the thread started once the limit frees."""
    for _attempt in range(100):
        try:
            thread.start()
            return
        except RuntimeError:  # "can't start new thread": no pid left in the container
            state["pids_exhausted"] = True
            kill_group(proc)
            if SANDBOX:
                kill_program_user()
            time.sleep(0.02)
    raise SandboxFault("cannot start the runner's helper threads: the container's process limit stays used up")


def inodes_used(caps) -> dict:
    """{mount: inodes in use} of the tmpfs mounts the pool asked the runner to count."""
    used = {}
    for mount in caps:
        try:
            st = os.statvfs(mount)
        except OSError:
            continue
        used[mount] = st.f_files - st.f_ffree
    return used


def over_inode_cap(caps) -> str | None:
    """The first mount whose inodes exceed its cap, if any."""
    for mount, used in inodes_used(caps).items():
        if used > int(caps[mount]):
            return mount
    return None


def program_status() -> dict:
    """{pid: its memory fields (meter.parse_status)} of every process of the program's user, in
    pid order (a parent before the children it forked, but for pids that wrapped around)."""
    meter = _module("meter")
    processes = {}
    for pid in sorted(int(name) for name in os.listdir("/proc") if name.isdigit()):
        found = meter.status_of(pid)  # a zombie leader's memory read from a thread that lives on
        if found is not None and found[0] == PROGRAM_UID:
            processes[pid] = found[1]
    return processes


CLK_TCK = os.sysconf("SC_CLK_TCK")


def _stat(pid) -> list[str] | None:
    """The fields of /proc/PID/stat after the command's name (state first); None: gone."""
    try:
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return None


def reaped_ticks(pid) -> int:
    """CPU time of the children a process has waited for (cutime + cstime), in clock ticks."""
    fields = _stat(pid)
    return int(fields[13]) + int(fields[14]) if fields else 0


class CpuBudget:
    """The program's CPU time against its share of one step (the step's time limit times
    `cpus`), counted for the whole sandbox as a cgroup accounts it: every process of the
    program's user, live or a zombie (its threads' time and that of the children it has waited
    for), and the orphans the container's init (tini, PID 1) has reaped since the step began.
    Init is read first and the processes in pid order, so a process reaped between two reads is
    missed for one count rather than counted twice, and only two counts over the share in a row
    stop the program. (Children of a process that ignores SIGCHLD are reaped unaccounted: a count
    cannot see their time once they are gone; docs/sandbox.md.)"""

    def __init__(self, seconds: float, cpus: float):
        self.limit, self.cpus = seconds * cpus, cpus
        self.init_base = reaped_ticks(1)
        self.over = 0

    def seconds(self, pids) -> float:
        ticks = reaped_ticks(1) - self.init_base
        for pid in pids:
            fields = _stat(pid)
            if fields:
                ticks += sum(int(x) for x in fields[11:15])  # utime, stime, cutime, cstime
        return ticks / CLK_TCK

    def exceeded(self, seconds: float) -> bool:
        self.over = self.over + 1 if seconds > self.limit else 0
        return self.over >= 2


def running(pids) -> int:
    """How many threads of these processes are running or waiting for a CPU (state R)."""
    count = 0
    for pid in pids:
        try:
            tids = os.listdir(f"/proc/{pid}/task")
        except OSError:
            continue
        for tid in tids:
            fields = _stat(f"{pid}/task/{tid}")
            count += bool(fields) and fields[0] == "R"
    return count


def over_limit(rlimits, budget=None, shared=None) -> dict:
    """What the program has gone past of the limits the runner watches itself: {"inodes": mount},
    {"memory": MB counted} or {"cpu": seconds counted}; empty while within them. shared: where
    the program has made shared mappings, the step's record of its shared objects (meter.py)."""
    mount = over_inode_cap(rlimits.get("inodes") or {})
    if mount:
        return {"inodes": mount}
    memory = SANDBOX and rlimits.get("memory_mb")
    if not (memory or (SANDBOX and budget is not None)):
        return {}
    processes = program_status()
    if memory:
        counted = _module("meter").charged_mb(processes, rlimits.get("memory_mounts") or (),
                                              float(rlimits["memory_mb"]), shared)
        if counted > float(rlimits["memory_mb"]):
            return {"memory": round(counted, 1)}
    if budget is not None:
        seconds = budget.seconds(processes)
        if budget.exceeded(seconds):
            return {"cpu": round(seconds, 2)}
    return {}


# A count that reads the program's mappings (meter.py) can take milliseconds: the next waits at
# least this many times as long, so counting never takes more than a fifth of a CPU.
COUNT_SHARE = 4


def watch(rlimits, proc, state, done, budget=None):
    """Where the engine cannot cap a tmpfs's inodes (Podman refuses nr_inodes), the container's
    memory or its CPU (rootless on cgroup v1), count them while the program runs and stop it at
    the cap, as the kernel would: a flood of empty files, an allocation loop or a fork bomb would
    otherwise take the host."""
    poll_s, took = float(rlimits.get("poll_s", 0.01)), 0.0
    while not done.wait(max(poll_s, COUNT_SHARE * took)):
        started = time.monotonic()
        breach = over_limit(rlimits, budget, state.get("shared"))
        if breach:
            (key, value), = breach.items()
            stop_program(proc, state, key, value)
            return
        took = time.monotonic() - started


def stop_program(proc, state, key, value) -> None:
    """A limit the runner watches was passed: record it, kill every process of the program. Past
    its CPU share the program has run out of time (a timeout, as under a cgroup's CPU quota)."""
    state.setdefault(key, value)
    if key == "cpu":
        state["timed_out"] = True
    kill_group(proc)
    if SANDBOX:
        kill_program_user()


# Once its time limit has come, a program that still wants the CPU is looked at this often, and
# what decides (none of its threads wanting the CPU, more of them than its share) must be seen at
# this many looks in a row (a program that computes is seen asleep now and then: 4 of 32 looks
# at one that faults in shared memory).
LATE_POLL_S = 0.05
LOOKS = 3


def deadline(proc, state, done, seconds, budget=None, grace=1.0):
    """The step's time limit. Without a CPU budget (the host tests) the wall clock alone decides.
    In the sandbox, at the limit a program is looked at again and again. It has timed out once
    its CPU time passes its share (CpuBudget), once no thread of it wants the CPU (asleep by its
    own choice, blocked on a pipe, never reading its input), or when more of its threads want the
    CPU than its share has CPUs (it is slowed by itself: a fork bomb, more threads than `cpus`, as
    a cgroup's CPU quota would throttle them). Otherwise it was slowed by others' load (a
    neighbour's fork bomb, the host's jobs), and it runs on, up to `grace` times the limit: its
    own measured time decides, not the wall clock under someone else's load."""
    if done.wait(seconds):
        return
    end, idle, crowded = time.monotonic() + max(0.0, grace - 1) * seconds, 0, 0
    share = max(1, -int(-budget.cpus // 1)) if budget is not None else 0  # whole CPUs, rounded up
    while SANDBOX and budget is not None and time.monotonic() < end:
        pids = program_pids()
        counted = budget.seconds(pids)
        if counted > budget.limit:
            state.setdefault("cpu", round(counted, 2))
            break
        wanting = running(pids)
        idle, crowded = (0 if wanting else idle + 1), (crowded + 1 if wanting > share else 0)
        if idle >= LOOKS or crowded >= LOOKS or done.wait(LATE_POLL_S):
            break
    if done.is_set():
        return
    state["timed_out"] = True
    kill_group(proc)
    if SANDBOX:
        kill_program_user()


def program_filter(rlimits) -> dict | None:
    """The arguments of the program's own seccomp filter (gate.install_and_send), where the runner
    stands in for a limit: the inode gate where it counts inodes and the kernel allows it, and
    memfds made by the runner (or refused) where it counts memory. None: no filter."""
    inodes = bool(rlimits.get("inodes")) and bool(rlimits.get("inode_gate"))
    memfds = rlimits.get("memfd")
    if not (inodes or memfds):
        return None
    return {"inodes": inodes, "memfds": memfds or "allow"}


def memfd_maker(folder: str):
    """make_memfd for the gate: an unnamed file on the runner's own tmpfs `folder` (mode 0700, so
    the program can neither name nor link it), the program's, readable and writable."""
    def make() -> int:
        fd = os.open(folder, os.O_TMPFILE | os.O_RDWR | os.O_EXCL, 0o600)
        try:
            os.fchown(fd, PROGRAM_UID, PROGRAM_GID)
        except OSError:
            os.close(fd)
            raise
        return fd
    return make


def helpers(proc, state, done, rlimits, cap, stdin, budget) -> list:
    """The threads beside a step's program: its output readers, its input, the runner's counts
    where the engine cannot cap a limit, and the answers to its own seccomp filter."""
    out, err = [], []
    state["out"], state["err"] = out, err
    threads = [threading.Thread(target=reader, args=(proc.stdout, cap, out, state, proc), daemon=True),
               threading.Thread(target=reader, args=(proc.stderr, cap, err, state, proc), daemon=True),
               threading.Thread(target=feed, args=(proc.stdin, stdin), daemon=True)]
    caps = rlimits.get("inodes") or {}
    cpu_watched = budget if SANDBOX and rlimits.get("cpus") else None
    if caps or rlimits.get("memory_mb") or cpu_watched is not None:
        threads.append(threading.Thread(target=watch, args=(rlimits, proc, state, done, cpu_watched), daemon=True))
    if proc.listener is not None:  # every new file (and memfd) waits for this thread's answer
        gate = _module("gate")
        make = memfd_maker(rlimits["memfd_dir"]) if rlimits.get("memfd") == gate.EMULATE else None
        threads.append(threading.Thread(target=gate.serve, daemon=True, args=(
            proc.listener, gate.cap_check(caps), done, lambda mount: stop_program(proc, state, "inodes", mount),
            make, lambda: state.setdefault("shared", {}))))
    return threads


def step(argv, cwd, stdin, wall_s, cap, limits=None):
    limits = limits or {}
    rlimits = limits.get("rlimits") or {}
    caps = rlimits.get("inodes") or {}
    started = time.monotonic()
    ooms = oom_kills() if SANDBOX else None
    share = rlimits.get("cpu_share")
    budget = CpuBudget(wall_s, float(share)) if SANDBOX and share else None
    try:
        proc = spawn(argv, cwd, child_rlimits(rlimits, wall_s), program_env(cwd, rlimits),
                     filtered=program_filter(rlimits) if SANDBOX else None)
    except OSError as err:
        if err.errno in (11, 12, 23, 24):  # EAGAIN, ENOMEM, ENFILE, EMFILE: the container is out of room
            raise SandboxFault(f"cannot start the program: {err}") from None
        return {"exit_code": None, "stdout": "", "stderr": str(err), "timed_out": False, "overflow": False,
                "wall_s": 0.0, "cpu_s": 0.0, "max_rss_kb": 0, "signal": None, "spawn_error": True}
    state, done = {"overflow": False}, threading.Event()
    timer = threading.Thread(target=deadline, daemon=True, args=(
        proc, state, done, wall_s, budget, float(rlimits.get("wall_grace", 1))))
    start_helper(timer, proc, state)  # before stdin is written: a program that never reads it still times out
    threads = helpers(proc, state, done, rlimits, cap, stdin, budget)
    for t in threads:
        start_helper(t, proc, state)
    _, status, usage = os.wait4(proc.pid, 0)
    counted = budget.seconds(program_pids()) + usage.ru_utime + usage.ru_stime if budget is not None else None
    kill_group(proc)  # whatever the program left in its group
    if SANDBOX:
        kill_program_user()  # ... and whatever left the group: its pipes then close
    done.set()  # after the kill: the gate answers until no process of the program is left
    for t in [timer, *threads]:
        t.join(timeout=2)
    if proc.listener is not None:
        os.close(proc.listener)
    if counted is not None and rlimits.get("cpus") and counted > budget.limit:
        state["timed_out"] = True  # past its CPU share between two counts (a cgroup's quota would not let it)
    return step_result(state, status, usage, started, caps, ooms, counted)


def step_result(state, status, usage, started, caps, ooms, counted) -> dict:
    used = inodes_used(caps)
    if caps and not (state.get("inodes") or state.get("memory")):
        state["inodes"] = over_inode_cap(caps)  # a flood that ended between two counts
    state["oom"] = ooms is not None and (oom_kills() or 0) > ooms
    code = os.waitstatus_to_exitcode(status)
    return {
        "exit_code": code, "signal": -code if code < 0 else None,
        "stdout": b"".join(state["out"]).decode("utf-8", "replace"),
        "stderr": b"".join(state["err"]).decode("utf-8", "replace"),
        "timed_out": state.get("timed_out", False), "overflow": state["overflow"], "oom": state["oom"],
        "oom_known": ooms is not None, "pids_exhausted": state.get("pids_exhausted", False),
        "inode_limit": state.get("inodes"), "memory_stop": bool(state.get("memory")),
        "memory_counted_mb": state.get("memory"), **({"inodes_used": used} if caps else {}),
        **({"cpu_counted_s": round(max(counted, state.get("cpu") or 0), 3)} if counted is not None else {}),
        "wall_s": time.monotonic() - started, "cpu_s": usage.ru_utime + usage.ru_stime, "max_rss_kb": usage.ru_maxrss,
    }


# ---- the trusted cleanup (inside the image only) -------------------------------------------

def as_program_user(fn) -> bool:
    """Run fn in a forked child that has become PROGRAM_UID: the kernel then lets it signal
    exactly the program's processes and remove exactly its IPC objects. True if fn succeeded."""
    try:
        pid = os.fork()
    except OSError:
        return False
    if pid == 0:
        try:
            os.setgroups([])
            os.setgid(PROGRAM_GID)
            os.setuid(PROGRAM_UID)
            fn()
            os._exit(0)
        except BaseException:
            os._exit(1)
    _, status = os.waitpid(pid, 0)
    return os.waitstatus_to_exitcode(status) == 0


def real_uid(pid: str) -> int | None:
    """The real uid from /proc/<pid>/status: unlike the owner of /proc/<pid>, which a
    process can turn into root with prctl(PR_SET_DUMPABLE, 0), it cannot be hidden."""
    try:
        with open(f"/proc/{pid}/status") as fh:
            for line in fh:
                if line.startswith("Uid:"):
                    return int(line.split()[1])
    except (OSError, ValueError, IndexError):
        pass
    return None


def program_pids() -> list[int]:
    return [int(name) for name in os.listdir("/proc") if name.isdigit() and real_uid(name) == PROGRAM_UID]


def _kill_all_of_my_user():
    try:
        os.kill(-1, signal.SIGKILL)  # every process this uid may signal: the program's, not the runner's
    except ProcessLookupError:
        pass


def kill_program_user(deadline_s: float = 3.0) -> list[int]:
    """Kill every process of the program's user; the container's init reaps the orphans.
    kill(-1) as that user runs at least once, whatever /proc shows. Returns the pids still
    there at the deadline (empty when all are gone)."""
    end = time.monotonic() + deadline_s
    while True:
        if not as_program_user(_kill_all_of_my_user):
            # No fork possible (the pids limit is full): kill one by one, as root with CAP_KILL.
            for pid in program_pids():
                try:
                    os.kill(pid, signal.SIGKILL)
                except OSError:
                    pass
        left = program_pids()  # zombies stay listed until init has reaped them
        if not left or time.monotonic() > end:
            return left
        time.sleep(0.002)


IPC_TABLES = {"shm": "shmctl", "msg": "msgctl", "sem": "semctl"}
IPC_ID_COLUMNS = {"shm": "shmid", "msg": "msqid", "sem": "semid"}


def ipc_objects() -> dict:
    """{kind: [(id, owner uid)]} of the SysV IPC objects the program made, from /proc/sysvipc.
    Found by creator as well as owner: IPC_SET lets the program hand an object to another
    owner (root, say), but the creator uid (cuid) stays its own."""
    found = {}
    for kind in IPC_TABLES:
        try:
            with open(f"/proc/sysvipc/{kind}") as fh:
                header = fh.readline().split()
                cols = [header.index(name) for name in (IPC_ID_COLUMNS[kind], "uid", "cuid")]
                rows = [[int(r.split()[c]) for c in cols] for r in fh if r.strip()]
        except (OSError, ValueError):
            rows = []
        objects = [(ident, uid) for ident, uid, cuid in rows if PROGRAM_UID in (uid, cuid)]
        if objects:
            found[kind] = objects
    return found


def _remove_ipc():
    """As the program's user: the creator may remove an object whoever owns it now."""
    import ctypes  # rarely needed: imported here to keep every program's start-up short

    libc = ctypes.CDLL(None, use_errno=True)
    for kind, objects in ipc_objects().items():
        for ident, _ in objects:
            if kind == "sem":
                libc.semctl(ident, 0, 0)  # IPC_RMID
            else:
                getattr(libc, IPC_TABLES[kind])(ident, 0, None)


def clean_ipc() -> list[str]:
    """Remove the program's SysV IPC objects. Leaving one is ordinary and not a breach; handing
    one to another owner is an attempt to outlive the cleanup, and is (the container goes)."""
    left = ipc_objects()
    if not left:
        return []
    breaches = []
    handed = {kind: sum(uid != PROGRAM_UID for _, uid in objects) for kind, objects in left.items()}
    if any(handed.values()):
        counts = ", ".join(f"{kind} {n}" for kind, n in handed.items() if n)
        breaches.append(f"SysV IPC objects handed to another owner ({counts}): removed, container recycled")
    as_program_user(_remove_ipc)
    if ipc_objects():
        breaches.append("SysV IPC objects could not be removed")
    return breaches


DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW


class Enough(Exception):
    """Stops a walk early."""


def _enter(parent_fd, name, device):
    """Open the folder `name` under parent_fd (not a link, not another mount); None if it cannot
    be. A folder the program locked (mode 0) is opened all the same: the runner owns the box."""
    for attempt in (1, 2):
        try:
            fd = os.open(name, DIR_FLAGS, dir_fd=parent_fd)
            break
        except PermissionError:
            if attempt == 2:
                return None
            try:
                os.chmod(name, 0o700, dir_fd=parent_fd)
            except OSError:
                return None
        except OSError:
            return None
    if device is not None and os.fstat(fd).st_dev != device:
        os.close(fd)
        return None
    return fd


def walk_tree(path, visit=None, leave=None, same_device=True):
    """Every entry under the folder `path`, depth first, with no recursion and no long paths, so
    a tree of any depth (a program can leave one 100,000 levels deep) is walked in full: one
    folder open at a time, a stack of the names still to enter, climbing back with "..".
    visit(dir_fd, entry, names) for each entry (names: the folders from `path` down to it);
    leave(dir_fd, name) once a folder's contents are done, with its parent open. A visit may
    raise Enough to stop."""
    try:
        fd = os.open(path, DIR_FLAGS)
    except OSError:
        return
    device = os.fstat(fd).st_dev if same_device else None

    def entries(dir_fd, names):
        subfolders = []
        try:
            listed = list(os.scandir(dir_fd))
        except OSError:
            return subfolders
        for entry in listed:
            if visit is not None:
                visit(dir_fd, entry, names)
            try:
                if entry.is_dir(follow_symlinks=False):
                    subfolders.append(entry.name)
            except OSError:
                pass
        return subfolders

    names, stack = [], [entries(fd, [])]
    try:
        while stack:
            if stack[-1]:
                name = stack[-1].pop()
                child = _enter(fd, name, device)
                if child is None:
                    continue
                os.close(fd)
                fd = child
                names.append(name)
                stack.append(entries(fd, names))
                continue
            stack.pop()
            if not names:
                break
            parent = os.open("..", DIR_FLAGS, dir_fd=fd)
            os.close(fd)
            fd = parent
            name = names.pop()
            if leave is not None:
                leave(fd, name)
    finally:
        os.close(fd)


def _retry_writable(fn, dir_fd):
    """fn(); once more after making the folder writable if the program had locked it."""
    try:
        fn()
    except PermissionError:
        try:
            os.chmod(dir_fd, 0o700)
            fn()
        except OSError:
            pass
    except OSError:
        pass  # left behind: the state check reports it


def _unlink_file(dir_fd, entry, _names):
    try:
        is_dir = entry.is_dir(follow_symlinks=False)
    except OSError:
        is_dir = False
    if not is_dir:
        _retry_writable(lambda: os.unlink(entry.name, dir_fd=dir_fd), dir_fd)


def _remove_folder(dir_fd, name):
    _retry_writable(lambda: os.rmdir(name, dir_fd=dir_fd), dir_fd)


def empty_folder(path: str) -> None:
    """Remove everything under `path` (kept itself), however deep: iterative, never recursive
    (shutil.rmtree and os.walk recurse on the image's Python and hit RecursionError on a tree
    1,000 levels deep)."""
    walk_tree(path, _unlink_file, _remove_folder)


def remove_tree(path: str) -> None:
    empty_folder(path)
    try:
        os.rmdir(path)
    except FileNotFoundError:
        pass
    except OSError:
        pass  # left behind: the state check reports it


def writable_mounts() -> list[str]:
    points = []
    with open("/proc/self/mounts") as fh:
        for line in fh:
            _, point, fstype, opts = line.split()[:4]
            if fstype not in NOT_STATE and "rw" in opts.split(","):
                points.append(point.replace("\\040", " "))
    return points


def files_of_program_user(limit: int = 5) -> list[str]:
    """Anything the program's user still owns in any writable mount (it cannot chown, so
    everything it made is owned by it). Other mounts are walked on their own (and proc-like
    ones not at all)."""
    found = []
    for point in writable_mounts():
        try:
            top = os.lstat(point)
        except OSError:
            continue
        if top.st_uid == PROGRAM_UID:
            found.append(point)
        if not stat.S_ISDIR(top.st_mode):
            continue

        def visit(dir_fd, entry, names, point=point):
            try:
                owner = entry.stat(follow_symlinks=False).st_uid
            except OSError:
                return
            if owner == PROGRAM_UID:
                path = os.path.join(point, *names, entry.name)
                found.append(path if len(path) <= 200 else path[:120] + f"... ({len(names)} levels deep)")
                if len(found) >= limit:
                    raise Enough

        try:
            walk_tree(point, visit)
        except Enough:
            return found
    return found


def memory_left(mounts, wait_s: float = 2.0) -> dict:
    """{mount: MB} of the counted tmpfs mounts that still hold data once the program's processes
    and files are gone. A memfd or file in flight in a socket that the program closed is freed a
    moment later, by the kernel's garbage collector of such sockets: waited for up to wait_s."""
    end = time.monotonic() + wait_s
    while True:
        left = {}
        for mount in mounts:
            try:
                st = os.statvfs(mount)
            except OSError:
                continue
            if st.f_blocks != st.f_bfree:
                left[mount] = round((st.f_blocks - st.f_bfree) * st.f_frsize / (1 << 20), 1)
        if not left or time.monotonic() > end:
            return left
        time.sleep(0.01)


def clean_up(folder: str, counted_mounts=()) -> list[str]:
    """Leave the container as the program found it; return what could not be undone."""
    breaches = []
    left = kill_program_user()
    if left:
        breaches.append(f"{len(left)} process(es) of the program survived SIGKILL")
    remove_tree(folder)
    for path in SCRATCH:
        empty_folder(path)
    breaches += clean_ipc()
    owned = files_of_program_user()
    if owned:
        breaches.append("files of the program survived cleanup: " + ", ".join(owned))
    held = memory_left(counted_mounts)
    if held:
        breaches.append("memory of the program survived cleanup: " + ", ".join(f"{m} {mb} MB" for m, mb in held.items()))
    return breaches


# ---- one job -------------------------------------------------------------------------------

def classify(result):
    if result.get("spawn_error"):
        return "runtime_error"
    if result["overflow"]:
        return "output_limit"
    if result.get("inode_limit") or result.get("memory_stop"):
        return "memory_limit"  # memory, or tmpfs inodes (memory too), counted where the engine cannot cap them
    if result.get("oom"):
        return "memory_limit"  # the cgroup's OOM killer took one of its processes, whatever the parent's exit
    if result["timed_out"] or result["signal"] in (signal.SIGXCPU,):
        return "timeout"  # wall clock, or the CPU time that stands in for a CPU quota
    if result["signal"] == signal.SIGKILL:
        # The OOM killer, when the cgroup counted one; a program may also SIGKILL itself.
        return "memory_limit" if result.get("oom") or not result.get("oom_known") else "runtime_error"
    if result["exit_code"] != 0:
        return "runtime_error"
    return "ok"


def prepare(job) -> str:
    os.makedirs(WORK, exist_ok=True)
    folder = os.path.join(WORK, "job-" + os.urandom(8).hex())
    os.mkdir(folder, 0o700)
    os.mkdir(os.path.join(folder, ".tmp"))
    for name, text in job["files"].items():
        with open(os.path.join(folder, name), "w", encoding="utf-8") as fh:
            fh.write(text)
    if SANDBOX:  # the job folder is the only place the program may write
        for name in os.listdir(folder):
            os.chown(os.path.join(folder, name), PROGRAM_UID, PROGRAM_GID)
        os.chown(folder, PROGRAM_UID, PROGRAM_GID)
    return folder


def run_job(job, folder):
    limits = job.get("limits", {})
    cap = int(limits.get("output_bytes", 1 << 20))
    result = {"status": None, "compile": None, "tests": []}
    if job.get("compile"):
        comp = step(job["compile"], folder, "", float(limits.get("compile_s", 30)), cap, limits)
        result["compile"] = {k: comp[k] for k in ("exit_code", "stderr", "wall_s", "timed_out")}
        if comp["exit_code"] != 0 or comp["timed_out"]:
            result["status"] = "compile_error"
            return result
    if not job.get("run"):  # no tests or no entry point: built (or syntax-checked), not run
        result["status"] = "compiled"
        return result
    tests = job.get("tests") or [{"stdin": "", "expected": None}]
    statuses = []
    for test in tests:
        run = step(job["run"], folder, test.get("stdin") or "", float(limits.get("wall_s", 5)), cap, limits)
        status = classify(run)
        passed = None
        if status == "ok" and test.get("expected") is not None:
            passed = run["stdout"].split() == str(test["expected"]).split()
            if not passed:
                status = "wrong_answer"
        statuses.append(status)
        run["stdout"], run["stderr"] = run["stdout"][:4096], run["stderr"][:4096]
        result["tests"].append({**run, "status": status, "passed": passed})
        if status in ("timeout", "memory_limit", "output_limit"):
            break
    order = ["output_limit", "memory_limit", "timeout", "runtime_error", "wrong_answer", "ok"]
    result["status"] = min(statuses, key=order.index)
    return result


def main(job) -> dict:
    if SANDBOX and os.geteuid() != 0:
        raise SandboxFault("the runner must start as root in the sandbox (docker exec -u 0): "
                           "without it the program would run as the runner's own user")
    folder = prepare(job)
    try:
        result = run_job(job, folder)
    finally:
        if SANDBOX:
            rlimits = job.get("limits", {}).get("rlimits") or {}
            breaches = clean_up(folder, rlimits.get("memory_mounts") or ())
        else:
            remove_tree(folder)
            breaches = []
    return {**result, "clean": not breaches, "breaches": breaches}


def answer(job) -> dict:
    """The result of one job, with its nonce; a failure of the runner itself is reported."""
    nonce = job.get("nonce") if isinstance(job, dict) else None
    try:
        out = main(job)
    except Exception as err:  # the runner itself failed: report, never hang the caller
        out = {"status": "sandbox_error", "error": f"{type(err).__name__}: {err}", "compile": None, "tests": [],
               "clean": False, "breaches": ["the runner failed"]}
    out["nonce"], out["oom_guarded"] = nonce, OOM_GUARDED
    return out


def serve() -> None:
    """One job per line on stdin, one result per line on stdout, until stdin closes: the
    container's main process, so a program costs no `docker exec` and no interpreter start.
    When the pool's `docker run -i` client goes (its job was killed), stdin closes, this
    returns, and the container stops and is removed (--rm)."""
    global OOM_GUARDED
    if SANDBOX:
        OOM_GUARDED = guard_from_oom()
    sys.stdout.write(json.dumps({"ready": True}) + "\n")
    sys.stdout.flush()
    for line in sys.stdin:
        if not line.strip():
            continue
        try:
            job = json.loads(line)
        except ValueError as err:
            job, out = None, {"status": "sandbox_error", "error": f"bad job line: {err}", "compile": None,
                              "tests": [], "clean": False, "breaches": [], "nonce": None}
        if job is not None:
            out = answer(job)
        sys.stdout.write(json.dumps(out) + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    if sys.argv[1:] == ["--serve"]:
        serve()
    else:  # one job on stdin (docker exec, the host tests, the bare benchmark)
        try:
            job = json.load(sys.stdin)
        except ValueError:
            job = {"nonce": None, "files": None}
        sys.stdout.write(json.dumps(answer(job)))
