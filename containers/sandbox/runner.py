#!/usr/bin/env python3
"""Runs one program inside the sandbox container; reads a JSON job on stdin, prints a JSON
result on stdout. Started by `docker exec` for every program (as the unprivileged user).

Job: {"files": {name: text}, "compile": [argv] | null, "run": [argv], "tests": [{"stdin", "expected"}],
      "limits": {"compile_s", "wall_s", "output_bytes"}}
Each step runs in its own session (process group) with a wall-clock limit that kills the
whole group; output beyond the cap stops the program. Afterwards every other process of the
sandbox user is killed and the job folder removed, so nothing outlives the program."""

import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time

WORK = os.environ.get("AICD_WORK", "/work")


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


def kill_group(proc):
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def step(argv, cwd, stdin, wall_s, cap):
    started = time.monotonic()
    try:
        proc = subprocess.Popen(argv, cwd=cwd, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, start_new_session=True,
                                env={"PATH": "/usr/local/bin:/usr/bin:/bin", "HOME": cwd, "GOCACHE": cwd + "/.gocache",
                                     "GOPATH": cwd + "/.gopath", "LANG": "C.UTF-8", "GOFLAGS": "-mod=mod"})
    except OSError as err:
        return {"exit_code": None, "stdout": "", "stderr": str(err), "timed_out": False, "overflow": False,
                "wall_s": 0.0, "cpu_s": 0.0, "max_rss_kb": 0, "signal": None, "spawn_error": True}
    out, err, state = [], [], {"overflow": False}
    threads = [threading.Thread(target=reader, args=(proc.stdout, cap, out, state, proc), daemon=True),
               threading.Thread(target=reader, args=(proc.stderr, cap, err, state, proc), daemon=True)]
    for t in threads:
        t.start()
    try:
        if stdin:
            proc.stdin.write(stdin.encode())
        proc.stdin.close()
    except (BrokenPipeError, OSError):
        pass
    timer = threading.Timer(wall_s, lambda: (state.__setitem__("timed_out", True), kill_group(proc)))
    timer.start()
    _, status, usage = os.wait4(proc.pid, 0)
    timer.cancel()
    kill_group(proc)  # whatever the program left in its group
    for t in threads:
        t.join(timeout=2)
    code = os.waitstatus_to_exitcode(status)
    return {
        "exit_code": code, "signal": -code if code < 0 else None,
        "stdout": b"".join(out).decode("utf-8", "replace"), "stderr": b"".join(err).decode("utf-8", "replace"),
        "timed_out": state.get("timed_out", False), "overflow": state["overflow"],
        "wall_s": time.monotonic() - started, "cpu_s": usage.ru_utime + usage.ru_stime, "max_rss_kb": usage.ru_maxrss,
    }


def kill_strays():
    """Every other process of this user: children that left their session, daemons, sleepers.
    Only inside the sandbox (AICD_SANDBOX=1, an unprivileged user): on a host it would kill
    the caller's own processes."""
    if os.environ.get("AICD_SANDBOX") != "1" or os.getuid() == 0:
        return
    me, parent = os.getpid(), os.getppid()
    uid = os.getuid()
    for name in os.listdir("/proc"):
        if not name.isdigit() or int(name) in (me, parent, 1):
            continue
        try:
            if os.stat(f"/proc/{name}").st_uid == uid:
                os.kill(int(name), signal.SIGKILL)
        except (FileNotFoundError, ProcessLookupError, PermissionError):
            pass


def classify(result, limit_kb):
    if result.get("spawn_error"):
        return "runtime_error"
    if result["overflow"]:
        return "output_limit"
    if result["timed_out"]:
        return "timeout"
    if result["signal"] == signal.SIGKILL:
        return "memory_limit"  # the only other SIGKILL here is the kernel's OOM killer
    if result["exit_code"] != 0:
        return "runtime_error"
    return "ok"


def main():
    job = json.load(sys.stdin)
    limits = job.get("limits", {})
    cap = int(limits.get("output_bytes", 1 << 20))
    os.makedirs(WORK, exist_ok=True)
    folder = tempfile.mkdtemp(prefix="job-", dir=WORK)
    result = {"status": None, "compile": None, "tests": []}
    try:
        for name, text in job["files"].items():
            with open(os.path.join(folder, name), "w", encoding="utf-8") as fh:
                fh.write(text)
        if job.get("compile"):
            comp = step(job["compile"], folder, "", float(limits.get("compile_s", 30)), cap)
            result["compile"] = {k: comp[k] for k in ("exit_code", "stderr", "wall_s", "timed_out")}
            if comp["exit_code"] != 0 or comp["timed_out"]:
                result["status"] = "compile_error"
                return result
        tests = job.get("tests") or [{"stdin": "", "expected": None}]
        statuses = []
        for test in tests:
            run = step(job["run"], folder, test.get("stdin") or "", float(limits.get("wall_s", 5)), cap)
            status = classify(run, None)
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
    finally:
        kill_strays()
        shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    try:
        out = main()
    except Exception as err:  # the runner itself failed: report, never hang the caller
        out = {"status": "sandbox_error", "error": f"{type(err).__name__}: {err}", "compile": None, "tests": []}
    sys.stdout.write(json.dumps(out))
