"""The session-wide check for what the suite leaves behind (tests/leftovers.py) against real
processes and folders: it finds a detached process of the suite (its own session, an orphan)
and a folder named as the suite names its own, and leaves alone what was there before and what
is not the suite's."""

import os
import subprocess
import sys
import tempfile
import time

from leftovers import SUITE_MARK, Proc, Snapshot

TESTS = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # tests/: leftovers.py

# A daemon as the suite's code might leave one: its own session, its parent gone (an orphan), and
# the environment it was started with.
DAEMON = ("import os, sys, time\nif os.fork():\n    os._exit(0)\nos.setsid()\nprint(os.getpid(), flush=True)\n"
          "os.close(1)\ntime.sleep(120)\n")


def detached(env: dict, program: str | None = None, *args: str) -> int:
    """A detached process; `program`: the name it runs under (its argv[0]); args: its arguments."""
    argv = [program or sys.executable, "-c", DAEMON, *args]
    proc = subprocess.run(argv, executable=sys.executable, env=env, stdout=subprocess.PIPE, text=True, timeout=60)
    return int(proc.stdout.split()[0])


def test_a_detached_process_and_a_folder_of_the_suite_are_found_and_others_are_not(tmp_path):
    environ = dict(os.environ)
    before = detached(environ)  # there before the session: not the session's
    snapshot = Snapshot(folder=str(tmp_path), environ=environ, others=("no-such-program",))
    (tmp_path / "aicd-engine-earlier").mkdir()
    try:
        assert snapshot.new_processes() == [] and snapshot.new_entries() == ["aicd-engine-earlier"]
        ours = detached(environ)  # carries the session's mark
        theirs = detached({k: v for k, v in environ.items() if k != SUITE_MARK})  # another session, unmarked
        (tmp_path / "unrelated").mkdir()
        procs, entries = snapshot.leftovers(settle_s=0)
        assert [p.pid for p in procs] == [ours], procs
        assert "python" in procs[0].command and entries == ["aicd-engine-earlier"]
        assert "aicd-engine-earlier" in "\n".join(snapshot.report(procs, entries))
        os.kill(ours, 9)
        (tmp_path / "aicd-engine-earlier").rmdir()
        assert snapshot.leftovers(settle_s=5) == ([], [])  # a killed orphan is a zombie until init reaps it
    finally:
        for pid in (before, locals().get("ours"), locals().get("theirs")):
            if pid:
                try:
                    os.kill(pid, 9)
                except ProcessLookupError:
                    pass


def test_the_temporary_folder_is_read_by_name():
    from leftovers import suite_entries

    folder = tempfile.mkdtemp(prefix="aicd-test-names-")
    try:
        for name in ("aicd-serve-1-x", "sandbox-abc", "snakemake1234", "pymp-x1", ".org.chromium.Chromium.x", "tmpabc",
                     "keep"):
            os.mkdir(os.path.join(folder, name))
        assert suite_entries(folder) == {"aicd-serve-1-x", "sandbox-abc", "snakemake1234", "pymp-x1",
                                         ".org.chromium.Chromium.x"}
    finally:
        for name in os.listdir(folder):
            os.rmdir(os.path.join(folder, name))
        os.rmdir(folder)


def test_an_entry_another_run_could_have_made_is_theirs(tmp_path):
    """On a shared machine: a snakemake folder made while another snakemake (not the suite's)
    runs is taken for that one's; once that one is gone, it is the suite's leftover. A process
    that merely mentions the program among its arguments (a path) is no such run, and one that
    started after the folder was made did not make it."""
    unmarked = {k: v for k, v in os.environ.items() if k != SUITE_MARK}
    snapshot = Snapshot(folder=str(tmp_path), environ=dict(os.environ), others=("other-snakemake",))
    mentions = detached(unmarked, None, "/builds/other-snakemake/repo")
    theirs = None
    try:
        (tmp_path / "snakemake-before").mkdir()
        assert snapshot.new_entries() == ["snakemake-before"]
        time.sleep(2)  # start times are known to the second (the boot time's precision)
        theirs = detached(unmarked, "/usr/bin/other-snakemake")
        (tmp_path / "snakemake-after").mkdir()
        assert snapshot.new_entries() == ["snakemake-before"]
    finally:
        for pid in (mentions, theirs):
            if pid:
                os.kill(pid, 9)
    assert snapshot.leftovers(settle_s=2)[1] == ["snakemake-after", "snakemake-before"]


# The session's own process runs pytest: what it makes itself is the suite's, though pytest is
# among the programs whose runs the check gives the benefit of the doubt (OTHERS).
SELF_CHECK = """import os, sys, time
sys.path.insert(0, sys.argv[1])
from leftovers import Snapshot
snapshot = Snapshot(folder=sys.argv[2], others=("self-check-runner",))
time.sleep(1.1)  # made after this process started, to the second
os.mkdir(os.path.join(sys.argv[2], "sandbox-made-by-the-session"))
print(snapshot.leftovers(settle_s=0)[1])
"""


def test_what_the_sessions_own_process_makes_is_reported(tmp_path):
    proc = subprocess.run(["self-check-runner", "-c", SELF_CHECK, TESTS, str(tmp_path)], executable=sys.executable,
                          capture_output=True, text=True, timeout=60)
    assert proc.stdout.strip() == "['sandbox-made-by-the-session']", proc.stdout + proc.stderr


# A session without workers runs its tests in its own process: a forkserver pool started there
# leaves the forkserver, the resource tracker and their pymp-* folder until that process exits,
# after the check. They are not leftovers; a pymp-* folder of a child that was killed is.
OWN_POOL = """import os, sys, multiprocessing, subprocess, time
from concurrent.futures import ProcessPoolExecutor
sys.path.insert(0, sys.argv[1])
from leftovers import Snapshot
snapshot = Snapshot(folder=sys.argv[2], others=())
with ProcessPoolExecutor(1, mp_context=multiprocessing.get_context("forkserver")) as pool:
    assert pool.submit(abs, -1).result() == 1
child = ("import multiprocessing.util, os, signal; multiprocessing.util.get_temp_dir(); "
         "os.kill(os.getpid(), signal.SIGKILL)")
subprocess.run([sys.executable, "-c", child], env={**os.environ, "TMPDIR": sys.argv[2]})
procs, entries = snapshot.leftovers(settle_s=0)
print([p.command[:60] for p in procs], len(entries), [e[:5] for e in entries])
"""


def test_the_sessions_own_pool_helpers_go_with_it_and_a_killed_childs_folder_does_not(tmp_path):
    proc = subprocess.run([sys.executable, "-c", OWN_POOL, TESTS, str(tmp_path)], capture_output=True, text=True,
                          timeout=120, env={**os.environ, "TMPDIR": str(tmp_path)})
    assert proc.stdout.strip() == "[] 1 ['pymp-']", proc.stdout + proc.stderr


def test_podmans_pause_process_is_kept_however_its_program_was_named():
    """A user's first rootless Podman command leaves its pause process on purpose; started by a
    path (/usr/bin/podman, as the sandbox's engine runs it) it was reported as the suite's leftover."""
    def proc(*argv):
        return Proc(1, "0", "S", 1, " ".join(argv), argv)

    for argv in [("podman",), ("/usr/bin/podman",), ("catatonit", "-P"), ("/usr/libexec/podman/catatonit", "-P")]:
        assert proc(*argv).kept(), argv
    for argv in [("/usr/bin/podman", "run", "x"), ("/usr/bin/podman", "system", "service"), ("catatonit",), ()]:
        assert not proc(*argv).kept(), argv
    assert Proc(1, "0", "S", 1, "podman", ()).kept()  # no argv to read (cmdline gone): its name
