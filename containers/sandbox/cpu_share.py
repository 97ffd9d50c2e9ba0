"""A step's time limit as the program's share of the CPU (the time limit times `cpus`), counted
for the whole sandbox as a cgroup accounts it, and what decides at the limit whether a program
that still runs has timed out or was slowed by others' load (docs/sandbox.md, "Time limits")."""

import os
import time

from program_user import SANDBOX, kill_program_user, sandbox_pids
from spawning import kill_group

CLK_TCK = os.sysconf("SC_CLK_TCK")


def _stat(pid) -> list[str] | None:
    """The fields of /proc/PID/stat after the command's name (state first); None: gone."""
    try:
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return None


def process_seconds(pid) -> float:
    """A process's CPU time and that of the children it has waited for. /proc/PID/stat gives each
    in whole clock ticks (10 ms), rounded down: for a hundred processes of a fork bomb that is up
    to a second unseen, and the bomb passed its share by that much before a count saw it. So a
    process's own time is read exactly too where the kernel shows it (/proc/PID/schedstat: its
    first thread's run time in ns, the whole of a single-threaded process), taking the larger."""
    fields = _stat(pid)
    if not fields:
        return 0.0
    own = (int(fields[11]) + int(fields[12])) / CLK_TCK  # utime, stime: every thread's
    try:
        with open(f"/proc/{pid}/schedstat") as fh:
            own = max(own, int(fh.read().split()[0]) / 1e9)
    except (OSError, ValueError, IndexError):
        pass
    return own + (int(fields[13]) + int(fields[14])) / CLK_TCK  # cutime, cstime


def reaped_ticks(pid) -> int:
    """CPU time of the children a process has waited for (cutime + cstime), in clock ticks."""
    fields = _stat(pid)
    return int(fields[13]) + int(fields[14]) if fields else 0


class CpuBudget:
    """The program's CPU time against its share of one step (the step's time limit times
    `cpus`), counted for the whole sandbox as a cgroup accounts it: every process in the container
    but its init and the runner (sandbox_pids), live or a zombie (its threads' time and that of
    the children it has waited for), and the orphans the container's init (tini, PID 1) has
    reaped since the step began. Init is read first and the processes in pid order, so a process
    reaped between two reads is missed for one count rather than counted twice, but for a pid
    that wrapped below its parent's: a count over the share is taken again at once, and only two
    in a row stop the program. (Children of a process that ignores SIGCHLD are reaped
    unaccounted: a count cannot see their time once they are gone; docs/sandbox.md.)"""

    def __init__(self, seconds: float, cpus: float):
        self.limit, self.cpus = seconds * cpus, cpus
        self.init_base = reaped_ticks(1)

    def seconds(self, pids) -> float:
        return (reaped_ticks(1) - self.init_base) / CLK_TCK + sum(process_seconds(pid) for pid in pids)

    def past_share(self) -> float | None:
        """The seconds counted once the program is past its share (two counts in a row, the
        second at once); None while within it."""
        seconds = 0.0
        for _ in range(2):
            seconds = self.seconds(sandbox_pids())
            if seconds <= self.limit:
                return None
        return seconds


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
        pids = sandbox_pids()
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
