"""Runs a server command and takes its whole process tree down with the job that started it.

`python server_guard.py COMMAND...` (run by file path, with any interpreter: it imports only the
standard library, so the server's own virtualenv can run it). A server such as vLLM starts
children of its own (its engine core, a resource tracker); the kernel's parent-death signal
reaches only the direct child of the job, so a job killed with SIGKILL would leave those
grandchildren running. The guard is that direct child: it gets SIGTERM when the job dies
(aicd.common.subprocesses.start, `pdeath=SIGTERM`), and then stops its process group (the server
and every child of it share it: start() gives the guard a session of its own) — SIGINT first,
which vLLM and uvicorn take as a clean shutdown (their shared-memory queues are unlinked),
SIGKILL after a grace period. A stop sent to the group by the job itself (stop()) reaches
every process at once; the guard then only waits for the server and exits with its status.
The guard is the subreaper of the server's tree, and exits only once it has reaped all of it."""

from __future__ import annotations

import ctypes
import os
import signal
import subprocess
import sys
import time

PR_SET_PDEATHSIG = 1
PR_SET_CHILD_SUBREAPER = 36
GRACE_S = 10.0


def _stop_group(server: subprocess.Popen, orphaned: bool) -> int:
    """The server's status once its group is down: SIGINT to the group where the job died (a
    stop from the job has reached every process already: a second SIGINT would cut uvicorn's
    clean shutdown short), then SIGKILL to whatever is left once the grace period is over."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    if orphaned:
        _signal_group(signal.SIGINT)
    deadline = time.monotonic() + GRACE_S
    while time.monotonic() < deadline and server.poll() is None:
        time.sleep(0.1)
    time.sleep(0.5)  # the server's children finish their own shutdown after it
    _signal_group(signal.SIGKILL)
    server.wait()
    _reap(deadline=time.monotonic() + 5)
    return server.returncode


def _reap(deadline: float) -> None:
    """Wait for every descendant (the guard is their subreaper: orphans come to it, not to an
    init that may never reap them), so the guard exits only once nothing of the server is left."""
    while time.monotonic() < deadline:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            time.sleep(0.05)


def _signal_group(sig: int) -> None:
    """`sig` to every other process of the guard's process group."""
    me, group = os.getpid(), os.getpgrp()
    for name in os.listdir("/proc"):
        if not name.isdigit() or int(name) == me:
            continue
        try:
            if os.getpgid(int(name)) == group:
                os.kill(int(name), sig)
        except (ProcessLookupError, PermissionError):
            continue


def main(argv: list[str]) -> int:
    if not argv:
        print("usage: server_guard.py COMMAND [ARGS...]", file=sys.stderr)
        return 2
    parent = os.getppid()
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(PR_SET_PDEATHSIG, signal.SIGTERM)
    libc.prctl(PR_SET_CHILD_SUBREAPER, 1)
    if os.getppid() != parent:  # the job died before the signal was armed
        return 1
    stopping = []
    signal.signal(signal.SIGTERM, lambda *_: stopping.append(True))
    signal.signal(signal.SIGINT, lambda *_: stopping.append(True))
    server = subprocess.Popen(argv)
    while server.poll() is None and not stopping:
        time.sleep(0.2)
    if stopping:
        return _stop_group(server, orphaned=os.getppid() != parent)
    _signal_group(signal.SIGKILL)  # the server ended by itself: what it left goes too
    _reap(deadline=time.monotonic() + 5)
    return server.returncode


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
