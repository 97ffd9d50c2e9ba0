"""Nothing left running and nothing left in the temporary folder by the test suite: what the
session-wide check in conftest.py compares, before the first test and after the last.

It runs in the process that started the session (the xdist workers' controller, or the only
process), which sees the whole suite: the processes its workers and tests started, wherever
they went (a browser's children are orphans once its wrapper script is gone, a daemon has a
session of its own), and the temporary folder they all share. On a shared machine, other
people's processes and files come and go meanwhile, so only the suite's own count:

- a process is the suite's when it carries the suite's mark in its environment (SUITE_MARK,
  set before the workers start, inherited by everything they start that keeps its environment:
  an orphan or a daemon in a session of its own too), or descends from the controller; zombies
  are dead and do not count. (The controller's session is no sign: the shell's other commands,
  and the orphans of its earlier background jobs, share it);
- an entry of the temporary folder is the suite's when its name is one the suite's code makes
  (SUITE_NAMES), unless a live process that is not the suite's could have made it: one running
  the programs that make such names (OTHERS: another snakemake, another of this project's
  commands, `python -m aicd...`, or test suites) started before the entry was made. In CI nothing else runs, and the check is
  exact; on a machine shared with other runs it errs on their side. pytest's own folder of test
  folders (pytest-of-USER) is pytest's to manage.

Only what was not there before the session counts. Cleanup can lag a moment behind the last
test (a service stopping on SIGTERM, an orphan init has yet to reap), so the check waits a few
seconds for what it finds to go before it reports it."""

from __future__ import annotations

import fnmatch
import os
import tempfile
import time
import uuid
from dataclasses import dataclass

SUITE_MARK = "AICD_TEST_SUITE"
# Names the project's code and the tests give what they put in the temporary folder: the
# sandbox's scratch folders (aicd-engine-*, sandbox-*), the local LLM server's model link
# (aicd-serve-*), the browser's profile (aicd-browser-*), the image build's root (aicd-rootfs-*),
# the system-call probe (aicd-probe-*), snakemake's own temporary folder (snakemake*), Python's
# multiprocessing folder (pymp-*: a forkserver's or a server's socket, removed as its process
# exits unless a signal kills it first), and Chromium's profiles and singleton sockets.
SUITE_NAMES = ("aicd-*", "sandbox-*", "snakemake*", "pymp-*", ".org.chromium.*", "chromium*")
# The programs that make such names: a process runs one when its executable, or the module it
# runs (python -m), is named so (not merely when a path among its arguments mentions one).
OTHERS = ("snakemake", "aicd", "pytest")
SETTLE_S = 10.0
# Podman's rootless pause process: started by the user's first rootless Podman command to hold its
# namespaces, and kept on purpose (until the user's last session ends); its argv[0] is the name
# or the path the first command was started by.
KEPT = {"podman", "catatonit -P"}


@dataclass(frozen=True)
class Proc:
    pid: int
    start: str      # clock ticks after boot
    state: str
    ppid: int
    command: str
    argv: tuple = ()

    def runs(self, programs) -> bool:
        """Whether the process runs one of `programs` (its executable, or python -m's module)."""
        for i, token in enumerate(self.argv[:4]):
            if os.path.basename(token) in programs:
                return True
            if token == "-m" and i + 1 < len(self.argv) and self.argv[i + 1].split(".")[0] in programs:
                return True
        return False

    def kept(self) -> bool:
        """Whether this is Podman's pause process (KEPT), its program named or given by path."""
        named = [os.path.basename(self.argv[0]), *self.argv[1:]] if self.argv else [self.command]
        return " ".join(named) in KEPT

    def started(self) -> float:
        """When the process started, in seconds since the epoch."""
        return BOOT + int(self.start) / os.sysconf("SC_CLK_TCK")


def _boot_time() -> float:
    with open("/proc/stat") as fh:
        return float(next(line.split()[1] for line in fh if line.startswith("btime ")))


BOOT = _boot_time()


def processes() -> dict[int, Proc]:
    """Every process this one can see, by pid."""
    found = {}
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat") as fh:
                head, rest = fh.read().rsplit(")", 1)
            with open(f"/proc/{name}/cmdline", "rb") as fh:
                argv = tuple(part.decode("utf-8", "replace") for part in fh.read().split(b"\0") if part)
        except (OSError, ValueError):
            continue
        fields = rest.split()
        found[int(name)] = Proc(int(name), fields[19], fields[0], int(fields[1]), " ".join(argv) or head.split("(", 1)[-1],
                                argv)
    return found


def marked(pid: int, mark: str) -> bool:
    """Whether the process's environment carries `mark` (False where it cannot be read)."""
    try:
        with open(f"/proc/{pid}/environ", "rb") as fh:
            return mark.encode() in fh.read().split(b"\0")
    except OSError:
        return False


def descends(proc: Proc, ancestor: int, table: dict[int, Proc]) -> bool:
    seen = set()
    while proc.ppid not in seen and proc.ppid in table:
        if proc.ppid == ancestor:
            return True
        seen.add(proc.ppid)
        proc = table[proc.ppid]
    return proc.ppid == ancestor


def suite_entries(folder: str) -> set[str]:
    """The entries of `folder` named as the suite names what it makes."""
    try:
        names = os.listdir(folder)
    except OSError:
        return set()
    return {name for name in names if any(fnmatch.fnmatchcase(name, pattern) for pattern in SUITE_NAMES)}


def own_multiprocessing_folder(folder: str) -> set[str]:
    """The name of this process's multiprocessing folder (pymp-*) where it is in `folder`: removed
    as this process exits, after the check."""
    from multiprocessing import process

    mine = process.current_process()._config.get("tempdir")
    return {os.path.basename(mine)} if mine and os.path.dirname(mine) == folder.rstrip("/") else set()


class Snapshot:
    """The processes and the suite's entries of the temporary folder at the session's start,
    and the mark the suite's processes carry from then on (set in `environ`, os.environ by
    default: made before any worker or server starts, it reaches them all)."""

    def __init__(self, folder: str | None = None, environ: dict | None = None, others=OTHERS):
        self.folder = folder or tempfile.gettempdir()
        self.others = others
        self.me = os.getpid()
        self.mark = f"{SUITE_MARK}={uuid.uuid4().hex}"
        (os.environ if environ is None else environ)[SUITE_MARK] = self.mark.split("=", 1)[1]
        self.before = {(p.pid, p.start) for p in processes().values()}
        self.entries = suite_entries(self.folder)

    def ours(self, proc: Proc, table: dict[int, Proc]) -> bool:
        return descends(proc, self.me, table) or marked(proc.pid, self.mark)

    def goes_with_me(self, proc: Proc) -> bool:
        """This process's own multiprocessing helpers (its forkserver, its resource tracker): they
        stop when it exits, after the check (a session without workers runs tests in it)."""
        return proc.ppid == self.me and any(f"from multiprocessing.{helper} import main" in proc.command
                                            for helper in ("forkserver", "resource_tracker"))

    def new_processes(self, table: dict[int, Proc] | None = None) -> list[Proc]:
        """The suite's live processes that were not there at the start (this one and KEPT aside)."""
        table = processes() if table is None else table
        return [proc for proc in table.values()
                if proc.pid != self.me and proc.state != "Z" and (proc.pid, proc.start) not in self.before
                and not proc.kept() and not self.goes_with_me(proc) and self.ours(proc, table)]

    def new_entries(self, table: dict[int, Proc] | None = None) -> list[str]:
        """The suite's entries of the temporary folder that were not there at the start: those no
        live process outside the suite could have made (OTHERS)."""
        table = processes() if table is None else table
        # this process is the suite's own (its mark is in its children's environment, not in
        # the one it started with): never another run
        others = [proc for proc in table.values()
                  if proc.pid != self.me and proc.state != "Z" and proc.runs(self.others) and not self.ours(proc, table)]
        found = []
        for name in sorted(suite_entries(self.folder) - self.entries - own_multiprocessing_folder(self.folder)):
            try:
                made = os.lstat(os.path.join(self.folder, name)).st_ctime
            except OSError:
                continue
            if not any(proc.started() <= made + 1 for proc in others):
                found.append(name)
        return found

    def leftovers(self, settle_s: float = SETTLE_S) -> tuple[list[Proc], list[str]]:
        """What the suite left (processes, entries of the temporary folder), after waiting up to
        settle_s for it to go."""
        end = time.monotonic() + settle_s
        while True:
            table = processes()
            procs, entries = self.new_processes(table), self.new_entries(table)
            if not (procs or entries) or time.monotonic() > end:
                return procs, entries
            time.sleep(0.5)

    def report(self, procs: list[Proc], entries: list[str]) -> list[str]:
        lines = [f"process {p.pid} (parent {p.ppid}): {p.command[:200]}" for p in procs]
        return lines + [f"{os.path.join(self.folder, name)}" for name in entries]
