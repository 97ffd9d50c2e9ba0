"""Defect 5: a killed `python -m aicd.sandbox execute` leaves no container behind. SIGTERM
removes them on the way out; after SIGKILL the next pool on this host removes them. Also the
execute job's own edges: zero rows and a table without the columns it needs."""

import json
import os
import signal
import subprocess
import sys
import time

import pandas as pd
import pytest
from aicd.sandbox.pool import labelled, owner_label, remove_container, remove_stale_containers
from sandbox_support import ONE_ENGINE

LIMITS = {"wall_s": 20, "compile_s": 60, "memory_mb": 320, "pids": 64, "work_mb": 128, "tmp_mb": 32}


def containers_of(engine, job: str) -> list[str]:
    return [c.name for c in labelled(engine, f"aicd.job={job}")]


def execute_command(repo, tmp_path, engine, image, name, spec, *extra):
    """`python -m aicd.sandbox execute` on the engine under test (its environment reaches the
    same engine: CONTAINER_HOST for the tests' rootless Podman service)."""
    env = {**engine.test_env, "PYTHONPATH": str(repo / "workflow")}
    cmd = [sys.executable, "-m", "aicd.sandbox", "execute", "--engine", engine.name, "--input",
           str(tmp_path / "in.parquet"), "--name", name, "--image", image, "--spec", json.dumps(spec),
           "--out", str(tmp_path / "out.parquet"), "--report", str(tmp_path / "report.json"), *extra]
    return cmd, env


def start_execute(repo, tmp_path, engine, sandbox_image, name):
    rows = pd.DataFrame({"id": [f"s{i}" for i in range(20)], "language": "Python",
                         "code": "import time\ntime.sleep(15)\n", "generator": "human",
                         "tests": json.dumps([{"stdin": ""}])})  # with a test, each program runs its 15 s
    rows.to_parquet(tmp_path / "in.parquet")
    cmd, env = execute_command(repo, tmp_path, engine, sandbox_image, name, {"workers": 1, "limits": LIMITS})
    return subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)


def wait_for_container(engine, job: str, proc: subprocess.Popen, timeout: float = 240) -> list[str]:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        names = containers_of(engine, f"execute:{job}")
        if names:
            time.sleep(3)  # let the first program start running in it
            return names
        assert proc.poll() is None, proc.stdout.read()
        time.sleep(1)
    pytest.fail(f"no sandbox container of execute:{job} appeared in {timeout} s")


@pytest.mark.parametrize("how", ["SIGTERM", "SIGKILL"])
def test_a_killed_execute_job_leaves_no_container(repo, tmp_path, engine, sandbox_image, how):
    name = f"killed-{how.lower()}-{os.getpid()}"
    proc = start_execute(repo, tmp_path, engine, sandbox_image, name)
    try:
        wait_for_container(engine, name, proc)
        proc.send_signal(getattr(signal, how))
        proc.wait(timeout=120)
        if how == "SIGTERM":
            log = proc.stdout.read()
            assert proc.returncode == 128 + signal.SIGTERM, log
            assert containers_of(engine, f"execute:{name}") == [], log
        else:
            # The job could not clean up; its attach connection closed, so the runner's stdin
            # ended, it exited and the engine removed the container. Anything still there is stale.
            end = time.monotonic() + 120
            while containers_of(engine, f"execute:{name}") and time.monotonic() < end:
                time.sleep(2)
            assert containers_of(engine, f"execute:{name}") == []  # gone by itself, before any sweep
        assert not (tmp_path / "out.parquet").exists()  # no half-written output
    finally:
        if proc.poll() is None:
            proc.kill()
        for leftover in containers_of(engine, f"execute:{name}"):
            remove_container(engine, leftover)


def test_a_container_whose_owner_is_gone_is_removed_by_the_next_sweep(engine, sandbox_image):
    """As a job killed before its container could stop would leave it: created with the
    labels of a process that has exited."""
    gone = subprocess.Popen(["true"])
    gone.wait()
    host, _, _, boot, pidns = owner_label().split(":")
    owner = ":".join([host, str(gone.pid), "1", boot, pidns])
    name = f"aicd-sbx-stale-{os.getpid()}"
    engine.client.api.create_container_from_config(
        {"Image": sandbox_image, "Cmd": ["true"], "NetworkDisabled": True,
         "Labels": {"aicd.sandbox": "1", "aicd.owner": owner, "aicd.job": "stale-test"}}, name=name)
    try:
        assert name in remove_stale_containers(engine) and containers_of(engine, "stale-test") == []
    finally:
        remove_container(engine, name)


def test_the_stale_sweep_spares_live_owners(pool):
    from aicd.sandbox.pool import owner_alive

    assert owner_alive(owner_label())  # the label forms are checked in tests/unit/sandbox/test_sandbox_runner.py
    container = pool._take()  # owned by this live test process
    try:
        assert container.name not in remove_stale_containers(pool.engine) and container.alive()
    finally:
        pool._give(container, {"status": "ok"})


def run_execute(repo, tmp_path, engine, sandbox_image, rows):
    rows.to_parquet(tmp_path / "in.parquet")
    cmd, env = execute_command(repo, tmp_path, engine, sandbox_image, "edge", {"limits": LIMITS})
    return subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=300)


@ONE_ENGINE
def test_zero_rows_give_an_empty_table_and_report(repo, tmp_path, engine, sandbox_image):
    proc = run_execute(repo, tmp_path, engine, sandbox_image, pd.DataFrame({"id": [], "code": [], "language": []}))
    assert proc.returncode == 0, proc.stderr
    assert "no rows" in proc.stderr and "Traceback" not in proc.stderr
    assert len(pd.read_parquet(tmp_path / "out.parquet")) == 0
    report = json.loads((tmp_path / "report.json").read_text())
    assert report["rows"] == 0 and report["containers_started"] == 0


@ONE_ENGINE
def test_a_table_without_code_is_one_clear_error(repo, tmp_path, engine, sandbox_image):
    proc = run_execute(repo, tmp_path, engine, sandbox_image, pd.DataFrame({"id": ["a"], "language": ["Python"]}))
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    assert "error:" in proc.stderr and "no code column" in proc.stderr


@ONE_ENGINE
def test_a_removed_sandbox_image_is_one_clear_error(repo, tmp_path, engine):
    # image.txt still names an image that `images --prune-old` (another checkout) removed
    (tmp_path / "image.txt").write_text("aicd-sandbox:removed000000\n")
    proc = run_execute(repo, tmp_path, engine, str(tmp_path / "image.txt"),
                       pd.DataFrame({"id": ["a"], "code": ["print(1)\n"], "language": ["Python"]}))
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    assert "aicd-sandbox:removed000000 does not exist" in proc.stderr and "image.txt" in proc.stderr
    assert not (tmp_path / "out.parquet").exists()


@ONE_ENGINE
def test_the_pool_size_follows_the_jobs_threads_not_the_config(repo, tmp_path, engine, sandbox_image):
    """`--workers {threads}` (what the execute rule passes) overrides the spec's workers, so
    --cores / --max-threads / set-threads bound the containers a job starts."""
    rows = pd.DataFrame({"id": [f"w{i}" for i in range(4)], "language": "Python",
                         "code": "import time\ntime.sleep(2)\nprint('ok')\n", "generator": "human"})
    rows.to_parquet(tmp_path / "in.parquet")
    cmd, env = execute_command(repo, tmp_path, engine, sandbox_image, "workers", {"workers": 1, "limits": LIMITS},
                               "--workers", "2")
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-2000:]
    report = json.loads((tmp_path / "report.json").read_text())
    assert report["containers_started"] == 2
    out = pd.read_parquet(tmp_path / "out.parquet")
    assert len(out) == 4 and set(out["status"]) == {"compiled"}  # the default level: build, no run
