"""Who the program is inside the sandbox, and how the trusted runner reaches its processes:
the unprivileged uid every compile and run step runs as, its processes found by their real uid,
and killed by a child of the runner that has become that uid (containers/sandbox/runner.py)."""

import os
import signal
import time

SANDBOX = os.environ.get("AICD_SANDBOX") == "1"
# The program's user: 10001 by default; the pool names another where the container has a user
# namespace of its own (aicd.sandbox.isolation.program_uid). Set by the pool, never the program.
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
