"""Choosing the engine and living with what it can enforce: `auto` takes Docker where its
daemon answers and Podman otherwise; a Podman service the sandbox starts goes with the process
that started it; limits an engine cannot set (rootless Podman on cgroup v1: no memory, pids or
CPU limit, no tmpfs inode caps) are held by the runner, and the run says so in one line."""

import os
import re
import shutil
import signal
import subprocess
import sys
import textwrap
import time

import pytest
from aicd.common.errors import AicdError
from aicd.sandbox.engine import NO_DOCKER, available, connect
from aicd.sandbox.isolation import limits_line, ulimits
from components import require
from sandbox_support import HELLO, RUN, stdout

DEAD_DOCKER = "unix:///nonexistent/aicd-test/docker.sock"


def gone(pid: int, within_s: float) -> bool:
    end = time.monotonic() + within_s
    while time.monotonic() < end:
        try:
            with open(f"/proc/{pid}/stat") as fh:
                if fh.read().rsplit(")", 1)[1].split()[0] == "Z":
                    return True  # a zombie: dead, not yet reaped
        except FileNotFoundError:
            return True
        time.sleep(0.2)
    return False


def test_auto_takes_docker_where_it_answers_and_podman_otherwise(monkeypatch):
    require(available("docker"), "a Docker daemon", "apt-get install docker.io and start dockerd")
    require(shutil.which("podman") is not None, "Podman", "apt-get install podman uidmap")
    docker_side = connect("auto")
    assert docker_side.name == "docker"
    docker_side.close()
    monkeypatch.setenv("DOCKER_HOST", DEAD_DOCKER)
    monkeypatch.delenv("CONTAINER_HOST", raising=False)
    with pytest.raises(AicdError, match=f"^{re.escape(NO_DOCKER)}$"):
        connect("docker")
    with pytest.raises(AicdError, match="execution.engine must be one of auto, docker, podman"):
        connect("kubernetes")
    podman = connect("auto")  # no daemon: Podman, whose service this process starts and stops
    try:
        assert podman.name == "podman" and podman.client.ping()
        started = podman.service
    finally:
        podman.close()
    if started is not None:
        assert gone(started.pid, 30) and not podman.scratch.exists()


SERVICE_OWNER = textwrap.dedent("""
    import os, sys, time
    os.environ.pop("CONTAINER_HOST", None)
    from aicd.sandbox.engine import start_podman_service
    proc, url, scratch = start_podman_service()
    print(proc.pid, scratch, flush=True)
    time.sleep(600)
""")


def test_rootful_podman_starts_a_container_with_the_sandboxs_rlimits(tmp_path):
    """Rootful Podman lowers its own process limit to the kernel's pid_max; a container asking
    more (this process's hard limit, where root lacks CAP_SYS_RESOURCE) did not start: "error
    setting rlimit type 6". A one-shell image made here, started with the sandbox's rlimits."""
    require(os.geteuid() == 0 and shutil.which("podman") is not None, "rootful Podman (root, podman)",
            "apt-get install podman and run as root (.ci/run does)")
    root = tmp_path / "root"
    shell = os.path.realpath("/bin/sh")
    libraries = re.findall(r"(/\S+)", subprocess.run(["ldd", shell], capture_output=True, text=True).stdout)
    for path in [shell, *libraries]:
        target = root / path.lstrip("/")
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(path, target)
    (root / "bin").mkdir(exist_ok=True)
    if not (root / "bin" / "sh").exists():
        os.symlink(shell, root / "bin" / "sh")
    tag = f"localhost/aicd-test-rlimits:{os.getpid()}"
    tarball = subprocess.run(["tar", "-C", str(root), "-c", "."], capture_output=True, check=True).stdout
    subprocess.run(["podman", "import", "-", tag], input=tarball, capture_output=True, check=True)
    try:
        limits = [arg for u in ulimits() for arg in ("--ulimit", f"{u['Name']}={u['Soft']}:{u['Hard']}")]
        # the container's own limits as the kernel reports them (a shell builtin's flag for it differs)
        read = 'while IFS= read -r line; do case "$line" in "Max processes"*) echo "$line";; esac; done < /proc/self/limits'
        run = subprocess.run(["podman", "run", "--rm", "--network", "none", *limits, tag, "/bin/sh", "-c", read],
                             capture_output=True, text=True, timeout=120)
        assert run.returncode == 0, run.stderr
        nproc = next(u for u in ulimits() if u["Name"] == "nproc")
        assert run.stdout.split()[2:4] == [str(nproc["Soft"]), str(nproc["Hard"])], run.stdout
    finally:
        subprocess.run(["podman", "rmi", "-f", tag], capture_output=True)


def test_a_podman_service_started_here_goes_when_its_owner_is_killed(repo):
    """A job killed with SIGKILL cannot stop the service it started: the service's parent-death
    signal does."""
    require(shutil.which("podman") is not None, "Podman", "apt-get install podman uidmap")
    owner = subprocess.Popen([sys.executable, "-c", SERVICE_OWNER], stdout=subprocess.PIPE, text=True,
                             env={"PYTHONPATH": str(repo / "workflow"), "PATH": "/usr/local/bin:/usr/bin:/bin"})
    scratch = None
    try:
        pid, scratch = owner.stdout.readline().split()
        service = int(pid)
        assert not gone(service, 1)
        owner.send_signal(signal.SIGKILL)
        owner.wait(timeout=30)
        assert gone(service, 30), "the Podman service outlived the process that started it"
    finally:
        if owner.poll() is None:
            owner.kill()
        if scratch:
            shutil.rmtree(scratch, ignore_errors=True)  # its socket folder: the killed owner could not


def test_the_run_says_in_one_line_what_the_engine_cannot_enforce(pool):
    line = limits_line(pool.engine, pool.limits)
    assert "\n" not in line and line.startswith(f"Sandbox: {pool.engine.name} ")
    if pool.engine.unenforced:
        assert "cannot enforce" in line and all(limit in line for limit in pool.engine.unenforced)
        if set(pool.engine.unenforced) - {"inodes"}:
            assert "cgroup v2" in line and "Delegate=yes" in line
    else:
        assert line.endswith("the engine enforces every limit.")


MEMORY_IN_TWO_PROCESSES = textwrap.dedent("""
    import os, sys, time
    child = os.fork()  # two processes, each within the limit, together over it
    hog = bytearray({half} << 20)
    for i in range(0, len(hog), 4096):
        hog[i] = 1
    time.sleep(2)
    if child == 0:
        os._exit(0)
    _, status = os.waitpid(child, 0)
    print("both alive" if status == 0 else "child died")
    sys.exit(0 if status == 0 else 1)
""")


def test_memory_is_capped_for_the_program_as_a_whole(pool):
    """Two processes, each under memory_mb and together over it: on every engine the program is
    stopped (the cgroup's OOM killer, or the runner's count where the engine has no cgroup), and
    the next program runs."""
    half = pool.limits.memory_mb * 6 // 10
    result = pool.run_one("Python", MEMORY_IN_TWO_PROCESSES.format(half=half), RUN)
    assert result["status"] in ("memory_limit", "runtime_error") and "both alive" not in stdout(result), result
    after = pool.run_one(*HELLO, RUN)
    assert after["status"] == "ok" and stdout(after).strip() == "still fine", after
