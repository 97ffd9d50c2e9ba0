#!/usr/bin/env python3
"""Runs programs inside the sandbox container. `runner.py --serve` is the container's main
process (as root, under tini): one JSON job per line on stdin, one JSON result per line on
stdout. Without arguments it runs the one job on stdin (docker exec, host tests).

Job: {"files": {name: text}, "compile": [argv] | null, "run": [argv] | null, "tests": [{"stdin", "expected"}],
      "limits": {"compile_s", "wall_s", "output_bytes"}, "nonce": str}

Trusted and untrusted sides (inside the image, AICD_SANDBOX=1): this runner is root with a
few capabilities; every compile and run step runs as the unprivileged program user
(program_user.py), which can neither signal, trace nor write to the runner, nor read the job
(so not the nonce that marks a genuine result). Each step is its own session with a time limit
that kills the group, its output capped (supervision.py, spawning.py, cpu_share.py). Afterwards
every process of the program's user is killed, its SysV IPC objects removed, the job folder
and the scratch folders emptied (cleanup.py), and the result says whether the container was
left clean (`clean`, `breaches`); the pool recycles a container that was not.

Outside the image (host tests, the bare benchmark) the same steps run as the calling user and
only the job folder is removed: there is no separate program user to clean up after."""

import json
import os
import signal
import sys

# The runner's modules sit beside it: `python3 -I` (the image's command) leaves the script's
# folder off the path, and /opt/aicd is root's and read-only (no byte-code written there, nor
# into the build context of a host checkout).
HERE = os.path.dirname(os.path.abspath(__file__))
if HERE not in sys.path:
    sys.path.insert(0, HERE)
sys.dont_write_bytecode = True

from cleanup import clean_up, remove_tree  # noqa: E402
from program_user import PROGRAM_GID, PROGRAM_UID, SANDBOX  # noqa: E402
from spawning import SandboxFault, guard_from_oom  # noqa: E402
from supervision import step  # noqa: E402

WORK = os.environ.get("AICD_WORK", "/work")
OOM_GUARDED = None  # guard_from_oom's answer, in serve mode; reported with every result


def classify(result):
    if result.get("spawn_error"):
        return "runtime_error"
    if result["overflow"]:
        return "output_limit"
    if result.get("inode_limit") or result.get("memory_stop"):
        return "memory_limit"  # memory, or tmpfs inodes (memory too), counted where the engine cannot cap them
    if result.get("oom"):
        return "memory_limit"  # the cgroup's OOM killer took one of its processes, whatever the parent's exit
    if result["timed_out"] or result["signal"] in (signal.SIGXCPU,):
        return "timeout"  # wall clock, or the CPU time that stands in for a CPU quota
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
        comp = step(job["compile"], folder, "", float(limits.get("compile_s", 30)), cap, limits)
        result["compile"] = {k: comp[k] for k in ("exit_code", "stderr", "wall_s", "timed_out")}
        result["compile"]["cpu_s"] = comp["cpu_s"]
        if comp["exit_code"] != 0 or comp["timed_out"]:
            result["status"] = "compile_error"
            return result
    if not job.get("run"):  # no tests or no entry point: built (or syntax-checked), not run
        result["status"] = "compiled"
        return result
    tests = job.get("tests") or [{"stdin": "", "expected": None}]
    statuses = []
    for test in tests:
        run = step(job["run"], folder, test.get("stdin") or "", float(limits.get("wall_s", 5)), cap, limits)
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
            rlimits = job.get("limits", {}).get("rlimits") or {}
            breaches = clean_up(folder, rlimits.get("memory_mounts") or ())
        else:
            remove_tree(folder)
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
    out["nonce"], out["oom_guarded"] = nonce, OOM_GUARDED
    return out


def serve() -> None:
    """One job per line on stdin, one result per line on stdout, until stdin closes: the
    container's main process, so a program costs no `docker exec` and no interpreter start.
    When the pool's `docker run -i` client goes (its job was killed), stdin closes, this
    returns, and the container stops and is removed (--rm)."""
    global OOM_GUARDED
    if SANDBOX:
        OOM_GUARDED = guard_from_oom()
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
        except ValueError:
            job = {"nonce": None, "files": None}
        sys.stdout.write(json.dumps(answer(job)))
