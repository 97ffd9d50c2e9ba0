"""Who the program is inside the sandbox, and how the trusted runner reaches its processes:
the unprivileged uid every compile and run step runs as, its processes found by their real uid,
and killed by a child of the runner that has become that uid (containers/sandbox/runner.py)."""

import os
import signal
import time

SANDBOX = os.environ.get("AICD_SANDBOX") == "1"
# The program's user: chosen by the pool for each container (aicd.sandbox.isolation.program_uid),
# never by the program; 10001 when none is named (a host run, an ad-hoc `docker run`).
PROGRAM_UID = PROGRAM_GID = int(os.environ.get("AICD_PROGRAM_UID") or 10001)


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


def sandbox_pids() -> list[int]:
    """Every process in the container but its init (tini, PID 1) and this runner, in pid order:
    the program's, and the runner's own short-lived children, which become the program's user
    (spawn, as_program_user). Found without reading a file per process, for the counts that run
    while a fork bomb fills the process table."""
    skip = {1, os.getpid()}
    return sorted(pid for pid in map(int, filter(str.isdigit, os.listdir("/proc"))) if pid not in skip)


def program_tasks() -> int:
    """The tasks (threads included, zombies too) of sandbox_pids: what RLIMIT_NPROC counts of the
    program's user, for the fork gate (gate.task_room)."""
    total = 0
    for pid in sandbox_pids():
        try:
            with open(f"/proc/{pid}/stat") as fh:
                total += max(1, int(fh.read().rsplit(")", 1)[1].split()[17]))  # num_threads
        except (OSError, IndexError, ValueError):
            continue
    return total


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
