"""Who made a container or a scratch folder, so that a later process can tell whether that
owner is gone (killed outright, it could not clean up after itself) and remove what it left."""

from __future__ import annotations

import os
import socket


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
    """False only where the owner is provably gone: same host, boot and PID namespace with that
    pid no longer the same process, or a boot since."""
    parts = owner.split(":")
    if len(parts) != 5:
        return True  # not a label this version wrote: not ours to judge
    host, pid, started, boot, pidns = parts
    if host != socket.gethostname() or pidns != _pid_namespace() or "?" in (boot, pidns) or started == "None":
        return True
    if boot != _read("/proc/sys/kernel/random/boot_id"):
        return False  # the machine rebooted since: that owner is gone
    return pid.isdigit() and _start_time(int(pid)) == started
