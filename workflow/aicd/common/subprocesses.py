"""Helper processes a job starts and must never leave behind (ground floor): they get SIGKILL
from the kernel when the thread that started them dies (PR_SET_PDEATHSIG: a job killed with
SIGKILL takes them along), and are stopped in order when the job is done: SIGTERM to their
process group, then SIGKILL after a grace period."""

from __future__ import annotations

import ctypes
import os
import signal
import subprocess

PR_SET_PDEATHSIG = 1


def die_with_parent(sig: int = signal.SIGKILL) -> None:
    """preexec_fn of a helper process: `sig` when the thread that started it dies. Start
    helpers from the main thread: a worker thread's exit would kill them early."""
    ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, sig)


def start(command: list[str], log_path, env: dict | None = None, cwd=None,
          pdeath: int = signal.SIGKILL) -> subprocess.Popen:
    """`command` in a process group of its own (so stop() reaches its children too), its
    output appended to `log_path`, sent `pdeath` when the calling thread dies (SIGKILL; a
    helper that must take children of its own along, as aicd.llm.server_guard does, asks for
    a signal it can catch)."""
    with open(log_path, "ab") as log:
        return subprocess.Popen(command, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT,
                                env=env, cwd=cwd, start_new_session=True,
                                preexec_fn=lambda: die_with_parent(pdeath))


def stop(proc: subprocess.Popen, grace_s: float = 10.0, first: int = signal.SIGTERM) -> int | None:
    """`first` (SIGTERM unless the helper cleans up only on another) to the process group,
    SIGKILL after `grace_s`; the exit status."""
    if proc.poll() is not None:
        return proc.returncode
    for sig, wait in ((first, grace_s), (signal.SIGKILL, 30.0)):
        try:
            os.killpg(proc.pid, sig)
        except ProcessLookupError:
            break
        try:
            return proc.wait(timeout=wait)
        except subprocess.TimeoutExpired:
            continue
    return proc.poll()
