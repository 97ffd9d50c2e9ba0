"""A job that outgrows its memory stops with a message, not an unexplained kill (ground floor).

Snakemake hands every heavy rule's `mem_mb` to its job in AICD_MEM_MB (and the job's rule and
wildcards in AICD_JOB). A watcher thread then samples the resident memory of the job's process and its
children (worker processes included) twice a second; above the limit it prints one line that
names the job, its input size and the resource to raise, kills the children and exits 3.
Outputs are written atomically (aicd.common.io), so nothing half-written is left. Local runs would
otherwise meet the kernel's OOM killer, and SLURM runs its own kill at the same limit, which
the plugin reports only as OUT_OF_MEMORY.

At the end of the job the watcher says what it saw, in one line of the job's log: the peak of
the summed resident memory (at least the job's own high-water mark) and the CPU seconds of
every process of the job. Snakemake's benchmark files sample every 30 s after the first 15 s,
so they miss short peaks and the CPU of worker processes that end between two samples
(benchmarks/paper_scale.py reads this line instead).

    memguard: job detect T1 lr_ast: peak memory 1,234 MB summed over 3 processes, CPU 56.7 s"""

from __future__ import annotations

import atexit
import os
import signal
import sys
import threading
import time
from pathlib import Path

EXIT_CODE = 3
PAGE = os.sysconf("SC_PAGE_SIZE")
TICKS = os.sysconf("SC_CLK_TCK")


def _rss_bytes(pid: int) -> int:
    try:
        with open(f"/proc/{pid}/statm") as fh:
            return int(fh.read().split()[1]) * PAGE
    except (OSError, ValueError, IndexError):
        return 0


def _cpu_seconds(pid: int) -> float | None:
    """User + system CPU of a process so far (None once it is gone)."""
    try:
        with open(f"/proc/{pid}/stat") as fh:
            fields = fh.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / TICKS
    except (OSError, ValueError, IndexError):
        return None


def _high_water_mb() -> float:
    """This process's own peak resident memory (VmHWM), which no sampling can miss."""
    try:
        with open("/proc/self/status") as fh:
            for line in fh:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) * 1024 / 1e6
    except (OSError, ValueError, IndexError):
        pass
    return 0.0


def _children(pid: int) -> list[int]:
    out = []
    try:
        for task in os.listdir(f"/proc/{pid}/task"):
            with open(f"/proc/{pid}/task/{task}/children") as fh:
                out += [int(c) for c in fh.read().split()]
    except OSError:
        pass
    return out


def tree(pid: int) -> list[int]:
    """pid and all its descendants."""
    seen, todo = [], [pid]
    while todo:
        p = todo.pop()
        seen.append(p)
        todo += _children(p)
    return seen


def input_mb(argv: list[str]) -> float:
    """The size of the files and folders the command line names that exist (its inputs: a
    job's outputs do not exist yet)."""
    total = 0
    for arg in argv:
        for part in arg.split("="):
            path = Path(part)
            try:
                if path.is_file():
                    total += path.stat().st_size
                elif path.is_dir() and part not in (".", "/"):
                    total += sum(f.stat().st_size for f in path.rglob("*") if f.is_file())
            except OSError:
                continue
    return total / 1e6


def message(job: str, peak_mb: float, limit_mb: int, inputs_mb: float) -> str:
    rule = job.split(" ", 1)[0] if job else "RULE"
    return (f"error: job {job or '?'} needs more than its {limit_mb:,} MB of memory (mem_mb): it reached "
            f"{peak_mb:,.0f} MB with {inputs_mb:,.0f} MB of input. Raise it, e.g. "
            f"`snakemake --set-resources {rule}:mem_mb={2 * limit_mb}` (or in the profile), or run it where "
            "more memory is free; a SLURM retry doubles it by itself (retries in the profile).")


class Meter:
    """What the watcher has seen of a job: the peak of its summed resident memory, the most
    processes at once, and the last CPU reading of every process (a process that ends between
    two samples loses at most one interval of CPU; one that lives less than an interval may not
    be seen at all)."""

    def __init__(self, job: str = ""):
        self.job, self.peak_mb, self.processes, self.cpu = job, 0.0, 1, {}
        self.reported = False

    def report(self) -> None:
        """Print the summary line once (the stage runner calls it before an error line, so
        that the error stays the log's last line; at exit otherwise)."""
        if not self.reported:
            self.reported = True
            print(self.summary(), file=sys.stderr, flush=True)

    def sample(self, pids: list[int]) -> float:
        used = sum(_rss_bytes(p) for p in pids) / 1e6
        self.peak_mb, self.processes = max(self.peak_mb, used), max(self.processes, len(pids))
        for p in pids:
            seconds = _cpu_seconds(p)
            if seconds is not None:
                self.cpu[p] = max(seconds, self.cpu.get(p, 0.0))
        return used

    def summary(self) -> str:
        times = os.times()  # this process to the end; its workers are the forkserver's children, sampled
        others = sum(v for p, v in self.cpu.items() if p != os.getpid())
        cpu = times.user + times.system + others
        peak = max(self.peak_mb, _high_water_mb())
        return (f"memguard: job {self.job or '?'}: peak memory {peak:,.0f} MB summed over {self.processes} "
                f"process{'es' if self.processes > 1 else ''}, CPU {cpu:,.1f} s")


def watch(limit_mb: int, job: str = "", interval: float = 0.5, argv: list[str] | None = None,
          on_exceed=None, meter: Meter | None = None) -> threading.Thread:
    """Start the watcher (a daemon thread); on_exceed(text) replaces the print-kill-exit;
    `meter` receives what it sees."""
    inputs = input_mb(argv if argv is not None else sys.argv[1:])
    me = os.getpid()
    meter = meter if meter is not None else Meter(job)

    def loop():
        while True:
            pids = tree(me)
            used = meter.sample(pids)
            if used > limit_mb:
                text = message(job, used, limit_mb, inputs)
                if on_exceed is not None:
                    on_exceed(text)
                    return
                print(text, file=sys.stderr, flush=True)
                for p in pids:
                    if p != me:
                        try:
                            os.kill(p, signal.SIGKILL)
                        except OSError:
                            pass
                os._exit(EXIT_CODE)
            time.sleep(interval)

    thread = threading.Thread(target=loop, name="aicd-memguard", daemon=True)
    thread.start()
    return thread


def from_environment() -> Meter | None:
    """Start the watcher when snakemake set AICD_MEM_MB for this job; its meter's summary line
    goes to the job's log when the job ends (or earlier, through Meter.report)."""
    value = os.environ.get("AICD_MEM_MB", "").strip()
    if not value.isdigit() or int(value) <= 0:
        return None
    meter = Meter(os.environ.get("AICD_JOB", ""))
    atexit.register(meter.report)
    watch(int(value), meter.job, meter=meter)
    return meter
