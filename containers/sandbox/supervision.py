"""One step under watch: the program's output read and capped, its input written, its time
limit kept (cpu_share.py), and the limits the engine cannot set counted while it runs and
enforced by stopping it: tmpfs inodes, memory (meter.py) and CPU time, with the answers to its
own seccomp filter (gate.py): new inodes, forks, memfds, inotify instances."""

import os
import threading
import time

from cpu_share import CpuBudget, deadline
from program_user import PROGRAM_GID, PROGRAM_UID, SANDBOX, kill_program_user, program_tasks
from spawning import SandboxFault, child_rlimits, kill_group, load, program_env, spawn


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
    meter = load("meter")
    processes = {}
    for pid in sorted(int(name) for name in os.listdir("/proc") if name.isdigit()):
        found = meter.status_of(pid)  # a zombie leader's memory read from a thread that lives on
        if found is not None and found[0] == PROGRAM_UID:
            processes[pid] = found[1]
    return processes


def over_memory(rlimits, state) -> dict:
    """{"inodes": mount} or {"memory": MB counted} where the program has gone past a tmpfs's inode
    cap or its memory, as the runner counts them; empty while within them. The step's records
    in `state`: its shared objects where it has made shared mappings, and the families of the
    sockets it has made (meter.py)."""
    mount = over_inode_cap(rlimits.get("inodes") or {})
    if mount:
        return {"inodes": mount}
    if not (SANDBOX and rlimits.get("memory_mb")):
        return {}
    sockets = state.get("sockets")
    counted = load("meter").charged_mb(program_status(), rlimits.get("memory_mounts") or (),
                                       float(rlimits["memory_mb"]), state.get("shared"),
                                       frozenset(sockets) if sockets is not None else None)
    return {"memory": round(counted, 1)} if counted > float(rlimits["memory_mb"]) else {}


def over_cpu(budget) -> dict:
    """{"cpu": seconds counted} once the program is past its CPU share (CpuBudget.past_share)."""
    seconds = budget.past_share()
    return {} if seconds is None else {"cpu": round(seconds, 2)}


# A count that reads the program's mappings (meter.py), or a hundred processes' CPU times, can take
# milliseconds: the next of its kind waits at least this many times as long, so counting never
# takes more than a fifth of a CPU.
COUNT_SHARE = 4


class Cadence:
    """One kind of count in the watch, run every poll or, where it was costly, less often."""

    def __init__(self, count):
        self.count, self.due = count, 0.0

    def run(self, poll_s: float) -> dict:
        started = time.monotonic()
        if started < self.due:
            return {}
        breach = self.count()
        self.due = started + max(poll_s, COUNT_SHARE * (time.monotonic() - started))
        return breach


def watch(rlimits, proc, state, done, budget=None):
    """Where the engine cannot cap a tmpfs's inodes (Podman refuses nr_inodes), the container's
    memory or its CPU (rootless on cgroup v1), count them while the program runs and stop it at
    the cap, as the kernel would: a flood of empty files, an allocation loop or a fork bomb would
    otherwise take the host. The CPU time is counted on a cadence of its own, so a costly memory
    count (a hundred processes' mappings) never delays the stop at the CPU share."""
    poll_s = float(rlimits.get("poll_s", 0.01))
    cadences = []
    if rlimits.get("inodes") or rlimits.get("memory_mb"):
        cadences.append(Cadence(lambda: over_memory(rlimits, state)))
    if budget is not None:
        cadences.append(Cadence(lambda: over_cpu(budget)))
    while not done.wait(poll_s):
        for cadence in cadences:
            breach = cadence.run(poll_s)
            if breach:
                (key, value), = breach.items()
                stop_program(proc, state, key, value)
                return


def stop_program(proc, state, key, value) -> None:
    """A limit the runner watches was passed: record it, kill every process of the program. Past
    its CPU share the program has run out of time (a timeout, as under a cgroup's CPU quota)."""
    state.setdefault(key, value)
    if key == "cpu":
        state["timed_out"] = True
    kill_group(proc)
    if SANDBOX:
        kill_program_user()


def program_filter(rlimits):
    """The program's own seccomp filter (gate.Options), where the runner stands in for a limit: the
    inode gate where it counts inodes, the fork gate where it counts processes (both where the
    kernel lets a notified call go on), memfds made by the runner (or refused) where it counts
    memory, the inotify share where it has one. None: no filter."""
    gate = load("gate")
    options = gate.Options(inodes=bool(rlimits.get("inodes")) and bool(rlimits.get("inode_gate")),
                           memfds=rlimits.get("memfd") or gate.ALLOW,
                           tasks=bool(rlimits.get("nproc")) and bool(rlimits.get("fork_gate")),
                           inotify=bool(rlimits.get("inotify")))
    return options if options.notifies else None


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


def gate_answers(gate, proc, state, rlimits):
    """How the runner answers the program's filter (gate.Answers): new inodes against the caps
    (the program stopped at one), memfds made on its own tmpfs, shared mappings and sockets noted
    for the memory count, forks against the process limit, inotify calls against the share."""
    nproc, inotify = rlimits.get("nproc"), rlimits.get("inotify")
    return gate.Answers(
        full=gate.cap_check(rlimits.get("inodes") or {}),
        at_cap=lambda mount: stop_program(proc, state, "inodes", mount),
        make_memfd=memfd_maker(rlimits["memfd_dir"]) if rlimits.get("memfd") == gate.EMULATE else None,
        on_shared=lambda: state.setdefault("shared", {}),
        on_socket=lambda family: state.setdefault("sockets", set()).add(family),
        has_room=gate.task_room(int(nproc), program_tasks) if nproc and rlimits.get("fork_gate") else None,
        inotify=list(inotify) if inotify else None)


def helpers(proc, state, done, rlimits, cap, stdin, budget) -> list:
    """The threads beside a step's program: its output readers, its input, the runner's counts
    where the engine cannot cap a limit, and the answers to its own seccomp filter."""
    out, err = [], []
    state["out"], state["err"] = out, err
    threads = [threading.Thread(target=reader, args=(proc.stdout, cap, out, state, proc), daemon=True),
               threading.Thread(target=reader, args=(proc.stderr, cap, err, state, proc), daemon=True),
               threading.Thread(target=feed, args=(proc.stdin, stdin), daemon=True)]
    cpu_watched = budget if SANDBOX and rlimits.get("cpus") else None
    if rlimits.get("inodes") or rlimits.get("memory_mb") or cpu_watched is not None:
        threads.append(threading.Thread(target=watch, args=(rlimits, proc, state, done, cpu_watched), daemon=True))
    if proc.listener is not None:  # every new inode, fork, memfd ... waits for this thread's answer
        gate = load("gate")
        threads.append(threading.Thread(target=gate.serve, daemon=True, args=(
            proc.listener, gate_answers(gate, proc, state, rlimits), done)))
    return threads


def step(argv, cwd, stdin, wall_s, cap, limits=None):
    limits = limits or {}
    rlimits = limits.get("rlimits") or {}
    started = time.monotonic()
    # Where the runner counts memory there is no cgroup of the container's own (what the cgroup
    # files show is the host's, masked): its own count is what stops a program for memory.
    counts_memory = SANDBOX and bool(rlimits.get("memory_mb"))
    ooms = oom_kills() if SANDBOX and not counts_memory else None
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
    ended = time.monotonic()  # the program's main process is gone: stopped, or done
    kill_group(proc)  # whatever the program left in its group
    left = kill_program_user() if SANDBOX else []  # ... and whatever left the group: its pipes then close
    # Every process gone and reaped: the whole sandbox's CPU time, exactly (init's reaped orphans).
    counted = budget.seconds(left) + usage.ru_utime + usage.ru_stime if budget is not None else None
    done.set()  # after the kill: the gate answers until no process of the program is left
    for t in [timer, *threads]:
        t.join(timeout=2)
    if proc.listener is not None:
        os.close(proc.listener)
    if counted is not None and rlimits.get("cpus") and counted > budget.limit:
        state["timed_out"] = True  # past its CPU share between two counts (a cgroup's quota would not let it)
    state["oom"] = ooms is not None and (oom_kills() or 0) > ooms
    return step_result(state, status, usage, ended - started, rlimits, counts_memory or ooms is not None, counted)


def step_result(state, status, usage, wall_s, rlimits, oom_known, counted) -> dict:
    caps = rlimits.get("inodes") or {}
    used = inodes_used(caps)
    if caps and not (state.get("inodes") or state.get("memory")):
        state["inodes"] = over_inode_cap(caps)  # a flood that ended between two counts
    code = os.waitstatus_to_exitcode(status)
    return {
        "exit_code": code, "signal": -code if code < 0 else None,
        "stdout": b"".join(state["out"]).decode("utf-8", "replace"),
        "stderr": b"".join(state["err"]).decode("utf-8", "replace"),
        "timed_out": state.get("timed_out", False), "overflow": state["overflow"], "oom": state["oom"],
        "oom_known": oom_known, "pids_exhausted": state.get("pids_exhausted", False),
        "inode_limit": state.get("inodes"), "memory_stop": bool(state.get("memory")),
        "memory_counted_mb": state.get("memory"), **({"inodes_used": used} if caps else {}),
        **({"cpu_counted_s": round(max(counted, state.get("cpu") or 0), 3)} if counted is not None else {}),
        "wall_s": wall_s, "cpu_s": usage.ru_utime + usage.ru_stime, "max_rss_kb": usage.ru_maxrss,
    }
