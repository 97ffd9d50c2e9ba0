"""The sandbox runner's own logic, run as a plain subprocess on the host (the same script runs
inside the container; the Docker tests in tests/sandbox cover isolation)."""

import json
import subprocess
import sys

import pytest
from aicd.data.schema import LANGUAGES
from aicd.sandbox.languages import TOOLCHAINS, job_for


def run_job(repo, tmp_path, job, **limits):
    job = {**job, "limits": {"wall_s": 2, "compile_s": 30, "output_bytes": 4096, **limits}}
    proc = subprocess.run([sys.executable, str(repo / "containers" / "sandbox" / "runner.py")], input=json.dumps(job),
                          capture_output=True, text=True, timeout=60,
                          env={"AICD_WORK": str(tmp_path), "PATH": "/usr/local/bin:/usr/bin:/bin"})
    return json.loads(proc.stdout)


def py(code, tests=None):
    return {"files": {"main.py": code}, "compile": None, "run": [sys.executable, "main.py"], "tests": tests or []}


DOUBLING = [{"stdin": "3\n", "expected": "6"}, {"stdin": "5\n", "expected": "10"}]
OUTCOMES = {  # status: (program, tests, limits)
    "ok": ("print(int(input()) * 2)\n", DOUBLING, {}),
    "wrong_answer": ("print(int(input()) + 3)\n", DOUBLING, {}),
    "runtime_error": ("import sys\nsys.exit(4)\n", None, {}),
    "timeout": ("while True: pass\n", None, {"wall_s": 0.5}),
    "output_limit": ("while True: print('y' * 1000)\n", None, {}),
}


@pytest.fixture(scope="module")
def outcomes(repo, tmp_path_factory):
    """One job per outcome, all in one work folder: (results by status, what is left in it)."""
    work = tmp_path_factory.mktemp("work")
    results = {status: run_job(repo, work, py(code, tests), **limits)
               for status, (code, tests, limits) in OUTCOMES.items()}
    return results, list(work.iterdir())


@pytest.mark.parametrize("status", OUTCOMES)
def test_each_outcome_has_its_status(outcomes, status):
    assert outcomes[0][status]["status"] == status


def test_a_wrong_answer_says_which_tests_passed(outcomes):
    assert [t["passed"] for t in outcomes[0]["wrong_answer"]["tests"]] == [True, False]


def test_output_past_the_limit_is_cut_at_it(outcomes):
    assert len(outcomes[0]["output_limit"]["tests"][0]["stdout"]) <= 4096


def test_job_folders_are_removed(outcomes):
    assert outcomes[1] == []


def test_timeout_kills_the_whole_process_group(repo, tmp_path):
    code = ("import os, time\nif os.fork() == 0:\n    time.sleep(30)\nelse:\n    time.sleep(30)\n")
    started = __import__("time").monotonic()
    assert run_job(repo, tmp_path, py(code), wall_s=0.5)["status"] == "timeout"
    assert __import__("time").monotonic() - started < 10


def test_compile_error(repo, tmp_path):
    job = {"files": {"main.c": "int main(void) { return y; }\n"}, "compile": ["gcc", "-o", "main", "main.c"],
           "run": ["./main"], "tests": []}
    result = run_job(repo, tmp_path, job)
    assert result["status"] == "compile_error" and "y" in result["compile"]["stderr"]


RUN = [{"stdin": ""}]


def test_java_file_and_class_follow_the_public_class():
    job = job_for("Java", "import x;\npublic class Solution {\n  public static void main(String[] a) {}\n}\n", RUN)
    assert list(job["files"]) == ["Solution.java"] and job["run"][-1] == "Solution"


def test_java_without_a_public_class_is_main_java_running_the_class_with_main():
    job = job_for("Java", "class Helper {}\nclass Runner {\n  public static void main(String[] a) {}\n}\n", RUN)
    assert list(job["files"]) == ["Main.java"] and job["run"][-1] == "Runner"


def test_there_is_a_toolchain_for_each_of_the_nine_languages():
    assert len(TOOLCHAINS) == 9 and set(TOOLCHAINS) == set(LANGUAGES)


def test_java_main_is_found_past_nested_classes_comments_and_packages():
    code = ("package org.demo;\n// public class Fake { public static void main(String[] a) {} }\n"
            "class Helper { static class FastReader { void main() {} } }\n"
            "public class Solve {\n  static class In {}\n  public static void main(String[] a) {}\n}\n")
    job = job_for("Java", code, RUN)
    assert list(job["files"]) == ["Solve.java"] and job["run"][-1] == "org.demo.Solve"


@pytest.mark.parametrize("language, with_main, without_main", [
    ("C", "int main(void) { return 0; }", "static int add(int a, int b) { return a + b; }"),
    ("C++", "#include <cstdio>\nint main() { puts(\"x\"); }", "class Solution { public: int f() { return 1; } };"),
    ("Go", "package main\nfunc main() {}", "package main\nfunc helper() int { return 1 }"),
    ("Rust", "fn main() {}", "pub fn add(a: i32) -> i32 { a }"),
    ("C#", "class P { static void Main() {} }", "class Solution { public int F() { return 1; } }"),
    ("Java", "class A { public static void main(String[] a) {} }", "class Solution { public int f() { return 1; } }"),
])
def test_what_is_run_and_what_is_only_built(language, with_main, without_main):
    assert job_for(language, with_main, RUN)["run"] is not None  # tests and an entry point: run
    assert job_for(language, with_main, [])["run"] is None       # no tests: only built
    snippet = job_for(language, without_main, RUN)               # no entry point: only built
    assert snippet["run"] is None and snippet["compile"] and snippet["entry_point"] is False


@pytest.mark.parametrize("language", ["Python", "PHP", "JavaScript"])
def test_scripts_without_tests_are_syntax_checked(language):
    job = job_for(language, "x", [])
    assert job["run"] is None and job["compile"][0] in ("python3", "php", "node")


def test_a_program_without_run_is_reported_compiled(repo, tmp_path):
    ok = run_job(repo, tmp_path, {"files": {"main.py": "print(1)\n"}, "run": None,
                                  "compile": [sys.executable, "-m", "py_compile", "main.py"]})
    assert ok["status"] == "compiled" and ok["tests"] == []
    bad = run_job(repo, tmp_path, {"files": {"main.py": "print(1\n"}, "run": None,
                                   "compile": [sys.executable, "-m", "py_compile", "main.py"]})
    assert bad["status"] == "compile_error"


@pytest.mark.parametrize("language", ["C", "C++"])
def test_host_toolchain_round_trip(repo, tmp_path, language):
    code = '#include <stdio.h>\nint main(void){int a;scanf("%d",&a);printf("%d\\n",a*a);return 0;}\n'
    job = job_for(language, code, [{"stdin": "7", "expected": "49"}])
    assert run_job(repo, tmp_path, job)["status"] == "ok"


def test_only_the_runners_answer_to_this_job_is_trusted():
    from aicd.sandbox.pool import trusted_result

    good = {"status": "ok", "compile": None, "tests": [], "clean": True, "breaches": [], "nonce": "n1"}
    answer = lambda out, rc=0: subprocess.CompletedProcess([], rc, out, "")  # noqa: E731
    assert trusted_result(answer(json.dumps(good)), "n1")["status"] == "ok"
    for forged in ({**good, "nonce": None}, {**good, "nonce": "n0"}, {**good, "status": "accepted"}):
        assert trusted_result(answer(json.dumps(forged)), "n1")["status"] == "sandbox_error", forged
    assert trusted_result(answer(json.dumps(good) + json.dumps(good)), "n1")["status"] == "sandbox_error"
    assert trusted_result(answer(json.dumps(good), rc=137), "n1")["status"] == "sandbox_error"
    unclean = trusted_result(answer(json.dumps({**good, "clean": False, "breaches": ["1 process survived"]})), "n1")
    assert unclean["status"] == "ok" and unclean["unclean"] == ["1 process survived"]  # result stands, container goes


def test_limits_that_would_turn_a_full_disk_into_an_oom_are_refused():
    from aicd.common.errors import AicdError
    from aicd.sandbox.pool import INODE_KB, INODES_PER_MB, RUNNER_RESERVE_MB, Limits

    # work 128 + 3 x tmp 32 + inodes (128 + 2 x 32) x 64 x 2 KB + the runner's reserve
    worst = 128 + 96 + (192 * INODES_PER_MB * INODE_KB) // 1024 + RUNNER_RESERVE_MB
    assert Limits(memory_mb=worst, work_mb=128, tmp_mb=32).worst_case_mb == worst == 280
    with pytest.raises(AicdError, match=r"memory_mb \(279\) must be at least 280.*raise memory_mb to 280"):
        Limits(memory_mb=worst - 1, work_mb=128, tmp_mb=32)
    with pytest.raises(AicdError, match="memory_mb .512. must be at least 528"):
        Limits(memory_mb=512)  # the defaults for work_mb and tmp_mb need 528
    with pytest.raises(AicdError, match="positive"):
        Limits(wall_s=0)
    assert Limits().memory_mb >= Limits().worst_case_mb  # the defaults are consistent


def test_every_writable_tmpfs_has_a_size_and_an_inode_cap():
    from aicd.sandbox.pool import SECCOMP_PROFILE, Limits, isolation_flags

    flags = isolation_flags(Limits(work_mb=256, tmp_mb=64))
    mounts = dict(flags[i + 1].split(":", 1) for i, flag in enumerate(flags) if flag == "--tmpfs")
    assert set(mounts) == {"/work", "/tmp", "/dev/shm"}
    for point, size, inodes in (("/work", 256, 16384), ("/tmp", 64, 4096), ("/dev/shm", 64, 4096)):
        assert f"size={size}m" in mounts[point] and f"nr_inodes={inodes}" in mounts[point], mounts[point]
    assert f"seccomp={SECCOMP_PROFILE}" in flags and "--shm-size" not in flags
    assert not any("seccomp" in f for f in isolation_flags(Limits(), seccomp=False))


def test_every_container_asks_at_most_pid_max_processes_and_the_smoke_test_asks_the_same():
    """Rootful Podman lowers its own process limit to the kernel's pid_max: a container asking more
    does not start. The image's smoke test and every sandbox container ask the same rlimits."""
    import resource

    from aicd.sandbox.images import smoke_run_args
    from aicd.sandbox.isolation import pid_max, ulimits

    limits = {u["Name"]: u for u in ulimits()}
    hard = resource.getrlimit(resource.RLIMIT_NPROC)[1]
    assert limits["nproc"]["Hard"] == limits["nproc"]["Soft"] == min(pid_max(), 1 << 20 if hard < 0 else hard)
    assert limits["nproc"]["Hard"] <= pid_max() and limits["core"]["Hard"] == 0
    asked = {u["Name"]: (u["Soft"], u["Hard"]) for u in smoke_run_args()["ulimits"]}
    assert asked == {name: (u["Soft"], u["Hard"]) for name, u in limits.items()}


def test_the_seccomp_profile_is_in_the_image_context_and_refuses_io_uring():
    from aicd.sandbox.images import context_tag
    from aicd.sandbox.pool import CONTEXT, SECCOMP_PROFILE

    assert SECCOMP_PROFILE.parent == CONTEXT  # so the image tag's hash covers it
    profile = json.loads(SECCOMP_PROFILE.read_text())
    assert profile["defaultAction"] == "SCMP_ACT_ERRNO" and profile["defaultErrnoRet"] == 1  # EPERM
    allowed = {name for rule in profile["syscalls"] if rule["action"] == "SCMP_ACT_ALLOW" for name in rule["names"]}
    assert not {"io_uring_setup", "io_uring_enter", "io_uring_register"} & allowed
    assert {"execve", "clone", "futex", "mmap", "openat"} <= allowed
    assert context_tag(CONTEXT).startswith("aicd-sandbox:")


def test_host_mode_reports_clean_and_carries_the_nonce(repo, tmp_path):
    job = {**py("print(1)\n"), "nonce": "abc", "limits": {"wall_s": 2}}
    proc = subprocess.run([sys.executable, str(repo / "containers" / "sandbox" / "runner.py")], input=json.dumps(job),
                          capture_output=True, text=True, timeout=60,
                          env={"AICD_WORK": str(tmp_path), "PATH": "/usr/local/bin:/usr/bin:/bin"})
    out = json.loads(proc.stdout)
    assert out["nonce"] == "abc" and out["status"] == "ok" and out["clean"] is True


def test_owners_are_judged_only_in_our_host_boot_and_pid_namespace():
    import os

    from aicd.sandbox.pool import owner_alive, owner_label

    host, pid, started, boot, pidns = owner_label().split(":")
    assert pid == str(os.getpid()) and owner_alive(owner_label())
    dead_pid = ":".join([host, pid, str(int(started) + 1), boot, pidns])  # same pid, another process
    assert not owner_alive(dead_pid)
    assert not owner_alive(":".join([host, pid, started, "another-boot", pidns]))  # rebooted since
    for unjudgeable in (":".join([host, pid, str(int(started) + 1), boot, "4026531999"]),  # other namespace
                        ":".join(["another-host", pid, "1", boot, pidns]),
                        ":".join([host, pid, "None", boot, pidns]),                          # no /proc there
                        "old-format:123:456"):
        assert owner_alive(unjudgeable), unjudgeable


def test_programs_start_with_default_signals_and_only_their_three_descriptors(repo, tmp_path):
    """The runner (Python) ignores SIGPIPE and SIGXFSZ; its programs must not inherit that,
    nor any descriptor beyond stdin, stdout and stderr."""
    job = {"files": {"x": ""}, "compile": None, "tests": [{"stdin": ""}],
           # builtins only for the descriptor check: a pipeline would open descriptors of its own
           "run": ["sh", "-c", "grep SigIgn /proc/$$/status; "
                               "for fd in 3 4 5 6 7 8 9 10 11 12; do [ -e /proc/$$/fd/$fd ] && echo -n \"$fd \"; done; echo ."]}
    out = run_job(repo, tmp_path, job)
    lines = out["tests"][0]["stdout"].splitlines()
    ignored = int(lines[0].split()[1], 16)
    # SIGPIPE (13) and SIGXFSZ (25), which the runner's Python ignores, are back to default. (The
    # host's own caller may ignore others, e.g. glibc's signal 32 under CI; the in-container test
    # in tests/sandbox checks that nothing at all is ignored there.)
    assert ignored & ((1 << 12) | (1 << 24)) == 0, lines
    assert lines[1].split() == ["."], lines  # no descriptor beyond 0, 1 and 2
    missing = run_job(repo, tmp_path, {"files": {"x": ""}, "compile": None, "tests": [{"stdin": ""}],
                                       "run": ["./not-built"]})
    assert missing["status"] == "runtime_error" and "not-built" in missing["tests"][0]["stderr"]


@pytest.fixture
def engine_facts():
    """Engines of given facts, no engine behind them; each closed after the test (building a
    container's config stages its /etc files and seccomp profile in a folder of the engine's)."""
    from aicd.sandbox.engine import Engine

    made = []

    def engine(name, version, rootless, cgroup, enforced):
        made.append(Engine(name, None, version, rootless, cgroup, frozenset(enforced)))
        return made[-1]

    yield engine
    for each in made:
        each.close()
        assert each.stage is None or not each.stage.exists()


def test_the_runners_process_limit_is_per_container_each_with_a_uid_of_its_own(engine_facts):
    """RLIMIT_NPROC counts the processes of one uid in one user namespace. Rootless Podman gives
    each container its own (--userns=auto); elsewhere each container's program has a uid of its
    own (PROGRAM_UIDS), so the limit is `pids` whatever the pool's size, and each fork is checked
    against it before it is made where the kernel lets a notified call go on."""
    from aicd.sandbox.isolation import (
        PROGRAM_UIDS,
        UID_LABEL,
        USERNS_PROGRAM_UID,
        container_config,
        inode_gate,
        limits_line,
        program_uid,
        runner_limits,
    )
    from aicd.sandbox.limits import Limits

    podman = engine_facts("podman", "4.3.1", True, "1", ())  # cgroup v1: no limit enforced
    lim = Limits()
    assert runner_limits(podman, lim)["nproc"] == lim.pids and runner_limits(podman, lim)["fork_gate"] == inode_gate()
    assert f"RLIMIT_NPROC {lim.pids} in each container's own user namespace" in limits_line(podman, lim)
    assert program_uid(podman) == USERNS_PROGRAM_UID
    rootless_docker = engine_facts("docker", "20.10", True, "1", ())
    assert runner_limits(rootless_docker, lim)["nproc"] == lim.pids
    assert f"RLIMIT_NPROC {lim.pids} for a uid of each container's own" in limits_line(rootless_docker, lim)
    rootful = engine_facts("docker", "20.10", False, "1", ("memory", "pids", "cpu"))
    assert "nproc" not in runner_limits(rootful, lim)  # the cgroup's pids limit holds per container
    config = container_config(rootful, "image", lim, {}, uid=PROGRAM_UIDS[7])
    assert "UsernsMode" not in config["HostConfig"] and "SYS_PTRACE" not in config["HostConfig"]["CapAdd"]
    assert f"AICD_PROGRAM_UID={PROGRAM_UIDS[7]}" in config["Env"] and config["Labels"][UID_LABEL] == str(PROGRAM_UIDS[7])


def test_program_uids_are_no_host_account_and_fit_a_rootless_namespace():
    """Above Debian's regular accounts (UID_MAX 60000), below nobody, and mapped in a user
    namespace of 65,536 ids."""
    from aicd.sandbox.isolation import PROGRAM_UIDS

    assert PROGRAM_UIDS.start > 60000 and PROGRAM_UIDS.stop <= 65534 and len(PROGRAM_UIDS) > 1000


def test_rootless_programs_get_a_share_of_the_users_inotify_limits(engine_facts, tmp_path):
    """Half of the user's limit, split among the containers its subordinate ids allow at once."""
    from aicd.sandbox.isolation import USERNS_IDS, user_limit_share

    limit = tmp_path / "max_user_instances"
    limit.write_text("128\n")
    podman = engine_facts("podman", "4.3.1", True, "1", ())
    podman.subordinate_ids = 65536
    assert user_limit_share(podman, str(limit), 0) == 1 == 128 // 2 // (65536 // USERNS_IDS)
    limit.write_text("8192\n")
    assert user_limit_share(podman, str(limit), 0) == 8192 // 2 // 64
    assert user_limit_share(podman, str(tmp_path / "missing"), 640) == 640 // 2 // 64


def test_the_hosts_load_disks_and_nodes_are_masked_on_both_engines(engine_facts):
    """Docker takes the whole list; Podman its `mask=` option, with a folder whose path has a
    colon bound over by an empty one (the option splits on colons); the cgroup tree where the
    engine gives no cgroup namespace and the runner counts memory."""
    from aicd.sandbox.masks import CGROUP_TREE, DOCKER_MASKED, HOST_DISKS, HOST_LOAD, HOST_NODES, mask_settings

    docker = mask_settings(engine_facts("docker", "20.10", False, "1", ("memory", "pids", "cpu")))
    assert set(docker["MaskedPaths"]) >= {*DOCKER_MASKED, *HOST_LOAD, *HOST_DISKS, *HOST_NODES}
    assert CGROUP_TREE not in docker["MaskedPaths"]  # a cgroup namespace of its own
    podman = mask_settings(engine_facts("podman", "4.3.1", True, "1", ()))
    masked = podman["SecurityOpt"][0].removeprefix("mask=").split(":")
    assert set(masked) >= {*HOST_LOAD, *HOST_DISKS, *HOST_NODES, CGROUP_TREE}
    assert all(":" in mount["Target"] and mount["ReadOnly"] for mount in podman["Mounts"])


def test_the_socket_diagnostics_are_allowed_only_where_the_runner_counts_memory(engine_facts):
    from aicd.sandbox.isolation import NETLINK_SOCK_DIAG, seccomp_profile

    def diag(engine):
        return any(rule["names"] == ["socket"] and {"index": 2, "value": NETLINK_SOCK_DIAG, "op": "SCMP_CMP_EQ"}
                   in rule.get("args", []) for rule in seccomp_profile(engine)["syscalls"])

    assert diag(engine_facts("podman", "4.3.1", True, "1", ()))
    assert not diag(engine_facts("docker", "20.10", False, "1", ("memory", "pids", "cpu")))


def test_signals_the_runner_was_handed_ignored_are_default_in_the_program(repo, tmp_path):
    """An engine or host can start the runner with signals ignored (signal 32, glibc's reserved
    SIGCANCEL, was seen under rootless Podman); ignored survives exec, so the runner resets every
    one it started with, the reserved ones by raw rt_sigaction."""
    starter = tmp_path / "start.py"
    starter.write_text(
        "import ctypes, os, signal, sys\n"
        "number = {'x86_64': 13, 'aarch64': 134}[os.uname().machine]  # rt_sigaction, as the runner knows it\n"
        "ctypes.CDLL(None).syscall(number, 32, ctypes.byref((ctypes.c_ulong * 4)(1, 0, 0, 0)), None, 8)  # SIG_IGN\n"
        "signal.signal(signal.SIGUSR1, signal.SIG_IGN)\n"
        "os.execv(sys.executable, [sys.executable, *sys.argv[1:]])\n")
    # grep, not Python: Python ignores SIGPIPE and SIGXFSZ itself at start
    job = {"files": {}, "compile": None, "run": ["grep", "SigIgn", "/proc/self/status"], "tests": [{"stdin": ""}],
           "limits": {"wall_s": 2, "compile_s": 30, "output_bytes": 4096}}
    proc = subprocess.run([sys.executable, str(starter), str(repo / "containers" / "sandbox" / "runner.py")],
                          input=json.dumps(job), capture_output=True, text=True, timeout=60,
                          env={"AICD_WORK": str(tmp_path), "PATH": "/usr/local/bin:/usr/bin:/bin"})
    result = json.loads(proc.stdout)
    assert result["status"] == "ok" and result["tests"][0]["stdout"].split() == ["SigIgn:", "0" * 16], result


def test_the_runner_is_given_the_oom_guard_only_where_a_cgroup_caps_memory_and_the_host_grants_it(engine_facts):
    """CAP_SYS_RESOURCE (the runner out of the OOM killer's reach, each program pinned at 1000)
    where a cgroup caps memory on a rootful engine and this machine's bounding set has it; never
    where the runner counts memory itself or the engine is rootless; and no more once an engine
    refused it."""
    from aicd.sandbox.isolation import CAP_SYS_RESOURCE, OOM_GUARD_CAP, bounding_has, container_config
    from aicd.sandbox.limits import Limits

    def caps(engine):
        return container_config(engine, "image", Limits(), {})["HostConfig"]["CapAdd"]

    rootful = engine_facts("docker", "20.10", False, "1", ("memory", "pids", "cpu"))
    assert (OOM_GUARD_CAP in caps(rootful)) == bounding_has(CAP_SYS_RESOURCE)
    rootful.oom_guard = False  # refused once
    assert OOM_GUARD_CAP not in caps(rootful)
    assert OOM_GUARD_CAP not in caps(engine_facts("podman", "4.3.1", True, "1", ()))
    assert OOM_GUARD_CAP not in caps(engine_facts("podman", "4.3.1", True, "2", ("memory", "pids", "cpu")))


def test_an_engine_nobody_closed_takes_its_staged_files_along():
    """The folder of an engine's staged files goes with the engine even where no one closes it
    (collected, or at the process's exit): nothing of it is left in the temporary folder."""
    import gc

    from aicd.sandbox.engine import Engine

    engine = Engine("docker", None, "20.10", False, "1", frozenset())
    folder = engine.staged("hosts", "127.0.0.1 localhost\n").parent
    assert folder.is_dir() and folder.name.startswith("sandbox-")
    del engine
    gc.collect()
    assert not folder.exists()
