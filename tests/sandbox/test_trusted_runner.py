"""The program under test against what measures it, and against the next program: the
hostile cases, each reproduced through the real pool and daemon. The result must come from
the trusted runner, and nothing a program does may reach a later one."""

import json
import textwrap

from sandbox_support import ONE_ENGINE

RUN = [{"stdin": ""}]  # run once on empty stdin, output not judged (with no tests a program is only built)
HELLO_C = '#include <stdio.h>\nint main(void){puts("innocent");return 0;}\n'
GO_HELLO = 'package main\nimport "fmt"\nfunc main() { fmt.Println("go fine") }\n'
JAVA_HELLO = 'public class Main { public static void main(String[] a) { System.out.println("java fine"); } }\n'


def stdout(result):
    return result["tests"][0]["stdout"] if result["tests"] else ""


def test_a_program_cannot_forge_its_result(pool):
    """Defect 1: the program prints a wrong answer, then writes an `ok, passed` result to the
    runner's stdout, SIGKILLs the runner, ptrace-attaches to it and to PID 1, and opens the
    runner's memory. Every attempt fails and the verdict stays the trusted one."""
    code = textwrap.dedent("""
        import ctypes, json, os, signal, sys
        print(41, flush=True)
        runner = os.getppid()
        forged = json.dumps({"status": "ok", "compile": None, "clean": True,
                             "tests": [{"status": "ok", "passed": True, "stdout": "42"}]})
        report = {}
        try:
            with open(f"/proc/{runner}/fd/1", "w") as fh:
                fh.write(forged)
            report["write_stdout"] = "done"
        except OSError as err:
            report["write_stdout"] = type(err).__name__
        libc = ctypes.CDLL(None, use_errno=True)
        for name, pid in (("ptrace_runner", runner), ("ptrace_init", 1)):
            report[name] = libc.ptrace(16, pid, None, None)  # PTRACE_ATTACH: -1 when refused
        try:
            open(f"/proc/{runner}/mem", "r+b")
            report["mem"] = "opened"
        except OSError as err:
            report["mem"] = type(err).__name__
        try:
            os.kill(runner, signal.SIGKILL)
            report["kill"] = "sent"
        except OSError as err:
            report["kill"] = type(err).__name__
        print(json.dumps(report), file=sys.stderr)
    """)
    result = pool.run_one("Python", code, [{"stdin": "", "expected": "42"}])
    assert result["status"] == "wrong_answer" and result["tests"][0]["passed"] is False, result
    report = json.loads(result["tests"][0]["stderr"].strip().splitlines()[-1])
    assert report == {"write_stdout": "PermissionError", "ptrace_runner": -1, "ptrace_init": -1,
                      "mem": "PermissionError", "kill": "PermissionError"}, report
    assert result["clean"] is True


def test_a_daemon_cannot_hijack_the_next_program(pool):
    """Defect 2: a daemon that outlives its program, in its own session and non-dumpable (so
    /proc/<pid> looks like root's), rewrites every job's binary; it must be dead before the
    next program, which prints its own text."""
    daemon = textwrap.dedent("""
        import ctypes, glob, os, time
        if os.fork() == 0:
            os.setsid()
            if os.fork() == 0:
                ctypes.CDLL(None).prctl(4, 0)  # PR_SET_DUMPABLE 0: /proc/<pid> now shows root as owner
                end = time.time() + 30
                while time.time() < end:
                    for path in glob.glob("/work/job-*/main"):
                        try:
                            with open(path, "w") as fh:
                                fh.write("#!/bin/sh\\necho pwned\\n")
                            os.chmod(path, 0o755)
                        except OSError:
                            pass
                    time.sleep(0.001)
                os._exit(0)
            os._exit(0)
        print("planted")
    """)
    assert pool.run_one("Python", daemon, RUN)["status"] == "ok"
    for _ in range(3):
        innocent = pool.run_one("C", HELLO_C, RUN)
        assert innocent["status"] == "ok" and stdout(innocent).strip() == "innocent", innocent


def test_zombies_are_reaped_and_do_not_exhaust_pids(pool):
    """Defect 3: 110 children that exit unwaited (more than the pids limit of 64 allows at
    once) leave no zombies; Java and Go, which need many threads, still run after."""
    code = textwrap.dedent("""
        import os, time
        made = 0
        for _ in range(110):
            try:
                if os.fork() == 0:
                    os._exit(0)
                made += 1
            except OSError:
                time.sleep(0.01)
        time.sleep(0.2)
        print(made)
    """)
    assert pool.run_one("Python", code, RUN)["status"] == "ok"
    count = pool.run_one("Python", "import os\nprint(sum(1 for p in os.listdir('/proc') if p.isdigit()))\n", RUN)
    assert int(stdout(count)) <= 4, count  # init, sleep, the runner, this program
    assert stdout(pool.run_one("Java", JAVA_HELLO, RUN)).strip() == "java fine"
    assert stdout(pool.run_one("Go", GO_HELLO, RUN)).strip() == "go fine"


def test_no_state_survives_a_program(pool):
    """Defect 4: files in /tmp, /dev/shm, 5,000 files in the job folder (its inode cap is 8,192), a POSIX message
    queue and a SysV segment; /work itself is not writable. The next program sees none."""
    writer = textwrap.dedent("""
        import ctypes, os
        open("/tmp/secret", "w").write("secret-from-program-A")
        open("/dev/shm/secret", "w").write("secret-from-program-A")
        os.makedirs("/tmp/deep/er", exist_ok=True)
        os.chmod("/tmp/deep", 0)  # a folder its owner locked
        for i in range(5000):
            open(f"f{i}", "w").close()
        try:
            open("/work/secret", "w").write("x")
            print("work-writable")
        except PermissionError:
            print("work-readonly")
        libc = ctypes.CDLL(None, use_errno=True)
        print("shm", libc.shmget(1234, 4096, 0o1600))          # IPC_CREAT | 0600
        librt = ctypes.CDLL("librt.so.1", use_errno=True)
        print("mq", librt.mq_open(b"/aicd-q", 0o102, 0o600, None))  # O_CREAT | O_RDWR
    """)
    first = pool.run_one("Python", writer, RUN)
    assert first["status"] == "ok" and "work-readonly" in stdout(first), first
    assert "shm -1" not in stdout(first) and "mq -1" not in stdout(first), first  # both were really made
    reader = textwrap.dedent("""
        import glob, json, os
        print(json.dumps({"tmp": os.listdir("/tmp"), "shm": os.listdir("/dev/shm"),
                          "mqueue": os.listdir("/dev/mqueue") if os.path.isdir("/dev/mqueue") else [],
                          "work": [p for p in os.listdir("/work") if p != os.path.basename(os.getcwd())],
                          "sysv": open("/proc/sysvipc/shm").read().splitlines()[1:]}))
    """)
    seen = json.loads(stdout(pool.run_one("Python", reader, RUN)))
    assert seen == {"tmp": [], "shm": [], "mqueue": [], "work": [], "sysv": []}, seen


def test_a_full_tmp_does_not_reach_the_next_compile(pool):
    fill = "try:\n    with open('/tmp/fill', 'wb') as fh:\n        while True: fh.write(b'x' * (1 << 20))\nexcept OSError as e:\n    print(e.errno)\n"
    assert stdout(pool.run_one("Python", fill, RUN)).strip() == "28"  # ENOSPC: a full disk, not an OOM
    assert stdout(pool.run_one("Go", GO_HELLO, RUN)).strip() == "go fine"


def test_a_full_work_folder_is_the_programs_error_not_the_sandboxes(pool):
    fill = "with open('big', 'wb') as fh:\n    while True: fh.write(b'x' * (1 << 20))\n"
    result = pool.run_one("Python", fill, RUN)
    assert result["status"] == "runtime_error" and "No space left" in result["tests"][0]["stderr"], result


@ONE_ENGINE
def test_a_runner_that_is_not_root_refuses_to_run(pool):
    """Without the privilege drop the program would share the runner's user: refuse."""
    import shlex
    import subprocess

    from aicd.sandbox.isolation import program_uid
    from aicd.sandbox.pool import trusted_result

    job = json.dumps({"files": {"main.py": "print(1)"}, "compile": None, "run": ["python3", "main.py"], "nonce": "n1"})
    container = pool._take()
    try:
        code, output = pool.engine.client.containers.get(container.id).exec_run(
            ["sh", "-c", f"printf %s {shlex.quote(job)} | python3 /opt/aicd/runner.py"],
            user=str(program_uid(pool.engine)), demux=True)
        out, err = (part.decode() if part else "" for part in output)
        result = trusted_result(subprocess.CompletedProcess([], code, out, err), "n1")
        assert result["status"] == "sandbox_error" and "must start as root" in result["error"], result
    finally:
        pool._give(container, {"status": "ok"})


def test_a_fork_bomb_that_leaves_its_session_is_killed_to_the_last_process(pool):
    """Every child starts its own session, so killing the program's group misses them, and the
    pids limit is full, so the runner may not be able to fork: all are killed all the same."""
    bomb = ("import os\nwhile True:\n    try:\n        if os.fork() == 0:\n            os.setsid()\n"
            "    except OSError:\n        pass\n")
    assert pool.run_one("Python", bomb, RUN)["status"] in ("timeout", "runtime_error", "memory_limit")
    count = pool.run_one("Python", "import os\nprint(sum(1 for p in os.listdir('/proc') if p.isdigit()))\n", RUN)
    assert count["status"] == "ok" and int(stdout(count)) <= 4, count


@ONE_ENGINE
def test_a_program_that_never_reads_its_stdin_times_out(pool):
    """A megabyte of stdin the program never reads must not block the runner: the verdict is
    the program's timeout, not a sandbox_error."""
    result = pool.run_one("Python", "while True:\n    pass\n", [{"stdin": "7\n" * 500_000, "expected": "7"}])
    assert result["status"] == "timeout", result


def test_sysv_shared_memory_cannot_starve_the_runner(pool):
    """Segments outlive their process and are not a tmpfs: they are capped by sysctl, so the
    program cannot fill the container's memory with them and leave the runner to be OOM-killed."""
    hog = textwrap.dedent("""
        import ctypes
        libc = ctypes.CDLL(None, use_errno=True)
        libc.shmat.restype = ctypes.c_void_p
        total = 0
        for key in range(1000, 1400):
            ident = libc.shmget(key, 16 << 20, 0o1600)
            if ident < 0:
                break
            addr = libc.shmat(ident, None, 0)
            if addr in (None, ctypes.c_void_p(-1).value):
                break
            ctypes.memset(addr, 1, 16 << 20)
            total += 16
        print(total)
    """)
    result = pool.run_one("Python", hog, RUN)
    assert result["status"] in ("ok", "memory_limit"), result
    if result["status"] == "ok":
        assert int(stdout(result)) <= 32  # tmp_mb of the test pool
    assert pool.run_one("C", HELLO_C, RUN)["status"] == "ok"


@ONE_ENGINE
def test_a_program_that_kills_itself_is_a_runtime_error_not_a_memory_limit(pool):
    result = pool.run_one("Python", "import os, signal\nos.kill(os.getpid(), signal.SIGKILL)\n", RUN)
    assert result["status"] == "runtime_error" and result["tests"][0]["signal"] == 9, result


def test_the_program_holds_only_its_own_three_descriptors_and_default_signals(pool):
    """The runner's attach stream (its stdin and stdout) is not among the program's
    descriptors, tini's (PID 1) cannot be opened, and no signal is left ignored."""
    code = textwrap.dedent("""
        #include <fcntl.h>
        #include <stdio.h>
        #include <string.h>
        int main(void) {
            int open_fds = 0;
            for (int fd = 3; fd < 4096; fd++) if (fcntl(fd, F_GETFD) != -1) open_fds++;
            FILE *init = fopen("/proc/1/fd/1", "w");
            char line[256], ign[64] = "";
            FILE *st = fopen("/proc/self/status", "r");
            while (fgets(line, sizeof line, st)) if (!strncmp(line, "SigIgn:", 7)) sscanf(line + 7, "%63s", ign);
            printf("%d %s %s\\n", open_fds, init ? "opened" : "refused", ign);
            return 0;
        }
    """)
    result = pool.run_one("C", code, RUN)
    assert result["status"] == "ok", result
    assert stdout(result).split() == ["0", "refused", "0000000000000000"], result
