"""A job that outgrows its memory stops with a message, not an unexplained kill (ground floor).

Snakemake hands every heavy rule's `mem_mb` to its job in AICD_MEM_MB (and the job's rule and
wildcards in AICD_JOB). A watcher thread then samples the resident memory of the job's process and its
children (worker processes included) twice a second; above the limit it prints one line that
names the job, its input size and the resource to raise, kills the children and exits 3.
Outputs are written atomically (aicd.io), so nothing half-written is left. Local runs would
otherwise meet the kernel's OOM killer, and SLURM runs its own kill at the same limit, which
the plugin reports only as OUT_OF_MEMORY."""

from __future__ import annotations

import os
import signal
import sys
import threading
import time
from pathlib import Path

EXIT_CODE = 3
PAGE = os.sysconf("SC_PAGE_SIZE")


def _rss_bytes(pid: int) -> int:
    try:
        with open(f"/proc/{pid}/statm") as fh:
            return int(fh.read().split()[1]) * PAGE
    except (OSError, ValueError, IndexError):
        return 0


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


def watch(limit_mb: int, job: str = "", interval: float = 0.5, argv: list[str] | None = None,
          on_exceed=None) -> threading.Thread:
    """Start the watcher (a daemon thread); on_exceed(text) replaces the print-kill-exit."""
    inputs = input_mb(argv if argv is not None else sys.argv[1:])
    me = os.getpid()

    def loop():
        while True:
            pids = tree(me)
            used = sum(_rss_bytes(p) for p in pids) / 1e6
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


def from_environment() -> threading.Thread | None:
    """The watcher, when snakemake set AICD_MEM_MB for this job."""
    value = os.environ.get("AICD_MEM_MB", "").strip()
    if not value.isdigit() or int(value) <= 0:
        return None
    return watch(int(value), os.environ.get("AICD_JOB", ""))
