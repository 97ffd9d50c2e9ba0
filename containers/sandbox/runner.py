#!/usr/bin/env python3
"""Runs programs inside the sandbox container. `runner.py --serve` is the container's main
process (as root, under tini): one JSON job per line on stdin, one JSON result per line on
stdout. Without arguments it runs the one job on stdin (docker exec, host tests).

Job: {"files": {name: text}, "compile": [argv] | null, "run": [argv] | null, "tests": [{"stdin", "expected"}],
      "limits": {"compile_s", "wall_s", "output_bytes"}, "nonce": str}

Trusted and untrusted sides (inside the image, AICD_SANDBOX=1): this runner is root with a
few capabilities; every compile and run step runs as the unprivileged PROGRAM_UID, which can
neither signal, trace nor write to the runner, nor read the job (so not the nonce that marks a
genuine result). Each step is its own session with a wall-clock limit that kills the group;
output beyond the cap stops the program. Afterwards every process of PROGRAM_UID is killed,
its SysV IPC objects removed (by creator as well as owner), the job folder and the scratch
folders emptied, and the result
says whether the container was left clean (`clean`, `breaches`); the pool recycles a container
that was not.

Outside the image (host tests, the bare benchmark) the same steps run as the calling user and
only the job folder is removed: there is no separate program user to clean up after."""

import json
import os
import shutil
import signal
import stat
import sys
import threading
import time

WORK = os.environ.get("AICD_WORK", "/work")
SANDBOX = os.environ.get("AICD_SANDBOX") == "1"
PROGRAM_UID = PROGRAM_GID = 10001
SCRATCH = ("/tmp", "/dev/shm", "/dev/mqueue")  # world-writable places, emptied after every program
NOT_STATE = {"proc", "sysfs", "cgroup", "cgroup2", "devpts", "securityfs", "debugfs"}
# The program's processes are the OOM killer's first choice, never the runner.
OOM_FIRST = ["/bin/sh", "-c", '{ echo 1000 > /proc/self/oom_score_adj; } 2>/dev/null; exec "$@"', "sh"]


class SandboxFault(Exception):
    """The runner could not do its job: the result is `sandbox_error`, not the program's fault."""


def reader(stream, cap, sink, state, proc):
    total = 0
    while True:
        chunk = stream.read(65536)
        if not chunk:
            return
        total += len(chunk)
        if total > cap:
            sink.append(chunk[: max(0, cap - (total - len(chunk)))])
            state["overflow"] = True
            kill_group(proc)
            # keep draining so the child cannot block on a full pipe
            while stream.read(65536):
                pass
            return
        sink.append(chunk)


def feed(pipe, text):
    try:
        if text:
            pipe.write(text.encode())
        pipe.close()
    except (BrokenPipeError, OSError, ValueError):
        pass


OOM_COUNTERS = ("/sys/fs/cgroup/memory.events", "/sys/fs/cgroup/memory/memory.oom_control")  # cgroup v2, v1


def oom_kills() -> int | None:
    """The container's count of OOM kills (None where the cgroup does not show it)."""
    for path in OOM_COUNTERS:
        try:
            with open(path) as fh:
                for line in fh:
                    if line.startswith("oom_kill "):
                        return int(line.split()[1])
        except (OSError, ValueError):
            continue
    return None


def kill_group(proc):
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def program_env(cwd):
    return {"PATH": "/usr/local/bin:/usr/bin:/bin", "HOME": cwd, "TMPDIR": cwd + "/.tmp", "GOCACHE": cwd + "/.gocache",
            "GOPATH": cwd + "/.gopath", "GOTMPDIR": cwd + "/.tmp", "LANG": "C.UTF-8", "GOFLAGS": "-mod=mod"}


class Spawned:
    """A started step: its pid and the parent's ends of its three pipes."""

    def __init__(self, pid, stdin, stdout, stderr):
        self.pid, self.stdin, self.stdout, self.stderr = pid, stdin, stdout, stderr


def spawn(argv, cwd):
    """fork + exec in a new session, as the program's user inside the image. (Hand-written
    rather than subprocess: that import alone costs ~8 ms of every program's start-up.) All
    other descriptors are non-inheritable (PEP 446), so exec closes them."""
    if SANDBOX:
        argv = OOM_FIRST + list(argv)
    pipes = [os.pipe() for _ in range(4)]  # stdin, stdout, stderr, and errors before exec (close-on-exec)
    try:
        pid = os.fork()
    except OSError:
        for read_end, write_end in pipes:
            os.close(read_end)
            os.close(write_end)
        raise
    if pid == 0:  # the child: only simple system calls until exec
        stage = "setup"
        try:
            os.setsid()
            os.dup2(pipes[0][0], 0)
            os.dup2(pipes[1][1], 1)
            os.dup2(pipes[2][1], 2)
            os.chdir(cwd)
            # Python ignores these; ignored signals survive exec, and programs expect defaults.
            signal.signal(signal.SIGPIPE, signal.SIG_DFL)
            signal.signal(signal.SIGXFSZ, signal.SIG_DFL)
            if SANDBOX:
                os.setgroups([])
                os.setgid(PROGRAM_GID)
                os.setuid(PROGRAM_UID)
                os.umask(0o077)
            stage = "exec"
            os.execvpe(argv[0], argv, program_env(cwd))
        except BaseException as err:  # noqa: B036  tell the parent, then go
            try:
                os.write(pipes[3][1], f"{stage}\0{argv[0]}: {err}".encode())
            finally:
                os._exit(127)
    for fd in (pipes[0][0], pipes[1][1], pipes[2][1], pipes[3][1]):
        os.close(fd)
    with os.fdopen(pipes[3][0], "rb") as errors:
        failure = errors.read()  # empty: exec closed it, the program runs
    spawned = Spawned(pid, os.fdopen(pipes[0][1], "wb"), os.fdopen(pipes[1][0], "rb"), os.fdopen(pipes[2][0], "rb"))
    if failure:
        os.waitpid(pid, 0)
        for stream in (spawned.stdin, spawned.stdout, spawned.stderr):
            stream.close()
        stage, _, message = failure.decode("utf-8", "replace").partition("\0")
        if stage != "exec":  # chdir, setuid, ...: the runner's failure, not the program's
            raise SandboxFault(f"cannot start the program ({stage}): {message}")
        raise FileNotFoundError(message)  # the program's command does not exist
    return spawned


def start_helper(thread, proc, state) -> None:
    """Start one of the runner's helper threads. A program that forks at once (a fork bomb) can
    use up the container's process limit before they start: it is then killed (it has used up
    its limit; its status says so) and the thread started once the limit frees."""
    for attempt in range(100):
        try:
            thread.start()
            return
        except RuntimeError:  # "can't start new thread": no pid left in the container
            state["pids_exhausted"] = True
            kill_group(proc)
            if SANDBOX:
                kill_program_user()
            time.sleep(0.02)
    raise SandboxFault("cannot start the runner's helper threads: the container's process limit stays used up")


def step(argv, cwd, stdin, wall_s, cap):
    started = time.monotonic()
    ooms = oom_kills() if SANDBOX else None
    try:
        proc = spawn(argv, cwd)
    except OSError as err:
        if err.errno in (11, 12, 23, 24):  # EAGAIN, ENOMEM, ENFILE, EMFILE: the container is out of room
            raise SandboxFault(f"cannot start the program: {err}") from None
        return {"exit_code": None, "stdout": "", "stderr": str(err), "timed_out": False, "overflow": False,
                "wall_s": 0.0, "cpu_s": 0.0, "max_rss_kb": 0, "signal": None, "spawn_error": True}
    out, err, state = [], [], {"overflow": False}
    timer = threading.Timer(wall_s, lambda: (state.__setitem__("timed_out", True), kill_group(proc)))
    start_helper(timer, proc, state)  # before stdin is written: a program that never reads it still times out
    threads = [threading.Thread(target=reader, args=(proc.stdout, cap, out, state, proc), daemon=True),
               threading.Thread(target=reader, args=(proc.stderr, cap, err, state, proc), daemon=True),
               threading.Thread(target=feed, args=(proc.stdin, stdin), daemon=True)]
    for t in threads:
        start_helper(t, proc, state)
    _, status, usage = os.wait4(proc.pid, 0)
    timer.cancel()
    kill_group(proc)  # whatever the program left in its group
    if SANDBOX:
        kill_program_user()  # ... and whatever left the group: its pipes then close
    for t in threads:
        t.join(timeout=2)
    state["oom"] = ooms is not None and (oom_kills() or 0) > ooms
    code = os.waitstatus_to_exitcode(status)
    return {
        "exit_code": code, "signal": -code if code < 0 else None,
        "stdout": b"".join(out).decode("utf-8", "replace"), "stderr": b"".join(err).decode("utf-8", "replace"),
        "timed_out": state.get("timed_out", False), "overflow": state["overflow"], "oom": state["oom"],
        "oom_known": ooms is not None, "pids_exhausted": state.get("pids_exhausted", False),
        "wall_s": time.monotonic() - started, "cpu_s": usage.ru_utime + usage.ru_stime, "max_rss_kb": usage.ru_maxrss,
    }


# ---- the trusted cleanup (inside the image only) -------------------------------------------

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


IPC_TABLES = {"shm": "shmctl", "msg": "msgctl", "sem": "semctl"}
IPC_ID_COLUMNS = {"shm": "shmid", "msg": "msqid", "sem": "semid"}


def ipc_objects() -> dict:
    """{kind: [(id, owner uid)]} of the SysV IPC objects the program made, from /proc/sysvipc.
    Found by creator as well as owner: IPC_SET lets the program hand an object to another
    owner (root, say), but the creator uid (cuid) stays its own."""
    found = {}
    for kind in IPC_TABLES:
        try:
            with open(f"/proc/sysvipc/{kind}") as fh:
                header = fh.readline().split()
                cols = [header.index(name) for name in (IPC_ID_COLUMNS[kind], "uid", "cuid")]
                rows = [[int(r.split()[c]) for c in cols] for r in fh if r.strip()]
        except (OSError, ValueError):
            rows = []
        objects = [(ident, uid) for ident, uid, cuid in rows if PROGRAM_UID in (uid, cuid)]
        if objects:
            found[kind] = objects
    return found


def _remove_ipc():
    """As the program's user: the creator may remove an object whoever owns it now."""
    import ctypes  # rarely needed: imported here to keep every program's start-up short

    libc = ctypes.CDLL(None, use_errno=True)
    for kind, objects in ipc_objects().items():
        for ident, _ in objects:
            if kind == "sem":
                libc.semctl(ident, 0, 0)  # IPC_RMID
            else:
                getattr(libc, IPC_TABLES[kind])(ident, 0, None)


def clean_ipc() -> list[str]:
    """Remove the program's SysV IPC objects. Leaving one is ordinary and not a breach; handing
    one to another owner is an attempt to outlive the cleanup, and is (the container goes)."""
    left = ipc_objects()
    if not left:
        return []
    breaches = []
    handed = {kind: sum(uid != PROGRAM_UID for _, uid in objects) for kind, objects in left.items()}
    if any(handed.values()):
        counts = ", ".join(f"{kind} {n}" for kind, n in handed.items() if n)
        breaches.append(f"SysV IPC objects handed to another owner ({counts}): removed, container recycled")
    as_program_user(_remove_ipc)
    if ipc_objects():
        breaches.append("SysV IPC objects could not be removed")
    return breaches


def empty_folder(path: str) -> None:
    try:
        entries = list(os.scandir(path))
    except FileNotFoundError:
        return
    for entry in entries:
        try:
            if entry.is_dir(follow_symlinks=False):
                shutil.rmtree(entry.path, ignore_errors=True)
            else:
                os.unlink(entry.path)
        except FileNotFoundError:
            pass
        except OSError:
            pass  # left behind: the state check below reports it


def writable_mounts() -> list[str]:
    points = []
    with open("/proc/self/mounts") as fh:
        for line in fh:
            _, point, fstype, opts = line.split()[:4]
            if fstype not in NOT_STATE and "rw" in opts.split(","):
                points.append(point.replace("\\040", " "))
    return points


def same_mount(path: str, device: int) -> bool:
    """Other mounts are walked on their own (and proc-like ones not at all)."""
    try:
        return os.lstat(path).st_dev == device
    except OSError:
        return False


def files_of_program_user(limit: int = 5) -> list[str]:
    """Anything the program's user still owns in any writable mount (it cannot chown, so
    everything it made is owned by it)."""
    found = []
    for point in writable_mounts():
        try:
            top = os.lstat(point)
        except OSError:
            continue
        if top.st_uid == PROGRAM_UID:
            found.append(point)
        if not stat.S_ISDIR(top.st_mode):
            continue
        for folder, dirs, files in os.walk(point):
            for name in dirs + files:
                path = os.path.join(folder, name)
                try:
                    st = os.lstat(path)
                except OSError:
                    continue
                if st.st_uid == PROGRAM_UID:
                    found.append(path)
                    if len(found) >= limit:
                        return found
            dirs[:] = [d for d in dirs if same_mount(os.path.join(folder, d), top.st_dev)]
    return found


def clean_up(folder: str) -> list[str]:
    """Leave the container as the program found it; return what could not be undone."""
    breaches = []
    left = kill_program_user()
    if left:
        breaches.append(f"{len(left)} process(es) of the program survived SIGKILL")
    shutil.rmtree(folder, ignore_errors=True)
    for path in SCRATCH:
        empty_folder(path)
    breaches += clean_ipc()
    owned = files_of_program_user()
    if owned:
        breaches.append("files of the program survived cleanup: " + ", ".join(owned))
    return breaches


# ---- one job -------------------------------------------------------------------------------

def classify(result):
    if result.get("spawn_error"):
        return "runtime_error"
    if result["overflow"]:
        return "output_limit"
    if result["timed_out"]:
        return "timeout"
    if result["signal"] == signal.SIGKILL:
        # The OOM killer, when the cgroup counted one; a program may also SIGKILL itself.
        return "memory_limit" if result.get("oom") or not result.get("oom_known") else "runtime_error"
    if result["exit_code"] != 0:
        return "runtime_error"
    return "ok"


def prepare(job) -> str:
    os.makedirs(WORK, exist_ok=True)
    folder = os.path.join(WORK, "job-" + os.urandom(8).hex())
    os.mkdir(folder, 0o700)
    os.mkdir(os.path.join(folder, ".tmp"))
    for name, text in job["files"].items():
        with open(os.path.join(folder, name), "w", encoding="utf-8") as fh:
            fh.write(text)
    if SANDBOX:  # the job folder is the only place the program may write
        for name in os.listdir(folder):
            os.chown(os.path.join(folder, name), PROGRAM_UID, PROGRAM_GID)
        os.chown(folder, PROGRAM_UID, PROGRAM_GID)
    return folder


def run_job(job, folder):
    limits = job.get("limits", {})
    cap = int(limits.get("output_bytes", 1 << 20))
    result = {"status": None, "compile": None, "tests": []}
    if job.get("compile"):
        comp = step(job["compile"], folder, "", float(limits.get("compile_s", 30)), cap)
        result["compile"] = {k: comp[k] for k in ("exit_code", "stderr", "wall_s", "timed_out")}
        if comp["exit_code"] != 0 or comp["timed_out"]:
            result["status"] = "compile_error"
            return result
    if not job.get("run"):  # no tests or no entry point: built (or syntax-checked), not run
        result["status"] = "compiled"
        return result
    tests = job.get("tests") or [{"stdin": "", "expected": None}]
    statuses = []
    for test in tests:
        run = step(job["run"], folder, test.get("stdin") or "", float(limits.get("wall_s", 5)), cap)
        status = classify(run)
        passed = None
        if status == "ok" and test.get("expected") is not None:
            passed = run["stdout"].split() == str(test["expected"]).split()
            if not passed:
                status = "wrong_answer"
        statuses.append(status)
        run["stdout"], run["stderr"] = run["stdout"][:4096], run["stderr"][:4096]
        result["tests"].append({**run, "status": status, "passed": passed})
        if status in ("timeout", "memory_limit", "output_limit"):
            break
    order = ["output_limit", "memory_limit", "timeout", "runtime_error", "wrong_answer", "ok"]
    result["status"] = min(statuses, key=order.index)
    return result


def main(job) -> dict:
    if SANDBOX and os.geteuid() != 0:
        raise SandboxFault("the runner must start as root in the sandbox (docker exec -u 0): "
                           "without it the program would run as the runner's own user")
    folder = prepare(job)
    try:
        result = run_job(job, folder)
    finally:
        if SANDBOX:
            breaches = clean_up(folder)
        else:
            shutil.rmtree(folder, ignore_errors=True)
            breaches = []
    return {**result, "clean": not breaches, "breaches": breaches}


def answer(job) -> dict:
    """The result of one job, with its nonce; a failure of the runner itself is reported."""
    nonce = job.get("nonce") if isinstance(job, dict) else None
    try:
        out = main(job)
    except Exception as err:  # the runner itself failed: report, never hang the caller
        out = {"status": "sandbox_error", "error": f"{type(err).__name__}: {err}", "compile": None, "tests": [],
               "clean": False, "breaches": ["the runner failed"]}
    out["nonce"] = nonce
    return out


def serve() -> None:
    """One job per line on stdin, one result per line on stdout, until stdin closes: the
    container's main process, so a program costs no `docker exec` and no interpreter start.
    When the pool's `docker run -i` client goes (its job was killed), stdin closes, this
    returns, and the container stops and is removed (--rm)."""
    sys.stdout.write(json.dumps({"ready": True}) + "\n")
    sys.stdout.flush()
    for line in sys.stdin:
        if not line.strip():
            continue
        try:
            job = json.loads(line)
        except ValueError as err:
            job, out = None, {"status": "sandbox_error", "error": f"bad job line: {err}", "compile": None,
                              "tests": [], "clean": False, "breaches": [], "nonce": None}
        if job is not None:
            out = answer(job)
        sys.stdout.write(json.dumps(out) + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    if sys.argv[1:] == ["--serve"]:
        serve()
    else:  # one job on stdin (docker exec, the host tests, the bare benchmark)
        try:
            job = json.load(sys.stdin)
        except ValueError as err:
            job = {"nonce": None, "files": None}
        sys.stdout.write(json.dumps(answer(job)))
