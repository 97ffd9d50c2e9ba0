"""The sandbox's limits (`execution.limits`): their defaults and the memory budget that every
cap a program can fill must fit in."""

from __future__ import annotations

from dataclasses import dataclass

from ..common.errors import AicdError
from ..common.params import Param, ParamSpec

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
